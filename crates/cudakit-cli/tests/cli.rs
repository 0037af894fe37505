//! The `cudakit` binary, run as a user runs it.
//!
//! CPU tests (run everywhere, CI included): help and usage errors, the
//! doctor and `matmul`/`bench` on a machine without a driver (a missing
//! driver is forced with `CUDAKIT_LIBCUDA` pointing nowhere, so these hold on
//! a GPU machine too), and `compile` with the real NVRTC. NVRTC needs no
//! GPU; where it cannot be loaded the compile tests fail and say how to get
//! it (scripts/test.sh installs it), never skip.
//!
//! GPU tests are `#[ignore = "needs an NVIDIA GPU"]`: `matmul` on small
//! sizes for every element type and kernel family, its JSON, `bench` with
//! small counts, and the doctor on a machine with a GPU.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The binary under test: `CUDAKIT_BIN` when set (the GPU bundle carries
/// the binary to a machine without cargo), else the one cargo built.
fn bin() -> String {
    std::env::var("CUDAKIT_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_cudakit").to_owned())
}

/// A libcuda path that does not exist: with it, the loader tries nothing
/// else, so "no driver" holds on every machine.
const NO_LIBCUDA: &str = "/nonexistent/cudakit-test/libcuda.so.1";

/// The result of one run: exit code and both streams.
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn all(&self) -> String {
        format!("{}\n{}", self.stdout, self.stderr)
    }

    /// Fails with the whole output when the code is not `want`.
    fn expect(self, want: i32) -> Run {
        assert_eq!(
            self.code, want,
            "exit code {} (want {want})\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        );
        self
    }

    /// No panic, no backtrace, whatever happened.
    fn calm(self) -> Run {
        let all = self.all();
        for word in ["panicked", "backtrace", "RUST_BACKTRACE", "internal error"] {
            assert!(!all.contains(word), "output mentions {word:?}:\n{all}");
        }
        self
    }
}

fn finish(output: Output) -> Run {
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// `cudakit args...` in `dir`, with the compile cache in a scratch folder
/// and a backtrace asked for (so that a panic would show it).
fn cudakit_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(bin());
    cmd.args(args)
        .current_dir(dir)
        .env("RUST_BACKTRACE", "1")
        .env("CUDAKIT_CACHE_DIR", dir.join(".cudakit-cache"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    finish(cmd.output().expect("the cudakit binary runs"))
}

fn cudakit(args: &[&str], env: &[(&str, &str)]) -> Run {
    let dir = scratch("run");
    let run = cudakit_in(&dir, args, env);
    let _ = std::fs::remove_dir_all(&dir);
    run
}

/// A fresh folder for one test.
fn scratch(name: &str) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "cudakit-cli-test-{}-{name}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    dir
}

/// Passes when NVRTC loads in this process (as it will in the child, which
/// inherits the environment); otherwise fails and says how to get it.
fn require_nvrtc() {
    if let Err(err) = cuda_sys::nvrtc_with_origin() {
        panic!(
            "{err}\n\n\
             the compile tests of `cudakit` need the real NVRTC (no GPU needed). Either run \
             scripts/test.sh, which installs it, or from the workspace root:\n  \
             python3 -m pip install --target .deps/python nvidia-cuda-nvrtc==13.0.88\n  \
             CUDAKIT_LIBNVRTC=$PWD/.deps/python/nvidia/cu13/lib/libnvrtc.so.13 \
             cargo test -p cudakit-cli\n\
             (CUDAKIT_LIBNVRTC must be an absolute path: cargo runs tests in the crate's folder)"
        );
    }
}

// ---------------------------------------------------------------------------
// A small JSON checker: the whole text must be one valid JSON value.
// ---------------------------------------------------------------------------

fn json_ok(text: &str) -> Result<(), String> {
    let bytes = text.trim().as_bytes();
    let mut p = 0;
    value(bytes, &mut p)?;
    skip_ws(bytes, &mut p);
    if p != bytes.len() {
        return Err(format!("trailing text at byte {p}"));
    }
    Ok(())
}

fn skip_ws(b: &[u8], p: &mut usize) {
    while *p < b.len() && b" \t\r\n".contains(&b[*p]) {
        *p += 1;
    }
}

fn value(b: &[u8], p: &mut usize) -> Result<(), String> {
    skip_ws(b, p);
    match b.get(*p) {
        Some(b'{') => {
            *p += 1;
            skip_ws(b, p);
            if b.get(*p) == Some(&b'}') {
                *p += 1;
                return Ok(());
            }
            loop {
                skip_ws(b, p);
                string(b, p)?;
                skip_ws(b, p);
                if b.get(*p) != Some(&b':') {
                    return Err(format!("':' expected at byte {p}"));
                }
                *p += 1;
                value(b, p)?;
                skip_ws(b, p);
                match b.get(*p) {
                    Some(b',') => *p += 1,
                    Some(b'}') => {
                        *p += 1;
                        return Ok(());
                    }
                    _ => return Err(format!("',' or '}}' expected at byte {p}")),
                }
            }
        }
        Some(b'[') => {
            *p += 1;
            skip_ws(b, p);
            if b.get(*p) == Some(&b']') {
                *p += 1;
                return Ok(());
            }
            loop {
                value(b, p)?;
                skip_ws(b, p);
                match b.get(*p) {
                    Some(b',') => *p += 1,
                    Some(b']') => {
                        *p += 1;
                        return Ok(());
                    }
                    _ => return Err(format!("',' or ']' expected at byte {p}")),
                }
            }
        }
        Some(b'"') => string(b, p),
        Some(b't') => literal(b, p, b"true"),
        Some(b'f') => literal(b, p, b"false"),
        Some(b'n') => literal(b, p, b"null"),
        Some(c) if *c == b'-' || c.is_ascii_digit() => {
            let start = *p;
            while *p < b.len() && b"+-.eE0123456789".contains(&b[*p]) {
                *p += 1;
            }
            let text = std::str::from_utf8(&b[start..*p]).map_err(|e| e.to_string())?;
            text.parse::<f64>()
                .map(|_| ())
                .map_err(|_| format!("bad number {text:?}"))
        }
        _ => Err(format!("a value expected at byte {p}")),
    }
}

fn literal(b: &[u8], p: &mut usize, word: &[u8]) -> Result<(), String> {
    if b[*p..].starts_with(word) {
        *p += word.len();
        Ok(())
    } else {
        Err(format!("bad literal at byte {p}"))
    }
}

fn string(b: &[u8], p: &mut usize) -> Result<(), String> {
    if b.get(*p) != Some(&b'"') {
        return Err(format!("'\"' expected at byte {p}"));
    }
    *p += 1;
    while let Some(&c) = b.get(*p) {
        *p += 1;
        match c {
            b'"' => return Ok(()),
            b'\\' => {
                let e = b.get(*p).copied().ok_or("unterminated escape")?;
                *p += 1;
                match e {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                    b'u' => {
                        let hex = b.get(*p..*p + 4).ok_or("short \\u escape")?;
                        if !hex.iter().all(u8::is_ascii_hexdigit) {
                            return Err(format!("bad \\u escape at byte {p}"));
                        }
                        *p += 4;
                    }
                    _ => return Err(format!("bad escape at byte {p}")),
                }
            }
            c if c < 0x20 => return Err(format!("raw control character at byte {p}")),
            _ => {}
        }
    }
    Err("unterminated string".into())
}

/// Checks that `text` is one JSON object holding every key of `keys`.
fn assert_json(text: &str, keys: &[&str]) {
    assert!(
        text.trim_start().starts_with('{'),
        "not a JSON object:\n{text}"
    );
    if let Err(e) = json_ok(text) {
        panic!("invalid JSON ({e}):\n{text}");
    }
    for key in keys {
        assert!(
            text.contains(&format!("\"{key}\":")),
            "no key {key:?} in:\n{text}"
        );
    }
}

#[test]
fn the_json_checker_accepts_json_and_rejects_the_rest() {
    assert!(json_ok(r#"{"a": [1, -2.5e3, true, null, "x\"\u00e9\n"], "b": {}}"#).is_ok());
    assert!(json_ok("{\"a\": 1,}").is_err());
    assert!(json_ok("{\"a\": \"raw\nline\"}").is_err());
    assert!(json_ok("{\"a\": 1} x").is_err());
    assert!(json_ok("[1 2]").is_err());
}

// ---------------------------------------------------------------------------
// Help and usage errors.
// ---------------------------------------------------------------------------

#[test]
fn help_documents_commands_and_exit_codes() {
    for args in [&["--help"][..], &["-h"], &["help"]] {
        let run = cudakit(args, &[]).expect(0).calm();
        for word in [
            "doctor",
            "compile",
            "matmul",
            "bench",
            "--json",
            "Exit codes",
            "64",
        ] {
            assert!(
                run.stdout.contains(word),
                "{args:?}: no {word:?}:\n{}",
                run.stdout
            );
        }
    }
    for command in ["doctor", "compile", "matmul", "bench"] {
        let run = cudakit(&[command, "--help"], &[]).expect(0).calm();
        assert!(run.stdout.contains("Usage: cudakit"), "{}", run.stdout);
        let same = cudakit(&["help", command], &[]).expect(0);
        assert_eq!(run.stdout, same.stdout);
    }
    let run = cudakit(&["--version"], &[]).expect(0);
    assert!(run.stdout.starts_with("cudakit "), "{}", run.stdout);
}

#[test]
fn usage_errors_exit_64_with_a_message() {
    let cases: &[(&[&str], &str)] = &[
        (&[], "no command given"),
        (&["frobnicate"], "unknown command \"frobnicate\""),
        (&["--frob", "doctor"], "unknown option --frob"),
        (&["doctor", "--frob"], "unknown option --frob"),
        (&["matmul", "--frob"], "unknown option --frob"),
        (&["matmul", "--m"], "--m needs a value"),
        (&["matmul", "--m", "abc"], "--m expects a whole number"),
        (&["matmul", "--m", "0"], "--m must be between 1"),
        (
            &["matmul", "--dtype", "f17"],
            "--dtype expects f32, f64, f16, bf16, tf32, e4m3 or e5m2xe4m3 (e5m2-e4m3)",
        ),
        (
            &["matmul", "--dtype", "e4m3", "--kernel", "sgemm"],
            "no sgemm kernel for e4m3; for e4m3 use --kernel wgmma",
        ),
        (
            &["matmul", "--dtype", "e4m3", "--kernel", "sgemm_128x256"],
            "sgemm_128x256 takes f32 inputs, not e4m3",
        ),
        (
            &[
                "matmul",
                "--dtype",
                "e5m2-e4m3",
                "--kernel",
                "gemm_sm90_e4m3_nt",
            ],
            "gemm_sm90_e4m3_nt takes e4m3 inputs, not e5m2xe4m3",
        ),
        (
            &[
                "matmul",
                "--dtype",
                "bf16",
                "--kernel",
                "gemm_sm90_e5m2_e4m3_nt",
            ],
            "takes e5m2xe4m3 inputs, not bf16",
        ),
        (
            &["matmul", "--dtype", "f32", "--kernel", "mma"],
            "no mma kernel for f32",
        ),
        (&["matmul", "--kernel", "nope"], "no matmul kernel named"),
        (
            &["matmul", "--compare", "mkl"],
            "--compare expects auto, cublas or none",
        ),
        (
            &["matmul", "--dtype", "tf32", "--kernel", "sgemm"],
            "no sgemm kernel for tf32",
        ),
        (&["matmul", "--compare"], "--compare needs a value"),
        (&["matmul", "--verify", "maybe"], "--verify expects"),
        (&["matmul", "stray"], "unexpected argument \"stray\""),
        (&["bench", "--only", "nothing"], "--only expects"),
        (&["bench", "--bytes", "lots"], "--bytes expects a size"),
        (&["compile"], "missing FILE"),
        (
            &["compile", "--ptx", "--cubin", "k.cu"],
            "exclude each other",
        ),
        (
            &["compile", "--arch", "sm_xx", "k.cu"],
            "not an architecture",
        ),
        (&["compile", "--json=yes", "k.cu"], "--json takes no value"),
        (&["help", "nothing"], "no command named"),
    ];
    for (args, want) in cases {
        let run = cudakit(args, &[("CUDAKIT_LIBCUDA", NO_LIBCUDA)])
            .expect(64)
            .calm();
        assert!(
            run.stderr.contains(want),
            "{args:?}: want {want:?} in stderr:\n{}",
            run.stderr
        );
    }
    // With --json, a usage error is also a JSON object on stdout.
    let run = cudakit(&["--json", "matmul", "--frob"], &[]).expect(64);
    assert_json(&run.stdout, &["command", "ok", "exit_code", "error"]);
    assert!(run.stdout.contains("\"exit_code\": 64"), "{}", run.stdout);
}

// ---------------------------------------------------------------------------
// Without a driver.
// ---------------------------------------------------------------------------

#[test]
fn doctor_without_a_driver_exits_2_with_a_diagnosis() {
    let run = cudakit(&["doctor"], &[("CUDAKIT_LIBCUDA", NO_LIBCUDA)])
        .expect(2)
        .calm();
    let out = run.all();
    assert!(out.contains("libcuda.so.1"), "{out}");
    assert!(out.contains(NO_LIBCUDA), "the path tried is listed:\n{out}");
    assert!(out.contains("NVIDIA driver"), "{out}");
    assert!(out.contains("diagnosis: no usable GPU"), "{out}");
    assert!(out.contains("compile cache"), "{out}");
}

/// The doctor with the environment as it is: on this machine (no driver)
/// exit 2 naming libcuda.so.1 and the driver; on a GPU machine exit 0.
#[test]
fn doctor_as_the_machine_is() {
    let run = cudakit(&["doctor"], &[]).calm();
    let out = run.all();
    match run.code {
        2 => {
            assert!(out.contains("libcuda.so.1"), "{out}");
            assert!(out.contains("driver"), "{out}");
            assert!(out.contains("diagnosis:"), "{out}");
        }
        0 => assert!(out.contains("device 0"), "{out}"),
        other => panic!("doctor exited {other}:\n{out}"),
    }
}

#[test]
fn doctor_json_without_a_driver() {
    let run = cudakit(&["doctor", "--json"], &[("CUDAKIT_LIBCUDA", NO_LIBCUDA)])
        .expect(2)
        .calm();
    assert_json(
        &run.stdout,
        &[
            "command",
            "libcuda",
            "attempts",
            "driver",
            "libnvrtc",
            "nvrtc",
            "devices",
            "cache",
            "gpu_usable",
            "problems",
            "ok",
            "exit_code",
        ],
    );
    assert!(
        run.stdout.contains("\"gpu_usable\": false"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("\"exit_code\": 2"), "{}", run.stdout);
    // The global flag works before the command too.
    let before = cudakit(&["--json", "doctor"], &[("CUDAKIT_LIBCUDA", NO_LIBCUDA)]).expect(2);
    assert_json(&before.stdout, &["libcuda"]);
}

#[test]
fn doctor_says_how_to_get_nvrtc_when_it_is_missing() {
    let run = cudakit(
        &["doctor"],
        &[
            ("CUDAKIT_LIBCUDA", NO_LIBCUDA),
            (
                "CUDAKIT_LIBNVRTC",
                "/nonexistent/cudakit-test/libnvrtc.so.13",
            ),
        ],
    )
    .expect(2)
    .calm();
    let out = run.all();
    assert!(
        out.contains("pip install nvidia-cuda-nvrtc==13.0.88"),
        "{out}"
    );
    assert!(out.contains("CUDAKIT_LIBNVRTC"), "{out}");
    assert!(out.contains("no usable GPU and no NVRTC"), "{out}");
}

#[test]
fn matmul_and_bench_without_a_driver_exit_2_with_the_diagnosis() {
    let cases: &[&[&str]] = &[&["matmul", "--size", "64", "--iters", "1"], &["bench"]];
    for args in cases {
        let command = args[0];
        let run = cudakit(args, &[("CUDAKIT_LIBCUDA", NO_LIBCUDA)])
            .expect(2)
            .calm();
        let out = run.all();
        assert!(out.contains("needs an NVIDIA GPU"), "{out}");
        assert!(out.contains("diagnosis: no usable GPU"), "{out}");
        assert!(out.contains("NVIDIA driver"), "{out}");
        assert!(out.contains(NO_LIBCUDA), "the path tried is listed:\n{out}");
        assert!(out.contains("cudakit doctor"), "{out}");

        let run = cudakit(&["--json", command], &[("CUDAKIT_LIBCUDA", NO_LIBCUDA)])
            .expect(2)
            .calm();
        assert_json(
            &run.stdout,
            &["command", "ok", "exit_code", "error", "doctor"],
        );
        assert!(run.stdout.contains("\"exit_code\": 2"), "{}", run.stdout);
    }
}

// ---------------------------------------------------------------------------
// compile, with the real NVRTC.
// ---------------------------------------------------------------------------

const KERNEL: &str = r#"
template <typename T>
__global__ void k(T* x, T a, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}
extern "C" __global__ void plain(float* x) { x[0] = SCALE; }
"#;

const BROKEN: &str = "__global__ void k(float* x) {\n    x[0] = undefined_name;\n}\n";

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).expect("write a test file");
}

#[test]
fn compile_writes_a_cubin_and_lists_lowered_names() {
    require_nvrtc();
    let dir = scratch("cubin");
    write(&dir, "k.cu", KERNEL);
    let run = cudakit_in(
        &dir,
        &[
            "compile",
            "--arch",
            "sm_90",
            "--cubin",
            "--name-expr",
            "k<float>",
            "--name-expr",
            "k<double>",
            "-DSCALE=2.0f",
            "-o",
            "out.cubin",
            "k.cu",
        ],
        &[],
    )
    .expect(0)
    .calm();
    assert!(run.stdout.contains("k<float>"), "{}", run.stdout);
    assert!(run.stdout.contains("_Z1kIfEvPT_S0_j"), "{}", run.stdout);
    assert!(run.stdout.contains("_Z1kIdEvPT_S0_j"), "{}", run.stdout);
    assert!(run.stdout.contains("sm_90"), "{}", run.stdout);
    let cubin = std::fs::read(dir.join("out.cubin")).expect("the CUBIN was written");
    assert!(cubin.starts_with(b"\x7fELF"), "not an ELF image");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn compile_writes_ptx_beside_the_current_folder_by_default() {
    require_nvrtc();
    let dir = scratch("ptx");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    write(&dir.join("src"), "k.cu", KERNEL);
    // An include found through -I, and a define without a value.
    write(&dir, "scale.h", "#define SCALE 3.0f\n");
    let source = format!("#include \"scale.h\"\n#ifndef FLAG\n#error FLAG\n#endif\n{KERNEL}");
    write(&dir.join("src"), "k.cu", &source);
    let run = cudakit_in(
        &dir,
        &[
            "compile",
            "src/k.cu",
            "--ptx",
            "--arch=sm_90",
            "--name-expr=k<float>",
            "-I",
            ".",
            "-D",
            "FLAG",
        ],
        &[],
    )
    .expect(0)
    .calm();
    let ptx = std::fs::read_to_string(dir.join("k.ptx")).expect("k.ptx in the current folder");
    assert!(ptx.contains(".entry"), "{ptx}");
    assert!(ptx.contains(".version"), "{ptx}");
    assert!(ptx.contains("_Z1kIfEvPT_S0_j"), "{ptx}");
    assert!(run.stdout.contains("PTX"), "{}", run.stdout);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_compile_error_exits_1_with_file_and_line() {
    require_nvrtc();
    let dir = scratch("error");
    write(&dir, "bad.cu", BROKEN);
    let run = cudakit_in(&dir, &["compile", "--arch", "sm_90", "bad.cu"], &[])
        .expect(1)
        .calm();
    let out = run.all();
    assert!(out.contains("bad.cu:2: error"), "{out}");
    assert!(out.contains("undefined_name"), "{out}");
    assert!(out.contains("NVRTC_ERROR_COMPILATION"), "{out}");
    assert!(!dir.join("bad.cubin").exists());

    let run = cudakit_in(
        &dir,
        &["--json", "compile", "--arch", "sm_90", "bad.cu"],
        &[],
    )
    .expect(1)
    .calm();
    assert_json(
        &run.stdout,
        &[
            "command",
            "ok",
            "exit_code",
            "error",
            "log",
            "diagnostics",
            "line",
        ],
    );
    assert!(run.stdout.contains("\"line\": 2"), "{}", run.stdout);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn compile_json_lists_lowered_names_and_the_output() {
    require_nvrtc();
    let dir = scratch("json");
    write(&dir, "k.cu", KERNEL);
    let run = cudakit_in(
        &dir,
        &[
            "compile",
            "k.cu",
            "--arch",
            "sm_90",
            "--name-expr",
            "k<float>",
            "-DSCALE=1",
            "--json",
        ],
        &[],
    )
    .expect(0)
    .calm();
    assert_json(
        &run.stdout,
        &[
            "command",
            "ok",
            "exit_code",
            "arch",
            "kind",
            "output",
            "bytes",
            "origin",
            "options",
            "lowered_names",
            "log",
            "diagnostics",
        ],
    );
    assert!(
        run.stdout.contains("\"k<float>\": \"_Z1kIfEvPT_S0_j\""),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("\"kind\": \"cubin\""), "{}", run.stdout);
    assert!(dir.join("k.cubin").exists());
    // The same compile again comes from the cache.
    let again = cudakit_in(
        &dir,
        &[
            "compile",
            "k.cu",
            "--arch",
            "sm_90",
            "--name-expr",
            "k<float>",
            "-DSCALE=1",
        ],
        &[],
    )
    .expect(0);
    assert!(again.stdout.contains("cache"), "{}", again.stdout);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn compile_without_arch_or_gpu_asks_for_arch() {
    require_nvrtc();
    let dir = scratch("noarch");
    write(&dir, "k.cu", KERNEL);
    let run = cudakit_in(
        &dir,
        &["compile", "k.cu"],
        &[("CUDAKIT_LIBCUDA", NO_LIBCUDA)],
    )
    .expect(64)
    .calm();
    assert!(run.stderr.contains("--arch"), "{}", run.stderr);
    assert!(run.stderr.contains("sm_90"), "{}", run.stderr);
    // A file that does not exist is a usage error too.
    let run = cudakit_in(&dir, &["compile", "--arch", "sm_90", "missing.cu"], &[])
        .expect(64)
        .calm();
    assert!(
        run.stderr.contains("cannot read missing.cu"),
        "{}",
        run.stderr
    );
    // An architecture NVRTC does not support.
    let run = cudakit_in(&dir, &["compile", "--arch", "sm_20", "k.cu"], &[])
        .expect(64)
        .calm();
    assert!(
        run.stderr.contains("cannot compile for sm_20"),
        "{}",
        run.stderr
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn compile_without_nvrtc_exits_2_and_says_how_to_get_it() {
    let dir = scratch("nonvrtc");
    write(&dir, "k.cu", KERNEL);
    let run = cudakit_in(
        &dir,
        &["compile", "--arch", "sm_90", "k.cu"],
        &[(
            "CUDAKIT_LIBNVRTC",
            "/nonexistent/cudakit-test/libnvrtc.so.13",
        )],
    )
    .expect(2)
    .calm();
    assert!(
        run.stderr
            .contains("pip install nvidia-cuda-nvrtc==13.0.88"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("No GPU is needed"), "{}", run.stderr);
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------
// On a GPU.
// ---------------------------------------------------------------------------

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn doctor_on_a_gpu_lists_the_device() {
    let run = cudakit(&["doctor"], &[]).expect(0).calm();
    for word in [
        "device 0",
        "uuid",
        "compute",
        "memory",
        "SMs",
        "shared",
        "cooperative",
    ] {
        assert!(run.stdout.contains(word), "no {word:?}:\n{}", run.stdout);
    }
    assert!(run.stdout.contains("diagnosis: ready"), "{}", run.stdout);
    let json = cudakit(&["doctor", "--json"], &[]).expect(0);
    assert_json(&json.stdout, &["devices", "uuid", "compute_capability"]);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn matmul_verifies_every_dtype_and_kernel_on_small_sizes() {
    let cases: &[(&str, &str)] = &[
        ("f32", "naive"),
        ("f32", "tiled"),
        ("f32", "gemm"),
        ("f32", "regblock"),
        ("f64", "naive"),
        ("f64", "tiled"),
        ("f64", "gemm"),
        ("f64", "regblock"),
        ("f16", "mma"),
        ("bf16", "mma"),
        ("f32", "sgemm"),
        ("f64", "dmma"),
        ("f16", "wgmma"),
        ("bf16", "wgmma"),
        ("tf32", "wgmma"),
    ];
    for (dtype, kernel) in cases {
        let run = cudakit(
            &[
                "matmul", "--m", "129", "--n", "67", "--k", "93", "--dtype", dtype, "--kernel",
                kernel, "--iters", "3",
            ],
            &[],
        )
        .expect(0)
        .calm();
        for word in [
            "compile",
            "HtoD",
            "kernel",
            "DtoH",
            "GFLOP/s",
            "max error",
            "verdict",
            "PASS",
        ] {
            assert!(
                run.stdout.contains(word),
                "{dtype} {kernel}: no {word:?}:\n{}",
                run.stdout
            );
        }
        assert!(run.stdout.contains("(full)"), "{}", run.stdout);
    }
    // A transposed-storage gemm and a full kernel name.
    cudakit(
        &[
            "matmul",
            "--size",
            "100",
            "--kernel",
            "gemm<double, true, true>",
            "--iters",
            "2",
        ],
        &[],
    )
    .expect(0)
    .calm();
}

#[test]
fn matmul_list_shows_every_kernel_with_its_real_dtype() {
    // No driver: listing needs none.
    let run = cudakit(&["matmul", "--list"], &[("CUDAKIT_LIBCUDA", NO_LIBCUDA)])
        .expect(0)
        .calm();
    let line = |name: &str| {
        run.stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no {name} in\n{}", run.stdout))
            .to_owned()
    };
    for (name, dtype, short) in [
        ("gemm_sm90_e4m3_nt", "e4m3", "(--kernel wgmma)"),
        ("gemm_sm90_e5m2_e4m3_nt", "e5m2xe4m3", "(--kernel wgmma)"),
        ("gemm_sm90_bf16_nn", "bf16", "(--kernel wgmma)"),
        ("gemm_sm90_tf32_nn", "tf32", "(--kernel wgmma)"),
        ("sgemm_128x256", "f32", "(--kernel sgemm)"),
    ] {
        let l = line(name);
        assert_eq!(l.split_whitespace().nth(1), Some(dtype), "{l}");
        assert!(l.contains("384x1x1") || !name.contains("e4m3"), "{l}");
        assert!(l.ends_with(short), "{l}");
    }
    let json = cudakit(&["--json", "matmul", "--list"], &[])
        .expect(0)
        .calm();
    assert_json(
        &json.stdout,
        &["kernels", "dtype", "input_b", "accumulation"],
    );
    for want in [
        "\"name\": \"gemm_sm90_e4m3_nt\"",
        "\"dtype\": \"e4m3\"",
        "\"dtype\": \"e5m2xe4m3\"",
        "\"accumulation\": \"fp8_tensor_core\"",
    ] {
        assert!(json.stdout.contains(want), "no {want} in\n{}", json.stdout);
    }
    let help = cudakit(&["matmul", "--help"], &[]).expect(0).calm();
    for want in [
        "e4m3",
        "e5m2xe4m3",
        "e5m2-e4m3",
        "scale_a = 0.5",
        "scale_b = 4",
        "FAST_ACCUM = 1",
        "cuBLASLt",
        "N×K",
    ] {
        assert!(help.stdout.contains(want), "no {want:?} in the help");
    }
}

/// A libcublasLt path that does not exist (the FP8 comparison's library).
const NO_LIBCUBLASLT: &str = "/nonexistent/cudakit-test/libcublasLt.so.13";

#[test]
fn matmul_fp8_compare_cublas_without_cublaslt_exits_2_before_the_gpu() {
    let env = [
        ("CUDAKIT_LIBCUBLASLT", NO_LIBCUBLASLT),
        ("CUDAKIT_LIBCUDA", NO_LIBCUDA),
    ];
    for dtype in ["e4m3", "e5m2xe4m3"] {
        let run = cudakit(
            &[
                "matmul",
                "--dtype",
                dtype,
                "--size",
                "64",
                "--compare",
                "cublas",
            ],
            &env,
        )
        .expect(2)
        .calm();
        let err = &run.stderr;
        assert!(
            err.contains("--compare cublas (cuBLASLt, for FP8)"),
            "{err}"
        );
        assert!(
            err.contains(NO_LIBCUBLASLT),
            "the path tried is listed:\n{err}"
        );
        assert!(err.contains("CUDAKIT_LIBCUBLASLT"), "{err}");
    }
    let run = cudakit(
        &["--json", "matmul", "--dtype", "e4m3", "--compare=cublas"],
        &env,
    )
    .expect(2)
    .calm();
    assert!(
        run.stdout.contains("\"missing\": \"libcublasLt\""),
        "{}",
        run.stdout
    );
    // Without --compare cublas the missing driver ends the run (exit 2),
    // and no cuBLASLt is mentioned.
    let run = cudakit(&["matmul", "--dtype", "e4m3", "--size", "64"], &env)
        .expect(2)
        .calm();
    assert!(!run.stderr.contains("cuBLAS"), "{}", run.stderr);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn matmul_fp8_runs_verifies_and_compares_with_cublaslt() {
    // Odd shapes (K not a multiple of 16: padded rows) with every element
    // checked; cuBLASLt may refuse them (its FP8 kernels want 16-byte
    // aligned dimensions), which --compare auto reports as not run.
    for (dtype, m, n, k) in [
        ("e4m3", "129", "67", "93"),
        ("e5m2xe4m3", "300", "520", "272"),
        ("e5m2-e4m3", "1", "1", "16"),
    ] {
        let run = cudakit(
            &[
                "matmul", "--m", m, "--n", n, "--k", k, "--dtype", dtype, "--iters", "3",
            ],
            &[],
        );
        if run.code == 1 && run.stderr.contains("not supported on this device") {
            cudakit_suite::not_run("FP8 needs sm_90");
        }
        let run = run.expect(0).calm();
        for word in [
            "C = alpha*scale_a*scale_b*A*B^T",
            "scale_a 0.5, scale_b 4",
            "fp8_tensor_core",
            "compile",
            "HtoD",
            "kernel",
            "DtoH",
            "TFLOP/s",
            "(full)",
            "PASS",
        ] {
            assert!(
                run.stdout.contains(word),
                "{dtype}: no {word:?}:\n{}",
                run.stdout
            );
        }
    }
    // 4096³ beside cuBLASLt (required), by full kernel name, in JSON.
    for kernel in ["gemm_sm90_e4m3_nt", "gemm_sm90_e5m2_e4m3_nt"] {
        let run = cudakit(
            &[
                "--json",
                "matmul",
                "--size",
                "4096",
                "--kernel",
                kernel,
                "--iters",
                "5",
                "--compare",
                "cublas",
                "--seed",
                "0x5eed",
            ],
            &[],
        );
        if run.code == 2 && run.stderr.contains("cuBLAS not found") {
            cudakit_suite::not_run("no libcublasLt.so.13 on this machine");
        }
        let run = run.expect(0).calm();
        for want in [
            "\"verdict\": \"PASS\"",
            "\"library\": \"cuBLASLt\"",
            "\"fast_accum\": true",
            "\"accumulation\": \"fp8_tensor_core\"",
            "\"ratio_to_cublas\"",
            "\"mode\": \"sampled\"",
        ] {
            assert!(
                run.stdout.contains(want),
                "{kernel}: no {want} in\n{}",
                run.stdout
            );
        }
        // cuBLASLt's C against the same reference: the same product.
        let check = run.stdout.split("\"check\"").nth(1).unwrap_or("");
        assert!(
            check
                .split('}')
                .next()
                .unwrap_or("")
                .contains("\"passed\": true"),
            "{kernel}: cuBLASLt's C:\n{}",
            run.stdout
        );
    }
}

/// A libcublas path that does not exist: with it, the loader tries nothing
/// else, so "no cuBLAS" holds on every machine.
const NO_LIBCUBLAS: &str = "/nonexistent/cudakit-test/libcublas.so.13";

#[test]
fn matmul_compare_cublas_without_cublas_exits_2_before_the_gpu() {
    // No driver either: the cuBLAS check comes first, so this holds on a
    // CPU machine and on a GPU machine alike.
    let env = [
        ("CUDAKIT_LIBCUBLAS", NO_LIBCUBLAS),
        ("CUDAKIT_LIBCUDA", NO_LIBCUDA),
    ];
    let run = cudakit(&["matmul", "--size", "64", "--compare", "cublas"], &env)
        .expect(2)
        .calm();
    let err = &run.stderr;
    assert!(err.contains("--compare cublas: cuBLAS not found"), "{err}");
    assert!(
        err.contains(NO_LIBCUBLAS),
        "the path tried is listed:\n{err}"
    );
    assert!(err.contains("CUDAKIT_LIBCUBLAS"), "{err}");
    let run = cudakit(
        &["--json", "matmul", "--compare=cublas", "--dtype", "tf32"],
        &env,
    )
    .expect(2)
    .calm();
    assert_json(&run.stdout, &["ok", "exit_code", "error", "missing"]);
    assert!(
        run.stdout.contains("\"missing\": \"libcublas\""),
        "{}",
        run.stdout
    );
    // Without --compare cublas, a missing cuBLAS is no error of its own:
    // here the missing driver is what ends the run.
    let run = cudakit(&["matmul", "--size", "64"], &env).expect(2).calm();
    assert!(!run.stderr.contains("cuBLAS"), "{}", run.stderr);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn matmul_default_kernels_run_beside_cublas() {
    // Every dtype with its default kernel, cuBLAS required: the table has
    // both rates and the ratio, the JSON the cuBLAS fields.
    for dtype in ["f32", "f64", "f16", "bf16", "tf32"] {
        let run = cudakit(
            &[
                "matmul",
                "--size",
                "512",
                "--dtype",
                dtype,
                "--iters",
                "3",
                "--compare",
                "cublas",
            ],
            &[],
        );
        if run.code == 2 && run.stderr.contains("cuBLAS not found") {
            // The runner counts this as not run (cudakit_suite::not_run's
            // marker), never as passed.
            let thread = std::thread::current();
            eprintln!(
                "NOT RUN: {}: no libcublas.so.13 on this machine",
                thread.name().unwrap_or("?")
            );
            panic!("test not run: no cuBLAS");
        }
        let run = run.expect(0).calm();
        for word in ["cuBLAS", "vs cuBLAS", "PASS"] {
            assert!(
                run.stdout.contains(word),
                "{dtype}: no {word:?}:\n{}",
                run.stdout
            );
        }
    }
    let run = cudakit(
        &[
            "--json", "matmul", "--size", "256", "--dtype", "bf16", "--iters", "2",
        ],
        &[],
    )
    .expect(0)
    .calm();
    assert_json(
        &run.stdout,
        &[
            "cublas",
            "ratio_to_cublas",
            "launches",
            "compute",
            "version",
        ],
    );
    let run = cudakit(
        &[
            "matmul",
            "--size",
            "256",
            "--iters",
            "2",
            "--compare",
            "none",
        ],
        &[],
    )
    .expect(0)
    .calm();
    assert!(!run.stdout.contains("vs cuBLAS"), "{}", run.stdout);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn matmul_default_size_samples_and_passes() {
    let run = cudakit(&["matmul", "--iters", "3"], &[]).expect(0).calm();
    assert!(
        run.stdout.contains("2048 x 2048 x 2048 f32"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("(sampled)"), "{}", run.stdout);
    assert!(run.stdout.contains("PASS"), "{}", run.stdout);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn matmul_json_has_the_table() {
    let run = cudakit(
        &[
            "--json", "matmul", "--size", "256", "--dtype", "bf16", "--iters", "2", "--seed", "0x1",
        ],
        &[],
    )
    .expect(0)
    .calm();
    assert_json(
        &run.stdout,
        &[
            "command",
            "ok",
            "exit_code",
            "verdict",
            "m",
            "n",
            "k",
            "dtype",
            "kernel",
            "seed",
            "device",
            "compile",
            "cache_hit",
            "htod",
            "kernel",
            "median_ms",
            "min_ms",
            "dtoh",
            "gflops",
            "verify",
            "max_abs_error",
            "max_error_over_tolerance",
            "tolerance",
        ],
    );
    assert!(
        run.stdout.contains("\"verdict\": \"PASS\""),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("\"seed\": \"0x0000000000000001\""),
        "{}",
        run.stdout
    );
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn bench_prints_ratios_with_small_counts() {
    let args = [
        "bench",
        "--launches",
        "100",
        "--batches",
        "3",
        "--bytes",
        "1M",
        "--samples",
        "3",
        "--compile-samples",
        "2",
    ];
    let run = cudakit(&args, &[]).expect(0).calm();
    for word in ["ratio", "launch", "HtoD", "DtoH", "compile"] {
        assert!(run.stdout.contains(word), "no {word:?}:\n{}", run.stdout);
    }
    let mut json_args = vec!["--json"];
    json_args.extend(args);
    let run = cudakit(&json_args, &[]).expect(0).calm();
    assert_json(&run.stdout, &["rows", "ratio", "cudakit_ns", "raw_ns"]);
}
