//! nvJitLink, the link-time optimizing linker of CUDA 12 and later, loaded
//! at run time (`cuda_sys::nvjitlink()`; `CUDAKIT_LIBNVJITLINK`, then
//! `libnvJitLink.so.13`, the toolkit, pip's `nvidia/nvjitlink/lib` and
//! `nvidia/cu13/lib`). It links LTO-IR (NVRTC's `-dlto` output, see
//! [`Output::LtoIr`](crate::compile::program::Output::LtoIr)) with PTX,
//! CUBIN, fatbins and libraries into one CUBIN, on the host: no GPU and no
//! context are needed, so it is tested for real on any machine with the
//! library.
//!
//! [`Linker`](crate::compile::linker::Linker) uses it on its own for LTO-IR
//! inputs; [`JitLink`] is the direct path, returning the CUBIN.
//!
//! ```no_run
//! use cudakit::compile::nvjitlink::{JitLink, JitLinkInput};
//! use cudakit::compile::program::{Arch, Output, Program};
//!
//! fn main() -> cudakit::Result<()> {
//!     let lib = Program::new("lib.cu", "__device__ float twice(float x) { return 2 * x; }")
//!         .arch(Arch::Sm(90)).output(Output::LtoIr).compile()?;
//!     let main = Program::new("main.cu", r#"__device__ float twice(float);
//!         extern "C" __global__ void k(float* x) { x[0] = twice(x[0]); }"#)
//!         .arch(Arch::Sm(90)).output(Output::LtoIr).compile()?;
//!     let mut link = JitLink::new(Arch::Sm(90), &["-lto", "-O3"])?;
//!     link.add(JitLinkInput::LtoIr, "lib.cu", lib.lto_ir().unwrap())?;
//!     link.add(JitLinkInput::LtoIr, "main.cu", main.lto_ir().unwrap())?;
//!     let cubin = link.complete()?; // load with ctx.load_module_image(&cubin)
//!     assert!(cubin.starts_with(b"\x7fELF"));
//!     Ok(())
//! }
//! ```
//!
//! Every failing `nvJitLinkResult` becomes [`Error::JitLink`] naming the
//! entry point, with the typed code and nvJitLink's error and info logs.

use std::ffi::{c_char, CString};
use std::path::Path;
use std::ptr;

use cuda_sys::{nvJitLinkHandle, nvJitLinkInputType, nvJitLinkResult, NvJitLink};

use crate::compile::c_string;
use crate::compile::program::Arch;
use crate::error::{Error, JitLinkCode, LoadError, Result};

/// What an nvJitLink input is (`nvJitLinkInputType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum JitLinkInput {
    /// A CUBIN.
    Cubin,
    /// PTX text.
    Ptx,
    /// LTO-IR (NVRTC's `-dlto`).
    LtoIr,
    /// A fatbin.
    Fatbin,
    /// A host object with embedded device code.
    Object,
    /// An archive of such objects, e.g. `libcudadevrt.a`.
    Library,
}

impl JitLinkInput {
    /// The raw input type.
    pub fn raw(self) -> nvJitLinkInputType {
        match self {
            JitLinkInput::Cubin => nvJitLinkInputType::NVJITLINK_INPUT_CUBIN,
            JitLinkInput::Ptx => nvJitLinkInputType::NVJITLINK_INPUT_PTX,
            JitLinkInput::LtoIr => nvJitLinkInputType::NVJITLINK_INPUT_LTOIR,
            JitLinkInput::Fatbin => nvJitLinkInputType::NVJITLINK_INPUT_FATBIN,
            JitLinkInput::Object => nvJitLinkInputType::NVJITLINK_INPUT_OBJECT,
            JitLinkInput::Library => nvJitLinkInputType::NVJITLINK_INPUT_LIBRARY,
        }
    }
}

/// The process's nvJitLink, or [`Error::JitLinkUnavailable`] naming the
/// input that needed it.
pub(crate) fn load_for(input: &str, why: &'static str) -> Result<&'static NvJitLink> {
    cuda_sys::nvjitlink().map_err(|source: LoadError| Error::JitLinkUnavailable {
        input: input.to_owned(),
        why,
        source,
    })
}

/// nvJitLink's version (`nvJitLinkVersion`), loading it if need be.
///
/// # Errors
///
/// [`Error::Load`] when nvJitLink cannot be loaded; [`Error::JitLink`].
pub fn version() -> Result<(u32, u32)> {
    let api = cuda_sys::nvjitlink()?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: valid out-pointers.
    let rc = unsafe { (api.nvJitLinkVersion)(&mut major, &mut minor) };
    check(rc, "nvJitLinkVersion", String::new)?;
    Ok((major, minor))
}

fn check(rc: nvJitLinkResult, call: &'static str, log: impl FnOnce() -> String) -> Result<()> {
    if rc == nvJitLinkResult::NVJITLINK_SUCCESS {
        Ok(())
    } else {
        Err(Error::JitLink {
            call,
            code: JitLinkCode::from_raw(rc),
            log: log(),
        })
    }
}

/// One nvJitLink link (`nvJitLinkCreate`), destroyed on drop
/// (`nvJitLinkDestroy`).
pub struct JitLink {
    api: &'static NvJitLink,
    handle: nvJitLinkHandle,
    options: Vec<String>,
    inputs: Vec<String>,
    /// Every name, path and input image handed to nvJitLink, kept until
    /// the handle is destroyed: the header does not say nvJitLink copies
    /// them, and its logs were seen (on the H200) to read input names after
    /// `nvJitLinkAddData` returned.
    kept_names: Vec<CString>,
    kept_data: Vec<Box<[u8]>>,
}

// SAFETY: `JitLink` is not `Sync` (it holds a raw handle), so its handle is
// used by one thread at a time, whether through `&self` (`logs`),
// `&mut self` (`add`, `add_file`), by value (`complete*`) or in drop;
// nvJitLink handles are not tied to the thread that made them.
unsafe impl Send for JitLink {}

impl std::fmt::Debug for JitLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JitLink")
            .field("options", &self.options)
            .field("inputs", &self.inputs)
            .finish()
    }
}

impl JitLink {
    /// Starts a link for `arch` (`-arch=sm_XY` is added first) with more
    /// nvJitLink options (`-lto`, `-O3`, `-maxrregcount=N`, `-g`,
    /// `-lineinfo`, `-ftz=true`, ...).
    ///
    /// # Errors
    ///
    /// [`Error::Load`] when nvJitLink cannot be loaded;
    /// [`Error::InteriorNul`]; [`Error::JitLink`] (an unknown option is
    /// `NVJITLINK_ERROR_UNRECOGNIZED_OPTION`).
    pub fn new(arch: Arch, options: &[&str]) -> Result<JitLink> {
        let api = cuda_sys::nvjitlink()?;
        Self::with_api(api, arch, options)
    }

    pub(crate) fn with_api(
        api: &'static NvJitLink,
        arch: Arch,
        options: &[&str],
    ) -> Result<JitLink> {
        let mut all: Vec<String> = vec![format!("-arch={}", arch.sm_name())];
        all.extend(options.iter().map(|o| (*o).to_owned()));
        let c_options: Vec<CString> = all
            .iter()
            .map(|o| c_string(o.as_str(), "nvJitLink option"))
            .collect::<Result<_>>()?;
        let pointers: Vec<*const c_char> = c_options.iter().map(|o| o.as_ptr()).collect();
        let mut handle: nvJitLinkHandle = ptr::null_mut();
        // SAFETY: a valid out-pointer; `pointers` holds `len` C strings that
        // live for the call.
        let rc =
            unsafe { (api.nvJitLinkCreate)(&mut handle, pointers.len() as u32, pointers.as_ptr()) };
        if rc != nvJitLinkResult::NVJITLINK_SUCCESS {
            // The handle may exist (it holds the log) even when creation failed.
            let log = if handle.is_null() {
                format!("options: {}", all.join(" "))
            } else {
                let log = logs(api, handle);
                // SAFETY: destroys the handle nvJitLinkCreate wrote, once.
                let _ = unsafe { (api.nvJitLinkDestroy)(&mut handle) };
                format!("options: {}\n{log}", all.join(" "))
            };
            return Err(Error::JitLink {
                call: "nvJitLinkCreate",
                code: JitLinkCode::from_raw(rc),
                log,
            });
        }
        Ok(JitLink {
            api,
            handle,
            options: all,
            inputs: Vec::new(),
            kept_names: Vec::new(),
            kept_data: Vec::new(),
        })
    }

    /// The options the link was created with, `-arch` first.
    pub fn options(&self) -> &[String] {
        &self.options
    }

    /// The inputs added so far, by name.
    pub fn inputs(&self) -> &[String] {
        &self.inputs
    }

    /// nvJitLink's error log, then its info log, so far.
    pub fn logs(&self) -> String {
        logs(self.api, self.handle)
    }

    /// Adds an input from memory (`nvJitLinkAddData`); `name` labels it in
    /// the logs.
    ///
    /// # Errors
    ///
    /// [`Error::ZeroLength`], [`Error::InteriorNul`]; [`Error::JitLink`]
    /// with the logs when nvJitLink rejects it.
    pub fn add(&mut self, kind: JitLinkInput, name: &str, data: &[u8]) -> Result<&mut Self> {
        if data.is_empty() {
            return Err(Error::ZeroLength { what: "link input" });
        }
        let name_c = c_string(name, "link input name")?;
        let data: Box<[u8]> = data.into();
        // SAFETY: a live handle; `data` is `len` readable bytes and the
        // name a C string, both moved into `self` below and so alive until
        // the handle is destroyed (nvJitLink may refer to them until then).
        let rc = unsafe {
            (self.api.nvJitLinkAddData)(
                self.handle,
                kind.raw(),
                data.as_ptr().cast(),
                data.len(),
                name_c.as_ptr(),
            )
        };
        self.kept_names.push(name_c);
        self.kept_data.push(data);
        check(rc, "nvJitLinkAddData", || {
            format!("input {name} ({kind:?}):\n{}", self.logs())
        })?;
        self.inputs.push(name.to_owned());
        Ok(self)
    }

    /// Adds a file (`nvJitLinkAddFile`), e.g. `libcudadevrt.a` as
    /// [`JitLinkInput::Library`].
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the file does not exist; [`Error::InteriorNul`];
    /// [`Error::JitLink`] with the logs.
    pub fn add_file(&mut self, kind: JitLinkInput, path: impl AsRef<Path>) -> Result<&mut Self> {
        let path = path.as_ref();
        if !path.is_file() {
            return Err(Error::Io {
                path: path.display().to_string(),
                message: "no such file".to_owned(),
            });
        }
        let display = path.display().to_string();
        let path_c = c_string(path.as_os_str().as_encoded_bytes(), "link input path")?;
        // SAFETY: a live handle and a C string path, kept in `self` below
        // until the handle is destroyed.
        let rc = unsafe { (self.api.nvJitLinkAddFile)(self.handle, kind.raw(), path_c.as_ptr()) };
        self.kept_names.push(path_c);
        check(rc, "nvJitLinkAddFile", || {
            format!("input {display} ({kind:?}):\n{}", self.logs())
        })?;
        self.inputs.push(display);
        Ok(self)
    }

    /// Links (`nvJitLinkComplete`) and returns the CUBIN
    /// (`nvJitLinkGetLinkedCubinSize`, `nvJitLinkGetLinkedCubin`).
    ///
    /// # Errors
    ///
    /// [`Error::JitLink`] with the logs (unresolved symbols, ...).
    pub fn complete(self) -> Result<Vec<u8>> {
        self.complete_with_log().map(|(cubin, _)| cubin)
    }

    /// As [`JitLink::complete`], with the info log.
    ///
    /// # Errors
    ///
    /// As [`JitLink::complete`].
    pub fn complete_with_log(self) -> Result<(Vec<u8>, String)> {
        // SAFETY: a live handle.
        let rc = unsafe { (self.api.nvJitLinkComplete)(self.handle) };
        check(rc, "nvJitLinkComplete", || {
            format!("inputs: {}\n{}", self.inputs.join(", "), self.logs())
        })?;
        let mut size = 0usize;
        // SAFETY: a live, completed handle and a valid out-pointer.
        let rc = unsafe { (self.api.nvJitLinkGetLinkedCubinSize)(self.handle, &mut size) };
        check(rc, "nvJitLinkGetLinkedCubinSize", || self.logs())?;
        let mut cubin = vec![0u8; size];
        // SAFETY: the buffer holds the `size` bytes nvJitLink said the CUBIN has.
        let rc =
            unsafe { (self.api.nvJitLinkGetLinkedCubin)(self.handle, cubin.as_mut_ptr().cast()) };
        check(rc, "nvJitLinkGetLinkedCubin", || self.logs())?;
        let info = read_log(self.api, self.handle, false);
        Ok((cubin, info))
    }
}

impl Drop for JitLink {
    fn drop(&mut self) {
        // SAFETY: destroys the handle made in `new`, once; nvJitLink sets it
        // to null. A failure here has no one to report to.
        let _ = unsafe { (self.api.nvJitLinkDestroy)(&mut self.handle) };
    }
}

/// One of the two logs; empty when nvJitLink gives none.
fn read_log(api: &NvJitLink, handle: nvJitLinkHandle, error: bool) -> String {
    let (size_fn, get_fn) = if error {
        (api.nvJitLinkGetErrorLogSize, api.nvJitLinkGetErrorLog)
    } else {
        (api.nvJitLinkGetInfoLogSize, api.nvJitLinkGetInfoLog)
    };
    let mut size = 0usize;
    // SAFETY: a live handle and a valid out-pointer.
    let rc = unsafe { size_fn(handle, &mut size) };
    if rc != nvJitLinkResult::NVJITLINK_SUCCESS || size == 0 {
        return String::new();
    }
    let mut buffer = vec![0u8; size];
    // SAFETY: the buffer holds the `size` bytes (NUL included) nvJitLink said.
    let rc = unsafe { get_fn(handle, buffer.as_mut_ptr().cast()) };
    if rc != nvJitLinkResult::NVJITLINK_SUCCESS {
        return String::new();
    }
    let end = buffer.iter().position(|&b| b == 0).unwrap_or(buffer.len());
    String::from_utf8_lossy(&buffer[..end])
        .trim_end()
        .to_owned()
}

fn logs(api: &NvJitLink, handle: nvJitLinkHandle) -> String {
    let error = read_log(api, handle, true);
    let info = read_log(api, handle, false);
    match (error.is_empty(), info.is_empty()) {
        (true, true) => "(nvJitLink wrote no log)".to_owned(),
        (false, true) => error,
        (true, false) => format!("info: {info}"),
        (false, false) => format!("{error}\ninfo: {info}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_types_map_to_the_header() {
        assert_eq!(JitLinkInput::Cubin.raw().0, 1);
        assert_eq!(JitLinkInput::Ptx.raw().0, 2);
        assert_eq!(JitLinkInput::LtoIr.raw().0, 3);
        assert_eq!(JitLinkInput::Fatbin.raw().0, 4);
        assert_eq!(JitLinkInput::Object.raw().0, 5);
        assert_eq!(JitLinkInput::Library.raw().0, 6);
    }

    #[test]
    fn failures_become_typed_errors_with_the_log() {
        let err = check(
            nvJitLinkResult::NVJITLINK_ERROR_NVVM_COMPILE,
            "nvJitLinkComplete",
            || "error: undefined reference to twice".to_owned(),
        )
        .unwrap_err();
        let Error::JitLink { call, code, log } = &err else {
            panic!("{err:?}");
        };
        assert_eq!(
            (*call, *code),
            ("nvJitLinkComplete", JitLinkCode::NvvmCompile)
        );
        assert!(log.contains("twice"));
        assert!(err
            .to_string()
            .starts_with("nvJitLinkComplete: NVJITLINK_ERROR_NVVM_COMPILE (5)"));
        assert!(check(nvJitLinkResult::NVJITLINK_SUCCESS, "x", String::new).is_ok());
    }

    #[test]
    fn a_missing_nvjitlink_names_the_input_that_needed_it() {
        let source = LoadError::NotFound {
            library: "libnvJitLink",
            attempts: vec![cuda_sys::Attempt {
                candidate: "libnvJitLink.so.13".into(),
                reason: "not found".into(),
            }],
            hint: "\nhint: install it",
        };
        let err = Error::JitLinkUnavailable {
            input: "main.cu".into(),
            why: "LTO-IR",
            source,
        };
        let text = err.to_string();
        assert!(
            text.contains("link input main.cu needs nvJitLink (LTO-IR)"),
            "{text}"
        );
        assert!(text.contains("libnvJitLink.so.13: not found"), "{text}");
    }
}
