//! Graph control flow (issue 21) against the stand-in libcuda:
//!
//! - conditional nodes: the handle bound to its graph, the node's
//!   parameters as the driver reads them, bodies built with the graph
//!   builder, the body rules and every refusal before the driver;
//! - device graph launch: the instantiation flag and the upload reach the
//!   driver, the rules CUDA sets for such graphs are refused before it
//!   (node kinds at any depth, host copies, kernels that use dynamic
//!   parallelism as their PTX shows), and only a device-launch executable
//!   graph is a kernel argument.
//!
//! Process-global (`CUDAKIT_LIBCUDA`, the stand-in's parameter layout),
//! hence a binary of its own with one test.

#[path = "../../cuda-sys/tests/support/stub.rs"]
mod stub;

use cudakit::{params, ConditionalKind, Context, Error, InstantiateOptions, LaunchConfig};

struct Stub(libloading::Library);

impl Stub {
    /// The `i`th conditional node: (graph, handle, type, bodies).
    fn conditional(&self, i: usize) -> Option<[u64; 4]> {
        // SAFETY: exported with this signature.
        let f = unsafe {
            self.0
                .get::<unsafe extern "C" fn(usize, *mut u64) -> bool>(b"stub_conditional\0")
        }
        .expect("stub_conditional");
        let mut out = [0u64; 4];
        // SAFETY: 4 writable u64s.
        unsafe { f(i, out.as_mut_ptr()) }.then_some(out)
    }
    /// The `i`th conditional handle: (graph, default, flags).
    fn condition(&self, i: usize) -> Option<[u64; 3]> {
        // SAFETY: exported with this signature.
        let f = unsafe {
            self.0
                .get::<unsafe extern "C" fn(usize, *mut u64) -> bool>(b"stub_condition\0")
        }
        .expect("stub_condition");
        let mut out = [0u64; 3];
        // SAFETY: 3 writable u64s.
        unsafe { f(i, out.as_mut_ptr()) }.then_some(out)
    }
    /// (last instantiate flags, uploads, instantiations).
    fn graph_counts(&self) -> [u64; 3] {
        // SAFETY: exported with this signature.
        let f = unsafe {
            self.0
                .get::<unsafe extern "C" fn(*mut u64)>(b"stub_graph_counts\0")
        }
        .expect("stub_graph_counts");
        let mut out = [0u64; 3];
        // SAFETY: 3 writable u64s.
        unsafe { f(out.as_mut_ptr()) };
        out
    }
    fn fail_syncs(&self, n: u64, code: i32) {
        // SAFETY: exported with this signature.
        let f = unsafe {
            self.0
                .get::<unsafe extern "C" fn(u64, i32)>(b"stub_fail_syncs\0")
        }
        .expect("stub_fail_syncs");
        // SAFETY: plain values.
        unsafe { f(n, code) };
    }
    fn conditionals(&self) -> usize {
        (0..).take_while(|&i| self.conditional(i).is_some()).count()
    }
    fn set_params(&self, layout: &[(usize, usize)]) {
        let flat: Vec<usize> = layout.iter().flat_map(|&(o, s)| [o, s]).collect();
        // SAFETY: exported with this signature.
        let f = unsafe {
            self.0
                .get::<unsafe extern "C" fn(*const usize, usize)>(b"stub_set_params\0")
        }
        .expect("stub_set_params");
        // SAFETY: 2 * len usizes.
        unsafe { f(flat.as_ptr(), layout.len()) };
    }
}

fn not_allowed(r: cudakit::Result<impl std::fmt::Debug>, kind: &str) {
    refused_in(r, kind, "a conditional body");
}

fn refused_in(r: cudakit::Result<impl std::fmt::Debug>, kind: &str, place: &str) {
    match r {
        Err(e @ Error::NodeNotAllowed { .. }) => {
            let text = e.to_string();
            assert!(text.contains(kind), "{text} should name {kind}");
            assert!(text.contains(place), "{text} should name {place}");
        }
        other => panic!("expected NodeNotAllowed naming {kind}, got {other:?}"),
    }
}

const DEVICE: &str = "a graph instantiated for device launch";

#[test]
fn conditional_nodes_and_device_graph_launch() {
    let path = stub::build_stub("");
    std::env::set_var("CUDAKIT_LIBCUDA", &path);
    // SAFETY: the stand-in library's initialisers are Rust statics only.
    let stub = Stub(unsafe { libloading::Library::new(&path) }.expect("open the stand-in"));
    let ctx = Context::new(0).expect("context on the stand-in");
    let stream = ctx.stream().expect("stream");
    let event = ctx.event().expect("event");
    let module = ctx
        .load_module_image(b".version 8.8\n.target sm_90\n.address_size 64\n")
        .expect("module");
    stub.set_params(&[(0, 8), (8, 8)]);
    let f = module.function("k").expect("function");
    let cfg = LaunchConfig::new(1, 32);
    let dev = ctx.alloc::<f32>(64).expect("device buffer");
    let dev2 = ctx.alloc::<f32>(64).expect("device buffer");
    let host = vec![0f32; 64];

    // Child graphs, declared before the graphs that borrow them.
    let mut with_host = ctx.graph().expect("graph");
    with_host.add_host_fn(|| {}, &[]).expect("host node");
    let mut nested = ctx.graph().expect("graph");
    nested.add_child(&with_host, &[]).expect("child");
    let mut with_copy = ctx.graph().expect("graph");
    with_copy
        .add_copy_to_device(&host, &dev, &[])
        .expect("host copy");
    let mut plain = ctx.graph().expect("graph");
    let m = plain.add_memset(&dev, 1.0f32, &[]).expect("memset");
    plain.add_empty(&[m]).expect("empty");
    let mut plain_device = ctx.graph().expect("graph");
    plain_device.add_memset(&dev2, 3.0f32, &[]).expect("memset");

    let mut g = ctx.graph().expect("graph");
    let mut other = ctx.graph().expect("graph");

    // --- the handle: made for its graph, with its default.
    let cond = g.condition(Some(1)).expect("handle");
    assert_eq!(cond.default_value(), Some(1));
    let g_raw = g.as_raw() as u64;
    assert_eq!(
        stub.condition(0),
        Some([g_raw, 1, 1]),
        "graph, default, CU_GRAPH_COND_ASSIGN_DEFAULT"
    );
    let first = g.add_memset(&dev, 0.0f32, &[]).expect("memset");
    let (node, mut body) = g.add_while(&cond, &[first]).expect("while node");
    assert!(body.is_conditional_body());
    assert_eq!(
        stub.conditional(0),
        Some([g_raw, cond.as_raw(), 1, 1]),
        "graph, handle, CU_GRAPH_COND_TYPE_WHILE, one body"
    );
    assert_ne!(body.as_raw() as u64, g_raw);

    // --- a handle of another graph is refused, before the driver.
    let r = other.add_while(&cond, &[]);
    assert!(matches!(r, Err(Error::ForeignCondition { .. })), "{r:?}");
    assert_eq!(stub.conditionals(), 1, "nothing reached the driver");

    // --- the body: built like any graph, with what CUDA allows there.
    // SAFETY: the stand-in runs nothing.
    let k = unsafe { body.add_kernel(&f, &cfg, &params![&cond, &dev], &[]) }
        .expect("a kernel node that sets the condition");
    let c = body.add_copy(&dev, &dev2, &[k]).expect("device copy");
    let s = body.add_memset(&dev2, 2.0f32, &[c]).expect("memset");
    body.add_empty(&[s]).expect("empty");
    body.add_child(&plain, &[])
        .expect("a child of allowed nodes");
    assert_eq!(body.node_count().unwrap(), 5);

    not_allowed(body.add_host_fn(|| {}, &[]), "a host node");
    not_allowed(body.add_event_record(&event, &[]), "an event record node");
    not_allowed(body.add_event_wait(&event, &[]), "an event wait node");
    not_allowed(
        body.add_mem_alloc::<f32>(64, &[]),
        "a memory allocation node",
    );
    not_allowed(body.add_copy_to_device(&host, &dev, &[]), "host memory");
    let mut out = vec![0f32; 64];
    not_allowed(body.add_copy_to_host(&dev, &mut out, &[]), "host memory");
    not_allowed(body.add_child(&with_host, &[]), "host node");
    not_allowed(body.add_child(&nested, &[]), "host node");
    not_allowed(body.add_child(&with_copy, &[]), "copies host memory");
    assert_eq!(body.node_count().unwrap(), 5, "no refused node was added");

    // A dependency of the parent graph in the body is another graph's.
    let r = body.add_empty(&[first]);
    assert!(matches!(r, Err(Error::ForeignGraphNode { .. })), "{r:?}");

    // --- the handle as a kernel argument: its graph family only.
    // SAFETY: refused before the driver.
    let r = unsafe { other.add_kernel(&f, &cfg, &params![&cond, &dev], &[]) };
    assert!(matches!(r, Err(Error::ForeignCondition { .. })), "{r:?}");
    // SAFETY: refused before the driver.
    let r = ctx.scope(|s| unsafe { s.launch(&stream, &f, &cfg, &params![&cond, &dev]) });
    assert!(matches!(r, Err(Error::ForeignCondition { .. })), "{r:?}");

    // --- nested: a handle made for the body, an if node inside it.
    let inner = body.condition(None).expect("handle of the body");
    let body_raw = body.as_raw() as u64;
    assert_eq!(stub.condition(1), Some([body_raw, 0, 0]));
    let r = other.add_if(&inner, &[]);
    assert!(matches!(r, Err(Error::ForeignCondition { .. })), "{r:?}");
    {
        let (_, mut then) = body.add_if(&inner, &[]).expect("if inside the while");
        assert_eq!(stub.conditional(1), Some([body_raw, inner.as_raw(), 0, 1]));
        // Both handles are arguments anywhere in the family.
        // SAFETY: the stand-in runs nothing.
        unsafe { then.add_kernel(&f, &cfg, &params![&cond, &dev], &[]) }.expect("outer handle");
        // SAFETY: as above.
        unsafe { then.add_kernel(&f, &cfg, &params![&inner, &dev], &[]) }.expect("inner handle");
        not_allowed(then.add_host_fn(|| {}, &[]), "a host node");
    }
    // A body alone is not instantiated.
    let r = body.instantiate(InstantiateOptions::default());
    assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");
    // (The body borrows `g` exclusively: `g` is usable again once the
    // body is no longer.)
    assert_eq!(g.node_kind(node).unwrap(), cudakit::NodeKind::Conditional);
    assert!(!g.is_conditional_body());
    // SAFETY: the stand-in runs nothing.
    unsafe { g.add_kernel(&f, &cfg, &params![&cond, &dev], &[node]) }
        .expect("the handle's own graph");
    let r = g.add_if(&inner, &[]);
    assert!(matches!(r, Err(Error::ForeignCondition { .. })), "{r:?}");

    // --- if/else and switch (12.8; the stand-in reports 13.0).
    let c2 = g.condition(Some(0)).expect("handle");
    {
        let (_, a, b) = g.add_if_else(&c2, &[]).expect("if/else");
        assert_ne!(a.as_raw(), b.as_raw());
    }
    assert_eq!(stub.conditional(2).unwrap()[2..], [0, 2]);
    let c3 = g.condition(Some(0)).expect("handle");
    let r = g.add_switch(&c3, 0, &[]).map(|(n, _)| n);
    assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");
    let cases = g.add_switch(&c3, 4, &[]).expect("switch").1.len();
    assert_eq!(cases, 4);
    assert_eq!(stub.conditional(3).unwrap()[2..], [2, 4]);
    let r = g
        .add_conditional(&c3, ConditionalKind::Switch(1 << 20), &[])
        .map(|(n, _)| n);
    assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");

    // --- instantiation: an unused handle.
    let unused = other.condition(None).expect("handle");
    other.add_empty(&[]).expect("empty");
    match other.instantiate(InstantiateOptions::default()) {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("conditional handle"), "{m}"),
        r => panic!("an unused handle: {r:?}"),
    }
    other.add_if(&unused, &[]).expect("now used");
    other
        .instantiate(InstantiateOptions::default())
        .expect("every handle used");

    // The graph launches like any other.
    let exec = g
        .instantiate(InstantiateOptions::default())
        .expect("instantiate");
    ctx.scope(|s| s.launch_graph(&stream, &exec))
        .expect("launch");
    drop(exec);
    drop(g);

    // --- device graph launch.
    let device_opts = InstantiateOptions::default().device_launch();
    let mut d = ctx.graph().expect("graph");
    let m = d.add_memset(&dev, 1.0f32, &[]).expect("memset");
    let c = d.add_copy(&dev, &dev2, &[m]).expect("copy");
    // SAFETY: the stand-in runs nothing.
    unsafe { d.add_kernel(&f, &cfg, &params![7u64, &dev], &[c]) }.expect("kernel");
    d.add_child(&plain_device, &[])
        .expect("child of allowed nodes");
    let before = stub.graph_counts();
    let mut dexec = d
        .instantiate(device_opts)
        .expect("device-launch instantiation");
    assert!(dexec.is_device_launchable());
    let after = stub.graph_counts();
    assert_eq!(after[0] & 4, 4, "CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH");
    assert_eq!(
        after[1],
        before[1] + 1,
        "uploaded before instantiate returns"
    );
    ctx.scope(|s| s.launch_graph(&stream, &dexec))
        .expect("a device graph launches from the host too");

    // What a device-launch graph may not hold, refused before the driver.
    let mut bad: Vec<cudakit::Graph<'_>> = Vec::new();
    let mut h = ctx.graph().expect("graph");
    h.add_host_fn(|| {}, &[]).expect("host node");
    bad.push(h);
    let mut e = ctx.graph().expect("graph");
    e.add_empty(&[]).expect("empty");
    bad.push(e);
    let mut r = ctx.graph().expect("graph");
    r.add_event_record(&event, &[]).expect("event record");
    bad.push(r);
    let mut a = ctx.graph().expect("graph");
    let (an, alloc) = a.add_mem_alloc::<f32>(16, &[]).expect("alloc");
    a.add_mem_free(alloc, &[an]).expect("free");
    bad.push(a);
    let mut ch = ctx.graph().expect("graph");
    ch.add_child(&nested, &[])
        .expect("child with a host node 1 deep");
    bad.push(ch);
    let mut hc = ctx.graph().expect("graph");
    hc.add_copy_to_device(&host, &dev, &[]).expect("host copy");
    bad.push(hc);
    let mut cn = ctx.graph().expect("graph");
    let cc = cn.condition(Some(0)).expect("handle");
    cn.add_if(&cc, &[]).expect("if");
    bad.push(cn);
    let kinds = [
        "a host node (node 0)",
        "an empty node (node 0)",
        "an event record node",
        "a memory allocation node",
        "child graph 2 deep",
        "host memory",
        "a conditional node",
    ];
    let instantiations = stub.graph_counts()[2];
    for (g, kind) in bad.iter().zip(kinds) {
        refused_in(g.instantiate(device_opts), kind, DEVICE);
    }
    assert_eq!(
        stub.graph_counts()[2],
        instantiations,
        "no refused graph reached the driver"
    );
    let r = d.instantiate(device_opts.auto_free_on_launch());
    assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");
    // An update to a graph a device launch may not run is refused too; an
    // allowed one is uploaded again.
    refused_in(dexec.update(&bad[0]), "a host node", DEVICE);
    let uploads = stub.graph_counts()[1];
    dexec.update(&d).expect("update to the same graph");
    assert_eq!(stub.graph_counts()[1], uploads + 1, "uploaded again");

    // A failed wait for the upload: the error comes back, and the exec's
    // drop, whose wait fails too (999, not sticky), keeps it.
    stub.fail_syncs(2, 999);
    match d.instantiate(device_opts) {
        Err(Error::Driver(e)) => assert_eq!(e.call, "cuEventSynchronize"),
        other => panic!("a failed upload wait: {other:?}"),
    }
    stub.fail_syncs(0, 0);
    assert!(
        ctx.drop_errors()
            .iter()
            .any(|e| e.call == "cuEventSynchronize"),
        "the drop's failed wait is recorded (and the exec kept)"
    );
    d.instantiate(device_opts)
        .expect("the context is usable after");

    // The executable graph as a kernel argument: device-launch ones only.
    let normal = plain
        .instantiate(InstantiateOptions::default())
        .expect("exec");
    let mut launcher = ctx.graph().expect("graph");
    // SAFETY: the stand-in runs nothing.
    unsafe { launcher.add_kernel(&f, &cfg, &params![&dexec, &dev], &[]) }
        .expect("a device-launch graph as an argument");
    // SAFETY: refused before the driver.
    match unsafe { launcher.add_kernel(&f, &cfg, &params![&normal, &dev], &[]) } {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("device launch"), "{m}"),
        other => panic!("a graph not instantiated for device launch: {other:?}"),
    }

    // A kernel that uses dynamic parallelism, as its PTX shows.
    let cdp = ctx
        .load_module_image(CDP_PTX.as_bytes())
        .expect("module from PTX");
    stub.set_params(&[(0, 8)]);
    let parent = cdp.function("parent").expect("parent");
    let leaf = cdp.function("plain").expect("plain");
    assert_eq!(parent.uses_dynamic_parallelism(), Some(true));
    assert_eq!(leaf.uses_dynamic_parallelism(), Some(false));
    assert_eq!(
        f.uses_dynamic_parallelism(),
        Some(false),
        "no entries: none"
    );
    let mut k = ctx.graph().expect("graph");
    // SAFETY: the stand-in runs nothing.
    unsafe { k.add_kernel(&leaf, &cfg, &params![&dev], &[]) }.expect("kernel");
    k.instantiate(device_opts)
        .expect("a kernel without dynamic parallelism");
    // SAFETY: as above.
    unsafe { k.add_kernel(&parent, &cfg, &params![&dev], &[]) }.expect("kernel");
    refused_in(k.instantiate(device_opts), "parent", DEVICE);
    let mut outer = ctx.graph().expect("graph");
    outer.add_child(&k, &[]).expect("child");
    refused_in(
        outer.instantiate(device_opts),
        "dynamic parallelism",
        DEVICE,
    );
}

/// A PTX module whose `parent` launches a kernel from the device through
/// a `.func`, and whose `plain` does not.
const CDP_PTX: &str = r#".version 8.8
.target sm_90
.address_size 64
.extern .func  (.param .b32 func_retval0) __cudaCDP2LaunchDeviceV2
(
	.param .b64 __cudaCDP2LaunchDeviceV2_param_0,
	.param .b64 __cudaCDP2LaunchDeviceV2_param_1
)
;
.visible .func helper(
	.param .b64 helper_param_0
)
{
	{
	.param .b32 retval0;
	call.uni (retval0), __cudaCDP2LaunchDeviceV2, (param0, param1);
	}
	ret;
}
.visible .entry parent(
	.param .u64 parent_param_0
)
{
	{
	call.uni helper, (param0);
	}
	ret;
}
.visible .entry plain(
	.param .u64 plain_param_0
)
{
	ret;
}
"#;
