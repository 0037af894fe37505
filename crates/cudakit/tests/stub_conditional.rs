//! Conditional graph nodes (issue 21) against the stand-in libcuda: the
//! handle bound to its graph, the node's parameters as the driver reads
//! them, bodies built with the graph builder, the body rules and every
//! refusal before the driver.
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
    match r {
        Err(e @ Error::NodeNotAllowed { .. }) => {
            let text = e.to_string();
            assert!(text.contains(kind), "{text} should name {kind}");
            assert!(text.contains("a conditional body"), "{text}");
        }
        other => panic!("expected NodeNotAllowed naming {kind}, got {other:?}"),
    }
}

#[test]
fn conditional_handles_nodes_and_body_rules() {
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

    let mut g = ctx.graph().expect("graph");
    let mut other = ctx.graph().expect("graph");

    // --- the handle: made for its graph, with its default.
    let cond = g.condition(Some(1)).expect("handle");
    assert_eq!(cond.default_value(), Some(1));
    assert_eq!(
        stub.condition(0),
        Some([g.as_raw() as u64, 1, 1]),
        "graph, default, CU_GRAPH_COND_ASSIGN_DEFAULT"
    );
    let first = g.add_memset(&dev, 0.0f32, &[]).expect("memset");
    let (node, mut body) = g.add_while(&cond, &[first]).expect("while node");
    assert_eq!(g.node_kind(node).unwrap(), cudakit::NodeKind::Conditional);
    assert!(body.is_conditional_body() && !g.is_conditional_body());
    assert_eq!(
        stub.conditional(0),
        Some([g.as_raw() as u64, cond.as_raw(), 1, 1]),
        "graph, handle, CU_GRAPH_COND_TYPE_WHILE, one body"
    );
    assert_ne!(body.as_raw(), g.as_raw());

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
    // SAFETY: the stand-in runs nothing.
    unsafe { g.add_kernel(&f, &cfg, &params![&cond, &dev], &[node]) }
        .expect("the handle's own graph");

    // --- nested: a handle made for the body, an if node inside it.
    let inner = body.condition(None).expect("handle of the body");
    assert_eq!(stub.condition(1), Some([body.as_raw() as u64, 0, 0]));
    let r = g.add_if(&inner, &[]);
    assert!(matches!(r, Err(Error::ForeignCondition { .. })), "{r:?}");
    let (_, mut then) = body.add_if(&inner, &[]).expect("if inside the while");
    assert_eq!(
        stub.conditional(1),
        Some([body.as_raw() as u64, inner.as_raw(), 0, 1])
    );
    // Both handles are arguments anywhere in the family.
    // SAFETY: the stand-in runs nothing.
    unsafe { then.add_kernel(&f, &cfg, &params![&cond, &dev], &[]) }.expect("outer handle");
    // SAFETY: as above.
    unsafe { then.add_kernel(&f, &cfg, &params![&inner, &dev], &[]) }.expect("inner handle");
    not_allowed(then.add_host_fn(|| {}, &[]), "a host node");

    // --- if/else and switch (12.8; the stand-in reports 13.0).
    let c2 = g.condition(Some(0)).expect("handle");
    let (_, a, b) = g.add_if_else(&c2, &[]).expect("if/else");
    assert_ne!(a.as_raw(), b.as_raw());
    assert_eq!(stub.conditional(2).unwrap()[2..], [0, 2]);
    let c3 = g.condition(Some(0)).expect("handle");
    let r = g.add_switch(&c3, 0, &[]);
    assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");
    let (_, cases) = g.add_switch(&c3, 4, &[]).expect("switch");
    assert_eq!(cases.len(), 4);
    assert_eq!(stub.conditional(3).unwrap()[2..], [2, 4]);
    let r = g.add_conditional(&c3, ConditionalKind::Switch(1 << 20), &[]);
    assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");

    // --- instantiation: a body alone, an unused handle.
    let r = body.instantiate(InstantiateOptions::default());
    assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");
    let unused = other.condition(None).expect("handle");
    other.add_empty(&[]).expect("empty");
    match other.instantiate(InstantiateOptions::default()) {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("conditional handle"), "{m}"),
        r => panic!("an unused handle: {r:?}"),
    }
    let (_, _unused_body) = other.add_if(&unused, &[]).expect("now used");
    other
        .instantiate(InstantiateOptions::default())
        .expect("every handle used");

    // The graph launches like any other; a body outlives its graph's
    // value (the outermost graph's handle keeps the driver's graph).
    let exec = g
        .instantiate(InstantiateOptions::default())
        .expect("instantiate");
    ctx.scope(|s| s.launch_graph(&stream, &exec))
        .expect("launch");
    drop(exec);
    drop(g);
    body.add_empty(&[]).expect("the body is still a live graph");
    std::mem::forget(then);
}
