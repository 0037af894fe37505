//! A compile's cache key: what the result depends on, hashed with the
//! cache's [`StableHasher`] (see
//! [`Program::cache_key`](super::Program::cache_key) for the list).

use std::fs;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use super::compiled::CacheBypass;
use crate::compile::cache::{CacheKey, StableHasher, MAX_INCLUDE_FILES};
use crate::compile::headers::stamp_for_key;

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

/// A fingerprint of what `folders` hold, each folder once, in order: a
/// folder of CUDA's own headers (or its `cccl` folder) by its
/// [stamp](crate::compile::headers::CudaHeaders::stamp), without walking
/// it; any other folder by every file's relative path, size and
/// modification time, not descending into a sub-folder that is itself one
/// of `folders` (it has its own entry). Too many files to walk
/// ([`MAX_INCLUDE_FILES`] in all) is [`CacheBypass::TooManyIncludeFiles`].
/// Only the folders in `cuda` (those [`crate::compile::headers`] found or
/// was given for the program: CUDA's own) are keyed by their version stamp;
/// every other folder is walked, even one that looks like CUDA's headers (a
/// project's vendored copy, whose edits must change the key).
pub(super) fn fingerprint_folders(
    folders: &[PathBuf],
    cuda: &[PathBuf],
) -> Result<u128, CacheBypass> {
    let mut unique: Vec<&PathBuf> = Vec::new();
    for folder in folders {
        if !unique.contains(&folder) {
            unique.push(folder);
        }
    }
    let mut h = StableHasher::new();
    h.count(unique.len());
    let mut budget = MAX_INCLUDE_FILES;
    for folder in &unique {
        h.field(folder.as_os_str().as_encoded_bytes());
        if let Some(stamp) = cuda
            .contains(folder)
            .then(|| stamp_for_key(folder))
            .flatten()
        {
            h.field(b"cuda headers");
            h.write(&stamp.to_le_bytes());
            continue;
        }
        h.field(b"files");
        let nested: Vec<&Path> = unique
            .iter()
            .filter(|other| *other != folder && other.starts_with(folder.as_path()))
            .map(|other| other.as_path())
            .collect();
        let mut files = Vec::new();
        let mut walk = Walk {
            root: folder,
            skip: &nested,
            out: &mut files,
            budget: &mut budget,
        };
        if !walk.folder(Path::new("")) {
            return Err(CacheBypass::TooManyIncludeFiles {
                folder: folder.to_path_buf(),
                limit: MAX_INCLUDE_FILES,
            });
        }
        files.sort();
        h.count(files.len());
        for (rel, len, mtime) in files {
            h.field(rel.as_os_str().as_encoded_bytes());
            h.write(&len.to_le_bytes());
            h.write(&mtime.to_le_bytes());
        }
    }
    Ok(h.finish())
}

/// A walk of one include folder.
struct Walk<'a> {
    root: &'a Path,
    /// Folders under `root` not to descend into.
    skip: &'a [&'a Path],
    /// (relative path, size, mtime in ns) of each file found.
    out: &'a mut Vec<(PathBuf, u64, u128)>,
    budget: &'a mut usize,
}

impl Walk<'_> {
    /// Collects the files under `root/rel`; `false` when the budget runs
    /// out. Symbolic links to folders are not followed (no cycles); links
    /// to files are.
    fn folder(&mut self, rel: &Path) -> bool {
        let Ok(entries) = fs::read_dir(self.root.join(rel)) else {
            return true;
        };
        for entry in entries.flatten() {
            let rel_path = rel.join(entry.file_name());
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                let full = self.root.join(&rel_path);
                if self.skip.iter().any(|s| *s == full) {
                    continue;
                }
                if !self.folder(&rel_path) {
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
            if *self.budget == 0 {
                return false;
            }
            *self.budget -= 1;
            let mtime = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            self.out.push((rel_path, meta.len(), mtime));
        }
        true
    }
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

    fn temp(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("cudakit-key-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn write(path: &Path, text: &str) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    #[test]
    fn the_fingerprint_follows_files_and_gives_up_on_huge_trees() {
        let dir = temp("unit");
        fs::create_dir_all(dir.join("sub")).unwrap();
        fs::write(dir.join("a.cuh"), "1").unwrap();
        let folders = [dir.clone()];
        let before = fingerprint_folders(&folders, &[]).unwrap();
        assert_eq!(Ok(before), fingerprint_folders(&folders, &[]));
        fs::write(dir.join("sub/b.cuh"), "").unwrap();
        let after = fingerprint_folders(&folders, &[]).unwrap();
        assert_ne!(before, after);
        fs::write(dir.join("a.cuh"), "22").unwrap();
        assert_ne!(Ok(after), fingerprint_folders(&folders, &[]));
        let mut files = Vec::new();
        let mut budget = 1;
        let mut walk = Walk {
            root: &dir,
            skip: &[],
            out: &mut files,
            budget: &mut budget,
        };
        assert!(!walk.folder(Path::new("")));
        let _ = fs::remove_dir_all(&dir);
    }

    /// Issue 26: a tree over the limit is a typed reason naming the folder
    /// (the compile reports it in `Compiled::cache_bypass`).
    #[test]
    fn too_many_files_is_a_typed_reason() {
        let dir = temp("many");
        for i in 0..=MAX_INCLUDE_FILES {
            fs::write(dir.join(format!("{i}.h")), "").unwrap();
        }
        let err = fingerprint_folders(std::slice::from_ref(&dir), &[]).unwrap_err();
        assert_eq!(
            err,
            CacheBypass::TooManyIncludeFiles {
                folder: dir.clone(),
                limit: MAX_INCLUDE_FILES
            }
        );
        assert!(err.to_string().contains("more than 10000 files"), "{err}");
        let _ = fs::remove_dir_all(&dir);
    }

    /// Issue 26: CUDA's headers (and their cccl folder) are keyed by their
    /// stamp and not walked, however many files they hold; a folder given
    /// twice, or nested in another include path, is walked once.
    #[test]
    fn cuda_headers_are_keyed_by_version_and_nothing_is_walked_twice() {
        let dir = temp("cuda");
        let include = dir.join("cuda/include");
        write(&include.join("cuda.h"), "#define CUDA_VERSION 13000\n");
        write(&include.join("cuda_runtime.h"), "");
        write(&include.join("crt/host_defines.h"), "");
        write(&include.join("cccl/cuda/std/version"), "");
        write(
            &include.join("cccl/cuda/std/__cccl/version.h"),
            "#define CCCL_VERSION 3000001\n",
        );
        // More files than the limit: never counted.
        for i in 0..=MAX_INCLUDE_FILES {
            fs::write(include.join(format!("x{i}.h")), "").unwrap();
        }
        let cccl = include.join("cccl");
        let cuda = [cccl.clone(), include.clone()];
        let before = fingerprint_folders(&cuda, &cuda).expect("keyed by version, not walked");
        fs::write(include.join("x0.h"), "unmarked edit").unwrap();
        assert_eq!(fingerprint_folders(&cuda, &cuda), Ok(before));
        write(&include.join("cuda.h"), "#define CUDA_VERSION 13010\n");
        assert_ne!(fingerprint_folders(&cuda, &cuda), Ok(before));
        // The same folders as plain include paths (a vendored copy): walked,
        // so too many files to key.
        assert!(fingerprint_folders(&cuda, &[]).is_err());

        // A user folder with a nested include path: each file once.
        let mine = dir.join("mine");
        write(&mine.join("a.h"), "");
        write(&mine.join("inner/b.h"), "");
        let mut files = Vec::new();
        let mut budget = MAX_INCLUDE_FILES;
        let inner = mine.join("inner");
        let skip = [inner.as_path()];
        let mut walk = Walk {
            root: &mine,
            skip: &skip,
            out: &mut files,
            budget: &mut budget,
        };
        assert!(walk.folder(Path::new("")));
        assert_eq!(files.len(), 1);
        let nested = fingerprint_folders(&[mine.clone(), inner.clone()], &[]).unwrap();
        assert_eq!(
            fingerprint_folders(&[mine.clone(), inner.clone(), mine.clone()], &[]),
            Ok(nested)
        );
        write(&inner.join("b.h"), "changed");
        assert_ne!(fingerprint_folders(&[mine.clone(), inner], &[]), Ok(nested));
        let _ = fs::remove_dir_all(&dir);
    }
}
