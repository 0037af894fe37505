//! A compile's cache key: what the result depends on, hashed with the
//! cache's [`StableHasher`] (see
//! [`Program::cache_key`](super::Program::cache_key) for the list).

use std::fs;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use crate::compile::cache::{CacheKey, StableHasher, MAX_INCLUDE_FILES};

/// Everything a compile's result depends on.
pub(super) struct KeyInputs<'a> {
    pub(super) cudakit_version: &'a str,
    pub(super) nvrtc_version: (i32, i32),
    pub(super) name: &'a str,
    pub(super) source: &'a str,
    /// Sorted by name.
    pub(super) headers: &'a [(&'a str, &'a str)],
    pub(super) include_fingerprint: u128,
    /// The options of each NVRTC run, in order.
    pub(super) options: &'a [&'a [String]],
    pub(super) name_expressions: &'a [String],
    pub(super) arch: &'a str,
    pub(super) outputs: &'a [&'a str],
}

impl KeyInputs<'_> {
    /// The key: every input as length-prefixed fields (lists as a count,
    /// then their items), after a domain tag.
    pub(super) fn key(&self) -> CacheKey {
        let mut h = StableHasher::new();
        h.field(b"cudakit compile cache key v1");
        h.field(self.cudakit_version.as_bytes());
        h.write(&self.nvrtc_version.0.to_le_bytes());
        h.write(&self.nvrtc_version.1.to_le_bytes());
        h.field(self.name.as_bytes());
        h.field(self.source.as_bytes());
        h.count(self.headers.len());
        for (name, contents) in self.headers {
            h.field(name.as_bytes());
            h.field(contents.as_bytes());
        }
        h.write(&self.include_fingerprint.to_le_bytes());
        h.count(self.options.len());
        for run in self.options {
            fields(&mut h, run.iter().map(String::as_str));
        }
        fields(&mut h, self.name_expressions.iter().map(String::as_str));
        h.field(self.arch.as_bytes());
        fields(&mut h, self.outputs.iter().copied());
        h.finish_key()
    }
}

/// A list of fields: its length, then each one.
fn fields<'a>(h: &mut StableHasher, items: impl ExactSizeIterator<Item = &'a str>) {
    h.count(items.len());
    for item in items {
        h.field(item.as_bytes());
    }
}

/// A fingerprint of the files under `folders`: for each folder, in order,
/// every file's relative path, size and modification time. `None` when
/// they hold more than [`MAX_INCLUDE_FILES`] files.
pub(super) fn fingerprint_folders(folders: &[PathBuf]) -> Option<u128> {
    let mut h = StableHasher::new();
    h.count(folders.len());
    let mut budget = MAX_INCLUDE_FILES;
    for folder in folders {
        h.field(folder.as_os_str().as_encoded_bytes());
        let mut files = Vec::new();
        if !walk(folder, Path::new(""), &mut files, &mut budget) {
            return None;
        }
        files.sort();
        h.count(files.len());
        for (rel, len, mtime) in files {
            h.field(rel.as_os_str().as_encoded_bytes());
            h.write(&len.to_le_bytes());
            h.write(&mtime.to_le_bytes());
        }
    }
    Some(h.finish())
}

/// Collects (relative path, size, mtime in ns) of the files under `root`;
/// `false` when the budget runs out. Symbolic links to folders are not
/// followed (no cycles); links to files are.
fn walk(root: &Path, rel: &Path, out: &mut Vec<(PathBuf, u64, u128)>, budget: &mut usize) -> bool {
    let Ok(entries) = fs::read_dir(root.join(rel)) else {
        return true;
    };
    for entry in entries.flatten() {
        let rel_path = rel.join(entry.file_name());
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            if !walk(root, &rel_path, out, budget) {
                return false;
            }
            continue;
        }
        let Ok(meta) = fs::metadata(entry.path()) else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        if *budget == 0 {
            return false;
        }
        *budget -= 1;
        let mtime = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        out.push((rel_path, meta.len(), mtime));
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs<'a>(
        headers: &'a [(&'a str, &'a str)],
        options: &'a [&'a [String]],
        exprs: &'a [String],
    ) -> KeyInputs<'a> {
        KeyInputs {
            cudakit_version: "0.1.0",
            nvrtc_version: (13, 0),
            name: "k.cu",
            source: "__global__ void k() {}",
            headers,
            include_fingerprint: 7,
            options,
            name_expressions: exprs,
            arch: "sm_90",
            outputs: &["cubin"],
        }
    }

    /// The key of fixed inputs is a fixed constant: a change of the key
    /// derivation (or of the hash) would silently orphan every user's cache
    /// entries, so it must be deliberate and show up here.
    #[test]
    fn the_key_of_fixed_inputs_is_golden() {
        let options = vec!["-arch=sm_90".to_owned(), "-DN=4".to_owned()];
        let runs: [&[String]; 1] = [&options];
        let exprs = vec!["k".to_owned()];
        let headers = [("a.h", "#define A 1")];
        let k = inputs(&headers, &runs, &exprs).key();
        assert_eq!(k.to_hex(), GOLDEN_KEY, "the cache key derivation changed");
    }

    const GOLDEN_KEY: &str = "f6f865d299508a37a97f8781725e8269";

    #[test]
    fn every_field_changes_the_key_and_framing_is_unambiguous() {
        let o1 = vec!["-DA".to_owned(), "B".to_owned()];
        let o2 = vec!["-DAB".to_owned()];
        let r1: [&[String]; 1] = [&o1];
        let r2: [&[String]; 1] = [&o2];
        let e: Vec<String> = Vec::new();
        let h1 = [("ab", "c")];
        let h2 = [("a", "bc")];
        let base = inputs(&h1, &r1, &e).key();
        assert_ne!(base, inputs(&h2, &r1, &e).key());
        assert_ne!(base, inputs(&h1, &r2, &e).key());
        let changed = |change: &dyn Fn(&mut KeyInputs<'_>)| {
            let mut i = inputs(&h1, &r1, &e);
            change(&mut i);
            i.key()
        };
        assert_ne!(base, changed(&|i| i.nvrtc_version = (13, 1)));
        assert_ne!(base, changed(&|i| i.cudakit_version = "0.1.1"));
        assert_ne!(base, changed(&|i| i.arch = "sm_90a"));
        assert_ne!(base, changed(&|i| i.outputs = &["cubin", "ptx"]));
        assert_ne!(base, changed(&|i| i.include_fingerprint = 8));
        assert_ne!(base, changed(&|i| i.name = "k2.cu"));
        assert_ne!(base, changed(&|i| i.source = "__global__ void k2() {}"));
        assert_eq!(base, inputs(&h1, &r1, &e).key());
    }

    #[test]
    fn the_fingerprint_follows_files_and_gives_up_on_huge_trees() {
        let dir = std::env::temp_dir().join(format!("cudakit-key-unit-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("sub")).unwrap();
        fs::write(dir.join("a.cuh"), "1").unwrap();
        let folders = [dir.clone()];
        let before = fingerprint_folders(&folders).unwrap();
        assert_eq!(Some(before), fingerprint_folders(&folders));
        fs::write(dir.join("sub/b.cuh"), "").unwrap();
        let after = fingerprint_folders(&folders).unwrap();
        assert_ne!(before, after);
        fs::write(dir.join("a.cuh"), "22").unwrap();
        assert_ne!(Some(after), fingerprint_folders(&folders));
        let mut files = Vec::new();
        let mut budget = 1;
        assert!(!walk(&dir, Path::new(""), &mut files, &mut budget));
        let _ = fs::remove_dir_all(&dir);
    }
}
