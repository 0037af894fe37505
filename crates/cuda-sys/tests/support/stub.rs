//! Builds the test-only stand-in libcuda (`tests/stub-libcuda`) and returns
//! the path of the shared library.
//!
//! The stand-in is built by a nested `cargo build` into its own target
//! folder under this test's `CARGO_TARGET_TMPDIR`, so it never contends
//! with the outer build's lock. It has no dependencies, so no network is
//! needed.

use std::path::PathBuf;
use std::process::Command;

/// Builds the stand-in, with `features` (comma-separated, may be empty), and
/// returns the path of `libstub_libcuda.so`. Panics with cargo's output on
/// failure: a test cannot go on without it.
#[allow(dead_code)]
pub fn build_stub(features: &str) -> PathBuf {
    let tag = if features.is_empty() {
        "default"
    } else {
        features
    };
    build_crate(
        "stub-libcuda",
        "libstub_libcuda.so",
        &format!("stub-{tag}"),
        features,
    )
}

/// Builds the stand-in NVTX injection library (`tests/stub-nvtx`) and
/// returns the path of `libstub_nvtx.so`.
#[allow(dead_code)]
pub fn build_nvtx_stub() -> PathBuf {
    build_crate("stub-nvtx", "libstub_nvtx.so", "stub-nvtx", "")
}

fn build_crate(name: &str, file: &str, tag: &str, features: &str) -> PathBuf {
    // A machine without cargo (the GPU machine) gets prebuilt stand-ins.
    if let Some(dir) = std::env::var_os("CUDAKIT_STUB_DIR") {
        let path = PathBuf::from(dir).join(format!("{tag}/debug/{file}"));
        assert!(path.exists(), "{} missing", path.display());
        return path;
    }
    let manifest_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let workspace = manifest_dir
        .ancestors()
        .find(|p| p.join(format!("tests/{name}/Cargo.toml")).exists())
        .expect("workspace root with the stand-in's crate")
        .to_path_buf();
    let target_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(tag);
    let mut cmd = Command::new(env!("CARGO"));
    cmd.arg("build")
        .arg("--quiet")
        .arg("--manifest-path")
        .arg(workspace.join(format!("tests/{name}/Cargo.toml")))
        .arg("--target-dir")
        .arg(&target_dir);
    if !features.is_empty() {
        cmd.arg("--features").arg(features);
    }
    // The outer `cargo clippy`/`cargo test` may export flags meant for it.
    cmd.env_remove("RUSTC_WORKSPACE_WRAPPER");
    let output = cmd.output().expect("run cargo to build the stand-in");
    assert!(
        output.status.success(),
        "building tests/{name} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let path = target_dir.join(format!("debug/{file}"));
    assert!(path.exists(), "{} was not built", path.display());
    path
}

/// Builds the default stand-in, points `CUDAKIT_LIBCUDA` at it (before the
/// first driver call) and opens it, for the tests that read its records.
#[allow(dead_code)]
pub fn open_default() -> libloading::Library {
    let path = build_stub("");
    std::env::set_var("CUDAKIT_LIBCUDA", &path);
    // SAFETY: the stand-in library's initialisers are Rust statics only.
    unsafe { libloading::Library::new(&path) }.expect("open the stand-in")
}

/// Calls the stand-in's export `name` (NUL-terminated), which fills `N`
/// counters, and returns them.
#[allow(dead_code)]
pub fn counts<const N: usize>(lib: &libloading::Library, name: &[u8]) -> [u64; N] {
    // SAFETY: each caller names an export of the stand-in that writes N u64s.
    let f = unsafe { lib.get::<unsafe extern "C" fn(*mut u64)>(name) }.expect("stand-in export");
    let mut out = [0u64; N];
    // SAFETY: `out` has N writable slots.
    unsafe { f(out.as_mut_ptr()) };
    out
}

/// Sets the parameter layout, as (offset, size), that the stand-in's
/// `cuFuncGetParamInfo` reports (`stub_set_params`).
#[allow(dead_code)]
pub fn set_params(lib: &libloading::Library, layout: &[(usize, usize)]) {
    let flat: Vec<usize> = layout.iter().flat_map(|&(o, s)| [o, s]).collect();
    // SAFETY: the stand-in exports this function with this signature.
    let f = unsafe { lib.get::<unsafe extern "C" fn(*const usize, usize)>(b"stub_set_params\0") }
        .expect("stub_set_params");
    // SAFETY: `flat` holds 2 * layout.len() usizes.
    unsafe { f(flat.as_ptr(), layout.len()) };
}

/// Calls the stand-in's export `name` (NUL-terminated), which takes one
/// argument of type `A` and returns `R`.
#[allow(dead_code)]
pub fn call<A, R>(lib: &libloading::Library, name: &[u8], a: A) -> R {
    // SAFETY: each caller names an export of the stand-in taking A, returning R.
    let f = unsafe { lib.get::<unsafe extern "C" fn(A) -> R>(name) }.expect("stand-in export");
    // SAFETY: as above.
    unsafe { f(a) }
}

/// Calls the stand-in's no-argument export `name`, which returns `R`.
#[allow(dead_code)]
pub fn call0<R>(lib: &libloading::Library, name: &[u8]) -> R {
    // SAFETY: each caller names an export of the stand-in taking nothing.
    let f = unsafe { lib.get::<unsafe extern "C" fn() -> R>(name) }.expect("stand-in export");
    // SAFETY: no arguments.
    unsafe { f() }
}

/// Waits (30 s at most, then panics naming `what`) until `f` holds.
#[allow(dead_code)]
pub fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !f() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}
