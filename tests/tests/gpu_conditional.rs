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
//!   unused handle), the context usable after;
//! - device graph launch: a host-launched graph whose kernel tail-launches
//!   a device-launch graph, which tail-launches the next, 3 tail launches
//!   deep, runs the 4 steps in order with the CPU's bits; a fire-and-forget
//!   launch runs before its launching graph ends; a graph with a host node
//!   or a kernel that uses dynamic parallelism, and an executable graph not
//!   instantiated for device launch as an argument, are refused.
//!
//! The kernels (`kernels/conditional.cu`, `kernels/device_graph.cu`) call
//! device-runtime functions (`cudaGraphSetConditional`,
//! `cudaGraphLaunch`): they are compiled relocatable and linked with
//! `libcudadevrt.a`.

use cudakit::compile::linker::{LinkOptions, Linker};
use cudakit::compile::module::Module;
use cudakit::compile::program::{Output, Program};
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
    module_of(ctx, Source::named("conditional.cu").program())
}

/// `program` (relocatable), linked with the device runtime; its PTX goes
/// with its CUBIN, so that the module knows which kernels use dynamic
/// parallelism.
fn module_of(ctx: &Context, program: Program) -> Module<'_> {
    let compiled = program
        .relocatable_device_code(true)
        .output(Output::Cubin)
        .output(Output::Ptx)
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

/// `dgl_step` on the CPU: `x * 2 + add`, each step rounded.
fn dgl(x: &[f32], add: f32) -> Vec<f32> {
    x.iter().map(|&v| v * 2.0 + add).collect()
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_device_launched_graph_chain_three_tail_launches_deep() {
    needs_driver((12, 0));
    let ctx = ctx();
    let module = module_of(&ctx, Source::named("device_graph.cu").program());
    let f = module.function("dgl_step").expect("dgl_step");
    assert_eq!(f.uses_dynamic_parallelism(), Some(false));
    let mut rng = Rng::new();
    let n = (1 << 14) + rng.range(0, 1000);
    let adds: Vec<f32> = (0..4).map(|_| rng.f32_sym()).collect();
    let data = ctx.alloc::<f32>(n).expect("data");
    let trace = ctx.alloc::<u32>(4).expect("trace");
    let cfg = LaunchConfig::for_elements(n, 256).expect("config");
    let stream = ctx.stream().expect("stream");
    let device = InstantiateOptions::default().device_launch();
    let none = 0u64; // a null cudaGraphExec_t: the last graph launches nothing

    // g3 <- g2 <- g1 (device launch) <- g0 (host launch): each kernel
    // tail-launches the next graph.
    let mut g3 = ctx.graph().expect("g3");
    // SAFETY: dgl_step reads and writes n floats of data and one u32 of
    // trace (4 elements); `next` is a device-launch exec or null.
    unsafe {
        g3.add_kernel(
            &f,
            &cfg,
            &params![&data, n as i32, adds[3], &trace, 3u32, none, 0i32],
            &[],
        )
    }
    .expect("g3 kernel");
    let e3 = g3.instantiate(device).expect("e3");
    let mut g2 = ctx.graph().expect("g2");
    // SAFETY: as above.
    unsafe {
        g2.add_kernel(
            &f,
            &cfg,
            &params![&data, n as i32, adds[2], &trace, 2u32, &e3, 0i32],
            &[],
        )
    }
    .expect("g2 kernel");
    let e2 = g2.instantiate(device).expect("e2");
    let mut g1 = ctx.graph().expect("g1");
    // SAFETY: as above.
    unsafe {
        g1.add_kernel(
            &f,
            &cfg,
            &params![&data, n as i32, adds[1], &trace, 1u32, &e2, 0i32],
            &[],
        )
    }
    .expect("g1 kernel");
    let e1 = g1.instantiate(device).expect("e1");
    let mut g0 = ctx.graph().expect("g0");
    // SAFETY: as above.
    unsafe {
        g0.add_kernel(
            &f,
            &cfg,
            &params![&data, n as i32, adds[0], &trace, 0u32, &e1, 0i32],
            &[],
        )
    }
    .expect("g0 kernel");
    let e0 = g0.instantiate(InstantiateOptions::default()).expect("e0");

    for round in 0..3 {
        let input = rng.vec_f32(n);
        data.copy_from_host(&input).expect("data");
        trace.copy_from_host(&[u32::MAX; 4]).expect("poison trace");
        ctx.scope(|s| s.launch_graph(&stream, &e0)).expect("launch");
        let mut want = input;
        for &a in &adds {
            want = dgl(&want, a);
        }
        assert_eq!(trace.to_vec().unwrap(), vec![1, 2, 3, 4], "round {round}");
        let got = data.to_vec().expect("data");
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g.to_bits(), w.to_bits(), "data[{i}], round {round}");
        }
    }
    println!("3 tail launches deep, 3 rounds: the CPU's bits");

    // Fire and forget: the child runs before the launching graph ends.
    let other = ctx.alloc::<f32>(n).expect("other");
    let mut gf = ctx.graph().expect("gf");
    // SAFETY: as above, on `other` (the parent's kernel writes `data`).
    unsafe {
        gf.add_kernel(
            &f,
            &cfg,
            &params![&other, n as i32, adds[1], &trace, 1u32, none, 0i32],
            &[],
        )
    }
    .expect("gf kernel");
    let ef = gf.instantiate(device).expect("ef");
    let mut gp = ctx.graph().expect("gp");
    // SAFETY: as above.
    unsafe {
        gp.add_kernel(
            &f,
            &cfg,
            &params![&data, n as i32, adds[0], &trace, 0u32, &ef, 1i32],
            &[],
        )
    }
    .expect("gp kernel");
    let ep = gp.instantiate(InstantiateOptions::default()).expect("ep");
    let (a, b) = (rng.vec_f32(n), rng.vec_f32(n));
    data.copy_from_host(&a).expect("a");
    other.copy_from_host(&b).expect("b");
    trace.copy_from_host(&[u32::MAX; 4]).expect("poison trace");
    ctx.scope(|s| s.launch_graph(&stream, &ep)).expect("launch");
    assert_eq!(trace.to_vec().unwrap()[..2], [1, 2]);
    let (want_a, want_b) = (dgl(&a, adds[0]), dgl(&b, adds[1]));
    for (g, w) in data.to_vec().unwrap().iter().zip(&want_a) {
        assert_eq!(g.to_bits(), w.to_bits(), "the parent's data");
    }
    for (g, w) in other.to_vec().unwrap().iter().zip(&want_b) {
        assert_eq!(g.to_bits(), w.to_bits(), "the fire-and-forget child's data");
    }
}

const CDP: &str = r#"
__global__ void cdp_child(float* d) { d[threadIdx.x] += 1.0f; }
extern "C" __global__ void cdp_parent(float* d) {
    if (threadIdx.x == 0) cdp_child<<<1, 32>>>(d);
}
"#;

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn device_launch_refusals_are_typed_and_the_context_stays_usable() {
    needs_driver((12, 0));
    let ctx = ctx();
    let module = module_of(&ctx, Source::named("device_graph.cu").program());
    let f = module.function("dgl_step").expect("dgl_step");
    let cdp = module_of(&ctx, Program::new("cdp.cu", CDP));
    let parent = cdp.function("cdp_parent").expect("cdp_parent");
    assert_eq!(parent.uses_dynamic_parallelism(), Some(true));
    let data = ctx.alloc::<f32>(64).expect("data");
    let trace = ctx.alloc::<u32>(4).expect("trace");
    let cfg = LaunchConfig::new(1, 64);
    let device = InstantiateOptions::default().device_launch();
    let stream = ctx.stream().expect("stream");
    let event = ctx.event().expect("event");

    let mut h = ctx.graph().expect("graph");
    h.add_host_fn(|| {}, &[]).expect("host node");
    let mut e = ctx.graph().expect("graph");
    e.add_event_record(&event, &[]).expect("event node");
    let mut k = ctx.graph().expect("graph");
    // SAFETY: cdp_parent writes 32 floats of data (64).
    unsafe { k.add_kernel(&parent, &LaunchConfig::new(1, 32), &params![&data], &[]) }
        .expect("kernel");
    for (g, what) in [
        (&h, "host"),
        (&e, "event record"),
        (&k, "dynamic parallelism"),
    ] {
        match g.instantiate(device) {
            Err(err @ Error::NodeNotAllowed { .. }) => {
                assert!(err.to_string().contains(what), "{err}");
                println!("refused: {err}");
            }
            other => panic!("{what}: expected NodeNotAllowed, got {other:?}"),
        }
    }
    // An executable graph not instantiated for device launch.
    let plain = h
        .instantiate(InstantiateOptions::default())
        .expect("plain exec");
    let mut g = ctx.graph().expect("graph");
    // SAFETY: refused before the driver.
    let r = unsafe {
        g.add_kernel(
            &f,
            &cfg,
            &params![&data, 64i32, 1.0f32, &trace, 0u32, &plain, 0i32],
            &[],
        )
    };
    assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");

    // The context is usable: a one-step device graph, launched from the host.
    let input: Vec<f32> = Rng::new().vec_f32(64);
    data.copy_from_host(&input).expect("data");
    // SAFETY: dgl_step on 64 floats and trace[0]; no graph to launch.
    unsafe {
        g.add_kernel(
            &f,
            &cfg,
            &params![&data, 64i32, 0.5f32, &trace, 0u32, 0u64, 0i32],
            &[],
        )
    }
    .expect("kernel");
    let exec = g.instantiate(device).expect("device exec");
    ctx.scope(|s| s.launch_graph(&stream, &exec))
        .expect("launch");
    for (g, w) in data.to_vec().unwrap().iter().zip(dgl(&input, 0.5)) {
        assert_eq!(g.to_bits(), w.to_bits());
    }
}
