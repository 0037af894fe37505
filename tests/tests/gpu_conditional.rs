//! Conditional graph nodes (issue 21) on the device, each against a CPU
//! reference with fresh random inputs and poisoned outputs:
//!
//! - a Jacobi-style while loop whose body sweeps, copies and tests a
//!   device-computed residual, stopping after as many iterations as the
//!   CPU's loop, with the CPU's bits; replayed with new inputs (the
//!   handle's default starts each launch's loop);
//! - if, if/else and a 4-way switch whose condition a kernel sets from a
//!   device value: the body the CPU picks runs, and none for a value past
//!   the last case;
//! - every bad input refused before the driver (a handle of another graph,
//!   a body node CUDA does not allow there, a handle in a plain launch, an
//!   unused handle), the context usable after.
//!
//! The kernels (`kernels/conditional.cu`) call `cudaGraphSetConditional`,
//! a device-runtime function: they are compiled relocatable and linked
//! with `libcudadevrt.a`.

use cudakit::compile::linker::{LinkOptions, Linker};
use cudakit::compile::module::Module;
use cudakit::{params, Context, Error, InstantiateOptions, LaunchConfig};
use cudakit_suite::kernels::Source;
use cudakit_suite::rng::Rng;

fn ctx() -> Context {
    Context::new(0).expect("device 0")
}

/// Skips the test on a driver without conditional nodes of `needs`.
fn needs_driver(needs: (i32, i32)) {
    let v = cudakit::driver_version().expect("driver version");
    if v < needs {
        cudakit_suite::not_run(format!(
            "conditional nodes need a CUDA {}.{} driver, this one is {}.{}",
            needs.0, needs.1, v.0, v.1
        ));
    }
}

/// `kernels/conditional.cu`, relocatable, linked with the device runtime.
fn module(ctx: &Context) -> Module<'_> {
    let compiled = Source::named("conditional.cu")
        .program()
        .without_cache()
        .compile_for(ctx)
        .unwrap_or_else(|e| panic!("{e}"));
    let mut linker =
        Linker::with_device_runtime(ctx, &LinkOptions::new()).unwrap_or_else(|e| panic!("{e}"));
    linker.add_compiled(&compiled).expect("add");
    linker.complete().unwrap_or_else(|e| panic!("{e}"))
}

/// The CPU's Jacobi loop, as `jacobi_sweep` and `jacobi_decide` run it:
/// (x, iterations, last residual).
fn jacobi_cpu(b: &[f32], tol: f32, max_iters: u32) -> (Vec<f32>, u32, f32) {
    let n = b.len();
    let mut x = vec![0f32; n];
    let mut iters = 0u32;
    loop {
        let mut y = vec![0f32; n];
        let mut resid = 0f32;
        for i in 0..n {
            let left = if i > 0 { x[i - 1] } else { 0.0 };
            let right = if i + 1 < n { x[i + 1] } else { 0.0 };
            y[i] = ((b[i] + left) + right) * 0.25;
            resid = resid.max((y[i] - x[i]).abs());
        }
        x = y;
        iters += 1;
        if !(resid >= tol && iters < max_iters) {
            return (x, iters, resid);
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_jacobi_while_loop_stops_when_the_cpu_does() {
    needs_driver((12, 3));
    let ctx = ctx();
    let module = module(&ctx);
    let sweep = module.function("jacobi_sweep").expect("jacobi_sweep");
    let decide = module.function("jacobi_decide").expect("jacobi_decide");
    let mut rng = Rng::new();
    let n = 4096 + rng.range(0, 512);
    let max_iters = 1000u32;
    let b = ctx.alloc::<f32>(n).expect("b");
    let x = ctx.alloc::<f32>(n).expect("x");
    let y = ctx.alloc::<f32>(n).expect("y");
    let resid = ctx.alloc::<u32>(1).expect("resid");
    let last = ctx.alloc::<f32>(1).expect("last");
    let iters = ctx.alloc::<u32>(1).expect("iters");
    let tol_dev = 1e-6f32;
    let sweep_cfg = LaunchConfig::for_elements(n, 256).expect("config");
    let one = LaunchConfig::new(1, 32);
    let stream = ctx.stream().expect("stream");

    let mut graph = ctx.graph().expect("graph");
    let cond = graph.condition(Some(1)).expect("handle");
    let z0 = graph.add_memset(&x, 0.0f32, &[]).expect("x = 0");
    let z1 = graph.add_memset(&resid, 0u32, &[]).expect("resid = 0");
    let z2 = graph.add_memset(&iters, 0u32, &[]).expect("iters = 0");
    let (_, mut body) = graph.add_while(&cond, &[z0, z1, z2]).expect("while");
    // SAFETY: jacobi_sweep reads n floats of x and b, writes n of y and
    // one u32 of resid; every buffer has that many elements.
    let s = unsafe {
        body.add_kernel(
            &sweep,
            &sweep_cfg,
            &params![&x, &y, &b, n as i32, &resid],
            &[],
        )
    }
    .expect("sweep node");
    let c = body.add_copy(&y, &x, &[s]).expect("x = y");
    // SAFETY: one thread reads and writes one element of resid, last and
    // iters; the handle is this graph's.
    unsafe {
        body.add_kernel(
            &decide,
            &one,
            &params![&cond, &resid, &last, &iters, tol_dev, max_iters],
            &[c],
        )
    }
    .expect("decide node");
    let exec = graph
        .instantiate(InstantiateOptions::default().label("jacobi while"))
        .expect("instantiate");

    for round in 0..3 {
        let input: Vec<f32> = rng.vec_f32(n);
        b.copy_from_host(&input).expect("b");
        x.copy_from_host(&vec![f32::NAN; n]).expect("poison x");
        last.copy_from_host(&[f32::NAN]).expect("poison last");
        iters.copy_from_host(&[u32::MAX]).expect("poison iters");
        ctx.scope(|s| s.launch_graph(&stream, &exec))
            .expect("launch");
        let (want_x, want_iters, want_resid) = jacobi_cpu(&input, tol_dev, max_iters);
        let got_iters = iters.to_vec().expect("iters")[0];
        let got_resid = last.to_vec().expect("last")[0];
        let got_x = x.to_vec().expect("x");
        println!(
            "round {round}: n {n}, {got_iters} iterations (CPU {want_iters}), residual {got_resid:e}"
        );
        assert_eq!(got_iters, want_iters, "iterations, round {round}");
        assert!(got_iters > 1 && got_iters < max_iters, "a real loop");
        assert_eq!(got_resid.to_bits(), want_resid.to_bits(), "residual");
        for (i, (g, w)) in got_x.iter().zip(&want_x).enumerate() {
            assert_eq!(g.to_bits(), w.to_bits(), "x[{i}], round {round}");
        }
    }
}

/// `cond_axpb` on the CPU.
fn axpb(x: &[f32], a: f32, b: f32) -> Vec<f32> {
    x.iter().map(|&v| v * a + b).collect()
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn if_if_else_and_a_four_way_switch_run_the_body_the_cpu_picks() {
    needs_driver((12, 8));
    let ctx = ctx();
    let module = module(&ctx);
    let set = module.function("cond_set").expect("cond_set");
    let f = module.function("cond_axpb").expect("cond_axpb");
    let mut rng = Rng::new();
    let n = 1 << 14;
    let input = rng.vec_f32(n);
    let x = ctx.upload(&input).expect("x");
    let out = ctx.alloc::<f32>(n).expect("out");
    let value = ctx.alloc::<u32>(1).expect("value");
    let cfg = LaunchConfig::for_elements(n, 256).expect("config");
    let one = LaunchConfig::new(1, 32);
    let stream = ctx.stream().expect("stream");
    let coeffs: Vec<(f32, f32)> = (0..4).map(|_| (rng.f32_sym(), rng.f32_sym())).collect();

    // if / if-else / switch, each in a graph of its own:
    // cond_set(value) -> conditional node -> bodies of one cond_axpb each.
    let mut graphs = Vec::new();
    for kind in ["if", "if/else", "switch"] {
        let mut g = ctx.graph().expect("graph");
        let cond = g.condition(Some(0)).expect("handle");
        // SAFETY: one thread reads one u32 of `value`; the handle is g's.
        let s = unsafe { g.add_kernel(&set, &one, &params![&cond, &value], &[]) }.expect("set");
        let bodies = match kind {
            "if" => vec![g.add_if(&cond, &[s]).expect("if").1],
            "if/else" => {
                let (_, a, b) = g.add_if_else(&cond, &[s]).expect("if/else");
                vec![a, b]
            }
            _ => g.add_switch(&cond, 4, &[s]).expect("switch").1,
        };
        for (k, mut body) in bodies.into_iter().enumerate() {
            let (a, b) = coeffs[k];
            // SAFETY: cond_axpb reads n floats of x and writes n of out.
            unsafe { body.add_kernel(&f, &cfg, &params![&x, &out, n as i32, a, b], &[]) }
                .expect("body kernel");
        }
        let exec = g.instantiate(InstantiateOptions::default()).expect("exec");
        graphs.push((kind, exec, g));
    }

    let values: [u32; 7] = [0, 1, 2, 3, 4, 9, rng.next_u32()];
    for (kind, exec, _) in &graphs {
        for &v in &values {
            value.copy_from_host(&[v]).expect("value");
            out.copy_from_host(&vec![f32::NAN; n]).expect("poison");
            ctx.scope(|s| s.launch_graph(&stream, exec))
                .expect("launch");
            let got = out.to_vec().expect("out");
            // The body the CPU picks, if any.
            let body = match *kind {
                "if" => (v != 0).then_some(0),
                "if/else" => Some(if v != 0 { 0 } else { 1 }),
                _ => (v < 4).then_some(v as usize),
            };
            match body {
                Some(k) => {
                    let want = axpb(&input, coeffs[k].0, coeffs[k].1);
                    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                        assert_eq!(g.to_bits(), w.to_bits(), "{kind}, value {v}: out[{i}]");
                    }
                }
                None => assert!(
                    got.iter().all(|g| g.is_nan()),
                    "{kind}, value {v}: no body should run"
                ),
            }
        }
        println!("{kind}: {} values, the CPU's body each time", values.len());
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn every_bad_conditional_input_is_typed_and_the_context_stays_usable() {
    needs_driver((12, 3));
    let ctx = ctx();
    let module = module(&ctx);
    let set = module.function("cond_set").expect("cond_set");
    let value = ctx.upload(&[0u32]).expect("value");
    let buf = ctx.alloc::<f32>(64).expect("buf");
    let host = vec![1f32; 64];
    let event = ctx.event().expect("event");
    let stream = ctx.stream().expect("stream");
    let one = LaunchConfig::new(1, 32);
    let mut with_host = ctx.graph().expect("graph");
    with_host.add_host_fn(|| {}, &[]).expect("host node");

    let mut g = ctx.graph().expect("graph");
    let mut other = ctx.graph().expect("graph");
    let cond = g.condition(Some(1)).expect("handle");
    let (_, mut body) = g.add_if(&cond, &[]).expect("if");

    // A handle of another graph, as a node's condition and as an argument.
    let r = other.add_if(&cond, &[]);
    assert!(matches!(r, Err(Error::ForeignCondition { .. })), "{r:?}");
    // SAFETY: refused before the driver.
    let r = unsafe { other.add_kernel(&set, &one, &params![&cond, &value], &[]) };
    assert!(matches!(r, Err(Error::ForeignCondition { .. })), "{r:?}");
    // SAFETY: refused before the driver.
    let r = ctx.scope(|s| unsafe { s.launch(&stream, &set, &one, &params![&cond, &value]) });
    assert!(matches!(r, Err(Error::ForeignCondition { .. })), "{r:?}");

    // Nodes a body does not take.
    for r in [
        body.add_host_fn(|| {}, &[]).map(drop),
        body.add_event_record(&event, &[]).map(drop),
        body.add_event_wait(&event, &[]).map(drop),
        body.add_mem_alloc::<f32>(64, &[]).map(drop),
        body.add_copy_to_device(&host, &buf, &[]).map(drop),
        body.add_child(&with_host, &[]).map(drop),
    ] {
        match r {
            Err(e @ Error::NodeNotAllowed { .. }) => println!("refused: {e}"),
            other => panic!("expected NodeNotAllowed, got {other:?}"),
        }
    }
    // A body alone, a switch of no cases, an unused handle.
    let r = body.instantiate(InstantiateOptions::default());
    assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");
    if cudakit::driver_version().unwrap() >= (12, 8) {
        let c = other.condition(None).expect("handle");
        let r = other.add_switch(&c, 0, &[]);
        assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");
        other.add_empty(&[]).expect("empty");
        let r = other.instantiate(InstantiateOptions::default());
        assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");
    }

    // The context is usable: the graph runs, its if body fills the buffer.
    body.add_memset(&buf, 2.5f32, &[])
        .expect("memset in the body");
    buf.copy_from_host(&[f32::NAN; 64]).expect("poison");
    let exec = g.instantiate(InstantiateOptions::default()).expect("exec");
    ctx.scope(|s| s.launch_graph(&stream, &exec))
        .expect("launch");
    assert!(buf.to_vec().unwrap().iter().all(|&v| v == 2.5));
}
