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
