//! Finding and opening libcuda and libnvrtc (and the optional libraries,
//! such as libnvJitLink) at run time.
//!
//! libnvJitLink follows the same order as libnvrtc: `CUDAKIT_LIBNVJITLINK`,
//! the soname `libnvJitLink.so.13`, the toolkit folders, then the wheels'
//! `nvidia/nvjitlink/lib` and `nvidia/cu13/lib`, then the project's `.deps`.
//!
//! Search order, for each library:
//!
//! 1. An explicit path from the environment (`CUDAKIT_LIBCUDA`,
//!    `CUDAKIT_LIBNVRTC`). When it is set, it is the only candidate: a path
//!    the user named and that fails is reported, never silently replaced.
//! 2. The standard sonames, resolved by the dynamic linker (`libcuda.so.1`;
//!    `libnvrtc.so.13`, `libnvrtc.so.12`). The toolkit's unversioned
//!    `libcuda.so` is a link-time stub and is never tried.
//! 3. The toolkit's install folders: `lib64`, `lib`, `targets/<arch>-linux/lib`
//!    (and, for libcuda, `compat`) under `CUDA_PATH`, `CUDA_HOME`,
//!    `/usr/local/cuda`, every `/usr/local/cuda-<version>` (newest first) and
//!    `/opt/cuda`.
//! 4. Python wheels (NVRTC only; no wheel ships libcuda):
//!    `nvidia/cu13/lib/libnvrtc.so.13` and `nvidia/cuda_nvrtc/lib/libnvrtc.so.12`
//!    under the site-packages folders found by *reading* the file system, in
//!    this order: every `PYTHONPATH` entry, `$VIRTUAL_ENV`, `$CONDA_PREFIX`,
//!    `~/.local`, every pyenv version (`$PYENV_ROOT` or `~/.pyenv`), then
//!    `/opt/conda`, `/usr/local` and `/usr`, each as
//!    `lib{,64}/python3*/{site,dist}-packages` (newest Python first). Only
//!    folders that hold an `nvidia` folder are searched. See
//!    [`site_packages`].
//! 5. The project's ignored `.deps` folder, where `scripts/nvrtc-env.sh`
//!    installs the wheels (`.deps/python/nvidia/cu13/lib`), as the last
//!    resort: see [`deps_folders`] for where it is looked for
//!    (`$CUDAKIT_DEPS_DIR`, beside or above the running executable, and the
//!    workspace cuda-sys was built in, so that `cargo run` from a clone finds
//!    it whatever `CARGO_TARGET_DIR` is). libcuda is never looked for there.
//! 6. Only when every candidate above failed: the site-packages folders that
//!    the `python3` on `PATH` reports (`site.getsitepackages()` and the user
//!    site), for layouts the scan does not know (a Python in a custom
//!    prefix, uv's managed Pythons). Folders already searched are not tried
//!    twice. This is the only step that starts a program.
//!
//! When NVRTC is opened from a folder the dynamic linker does not search
//! (any candidate given as a path), `libnvrtc-builtins.so.*` from the same
//! folder is opened first; without it every compile fails with
//! `NVRTC_ERROR_BUILTIN_OPERATION_FAILURE`.
//!
//! NCCL (optional) is searched the same way: `CUDAKIT_LIBNCCL`, the soname
//! `libnccl.so.2`, the toolkit folders, then pip's
//! `nvidia/nccl/lib/libnccl.so.2` under the same site-packages folders.
//!
//! cuBLAS (optional, for the matmul comparison) likewise: `CUDAKIT_LIBCUBLAS`,
//! the soname `libcublas.so.13`, the toolkit folders, then pip's
//! `nvidia/cu13/lib` and `nvidia/cublas/lib`.
//!
//! Libraries are opened once per process and never unloaded. Nothing here
//! panics: every failure is a [`LoadError`], which lists every candidate
//! tried and why it failed.

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
///
/// `Display` and `Error` are written by hand (cuda-sys depends on no
/// procedural macro, to build fast). Neither variant wraps another error:
/// the operating system's messages are kept as text in [`Attempt::reason`]
/// and `reason`, so [`source`](std::error::Error::source) is `None`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LoadError {
    /// No candidate could be opened.
    ///
    /// Displayed as `libcuda could not be loaded; tried N candidate(s):`
    /// followed by one indented `candidate: reason` line per attempt, then
    /// the hint.
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
    ///
    /// Displayed as ``libcuda at PATH: missing required symbol `SYMBOL`: REASON``.
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

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::NotFound {
                library,
                attempts,
                hint,
            } => {
                write!(
                    f,
                    "{library} could not be loaded; tried {} candidate(s):",
                    attempts.len()
                )?;
                for attempt in attempts {
                    write!(f, "\n  {attempt}")?;
                }
                f.write_str(hint)
            }
            LoadError::MissingSymbol {
                library,
                path,
                symbol,
                reason,
            } => write!(
                f,
                "{library} at {path}: missing required symbol `{symbol}`: {reason}"
            ),
        }
    }
}

impl std::error::Error for LoadError {}

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
    NvJitLink,
    Nccl,
    Cublas,
    CublasLt,
}

/// The toolkit's per-architecture library folder, under a toolkit root.
const TARGET_LIB: &str = if cfg!(target_arch = "aarch64") {
    "targets/sbsa-linux/lib"
} else {
    "targets/x86_64-linux/lib"
};

impl Which {
    pub(crate) fn library(self) -> &'static str {
        match self {
            Which::Cuda => "libcuda",
            Which::Nvrtc => "libnvrtc",
            Which::NvJitLink => "libnvJitLink",
            Which::Nccl => "libnccl",
            Which::Cublas => "libcublas",
            Which::CublasLt => "libcublasLt",
        }
    }

    /// The environment variable naming an explicit path.
    pub(crate) fn env_var(self) -> &'static str {
        match self {
            Which::Cuda => "CUDAKIT_LIBCUDA",
            Which::Nvrtc => "CUDAKIT_LIBNVRTC",
            Which::NvJitLink => "CUDAKIT_LIBNVJITLINK",
            Which::Nccl => "CUDAKIT_LIBNCCL",
            Which::Cublas => "CUDAKIT_LIBCUBLAS",
            Which::CublasLt => "CUDAKIT_LIBCUBLASLT",
        }
    }

    fn sonames(self) -> &'static [&'static str] {
        match self {
            Which::Cuda => &["libcuda.so.1"],
            Which::Nvrtc => &["libnvrtc.so.13", "libnvrtc.so.12"],
            Which::NvJitLink => &["libnvJitLink.so.13"],
            Which::Nccl => &["libnccl.so.2"],
            Which::Cublas => &["libcublas.so.13"],
            Which::CublasLt => &["libcublasLt.so.13"],
        }
    }

    /// Sub-folders of a toolkit root that may hold the library.
    fn toolkit_subfolders(self) -> &'static [&'static str] {
        match self {
            Which::Cuda => &["lib64", "lib", TARGET_LIB, "compat"],
            Which::Nvrtc => &["lib64", "lib", TARGET_LIB],
            Which::NvJitLink => &["lib64", "lib", TARGET_LIB],
            Which::Nccl => &["lib64", "lib", TARGET_LIB],
            Which::Cublas | Which::CublasLt => &["lib64", "lib", TARGET_LIB],
        }
    }

    /// (folder under site-packages, soname) of each wheel that ships the
    /// library; none for libcuda, which only the driver installs.
    fn wheel_files(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Which::Cuda => &[],
            Which::Nvrtc => &[
                ("nvidia/cu13/lib", "libnvrtc.so.13"),
                ("nvidia/cuda_nvrtc/lib", "libnvrtc.so.12"),
            ],
            Which::NvJitLink => &[
                ("nvidia/nvjitlink/lib", "libnvJitLink.so.13"),
                ("nvidia/cu13/lib", "libnvJitLink.so.13"),
            ],
            Which::Nccl => &[("nvidia/nccl/lib", "libnccl.so.2")],
            Which::Cublas => &[
                ("nvidia/cu13/lib", "libcublas.so.13"),
                ("nvidia/cublas/lib", "libcublas.so.13"),
            ],
            Which::CublasLt => &[
                ("nvidia/cu13/lib", "libcublasLt.so.13"),
                ("nvidia/cublas/lib", "libcublasLt.so.13"),
            ],
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
            Which::NvJitLink => {
                "\nhint: install nvJitLink with `python3 -m pip install nvidia-nvjitlink==13.0.88` \
                 (or the CUDA toolkit), or set CUDAKIT_LIBNVJITLINK to libnvJitLink.so.13's path"
            }
            Which::Nccl => {
                "\nhint: NCCL is optional (collectives only); install it with \
                 `python3 -m pip install nvidia-nccl-cu13` (or the system's libnccl2 package), \
                 or set CUDAKIT_LIBNCCL to libnccl.so.2's path"
            }
            Which::Cublas => {
                "\nhint: cuBLAS is optional (the matmul comparison only); install it with \
                 `python3 -m pip install nvidia-cublas` (or the CUDA toolkit), or set \
                 CUDAKIT_LIBCUBLAS to libcublas.so.13's path"
            }
            Which::CublasLt => {
                "\nhint: cuBLASLt is optional (the fp8 matmul comparison only); install it with \
                 `python3 -m pip install nvidia-cublas` (or the CUDA toolkit), or set \
                 CUDAKIT_LIBCUBLASLT to libcublasLt.so.13's path"
            }
        }
    }
}

/// What a search reads from its surroundings, so that the search order can
/// be computed, and tested, without the process's real environment.
pub(crate) struct Surroundings<'a> {
    /// An environment variable's value; `None` when it is unset.
    pub(crate) var: &'a dyn Fn(&str) -> Option<String>,
    /// The names of a folder's entries; empty when it cannot be read.
    pub(crate) entries: &'a dyn Fn(&Path) -> Vec<String>,
    /// The running executable's path, when known.
    pub(crate) exe: Option<PathBuf>,
    /// The workspace cuda-sys was built in, when known.
    pub(crate) build_workspace: Option<PathBuf>,
    /// Whether a `.deps` folder found on its own (not named by
    /// `CUDAKIT_DEPS_DIR`) may be searched: see [`trusted_folder`].
    pub(crate) trusted: &'a dyn Fn(&Path) -> bool,
}

impl Surroundings<'_> {
    /// A variable's value, with an empty one counted as unset.
    fn get(&self, name: &str) -> Option<String> {
        (self.var)(name).filter(|v| !v.is_empty())
    }

    /// The entries of `folder` whose names start with `prefix`, newest
    /// version first (`python3.13` before `python3.9`).
    fn versioned(&self, folder: &Path, prefix: &str) -> Vec<PathBuf> {
        let mut names: Vec<String> = (self.entries)(folder)
            .into_iter()
            .filter(|n| n.starts_with(prefix))
            .collect();
        names.sort_by(|a, b| version_key(b).cmp(&version_key(a)).then_with(|| a.cmp(b)));
        names.into_iter().map(|n| folder.join(n)).collect()
    }
}

/// The process's own surroundings: its environment and its file system.
fn process_surroundings<R>(f: impl FnOnce(&Surroundings<'_>) -> R) -> R {
    let var = |name: &str| env::var(name).ok();
    let entries = |folder: &Path| list_folder(folder);
    f(&Surroundings {
        var: &var,
        entries: &entries,
        exe: env::current_exe().ok(),
        build_workspace: build_workspace(),
        trusted: &trusted_folder,
    })
}

#[cfg(unix)]
extern "C" {
    /// The C library's `getuid` (always succeeds).
    fn getuid() -> u32;
}

/// Whether `deps` (a `.deps` folder found above the executable or in the
/// build workspace) may be searched for libraries and headers: it and the
/// folder holding it exist, belong to this user or to root, and are not
/// writable by group or others. A `.deps` in a shared folder (`/tmp`, a
/// world-writable parent of the executable) is never loaded from; name
/// such a folder with `CUDAKIT_DEPS_DIR` to use it anyway.
#[cfg(unix)]
fn trusted_folder(deps: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: getuid takes nothing and cannot fail.
    let me = unsafe { getuid() };
    let safe = |p: &Path| {
        p.metadata()
            .map(|m| m.is_dir() && (m.uid() == me || m.uid() == 0) && m.mode() & 0o022 == 0)
            .unwrap_or(false)
    };
    safe(deps) && deps.parent().is_some_and(safe)
}

#[cfg(not(unix))]
fn trusted_folder(_deps: &Path) -> bool {
    false
}

/// The workspace this cuda-sys was compiled in: two folders above its
/// manifest (`<workspace>/crates/cuda-sys`), as recorded at build time. In a
/// clone that is the clone; for a cuda-sys from a registry or a git
/// dependency it is a folder of cargo's cache, which holds no `.deps`.
fn build_workspace() -> Option<PathBuf> {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .map(Path::to_path_buf)
}

/// The names of a folder's entries; empty when it cannot be read.
fn list_folder(folder: &Path) -> Vec<String> {
    match std::fs::read_dir(folder) {
        Ok(read) => read
            .filter_map(|entry| entry.ok())
            .filter_map(|entry| entry.file_name().into_string().ok())
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// The numbers in a name, in order (`"python3.12"` → `[3, 12]`,
/// `"cuda-12.4"` → `[12, 4]`), for newest-first sorting.
fn version_key(name: &str) -> Vec<u64> {
    name.split(|c: char| !c.is_ascii_digit())
        .filter(|part| !part.is_empty())
        .map(|part| part.parse().unwrap_or(u64::MAX))
        .collect()
}

/// A list that keeps the first occurrence of each item.
struct Unique<T>(Vec<T>);

impl<T> Default for Unique<T> {
    fn default() -> Self {
        Unique(Vec::new())
    }
}

impl<T: PartialEq> Unique<T> {
    fn push(&mut self, item: T) {
        if !self.0.contains(&item) {
            self.0.push(item);
        }
    }
}

/// Every candidate for `which`, in search order, given the surroundings:
/// the explicit path alone when one is set; else the sonames, the toolkit
/// folders, then the wheel folders found by reading the file system, then the
/// wheels in the project's `.deps` ([`deps_folders`]). The
/// `python3` fallback is not part of it (see [`open`]).
pub(crate) fn candidates(which: Which, s: &Surroundings<'_>) -> Vec<String> {
    if let Some(explicit) = s.get(which.env_var()) {
        return vec![explicit];
    }
    let mut out = Unique::default();
    for soname in which.sonames() {
        out.push((*soname).to_owned());
    }
    for folder in toolkit_folders(which, s) {
        for soname in which.sonames() {
            out.push(folder.join(soname).to_string_lossy().into_owned());
        }
    }
    if !which.wheel_files().is_empty() {
        for root in scanned_site_packages(s)
            .into_iter()
            .chain(deps_site_packages(s))
        {
            for path in wheel_candidates(which, &root) {
                out.push(path);
            }
        }
    }
    out.0
}

/// The toolkit roots, in search order: `CUDA_PATH`, `CUDA_HOME`,
/// `/usr/local/cuda`, every `/usr/local/cuda-<version>` (newest first),
/// `/opt/cuda`.
fn toolkit_roots_in(s: &Surroundings<'_>) -> Vec<PathBuf> {
    let mut roots = Unique::default();
    for var in ["CUDA_PATH", "CUDA_HOME"] {
        if let Some(root) = s.get(var) {
            roots.push(PathBuf::from(root));
        }
    }
    roots.push(PathBuf::from("/usr/local/cuda"));
    for root in s.versioned(Path::new("/usr/local"), "cuda-") {
        roots.push(root);
    }
    roots.push(PathBuf::from("/opt/cuda"));
    roots.0
}

/// The CUDA toolkit roots the loader searches, in its order: `CUDA_PATH`,
/// `CUDA_HOME`, `/usr/local/cuda`, every `/usr/local/cuda-<version>`
/// (newest first), `/opt/cuda`. Whether each exists is not checked.
pub fn toolkit_roots() -> Vec<PathBuf> {
    process_surroundings(toolkit_roots_in)
}

/// The project `.deps` folders that may exist, in search order (see
/// [`deps_folders`]); not checked.
fn deps_candidates(s: &Surroundings<'_>) -> Vec<PathBuf> {
    let mut out = Unique::default();
    if let Some(deps) = s.get("CUDAKIT_DEPS_DIR") {
        out.push(PathBuf::from(deps));
    }
    if let Some(exe) = &s.exe {
        for folder in exe.ancestors().skip(1) {
            let deps = folder.join(".deps");
            if !folder.as_os_str().is_empty() && folder.parent().is_some() && (s.trusted)(&deps) {
                out.push(deps);
            }
        }
    }
    if let Some(workspace) = &s.build_workspace {
        let deps = workspace.join(".deps");
        if (s.trusted)(&deps) {
            out.push(deps);
        }
    }
    out.0
}

/// The `python` folders of the project `.deps` folders that hold NVIDIA's
/// wheels (`.deps/python/nvidia`), in search order.
fn deps_site_packages(s: &Surroundings<'_>) -> Vec<PathBuf> {
    deps_candidates(s)
        .into_iter()
        .map(|deps| deps.join("python"))
        .filter(|root| has_nvidia(s, root))
        .collect()
}

/// The project's ignored dependency folders (`.deps`) that exist, in the
/// loader's order: `$CUDAKIT_DEPS_DIR`; `.deps` in each folder above the
/// running executable, nearest first (`<clone>/target/release/cudakit`
/// finds `<clone>/.deps`, and so does a bundle carried with a `.deps`
/// beside it); then `.deps` in the workspace this cuda-sys was compiled in
/// (recorded at build time, so that `cargo run` from a clone finds it also
/// when `CARGO_TARGET_DIR` points elsewhere). `scripts/nvrtc-env.sh`
/// installs NVIDIA's wheels into `.deps/python`; the loader searches their
/// `.deps/python/nvidia/...` folders after every other folder it scans.
pub fn deps_folders() -> Vec<PathBuf> {
    process_surroundings(deps_candidates)
        .into_iter()
        .filter(|d| d.is_dir())
        .collect()
}

/// The toolkit folders that may hold `which`, in search order.
fn toolkit_folders(which: Which, s: &Surroundings<'_>) -> Vec<PathBuf> {
    let roots = toolkit_roots_in(s);
    let mut folders = Unique::default();
    for root in &roots {
        for sub in which.toolkit_subfolders() {
            folders.push(root.join(sub));
        }
    }
    folders.0
}

/// The wheel files of `which` under one site-packages folder.
fn wheel_candidates(which: Which, root: &Path) -> Vec<String> {
    which
        .wheel_files()
        .iter()
        .map(|(folder, soname)| {
            root.join(folder)
                .join(soname)
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

/// Every site-packages folder found by reading the file system, in search
/// order, whether or not it holds NVIDIA's wheels.
fn all_site_packages(s: &Surroundings<'_>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    if let Some(path) = s.get("PYTHONPATH") {
        out.extend(env::split_paths(&path).filter(|p| !p.as_os_str().is_empty()));
    }
    // Installation prefixes, each holding lib{,64}/python3*/{site,dist}-packages.
    let mut prefixes: Vec<PathBuf> = Vec::new();
    for var in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
        if let Some(prefix) = s.get(var) {
            prefixes.push(PathBuf::from(prefix));
        }
    }
    let home = s.get("HOME").map(PathBuf::from);
    if let Some(home) = &home {
        prefixes.push(home.join(".local"));
    }
    let pyenv = s
        .get("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".pyenv")));
    if let Some(pyenv) = pyenv {
        prefixes.extend(s.versioned(&pyenv.join("versions"), ""));
    }
    for prefix in ["/opt/conda", "/usr/local", "/usr"] {
        prefixes.push(PathBuf::from(prefix));
    }
    for prefix in prefixes {
        for lib in ["lib", "lib64"] {
            for python in s.versioned(&prefix.join(lib), "python3") {
                for packages in ["site-packages", "dist-packages"] {
                    out.push(python.join(packages));
                }
            }
        }
    }
    let mut unique = Unique::default();
    for path in out {
        unique.push(path);
    }
    unique.0
}

/// The site-packages folders found by reading the file system that hold an
/// `nvidia` folder, in search order.
fn scanned_site_packages(s: &Surroundings<'_>) -> Vec<PathBuf> {
    all_site_packages(s)
        .into_iter()
        .filter(|root| has_nvidia(s, root))
        .collect()
}

fn has_nvidia(s: &Surroundings<'_>, root: &Path) -> bool {
    (s.entries)(root).iter().any(|name| name == "nvidia")
}

/// The site-packages folders (every `PYTHONPATH` entry, `$VIRTUAL_ENV`,
/// `$CONDA_PREFIX`, `~/.local`, pyenv versions, `/opt/conda`, `/usr/local`,
/// `/usr`) that hold an `nvidia` folder, where NVIDIA's Python wheels put
/// their libraries, in the loader's search order. Found by reading the file
/// system; no program is started.
pub fn site_packages() -> Vec<PathBuf> {
    process_surroundings(scanned_site_packages)
}

/// The wheel candidates under the site-packages folders that `python3`
/// reports, less every candidate already tried.
fn python_candidates(
    which: Which,
    s: &Surroundings<'_>,
    reported: Vec<PathBuf>,
    tried: &[Attempt],
) -> Vec<String> {
    let mut out = Unique::default();
    for root in reported {
        if !has_nvidia(s, &root) {
            continue;
        }
        for path in wheel_candidates(which, &root) {
            if !tried.iter().any(|a| a.candidate == path) {
                out.push(path);
            }
        }
    }
    out.0
}

/// The site-packages folders of the `python3` on `PATH`; empty when there is
/// no python3 or it fails. Run only after every other candidate failed.
fn ask_python() -> Vec<PathBuf> {
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

/// Opens the first candidate that loads, by the search order of this
/// module. The returned library is leaked on purpose by the callers:
/// cuda-sys never unloads.
pub(crate) fn open(which: Which) -> Result<(Library, Loaded), LoadError> {
    process_surroundings(|s| {
        let list = candidates(which, s);
        let explicit = s.get(which.env_var()).is_some();
        open_first(
            which,
            list,
            |tried| {
                if explicit || which.wheel_files().is_empty() {
                    Vec::new()
                } else {
                    python_candidates(which, s, ask_python(), tried)
                }
            },
            |candidate| open_candidate(which, candidate),
        )
    })
}

/// Opens the first of `candidates` that loads; no fallback.
pub(crate) fn open_from(
    which: Which,
    candidates: Vec<String>,
) -> Result<(Library, Loaded), LoadError> {
    open_first(
        which,
        candidates,
        |_| Vec::new(),
        |candidate| open_candidate(which, candidate),
    )
}

/// Tries `candidates` in order with `open_one`; when every one fails, asks
/// `fallback` (given the attempts so far) for more, once, and tries those.
/// `open_one` returns the opened library and the builtins preloaded beside
/// it, or why it failed.
fn open_first<L>(
    which: Which,
    candidates: Vec<String>,
    fallback: impl FnOnce(&[Attempt]) -> Vec<String>,
    mut open_one: impl FnMut(&str) -> Result<(L, Option<String>), String>,
) -> Result<(L, Loaded), LoadError> {
    let mut attempts: Vec<Attempt> = Vec::new();
    let mut fallback = Some(fallback);
    let mut queue = candidates;
    loop {
        for candidate in std::mem::take(&mut queue) {
            match open_one(&candidate) {
                Ok((library, preloaded)) => {
                    return Ok((
                        library,
                        Loaded {
                            candidate,
                            skipped: attempts,
                            preloaded,
                        },
                    ))
                }
                Err(reason) => attempts.push(Attempt { candidate, reason }),
            }
        }
        match fallback.take() {
            Some(more) => queue = more(&attempts),
            None => break,
        }
    }
    Err(LoadError::NotFound {
        library: which.library(),
        attempts,
        hint: which.hint(),
    })
}

/// Opens one candidate (a soname or a path), preloading NVRTC's builtins
/// beside a path; on failure, the reason.
fn open_candidate(which: Which, candidate: &str) -> Result<(Library, Option<String>), String> {
    let is_path = candidate.contains('/');
    if is_path && !Path::new(candidate).exists() {
        return Err("no such file".to_owned());
    }
    let mut preloaded = None;
    if which == Which::Nvrtc && is_path {
        preloaded = preload_builtins(Path::new(candidate));
    }
    // SAFETY: opening a shared library runs its initialisers. Every
    // candidate is one of NVIDIA's libraries (libcuda, libnvrtc,
    // libnvJitLink, libnccl, libcublas) by soname or by its file name in a
    // toolkit or wheel folder, whose initialisers are benign; a user who
    // points CUDAKIT_LIB* at another library accepts that it runs.
    match unsafe { Library::new(candidate) } {
        Ok(library) => Ok((library, preloaded)),
        Err(err) => Err(dl_reason(&err)),
    }
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
    use std::cell::Cell;
    use std::collections::BTreeMap;

    use super::*;

    /// Surroundings with the given variables and a file system of the given
    /// folders (every folder listed exists, with its parents).
    struct Fake {
        vars: Vec<(String, String)>,
        folders: BTreeMap<PathBuf, Vec<String>>,
        listed: Cell<usize>,
        exe: Option<PathBuf>,
        build_workspace: Option<PathBuf>,
        /// Folders whose `.deps` the fake trust check refuses.
        untrusted: Vec<PathBuf>,
    }

    impl Fake {
        fn new(vars: &[(&str, &str)], folders: &[&str]) -> Self {
            let mut tree: BTreeMap<PathBuf, Vec<String>> = BTreeMap::new();
            for folder in folders {
                let mut path = PathBuf::from(folder);
                while let (Some(parent), Some(name)) = (path.parent(), path.file_name()) {
                    let name = name.to_string_lossy().into_owned();
                    let entries = tree.entry(parent.to_path_buf()).or_default();
                    if !entries.contains(&name) {
                        entries.push(name);
                    }
                    path = parent.to_path_buf();
                }
            }
            Fake {
                vars: vars
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                folders: tree,
                listed: Cell::new(0),
                exe: None,
                build_workspace: None,
                untrusted: Vec::new(),
            }
        }

        fn with<R>(&self, f: impl FnOnce(&Surroundings<'_>) -> R) -> R {
            let var = |name: &str| {
                self.vars
                    .iter()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.clone())
            };
            let entries = |folder: &Path| {
                self.listed.set(self.listed.get() + 1);
                self.folders.get(folder).cloned().unwrap_or_default()
            };
            let trusted = |deps: &Path| !self.untrusted.iter().any(|u| deps.starts_with(u));
            f(&Surroundings {
                var: &var,
                entries: &entries,
                exe: self.exe.clone(),
                build_workspace: self.build_workspace.clone(),
                trusted: &trusted,
            })
        }

        fn candidates(&self, which: Which) -> Vec<String> {
            self.with(|s| candidates(which, s))
        }
    }

    fn position(list: &[String], wanted: &str) -> usize {
        list.iter()
            .position(|c| c == wanted)
            .unwrap_or_else(|| panic!("{wanted} is not a candidate: {list:#?}"))
    }

    #[test]
    fn explicit_path_is_the_only_candidate() {
        let fake = Fake::new(
            &[
                ("CUDAKIT_LIBCUDA", "/opt/x/libcuda.so.1"),
                ("CUDAKIT_LIBNVRTC", "/opt/x/libnvrtc.so.13"),
                ("PYTHONPATH", "/deps/py"),
            ],
            &["/deps/py/nvidia/cu13/lib"],
        );
        assert_eq!(fake.candidates(Which::Cuda), vec!["/opt/x/libcuda.so.1"]);
        assert_eq!(fake.candidates(Which::Nvrtc), vec!["/opt/x/libnvrtc.so.13"]);
    }

    #[test]
    fn an_empty_override_counts_as_unset() {
        let fake = Fake::new(&[("CUDAKIT_LIBCUDA", "")], &[]);
        assert_eq!(fake.candidates(Which::Cuda)[0], "libcuda.so.1");
    }

    #[test]
    fn sonames_come_first_and_the_stub_never_appears() {
        let fake = Fake::new(&[("CUDA_PATH", "/opt/cuda-x")], &[]);
        let list = fake.candidates(Which::Cuda);
        assert_eq!(list[0], "libcuda.so.1");
        assert_eq!(list[1], "/opt/cuda-x/lib64/libcuda.so.1");
        assert!(list.contains(&"/usr/local/cuda/lib64/libcuda.so.1".to_owned()));
        assert!(list.contains(&"/opt/cuda-x/compat/libcuda.so.1".to_owned()));
        assert!(list.iter().all(|c| !c.ends_with("libcuda.so")));
        assert!(list.iter().all(|c| !c.contains("stubs")));
    }

    /// The order of issue 10: sonames, then toolkit folders, then wheels;
    /// versioned toolkits and Pythons newest first.
    #[test]
    fn nvrtc_order_is_sonames_then_toolkits_then_wheels() {
        let fake = Fake::new(
            &[("PYTHONPATH", "/deps/py"), ("CUDA_HOME", "/opt/ch")],
            &[
                "/usr/local/cuda-12.4",
                "/usr/local/cuda-13.0",
                "/usr/local/cuda-12.10",
                "/deps/py/nvidia/cu13/lib",
                "/usr/lib/python3.9/site-packages/nvidia",
                "/usr/lib/python3.12/site-packages/nvidia",
            ],
        );
        let list = fake.candidates(Which::Nvrtc);
        assert_eq!(&list[..2], &["libnvrtc.so.13", "libnvrtc.so.12"]);
        let toolkit = [
            "/opt/ch/lib64/libnvrtc.so.13",
            "/usr/local/cuda/lib64/libnvrtc.so.13",
            "/usr/local/cuda-13.0/lib64/libnvrtc.so.13",
            "/usr/local/cuda-12.10/lib64/libnvrtc.so.13",
            "/usr/local/cuda-12.4/lib64/libnvrtc.so.13",
            "/opt/cuda/lib64/libnvrtc.so.13",
        ];
        let wheels = [
            "/deps/py/nvidia/cu13/lib/libnvrtc.so.13",
            "/deps/py/nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
            "/usr/lib/python3.12/site-packages/nvidia/cu13/lib/libnvrtc.so.13",
            "/usr/lib/python3.9/site-packages/nvidia/cu13/lib/libnvrtc.so.13",
        ];
        let order: Vec<usize> = toolkit
            .iter()
            .chain(&wheels)
            .map(|c| position(&list, c))
            .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{list:#?}");
        assert!(order[0] > 1);
        // NVRTC is never in a toolkit's compat folder.
        assert!(list.iter().all(|c| !c.contains("/compat/")), "{list:#?}");
    }

    /// Every usual site-packages location is found by reading folders, in
    /// the documented order; folders without an `nvidia` folder are skipped.
    #[test]
    fn the_wheel_scan_reads_the_usual_site_packages_folders() {
        let fake = Fake::new(
            &[
                ("PYTHONPATH", "/pp/a:/pp/empty:/pp/b"),
                ("VIRTUAL_ENV", "/venv"),
                ("CONDA_PREFIX", "/conda"),
                ("HOME", "/home/u"),
            ],
            &[
                "/pp/a/nvidia",
                "/pp/empty",
                "/pp/b/nvidia",
                "/venv/lib/python3.11/site-packages/nvidia",
                "/conda/lib/python3.10/site-packages/nvidia",
                "/home/u/.local/lib/python3.12/site-packages/nvidia",
                "/home/u/.pyenv/versions/3.9.18/lib/python3.9/site-packages/nvidia",
                "/home/u/.pyenv/versions/3.13.1/lib/python3.13/site-packages/nvidia",
                "/opt/conda/lib/python3.12/site-packages/nvidia",
                "/usr/local/lib/python3.12/dist-packages/nvidia",
                "/usr/local/lib64/python3.12/site-packages/nvidia",
                "/usr/lib/python3/dist-packages/nvidia",
                "/usr/lib/python3.12/site-packages/requests",
            ],
        );
        let roots: Vec<String> = fake.with(|s| {
            scanned_site_packages(s)
                .into_iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect()
        });
        assert_eq!(
            roots,
            [
                "/pp/a",
                "/pp/b",
                "/venv/lib/python3.11/site-packages",
                "/conda/lib/python3.10/site-packages",
                "/home/u/.local/lib/python3.12/site-packages",
                "/home/u/.pyenv/versions/3.13.1/lib/python3.13/site-packages",
                "/home/u/.pyenv/versions/3.9.18/lib/python3.9/site-packages",
                "/opt/conda/lib/python3.12/site-packages",
                "/usr/local/lib/python3.12/dist-packages",
                "/usr/local/lib64/python3.12/site-packages",
                "/usr/lib/python3/dist-packages",
            ]
        );
        let list = fake.candidates(Which::Nvrtc);
        assert!(list.contains(
            &"/venv/lib/python3.11/site-packages/nvidia/cu13/lib/libnvrtc.so.13".to_owned()
        ));
        assert!(list.iter().all(|c| !c.contains("/pp/empty")));
        assert!(list.iter().all(|c| !c.contains("requests")));
    }

    #[test]
    fn pyenv_root_overrides_the_home_folder() {
        let fake = Fake::new(
            &[("HOME", "/home/u"), ("PYENV_ROOT", "/pyenv")],
            &[
                "/pyenv/versions/3.12.0/lib/python3.12/site-packages/nvidia",
                "/home/u/.pyenv/versions/3.11.0/lib/python3.11/site-packages/nvidia",
            ],
        );
        let list = fake.candidates(Which::Nvrtc);
        assert!(list
            .iter()
            .any(|c| c.starts_with("/pyenv/versions/3.12.0/")));
        assert!(list.iter().all(|c| !c.contains("/home/u/.pyenv")));
    }

    /// Issue 26: on a machine with only the driver, `scripts/nvrtc-env.sh`
    /// installs NVRTC into the clone's `.deps/python`; the loader finds it
    /// there last, from `$CUDAKIT_DEPS_DIR`, from above the executable
    /// (`<clone>/target/release/cudakit`), and from the workspace cuda-sys
    /// was built in (`cargo run` with a `CARGO_TARGET_DIR` elsewhere).
    #[test]
    fn the_projects_deps_folder_is_the_last_resort() {
        let mut fake = Fake::new(
            &[
                ("PYTHONPATH", "/deps/py"),
                ("CUDAKIT_DEPS_DIR", "/env/.deps"),
            ],
            &[
                "/deps/py/nvidia/cu13/lib",
                "/env/.deps/python/nvidia/cu13/lib",
                "/clone/.deps/python/nvidia/cu13/lib",
                "/built/.deps/python/nvidia/cu13/lib",
                "/nowheels/.deps/python",
            ],
        );
        fake.exe = Some(PathBuf::from("/clone/target/release/cudakit"));
        fake.build_workspace = Some(PathBuf::from("/built"));
        for which in [Which::Nvrtc, Which::NvJitLink] {
            let list = fake.candidates(which);
            let soname = which.sonames()[0];
            let at = |root: &str| format!("{root}/nvidia/cu13/lib/{soname}");
            let order = [
                position(&list, &at("/deps/py")),
                position(&list, &at("/env/.deps/python")),
                position(&list, &at("/clone/.deps/python")),
                position(&list, &at("/built/.deps/python")),
            ];
            assert!(order.windows(2).all(|w| w[0] < w[1]), "{list:#?}");
            // Nothing after the build workspace's .deps but its own wheels.
            assert!(
                list[order[3]..].iter().all(|c| c.starts_with("/built/")),
                "{list:#?}"
            );
        }
        // Folders above the executable, nearest first; never `/.deps`.
        let deps = fake.with(deps_candidates);
        assert_eq!(
            deps,
            [
                "/env/.deps",
                "/clone/target/release/.deps",
                "/clone/target/.deps",
                "/clone/.deps",
                "/built/.deps",
            ]
            .map(PathBuf::from)
        );
        // No wheels under .deps/python: not searched.
        fake.build_workspace = Some(PathBuf::from("/nowheels"));
        let list = fake.candidates(Which::Nvrtc);
        assert!(
            list.iter().all(|c| !c.starts_with("/nowheels")),
            "{list:#?}"
        );
        // libcuda is never looked for in .deps.
        assert!(fake
            .candidates(Which::Cuda)
            .iter()
            .all(|c| !c.contains(".deps")));
    }

    /// The real file system: a fake libnvrtc in a `.deps` above a fake
    /// executable is a candidate, and `deps_folders` lists only folders
    /// that exist.
    #[test]
    fn a_real_deps_folder_above_the_executable_is_searched() {
        let root = env::temp_dir().join(format!("cuda-sys-deps-{}", std::process::id()));
        let lib = root.join(".deps/python/nvidia/cu13/lib");
        std::fs::create_dir_all(&lib).unwrap();
        std::fs::create_dir_all(root.join("target/release")).unwrap();
        std::fs::write(lib.join("libnvrtc.so.13"), b"not a shared library").unwrap();
        let var = |_: &str| None;
        let entries = |folder: &Path| list_folder(folder);
        let s = Surroundings {
            var: &var,
            entries: &entries,
            exe: Some(root.join("target/release/cudakit")),
            build_workspace: None,
            trusted: &trusted_folder,
        };
        let wanted = lib.join("libnvrtc.so.13").to_string_lossy().into_owned();
        assert!(candidates(Which::Nvrtc, &s).contains(&wanted));
        // The same folder, writable by everyone: never searched.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(
            !candidates(Which::Nvrtc, &s).contains(&wanted),
            "a .deps in a world-writable folder was searched"
        );
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(root.join(".deps"), std::fs::Permissions::from_mode(0o777))
            .unwrap();
        assert!(
            !candidates(Which::Nvrtc, &s).contains(&wanted),
            "a world-writable .deps was searched"
        );
        std::fs::remove_dir_all(&root).unwrap();
        assert!(deps_folders().iter().all(|d| d.is_dir()));
    }

    #[test]
    fn the_libcuda_search_reads_no_python_folders() {
        let fake = Fake::new(
            &[("PYTHONPATH", "/deps/py"), ("HOME", "/home/u")],
            &["/deps/py/nvidia/cu13/lib"],
        );
        let list = fake.candidates(Which::Cuda);
        assert!(list.iter().all(|c| !c.contains("nvidia")), "{list:#?}");
        // Only /usr/local is listed (for versioned toolkits).
        assert_eq!(fake.listed.get(), 1);
    }

    #[test]
    fn versions_sort_newest_first() {
        let fake = Fake::new(
            &[],
            &[
                "/p/python3.9",
                "/p/python3.13",
                "/p/python3",
                "/p/python3.10",
            ],
        );
        let names: Vec<String> = fake.with(|s| {
            s.versioned(Path::new("/p"), "python3")
                .into_iter()
                .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
                .collect()
        });
        assert_eq!(names, ["python3.13", "python3.10", "python3.9", "python3"]);
    }

    /// `python3` is asked only after every scanned candidate failed, and
    /// what it adds is tried after them, without repeating any.
    #[test]
    fn python_is_asked_only_when_the_scan_found_nothing() {
        let asked = Cell::new(false);
        let found = open_first(
            Which::Nvrtc,
            vec!["a".into(), "b".into()],
            |_| {
                asked.set(true);
                vec!["c".into()]
            },
            |c| {
                if c == "b" {
                    Ok(((), None))
                } else {
                    Err(format!("{c} fails"))
                }
            },
        );
        let ((), loaded) = found.unwrap();
        assert_eq!(loaded.candidate, "b");
        assert_eq!(loaded.skipped.len(), 1);
        assert!(!asked.get());

        let found = open_first(
            Which::Nvrtc,
            vec!["a".into(), "b".into()],
            |tried| {
                asked.set(true);
                assert_eq!(tried.len(), 2);
                vec!["c".into()]
            },
            |c| {
                if c == "c" {
                    Ok(((), Some("builtins".into())))
                } else {
                    Err(format!("{c} fails"))
                }
            },
        );
        let ((), loaded) = found.unwrap();
        assert!(asked.get());
        assert_eq!(loaded.candidate, "c");
        assert_eq!(loaded.preloaded.as_deref(), Some("builtins"));
        let skipped: Vec<&str> = loaded
            .skipped
            .iter()
            .map(|a| a.candidate.as_str())
            .collect();
        assert_eq!(skipped, ["a", "b"]);
    }

    #[test]
    fn python_candidates_skip_what_was_tried_and_folders_without_wheels() {
        let fake = Fake::new(&[], &["/custom/site/nvidia", "/scanned/nvidia", "/bare"]);
        let tried = vec![Attempt {
            candidate: "/scanned/nvidia/cu13/lib/libnvrtc.so.13".into(),
            reason: "no such file".into(),
        }];
        let list = fake.with(|s| {
            python_candidates(
                Which::Nvrtc,
                s,
                vec!["/scanned".into(), "/custom/site".into(), "/bare".into()],
                &tried,
            )
        });
        assert_eq!(
            list,
            [
                "/scanned/nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
                "/custom/site/nvidia/cu13/lib/libnvrtc.so.13",
                "/custom/site/nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
            ]
        );
    }

    /// The scan against a real folder tree: a wheel in a virtual
    /// environment is found, and its (fake) library is tried, not skipped.
    #[test]
    fn the_scan_finds_a_wheel_in_a_real_virtual_environment() {
        let root = env::temp_dir().join(format!("cuda-sys-loader-{}", std::process::id()));
        let lib = root.join("venv/lib/python3.11/site-packages/nvidia/cu13/lib");
        std::fs::create_dir_all(&lib).unwrap();
        let fake_nvrtc = lib.join("libnvrtc.so.13");
        std::fs::write(&fake_nvrtc, b"not a shared library").unwrap();
        let venv = root.join("venv").to_string_lossy().into_owned();
        let var = |name: &str| match name {
            "VIRTUAL_ENV" => Some(venv.clone()),
            _ => None,
        };
        let entries = |folder: &Path| list_folder(folder);
        let s = Surroundings {
            var: &var,
            entries: &entries,
            exe: None,
            build_workspace: None,
            trusted: &|_: &Path| true,
        };
        let list = candidates(Which::Nvrtc, &s);
        let wanted = fake_nvrtc.to_string_lossy().into_owned();
        assert!(list.contains(&wanted), "{list:#?}");
        let err = open_first(
            Which::Nvrtc,
            vec![wanted.clone()],
            |_| Vec::new(),
            |c| open_candidate(Which::Nvrtc, c),
        )
        .unwrap_err();
        let LoadError::NotFound { attempts, .. } = &err else {
            panic!("expected NotFound, got {err:?}");
        };
        assert_eq!(attempts[0].candidate, wanted);
        assert_ne!(attempts[0].reason, "no such file");
        std::fs::remove_dir_all(&root).unwrap();
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

    /// The text `thiserror` produced before cuda-sys dropped it, byte for byte.
    #[test]
    fn load_errors_display_as_before() {
        let not_found = LoadError::NotFound {
            library: "libcuda",
            attempts: vec![
                Attempt {
                    candidate: "libcuda.so.1".into(),
                    reason: "libcuda.so.1: cannot open shared object file".into(),
                },
                Attempt {
                    candidate: "/usr/local/cuda/lib64/libcuda.so.1".into(),
                    reason: "no such file".into(),
                },
            ],
            hint: "\nhint: install the driver",
        };
        assert_eq!(
            not_found.to_string(),
            "libcuda could not be loaded; tried 2 candidate(s):\n  \
             libcuda.so.1: libcuda.so.1: cannot open shared object file\n  \
             /usr/local/cuda/lib64/libcuda.so.1: no such file\n\
             hint: install the driver"
        );
        let missing = LoadError::MissingSymbol {
            library: "libnvrtc",
            path: "/x/libnvrtc.so.13".into(),
            symbol: "nvrtcVersion",
            reason: "undefined symbol: nvrtcVersion".into(),
        };
        assert_eq!(
            missing.to_string(),
            "libnvrtc at /x/libnvrtc.so.13: missing required symbol `nvrtcVersion`: \
             undefined symbol: nvrtcVersion"
        );
        let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(missing);
        assert!(boxed.source().is_none());
    }
}
