//! CUDA's own headers for NVRTC: [`CudaHeaders`], the `include` folder of a
//! CUDA toolkit or of NVIDIA's pip wheels, with CCCL's `include/cccl` beside
//! it. NVRTC 13 builds in only a few headers; `<cooperative_groups.h>`,
//! `<mma.h>`, `<cuda/std/...>`, `<cuda/atomic>` and the rest of CCCL come
//! from these folders, handed to NVRTC as include paths by
//! [`Program::cuda_headers`](crate::compile::program::Program::cuda_headers).
//!
//! ```no_run
//! use cudakit::compile::program::{Arch, Program};
//!
//! # fn main() -> cudakit::Result<()> {
//! let source = r#"
//!     #include <cooperative_groups.h>
//!     namespace cg = cooperative_groups;
//!     extern "C" __global__ void lanes(unsigned* out) {
//!         auto warp = cg::tiled_partition<32>(cg::this_thread_block());
//!         out[threadIdx.x] = warp.thread_rank();
//!     }"#;
//! let compiled = Program::new("lanes.cu", source)
//!     .cuda_headers() // found as below; a typed error lists where it looked
//!     .arch(Arch::Sm(90))
//!     .compile()?;
//! # let _ = compiled; Ok(()) }
//! ```
//!
//! # Where they are looked for
//!
//! In order ([`cuda_header_candidates`]), the first folder that holds all
//! three parts is used:
//!
//! 1. `CUDAKIT_CUDA_INCLUDE`, when set: the only candidate (a folder the user
//!    named and that fails is reported, never silently replaced).
//! 2. The toolkits: `include` and `targets/<arch>-linux/include` under
//!    `CUDA_PATH`, `CUDA_HOME`, `/usr/local/cuda`, every
//!    `/usr/local/cuda-<version>` (newest first) and `/opt/cuda`, as the
//!    loader searches them ([`cuda_sys::loader::toolkit_roots`]).
//! 3. The pip wheels' `nvidia/cu13/include`, under every site-packages
//!    folder of [`cuda_sys::loader::site_packages`].
//! 4. Last, `python/nvidia/cu13/include` under the project's ignored `.deps`
//!    folders ([`cuda_sys::loader::deps_folders`]), where
//!    `scripts/nvrtc-env.sh` installs the wheels.
//!
//! The three parts, and the wheel that ships each:
//!
//! | file checked | part | pip wheel |
//! |---|---|---|
//! | `cuda_runtime.h` | runtime headers, `cooperative_groups.h` | `nvidia-cuda-runtime` |
//! | `crt/host_defines.h` | `crt/` (`mma.h`'s body, ...) | `nvidia-cuda-crt` |
//! | `cccl/cuda/std/version` (CUDA 13) or `cuda/std/version` (CUDA 12) | CCCL (libcu++, CUB, Thrust) | `nvidia-cuda-cccl` |
//!
//! A folder that lacks a part is skipped with the reason (the wheel to
//! install); none found is [`Error::CudaHeadersNotFound`], which lists every
//! folder looked at and why each was not used.
//!
//! # In the compile cache key
//!
//! CUDA's header folders hold thousands of files. The compile cache key
//! does not walk them: a folder recognised as CUDA's (the three parts
//! above, or the `cccl` folder of such a folder) is keyed by
//! [`CudaHeaders::stamp`]: its path, `CUDA_VERSION` from `cuda.h`,
//! `CCCL_VERSION`, the size and modification time of a few marker files,
//! and the names of the wheels' `.dist-info` folders beside a wheel
//! install. Editing a file of a toolkit by hand is not seen; reinstalling
//! or upgrading it is.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use once_cell::sync::Lazy;

use crate::compile::cache::StableHasher;
use crate::error::{Error, Result};

/// The environment variable naming CUDA's `include` folder explicitly.
pub const ENV_VAR: &str = "CUDAKIT_CUDA_INCLUDE";

/// The toolkit's per-architecture include folder, under a toolkit root.
const TARGET_INCLUDE: &str = if cfg!(target_arch = "aarch64") {
    "targets/sbsa-linux/include"
} else {
    "targets/x86_64-linux/include"
};

/// Files whose size and modification time go into the stamp, relative to
/// the include folder (those that exist).
const MARKERS: &[&str] = &[
    "cuda.h",
    "cuda_runtime.h",
    "cooperative_groups.h",
    "mma.h",
    "crt/host_defines.h",
    "crt/mma.hpp",
];

/// CUDA's headers: an `include` folder with the runtime headers and `crt/`,
/// and the CCCL folder (`include/cccl` since CUDA 13; in CUDA 12 CCCL sits
/// in `include` itself). Found with [`CudaHeaders::find`] or checked with
/// [`CudaHeaders::at`]; see the [module docs](self) for the search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CudaHeaders {
    include: PathBuf,
    cccl: Option<PathBuf>,
    cuda_version: Option<(u32, u32)>,
    cccl_version: Option<(u32, u32, u32)>,
    stamp: u128,
}

static FOUND: Lazy<Result<CudaHeaders>> = Lazy::new(search);

impl CudaHeaders {
    /// CUDA's headers, searched for once per process in the order of the
    /// [module docs](self); later calls return the first answer.
    ///
    /// # Errors
    ///
    /// [`Error::CudaHeadersNotFound`], listing every folder looked at and
    /// why each was not used.
    pub fn find() -> Result<CudaHeaders> {
        FOUND.clone()
    }

    /// CUDA's headers in `include` (a toolkit's or a wheel's `include`
    /// folder), checked for the three parts.
    ///
    /// # Errors
    ///
    /// [`Error::CudaHeadersNotFound`] with this one folder and what it lacks.
    pub fn at(include: impl Into<PathBuf>) -> Result<CudaHeaders> {
        let include = include.into();
        inspect(&include).map_err(|reason| Error::CudaHeadersNotFound {
            looked_in: vec![format!("{}: {reason}", include.display())],
        })
    }

    /// The `include` folder.
    pub fn include_folder(&self) -> &Path {
        &self.include
    }

    /// The CCCL folder, `include/cccl`, when CCCL is there (CUDA 13);
    /// `None` when CCCL is in `include` itself (CUDA 12).
    pub fn cccl_folder(&self) -> Option<&Path> {
        self.cccl.as_deref()
    }

    /// The include paths NVRTC gets, in order: the CCCL folder (when
    /// separate), then `include`.
    pub fn folders(&self) -> Vec<PathBuf> {
        self.cccl
            .iter()
            .cloned()
            .chain(std::iter::once(self.include.clone()))
            .collect()
    }

    /// `CUDA_VERSION` from `cuda.h` as (major, minor): (13, 0) for 13000;
    /// `None` when `cuda.h` is absent or has no such define.
    pub fn cuda_version(&self) -> Option<(u32, u32)> {
        self.cuda_version
    }

    /// `CCCL_VERSION` as (major, minor, patch): (3, 0, 1) for 3000001.
    pub fn cccl_version(&self) -> Option<(u32, u32, u32)> {
        self.cccl_version
    }

    /// What the compile cache key holds for these folders instead of their
    /// files (see the [module docs](self#in-the-compile-cache-key)).
    pub fn stamp(&self) -> u128 {
        self.stamp
    }
}

/// Every folder looked at for CUDA's headers, in order, given an
/// environment, the toolkit roots, the site-packages folders and the
/// project's `.deps` folders. The explicit `CUDAKIT_CUDA_INCLUDE` alone
/// when it is set.
pub fn cuda_header_candidates(
    env: &dyn Fn(&str) -> Option<String>,
    toolkit_roots: &[PathBuf],
    site_packages: &[PathBuf],
    deps_folders: &[PathBuf],
) -> Vec<PathBuf> {
    if let Some(explicit) = env(ENV_VAR).filter(|v| !v.is_empty()) {
        return vec![PathBuf::from(explicit)];
    }
    let mut out: Vec<PathBuf> = Vec::new();
    let mut push = |p: PathBuf| {
        if !out.contains(&p) {
            out.push(p);
        }
    };
    for root in toolkit_roots {
        push(root.join("include"));
        push(root.join(TARGET_INCLUDE));
    }
    for root in site_packages {
        push(root.join("nvidia/cu13/include"));
    }
    for deps in deps_folders {
        push(deps.join("python/nvidia/cu13/include"));
    }
    out
}

/// The process's search.
fn search() -> Result<CudaHeaders> {
    let env = |name: &str| std::env::var(name).ok();
    let candidates = cuda_header_candidates(
        &env,
        &cuda_sys::loader::toolkit_roots(),
        &cuda_sys::loader::site_packages(),
        &cuda_sys::loader::deps_folders(),
    );
    first_usable(&candidates)
}

/// The first of `candidates` that holds CUDA's headers.
fn first_usable(candidates: &[PathBuf]) -> Result<CudaHeaders> {
    let mut looked_in = Vec::new();
    for folder in candidates {
        match inspect(folder) {
            Ok(found) => return Ok(found),
            Err(reason) => looked_in.push(format!("{}: {reason}", folder.display())),
        }
    }
    Err(Error::CudaHeadersNotFound { looked_in })
}

/// CUDA's headers in `include`, or why not.
fn inspect(include: &Path) -> std::result::Result<CudaHeaders, String> {
    if !include.is_dir() {
        return Err("no such folder".to_owned());
    }
    let mut missing = Vec::new();
    if !include.join("cuda_runtime.h").is_file() {
        missing.push("cuda_runtime.h (nvidia-cuda-runtime)");
    }
    if !include.join("crt/host_defines.h").is_file() {
        missing.push("crt/host_defines.h (nvidia-cuda-crt)");
    }
    let cccl_dir = include.join("cccl");
    let cccl = if cccl_dir.join("cuda/std/version").is_file() {
        Some(cccl_dir)
    } else if include.join("cuda/std/version").is_file() {
        None
    } else {
        missing.push("cccl/cuda/std/version (nvidia-cuda-cccl)");
        None
    };
    if !missing.is_empty() {
        return Err(format!("lacks {}", missing.join(", ")));
    }
    let cccl_root = cccl.as_deref().unwrap_or(include);
    let cuda_version =
        define(&include.join("cuda.h"), "CUDA_VERSION").map(|v| (v / 1000, (v % 1000) / 10));
    let cccl_version = define(&cccl_root.join("cuda/std/__cccl/version.h"), "CCCL_VERSION")
        .map(|v| (v / 1_000_000, (v / 1000) % 1000, v % 1000));
    let mut found = CudaHeaders {
        include: include.to_path_buf(),
        cccl,
        cuda_version,
        cccl_version,
        stamp: 0,
    };
    found.stamp = stamp_of(&found);
    Ok(found)
}

/// The folder's stamp: its paths, versions, marker files and, for a wheel
/// install, the names of the `nvidia_cuda_*.dist-info` folders beside it.
fn stamp_of(h: &CudaHeaders) -> u128 {
    let mut s = StableHasher::new();
    s.field(b"cuda headers v1");
    s.field(h.include.as_os_str().as_encoded_bytes());
    match &h.cccl {
        Some(cccl) => s.field(cccl.as_os_str().as_encoded_bytes()),
        None => s.field(b""),
    }
    let (major, minor) = h.cuda_version.unwrap_or((0, 0));
    s.write(&major.to_le_bytes());
    s.write(&minor.to_le_bytes());
    let (a, b, c) = h.cccl_version.unwrap_or((0, 0, 0));
    for v in [a, b, c] {
        s.write(&v.to_le_bytes());
    }
    let cccl_root = h.cccl.as_deref().unwrap_or(&h.include);
    let markers = MARKERS
        .iter()
        .map(|m| h.include.join(m))
        .chain(std::iter::once(cccl_root.join("cuda/std/__cccl/version.h")));
    for path in markers {
        let (len, mtime) = size_and_mtime(&path);
        s.field(path.as_os_str().as_encoded_bytes());
        s.write(&len.to_le_bytes());
        s.write(&mtime.to_le_bytes());
    }
    // <site-packages>/nvidia/cu13/include: the wheels' names and versions.
    let mut dist_infos: Vec<String> = Vec::new();
    if h.include.ends_with("nvidia/cu13/include") {
        if let Some(site) = h.include.ancestors().nth(3) {
            if let Ok(read) = fs::read_dir(site) {
                dist_infos = read
                    .filter_map(|e| e.ok()?.file_name().into_string().ok())
                    .filter(|n| n.starts_with("nvidia_cuda_") && n.ends_with(".dist-info"))
                    .collect();
            }
        }
    }
    dist_infos.sort();
    s.count(dist_infos.len());
    for name in dist_infos {
        s.field(name.as_bytes());
    }
    s.finish()
}

fn size_and_mtime(path: &Path) -> (u64, u128) {
    match fs::metadata(path) {
        Ok(meta) => (
            meta.len(),
            meta.modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos()),
        ),
        Err(_) => (u64::MAX, 0),
    }
}

/// The value of `#define NAME <integer>` in the first 256 KiB of `path`.
fn define(path: &Path, name: &str) -> Option<u32> {
    let mut text = String::new();
    fs::File::open(path)
        .ok()?
        .take(256 << 10)
        .read_to_string(&mut text)
        .ok()?;
    parse_define(&text, name)
}

fn parse_define(text: &str, name: &str) -> Option<u32> {
    text.lines().find_map(|line| {
        let rest = line.trim_start().strip_prefix('#')?.trim_start();
        let rest = rest.strip_prefix("define")?;
        let mut words = rest.split_whitespace();
        if words.next()? != name {
            return None;
        }
        words.next()?.parse().ok()
    })
}

/// The stamp of `folder` when it is CUDA's headers or their `cccl` folder:
/// what the compile cache key holds instead of walking it.
pub(crate) fn stamp_for_key(folder: &Path) -> Option<u128> {
    if let Ok(found) = inspect(folder) {
        return Some(found.stamp);
    }
    if folder.file_name()? == "cccl" {
        let found = inspect(folder.parent()?).ok()?;
        if found.cccl.as_deref() == Some(folder) {
            let mut s = StableHasher::new();
            s.field(b"cccl of");
            s.write(&found.stamp.to_le_bytes());
            return Some(s.finish());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake header tree under a fresh temporary folder.
    pub(crate) struct Tree(pub(crate) PathBuf);

    impl Tree {
        pub(crate) fn new(tag: &str) -> Tree {
            let root =
                std::env::temp_dir().join(format!("cudakit-headers-{tag}-{}", std::process::id()));
            let _ = fs::remove_dir_all(&root);
            fs::create_dir_all(&root).unwrap();
            Tree(root)
        }

        pub(crate) fn file(&self, rel: &str, text: &str) -> PathBuf {
            let path = self.0.join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, text).unwrap();
            path
        }

        /// A complete CUDA 13 include folder at `rel`.
        pub(crate) fn cuda13(&self, rel: &str) -> PathBuf {
            self.file(
                &format!("{rel}/cuda.h"),
                "#pragma once\n#define CUDA_VERSION 13000\n",
            );
            self.file(&format!("{rel}/cuda_runtime.h"), "");
            self.file(&format!("{rel}/cooperative_groups.h"), "");
            self.file(&format!("{rel}/crt/host_defines.h"), "");
            self.file(&format!("{rel}/cccl/cuda/std/version"), "");
            self.file(
                &format!("{rel}/cccl/cuda/std/__cccl/version.h"),
                "#define CCCL_VERSION 3000001\n",
            );
            self.0.join(rel)
        }
    }

    impl Drop for Tree {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn candidates_follow_the_documented_order() {
        let env = |name: &str| (name == "UNRELATED").then(|| "x".to_owned());
        let list = cuda_header_candidates(
            &env,
            &[PathBuf::from("/tk"), PathBuf::from("/usr/local/cuda")],
            &[PathBuf::from("/sp")],
            &[PathBuf::from("/clone/.deps")],
        );
        let want: Vec<PathBuf> = [
            "/tk/include".to_owned(),
            format!("/tk/{TARGET_INCLUDE}"),
            "/usr/local/cuda/include".to_owned(),
            format!("/usr/local/cuda/{TARGET_INCLUDE}"),
            "/sp/nvidia/cu13/include".to_owned(),
            "/clone/.deps/python/nvidia/cu13/include".to_owned(),
        ]
        .into_iter()
        .map(PathBuf::from)
        .collect();
        assert_eq!(list, want);
        let explicit = |name: &str| (name == ENV_VAR).then(|| "/mine/include".to_owned());
        assert_eq!(
            cuda_header_candidates(&explicit, &[PathBuf::from("/tk")], &[], &[]),
            [PathBuf::from("/mine/include")]
        );
    }

    #[test]
    fn a_complete_folder_is_found_with_its_versions_and_cccl() {
        let tree = Tree::new("complete");
        let include = tree.cuda13("tk/include");
        let found = CudaHeaders::at(&include).unwrap();
        assert_eq!(found.cuda_version(), Some((13, 0)));
        assert_eq!(found.cccl_version(), Some((3, 0, 1)));
        assert_eq!(found.cccl_folder(), Some(include.join("cccl").as_path()));
        assert_eq!(found.folders(), [include.join("cccl"), include.clone()]);
        // CUDA 12's layout: CCCL in include itself.
        let old = tree.0.join("tk12/include");
        tree.file("tk12/include/cuda.h", "#define CUDA_VERSION 12040\n");
        tree.file("tk12/include/cuda_runtime.h", "");
        tree.file("tk12/include/crt/host_defines.h", "");
        tree.file("tk12/include/cuda/std/version", "");
        let found = CudaHeaders::at(&old).unwrap();
        assert_eq!(found.cuda_version(), Some((12, 4)));
        assert_eq!(found.cccl_folder(), None);
        assert_eq!(found.folders(), [old]);
    }

    /// Issue 26: every folder looked at is in the error, with what it
    /// lacks and the wheel that ships it; the first complete one wins.
    #[test]
    fn a_failed_search_lists_every_folder_and_what_it_lacks() {
        let tree = Tree::new("missing");
        // The runtime wheel alone (what nvrtc-env.sh installed before).
        tree.file(
            "sp/nvidia/cu13/include/cuda.h",
            "#define CUDA_VERSION 13000\n",
        );
        tree.file("sp/nvidia/cu13/include/cuda_runtime.h", "");
        let partial = tree.0.join("sp/nvidia/cu13/include");
        let absent = tree.0.join("nothing/include");
        let err = first_usable(&[absent.clone(), partial.clone()]).unwrap_err();
        let Error::CudaHeadersNotFound { looked_in } = &err else {
            panic!("expected CudaHeadersNotFound, got {err:?}");
        };
        assert_eq!(looked_in.len(), 2);
        assert_eq!(
            looked_in[0],
            format!("{}: no such folder", absent.display())
        );
        assert!(looked_in[1].contains("crt/host_defines.h (nvidia-cuda-crt)"));
        assert!(looked_in[1].contains("(nvidia-cuda-cccl)"));
        assert!(!looked_in[1].contains("cuda_runtime.h"));
        let text = err.to_string();
        assert!(text.contains("CUDAKIT_CUDA_INCLUDE"), "{text}");
        assert!(text.contains(&absent.display().to_string()), "{text}");
        let good = tree.cuda13("deps/python/nvidia/cu13/include");
        let found = first_usable(&[absent, partial, good.clone()]).unwrap();
        assert_eq!(found.include_folder(), good);
    }

    #[test]
    fn the_stamp_follows_versions_and_reinstalls_not_unrelated_files() {
        let tree = Tree::new("stamp");
        let include = tree.cuda13("sp/nvidia/cu13/include");
        let before = CudaHeaders::at(&include).unwrap().stamp();
        assert_eq!(stamp_for_key(&include), Some(before));
        // The cccl folder is recognised as part of it, under its own stamp.
        let cccl = stamp_for_key(&include.join("cccl")).unwrap();
        assert_ne!(cccl, before);
        // A file CUDA does not mark is not looked at.
        tree.file("sp/nvidia/cu13/include/cccl/cuda/extra.h", "x");
        assert_eq!(stamp_for_key(&include), Some(before));
        // A wheel installed or upgraded beside it is.
        fs::create_dir_all(tree.0.join("sp/nvidia_cuda_cccl-13.0.85.dist-info")).unwrap();
        let upgraded = stamp_for_key(&include).unwrap();
        assert_ne!(upgraded, before);
        // A new version in cuda.h is.
        tree.file(
            "sp/nvidia/cu13/include/cuda.h",
            "#pragma once\n#define CUDA_VERSION 13010\n",
        );
        let found = CudaHeaders::at(&include).unwrap();
        assert_eq!(found.cuda_version(), Some((13, 1)));
        assert_ne!(found.stamp(), upgraded);
        // A folder that is not CUDA's is not stamped; nor a stray `cccl`.
        assert_eq!(stamp_for_key(&tree.0.join("sp")), None);
        tree.file("mine/cccl/a.h", "");
        assert_eq!(stamp_for_key(&tree.0.join("mine/cccl")), None);
    }

    /// The folders come after the program's own include paths, CCCL first.
    #[test]
    fn programs_get_the_folders_as_include_paths() {
        use crate::compile::program::{Arch, Output, Program};
        let tree = Tree::new("program");
        let include = tree.cuda13("include");
        let headers = CudaHeaders::at(&include).unwrap();
        let program = Program::new("k.cu", "")
            .include_path("/mine")
            .cuda_headers_from(&headers)
            .extra_option("-DX");
        let options = program.options_for(Arch::Sm(90), Output::Cubin);
        let tail: Vec<String> = options[options.len() - 4..].to_vec();
        assert_eq!(
            tail,
            [
                "--include-path=/mine".to_owned(),
                format!("--include-path={}", include.join("cccl").display()),
                format!("--include-path={}", include.display()),
                "-DX".to_owned(),
            ]
        );
    }

    #[test]
    fn defines_parse() {
        let text = "/* x */\n#define CUDA_VERSION_X 1\n#  define CUDA_VERSION 13000\n";
        assert_eq!(parse_define(text, "CUDA_VERSION"), Some(13000));
        assert_eq!(
            parse_define("#define CUDA_VERSION abc", "CUDA_VERSION"),
            None
        );
        assert_eq!(parse_define("", "CUDA_VERSION"), None);
    }
}
