//! The driver's JIT linker (`cuLinkCreate_v2`, `cuLinkAddData_v2`,
//! `cuLinkAddFile_v2`, `cuLinkComplete`, `cuLinkDestroy`): several PTX,
//! CUBIN or fatbin pieces compiled with relocatable device code
//! ([`Program::relocatable_device_code`]), plus libraries such as
//! `libcudadevrt.a` (device-side launches), linked into one [`Module`].
//!
//! ```no_run
//! use cudakit::compile::linker::{LinkOptions, Linker};
//! use cudakit::compile::program::{Output, Program};
//!
//! fn main() -> cudakit::Result<()> {
//!     let ctx = cudakit::Context::new(0)?;
//!     let helper = Program::new("helper.cu", "__device__ float twice(float x) { return 2 * x; }")
//!         .relocatable_device_code(true)
//!         .output(Output::Ptx)
//!         .compile_for(&ctx)?;
//!     let main = Program::new(
//!         "main.cu",
//!         r#"__device__ float twice(float);
//!            extern "C" __global__ void k(float* x) { x[threadIdx.x] = twice(x[threadIdx.x]); }"#,
//!     )
//!     .relocatable_device_code(true)
//!     .output(Output::Ptx)
//!     .compile_for(&ctx)?;
//!     let mut linker = Linker::new(&ctx, &LinkOptions::new())?;
//!     linker.add_compiled(&helper)?.add_compiled(&main)?;
//!     let module = linker.complete()?;
//!     let _k = module.function("k")?;
//!     Ok(())
//! }
//! ```
//!
//! Errors of every step are [`Error::ModuleLoad`] naming the entry point
//! and carrying the linker's error and info logs.
//!
//! LTO-IR: the driver's linker accepts only LTO-IR made by toolkits before
//! CUDA 12.0 (`CU_JIT_INPUT_NVVM` is deprecated; with driver 580 on an
//! H200, `cuLinkAddData_v2` answers CUDA 13 LTO-IR with
//! `CUDA_ERROR_JIT_COMPILER_NOT_FOUND`). So the first LTO-IR input
//! ([`Output::LtoIr`](crate::compile::program::Output::LtoIr), NVRTC's `-dlto`) switches the link to nvJitLink
//! ([`crate::compile::nvjitlink`], loaded at run time): the inputs added
//! before it are handed to nvJitLink again (the linker keeps a copy of
//! each), every later input goes there too, and [`Linker::complete`] loads
//! nvJitLink's CUBIN. Links without LTO-IR stay with the driver. When
//! nvJitLink cannot be loaded, the LTO-IR input is refused with
//! [`Error::JitLinkUnavailable`] naming it.
//!
//! Device-side launches (dynamic parallelism): compile with
//! [`Program::relocatable_device_code`] and link with the preset
//! [`Linker::with_device_runtime`], which adds `libcudadevrt.a`
//! ([`crate::compile::devrt`]).
//!
//! [`Program::relocatable_device_code`]: crate::compile::program::Program::relocatable_device_code
//! [`Output::Ptx`]: crate::compile::program::Output::Ptx
//! [`Output::Cubin`]: crate::compile::program::Output::Cubin

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{c_uint, c_void};
use std::fmt;
use std::panic::Location;
use std::path::{Path, PathBuf};
use std::ptr;

use cuda_sys::{CUjitInputType, CUjit_option, CUlinkState};

use crate::compile::c_string;
use crate::compile::devrt::device_runtime_path;
use crate::compile::module::{
    jit_error, join_logs, load_image, log_text, prepare_image, Aligned, ImageKind, Module,
    JIT_LOG_BYTES,
};
use crate::compile::nvjitlink::{self, JitLink, JitLinkInput};
use crate::compile::program::Arch;
use crate::compile::program::Compiled;
use crate::context::arena::AllocKind;
use crate::context::Context;
use crate::error::{Error, Result};

/// Options of a link (`cuLinkCreate_v2`'s JIT options). A builder.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LinkOptions {
    max_registers: Option<u32>,
    optimization_level: Option<u32>,
    debug_info: bool,
    line_info: bool,
    quiet: bool,
    lto: bool,
}

impl LinkOptions {
    /// The defaults: the driver's optimization level, verbose info log.
    pub fn new() -> LinkOptions {
        LinkOptions::default()
    }

    builder_setters! {
        LinkOptions;
        /// `CU_JIT_MAX_REGISTERS`: at most `n` registers per thread.
        max_registers(n: u32) => max_registers = Some(n);
        /// `CU_JIT_OPTIMIZATION_LEVEL`: 0 to 4 (4, the default, is the highest).
        optimization_level(level: u32) => optimization_level = Some(level);
        /// `CU_JIT_GENERATE_DEBUG_INFO`.
        debug_info(on: bool) => debug_info = on;
        /// `CU_JIT_GENERATE_LINE_INFO`.
        line_info(on: bool) => line_info = on;
        /// Turns off `CU_JIT_LOG_VERBOSE` (on by default: the info log reports
        /// registers and spills of every kernel).
        quiet(on: bool) => quiet = on;
        /// `CU_JIT_LTO` (deprecated by CUDA 12): link-time optimization of
        /// pre-12.0 LTO-IR inputs.
        lto(on: bool) => lto = on;
    }
}

/// What a linker input is (`CUjitInputType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LinkInput {
    /// PTX text (`CU_JIT_INPUT_PTX`).
    Ptx,
    /// A CUBIN (`CU_JIT_INPUT_CUBIN`).
    Cubin,
    /// A fatbin (`CU_JIT_INPUT_FATBINARY`).
    Fatbin,
    /// A host object with embedded device code (`CU_JIT_INPUT_OBJECT`).
    Object,
    /// An archive of such objects, e.g. `libcudadevrt.a`
    /// (`CU_JIT_INPUT_LIBRARY`).
    Library,
    /// LTO-IR (NVRTC's `-dlto`): linked by nvJitLink (see the
    /// [module](self) docs).
    LtoIr,
}

impl LinkInput {
    fn raw(self) -> CUjitInputType {
        match self {
            LinkInput::Ptx => CUjitInputType::CU_JIT_INPUT_PTX,
            LinkInput::Cubin => CUjitInputType::CU_JIT_INPUT_CUBIN,
            LinkInput::Fatbin => CUjitInputType::CU_JIT_INPUT_FATBINARY,
            LinkInput::Object => CUjitInputType::CU_JIT_INPUT_OBJECT,
            LinkInput::Library => CUjitInputType::CU_JIT_INPUT_LIBRARY,
            LinkInput::LtoIr => CUjitInputType::CU_JIT_INPUT_NVVM,
        }
    }

    fn jitlink(self) -> JitLinkInput {
        match self {
            LinkInput::Ptx => JitLinkInput::Ptx,
            LinkInput::Cubin => JitLinkInput::Cubin,
            LinkInput::Fatbin => JitLinkInput::Fatbin,
            LinkInput::Object => JitLinkInput::Object,
            LinkInput::Library => JitLinkInput::Library,
            LinkInput::LtoIr => JitLinkInput::LtoIr,
        }
    }
}

/// An input the linker keeps, to hand it to nvJitLink should the link
/// switch there.
#[derive(Debug, Clone)]
enum Kept {
    Data(LinkInput, String, Vec<u8>),
    File(LinkInput, PathBuf),
}

/// The nvJitLink options equivalent to the driver link's.
fn jitlink_options(options: &LinkOptions) -> Vec<String> {
    let mut out = vec!["-lto".to_owned()];
    if let Some(n) = options.max_registers {
        out.push(format!("-maxrregcount={n}"));
    }
    // nvJitLink accepts only -O0 and -O3 (nvJitLink.h): levels 1 to 4,
    // which the driver linker takes, become -O3.
    if let Some(level) = options.optimization_level {
        out.push(if level == 0 { "-O0" } else { "-O3" }.to_owned());
    }
    if options.debug_info {
        out.push("-g".to_owned());
    }
    if options.line_info {
        out.push("-lineinfo".to_owned());
    }
    if !options.quiet {
        out.push("-verbose".to_owned());
    }
    out
}

/// A heap array handed to the driver for the life of a link state. Held as
/// a raw pointer (no Rust reference exists while the driver writes it), and
/// freed on drop.
struct DriverArray<T> {
    ptr: *mut T,
    len: usize,
}

impl<T> DriverArray<T> {
    fn new(items: Vec<T>) -> DriverArray<T> {
        let boxed = items.into_boxed_slice();
        let len = boxed.len();
        DriverArray {
            ptr: Box::into_raw(boxed).cast::<T>(),
            len,
        }
    }

    /// Reads element `i`.
    fn get(&self, i: usize) -> T
    where
        T: Copy,
    {
        assert!(i < self.len);
        // SAFETY: `i` is in bounds of the live allocation; no reference to
        // it exists, and the driver writes it only during our calls.
        unsafe { self.ptr.add(i).read() }
    }
}

impl DriverArray<u8> {
    /// The log text now in the buffer, up to `written` bytes and the first NUL.
    fn text(&self, written: usize) -> String {
        // SAFETY: the allocation holds `len` initialized bytes (zeroed at
        // creation), and the driver is not writing it now: it writes only
        // inside the linker's own driver calls (`add*`, and `finish`, called
        // by `complete*`), and `Linker` is not `Sync`, so none of those runs
        // during this read.
        let bytes = unsafe { std::slice::from_raw_parts(self.ptr, self.len) };
        log_text(bytes, written)
    }
}

impl<T> Drop for DriverArray<T> {
    fn drop(&mut self) {
        // SAFETY: `ptr` and `len` came from `Box::into_raw` of a boxed slice
        // of `len` elements, freed only here.
        drop(unsafe { Box::from_raw(ptr::slice_from_raw_parts_mut(self.ptr, self.len)) });
    }
}

/// A pending link (`cuLinkCreate_v2`), destroyed on drop (`cuLinkDestroy`).
/// Its log buffers and option arrays live as long as it, recorded in the
/// context's arena as host storage.
pub struct Linker<'c> {
    ctx: &'c Context,
    state: CUlinkState,
    error_log: DriverArray<u8>,
    info_log: DriverArray<u8>,
    _options: DriverArray<CUjit_option>,
    values: DriverArray<*mut c_void>,
    arena_id: u64,
    lowered: BTreeMap<String, String>,
    inputs: Vec<String>,
    options: LinkOptions,
    kept: Vec<Kept>,
    jit: Option<JitLink>,
    /// The kernels of the PTX inputs that use dynamic parallelism; `None`
    /// once an input of unknown code (not PTX, with no PTX beside it) was
    /// added. The device runtime library adds no kernels.
    launching: Option<BTreeSet<String>>,
}

// SAFETY: `Linker` is not `Sync` (raw pointers), so the link state and the
// buffers the driver writes are used by one thread at a time, whether
// through `&self` (the logs), `&mut self` (`add*`), by value (`complete*`)
// or in drop; the driver API is thread-safe and every call makes the
// context current first.
unsafe impl Send for Linker<'_> {}

impl fmt::Debug for Linker<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Linker")
            .field("state", &self.state)
            .field("inputs", &self.inputs)
            .field("nvjitlink", &self.jit.is_some())
            .finish()
    }
}

/// Slots of the log options in every link's option arrays.
const ERROR_SIZE_SLOT: usize = 1;
const INFO_SIZE_SLOT: usize = 3;

impl<'c> Linker<'c> {
    /// Starts a link in `ctx` (`cuLinkCreate_v2`) with error and info log
    /// buffers of 64 KiB each.
    ///
    /// # Errors
    ///
    /// [`Error::ModuleLoad`] when the driver refuses the options;
    /// [`Error::ContextPoisoned`].
    #[track_caller]
    pub fn new(ctx: &'c Context, options: &LinkOptions) -> Result<Linker<'c>> {
        let location = Location::caller();
        let cu = ctx.enter()?;
        let error_log = DriverArray::new(vec![0u8; JIT_LOG_BYTES]);
        let info_log = DriverArray::new(vec![0u8; JIT_LOG_BYTES]);
        // Option values sit in pointer-sized slots: buffers as pointers,
        // integers cast to pointers.
        let mut pairs: Vec<(CUjit_option, *mut c_void)> = vec![
            (CUjit_option::CU_JIT_ERROR_LOG_BUFFER, error_log.ptr.cast()),
            (
                CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                JIT_LOG_BYTES as *mut c_void,
            ),
            (CUjit_option::CU_JIT_INFO_LOG_BUFFER, info_log.ptr.cast()),
            (
                CUjit_option::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                JIT_LOG_BYTES as *mut c_void,
            ),
            (
                CUjit_option::CU_JIT_LOG_VERBOSE,
                usize::from(!options.quiet) as *mut c_void,
            ),
        ];
        if let Some(n) = options.max_registers {
            pairs.push((
                CUjit_option::CU_JIT_MAX_REGISTERS,
                n as usize as *mut c_void,
            ));
        }
        if let Some(level) = options.optimization_level {
            pairs.push((
                CUjit_option::CU_JIT_OPTIMIZATION_LEVEL,
                level as usize as *mut c_void,
            ));
        }
        if options.debug_info {
            pairs.push((
                CUjit_option::CU_JIT_GENERATE_DEBUG_INFO,
                1usize as *mut c_void,
            ));
        }
        if options.line_info {
            pairs.push((
                CUjit_option::CU_JIT_GENERATE_LINE_INFO,
                1usize as *mut c_void,
            ));
        }
        if options.lto {
            pairs.push((CUjit_option::CU_JIT_LTO, 1usize as *mut c_void));
        }
        let count = pairs.len();
        let option_array = DriverArray::new(pairs.iter().map(|p| p.0).collect());
        let values = DriverArray::new(pairs.iter().map(|p| p.1).collect());
        let storage = 2 * JIT_LOG_BYTES
            + count * (std::mem::size_of::<CUjit_option>() + std::mem::size_of::<*mut c_void>());
        let mut state: CUlinkState = ptr::null_mut();
        // SAFETY: `count` options and values; the log buffers have the sizes
        // their size slots say; all four arrays stay allocated (and are not
        // referenced by Rust) for the life of the link state, as the driver
        // requires for output options; a valid out-pointer; the context is
        // current.
        let rc =
            unsafe { (cu.cuLinkCreate)(count as c_uint, option_array.ptr, values.ptr, &mut state) };
        jit_error(ctx, "cuLinkCreate_v2", rc, || {
            join_logs(
                &error_log.text(JIT_LOG_BYTES),
                &info_log.text(JIT_LOG_BYTES),
            )
        })?;
        let arena_id = ctx
            .arena()
            .record_alloc(AllocKind::HostStorage, storage, location);
        Ok(Linker {
            ctx,
            state,
            error_log,
            info_log,
            _options: option_array,
            values,
            arena_id,
            lowered: BTreeMap::new(),
            inputs: Vec::new(),
            options: options.clone(),
            kept: Vec::new(),
            jit: None,
            launching: Some(BTreeSet::new()),
        })
    }

    /// The preset for device-side launches: a link in `ctx` with the device
    /// runtime, `libcudadevrt.a`, already added (found by
    /// [`device_runtime_path`]). Add programs compiled with
    /// [`Program::relocatable_device_code`](crate::compile::program::Program::relocatable_device_code)`(true)`,
    /// then [`Linker::complete`].
    ///
    /// # Errors
    ///
    /// [`Error::DeviceRuntimeNotFound`] listing where it looked; as
    /// [`Linker::new`] and [`Linker::add_file`].
    #[track_caller]
    pub fn with_device_runtime(ctx: &'c Context, options: &LinkOptions) -> Result<Linker<'c>> {
        let mut linker = Linker::new(ctx, options)?;
        linker.add_device_runtime()?;
        Ok(linker)
    }

    /// Whether the link has switched to nvJitLink (an LTO-IR input was
    /// added).
    pub fn uses_nvjitlink(&self) -> bool {
        self.jit.is_some()
    }

    /// Switches the link to nvJitLink for `input` (LTO-IR), handing it
    /// every input kept so far.
    fn switch_to_nvjitlink(&mut self, input: &str) -> Result<()> {
        let api = nvjitlink::load_for(input, "LTO-IR")?;
        let (major, minor) = self.ctx.limits().compute_capability;
        let arch = Arch::Sm(major * 10 + minor);
        let options = jitlink_options(&self.options);
        let refs: Vec<&str> = options.iter().map(String::as_str).collect();
        let mut jit = JitLink::with_api(api, arch, &refs)?;
        for kept in &self.kept {
            match kept {
                Kept::Data(kind, name, data) => jit.add(kind.jitlink(), name, data)?,
                Kept::File(kind, path) => jit.add_file(kind.jitlink(), path)?,
            };
        }
        self.kept.clear();
        self.jit = Some(jit);
        Ok(())
    }

    /// The context.
    pub fn context(&self) -> &'c Context {
        self.ctx
    }

    /// The inputs added so far, by name.
    pub fn inputs(&self) -> &[String] {
        &self.inputs
    }

    /// The error and info logs so far.
    fn logs(&self) -> String {
        let written = |slot: usize| self.values.get(slot) as usize;
        join_logs(
            &self.error_log.text(written(ERROR_SIZE_SLOT)),
            &self.info_log.text(written(INFO_SIZE_SLOT)),
        )
    }

    /// The info log so far (verbose by default).
    pub fn info_log(&self) -> String {
        self.info_log.text(self.values.get(INFO_SIZE_SLOT) as usize)
    }

    /// Adds an input from memory (`cuLinkAddData_v2`). PTX gets its NUL;
    /// CUBIN and fatbin are checked as by
    /// [`Context::load_module_image`](crate::Context::load_module_image).
    /// `name` labels the input in the logs.
    ///
    /// # Errors
    ///
    /// [`Error::ModuleLoad`] with the logs when the driver rejects the
    /// input; [`Error::ZeroLength`], [`Error::InteriorNul`],
    /// [`Error::InvalidArgument`] for malformed inputs;
    /// [`Error::ContextPoisoned`].
    pub fn add(&mut self, kind: LinkInput, name: &str, data: &[u8]) -> Result<&mut Self> {
        let code = match kind {
            LinkInput::Ptx => crate::compile::module::launching_of(data),
            _ => None,
        };
        self.add_code(kind, name, data, code)
    }

    /// [`Linker::add`], with what is known of the input's kernels that use
    /// dynamic parallelism (`None`: unknown).
    fn add_code(
        &mut self,
        kind: LinkInput,
        name: &str,
        data: &[u8],
        launching: Option<BTreeSet<String>>,
    ) -> Result<&mut Self> {
        self.note_launching(launching);
        let name_c = c_string(name, "link input name")?;
        if data.is_empty() {
            return Err(Error::ZeroLength { what: "link input" });
        }
        if self.jit.is_none() && kind == LinkInput::LtoIr {
            self.switch_to_nvjitlink(name)?;
        }
        if let Some(jit) = self.jit.as_mut() {
            jit.add(kind.jitlink(), name, data)?;
            self.inputs.push(name.to_owned());
            return Ok(self);
        }
        let input: Aligned<'_> = match kind {
            LinkInput::Ptx | LinkInput::Cubin | LinkInput::Fatbin => {
                let prepared = prepare_image(data)?;
                let expected = match kind {
                    LinkInput::Ptx => ImageKind::Ptx,
                    LinkInput::Cubin => ImageKind::Cubin,
                    _ => ImageKind::Fatbin,
                };
                if prepared.kind != expected {
                    return Err(Error::InvalidArgument(format!(
                        "link input {name}: given as {kind:?}, but the bytes are {:?}",
                        prepared.kind
                    )));
                }
                prepared.bytes
            }
            LinkInput::Object | LinkInput::Library | LinkInput::LtoIr => Aligned::new(data),
        };
        let cu = self.ctx.enter()?;
        // SAFETY: a live link state; `input.as_ptr()` addresses
        // `input.len()` readable bytes of the input, alive for the call
        // (the driver keeps no reference after it); a C string name; no
        // per-input options; the context is current.
        let rc = unsafe {
            (cu.cuLinkAddData)(
                self.state,
                kind.raw(),
                input.as_ptr().cast_mut(),
                input.len(),
                name_c.as_ptr(),
                0,
                ptr::null_mut(),
                ptr::null_mut(),
            )
        };
        jit_error(self.ctx, "cuLinkAddData_v2", rc, || {
            format!("input {name} ({kind:?}):\n{}", self.logs())
        })?;
        self.inputs.push(name.to_owned());
        self.kept
            .push(Kept::Data(kind, name.to_owned(), data.to_vec()));
        Ok(self)
    }

    /// Adds PTX text.
    ///
    /// # Errors
    ///
    /// As [`Linker::add`].
    pub fn add_ptx(&mut self, name: &str, ptx: &str) -> Result<&mut Self> {
        self.add(LinkInput::Ptx, name, ptx.as_bytes())
    }

    /// Adds a CUBIN.
    ///
    /// # Errors
    ///
    /// As [`Linker::add`].
    pub fn add_cubin(&mut self, name: &str, cubin: &[u8]) -> Result<&mut Self> {
        self.add(LinkInput::Cubin, name, cubin)
    }

    /// Adds a fatbin.
    ///
    /// # Errors
    ///
    /// As [`Linker::add`].
    pub fn add_fatbin(&mut self, name: &str, fatbin: &[u8]) -> Result<&mut Self> {
        self.add(LinkInput::Fatbin, name, fatbin)
    }

    /// Adds LTO-IR, switching the link to nvJitLink (see the [module](self)
    /// docs).
    ///
    /// # Errors
    ///
    /// [`Error::JitLinkUnavailable`] naming `name` when nvJitLink cannot be
    /// loaded; [`Error::JitLink`] with nvJitLink's logs; as [`Linker::add`].
    pub fn add_lto_ir(&mut self, name: &str, lto_ir: &[u8]) -> Result<&mut Self> {
        self.add(LinkInput::LtoIr, name, lto_ir)
    }

    /// Adds a compiled program: its CUBIN when it has one, else its PTX,
    /// else its LTO-IR; its name expressions carry over to the linked
    /// module.
    ///
    /// # Errors
    ///
    /// As [`Linker::add`].
    pub fn add_compiled(&mut self, compiled: &Compiled) -> Result<&mut Self> {
        let name = compiled.program().to_owned();
        match (compiled.cubin(), compiled.ptx(), compiled.lto_ir()) {
            (Some(cubin), ptx, _) => self.add_code(
                LinkInput::Cubin,
                &name,
                cubin,
                ptx.and_then(|p| crate::compile::module::launching_of(p.as_bytes())),
            )?,
            (None, Some(ptx), _) => self.add(LinkInput::Ptx, &name, ptx.as_bytes())?,
            (None, None, Some(lto)) => self.add(LinkInput::LtoIr, &name, lto)?,
            (None, None, None) => {
                return Err(Error::InvalidArgument(format!(
                    "program {name} holds no code to link"
                )))
            }
        };
        self.lowered.extend(
            compiled
                .lowered_names()
                .iter()
                .map(|(k, v)| (k.clone(), v.clone())),
        );
        Ok(self)
    }

    /// Adds a file (`cuLinkAddFile_v2`).
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the file does not exist; [`Error::InteriorNul`];
    /// [`Error::ModuleLoad`] with the logs when the driver rejects it;
    /// [`Error::ContextPoisoned`].
    pub fn add_file(&mut self, kind: LinkInput, path: impl AsRef<Path>) -> Result<&mut Self> {
        let path = path.as_ref();
        if !path.is_file() {
            return Err(Error::Io {
                path: path.display().to_string(),
                message: "no such file".to_owned(),
            });
        }
        let display = path.display().to_string();
        if kind != LinkInput::Library {
            // A file's kernels are not read here; a library (the device
            // runtime, say) brings none of the program's.
            self.note_launching(None);
        }
        if let Some(jit) = self.jit.as_mut() {
            jit.add_file(kind.jitlink(), path)?;
            self.inputs.push(display);
            return Ok(self);
        }
        let path_c = c_string(path.as_os_str().as_encoded_bytes(), "link input path")?;
        let cu = self.ctx.enter()?;
        // SAFETY: a live link state; a C string path; no per-input options;
        // the context is current.
        let rc = unsafe {
            (cu.cuLinkAddFile)(
                self.state,
                kind.raw(),
                path_c.as_ptr(),
                0,
                ptr::null_mut(),
                ptr::null_mut(),
            )
        };
        jit_error(self.ctx, "cuLinkAddFile_v2", rc, || {
            format!("input {display} ({kind:?}):\n{}", self.logs())
        })?;
        self.inputs.push(display);
        self.kept.push(Kept::File(kind, path.to_path_buf()));
        Ok(self)
    }

    /// Adds a static library of device code (`CU_JIT_INPUT_LIBRARY`).
    ///
    /// # Errors
    ///
    /// As [`Linker::add_file`].
    pub fn add_library_file(&mut self, path: impl AsRef<Path>) -> Result<&mut Self> {
        self.add_file(LinkInput::Library, path)
    }

    /// Merges what an input's code shows of dynamic parallelism.
    fn note_launching(&mut self, launching: Option<BTreeSet<String>>) {
        match (self.launching.as_mut(), launching) {
            (Some(all), Some(more)) => all.extend(more),
            _ => self.launching = None,
        }
    }

    /// Adds the device runtime, `libcudadevrt.a`, which device-side kernel
    /// launches (dynamic parallelism) need; found by [`device_runtime_path`].
    ///
    /// # Errors
    ///
    /// [`Error::DeviceRuntimeNotFound`] listing where it looked; as
    /// [`Linker::add_file`].
    pub fn add_device_runtime(&mut self) -> Result<&mut Self> {
        let path = device_runtime_path()?;
        self.add_library_file(path)
    }

    /// The former name of [`Linker::add_device_runtime`].
    ///
    /// # Errors
    ///
    /// As [`Linker::add_device_runtime`].
    pub fn add_cudadevrt(&mut self) -> Result<&mut Self> {
        self.add_device_runtime()
    }

    /// Finishes the link (`cuLinkComplete`) and loads the linked CUBIN into
    /// the context (`cuModuleLoadData`; see [`Context::load_module_image`]). The module knows the name
    /// expressions of the programs added with [`Linker::add_compiled`].
    ///
    /// # Errors
    ///
    /// [`Error::ModuleLoad`] with the logs (unresolved symbols, ...);
    /// [`Error::ContextPoisoned`].
    pub fn complete(mut self) -> Result<Module<'c>> {
        if let Some(jit) = self.jit.take() {
            let (cubin, mut info) = jit.complete_with_log()?;
            let image = prepare_image(&cubin)?;
            let (raw, load_log) = load_image(self.ctx, &image)?;
            if !load_log.is_empty() {
                if !info.is_empty() {
                    info.push('\n');
                }
                info.push_str(&load_log);
            }
            let lowered = std::mem::take(&mut self.lowered);
            let launching = self.launching.take();
            return Ok(Module::from_parts(self.ctx, raw, lowered, info, launching));
        }
        let (cubin, size) = self.finish()?;
        // SAFETY: cuLinkComplete returned a CUBIN of `size` bytes owned by
        // the link state, which lives until `self` drops, after the load.
        let bytes = unsafe { std::slice::from_raw_parts(cubin.cast::<u8>(), size) };
        let image = prepare_image(bytes)?;
        let (raw, load_log) = load_image(self.ctx, &image)?;
        let mut info = self.info_log();
        if !load_log.is_empty() {
            if !info.is_empty() {
                info.push('\n');
            }
            info.push_str(&load_log);
        }
        let lowered = std::mem::take(&mut self.lowered);
        let launching = self.launching.take();
        Ok(Module::from_parts(self.ctx, raw, lowered, info, launching))
    }

    /// Finishes the link (`cuLinkComplete`) and returns a copy of the
    /// linked CUBIN, to store or to load later with
    /// [`Context::load_module_image`](crate::Context::load_module_image).
    ///
    /// # Errors
    ///
    /// As [`Linker::complete`].
    pub fn complete_image(mut self) -> Result<Vec<u8>> {
        if let Some(jit) = self.jit.take() {
            return jit.complete();
        }
        let (cubin, size) = self.finish()?;
        // SAFETY: as in `complete`: `size` bytes owned by the live link state.
        Ok(unsafe { std::slice::from_raw_parts(cubin.cast::<u8>(), size) }.to_vec())
    }

    fn finish(&self) -> Result<(*mut c_void, usize)> {
        let cu = self.ctx.enter()?;
        let mut cubin: *mut c_void = ptr::null_mut();
        let mut size = 0usize;
        // SAFETY: a live link state and valid out-pointers; the context is
        // current.
        let rc = unsafe { (cu.cuLinkComplete)(self.state, &mut cubin, &mut size) };
        jit_error(self.ctx, "cuLinkComplete", rc, || self.logs())?;
        if cubin.is_null() || size == 0 {
            return Err(Error::ModuleLoad {
                call: "cuLinkComplete",
                code: crate::error::DriverCode::InvalidImage,
                log: format!("the linker produced no image\n{}", self.logs()),
            });
        }
        Ok((cubin, size))
    }
}

impl Drop for Linker<'_> {
    fn drop(&mut self) {
        if let Some(cu) = self.ctx.enter_for_drop() {
            // SAFETY: destroys the link state created in `new`, once; the
            // buffers it writes are freed only after this (fields drop after
            // this body).
            let rc = unsafe { (cu.cuLinkDestroy)(self.state) };
            self.ctx.record_drop_error("cuLinkDestroy", rc);
        }
        self.ctx.arena().record_free(self.arena_id);
    }
}

/// The former name of [`device_runtime_path`].
pub use crate::compile::devrt::device_runtime_path as cudadevrt_path;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvjitlink_gets_the_equivalent_options() {
        let o = LinkOptions::new()
            .max_registers(64)
            .optimization_level(2)
            .line_info(true);
        assert_eq!(
            jitlink_options(&o),
            ["-lto", "-maxrregcount=64", "-O3", "-lineinfo", "-verbose"]
        );
        assert_eq!(
            jitlink_options(&LinkOptions::new().quiet(true).debug_info(true)),
            ["-lto", "-g"]
        );
        assert_eq!(LinkInput::LtoIr.jitlink(), JitLinkInput::LtoIr);
        assert_eq!(LinkInput::Library.jitlink(), JitLinkInput::Library);
    }

    #[test]
    fn link_options_build() {
        let o = LinkOptions::new()
            .max_registers(32)
            .optimization_level(3)
            .line_info(true)
            .quiet(true);
        assert_eq!(o.max_registers, Some(32));
        assert_eq!(o.optimization_level, Some(3));
        assert!(o.line_info && o.quiet && !o.debug_info && !o.lto);
    }
}
