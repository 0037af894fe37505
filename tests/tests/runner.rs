//! The hardware runner (`scripts/gpu-run.sh`, embedded at build time) on a
//! fake bundle whose "test binaries" are shell scripts printing what libtest
//! prints: tests passed, failed, not run (`NOT RUN: <test>: <reason>` and
//! FAILED, as `cudakit_suite::not_run` makes them), a crash. A CPU test:
//! it needs bash, no GPU.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

const RUNNER: &str = include_str!("../../scripts/gpu-run.sh");

/// A fresh folder, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let path = std::env::temp_dir().join(format!(
            "cudakit-runner-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(path.join("bin")).unwrap();
        TempDir(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A fake test binary: a script that prints `output` and exits with `rc`.
fn fake(dir: &Path, name: &str, output: &str, rc: i32) {
    let path = dir.join("bin").join(name);
    std::fs::write(
        &path,
        format!("#!/bin/sh\ncat <<'EOF'\n{output}\nEOF\nexit {rc}\n"),
    )
    .unwrap();
    let status = Command::new("chmod").arg("+x").arg(&path).status().unwrap();
    assert!(status.success());
}

/// Runs the runner on the fake bundle; returns (exit code, stdout).
fn run(dir: &Path, env: &[(&str, &str)]) -> (i32, String) {
    std::fs::write(dir.join("run.sh"), RUNNER).unwrap();
    let out = Command::new("bash")
        .arg(dir.join("run.sh"))
        .env("SANITIZE", "0")
        .env("LOG_DIR", dir.join("logs"))
        .env("CUDAKIT_CACHE_DIR", dir.join("cache"))
        .env("CUDA_CACHE_PATH", dir.join("cuda-cache"))
        .env_remove("ONLY")
        .env_remove("FILTER")
        .envs(env.iter().copied())
        .output()
        .expect("bash runs the runner");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    eprintln!("{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    (out.status.code().unwrap_or(-1), stdout)
}

const MIXED: &str = "
running 4 tests
test compiles ... ok
test enumerates_symbols ... FAILED
test launches ... ok
test wrong_answer ... FAILED

failures:

---- enumerates_symbols stdout ----
test rng seed 0x0000000000000001 (reproduce with CUDAKIT_TEST_SEED=0x0000000000000001)
NOT RUN: enumerates_symbols: cuModuleEnumerateFunctions is not supported by this driver (needs CUDA 12.4)

thread 'enumerates_symbols' (123) panicked at tests/x.rs:1:1:
test not run (see the NOT RUN line): cuModuleEnumerateFunctions is not supported by this driver (needs CUDA 12.4)

---- wrong_answer stdout ----
thread 'wrong_answer' (124) panicked at tests/x.rs:2:2:
out[3] = 1, want 2

failures:
    enumerates_symbols
    wrong_answer

test result: FAILED. 2 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.10s";

const ONLY_NOT_RUN: &str = "
running 2 tests
test a::needs_new_driver ... FAILED
test a::plain ... ok

failures:

---- a::needs_new_driver stdout ----
NOT RUN: a::needs_new_driver: no cuLaunchKernelEx

thread 'a::needs_new_driver' (9) panicked at tests/y.rs:1:1:
test not run (see the NOT RUN line): no cuLaunchKernelEx

failures:
    a::needs_new_driver

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s";

/// A NOT RUN line from a test that then passed is not a test not run (the
/// line alone proves nothing): it stays a pass.
const NOT_RUN_BUT_PASSED: &str = "
running 1 test
test prints_the_marker ... ok

successes:

---- prints_the_marker stdout ----
NOT RUN: prints_the_marker: only mentioned

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s";

#[test]
fn not_run_tests_are_counted_apart_and_never_as_passed() {
    let dir = TempDir::new();
    fake(&dir.0, "pkg-mixed", MIXED, 101);
    fake(&dir.0, "pkg-only_not_run", ONLY_NOT_RUN, 101);
    fake(&dir.0, "pkg-passed", NOT_RUN_BUT_PASSED, 0);
    let (rc, out) = run(&dir.0, &[]);
    assert!(
        out.contains("suite: 4 passed, 1 failed, 2 not run"),
        "{out}"
    );
    assert!(
        out.contains(
            "  pkg-mixed enumerates_symbols: cuModuleEnumerateFunctions is not supported by \
             this driver (needs CUDA 12.4)"
        ),
        "{out}"
    );
    assert!(
        out.contains("  pkg-only_not_run a::needs_new_driver: no cuLaunchKernelEx"),
        "{out}"
    );
    assert!(!out.contains("prints_the_marker: only"), "{out}");
    let line = |name: &str| {
        out.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no line for {name}:\n{out}"))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(line("pkg-mixed"), "pkg-mixed 2 passed 1 failed 1 not run");
    assert_eq!(
        line("pkg-only_not_run"),
        "pkg-only_not_run 1 passed 0 failed 1 not run"
    );
    assert_eq!(line("pkg-passed"), "pkg-passed 1 passed 0 failed 0 not run");
    assert_eq!(rc, 1, "a real failure fails the run");
}

#[test]
fn a_run_with_only_tests_not_run_succeeds_but_says_so() {
    let dir = TempDir::new();
    fake(&dir.0, "pkg-only_not_run", ONLY_NOT_RUN, 101);
    let (rc, out) = run(&dir.0, &[]);
    assert!(
        out.contains("suite: 1 passed, 0 failed, 1 not run"),
        "{out}"
    );
    assert!(out.contains("not run (test: reason):"), "{out}");
    assert_eq!(rc, 0, "nothing failed");
}

#[test]
fn a_crash_without_a_test_result_is_a_failure() {
    let dir = TempDir::new();
    fake(
        &dir.0,
        "pkg-crash",
        "running 3 tests\ntest first ... ok\nSegmentation fault",
        139,
    );
    let (rc, out) = run(&dir.0, &[]);
    assert!(
        out.contains("suite: 0 passed, 1 failed, 0 not run"),
        "{out}"
    );
    assert_eq!(rc, 1);
}

#[test]
fn only_selects_binaries_by_name() {
    let dir = TempDir::new();
    fake(&dir.0, "pkg-mixed", MIXED, 101);
    fake(&dir.0, "pkg-passed", NOT_RUN_BUT_PASSED, 0);
    let (rc, out) = run(&dir.0, &[("ONLY", "passed unrelated")]);
    assert!(
        out.contains("suite: 1 passed, 0 failed, 0 not run"),
        "{out}"
    );
    assert!(!out.contains("pkg-mixed"), "{out}");
    assert_eq!(rc, 0);
}
