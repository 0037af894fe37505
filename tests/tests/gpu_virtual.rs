//! Virtual buffers (`cudakit::VirtualBuffer`) on the device: a buffer of
//! `u32` grown in place from 1 GiB to 16 GiB, one gibibyte at a time, each
//! new gibibyte filled with fresh random values from the host, and after
//! every step a kernel sums the whole range (per-block partial sums into a
//! poisoned array, summed on the host with wrapping `u64` arithmetic) and
//! is checked against the CPU reference; the device address never
//! changes, so the old contents survive every growth without a copy. Then
//! it shrinks back to 1 GiB (the arena's virtual records and the mapped
//! bytes follow) and is summed again. The bad inputs of issue 22 (growth
//! past the reservation, shrinking below zero, an unaligned step) are
//! typed errors that leave the buffer as it was.

use cudakit::{
    params, AllocKind, Context, Error, LaunchConfig, Module, VirtualBuffer, VirtualMemoryError,
};
use cudakit_suite::rng::Rng;

const GIB: usize = 1 << 30;
const PER_GIB: usize = GIB / 4;
const BLOCKS: usize = 1024;
const THREADS: u32 = 256;

const SUM: &str = r#"
extern "C" __global__ void partial_sums(const unsigned* x, unsigned long long n,
                                        unsigned long long* out) {
    __shared__ unsigned long long acc[256];
    unsigned long long s = 0;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         i < n; i += (unsigned long long)gridDim.x * blockDim.x) {
        s += x[i];
    }
    acc[threadIdx.x] = s;
    __syncthreads();
    for (unsigned w = blockDim.x / 2; w > 0; w /= 2) {
        if (threadIdx.x < w) acc[threadIdx.x] += acc[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = acc[0];
}
"#;

/// The device's sum of the whole buffer.
fn device_sum(ctx: &Context, module: &Module<'_>, v: &VirtualBuffer<'_, u32>) -> u64 {
    let f = module.function("partial_sums").expect("partial_sums");
    let out = ctx
        .upload(&vec![0xDEAD_BEEF_DEAD_BEEFu64; BLOCKS])
        .expect("poisoned");
    let stream = ctx.stream().expect("stream");
    let cfg = LaunchConfig::new(BLOCKS as u32, THREADS);
    ctx.scope(|s| {
        // SAFETY: the kernel reads `v.len()` elements of `v` and writes one
        // element of `out` per block, BLOCKS of them.
        unsafe { s.launch(&stream, &f, &cfg, &params![v, v.len() as u64, &out]) }
    })
    .expect("sum");
    let partials = out.to_vec().expect("partials");
    assert!(
        !partials.contains(&0xDEAD_BEEF_DEAD_BEEF),
        "a block wrote nothing"
    );
    partials.iter().fold(0u64, |a, &p| a.wrapping_add(p))
}

/// Fresh random values for one gibibyte, and their sum.
fn fresh(rng: &mut Rng) -> (Vec<u32>, u64) {
    let values: Vec<u32> = (0..PER_GIB).map(|_| rng.next_u32()).collect();
    let sum = values
        .iter()
        .fold(0u64, |a, &x| a.wrapping_add(u64::from(x)));
    (values, sum)
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn virtual_buffer_grows_from_1_to_16_gib_in_place() {
    let mut rng = Rng::new();
    eprintln!("{}", rng.describe());
    let ctx = Context::new(0).expect("device 0");
    let free = ctx.device().total_memory().expect("total memory");
    assert!(free >= 20 * GIB, "the test needs 16 GiB and headroom");
    let module = ctx
        .load_module(
            &cudakit::Program::new("vsum.cu", SUM)
                .compile_for(&ctx)
                .expect("compile"),
        )
        .expect("module");
    let granularity = ctx.virtual_granularity().expect("granularity");
    assert!(granularity > 0 && GIB % granularity == 0, "{granularity}");

    let mut v = ctx
        .alloc_virtual::<u32>(PER_GIB, 16 * PER_GIB)
        .expect("1 GiB mapped of 16 reserved");
    let base = v.device_ptr();
    let (first, mut want) = fresh(&mut rng);
    let first_sum = want;
    v.copy_from_host(&first).expect("fill the first GiB");
    drop(first);
    assert_eq!(device_sum(&ctx, &module, &v), want, "1 GiB");

    for gib in 2..=16 {
        v.grow_by(PER_GIB).expect("grow by 1 GiB");
        assert_eq!(v.device_ptr(), base, "grown in place at {gib} GiB");
        assert_eq!(v.len(), gib * PER_GIB);
        assert!(v.mapped_bytes() >= gib * GIB);
        let (values, sum) = fresh(&mut rng);
        v.view((gib - 1) * PER_GIB..)
            .expect("the new gibibyte")
            .copy_from_host(&values)
            .expect("fill it");
        want = want.wrapping_add(sum);
        assert_eq!(device_sum(&ctx, &module, &v), want, "{gib} GiB");
    }
    let virt = ctx.stats().kind(AllocKind::Virtual);
    assert_eq!(virt.live_bytes, v.mapped_bytes() as u64);
    assert!(virt.live_count >= 16, "one record per growth: {virt:?}");

    // Bad input changes nothing.
    let (len, mapped) = (v.len(), v.mapped_bytes());
    assert!(matches!(
        v.grow_by(1),
        Err(Error::VirtualMemory(
            VirtualMemoryError::PastReservation { .. }
        ))
    ));
    assert!(matches!(
        v.shrink_by(len + 1),
        Err(Error::VirtualMemory(VirtualMemoryError::BelowZero { .. }))
    ));
    assert!(matches!(
        ctx.alloc_virtual_with_step::<u32>(1, 1 << 20, granularity + 1),
        Err(Error::VirtualMemory(VirtualMemoryError::Unaligned { .. }))
    ));
    assert_eq!((v.len(), v.mapped_bytes()), (len, mapped));
    assert_eq!(device_sum(&ctx, &module, &v), want, "unchanged");

    // Shrink back to the first gibibyte: its sum is the first one's.
    v.resize(PER_GIB).expect("shrink to 1 GiB");
    assert_eq!(v.device_ptr(), base);
    assert_eq!(v.mapped_bytes(), GIB);
    assert_eq!(
        ctx.stats().kind(AllocKind::Virtual).live_bytes,
        GIB as u64,
        "the arena follows the unmaps"
    );
    let mut first_again = vec![0u32; PER_GIB];
    v.copy_to_host(&mut first_again).expect("read back");
    let sum_first = first_again
        .iter()
        .fold(0u64, |a, &x| a.wrapping_add(u64::from(x)));
    assert_eq!(sum_first, first_sum, "the first gibibyte survived it all");
    assert_eq!(device_sum(&ctx, &module, &v), first_sum, "after the shrink");
    drop(v);
    assert_eq!(ctx.stats().kind(AllocKind::Virtual).live_count, 0);
    assert_eq!(ctx.stats().kind(AllocKind::Leaked).live_count, 0);
}
