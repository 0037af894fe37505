//! Run-time compilation with NVRTC: [`Program`] (source, headers, include
//! paths, defines, name expressions and typed options) compiles to a
//! [`Compiled`] holding PTX, CUBIN and/or LTO-IR, NVRTC's log, and the map
//! from each name expression to its lowered (mangled) name.
//!
//! ```no_run
//! use cudakit::compile::program::{Arch, Program};
//!
//! fn main() -> cudakit::Result<()> {
//!     let source = r#"
//!         template <typename T>
//!         __global__ void scale(T* x, T a, unsigned n) {
//!             unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
//!             if (i < n) x[i] *= a;
//!         }"#;
//!     let program = Program::new("scale.cu", source)
//!         .name_expression("scale<float>")
//!         .name_expression("scale<double>")
//!         .fast_math(true);
//!     // Without a device: an explicit target.
//!     let compiled = program.clone().arch(Arch::Sm(90)).compile()?;
//!     assert!(compiled.cubin().is_some());
//!     // With one: CUBIN for the device's architecture, loaded as a module.
//!     let ctx = cudakit::Context::new(0)?;
//!     let module = ctx.load_module(&program.compile_for(&ctx)?)?;
//!     let scale = module.function("scale<float>")?;
//!     println!("{} uses {} registers", scale.name(), scale.attributes()?.registers);
//!     Ok(())
//! }
//! ```
//!
//! # Targets
//!
//! [`Program::compile_for`] targets the context's device: `sm_XY` as CUBIN
//! when the loaded NVRTC supports that architecture, else PTX for the
//! highest architecture NVRTC supports that is not newer than the device
//! (the driver JIT-compiles it on load). [`Program::compile`] has no device
//! and needs an explicit [`Program::arch`]. The outputs ([`Output::Cubin`],
//! [`Output::Ptx`], [`Output::LtoIr`]) are chosen separately from the
//! architecture; CUBIN and PTX come from one NVRTC run, LTO-IR (`-dlto`)
//! from a second one when asked for together with them.
//!
//! # Errors
//!
//! A program NVRTC rejects is [`Error::Compile`] with the program's name,
//! the options, NVRTC's code and its log (whose diagnostics read
//! `name(line): error: ...`). An option NVRTC does not accept is also
//! [`Error::Compile`], with code [`NvrtcCode::InvalidOption`]
//! (`nvrtcCompileProgram` reports it, and the log names the option). A
//! string with an interior NUL byte is [`Error::InteriorNul`], before NVRTC
//! is called.
//!
//! # Cache
//!
//! Compiles go through the process's [`Cache`] (memory and disk) unless the
//! program says otherwise ([`Program::cache`], [`Program::without_cache`]);
//! see [`crate::compile::cache`].

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{c_char, c_int, CStr, CString};
use std::fmt;
use std::path::PathBuf;
use std::ptr;
use std::str::FromStr;
use std::time::{Duration, Instant};

use cuda_sys::{nvrtcProgram, Nvrtc};
use once_cell::sync::OnceCell;

use crate::compile::cache::{self, Cache, CacheKey};
use crate::context::Context;
use crate::error::{check_nvrtc, Error, NvrtcCode, Result};

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
    fn tag(self) -> &'static str {
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

/// Where a [`Compiled`] came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Origin {
    /// NVRTC compiled it in this call.
    Nvrtc,
    /// The cache's in-memory layer had it.
    MemoryCache,
    /// The cache's disk layer had it (verified on read).
    DiskCache,
}

#[derive(Debug, Clone)]
enum CacheChoice {
    Global,
    Off,
    Custom(Cache),
}

/// An NVRTC program: a source, its in-memory headers, include paths,
/// defines, name expressions and options. A builder: every setter takes and
/// returns the program.
///
/// Each option setter maps to one NVRTC option, listed on the setter; the
/// full list for a target is [`Program::options_for`].
#[derive(Debug, Clone)]
pub struct Program {
    name: String,
    source: String,
    headers: Vec<(String, String)>,
    include_paths: Vec<PathBuf>,
    defines: Vec<(String, Option<String>)>,
    name_expressions: Vec<String>,
    arch: Option<Arch>,
    outputs: BTreeSet<Output>,
    std: Option<CppStd>,
    fast_math: Option<bool>,
    ftz: Option<bool>,
    prec_div: Option<bool>,
    prec_sqrt: Option<bool>,
    fmad: Option<bool>,
    lineinfo: bool,
    device_debug: bool,
    max_registers: Option<u32>,
    rdc: Option<bool>,
    extra: Vec<String>,
    cache: CacheChoice,
}

impl Program {
    /// A program named `name` (the file name NVRTC's diagnostics use:
    /// `name(3): error: ...`) with CUDA C++ `source`.
    pub fn new(name: impl Into<String>, source: impl Into<String>) -> Program {
        Program {
            name: name.into(),
            source: source.into(),
            headers: Vec::new(),
            include_paths: Vec::new(),
            defines: Vec::new(),
            name_expressions: Vec::new(),
            arch: None,
            outputs: BTreeSet::new(),
            std: None,
            fast_math: None,
            ftz: None,
            prec_div: None,
            prec_sqrt: None,
            fmad: None,
            lineinfo: false,
            device_debug: false,
            max_registers: None,
            rdc: None,
            extra: Vec::new(),
            cache: CacheChoice::Global,
        }
    }

    /// The program's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The source.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// An in-memory header, found by `#include "name"` (or `<name>`).
    /// A later header of the same name replaces the earlier one.
    pub fn header(mut self, name: impl Into<String>, contents: impl Into<String>) -> Program {
        let name = name.into();
        self.headers.retain(|(n, _)| *n != name);
        self.headers.push((name, contents.into()));
        self
    }

    /// A folder searched for `#include`d files (`--include-path=`).
    ///
    /// The cache key covers the names, sizes and modification times of the
    /// files under include paths; see [`crate::compile::cache`].
    pub fn include_path(mut self, path: impl Into<PathBuf>) -> Program {
        self.include_paths.push(path.into());
        self
    }

    /// A macro definition, `-DNAME=VALUE`.
    pub fn define(mut self, name: impl Into<String>, value: impl Into<String>) -> Program {
        self.defines.push((name.into(), Some(value.into())));
        self
    }

    /// A macro defined as 1, `-DNAME`.
    pub fn define_flag(mut self, name: impl Into<String>) -> Program {
        self.defines.push((name.into(), None));
        self
    }

    /// A name expression whose lowered name is wanted: a kernel
    /// (`"scale<float>"`, `"ns::gemm<128, 64>"`, `"&kernel"`) or a
    /// `__device__`/`__constant__` variable (`"&ns::table"`). NVRTC
    /// instantiates templates named here. After loading,
    /// [`Module::function`](crate::compile::module::Module::function) and
    /// [`Module::global`](crate::compile::module::Module::global) take the
    /// expression itself. Duplicates are ignored.
    pub fn name_expression(mut self, expression: impl Into<String>) -> Program {
        let expression = expression.into();
        if !self.name_expressions.contains(&expression) {
            self.name_expressions.push(expression);
        }
        self
    }

    /// The target architecture. Without one, [`Program::compile_for`]
    /// targets the device and [`Program::compile`] fails.
    pub fn arch(mut self, arch: Arch) -> Program {
        self.arch = Some(arch);
        self
    }

    /// Adds an output to produce. With none, a compile produces CUBIN (or
    /// PTX, see [`Program::compile_for`]).
    pub fn output(mut self, output: Output) -> Program {
        self.outputs.insert(output);
        self
    }

    /// The C++ dialect, `-std=c++17`.
    pub fn std(mut self, std: CppStd) -> Program {
        self.std = Some(std);
        self
    }

    /// `--use_fast_math` when `true`: NVRTC's fast-math bundle (fast
    /// intrinsics, `--ftz=true`, `--prec-div=false`, `--prec-sqrt=false`).
    /// It does not touch [`Program::fmad`]; the four component options can
    /// still be set separately.
    pub fn fast_math(mut self, on: bool) -> Program {
        self.fast_math = Some(on);
        self
    }

    /// `--ftz=true|false`: flush single-precision denormals to zero.
    pub fn ftz(mut self, on: bool) -> Program {
        self.ftz = Some(on);
        self
    }

    /// `--prec-div=true|false`: IEEE round-to-nearest single-precision
    /// division and reciprocals, or a faster approximation.
    pub fn prec_div(mut self, on: bool) -> Program {
        self.prec_div = Some(on);
        self
    }

    /// `--prec-sqrt=true|false`: IEEE round-to-nearest single-precision
    /// square root, or a faster approximation.
    pub fn prec_sqrt(mut self, on: bool) -> Program {
        self.prec_sqrt = Some(on);
        self
    }

    /// `--fmad=true|false`: contract multiplies and adds into fused
    /// multiply-adds (NVRTC's default is `true`).
    pub fn fmad(mut self, on: bool) -> Program {
        self.fmad = Some(on);
        self
    }

    /// `-lineinfo`: line information for profilers.
    pub fn lineinfo(mut self) -> Program {
        self.lineinfo = true;
        self
    }

    /// `-G`: device debug information (and no optimization).
    pub fn device_debug(mut self) -> Program {
        self.device_debug = true;
        self
    }

    /// `--maxrregcount=N`: at most `n` registers per thread.
    pub fn max_registers(mut self, n: u32) -> Program {
        self.max_registers = Some(n);
        self
    }

    /// `-rdc=true|false`: relocatable device code, for separate compilation
    /// and linking ([`crate::compile::linker`]) and for device-side launches.
    pub fn relocatable_device_code(mut self, on: bool) -> Program {
        self.rdc = Some(on);
        self
    }

    /// Any other NVRTC option, passed as given, after the typed ones.
    /// Include folders given here as `-I<dir>` or `--include-path=<dir>`
    /// are covered by the cache key like [`Program::include_path`]'s.
    pub fn extra_option(mut self, option: impl Into<String>) -> Program {
        self.extra.push(option.into());
        self
    }

    /// Compiles through `cache` instead of the process's cache.
    pub fn cache(mut self, cache: &Cache) -> Program {
        self.cache = CacheChoice::Custom(cache.clone());
        self
    }

    /// Compiles without any cache: every compile runs NVRTC and nothing is
    /// stored.
    pub fn without_cache(mut self) -> Program {
        self.cache = CacheChoice::Off;
        self
    }

    /// The name expressions, in the order they were added.
    pub fn name_expressions(&self) -> &[String] {
        &self.name_expressions
    }

    /// The exact NVRTC options of the compile that produces `output` for
    /// `arch`, in the order they are passed.
    pub fn options_for(&self, arch: Arch, output: Output) -> Vec<String> {
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
        for path in &self.include_paths {
            options.push(format!("--include-path={}", path.display()));
        }
        options.extend(self.extra.iter().cloned());
        options
    }

    /// Compiles for the explicit [`Program::arch`], with no device needed.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when no architecture was set, or when
    /// NVRTC does not support it (the message lists those it does);
    /// [`Error::InteriorNul`]; [`Error::Load`] when NVRTC cannot be loaded;
    /// [`Error::Compile`] when NVRTC rejects the program or an option;
    /// [`Error::Nvrtc`] when another NVRTC call fails.
    pub fn compile(&self) -> Result<Compiled> {
        self.compile_inner(None, None)
    }

    /// Compiles for the device of `ctx`: the program's [`Program::arch`]
    /// when set; else `sm_XY` of the device as CUBIN when NVRTC supports
    /// it, else PTX for the highest architecture NVRTC supports that is not
    /// newer than the device. Records the compile's time and bytes in the
    /// context's metrics (cache hits are not compiles and are not counted).
    ///
    /// # Errors
    ///
    /// As [`Program::compile`]; [`Error::InvalidArgument`] when NVRTC
    /// supports no architecture the device can run, or when CUBIN was asked
    /// for explicitly and NVRTC cannot produce it for the device.
    pub fn compile_for(&self, ctx: &Context) -> Result<Compiled> {
        self.compile_inner(Some(ctx), None)
    }

    /// [`Program::compile`] through `cache`, whatever the program's own
    /// cache setting ([`Cache::disabled`] bypasses caching).
    ///
    /// # Errors
    ///
    /// As [`Program::compile`].
    pub fn compile_with(&self, cache: &Cache) -> Result<Compiled> {
        self.compile_inner(None, Some(cache))
    }

    /// [`Program::compile_for`] through `cache`, whatever the program's own
    /// cache setting ([`Cache::disabled`] bypasses caching).
    ///
    /// # Errors
    ///
    /// As [`Program::compile_for`].
    pub fn compile_for_with(&self, ctx: &Context, cache: &Cache) -> Result<Compiled> {
        self.compile_inner(Some(ctx), Some(cache))
    }

    /// The cache key of this program for a target, as [`Program::compile`]
    /// would compute it (it covers the loaded NVRTC's version).
    ///
    /// # Errors
    ///
    /// [`Error::Load`] when NVRTC cannot be loaded; [`Error::InvalidArgument`]
    /// when an include path holds too many files to fingerprint.
    pub fn cache_key(&self, arch: Arch, outputs: &[Output]) -> Result<CacheKey> {
        let info = nvrtc_info()?;
        let mut set: BTreeSet<Output> = outputs.iter().copied().collect();
        if set.is_empty() {
            set.insert(Output::Cubin);
        }
        let passes = self.passes(arch, &set);
        self.key(info, arch, &set, &passes)?.ok_or_else(|| {
            Error::InvalidArgument(format!(
                "the include paths of {} hold more than {} files; the program is not cacheable",
                self.name,
                cache::MAX_INCLUDE_FILES
            ))
        })
    }

    fn compile_inner(&self, ctx: Option<&Context>, cache: Option<&Cache>) -> Result<Compiled> {
        let started = Instant::now();
        let strings = ProgramStrings::new(self)?;
        let info = nvrtc_info()?;
        let device = ctx.map(|c| c.limits().compute_capability);
        let (arch, outputs) = self.target(info, device)?;
        let passes = self.passes(arch, &outputs);
        for pass in &passes {
            for option in &pass.options {
                if option.as_bytes().contains(&0) {
                    return Err(Error::InteriorNul {
                        what: "compile option",
                    });
                }
            }
        }
        let cache = match (cache, &self.cache) {
            (Some(cache), _) => Some(cache),
            (None, CacheChoice::Global) => Some(Cache::global()),
            (None, CacheChoice::Off) => None,
            (None, CacheChoice::Custom(cache)) => Some(cache),
        }
        .filter(|c| c.is_enabled());
        let key = match cache {
            Some(_) => self.key(info, arch, &outputs, &passes)?,
            None => None,
        };
        if let (Some(cache), Some(key)) = (cache, key) {
            if let Some(mut hit) = cache.lookup(key) {
                hit.elapsed = started.elapsed();
                return Ok(hit);
            }
        }
        let mut compiled = Compiled {
            program: self.name.clone(),
            arch,
            options: Vec::new(),
            ptx: None,
            cubin: None,
            lto_ir: None,
            log: String::new(),
            lowered: BTreeMap::new(),
            origin: Origin::Nvrtc,
            elapsed: Duration::ZERO,
            key,
        };
        for (index, pass) in passes.iter().enumerate() {
            let out = run_pass(info.table, &strings, &self.name, &pass.options)?;
            if index == 0 {
                compiled.options = pass.options.clone();
                compiled.log = out.log;
                compiled.lowered = out.lowered;
            } else if !out.log.is_empty() && out.log != compiled.log {
                if !compiled.log.is_empty() && !compiled.log.ends_with('\n') {
                    compiled.log.push('\n');
                }
                compiled.log.push_str(&out.log);
            }
            if outputs.contains(&Output::Ptx) && pass.output != Output::LtoIr {
                compiled.ptx = out.ptx;
            }
            if outputs.contains(&Output::Cubin) && pass.output == Output::Cubin {
                compiled.cubin = out.cubin;
            }
            if pass.output == Output::LtoIr {
                compiled.lto_ir = out.lto_ir;
            }
        }
        for output in &outputs {
            let missing = match output {
                Output::Cubin => compiled.cubin.is_none(),
                Output::Ptx => compiled.ptx.is_none(),
                Output::LtoIr => compiled.lto_ir.is_none(),
            };
            if missing {
                return Err(Error::Compile {
                    program: self.name.clone(),
                    options: compiled.options.clone(),
                    code: NvrtcCode::InternalError,
                    log: format!(
                        "NVRTC reported success but produced no {}\n{}",
                        output.tag(),
                        compiled.log
                    ),
                });
            }
        }
        compiled.elapsed = started.elapsed();
        if let Some(ctx) = ctx {
            ctx.counters()
                .compile
                .add(compiled.binary_bytes(), Some(compiled.elapsed));
        }
        if let (Some(cache), Some(key)) = (cache, key) {
            cache.store(key, &compiled);
        }
        Ok(compiled)
    }

    /// The architecture and outputs of a compile.
    fn target(
        &self,
        info: &NvrtcInfo,
        device: Option<(u32, u32)>,
    ) -> Result<(Arch, BTreeSet<Output>)> {
        let supported = || {
            info.archs
                .iter()
                .map(|n| format!("sm_{n}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut outputs = self.outputs.clone();
        if let Some(arch) = self.arch {
            if !info.archs.contains(&arch.number()) {
                return Err(Error::InvalidArgument(format!(
                    "NVRTC {}.{} cannot compile for {arch}; it supports {}",
                    info.version.0,
                    info.version.1,
                    supported()
                )));
            }
            if outputs.is_empty() {
                outputs.insert(Output::Cubin);
            }
            return Ok((arch, outputs));
        }
        let Some((major, minor)) = device else {
            return Err(Error::InvalidArgument(format!(
                "program {}: Program::compile needs an explicit target (.arch(Arch::Sm(90))); \
                 use Program::compile_for(&ctx) to target a device",
                self.name
            )));
        };
        let number = major * 10 + minor;
        if info.archs.contains(&number) {
            if outputs.is_empty() {
                outputs.insert(Output::Cubin);
            }
            return Ok((Arch::Sm(number), outputs));
        }
        let Some(best) = info.archs.iter().copied().filter(|&n| n <= number).max() else {
            return Err(Error::InvalidArgument(format!(
                "the device is sm_{number}, older than every architecture NVRTC {}.{} supports ({})",
                info.version.0,
                info.version.1,
                supported()
            )));
        };
        if outputs.contains(&Output::Cubin) {
            return Err(Error::InvalidArgument(format!(
                "NVRTC {}.{} cannot produce CUBIN for the device's sm_{number} (it supports {}); \
                 ask for Output::Ptx, which the driver compiles on load",
                info.version.0,
                info.version.1,
                supported()
            )));
        }
        if outputs.is_empty() {
            outputs.insert(Output::Ptx);
        }
        Ok((Arch::Sm(best), outputs))
    }

    /// The NVRTC runs that produce `outputs`: one for CUBIN and/or PTX, one
    /// for LTO-IR.
    fn passes(&self, arch: Arch, outputs: &BTreeSet<Output>) -> Vec<Pass> {
        let mut passes = Vec::new();
        if outputs.contains(&Output::Cubin) {
            passes.push(Pass {
                output: Output::Cubin,
                options: self.options_for(arch, Output::Cubin),
            });
        } else if outputs.contains(&Output::Ptx) {
            passes.push(Pass {
                output: Output::Ptx,
                options: self.options_for(arch, Output::Ptx),
            });
        }
        if outputs.contains(&Output::LtoIr) {
            passes.push(Pass {
                output: Output::LtoIr,
                options: self.options_for(arch, Output::LtoIr),
            });
        }
        passes
    }

    /// The cache key; `None` when the include paths are too large to
    /// fingerprint (the program then bypasses the cache).
    fn key(
        &self,
        info: &NvrtcInfo,
        arch: Arch,
        outputs: &BTreeSet<Output>,
        passes: &[Pass],
    ) -> Result<Option<CacheKey>> {
        let mut headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(n, c)| (n.as_str(), c.as_str()))
            .collect();
        headers.sort_unstable();
        let mut folders: Vec<PathBuf> = self.include_paths.clone();
        folders.extend(self.extra.iter().filter_map(|o| include_folder_of(o)));
        let Some(include_fingerprint) = cache::fingerprint_folders(&folders) else {
            return Ok(None);
        };
        let options: Vec<&[String]> = passes.iter().map(|p| p.options.as_slice()).collect();
        let outputs: Vec<&str> = outputs.iter().map(|o| o.tag()).collect();
        let arch = arch.to_string();
        Ok(Some(cache::key(&cache::KeyInputs {
            cudakit_version: env!("CARGO_PKG_VERSION"),
            nvrtc_version: info.version,
            name: &self.name,
            source: &self.source,
            headers: &headers,
            include_fingerprint,
            options: &options,
            name_expressions: &self.name_expressions,
            arch: &arch,
            outputs: &outputs,
        })))
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

struct Pass {
    output: Output,
    options: Vec<String>,
}

/// The output of [`Program::compile`]: PTX, CUBIN and/or LTO-IR as asked
/// for, NVRTC's log (warnings included, also on success), and the map from
/// each name expression to its lowered name. Load it with
/// [`Context::load_module`](crate::Context::load_module).
#[derive(Clone)]
pub struct Compiled {
    pub(crate) program: String,
    pub(crate) arch: Arch,
    pub(crate) options: Vec<String>,
    pub(crate) ptx: Option<String>,
    pub(crate) cubin: Option<Vec<u8>>,
    pub(crate) lto_ir: Option<Vec<u8>>,
    pub(crate) log: String,
    pub(crate) lowered: BTreeMap<String, String>,
    pub(crate) origin: Origin,
    pub(crate) elapsed: Duration,
    pub(crate) key: Option<CacheKey>,
}

impl fmt::Debug for Compiled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Compiled")
            .field("program", &self.program)
            .field("arch", &self.arch)
            .field("options", &self.options)
            .field("ptx_bytes", &self.ptx.as_ref().map(String::len))
            .field("cubin_bytes", &self.cubin.as_ref().map(Vec::len))
            .field("lto_ir_bytes", &self.lto_ir.as_ref().map(Vec::len))
            .field("log", &self.log)
            .field("lowered", &self.lowered)
            .field("origin", &self.origin)
            .field("elapsed", &self.elapsed)
            .finish()
    }
}

impl Compiled {
    /// The program's name.
    pub fn program(&self) -> &str {
        &self.program
    }

    /// The target architecture.
    pub fn arch(&self) -> Arch {
        self.arch
    }

    /// The NVRTC options of the compile (of the CUBIN/PTX run when LTO-IR
    /// was produced by a second run; that run's options are
    /// [`Program::options_for`] with [`Output::LtoIr`]).
    pub fn options(&self) -> &[String] {
        &self.options
    }

    /// The PTX, without the trailing NUL, when asked for.
    pub fn ptx(&self) -> Option<&str> {
        self.ptx.as_deref()
    }

    /// The CUBIN (an ELF image), when asked for.
    pub fn cubin(&self) -> Option<&[u8]> {
        self.cubin.as_deref()
    }

    /// The LTO-IR, when asked for.
    pub fn lto_ir(&self) -> Option<&[u8]> {
        self.lto_ir.as_deref()
    }

    /// NVRTC's log: warnings and remarks, possibly empty.
    pub fn log(&self) -> &str {
        &self.log
    }

    /// Name expression → lowered (mangled) name, for every name expression.
    pub fn lowered_names(&self) -> &BTreeMap<String, String> {
        &self.lowered
    }

    /// The lowered name of one name expression. The lookup tolerates
    /// whitespace differences (`ns::gemm<128,64>` finds
    /// `ns::gemm<128, 64>`) and a leading `&`.
    pub fn lowered_name(&self, expression: &str) -> Option<&str> {
        resolve_name(&self.lowered, expression)
    }

    /// Where this result came from: NVRTC or a cache layer.
    pub fn origin(&self) -> Origin {
        self.origin
    }

    /// Time spent producing this result in the call that returned it: the
    /// compile, or the cache lookup on a hit.
    pub fn elapsed(&self) -> Duration {
        self.elapsed
    }

    /// The cache key, when the compile went through a cache.
    pub fn cache_key(&self) -> Option<CacheKey> {
        self.key
    }

    /// Bytes of PTX, CUBIN and LTO-IR together.
    pub fn binary_bytes(&self) -> usize {
        self.ptx.as_ref().map_or(0, String::len)
            + self.cubin.as_ref().map_or(0, Vec::len)
            + self.lto_ir.as_ref().map_or(0, Vec::len)
    }

    /// Bytes this result holds in memory (binaries, log, names).
    pub(crate) fn footprint(&self) -> usize {
        self.binary_bytes()
            + self.log.len()
            + self.program.len()
            + self.options.iter().map(String::len).sum::<usize>()
            + self
                .lowered
                .iter()
                .map(|(k, v)| k.len() + v.len())
                .sum::<usize>()
    }
}

/// Looks a name up in a name-expression map: exactly, then with whitespace
/// normalized and a leading `&` ignored on both sides.
pub(crate) fn resolve_name<'a>(map: &'a BTreeMap<String, String>, name: &str) -> Option<&'a str> {
    if let Some(lowered) = map.get(name) {
        return Some(lowered);
    }
    let wanted = canonical_expression(name);
    map.iter()
        .find(|(expr, _)| canonical_expression(expr) == wanted)
        .map(|(_, lowered)| lowered.as_str())
}

/// A name expression with whitespace removed except a single space between
/// two identifier characters (`unsigned int`), and without a leading `&`.
pub(crate) fn canonical_expression(expression: &str) -> String {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let trimmed = expression.trim().trim_start_matches('&');
    let mut out = String::with_capacity(trimmed.len());
    let mut pending_space = false;
    for c in trimmed.chars() {
        if c.is_whitespace() {
            pending_space = true;
            continue;
        }
        if pending_space && out.chars().next_back().is_some_and(is_ident) && is_ident(c) {
            out.push(' ');
        }
        pending_space = false;
        out.push(c);
    }
    out
}

/// The loaded NVRTC: its table, version and supported architectures.
pub(crate) struct NvrtcInfo {
    pub(crate) table: &'static Nvrtc,
    pub(crate) version: (i32, i32),
    pub(crate) archs: Vec<u32>,
}

/// The process's NVRTC, loaded and queried once.
pub(crate) fn nvrtc_info() -> Result<&'static NvrtcInfo> {
    static INFO: OnceCell<Result<NvrtcInfo>> = OnceCell::new();
    match INFO.get_or_init(query_nvrtc) {
        Ok(info) => Ok(info),
        Err(err) => Err(err.clone()),
    }
}

fn query_nvrtc() -> Result<NvrtcInfo> {
    let table = cuda_sys::nvrtc().map_err(Error::Load)?;
    let (mut major, mut minor): (c_int, c_int) = (0, 0);
    // SAFETY: two valid out-pointers.
    check_nvrtc("nvrtcVersion", unsafe {
        (table.nvrtcVersion)(&mut major, &mut minor)
    })?;
    let mut count: c_int = 0;
    // SAFETY: a valid out-pointer.
    check_nvrtc("nvrtcGetNumSupportedArchs", unsafe {
        (table.nvrtcGetNumSupportedArchs)(&mut count)
    })?;
    let mut archs: Vec<c_int> = vec![0; usize::try_from(count).unwrap_or(0)];
    if !archs.is_empty() {
        // SAFETY: the array has the `count` elements NVRTC reported.
        check_nvrtc("nvrtcGetSupportedArchs", unsafe {
            (table.nvrtcGetSupportedArchs)(archs.as_mut_ptr())
        })?;
    }
    let mut archs: Vec<u32> = archs
        .into_iter()
        .filter_map(|a| u32::try_from(a).ok())
        .collect();
    archs.sort_unstable();
    archs.dedup();
    Ok(NvrtcInfo {
        table,
        version: (major, minor),
        archs,
    })
}

/// The loaded NVRTC's version as (major, minor) (`nvrtcVersion`).
///
/// # Errors
///
/// [`Error::Load`] when NVRTC cannot be loaded (the error lists every
/// candidate tried); [`Error::Nvrtc`].
pub fn nvrtc_version() -> Result<(i32, i32)> {
    Ok(nvrtc_info()?.version)
}

/// The architectures the loaded NVRTC compiles for, ascending (`90` for
/// `sm_90`) (`nvrtcGetSupportedArchs`).
///
/// # Errors
///
/// As [`nvrtc_version`].
pub fn supported_archs() -> Result<&'static [u32]> {
    Ok(&nvrtc_info()?.archs)
}

/// The program's strings as C strings, checked for interior NULs once.
struct ProgramStrings {
    source: CString,
    name: CString,
    header_names: Vec<CString>,
    header_contents: Vec<CString>,
    expressions: Vec<(String, CString)>,
}

impl ProgramStrings {
    fn new(program: &Program) -> Result<ProgramStrings> {
        let c =
            |s: &str, what: &'static str| CString::new(s).map_err(|_| Error::InteriorNul { what });
        let mut header_names = Vec::with_capacity(program.headers.len());
        let mut header_contents = Vec::with_capacity(program.headers.len());
        for (name, contents) in &program.headers {
            header_names.push(c(name, "header name")?);
            header_contents.push(c(contents, "header contents")?);
        }
        let mut expressions = Vec::with_capacity(program.name_expressions.len());
        for e in &program.name_expressions {
            expressions.push((e.clone(), c(e, "name expression")?));
        }
        for (name, value) in &program.defines {
            c(name, "define")?;
            if let Some(value) = value {
                c(value, "define")?;
            }
        }
        for path in &program.include_paths {
            c(&path.display().to_string(), "include path")?;
        }
        for option in &program.extra {
            c(option, "compile option")?;
        }
        Ok(ProgramStrings {
            source: c(&program.source, "program source")?,
            name: c(&program.name, "program name")?,
            header_names,
            header_contents,
            expressions,
        })
    }
}

/// Destroys an NVRTC program when dropped (`nvrtcDestroyProgram`), on every
/// path out of a compile.
struct ProgramGuard {
    nv: &'static Nvrtc,
    raw: nvrtcProgram,
}

impl Drop for ProgramGuard {
    fn drop(&mut self) {
        if !self.raw.is_null() {
            // SAFETY: `raw` is a live program created by nvrtcCreateProgram
            // and destroyed only here; the call nulls the handle.
            let _ = unsafe { (self.nv.nvrtcDestroyProgram)(&mut self.raw) };
        }
    }
}

struct PassOutput {
    ptx: Option<String>,
    cubin: Option<Vec<u8>>,
    lto_ir: Option<Vec<u8>>,
    log: String,
    lowered: BTreeMap<String, String>,
}

/// One NVRTC run: create, add name expressions, compile, read the log, the
/// outputs and the lowered names, destroy.
fn run_pass(
    nv: &'static Nvrtc,
    strings: &ProgramStrings,
    program: &str,
    options: &[String],
) -> Result<PassOutput> {
    let options_c: Vec<CString> = options
        .iter()
        .map(|o| {
            CString::new(o.as_str()).map_err(|_| Error::InteriorNul {
                what: "compile option",
            })
        })
        .collect::<Result<_>>()?;
    let option_ptrs: Vec<*const c_char> = options_c.iter().map(|o| o.as_ptr()).collect();
    let header_ptrs: Vec<*const c_char> =
        strings.header_contents.iter().map(|h| h.as_ptr()).collect();
    let name_ptrs: Vec<*const c_char> = strings.header_names.iter().map(|h| h.as_ptr()).collect();
    let num_headers = c_int::try_from(header_ptrs.len())
        .map_err(|_| Error::InvalidArgument("too many headers".to_owned()))?;
    let num_options = c_int::try_from(option_ptrs.len())
        .map_err(|_| Error::InvalidArgument("too many options".to_owned()))?;
    let mut guard = ProgramGuard {
        nv,
        raw: ptr::null_mut(),
    };
    let (headers, names) = if header_ptrs.is_empty() {
        (ptr::null(), ptr::null())
    } else {
        (header_ptrs.as_ptr(), name_ptrs.as_ptr())
    };
    // SAFETY: a valid out-pointer; the source and name are NUL-terminated
    // C strings; `headers` and `names` are null or arrays of `num_headers`
    // NUL-terminated strings, all alive for the call.
    check_nvrtc("nvrtcCreateProgram", unsafe {
        (nv.nvrtcCreateProgram)(
            &mut guard.raw,
            strings.source.as_ptr(),
            strings.name.as_ptr(),
            num_headers,
            headers,
            names,
        )
    })?;
    for (_, expression) in &strings.expressions {
        // SAFETY: a live, not yet compiled program and a C string.
        check_nvrtc("nvrtcAddNameExpression", unsafe {
            (nv.nvrtcAddNameExpression)(guard.raw, expression.as_ptr())
        })?;
    }
    let options_arg = if option_ptrs.is_empty() {
        ptr::null()
    } else {
        option_ptrs.as_ptr()
    };
    // SAFETY: a live program; `options_arg` is null or an array of
    // `num_options` C strings alive for the call.
    let rc = unsafe { (nv.nvrtcCompileProgram)(guard.raw, num_options, options_arg) };
    let log = program_log(nv, guard.raw)?;
    if let Err(err) = check_nvrtc("nvrtcCompileProgram", rc) {
        return Err(Error::Compile {
            program: program.to_owned(),
            options: options.to_vec(),
            code: err.code,
            log,
        });
    }
    let ptx = read_output(nv, guard.raw, Kind::Ptx)?
        .map(|mut bytes| {
            while bytes.last() == Some(&0) {
                bytes.pop();
            }
            bytes
        })
        .filter(|bytes| !bytes.is_empty())
        .map(|bytes| match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(err) => String::from_utf8_lossy(err.as_bytes()).into_owned(),
        });
    let cubin = read_output(nv, guard.raw, Kind::Cubin)?;
    let lto_ir = read_output(nv, guard.raw, Kind::LtoIr)?;
    let mut lowered = BTreeMap::new();
    for (expression, expression_c) in &strings.expressions {
        let mut name: *const c_char = ptr::null();
        // SAFETY: a live, compiled program; the expression was added before
        // compiling; a valid out-pointer.
        let rc = unsafe { (nv.nvrtcGetLoweredName)(guard.raw, expression_c.as_ptr(), &mut name) };
        if let Err(err) = check_nvrtc("nvrtcGetLoweredName", rc) {
            return Err(Error::Compile {
                program: program.to_owned(),
                options: options.to_vec(),
                code: err.code,
                log: format!(
                    "name expression {expression:?} does not name a __global__ function or a \
                     __device__/__constant__ variable\n{log}"
                ),
            });
        }
        if name.is_null() {
            return Err(Error::Nvrtc(crate::error::NvrtcError {
                call: "nvrtcGetLoweredName",
                code: NvrtcCode::InternalError,
            }));
        }
        // SAFETY: NVRTC returned a NUL-terminated string owned by the
        // program, which is alive; it is copied before the program goes.
        let text = unsafe { CStr::from_ptr(name) }
            .to_string_lossy()
            .into_owned();
        lowered.insert(expression.clone(), text);
    }
    Ok(PassOutput {
        ptx,
        cubin,
        lto_ir,
        log,
        lowered,
    })
}

fn program_log(nv: &Nvrtc, raw: nvrtcProgram) -> Result<String> {
    let mut size = 0usize;
    // SAFETY: a live program and a valid out-pointer.
    check_nvrtc("nvrtcGetProgramLogSize", unsafe {
        (nv.nvrtcGetProgramLogSize)(raw, &mut size)
    })?;
    if size <= 1 {
        return Ok(String::new());
    }
    let mut buffer = vec![0u8; size];
    // SAFETY: the buffer has the `size` bytes NVRTC asked for.
    check_nvrtc("nvrtcGetProgramLog", unsafe {
        (nv.nvrtcGetProgramLog)(raw, buffer.as_mut_ptr().cast())
    })?;
    while buffer.last() == Some(&0) {
        buffer.pop();
    }
    Ok(String::from_utf8_lossy(&buffer).into_owned())
}

#[derive(Clone, Copy)]
enum Kind {
    Ptx,
    Cubin,
    LtoIr,
}

/// Reads one output; `None` when the compile produced none (size 0, or
/// just the NUL of an empty PTX).
fn read_output(nv: &Nvrtc, raw: nvrtcProgram, kind: Kind) -> Result<Option<Vec<u8>>> {
    let (size_call, size_fn, get_call, get_fn) = match kind {
        Kind::Ptx => (
            "nvrtcGetPTXSize",
            nv.nvrtcGetPTXSize,
            "nvrtcGetPTX",
            nv.nvrtcGetPTX,
        ),
        Kind::Cubin => (
            "nvrtcGetCUBINSize",
            nv.nvrtcGetCUBINSize,
            "nvrtcGetCUBIN",
            nv.nvrtcGetCUBIN,
        ),
        Kind::LtoIr => (
            "nvrtcGetLTOIRSize",
            nv.nvrtcGetLTOIRSize,
            "nvrtcGetLTOIR",
            nv.nvrtcGetLTOIR,
        ),
    };
    let mut size = 0usize;
    // SAFETY: a live, compiled program and a valid out-pointer.
    check_nvrtc(size_call, unsafe { size_fn(raw, &mut size) })?;
    if size <= 1 {
        return Ok(None);
    }
    let mut buffer = vec![0u8; size];
    // SAFETY: the buffer has the `size` bytes NVRTC reported.
    check_nvrtc(get_call, unsafe { get_fn(raw, buffer.as_mut_ptr().cast()) })?;
    Ok(Some(buffer))
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
        let p = Program::new("p.cu", "").fast_math(true);
        let options = p.options_for(Arch::Sm(90), Output::Cubin);
        assert!(options.contains(&"--use_fast_math".to_owned()));
        assert!(
            !options.iter().any(|o| o.starts_with("--fmad")),
            "{options:?}"
        );
    }

    #[test]
    fn canonical_expressions_ignore_spacing_and_ampersands() {
        assert_eq!(
            canonical_expression(" ns::gemm< 128 ,64 > "),
            "ns::gemm<128,64>"
        );
        assert_eq!(canonical_expression("&kernel"), "kernel");
        assert_eq!(canonical_expression("f<unsigned  int>"), "f<unsigned int>");
        let mut map = BTreeMap::new();
        map.insert("ns::gemm<128, 64>".to_owned(), "_Z1".to_owned());
        map.insert("&kernel".to_owned(), "_Z2".to_owned());
        assert_eq!(resolve_name(&map, "ns::gemm<128,64>"), Some("_Z1"));
        assert_eq!(resolve_name(&map, "kernel"), Some("_Z2"));
        assert_eq!(resolve_name(&map, "&kernel"), Some("_Z2"));
        assert_eq!(resolve_name(&map, "other"), None);
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
    }
}
