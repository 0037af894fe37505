//! `Function::set_attribute` and the launch path's cached dynamic
//! shared-memory limit (issue 20, item 11), against the test-only stand-in
//! libcuda, whose `cuLaunchKernel` refuses a launch that asks for more
//! dynamic shared memory than the function's attribute allows (and counts
//! the refusal), as the driver does.
//!
//! Lowering the attribute through `set_attribute` must lower cudakit's
//! copy too: otherwise a later launch trusts the old, higher copy, skips
//! the raise it needs, and the driver refuses it.
//!
//! Process-global (`CUDAKIT_LIBCUDA`), hence one test function in its own
//! binary.

#[path = "../../cuda-sys/tests/support/stub.rs"]
mod stub;

use cudakit::sys::CUfunction_attribute as Attr;
use cudakit::{params, Context, LaunchConfig};

struct Stub {
    lib: libloading::Library,
}

impl Stub {
    fn refusals(&self) -> u64 {
        // SAFETY: the stand-in exports `stub_shared_refusals` as a
        // no-argument function returning u64.
        let f = unsafe {
            self.lib
                .get::<unsafe extern "C" fn() -> u64>(b"stub_shared_refusals\0")
        }
        .expect("stub_shared_refusals");
        // SAFETY: no arguments.
        unsafe { f() }
    }

    fn no_params(&self) {
        // SAFETY: the stand-in exports this function with this signature.
        let f = unsafe {
            self.lib
                .get::<unsafe extern "C" fn(*const usize, usize)>(b"stub_set_params\0")
        }
        .expect("stub_set_params");
        // SAFETY: zero pairs: nothing is read.
        unsafe { f(std::ptr::null(), 0) };
    }
}

const DYNAMIC: Attr = Attr::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;

#[test]
fn set_attribute_keeps_the_cached_dynamic_shared_limit_true() {
    let path = stub::build_stub("");
    std::env::set_var("CUDAKIT_LIBCUDA", &path);
    // SAFETY: the stand-in library's initialisers are Rust statics only.
    let lib = unsafe { libloading::Library::new(&path) }.expect("open the stand-in");
    let stub = Stub { lib };
    stub.no_params();

    let ctx = Context::new(0).expect("context on the stand-in");
    let module = ctx
        .load_module_image(b".version 8.8\n.target sm_90\n.address_size 64\n")
        .expect("module");
    let f = module.function("shared").expect("function");
    let stream = ctx.stream().expect("stream");
    let launch = |kib: u32| {
        let cfg = LaunchConfig::new(1, 32).shared(kib * 1024);
        // SAFETY: the stand-in runs nothing.
        ctx.scope(|s| unsafe { s.launch(&stream, &f, &cfg, &params![]) })
    };
    let refused = stub.refusals();

    // 100 KiB: above the 48 KiB default, so the launch raises the
    // attribute first, and cudakit caches 100 KiB.
    launch(100).expect("launch with 100 KiB");
    assert_eq!(f.attribute(DYNAMIC).unwrap(), 100 * 1024);

    // Lowered behind the launch path's back, through the public setter.
    f.set_attribute(DYNAMIC, 48 * 1024)
        .expect("lower the attribute");
    assert_eq!(f.attribute(DYNAMIC).unwrap(), 48 * 1024);

    // The same launch again: it must raise the attribute again, not trust
    // the cached 100 KiB.
    launch(100).unwrap_or_else(|e| panic!("the launch after lowering the attribute: {e}"));
    assert_eq!(
        stub.refusals(),
        refused,
        "a launch reached the driver asking more shared memory than the attribute allowed"
    );
    assert_eq!(f.attribute(DYNAMIC).unwrap(), 100 * 1024);

    // Raising through the setter is recorded too: a launch within the new
    // limit needs no raise, and one above it raises again.
    f.set_attribute(DYNAMIC, 150 * 1024)
        .expect("raise the attribute");
    launch(120).expect("launch within the raised limit");
    assert_eq!(
        f.attribute(DYNAMIC).unwrap(),
        150 * 1024,
        "no needless raise"
    );
    f.set_attribute(DYNAMIC, 0).expect("lower to zero");
    launch(1).expect("launch with 1 KiB after lowering to zero");
    assert_eq!(stub.refusals(), refused);

    // Other attributes go to the driver as before (the stand-in accepts
    // them and keeps nothing).
    f.set_attribute(Attr::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 50)
        .expect("another attribute");
    assert!(ctx.leak_report().is_empty(), "{}", ctx.leak_report());
}
