//! Where photo files live: a small trait, so an object store can take the local directory's
//! place later, and the local-directory implementation (`STORAGE_DIR`).
//!
//! Keys are generated here from ids, never taken from a client:
//! `{tenant id}/{photo id}/original.{jpg|png|webp}` and `{tenant id}/{photo id}/{512|1280}.webp`.

use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use futures_util::future::BoxFuture;
use uuid::Uuid;

use crate::config::Config;

/// A storage key: only ever built from ids (or read back from a row and re-checked).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorageKey(String);

impl StorageKey {
    pub fn original(tenant: Uuid, photo: Uuid, format: Format) -> Self {
        Self(format!("{tenant}/{photo}/original.{}", format.extension()))
    }

    pub fn rendition(tenant: Uuid, photo: Uuid, size: u32) -> Self {
        Self(format!("{tenant}/{photo}/{size}.webp"))
    }

    /// The folder of one photo's files.
    pub fn photo_dir(tenant: Uuid, photo: Uuid) -> String {
        format!("{tenant}/{photo}")
    }

    /// A key stored in a row: accepted only in the shape this module writes.
    pub fn parse(raw: &str) -> Option<Self> {
        let mut parts = raw.split('/');
        let (Some(t), Some(p), Some(file), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return None;
        };
        let file_ok = matches!(
            file,
            "original.jpg" | "original.png" | "original.webp" | "512.webp" | "1280.webp"
        );
        (Uuid::parse_str(t).is_ok() && Uuid::parse_str(p).is_ok() && file_ok)
            .then(|| Self(raw.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Photo file storage.
pub trait PhotoStorage: Send + Sync {
    /// Names the place: rendition jobs are claimed only by workers whose storage has the same
    /// identity (they can read the original and write where readers look).
    fn identity(&self) -> &str;
    /// Writes a file whole (readers never see a half-written one).
    fn put<'a>(&'a self, key: &'a StorageKey, bytes: Vec<u8>) -> BoxFuture<'a, io::Result<()>>;
    fn get<'a>(&'a self, key: &'a StorageKey) -> BoxFuture<'a, io::Result<Vec<u8>>>;
    /// Removes every file of one photo (missing files are no error).
    fn delete_photo<'a>(&'a self, tenant: Uuid, photo: Uuid) -> BoxFuture<'a, io::Result<()>>;
    /// Removes every file of one garden (missing files are no error).
    fn delete_garden<'a>(&'a self, tenant: Uuid) -> BoxFuture<'a, io::Result<()>>;
    /// The gardens that have files here, with when their folder last changed.
    fn gardens(&self) -> BoxFuture<'_, io::Result<Vec<(Uuid, SystemTime)>>>;
    /// The photos of one garden that have files here, with when their folder last changed.
    fn photos_of(&self, tenant: Uuid) -> BoxFuture<'_, io::Result<Vec<(Uuid, SystemTime)>>>;
}

/// The folders under `dir` whose names are ids, with their modification times. A folder that
/// is not there has none.
async fn id_folders(dir: PathBuf) -> io::Result<Vec<(Uuid, SystemTime)>> {
    let mut out = Vec::new();
    let mut entries = match tokio::fs::read_dir(&dir).await {
        Ok(e) => e,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(out),
        Err(err) => return Err(err),
    };
    while let Some(entry) = entries.next_entry().await? {
        let Some(id) = entry
            .file_name()
            .to_str()
            .and_then(|n| Uuid::parse_str(n).ok())
        else {
            continue;
        };
        let meta = entry.metadata().await?;
        if meta.is_dir() {
            out.push((id, meta.modified()?));
        }
    }
    Ok(out)
}

/// Files under one local directory.
#[derive(Debug, Clone)]
pub struct LocalDir {
    root: PathBuf,
    identity: String,
}

impl LocalDir {
    pub fn new(root: &Path) -> Self {
        let root = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
        let identity = format!("local:{}", root.display());
        Self { root, identity }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn path(&self, key: &StorageKey) -> PathBuf {
        self.root.join(key.as_str())
    }
}

impl PhotoStorage for LocalDir {
    fn identity(&self) -> &str {
        &self.identity
    }

    fn put<'a>(&'a self, key: &'a StorageKey, bytes: Vec<u8>) -> BoxFuture<'a, io::Result<()>> {
        Box::pin(async move {
            let path = self.path(key);
            let dir = path
                .parent()
                .ok_or_else(|| io::Error::other("storage key without a folder"))?;
            tokio::fs::create_dir_all(dir).await?;
            let tmp = dir.join(format!(".tmp-{}", Uuid::new_v4().simple()));
            if let Err(err) = tokio::fs::write(&tmp, &bytes).await {
                let _ = tokio::fs::remove_file(&tmp).await;
                return Err(err);
            }
            if let Err(err) = tokio::fs::rename(&tmp, &path).await {
                let _ = tokio::fs::remove_file(&tmp).await;
                return Err(err);
            }
            Ok(())
        })
    }

    fn get<'a>(&'a self, key: &'a StorageKey) -> BoxFuture<'a, io::Result<Vec<u8>>> {
        Box::pin(async move { tokio::fs::read(self.path(key)).await })
    }

    fn delete_photo<'a>(&'a self, tenant: Uuid, photo: Uuid) -> BoxFuture<'a, io::Result<()>> {
        Box::pin(async move {
            let dir = self.root.join(StorageKey::photo_dir(tenant, photo));
            match tokio::fs::remove_dir_all(&dir).await {
                Err(err) if err.kind() != io::ErrorKind::NotFound => return Err(err),
                _ => {}
            }
            // The tenant's folder goes when its last photo went.
            let _ = tokio::fs::remove_dir(self.root.join(tenant.to_string())).await;
            Ok(())
        })
    }

    fn delete_garden<'a>(&'a self, tenant: Uuid) -> BoxFuture<'a, io::Result<()>> {
        Box::pin(async move {
            match tokio::fs::remove_dir_all(self.root.join(tenant.to_string())).await {
                Err(err) if err.kind() != io::ErrorKind::NotFound => Err(err),
                _ => Ok(()),
            }
        })
    }

    fn gardens(&self) -> BoxFuture<'_, io::Result<Vec<(Uuid, SystemTime)>>> {
        Box::pin(id_folders(self.root.clone()))
    }

    fn photos_of(&self, tenant: Uuid) -> BoxFuture<'_, io::Result<Vec<(Uuid, SystemTime)>>> {
        Box::pin(id_folders(self.root.join(tenant.to_string())))
    }
}

/// The storage this configuration names.
pub fn from_config(config: &Config) -> LocalDir {
    LocalDir::new(&config.storage_dir)
}

/// The image formats kept: originals as uploaded, renditions as WebP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Jpeg,
    Png,
    WebP,
}

impl Format {
    pub fn content_type(self) -> &'static str {
        match self {
            Self::Jpeg => "image/jpeg",
            Self::Png => "image/png",
            Self::WebP => "image/webp",
        }
    }

    pub fn extension(self) -> &'static str {
        match self {
            Self::Jpeg => "jpg",
            Self::Png => "png",
            Self::WebP => "webp",
        }
    }

    /// The declared type of an upload (`image/jpeg` etc., parameters already removed).
    pub fn from_content_type(mime: &str) -> Option<Self> {
        match mime {
            "image/jpeg" => Some(Self::Jpeg),
            "image/png" => Some(Self::Png),
            "image/webp" => Some(Self::WebP),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_generated_and_checked() {
        let (t, p) = (Uuid::new_v4(), Uuid::new_v4());
        let k = StorageKey::original(t, p, Format::Jpeg);
        assert_eq!(StorageKey::parse(k.as_str()), Some(k.clone()));
        assert!(StorageKey::parse(&format!("{t}/{p}/../../etc/passwd")).is_none());
        assert!(StorageKey::parse(&format!("{t}/{p}/evil.sh")).is_none());
        assert!(StorageKey::parse("/etc/passwd").is_none());
        assert!(StorageKey::parse(StorageKey::rendition(t, p, 512).as_str()).is_some());
    }
}
