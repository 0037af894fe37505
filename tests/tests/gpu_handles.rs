//! Hardware tests of issue 20's handle and ordering items:
//!
//! - textures, surfaces and tensor maps passed as themselves reach the
//!   kernel as their handles and descriptor bytes (the raw values, read on
//!   the host through the documented escapes, are what the kernel got);
//! - a texture, surface or tensor map of another context is refused before
//!   the driver (`Error::ArgumentContextMismatch`), with and without peer
//!   access between the devices. This needs two GPUs: on one it is
//!   reported as not run, never passed silently;
//! - `Global::copy_from_host` waits for kernels queued before it (they read
//!   the old value) and has landed before it returns (kernels queued after
//!   it read the new one).

use cudakit::compile::module::Module;
use cudakit::compile::program::Program;
use cudakit::memory::array::ArrayShape;
use cudakit::memory::tensor_map::{TensorDataType, TensorMap, TiledLayout};
use cudakit::memory::texture::{Surface, Texture, TextureDesc};
use cudakit::work::launch::LaunchConfig;
use cudakit::{params, Context, Error};
use cudakit_suite::rng::Rng;

const KERNELS: &str = r#"
// A CUtensorMap's 128 bytes, as kernels/gemm_sm90.cu declares them.
struct __align__(64) TensorMapBytes { unsigned long long w[16]; };

extern "C" __global__ void texture_arg(cudaTextureObject_t t, unsigned long long* handle,
                                       float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0) handle[0] = (unsigned long long)t;
    if (i < n) out[i] = tex1Dfetch<float>(t, i);
}
// Adds 1 to every element of a w x h float surface.
extern "C" __global__ void surface_arg(cudaSurfaceObject_t s, unsigned long long* handle,
                                       int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x == 0 && y == 0) handle[0] = (unsigned long long)s;
    if (x < w && y < h) {
        float v = surf2Dread<float>(s, x * (int)sizeof(float), y);
        surf2Dwrite(v + 1.0f, s, x * (int)sizeof(float), y);
    }
}
extern "C" __global__ void tensor_map_arg(const __grid_constant__ TensorMapBytes m,
                                          unsigned long long* words) {
    int i = threadIdx.x;
    if (i < 16) words[i] = m.w[i];
}

__device__ int global_value;
// Spins for `cycles` clock cycles, then reads the global.
extern "C" __global__ void read_late(int* out, long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) {}
    out[0] = global_value;
}
"#;

fn module(ctx: &Context) -> Module<'_> {
    let compiled = Program::new("gpu_handles.cu", KERNELS)
        .compile_for(ctx)
        .unwrap_or_else(|e| panic!("{e}"));
    ctx.load_module(&compiled).unwrap()
}

/// The tests of this file share device 0's primary context and its arena;
/// each holds this lock so that its leak check sees only its own
/// allocations.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

fn assert_no_leaks(ctx: &Context) {
    let report = ctx.leak_report();
    assert!(report.is_empty(), "leaked: {report}");
}

fn has_tma(ctx: &Context) -> bool {
    ctx.limits().compute_capability.0 >= 9
}

/// A 64 x 64 f32 matrix map over `buf`, moved in 16 x 16 boxes.
fn matrix_layout() -> TiledLayout {
    TiledLayout::matrix(TensorDataType::F32, 64, 64, 64, 16, 16)
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn objects_passed_as_themselves_arrive_as_their_handles() {
    let _serial = serial();
    let ctx = Context::new(0).expect("device 0");
    let module = module(&ctx);
    let stream = ctx.stream().unwrap();
    let mut rng = Rng::new();
    let handle = ctx.alloc::<u64>(1).unwrap();

    // A texture over linear memory: the kernel gets the handle and reads
    // the memory through it.
    let n = 1000usize;
    let data = rng.vec_f32(n);
    let buf = ctx.upload(&data).unwrap();
    let out = ctx.alloc::<f32>(n).unwrap();
    out.fill(f32::NAN).unwrap();
    let texture = Texture::from_linear(&buf, &TextureDesc::new()).unwrap();
    let f = module.function("texture_arg").unwrap();
    ctx.scope(|s| {
        let cfg = LaunchConfig::for_elements(n, 128)?;
        // SAFETY: writes one handle and n floats, reads n texels.
        unsafe {
            s.launch(
                &stream,
                &f,
                &cfg,
                &params![&texture, &handle, &out, n as i32],
            )
        }
    })
    .unwrap();
    assert_eq!(handle.to_vec().unwrap(), [texture.handle().as_raw()]);
    assert_eq!(out.to_vec().unwrap(), data);
    drop(texture);

    // A surface: the kernel gets the handle and writes the array through it.
    let (w, h) = (37usize, 11usize);
    let start = rng.vec_f32(w * h);
    let mut array = ctx.surface_array::<f32>(ArrayShape::d2(w, h)).unwrap();
    array.copy_from_host(&start).unwrap();
    {
        let mut surface = Surface::new(&mut array).unwrap();
        let raw = surface.handle().as_raw();
        let f = module.function("surface_arg").unwrap();
        ctx.scope(|s| {
            let cfg = LaunchConfig::for_elements_2d(w, h, (16, 8))?;
            // SAFETY: one handle, and the w x h elements of the surface.
            unsafe {
                s.launch(
                    &stream,
                    &f,
                    &cfg,
                    &params![&mut surface, &handle, w as i32, h as i32],
                )
            }
        })
        .unwrap();
        assert_eq!(handle.to_vec().unwrap(), [raw]);
    }
    let got = array.to_vec().unwrap();
    let want: Vec<f32> = start.iter().map(|v| v + 1.0).collect();
    assert_eq!(got, want);
    drop(array);

    // A tensor map: the kernel gets the descriptor's 128 bytes unchanged.
    if has_tma(&ctx) {
        let matrix = ctx.alloc::<f32>(64 * 64).unwrap();
        let map = TensorMap::tiled(&matrix, matrix_layout()).unwrap();
        let words = ctx.alloc::<u64>(16).unwrap();
        let f = module.function("tensor_map_arg").unwrap();
        ctx.scope(|s| {
            // SAFETY: writes 16 words; reads only the parameter.
            unsafe {
                s.launch(
                    &stream,
                    &f,
                    &LaunchConfig::new(1, 32),
                    &params![&map, &words],
                )
            }
        })
        .unwrap();
        assert_eq!(words.to_vec().unwrap(), map.descriptor().as_raw().opaque);
        assert_ne!(map.descriptor().as_raw().opaque, [0u64; 16]);
    } else {
        println!("tensor map part skipped: the device is before sm_90 (no TMA)");
    }
    drop((handle, buf, out, module, stream));
    assert_no_leaks(&ctx);
}

/// Asserts that `result` is the refusal of a device-1 argument at `index`
/// by a kernel of device 0.
fn refused(result: cudakit::Result<()>, index: usize, what: &str) {
    match result {
        Err(Error::ArgumentContextMismatch {
            index: i,
            argument_device: 1,
            kernel_device: 0,
            ..
        }) if i == index => {}
        other => panic!("{what}: expected ArgumentContextMismatch at {index}, got {other:?}"),
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn objects_of_another_context_are_refused_before_the_driver() {
    let _serial = serial();
    let count = cudakit::Device::count().unwrap_or(0);
    if count < 2 {
        cudakit_suite::not_run(format!(
            "needs 2 GPUs (a texture, surface and tensor map of one device's context passed \
             to a kernel of another's; cudakit's contexts are primary contexts, one per \
             device), found {count}"
        ));
    }
    let ctx0 = Context::new(0).expect("device 0");
    let ctx1 = Context::new(1).expect("device 1");
    assert!(!ctx0.same(&ctx1));
    let module = module(&ctx0);
    let stream = ctx0.stream().unwrap();
    let handle = ctx0.alloc::<u64>(1).unwrap();
    let out = ctx0.alloc::<f32>(64).unwrap();
    let words = ctx0.alloc::<u64>(16).unwrap();

    // Objects of device 1's context.
    let buf1 = ctx1.upload(&[1.0f32; 64]).unwrap();
    let texture = Texture::from_linear(&buf1, &TextureDesc::new()).unwrap();
    let mut array1 = ctx1.surface_array::<f32>(ArrayShape::d2(8, 8)).unwrap();
    let mut surface = Surface::new(&mut array1).unwrap();
    let matrix1 = ctx1.alloc::<f32>(64 * 64).unwrap();
    let map = has_tma(&ctx1).then(|| TensorMap::tiled(&matrix1, matrix_layout()).unwrap());

    let (ft, fs, fm) = (
        module.function("texture_arg").unwrap(),
        module.function("surface_arg").unwrap(),
        module.function("tensor_map_arg").unwrap(),
    );
    let cfg = LaunchConfig::new(1, 64);
    let mut try_all = |when: &str| {
        let r = ctx0.scope(|s| {
            // SAFETY: refused before the driver.
            unsafe { s.launch(&stream, &ft, &cfg, &params![&texture, &handle, &out, 64i32]) }
        });
        refused(r, 0, &format!("texture {when}"));
        let r = ctx0.scope(|s| {
            // SAFETY: refused before the driver.
            unsafe {
                s.launch(
                    &stream,
                    &fs,
                    &cfg,
                    &params![&mut surface, &handle, 8i32, 8i32],
                )
            }
        });
        refused(r, 0, &format!("surface {when}"));
        if let Some(map) = &map {
            let r = ctx0.scope(|s| {
                // SAFETY: refused before the driver.
                unsafe { s.launch(&stream, &fm, &cfg, &params![map, &words]) }
            });
            refused(r, 0, &format!("tensor map {when}"));
        }
    };
    try_all("without peer access");
    // Peer access extends device pointers, not objects or tensor maps.
    if ctx0.can_access_peer(&ctx1).unwrap_or(false) {
        ctx0.enable_peer_access(&ctx1).unwrap();
        try_all("with peer access");
        // SAFETY: nothing else queues work meanwhile; no device-launched graph.
        unsafe { ctx0.disable_peer_access(&ctx1) }.unwrap();
        assert!(!ctx0.peer_access_enabled(&ctx1));
    } else {
        println!("the peer-access case is not run: device 0 cannot reach device 1");
    }
    if map.is_none() {
        println!("tensor map case not run: device 1 is before sm_90 (no TMA)");
    }
    // Nothing reached the driver: neither context is poisoned.
    assert!(ctx0.poisoned().is_none(), "{:?}", ctx0.poisoned());
    assert!(ctx1.poisoned().is_none(), "{:?}", ctx1.poisoned());
    drop((map, surface, texture));
    drop((array1, matrix1, buf1));
    drop((handle, out, words, module, stream));
    assert_no_leaks(&ctx0);
    assert_no_leaks(&ctx1);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn global_copy_from_host_waits_for_kernels_queued_before_it() {
    let _serial = serial();
    let ctx = Context::new(0).expect("device 0");
    let module = module(&ctx);
    let stream = ctx.stream().unwrap();
    let global = module.global::<i32>("global_value").unwrap();
    let f = module.function("read_late").unwrap();
    let out = ctx.alloc::<i32>(1).unwrap();
    // About 0.1 s at the H200's 1.98 GHz: far longer than the copy takes
    // to reach the device when nothing orders it after the kernel.
    let cycles: i64 = 200_000_000;
    global.copy_from_host(&[1]).unwrap();
    ctx.scope(|s| {
        // SAFETY: writes one int of `out`.
        unsafe {
            s.launch(
                &stream,
                &f,
                &LaunchConfig::new(1, 1),
                &params![&out, cycles],
            )
        }?;
        // Queued work of this scope is pending: the copy waits for it.
        global.copy_from_host(&[2])
    })
    .unwrap();
    assert_eq!(
        out.to_vec().unwrap(),
        [1],
        "the kernel queued before the copy read the new value"
    );
    // A kernel queued after the copy reads the new value.
    ctx.scope(|s| {
        // SAFETY: as above.
        unsafe { s.launch(&stream, &f, &LaunchConfig::new(1, 1), &params![&out, 0i64]) }
    })
    .unwrap();
    assert_eq!(out.to_vec().unwrap(), [2]);
    drop((out, module, stream));
    assert_no_leaks(&ctx);
}
