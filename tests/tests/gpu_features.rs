//! The launch features of issue 21 on the device, each against a CPU
//! reference with fresh random inputs and poisoned outputs:
//!
//! - programmatic dependent launch: a chain of dependent kernels launched
//!   with `LaunchConfig::programmatic()` gives the plain chain's bits, and
//!   so does the same chain as graph kernel nodes joined by programmatic
//!   edges; a programmatic edge from a memset node is refused;
//! - batched copies: 1000 copies of mixed kinds (pageable and pinned host
//!   memory to device, device to device, device to both kinds of host
//!   memory) in one batch, read back byte for byte;
//! - L2 access-policy windows: a kernel that re-reads a 40 MiB buffer, with
//!   a persisting window on the launch and on the stream, computes what the
//!   CPU computes; windows past the device's limit are refused.

use cudakit::compile::program::Program;
use cudakit::{
    params, AccessPolicyWindow, Context, CopyBatch, Error, InstantiateOptions, L2Access,
    LaunchConfig,
};
use cudakit_suite::kernels::PDL;
use cudakit_suite::rng::Rng;

fn ctx() -> Context {
    Context::new(0).expect("device 0")
}

/// The CPU's `pdl_step`: `fma(x, a, b + i)` in f32, as `__fmaf_rn` does.
fn step(x: &[f32], a: f32, b: f32) -> Vec<f32> {
    x.iter()
        .enumerate()
        .map(|(i, &v)| v.mul_add(a, b + i as f32))
        .collect()
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_programmatic_chain_gives_the_plain_chains_bits() {
    let ctx = ctx();
    if ctx.limits().compute_capability.0 < 9 {
        cudakit_suite::not_run("programmatic dependent launch needs sm_90");
    }
    let module = ctx
        .load_module(
            &Program::new("pdl.cu", PDL)
                .compile_for(&ctx)
                .expect("compile"),
        )
        .expect("load");
    let f = module.function("pdl_step").expect("pdl_step");
    let mut rng = Rng::new();
    let n = 1 << 16;
    let steps = 200;
    let input = rng.vec_f32(n);
    let coeffs: Vec<(f32, f32)> = (0..steps)
        .map(|_| (0.5 + rng.f32_sym() * 0.25, rng.f32_sym()))
        .collect();
    let mut want = input.clone();
    for &(a, b) in &coeffs {
        want = step(&want, a, b);
    }
    let stream = ctx.stream().expect("stream");
    let run = |programmatic: bool| -> Vec<f32> {
        let x = ctx.upload(&input).expect("upload");
        let y = ctx.alloc::<f32>(n).expect("y");
        y.copy_from_host(&vec![f32::NAN; n]).expect("poison");
        let mut cfg = LaunchConfig::for_elements(n, 256).expect("config");
        if programmatic {
            cfg = cfg.programmatic();
        }
        ctx.scope(|s| {
            for (k, &(a, b)) in coeffs.iter().enumerate() {
                let (src, dst) = if k % 2 == 0 { (&x, &y) } else { (&y, &x) };
                // SAFETY: pdl_step reads n floats of src and writes n of
                // dst, distinct buffers of n elements each.
                unsafe { s.launch(&stream, &f, &cfg, &params![src, dst, n as i32, a, b])? };
            }
            Ok(())
        })
        .expect("chain");
        let last = if steps % 2 == 1 { &y } else { &x };
        let mut out = vec![0f32; n];
        last.copy_to_host(&mut out).expect("read back");
        out
    };
    let plain = run(false);
    let programmatic = run(true);
    for i in 0..n {
        assert_eq!(
            plain[i].to_bits(),
            want[i].to_bits(),
            "plain chain, element {i}: {} vs CPU {}",
            plain[i],
            want[i]
        );
        assert_eq!(
            programmatic[i].to_bits(),
            plain[i].to_bits(),
            "programmatic chain, element {i}: {} vs plain {}",
            programmatic[i],
            plain[i]
        );
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn programmatic_graph_edges_give_the_plain_chains_bits() {
    let ctx = ctx();
    if ctx.limits().compute_capability.0 < 9 {
        cudakit_suite::not_run("programmatic edges need sm_90");
    }
    let module = ctx
        .load_module(
            &Program::new("pdl.cu", PDL)
                .compile_for(&ctx)
                .expect("compile"),
        )
        .expect("load");
    let f = module.function("pdl_step").expect("pdl_step");
    let mut rng = Rng::new();
    let n = 1 << 14;
    let steps = 12;
    let input = rng.vec_f32(n);
    let coeffs: Vec<(f32, f32)> = (0..steps)
        .map(|_| (0.5 + rng.f32_sym() * 0.25, rng.f32_sym()))
        .collect();
    let mut want = input.clone();
    for &(a, b) in &coeffs {
        want = step(&want, a, b);
    }
    let x = ctx.upload(&input).expect("upload");
    let y = ctx.alloc::<f32>(n).expect("y");
    y.copy_from_host(&vec![f32::NAN; n]).expect("poison");
    let cfg = LaunchConfig::for_elements(n, 128).expect("config");
    let lists: Vec<_> = coeffs
        .iter()
        .enumerate()
        .map(|(k, &(a, b))| {
            let (src, dst) = if k % 2 == 0 { (&x, &y) } else { (&y, &x) };
            params![src, dst, n as i32, a, b]
        })
        .collect();
    let mut g = ctx.graph().expect("graph");
    let mut prev = None;
    for p in &lists {
        // SAFETY: as in the stream chain.
        let node = unsafe { g.add_kernel(&f, &cfg, p, &[]) }.expect("kernel node");
        if let Some(from) = prev {
            // SAFETY: pdl_step waits (griddepcontrol.wait) before it reads
            // its input.
            unsafe { g.add_programmatic_dependency(from, node) }.expect("programmatic edge");
        }
        prev = Some(node);
    }
    let stream = ctx.stream().expect("stream");
    let exec = g
        .instantiate(InstantiateOptions::default())
        .expect("instantiate");
    ctx.scope(|s| s.launch_graph(&stream, &exec))
        .expect("replay");
    let last = if steps % 2 == 1 { &y } else { &x };
    let mut out = vec![0f32; n];
    last.copy_to_host(&mut out).expect("read back");
    for i in 0..n {
        assert_eq!(
            out[i].to_bits(),
            want[i].to_bits(),
            "graph chain, element {i}: {} vs CPU {}",
            out[i],
            want[i]
        );
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_programmatic_edge_needs_two_kernel_nodes() {
    let ctx = ctx();
    let module = ctx
        .load_module(
            &Program::new("pdl.cu", PDL)
                .compile_for(&ctx)
                .expect("compile"),
        )
        .expect("load");
    let f = module.function("pdl_step").expect("pdl_step");
    let n = 256;
    let x = ctx.upload(&vec![1.0f32; n]).expect("x");
    let y = ctx.alloc::<f32>(n).expect("y");
    let cfg = LaunchConfig::for_elements(n, 128).expect("config");
    let p = params![&x, &y, n as i32, 1.0f32, 0.0f32];
    let mut g = ctx.graph().expect("graph");
    // SAFETY: reads n floats of x, writes n of y.
    let k = unsafe { g.add_kernel(&f, &cfg, &p, &[]) }.expect("kernel node");
    let memset = g.add_memset(&x, 0.0f32, &[]).expect("memset node");
    // SAFETY: refused before the driver (and pdl_step waits anyway).
    let refused = unsafe { g.add_programmatic_dependency(memset, k) };
    assert!(
        matches!(&refused, Err(Error::InvalidArgument(m)) if m.contains("memset")),
        "{refused:?}"
    );
    // SAFETY: as above.
    let refused = unsafe { g.add_programmatic_dependency(k, k) };
    assert!(
        matches!(refused, Err(Error::InvalidArgument(_))),
        "{refused:?}"
    );
    // The graph is still whole: no edge was added.
    assert_eq!(g.node_count().expect("count"), 2);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_batch_of_1000_mixed_copies_is_byte_exact() {
    let ctx = ctx();
    let stream = ctx.stream().expect("stream");
    let mut rng = Rng::new();
    let count = 1000;
    let sizes: Vec<usize> = (0..count).map(|_| rng.range(1, 4097)).collect();
    let data: Vec<Vec<u8>> = sizes
        .iter()
        .map(|&n| (0..n).map(|_| rng.next_u32() as u8).collect())
        .collect();
    // Sources on the device, filled through single copies.
    let dev_src: Vec<_> = data
        .iter()
        .map(|d| ctx.upload(d).expect("upload"))
        .collect();
    let dev_dst: Vec<_> = sizes
        .iter()
        .map(|&n| ctx.alloc::<u8>(n).expect("dst"))
        .collect();
    let pinned_src: Vec<_> = data
        .iter()
        .map(|d| {
            let mut p = ctx.alloc_pinned::<u8>(d.len()).expect("pinned");
            p.copy_from_slice(d);
            p
        })
        .collect();
    // One output of each host kind per copy; only the copy's kind is used.
    let mut pageable_out: Vec<Vec<u8>> = sizes.iter().map(|&n| vec![0xA5; n]).collect();
    let mut pinned_out: Vec<_> = sizes
        .iter()
        .map(|&n| {
            let mut p = ctx.alloc_pinned::<u8>(n).expect("pinned out");
            p.fill(0x5A);
            p
        })
        .collect();
    let up: Vec<_> = sizes
        .iter()
        .map(|&n| ctx.alloc::<u8>(n).expect("upload target"))
        .collect();
    let before = ctx.metrics();
    ctx.scope(|s| {
        let mut batch = CopyBatch::new();
        let outs = pageable_out.iter_mut().zip(pinned_out.iter_mut());
        for (i, (po, pi)) in outs.enumerate() {
            match i % 5 {
                // pageable host to device
                0 => batch.to_device(&data[i], &up[i])?,
                // pinned host to device
                1 => batch.to_device(&pinned_src[i][..], &up[i])?,
                // device to device
                2 => batch.device(&dev_src[i], &dev_dst[i])?,
                // device to pageable host
                3 => batch.to_host(&dev_src[i], &mut po[..])?,
                // device to pinned host
                _ => batch.to_host(&dev_src[i], &mut pi[..])?,
            };
        }
        assert_eq!(batch.len(), count);
        s.copy_batch(&stream, batch)
    })
    .expect("batch");
    let after = ctx.metrics();
    assert_eq!(
        after.copy_batches - before.copy_batches,
        1,
        "one driver call"
    );
    assert_eq!(after.copy_batch_fallbacks, before.copy_batch_fallbacks);
    for i in 0..count {
        let what = match i % 5 {
            0 | 1 => {
                let mut back = vec![0u8; sizes[i]];
                up[i].copy_to_host(&mut back).expect("read upload");
                back
            }
            2 => {
                let mut back = vec![0u8; sizes[i]];
                dev_dst[i].copy_to_host(&mut back).expect("read d2d");
                back
            }
            3 => pageable_out[i].clone(),
            _ => pinned_out[i].to_vec(),
        };
        assert!(what == data[i], "copy {i} (kind {}) differs", i % 5);
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn access_policy_windows_keep_results_and_refuse_what_the_device_cannot() {
    let ctx = ctx();
    let module = ctx
        .load_module(
            &Program::new("pdl.cu", PDL)
                .compile_for(&ctx)
                .expect("compile"),
        )
        .expect("load");
    let f = module.function("l2_reread").expect("l2_reread");
    let mut rng = Rng::new();
    let n = (40 << 20) / 4;
    let reps = 16;
    let stride = 4099;
    let input: Vec<f32> = (0..n).map(|_| rng.f32_sym()).collect();
    let want: Vec<f32> = (0..n)
        .map(|i| {
            let (mut acc, mut j) = (0.0f32, i);
            for _ in 0..reps {
                acc += input[j];
                j += stride;
                if j >= n {
                    j -= n;
                }
            }
            acc
        })
        .collect();
    let buf = ctx.upload(&input).expect("upload");
    let out = ctx.alloc::<f32>(n).expect("out");
    let max_persist = ctx
        .device()
        .attribute(
            cudakit::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE,
        )
        .expect("attribute") as usize;
    ctx.set_persisting_l2_limit(max_persist).expect("set-aside");
    assert!(ctx.persisting_l2_limit().expect("limit") > 0);
    let window = AccessPolicyWindow::over(&buf).hit_ratio(0.6);
    let stream = ctx.stream().expect("stream");
    for on_stream in [false, true] {
        out.copy_from_host(&vec![f32::NAN; n]).expect("poison");
        let mut cfg = LaunchConfig::for_elements(n, 256).expect("config");
        if on_stream {
            stream
                .set_access_policy(Some(window))
                .expect("stream window");
        } else {
            cfg = cfg.access_policy(window);
        }
        ctx.scope(|s| {
            // SAFETY: l2_reread reads n floats of buf and writes n of out.
            unsafe {
                s.launch(
                    &stream,
                    &f,
                    &cfg,
                    &params![&buf, &out, n as i32, reps, stride as i32],
                )
            }
        })
        .expect("launch with a window");
        let mut got = vec![0f32; n];
        out.copy_to_host(&mut got).expect("read back");
        for i in 0..n {
            assert_eq!(got[i].to_bits(), want[i].to_bits(), "element {i}");
        }
    }
    stream.set_access_policy(None).expect("clear");
    let max_window = ctx
        .device()
        .attribute(
            cudakit::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE,
        )
        .expect("attribute") as usize;
    let too_big = AccessPolicyWindow::new(buf.device_ptr(), max_window + 1);
    let r = stream.set_access_policy(Some(too_big));
    assert!(matches!(r, Err(Error::AccessPolicy { .. })), "{r:?}");
    let cfg = LaunchConfig::for_elements(n, 256)
        .expect("config")
        .access_policy(too_big);
    // SAFETY: as above (refused before the driver).
    let r = ctx.scope(|s| unsafe {
        s.launch(
            &stream,
            &f,
            &cfg,
            &params![&buf, &out, n as i32, reps, stride as i32],
        )
    });
    assert!(matches!(r, Err(Error::AccessPolicy { .. })), "{r:?}");
    let r = stream.set_access_policy(Some(window.miss(L2Access::Persisting)));
    assert!(matches!(r, Err(Error::AccessPolicy { .. })), "{r:?}");
    let r = ctx.set_persisting_l2_limit(max_persist + 1);
    assert!(matches!(r, Err(Error::AccessPolicy { .. })), "{r:?}");
    ctx.set_persisting_l2_limit(0)
        .expect("hand the set-aside back");
    // The context is usable after every refusal.
    let mut back = vec![0f32; 16];
    buf.view(0..16)
        .expect("view")
        .copy_to_host(&mut back)
        .expect("usable");
    assert_eq!(back, input[..16]);
}
