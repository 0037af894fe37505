//! Context-independent libraries (`cudakit::Library`) on the test-only
//! stand-in libcuda: kernels resolved through name expressions, plain C++
//! names and `extern "C"` names; an unknown name refused with the names the
//! library has; a library kernel made a function of the context and
//! launched through `Scope::launch` with its arguments checked (a wrong
//! type refused before `cuLaunchKernel`); the same kernel a function of two
//! devices' contexts; lookups and launches from two threads; globals; a
//! refused load; an unload deferred off a capturing thread; one unload per
//! library, none twice.
//!
//! Process-global (`CUDAKIT_LIBCUDA`), so in its own test binary and one
//! test function. Needs libnvrtc (`CUDAKIT_LIBNVRTC`), as `compile.rs` does.

#[path = "../../cuda-sys/tests/support/stub.rs"]
mod stub;

use cudakit::compile::program::{Arch, Output, Program};
use cudakit::{params, Context, Error, LaunchConfig, Library};

const SOURCE: &str = r#"
__device__ float bias[4];

template <typename T>
__global__ void scale(T* x, T a, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * a + T(bias[i % 4]);
}

extern "C" __global__ void add_one(float* x, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}
"#;

struct Recorder {
    lib: libloading::Library,
}

impl Recorder {
    fn set_params(&self, layout: &[(usize, usize)]) {
        let flat: Vec<usize> = layout.iter().flat_map(|&(o, s)| [o, s]).collect();
        // SAFETY: the stand-in exports this function with this signature.
        let f = unsafe {
            self.lib
                .get::<unsafe extern "C" fn(*const usize, usize)>(b"stub_set_params\0")
        }
        .expect("stub_set_params");
        // SAFETY: `flat` holds 2 * layout.len() usizes.
        unsafe { f(flat.as_ptr(), layout.len()) };
    }

    fn launches(&self) -> u64 {
        // SAFETY: as above.
        let f = unsafe {
            self.lib
                .get::<unsafe extern "C" fn() -> u64>(b"stub_launch_count\0")
        }
        .expect("stub_launch_count");
        // SAFETY: no arguments.
        unsafe { f() }
    }

    /// Loads, unloads, bad handles, kernel functions, live libraries.
    fn library_counts(&self) -> [u64; 5] {
        // SAFETY: as above.
        let f = unsafe {
            self.lib
                .get::<unsafe extern "C" fn(*mut u64)>(b"stub_library_counts\0")
        }
        .expect("stub_library_counts");
        let mut out = [0u64; 5];
        // SAFETY: `out` has 5 slots.
        unsafe { f(out.as_mut_ptr()) };
        out
    }

    fn last_launch(&self) -> Vec<u8> {
        // SAFETY: as above.
        let f = unsafe {
            self.lib
                .get::<unsafe extern "C" fn(*mut u8, usize) -> usize>(b"stub_last_launch\0")
        }
        .expect("stub_last_launch");
        let mut out = vec![0u8; 256];
        // SAFETY: `out` has 256 writable bytes.
        let n = unsafe { f(out.as_mut_ptr(), out.len()) };
        out.truncate(n.min(256));
        out
    }
}

#[test]
fn library_kernels_resolve_launch_and_unload_once() {
    let path = stub::build_stub("");
    std::env::set_var("CUDAKIT_LIBCUDA", &path);
    // SAFETY: the stand-in library's initialisers are Rust statics only.
    let lib = unsafe { libloading::Library::new(&path) }.expect("open the stand-in");
    let rec = Recorder { lib };

    let compiled = Program::new("lib.cu", SOURCE)
        .arch(Arch::Sm(90))
        .output(Output::Ptx)
        .name_expression("scale<float>")
        .name_expression("&bias")
        .compile()
        .expect("NVRTC compiles the kernels");

    // No context is needed to load a library or to look up its kernels.
    let library = Library::load(&compiled).expect("library");
    assert_eq!(rec.library_counts()[0], 1, "one load");
    assert!(library.ptx_entries().is_some(), "the library keeps its PTX");

    // Name expression, plain C++ name, extern "C" name.
    let scale = library.kernel("scale<float>").expect("name expression");
    assert!(
        scale.symbol().starts_with("_Z5scaleIfEvPT_S0_j"),
        "{}",
        scale.symbol()
    );
    assert_eq!(
        library.kernel("scale").expect("plain name").symbol(),
        scale.symbol()
    );
    assert_eq!(
        library.kernel("add_one").expect("extern C").symbol(),
        "add_one"
    );
    let symbols = library.kernel_symbols().expect("enumerated");
    assert_eq!(symbols.len(), 2, "{symbols:?}");

    // An unknown name lists what the library has.
    match library.kernel("scale<double>") {
        Err(Error::UnknownFunction { name, known }) => {
            assert_eq!(name, "scale<double>");
            assert!(known.iter().any(|k| k == "scale<float>"), "{known:?}");
            assert!(known.iter().any(|k| k == "add_one"), "{known:?}");
        }
        other => panic!("expected UnknownFunction, got {other:?}"),
    }
    assert!(matches!(
        library.kernel("bad\0name"),
        Err(Error::InteriorNul { .. })
    ));

    // A function of the context, launched and checked like a module's.
    let ctx = Context::new(0).expect("context on the stand-in");
    let f = scale.function(&ctx).expect("function");
    assert!(f.library().is_some() && f.module().is_none());
    assert_eq!(f.context().device().ordinal(), 0);
    rec.set_params(&[(0, 8), (8, 4), (12, 4)]);
    let x = ctx.alloc::<f32>(64).expect("alloc");
    let stream = ctx.stream().expect("stream");
    let cfg = LaunchConfig::new(1, 64);
    let before = rec.launches();
    // SAFETY: the stand-in runs nothing.
    ctx.scope(|s| unsafe { s.launch(&stream, &f, &cfg, &params![&x, 2.5f32, 64u32]) })
        .expect("launch");
    assert_eq!(rec.launches(), before + 1);
    let record = rec.last_launch();
    let args = &record[28..];
    assert_eq!(&args[..8], &x.device_ptr().as_raw().to_ne_bytes());
    assert_eq!(&args[8..12], &2.5f32.to_ne_bytes());
    assert_eq!(&args[12..16], &64u32.to_ne_bytes());
    // A wrong type is refused before the driver.
    // SAFETY: as above.
    let err = ctx
        .scope(|s| unsafe { s.launch(&stream, &f, &cfg, &params![&x, 2.5f64, 64u32]) })
        .unwrap_err();
    assert!(
        matches!(err, Error::ArgumentType { index: 1, .. }),
        "{err:?}"
    );
    // A wrong count too (the parameter table has three).
    // SAFETY: as above.
    let err = ctx
        .scope(|s| unsafe { s.launch(&stream, &f, &cfg, &params![&x, 2.5f32]) })
        .unwrap_err();
    assert!(matches!(err, Error::ArgumentCount { .. }), "{err:?}");
    assert_eq!(
        rec.launches(),
        before + 1,
        "nothing refused reached the driver"
    );

    // A declared signature for the extern "C" kernel, checked against the
    // parameter table and then at every launch.
    rec.set_params(&[(0, 8), (8, 4)]);
    let add = library
        .function_with_signature(&ctx, "add_one", "float* x, unsigned n")
        .expect("declared");
    assert!(matches!(
        library.function_with_signature(&ctx, "add_one", "float* x"),
        Err(Error::DeclaredSignature { .. })
    ));
    // SAFETY: the stand-in runs nothing.
    let err = ctx
        .scope(|s| unsafe { s.launch(&stream, &add, &cfg, &params![&x, 64i32]) })
        .unwrap_err();
    assert!(
        matches!(err, Error::ArgumentType { index: 1, .. }),
        "{err:?}"
    );
    // SAFETY: as above.
    ctx.scope(|s| unsafe { s.launch(&stream, &add, &cfg, &params![&x, 64u32]) })
        .expect("launch");
    assert_eq!(rec.launches(), before + 2);
    drop(add);
    rec.set_params(&[(0, 8), (8, 4), (12, 4)]);

    // Two threads: each looks up, makes a function and launches.
    std::thread::scope(|t| {
        for _ in 0..2 {
            t.spawn(|| {
                let f = library.function(&ctx, "scale<float>").expect("function");
                let stream = ctx.stream().expect("stream");
                for _ in 0..10 {
                    // SAFETY: the stand-in runs nothing.
                    ctx.scope(|s| unsafe {
                        s.launch(&stream, &f, &cfg, &params![&x, 1.5f32, 64u32])
                    })
                    .expect("launch from a thread");
                }
            });
        }
    });
    assert_eq!(rec.launches(), before + 22);

    // A second device's context: the same kernel becomes a function of
    // it, launched there; the first context's function is refused in the
    // second's scope before the driver.
    // SAFETY: the stand-in exports this function with this signature.
    let devices = unsafe {
        rec.lib
            .get::<unsafe extern "C" fn(i32)>(b"stub_set_device_count\0")
    }
    .expect("stub_set_device_count");
    // SAFETY: a plain integer argument.
    unsafe { devices(2) };
    let ctx1 = Context::new(1).expect("device 1");
    let f1 = scale.function(&ctx1).expect("function of device 1");
    assert_eq!(f1.context().device().ordinal(), 1);
    let x1 = ctx1.alloc::<f32>(64).expect("alloc on device 1");
    let stream1 = ctx1.stream().expect("stream on device 1");
    let launched = rec.launches();
    // SAFETY: the stand-in runs nothing.
    ctx1.scope(|s| unsafe { s.launch(&stream1, &f1, &cfg, &params![&x1, 2.0f32, 64u32]) })
        .expect("launch on device 1");
    // SAFETY: as above.
    let err = ctx1
        .scope(|s| unsafe { s.launch(&stream1, &f, &cfg, &params![&x1, 2.0f32, 64u32]) })
        .unwrap_err();
    assert!(matches!(err, Error::ContextMismatch { .. }), "{err:?}");
    assert_eq!(rec.launches(), launched + 1);
    drop((f1, x1, stream1));

    // Globals, by name expression and plain name.
    let bias = library.global::<f32>(&ctx, "&bias").expect("global");
    assert_eq!(bias.len(), 4);
    assert_eq!(library.global::<f32>(&ctx, "bias").unwrap().len(), 4);

    // A stream-ordered write of the variable (`Scope::copy_to_global`,
    // issue 26): kernels read it without naming it, so the write is ordered
    // after the scope's other streams, and each other stream waits for it
    // once before its next operation.
    {
        let waits = || -> u64 {
            // SAFETY: exported by the stand-in with this signature.
            let f = unsafe {
                rec.lib
                    .get::<unsafe extern "C" fn() -> u64>(b"stub_stream_waits\0")
            }
            .expect("stub_stream_waits");
            // SAFETY: no arguments.
            unsafe { f() }
        };
        let (a, b) = (ctx.stream().expect("a"), ctx.stream().expect("b"));
        let xb = ctx.alloc::<f32>(64).expect("x on b");
        let zeros = vec![0f32; 64];
        let values = [1.0f32, 2.0, 3.0, 4.0];
        ctx.scope(|s| {
            s.copy_to_device(&b, &zeros, &xb)?;
            let w = waits();
            s.copy_to_global(&a, &values, &bias)?;
            assert_eq!(
                waits() - w,
                1,
                "the write waits for the scope's other stream"
            );
            let w = waits();
            // SAFETY: the stand-in runs nothing.
            unsafe { s.launch(&b, &f, &cfg, &params![&xb, 2.0f32, 64u32])? };
            assert_eq!(waits() - w, 1, "a later launch on b waits for the write");
            let w = waits();
            // SAFETY: as above.
            unsafe { s.launch(&b, &f, &cfg, &params![&xb, 2.0f32, 64u32])? };
            assert_eq!(waits() - w, 0, "once");
            Ok(())
        })
        .expect("a stream-ordered variable write");
        // A stream captured when it first meets the barrier waits at its
        // first use outside the capture (the captured work runs at
        // replays); and a write on a captured stream is refused.
        ctx.scope(|s| {
            s.copy_to_device(&b, &zeros, &xb)?;
            let graph = s.capture(&b, || {
                // Written on a (not captured) while b captures; b's captured
                // launch meets the barrier but cannot wait for it.
                s.copy_to_global(&a, &values, &bias)?;
                // SAFETY: the stand-in runs nothing.
                unsafe { s.launch(&b, &f, &cfg, &params![&xb, 2.0f32, 64u32]) }?;
                let r = s.copy_to_global(&b, &values, &bias);
                assert!(
                    matches!(r, Err(Error::IllegalDuringCapture { .. })),
                    "{r:?}"
                );
                Ok(())
            });
            drop(graph);
            let w = waits();
            // SAFETY: as above.
            unsafe { s.launch(&b, &f, &cfg, &params![&xb, 2.0f32, 64u32])? };
            assert_eq!(waits() - w, 1, "b waits for the write after its capture");
            Ok(())
        })
        .expect("a barrier met inside a capture");
        let short = [1.0f32; 3];
        let r = ctx.scope(|s| s.copy_to_global(&a, &short, &bias));
        assert!(matches!(r, Err(Error::LengthMismatch { .. })), "{r:?}");
    }
    assert!(matches!(
        library.global::<[f32; 3]>(&ctx, "bias"),
        Err(Error::Global { .. })
    ));
    assert!(matches!(
        library.global::<f32>(&ctx, "nope"),
        Err(Error::Global { .. })
    ));
    drop(bias);

    // Unloaded once, on drop; never twice.
    drop(f);
    drop(scale);
    drop(library);
    let counts = rec.library_counts();
    assert_eq!((counts[1], counts[2], counts[4]), (1, 0, 0), "{counts:?}");

    // An image, unloaded explicitly.
    let ptx = compiled.ptx().expect("ptx").to_owned();
    let from_image = Library::from_image(ptx.as_bytes()).expect("from an image");
    let k = from_image.kernel("add_one").expect("extern C");
    let g = k.function(&ctx).expect("function");
    drop(g);
    drop(k);
    from_image.unload().expect("unload");
    let counts = rec.library_counts();
    assert_eq!((counts[0], counts[1], counts[2]), (2, 2, 0), "{counts:?}");
    assert!(matches!(
        Library::from_image(b""),
        Err(Error::ZeroLength { .. })
    ));
    // A refused load is a typed error naming the call.
    match Library::from_image(b"not ptx at all") {
        Err(Error::ModuleLoad { call, .. }) => assert_eq!(call, "cuLibraryLoadData"),
        other => panic!("expected ModuleLoad, got {other:?}"),
    }
    assert_eq!(rec.library_counts()[0], 2, "nothing loaded");

    // Dropped on a capturing thread, a library is not unloaded there (the
    // driver would refuse and invalidate the capture): the next library
    // drop on a thread that may call the driver unloads it.
    let deferred = Library::from_image(ptx.as_bytes()).expect("library");
    ctx.scope(|s| {
        s.capture(&stream, || {
            drop(deferred);
            Ok(())
        })
        .map(drop)
    })
    .expect("the capture is not disturbed");
    let counts = rec.library_counts();
    assert_eq!((counts[0], counts[1], counts[4]), (3, 2, 1), "{counts:?}");
    drop(Library::from_image(ptx.as_bytes()).expect("library"));
    let counts = rec.library_counts();
    assert_eq!(
        (counts[0], counts[1], counts[2], counts[4]),
        (4, 4, 0, 0),
        "{counts:?}"
    );
}
