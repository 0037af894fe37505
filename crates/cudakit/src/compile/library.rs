//! Context-independent loading (`cuLibraryLoadData`, CUDA 12.0): a
//! [`Library`] is loaded once per process, from a [`Compiled`] program, a
//! PTX, CUBIN or fatbin image, or a file, and its kernels become functions
//! of any context that needs them (`cuKernelGetFunction`).
//!
//! Names resolve exactly as a [`Module`](crate::Module)'s do: a name
//! expression of the compiled program (`"scale<float>"`), an `extern "C"`
//! name, a lowered name, or the plain name of a C++ kernel when exactly one
//! kernel demangles to it. A name that is none of these is
//! [`Error::UnknownFunction`] listing the names the library has.
//!
//! A [`Kernel`] borrows its library, and a [`Function`] made from it
//! borrows both the library and its context, so the library cannot be
//! unloaded (`cuLibraryUnload`, on drop) while a function of it is alive:
//!
//! ```compile_fail,E0597
//! # fn main() -> cudakit::Result<()> {
//! let ctx = cudakit::Context::new(0)?;
//! let f = {
//!     let library = cudakit::Library::from_file("k.cubin")?;
//!     library.function(&ctx, "k")?
//! }; // error: `library` does not live long enough
//! # drop(f); Ok(()) }
//! ```
//!
//! A function of a library is checked exactly like one of a module: its
//! parameter table (`cuKernelGetParamInfo`, or `cuFuncGetParamInfo`), its
//! C types from the mangled name or the library's PTX, and the launch
//! limits; `Scope::launch` takes it unchanged.
//!
//! # Threads and failures
//!
//! A library is `Send` and `Sync`: every entry point used here is
//! thread-safe, and lookups take `&self`. Loading and kernel lookups need
//! no context; `cuKernelGetFunction` runs in the context given, made
//! current first. A failed load made no library; a failed lookup returns
//! its error and changes nothing. The unload on drop is deferred when the
//! dropping thread may not call the driver (a driver callback thread, or a
//! thread with a capture under way): the handle is kept in a process-wide
//! list and unloaded by the next load or drop of a library on a thread that
//! may. A refused unload leaves the library loaded (a leak, never a free of
//! what may be in use); [`Library::unload`] returns that error.

use std::collections::BTreeMap;
use std::ffi::{c_char, c_uint, c_void, CStr};
use std::fmt;
use std::path::Path;
use std::ptr;
use std::sync::Mutex;

use cuda_sys::{CUdeviceptr, CUfunction, CUjit_option, CUkernel, CUlibrary, CUresult};

use crate::compile::c_string;
use crate::compile::module::{
    by_plain_name, join_logs, log_text, prepare_image, ptx_entries_of, FunctionStates, Image,
    ImageKind, JIT_LOG_BYTES,
};
use crate::compile::program::{resolve_name, Compiled};
use crate::compile::signature::ptx::PtxEntry;
use crate::context::release::{in_driver_callback, thread_capturing};
use crate::context::Context;
use crate::driver::{cu, forked, optional};
use crate::error::{check, Error, Result};
use crate::memory::DeviceCopy;
use crate::{Function, Global};

/// Libraries whose drop could not call the driver (see the module docs):
/// unloaded by the next load or drop on a thread that may.
static DEFERRED_UNLOADS: Mutex<Vec<usize>> = Mutex::new(Vec::new());

/// Whether this thread may call the driver to unload now.
fn may_unload_here() -> bool {
    !in_driver_callback() && !thread_capturing()
}

/// Unloads the libraries deferred so far, when this thread may.
fn drain_deferred(cu: &'static cuda_sys::Driver) {
    if !may_unload_here() {
        return;
    }
    let Some(unload) = cu.cuLibraryUnload else {
        return;
    };
    let list = std::mem::take(&mut *crate::context::lock(&DEFERRED_UNLOADS));
    for raw in list {
        // SAFETY: a library loaded by `Library::from_image`, whose value was
        // dropped (so nothing borrows it) and not unloaded yet; each handle
        // is in the list once.
        let _ = unsafe { unload(raw as CUlibrary) };
    }
}

/// A context-independent library of kernels (`cuLibraryLoadData`),
/// unloaded on drop (`cuLibraryUnload`).
///
/// ```no_run
/// use cudakit::{Context, Library, Program};
/// # fn main() -> cudakit::Result<()> {
/// let ctx = Context::new(0)?;
/// let compiled = Program::new("k.cu", r#"
///     template <typename T>
///     __global__ void scale(T* x, T a, unsigned n) {
///         unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
///         if (i < n) x[i] *= a;
///     }"#)
///     .name_expression("scale<float>")
///     .compile_for(&ctx)?;
/// let library = Library::load(&compiled)?; // once per process
/// let kernel = library.kernel("scale<float>")?; // borrows the library
/// let scale = kernel.function(&ctx)?; // a Function of `ctx`
/// # drop(scale); Ok(()) }
/// ```
pub struct Library {
    raw: CUlibrary,
    lowered: BTreeMap<String, String>,
    program: Option<String>,
    info_log: String,
    /// The kernels' parameter declarations, from the library's PTX where
    /// it is known (as for modules).
    ptx_entries: Option<Vec<PtxEntry>>,
    /// The launch record of each kernel's function in each context that a
    /// live [`Function`] holds, shared by every handle of that function.
    functions: FunctionStates,
}

// SAFETY: a library handle is context-independent and may be used from any
// thread (the driver API is thread-safe); the rest is owned data.
unsafe impl Send for Library {}
// SAFETY: as above; `&Library` only reads the handle and owned data.
unsafe impl Sync for Library {}

impl fmt::Debug for Library {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Library")
            .field("raw", &self.raw)
            .field("program", &self.program)
            .field("name_expressions", &self.lowered)
            .finish()
    }
}

/// `cuLibraryLoadData` with no options (a CUBIN), or with the JIT's error
/// and info logs (PTX, fatbins, and a refused CUBIN again, for the reason).
fn load_library(image: &Image<'_>) -> Result<(CUlibrary, String)> {
    let _nvtx = crate::nvtx::auto("library load");
    let cu = cu()?;
    let load = optional!(cu, cuLibraryLoadData, "CUDA 12.0");
    drain_deferred(cu);
    let mut raw: CUlibrary = ptr::null_mut();
    if image.kind == ImageKind::Cubin {
        // SAFETY: the image is a prepared ELF (aligned, its declared extents
        // inside the buffer) alive for the call; no options (null arrays,
        // counts 0).
        let rc = unsafe {
            load(
                &mut raw,
                image.as_ptr(),
                ptr::null_mut(),
                ptr::null_mut(),
                0,
                ptr::null_mut(),
                ptr::null_mut(),
                0,
            )
        };
        if rc == CUresult::CUDA_SUCCESS {
            return Ok((raw, String::new()));
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
    // Option values in pointer-sized slots, as for cuModuleLoadDataEx.
    let mut values: [*mut c_void; 5] = [
        error_log.as_mut_ptr().cast(),
        JIT_LOG_BYTES as *mut c_void,
        info_log.as_mut_ptr().cast(),
        JIT_LOG_BYTES as *mut c_void,
        1usize as *mut c_void,
    ];
    // SAFETY: the image is prepared (PTX NUL-terminated; binaries aligned
    // and their declared extents inside the buffer) and alive for the call;
    // `options` and `values` have 5 entries each, as passed; the log
    // buffers have JIT_LOG_BYTES bytes, as the size slots say; no library
    // options (null arrays, count 0).
    let rc = unsafe {
        load(
            &mut raw,
            image.as_ptr(),
            options.as_mut_ptr(),
            values.as_mut_ptr(),
            options.len() as c_uint,
            ptr::null_mut(),
            ptr::null_mut(),
            0,
        )
    };
    let error_text = log_text(&error_log, values[1] as usize);
    let info_text = log_text(&info_log, values[3] as usize);
    if let Err(err) = check("cuLibraryLoadData", rc) {
        return Err(Error::ModuleLoad {
            call: "cuLibraryLoadData",
            code: err.code,
            log: join_logs(&error_text, &info_text),
        });
    }
    Ok((raw, info_text))
}

impl Library {
    /// Loads a compiled program: its CUBIN when it has one, else its PTX.
    /// The library keeps the program's name-expression map for
    /// [`Library::kernel`].
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the result holds only LTO-IR;
    /// [`Error::NotSupported`] when the driver lacks `cuLibraryLoadData`
    /// (before CUDA 12.0); [`Error::ModuleLoad`] with the JIT's log when the
    /// driver rejects the image; load and `cuInit` errors.
    pub fn load(compiled: &Compiled) -> Result<Library> {
        let bytes: &[u8] = match (compiled.cubin(), compiled.ptx()) {
            (Some(cubin), _) => cubin,
            (None, Some(ptx)) => ptx.as_bytes(),
            (None, None) => {
                return Err(Error::InvalidArgument(format!(
                    "program {} was compiled to LTO-IR only, which cannot be loaded as a \
                     library; link it or compile it to CUBIN or PTX",
                    compiled.program()
                )))
            }
        };
        let mut library = Library::from_image(bytes)?;
        library.lowered = compiled.lowered_names().clone();
        library.program = Some(compiled.program().to_owned());
        if library.ptx_entries.is_none() {
            library.ptx_entries = compiled.ptx().and_then(|p| ptx_entries_of(p.as_bytes()));
        }
        Ok(library)
    }

    /// Loads a PTX, CUBIN or fatbin image (told apart by its magic number),
    /// prepared as [`Context::load_module_image`] prepares one.
    ///
    /// # Errors
    ///
    /// [`Error::ZeroLength`]; [`Error::InteriorNul`]; [`Error::InvalidArgument`]
    /// for a malformed binary; as [`Library::load`].
    pub fn from_image(image: &[u8]) -> Result<Library> {
        let image = prepare_image(image)?;
        let (raw, info_log) = load_library(&image)?;
        let ptx_entries = match image.kind {
            ImageKind::Ptx => ptx_entries_of(&image.bytes.bytes),
            ImageKind::Cubin | ImageKind::Fatbin => None,
        };
        Ok(Library {
            raw,
            lowered: BTreeMap::new(),
            program: None,
            info_log,
            ptx_entries,
            functions: FunctionStates::default(),
        })
    }

    /// Reads a PTX, CUBIN or fatbin file and loads it as
    /// [`Library::from_image`] does.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the file cannot be read; as
    /// [`Library::from_image`].
    pub fn from_file(path: impl AsRef<Path>) -> Result<Library> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|err| Error::Io {
            path: path.display().to_string(),
            message: err.to_string(),
        })?;
        let mut library = Library::from_image(&bytes)?;
        library.program = Some(path.display().to_string());
        Ok(library)
    }

    /// The raw handle.
    pub fn as_raw(&self) -> CUlibrary {
        self.raw
    }

    /// The program (or file) the library came from, when known.
    pub fn program(&self) -> Option<&str> {
        self.program.as_deref()
    }

    /// The JIT's info log of the load; empty for a CUBIN.
    pub fn info_log(&self) -> &str {
        &self.info_log
    }

    /// Name expression → lowered name, from the compiled program.
    pub fn lowered_names(&self) -> &BTreeMap<String, String> {
        &self.lowered
    }

    /// The kernels declared in the library's PTX, where it is known.
    pub fn ptx_entries(&self) -> Option<&[PtxEntry]> {
        self.ptx_entries.as_deref()
    }

    fn ptx_entry(&self, symbol: &str) -> Option<&PtxEntry> {
        self.ptx_entries.as_ref()?.iter().find(|e| e.name == symbol)
    }

    /// The launch records of the library's functions (see
    /// [`FunctionStates`]).
    pub(crate) fn function_states(&self) -> &FunctionStates {
        &self.functions
    }

    /// The library's kernels by symbol, via `cuLibraryGetKernelCount`,
    /// `cuLibraryEnumerateKernels` and `cuKernelGetName`, sorted.
    ///
    /// # Errors
    ///
    /// [`Error::NotSupported`] when the driver lacks those entry points
    /// (before CUDA 12.4); driver errors.
    pub fn kernel_symbols(&self) -> Result<Vec<String>> {
        let cu = cu()?;
        let count_fn = optional!(cu, cuLibraryGetKernelCount, "CUDA 12.4");
        let enumerate = optional!(cu, cuLibraryEnumerateKernels, "CUDA 12.4");
        let name_fn = optional!(cu, cuKernelGetName, "CUDA 12.3");
        let mut count: c_uint = 0;
        // SAFETY: a valid out-pointer and a loaded library.
        check("cuLibraryGetKernelCount", unsafe {
            count_fn(&mut count, self.raw)
        })?;
        let mut kernels: Vec<CUkernel> = vec![ptr::null_mut(); count as usize];
        if count > 0 {
            // SAFETY: the array has `count` slots, as passed.
            check("cuLibraryEnumerateKernels", unsafe {
                enumerate(kernels.as_mut_ptr(), count, self.raw)
            })?;
        }
        let mut names = Vec::with_capacity(kernels.len());
        for k in kernels {
            let mut name: *const c_char = ptr::null();
            // SAFETY: a kernel of this loaded library; a valid out-pointer.
            check("cuKernelGetName", unsafe { name_fn(&mut name, k) })?;
            if !name.is_null() {
                // SAFETY: the driver returns a NUL-terminated string that
                // lives as long as the library; it is copied at once.
                let text = unsafe { CStr::from_ptr(name) };
                names.push(text.to_string_lossy().into_owned());
            }
        }
        names.sort();
        Ok(names)
    }

    /// What [`Error::UnknownFunction`] lists: the name expressions, then
    /// the kernels no name expression names (from the driver's list, else
    /// the library's PTX).
    fn known_kernels(&self) -> Vec<String> {
        let mut known: Vec<String> = self.lowered.keys().cloned().collect();
        let symbols = match self.kernel_symbols() {
            Ok(symbols) => symbols,
            Err(_) => self
                .ptx_entries
                .iter()
                .flatten()
                .map(|e| e.name.clone())
                .collect(),
        };
        for symbol in symbols {
            if !self.lowered.values().any(|v| *v == symbol) {
                known.push(symbol);
            }
        }
        known
    }

    /// The symbol `name` resolves to, as [`Module::function`](crate::Module::function)
    /// resolves it.
    fn resolve_symbol(&self, name: &str) -> Result<String> {
        crate::compile::module::resolve_symbol(&self.lowered, self.ptx_entries.as_deref(), name)
    }

    /// The kernel `name` (`cuLibraryGetKernel`): a name expression of the
    /// compiled program, an `extern "C"` name, a lowered name, or the plain
    /// name of a C++ kernel when exactly one kernel demangles to it.
    ///
    /// # Errors
    ///
    /// [`Error::UnknownFunction`] listing the names the library has when
    /// none matches; [`Error::AmbiguousFunction`]; [`Error::InteriorNul`];
    /// [`Error::NotSupported`]; driver errors.
    pub fn kernel(&self, name: &str) -> Result<Kernel<'_>> {
        let symbol = self.resolve_symbol(name)?;
        self.kernel_at(name, &symbol)
    }

    fn kernel_at(&self, name: &str, symbol: &str) -> Result<Kernel<'_>> {
        let symbol_c = c_string(symbol, "kernel name")?;
        let cu = cu()?;
        let get = optional!(cu, cuLibraryGetKernel, "CUDA 12.0");
        let mut raw: CUkernel = ptr::null_mut();
        // SAFETY: a valid out-pointer, a loaded library, a C string.
        let rc = unsafe { get(&mut raw, self.raw, symbol_c.as_ptr()) };
        if rc == CUresult::CUDA_ERROR_NOT_FOUND {
            if self.ptx_entries.is_none() && symbol == name {
                if let Ok(symbols) = self.kernel_symbols() {
                    if let Some(found) = by_plain_name(name, symbols.iter().map(String::as_str))? {
                        if found != symbol {
                            return self.kernel_at(name, &found);
                        }
                    }
                }
            }
            return Err(Error::UnknownFunction {
                name: name.to_owned(),
                known: self.known_kernels(),
            });
        }
        check("cuLibraryGetKernel", rc)?;
        Ok(Kernel {
            library: self,
            raw,
            name: name.to_owned(),
            symbol: symbol.to_owned(),
        })
    }

    /// [`Library::kernel`] then [`Kernel::function`] in `ctx`.
    ///
    /// # Errors
    ///
    /// As [`Library::kernel`] and [`Kernel::function`].
    pub fn function<'a>(&'a self, ctx: &'a Context, name: &str) -> Result<Function<'a>> {
        self.kernel(name)?.function(ctx)
    }

    /// [`Library::function`] for a kernel whose parameter types its name
    /// does not carry (an `extern "C"` kernel), with its signature declared
    /// in C spelling, checked as
    /// [`Module::function_with_signature`](crate::Module::function_with_signature)
    /// checks it.
    ///
    /// # Errors
    ///
    /// [`Error::DeclaredSignature`]; as [`Library::function`].
    pub fn function_with_signature<'a>(
        &'a self,
        ctx: &'a Context,
        name: &str,
        signature: &str,
    ) -> Result<Function<'a>> {
        let kernel = self.kernel(name)?;
        let mut f = kernel.function(ctx)?;
        f.declare_signature(name, signature, self.ptx_entry(&kernel.symbol))?;
        Ok(f)
    }

    /// The `__device__` or `__constant__` variable `name` of the library,
    /// as it lives in `ctx`, as `len` elements of `T`
    /// (`cuLibraryGetGlobal`). `name` resolves as for
    /// [`Module::global`](crate::Module::global).
    ///
    /// # Errors
    ///
    /// [`Error::Global`] when there is no such variable or its size is not
    /// a whole number of `T`s; [`Error::NotSupported`];
    /// [`Error::InteriorNul`]; driver errors; [`Error::ContextPoisoned`].
    pub fn global<'a, T: DeviceCopy>(
        &'a self,
        ctx: &'a Context,
        name: &str,
    ) -> Result<Global<'a, T>> {
        self.variable(ctx, name, false)
    }

    /// The `__managed__` variable `name` of the library, as `len` elements
    /// of `T` (`cuLibraryGetManaged`), read and written by copies as a
    /// global is.
    ///
    /// # Errors
    ///
    /// As [`Library::global`].
    pub fn managed<'a, T: DeviceCopy>(
        &'a self,
        ctx: &'a Context,
        name: &str,
    ) -> Result<Global<'a, T>> {
        self.variable(ctx, name, true)
    }

    fn variable<'a, T: DeviceCopy>(
        &'a self,
        ctx: &'a Context,
        name: &str,
        managed: bool,
    ) -> Result<Global<'a, T>> {
        let symbol = resolve_name(&self.lowered, name).unwrap_or(name);
        let symbol_c = c_string(symbol, "global name")?;
        let cu = ctx.enter()?;
        let (call, get) = if managed {
            (
                "cuLibraryGetManaged",
                optional!(cu, cuLibraryGetManaged, "CUDA 12.0"),
            )
        } else {
            (
                "cuLibraryGetGlobal",
                optional!(cu, cuLibraryGetGlobal, "CUDA 12.0"),
            )
        };
        let (mut ptr, mut bytes): (CUdeviceptr, usize) = (0, 0);
        // SAFETY: valid out-pointers, a loaded library, a C string; the
        // context is current (the variable is the current context's).
        let rc = unsafe { get(&mut ptr, &mut bytes, self.raw, symbol_c.as_ptr()) };
        if rc == CUresult::CUDA_ERROR_NOT_FOUND {
            return Err(Error::Global {
                name: name.to_owned(),
                reason: format!(
                    "no {} variable of that name in the library",
                    if managed {
                        "__managed__"
                    } else {
                        "__device__ or __constant__"
                    }
                ),
            });
        }
        ctx.check(call, rc)?;
        Global::from_raw_parts(ctx, ptr, bytes, name)
    }

    /// Unloads the library now (`cuLibraryUnload`), returning the driver's
    /// refusal, if any (drop ignores it). Nothing borrows the library: it
    /// is taken by value. Where this thread may not call the driver (a
    /// driver callback, a capture under way) the unload is deferred, as on
    /// drop, and `Ok` is returned.
    ///
    /// # Errors
    ///
    /// Driver errors (the library then stays loaded: a leak, never a free
    /// of what may be in use); [`Error::ForkedChild`].
    pub fn unload(mut self) -> Result<()> {
        // A null handle tells drop that the unload is done here.
        let raw = std::mem::replace(&mut self.raw, ptr::null_mut());
        drop(self);
        if forked() {
            return Err(Error::ForkedChild);
        }
        if !may_unload_here() {
            crate::context::lock(&DEFERRED_UNLOADS).push(raw as usize);
            return Ok(());
        }
        let cu = cu()?;
        let unload = optional!(cu, cuLibraryUnload, "CUDA 12.0");
        // SAFETY: the library loaded at construction, once: `self` was
        // consumed (and dropped with a null handle, which drop skips), so
        // no kernel or function borrows it.
        check("cuLibraryUnload", unsafe { unload(raw) })?;
        drain_deferred(cu);
        Ok(())
    }
}

impl Drop for Library {
    fn drop(&mut self) {
        if self.raw.is_null() || forked() {
            // Unloaded by `unload` already; or the parent's handle, which
            // is not this process's to free.
            return;
        }
        if !may_unload_here() {
            crate::context::lock(&DEFERRED_UNLOADS).push(self.raw as usize);
            return;
        }
        let Ok(cu) = cu() else { return };
        if let Some(unload) = cu.cuLibraryUnload {
            // SAFETY: unloads the library loaded at construction, once; no
            // kernel or function of it is alive (they borrow it).
            let _ = unsafe { unload(self.raw) };
        }
        drain_deferred(cu);
    }
}

/// A kernel of a [`Library`] (`cuLibraryGetKernel`), which it borrows:
/// context-independent until [`Kernel::function`] makes it a function of a
/// context.
pub struct Kernel<'l> {
    library: &'l Library,
    raw: CUkernel,
    name: String,
    symbol: String,
}

// SAFETY: a kernel handle is context-independent and may be used from any
// thread; the rest is owned data and a Sync library reference.
unsafe impl Send for Kernel<'_> {}
// SAFETY: as above.
unsafe impl Sync for Kernel<'_> {}

impl fmt::Debug for Kernel<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Kernel")
            .field("name", &self.name)
            .field("symbol", &self.symbol)
            .field("raw", &self.raw)
            .finish()
    }
}

impl<'l> Kernel<'l> {
    /// The name it was looked up by.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The symbol in the library (the lowered name of a name expression).
    pub fn symbol(&self) -> &str {
        &self.symbol
    }

    /// The raw handle.
    pub fn as_raw(&self) -> CUkernel {
        self.raw
    }

    /// The library.
    pub fn library(&self) -> &'l Library {
        self.library
    }

    /// The kernel as a launchable [`Function`] of `ctx`
    /// (`cuKernelGetFunction` with `ctx` current), checked at launch as a
    /// module's function is: its parameter table and its C types (from
    /// its mangled name or the library's PTX).
    ///
    /// # Errors
    ///
    /// [`Error::NotSupported`]; driver errors; [`Error::ContextPoisoned`].
    pub fn function<'a>(&self, ctx: &'a Context) -> Result<Function<'a>>
    where
        'l: 'a,
    {
        let cu = ctx.enter()?;
        let get = optional!(cu, cuKernelGetFunction, "CUDA 12.0");
        let mut raw: CUfunction = ptr::null_mut();
        // SAFETY: a valid out-pointer and a kernel of a loaded library (the
        // kernel borrows it); the context is current, so the function is
        // this context's.
        ctx.check("cuKernelGetFunction", unsafe { get(&mut raw, self.raw) })?;
        Ok(Function::of_library(
            ctx,
            self.library,
            self.raw,
            raw,
            &self.name,
            &self.symbol,
            self.library.ptx_entry(&self.symbol),
        ))
    }
}
