//! Finding and opening libcuda and libnvrtc at run time.
//!
//! Search order, for each library:
//!
//! 1. An explicit path from the environment (`CUDAKIT_LIBCUDA`,
//!    `CUDAKIT_LIBNVRTC`). When it is set, it is the only candidate: a path
//!    the user named and that fails is reported, never silently replaced.
//! 2. The standard sonames, resolved by the dynamic linker (`libcuda.so.1`;
//!    `libnvrtc.so.13`, `libnvrtc.so.12`). The toolkit's unversioned
//!    `libcuda.so` is a link-time stub and is never tried.
//! 3. The library folders of `CUDA_PATH`, `CUDA_HOME` and `/usr/local/cuda`.
//! 4. Python wheels: `nvidia/cu13/lib` (and `nvidia/cuda_nvrtc/lib` for
//!    12.x) under every `PYTHONPATH` entry and every site-packages folder of
//!    the `python3` on `PATH`.
//!
//! When NVRTC is opened from a folder the dynamic linker does not search,
//! `libnvrtc-builtins.so.*` from the same folder is opened first; without it
//! every compile fails with `NVRTC_ERROR_BUILTIN_OPERATION_FAILURE`.
//!
//! Libraries are opened once per process and never unloaded. Nothing here
//! panics: every failure is a [`LoadError`].

use std::env;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

use libloading::Library;

/// One place the loader looked, and why it was not used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// The soname or path handed to the dynamic loader.
    pub candidate: String,
    /// The operating system's reason (`dlerror` text), or why it was skipped.
    pub reason: String,
}

impl fmt::Display for Attempt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.candidate, self.reason)
    }
}

/// Why a library could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// No candidate could be opened.
    #[error("{library} could not be loaded; tried {} candidate(s):{}{hint}", attempts.len(), list_attempts(attempts))]
    NotFound {
        /// `"libcuda"` or `"libnvrtc"`.
        library: &'static str,
        /// Every candidate tried, in order, with the reason it failed.
        attempts: Vec<Attempt>,
        /// What a person can do about it.
        hint: &'static str,
    },
    /// The library opened, but a symbol every supported version exports is
    /// missing: it is not the library it claims to be, or it is too old.
    #[error("{library} at {path}: missing required symbol `{symbol}`: {reason}")]
    MissingSymbol {
        /// `"libcuda"` or `"libnvrtc"`.
        library: &'static str,
        /// The candidate that was opened.
        path: String,
        /// The exported symbol that was not found.
        symbol: &'static str,
        /// The dynamic loader's message.
        reason: String,
    },
}

fn list_attempts(attempts: &[Attempt]) -> String {
    let mut out = String::new();
    for attempt in attempts {
        out.push_str("\n  ");
        out.push_str(&attempt.to_string());
    }
    out
}

/// What the loader opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loaded {
    /// The candidate that opened (a soname or a path).
    pub candidate: String,
    /// Every candidate tried before it, with the reason each failed.
    pub skipped: Vec<Attempt>,
    /// The `libnvrtc-builtins` preloaded beside it, if any.
    pub preloaded: Option<String>,
}

/// Which library a search is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Which {
    Cuda,
    Nvrtc,
}

impl Which {
    pub(crate) fn library(self) -> &'static str {
        match self {
            Which::Cuda => "libcuda",
            Which::Nvrtc => "libnvrtc",
        }
    }

    /// The environment variable naming an explicit path.
    pub fn env_var(self) -> &'static str {
        match self {
            Which::Cuda => "CUDAKIT_LIBCUDA",
            Which::Nvrtc => "CUDAKIT_LIBNVRTC",
        }
    }

    fn sonames(self) -> &'static [&'static str] {
        match self {
            Which::Cuda => &["libcuda.so.1"],
            Which::Nvrtc => &["libnvrtc.so.13", "libnvrtc.so.12"],
        }
    }

    fn hint(self) -> &'static str {
        match self {
            Which::Cuda => {
                "\nhint: libcuda.so.1 comes with the NVIDIA driver; install the driver \
                 (580 or newer for CUDA 13) or set CUDAKIT_LIBCUDA to the library's path"
            }
            Which::Nvrtc => {
                "\nhint: install NVRTC with `python3 -m pip install nvidia-cuda-nvrtc==13.0.88` \
                 (or the CUDA toolkit), or set CUDAKIT_LIBNVRTC to libnvrtc.so.13's path"
            }
        }
    }
}

/// Every candidate for `which`, in search order, given an environment.
pub(crate) fn candidates(which: Which, env: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    if let Some(explicit) = env(which.env_var()).filter(|v| !v.is_empty()) {
        return vec![explicit];
    }
    let mut out: Vec<String> = which.sonames().iter().map(|s| s.to_string()).collect();
    let mut roots: Vec<PathBuf> = Vec::new();
    for var in ["CUDA_PATH", "CUDA_HOME"] {
        if let Some(root) = env(var).filter(|v| !v.is_empty()) {
            roots.push(PathBuf::from(root));
        }
    }
    roots.push(PathBuf::from("/usr/local/cuda"));
    let mut folders: Vec<PathBuf> = Vec::new();
    for root in &roots {
        for sub in ["lib64", "lib", "targets/x86_64-linux/lib", "compat"] {
            folders.push(root.join(sub));
        }
    }
    if which == Which::Nvrtc {
        let mut python_roots: Vec<PathBuf> = Vec::new();
        if let Some(pp) = env("PYTHONPATH") {
            python_roots.extend(env::split_paths(&pp));
        }
        python_roots.extend(python_site_packages());
        for root in python_roots {
            folders.push(root.join("nvidia/cu13/lib"));
            folders.push(root.join("nvidia/cuda_nvrtc/lib"));
        }
    }
    for folder in folders {
        for soname in which.sonames() {
            let path = folder.join(soname).to_string_lossy().into_owned();
            if !out.contains(&path) {
                out.push(path);
            }
        }
    }
    out
}

/// The site-packages folders of the `python3` on `PATH`; empty when there is
/// no python3 or it fails.
fn python_site_packages() -> Vec<PathBuf> {
    let script = "import site,sys\n\
                  p=list(getattr(site,'getsitepackages',lambda:[])())\n\
                  u=getattr(site,'getusersitepackages',lambda:None)()\n\
                  p+=[u] if u else []\n\
                  print('\\n'.join(p))";
    match Command::new("python3").arg("-c").arg(script).output() {
        Ok(output) if output.status.success() => String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(PathBuf::from)
            .collect(),
        _ => Vec::new(),
    }
}

/// Opens the first candidate that loads. The returned library is leaked on
/// purpose by the callers: cuda-sys never unloads.
pub(crate) fn open(which: Which) -> Result<(Library, Loaded), LoadError> {
    let env = |name: &str| env::var(name).ok();
    open_from(which, candidates(which, &env))
}

/// Opens the first of `candidates` that loads.
pub(crate) fn open_from(
    which: Which,
    candidates: Vec<String>,
) -> Result<(Library, Loaded), LoadError> {
    let mut attempts = Vec::new();
    for candidate in candidates {
        let is_path = candidate.contains('/');
        if is_path && !Path::new(&candidate).exists() {
            attempts.push(Attempt {
                candidate,
                reason: "no such file".to_owned(),
            });
            continue;
        }
        let mut preloaded = None;
        if which == Which::Nvrtc && is_path {
            preloaded = preload_builtins(Path::new(&candidate));
        }
        // SAFETY: opening a shared library runs its initialisers. libcuda and
        // libnvrtc are NVIDIA's libraries with benign initialisers; a user
        // who points CUDAKIT_LIB* at another library accepts that it runs.
        match unsafe { Library::new(&candidate) } {
            Ok(library) => {
                return Ok((
                    library,
                    Loaded {
                        candidate,
                        skipped: attempts,
                        preloaded,
                    },
                ))
            }
            Err(err) => attempts.push(Attempt {
                candidate,
                reason: dl_reason(&err),
            }),
        }
    }
    Err(LoadError::NotFound {
        library: which.library(),
        attempts,
        hint: which.hint(),
    })
}

/// Opens `libnvrtc-builtins.so.*` from the folder of `nvrtc` so that NVRTC's
/// own `dlopen` of it by soname finds it. Returns the path opened.
fn preload_builtins(nvrtc: &Path) -> Option<String> {
    let folder = nvrtc.parent()?;
    let mut found: Vec<PathBuf> = std::fs::read_dir(folder)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("libnvrtc-builtins.so"))
        })
        .collect();
    found.sort();
    let path = found.pop()?;
    // SAFETY: libnvrtc-builtins is NVIDIA's library shipped beside libnvrtc;
    // loading it runs only its initialisers.
    let library = unsafe { Library::new(&path) }.ok()?;
    std::mem::forget(library);
    Some(path.to_string_lossy().into_owned())
}

fn dl_reason(err: &libloading::Error) -> String {
    match err {
        libloading::Error::DlOpen { desc } => format!("{desc:?}")
            .trim_start_matches('"')
            .trim_end_matches('"')
            .to_owned(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        }
    }

    #[test]
    fn explicit_path_is_the_only_candidate() {
        let env = fake_env(&[("CUDAKIT_LIBCUDA", "/opt/x/libcuda.so.1")]);
        assert_eq!(candidates(Which::Cuda, &env), vec!["/opt/x/libcuda.so.1"]);
    }

    #[test]
    fn sonames_come_first_and_the_stub_never_appears() {
        let env = fake_env(&[("CUDA_PATH", "/opt/cuda")]);
        let list = candidates(Which::Cuda, &env);
        assert_eq!(list[0], "libcuda.so.1");
        assert!(list.contains(&"/opt/cuda/lib64/libcuda.so.1".to_owned()));
        assert!(list.iter().all(|c| !c.ends_with("libcuda.so")));
        assert!(list.iter().all(|c| !c.contains("stubs")));
    }

    #[test]
    fn nvrtc_search_covers_13_then_12_and_wheels() {
        let env = fake_env(&[("PYTHONPATH", "/deps/py")]);
        let list = candidates(Which::Nvrtc, &env);
        assert_eq!(&list[..2], &["libnvrtc.so.13", "libnvrtc.so.12"]);
        assert!(list.contains(&"/deps/py/nvidia/cu13/lib/libnvrtc.so.13".to_owned()));
        assert!(list.contains(&"/deps/py/nvidia/cuda_nvrtc/lib/libnvrtc.so.12".to_owned()));
    }

    #[test]
    fn a_failed_search_lists_every_candidate_and_reason() {
        let err = open_from(
            Which::Cuda,
            vec![
                "/nonexistent/libcuda.so.1".into(),
                "libcudakit-no-such.so.1".into(),
            ],
        )
        .unwrap_err();
        let LoadError::NotFound { attempts, .. } = &err else {
            panic!("expected NotFound, got {err:?}");
        };
        assert_eq!(attempts.len(), 2);
        assert_eq!(attempts[0].reason, "no such file");
        assert!(attempts[1].reason.contains("libcudakit-no-such.so.1"));
        let text = err.to_string();
        assert!(
            text.contains("/nonexistent/libcuda.so.1: no such file"),
            "{text}"
        );
        assert!(text.contains("hint:"), "{text}");
    }
}
