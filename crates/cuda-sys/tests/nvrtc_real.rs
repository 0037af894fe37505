//! The real libnvrtc, loaded through the crate's loader and driven through the
//! raw table only. NVRTC needs no GPU, so these tests run wherever NVRTC is
//! installed; where it is not, they fail (never skip) and say how to get it.

use std::ffi::{c_char, c_int, CStr, CString};
use std::ptr;

use cuda_sys::{nvrtcProgram, nvrtcResult, Nvrtc};

/// The process's NVRTC table, or a panic that says how to install NVRTC.
fn nvrtc() -> &'static Nvrtc {
    match cuda_sys::nvrtc_with_origin() {
        Ok((table, loaded)) => {
            eprintln!(
                "libnvrtc: {} (builtins preloaded: {})",
                loaded.candidate,
                loaded.preloaded.as_deref().unwrap_or("no")
            );
            table
        }
        Err(err) => panic!(
            "{err}\n\n\
             these tests need the real NVRTC (no GPU needed); from the workspace root:\n  \
             python3 -m pip install --target .deps/python nvidia-cuda-nvrtc==13.0.88\n  \
             CUDAKIT_LIBNVRTC=$PWD/.deps/python/nvidia/cu13/lib/libnvrtc.so.13 \
             cargo test -p cuda-sys --test nvrtc_real\n\
             (an absolute path: cargo runs this test in crates/cuda-sys, where \
             .deps/python/nvidia/cu13/lib/libnvrtc.so.13 does not resolve), \
             or run scripts/test.sh, which does that"
        ),
    }
}

/// A program created through the raw table, destroyed on drop.
struct Program {
    nv: &'static Nvrtc,
    handle: nvrtcProgram,
}

impl Program {
    fn new(nv: &'static Nvrtc, src: &str, name: &str) -> Self {
        let src = CString::new(src).expect("source without NUL");
        let name = CString::new(name).expect("name without NUL");
        let mut handle: nvrtcProgram = ptr::null_mut();
        // SAFETY: `handle` is a valid out-pointer; `src` and `name` are
        // NUL-terminated and outlive the call; zero headers with null arrays
        // is allowed by the header.
        let rc = unsafe {
            (nv.nvrtcCreateProgram)(
                &mut handle,
                src.as_ptr(),
                name.as_ptr(),
                0,
                ptr::null(),
                ptr::null(),
            )
        };
        assert_eq!(rc, nvrtcResult::NVRTC_SUCCESS, "nvrtcCreateProgram");
        assert!(!handle.is_null(), "nvrtcCreateProgram gave a null program");
        Program { nv, handle }
    }

    fn add_name_expression(&self, expression: &str) {
        let expression = CString::new(expression).expect("expression without NUL");
        // SAFETY: the handle is a live program; the string is NUL-terminated
        // and outlives the call (NVRTC copies it).
        let rc = unsafe { (self.nv.nvrtcAddNameExpression)(self.handle, expression.as_ptr()) };
        self.check(rc, "nvrtcAddNameExpression");
    }

    fn compile(&self, options: &[&str]) -> nvrtcResult {
        let options: Vec<CString> = options
            .iter()
            .map(|o| CString::new(*o).expect("option without NUL"))
            .collect();
        let pointers: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
        let count = c_int::try_from(pointers.len()).expect("option count fits in int");
        // SAFETY: the handle is a live program; `pointers` holds `count`
        // NUL-terminated strings owned by `options`, both alive for the call.
        unsafe { (self.nv.nvrtcCompileProgram)(self.handle, count, pointers.as_ptr()) }
    }

    fn log(&self) -> String {
        let mut size = 0usize;
        // SAFETY: the handle is a live program; `size` is a valid out-pointer.
        let rc = unsafe { (self.nv.nvrtcGetProgramLogSize)(self.handle, &mut size) };
        assert_eq!(rc, nvrtcResult::NVRTC_SUCCESS, "nvrtcGetProgramLogSize");
        let mut buffer = vec![0u8; size.max(1)];
        // SAFETY: `buffer` holds at least the `size` bytes NVRTC reported.
        let rc = unsafe { (self.nv.nvrtcGetProgramLog)(self.handle, buffer.as_mut_ptr().cast()) };
        assert_eq!(rc, nvrtcResult::NVRTC_SUCCESS, "nvrtcGetProgramLog");
        until_nul(&buffer)
    }

    fn ptx(&self) -> String {
        let mut size = 0usize;
        // SAFETY: the handle is a live, compiled program; `size` is a valid
        // out-pointer.
        let rc = unsafe { (self.nv.nvrtcGetPTXSize)(self.handle, &mut size) };
        self.check(rc, "nvrtcGetPTXSize");
        assert!(size > 1, "nvrtcGetPTXSize reported {size} bytes");
        let mut buffer = vec![0xffu8; size];
        // SAFETY: `buffer` holds exactly the `size` bytes NVRTC reported.
        let rc = unsafe { (self.nv.nvrtcGetPTX)(self.handle, buffer.as_mut_ptr().cast()) };
        self.check(rc, "nvrtcGetPTX");
        assert_eq!(buffer[size - 1], 0, "the PTX ends with its NUL");
        until_nul(&buffer)
    }

    fn cubin(&self) -> Vec<u8> {
        let mut size = 0usize;
        // SAFETY: the handle is a live, compiled program; `size` is a valid
        // out-pointer.
        let rc = unsafe { (self.nv.nvrtcGetCUBINSize)(self.handle, &mut size) };
        self.check(rc, "nvrtcGetCUBINSize");
        let mut buffer = vec![0u8; size];
        // SAFETY: `buffer` holds exactly the `size` bytes NVRTC reported.
        let rc = unsafe { (self.nv.nvrtcGetCUBIN)(self.handle, buffer.as_mut_ptr().cast()) };
        self.check(rc, "nvrtcGetCUBIN");
        buffer
    }

    /// The raw result of `nvrtcGetLoweredName`, and the name on success.
    fn try_lowered_name(&self, expression: &str) -> (nvrtcResult, Option<String>) {
        let expression = CString::new(expression).expect("expression without NUL");
        let mut lowered: *const c_char = ptr::null();
        // SAFETY: the handle is a live program; the expression is
        // NUL-terminated; `lowered` is a valid out-pointer.
        let rc = unsafe {
            (self.nv.nvrtcGetLoweredName)(self.handle, expression.as_ptr(), &mut lowered)
        };
        if rc != nvrtcResult::NVRTC_SUCCESS || lowered.is_null() {
            return (rc, None);
        }
        // SAFETY: on success NVRTC points `lowered` at a NUL-terminated string
        // that lives until the program is destroyed, which is after this copy.
        let name = unsafe { CStr::from_ptr(lowered) };
        (
            rc,
            Some(name.to_str().expect("lowered name is UTF-8").to_owned()),
        )
    }

    fn lowered_name(&self, expression: &str) -> String {
        let (rc, name) = self.try_lowered_name(expression);
        self.check(rc, &format!("nvrtcGetLoweredName({expression})"));
        name.expect("a lowered name on success")
    }

    /// Panics with the call's name, the result, and the program log unless
    /// `rc` is `NVRTC_SUCCESS`.
    fn check(&self, rc: nvrtcResult, what: &str) {
        if rc != nvrtcResult::NVRTC_SUCCESS {
            panic!(
                "{what} returned {rc:?} ({}); program log:\n{}",
                error_string(self.nv, rc),
                self.log()
            );
        }
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: the handle came from nvrtcCreateProgram and is destroyed
        // only here; NVRTC sets it to null.
        let rc = unsafe { (self.nv.nvrtcDestroyProgram)(&mut self.handle) };
        if !std::thread::panicking() {
            assert_eq!(rc, nvrtcResult::NVRTC_SUCCESS, "nvrtcDestroyProgram");
            assert!(
                self.handle.is_null(),
                "nvrtcDestroyProgram nulls the handle"
            );
        }
    }
}

fn until_nul(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

fn error_string(nv: &Nvrtc, rc: nvrtcResult) -> String {
    // SAFETY: nvrtcGetErrorString takes any value and returns a static,
    // NUL-terminated string.
    let text = unsafe { (nv.nvrtcGetErrorString)(rc) };
    assert!(!text.is_null(), "nvrtcGetErrorString returned null");
    // SAFETY: non-null, NUL-terminated and static, as the header promises.
    unsafe { CStr::from_ptr(text) }
        .to_string_lossy()
        .into_owned()
}

const KERNELS: &str = r#"
namespace ns {
template <typename T>
__global__ void scale(T* x, T a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] = x[i] * a;
    }
}
}  // namespace ns

extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}
"#;

#[test]
fn version_is_12_or_13_and_sm_90_is_supported() {
    let nv = nvrtc();
    let (mut major, mut minor) = (0, 0);
    // SAFETY: both are valid out-pointers.
    let rc = unsafe { (nv.nvrtcVersion)(&mut major, &mut minor) };
    assert_eq!(rc, nvrtcResult::NVRTC_SUCCESS, "nvrtcVersion");
    assert!(
        major == 12 || major == 13,
        "NVRTC {major}.{minor}: expected 12.x or 13.x"
    );

    let mut count: c_int = 0;
    // SAFETY: `count` is a valid out-pointer.
    let rc = unsafe { (nv.nvrtcGetNumSupportedArchs)(&mut count) };
    assert_eq!(rc, nvrtcResult::NVRTC_SUCCESS, "nvrtcGetNumSupportedArchs");
    assert!(count > 0, "{count} supported architectures");
    let mut archs: Vec<c_int> = vec![-1; usize::try_from(count).expect("count fits")];
    // SAFETY: `archs` has the `count` elements NVRTC reported.
    let rc = unsafe { (nv.nvrtcGetSupportedArchs)(archs.as_mut_ptr()) };
    assert_eq!(rc, nvrtcResult::NVRTC_SUCCESS, "nvrtcGetSupportedArchs");
    assert!(
        archs.windows(2).all(|w| w[0] < w[1]),
        "ascending: {archs:?}"
    );
    assert!(archs.contains(&90), "sm_90 missing from {archs:?}");

    if major == 13 {
        assert_eq!(
            nv.missing_optional(),
            Vec::<&str>::new(),
            "NVRTC 13 exports every entry point of nvrtc.h 13.0"
        );
    }
}

#[test]
fn ptx_with_name_expressions_has_the_lowered_entries() {
    let nv = nvrtc();
    let program = Program::new(nv, KERNELS, "kernels.cu");
    program.add_name_expression("ns::scale<float>");
    program.add_name_expression("ns::scale<double>");

    let (rc, _) = program.try_lowered_name("ns::scale<float>");
    assert_eq!(
        rc,
        nvrtcResult::NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION,
        "nvrtcGetLoweredName before compiling"
    );

    let rc = program.compile(&["--gpu-architecture=compute_90"]);
    program.check(rc, "nvrtcCompileProgram");

    let ptx = program.ptx();
    assert!(!ptx.is_empty());
    let float = program.lowered_name("ns::scale<float>");
    let double = program.lowered_name("ns::scale<double>");
    for name in [&float, &double] {
        assert!(name.starts_with("_Z"), "lowered name {name:?} is mangled");
        assert!(
            ptx.contains(&format!(".entry {name}(")),
            "PTX lacks `.entry {name}(`:\n{ptx}"
        );
    }
    assert_ne!(float, double);
    assert!(
        ptx.contains(".entry saxpy("),
        "extern \"C\" saxpy is not unmangled in the PTX:\n{ptx}"
    );
    assert!(!ptx.contains("_Z5saxpy"), "saxpy was mangled");

    let (rc, _) = program.try_lowered_name("ns::scale<int>");
    assert_eq!(
        rc,
        nvrtcResult::NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID,
        "a name expression never added"
    );
}

#[test]
fn cubin_for_sm_90_is_an_elf_file() {
    let nv = nvrtc();
    let program = Program::new(nv, KERNELS, "kernels.cu");
    program.add_name_expression("ns::scale<float>");
    let rc = program.compile(&["-arch=sm_90"]);
    program.check(rc, "nvrtcCompileProgram");
    let cubin = program.cubin();
    assert!(cubin.len() > 4, "CUBIN of {} bytes", cubin.len());
    assert_eq!(&cubin[..4], b"\x7fELF", "CUBIN starts with the ELF magic");
}

#[test]
fn a_syntax_error_is_a_compilation_error_with_a_log() {
    let nv = nvrtc();
    let program = Program::new(
        nv,
        "extern \"C\" __global__ void broken(float* x) { x[0] = ; }\n",
        "cudakit_broken.cu",
    );
    let rc = program.compile(&["--gpu-architecture=compute_90"]);
    assert_eq!(rc, nvrtcResult::NVRTC_ERROR_COMPILATION);
    let log = program.log();
    assert!(
        log.contains("cudakit_broken.cu"),
        "log names the file:\n{log}"
    );
    assert!(log.contains("error"), "log reports an error:\n{log}");
}

#[test]
fn an_unknown_option_is_invalid_option() {
    let nv = nvrtc();
    let program = Program::new(nv, KERNELS, "kernels.cu");
    let rc = program.compile(&["--cudakit-no-such-option"]);
    assert_eq!(
        rc,
        nvrtcResult::NVRTC_ERROR_INVALID_OPTION,
        "log:\n{}",
        program.log()
    );
}

#[test]
fn error_strings_are_the_header_names() {
    let nv = nvrtc();
    assert_eq!(
        error_string(nv, nvrtcResult::NVRTC_SUCCESS),
        "NVRTC_SUCCESS"
    );
    assert_eq!(
        error_string(nv, nvrtcResult::NVRTC_ERROR_COMPILATION),
        "NVRTC_ERROR_COMPILATION"
    );
    assert_eq!(
        error_string(nv, nvrtcResult::NVRTC_ERROR_INVALID_OPTION),
        "NVRTC_ERROR_INVALID_OPTION"
    );
    assert_eq!(error_string(nv, nvrtcResult(9999)), "NVRTC_ERROR unknown");
}
