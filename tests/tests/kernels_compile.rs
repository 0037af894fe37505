//! Every kernel file compiles with the real NVRTC for sm_90 (CUBIN; a file
//! with its own architecture, such as gemm_sm90.cu's sm_90a, for that), with
//! every kernel of it registered as a name expression, without a single
//! warning (a register spill counts: ptxas is asked to report them), and
//! every name lowers. A CPU test: NVRTC needs no GPU, so this runs in CI.
//! Where NVRTC cannot be loaded it fails, and says how to get it.
//!
//! It drives NVRTC through cuda-sys's raw table, independently of cudakit's
//! compile path, so a kernel bug and a compile-path bug cannot hide each
//! other.
//!
//! NVRTC 12.9 and later keep their own compile cache in the driver's
//! compute cache (`~/.nv/ComputeCache`, or `CUDA_CACHE_PATH`), used
//! whenever a libcuda can be loaded. A cache hit returns the binary without
//! running ptxas, so the log is empty: no spill report, no warning. That is
//! why `a_spill_would_be_reported` failed in one of two runs of the same
//! bundle on the H200 (the run that found an entry an earlier compile had
//! left in the driver's cache), while it always passed on machines without
//! a driver, where NVRTC's cache is off.
//! Every compile here passes `--no-cache` (on NVRTC 12.9+), so ptxas runs
//! and reports each time: the no-warning checks cannot pass on a cached
//! compile either.
//!
//! Nothing here reads the checkout at run time (the GPU bundle runs these
//! binaries without one): the sources are embedded by `cudakit_suite`, the
//! README with `include_str!`, and the list of `kernels/*.cu` files is made
//! by `tests/build.rs` when the crate is built.

use std::ffi::{c_char, c_int, CStr, CString};
use std::ptr;

use cuda_sys::{nvrtcProgram, nvrtcResult, Nvrtc};
use cudakit_suite::kernels::{Source, MATMUL_KERNELS, OPTIONS, SOURCES};

/// `kernels/*.cu` when the crate was built (`tests/build.rs`).
mod listing {
    include!(concat!(env!("OUT_DIR"), "/kernel_files.rs"));
}

/// The options of these tests: the kernels' own, plus ptxas's spill report
/// (a spill becomes a log line, and a log line fails the test), plus
/// `--no-cache` where NVRTC has a cache (see the file's documentation).
fn options() -> Vec<&'static str> {
    let mut o = OPTIONS.to_vec();
    o.push("--ptxas-options=--warn-on-spills");
    o.extend(no_cache());
    o
}

/// [`options`] with the file's own `-arch=` ([`Source::options`]) in place
/// of [`OPTIONS`]'.
fn options_for(source: &Source) -> Vec<String> {
    let mut o = source.options();
    o.extend(options()[OPTIONS.len()..].iter().map(|s| (*s).to_owned()));
    o
}

/// The loaded NVRTC's version (`nvrtcVersion`).
fn nvrtc_version(nv: &Nvrtc) -> (i32, i32) {
    let (mut major, mut minor) = (0, 0);
    // SAFETY: two valid out-pointers.
    let rc = unsafe { (nv.nvrtcVersion)(&mut major, &mut minor) };
    check(nv, rc, "nvrtcVersion");
    (major, minor)
}

/// `--no-cache` on NVRTC 12.9 and later, which cache compiles (and return
/// an empty log on a hit); nothing before 12.9, which has no cache and
/// refuses the option.
fn no_cache() -> Option<&'static str> {
    (nvrtc_version(nvrtc()) >= (12, 9)).then_some("--no-cache")
}

/// The process's NVRTC table, or a panic that says how to install NVRTC.
fn nvrtc() -> &'static Nvrtc {
    match cuda_sys::nvrtc_with_origin() {
        Ok((table, loaded)) => {
            eprintln!(
                "libnvrtc: {} (CUDA_CACHE_DISABLE={:?}, CUDA_CACHE_PATH={:?})",
                loaded.candidate,
                std::env::var_os("CUDA_CACHE_DISABLE"),
                std::env::var_os("CUDA_CACHE_PATH")
            );
            table
        }
        Err(err) => panic!(
            "{err}\n\n\
             the kernel compile tests need the real NVRTC (no GPU needed). Either run \
             scripts/test.sh, which installs it, or from the workspace root:\n  \
             python3 -m pip install --target .deps/python nvidia-cuda-nvrtc==13.0.88\n  \
             CUDAKIT_LIBNVRTC=$PWD/.deps/python/nvidia/cu13/lib/libnvrtc.so.13 \
             cargo test -p cudakit-tests --test kernels_compile\n\
             (CUDAKIT_LIBNVRTC must be an absolute path: cargo runs this test in tests/)"
        ),
    }
}

/// A program created through the raw table, destroyed on drop.
struct Program {
    nv: &'static Nvrtc,
    handle: nvrtcProgram,
}

fn check(nv: &Nvrtc, rc: nvrtcResult, what: &str) {
    if rc != nvrtcResult::NVRTC_SUCCESS {
        // SAFETY: nvrtcGetErrorString accepts any value and returns a
        // pointer to a static NUL-terminated string.
        let text = unsafe { CStr::from_ptr((nv.nvrtcGetErrorString)(rc)) };
        panic!("{what}: {rc:?} ({})", text.to_string_lossy());
    }
}

impl Program {
    fn new(nv: &'static Nvrtc, src: &str, name: &str) -> Program {
        let src = CString::new(src).expect("source without NUL");
        let name = CString::new(name).expect("name without NUL");
        let mut handle: nvrtcProgram = ptr::null_mut();
        // SAFETY: `handle` is a valid out-pointer; `src` and `name` are
        // NUL-terminated and outlive the call; zero headers with null arrays
        // is allowed by nvrtc.h.
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
        check(nv, rc, "nvrtcCreateProgram");
        assert!(!handle.is_null(), "nvrtcCreateProgram gave a null program");
        Program { nv, handle }
    }

    fn add_name_expression(&self, expression: &str) {
        let expression = CString::new(expression).expect("expression without NUL");
        // SAFETY: the handle is a live program; the string is NUL-terminated
        // and outlives the call (NVRTC copies it).
        let rc = unsafe { (self.nv.nvrtcAddNameExpression)(self.handle, expression.as_ptr()) };
        check(self.nv, rc, "nvrtcAddNameExpression");
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
        check(self.nv, rc, "nvrtcGetProgramLogSize");
        let mut buffer = vec![0u8; size.max(1)];
        // SAFETY: `buffer` holds at least the `size` bytes NVRTC reported.
        let rc = unsafe { (self.nv.nvrtcGetProgramLog)(self.handle, buffer.as_mut_ptr().cast()) };
        check(self.nv, rc, "nvrtcGetProgramLog");
        until_nul(&buffer)
    }

    fn lowered_name(&self, expression: &str) -> Result<String, nvrtcResult> {
        let expression = CString::new(expression).expect("expression without NUL");
        let mut lowered: *const c_char = ptr::null();
        // SAFETY: the handle is a live, compiled program; the expression is
        // NUL-terminated; `lowered` is a valid out-pointer.
        let rc = unsafe {
            (self.nv.nvrtcGetLoweredName)(self.handle, expression.as_ptr(), &mut lowered)
        };
        if rc != nvrtcResult::NVRTC_SUCCESS {
            return Err(rc);
        }
        assert!(!lowered.is_null(), "nvrtcGetLoweredName gave a null name");
        // SAFETY: on success `lowered` points to a NUL-terminated string
        // that lives until the program is destroyed, which is after this copy.
        Ok(unsafe { CStr::from_ptr(lowered) }
            .to_string_lossy()
            .into_owned())
    }

    fn cubin(&self) -> Vec<u8> {
        let mut size = 0usize;
        // SAFETY: the handle is a live, compiled program; `size` is a valid
        // out-pointer.
        let rc = unsafe { (self.nv.nvrtcGetCUBINSize)(self.handle, &mut size) };
        check(self.nv, rc, "nvrtcGetCUBINSize");
        let mut buffer = vec![0u8; size];
        if size > 0 {
            // SAFETY: `buffer` holds the `size` bytes NVRTC reported.
            let rc = unsafe { (self.nv.nvrtcGetCUBIN)(self.handle, buffer.as_mut_ptr().cast()) };
            check(self.nv, rc, "nvrtcGetCUBIN");
        }
        buffer
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: the handle is a live program, destroyed exactly once here.
        let rc = unsafe { (self.nv.nvrtcDestroyProgram)(&mut self.handle) };
        if rc != nvrtcResult::NVRTC_SUCCESS {
            eprintln!("nvrtcDestroyProgram: {rc:?}");
        }
    }
}

fn until_nul(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

/// Compiles one file with all its kernels as name expressions and checks
/// everything this file's header promises.
fn compile_source(file: &str) {
    let source = SOURCES
        .iter()
        .find(|s| s.file == file)
        .unwrap_or_else(|| panic!("no source {file}"));
    let nv = nvrtc();
    let program = Program::new(nv, source.text, source.file);
    for name in source.kernels {
        program.add_name_expression(name);
    }
    let options = options_for(source);
    let rc = program.compile(&options.iter().map(String::as_str).collect::<Vec<_>>());
    let log = program.log();
    assert_eq!(
        rc,
        nvrtcResult::NVRTC_SUCCESS,
        "{file} did not compile with {options:?}; log:\n{log}"
    );
    assert!(
        log.trim().is_empty(),
        "{file} compiled with a non-empty log (warnings and spills are failures):\n{log}"
    );
    let mut lowered_names = Vec::new();
    for name in source.kernels {
        let lowered = program
            .lowered_name(name)
            .unwrap_or_else(|rc| panic!("{file}: {name:?} did not lower: {rc:?}"));
        if Source::is_template(name) {
            assert!(
                lowered.starts_with("_Z"),
                "{file}: {name:?} lowered to {lowered:?}, not a mangled name"
            );
        } else {
            assert_eq!(lowered, *name, "{file}: extern \"C\" {name:?} was mangled");
        }
        lowered_names.push(lowered);
    }
    let mut unique = lowered_names.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(
        unique.len(),
        lowered_names.len(),
        "{file}: two names lowered alike"
    );
    let cubin = program.cubin();
    assert!(
        cubin.starts_with(b"\x7fELF"),
        "{file}: the CUBIN is not an ELF image"
    );
    // Every kernel is in the image under its lowered name (the symbol table
    // holds it NUL-terminated).
    for lowered in &lowered_names {
        let mut needle = lowered.as_bytes().to_vec();
        needle.push(0);
        assert!(
            cubin.windows(needle.len()).any(|w| w == needle),
            "{file}: {lowered} is not in the CUBIN"
        );
    }
    eprintln!(
        "{file}: {} kernels, {} bytes of CUBIN",
        lowered_names.len(),
        cubin.len()
    );
}

#[test]
fn matmul_compiles() {
    compile_source("matmul.cu");
}

#[test]
fn matmul_mma_compiles() {
    compile_source("matmul_mma.cu");
}

#[test]
fn blas1_compiles() {
    compile_source("blas1.cu");
}

#[test]
fn transpose_compiles() {
    compile_source("transpose.cu");
}

#[test]
fn faults_compiles() {
    compile_source("faults.cu");
}

#[test]
fn pdl_compiles() {
    compile_source("pdl.cu");
}

#[test]
fn conditional_compiles() {
    compile_source("conditional.cu");
}

#[test]
fn device_graph_compiles() {
    compile_source("device_graph.cu");
}

#[test]
fn smid_compiles() {
    compile_source("smid.cu");
}

#[test]
fn launch_compiles() {
    compile_source("launch.cu");
}

#[test]
fn gemm_sm90_compiles() {
    compile_source("gemm_sm90.cu");
}

#[test]
fn fp8_convert_compiles() {
    compile_source("fp8_convert.cu");
}

#[test]
fn sgemm_compiles() {
    compile_source("sgemm.cu");
}

#[test]
fn dgemm_compiles() {
    compile_source("dgemm.cu");
}

#[test]
fn every_source_has_a_compile_test_and_every_file_is_a_source() {
    let tested = [
        "matmul.cu",
        "matmul_mma.cu",
        "blas1.cu",
        "transpose.cu",
        "faults.cu",
        "pdl.cu",
        "launch.cu",
        "gemm_sm90.cu",
        "fp8_convert.cu",
        "sgemm.cu",
        "dgemm.cu",
        "conditional.cu",
        "device_graph.cu",
        "smid.cu",
    ];
    let listed: Vec<&str> = SOURCES.iter().map(|s| s.file).collect();
    assert_eq!(listed, tested);
    // The folder as it was at build time: no run-time read of the checkout.
    let mut listed_sorted = listed.clone();
    listed_sorted.sort_unstable();
    assert_eq!(
        listing::KERNEL_FILES,
        &listed_sorted[..],
        "kernels/*.cu and SOURCES differ"
    );
}

#[test]
fn sources_are_self_contained() {
    for source in SOURCES {
        for (n, line) in source.text.lines().enumerate() {
            assert!(
                !line.trim_start().starts_with("#include"),
                "{}:{}: kernels must not #include (NVRTC has no built-in headers for them): {line}",
                source.file,
                n + 1
            );
        }
    }
}

#[test]
fn every_kernel_is_documented() {
    let readme = include_str!("../../kernels/README.md");
    // Every file section is of a file that exists (a removed file's
    // section would go on describing it).
    for line in readme.lines().filter(|l| l.starts_with("## ")) {
        let Some(file) = line[3..].split([':', ',', ' ']).next() else {
            continue;
        };
        if file.ends_with(".cu") {
            assert!(
                SOURCES.iter().any(|s| s.file == file),
                "kernels/README.md has a section for {file}, which is not a kernel file"
            );
        }
    }
    for source in SOURCES {
        assert!(
            readme.contains(&format!("## {}", source.file)),
            "kernels/README.md has no section for {}",
            source.file
        );
        for name in source.kernels {
            // Templates are documented by their template name and
            // instantiation list; every extern "C" kernel by its name.
            let base = name.split('<').next().expect("a name");
            assert!(
                readme.contains(&format!("`{base}")),
                "kernels/README.md does not mention {name}"
            );
        }
    }
}

#[test]
fn every_matmul_kernel_is_in_its_source() {
    for k in MATMUL_KERNELS {
        let source = SOURCES
            .iter()
            .find(|s| s.file == k.file)
            .expect("a listed file");
        assert!(source.kernels.contains(&k.name), "{}", k.name);
    }
}

#[test]
fn assert_survives_without_ndebug_and_vanishes_with_it() {
    // fault_assert relies on NVRTC's built-in device assert; with -DNDEBUG
    // the call to __assertfail must disappear (documented in faults.cu).
    let nv = nvrtc();
    for (define, expect_assert) in [(None, true), (Some("-DNDEBUG"), false)] {
        let source = SOURCES.iter().find(|s| s.file == "faults.cu").unwrap();
        let program = Program::new(nv, source.text, source.file);
        let mut options = vec!["-arch=compute_90"];
        options.extend(define);
        options.extend(no_cache());
        let rc = program.compile(&options);
        assert_eq!(rc, nvrtcResult::NVRTC_SUCCESS, "{}", program.log());
        let mut size = 0usize;
        // SAFETY: a live, compiled program; `size` is a valid out-pointer.
        let rc = unsafe { (nv.nvrtcGetPTXSize)(program.handle, &mut size) };
        check(nv, rc, "nvrtcGetPTXSize");
        let mut ptx = vec![0u8; size];
        // SAFETY: `ptx` holds the `size` bytes NVRTC reported.
        let rc = unsafe { (nv.nvrtcGetPTX)(program.handle, ptx.as_mut_ptr().cast()) };
        check(nv, rc, "nvrtcGetPTX");
        let ptx = until_nul(&ptx);
        assert_eq!(
            ptx.contains("__assertfail"),
            expect_assert,
            "options {options:?}"
        );
    }
}

#[test]
fn a_spill_would_be_reported() {
    // The spill check above is only worth something if ptxas really writes
    // to the log: a kernel forced to spill must produce a warning.
    let src = r#"
extern "C" __global__ void __launch_bounds__(1024, 2) spills(const float* a, float* o) {
    float r[64];
#pragma unroll
    for (int i = 0; i < 64; ++i) r[i] = a[i * threadIdx.x];
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < 64; ++j) {
#pragma unroll
        for (int i = 0; i < 64; ++i) s += r[i] * r[(i + j) % 64];
        // A store that may alias `a`: the compiler cannot reload r[] from
        // memory instead of keeping it, so it must spill.
        o[j * blockDim.x + threadIdx.x] = s;
    }
}
"#;
    let nv = nvrtc();
    let mut opts = options();
    opts.push("--maxrregcount=24");
    // Twice, each a fresh program of the same source and options: without
    // `--no-cache` the second one is what an NVRTC cache hit serves (also
    // across processes, from the driver's compute cache), with an empty log.
    for attempt in 1..=2 {
        let program = Program::new(nv, src, "spills.cu");
        let rc = program.compile(&opts);
        assert_eq!(rc, nvrtcResult::NVRTC_SUCCESS, "{}", program.log());
        let log = program.log();
        assert!(
            log.contains("spill"),
            "compile {attempt} with {opts:?} (NVRTC {:?}): no spill report in the log: {log:?}",
            nvrtc_version(nv)
        );
    }
}

/// Whether `image` names the kernel `name` (a CUBIN's symbol table holds
/// each kernel's name between NULs).
fn names_kernel(image: &[u8], name: &str) -> bool {
    let want = format!("\0{name}\0");
    image.windows(want.len()).any(|w| w == want.as_bytes())
}

/// `MatmulKernel::program` of an `extern "C"` kernel of gemm_sm90.cu or
/// sgemm.cu compiles that kernel alone (`CUDAKIT_ONLY`), so that a first
/// `cudakit matmul` pays for one kernel's compile, not the file's; the
/// file's own program still holds them all. Through cudakit's compile path
/// (`Program::compile` for the kernel's architecture, or sm_90).
#[test]
fn a_kernel_program_compiles_only_its_kernel() {
    use cudakit::compile::program::Arch;
    for (file, picked) in [
        (
            "gemm_sm90.cu",
            ["gemm_sm90_bf16_nn", "gemm_sm90_e5m2_e4m3_nt"],
        ),
        ("sgemm.cu", ["sgemm_128x256", "sgemm_128x128"]),
    ] {
        let source = Source::named(file);
        let plain: Vec<&str> = source
            .kernels
            .iter()
            .copied()
            .filter(|n| !Source::is_template(n))
            .collect();
        assert!(plain.len() >= 2, "{file}: extern \"C\" kernels");
        // Two kernels of each file (for gemm_sm90.cu a 16-bit and an FP8
        // one) are enough to show the selection.
        for name in picked {
            assert!(plain.contains(&name), "{name} is a kernel of {file}");
            let kernel = cudakit_suite::kernels::matmul_kernel(name);
            let mut program = kernel.program();
            if kernel.arch.is_none() {
                program = program.arch(Arch::Sm(90));
            }
            let compiled = program.compile().unwrap_or_else(|e| panic!("{name}: {e}"));
            let image = compiled.cubin().expect("a CUBIN for an sm_ architecture");
            assert!(names_kernel(image, name), "{name} is in its own program");
            for other in plain.iter().filter(|o| **o != name) {
                assert!(
                    !names_kernel(image, other),
                    "{name}'s program also compiled {other}"
                );
            }
        }
    }
}
