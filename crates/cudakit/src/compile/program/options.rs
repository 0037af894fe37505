//! The compile's targets and options: [`Arch`], [`Output`], [`CppStd`], and
//! the option list NVRTC is given.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use crate::compile::c_string;
use crate::compile::headers::CudaHeaders;
use crate::error::{Error, Result};

/// A target architecture for NVRTC (`-arch=`).
///
/// The number is the compute capability as NVRTC writes it: `90` for 9.0,
/// `121` for 12.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Arch {
    /// `sm_XY`: code for compute capability X.Y, which also runs on later
    /// devices of the same major version (CUBIN) or, as PTX, on any later
    /// device.
    Sm(u32),
    /// `sm_XYa`: architecture-specific features (e.g. `wgmma` on `sm_90a`);
    /// runs only on exactly X.Y.
    SmA(u32),
    /// `sm_XYf`: family-specific features (CUDA 12.9 and later); runs on
    /// X.Y and later devices of the same family.
    SmF(u32),
}

impl Arch {
    /// The compute capability number (`90` for `sm_90a`).
    pub fn number(self) -> u32 {
        match self {
            Arch::Sm(n) | Arch::SmA(n) | Arch::SmF(n) => n,
        }
    }

    fn suffix(self) -> &'static str {
        match self {
            Arch::Sm(_) => "",
            Arch::SmA(_) => "a",
            Arch::SmF(_) => "f",
        }
    }

    /// The real architecture's name, `sm_90a`.
    pub fn sm_name(self) -> String {
        format!("sm_{}{}", self.number(), self.suffix())
    }

    /// The virtual architecture's name, `compute_90a`.
    pub fn compute_name(self) -> String {
        format!("compute_{}{}", self.number(), self.suffix())
    }

    /// The compute capability as (major, minor): (9, 0) for `sm_90`.
    pub fn compute_capability(self) -> (u32, u32) {
        (self.number() / 10, self.number() % 10)
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sm_{}{}", self.number(), self.suffix())
    }
}

impl FromStr for Arch {
    type Err = Error;

    /// Parses `sm_90`, `sm_90a`, `sm_100f`, `compute_90` (the same target
    /// as `sm_90`) or a bare `90`.
    fn from_str(s: &str) -> Result<Arch> {
        let bad = || {
            Error::InvalidArgument(format!(
                "{s:?} is not an architecture (expected sm_XY, sm_XYa, sm_XYf or XY, e.g. sm_90a)"
            ))
        };
        let rest = s
            .strip_prefix("sm_")
            .or_else(|| s.strip_prefix("compute_"))
            .unwrap_or(s);
        let (digits, make): (&str, fn(u32) -> Arch) = if let Some(d) = rest.strip_suffix('a') {
            (d, Arch::SmA)
        } else if let Some(d) = rest.strip_suffix('f') {
            (d, Arch::SmF)
        } else {
            (rest, Arch::Sm)
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.len() > 4 {
            return Err(bad());
        }
        digits.parse::<u32>().map(make).map_err(|_| bad())
    }
}

/// What a compile produces. Several may be asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Output {
    /// Binary code for one real architecture (`-arch=sm_XY`); loads without
    /// JIT compilation.
    Cubin,
    /// PTX (`-arch=compute_XY` when no CUBIN is asked for); the driver
    /// JIT-compiles it on load, also for later architectures.
    Ptx,
    /// LTO-IR for link-time optimization (`-dlto`, which implies
    /// `-rdc=true`), to be linked, never loaded directly.
    LtoIr,
}

impl Output {
    /// The output's name in cache keys and messages.
    pub(super) fn tag(self) -> &'static str {
        match self {
            Output::Cubin => "cubin",
            Output::Ptx => "ptx",
            Output::LtoIr => "lto-ir",
        }
    }
}

/// The C++ dialect (`-std=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum CppStd {
    /// `-std=c++03`.
    Cpp03,
    /// `-std=c++11`.
    Cpp11,
    /// `-std=c++14`.
    Cpp14,
    /// `-std=c++17` (NVRTC 13's default).
    Cpp17,
    /// `-std=c++20`.
    Cpp20,
}

impl CppStd {
    /// The option.
    fn flag(self) -> &'static str {
        match self {
            CppStd::Cpp03 => "-std=c++03",
            CppStd::Cpp11 => "-std=c++11",
            CppStd::Cpp14 => "-std=c++14",
            CppStd::Cpp17 => "-std=c++17",
            CppStd::Cpp20 => "-std=c++20",
        }
    }
}

/// The options a [`Program`](super::Program) sets, each mapping to one
/// NVRTC option (see the setters).
#[derive(Debug, Clone, Default)]
pub(super) struct Options {
    pub(super) std: Option<CppStd>,
    pub(super) fast_math: Option<bool>,
    pub(super) ftz: Option<bool>,
    pub(super) prec_div: Option<bool>,
    pub(super) prec_sqrt: Option<bool>,
    pub(super) fmad: Option<bool>,
    pub(super) lineinfo: bool,
    pub(super) default_device: bool,
    pub(super) device_debug: bool,
    pub(super) max_registers: Option<u32>,
    pub(super) rdc: Option<bool>,
    pub(super) defines: Vec<(String, Option<String>)>,
    pub(super) include_paths: Vec<PathBuf>,
    /// CUDA's headers, when asked for: found, or why not (reported by the
    /// compile).
    pub(super) cuda_headers: Option<Result<CudaHeaders>>,
    pub(super) extra: Vec<String>,
}

impl Options {
    /// The NVRTC options of the run that produces `output` for `arch`, in
    /// the order they are passed: architecture (and `-dlto`), standard,
    /// math flags, line info, default device, debug, registers, rdc, defines, include
    /// paths, CUDA's header folders, extra options.
    pub(super) fn for_target(&self, arch: Arch, output: Output) -> Vec<String> {
        let mut options = Vec::new();
        match output {
            Output::Cubin => options.push(format!("-arch={}", arch.sm_name())),
            Output::Ptx => options.push(format!("-arch={}", arch.compute_name())),
            Output::LtoIr => {
                options.push(format!("-arch={}", arch.sm_name()));
                options.push("-dlto".to_owned());
            }
        }
        if let Some(std) = self.std {
            options.push(std.flag().to_owned());
        }
        if self.fast_math == Some(true) {
            options.push("--use_fast_math".to_owned());
        }
        let flag = |name: &str, value: Option<bool>| value.map(|v| format!("--{name}={v}"));
        options.extend(flag("ftz", self.ftz));
        options.extend(flag("prec-div", self.prec_div));
        options.extend(flag("prec-sqrt", self.prec_sqrt));
        options.extend(flag("fmad", self.fmad));
        if self.lineinfo {
            options.push("-lineinfo".to_owned());
        }
        if self.default_device {
            options.push("-default-device".to_owned());
        }
        if self.device_debug {
            options.push("-G".to_owned());
        }
        if let Some(n) = self.max_registers {
            options.push(format!("--maxrregcount={n}"));
        }
        if let Some(rdc) = self.rdc {
            options.push(format!("-rdc={rdc}"));
        }
        for (name, value) in &self.defines {
            match value {
                Some(value) => options.push(format!("-D{name}={value}")),
                None => options.push(format!("-D{name}")),
            }
        }
        for path in self.include_paths.iter().chain(&self.cuda_header_folders()) {
            options.push(format!("--include-path={}", path.display()));
        }
        options.extend(self.extra.iter().cloned());
        options
    }

    /// The include folders of CUDA's headers, when asked for and found.
    pub(super) fn cuda_header_folders(&self) -> Vec<PathBuf> {
        match &self.cuda_headers {
            Some(Ok(headers)) => headers.folders(),
            _ => Vec::new(),
        }
    }

    /// The error of a [`Program::cuda_headers`](super::Program::cuda_headers)
    /// that found none.
    pub(super) fn check_cuda_headers(&self) -> Result<()> {
        match &self.cuda_headers {
            Some(Err(err)) => Err(err.clone()),
            _ => Ok(()),
        }
    }

    /// [`Error::InteriorNul`] naming the first string with a NUL byte: a
    /// define, an include path, an extra option.
    pub(super) fn check_nul(&self) -> Result<()> {
        for (name, value) in &self.defines {
            c_string(name.as_str(), "define")?;
            if let Some(value) = value {
                c_string(value.as_str(), "define")?;
            }
        }
        for path in &self.include_paths {
            c_string(path.display().to_string(), "include path")?;
        }
        for option in &self.extra {
            c_string(option.as_str(), "compile option")?;
        }
        Ok(())
    }

    /// The folders `#include` searches: the include paths, CUDA's headers,
    /// then those of extra options (`-I<dir>`, `--include-path=<dir>`).
    pub(super) fn include_folders(&self) -> Vec<PathBuf> {
        let mut folders = self.include_paths.clone();
        folders.extend(self.cuda_header_folders());
        folders.extend(self.extra.iter().filter_map(|o| include_folder_of(o)));
        folders
    }
}

/// The include folder an extra option names (`-I<dir>`, `-I <dir>` is not
/// accepted by NVRTC, `--include-path=<dir>`).
fn include_folder_of(option: &str) -> Option<PathBuf> {
    option
        .strip_prefix("--include-path=")
        .or_else(|| option.strip_prefix("-I"))
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_names_parse_and_print() {
        assert_eq!(Arch::Sm(90).to_string(), "sm_90");
        assert_eq!(Arch::SmA(90).sm_name(), "sm_90a");
        assert_eq!(Arch::SmA(90).compute_name(), "compute_90a");
        assert_eq!(Arch::SmF(100).to_string(), "sm_100f");
        assert_eq!("sm_90a".parse::<Arch>().unwrap(), Arch::SmA(90));
        assert_eq!("sm_100f".parse::<Arch>().unwrap(), Arch::SmF(100));
        assert_eq!("compute_86".parse::<Arch>().unwrap(), Arch::Sm(86));
        assert_eq!("120".parse::<Arch>().unwrap(), Arch::Sm(120));
        assert_eq!(Arch::Sm(121).compute_capability(), (12, 1));
        for bad in ["", "sm_", "sm_9x", "gfx90a", "sm_-1", "sm_99999"] {
            assert!(bad.parse::<Arch>().is_err(), "{bad}");
        }
    }

    #[test]
    fn fast_math_never_implies_fmad() {
        let options = Options {
            fast_math: Some(true),
            ..Options::default()
        }
        .for_target(Arch::Sm(90), Output::Cubin);
        assert!(options.contains(&"--use_fast_math".to_owned()));
        assert!(
            !options.iter().any(|o| o.starts_with("--fmad")),
            "{options:?}"
        );
    }

    /// A search that found no CUDA headers is the compile's error (checked
    /// before NVRTC), and adds no include path.
    #[test]
    fn cuda_headers_not_found_fails_the_compile_and_adds_no_folder() {
        let options = Options {
            cuda_headers: Some(CudaHeaders::at("/nonexistent/cudakit/include")),
            ..Options::default()
        };
        let err = options.check_cuda_headers().unwrap_err();
        assert!(matches!(err, Error::CudaHeadersNotFound { .. }), "{err:?}");
        assert!(options.include_folders().is_empty());
        assert!(options
            .for_target(Arch::Sm(90), Output::Cubin)
            .iter()
            .all(|o| !o.starts_with("--include-path")));
        assert!(Options::default().check_cuda_headers().is_ok());
    }

    #[test]
    fn include_folders_in_extra_options_are_recognised() {
        assert_eq!(include_folder_of("-I/x/y"), Some(PathBuf::from("/x/y")));
        assert_eq!(
            include_folder_of("--include-path=/z"),
            Some(PathBuf::from("/z"))
        );
        assert_eq!(include_folder_of("-I"), None);
        assert_eq!(include_folder_of("-DX"), None);
        let options = Options {
            include_paths: vec![PathBuf::from("/a")],
            extra: vec!["-I/b".to_owned(), "-DX".to_owned()],
            ..Options::default()
        };
        assert_eq!(
            options.include_folders(),
            [PathBuf::from("/a"), PathBuf::from("/b")]
        );
    }

    #[test]
    fn nul_bytes_are_named_by_where_they_are() {
        let check = |options: Options| match options.check_nul() {
            Err(Error::InteriorNul { what }) => what,
            other => panic!("expected InteriorNul, got {other:?}"),
        };
        let define = Options {
            defines: vec![("A".to_owned(), Some("1\0".to_owned()))],
            ..Options::default()
        };
        assert_eq!(check(define), "define");
        let path = Options {
            include_paths: vec![PathBuf::from("/a\0b")],
            ..Options::default()
        };
        assert_eq!(check(path), "include path");
        let extra = Options {
            extra: vec!["-D\0".to_owned()],
            ..Options::default()
        };
        assert_eq!(check(extra), "compile option");
        assert!(Options::default().check_nul().is_ok());
    }
}
