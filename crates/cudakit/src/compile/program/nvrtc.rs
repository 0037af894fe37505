//! The NVRTC calls: the loaded library's version and architectures, and one
//! compile run (create, name expressions, compile, log, outputs, lowered
//! names, destroy).

use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, CStr, CString};
use std::ptr;

use cuda_sys::{nvrtcProgram, nvrtcResult, Nvrtc};
use once_cell::sync::OnceCell;

use crate::compile::c_string;
use crate::error::{check_nvrtc, Error, NvrtcCode, NvrtcError, Result};

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
    // SAFETY: two valid out-pointers, as nvrtcVersion takes.
    check_nvrtc("nvrtcVersion", unsafe {
        (table.nvrtcVersion)(&mut major, &mut minor)
    })?;
    let mut count: c_int = 0;
    // SAFETY: a valid out-pointer, as nvrtcGetNumSupportedArchs takes.
    check_nvrtc("nvrtcGetNumSupportedArchs", unsafe {
        (table.nvrtcGetNumSupportedArchs)(&mut count)
    })?;
    let mut archs: Vec<c_int> = vec![0; usize::try_from(count).unwrap_or(0)];
    if !archs.is_empty() {
        // SAFETY: the array has the `count` elements NVRTC reported, which
        // is how many nvrtcGetSupportedArchs writes.
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

/// A program's strings as C strings, checked for interior NULs once for
/// all its runs.
pub(super) struct ProgramStrings {
    source: CString,
    name: CString,
    header_names: Vec<CString>,
    header_contents: Vec<CString>,
    expressions: Vec<(String, CString)>,
}

impl ProgramStrings {
    /// # Errors
    ///
    /// [`Error::InteriorNul`] naming the first string with a NUL byte.
    pub(super) fn new(
        name: &str,
        source: &str,
        headers: &[(String, String)],
        expressions: &[String],
    ) -> Result<ProgramStrings> {
        let mut header_names = Vec::with_capacity(headers.len());
        let mut header_contents = Vec::with_capacity(headers.len());
        for (name, contents) in headers {
            header_names.push(c_string(name.as_str(), "header name")?);
            header_contents.push(c_string(contents.as_str(), "header contents")?);
        }
        let expressions = expressions
            .iter()
            .map(|e| Ok((e.clone(), c_string(e.as_str(), "name expression")?)))
            .collect::<Result<_>>()?;
        Ok(ProgramStrings {
            source: c_string(source, "program source")?,
            name: c_string(name, "program name")?,
            header_names,
            header_contents,
            expressions,
        })
    }
}

/// One of NVRTC's size-then-get pairs: the first call writes how many bytes
/// there are (a text's NUL included), the second fills a buffer of exactly
/// that size. Made only by the constructors below, each of which pairs a
/// size call with the get call it sizes.
#[derive(Clone, Copy)]
struct SizedGet {
    size_call: &'static str,
    size: unsafe extern "C" fn(nvrtcProgram, *mut usize) -> nvrtcResult,
    get_call: &'static str,
    get: unsafe extern "C" fn(nvrtcProgram, *mut c_char) -> nvrtcResult,
}

/// The [`SizedGet`] of two entries of an [`Nvrtc`] table, named as their
/// symbols are.
macro_rules! sized_get {
    ($nv:expr, $size:ident, $get:ident) => {
        SizedGet {
            size_call: stringify!($size),
            size: $nv.$size,
            get_call: stringify!($get),
            get: $nv.$get,
        }
    };
}

impl SizedGet {
    /// `nvrtcGetPTXSize`, `nvrtcGetPTX`.
    fn ptx(nv: &Nvrtc) -> SizedGet {
        sized_get!(nv, nvrtcGetPTXSize, nvrtcGetPTX)
    }

    /// `nvrtcGetCUBINSize`, `nvrtcGetCUBIN`.
    fn cubin(nv: &Nvrtc) -> SizedGet {
        sized_get!(nv, nvrtcGetCUBINSize, nvrtcGetCUBIN)
    }

    /// `nvrtcGetLTOIRSize`, `nvrtcGetLTOIR`.
    fn lto_ir(nv: &Nvrtc) -> SizedGet {
        sized_get!(nv, nvrtcGetLTOIRSize, nvrtcGetLTOIR)
    }

    /// `nvrtcGetProgramLogSize`, `nvrtcGetProgramLog`.
    fn log(nv: &Nvrtc) -> SizedGet {
        sized_get!(nv, nvrtcGetProgramLogSize, nvrtcGetProgramLog)
    }
}

/// A live NVRTC program (`nvrtcCreateProgram`), destroyed when dropped
/// (`nvrtcDestroyProgram`), on every path out of a compile.
struct ProgramGuard {
    nv: &'static Nvrtc,
    /// Live: made by a successful `nvrtcCreateProgram` in `create`,
    /// destroyed only in `drop`.
    raw: nvrtcProgram,
}

impl ProgramGuard {
    fn create(nv: &'static Nvrtc, strings: &ProgramStrings) -> Result<ProgramGuard> {
        let header_ptrs: Vec<*const c_char> =
            strings.header_contents.iter().map(|h| h.as_ptr()).collect();
        let name_ptrs: Vec<*const c_char> =
            strings.header_names.iter().map(|h| h.as_ptr()).collect();
        let num_headers = c_int::try_from(header_ptrs.len())
            .map_err(|_| Error::InvalidArgument("too many headers".to_owned()))?;
        let (headers, names) = if header_ptrs.is_empty() {
            (ptr::null(), ptr::null())
        } else {
            (header_ptrs.as_ptr(), name_ptrs.as_ptr())
        };
        let mut raw: nvrtcProgram = ptr::null_mut();
        // SAFETY: a valid out-pointer; the source and name are
        // NUL-terminated C strings; `headers` and `names` are null or
        // arrays of `num_headers` NUL-terminated strings; all outlive the
        // call.
        check_nvrtc("nvrtcCreateProgram", unsafe {
            (nv.nvrtcCreateProgram)(
                &mut raw,
                strings.source.as_ptr(),
                strings.name.as_ptr(),
                num_headers,
                headers,
                names,
            )
        })?;
        Ok(ProgramGuard { nv, raw })
    }

    /// `nvrtcAddNameExpression`; before `compile` (after it, NVRTC
    /// answers an error).
    fn add_name_expression(&self, expression: &CStr) -> Result<()> {
        // SAFETY: `raw` is live (created in `create`, destroyed only in
        // drop); a C string that outlives the call (NVRTC copies it).
        check_nvrtc("nvrtcAddNameExpression", unsafe {
            (self.nv.nvrtcAddNameExpression)(self.raw, expression.as_ptr())
        })?;
        Ok(())
    }

    /// `nvrtcCompileProgram`; its result, for the caller to report with
    /// the log.
    fn compile(&self, options: &[CString]) -> Result<nvrtcResult> {
        let option_ptrs: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
        let num_options = c_int::try_from(option_ptrs.len())
            .map_err(|_| Error::InvalidArgument("too many options".to_owned()))?;
        let options_arg = if option_ptrs.is_empty() {
            ptr::null()
        } else {
            option_ptrs.as_ptr()
        };
        // SAFETY: `raw` is live (created in `create`, destroyed only in
        // drop); `options_arg` is null or an array of `num_options` C
        // strings, all outliving the call.
        Ok(unsafe { (self.nv.nvrtcCompileProgram)(self.raw, num_options, options_arg) })
    }

    /// Reads one size-then-get pair; `None` when NVRTC reports nothing (0
    /// bytes, or just the NUL of an empty text).
    fn read(&self, what: SizedGet) -> Result<Option<Vec<u8>>> {
        let mut size = 0usize;
        // SAFETY: `raw` is live (created in `create`, destroyed only in
        // drop); `what.size` is one of NVRTC's size entry points, which take
        // a program and a valid out-pointer to a `size_t`.
        check_nvrtc(what.size_call, unsafe { (what.size)(self.raw, &mut size) })?;
        if size <= 1 {
            return Ok(None);
        }
        let mut buffer = vec![0u8; size];
        // SAFETY: `raw` is live; `what` comes from a `SizedGet`
        // constructor, so `what.get` writes exactly the bytes `what.size`
        // just reported for this program, which the buffer has.
        check_nvrtc(what.get_call, unsafe {
            (what.get)(self.raw, buffer.as_mut_ptr().cast())
        })?;
        Ok(Some(buffer))
    }

    /// NVRTC's log, empty when there is none.
    fn log(&self) -> Result<String> {
        Ok(self
            .read(SizedGet::log(self.nv))?
            .map(text)
            .unwrap_or_default())
    }

    /// The lowered name of an expression added before compiling
    /// (`nvrtcGetLoweredName`); `Ok(None)` when NVRTC answers success with
    /// no name.
    fn lowered_name(&self, expression: &CStr) -> std::result::Result<Option<String>, NvrtcError> {
        let mut name: *const c_char = ptr::null();
        // SAFETY: `raw` is live (created in `create`, destroyed only in
        // drop); a C string that outlives the call; a valid out-pointer.
        check_nvrtc("nvrtcGetLoweredName", unsafe {
            (self.nv.nvrtcGetLoweredName)(self.raw, expression.as_ptr(), &mut name)
        })?;
        if name.is_null() {
            return Ok(None);
        }
        // SAFETY: NVRTC returned a NUL-terminated string owned by the
        // program, which is alive (`self` is borrowed); it is copied here,
        // before the program can go.
        let lowered = unsafe { CStr::from_ptr(name) };
        Ok(Some(lowered.to_string_lossy().into_owned()))
    }
}

impl Drop for ProgramGuard {
    fn drop(&mut self) {
        // SAFETY: `raw` is a live program created by nvrtcCreateProgram in
        // `create` and destroyed only here, once.
        let _ = unsafe { (self.nv.nvrtcDestroyProgram)(&mut self.raw) };
    }
}

/// A text NVRTC wrote: without its trailing NULs, invalid UTF-8 replaced.
fn text(mut bytes: Vec<u8>) -> String {
    while bytes.last() == Some(&0) {
        bytes.pop();
    }
    match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(err) => String::from_utf8_lossy(err.as_bytes()).into_owned(),
    }
}

/// What one NVRTC run produced.
pub(super) struct PassOutput {
    pub(super) ptx: Option<String>,
    pub(super) cubin: Option<Vec<u8>>,
    pub(super) lto_ir: Option<Vec<u8>>,
    pub(super) log: String,
    pub(super) lowered: BTreeMap<String, String>,
}

/// One NVRTC run: create, add name expressions, compile, read the log, the
/// outputs and the lowered names, destroy. `program` and `options` name
/// the run in errors.
pub(super) fn run_pass(
    nv: &'static Nvrtc,
    strings: &ProgramStrings,
    program: &str,
    options: &[String],
) -> Result<PassOutput> {
    let options_c: Vec<CString> = options
        .iter()
        .map(|o| c_string(o.as_str(), "compile option"))
        .collect::<Result<_>>()?;
    let failed = |code: NvrtcCode, log: String| Error::Compile {
        program: program.to_owned(),
        options: options.to_vec(),
        code,
        log,
    };
    let guard = ProgramGuard::create(nv, strings)?;
    for (_, expression) in &strings.expressions {
        guard.add_name_expression(expression)?;
    }
    let rc = guard.compile(&options_c)?;
    let log = guard.log()?;
    if let Err(err) = check_nvrtc("nvrtcCompileProgram", rc) {
        return Err(failed(err.code, log));
    }
    let ptx = guard
        .read(SizedGet::ptx(nv))?
        .map(text)
        .filter(|ptx| !ptx.is_empty());
    let cubin = guard.read(SizedGet::cubin(nv))?;
    let lto_ir = guard.read(SizedGet::lto_ir(nv))?;
    let mut lowered = BTreeMap::new();
    for (expression, expression_c) in &strings.expressions {
        let name = match guard.lowered_name(expression_c) {
            Ok(Some(name)) => name,
            Ok(None) => {
                return Err(Error::Nvrtc(NvrtcError {
                    call: "nvrtcGetLoweredName",
                    code: NvrtcCode::InternalError,
                }))
            }
            Err(err) => {
                return Err(failed(
                    err.code,
                    format!(
                        "name expression {expression:?} does not name a __global__ function or \
                         a __device__/__constant__ variable\n{log}"
                    ),
                ))
            }
        };
        lowered.insert(expression.clone(), name);
    }
    Ok(PassOutput {
        ptx,
        cubin,
        lto_ir,
        log,
        lowered,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_lose_their_nuls_and_keep_the_rest() {
        assert_eq!(text(b"log\n\0".to_vec()), "log\n");
        assert_eq!(text(b"\0\0".to_vec()), "");
        assert_eq!(text(b"a\xffb\0".to_vec()), "a\u{fffd}b");
    }
}
