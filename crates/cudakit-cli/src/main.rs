//! `cudakit`: check the machine, compile kernels, and run and verify a
//! matrix multiply, on top of the cudakit crate. See `cudakit --help`.
//!
//! - [`doctor`]: which libraries were found, versions, devices, the cache,
//!   and a diagnosis when something is missing.
//! - [`compile`]: NVRTC from the command line, no GPU needed.
//! - [`matmul`]: the main job: compile, upload, run, download, verify, time.
//! - [`bench`]: cudakit against raw driver calls.
//! - [`args`]: the hand-written parser, exit codes and errors; [`json`]:
//!   `--json` output; [`progress`]: the progress bar; [`units`]: sizes and
//!   times for people.

mod args;
mod bench;
mod compile;
mod doctor;
mod json;
mod matmul;
mod progress;
mod units;

use args::{CliError, Exit, Parser};
use json::Json;

const USAGE: &str = "\
cudakit: check a machine for CUDA, compile kernels with NVRTC, and run and
verify a matrix multiply on the GPU.

Usage: cudakit [--json] <COMMAND> [OPTIONS]

Commands:
  doctor    Which libcuda and libnvrtc were found (or every path tried), the
            driver and NVRTC versions, each device's limits, the compile
            cache, and what to install when something is missing
  compile   Compile a .cu file to PTX or CUBIN with NVRTC (no GPU needed
            with --arch); prints lowered names and the log
  matmul    Compile, upload, run, download and verify a GEMM; prints compile,
            transfer and kernel times, GFLOP/s, the error and the verdict
  bench     cudakit's launch, transfer and compile paths against raw driver
            calls in the same run, as ratios
  help      This text, or a command's: `cudakit help matmul`

Options (anywhere on the line):
  --json          One JSON object on stdout instead of text, for scripts
  -h, --help      Help (`cudakit matmul --help` for a command's options)
  -V, --version   The version

Exit codes:
  0    success
  1    failure: verification failed, NVRTC rejected the program, or a driver
       error while running
  2    no usable GPU, driver or NVRTC: the message says what was tried and
       what to install (`cudakit doctor` has the full report)
  64   usage error: unknown command or option, missing or bad value

Environment:
  CUDAKIT_LIBCUDA     libcuda.so.1 to load instead of searching
  CUDAKIT_LIBNVRTC    libnvrtc.so.13 to load instead of searching
  CUDAKIT_LIBCUBLAS   libcublas.so.13 to load instead of searching (optional:
                      `cudakit matmul` compares with cuBLAS when it loads)
  CUDAKIT_CACHE, CUDAKIT_CACHE_DIR, CUDAKIT_CACHE_MAX_BYTES
                      the compile cache (`off`, its folder, its size bound)

Examples:
  cudakit doctor
  cudakit compile --arch sm_90 --name-expr 'scale<float>' scale.cu
  cudakit matmul --m 4096 --n 4096 --k 4096 --dtype f32
  cudakit matmul --size 8192 --dtype bf16 --compare cublas
  cudakit --json matmul --dtype bf16 --iters 20";

/// Options every command accepts.
#[derive(Debug, Default)]
pub(crate) struct Global {
    /// Print JSON instead of text.
    pub(crate) json: bool,
}

fn main() {
    install_panic_hook();
    let words: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|w| w.to_string_lossy().into_owned())
        .collect();
    let mut global = Global::default();
    let command = format!(
        "cudakit {}",
        words
            .iter()
            .find(|w| !w.starts_with('-'))
            .map_or("", String::as_str)
    );
    let exit = match run(words, &mut global) {
        Ok(exit) => exit,
        Err(err) => {
            report_error(&command, &err, &global);
            err.exit
        }
    };
    std::process::exit(exit.code());
}

/// Parses the global options and the command, and runs it.
fn run(words: Vec<String>, global: &mut Global) -> Result<Exit, CliError> {
    let mut words = words.into_iter();
    let mut help = false;
    let command = loop {
        let Some(word) = words.next() else {
            break None;
        };
        match word.as_str() {
            "--json" => global.json = true,
            "-h" | "--help" => help = true,
            "-V" | "--version" => {
                println!("cudakit {}", env!("CARGO_PKG_VERSION"));
                return Ok(Exit::Ok);
            }
            w if w.starts_with('-') => {
                return Err(CliError::usage(format!(
                    "unknown option {w} (before the command)\nRun `cudakit --help` for usage."
                )))
            }
            _ => break Some(word),
        }
    };
    let Some(command) = command else {
        if help {
            println!("{USAGE}");
            return Ok(Exit::Ok);
        }
        eprintln!("{USAGE}");
        return Err(CliError::usage(
            "no command given; try `cudakit doctor` or `cudakit matmul`",
        ));
    };
    let mut rest: Vec<String> = words.collect();
    if help {
        // `cudakit --help matmul` is `cudakit matmul --help`.
        rest.push("--help".into());
    }
    let parser = |name: &str, rest: Vec<String>| Parser::new(&format!("cudakit {name}"), rest);
    match command.as_str() {
        "doctor" => doctor::run(parser("doctor", rest), global),
        "compile" => compile::run(parser("compile", rest), global),
        "matmul" => matmul::run(parser("matmul", rest), global),
        "bench" => bench::run(parser("bench", rest), global),
        "help" => {
            match rest
                .iter()
                .find(|w| !w.starts_with('-'))
                .map(String::as_str)
            {
                None => println!("{USAGE}"),
                Some("doctor") => println!("{}", doctor::HELP),
                Some("compile") => println!("{}", compile::HELP),
                Some("matmul") => println!("{}", matmul::HELP),
                Some("bench") => println!("{}", bench::HELP),
                Some(other) => {
                    return Err(CliError::usage(format!(
                        "no command named {other:?}; the commands are doctor, compile, matmul, \
                         bench\nRun `cudakit --help` for usage."
                    )))
                }
            }
            Ok(Exit::Ok)
        }
        other => Err(CliError::usage(format!(
            "unknown command {other:?}; the commands are doctor, compile, matmul, bench, help\n\
             Run `cudakit --help` for usage."
        ))),
    }
}

/// Prints an error: `error: ...` on stderr and, with `--json`, a JSON object
/// on stdout (`ok`, `exit_code`, `error` and the error's own fields).
fn report_error(command: &str, err: &CliError, global: &Global) {
    eprintln!("error: {}", err.message);
    if global.json {
        let mut json = Json::object()
            .with("command", command.trim_start_matches("cudakit ").trim())
            .with("ok", false)
            .with("exit_code", err.exit.code())
            .with("error", &err.message);
        for (key, value) in &err.json {
            json.set(key, value.clone());
        }
        println!("{}", json.to_pretty());
    }
}

/// A bug must still end with a message a person can report, not a
/// backtrace: the hook prints the message and where, and the process exits
/// with 1 (`std::process::exit` from the hook, so no unwinding output).
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown".to_owned());
        let location = info
            .location()
            .map_or(String::new(), |l| format!(" at {}:{}", l.file(), l.line()));
        eprintln!(
            "error: internal error in cudakit{location}: {message}\n\
             This is a bug; please report it with the command line that caused it."
        );
        std::process::exit(Exit::Failure.code());
    }));
}
