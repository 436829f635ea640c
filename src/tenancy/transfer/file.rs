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
//!
//! Reading is bounded ([`ReadLimits`]): a line of rows or JSON, a photo file and the whole
//! unpacked stream each have a cap, counted as the bytes come out of gzip, so a small file that
//! unpacks to a huge line or stream is refused after reading at most the cap, never held whole.
//! Refusals name no file: the reader's path is the server's business.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Take, Write};
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

/// The bounds of a read ([`ExportReader::open`]); see the README's "Export, import and move".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadLimits {
    /// Longest line of rows, header or section, newline excluded.
    pub line: usize,
    /// Largest photo file (its bytes, before base64).
    pub photo_file: u64,
    /// Most bytes the whole gzip stream may unpack to.
    pub unpacked: u64,
}

impl ReadLimits {
    /// A line of rows holds one row, written by requests of at most `MAX_BODY_BYTES` each
    /// (`COPY` escaping at most doubles a value); section lines are short, the header grows by
    /// about 100 bytes a member: four times `MAX_BODY_BYTES`, at least [`MIN_LINE`]. A photo file is at most what an
    /// upload takes (`PHOTO_MAX_UPLOAD_MB`; renditions are smaller). The stream: four times
    /// `GARDEN_IMPORT_MAX_MB` (a garden's photos barely shrink in gzip, its rows shrink a few
    /// times over).
    pub fn from_config(config: &crate::config::Config) -> Self {
        Self {
            line: config.max_body_bytes.saturating_mul(4).max(MIN_LINE),
            photo_file: config.photo_max_upload_bytes as u64,
            unpacked: config.garden_import_max_bytes.saturating_mul(4),
        }
    }
}

/// The smallest line cap, whatever `MAX_BODY_BYTES` says: rows written under a larger setting
/// still import.
pub const MIN_LINE: usize = 4 * 1024 * 1024;

/// A line buffer larger than this is given back after its line (a long row or header should not
/// keep its memory for the rest of the import).
const KEPT_LINE_CAPACITY: usize = 1024 * 1024;

/// How many base64 characters encode `bytes` bytes (padded).
fn encoded_len(bytes: u64) -> u64 {
    bytes.div_ceil(3).saturating_mul(4)
}

fn mib(bytes: u64) -> String {
    let mib = bytes as f64 / (1024.0 * 1024.0);
    if mib >= 10.0 || mib.fract() == 0.0 {
        format!("{mib:.0} MiB")
    } else {
        format!("{mib:.1} MiB")
    }
}

fn truncated() -> TransferError {
    TransferError::bad_file("the file ends early (truncated?)")
}

fn unreadable(err: std::io::Error) -> TransferError {
    TransferError::bad_file(format!("the file cannot be read: {err}"))
}

/// Reads an export file, checking its shape and its bounds as it goes.
pub struct ExportReader {
    /// The unpacked stream, cut one byte past [`ReadLimits::unpacked`] (a cut stream is
    /// refused, never read as a shorter one).
    input: BufReader<Take<GzDecoder<File>>>,
    limits: ReadLimits,
    line: Vec<u8>,
}

impl ExportReader {
    /// Opens the file and reads its header.
    pub fn open(path: &Path, limits: ReadLimits) -> Result<(Self, Header), TransferError> {
        let file = File::open(path).map_err(|e| io_err(path, e))?;
        let mut reader = Self {
            input: BufReader::with_capacity(
                256 * 1024,
                GzDecoder::new(file).take(limits.unpacked.saturating_add(1)),
            ),
            limits,
            line: Vec::new(),
        };
        if !reader.next_line()? {
            return Err(TransferError::bad_file("the file is empty"));
        }
        let header: Header = serde_json::from_slice(&reader.line).map_err(|_| {
            TransferError::bad_file(
                "the file is not a garden export (its first line is not the header)",
            )
        })?;
        if header.format != FORMAT {
            return Err(TransferError::bad_file(format!(
                "the file is a {:?} file, not a {FORMAT}",
                header.format
            )));
        }
        if header.format_version != FORMAT_VERSION {
            return Err(TransferError::bad_file(format!(
                "the file has format version {}; this kultiva reads version {FORMAT_VERSION}",
                header.format_version
            )));
        }
        Ok((reader, header))
    }

    /// Refuses a stream that unpacked past its cap (the `Take` below the buffer ran dry).
    fn within_unpacked(&self) -> Result<(), TransferError> {
        if self.input.get_ref().limit() == 0 {
            return Err(TransferError::TooLarge(format!(
                "the file unpacks to more than {} (4 x GARDEN_IMPORT_MAX_MB); nothing was imported",
                mib(self.limits.unpacked)
            )));
        }
        Ok(())
    }

    /// Reads one line into `self.line`, at most [`ReadLimits::line`] bytes and its newline;
    /// false at the end of the stream.
    fn next_line(&mut self) -> Result<bool, TransferError> {
        self.line.clear();
        if self.line.capacity() > KEPT_LINE_CAPACITY {
            self.line.shrink_to(KEPT_LINE_CAPACITY);
        }
        let max = self.limits.line;
        let n = (&mut self.input)
            .take(max as u64 + 1)
            .read_until(b'\n', &mut self.line)
            .map_err(unreadable)?;
        self.within_unpacked()?;
        if self.line.len() > max && self.line.last() != Some(&b'\n') {
            return Err(TransferError::TooLarge(format!(
                "a line of the file is longer than {} (no export writes one; the cap is \
                 4 x MAX_BODY_BYTES, at least {}); nothing was imported",
                mib(max as u64),
                mib(MIN_LINE as u64)
            )));
        }
        Ok(n > 0)
    }

    pub fn next_section(&mut self) -> Result<Section, TransferError> {
        if !self.next_line()? {
            return Err(truncated());
        }
        serde_json::from_slice(&self.line)
            .map_err(|e| TransferError::bad_file(format!("a section line cannot be read ({e})")))
    }

    /// Appends whole rows to `buf` until it holds at least `at_least` bytes or the table's rows
    /// end. Returns true when they ended (the `\.` line is not appended).
    pub fn rows_into(&mut self, buf: &mut Vec<u8>, at_least: usize) -> Result<bool, TransferError> {
        while buf.len() < at_least {
            if !self.next_line()? {
                return Err(truncated());
            }
            if self.line == END_OF_ROWS {
                return Ok(true);
            }
            if self.line.last() != Some(&b'\n') {
                return Err(truncated());
            }
            buf.extend_from_slice(&self.line);
        }
        Ok(false)
    }

    /// The bytes of the file announced by a `File` section, which says it has `expected`.
    /// Decoded as the base64 streams in: never more than `expected` bytes (and at most
    /// [`ReadLimits::photo_file`]) are read or held, whatever the line holds.
    pub fn file_bytes(&mut self, expected: u64) -> Result<Vec<u8>, TransferError> {
        if expected > self.limits.photo_file {
            return Err(TransferError::TooLarge(format!(
                "a photo file of the file has {expected} bytes; a photo may have at most {} \
                 (PHOTO_MAX_UPLOAD_MB); nothing was imported",
                mib(self.limits.photo_file)
            )));
        }
        let longest = encoded_len(expected);
        let grown = || {
            TransferError::bad_file(format!(
                "a photo file is longer than its section says ({expected} bytes)"
            ))
        };
        let not_base64 = |_| TransferError::bad_file("a photo file is not valid base64");
        let mut bytes = Vec::with_capacity(expected as usize);
        // Base64 decodes four characters at a time: what is left of a chunk waits here.
        let mut pending: Vec<u8> = Vec::with_capacity(64 * 1024);
        let mut seen: u64 = 0;
        loop {
            let buf = self.input.fill_buf().map_err(unreadable)?;
            if buf.is_empty() {
                self.within_unpacked()?;
                return Err(truncated());
            }
            let end = buf.iter().position(|b| *b == b'\n');
            let text = &buf[..end.unwrap_or(buf.len())];
            seen += text.len() as u64;
            if seen > longest {
                return Err(grown());
            }
            pending.extend_from_slice(text);
            let used = text.len() + usize::from(end.is_some());
            self.input.consume(used);
            self.within_unpacked()?;
            if end.is_some() {
                STANDARD
                    .decode_vec(&pending, &mut bytes)
                    .map_err(not_base64)?;
                break;
            }
            let whole = pending.len() / 4 * 4;
            STANDARD
                .decode_vec(&pending[..whole], &mut bytes)
                .map_err(not_base64)?;
            pending.drain(..whole);
        }
        if bytes.len() as u64 != expected {
            return Err(TransferError::bad_file(format!(
                "a photo file has {} bytes, its section says {expected}",
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

    const LIMITS: ReadLimits = ReadLimits {
        line: 1024,
        photo_file: 1000,
        unpacked: 64 * 1024,
    };

    /// A gzip file of these lines, as written (no newline added).
    fn gzip_of(name: &str, parts: &[&[u8]]) -> PathBuf {
        let path = temp(name);
        let mut enc = GzEncoder::new(File::create(&path).expect("create"), Compression::fast());
        for part in parts {
            enc.write_all(part).expect("write");
        }
        enc.finish().expect("finish");
        path
    }

    fn header_line() -> Vec<u8> {
        let mut line = serde_json::to_vec(&header()).expect("json");
        line.push(b'\n');
        line
    }

    #[test]
    fn a_line_past_the_cap_is_refused_after_reading_the_cap_only() {
        let huge = vec![b'x'; 10_000];
        // A first line without a newline, far longer than the cap.
        let path = gzip_of("longheader", &[&huge]);
        let err = ExportReader::open(&path, LIMITS).err().expect("refused");
        assert!(matches!(err, TransferError::TooLarge(_)), "{err}");
        assert!(err.to_string().contains("longer than"), "{err}");
        std::fs::remove_file(&path).expect("rm");
        // A row line past the cap, after a valid header and section.
        let section = b"{\"table\":{\"name\":\"sites\",\"columns\":[\"id\"]}}\n";
        let path = gzip_of("longrow", &[&header_line(), section, &huge, b"\n"]);
        let (mut r, _) = ExportReader::open(&path, LIMITS).expect("open");
        r.next_section().expect("table");
        let err = r.rows_into(&mut Vec::new(), 1 << 20).expect_err("long row");
        assert!(matches!(err, TransferError::TooLarge(_)), "{err}");
        // A line of exactly the cap (and its newline) is read.
        let mut row = vec![b'1'; LIMITS.line];
        row.push(b'\n');
        let path2 = gzip_of("caprow", &[&header_line(), section, &row, END_OF_ROWS]);
        let (mut r, _) = ExportReader::open(&path2, LIMITS).expect("open");
        r.next_section().expect("table");
        let mut buf = Vec::new();
        assert!(r.rows_into(&mut buf, 1 << 20).expect("rows"));
        assert_eq!(buf, row);
        for p in [path, path2] {
            std::fs::remove_file(&p).expect("rm");
        }
    }

    #[test]
    fn a_stream_that_unpacks_past_its_cap_is_refused() {
        let section = b"{\"table\":{\"name\":\"sites\",\"columns\":[\"id\"]}}\n";
        let rows = b"1\n".repeat(40 * 1024);
        let path = gzip_of("bomb", &[&header_line(), section, &rows, END_OF_ROWS]);
        // The reader's buffer reads ahead of the lines it hands out, so the cut may be seen as
        // early as the header: wherever it is seen, the whole file is refused.
        let read_all = || -> Result<(), TransferError> {
            let (mut r, _) = ExportReader::open(&path, LIMITS)?;
            r.next_section()?;
            let mut buf = Vec::new();
            loop {
                buf.clear();
                if r.rows_into(&mut buf, 4096)? {
                    return Ok(());
                }
            }
        };
        let err = read_all().expect_err("the rows ended inside the cap");
        assert!(matches!(err, TransferError::TooLarge(_)), "{err}");
        assert!(err.to_string().contains("unpacks to more than"), "{err}");
        std::fs::remove_file(&path).expect("rm");
    }

    #[test]
    fn photo_files_are_read_to_their_announced_size_and_cap_only() {
        let file = |n: usize| {
            let mut line = STANDARD.encode(vec![7u8; n]).into_bytes();
            line.push(b'\n');
            line
        };
        // A file grown past what its section says is refused once it passes that.
        let path = gzip_of("grown", &[&header_line(), &file(900)]);
        let (mut r, _) = ExportReader::open(&path, LIMITS).expect("open");
        let err = r.file_bytes(300).expect_err("grown");
        assert!(
            err.to_string().contains("longer than its section says"),
            "{err}"
        );
        std::fs::remove_file(&path).expect("rm");
        // A section announcing more than the cap is refused before anything is read.
        let path = gzip_of("big", &[&header_line(), &file(1001)]);
        let (mut r, _) = ExportReader::open(&path, LIMITS).expect("open");
        let err = r.file_bytes(1001).expect_err("too big");
        assert!(matches!(err, TransferError::TooLarge(_)), "{err}");
        std::fs::remove_file(&path).expect("rm");
        // One that fits reads back exactly, across buffer refills of any size.
        for n in [0, 1, 2, 3, 4, 999, 1000] {
            let path = gzip_of("fits", &[&header_line(), &file(n)]);
            let (mut r, _) = ExportReader::open(&path, LIMITS).expect("open");
            assert_eq!(r.file_bytes(n as u64).expect("bytes"), vec![7u8; n]);
            std::fs::remove_file(&path).expect("rm");
        }
    }

    #[test]
    fn refusals_name_no_path() {
        let path = gzip_of("nameless", &[b"{\"hello\":1}\n"]);
        let err = ExportReader::open(&path, LIMITS).err().expect("refused");
        let dir = std::env::temp_dir().display().to_string();
        assert!(!err.to_string().contains(&dir), "{err}");
        let (mut r, _) = {
            let ok = gzip_of("nameless2", &[&header_line()]);
            let opened = ExportReader::open(&ok, LIMITS).expect("open");
            std::fs::remove_file(&ok).expect("rm");
            opened
        };
        let err = r.next_section().expect_err("truncated");
        assert!(!err.to_string().contains(&dir), "{err}");
        std::fs::remove_file(&path).expect("rm");
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

        let (mut r, h) = ExportReader::open(&path, LIMITS).expect("open");
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
        let (mut r, _) = ExportReader::open(&path, LIMITS).expect("open");
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
        let err = ExportReader::open(&path, LIMITS).err().expect("refused");
        assert!(err.to_string().contains("not a garden export"), "{err}");
        std::fs::write(&path, b"plain text").expect("write");
        assert!(ExportReader::open(&path, LIMITS).is_err());
        std::fs::remove_file(&path).expect("rm");
    }
}
