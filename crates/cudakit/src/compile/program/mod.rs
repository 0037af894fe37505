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
//! see [`crate::compile::cache`]. The key covers every input of the compile
//! ([`Program::cache_key`]); a [`Compiled`] encodes itself into the cache's
//! sections and decodes itself from them.
//!
//! # Layout
//!
//! `options` (targets and the option list), `nvrtc` (the NVRTC calls),
//! `compiled` (the result and its cache encoding), `key` (the cache key);
//! this file holds the builder and the compile flow.

mod compiled;
mod key;
mod nvrtc;
mod options;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub(crate) use compiled::resolve_name;
pub use compiled::{CacheBypass, Compiled, Origin};
pub use nvrtc::{nvrtc_version, supported_archs};
pub use options::{Arch, CppStd, Output};

use crate::compile::cache::{Cache, CacheKey};
use crate::compile::headers::CudaHeaders;
use crate::context::Context;
use crate::error::{Error, NvrtcCode, Result};
use key::{fingerprint_folders, KeyInputs};
use nvrtc::{nvrtc_info, run_pass, NvrtcInfo, ProgramStrings};
use options::Options;

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
/// ```no_run
/// use cudakit::{Context, Program};
/// # fn main() -> cudakit::Result<()> {
/// let source = r#"
///     #include "scale.h"
///     template <typename T>
///     __global__ void scale(T* x, T a, unsigned n) {
///         unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
///         if (i < n) x[i] = SCALE(x[i], a);
///     }"#;
/// let ctx = Context::new(0)?;
/// let compiled = Program::new("scale.cu", source)
///     .header("scale.h", "#define SCALE(v, a) ((v) * (a))") // an in-memory header
///     .name_expression("scale<float>") // instantiated, its mangled name kept
///     .compile_for(&ctx)?; // CUBIN for the device's architecture
/// let module = ctx.load_module(&compiled)?;
/// let scale = module.function("scale<float>")?; // found by the C++ name
/// # let _ = scale; Ok(()) }
/// ```
///
/// Each option setter maps to one NVRTC option, listed on the setter; the
/// full list for a target is [`Program::options_for`].
#[derive(Debug, Clone)]
pub struct Program {
    name: String,
    source: String,
    headers: Vec<(String, String)>,
    name_expressions: Vec<String>,
    arch: Option<Arch>,
    outputs: BTreeSet<Output>,
    options: Options,
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
            name_expressions: Vec::new(),
            arch: None,
            outputs: BTreeSet::new(),
            options: Options::default(),
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
    /// files under include paths; see [`Program::cache_key`].
    pub fn include_path(mut self, path: impl Into<PathBuf>) -> Program {
        self.options.include_paths.push(path.into());
        self
    }

    /// CUDA's own headers as include paths (after the program's own
    /// [`Program::include_path`]s): the CCCL folder and `include` of the
    /// first CUDA installation [`CudaHeaders::find`] finds (the toolkit, the
    /// pip wheels `nvidia-cuda-runtime`, `nvidia-cuda-crt` and
    /// `nvidia-cuda-cccl`, or the project's `.deps`; see
    /// [`crate::compile::headers`]). Then `#include <cooperative_groups.h>`,
    /// `<mma.h>` and `<cuda/std/...>` work under NVRTC 13, which builds in
    /// only a few of CUDA's headers. The cache key covers these folders by
    /// their version, without walking their files.
    ///
    /// The search runs once per process. When it finds nothing, the
    /// program's compiles fail with [`Error::CudaHeadersNotFound`], which
    /// lists every folder looked at; the builder itself cannot fail.
    pub fn cuda_headers(mut self) -> Program {
        self.options.cuda_headers = Some(CudaHeaders::find());
        self
    }

    /// CUDA's headers from `headers` (a folder checked with
    /// [`CudaHeaders::at`], say) instead of the search of
    /// [`Program::cuda_headers`].
    pub fn cuda_headers_from(mut self, headers: &CudaHeaders) -> Program {
        self.options.cuda_headers = Some(Ok(headers.clone()));
        self
    }

    /// A macro definition, `-DNAME=VALUE`.
    pub fn define(mut self, name: impl Into<String>, value: impl Into<String>) -> Program {
        self.options.defines.push((name.into(), Some(value.into())));
        self
    }

    /// A macro defined as 1, `-DNAME`.
    pub fn define_flag(mut self, name: impl Into<String>) -> Program {
        self.options.defines.push((name.into(), None));
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

    builder_setters! {
        Program;
        /// The C++ dialect, `-std=c++17`.
        std(std: CppStd) => options.std = Some(std);
        /// `--use_fast_math` when `true`: NVRTC's fast-math bundle (fast
        /// intrinsics, `--ftz=true`, `--prec-div=false`, `--prec-sqrt=false`).
        /// It does not touch [`Program::fmad`]; the four component options can
        /// still be set separately.
        fast_math(on: bool) => options.fast_math = Some(on);
        /// `--ftz=true|false`: flush single-precision denormals to zero.
        ftz(on: bool) => options.ftz = Some(on);
        /// `--prec-div=true|false`: IEEE round-to-nearest single-precision
        /// division and reciprocals, or a faster approximation.
        prec_div(on: bool) => options.prec_div = Some(on);
        /// `--prec-sqrt=true|false`: IEEE round-to-nearest single-precision
        /// square root, or a faster approximation.
        prec_sqrt(on: bool) => options.prec_sqrt = Some(on);
        /// `--fmad=true|false`: contract multiplies and adds into fused
        /// multiply-adds (NVRTC's default is `true`).
        fmad(on: bool) => options.fmad = Some(on);
        /// `--maxrregcount=N`: at most `n` registers per thread.
        max_registers(n: u32) => options.max_registers = Some(n);
        /// `-rdc=true|false`: relocatable device code, for separate compilation
        /// and linking ([`crate::compile::linker`]) and for device-side launches.
        relocatable_device_code(on: bool) => options.rdc = Some(on);
    }

    /// `-lineinfo`: line information for profilers.
    pub fn lineinfo(mut self) -> Program {
        self.options.lineinfo = true;
        self
    }

    /// `-default-device`: functions without an execution-space annotation
    /// are compiled as `__device__` functions. Headers written for nvcc's
    /// device passes (CUDA's samples, some of CCCL) need it.
    pub fn default_device(mut self) -> Program {
        self.options.default_device = true;
        self
    }

    /// `-G`: device debug information (and no optimization).
    pub fn device_debug(mut self) -> Program {
        self.options.device_debug = true;
        self
    }

    /// Any other NVRTC option, passed as given, after the typed ones.
    /// Include folders given here as `-I<dir>` or `--include-path=<dir>`
    /// are covered by the cache key like [`Program::include_path`]'s.
    pub fn extra_option(mut self, option: impl Into<String>) -> Program {
        self.options.extra.push(option.into());
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
        self.options.for_target(arch, output)
    }

    /// Compiles for the explicit [`Program::arch`], with no device needed.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when no architecture was set, or when
    /// NVRTC does not support it (the message lists those it does);
    /// [`Error::InteriorNul`]; [`Error::Load`] when NVRTC cannot be loaded;
    /// [`Error::CudaHeadersNotFound`] when [`Program::cuda_headers`] found
    /// none; [`Error::Compile`] when NVRTC rejects the program or an option;
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
    /// would compute it.
    ///
    /// The key is a 128-bit FNV-1a hash
    /// ([`stable_hash`](crate::compile::cache::stable_hash), written in this
    /// crate: std's `DefaultHasher` may change between Rust releases) over
    /// length-prefixed fields: a domain tag, cudakit's version, NVRTC's
    /// version, the program's name and source, the in-memory headers (names
    /// and contents, sorted by name), a fingerprint of the files under the
    /// include paths (relative path, size and modification time of each;
    /// `-I` and `--include-path=` extra options count too), every option of
    /// every NVRTC run in order (the architecture and defines included), the
    /// name expressions, the architecture and the outputs asked for. Files
    /// reached other than through include paths (an absolute `#include`)
    /// are not covered: use [`Program::without_cache`] for such programs.
    ///
    /// Each include folder counts once (a folder given twice, or nested in
    /// another include path, is not walked twice). CUDA's own header
    /// folders ([`Program::cuda_headers`], or any include path that holds
    /// CUDA's runtime headers, `crt/` and CCCL, and its `cccl` folder) are
    /// not walked: they count by their
    /// [stamp](crate::compile::headers::CudaHeaders::stamp) (path,
    /// `CUDA_VERSION`, `CCCL_VERSION`, marker files, wheel versions). A
    /// program whose other include paths hold more than
    /// [`MAX_INCLUDE_FILES`](crate::compile::cache::MAX_INCLUDE_FILES) files bypasses the
    /// cache: its [`Compiled::cache_bypass`] says so
    /// ([`CacheBypass::TooManyIncludeFiles`]), and a line on stderr says it
    /// once per process and folder.
    ///
    /// # Errors
    ///
    /// [`Error::Load`] when NVRTC cannot be loaded; [`Error::InvalidArgument`]
    /// when the include paths hold too many files to fingerprint;
    /// [`Error::CudaHeadersNotFound`] as for a compile.
    pub fn cache_key(&self, arch: Arch, outputs: &[Output]) -> Result<CacheKey> {
        self.options.check_cuda_headers()?;
        let info = nvrtc_info()?;
        let mut set: BTreeSet<Output> = outputs.iter().copied().collect();
        if set.is_empty() {
            set.insert(Output::Cubin);
        }
        let passes = self.passes(info, arch, &set);
        self.key(info, arch, &set, &passes)
            .map_err(|bypass| Error::InvalidArgument(format!("program {}: {bypass}", self.name)))
    }

    fn compile_inner(&self, ctx: Option<&Context>, cache: Option<&Cache>) -> Result<Compiled> {
        let _nvtx = crate::nvtx::auto_with(|| format!("nvrtc {}", self.name));
        let started = Instant::now();
        let strings = ProgramStrings::new(
            &self.name,
            &self.source,
            &self.headers,
            &self.name_expressions,
        )?;
        self.options.check_nul()?;
        self.options.check_cuda_headers()?;
        let info = nvrtc_info()?;
        let device = ctx.map(|c| c.limits().compute_capability);
        let (arch, outputs) = self.target(info, device)?;
        let passes = self.passes(info, arch, &outputs);
        let (cache, mut bypass) = match (cache, &self.cache) {
            (Some(cache), _) => (Some(cache), None),
            (None, CacheChoice::Global) => (Some(Cache::global()), None),
            (None, CacheChoice::Off) => (None, Some(CacheBypass::NotAsked)),
            (None, CacheChoice::Custom(cache)) => (Some(cache), None),
        };
        let cache = match cache {
            Some(c) if !c.is_enabled() => {
                bypass = Some(CacheBypass::Disabled);
                None
            }
            other => other,
        };
        let key = match cache {
            Some(_) => match self.key(info, arch, &outputs, &passes) {
                Ok(key) => Some(key),
                Err(why) => {
                    report_bypass(&self.name, &why);
                    bypass = Some(why);
                    None
                }
            },
            None => None,
        };
        if let (Some(cache), Some(key)) = (cache, key) {
            if let Some(mut hit) = Compiled::lookup(cache, key) {
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
            bypass,
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
            compiled.store(cache, key);
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
    ///
    /// NVRTC 12.9 and newer keep a compile cache of their own (in the
    /// driver's compute cache) and, on a hit there, return an empty log:
    /// ptxas warnings and spill reports vanish. cudakit has its own cache,
    /// which keeps the log, so every pass gets `--no-cache` on those
    /// versions (unless the program's options already say it).
    fn passes(&self, info: &NvrtcInfo, arch: Arch, outputs: &BTreeSet<Output>) -> Vec<Pass> {
        let mut passes = self.passes_for(arch, outputs);
        if info.version >= (12, 9) {
            for pass in &mut passes {
                if !pass.options.iter().any(|o| o == "--no-cache") {
                    pass.options.push("--no-cache".to_owned());
                }
            }
        }
        passes
    }

    fn passes_for(&self, arch: Arch, outputs: &BTreeSet<Output>) -> Vec<Pass> {
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

    /// The cache key; why not when the include paths are too large to
    /// fingerprint (the program then bypasses the cache).
    fn key(
        &self,
        info: &NvrtcInfo,
        arch: Arch,
        outputs: &BTreeSet<Output>,
        passes: &[Pass],
    ) -> std::result::Result<CacheKey, CacheBypass> {
        let mut headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(n, c)| (n.as_str(), c.as_str()))
            .collect();
        headers.sort_unstable();
        let include_fingerprint = fingerprint_folders(
            &self.options.include_folders(),
            &self.options.cuda_header_folders(),
        )?;
        let options: Vec<&[String]> = passes.iter().map(|p| p.options.as_slice()).collect();
        let outputs: Vec<&str> = outputs.iter().map(|o| o.tag()).collect();
        let arch = arch.to_string();
        let inputs = KeyInputs {
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
        };
        Ok(inputs.key())
    }
}

/// Says once per process and folder, on stderr, that a program's include
/// paths turned its caching off; every such compile also carries the
/// reason in [`Compiled::cache_bypass`].
fn report_bypass(program: &str, why: &CacheBypass) {
    static REPORTED: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());
    let CacheBypass::TooManyIncludeFiles { folder, .. } = why else {
        return;
    };
    let mut reported = REPORTED.lock().unwrap_or_else(|e| e.into_inner());
    if reported.insert(folder.clone()) {
        eprintln!("cudakit: compile cache off for {program}: {why}");
    }
}

/// One NVRTC run of a compile: what it is for, and its options.
struct Pass {
    output: Output,
    options: Vec<String>,
}
