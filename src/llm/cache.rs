//! The answer cache: one JSON file per answered request, named by the request's hash, in a
//! folder of the user's. Layout: `DIR/ab/abcdef….json` (the first two hex digits group the
//! files so no folder grows huge), holding `{"hash": H, "request": {prompt, input, model,
//! max_tokens}, "text": SUMMARY}`. The request is kept whole so a reader can check the answer
//! is for the request it asks about, and a person can see what was asked.

use super::request::is_hash;
use super::SummaryRequest;
use crate::error::{InputError, Result};
use serde::{Deserialize, Serialize};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(rename = "Entry")] // the name serde's messages quote
struct CachedSummary {
    hash: String,
    request: SummaryRequest,
    text: String,
}

/// A folder of answers by request hash.
#[derive(Debug, Clone)]
pub struct SummaryCache {
    dir: PathBuf,
}

/// Makes each temporary file's name unique within the process, so threads storing at once
/// never share one.
static TEMPORARIES: AtomicU64 = AtomicU64::new(0);

impl SummaryCache {
    /// The cache in `dir`. A folder that does not exist yet is an empty cache, made (with its
    /// parents) when the first answer is stored, so a run that stores nothing leaves nothing.
    pub fn open(dir: &Path) -> Result<Self> {
        if dir.exists() && !dir.is_dir() {
            return Err(InputError::File {
                path: dir.to_path_buf(),
                message: "is a file; expected a folder for the summary cache".into(),
            }
            .into());
        }
        Ok(SummaryCache {
            dir: dir.to_path_buf(),
        })
    }

    /// The folder it lives in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file an answer to `hash` is stored in.
    pub fn path_of(&self, hash: &str) -> PathBuf {
        self.dir.join(&hash[..2]).join(format!("{hash}.json"))
    }

    /// The stored answer to the request of hash `hash`, if there is one.
    pub fn get(&self, hash: &str) -> Result<Option<String>> {
        Ok(self.entry(hash)?.map(|(_, text)| text))
    }

    /// The stored request and answer for `hash`, checked: the file must hold a request whose
    /// hash is `hash`, or the cache is damaged and the caller is told which file.
    pub fn entry(&self, hash: &str) -> Result<Option<(SummaryRequest, String)>> {
        if !is_hash(hash) {
            return Err(InputError::Invalid(format!(
                "{hash:?} is not a summary request hash: expected 64 lowercase hex digits"
            ))
            .into());
        }
        // Not even read through a link: the cache is the user's folder, its entries ctxlab's.
        self.refuse_links(hash)?;
        let path = self.path_of(hash);
        let text = match crate::text::read(&path) {
            Ok(text) => text,
            Err(InputError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                return Ok(None)
            }
            Err(e) => return Err(e.into()),
        };
        let damaged = |message: String| InputError::File {
            path: path.clone(),
            message: format!("{message}; the cache is damaged: remove the file to ask again"),
        };
        let entry: CachedSummary = crate::strict_json::from_str(&text)
            .map_err(|e| damaged(format!("not a cache entry ({e})")))?;
        let stored = entry.request.hash();
        if entry.hash != hash || stored != hash {
            return Err(damaged(format!(
                "holds the answer to another request (its request hashes to {stored})"
            ))
            .into());
        }
        Ok(Some((entry.request, entry.text)))
    }

    /// Stores `text` as the answer to `request`. The entry appears whole or not at all (written
    /// under a temporary name, then renamed). Storing the same answer again changes nothing; a
    /// different answer for a request already answered is refused, so results that used the
    /// first one stay reproducible.
    pub fn put(&self, request: &SummaryRequest, text: &str) -> Result<()> {
        let hash = request.hash();
        let path = self.path_of(&hash);
        // A link inside the cache (its group folder or the entry) is refused, not followed.
        self.refuse_links(&hash)?;
        if let Some((_, stored)) = self.entry(&hash)? {
            if stored == text {
                return Ok(());
            }
            return Err(InputError::File {
                path,
                message: "already holds another answer to this request; remove the file to store a new one".into(),
            }
            .into());
        }
        let folder = path.parent().expect("an entry has a folder");
        std::fs::create_dir_all(folder).map_err(|e| InputError::io(folder, e))?;
        let entry = CachedSummary {
            hash: hash.clone(),
            request: request.clone(),
            text: text.to_string(),
        };
        let bytes = serde_json::to_vec_pretty(&entry).expect("a cache entry serialises");
        let temporary = folder.join(format!(
            ".{hash}.json.tmp-{}-{}",
            std::process::id(),
            TEMPORARIES.fetch_add(1, Ordering::Relaxed)
        ));
        let mut file = crate::links::create(&temporary)?;
        let written = file
            .write_all(&bytes)
            .and_then(|()| file.sync_all())
            .and_then(|()| std::fs::rename(&temporary, &path));
        if let Err(e) = written {
            crate::links::remove_file(&temporary);
            return Err(InputError::io(&path, e).into());
        }
        Ok(())
    }

    /// Refuses a symbolic link on the way to the entry of `hash` inside the cache.
    fn refuse_links(&self, hash: &str) -> Result<()> {
        let group = self.dir.join(&hash[..2]);
        match [group.clone(), group.join(format!("{hash}.json"))]
            .into_iter()
            .find(|p| crate::links::is_link(p))
        {
            Some(link) => Err(InputError::File {
                path: link,
                message: "is a symbolic link inside the summary cache; ctxlab does not write through links (remove it)".into(),
            }
            .into()),
            None => Ok(()),
        }
    }

    /// Removes the answer to `hash` (an import undoing what it stored when a later entry fails).
    pub(crate) fn remove(&self, hash: &str) {
        if self.refuse_links(hash).is_err() {
            return;
        }
        let path = self.path_of(hash);
        crate::links::remove_file(&path);
        // Its folder too, when that leaves it empty (removing a folder with files fails).
        if let Some(folder) = path.parent() {
            let _ = std::fs::remove_dir(folder);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(input: &str) -> SummaryRequest {
        SummaryRequest {
            prompt: "P".into(),
            input: input.into(),
            model: "m".into(),
            max_tokens: None,
        }
    }

    #[test]
    fn answers_are_stored_by_hash_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let cache = SummaryCache::open(&dir.path().join("cache")).unwrap();
        let r = request("x");
        assert_eq!(cache.get(&r.hash()).unwrap(), None);
        // Nothing is made until something is stored.
        assert!(!dir.path().join("cache").exists());
        cache.put(&r, "summary of x").unwrap();
        assert_eq!(
            cache.get(&r.hash()).unwrap().as_deref(),
            Some("summary of x")
        );
        assert!(cache.path_of(&r.hash()).is_file());
        // The same answer again is fine; another one is refused and the first kept.
        cache.put(&r, "summary of x").unwrap();
        let e = cache.put(&r, "other").unwrap_err().to_string();
        assert!(e.contains("already holds another answer"), "{e}");
        assert_eq!(
            cache.get(&r.hash()).unwrap().as_deref(),
            Some("summary of x")
        );
        // Only the entry is in its folder: no temporary file stayed.
        let folder = cache.path_of(&r.hash()).parent().unwrap().to_path_buf();
        assert_eq!(std::fs::read_dir(folder).unwrap().count(), 1);
    }

    #[test]
    fn an_entry_under_the_wrong_name_is_reported_as_damage() {
        let dir = tempfile::tempdir().unwrap();
        let cache = SummaryCache::open(dir.path()).unwrap();
        let (x, y) = (request("x"), request("y"));
        cache.put(&x, "sx").unwrap();
        // y's file holding x's entry: a copy gone wrong.
        let target = cache.path_of(&y.hash());
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(cache.path_of(&x.hash()), &target).unwrap();
        let e = cache.get(&y.hash()).unwrap_err().to_string();
        assert!(
            e.contains("another request") && e.contains("damaged"),
            "{e}"
        );
        assert!(cache
            .get("../x")
            .unwrap_err()
            .to_string()
            .contains("64 lowercase hex"));
    }
}
