//! Green contexts (`Context::split_sms`) on the device:
//!
//! - a partition of N SMs runs a grid of many more blocks than N (and a
//!   persistent grid whose blocks record their SM in every round) on at
//!   most N distinct SMs (`%smid`), the partitions' SM sets are disjoint,
//!   and the primary context's grid, as a control, uses more SMs than any
//!   partition has; the same holds for a kernel of a context-independent
//!   library (`Kernel::function` on the partition);
//! - two long grids on two partitions run at once: their `%globaltimer`
//!   intervals overlap, and the pair takes well under the time of the two
//!   run one after the other; a grid of many waves takes several times
//!   longer on a partition than on the whole device;
//! - every bad size (0, not a multiple of the alignment, below the
//!   minimum, more SMs than the device has) is a typed error before the
//!   driver, and the context and a partition made afterwards work;
//! - a fault on a partition poisons it and the primary context (in a child
//!   process, as a fault leaves the process's contexts unusable).
//!
//! Every output is poisoned first, so an unwritten element shows.

use std::collections::BTreeSet;
use std::process::Command;

use cudakit::compile::program::Program;
use cudakit::{params, Context, Error, LaunchConfig, Library, Module};
use cudakit_suite::kernels::{FAULTS, SMID};

const POISON: u32 = 0xFFFF_FFFF;

fn ctx() -> Context {
    let ctx = Context::new(0).expect("device 0");
    if cudakit::sys::driver()
        .map(|cu| cu.cuGreenCtxCreate.is_none())
        .unwrap_or(true)
    {
        cudakit_suite::not_run("the driver has no green contexts (CUDA 12.4+)");
    }
    ctx
}

fn smid_module(ctx: &Context) -> Module<'_> {
    let compiled = Program::new("smid.cu", SMID)
        .compile_for(ctx)
        .expect("compile smid.cu");
    ctx.load_module(&compiled).expect("load smid.cu")
}

/// Runs `smid_blocks` with `blocks` blocks on `ctx` (its own module) and
/// returns the distinct SMs, after checking every block wrote.
fn smids_of_grid(ctx: &Context, blocks: u32, spin: i64) -> BTreeSet<u32> {
    let module = smid_module(ctx);
    let f = module.function("smid_blocks").expect("smid_blocks");
    smids_with(ctx, &f, blocks, spin)
}

fn smids_with(ctx: &Context, f: &cudakit::Function<'_>, blocks: u32, spin: i64) -> BTreeSet<u32> {
    let out = ctx
        .upload(&vec![POISON; blocks as usize])
        .expect("poisoned output");
    let stream = ctx.stream().expect("stream");
    // SAFETY: smid_blocks(unsigned* out, unsigned n, long long spin) writes
    // out[b] for each block b < n; out holds `blocks` elements.
    ctx.scope(|s| unsafe {
        s.launch(
            &stream,
            f,
            &LaunchConfig::new(blocks, 64),
            &params![&out, blocks, spin],
        )
    })
    .expect("launch smid_blocks");
    let got = out.to_vec().expect("read back");
    assert!(
        got.iter().all(|&v| v != POISON),
        "a block did not write its SM"
    );
    got.into_iter().collect()
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_partitions_blocks_run_on_at_most_its_sms() {
    let ctx = ctx();
    let device_sms = ctx.limits().multiprocessors;
    let info = ctx.sm_resource().expect("sm_resource");
    eprintln!("device SMs: {info:?}");
    assert_eq!(info.sm_count, device_sms, "the resource counts every SM");
    let split = ctx.split_sms(&[16, 32]).expect("split 16 + 32");
    let rest = split.remainder().map(|r| r.green_sm_count());
    eprintln!("remainder: {rest:?}");
    let blocks = 20 * device_sms;
    let mut sets = Vec::new();
    for part in split.partitions() {
        let n = part.green_sm_count().expect("green") as usize;
        assert_eq!(
            part.sm_resource().expect("partition's").sm_count as usize,
            n
        );
        let used = smids_of_grid(part, blocks, 100_000);
        eprintln!("partition of {n} SMs: {} distinct SMs {used:?}", used.len());
        assert!(
            used.len() <= n,
            "a partition of {n} SMs ran blocks on {} SMs",
            used.len()
        );
        assert!(
            used.len() >= n / 2,
            "{} of {n} SMs used by {blocks} spinning blocks",
            used.len()
        );
        sets.push(used);
    }
    assert!(
        sets[0].is_disjoint(&sets[1]),
        "two partitions of one split share SMs: {:?}",
        sets[0].intersection(&sets[1]).collect::<Vec<_>>()
    );
    // Control: the primary context spreads the same grid over more SMs
    // than either partition has.
    let all = smids_of_grid(&ctx, blocks, 100_000);
    eprintln!("primary context: {} distinct SMs", all.len());
    assert!(all.len() > 32, "the control used {} SMs", all.len());
    assert!(ctx.leak_report().is_empty(), "{}", ctx.leak_report());
    for part in split.partitions() {
        assert!(part.leak_report().is_empty(), "{}", part.leak_report());
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_persistent_grid_stays_on_its_partition() {
    let ctx = ctx();
    let split = ctx.split_sms(&[16]).expect("split 16");
    let part = &split[0];
    let n = 16u32;
    let module = smid_module(part);
    let f = module.function("smid_persistent").expect("smid_persistent");
    // Four resident blocks per SM, each recording its SM in 50 rounds of
    // about 0.1 ms.
    let (blocks, rounds) = (4 * n, 50u32);
    let out = part
        .upload(&vec![POISON; (blocks * rounds) as usize])
        .expect("poisoned output");
    let stream = part.stream().expect("stream");
    // SAFETY: smid_persistent(unsigned* out, unsigned blocks, unsigned
    // rounds, long long spin) writes out[b * rounds + r] for b < blocks;
    // out holds blocks * rounds elements.
    part.scope(|s| unsafe {
        s.launch(
            &stream,
            &f,
            &LaunchConfig::new(blocks, 128),
            &params![&out, blocks, rounds, 200_000i64],
        )
    })
    .expect("launch");
    let got = out.to_vec().expect("read back");
    assert!(got.iter().all(|&v| v != POISON), "an unwritten round");
    let used: BTreeSet<u32> = got.into_iter().collect();
    eprintln!(
        "persistent grid on 16 SMs: {} distinct {used:?}",
        used.len()
    );
    assert!(used.len() <= n as usize, "{} SMs used", used.len());
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_library_kernel_runs_on_a_partition() {
    let ctx = ctx();
    let compiled = Program::new("smid.cu", SMID)
        .compile_for(&ctx)
        .expect("compile smid.cu");
    let library = Library::load(&compiled).expect("cuLibraryLoadData");
    let split = ctx.split_sms(&[16]).expect("split 16");
    let part = &split[0];
    let f = library
        .function(part, "smid_blocks")
        .expect("cuKernelGetFunction in the green context");
    let used = smids_with(part, &f, 20 * ctx.limits().multiprocessors, 100_000);
    eprintln!("library kernel on 16 SMs: {} distinct", used.len());
    assert!(used.len() <= 16, "{} SMs used", used.len());
    // The same library kernel in the primary context, as a control.
    let g = library.function(&ctx, "smid_blocks").expect("primary");
    let all = smids_with(&ctx, &g, 20 * ctx.limits().multiprocessors, 100_000);
    assert!(all.len() > 16, "the control used {} SMs", all.len());
}

/// What `spin_timed` needs on one context: its output (two `%globaltimer`
/// stamps per block) and a stream; `interval` reads (earliest start, latest
/// end) in ns.
struct Spin<'c> {
    ctx: &'c Context,
    times: cudakit::DeviceBuffer<'c, u64>,
    stream: cudakit::Stream<'c>,
    blocks: u32,
}

impl<'c> Spin<'c> {
    fn new(ctx: &'c Context, blocks: u32) -> Spin<'c> {
        Spin {
            ctx,
            times: ctx.alloc::<u64>(2 * blocks as usize).expect("times"),
            stream: ctx.stream().expect("stream"),
            blocks,
        }
    }

    fn poison(&self) {
        self.times
            .copy_from_host(&vec![u64::MAX; 2 * self.blocks as usize])
            .expect("poison");
    }

    fn interval(&self) -> (u64, u64) {
        let t = self.times.to_vec().expect("read back");
        assert!(t.iter().all(|&v| v != u64::MAX), "a block wrote no time");
        let start = t.iter().step_by(2).copied().min().expect("blocks");
        let end = t.iter().skip(1).step_by(2).copied().max().expect("blocks");
        assert!(end > start);
        (start, end)
    }
}

/// Queues a spin on `spin` inside `s` (a scope of its context).
fn queue_spin<'s>(
    s: &cudakit::Scope<'s, '_>,
    spin: &'s Spin<'_>,
    f: &'s cudakit::Function<'_>,
    cycles: i64,
) {
    // SAFETY: spin_timed(unsigned long long* times, unsigned n, long long
    // cycles) writes times[2b], times[2b + 1] for b < n; `times` holds 2n.
    unsafe {
        s.launch(
            &spin.stream,
            f,
            &LaunchConfig::new(spin.blocks, 64),
            &params![&spin.times, spin.blocks, cycles],
        )
    }
    .expect("launch spin_timed");
}

fn run_alone(spin: &Spin<'_>, f: &cudakit::Function<'_>, cycles: i64) -> (u64, u64) {
    spin.poison();
    spin.ctx
        .scope(|s| {
            queue_spin(s, spin, f, cycles);
            Ok(())
        })
        .expect("scope");
    spin.interval()
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn two_partitions_run_at_once() {
    let ctx = ctx();
    let split = ctx.split_sms(&[16, 16]).expect("split 16 + 16");
    let (a, b) = (&split[0], &split[1]);
    // Two blocks per SM, one wave on each partition; ~20 ms of spinning.
    let cycles = 40_000_000i64;
    let (ma, mb) = (smid_module(a), smid_module(b));
    let fa = ma.function("spin_timed").expect("spin_timed");
    let fb = mb.function("spin_timed").expect("spin_timed");
    let (sa, sb) = (Spin::new(a, 32), Spin::new(b, 32));
    // Warm-up (first launch), then each alone.
    run_alone(&sa, &fa, 1000);
    run_alone(&sb, &fb, 1000);
    let (a0, a1) = run_alone(&sa, &fa, cycles);
    let (b0, b1) = run_alone(&sb, &fb, cycles);
    let (alone_a, alone_b) = (a1 - a0, b1 - b0);
    // Both queued before either is waited for: two scopes, one per
    // context, the inner one ends (waits) after both launches.
    sa.poison();
    sb.poison();
    a.scope(|s| {
        queue_spin(s, &sa, &fa, cycles);
        b.scope(|t| {
            queue_spin(t, &sb, &fb, cycles);
            Ok(())
        })
    })
    .expect("both");
    let (ta, tb) = (sa.interval(), sb.interval());
    let overlap = ta.1.min(tb.1).saturating_sub(ta.0.max(tb.0));
    let together = ta.1.max(tb.1) - ta.0.min(tb.0);
    eprintln!(
        "alone: {:.2} ms + {:.2} ms; together: {:.2} ms, overlap {:.2} ms",
        alone_a as f64 / 1e6,
        alone_b as f64 / 1e6,
        together as f64 / 1e6,
        overlap as f64 / 1e6
    );
    assert!(
        overlap * 2 > alone_a.min(alone_b),
        "the partitions' grids overlapped by {overlap} ns only"
    );
    assert!(
        together * 4 < (alone_a + alone_b) * 3,
        "together {together} ns, one after the other {} ns",
        alone_a + alone_b
    );

    // A grid of many waves on 16 SMs takes several times as long as on
    // the whole device (the partition really has 16 SMs to offer).
    let device_sms = ctx.limits().multiprocessors;
    // One wave on the whole device (32 resident blocks of 64 threads per
    // SM), about nine on 16 SMs.
    let many = 32 * device_sms;
    let short = 2_000_000i64;
    let mw = smid_module(&ctx);
    let fw = mw.function("spin_timed").expect("spin_timed");
    let whole = Spin::new(&ctx, many);
    let small = Spin::new(a, many);
    run_alone(&whole, &fw, 1000);
    run_alone(&small, &fa, 1000);
    let (w0, w1) = run_alone(&whole, &fw, short);
    let (p0, p1) = run_alone(&small, &fa, short);
    let ratio = (p1 - p0) as f64 / (w1 - w0) as f64;
    eprintln!(
        "{many} blocks: {:.2} ms on the device, {:.2} ms on 16 SMs (x{ratio:.1})",
        (w1 - w0) as f64 / 1e6,
        (p1 - p0) as f64 / 1e6
    );
    assert!(ratio > 3.0, "x{ratio:.2}");
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn bad_sizes_are_typed_errors_and_everything_stays_usable() {
    let ctx = ctx();
    let info = ctx.sm_resource().expect("sm_resource");
    eprintln!("{info:?}");
    let (min, align, total) = (info.min_partition_size, info.alignment, info.sm_count);
    match ctx.split_sms(&[0]) {
        Err(Error::SmGranularity { count: 0, .. }) => {}
        other => panic!("0 SMs: {other:?}"),
    }
    if align > 1 {
        let bad = min + 1;
        match ctx.split_sms(&[bad]) {
            Err(Error::SmGranularity {
                count,
                min: m,
                multiple,
                ..
            }) => assert_eq!((count, m, multiple), (bad, min, align)),
            other => panic!("{bad} SMs: {other:?}"),
        }
    } else {
        eprintln!("alignment 1: every size from {min} up is a multiple");
    }
    if min > 1 {
        assert!(matches!(
            ctx.split_sms(&[min - 1]),
            Err(Error::SmGranularity { .. })
        ));
    }
    let over = (total / align.max(1) + 1) * align.max(1);
    match ctx.split_sms(&[over]) {
        Err(Error::NotEnoughSms {
            requested,
            available,
            ..
        }) => assert_eq!((requested, available), (over, total)),
        other => panic!("{over} SMs: {other:?}"),
    }
    match ctx.split_sms(&[min.max(align), total]) {
        Err(Error::NotEnoughSms { .. }) | Err(Error::SmGranularity { .. }) => {}
        other => panic!("too many in all: {other:?}"),
    }
    // Everything still works: the primary context, and a partition made
    // after the refusals.
    assert!(ctx.poisoned().is_none());
    let smallest = min.div_ceil(align.max(1)) * align.max(1);
    let split = ctx.split_sms(&[smallest]).expect("the smallest partition");
    let used = smids_of_grid(&split[0], 4 * ctx.limits().multiprocessors, 10_000);
    assert!(used.len() <= smallest as usize, "{} SMs", used.len());
    let all = smids_of_grid(&ctx, 4 * ctx.limits().multiprocessors, 10_000);
    assert!(all.len() > smallest as usize);
    // Another thread is refused before the driver.
    std::thread::scope(|t| {
        t.spawn(|| {
            assert!(matches!(
                split[0].stream(),
                Err(Error::GreenContextThread { .. })
            ));
        });
    });
    split[0].stream().expect("on its own thread");
}

/// A write through a null pointer on a partition: sticky, poisons the
/// partition and the primary context. In a child process (the fault
/// leaves the process's contexts unusable); named `fault_*` so that the
/// sanitizer pass of the runner leaves it out.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn fault_on_a_partition_poisons_it_and_the_primary_context() {
    if std::env::var_os("CUDAKIT_GREEN_FAULT_CHILD").is_some() {
        let ctx = ctx();
        let split = ctx.split_sms(&[16]).expect("split");
        let part = &split[0];
        let compiled = Program::new("faults.cu", FAULTS)
            .compile_for(part)
            .expect("compile faults.cu");
        let module = part.load_module(&compiled).expect("load");
        let f = module
            .function("fault_null_write")
            .expect("fault_null_write");
        let stream = part.stream().expect("stream");
        // SAFETY: the kernel faults on purpose; the child exists for it.
        let r = part.scope(|s| unsafe {
            s.launch(&stream, &f, &LaunchConfig::new(1, 32), &params![1.0f32])
        });
        let err = r.expect_err("the fault is reported");
        let code = err.driver_error().map(|e| e.code.raw().0).unwrap_or(-1);
        let part_poisoned = part.poisoned().is_some();
        let primary_poisoned = ctx.poisoned().is_some();
        let refused = matches!(ctx.alloc::<u32>(1), Err(Error::ContextPoisoned { .. }));
        println!(
            "GREEN_STICKY code={code} sticky={} part={part_poisoned} primary={primary_poisoned} \
             refused={refused}",
            err.is_sticky()
        );
        return;
    }
    let exe = std::env::current_exe().expect("own executable");
    let out = Command::new(exe)
        .args([
            "fault_on_a_partition_poisons_it_and_the_primary_context",
            "--exact",
            "--include-ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("CUDAKIT_GREEN_FAULT_CHILD", "1")
        .output()
        .expect("spawn the child test");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stdout
        .lines()
        .find_map(|l| l.find("GREEN_STICKY").map(|i| &l[i..]))
        .unwrap_or_else(|| panic!("no GREEN_STICKY line:\n{stdout}\n{stderr}"));
    eprintln!("child: {line}");
    assert!(line.contains("sticky=true"), "{line}");
    assert!(line.contains("part=true"), "{line}");
    assert!(line.contains("primary=true"), "{line}");
    assert!(line.contains("refused=true"), "{line}");
}
