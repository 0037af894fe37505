//! Hardware tests of the launch path: every kind of argument, wrong counts
//! and sizes (typed errors, never a 700), over-limit configurations, more
//! than 48 KiB of dynamic shared memory, clusters, a cooperative grid sync,
//! unified memory as an argument, kernel timing, and 10⁵ launches.

use cudakit::compile::module::Module;
use cudakit::compile::program::Program;
use cudakit::work::launch::LaunchConfig;
use cudakit::{params, Context, Error, LaunchConfigError};
use cudakit_suite::kernels::{self, StructArg, F8, S12, S16, S24, S32, S4, S64, S8, V16};
use cudakit_suite::rng::Rng;

const STRUCTS: [&str; 9] = ["S4", "S8", "S12", "S16", "S24", "S32", "S64", "V16", "F8"];

fn ctx() -> Context {
    Context::new(0).expect("device 0")
}

fn module(ctx: &Context) -> Module<'_> {
    let mut p = Program::new("launch.cu", kernels::LAUNCH);
    for s in STRUCTS {
        p = p.name_expression(format!("args_struct<{s}>"));
    }
    let compiled = p.compile_for(ctx).expect("compile launch.cu");
    ctx.load_module(&compiled).expect("load launch.cu")
}

fn one() -> LaunchConfig {
    LaunchConfig::new(1, 1)
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn scalars_of_every_width_arrive_exactly() {
    let ctx = ctx();
    let m = module(&ctx);
    let f = m.function("args_scalars").unwrap();
    let mut r = Rng::new();
    let (i8v, u8v, i16v, u16v) = (
        r.next_u64() as i8,
        r.next_u64() as u8,
        r.next_u64() as i16,
        r.next_u64() as u16,
    );
    let (i32v, u32v, i64v, u64v) = (
        r.next_u64() as i32,
        r.next_u64() as u32,
        r.next_u64() as i64,
        r.next_u64(),
    );
    let (f32v, f64v) = (r.f32_sym(), r.f64_sym());
    let values = ctx.alloc::<f64>(10).unwrap();
    values.fill(f64::NAN).unwrap();
    let bits = ctx.alloc::<u64>(10).unwrap();
    bits.fill(0xDEAD_BEEF_DEAD_BEEF).unwrap();
    let stream = ctx.stream().unwrap();
    ctx.scope(|s| {
        let p = params![i8v, u8v, i16v, u16v, i32v, u32v, i64v, u64v, f32v, f64v, &values, &bits];
        // SAFETY: args_scalars writes 10 elements of each output.
        unsafe { s.launch(&stream, &f, &one(), &p) }
    })
    .unwrap();
    let v = values.to_vec().unwrap();
    let b = bits.to_vec().unwrap();
    let want_bits = [
        i8v as u8 as u64,
        u8v as u64,
        i16v as u16 as u64,
        u16v as u64,
        i32v as u32 as u64,
        u32v as u64,
        i64v as u64,
        u64v,
        f32v.to_bits() as u64,
        f64v.to_bits(),
    ];
    assert_eq!(b, want_bits);
    let want_values = [
        i8v as f64,
        u8v as f64,
        i16v as f64,
        u16v as f64,
        i32v as f64,
        u32v as f64,
        i64v as f64,
        u64v as f64,
        f32v as f64,
        f64v,
    ];
    assert_eq!(v, want_values);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn structs_match_the_device_compilers_layout() {
    let ctx = ctx();
    let m = module(&ctx);
    let f = m.function("struct_layout").unwrap();
    let out = ctx.alloc::<u64>(35).unwrap();
    out.fill(u64::MAX).unwrap();
    let stream = ctx.stream().unwrap();
    // SAFETY: struct_layout writes 35 elements.
    ctx.scope(|s| unsafe { s.launch(&stream, &f, &one(), &params![&out]) })
        .unwrap();
    let o = out.to_vec().unwrap();
    let rust = kernels::rust_struct_layout();
    assert_eq!(
        kernels::STRUCT_LAYOUT,
        rust,
        "the mirrors against the documented layout"
    );
    assert_eq!(o, rust);
}

fn check_struct<T: StructArg>(ctx: &Context, m: &Module<'_>, rng: &mut Rng) {
    let v = T::random(rng);
    let f = m.function(T::KERNEL).unwrap();
    let fields = ctx.alloc::<f64>(8).unwrap();
    fields.fill(f64::NAN).unwrap();
    let bytes = ctx.alloc::<u8>(T::SIZE).unwrap();
    bytes.fill(0xA5).unwrap();
    let stream = ctx.stream().unwrap();
    // SAFETY: args_struct writes at most 8 fields and sizeof(S) bytes.
    ctx.scope(|s| unsafe { s.launch(&stream, &f, &one(), &params![v, &fields, &bytes]) })
        .unwrap();
    let want = v.fields();
    assert_eq!(
        &fields.to_vec().unwrap()[..want.len()],
        &want[..],
        "{} fields",
        T::KERNEL
    );
    assert_eq!(
        bytes.to_vec().unwrap(),
        v.to_bytes(),
        "{} bytes, padding included",
        T::KERNEL
    );
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn structs_of_4_to_64_bytes_arrive_byte_for_byte() {
    let ctx = ctx();
    let m = module(&ctx);
    let mut r = Rng::new();
    check_struct::<S4>(&ctx, &m, &mut r);
    check_struct::<S8>(&ctx, &m, &mut r);
    check_struct::<S12>(&ctx, &m, &mut r);
    check_struct::<S16>(&ctx, &m, &mut r);
    check_struct::<S24>(&ctx, &m, &mut r);
    check_struct::<S32>(&ctx, &m, &mut r);
    check_struct::<S64>(&ctx, &m, &mut r);
    check_struct::<V16>(&ctx, &m, &mut r);
    check_struct::<F8>(&ctx, &m, &mut r);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn all_structs_at_once_and_an_array_by_value() {
    let ctx = ctx();
    let m = module(&ctx);
    let mut r = Rng::new();
    let (s4, s8, s12, s16) = (
        S4::random(&mut r),
        S8::random(&mut r),
        S12::random(&mut r),
        S16::random(&mut r),
    );
    let (s24, s32, s64) = (
        S24::random(&mut r),
        S32::random(&mut r),
        S64::random(&mut r),
    );
    let (v16, f8) = (V16::random(&mut r), F8::random(&mut r));
    let f = m.function("args_structs_all").unwrap();
    let out = ctx.alloc::<f64>(28).unwrap();
    out.fill(f64::NAN).unwrap();
    let stream = ctx.stream().unwrap();
    let p = params![s4, s8, s12, s16, s24, s32, s64, v16, &out];
    // SAFETY: args_structs_all writes 28 elements.
    ctx.scope(|s| unsafe { s.launch(&stream, &f, &one(), &p) })
        .unwrap();
    let mut want = Vec::new();
    for x in [
        StructArg::fields(&s4),
        StructArg::fields(&s8),
        StructArg::fields(&s12),
        StructArg::fields(&s16),
        StructArg::fields(&s24),
        StructArg::fields(&s32),
        StructArg::fields(&s64),
        StructArg::fields(&v16),
    ] {
        want.extend(x);
    }
    assert_eq!(out.to_vec().unwrap(), want);

    let fa = m.function("args_array").unwrap();
    let arr = ctx.alloc::<f32>(8).unwrap();
    arr.fill(f32::NAN).unwrap();
    // SAFETY: args_array writes 8 elements.
    ctx.scope(|s| unsafe { s.launch(&stream, &fa, &one(), &params![f8, &arr]) })
        .unwrap();
    assert_eq!(arr.to_vec().unwrap(), f8.v.to_vec());
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn twenty_parameters_spill_past_the_inline_storage() {
    let ctx = ctx();
    let m = module(&ctx);
    let f = m.function("args_many").unwrap();
    let mut r = Rng::new();
    let out = ctx.alloc::<f64>(19).unwrap();
    out.fill(f64::NAN).unwrap();
    let v: Vec<f64> = (0..19).map(|_| (r.f64_sym() * 100.0).round()).collect();
    let p = params![
        &out,
        v[0] as i8,
        v[1],
        v[2] as i16,
        v[3] as f32,
        v[4].abs() as u8,
        v[5] as i64,
        v[6] as i32,
        v[7],
        v[8].abs() as u8,
        v[9].abs() as u64,
        v[10] as f32,
        v[11] as i16,
        v[12],
        v[13] as i32,
        v[14] as i8,
        v[15] as f32,
        v[16] as i64,
        v[17].abs() as u16,
        v[18]
    ];
    assert!(p.is_spilled(), "20 arguments use the heap storage");
    let stream = ctx.stream().unwrap();
    // SAFETY: args_many writes 19 elements.
    ctx.scope(|s| unsafe { s.launch(&stream, &f, &one(), &p) })
        .unwrap();
    let want: Vec<f64> = v
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            if [4, 8, 9, 17].contains(&i) {
                x.abs()
            } else {
                x
            }
        })
        .collect();
    assert_eq!(out.to_vec().unwrap(), want);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn wrong_counts_and_sizes_are_typed_errors_not_700() {
    let ctx = ctx();
    let m = module(&ctx);
    let f = m.function("args_array").unwrap();
    let out = ctx.alloc::<f32>(8).unwrap();
    let stream = ctx.stream().unwrap();
    let check = f.param_check().unwrap();
    assert!(matches!(check, cudakit::work::launch::ParamCheck::Available(p) if p.len() == 2));
    // Too few.
    // SAFETY: the launch is refused before the driver.
    let err = ctx
        .scope(|s| unsafe { s.launch(&stream, &f, &one(), &params![&out]) })
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::ArgumentCount {
                expected: 2,
                got: 1,
                ..
            }
        ),
        "{err}"
    );
    // Too many.
    // SAFETY: as above.
    let err = ctx
        .scope(|s| unsafe { s.launch(&stream, &f, &one(), &params![F8::default(), &out, 1i32]) })
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::ArgumentCount {
                expected: 2,
                got: 3,
                ..
            }
        ),
        "{err}"
    );
    // A pointer-sized value where a 32-byte struct belongs.
    // SAFETY: as above.
    let err = ctx
        .scope(|s| unsafe { s.launch(&stream, &f, &one(), &params![&out, &out]) })
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::ArgumentMismatch {
                index: 0,
                expected_size: 32,
                got_size: 8,
                ..
            }
        ),
        "{err}"
    );
    // A scalar of the wrong width.
    let g = m.function("args_scalars").unwrap();
    let o = ctx.alloc::<f64>(10).unwrap();
    let b = ctx.alloc::<u64>(10).unwrap();
    let p = params![0i32, 0u8, 0i16, 0u16, 0i32, 0u32, 0i64, 0u64, 0f32, 0f64, &o, &b];
    // SAFETY: as above.
    let err = ctx
        .scope(|s| unsafe { s.launch(&stream, &g, &one(), &p) })
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::ArgumentMismatch {
                index: 0,
                expected_size: 1,
                got_size: 4,
                ..
            }
        ),
        "{err}"
    );
    assert!(ctx.poisoned().is_none(), "no launch reached the device");
    ctx.synchronize().unwrap();
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn over_limit_configurations_are_refused_before_the_driver() {
    let ctx = ctx();
    let m = module(&ctx);
    let f = m.function("count_threads").unwrap();
    let counter = ctx.alloc_zeroed::<u64>(1).unwrap();
    let stream = ctx.stream().unwrap();
    let lim = *ctx.limits();
    let try_cfg = |cfg: LaunchConfig| {
        // SAFETY: count_threads adds 1 per thread to one u64.
        ctx.scope(|s| unsafe { s.launch(&stream, &f, &cfg, &params![&counter]) })
    };
    let over = |cfg: LaunchConfig, what: &str| {
        let err = try_cfg(cfg).unwrap_err();
        match &err {
            Error::LaunchConfig {
                error: LaunchConfigError::OverLimit { what: w, .. },
                ..
            } => {
                assert!(w.contains(what), "{err}")
            }
            other => panic!("expected OverLimit {what}, got {other}"),
        }
    };
    over(LaunchConfig::new(1, (64, 32)), "threads per block");
    over(LaunchConfig::new(1, lim.max_block_dim[0] + 1), "block.x");
    over(
        LaunchConfig::new(1, (1, 1, lim.max_block_dim[2] + 1)),
        "block.z",
    );
    over(LaunchConfig::new((1, lim.max_grid_dim[1] + 1), 1), "grid.y");
    over(
        LaunchConfig::new(1, 32).shared(lim.max_shared_per_block_optin + 1),
        "shared memory",
    );
    for cfg in [
        LaunchConfig::new(0, 32),
        LaunchConfig::new(1, (32, 0)),
        LaunchConfig::new((1, 1, 0), 1),
    ] {
        assert!(matches!(
            try_cfg(cfg),
            Err(Error::LaunchConfig {
                error: LaunchConfigError::Zero { .. },
                ..
            })
        ));
    }
    assert!(matches!(
        try_cfg(LaunchConfig::new(3, 32).cluster(2)),
        Err(Error::LaunchConfig {
            error: LaunchConfigError::ClusterDoesNotDivideGrid { .. },
            ..
        })
    ));
    over(LaunchConfig::new(16, 32).cluster(16), "blocks per cluster");
    let huge = f.max_cooperative_grid(1024, 0).unwrap() + 1;
    over(
        LaunchConfig::new(huge, 1024).cooperative(),
        "cooperative grid",
    );
    // Nothing ran.
    assert_eq!(counter.to_vec().unwrap(), vec![0]);
    assert!(ctx.poisoned().is_none());
    // And a valid one does.
    try_cfg(LaunchConfig::new((2, 3), (4, 5, 6))).unwrap();
    assert_eq!(counter.to_vec().unwrap(), vec![6 * 120]);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn dynamic_shared_memory_above_48_kib_is_raised_automatically() {
    let ctx = ctx();
    let m = module(&ctx);
    let f = m.function("big_shared").unwrap();
    let n = 50_000usize; // 200_000 bytes of shared memory per block
    let blocks = 3;
    let mut r = Rng::new();
    let input = r.vec_f32(n * blocks);
    let d_in = ctx.upload(&input).unwrap();
    let d_out = ctx.alloc::<f32>(n * blocks).unwrap();
    d_out.fill(f32::NAN).unwrap();
    let stream = ctx.stream().unwrap();
    let cfg = LaunchConfig::new(blocks as u32, 256).shared((n * 4) as u32);
    // SAFETY: big_shared reads and writes n * blocks elements.
    ctx.scope(|s| unsafe { s.launch(&stream, &f, &cfg, &params![&d_in, &d_out, n as i32]) })
        .unwrap();
    let out = d_out.to_vec().unwrap();
    for b in 0..blocks {
        for i in 0..n {
            assert_eq!(
                out[b * n + i],
                input[b * n + n - 1 - i],
                "block {b} element {i}"
            );
        }
    }
    assert!(f.attributes().unwrap().max_dynamic_shared_bytes as usize >= n * 4);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn clusters_launch_with_the_attribute_and_statically() {
    let ctx = ctx();
    let m = module(&ctx);
    let stream = ctx.stream().unwrap();
    for (name, cluster, grid) in [
        ("cluster_dynamic", Some(4u32), 16u32),
        ("cluster_static", None, 8),
    ] {
        let f = m.function(name).unwrap();
        let out = ctx.alloc::<u32>(4 * grid as usize).unwrap();
        out.fill(u32::MAX).unwrap();
        let mut cfg = LaunchConfig::new(grid, 64);
        if let Some(c) = cluster {
            cfg = cfg.cluster(c);
        }
        // SAFETY: the cluster kernels write 4 u32 per block.
        ctx.scope(|s| unsafe { s.launch(&stream, &f, &cfg, &params![&out]) })
            .unwrap();
        let size = cluster.unwrap_or(2);
        let o = out.to_vec().unwrap();
        for b in 0..grid {
            let (rank, sz, next, cid) = (
                o[4 * b as usize],
                o[4 * b as usize + 1],
                o[4 * b as usize + 2],
                o[4 * b as usize + 3],
            );
            assert_eq!(sz, size, "{name} block {b}");
            assert_eq!(rank, b % size, "{name} block {b}");
            // The neighbour's blockIdx.x, read from its shared memory.
            assert_eq!(
                next,
                b - rank + (rank + 1) % size,
                "{name} block {b} read its neighbour's shared memory"
            );
            assert_eq!(cid, b / size, "{name} block {b}");
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_cooperative_grid_synchronizes() {
    let ctx = ctx();
    let m = module(&ctx);
    let f = m.function("coop_grid_sync").unwrap();
    let block = 256;
    let nb = f.max_cooperative_grid(block, 0).unwrap();
    assert!(nb >= ctx.limits().multiprocessors);
    let a = ctx.alloc::<u32>(nb as usize).unwrap();
    let out = ctx.alloc::<u32>(nb as usize).unwrap();
    out.fill(u32::MAX).unwrap();
    let rounds = 7;
    let stream = ctx.stream().unwrap();
    let cfg = LaunchConfig::new(nb, block).cooperative();
    // SAFETY: coop_grid_sync reads and writes nb elements of each buffer.
    ctx.scope(|s| unsafe { s.launch(&stream, &f, &cfg, &params![&a, &out, rounds]) })
        .unwrap();
    let o = out.to_vec().unwrap();
    for b in 0..nb {
        assert_eq!(
            o[b as usize],
            (b + rounds as u32) % nb + rounds as u32,
            "block {b}"
        );
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn unified_buffers_are_kernel_arguments_and_kernel_time_is_recorded() {
    let ctx = ctx();
    let m = module(&ctx);
    let f = m.function("count_threads").unwrap();
    let mut counter = ctx.alloc_unified::<u64>(1).unwrap();
    counter.as_mut_slice().unwrap()[0] = 5;
    let stream = ctx.stream().unwrap();
    ctx.set_kernel_timing(true);
    let cfg = LaunchConfig::new(100, 128);
    // SAFETY: count_threads adds 1 per thread to one u64.
    ctx.scope(|s| unsafe { s.launch(&stream, &f, &cfg, &params![&mut counter]) })
        .unwrap();
    ctx.set_kernel_timing(false);
    assert_eq!(counter.as_slice().unwrap()[0], 5 + 100 * 128);
    let metrics = ctx.metrics();
    let t = metrics.kernels.get("count_threads").expect("timed");
    assert!(t.launches >= 1 && t.total.as_nanos() > 0);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_hundred_thousand_launches() {
    let ctx = ctx();
    let m = module(&ctx);
    let f = m.function("count_threads").unwrap();
    let counter = ctx.alloc_zeroed::<u64>(1).unwrap();
    let stream = ctx.stream().unwrap();
    let before = ctx.metrics().launches;
    let n = 100_000u64;
    ctx.scope(|s| {
        for _ in 0..n {
            // SAFETY: count_threads adds 1 per thread to one u64.
            unsafe { s.launch(&stream, &f, &one(), &params![&counter])? };
        }
        Ok(())
    })
    .unwrap();
    assert_eq!(counter.to_vec().unwrap(), vec![n]);
    // The count is the context's: other tests of this binary launch on the
    // same (primary) context meanwhile, so it grew by at least n (every
    // launch of the scope was counted), maybe more (seen on the H200:
    // 100,017 when another test launched at the same time).
    let counted = ctx.metrics().launches - before;
    assert!(counted >= n, "{counted} launches counted for {n}");
    drop(counter);
    assert!(ctx.leak_report().is_empty(), "{}", ctx.leak_report());
}
