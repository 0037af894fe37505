//! `cudakit bench`: cudakit's launch, transfer and compile paths against
//! raw driver and NVRTC calls made in the same run on the same device
//! (`cudakit_suite::bench`), printed as ratios.

use std::time::Duration;

use cudakit::Context;
use cudakit_suite::bench::{self, Row};
use cudakit_suite::kernels;
use cudakit_suite::{
    bench_async, bench_features, bench_graph, bench_ipc, bench_multi, bench_transfers,
};

use crate::args::{CliError, Exit, Parser, Token};
use crate::doctor;
use crate::json::Json;
use crate::units;
use crate::Global;

pub(crate) const HELP: &str = "\
Measure cudakit against raw driver and NVRTC calls made in the same run on the
same device: host time per kernel launch (and its parts: argument check,
parameter list, configuration check), pinned transfers, and compilation
(cold, and a cache hit with module load). Each figure is the median of many
batches, raw and cudakit interleaved. ratio = cudakit / raw: 1.00 is as fast
as the raw calls.

Usage: cudakit bench [OPTIONS]

Options:
  --only LIST           Any of launch, transfers, pageable, both, load,
                        virtual, ipc, compile, graphs, features, async, multi,
                        comma-separated (default:
                        all; multi needs two devices and NCCL, and is
                        reported as not run without them; ipc runs this
                        program again as a second process)
  --launches N          Launches per timed batch (default 2000)
  --batches B           Timed launch batches (default 51)
  --bytes SIZE          Transfer size, e.g. 64M or 1G (default 256M)
  --samples S           Timed transfers each way (default 21)
  --compile-samples C   Timed compiles (default 11)
  --device D            Device ordinal (default 0)
  --json                Print one JSON object instead of the table
  --svg FILE            Also draw the ratios as a bar chart into FILE
  -h, --help            Show this text

Environment: CUDAKIT_PAGEABLE (auto or stage) sets the default policy of
pageable transfers (the both-ways rows also measure each alternative,
registering ones included); CUDAKIT_STAGING_THREADS the
copy threads; CUDAKIT_STAGING_STREAMING=0 plain stores in the host copies.

Exit codes: 0 measured; 1 a driver or compile error (a group that fails
without poisoning the context is reported as `failed: GROUP: ERROR` after
the table, and the other groups still run); 2 no usable GPU,
driver or NVRTC (the doctor's diagnosis is printed); 64 usage error.";

#[derive(Debug)]
struct Options {
    launch: bool,
    transfers: bool,
    pageable: bool,
    both: bool,
    load: bool,
    virtual_mem: bool,
    ipc: bool,
    compile: bool,
    graphs: bool,
    features: bool,
    async_api: bool,
    multi: bool,
    svg: Option<std::path::PathBuf>,
    launches: usize,
    batches: usize,
    bytes: usize,
    samples: usize,
    compile_samples: usize,
    device: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            launch: true,
            transfers: true,
            pageable: true,
            both: true,
            load: true,
            virtual_mem: true,
            ipc: true,
            compile: true,
            graphs: true,
            features: true,
            async_api: true,
            multi: true,
            svg: None,
            launches: 2000,
            batches: 51,
            bytes: 256 << 20,
            samples: 21,
            compile_samples: 11,
            device: 0,
        }
    }
}

fn parse(args: &mut Parser, global: &mut Global) -> Result<Option<Options>, CliError> {
    let mut o = Options::default();
    while let Some(token) = args.next_token() {
        let Token::Flag(flag, attached) = &token else {
            return Err(args.unknown(&token));
        };
        let attached = attached.clone();
        let flag = flag.as_str();
        match flag {
            "--json" => {
                args.no_value(flag, &attached)?;
                global.json = true;
            }
            "--help" | "-h" => return Ok(None),
            "--only" => {
                let v = args.value(flag, attached)?;
                (o.launch, o.transfers, o.compile) = (false, false, false);
                (o.pageable, o.both, o.load, o.graphs) = (false, false, false, false);
                o.multi = false;
                o.features = false;
                o.async_api = false;
                o.virtual_mem = false;
                o.ipc = false;
                for part in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                    match part {
                        "launch" | "launches" => o.launch = true,
                        "transfers" | "transfer" => o.transfers = true,
                        "pageable" => o.pageable = true,
                        "both" => o.both = true,
                        "load" => o.load = true,
                        "virtual" | "vmm" => o.virtual_mem = true,
                        "ipc" => o.ipc = true,
                        "compile" => o.compile = true,
                        "graphs" | "graph" => o.graphs = true,
                        "features" | "feature" => o.features = true,
                        "async" | "nvtx" | "await" => o.async_api = true,
                        "multi" | "nccl" | "peer" => o.multi = true,
                        _ => {
                            return Err(args.error(format!(
                                "--only expects launch, transfers, pageable, both, load, \
                                 virtual, ipc, compile, graphs, features, async or multi, got {part:?}"
                            )))
                        }
                    }
                }
                if !(o.launch
                    || o.transfers
                    || o.pageable
                    || o.both
                    || o.load
                    || o.virtual_mem
                    || o.ipc
                    || o.compile
                    || o.graphs
                    || o.features
                    || o.async_api
                    || o.multi)
                {
                    return Err(args.error("--only needs at least one benchmark"));
                }
            }
            "--launches" => {
                let v = args.value(flag, attached)?;
                o.launches = args.number(flag, &v, 1, 10_000_000)? as usize;
            }
            "--batches" => {
                let v = args.value(flag, attached)?;
                o.batches = args.number(flag, &v, 1, 100_000)? as usize;
            }
            "--bytes" => {
                let v = args.value(flag, attached)?;
                o.bytes = args.bytes(flag, &v, 4, 64 << 30)? as usize;
            }
            "--samples" => {
                let v = args.value(flag, attached)?;
                o.samples = args.number(flag, &v, 1, 100_000)? as usize;
            }
            "--compile-samples" => {
                let v = args.value(flag, attached)?;
                o.compile_samples = args.number(flag, &v, 1, 10_000)? as usize;
            }
            "--svg" => {
                let v = args.value(flag, attached)?;
                o.svg = Some(std::path::PathBuf::from(v));
            }
            "--device" => {
                let v = args.value(flag, attached)?;
                o.device = args.number(flag, &v, 0, 1024)? as usize;
            }
            _ => return Err(args.unknown(&token)),
        }
    }
    Ok(Some(o))
}

/// The kernel the compile benchmark compiles.
const COMPILE_KERNEL: &str = "matmul_tiled<float, 32>";

/// Runs `cudakit bench`.
pub(crate) fn run(mut args: Parser, global: &mut Global) -> Result<Exit, CliError> {
    let Some(o) = parse(&mut args, global)? else {
        println!("{HELP}");
        return Ok(Exit::Ok);
    };
    if let Ok(socket) = std::env::var(bench_ipc::CHILD_ENV) {
        // The second process of the IPC row: it measures and answers over
        // the socket; its parent prints.
        bench_ipc::ipc_open_child(&socket, o.device).map_err(|e| error(&e))?;
        return Ok(Exit::Ok);
    }
    // Context creation first, while no handle of the device's context
    // exists (both sides then create it from nothing).
    let creation = if o.load {
        if !global.json {
            eprintln!("measuring context creation (9 samples)...");
        }
        Some(bench_transfers::context_creation(o.device, 9).map_err(|e| error(&e))?)
    } else {
        None
    };
    let ctx = Context::new(o.device).map_err(|e| error(&e))?;
    if o.compile {
        cudakit::compile::program::nvrtc_version().map_err(|e| error(&e))?;
    }
    let device = ctx
        .device()
        .name()
        .unwrap_or_else(|_| "(name unavailable)".into());
    let mut rows: Vec<(&'static str, Row)> = Vec::new();
    // Groups that failed without poisoning the context: reported after the
    // table (exit 1), so that one failing group does not cost the others.
    let mut failed: Vec<String> = Vec::new();
    rows.extend(creation.into_iter().flatten().map(|row| ("load", row)));
    if o.launch {
        if !global.json {
            eprintln!(
                "measuring launches ({} batches of {})...",
                o.batches, o.launches
            );
        }
        let r = survive(
            &mut failed,
            "launch",
            bench::launch_overhead(&ctx, o.batches, o.launches),
        )?;
        rows.extend(r.into_iter().map(|row| ("launch", row)));
    }
    if o.transfers {
        if !global.json {
            eprintln!(
                "measuring transfers ({} each way, {} samples)...",
                units::bytes(o.bytes as u64),
                o.samples
            );
        }
        let r = survive(
            &mut failed,
            "transfers",
            bench::transfers(&ctx, o.bytes, o.samples),
        )?;
        rows.extend(r.into_iter().map(|row| ("transfers", row)));
    }
    if o.pageable {
        if !global.json {
            eprintln!(
                "measuring pageable transfers ({} each way)...",
                units::bytes(o.bytes as u64)
            );
        }
        let r = survive(
            &mut failed,
            "pageable",
            bench_transfers::pageable(&ctx, o.bytes, o.samples),
        )?;
        rows.extend(r.into_iter().map(|row| ("pageable", row)));
    }
    if o.both {
        if !global.json {
            eprintln!(
                "measuring both directions at once ({} each way)...",
                units::bytes(o.bytes as u64)
            );
        }
        let r = survive(
            &mut failed,
            "both",
            bench_transfers::bidirectional(&ctx, o.bytes, o.samples),
        )?;
        rows.extend(r.into_iter().map(|row| ("both", row)));
    }
    if o.load {
        if !global.json {
            eprintln!(
                "measuring module loads ({} samples)...",
                o.compile_samples * 5
            );
        }
        let r = survive(
            &mut failed,
            "load",
            bench_transfers::module_load(&ctx, o.compile_samples * 5),
        )?;
        rows.extend(r.into_iter().map(|row| ("load", row)));
    }
    if o.virtual_mem {
        if !global.json {
            eprintln!("measuring virtual-buffer growth against reallocation (up to 8 GiB)...");
        }
        let r = survive(
            &mut failed,
            "virtual",
            bench_transfers::virtual_growth(&ctx, 7),
        )?;
        rows.extend(r.into_iter().map(|row| ("virtual", row)));
    }
    if o.ipc {
        if !global.json {
            eprintln!("measuring IPC handle opens in a second process...");
        }
        let exe = std::env::current_exe().map_err(|e| {
            CliError::failure(format!("cudakit bench: finding this program to rerun: {e}"))
        })?;
        let mut child = std::process::Command::new(exe);
        child.args(["bench", "--only", "ipc", "--device", &o.device.to_string()]);
        let r = survive(
            &mut failed,
            "ipc",
            bench_ipc::ipc_open(&ctx, o.samples, child),
        )?;
        rows.extend(r.into_iter().map(|row| ("ipc", row)));
    }
    if o.graphs {
        if !global.json {
            eprintln!("measuring graphs, stream-ordered memory and host callbacks...");
        }
        let r = survive(&mut failed, "graphs", bench_graph::graphs(&ctx, o.samples))?;
        rows.extend(r.into_iter().map(|row| ("graphs", row)));
    }
    let mut not_run: Vec<String> = Vec::new();
    if o.features {
        if !global.json {
            eprintln!("measuring programmatic launch, batched copies and L2 windows...");
        }
        let (r, skipped) = survive(
            &mut failed,
            "features",
            bench_features::features(&ctx, o.samples),
        )?;
        rows.extend(r.into_iter().map(|row| ("features", row)));
        not_run.extend(skipped);
    }
    if o.async_api {
        if !global.json {
            eprintln!("measuring NVTX ranges and awaiting finished events...");
        }
        let r = survive(&mut failed, "async", bench_async::api(&ctx, o.samples))?;
        rows.extend(r.into_iter().map(|row| ("async", row)));
    }
    if o.multi {
        match cudakit::Device::count() {
            Ok(n) if n >= 2 => {
                let other = if o.device == 0 { 1 } else { 0 };
                let c1 = Context::new(other).map_err(|e| error(&e))?;
                if !global.json {
                    eprintln!(
                        "measuring peer copies and NCCL all-reduce on devices {} and {other}...",
                        o.device
                    );
                }
                let r = bench_multi::peer_copies(&ctx, &c1, o.bytes, o.samples, 4)
                    .map_err(|e| error(&e))?;
                rows.extend(r.into_iter().map(|row| ("multi", row)));
                match bench_multi::all_reduce(
                    &ctx,
                    &c1,
                    &[1 << 20, 16 << 20, 256 << 20],
                    o.samples,
                    20,
                ) {
                    Ok(r) => rows.extend(r.into_iter().map(|row| ("multi", row))),
                    Err(cudakit::Error::Load(e)) => not_run.push(format!("NCCL all-reduce: {e}")),
                    Err(e) => return Err(error(&e)),
                }
            }
            Ok(n) => not_run.push(format!(
                "peer copies and NCCL all-reduce: need 2 devices, found {n}"
            )),
            Err(e) => return Err(error(&e)),
        }
    }
    if o.compile {
        if !global.json {
            eprintln!(
                "measuring compiles of {COMPILE_KERNEL} ({} samples)...",
                o.compile_samples
            );
        }
        let r = bench::compile(&ctx, kernels::MATMUL, &[COMPILE_KERNEL], o.compile_samples)
            .map_err(|e| error(&e))?;
        rows.extend(r.into_iter().map(|row| ("compile", row)));
    }

    if let Some(path) = &o.svg {
        std::fs::write(path, svg(&rows, &device)).map_err(|e| {
            CliError::failure(format!("cudakit bench: writing {}: {e}", path.display()))
        })?;
    }
    if global.json {
        let items: Vec<Json> = rows
            .iter()
            .map(|(group, r)| {
                Json::object()
                    .with("group", *group)
                    .with("name", r.name.trim())
                    .with("cudakit_ns", r.cudakit.as_nanos() as u64)
                    .with("raw_ns", r.raw.map(|d| d.as_nanos() as u64))
                    .with("ratio", r.ratio())
                    .with("samples", r.samples)
            })
            .collect();
        let json = Json::object()
            .with("command", "bench")
            .with("ok", failed.is_empty())
            .with("exit_code", if failed.is_empty() { 0 } else { 1 })
            .with(
                "device",
                Json::object()
                    .with("ordinal", ctx.device().ordinal())
                    .with("name", device),
            )
            .with("transfer_bytes", o.bytes)
            .with("rows", Json::Arr(items))
            .with(
                "not_run",
                Json::Arr(not_run.iter().map(|s| Json::from(s.as_str())).collect()),
            )
            .with(
                "failed",
                Json::Arr(failed.iter().map(|s| Json::from(s.as_str())).collect()),
            );
        println!("{}", json.to_pretty());
    } else {
        println!(
            "cudakit bench on device {}: {device}",
            ctx.device().ordinal()
        );
        println!("ratio = cudakit / raw driver calls (1.00 = as fast; lower is better)\n");
        print!("{}", table(&rows));
        for reason in &not_run {
            println!("not run: {reason}");
        }
        for failure in &failed {
            println!("failed: {failure}");
        }
    }
    Ok(if failed.is_empty() {
        Exit::Ok
    } else {
        Exit::Failure
    })
}

/// A benchmark group's result: its value, or, when the group failed
/// without leaving the context unusable, the default (no rows) with the
/// failure noted in `failed`, so that the other groups still run and print.
/// A sticky error ends the command: nothing after it could be measured.
fn survive<T: Default>(
    failed: &mut Vec<String>,
    group: &str,
    result: cudakit::Result<T>,
) -> Result<T, CliError> {
    match result {
        Ok(v) => Ok(v),
        Err(e) if e.is_sticky() => Err(error(&e)),
        Err(e) => {
            eprintln!("cudakit bench: {group} failed: {e}");
            failed.push(format!("{group}: {e}"));
            Ok(T::default())
        }
    }
}

fn error(err: &cudakit::Error) -> CliError {
    match err {
        cudakit::Error::NoSuchDevice { ordinal, count } if *count > 0 => CliError::usage(format!(
            "cudakit bench: there is no device {ordinal}; this machine has {count}"
        )),
        e if doctor::is_missing_gpu(e) => doctor::no_gpu_error("cudakit bench", e),
        e => CliError::failure(format!("cudakit bench: {e}")),
    }
}

/// The ratios as a horizontal bar chart (SVG): one bar per row that has a
/// raw baseline, a line at 1.00, green at or under 1.05, amber above.
fn svg(rows: &[(&'static str, Row)], device: &str) -> String {
    let bars: Vec<(&str, f64)> = rows
        .iter()
        .filter_map(|(_, r)| r.ratio().map(|x| (r.name.trim(), x)))
        .collect();
    let (left, width, bar_h, gap, top) = (330.0, 420.0, 18.0, 6.0, 40.0);
    let max = bars.iter().map(|b| b.1).fold(1.25f64, f64::max).min(4.0);
    let scale = width / max;
    let height = top + bars.len() as f64 * (bar_h + gap) + 30.0;
    let esc = |t: &str| {
        t.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{height}\" \
         font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"10\" y=\"20\" font-size=\"14\">cudakit / raw (lower is better) on {dev}</text>\n",
        w = left + width + 70.0,
        dev = esc(device)
    );
    for (i, (name, ratio)) in bars.iter().enumerate() {
        let y = top + i as f64 * (bar_h + gap);
        let w = (ratio.min(max) * scale).max(1.0);
        let color = if *ratio <= 1.05 { "#3a9a4a" } else { "#d08a1c" };
        out.push_str(&format!(
            "<text x=\"{tx}\" y=\"{ty}\" text-anchor=\"end\">{n}</text>\n\
             <rect x=\"{left}\" y=\"{y}\" width=\"{w:.1}\" height=\"{bar_h}\" fill=\"{color}\"/>\n\
             <text x=\"{vx:.1}\" y=\"{ty}\">{ratio:.3}</text>\n",
            tx = left - 6.0,
            ty = y + bar_h - 4.0,
            n = esc(name),
            vx = left + w + 4.0,
        ));
    }
    let x1 = left + scale;
    out.push_str(&format!(
        "<line x1=\"{x1:.1}\" y1=\"{y0}\" x2=\"{x1:.1}\" y2=\"{y1}\" stroke=\"black\" \
         stroke-dasharray=\"4 3\"/>\n<text x=\"{x1:.1}\" y=\"{yt}\" text-anchor=\"middle\">1.00</text>\n</svg>\n",
        y0 = top - 4.0,
        y1 = height - 24.0,
        yt = height - 10.0
    ));
    out
}

fn time(d: Duration) -> String {
    units::duration(d)
}

/// The rows as a table.
fn table(rows: &[(&'static str, Row)]) -> String {
    let mut t = format!(
        "{:<40} {:>12} {:>12} {:>8} {:>6}\n",
        "benchmark", "cudakit", "raw", "ratio", "n"
    );
    for (_, r) in rows {
        let raw = r.raw.map_or_else(|| "-".to_owned(), time);
        let ratio = r
            .ratio()
            .map_or_else(|| "-".to_owned(), |x| format!("{x:.2}"));
        t.push_str(&format!(
            "{:<40} {:>12} {:>12} {:>8} {:>6}\n",
            r.name,
            time(r.cudakit),
            raw,
            ratio,
            r.samples
        ));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_shows_ratios_and_dashes() {
        let rows = vec![
            (
                "launch",
                Row {
                    name: "launch (host time per launch)".into(),
                    cudakit: Duration::from_nanos(2_400),
                    raw: Some(Duration::from_nanos(2_000)),
                    samples: 51,
                },
            ),
            (
                "launch",
                Row {
                    name: "  of which: argument check".into(),
                    cudakit: Duration::from_nanos(12),
                    raw: None,
                    samples: 51,
                },
            ),
        ];
        let t = table(&rows);
        assert!(t.contains("1.20"), "{t}");
        assert!(t.contains("2.40 µs") && t.contains("2.00 µs"), "{t}");
        assert!(t.lines().nth(2).unwrap().contains(" - "), "{t}");
        let chart = svg(&rows, "GPU <0>");
        assert!(chart.starts_with("<svg"), "{chart}");
        assert!(
            chart.contains(">1.200<") && chart.contains("GPU &lt;0&gt;"),
            "{chart}"
        );
        assert_eq!(
            chart.matches("<rect").count(),
            2,
            "background and one bar: {chart}"
        );
    }
}
