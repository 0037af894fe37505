//! Hardware tests of CUDA arrays, pitched memory, texture and surface
//! objects (issue 13): every copy path with fresh random data and poisoned
//! destinations; texture sampling under every address mode, point and
//! linear filtering, normalized and not, at 1D, 2D, 3D and layered,
//! recomputed on the CPU with the hardware's formulas (docs/textures.md);
//! surface writes read back; the error cases; the arena back to zero.
//!
//! Sample coordinates are k/8 + 1/16 texels: never on a texel boundary
//! (where point sampling and mirroring could round either way), and the
//! linear filter's weight frac(x - 0.5) is then a multiple of 1/16, exact
//! in the hardware's 8-bit fraction. Sizes sampled with normalized
//! coordinates are powers of two, so u = x / n is exact too.

use cudakit::compile::module::Module;
use cudakit::compile::program::Program;
use cudakit::memory::array::{ArrayElement, ArrayShape};
use cudakit::memory::texture::{AddressMode, FilterMode, ReadMode, Surface, Texture, TextureDesc};
use cudakit::work::launch::LaunchConfig;
use cudakit::{params, Context, Error, F16};
use cudakit_suite::reference::POISON_U32;
use cudakit_suite::rng::Rng;

fn ctx() -> Context {
    Context::new(0).expect("device 0")
}

/// The tests of this file share one primary context and its arena; each
/// holds this lock so that its leak check sees only its own allocations.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

fn assert_no_leaks(ctx: &Context) {
    let report = ctx.leak_report();
    assert!(report.is_empty(), "leaked: {report}");
}

const KERNELS: &str = r#"
extern "C" __global__ void sample1d(cudaTextureObject_t t, const float* u, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1D<float>(t, u[i]);
}
extern "C" __global__ void sample2d(cudaTextureObject_t t, const float* u, const float* v, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<float>(t, u[i], v[i]);
}
extern "C" __global__ void sample3d(cudaTextureObject_t t, const float* u, const float* v, const float* w,
                                    float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex3D<float>(t, u[i], v[i], w[i]);
}
extern "C" __global__ void sample1d_layered(cudaTextureObject_t t, const float* u, const int* layer,
                                            float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1DLayered<float>(t, u[i], layer[i]);
}
extern "C" __global__ void sample2d_layered(cudaTextureObject_t t, const float* u, const float* v,
                                            const int* layer, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2DLayered<float>(t, u[i], v[i], layer[i]);
}
extern "C" __global__ void sample2d_float4(cudaTextureObject_t t, const float* u, const float* v,
                                           float4* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<float4>(t, u[i], v[i]);
}
extern "C" __global__ void sample2d_ushort(cudaTextureObject_t t, const float* u, const float* v,
                                           unsigned short* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<unsigned short>(t, u[i], v[i]);
}
extern "C" __global__ void fetch_float(cudaTextureObject_t t, const int* idx, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<float>(t, idx[i]);
}
extern "C" __global__ void fetch_int(cudaTextureObject_t t, const int* idx, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<int>(t, idx[i]);
}
// Reads every element through the surface, writes 2 * v + x + 1000 * y back.
extern "C" __global__ void surface2d(cudaSurfaceObject_t s, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) {
        float v = surf2Dread<float>(s, x * (int)sizeof(float), y);
        surf2Dwrite(2.0f * v + (float)x + 1000.0f * (float)y, s, x * (int)sizeof(float), y);
    }
}
// Writes uchar4(x, y, z, x ^ y ^ z) into a 3D surface.
extern "C" __global__ void surface3d(cudaSurfaceObject_t s, int w, int h, int d) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z;
    if (x < w && y < h && z < d) {
        uchar4 v = make_uchar4(x, y, z, x ^ y ^ z);
        surf3Dwrite(v, s, x * 4, y, z);
    }
}
// Adds `layer + 1` to every element of a layered 2D int surface.
extern "C" __global__ void surface_layered(cudaSurfaceObject_t s, int w, int h, int layers) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int l = blockIdx.z;
    if (x < w && y < h && l < layers) {
        int v = surf2DLayeredread<int>(s, x * 4, y, l);
        surf2DLayeredwrite(v + l + 1, s, x * 4, y, l);
    }
}
"#;

fn module(ctx: &Context) -> Module<'_> {
    let compiled = Program::new("gpu_texture.cu", KERNELS)
        .compile_for(ctx)
        .unwrap_or_else(|e| panic!("{e}"));
    ctx.load_module(&compiled).unwrap()
}

// ---------------------------------------------------------------------------
// The CPU reference of texture sampling
// ---------------------------------------------------------------------------

/// The texel index `i` of an axis of `n` texels under `mode`; `None` for
/// the border.
fn address(i: i64, n: i64, mode: AddressMode) -> Option<i64> {
    match mode {
        AddressMode::Wrap => Some(i.rem_euclid(n)),
        AddressMode::Clamp => Some(i.clamp(0, n - 1)),
        AddressMode::Mirror => {
            let m = i.rem_euclid(2 * n);
            Some(if m >= n { 2 * n - 1 - m } else { m })
        }
        AddressMode::Border => (0..n).contains(&i).then_some(i),
        _ => unreachable!(),
    }
}

/// How one sample is taken.
#[derive(Debug, Clone, Copy)]
struct Sampling {
    modes: [AddressMode; 3],
    filter: FilterMode,
    normalized: bool,
    border: f64,
}

/// The texture's value at `coords` (one per dimension, as the kernel passes
/// them) over `data` of extents `dims` (x fastest), per the hardware's
/// formulas: x = u * n for normalized coordinates; point: texel floor(x);
/// linear: taps floor(x - 0.5) and the next, weight frac(x - 0.5), each tap
/// addressed on its own (a border tap reads the border color).
fn reference(data: &[f64], dims: &[usize], coords: &[f64], s: Sampling) -> f64 {
    let rank = dims.len();
    let mut taps: Vec<(Vec<i64>, f64)> = vec![(Vec::new(), 1.0)];
    for axis in 0..rank {
        let n = dims[axis] as f64;
        let x = if s.normalized {
            coords[axis] * n
        } else {
            coords[axis]
        };
        let axis_taps: Vec<(i64, f64)> = match s.filter {
            FilterMode::Point => vec![(x.floor() as i64, 1.0)],
            FilterMode::Linear => {
                let xb = x - 0.5;
                let i0 = xb.floor();
                let a = xb - i0;
                vec![(i0 as i64, 1.0 - a), (i0 as i64 + 1, a)]
            }
            _ => unreachable!(),
        };
        taps = taps
            .into_iter()
            .flat_map(|(idx, w)| {
                axis_taps.iter().map(move |&(i, wa)| {
                    let mut idx = idx.clone();
                    idx.push(i);
                    (idx, w * wa)
                })
            })
            .collect();
    }
    let mut sum = 0.0;
    for (idx, w) in taps {
        if w == 0.0 {
            continue;
        }
        let mut flat = 0usize;
        let mut stride = 1usize;
        let mut border = false;
        for axis in 0..rank {
            match address(idx[axis], dims[axis] as i64, s.modes[axis]) {
                Some(i) => flat += i as usize * stride,
                None => border = true,
            }
            stride *= dims[axis];
        }
        sum += w * if border { s.border } else { data[flat] };
    }
    sum
}

/// A coordinate k/8 + 1/16 texels with x in [-1.5 n, 2.5 n), as the kernel
/// is given it (divided by n when normalized).
fn coordinate(rng: &mut Rng, n: usize, normalized: bool) -> f32 {
    let k = rng.range(0, 32 * n) as i64 - 12 * n as i64;
    let x = k as f64 / 8.0 + 1.0 / 16.0;
    let value = if normalized { x / n as f64 } else { x };
    let f = value as f32;
    assert_eq!(f as f64, value, "coordinates are exact in f32");
    f
}

/// The configurations worth testing: every mode with normalized
/// coordinates, clamp and border without; both filters.
fn configurations(border: f64) -> Vec<Sampling> {
    let mut out = Vec::new();
    for normalized in [true, false] {
        for mode in AddressMode::ALL {
            if !normalized && matches!(mode, AddressMode::Wrap | AddressMode::Mirror) {
                continue;
            }
            for filter in [FilterMode::Point, FilterMode::Linear] {
                out.push(Sampling {
                    modes: [mode; 3],
                    filter,
                    normalized,
                    border,
                });
            }
        }
    }
    // Mixed modes, one per dimension.
    out.push(Sampling {
        modes: [AddressMode::Wrap, AddressMode::Mirror, AddressMode::Border],
        filter: FilterMode::Linear,
        normalized: true,
        border,
    });
    out.push(Sampling {
        modes: [AddressMode::Border, AddressMode::Clamp, AddressMode::Wrap],
        filter: FilterMode::Linear,
        normalized: true,
        border,
    });
    out
}

fn desc_of(s: Sampling) -> TextureDesc {
    TextureDesc::new()
        .address_per_dimension(s.modes)
        .filter(s.filter)
        .normalized_coordinates(s.normalized)
        .border_color([s.border as f32; 4])
}

/// Compares every sample; reports the first few differences with their
/// coordinates before failing.
fn check_samples(what: &str, got: &[f32], want: &[f64], coords: &[Vec<f32>], tolerance: f64) {
    let mut bad = Vec::new();
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        if !((g as f64) - w).abs().le(&tolerance) {
            let at: Vec<f32> = coords.iter().map(|c| c[i]).collect();
            bad.push(format!("  sample {i} at {at:?}: got {g}, want {w}"));
        }
    }
    assert!(
        bad.is_empty(),
        "{what}: {} of {} samples differ:\n{}",
        bad.len(),
        got.len(),
        bad.iter().take(12).cloned().collect::<Vec<_>>().join("\n")
    );
}

const SAMPLES: usize = 2048;
const BORDER: f64 = 0.625;

/// Samples an f32 array of `dims` (1, 2 or 3 of them) under every
/// configuration and checks each sample against the CPU.
fn sample_array(dims: &[usize]) {
    let _serial = serial();
    let ctx = ctx();
    let mut rng = Rng::new();
    println!("{}", rng.describe());
    let module = module(&ctx);
    let shape = match dims {
        [w] => ArrayShape::d1(*w),
        [w, h] => ArrayShape::d2(*w, *h),
        [w, h, d] => ArrayShape::d3(*w, *h, *d),
        _ => unreachable!(),
    };
    let texels: Vec<f32> = rng.vec_f32(shape.len());
    let data: Vec<f64> = texels.iter().map(|&v| v as f64).collect();
    let array = ctx.array::<f32>(shape).unwrap();
    array.copy_from_host(&texels).unwrap();
    let kernel = ["sample1d", "sample2d", "sample3d"][dims.len() - 1];
    let function = module.function(kernel).unwrap();
    let stream = ctx.stream().unwrap();
    let config = LaunchConfig::for_elements(SAMPLES, 128).unwrap();
    for s in configurations(BORDER) {
        // Measured on the H200: 1D and 2D filtering match the formulas to
        // f32 rounding; trilinear filtering differed by up to 6.0e-3 (of
        // texels in [-1, 1]) over two runs, even with exact weights. The
        // bound: the filter's arithmetic keeps 8 fractional bits (CUDA
        // documents 9-bit weights with 8 fractional bits), so each of the 8
        // taps may be off by 1/256 of its texel.
        let tolerance = if dims.len() == 3 && s.filter == FilterMode::Linear {
            8.0 / 256.0
        } else {
            1e-5
        };
        let coords: Vec<Vec<f32>> = dims
            .iter()
            .map(|&n| {
                (0..SAMPLES)
                    .map(|_| coordinate(&mut rng, n, s.normalized))
                    .collect()
            })
            .collect();
        let want: Vec<f64> = (0..SAMPLES)
            .map(|i| {
                let c: Vec<f64> = coords.iter().map(|axis| axis[i] as f64).collect();
                reference(&data, dims, &c, s)
            })
            .collect();
        let texture = Texture::from_array(&array, &desc_of(s)).unwrap();
        let inputs: Vec<_> = coords.iter().map(|c| ctx.upload(c).unwrap()).collect();
        let out = ctx.alloc::<f32>(SAMPLES).unwrap();
        out.fill(f32::from_bits(POISON_U32)).unwrap();
        ctx.scope(|sc| {
            let p = match inputs.as_slice() {
                [u] => params![&texture, u, &out, SAMPLES as i32],
                [u, v] => params![&texture, u, v, &out, SAMPLES as i32],
                [u, v, w] => params![&texture, u, v, w, &out, SAMPLES as i32],
                _ => unreachable!(),
            };
            // SAFETY: the kernel reads n coordinates per axis and writes n outputs.
            unsafe { sc.launch(&stream, &function, &config, &p) }
        })
        .unwrap();
        check_samples(
            &format!("{kernel} {dims:?} {s:?}"),
            &out.to_vec().unwrap(),
            &want,
            &coords,
            tolerance,
        );
    }
    drop((array, module));
    assert_no_leaks(&ctx);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn one_d_sampling_matches_the_cpu_under_every_mode_and_filter() {
    sample_array(&[64]);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn two_d_bilinear_sampling_matches_the_cpu_at_every_edge() {
    sample_array(&[16, 8]);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn three_d_trilinear_sampling_matches_the_cpu_at_every_edge() {
    sample_array(&[8, 4, 16]);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn layered_arrays_sample_within_one_layer() {
    let _serial = serial();
    let ctx = ctx();
    let mut rng = Rng::new();
    let module = module(&ctx);
    let stream = ctx.stream().unwrap();
    let config = LaunchConfig::for_elements(SAMPLES, 128).unwrap();
    for layered_dims in [&[32usize][..], &[16, 8][..]] {
        let layers = 5usize;
        let shape = match layered_dims {
            [w] => ArrayShape::layered_1d(*w, layers),
            [w, h] => ArrayShape::layered_2d(*w, *h, layers),
            _ => unreachable!(),
        };
        let texels = rng.vec_f32(shape.len());
        let per_layer: usize = layered_dims.iter().product();
        let array = ctx.array::<f32>(shape).unwrap();
        array.copy_from_host(&texels).unwrap();
        let kernel = if layered_dims.len() == 1 {
            "sample1d_layered"
        } else {
            "sample2d_layered"
        };
        let function = module.function(kernel).unwrap();
        for s in configurations(BORDER) {
            let coords: Vec<Vec<f32>> = layered_dims
                .iter()
                .map(|&n| {
                    (0..SAMPLES)
                        .map(|_| coordinate(&mut rng, n, s.normalized))
                        .collect()
                })
                .collect();
            let layer: Vec<i32> = (0..SAMPLES)
                .map(|_| rng.below(layers as u64) as i32)
                .collect();
            let want: Vec<f64> = (0..SAMPLES)
                .map(|i| {
                    let l = layer[i] as usize;
                    let data: Vec<f64> = texels[l * per_layer..(l + 1) * per_layer]
                        .iter()
                        .map(|&v| v as f64)
                        .collect();
                    let c: Vec<f64> = coords.iter().map(|axis| axis[i] as f64).collect();
                    reference(&data, layered_dims, &c, s)
                })
                .collect();
            let texture = array.texture(&desc_of(s)).unwrap();
            let inputs: Vec<_> = coords.iter().map(|c| ctx.upload(c).unwrap()).collect();
            let layer_d = ctx.upload(&layer).unwrap();
            let out = ctx.alloc::<f32>(SAMPLES).unwrap();
            out.fill(f32::from_bits(POISON_U32)).unwrap();
            ctx.scope(|sc| {
                let p = match inputs.as_slice() {
                    [u] => params![&texture, u, &layer_d, &out, SAMPLES as i32],
                    [u, v] => params![&texture, u, v, &layer_d, &out, SAMPLES as i32],
                    _ => unreachable!(),
                };
                // SAFETY: reads n coordinates and layers, writes n outputs.
                unsafe { sc.launch(&stream, &function, &config, &p) }
            })
            .unwrap();
            check_samples(
                &format!("{kernel} {layered_dims:?} x {layers} {s:?}"),
                &out.to_vec().unwrap(),
                &want,
                &coords,
                1e-5,
            );
        }
    }
    drop(module);
    assert_no_leaks(&ctx);
}

/// A 2D sample run on any texture with the `sample2d` kernel.
fn run_sample2d(
    ctx: &Context,
    module: &Module<'_>,
    texture: &Texture<'_>,
    u: &[f32],
    v: &[f32],
) -> Vec<f32> {
    let function = module.function("sample2d").unwrap();
    let stream = ctx.stream().unwrap();
    let n = u.len();
    let (ud, vd) = (ctx.upload(u).unwrap(), ctx.upload(v).unwrap());
    let out = ctx.alloc::<f32>(n).unwrap();
    out.fill(f32::from_bits(POISON_U32)).unwrap();
    ctx.scope(|sc| {
        let p = params![texture, &ud, &vd, &out, n as i32];
        // SAFETY: reads n coordinates, writes n outputs.
        unsafe { sc.launch(&stream, &function, &LaunchConfig::for_elements(n, 128)?, &p) }
    })
    .unwrap();
    out.to_vec().unwrap()
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn pitched_memory_of_odd_width_samples_like_an_array() {
    let _serial = serial();
    let ctx = ctx();
    let mut rng = Rng::new();
    let module = module(&ctx);
    let (w, h) = (37usize, 11usize);
    let texels = rng.vec_f32(w * h);
    let data: Vec<f64> = texels.iter().map(|&v| v as f64).collect();
    let pitched = ctx.alloc_pitched::<f32>(w, h).unwrap();
    assert!(pitched.pitch() >= w * 4);
    pitched.copy_from_host(&texels).unwrap();
    for mode in [AddressMode::Clamp, AddressMode::Border] {
        for filter in [FilterMode::Point, FilterMode::Linear] {
            let s = Sampling {
                modes: [mode; 3],
                filter,
                normalized: false,
                border: BORDER,
            };
            let texture = Texture::from_pitched(&pitched, &desc_of(s)).unwrap();
            let u: Vec<f32> = (0..SAMPLES)
                .map(|_| coordinate(&mut rng, w, false))
                .collect();
            let v: Vec<f32> = (0..SAMPLES)
                .map(|_| coordinate(&mut rng, h, false))
                .collect();
            let want: Vec<f64> = (0..SAMPLES)
                .map(|i| reference(&data, &[w, h], &[u[i] as f64, v[i] as f64], s))
                .collect();
            let got = run_sample2d(&ctx, &module, &texture, &u, &v);
            check_samples(
                &format!("pitched {w}x{h} {s:?}"),
                &got,
                &want,
                &[u, v],
                1e-5,
            );
        }
    }
    drop((pitched, module));
    assert_no_leaks(&ctx);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn eight_bit_texels_read_as_normalized_floats_filter_bilinearly() {
    let _serial = serial();
    let ctx = ctx();
    let mut rng = Rng::new();
    let module = module(&ctx);
    let (w, h) = (16usize, 16usize);
    // Unsigned: v / 255.
    let texels: Vec<u8> = (0..w * h).map(|_| rng.below(256) as u8).collect();
    let data: Vec<f64> = texels.iter().map(|&v| v as f64 / 255.0).collect();
    let array = ctx.array::<u8>(ArrayShape::d2(w, h)).unwrap();
    array.copy_from_host(&texels).unwrap();
    // Signed: max(v / 127, -1).
    let signed: Vec<i8> = (0..w * h).map(|_| rng.below(256) as u8 as i8).collect();
    let signed_data: Vec<f64> = signed
        .iter()
        .map(|&v| (v as f64 / 127.0).max(-1.0))
        .collect();
    let signed_array = ctx.array::<i8>(ArrayShape::d2(w, h)).unwrap();
    signed_array.copy_from_host(&signed).unwrap();
    for (name, data) in [("u8", &data), ("i8", &signed_data)] {
        for mode in AddressMode::ALL {
            let s = Sampling {
                modes: [mode; 3],
                filter: FilterMode::Linear,
                normalized: true,
                border: 0.0,
            };
            let desc = desc_of(s).read_mode(ReadMode::NormalizedFloat);
            let texture = if name == "u8" {
                array.texture(&desc).unwrap()
            } else {
                signed_array.texture(&desc).unwrap()
            };
            let u: Vec<f32> = (0..SAMPLES)
                .map(|_| coordinate(&mut rng, w, true))
                .collect();
            let v: Vec<f32> = (0..SAMPLES)
                .map(|_| coordinate(&mut rng, h, true))
                .collect();
            let want: Vec<f64> = (0..SAMPLES)
                .map(|i| reference(data, &[w, h], &[u[i] as f64, v[i] as f64], s))
                .collect();
            let got = run_sample2d(&ctx, &module, &texture, &u, &v);
            // Measured on the H200: unsigned 8-bit filtering matches to
            // 2e-4; signed 8-bit differed by up to 6.0e-3 over two runs. The
            // bound: the filter works in 8-bit fixed-point fractions (CUDA
            // documents 9-bit weights with 8 fractional bits), so each of
            // the 4 taps may be off by 1/256 of its texel (|texel| <= 1).
            let tolerance = if name == "u8" { 2e-4 } else { 4.0 / 256.0 };
            check_samples(
                &format!("{name} normalized {s:?}"),
                &got,
                &want,
                &[u, v],
                tolerance,
            );
        }
    }
    drop((array, signed_array, module));
    assert_no_leaks(&ctx);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn half_and_four_channel_textures_filter_every_channel() {
    let _serial = serial();
    let ctx = ctx();
    let mut rng = Rng::new();
    let module = module(&ctx);
    let (w, h) = (32usize, 8usize);
    let s = Sampling {
        modes: [AddressMode::Mirror; 3],
        filter: FilterMode::Linear,
        normalized: true,
        border: 0.0,
    };
    // Half texels, returned as floats.
    let halves = rng.vec_f16(w * h);
    let data: Vec<f64> = halves.iter().map(|v| v.to_f32() as f64).collect();
    let array = ctx.array::<F16>(ArrayShape::d2(w, h)).unwrap();
    array.copy_from_host(&halves).unwrap();
    let texture = array.texture(&desc_of(s)).unwrap();
    let u: Vec<f32> = (0..SAMPLES)
        .map(|_| coordinate(&mut rng, w, true))
        .collect();
    let v: Vec<f32> = (0..SAMPLES)
        .map(|_| coordinate(&mut rng, h, true))
        .collect();
    let want: Vec<f64> = (0..SAMPLES)
        .map(|i| reference(&data, &[w, h], &[u[i] as f64, v[i] as f64], s))
        .collect();
    let got = run_sample2d(&ctx, &module, &texture, &u, &v);
    check_samples(
        "f16 mirror linear",
        &got,
        &want,
        &[u.clone(), v.clone()],
        1e-3,
    );
    drop(texture);

    // float4 texels: each channel filtered on its own.
    let quads: Vec<[f32; 4]> = (0..w * h)
        .map(|_| [rng.f32_sym(), rng.f32_sym(), rng.f32_sym(), rng.f32_sym()])
        .collect();
    let quad_array = ctx.array::<[f32; 4]>(ArrayShape::d2(w, h)).unwrap();
    quad_array.copy_from_host(&quads).unwrap();
    let texture = quad_array.texture(&desc_of(s)).unwrap();
    let function = module.function("sample2d_float4").unwrap();
    let stream = ctx.stream().unwrap();
    let (ud, vd) = (ctx.upload(&u).unwrap(), ctx.upload(&v).unwrap());
    let out = ctx.alloc::<[f32; 4]>(SAMPLES).unwrap();
    out.fill([f32::from_bits(POISON_U32); 4]).unwrap();
    ctx.scope(|sc| {
        let p = params![&texture, &ud, &vd, &out, SAMPLES as i32];
        // SAFETY: reads n coordinates, writes n float4s.
        unsafe {
            sc.launch(
                &stream,
                &function,
                &LaunchConfig::for_elements(SAMPLES, 128)?,
                &p,
            )
        }
    })
    .unwrap();
    let got = out.to_vec().unwrap();
    for c in 0..4 {
        let data: Vec<f64> = quads.iter().map(|q| q[c] as f64).collect();
        let want: Vec<f64> = (0..SAMPLES)
            .map(|i| reference(&data, &[w, h], &[u[i] as f64, v[i] as f64], s))
            .collect();
        let channel: Vec<f32> = got.iter().map(|g| g[c]).collect();
        check_samples(
            &format!("float4 channel {c}"),
            &channel,
            &want,
            &[u.clone(), v.clone()],
            1e-5,
        );
    }
    drop(texture);
    drop((ud, vd, out));
    drop((array, quad_array, module));
    assert_no_leaks(&ctx);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn integer_texels_read_as_stored_with_point_sampling() {
    let _serial = serial();
    let ctx = ctx();
    let mut rng = Rng::new();
    let module = module(&ctx);
    let (w, h) = (16usize, 32usize);
    let texels: Vec<u16> = (0..w * h).map(|_| rng.next_u32() as u16).collect();
    let array = ctx.array::<u16>(ArrayShape::d2(w, h)).unwrap();
    array.copy_from_host(&texels).unwrap();
    let desc = TextureDesc::new()
        .address(AddressMode::Wrap)
        .normalized_coordinates(true);
    let texture = array.texture(&desc).unwrap();
    let u: Vec<f32> = (0..SAMPLES)
        .map(|_| coordinate(&mut rng, w, true))
        .collect();
    let v: Vec<f32> = (0..SAMPLES)
        .map(|_| coordinate(&mut rng, h, true))
        .collect();
    let function = module.function("sample2d_ushort").unwrap();
    let stream = ctx.stream().unwrap();
    let (ud, vd) = (ctx.upload(&u).unwrap(), ctx.upload(&v).unwrap());
    let out = ctx.alloc::<u16>(SAMPLES).unwrap();
    out.fill(0xdead).unwrap();
    ctx.scope(|sc| {
        let p = params![&texture, &ud, &vd, &out, SAMPLES as i32];
        // SAFETY: reads n coordinates, writes n shorts.
        unsafe {
            sc.launch(
                &stream,
                &function,
                &LaunchConfig::for_elements(SAMPLES, 128)?,
                &p,
            )
        }
    })
    .unwrap();
    let got = out.to_vec().unwrap();
    for i in 0..SAMPLES {
        let x = ((u[i] as f64 * w as f64).floor() as i64).rem_euclid(w as i64) as usize;
        let y = ((v[i] as f64 * h as f64).floor() as i64).rem_euclid(h as i64) as usize;
        assert_eq!(
            got[i],
            texels[y * w + x],
            "sample {i} at ({}, {})",
            u[i],
            v[i]
        );
    }
    drop(texture);
    drop((ud, vd, out));
    drop((array, module));
    assert_no_leaks(&ctx);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn linear_memory_textures_fetch_by_index_and_read_zero_outside() {
    let _serial = serial();
    let ctx = ctx();
    let mut rng = Rng::new();
    let module = module(&ctx);
    let stream = ctx.stream().unwrap();
    let n = 1000usize;
    let floats = rng.vec_f32(n);
    let ints = rng.vec_i32(n);
    let fbuf = ctx.upload(&floats).unwrap();
    let ibuf = ctx.upload(&ints).unwrap();
    let idx: Vec<i32> = (0..SAMPLES)
        .map(|_| rng.below(n as u64 + 64) as i32 - 32)
        .collect();
    let idx_d = ctx.upload(&idx).unwrap();
    let ftex = Texture::from_linear(&fbuf, &TextureDesc::new()).unwrap();
    let itex = Texture::from_linear(ibuf.as_view(), &TextureDesc::new()).unwrap();
    let fout = ctx.alloc::<f32>(SAMPLES).unwrap();
    let iout = ctx.alloc::<i32>(SAMPLES).unwrap();
    fout.fill(f32::from_bits(POISON_U32)).unwrap();
    iout.fill(POISON_U32 as i32).unwrap();
    let (ff, fi) = (
        module.function("fetch_float").unwrap(),
        module.function("fetch_int").unwrap(),
    );
    let config = LaunchConfig::for_elements(SAMPLES, 128).unwrap();
    ctx.scope(|sc| {
        let p = params![&ftex, &idx_d, &fout, SAMPLES as i32];
        // SAFETY: reads n indices, writes n outputs.
        unsafe { sc.launch(&stream, &ff, &config, &p) }?;
        let p = params![&itex, &idx_d, &iout, SAMPLES as i32];
        // SAFETY: as above.
        unsafe { sc.launch(&stream, &fi, &config, &p) }
    })
    .unwrap();
    let (gf, gi) = (fout.to_vec().unwrap(), iout.to_vec().unwrap());
    for (i, &k) in idx.iter().enumerate() {
        let inside = (0..n as i32).contains(&k);
        let (wf, wi) = if inside {
            (floats[k as usize], ints[k as usize])
        } else {
            (0.0, 0)
        };
        assert_eq!((gf[i], gi[i]), (wf, wi), "fetch {i} at index {k}");
    }
    // Filtering and normalized coordinates are refused before the driver.
    let refused = Texture::from_linear(&fbuf, &TextureDesc::new().filter(FilterMode::Linear));
    assert!(matches!(refused, Err(Error::Texture(_))), "{refused:?}");
    drop((refused, ftex, itex));
    drop((idx_d, fout, iout));
    drop((fbuf, ibuf, module));
    assert_no_leaks(&ctx);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn surface_writes_read_back_in_2d_3d_and_layered_arrays() {
    let _serial = serial();
    let ctx = ctx();
    let mut rng = Rng::new();
    let module = module(&ctx);
    let stream = ctx.stream().unwrap();

    // 2D float: read, transform, write back in place.
    let (w, h) = (45usize, 19usize);
    let start = rng.vec_f32(w * h);
    let mut array = ctx.surface_array::<f32>(ArrayShape::d2(w, h)).unwrap();
    array.copy_from_host(&start).unwrap();
    {
        let mut surface = Surface::new(&mut array).unwrap();
        let f = module.function("surface2d").unwrap();
        ctx.scope(|sc| {
            let p = params![&mut surface, w as i32, h as i32];
            let config = LaunchConfig::for_elements_2d(w, h, (16, 8))?;
            // SAFETY: the kernel touches the w x h elements of the surface.
            unsafe { sc.launch(&stream, &f, &config, &p) }
        })
        .unwrap();
    }
    let got = array.to_vec().unwrap();
    for y in 0..h {
        for x in 0..w {
            let want = 2.0 * start[y * w + x] + x as f32 + 1000.0 * y as f32;
            assert_eq!(got[y * w + x], want, "({x}, {y})");
        }
    }

    // 3D uchar4: written without being read; poisoned first.
    let (w3, h3, d3) = (13usize, 7usize, 5usize);
    let mut cube = ctx
        .surface_array::<[u8; 4]>(ArrayShape::d3(w3, h3, d3))
        .unwrap();
    cube.copy_from_host(&vec![[0xa5; 4]; w3 * h3 * d3]).unwrap();
    {
        let mut surface = cube.surface().unwrap();
        let f = module.function("surface3d").unwrap();
        ctx.scope(|sc| {
            let p = params![&mut surface, w3 as i32, h3 as i32, d3 as i32];
            let config = LaunchConfig::new(
                (w3.div_ceil(8) as u32, h3.div_ceil(8) as u32, d3 as u32),
                (8, 8, 1),
            );
            // SAFETY: the kernel writes the w x h x d elements of the surface.
            unsafe { sc.launch(&stream, &f, &config, &p) }
        })
        .unwrap();
    }
    let got = cube.to_vec().unwrap();
    for z in 0..d3 {
        for y in 0..h3 {
            for x in 0..w3 {
                let want = [x as u8, y as u8, z as u8, (x ^ y ^ z) as u8];
                assert_eq!(got[(z * h3 + y) * w3 + x], want, "({x}, {y}, {z})");
            }
        }
    }

    // Layered 2D int: each layer l gets l + 1 added.
    let (wl, hl, layers) = (9usize, 6usize, 4usize);
    let start: Vec<i32> = rng
        .vec_i32(wl * hl * layers)
        .iter()
        .map(|v| v / 4)
        .collect();
    let mut layered = ctx
        .surface_array::<i32>(ArrayShape::layered_2d(wl, hl, layers))
        .unwrap();
    layered.copy_from_host(&start).unwrap();
    {
        let mut surface = layered.surface().unwrap();
        let f = module.function("surface_layered").unwrap();
        ctx.scope(|sc| {
            let p = params![&mut surface, wl as i32, hl as i32, layers as i32];
            let config = LaunchConfig::new((1u32, 1u32, layers as u32), (16, 8, 1));
            // SAFETY: the kernel touches the elements of every layer.
            unsafe { sc.launch(&stream, &f, &config, &p) }
        })
        .unwrap();
    }
    let got = layered.to_vec().unwrap();
    for (i, (&g, &s0)) in got.iter().zip(&start).enumerate() {
        let l = i / (wl * hl);
        assert_eq!(g, s0 + l as i32 + 1, "element {i} (layer {l})");
    }

    // A surface needs a surface-capable array.
    let mut plain = ctx.array::<f32>(ArrayShape::d2(4, 4)).unwrap();
    assert!(matches!(
        plain.surface(),
        Err(Error::Texture(
            cudakit::error::TextureError::NotSurfaceCapable
        ))
    ));
    drop((array, cube, layered, plain, module));
    assert_no_leaks(&ctx);
}

/// Every shape and several formats: host → array → host, device → array →
/// device, and the same on a stream inside a scope.
fn round_trip<T: ArrayElement + PartialEq + std::fmt::Debug>(
    ctx: &Context,
    shape: ArrayShape,
    make: impl Fn(usize) -> T,
    poison: T,
) {
    let data: Vec<T> = (0..shape.len()).map(&make).collect();
    let array = ctx.array::<T>(shape).unwrap();
    array.copy_from_host(&data).unwrap();
    let mut back = vec![poison; data.len()];
    array.copy_to_host(&mut back).unwrap();
    assert_eq!(
        back,
        data,
        "host round trip of {shape:?} {}",
        std::any::type_name::<T>()
    );
    assert_eq!(array.to_vec().unwrap(), data);
    // Device memory in and out.
    let dev = ctx.upload(&data).unwrap();
    let other = ctx.array::<T>(shape).unwrap();
    other.copy_from_device(&dev).unwrap();
    let out = ctx.upload(&vec![poison; data.len()]).unwrap();
    other.copy_to_device(&out).unwrap();
    assert_eq!(
        out.to_vec().unwrap(),
        data,
        "device round trip of {shape:?}"
    );
    // In a scope.
    let stream = ctx.stream().unwrap();
    let third = ctx.array::<T>(shape).unwrap();
    let mut host = vec![poison; data.len()];
    ctx.scope(|s| {
        s.copy_to_array(&stream, &data, &third)?;
        s.copy_from_array(&stream, &third, &mut host)
    })
    .unwrap();
    assert_eq!(host, data, "scope round trip of {shape:?}");
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn arrays_of_every_shape_and_format_round_trip() {
    let _serial = serial();
    let ctx = ctx();
    let mut rng = Rng::new();
    let salt = rng.next_u32();
    let shapes = [
        ArrayShape::d1(1),
        ArrayShape::d1(1023),
        ArrayShape::d2(37, 13),
        ArrayShape::d3(5, 7, 3),
        ArrayShape::layered_1d(129, 4),
        ArrayShape::layered_2d(17, 3, 6),
    ];
    for shape in shapes {
        let m = move |i: usize| (i as u32).wrapping_mul(2_654_435_761).wrapping_add(salt);
        round_trip(&ctx, shape, |i| m(i) as u8, 0xee);
        round_trip(&ctx, shape, |i| [m(i) as i8, (m(i) >> 8) as i8], [0x5a; 2]);
        round_trip(&ctx, shape, |i| [m(i) as u16; 4], [0xdead; 4]);
        round_trip(&ctx, shape, |i| m(i) as i16, 0x7eed);
        round_trip(&ctx, shape, |i| [m(i), !m(i)], [POISON_U32; 2]);
        round_trip(&ctx, shape, |i| [m(i) as i32; 4], [POISON_U32 as i32; 4]);
        round_trip(&ctx, shape, |i| F16(m(i) as u16 & 0x7bff), F16(0x7e00));
        round_trip(
            &ctx,
            shape,
            |i| f32::from_bits(m(i) & 0x7f7f_ffff),
            f32::from_bits(POISON_U32),
        );
        round_trip(
            &ctx,
            shape,
            |i| [F16(m(i) as u16 & 0x3fff); 2],
            [F16(0x7e00); 2],
        );
    }
    // Errors before the driver.
    assert!(matches!(
        ctx.array::<f32>(ArrayShape::d2(0, 4)),
        Err(Error::ZeroLength { .. })
    ));
    let array = ctx.array::<f32>(ArrayShape::d2(8, 8)).unwrap();
    assert!(matches!(
        array.copy_from_host(&[0.0; 63]),
        Err(Error::LengthMismatch { .. })
    ));
    let mut short = vec![0.0f32; 65];
    assert!(matches!(
        array.copy_to_host(&mut short),
        Err(Error::LengthMismatch { .. })
    ));
    // Wrap without normalized coordinates is refused before the driver.
    let refused = array.texture(&TextureDesc::new().address(AddressMode::Wrap));
    assert!(matches!(refused, Err(Error::Texture(_))), "{refused:?}");
    drop(refused);
    let refused = ctx
        .array::<u8>(ArrayShape::d1(8))
        .unwrap()
        .texture(&TextureDesc::new().filter(FilterMode::Linear))
        .map(|_| ());
    assert!(matches!(refused, Err(Error::Texture(_))), "{refused:?}");
    drop(array);
    assert_no_leaks(&ctx);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn pitched_copies_of_odd_widths_land_at_the_pitch() {
    let _serial = serial();
    let ctx = ctx();
    let mut rng = Rng::new();
    let stream = ctx.stream().unwrap();
    for (w, h) in [(1usize, 1usize), (3, 5), (37, 11), (1001, 3), (255, 64)] {
        let data: Vec<f32> = rng.vec_f32(w * h);
        let pitched = ctx.alloc_pitched::<f32>(w, h).unwrap();
        assert!(
            pitched.pitch() >= w * 4 && pitched.pitch() % 4 == 0,
            "{pitched:?}"
        );
        pitched.fill(f32::from_bits(POISON_U32)).unwrap();
        pitched.copy_from_host(&data).unwrap();
        assert_eq!(pitched.to_vec().unwrap(), data, "host round trip {w}x{h}");
        // Device memory, packed, in and out.
        let packed = ctx.upload(&data).unwrap();
        let other = ctx.alloc_pitched::<f32>(w, h).unwrap();
        other.copy_from_device(&packed).unwrap();
        let out = ctx.alloc::<f32>(w * h).unwrap();
        out.fill(f32::from_bits(POISON_U32)).unwrap();
        other.copy_to_device(&out).unwrap();
        assert_eq!(out.to_vec().unwrap(), data, "device round trip {w}x{h}");
        // Pitched to pitched, and through a 2D array.
        let third = ctx.alloc_pitched::<f32>(w, h).unwrap();
        third.copy_from(&pitched).unwrap();
        let array = ctx.array::<f32>(ArrayShape::d2(w, h)).unwrap();
        array.copy_from_pitched(&third).unwrap();
        assert_eq!(array.to_vec().unwrap(), data, "pitched to array {w}x{h}");
        let fourth = ctx.alloc_pitched::<f32>(w, h).unwrap();
        fourth.fill(0.0).unwrap();
        array.copy_to_pitched(&fourth).unwrap();
        assert_eq!(fourth.to_vec().unwrap(), data, "array to pitched {w}x{h}");
        // In a scope.
        let mut host = vec![f32::from_bits(POISON_U32); w * h];
        let fifth = ctx.alloc_pitched::<f32>(w, h).unwrap();
        ctx.scope(|s| {
            s.copy_to_pitched(&stream, &data, &fifth)?;
            s.copy_from_pitched(&stream, &fifth, &mut host)
        })
        .unwrap();
        assert_eq!(host, data, "scope round trip {w}x{h}");
        // Odd element sizes: 3-byte rows of u8 and 12-byte elements.
        let bytes: Vec<u8> = (0..w * h).map(|_| rng.next_u32() as u8).collect();
        let pb = ctx.alloc_pitched::<u8>(w, h).unwrap();
        pb.fill(0xee).unwrap();
        pb.copy_from_host(&bytes).unwrap();
        assert_eq!(pb.to_vec().unwrap(), bytes, "u8 rows {w}x{h}");
        let triples: Vec<[u32; 3]> = (0..w * h)
            .map(|_| [rng.next_u32(), rng.next_u32(), rng.next_u32()])
            .collect();
        let pt = ctx.alloc_pitched::<[u32; 3]>(w, h).unwrap();
        pt.fill([POISON_U32; 3]).unwrap();
        pt.copy_from_host(&triples).unwrap();
        assert_eq!(pt.to_vec().unwrap(), triples, "[u32; 3] rows {w}x{h}");
    }
    // Errors before the driver.
    assert!(matches!(
        ctx.alloc_pitched::<f32>(0, 3),
        Err(Error::ZeroLength { .. })
    ));
    let p = ctx.alloc_pitched::<f32>(5, 5).unwrap();
    assert!(matches!(
        p.copy_from_host(&[0.0; 24]),
        Err(Error::LengthMismatch { .. })
    ));
    let q = ctx.alloc_pitched::<f32>(5, 4).unwrap();
    assert!(matches!(p.copy_from(&q), Err(Error::InvalidArgument(_))));
    let a = ctx.array::<f32>(ArrayShape::d2(4, 5)).unwrap();
    assert!(matches!(
        a.copy_from_pitched(&p),
        Err(Error::InvalidArgument(_))
    ));
    drop((p, q, a));
    assert_no_leaks(&ctx);
}
