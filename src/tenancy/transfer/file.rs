//! The export file: one gzip stream of lines.
//!
//! ```text
//! {"format":"kultiva-garden-export","format_version":1,"schema_version":12,…}   header
//! {"table":{"name":"sites","columns":["id","name",…]}}                       one per table,
//! <rows in PostgreSQL's COPY text format, one per line>                       in foreign-key
//! \.                                                                          order
//! {"sequence":{"name":"…","last_value":42}}                                   one per sequence
//! {"file":{"path":"<photo id>/original.jpg","bytes":123456}}                  one per photo file,
//! <the file's bytes in base64, one line>                                      originals and renditions
//! {"end":{"rows":{"sites":3,…},"files":2}}                                    trailer
//! ```
//!
//! The `\.` line cannot be a row (a backslash in a value is written `\\`). A file without its
//! trailer, or whose trailer disagrees with what was read, is refused: a truncated copy never
//! imports as a smaller garden. Written to `FILE.partial` and renamed when complete.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use flate2::Compression;
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::TransferError;

pub const FORMAT: &str = "kultiva-garden-export";
pub const FORMAT_VERSION: u32 = 1;

/// Ends a table's rows.
const END_OF_ROWS: &[u8] = b"\\.\n";

/// The first line: what the file holds and the platform rows a garden needs to be restored.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Header {
    pub format: String,
    pub format_version: u32,
    /// The `kultiva` version that wrote it.
    pub written_by: String,
    /// The tenant schema version the rows belong to (import builds the schema at this
    /// version, loads, then migrates to the latest).
    pub schema_version: i64,
    /// RFC 3339.
    pub exported_at: String,
    pub tenant: TenantFields,
    /// Who belonged to the garden (restored by `import --with-members` where the account exists).
    pub members: Vec<MemberRow>,
    /// The tables that follow, in order.
    pub tables: Vec<String>,
    /// Photo files that follow (announced; the trailer counts what was written).
    pub files: usize,
}

/// The garden's registry row. `import` restores `name` and `kind` (see `import`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TenantFields {
    pub id: Uuid,
    pub slug: String,
    pub name: String,
    /// `personal`, `organisation`, …; a file without it reads as `organisation`.
    #[serde(default = "organisation")]
    pub kind: String,
    pub placement: String,
    /// RFC 3339.
    pub created_at: String,
}

fn organisation() -> String {
    "organisation".to_owned()
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MemberRow {
    pub user_id: Uuid,
    pub email: Option<String>,
    pub role: String,
}

/// One line after the header.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum Section {
    /// Rows of a table follow, up to the `\.` line.
    Table { name: String, columns: Vec<String> },
    Sequence {
        name: String,
        last_value: Option<i64>,
    },
    /// A photo file follows on one line, base64. `path` is relative to the garden's folder of
    /// the photo storage: `<photo id>/<file name>`.
    File { path: String, bytes: u64 },
    End {
        rows: BTreeMap<String, u64>,
        files: usize,
    },
}

/// Writes an export file; removes its partial file unless [`finish`](Self::finish)ed.
pub struct ExportWriter {
    out: Option<GzEncoder<BufWriter<File>>>,
    partial: PathBuf,
    dest: PathBuf,
}

fn io_err(path: &Path, err: std::io::Error) -> TransferError {
    TransferError::Io(path.display().to_string(), err)
}

impl ExportWriter {
    pub fn create(dest: &Path) -> Result<Self, TransferError> {
        let mut partial = dest.as_os_str().to_owned();
        partial.push(".partial");
        let partial = PathBuf::from(partial);
        let file = File::create(&partial).map_err(|e| io_err(&partial, e))?;
        Ok(Self {
            out: Some(GzEncoder::new(BufWriter::new(file), Compression::fast())),
            partial,
            dest: dest.to_path_buf(),
        })
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), TransferError> {
        let out = self
            .out
            .as_mut()
            .ok_or_else(|| TransferError::bad_file("the export file is already closed"))?;
        out.write_all(bytes).map_err(|e| io_err(&self.partial, e))
    }

    fn json_line(&mut self, value: &impl Serialize) -> Result<(), TransferError> {
        let mut line = serde_json::to_vec(value)
            .map_err(|e| TransferError::bad_file(format!("cannot encode a line: {e}")))?;
        line.push(b'\n');
        self.write(&line)
    }

    pub fn header(&mut self, header: &Header) -> Result<(), TransferError> {
        self.json_line(header)
    }

    pub fn section(&mut self, section: &Section) -> Result<(), TransferError> {
        self.json_line(section)
    }

    /// A chunk of `COPY` rows, as PostgreSQL sent it.
    pub fn rows(&mut self, chunk: &[u8]) -> Result<(), TransferError> {
        self.write(chunk)
    }

    pub fn end_of_rows(&mut self) -> Result<(), TransferError> {
        self.write(END_OF_ROWS)
    }

    pub fn file_bytes(&mut self, bytes: &[u8]) -> Result<(), TransferError> {
        let mut line = STANDARD.encode(bytes).into_bytes();
        line.push(b'\n');
        self.write(&line)
    }

    /// Completes the stream, syncs it and gives it its name. Returns its size in bytes.
    pub fn finish(mut self) -> Result<u64, TransferError> {
        let out = self
            .out
            .take()
            .ok_or_else(|| TransferError::bad_file("the export file is already closed"))?;
        let finished = (|| {
            let buffered = out.finish().map_err(|e| io_err(&self.partial, e))?;
            let file = buffered
                .into_inner()
                .map_err(|e| io_err(&self.partial, e.into_error()))?;
            file.sync_all().map_err(|e| io_err(&self.partial, e))?;
            let size = file.metadata().map_err(|e| io_err(&self.partial, e))?.len();
            std::fs::rename(&self.partial, &self.dest).map_err(|e| io_err(&self.dest, e))?;
            Ok(size)
        })();
        if finished.is_err() {
            // A failed export leaves no file, not even the partial one.
            let _ = std::fs::remove_file(&self.partial);
        }
        finished
    }
}

impl Drop for ExportWriter {
    fn drop(&mut self) {
        if self.out.take().is_some() {
            let _ = std::fs::remove_file(&self.partial);
        }
    }
}

/// Reads an export file, checking its shape as it goes.
pub struct ExportReader {
    input: BufReader<GzDecoder<File>>,
    path: PathBuf,
    line: Vec<u8>,
}

impl ExportReader {
    /// Opens the file and reads its header.
    pub fn open(path: &Path) -> Result<(Self, Header), TransferError> {
        let file = File::open(path).map_err(|e| io_err(path, e))?;
        let mut reader = Self {
            input: BufReader::with_capacity(256 * 1024, GzDecoder::new(file)),
            path: path.to_path_buf(),
            line: Vec::new(),
        };
        if !reader.next_line()? {
            return Err(TransferError::bad_file(format!(
                "{} is empty",
                path.display()
            )));
        }
        let header: Header = serde_json::from_slice(&reader.line).map_err(|_| {
            TransferError::bad_file(format!(
                "{} is not a garden export (its first line is not the header)",
                path.display()
            ))
        })?;
        if header.format != FORMAT {
            return Err(TransferError::bad_file(format!(
                "{} is a {:?} file, not a {FORMAT}",
                path.display(),
                header.format
            )));
        }
        if header.format_version != FORMAT_VERSION {
            return Err(TransferError::bad_file(format!(
                "{} has format version {}; this kultiva reads version {FORMAT_VERSION}",
                path.display(),
                header.format_version
            )));
        }
        Ok((reader, header))
    }

    /// Reads one line into `self.line`; false at the end of the stream.
    fn next_line(&mut self) -> Result<bool, TransferError> {
        self.line.clear();
        let n = self.input.read_until(b'\n', &mut self.line).map_err(|e| {
            TransferError::bad_file(format!("{} cannot be read: {e}", self.path.display()))
        })?;
        Ok(n > 0)
    }

    fn truncated(&self) -> TransferError {
        TransferError::bad_file(format!("{} ends early (truncated?)", self.path.display()))
    }

    pub fn next_section(&mut self) -> Result<Section, TransferError> {
        if !self.next_line()? {
            return Err(self.truncated());
        }
        serde_json::from_slice(&self.line).map_err(|e| {
            TransferError::bad_file(format!(
                "{}: a section line cannot be read ({e})",
                self.path.display()
            ))
        })
    }

    /// Appends whole rows to `buf` until it holds at least `at_least` bytes or the table's rows
    /// end. Returns true when they ended (the `\.` line is not appended).
    pub fn rows_into(&mut self, buf: &mut Vec<u8>, at_least: usize) -> Result<bool, TransferError> {
        while buf.len() < at_least {
            if !self.next_line()? {
                return Err(self.truncated());
            }
            if self.line == END_OF_ROWS {
                return Ok(true);
            }
            if self.line.last() != Some(&b'\n') {
                return Err(self.truncated());
            }
            buf.extend_from_slice(&self.line);
        }
        Ok(false)
    }

    /// The bytes of the file announced by a `File` section.
    pub fn file_bytes(&mut self, expected: u64) -> Result<Vec<u8>, TransferError> {
        if !self.next_line()? {
            return Err(self.truncated());
        }
        let text = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
        let bytes = STANDARD.decode(text).map_err(|_| {
            TransferError::bad_file(format!(
                "{}: a photo file is not valid base64",
                self.path.display()
            ))
        })?;
        if bytes.len() as u64 != expected {
            return Err(TransferError::bad_file(format!(
                "{}: a photo file has {} bytes, its section says {expected}",
                self.path.display(),
                bytes.len()
            )));
        }
        Ok(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Header {
        Header {
            format: FORMAT.into(),
            format_version: FORMAT_VERSION,
            written_by: "test".into(),
            schema_version: 12,
            exported_at: "2026-01-01T00:00:00Z".into(),
            tenant: TenantFields {
                id: Uuid::nil(),
                slug: "g".into(),
                name: "G".into(),
                kind: "organisation".into(),
                placement: "primary".into(),
                created_at: "2026-01-01T00:00:00Z".into(),
            },
            members: vec![],
            tables: vec!["sites".into()],
            files: 1,
        }
    }

    fn temp(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("kultiva-{name}-{}.gz", Uuid::new_v4().simple()))
    }

    #[test]
    fn a_written_file_reads_back_section_by_section() {
        let path = temp("roundtrip");
        let mut w = ExportWriter::create(&path).expect("create");
        w.header(&header()).expect("header");
        w.section(&Section::Table {
            name: "sites".into(),
            columns: vec!["id".into(), "name".into()],
        })
        .expect("section");
        w.rows(b"1\tBed \\\\ one\n2\tBox\\ntwo\n").expect("rows");
        w.end_of_rows().expect("end");
        w.section(&Section::File {
            path: "p/original.jpg".into(),
            bytes: 3,
        })
        .expect("file");
        w.file_bytes(&[0, 1, 255]).expect("bytes");
        w.section(&Section::End {
            rows: [("sites".to_owned(), 2)].into(),
            files: 1,
        })
        .expect("end");
        w.finish().expect("finish");

        let (mut r, h) = ExportReader::open(&path).expect("open");
        assert_eq!(h, header());
        assert!(matches!(
            r.next_section().expect("s"),
            Section::Table { .. }
        ));
        let mut buf = Vec::new();
        assert!(r.rows_into(&mut buf, 1 << 20).expect("rows"));
        assert_eq!(buf, b"1\tBed \\\\ one\n2\tBox\\ntwo\n");
        assert_eq!(
            r.next_section().expect("s"),
            Section::File {
                path: "p/original.jpg".into(),
                bytes: 3
            }
        );
        assert_eq!(r.file_bytes(3).expect("bytes"), vec![0, 1, 255]);
        assert!(matches!(r.next_section().expect("s"), Section::End { .. }));
        std::fs::remove_file(&path).expect("rm");
    }

    #[test]
    fn an_unfinished_writer_leaves_no_file_and_a_truncated_file_is_refused() {
        let path = temp("partial");
        {
            let mut w = ExportWriter::create(&path).expect("create");
            w.header(&header()).expect("header");
        }
        assert!(!path.exists());
        let mut partial = path.as_os_str().to_owned();
        partial.push(".partial");
        assert!(!PathBuf::from(partial).exists());

        let mut w = ExportWriter::create(&path).expect("create");
        w.header(&header()).expect("header");
        w.section(&Section::Table {
            name: "sites".into(),
            columns: vec!["id".into()],
        })
        .expect("section");
        w.rows(b"1\n").expect("rows");
        w.finish().expect("finish");
        let (mut r, _) = ExportReader::open(&path).expect("open");
        r.next_section().expect("table");
        let err = r
            .rows_into(&mut Vec::new(), 1 << 20)
            .expect_err("truncated");
        assert!(err.to_string().contains("ends early"), "{err}");
        std::fs::remove_file(&path).expect("rm");
    }

    #[test]
    fn a_header_without_a_kind_reads_as_an_organisation() {
        let mut value = serde_json::to_value(header()).expect("json");
        value["tenant"]
            .as_object_mut()
            .expect("tenant")
            .remove("kind");
        let read: Header = serde_json::from_value(value).expect("older header");
        assert_eq!(read.tenant.kind, "organisation");
        assert_eq!(read.tenant.name, "G");
    }

    #[test]
    fn other_files_are_refused_by_their_first_line() {
        let path = temp("other");
        let mut enc = GzEncoder::new(File::create(&path).expect("create"), Compression::fast());
        enc.write_all(b"{\"hello\":1}\n").expect("write");
        enc.finish().expect("finish");
        let err = ExportReader::open(&path).err().expect("refused");
        assert!(err.to_string().contains("not a garden export"), "{err}");
        std::fs::write(&path, b"plain text").expect("write");
        assert!(ExportReader::open(&path).is_err());
        std::fs::remove_file(&path).expect("rm");
    }
}
