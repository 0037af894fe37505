//! Issue 24, fix 2, against the stand-in libcuda with two devices: peer
//! access is tied to the peer context it was enabled for, and to what uses
//! it. A graph whose kernel node takes a buffer of device 1 replays while
//! device 0 has access to it, and is refused (a typed error, not a device
//! fault) once that access is disabled; a peer context dropped and made
//! again is not reached through the old access.
//!
//! Process-global (`CUDAKIT_LIBCUDA`), hence a binary of its own.

#[path = "../../cuda-sys/tests/support/stub.rs"]
mod stub;

use cudakit::{params, Context, Error, InstantiateOptions, LaunchConfig};

#[test]
fn peer_access_is_checked_at_every_replay_and_per_peer_context() {
    let path = stub::build_stub("");
    std::env::set_var("CUDAKIT_LIBCUDA", &path);
    // SAFETY: the stand-in library's initialisers are Rust statics only.
    let lib = unsafe { libloading::Library::new(&path) }.expect("open the stand-in");
    // SAFETY: exported by the stand-in with these signatures.
    let devices = unsafe { lib.get::<unsafe extern "C" fn(i32)>(b"stub_set_device_count\0") }
        .expect("stub_set_device_count");
    // SAFETY: as above.
    let set_params =
        unsafe { lib.get::<unsafe extern "C" fn(*const usize, usize)>(b"stub_set_params\0") }
            .expect("stub_set_params");
    // SAFETY: plain values; (float*, int) at offsets 0 and 8.
    unsafe {
        devices(2);
        set_params([0usize, 8, 8, 4].as_ptr(), 2);
    }
    let c0 = Context::new(0).expect("device 0");
    let module = c0
        .load_module_image(b".version 8.8\n.target sm_90\n.address_size 64\n")
        .expect("module");
    let f = module.function("k").expect("function");
    let stream = c0.stream().expect("stream");
    let cfg = LaunchConfig::new(1, 32);
    {
        let c1 = Context::new(1).expect("device 1");
        let theirs = c1.alloc::<f32>(64).expect("buffer of device 1");
        c0.enable_peer_access(&c1).expect("peer access");
        let p = params![&theirs, 1i32];
        let mut g = c0.graph().expect("graph");
        // SAFETY: the stand-in runs nothing.
        unsafe { g.add_kernel(&f, &cfg, &p, &[]) }.expect("kernel node with a peer buffer");
        let exec = g
            .instantiate(InstantiateOptions::default())
            .expect("instantiate");
        c0.scope(|s| s.launch_graph(&stream, &exec))
            .expect("replay while access is enabled");
        // SAFETY: one thread; no device-launched graph.
        unsafe { c0.disable_peer_access(&c1) }.expect("disable");
        let r = c0.scope(|s| s.launch_graph(&stream, &exec));
        assert!(
            matches!(&r, Err(Error::PeerAccessUnsupported { to: 1, .. })),
            "a replay after the access was disabled: {r:?}"
        );
        c0.enable_peer_access(&c1).expect("enable again");
        c0.scope(|s| s.launch_graph(&stream, &exec))
            .expect("replay once access is back");
    }
    // Device 1's context is gone (its last handle dropped); a new one is
    // another context: the access enabled for the old one does not reach it.
    let c1 = Context::new(1).expect("device 1 again");
    assert!(
        !c0.peer_access_enabled(&c1),
        "the old record reaches the new context"
    );
    let theirs = c1.alloc::<f32>(64).expect("buffer of the new context");
    // SAFETY: the stand-in runs nothing.
    let r = c0.scope(|s| unsafe { s.launch(&stream, &f, &cfg, &params![&theirs, 1i32]) });
    assert!(
        matches!(r, Err(Error::ArgumentContextMismatch { .. })),
        "{r:?}"
    );
    c0.enable_peer_access(&c1)
        .expect("enable for the new context");
    // SAFETY: as above.
    c0.scope(|s| unsafe { s.launch(&stream, &f, &cfg, &params![&theirs, 1i32]) })
        .expect("launch with access to the new context");
}
