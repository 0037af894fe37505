//! A texture lookup: a 2D CUDA array read through a texture object, with
//! the hardware clamping coordinates that fall outside it.
//!
//! The texels are uploaded to a CUDA array (`cuArray3DCreate`), and a
//! texture object (`cuTexObjectCreate`) describes how kernels read it:
//! point filtering, clamp at the edges, coordinates in texels. The kernel
//! samples one texel per thread over a window one texel wider than the
//! array on every side, so the edges clamp. A texture borrows its array, so
//! the array cannot be dropped while the texture lives.
//!
//! ```sh
//! cargo run --release -p cudakit --example texture_lookup
//! ```
//!
//! Prints `texture_lookup: ok (...)` and exits 0; exits 1 on a wrong
//! sample or an error.

use cudakit::{
    params, AddressMode, ArrayShape, Context, FilterMode, LaunchConfig, Program, TextureDesc,
};

const SOURCE: &str = r#"
// Samples the texel at (x - 1, y - 1) for every (x, y) of an (w + 2) x (h + 2)
// window: the first and last row and column lie outside the array.
extern "C" __global__ void lookup(cudaTextureObject_t t, float* out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w + 2 && y < h + 2) {
        // +0.5: the centre of the texel, so point sampling picks it exactly.
        out[y * (w + 2) + x] = tex2D<float>(t, (x - 1) + 0.5f, (y - 1) + 0.5f);
    }
}
"#;

fn main() -> cudakit::Result<()> {
    let (w, h) = (64usize, 48usize);
    let ctx = Context::new(0)?;
    let compiled = Program::new("lookup.cu", SOURCE).compile_for(&ctx)?;
    let module = ctx.load_module(&compiled)?;
    let lookup = module.function("lookup")?;

    // Texel (x, y) holds x + 1000 y, row by row.
    let texels: Vec<f32> = (0..w * h)
        .map(|k| ((k % w) + 1000 * (k / w)) as f32)
        .collect();
    let array = ctx.array::<f32>(ArrayShape::d2(w, h))?;
    array.copy_from_host(&texels)?;
    let desc = TextureDesc::new()
        .address(AddressMode::Clamp)
        .filter(FilterMode::Point)
        .normalized_coordinates(false);
    let texture = array.texture(&desc)?;

    let (ow, oh) = (w + 2, h + 2);
    let out = ctx.upload(&vec![f32::NAN; ow * oh])?; // poisoned first
    let stream = ctx.stream()?;
    let config = LaunchConfig::for_elements_2d(ow, oh, (16, 16))?;
    ctx.scope(|s| {
        // The texture is passed as itself (`&texture`), not as a raw handle.
        let args = params![&texture, &out, w as i32, h as i32];
        // SAFETY: lookup writes out[0..(w+2)(h+2)), which `out` holds, and
        // reads only through the texture.
        unsafe { s.launch(&stream, &lookup, &config, &args) }
    })?;

    let got = out.to_vec()?;
    let clamp = |v: usize, n: usize| v.saturating_sub(1).min(n - 1);
    for y in 0..oh {
        for x in 0..ow {
            let want = texels[clamp(y, h) * w + clamp(x, w)];
            let g = got[y * ow + x];
            if g != want {
                eprintln!("texture_lookup: FAILED: sample ({x}, {y}) = {g}, want {want}");
                std::process::exit(1);
            }
        }
    }
    println!(
        "texture_lookup: ok ({w}x{h} array, {} samples exact, edges clamped)",
        ow * oh
    );
    Ok(())
}
