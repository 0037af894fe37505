//! Modules: PTX, CUBIN or fatbin images loaded into a context, their
//! functions (kernels) and their `__device__`/`__constant__` globals.
//!
//! A [`Module`] keeps the name-expression map of the program it came from,
//! so that [`Module::function`] takes what the source says
//! (`"scale<float>"`, `"ns::gemm<128, 64>"`, `"&kernel"`) as well as an
//! `extern "C"` name or a lowered name; a name that is none of these is
//! [`Error::UnknownFunction`] listing the names the module knows, never the
//! bare "named symbol not found".
//!
//! PTX and fatbins are loaded with `cuModuleLoadDataEx` and the JIT's error
//! and info logs, so a PTX the driver rejects is [`Error::ModuleLoad`] with
//! the reason. A CUBIN needs no JIT: it is loaded with `cuModuleLoadData`,
//! and only a refused one is loaded again with the logs, for the reason. Functions and globals borrow their module, so it cannot be
//! unloaded (`cuModuleUnload`, on drop) while one is alive:
//!
//! ```compile_fail,E0597
//! # fn main() -> cudakit::Result<()> {
//! let ctx = cudakit::Context::new(0)?;
//! let f = {
//!     let module = ctx.load_module_file("k.cubin")?;
//!     module.function("k")?
//! }; // error: `module` does not live long enough
//! # drop(f); Ok(()) }
//! ```

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::fmt;
use std::marker::PhantomData;
use std::path::Path;
use std::ptr;
use std::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Instant;

use once_cell::sync::OnceCell;

use cuda_sys::{
    CUdeviceptr, CUfunction, CUfunction_attribute as Attr, CUjit_option, CUmodule, CUresult,
};

use crate::compile::c_string;
use crate::compile::program::{resolve_name, Compiled};
use crate::compile::signature::ptx::{dynamic_parallelism_entries, read_entries, PtxEntry};
use crate::compile::signature::{demangle, parse_declared, KernelSignature};
use crate::context::Context;
use crate::driver::optional;
use crate::error::{DriverCode, Error, LaunchConfigError, Result};
use crate::memory::transfer::copy;
use crate::memory::{DeviceCopy, DevicePtr};
use crate::work::launch::params::FitCache;

/// Bytes of each JIT log buffer.
pub(crate) const JIT_LOG_BYTES: usize = 64 * 1024;

/// What an image holds, by its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ImageKind {
    /// An ELF CUBIN (`\x7fELF`).
    Cubin,
    /// A fatbin (magic `0xBA55ED50`).
    Fatbin,
    /// PTX text (anything else).
    Ptx,
}

const FATBIN_MAGIC: u32 = 0xBA55_ED50;

impl ImageKind {
    /// The kind of `image`, by its magic number.
    pub fn of(image: &[u8]) -> ImageKind {
        if image.starts_with(b"\x7fELF") {
            ImageKind::Cubin
        } else if image.len() >= 4
            && u32::from_le_bytes([image[0], image[1], image[2], image[3]]) == FATBIN_MAGIC
        {
            ImageKind::Fatbin
        } else {
            ImageKind::Ptx
        }
    }
}

/// Bytes for the driver, at an 8-byte-aligned address when asked: binary
/// images and linker inputs are read as words.
pub(crate) struct Aligned<'a> {
    pub(crate) bytes: Cow<'a, [u8]>,
    /// A copy of `bytes` in aligned storage, when they were not aligned;
    /// else empty.
    words: Vec<u64>,
}

impl<'a> Aligned<'a> {
    /// `bytes` where they are, aligned or not (text).
    fn as_is(bytes: Cow<'a, [u8]>) -> Aligned<'a> {
        Aligned {
            bytes,
            words: Vec::new(),
        }
    }

    /// `bytes` at an 8-byte-aligned address: where they are when they
    /// already are aligned, else copied into words.
    pub(crate) fn new(bytes: &'a [u8]) -> Aligned<'a> {
        let words = if bytes.as_ptr().align_offset(8) == 0 {
            Vec::new()
        } else {
            let mut words = vec![0u64; bytes.len().div_ceil(8)];
            // SAFETY: `words` has at least `bytes.len()` bytes, and the two
            // allocations do not overlap.
            unsafe {
                ptr::copy_nonoverlapping(
                    bytes.as_ptr(),
                    words.as_mut_ptr().cast::<u8>(),
                    bytes.len(),
                )
            };
            words
        };
        Aligned {
            bytes: Cow::Borrowed(bytes),
            words,
        }
    }

    /// Where the driver reads: the aligned copy when there is one.
    pub(crate) fn as_ptr(&self) -> *const c_void {
        if self.words.is_empty() {
            self.bytes.as_ptr().cast()
        } else {
            self.words.as_ptr().cast()
        }
    }

    /// Bytes handed to the driver.
    pub(crate) fn len(&self) -> usize {
        self.bytes.len()
    }
}

/// An image ready for the driver: PTX NUL-terminated, binaries 8-byte
/// aligned, and binaries' declared extents checked to lie inside the bytes
/// (so the driver never reads past them).
pub(crate) struct Image<'a> {
    pub(crate) bytes: Aligned<'a>,
    pub(crate) kind: ImageKind,
}

impl Image<'_> {
    /// Where the driver reads.
    pub(crate) fn as_ptr(&self) -> *const c_void {
        self.bytes.as_ptr()
    }

    /// Bytes handed to the driver (with the NUL of PTX).
    pub(crate) fn len(&self) -> usize {
        self.bytes.len()
    }
}

/// Checks and prepares `bytes` for `cuModuleLoadDataEx` or `cuLinkAddData`.
pub(crate) fn prepare_image(bytes: &[u8]) -> Result<Image<'_>> {
    if bytes.is_empty() {
        return Err(Error::ZeroLength {
            what: "module image",
        });
    }
    let kind = ImageKind::of(bytes);
    match kind {
        ImageKind::Ptx => {
            let text = match bytes.iter().position(|&b| b == 0) {
                None => {
                    let mut owned = Vec::with_capacity(bytes.len() + 1);
                    owned.extend_from_slice(bytes);
                    owned.push(0);
                    Cow::Owned(owned)
                }
                Some(nul) if bytes[nul..].iter().all(|&b| b == 0) => Cow::Borrowed(&bytes[..=nul]),
                Some(_) => return Err(Error::InteriorNul { what: "PTX image" }),
            };
            Ok(Image {
                bytes: Aligned::as_is(text),
                kind,
            })
        }
        ImageKind::Cubin | ImageKind::Fatbin => {
            let extent = match kind {
                ImageKind::Cubin => elf_extent(bytes),
                _ => fatbin_extent(bytes),
            }
            .map_err(|reason| {
                Error::InvalidArgument(format!("the {kind:?} image is malformed: {reason}"))
            })?;
            debug_assert!(extent <= bytes.len());
            Ok(Image {
                bytes: Aligned::new(bytes),
                kind,
            })
        }
    }
}

fn read_u16(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from(u16::from_le_bytes(
        b.get(at..at + 2)?.try_into().ok()?,
    )))
}

fn read_u32(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from(u32::from_le_bytes(
        b.get(at..at + 4)?.try_into().ok()?,
    )))
}

fn read_u64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// The bytes an ELF64 little-endian image declares (headers, program and
/// section header tables, every section with contents), checked against
/// its length.
fn elf_extent(b: &[u8]) -> std::result::Result<usize, String> {
    let len = b.len() as u64;
    if b.len() < 64 {
        return Err(format!("{} bytes is shorter than an ELF64 header", b.len()));
    }
    if b[4] != 2 || b[5] != 1 {
        return Err("not a 64-bit little-endian ELF".to_owned());
    }
    let field = |v: Option<u64>| v.ok_or_else(|| "truncated ELF header".to_owned());
    let phoff = field(read_u64(b, 0x20))?;
    let shoff = field(read_u64(b, 0x28))?;
    let phentsize = field(read_u16(b, 0x36))?;
    let phnum = field(read_u16(b, 0x38))?;
    let shentsize = field(read_u16(b, 0x3A))?;
    let shnum = field(read_u16(b, 0x3C))?;
    let end = |off: u64, size: u64| off.checked_add(size).filter(|&e| e <= len);
    let mut extent = 64u64;
    if phnum > 0 {
        extent = extent.max(
            end(phoff, phentsize * phnum)
                .ok_or_else(|| "the program header table lies past the end".to_owned())?,
        );
    }
    if shnum > 0 {
        if shentsize < 64 {
            return Err("section header entries are too small".to_owned());
        }
        extent = extent.max(
            end(shoff, shentsize * shnum)
                .ok_or_else(|| "the section header table lies past the end".to_owned())?,
        );
        for i in 0..shnum {
            let at = usize::try_from(shoff + i * shentsize).map_err(|e| e.to_string())?;
            let kind = field(read_u32(b, at + 4))?;
            let offset = field(read_u64(b, at + 0x18))?;
            let size = field(read_u64(b, at + 0x20))?;
            const SHT_NOBITS: u64 = 8;
            if kind != SHT_NOBITS && size > 0 {
                extent = extent.max(
                    end(offset, size).ok_or_else(|| format!("section {i} lies past the end"))?,
                );
            }
        }
    }
    usize::try_from(extent).map_err(|e| e.to_string())
}

/// The bytes a fatbin declares (`fatBinaryHeader`: magic, version,
/// header size, fat size), checked against its length.
fn fatbin_extent(b: &[u8]) -> std::result::Result<usize, String> {
    let header = read_u16(b, 6).ok_or("truncated fatbin header")?;
    let size = read_u64(b, 8).ok_or("truncated fatbin header")?;
    if header < 16 {
        return Err("fatbin header size is below 16".to_owned());
    }
    header
        .checked_add(size)
        .filter(|&e| e <= b.len() as u64)
        .and_then(|e| usize::try_from(e).ok())
        .ok_or_else(|| {
            format!(
                "the fatbin declares {} bytes, the image has {}",
                header + size,
                b.len()
            )
        })
}

/// Reads a JIT log buffer: up to the bytes the driver reports writing and
/// the first NUL.
pub(crate) fn log_text(buffer: &[u8], written: usize) -> String {
    let bytes = &buffer[..written.min(buffer.len())];
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).trim_end().to_owned()
}

/// The error and info logs as one text for an error.
pub(crate) fn join_logs(error: &str, info: &str) -> String {
    match (error.is_empty(), info.is_empty()) {
        (true, true) => "(the JIT wrote no log)".to_owned(),
        (false, true) => error.to_owned(),
        (true, false) => format!("info: {info}"),
        (false, false) => format!("{error}\ninfo: {info}"),
    }
}

/// Turns a failed result of a JIT entry point into [`Error::ModuleLoad`]
/// with the logs; a sticky code poisons the context and stays a plain
/// [`Error::Driver`].
pub(crate) fn jit_error(
    ctx: &Context,
    call: &'static str,
    rc: CUresult,
    log: impl FnOnce() -> String,
) -> Result<()> {
    match ctx.check(call, rc) {
        Ok(()) => Ok(()),
        // A sticky code comes from an earlier fault of the context, not from
        // the image: the plain driver error says so, and no log is read.
        Err(Error::Driver(err)) if err.is_sticky() => Err(Error::Driver(err)),
        Err(Error::Driver(err)) => Err(Error::ModuleLoad {
            call,
            code: err.code,
            log: log(),
        }),
        Err(other) => Err(other),
    }
}

/// `cuModuleLoadDataEx` with error and info log buffers and verbose
/// logging; returns the module and the info log.
pub(crate) fn load_image(ctx: &Context, image: &Image<'_>) -> Result<(CUmodule, String)> {
    let _nvtx = crate::nvtx::auto("module load");
    let cu = ctx.enter()?;
    let mut raw: CUmodule = ptr::null_mut();
    if image.kind == ImageKind::Cubin {
        // A CUBIN is loaded as it is, with no JIT and so no log: the plain
        // call skips the two log buffers (128 KiB to allocate and zero, a
        // tenth of a small module's load). A refused load made no module;
        // it is loaded again below with the logs, for the driver's reasons.
        let started = Instant::now();
        // SAFETY: the image is a prepared ELF (aligned, its declared extents
        // inside the buffer) alive for the call; the context is current.
        let rc = unsafe { (cu.cuModuleLoadData)(&mut raw, image.as_ptr()) };
        let elapsed = started.elapsed();
        if rc == CUresult::CUDA_SUCCESS {
            ctx.counters().module_load.add(image.len(), Some(elapsed));
            return Ok((raw, String::new()));
        }
        if DriverCode::from_raw(rc).is_sticky() {
            // Poisons the context; a plain driver error, no log to read.
            ctx.check("cuModuleLoadData", rc)?;
        }
    }
    let mut error_log = vec![0u8; JIT_LOG_BYTES];
    let mut info_log = vec![0u8; JIT_LOG_BYTES];
    let mut options = [
        CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
        CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        CUjit_option::CU_JIT_INFO_LOG_BUFFER,
        CUjit_option::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
        CUjit_option::CU_JIT_LOG_VERBOSE,
    ];
    // Option values are passed in pointer-sized slots: buffers as pointers,
    // sizes and flags as integers cast to pointers (the driver writes the
    // bytes it logged back into the size slots).
    let mut values: [*mut c_void; 5] = [
        error_log.as_mut_ptr().cast(),
        JIT_LOG_BYTES as *mut c_void,
        info_log.as_mut_ptr().cast(),
        JIT_LOG_BYTES as *mut c_void,
        1usize as *mut c_void,
    ];
    let started = Instant::now();
    // SAFETY: the image is prepared (PTX NUL-terminated; binaries aligned
    // and their declared extents inside the buffer) and alive for the call;
    // `options` and `values` have 5 entries each; the log buffers have
    // JIT_LOG_BYTES bytes, as the size slots say; the context is current.
    let rc = unsafe {
        (cu.cuModuleLoadDataEx)(
            &mut raw,
            image.as_ptr(),
            options.len() as c_uint,
            options.as_mut_ptr(),
            values.as_mut_ptr(),
        )
    };
    let elapsed = started.elapsed();
    let error_text = log_text(&error_log, values[1] as usize);
    let info_text = log_text(&info_log, values[3] as usize);
    jit_error(ctx, "cuModuleLoadDataEx", rc, || {
        join_logs(&error_text, &info_text)
    })?;
    ctx.counters().module_load.add(image.len(), Some(elapsed));
    Ok((raw, info_text))
}

/// A loaded module (`cuModuleLoadData` for a CUBIN, `cuModuleLoadDataEx`
/// with the JIT's logs otherwise), unloaded on drop (`cuModuleUnload`).
///
/// ```no_run
/// use cudakit::{Context, Program};
/// # fn main() -> cudakit::Result<()> {
/// let ctx = Context::new(0)?;
/// let compiled = Program::new("k.cu", r#"
///     __constant__ float bias;
///     extern "C" __global__ void add_bias(float* x, unsigned n) {
///         unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
///         if (i < n) x[i] += bias;
///     }"#).compile_for(&ctx)?;
/// let module = ctx.load_module(&compiled)?; // borrows the context
/// let add_bias = module.function("add_bias")?; // borrows the module
/// println!("{} registers per thread", add_bias.attributes()?.registers);
/// # Ok(()) }
/// ```
pub struct Module<'c> {
    ctx: &'c Context,
    raw: CUmodule,
    lowered: BTreeMap<String, String>,
    program: Option<String>,
    info_log: String,
    /// The kernels' parameter declarations, read from the module's PTX
    /// (the PTX NVRTC produced, or a PTX image); `None` where no PTX is
    /// known (a CUBIN or fatbin image, a linked module).
    ptx_entries: Option<Vec<PtxEntry>>,
    /// The kernels that launch kernels from the device (dynamic
    /// parallelism), read from the module's PTX; `None` where no PTX is
    /// known for some of its code.
    launching: Option<BTreeSet<String>>,
    /// The launch record of each of its functions that a live [`Function`]
    /// holds, shared by every handle of that function.
    functions: FunctionStates,
}

/// The kernels of `ptx` that use dynamic parallelism, or `None` where it
/// is not text.
pub(crate) fn launching_of(ptx: &[u8]) -> Option<BTreeSet<String>> {
    let text = std::str::from_utf8(ptx).ok()?;
    Some(dynamic_parallelism_entries(text.trim_end_matches('\0')))
}

/// The entries of `ptx`, or `None` where it cannot be read (then the
/// kernels' types are unknown, never guessed).
pub(crate) fn ptx_entries_of(ptx: &[u8]) -> Option<Vec<PtxEntry>> {
    let text = std::str::from_utf8(ptx).ok()?;
    read_entries(text.trim_end_matches('\0')).ok()
}

// SAFETY: a module handle may be used from any thread (the driver API is
// thread-safe and every use makes the context current first); the rest is
// owned data and a Sync context reference.
unsafe impl Send for Module<'_> {}
// SAFETY: as above; `&Module` only reads the handle and owned data.
unsafe impl Sync for Module<'_> {}

impl fmt::Debug for Module<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Module")
            .field("raw", &self.raw)
            .field("program", &self.program)
            .field("name_expressions", &self.lowered)
            .finish()
    }
}

impl Context {
    /// Loads a compiled program: its CUBIN when it has one, else its PTX
    /// (JIT-compiled by the driver). The module keeps the program's
    /// name-expression map for [`Module::function`] and [`Module::global`].
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the result holds only LTO-IR (link it
    /// with [`crate::compile::linker::Linker`]); [`Error::ModuleLoad`] with the JIT's
    /// log when the driver rejects the image; [`Error::ContextPoisoned`].
    pub fn load_module(&self, compiled: &Compiled) -> Result<Module<'_>> {
        let bytes: &[u8] = match (compiled.cubin(), compiled.ptx()) {
            (Some(cubin), _) => cubin,
            (None, Some(ptx)) => ptx.as_bytes(),
            (None, None) => {
                return Err(Error::InvalidArgument(format!(
                    "program {} was compiled to LTO-IR only, which cannot be loaded; link it \
                     with cudakit::compile::linker::Linker or compile it to CUBIN or PTX",
                    compiled.program()
                )))
            }
        };
        let mut module = self.load_module_image(bytes)?;
        module.lowered = compiled.lowered_names().clone();
        module.program = Some(compiled.program().to_owned());
        if module.ptx_entries.is_none() {
            // A CUBIN loaded: the PTX NVRTC produced beside it (when asked
            // for) still tells the parameters' kinds.
            module.ptx_entries = compiled.ptx().and_then(|p| ptx_entries_of(p.as_bytes()));
        }
        if module.launching.is_none() {
            module.launching = compiled.ptx().and_then(|p| launching_of(p.as_bytes()));
        }
        Ok(module)
    }

    /// Loads a PTX, CUBIN or fatbin image (told apart by its magic
    /// number). PTX need not be NUL-terminated (a NUL is added); a binary's
    /// declared extents are checked against its length first.
    ///
    /// # Errors
    ///
    /// [`Error::ZeroLength`] for an empty image; [`Error::InteriorNul`] for
    /// PTX with a NUL inside; [`Error::InvalidArgument`] for a malformed
    /// binary; [`Error::ModuleLoad`] with the JIT's log when the driver
    /// rejects it; [`Error::ContextPoisoned`].
    pub fn load_module_image(&self, image: &[u8]) -> Result<Module<'_>> {
        let image = prepare_image(image)?;
        let (raw, info_log) = load_image(self, &image)?;
        let (ptx_entries, launching) = match image.kind {
            ImageKind::Ptx => (
                ptx_entries_of(&image.bytes.bytes),
                launching_of(&image.bytes.bytes),
            ),
            ImageKind::Cubin | ImageKind::Fatbin => (None, None),
        };
        Ok(Module {
            ctx: self,
            raw,
            lowered: BTreeMap::new(),
            program: None,
            info_log,
            ptx_entries,
            launching,
            functions: FunctionStates::default(),
        })
    }

    /// Reads a PTX, CUBIN or fatbin file and loads it as
    /// [`Context::load_module_image`] does.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the file cannot be read; as
    /// [`Context::load_module_image`].
    pub fn load_module_file(&self, path: impl AsRef<Path>) -> Result<Module<'_>> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|err| Error::Io {
            path: path.display().to_string(),
            message: err.to_string(),
        })?;
        let mut module = self.load_module_image(&bytes)?;
        module.program = Some(path.display().to_string());
        Ok(module)
    }
}

impl<'c> Module<'c> {
    /// Wraps a module loaded by the linker.
    pub(crate) fn from_parts(
        ctx: &'c Context,
        raw: CUmodule,
        lowered: BTreeMap<String, String>,
        info_log: String,
        launching: Option<BTreeSet<String>>,
    ) -> Module<'c> {
        Module {
            ctx,
            raw,
            lowered,
            program: None,
            info_log,
            ptx_entries: None,
            launching,
            functions: FunctionStates::default(),
        }
    }

    /// The context.
    pub fn context(&self) -> &'c Context {
        self.ctx
    }

    /// The raw handle.
    pub fn as_raw(&self) -> CUmodule {
        self.raw
    }

    /// The program (or file) the module came from, when known.
    pub fn program(&self) -> Option<&str> {
        self.program.as_deref()
    }

    /// The JIT's info log of the load (verbose: registers, spills, ...);
    /// empty for a CUBIN, which the driver loads without a JIT.
    pub fn info_log(&self) -> &str {
        &self.info_log
    }

    /// Name expression → lowered name, from the compiled program.
    pub fn lowered_names(&self) -> &BTreeMap<String, String> {
        &self.lowered
    }

    /// The symbol `name` resolves to: a name expression's lowered name, or
    /// `name` itself.
    fn symbol_of<'n>(&'n self, name: &'n str) -> &'n str {
        resolve_name(&self.lowered, name).unwrap_or(name)
    }

    /// The module's kernels by symbol (lowered names, `extern "C"` names as
    /// written), via `cuModuleGetFunctionCount`,
    /// `cuModuleEnumerateFunctions` and `cuFuncGetName`.
    ///
    /// # Errors
    ///
    /// [`Error::NotSupported`] when the driver lacks those entry points
    /// (before CUDA 12.4); driver errors; [`Error::ContextPoisoned`].
    pub fn function_symbols(&self) -> Result<Vec<String>> {
        let cu = self.ctx.enter()?;
        let count_fn = optional!(cu, cuModuleGetFunctionCount, "CUDA 12.4");
        let enumerate = optional!(cu, cuModuleEnumerateFunctions, "CUDA 12.4");
        let name_fn = optional!(cu, cuFuncGetName, "CUDA 12.3");
        let mut count: c_uint = 0;
        // SAFETY: a valid out-pointer and a live module; the context is current.
        let rc = unsafe { count_fn(&mut count, self.raw) };
        self.ctx.check("cuModuleGetFunctionCount", rc)?;
        let mut functions: Vec<CUfunction> = vec![ptr::null_mut(); count as usize];
        if count > 0 {
            // SAFETY: the array has `count` slots, as passed.
            self.ctx.check("cuModuleEnumerateFunctions", unsafe {
                enumerate(functions.as_mut_ptr(), count, self.raw)
            })?;
        }
        let mut names = Vec::with_capacity(functions.len());
        for f in functions {
            let mut name: *const c_char = ptr::null();
            // SAFETY: a function handle of this live module; a valid out-pointer.
            let rc = unsafe { name_fn(&mut name, f) };
            self.ctx.check("cuFuncGetName", rc)?;
            if !name.is_null() {
                // SAFETY: the driver returns a NUL-terminated string that
                // lives as long as the module; it is copied at once.
                let text = unsafe { CStr::from_ptr(name) };
                names.push(text.to_string_lossy().into_owned());
            }
        }
        names.sort();
        Ok(names)
    }

    /// What [`Error::UnknownFunction`] lists: the name expressions, then
    /// the kernels no name expression names (when the driver can list them).
    fn known_functions(&self) -> Vec<String> {
        let mut known: Vec<String> = self.lowered.keys().cloned().collect();
        if let Ok(symbols) = self.function_symbols() {
            for symbol in symbols {
                if !self.lowered.values().any(|v| *v == symbol) {
                    known.push(symbol);
                }
            }
        }
        known
    }

    /// The kernels declared in the module's PTX, with their parameters'
    /// kinds, where the PTX is known: the PTX NVRTC produced (also beside a
    /// CUBIN it produced), or a loaded PTX image. `None` for a CUBIN or
    /// fatbin image and for linked modules.
    pub fn ptx_entries(&self) -> Option<&[PtxEntry]> {
        self.ptx_entries.as_deref()
    }

    fn ptx_entry(&self, symbol: &str) -> Option<&PtxEntry> {
        self.ptx_entries.as_ref()?.iter().find(|e| e.name == symbol)
    }

    /// The symbol `name` resolves to: a name expression's lowered name; a
    /// symbol of the module's PTX as it is; else the one C++ kernel of the
    /// PTX whose demangled name is `name`; else `name` itself.
    fn resolve_symbol(&self, name: &str) -> Result<String> {
        resolve_symbol(&self.lowered, self.ptx_entries.as_deref(), name)
    }

    /// The kernel `name`: a name expression of the compiled program
    /// (`"scale<float>"`, spacing and a leading `&` aside), an `extern "C"`
    /// name, a lowered name, or the plain name of a C++ kernel
    /// (`"transposeNaive"`, or with its namespaces, `"ns::transposeNaive"`)
    /// when exactly one kernel of the module demangles to it
    /// (`cuModuleGetFunction`). The kernels are those of the module's PTX
    /// where it is known, else the driver's list
    /// (`cuModuleEnumerateFunctions`, CUDA 12.4).
    ///
    /// The kernel's parameter types are read here, once, and kept with the
    /// function for every launch to check (see [`Function::signature`]):
    /// from its mangled name, else the module's PTX, else none (sizes only).
    ///
    /// # Errors
    ///
    /// [`Error::UnknownFunction`] listing the name expressions and kernels
    /// the module has when none matches; [`Error::AmbiguousFunction`]
    /// listing the candidates with their signatures when a plain name
    /// matches two or more kernels (overloads, template instances);
    /// [`Error::InteriorNul`]; driver errors; [`Error::ContextPoisoned`].
    pub fn function(&self, name: &str) -> Result<Function<'_>> {
        let symbol = self.resolve_symbol(name)?;
        self.function_at(name, &symbol)
    }

    /// [`Module::function`] for a kernel whose parameter types its name
    /// does not carry (an `extern "C"` kernel), with its signature declared
    /// in C spelling: `"float*, const float*, float, int"` (parameter names
    /// allowed; see [`parse_declared`] for what is read). The declaration
    /// is checked against the kernel's PTX where the module's PTX is known,
    /// against its mangled name where it has one, and against the driver's
    /// parameter table (`cuFuncGetParamInfo`) where available; then every
    /// launch checks arguments against it as against a demangled one.
    ///
    /// # Errors
    ///
    /// [`Error::DeclaredSignature`] when the text cannot be read or
    /// contradicts the PTX, the mangled name or the parameter table; as
    /// [`Module::function`].
    pub fn function_with_signature(&self, name: &str, signature: &str) -> Result<Function<'_>> {
        let mut f = self.function(name)?;
        let ptx = self.ptx_entry(&f.symbol);
        f.declare_signature(name, signature, ptx)?;
        Ok(f)
    }

    /// `cuModuleGetFunction` for `symbol`; where no PTX is known and
    /// `symbol` is not found, a plain C++ kernel name among the driver's
    /// list of kernels.
    fn function_at(&self, name: &str, symbol: &str) -> Result<Function<'_>> {
        let symbol_c = c_string(symbol, "function name")?;
        let cu = self.ctx.enter()?;
        let mut raw: CUfunction = ptr::null_mut();
        // SAFETY: a valid out-pointer, a live module, a C string; the
        // context is current.
        let rc = unsafe { (cu.cuModuleGetFunction)(&mut raw, self.raw, symbol_c.as_ptr()) };
        if rc == CUresult::CUDA_ERROR_NOT_FOUND {
            if self.ptx_entries.is_none() && symbol == name {
                if let Ok(symbols) = self.function_symbols() {
                    if let Some(found) = by_plain_name(name, symbols.iter().map(String::as_str))? {
                        if found != symbol {
                            return self.function_at(name, &found);
                        }
                    }
                }
            }
            return Err(Error::UnknownFunction {
                name: name.to_owned(),
                known: self.known_functions(),
            });
        }
        self.ctx.check("cuModuleGetFunction", rc)?;
        Ok(Function {
            ctx: self.ctx,
            origin: FunctionOrigin::Module(self),
            raw,
            name: name.to_owned(),
            symbol: symbol.to_owned(),
            state: self.functions.of(self.ctx, raw),
            fitted: FitCache::default(),
            signature: KernelSignature::of_symbol(symbol, self.ptx_entry(symbol)),
        })
    }

    /// The `__device__` or `__constant__` variable `name` as `len` elements
    /// of `T` (`cuModuleGetGlobal_v2`). `name` may be a name expression
    /// (`"&ns::table"`, or `"ns::table"` for it), a plain C name, or a
    /// lowered name.
    ///
    /// # Errors
    ///
    /// [`Error::Global`] when the module has no such variable, or its size
    /// is not a whole number of `T`s; [`Error::InteriorNul`]; driver
    /// errors; [`Error::ContextPoisoned`].
    pub fn global<T: DeviceCopy>(&self, name: &str) -> Result<Global<'_, T>> {
        let symbol = self.symbol_of(name);
        let symbol_c = c_string(symbol, "global name")?;
        let cu = self.ctx.enter()?;
        let (mut ptr, mut bytes): (CUdeviceptr, usize) = (0, 0);
        // SAFETY: valid out-pointers, a live module, a C string; the context
        // is current.
        let rc =
            unsafe { (cu.cuModuleGetGlobal)(&mut ptr, &mut bytes, self.raw, symbol_c.as_ptr()) };
        if rc == CUresult::CUDA_ERROR_NOT_FOUND {
            let known: Vec<&str> = self.lowered.keys().map(String::as_str).collect();
            return Err(Error::Global {
                name: name.to_owned(),
                reason: if known.is_empty() {
                    "no __device__ or __constant__ variable of that name in the module".to_owned()
                } else {
                    format!(
                        "no __device__ or __constant__ variable of that name in the module \
                         (its name expressions: {})",
                        known.join(", ")
                    )
                },
            });
        }
        self.ctx.check("cuModuleGetGlobal_v2", rc)?;
        let size = std::mem::size_of::<T>();
        if size == 0 || bytes == 0 || bytes % size != 0 {
            return Err(Error::Global {
                name: name.to_owned(),
                reason: format!(
                    "the variable is {bytes} bytes, not a whole number of {} ({size} bytes)",
                    std::any::type_name::<T>()
                ),
            });
        }
        Ok(Global {
            ctx: self.ctx,
            _owner: PhantomData,
            ptr,
            len: bytes / size,
            name: name.to_owned(),
            _marker: PhantomData,
        })
    }
}

/// The symbol `name` resolves to, for a module or a library with these
/// name expressions (`lowered`) and PTX kernels: a name expression's
/// lowered name; a PTX symbol as it is; else the one C++ kernel whose
/// demangled name is `name`; else `name` itself.
pub(crate) fn resolve_symbol(
    lowered: &BTreeMap<String, String>,
    ptx_entries: Option<&[PtxEntry]>,
    name: &str,
) -> Result<String> {
    if let Some(lowered) = resolve_name(lowered, name) {
        return Ok(lowered.to_owned());
    }
    if let Some(entries) = ptx_entries {
        if entries.iter().any(|e| e.name == name) {
            return Ok(name.to_owned());
        }
        let symbols = entries.iter().map(|e| e.name.as_str());
        if let Some(found) = by_plain_name(name, symbols)? {
            return Ok(found);
        }
    }
    Ok(name.to_owned())
}

/// The one symbol among `symbols` whose demangled name is `name` (its own
/// name, or with its namespaces); `None` when none is.
///
/// # Errors
///
/// [`Error::AmbiguousFunction`] when two or more are.
pub(crate) fn by_plain_name<'s>(
    name: &str,
    symbols: impl Iterator<Item = &'s str>,
) -> Result<Option<String>> {
    let matches: Vec<(&str, crate::compile::signature::Signature)> = symbols
        .filter_map(|symbol| {
            let sig = demangle(symbol).ok()?;
            (sig.name == name || sig.qualified_name() == name).then_some((symbol, sig))
        })
        .collect();
    match matches.len() {
        0 => Ok(None),
        1 => Ok(Some(matches[0].0.to_owned())),
        _ => Err(Error::AmbiguousFunction {
            name: name.to_owned(),
            candidates: matches
                .iter()
                .map(|(symbol, sig)| format!("{sig} [{symbol}]"))
                .collect(),
        }),
    }
}

impl Drop for Module<'_> {
    fn drop(&mut self) {
        let raw = self.raw as usize;
        // SAFETY: unloads the module loaded at construction, once (now, or
        // after this thread's capture, or off a driver callback thread); no
        // function or global of it is alive (they borrow the module).
        self.ctx.release("cuModuleUnload", None, move |cu| unsafe {
            (cu.cuModuleUnload)(raw as cuda_sys::CUmodule)
        });
    }
}

/// Attributes of a kernel (`cuFuncGetAttribute`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct FunctionAttributes {
    /// Registers per thread (`CU_FUNC_ATTRIBUTE_NUM_REGS`).
    pub registers: u32,
    /// Static shared memory per block (`CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES`).
    pub static_shared_bytes: u32,
    /// Dynamic shared memory a launch may ask for now
    /// (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`); raise it with
    /// [`Function::set_max_dynamic_shared_memory`].
    pub max_dynamic_shared_bytes: u32,
    /// Most threads a block may have for this kernel
    /// (`CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`).
    pub max_threads_per_block: u32,
    /// Local memory per thread (`CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES`).
    pub local_bytes: u32,
    /// Constant memory (`CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES`).
    pub const_bytes: u32,
    /// The PTX virtual architecture, major × 10 + minor
    /// (`CU_FUNC_ATTRIBUTE_PTX_VERSION`; 90 for `compute_90`).
    pub ptx_version: u32,
    /// The binary architecture, major × 10 + minor
    /// (`CU_FUNC_ATTRIBUTE_BINARY_VERSION`; 90 for `sm_90`).
    pub binary_version: u32,
}

/// Where a [`Function`] came from: a module of its context, or a
/// context-independent [`Library`](crate::compile::library::Library)
/// kernel (`cuKernelGetFunction`). Either is borrowed for the function's
/// lifetime, so neither is unloaded while the function lives.
#[derive(Clone, Copy)]
pub(crate) enum FunctionOrigin<'m> {
    Module(&'m Module<'m>),
    Library {
        library: &'m crate::compile::library::Library,
        kernel: cuda_sys::CUkernel,
    },
}

/// A kernel of a [`Module`] or of a
/// [`Library`](crate::compile::library::Library) in one context; it
/// borrows its module (or library) and its context.
// `repr(C)` and 64-byte aligned: a launch reads `ctx`, `raw`, `state` (the
// pointer to the shared record, whose first field, the validated
// configuration, sits on a cache line of its own: see `FunctionState`) and
// `fitted`, which fill the first 32 bytes of the handle's first cache line.
#[repr(C, align(64))]
pub struct Function<'m> {
    ctx: &'m Context,
    raw: CUfunction,
    /// What the launch path keeps per `CUfunction`: one record for every
    /// handle of this function in this context (see [`FunctionStates`]),
    /// so that a change made through one handle is seen by all.
    pub(crate) state: Arc<FunctionState>,
    /// The last argument signature that fitted this handle's parameters
    /// (the shared table, read once) and types (`signature`, this
    /// handle's own: a declared one may differ between handles).
    pub(crate) fitted: FitCache,
    /// The parameter types, computed at lookup (or declared).
    signature: KernelSignature,
    origin: FunctionOrigin<'m>,
    name: String,
    symbol: String,
}

// SAFETY: a function handle may be used from any thread (the driver API is
// thread-safe; every use makes the context current first); the launch
// state is thread-safe.
unsafe impl Send for Function<'_> {}
// SAFETY: as above.
unsafe impl Sync for Function<'_> {}

impl fmt::Debug for Function<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Function")
            .field("name", &self.name)
            .field("symbol", &self.symbol)
            .field("raw", &self.raw)
            .finish()
    }
}

impl<'m> Function<'m> {
    /// Whether the kernel launches kernels from the device (dynamic
    /// parallelism), as its module's PTX shows: `Some(true)` when its code
    /// (or a function of the same PTX that it calls, at any depth) calls
    /// the device runtime's launch entry point, `Some(false)` when it does
    /// not, `None` when the module's PTX is unknown (a CUBIN or fatbin
    /// image, or a link with an input that is not PTX and has no PTX
    /// beside it). A device graph launch (`cudaGraphLaunch`) is not
    /// dynamic parallelism.
    pub fn uses_dynamic_parallelism(&self) -> Option<bool> {
        // A library's kernel: its PTX is not kept, so unknown.
        self.module()?
            .launching
            .as_ref()
            .map(|set| set.contains(&self.symbol))
    }

    /// The name it was looked up by (a name expression, or the symbol).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The symbol in the module (the lowered name of a name expression).
    pub fn symbol(&self) -> &str {
        &self.symbol
    }

    /// The raw handle.
    pub fn as_raw(&self) -> CUfunction {
        self.raw
    }

    /// The module, for a function of a module; `None` for a function of a
    /// [`Library`](crate::compile::library::Library).
    pub fn module(&self) -> Option<&'m Module<'m>> {
        match self.origin {
            FunctionOrigin::Module(m) => Some(m),
            FunctionOrigin::Library { .. } => None,
        }
    }

    /// The library, for a function of a
    /// [`Library`](crate::compile::library::Library); `None` for a
    /// function of a module.
    pub fn library(&self) -> Option<&'m crate::compile::library::Library> {
        match self.origin {
            FunctionOrigin::Module(_) => None,
            FunctionOrigin::Library { library, .. } => Some(library),
        }
    }

    /// The context.
    pub fn context(&self) -> &'m Context {
        self.ctx
    }

    /// A function of a library kernel in `ctx` (`cuKernelGetFunction`
    /// made `raw`), its signature read from `symbol` and `ptx`.
    pub(crate) fn of_library(
        ctx: &'m Context,
        library: &'m crate::compile::library::Library,
        kernel: cuda_sys::CUkernel,
        raw: CUfunction,
        name: &str,
        symbol: &str,
        ptx: Option<&PtxEntry>,
    ) -> Function<'m> {
        Function {
            ctx,
            origin: FunctionOrigin::Library { library, kernel },
            raw,
            name: name.to_owned(),
            symbol: symbol.to_owned(),
            state: library.function_states().of(ctx, raw),
            fitted: FitCache::default(),
            signature: KernelSignature::of_symbol(symbol, ptx),
        }
    }

    /// Replaces the signature with one declared in C spelling, checked
    /// against `ptx` (the kernel's PTX entry, where known), the mangled
    /// name and the parameter table (see [`Module::function_with_signature`]).
    pub(crate) fn declare_signature(
        &mut self,
        name: &str,
        signature: &str,
        ptx: Option<&PtxEntry>,
    ) -> Result<()> {
        let refused = |reason: String| Error::DeclaredSignature {
            function: name.to_owned(),
            reason,
        };
        let declared = parse_declared(signature).map_err(|e| refused(e.to_string()))?;
        if let ParamCheck::Available(table) = self.param_check()? {
            if table.len() != declared.len() {
                return Err(refused(format!(
                    "{} parameter(s) declared, the driver's parameter table has {}",
                    declared.len(),
                    table.len()
                )));
            }
            for (i, (t, &(_, size))) in declared.iter().zip(table).enumerate() {
                if let Some(layout) = t.layout() {
                    if layout.size != size {
                        return Err(refused(format!(
                            "parameter {i}: '{t}' is {} bytes, the driver's parameter table \
                             reports {size}",
                            layout.size
                        )));
                    }
                }
            }
        }
        self.signature =
            KernelSignature::declared(&self.symbol, declared, ptx).map_err(|e| refused(e.0))?;
        // What fitted the old types may not fit the new ones.
        self.fitted = FitCache::default();
        Ok(())
    }

    /// One attribute (`cuFuncGetAttribute`).
    ///
    /// # Errors
    ///
    /// Driver errors; [`Error::ContextPoisoned`].
    pub fn attribute(&self, attribute: Attr) -> Result<i32> {
        let ctx = self.ctx;
        let cu = ctx.enter()?;
        let mut value: c_int = 0;
        // SAFETY: a valid out-pointer and a function of a live module; the
        // context is current.
        ctx.check("cuFuncGetAttribute", unsafe {
            (cu.cuFuncGetAttribute)(&mut value, attribute, self.raw)
        })?;
        Ok(value)
    }

    /// Sets one attribute (`cuFuncSetAttribute`).
    ///
    /// Setting `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES` here (to
    /// raise or to lower it) also updates the limit the launch path keeps
    /// for the function, under the same lock as
    /// [`Function::set_max_dynamic_shared_memory`]: a later launch that asks
    /// for more than the new value raises it again before the driver, rather
    /// than trusting an older, higher copy. That limit, and the record of the
    /// configuration validated last, are kept per function, not per handle:
    /// every [`Function`] looked up for this kernel in this context sees a
    /// change made through any of them.
    ///
    /// # Errors
    ///
    /// Driver errors (an attribute that cannot be set, a value out of
    /// range); [`Error::ContextPoisoned`].
    pub fn set_attribute(&self, attribute: Attr, value: i32) -> Result<()> {
        if attribute != Attr::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES {
            return self.set_attribute_unlocked(attribute, value);
        }
        // The attribute and the launch path's copy of it change together,
        // under one lock (as in `set_max_dynamic_shared_memory`): a copy
        // above the real attribute would let a launch skip the raise it
        // needs.
        let _guard = self.state.lock_dynamic_shared();
        self.set_attribute_unlocked(attribute, value)?;
        // The driver accepted `value`, so it is not negative.
        self.state
            .dynamic_shared_limit
            .store(u32::try_from(value).unwrap_or(0), Ordering::Release);
        // After the new limit is visible: no configuration validated
        // against the old one stays trusted.
        self.state.validated.clear();
        Ok(())
    }

    /// `cuFuncSetAttribute` alone. The dynamic shared-memory attribute is
    /// set through it only with `dynamic_shared_lock` held, the cached
    /// limit stored after it.
    fn set_attribute_unlocked(&self, attribute: Attr, value: i32) -> Result<()> {
        let ctx = self.ctx;
        let cu = ctx.enter()?;
        // A configuration validated under the old attributes may not hold
        // under the new ones: the launch path validates afresh.
        self.state.validated.clear();
        // SAFETY: a function of a live module, arguments by value; the
        // context is current.
        let r = ctx.check("cuFuncSetAttribute", unsafe {
            (cu.cuFuncSetAttribute)(self.raw, attribute, value)
        });
        self.state.validated.clear();
        r
    }

    /// The kernel's attributes.
    ///
    /// # Errors
    ///
    /// As [`Function::attribute`].
    pub fn attributes(&self) -> Result<FunctionAttributes> {
        let unsigned =
            |a: Attr| -> Result<u32> { Ok(u32::try_from(self.attribute(a)?).unwrap_or(0)) };
        let bytes = unsigned;
        Ok(FunctionAttributes {
            registers: unsigned(Attr::CU_FUNC_ATTRIBUTE_NUM_REGS)?,
            static_shared_bytes: bytes(Attr::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?,
            max_dynamic_shared_bytes: bytes(Attr::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)?,
            max_threads_per_block: unsigned(Attr::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            local_bytes: bytes(Attr::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)?,
            const_bytes: bytes(Attr::CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES)?,
            ptx_version: unsigned(Attr::CU_FUNC_ATTRIBUTE_PTX_VERSION)?,
            binary_version: unsigned(Attr::CU_FUNC_ATTRIBUTE_BINARY_VERSION)?,
        })
    }

    /// Lets launches of this kernel use up to `bytes` of dynamic shared
    /// memory, above the default 48 KiB
    /// (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`). The limit is the
    /// device's opt-in maximum per block minus the kernel's static shared
    /// memory; it is checked before the driver is called.
    ///
    /// # Errors
    ///
    /// [`Error::LaunchConfig`] with [`LaunchConfigError::OverLimit`] when
    /// `bytes` is over the limit; driver errors; [`Error::ContextPoisoned`].
    pub fn set_max_dynamic_shared_memory(&self, bytes: u32) -> Result<()> {
        let optin = self.ctx.limits().max_shared_per_block_optin;
        let static_bytes =
            u32::try_from(self.attribute(Attr::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?).unwrap_or(0);
        let limit = optin.saturating_sub(static_bytes);
        if bytes > limit {
            return Err(Error::LaunchConfig {
                function: self.name.clone(),
                error: LaunchConfigError::OverLimit {
                    what: "dynamic shared memory",
                    value: u64::from(bytes),
                    limit: u64::from(limit),
                    source_of_limit: "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN minus \
                                      CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES",
                },
            });
        }
        // `bytes <= optin`, which came from a c_int attribute.
        let value = i32::try_from(bytes).unwrap_or(i32::MAX);
        // The attribute and the launch path's copy of it change together,
        // under one lock: a copy above the real attribute would let a launch
        // skip the raise it needs.
        let _guard = self.state.lock_dynamic_shared();
        self.set_attribute_unlocked(Attr::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, value)?;
        self.state
            .dynamic_shared_limit
            .store(bytes, Ordering::Release);
        // As in `set_attribute`.
        self.state.validated.clear();
        Ok(())
    }

    /// Raises the dynamic shared-memory attribute to at least `bytes` when
    /// the cached limit is below it. The check, the driver call and the
    /// store happen under one lock, so the cached value never exceeds the
    /// attribute the driver holds, whatever threads race here.
    pub(crate) fn ensure_dynamic_shared(&self, bytes: u32) -> Result<()> {
        if bytes <= self.state.dynamic_shared_limit.load(Ordering::Acquire) {
            return Ok(());
        }
        let _guard = self.state.lock_dynamic_shared();
        if bytes <= self.state.dynamic_shared_limit.load(Ordering::Acquire) {
            return Ok(());
        }
        let value = i32::try_from(bytes).unwrap_or(i32::MAX);
        self.set_attribute_unlocked(Attr::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, value)?;
        self.state
            .dynamic_shared_limit
            .store(bytes, Ordering::Release);
        // As in `set_attribute`.
        self.state.validated.clear();
        Ok(())
    }

    /// The parameter table if it was read already ([`Function::param_check`]
    /// reads it on first use): one load, for the launch path's fast check.
    #[inline(always)]
    pub(crate) fn param_check_read(&self) -> Option<&ParamCheck> {
        self.state.params.get()
    }

    /// The kernel's parameter table (`cuFuncGetParamInfo`), read once and
    /// cached; [`ParamCheck::Unavailable`] when the driver lacks the entry
    /// point.
    ///
    /// # Errors
    ///
    /// Driver errors other than the end of the parameter list.
    pub fn param_check(&self) -> Result<&ParamCheck> {
        self.state.params.get_or_try_init(|| {
            let ctx = self.context();
            let cu = ctx.enter()?;
            // A library kernel's table is read from the kernel
            // (`cuKernelGetParamInfo`) where the driver has it, else from
            // its function in this context, as a module's is.
            let kernel_info = match self.origin {
                FunctionOrigin::Library { kernel, .. } => {
                    cu.cuKernelGetParamInfo.map(|f| (f, kernel))
                }
                FunctionOrigin::Module(_) => None,
            };
            let func_info = cu.cuFuncGetParamInfo;
            let mut params = Vec::new();
            loop {
                let (mut offset, mut size) = (0usize, 0usize);
                let (call, rc) = if let Some((info, kernel)) = kernel_info {
                    (
                        "cuKernelGetParamInfo",
                        // SAFETY: a kernel of a library the function
                        // borrows (so loaded), valid out-pointers; an index
                        // past the last parameter returns
                        // CUDA_ERROR_INVALID_VALUE.
                        unsafe { info(kernel, params.len(), &mut offset, &mut size) },
                    )
                } else if let Some(info) = func_info {
                    (
                        "cuFuncGetParamInfo",
                        // SAFETY: a live function of a loaded module or
                        // library, valid out-pointers; an index past the
                        // last parameter returns CUDA_ERROR_INVALID_VALUE.
                        unsafe { info(self.as_raw(), params.len(), &mut offset, &mut size) },
                    )
                } else {
                    return Ok(ParamCheck::Unavailable);
                };
                if rc == CUresult::CUDA_ERROR_INVALID_VALUE {
                    break;
                }
                ctx.check(call, rc)?;
                params.push((offset, size));
            }
            Ok(ParamCheck::Available(params))
        })
    }

    /// The kernel's parameter types as launches check them, read once when
    /// the function was looked up: from its mangled name, a declared
    /// signature ([`Module::function_with_signature`]), or the module's
    /// PTX; [`SignatureSource::Unknown`](crate::compile::signature::SignatureSource::Unknown)
    /// when none is known (then only the count and sizes are checked).
    pub fn signature(&self) -> &KernelSignature {
        &self.signature
    }

    /// The thread and static shared-memory limits, read once; also seeds
    /// the cached dynamic shared-memory limit.
    pub(crate) fn launch_limits(&self) -> Result<FunctionLimits> {
        self.state
            .limits
            .get_or_try_init(|| {
                // Read under the lock: no raise or lowering can slip between
                // the read and the store.
                let _guard = self.state.lock_dynamic_shared();
                let attrs = self.attributes()?;
                self.state
                    .dynamic_shared_limit
                    .store(attrs.max_dynamic_shared_bytes, Ordering::Release);
                Ok(FunctionLimits {
                    max_threads: attrs.max_threads_per_block,
                    static_shared: attrs.static_shared_bytes,
                })
            })
            .copied()
    }
}

/// Whether arguments can be checked against a kernel's parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParamCheck {
    /// The kernel's parameters as (offset, size), from `cuFuncGetParamInfo`.
    Available(Vec<(usize, usize)>),
    /// The driver lacks `cuFuncGetParamInfo` (before CUDA 12.4): counts and
    /// sizes are not checked.
    Unavailable,
}

/// Limits of a function the launch path checks against.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FunctionLimits {
    pub(crate) max_threads: u32,
    pub(crate) static_shared: u32,
}

/// What the launch path keeps per `CUfunction` in a context: the facts of
/// the function itself, which every [`Function`] handle of it shares
/// through one `Arc` (see [`FunctionStates`]). Per handle, apart from it:
/// the signature (a declared one is the handle's) and what fitted it.
///
/// Shared because the driver keeps the function's attributes once, for
/// every handle: had each handle its own copy, lowering the dynamic
/// shared-memory attribute through one would leave another trusting its
/// higher limit and a configuration validated against it, and launching
/// into the driver's refusal.
// `repr(C)` and 64-byte aligned: in the `Arc`'s allocation the counts come
// first and the record starts 64 bytes in, so `validated`, which every
// launch reads, starts a cache line of its own (no line shared with the
// counts, which change when handles are made or dropped).
#[derive(Debug, Default)]
#[repr(C, align(64))]
pub(crate) struct FunctionState {
    /// The last plain configuration the launch path validated, through any
    /// handle; cleared whenever an attribute is set through any handle.
    pub(crate) validated: ConfigCache,
    params: OnceCell<ParamCheck>,
    limits: OnceCell<FunctionLimits>,
    /// Never above the function's real
    /// `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`: written only
    /// under `dynamic_shared_lock`, right after the driver accepted it.
    dynamic_shared_limit: AtomicU32,
    dynamic_shared_lock: Mutex<()>,
}

impl FunctionState {
    fn lock_dynamic_shared(&self) -> MutexGuard<'_, ()> {
        crate::context::lock(&self.dynamic_shared_lock)
    }
}

/// The launch records ([`FunctionState`]) of the functions a module or a
/// library hands out, one per (context, `CUfunction`): every [`Function`]
/// looked up for the same function in the same context gets the same
/// record. Held weakly: a record lives as long as a handle holding it, and
/// a handle looked up after all others are gone starts a new one, which
/// reads the function's attributes from the driver again on first use (so
/// it never trusts a value the driver no longer holds). Keyed by the
/// context's identity as well as the handle, since a library's kernels
/// have a function in each context, and a handle's address may be reused
/// by another context's function once its context is gone.
#[derive(Default)]
pub(crate) struct FunctionStates(Mutex<HashMap<(usize, usize), Weak<FunctionState>>>);

impl FunctionStates {
    /// The record of `raw`, a function in `ctx`: the one the live handles
    /// of it hold, else a new one.
    pub(crate) fn of(&self, ctx: &Context, raw: CUfunction) -> Arc<FunctionState> {
        self.of_key((ctx.id(), raw as usize))
    }

    /// [`FunctionStates::of`] by (context identity, handle address).
    fn of_key(&self, key: (usize, usize)) -> Arc<FunctionState> {
        let mut records = crate::context::lock(&self.0);
        if let Some(state) = records.get(&key).and_then(Weak::upgrade) {
            return state;
        }
        // Only records some handle still holds are kept.
        records.retain(|_, r| r.strong_count() > 0);
        let state = Arc::new(FunctionState::default());
        records.insert(key, Arc::downgrade(&state));
        state
    }
}

/// A `__device__` or `__constant__` variable of a [`Module`] (which it
/// borrows) as `len` elements of `T`.
pub struct Global<'m, T: DeviceCopy> {
    ctx: &'m Context,
    /// The module (or library) the variable lives in, borrowed.
    _owner: PhantomData<&'m ()>,
    ptr: CUdeviceptr,
    len: usize,
    name: String,
    _marker: PhantomData<T>,
}

impl<T: DeviceCopy> fmt::Debug for Global<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Global")
            .field("name", &self.name)
            .field("ptr", &format_args!("{:#x}", self.ptr))
            .field("len", &self.len)
            .field("type", &std::any::type_name::<T>())
            .finish()
    }
}

impl<'m, T: DeviceCopy> Global<'m, T> {
    /// A variable of `bytes` bytes at `ptr` in `ctx`, alive for `'m` (its
    /// module or library is borrowed for `'m`), as `T`s.
    ///
    /// # Errors
    ///
    /// [`Error::Global`] when `bytes` is not a whole number of `T`s.
    pub(crate) fn from_raw_parts(
        ctx: &'m Context,
        ptr: CUdeviceptr,
        bytes: usize,
        name: &str,
    ) -> Result<Global<'m, T>> {
        let size = std::mem::size_of::<T>();
        if size == 0 || bytes == 0 || bytes % size != 0 {
            return Err(Error::Global {
                name: name.to_owned(),
                reason: format!(
                    "the variable is {bytes} bytes, not a whole number of {} ({size} bytes)",
                    std::any::type_name::<T>()
                ),
            });
        }
        Ok(Global {
            ctx,
            _owner: PhantomData,
            ptr,
            len: bytes / size,
            name: name.to_owned(),
            _marker: PhantomData,
        })
    }

    /// The name it was looked up by.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The context.
    pub fn context(&self) -> &'m Context {
        self.ctx
    }

    /// The device address. A [`DevicePtr`] is not a kernel argument: see
    /// its documentation for why, and for the explicit escape.
    pub fn device_ptr(&self) -> DevicePtr {
        DevicePtr::new(self.ptr)
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always `false`: a variable has at least one element.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Size in bytes.
    pub fn byte_len(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }

    /// Copies `src` into the variable (`cuMemcpyHtoD_v2`, or the staged
    /// pipeline for a large pageable `src`); lengths must match.
    ///
    /// Synchronous, like every host copy of cudakit: when any scope of the
    /// context (on any thread) has queued work that has not been
    /// synchronized, it first waits for the whole context
    /// (`cuCtxSynchronize`), so kernels queued before the call, which may
    /// read the variable, finish with its old value; it returns once the
    /// new value has landed, so kernels queued after it read the new one.
    /// It is refused where its wait would break a stream capture
    /// ([`Error::IllegalDuringCapture`]), and, on a device without
    /// concurrent managed access, while a host view of unified memory of
    /// the context is alive ([`Error::UnifiedAccess`]).
    ///
    /// # Errors
    ///
    /// [`Error::LengthMismatch`]; [`Error::IllegalDuringCapture`];
    /// [`Error::UnifiedAccess`]; driver errors (also those of the wait, a
    /// fault of earlier work included); [`Error::ContextPoisoned`].
    pub fn copy_from_host(&self, src: &[T]) -> Result<()> {
        crate::memory::same_len("Global::copy_from_host", self.len, src.len())?;
        // SAFETY: the global holds `self.len` elements at `self.ptr` (its
        // size came from cuModuleGetGlobal); `src` has as many (checked
        // above); the module is borrowed, so the global is alive.
        unsafe { copy::htod(self.ctx, self.ptr, src) }
    }

    /// Copies the variable into `dst` (`cuMemcpyDtoH_v2`); lengths must
    /// match.
    ///
    /// # Errors
    ///
    /// [`Error::LengthMismatch`]; driver errors; [`Error::ContextPoisoned`].
    pub fn copy_to_host(&self, dst: &mut [T]) -> Result<()> {
        crate::memory::same_len("Global::copy_to_host", self.len, dst.len())?;
        // SAFETY: as in `copy_from_host`: `dst` has `self.len` elements.
        unsafe { copy::dtoh(self.ctx, dst, self.ptr) }
    }

    /// The variable's contents (`cuMemcpyDtoH_v2`).
    ///
    /// # Errors
    ///
    /// Driver errors; [`Error::ContextPoisoned`].
    pub fn to_vec(&self) -> Result<Vec<T>> {
        // SAFETY: the global holds `self.len` elements at `self.ptr`.
        unsafe { copy::dtoh_vec(self.ctx, self.ptr, self.len) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elf(sections: &[(u32, u64, u64)], len: usize) -> Vec<u8> {
        let mut b = vec![0u8; len];
        b[..4].copy_from_slice(b"\x7fELF");
        b[4] = 2;
        b[5] = 1;
        let shoff = 64u64;
        b[0x28..0x30].copy_from_slice(&shoff.to_le_bytes());
        b[0x3A..0x3C].copy_from_slice(&64u16.to_le_bytes());
        b[0x3C..0x3E].copy_from_slice(&(sections.len() as u16).to_le_bytes());
        for (i, (kind, off, size)) in sections.iter().enumerate() {
            let at = 64 + i * 64;
            b[at + 4..at + 8].copy_from_slice(&kind.to_le_bytes());
            b[at + 0x18..at + 0x20].copy_from_slice(&off.to_le_bytes());
            b[at + 0x20..at + 0x28].copy_from_slice(&size.to_le_bytes());
        }
        b
    }

    /// What the layout comments on `Function` and `FunctionState` claim:
    /// the fields a launch reads in the handle's first 32 bytes; the
    /// shared record 64-byte aligned, so that in its `Arc` (counts first)
    /// the validated configuration starts a cache line of its own.
    #[test]
    fn the_launch_path_reads_the_lines_the_comments_name() {
        use std::mem::{align_of, offset_of, size_of};
        assert_eq!(align_of::<Function<'static>>(), 64);
        assert_eq!(offset_of!(Function<'static>, ctx), 0);
        assert_eq!(offset_of!(Function<'static>, raw), 8);
        assert_eq!(offset_of!(Function<'static>, state), 16);
        assert_eq!(offset_of!(Function<'static>, fitted), 24);
        assert_eq!(size_of::<FitCache>(), 8);
        assert_eq!(align_of::<FunctionState>(), 64);
        assert_eq!(offset_of!(FunctionState, validated), 0);
        assert!(size_of::<ConfigCache>() <= 64);
        let state = Arc::new(FunctionState::default());
        assert_eq!(Arc::as_ptr(&state) as usize % 64, 0);
    }

    /// Handles of one function in one context share one record; another
    /// context's function at the same address gets its own; a record no
    /// handle holds is gone, and the next lookup starts a new one.
    #[test]
    fn function_states_are_one_per_live_function() {
        let states = FunctionStates::default();
        let (a, b) = (1usize, 2usize);
        let raw = 0x1000usize;
        let first = states.of_key((a, raw));
        let again = states.of_key((a, raw));
        assert!(Arc::ptr_eq(&first, &again));
        let other = states.of_key((b, raw));
        assert!(!Arc::ptr_eq(&first, &other));
        first.validated.store(0, &[1, 2, 3, 4]);
        assert!(again.validated.holds(&[1, 2, 3, 4]), "one record");
        drop((first, again));
        let fresh = states.of_key((a, raw));
        assert!(!fresh.validated.holds(&[1, 2, 3, 4]), "a new record");
        assert_eq!(
            crate::context::lock(&states.0).len(),
            2,
            "the dead one pruned"
        );
    }

    #[test]
    fn image_kinds_are_told_apart() {
        assert_eq!(ImageKind::of(b"\x7fELF\x02\x01"), ImageKind::Cubin);
        assert_eq!(
            ImageKind::of(&FATBIN_MAGIC.to_le_bytes()),
            ImageKind::Fatbin
        );
        assert_eq!(ImageKind::of(b".version 9.0"), ImageKind::Ptx);
    }

    #[test]
    fn ptx_gets_exactly_one_nul() {
        let image = prepare_image(b".version 9.0\n").unwrap();
        assert_eq!(&*image.bytes.bytes, b".version 9.0\n\0");
        assert_eq!(image.len(), 14);
        let image = prepare_image(b".version 9.0\n\0\0").unwrap();
        assert_eq!(&*image.bytes.bytes, b".version 9.0\n\0");
        assert!(matches!(
            prepare_image(b".ver\0sion"),
            Err(Error::InteriorNul { .. })
        ));
        assert!(matches!(prepare_image(b""), Err(Error::ZeroLength { .. })));
    }

    #[test]
    fn binaries_are_checked_against_their_length() {
        let ok = elf(&[(1, 192, 32), (8, 4096, 1 << 20)], 256);
        assert_eq!(elf_extent(&ok).unwrap(), 256 - 32);
        assert!(prepare_image(&ok).is_ok());
        let past = elf(&[(1, 192, 100)], 256);
        assert!(elf_extent(&past).unwrap_err().contains("section 0"));
        assert!(matches!(
            prepare_image(&past),
            Err(Error::InvalidArgument(_))
        ));
        let mut table_past = elf(&[(1, 192, 8)], 256);
        table_past[0x3C..0x3E].copy_from_slice(&10u16.to_le_bytes());
        assert!(elf_extent(&table_past).is_err());
        assert!(elf_extent(&ok[..63]).is_err());
        let mut fat = vec![0u8; 48];
        fat[..4].copy_from_slice(&FATBIN_MAGIC.to_le_bytes());
        fat[6..8].copy_from_slice(&16u16.to_le_bytes());
        fat[8..16].copy_from_slice(&32u64.to_le_bytes());
        assert_eq!(fatbin_extent(&fat).unwrap(), 48);
        fat[8..16].copy_from_slice(&33u64.to_le_bytes());
        assert!(fatbin_extent(&fat).is_err());
        assert!(fatbin_extent(&fat[..10]).is_err());
    }

    #[test]
    fn misaligned_binaries_are_copied_to_aligned_storage() {
        let ok = elf(&[(1, 192, 32)], 256);
        let mut shifted = vec![0u8; 257];
        shifted[1..].copy_from_slice(&ok);
        let image = prepare_image(&shifted[1..]).unwrap();
        assert_eq!(image.as_ptr() as usize % 8, 0);
        assert_eq!(image.len(), 256);
    }

    #[test]
    fn logs_stop_at_the_nul_and_the_reported_length() {
        let mut buffer = vec![0u8; 16];
        buffer[..5].copy_from_slice(b"error");
        assert_eq!(log_text(&buffer, 16), "error");
        assert_eq!(log_text(&buffer, 3), "err");
        assert_eq!(log_text(&buffer, 1000), "error");
        assert_eq!(join_logs("", ""), "(the JIT wrote no log)");
        assert_eq!(join_logs("e", "i"), "e\ninfo: i");
    }
}

/// The last plain launch configuration a function validated, for the
/// launch path to skip validating it again: a sequence lock over four
/// words (grid, block and dynamic shared memory packed), every part an
/// atomic, so a torn read is detected and never trusted. Readers check the
/// sequence before and after reading the words; the one writer at a time
/// makes the sequence odd while it writes (a writer that finds another
/// writing, or any change since it began validating, skips storing).
/// Cleared whenever the function's attributes
/// change (a lower dynamic shared-memory limit would make an accepted
/// configuration invalid). All-zero words are no configuration (a zero
/// grid is never valid).
#[derive(Debug, Default)]
pub(crate) struct ConfigCache {
    seq: AtomicU64,
    words: [AtomicU64; 4],
}

impl ConfigCache {
    #[inline]
    pub(crate) fn holds(&self, key: &[u64; 4]) -> bool {
        let before = self.seq.load(Ordering::Acquire);
        if before & 1 == 1 {
            return false;
        }
        let mut same = true;
        for (w, k) in self.words.iter().zip(key) {
            same &= w.load(Ordering::Relaxed) == *k;
        }
        // Orders the word loads before the second sequence load: a word
        // written after the writer's release fence makes this load see its
        // odd (or a later) sequence.
        fence(Ordering::Acquire);
        same && self.seq.load(Ordering::Relaxed) == before
    }

    /// The sequence now, for [`ConfigCache::store`].
    #[inline]
    pub(crate) fn sequence(&self) -> u64 {
        self.seq.load(Ordering::Acquire)
    }

    /// Stores `key` unless the cache changed since `s` was read (or a
    /// writer is at work).
    pub(crate) fn store(&self, s: u64, key: &[u64; 4]) {
        if s & 1 == 1
            || self
                .seq
                .compare_exchange(s, s + 1, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        fence(Ordering::Release);
        for (w, k) in self.words.iter().zip(key) {
            w.store(*k, Ordering::Relaxed);
        }
        self.seq.store(s + 2, Ordering::Release);
    }

    /// Forgets the stored configuration (waits out a writer).
    pub(crate) fn clear(&self) {
        loop {
            let s = self.seq.load(Ordering::Relaxed);
            if s & 1 == 0
                && self
                    .seq
                    .compare_exchange(s, s + 1, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok()
            {
                fence(Ordering::Release);
                for w in &self.words {
                    w.store(0, Ordering::Relaxed);
                }
                self.seq.store(s + 2, Ordering::Release);
                return;
            }
            std::hint::spin_loop();
        }
    }
}
