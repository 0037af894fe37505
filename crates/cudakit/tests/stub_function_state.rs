//! What the launch path keeps per kernel (the configuration it validated
//! last, the dynamic shared-memory limit it believes the driver holds),
//! against the test-only stand-in libcuda, whose `cuLaunchKernel` refuses
//! (and counts) a launch that asks for more dynamic shared memory than the
//! function's attribute allows, as the driver does:
//!
//! - two `Function` handles of one `CUfunction` (the same kernel looked up
//!   twice, in a module or a library) share that record: lowering the
//!   attribute through one must not leave the other trusting a higher copy
//!   and a configuration validated against it; what fitted one handle's
//!   declared types stays that handle's own;
//! - the fast path (a scope's later launches on its stream) validates and
//!   raises again after the attribute was lowered between two launches;
//! - kernel timing switched on inside a scope times the launches after the
//!   switch (the fast path, which times nothing, must not take them).
//!
//! Process-global (`CUDAKIT_LIBCUDA`, and one attribute value the stand-in
//! keeps for every function): the tests take one lock and share one
//! stand-in. No NVRTC: the images are PTX text the stand-in reads.

#[path = "../../cuda-sys/tests/support/stub.rs"]
mod stub;

use std::ffi::c_void;

use cudakit::sys::CUfunction_attribute as Attr;
use cudakit::{params, Context, Function, LaunchConfig, Library, Scope, Stream};
use stub::{call0, set_params};

const DYNAMIC: Attr = Attr::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
const KIB: u32 = 1024;

/// A module image: the stand-in resolves every name to its one function.
const MODULE_PTX: &[u8] = b".version 8.8\n.target sm_90\n.address_size 64\n";
/// A library image with one kernel, `k`, of no parameters.
const LIBRARY_PTX: &[u8] =
    b".version 8.8\n.target sm_90\n.address_size 64\n\n.visible .entry k()\n{\n\tret;\n}\n";

fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// The stand-in, its kernels of no parameters, and its dynamic
/// shared-memory attribute back at the default 48 KiB (set behind
/// cudakit's back: every test starts from the same driver state).
fn open() -> libloading::Library {
    let path = stub::build_stub("");
    std::env::set_var("CUDAKIT_LIBCUDA", &path);
    // SAFETY: the stand-in library's initialisers are Rust statics only.
    let lib = unsafe { libloading::Library::new(&path) }.expect("open the stand-in");
    set_params(&lib, &[]);
    // SAFETY: the stand-in exports cuFuncSetAttribute with the driver's
    // signature.
    let set = unsafe {
        lib.get::<unsafe extern "C" fn(*mut c_void, i32, i32) -> i32>(b"cuFuncSetAttribute\0")
    }
    .expect("cuFuncSetAttribute");
    // SAFETY: the stand-in ignores the handle and keeps one value for the
    // attribute (8: MAX_DYNAMIC_SHARED_SIZE_BYTES).
    let rc = unsafe { set(std::ptr::null_mut(), 8, (48 * KIB) as i32) };
    assert_eq!(rc, 0);
    lib
}

fn refusals(lib: &libloading::Library) -> u64 {
    call0(lib, b"stub_shared_refusals\0")
}

/// One launch of `f` asking `kib` KiB of dynamic shared memory.
fn launch<'s>(
    s: &Scope<'s, '_>,
    stream: &'s Stream<'_>,
    f: &'s Function<'_>,
    kib: u32,
) -> cudakit::Result<()> {
    let cfg = LaunchConfig::new(1, 32).shared(kib * KIB);
    // SAFETY: the stand-in runs nothing.
    unsafe { s.launch(stream, f, &cfg, &params![]) }
}

/// `f1` and `f2` are two handles of one function: lowering the attribute
/// through `f2` after `f1` raised it and launched must make `f1`'s next
/// launch of the same configuration raise it again, on the full path (a
/// new scope) and on the fast path (a scope that launched already).
fn handles_share_the_state(
    lib: &libloading::Library,
    ctx: &Context,
    f1: &Function<'_>,
    f2: &Function<'_>,
) {
    assert_eq!(f1.as_raw(), f2.as_raw(), "one CUfunction");
    let refused = refusals(lib);
    let stream = ctx.stream().expect("stream");

    // 100 KiB through f1: above the 48 KiB default, so f1's launch raises
    // the attribute, and the configuration is validated.
    ctx.scope(|s| launch(s, &stream, f1, 100))
        .expect("the first launch through f1");
    assert_eq!(f1.attribute(DYNAMIC).unwrap(), (100 * KIB) as i32);

    // Lowered through the other handle.
    f2.set_max_dynamic_shared_memory(0)
        .expect("lower the attribute through f2");
    assert_eq!(f1.attribute(DYNAMIC).unwrap(), 0);
    ctx.scope(|s| launch(s, &stream, f1, 100))
        .unwrap_or_else(|e| panic!("f1's launch after f2 lowered the attribute: {e}"));
    assert_eq!(
        refusals(lib),
        refused,
        "f1's launch reached the driver asking more than the attribute f2 set"
    );
    assert_eq!(f1.attribute(DYNAMIC).unwrap(), (100 * KIB) as i32);

    // The same on the fast path, lowered through `set_attribute`.
    ctx.scope(|s| {
        launch(s, &stream, f1, 100)?;
        launch(s, &stream, f1, 100)?;
        assert_eq!(
            s.fast_launches(),
            1,
            "the second launch takes the fast path"
        );
        f2.set_attribute(DYNAMIC, (48 * KIB) as i32)?;
        launch(s, &stream, f1, 100)
            .unwrap_or_else(|e| panic!("f1's fast-path launch after f2 lowered it: {e}"));
        assert_eq!(
            s.fast_launches(),
            1,
            "the launch after the change validated again"
        );
        // And the other way round: f1 lowers, f2 launches.
        f1.set_attribute(DYNAMIC, 0)?;
        launch(s, &stream, f2, 100)
            .unwrap_or_else(|e| panic!("f2's launch after f1 lowered it: {e}"));
        Ok(())
    })
    .expect("the fast-path scope");
    assert_eq!(refusals(lib), refused, "a launch the attribute forbade");
    assert_eq!(f2.attribute(DYNAMIC).unwrap(), (100 * KIB) as i32);
}

#[test]
fn two_handles_of_one_module_function_share_its_launch_state() {
    let _serial = serial();
    let lib = open();
    let ctx = Context::new(0).expect("context on the stand-in");
    let module = ctx.load_module_image(MODULE_PTX).expect("module");
    let f1 = module.function("shared").expect("f1");
    let f2 = module.function("shared").expect("f2");
    handles_share_the_state(&lib, &ctx, &f1, &f2);
    drop((f1, f2));
    // A third handle, after the others are gone, starts from the driver's
    // value (100 KiB now) and still raises what it needs.
    let f3 = module.function("shared").expect("f3");
    f3.set_attribute(DYNAMIC, 0).expect("lower");
    let stream = ctx.stream().expect("stream");
    ctx.scope(|s| launch(s, &stream, &f3, 64))
        .expect("a later handle");
    assert!(ctx.leak_report().is_empty(), "{}", ctx.leak_report());
}

#[test]
fn two_handles_of_one_library_kernel_share_its_launch_state() {
    let _serial = serial();
    let lib = open();
    let ctx = Context::new(0).expect("context on the stand-in");
    let library = Library::from_image(LIBRARY_PTX).expect("library");
    let f1 = library.function(&ctx, "k").expect("f1");
    let f2 = library
        .kernel("k")
        .expect("kernel")
        .function(&ctx)
        .expect("f2");
    handles_share_the_state(&lib, &ctx, &f1, &f2);
}

/// Gap (a) of the review: one handle, the attribute lowered between two
/// launches of one scope, the second of which would take the fast path.
#[test]
fn the_fast_path_raises_again_after_the_attribute_was_lowered() {
    let _serial = serial();
    let lib = open();
    let ctx = Context::new(0).expect("context on the stand-in");
    let module = ctx.load_module_image(MODULE_PTX).expect("module");
    let f = module.function("shared").expect("function");
    let stream = ctx.stream().expect("stream");
    let refused = refusals(&lib);
    ctx.scope(|s| {
        // The first launch raises the attribute, which clears what its own
        // validation would have cached; the second validates again (no
        // raise now) and caches; the third is fast.
        for _ in 0..3 {
            launch(s, &stream, &f, 100)?;
        }
        assert_eq!(s.fast_launches(), 1, "the third launch is fast");

        f.set_attribute(DYNAMIC, (48 * KIB) as i32)?;
        launch(s, &stream, &f, 100)
            .unwrap_or_else(|e| panic!("the launch after set_attribute lowered it: {e}"));
        assert_eq!(s.fast_launches(), 1, "validated again on the full path");
        assert_eq!(f.attribute(DYNAMIC)?, (100 * KIB) as i32, "raised again");
        launch(s, &stream, &f, 100)?;
        launch(s, &stream, &f, 100)?;
        assert_eq!(s.fast_launches(), 2, "and fast again after that");

        f.set_max_dynamic_shared_memory(0)?;
        launch(s, &stream, &f, 100)
            .unwrap_or_else(|e| panic!("the launch after lowering it to zero: {e}"));
        assert_eq!(s.fast_launches(), 2);
        Ok(())
    })
    .expect("scope");
    assert_eq!(refusals(&lib), refused, "a launch the attribute forbade");
}

/// Gap (b) of the review: `Context::set_kernel_timing` switched on and off
/// inside a scope whose launches take the fast path.
#[test]
fn kernel_timing_switched_on_inside_a_scope_times_the_launches_after_it() {
    let _serial = serial();
    let _lib = open();
    let ctx = Context::new(0).expect("context on the stand-in");
    let module = ctx.load_module_image(MODULE_PTX).expect("module");
    let f = module.function("timed").expect("function");
    let stream = ctx.stream().expect("stream");
    let timed = |ctx: &Context| ctx.metrics().kernels.get("timed").map_or(0, |k| k.launches);
    ctx.set_kernel_timing(false);
    let before = timed(&ctx);
    ctx.scope(|s| {
        launch(s, &stream, &f, 0)?;
        launch(s, &stream, &f, 0)?;
        assert_eq!(s.fast_launches(), 1, "the second launch is fast");
        ctx.set_kernel_timing(true);
        launch(s, &stream, &f, 0)?;
        launch(s, &stream, &f, 0)?;
        assert_eq!(
            s.fast_launches(),
            1,
            "a launch with kernel timing on took the fast path"
        );
        ctx.set_kernel_timing(false);
        launch(s, &stream, &f, 0)?;
        assert_eq!(s.fast_launches(), 2, "timing off: fast again");
        Ok(())
    })
    .expect("scope");
    assert_eq!(
        timed(&ctx) - before,
        2,
        "the two launches made with timing on are timed, no other"
    );
}

/// What fitted one handle's types is that handle's own: two handles of one
/// function, declared with different parameter types (of one size), share
/// the function's record but not the fast path's record of the arguments
/// that fitted. A `float*` fitted through `f`, then the same arguments
/// through `g` (declared `double*`) are refused before the driver.
#[test]
fn handles_declared_differently_keep_their_own_type_checks() {
    let _serial = serial();
    let lib = open();
    set_params(&lib, &[(0, 8)]);
    let launches = || -> u64 { call0(&lib, b"stub_launch_count\0") };
    let ctx = Context::new(0).expect("context on the stand-in");
    let module = ctx.load_module_image(MODULE_PTX).expect("module");
    let f = module
        .function_with_signature("shared", "float* p")
        .expect("f");
    let g = module
        .function_with_signature("shared", "double* p")
        .expect("g");
    assert_eq!(f.as_raw(), g.as_raw(), "one CUfunction");
    let stream = ctx.stream().expect("stream");
    let x = ctx.alloc::<f32>(4).expect("alloc");
    let cfg = LaunchConfig::new(1, 32);
    ctx.scope(|s| {
        for _ in 0..3 {
            // SAFETY: the stand-in runs nothing.
            unsafe { s.launch(&stream, &f, &cfg, &params![&x]) }?;
        }
        assert!(s.fast_launches() >= 1, "f's launches took the fast path");
        let before = launches();
        // SAFETY: refused before the driver.
        let r = unsafe { s.launch(&stream, &g, &cfg, &params![&x]) };
        assert!(
            matches!(r, Err(cudakit::Error::ArgumentType { index: 0, .. })),
            "a float buffer for g's double*: {r:?}"
        );
        assert_eq!(launches(), before, "reached the driver");
        Ok(())
    })
    .expect("scope");
    set_params(&lib, &[]);
}
