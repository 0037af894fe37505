//! `cudakit compile FILE.cu`: NVRTC to PTX or CUBIN, with name expressions
//! lowered and the log shown as `file:line:` diagnostics. Needs no GPU when
//! `--arch` is given.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use cudakit::compile::program::{Arch, CppStd, Origin, Output, Program};
use cudakit::{Context, Error};

use crate::args::{CliError, Exit, Parser, Token};
use crate::doctor;
use crate::json::Json;
use crate::units;
use crate::Global;

pub(crate) const HELP: &str = "\
Compile a CUDA C++ file with NVRTC and write PTX or CUBIN. Prints the lowered
(mangled) name of every --name-expr and NVRTC's log. No GPU is needed when
--arch is given; without it the first GPU's architecture is the target.

Usage: cudakit compile FILE.cu [OPTIONS]

Options:
  --arch ARCH          Target: sm_90, sm_90a, sm_100f, 90, ... (default: the GPU's)
  --ptx                Write PTX (compute_XY)
  --cubin              Write CUBIN (sm_XY); the default when --arch is given
  -o, --output OUT     Where to write (default: FILE's stem + .ptx or .cubin,
                       in the current folder)
  --name-expr EXPR     A kernel to lower, e.g. 'scale<float>' (repeatable)
  -D NAME[=VALUE]      Define a macro (repeatable; -DNAME=VALUE also works)
  -I DIR               Add an include folder (repeatable; FILE's own folder is
                       searched first when FILE has an #include with quotes)
  --std STD            c++03, c++11, c++14, c++17 or c++20
  --fast-math          --use_fast_math
  --lineinfo           Keep line information for profilers
  --option OPT         Pass OPT to NVRTC as is (repeatable)
  --no-cache           Bypass the compile cache
  --json               Print one JSON object instead of text
  -h, --help           Show this text

Exit codes: 0 compiled; 1 NVRTC rejected the program (its log is printed,
each diagnostic as FILE:LINE:); 2 NVRTC cannot be loaded; 64 usage error
(including: no --arch and no GPU to take the architecture from).

Example:
  cudakit compile --arch sm_90 --cubin --name-expr 'scale<float>' scale.cu";

#[derive(Debug, Default)]
struct Options {
    file: Option<PathBuf>,
    name_expressions: Vec<String>,
    out: Option<PathBuf>,
    output: Option<Output>,
    arch: Option<Arch>,
    defines: Vec<(String, Option<String>)>,
    includes: Vec<PathBuf>,
    std: Option<CppStd>,
    fast_math: bool,
    lineinfo: bool,
    extra: Vec<String>,
    no_cache: bool,
}

fn parse(args: &mut Parser, global: &mut Global) -> Result<Option<Options>, CliError> {
    let mut o = Options::default();
    while let Some(token) = args.next_token() {
        let Token::Flag(flag, attached) = &token else {
            let Token::Positional(word) = &token else {
                unreachable!("a token is a flag or a positional")
            };
            if o.file.is_some() {
                return Err(args.error(format!("one FILE at a time (got a second one, {word:?})")));
            }
            o.file = Some(PathBuf::from(word));
            continue;
        };
        let attached = attached.clone();
        match flag.as_str() {
            "--json" => {
                args.no_value(flag, &attached)?;
                global.json = true;
            }
            "--help" | "-h" => return Ok(None),
            "--arch" => {
                let v = args.value(flag, attached)?;
                o.arch = Some(Arch::from_str(&v).map_err(|e| args.error(strip_prefix(&e)))?);
            }
            "--ptx" | "--cubin" => {
                args.no_value(flag, &attached)?;
                let want = if flag == "--ptx" {
                    Output::Ptx
                } else {
                    Output::Cubin
                };
                if o.output.is_some_and(|have| have != want) {
                    return Err(args.error("--ptx and --cubin exclude each other"));
                }
                o.output = Some(want);
            }
            "-o" | "--output" => o.out = Some(PathBuf::from(args.value(flag, attached)?)),
            "--name-expr" => {
                let v = args.value(flag, attached)?;
                if v.trim().is_empty() {
                    return Err(args.error("--name-expr needs a non-empty expression"));
                }
                o.name_expressions.push(v);
            }
            "-D" | "--define" => {
                let v = args.value(flag, attached)?;
                let (name, value) = match v.split_once('=') {
                    Some((n, val)) => (n.to_owned(), Some(val.to_owned())),
                    None => (v.clone(), None),
                };
                if name.is_empty() || name.chars().any(char::is_whitespace) {
                    return Err(args.error(format!("-D expects NAME or NAME=VALUE, got {v:?}")));
                }
                o.defines.push((name, value));
            }
            "-I" | "--include" => o.includes.push(PathBuf::from(args.value(flag, attached)?)),
            "--std" => {
                let v = args.value(flag, attached)?;
                o.std = Some(match v.trim_start_matches("-std=") {
                    "c++03" => CppStd::Cpp03,
                    "c++11" => CppStd::Cpp11,
                    "c++14" => CppStd::Cpp14,
                    "c++17" => CppStd::Cpp17,
                    "c++20" => CppStd::Cpp20,
                    _ => {
                        return Err(args.error(format!(
                            "--std expects c++03, c++11, c++14, c++17 or c++20, got {v:?}"
                        )))
                    }
                });
            }
            "--fast-math" => {
                args.no_value(flag, &attached)?;
                o.fast_math = true;
            }
            "--lineinfo" => {
                args.no_value(flag, &attached)?;
                o.lineinfo = true;
            }
            "--option" => o.extra.push(args.value(flag, attached)?),
            "--no-cache" => {
                args.no_value(flag, &attached)?;
                o.no_cache = true;
            }
            _ => return Err(args.unknown(&token)),
        }
    }
    if o.file.is_none() {
        return Err(args.error("missing FILE (the .cu file to compile)"));
    }
    Ok(Some(o))
}

/// `invalid argument: ...` → `...`.
fn strip_prefix(err: &Error) -> String {
    match err {
        Error::InvalidArgument(m) => m.clone(),
        other => other.to_string(),
    }
}

/// Runs `cudakit compile`.
pub(crate) fn run(mut args: Parser, global: &mut Global) -> Result<Exit, CliError> {
    let Some(o) = parse(&mut args, global)? else {
        println!("{HELP}");
        return Ok(Exit::Ok);
    };
    let file = o.file.clone().unwrap_or_default();
    let name = file.display().to_string();
    let source = std::fs::read_to_string(&file)
        .map_err(|e| args.error(format!("cannot read {name}: {e}")))?;

    // NVRTC first: without it nothing below can work, whatever the flags.
    let archs = cudakit::compile::program::supported_archs().map_err(|e| nvrtc_missing(&e))?;

    let mut program = Program::new(name.clone(), source.clone());
    for (define, value) in &o.defines {
        program = match value {
            Some(v) => program.define(define, v),
            None => program.define_flag(define),
        };
    }
    // The file's own folder first when the source includes something by a
    // quoted name, as a C compiler searches it for `#include "..."`; then
    // the -I folders in order. (Only then: the cache fingerprints every file
    // under an include folder, and the output written beside the source
    // would otherwise make every compile a miss.)
    if has_quoted_include(&source) {
        let folder = match file.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        program = program.include_path(folder);
    }
    for dir in &o.includes {
        program = program.include_path(dir);
    }
    for e in &o.name_expressions {
        program = program.name_expression(e);
    }
    if let Some(output) = o.output {
        program = program.output(output);
    }
    if let Some(std) = o.std {
        program = program.std(std);
    }
    if o.fast_math {
        program = program.fast_math(true);
    }
    if o.lineinfo {
        program = program.lineinfo();
    }
    for extra in &o.extra {
        program = program.extra_option(extra);
    }
    if o.no_cache {
        program = program.without_cache();
    }

    let result = match o.arch {
        Some(arch) => program.arch(arch).compile(),
        None => match Context::new(0) {
            Ok(ctx) => program.compile_for(&ctx),
            Err(err) => {
                let list: Vec<String> = archs.iter().map(|a| format!("sm_{a}")).collect();
                return Err(args.error(format!(
                    "no --arch given, and there is no GPU to take the architecture from ({}).\n\
                     Pass --arch, e.g. --arch sm_90; this NVRTC compiles for: {}",
                    doctor::short_cause(&err),
                    list.join(" ")
                )));
            }
        },
    };
    let compiled = match result {
        Ok(c) => c,
        Err(err) => return Err(compile_error(&args, &name, err)),
    };

    // What to write: what was asked for, else CUBIN when there is one.
    let (kind, bytes): (&str, &[u8]) = match (o.output, compiled.cubin(), compiled.ptx()) {
        (Some(Output::Ptx), _, Some(ptx)) => ("ptx", ptx.as_bytes()),
        (_, Some(cubin), _) => ("cubin", cubin),
        (_, None, Some(ptx)) => ("ptx", ptx.as_bytes()),
        _ => {
            return Err(CliError::failure(format!(
                "NVRTC produced neither PTX nor CUBIN for {name}"
            )))
        }
    };
    let out = o.out.clone().unwrap_or_else(|| default_output(&file, kind));
    std::fs::write(&out, bytes)
        .map_err(|e| CliError::failure(format!("cannot write {}: {e}", out.display())))?;

    let origin = match compiled.origin() {
        Origin::Nvrtc => "NVRTC",
        Origin::MemoryCache => "memory cache",
        Origin::DiskCache => "disk cache",
        _ => "other",
    };
    let log = compiled.log().trim_end();
    let diagnostics = diagnostics(log);
    if global.json {
        let lowered = Json::Obj(
            o.name_expressions
                .iter()
                .map(|e| (e.clone(), Json::from(compiled.lowered_name(e))))
                .collect(),
        );
        let json = Json::object()
            .with("command", "compile")
            .with("ok", true)
            .with("exit_code", 0)
            .with("file", &name)
            .with("arch", compiled.arch().to_string())
            .with("kind", kind)
            .with("output", out.display().to_string())
            .with("bytes", bytes.len())
            .with("origin", origin)
            .with("elapsed_ms", units::ms(compiled.elapsed()))
            .with("options", compiled.options().to_vec())
            .with("lowered_names", lowered)
            .with("log", log)
            .with("diagnostics", diagnostics_json(&diagnostics));
        println!("{}", json.to_pretty());
        return Ok(Exit::Ok);
    }
    println!(
        "compiled {name} for {} in {} ({origin})",
        compiled.arch(),
        units::duration(compiled.elapsed())
    );
    println!("  options  {}", compiled.options().join(" "));
    println!(
        "  wrote    {} ({} {})",
        out.display(),
        units::bytes(bytes.len() as u64),
        kind.to_uppercase()
    );
    if !o.name_expressions.is_empty() {
        println!("lowered names");
        let width = o
            .name_expressions
            .iter()
            .map(|e| e.chars().count())
            .max()
            .unwrap_or(0);
        for e in &o.name_expressions {
            let lowered = compiled.lowered_name(e).unwrap_or("(not lowered)");
            println!("  {e:<width$}  ->  {lowered}");
        }
    }
    if log.is_empty() {
        println!("log      (empty)");
    } else {
        println!("log");
        for line in rewrite_log(log).lines() {
            if line.trim().is_empty() {
                println!();
            } else {
                println!("  {line}");
            }
        }
    }
    Ok(Exit::Ok)
}

/// Whether a line of the source is `#include "..."` (spaces allowed).
fn has_quoted_include(source: &str) -> bool {
    source.lines().any(|line| {
        line.trim_start()
            .strip_prefix('#')
            .map(str::trim_start)
            .and_then(|rest| rest.strip_prefix("include"))
            .is_some_and(|rest| rest.trim_start().starts_with('"'))
    })
}

/// `dir/k.cu` → `k.ptx` (or `.cubin`) in the current folder.
fn default_output(file: &Path, kind: &str) -> PathBuf {
    let stem = file
        .file_stem()
        .map_or_else(|| "out".into(), |s| s.to_os_string());
    PathBuf::from(stem).with_extension(kind)
}

/// The error for NVRTC missing (exit 2) or failing.
fn nvrtc_missing(err: &Error) -> CliError {
    let exit = if doctor::is_missing_gpu(err) {
        Exit::NoGpu
    } else {
        Exit::Failure
    };
    CliError::new(
        exit,
        format!(
            "NVRTC is needed to compile and could not be used: {err}\n\n\
             Get it with `python3 -m pip install nvidia-cuda-nvrtc==13.0.88` (cudakit searches \
             pip's site-packages), or install the CUDA toolkit, or set CUDAKIT_LIBNVRTC to the \
             absolute path of libnvrtc.so.13. No GPU is needed to compile."
        ),
    )
    .with_json("cause", err.to_string())
}

/// A failed compile: exit 1 with NVRTC's log as `file:line:` diagnostics.
fn compile_error(args: &Parser, name: &str, err: Error) -> CliError {
    match err {
        Error::Compile {
            code, log, options, ..
        } => {
            let log = log.trim_end();
            let diags = diagnostics(log);
            let mut message = format!(
                "compiling {name} failed ({}, options: {})",
                code.name(),
                options.join(" ")
            );
            if !log.is_empty() {
                message.push('\n');
                message.push_str(&rewrite_log(log));
            }
            CliError::failure(message)
                .with_json("file", name)
                .with_json("nvrtc_code", code.name())
                .with_json("options", options)
                .with_json("log", log)
                .with_json("diagnostics", diagnostics_json(&diags))
        }
        Error::InvalidArgument(m) => args.error(m),
        Error::InteriorNul { what } => args.error(format!("{what} contains a NUL byte")),
        other if doctor::is_missing_gpu(&other) => nvrtc_missing(&other),
        other => CliError::failure(format!("compiling {name} failed: {other}")),
    }
}

/// One NVRTC diagnostic: `file(line): severity: message`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Diagnostic {
    file: String,
    line: u64,
    /// `error`, `warning`, `remark`, ... (the word after the location).
    severity: String,
    message: String,
}

/// The words NVRTC's diagnostics start with (`warning #177-D` starts with
/// `warning`).
const SEVERITIES: &[&str] = &[
    "error",
    "warning",
    "remark",
    "catastrophic error",
    "internal error",
    "note",
];

/// Splits `name(12): error: text` into its parts.
fn parse_diagnostic(line: &str) -> Option<Diagnostic> {
    for (open, _) in line.match_indices('(') {
        let rest = &line[open + 1..];
        let Some(close) = rest.find("): ") else {
            continue;
        };
        let digits = &rest[..close];
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let file = &line[..open];
        if file.is_empty() {
            return None;
        }
        let after = &rest[close + 3..];
        let (severity, message) = match after.split_once(": ") {
            Some((s, m)) if SEVERITIES.iter().any(|k| s.starts_with(k)) => (s, m),
            _ => ("note", after),
        };
        return Some(Diagnostic {
            file: file.to_owned(),
            line: digits.parse().ok()?,
            severity: severity.to_owned(),
            message: message.to_owned(),
        });
    }
    None
}

fn diagnostics(log: &str) -> Vec<Diagnostic> {
    log.lines().filter_map(parse_diagnostic).collect()
}

fn diagnostics_json(diags: &[Diagnostic]) -> Json {
    Json::Arr(
        diags
            .iter()
            .map(|d| {
                Json::object()
                    .with("file", &d.file)
                    .with("line", d.line)
                    .with("severity", &d.severity)
                    .with("message", &d.message)
            })
            .collect(),
    )
}

/// NVRTC's log with each `file(line): ` turned into `file:line: `, the form
/// editors and terminals link to; other lines unchanged.
fn rewrite_log(log: &str) -> String {
    log.lines()
        .map(|line| match parse_diagnostic(line) {
            Some(d) => format!("{}:{}: {}: {}", d.file, d.line, d.severity, d.message),
            None => line.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvrtc_diagnostics_become_file_line() {
        let d =
            parse_diagnostic(r#"dir/k (1).cu(12): error: identifier "x" is undefined"#).unwrap();
        assert_eq!(d.file, "dir/k (1).cu");
        assert_eq!(d.line, 12);
        assert_eq!(d.severity, "error");
        assert_eq!(d.message, r#"identifier "x" is undefined"#);
        let w = parse_diagnostic("k.cu(3): warning #177-D: variable \"y\" was declared").unwrap();
        assert_eq!(w.severity, "warning #177-D");
        assert!(parse_diagnostic("1 error detected in the compilation of \"k.cu\".").is_none());
        assert!(parse_diagnostic("(3): error: x").is_none());
        assert_eq!(
            rewrite_log("k.cu(3): error: bad\n\n1 error detected"),
            "k.cu:3: error: bad\n\n1 error detected"
        );
    }

    #[test]
    fn quoted_includes_are_recognized() {
        assert!(has_quoted_include("#include \"a.h\"\n"));
        assert!(has_quoted_include("  #  include   \"dir/a.h\""));
        assert!(!has_quoted_include("#include <a.h>\n// #include \"x\""));
        assert!(!has_quoted_include("int include = 1;"));
    }

    #[test]
    fn the_default_output_sits_in_the_current_folder() {
        assert_eq!(
            default_output(Path::new("a/b/scale.cu"), "ptx"),
            PathBuf::from("scale.ptx")
        );
        assert_eq!(
            default_output(Path::new("k"), "cubin"),
            PathBuf::from("k.cubin")
        );
    }
}
