//! Library paths the other hardware tests do not reach:
//!
//! - event chains across four streams (fan-out, fan-in, and write-after-read
//!   hazards between rounds), with kernels that spin before they write, so
//!   that a missing or broken wait gives a wrong answer;
//! - buffers dropped right after a scope ends (normally, by an error, by a
//!   panic): the scope has waited for their work, so memory allocated next
//!   is never overwritten by it;
//! - a `ParamList` spilled to the heap by count (24 arguments, device
//!   pointers before and after the 16th) and by bytes (three 96-byte
//!   structs), launched for real, every argument echoed back and checked;
//! - by-value parameters aligned to 64 bytes (`CUtensorMap`'s alignment),
//!   which arrive intact where `ParamList` accepts them and are a typed
//!   error where they exceed its `MAX_ALIGN`;
//! - one context used from 16 threads at once, each with its own program,
//!   stream, buffers and launches;
//! - kernel timing switched on and off between scopes: per-function kernel
//!   time appears in the metrics only for launches made while it was on.
//!
//! Inputs come from one seeded `Rng` per test, outputs are poisoned first,
//! and every element is checked against a CPU reference. The file's tests
//! take one lock (they check the context's arena and its metrics).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Barrier, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use cudakit::compile::module::{Function, Module};
use cudakit::compile::program::{Arch, Program};
use cudakit::work::launch::params::{ArgKind, MAX_ALIGN};
use cudakit::work::launch::{LaunchConfig, ParamList};
use cudakit::{params, Context, Error};
use cudakit_suite::reference::POISON_U32;
use cudakit_suite::rng::Rng;

fn lock() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn ctx() -> Context {
    Context::new(0).expect("device 0")
}

fn assert_no_leaks(ctx: &Context) {
    let report = ctx.leak_report();
    assert!(report.is_empty(), "leaked: {report}");
    assert!(
        ctx.drop_errors().is_empty(),
        "drop errors: {:?}",
        ctx.drop_errors()
    );
}

/// The kernels of this file. `spin` is a number of `clock64()` cycles each
/// thread waits before it writes (about 2 GHz on an H200: 2e6 is 1 ms).
const PATHS: &str = r#"
__device__ void spin_for(long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) { }
}

extern "C" __global__ void affine_after(const unsigned* in, unsigned* out, unsigned a,
                                        unsigned b, long long spin, unsigned n) {
    spin_for(spin);
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * a + b;
}

extern "C" __global__ void combine_after(const unsigned* x, const unsigned* y, unsigned* out,
                                         long long spin, unsigned n) {
    spin_for(spin);
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = x[i] ^ (y[i] * 3u + 1u);
}

extern "C" __global__ void fill_after(unsigned* out, unsigned value, long long spin, unsigned n) {
    spin_for(spin);
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = value + i;
}

struct P12 { unsigned a, b, c; };
struct __align__(16) P16 { double x; long long y; };

// 24 parameters; every value lands in out[] as its raw bits.
extern "C" __global__ void many_params(
    unsigned long long* out,
    signed char p1, short p2, int p3, long long p4,
    unsigned char p5, unsigned short p6, unsigned p7, unsigned long long p8,
    float p9, double p10,
    const unsigned* in1,
    P12 p12, P16 p13,
    signed char p14, double p15, unsigned char p16,
    const unsigned* in2,
    short p18, float p19, long long p20, unsigned p21, unsigned char p22,
    unsigned* tail) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    out[0] = (unsigned char)p1;
    out[1] = (unsigned short)p2;
    out[2] = (unsigned)p3;
    out[3] = (unsigned long long)p4;
    out[4] = p5;
    out[5] = p6;
    out[6] = p7;
    out[7] = p8;
    out[8] = __float_as_uint(p9);
    out[9] = (unsigned long long)__double_as_longlong(p10);
    out[10] = (unsigned long long)in1;
    out[11] = in1[0];
    out[12] = p12.a;
    out[13] = p12.b;
    out[14] = p12.c;
    out[15] = (unsigned long long)__double_as_longlong(p13.x);
    out[16] = (unsigned long long)p13.y;
    out[17] = (unsigned char)p14;
    out[18] = (unsigned long long)__double_as_longlong(p15);
    out[19] = p16;
    out[20] = (unsigned long long)in2;
    out[21] = in2[0];
    out[22] = (unsigned short)p18;
    out[23] = __float_as_uint(p19);
    out[24] = (unsigned long long)p20;
    out[25] = p21;
    out[26] = p22;
    out[27] = (unsigned long long)tail;
    for (int j = 0; j < 4; ++j) tail[j] = p21 + j;
}

struct Big { unsigned v[24]; };

extern "C" __global__ void big_params(unsigned* out, Big a, Big b, Big c) {
    unsigned i = threadIdx.x;
    if (i < 24) {
        out[i] = a.v[i];
        out[24 + i] = b.v[i];
        out[48 + i] = c.v[i];
    }
}

struct __align__(64) A64 { unsigned v[16]; };

extern "C" __global__ void align64_param(unsigned char pad, A64 x, unsigned* out) {
    unsigned i = threadIdx.x;
    if (i < 16) out[i] = x.v[i];
    if (i == 0) out[16] = pad;
}

struct __align__(128) A128 { unsigned v[32]; };

extern "C" __global__ void align128_param(unsigned char pad, A128 x, unsigned* out) {
    unsigned i = threadIdx.x;
    if (i < 32) out[i] = x.v[i];
    if (i == 0) out[32] = pad;
}

extern "C" __global__ void timing_probe_on(const unsigned* in, unsigned* out, unsigned k, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] + k;
}

extern "C" __global__ void timing_probe_off(const unsigned* in, unsigned* out, unsigned k, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] - k;
}
"#;

/// A CPU test (NVRTC needs no GPU, so this runs in CI): the kernels of this
/// file, and the per-thread programs, compile for sm_90 without a warning.
#[test]
fn the_kernels_of_this_file_compile_without_a_warning() {
    for (name, source) in [
        ("paths.cu".to_owned(), PATHS.to_owned()),
        ("thread7.cu".to_owned(), thread_program(7)),
    ] {
        let compiled = Program::new(name.clone(), source)
            .arch(Arch::Sm(90))
            .without_cache()
            .compile()
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            compiled.log().trim().is_empty(),
            "{name}: {}",
            compiled.log()
        );
    }
}

fn module(ctx: &Context) -> Module<'_> {
    let compiled = Program::new("paths.cu", PATHS)
        .compile_for(ctx)
        .expect("compile paths.cu");
    ctx.load_module(&compiled).expect("load paths.cu")
}

/// Cycles a kernel spins before writing: about 1 ms on an H200.
const SPIN: i64 = 2_000_000;

fn check_u32(what: &str, got: &[u32], want: &[u32], rng: &Rng) {
    assert_eq!(got.len(), want.len(), "{what}: length; {}", rng.describe());
    let bad: Vec<usize> = (0..got.len()).filter(|&i| got[i] != want[i]).collect();
    if let Some(&first) = bad.first() {
        let poisoned = bad.iter().filter(|&&i| got[i] == POISON_U32).count();
        panic!(
            "{what}: {} of {} elements wrong ({poisoned} still poisoned), first [{first}] got {:#x} want {:#x}; {}",
            bad.len(),
            got.len(),
            got[first],
            want[first],
            rng.describe()
        );
    }
}

/// Random `u32`s that are never the poison.
fn random_u32s(rng: &mut Rng, n: usize) -> Vec<u32> {
    (0..n)
        .map(|_| loop {
            let v = rng.next_u32();
            if v != POISON_U32 {
                break v;
            }
        })
        .collect()
}

fn affine(x: &[u32], a: u32, b: u32) -> Vec<u32> {
    x.iter()
        .map(|&v| v.wrapping_mul(a).wrapping_add(b))
        .collect()
}

fn combine(x: &[u32], y: &[u32]) -> Vec<u32> {
    x.iter()
        .zip(y)
        .map(|(&p, &q)| p ^ q.wrapping_mul(3).wrapping_add(1))
        .collect()
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn event_chains_order_work_across_four_streams() {
    // Per round r, on four streams:
    //   s0: A = affine(X_r)                      record ea[r]
    //   s1: wait ea[r] (and ed[r-1]); B = affine(A)   record eb[r]
    //   s2: wait ea[r] (and ed[r-1]); C = affine(A)   record ec[r]
    //   s3: wait eb[r], ec[r]; D_r = combine(B, C)    record ed[r]
    // and s0 of round r+1 waits eb[r] and ec[r] before it overwrites A.
    // Every kernel spins ~1 ms before writing: a consumer that ran before
    // its producer would read poison or the previous round's values, and a
    // producer that ran before the last round's consumers would hand them
    // this round's values.
    let _guard = lock();
    let ctx = ctx();
    let m = module(&ctx);
    let aff = m.function("affine_after").unwrap();
    let comb = m.function("combine_after").unwrap();
    let mut rng = Rng::new();
    let rounds = 6;
    let n = rng.range(1 << 15, 1 << 16) | 1;
    let inputs: Vec<Vec<u32>> = (0..rounds).map(|_| random_u32s(&mut rng, n)).collect();
    let coef: Vec<[u32; 6]> = (0..rounds)
        .map(|_| std::array::from_fn(|_| rng.next_u32() | 1))
        .collect();
    let x: Vec<_> = inputs.iter().map(|v| ctx.upload(v).unwrap()).collect();
    let a = ctx.alloc::<u32>(n).unwrap();
    let b = ctx.alloc::<u32>(n).unwrap();
    let c = ctx.alloc::<u32>(n).unwrap();
    let d = ctx.alloc::<u32>(n * rounds).unwrap();
    for buf in [&a, &b, &c, &d] {
        buf.fill(POISON_U32).unwrap();
    }
    let streams: Vec<_> = (0..4).map(|_| ctx.stream().unwrap()).collect();
    let events = |count| -> Vec<_> { (0..count).map(|_| ctx.event().unwrap()).collect() };
    let (ea, eb, ec, ed) = (
        events(rounds),
        events(rounds),
        events(rounds),
        events(rounds),
    );
    let cfg = LaunchConfig::for_elements(n, 256).unwrap();
    let nn = n as u32;
    ctx.scope(|s| {
        for r in 0..rounds {
            let [a0, b0, a1, b1, a2, b2] = coef[r];
            let dr = d.view(r * n..(r + 1) * n)?;
            if r > 0 {
                streams[0].wait(&eb[r - 1])?;
                streams[0].wait(&ec[r - 1])?;
            }
            let p = params![&x[r], &a, a0, b0, SPIN, nn];
            // SAFETY: affine_after reads and writes n elements of each buffer.
            unsafe { s.launch(&streams[0], &aff, &cfg, &p) }?;
            ea[r].record(&streams[0])?;
            for (k, (out, (mul, add), done)) in [(&b, (a1, b1), &eb[r]), (&c, (a2, b2), &ec[r])]
                .into_iter()
                .enumerate()
            {
                let st = &streams[1 + k];
                st.wait(&ea[r])?;
                if r > 0 {
                    st.wait(&ed[r - 1])?;
                }
                let p = params![&a, out, mul, add, SPIN, nn];
                // SAFETY: as above.
                unsafe { s.launch(st, &aff, &cfg, &p) }?;
                done.record(st)?;
            }
            streams[3].wait(&eb[r])?;
            streams[3].wait(&ec[r])?;
            let p = params![&b, &c, dr, SPIN, nn];
            // SAFETY: combine_after reads two and writes one n-element buffer.
            unsafe { s.launch(&streams[3], &comb, &cfg, &p) }?;
            ed[r].record(&streams[3])?;
        }
        Ok(())
    })
    .unwrap();
    let got = d.to_vec().unwrap();
    for r in 0..rounds {
        let [a0, b0, a1, b1, a2, b2] = coef[r];
        let av = affine(&inputs[r], a0, b0);
        let want = combine(&affine(&av, a1, b1), &affine(&av, a2, b2));
        check_u32(&format!("round {r}"), &got[r * n..(r + 1) * n], &want, &rng);
    }
    drop((x, a, b, c, d, ea, eb, ec, ed, streams));
    assert_no_leaks(&ctx);
}

/// Asserts that a buffer of `n` elements allocated now, poisoned and left
/// alone for a few kernel spins, still holds only poison: no work of an
/// earlier scope still runs to write into freed memory that this buffer
/// may now occupy.
/// Allocates `n` words where the buffer just freed at `freed` was (the
/// driver usually hands the range back), poisons them, waits a while and
/// checks that nothing wrote them. Returns `Err(what)` without checking
/// when the driver put the new buffer elsewhere: then the check would
/// prove nothing about the freed memory, and the caller reports it as not
/// run.
fn nothing_writes_freed_memory(
    ctx: &Context,
    freed: u64,
    n: usize,
    rng: &Rng,
    what: &str,
) -> Result<(), String> {
    let fresh = ctx.alloc::<u32>(n).unwrap();
    let start = fresh.device_ptr().as_raw();
    let bytes = (n * std::mem::size_of::<u32>()) as u64;
    if !(start < freed + bytes && freed < start + bytes) {
        return Err(format!(
            "{what}: the new buffer at {start:#x} does not overlap the freed one at {freed:#x}"
        ));
    }
    fresh.fill(POISON_U32).unwrap();
    std::thread::sleep(Duration::from_millis(5));
    ctx.synchronize().unwrap();
    check_u32(what, &fresh.to_vec().unwrap(), &vec![POISON_U32; n], rng);
    Ok(())
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn buffers_dropped_right_after_a_scope_are_no_longer_in_use() {
    let _guard = lock();
    let ctx = ctx();
    let m = module(&ctx);
    let fill = m.function("fill_after").unwrap();
    let mut rng = Rng::new();
    // The checks of freed memory the driver's placement made meaningless.
    let mut not_checked = Vec::new();
    for round in 0..12 {
        let n = rng.range(1 << 16, 1 << 18);
        let value = rng.next_u32() & 0x0fff_ffff; // value + i is never the poison
        let want: Vec<u32> = (0..n as u32).map(|i| value + i).collect();
        let cfg = LaunchConfig::for_elements(n, 256).unwrap();
        let nn = n as u32;
        // A fresh stream each round, dropped with the buffers.
        let freed;
        {
            let stream = ctx.stream().unwrap();
            let x = ctx.alloc::<u32>(n).unwrap();
            freed = x.device_ptr().as_raw();
            x.fill(POISON_U32).unwrap();
            let mut host = ctx.alloc_pinned::<u32>(n).unwrap();
            host.fill(POISON_U32);
            let mut unified = ctx.alloc_unified::<u32>(n).unwrap();
            ctx.scope(|s| {
                let p = params![&x, value, SPIN, nn];
                // SAFETY: fill_after writes n elements.
                unsafe { s.launch(&stream, &fill, &cfg, &p) }?;
                s.copy_to_host(&stream, &x, &mut host)?;
                s.copy(&stream, &x, &mut unified)
            })
            .unwrap();
            // Read at once: the scope has waited for the kernel and the copies.
            check_u32(&format!("round {round}: pinned"), &host, &want, &rng);
            check_u32(
                &format!("round {round}: unified"),
                &unified.to_vec().unwrap(),
                &want,
                &rng,
            );
            // Dropped here, right after the scope.
        }
        let what = format!("round {round}: after the drop");
        if let Err(e) = nothing_writes_freed_memory(&ctx, freed, n, &rng, &what) {
            not_checked.push(e);
        }
    }

    // A scope that ends in an error after queueing work waits for it too.
    let n = 1 << 17;
    let value = rng.next_u32() & 0x0fff_ffff;
    let want: Vec<u32> = (0..n as u32).map(|i| value + i).collect();
    let cfg = LaunchConfig::for_elements(n, 256).unwrap();
    let freed;
    {
        let stream = ctx.stream().unwrap();
        let x = ctx.alloc::<u32>(n).unwrap();
        freed = x.device_ptr().as_raw();
        x.fill(POISON_U32).unwrap();
        let result: cudakit::Result<()> = ctx.scope(|s| {
            let p = params![&x, value, SPIN, n as u32];
            // SAFETY: fill_after writes n elements.
            unsafe { s.launch(&stream, &fill, &cfg, &p) }?;
            Err(Error::InvalidArgument("a deliberate error".into()))
        });
        assert!(
            matches!(result, Err(Error::InvalidArgument(_))),
            "{result:?}"
        );
        check_u32("after an error", &x.to_vec().unwrap(), &want, &rng);
    }
    if let Err(e) = nothing_writes_freed_memory(&ctx, freed, n, &rng, "after an error and the drop")
    {
        not_checked.push(e);
    }

    // And one whose closure panics.
    let freed;
    {
        let stream = ctx.stream().unwrap();
        let x = ctx.alloc::<u32>(n).unwrap();
        freed = x.device_ptr().as_raw();
        x.fill(POISON_U32).unwrap();
        let outcome: std::thread::Result<cudakit::Result<()>> =
            catch_unwind(AssertUnwindSafe(|| {
                ctx.scope(|s| {
                    let p = params![&x, value, SPIN, n as u32];
                    // SAFETY: fill_after writes n elements.
                    unsafe { s.launch(&stream, &fill, &cfg, &p) }?;
                    panic!("a deliberate panic inside a scope (expected by this test)");
                })
            }));
        assert!(outcome.is_err(), "the closure panicked");
        check_u32("after a panic", &x.to_vec().unwrap(), &want, &rng);
    }
    if let Err(e) = nothing_writes_freed_memory(&ctx, freed, n, &rng, "after a panic and the drop")
    {
        not_checked.push(e);
    }
    assert!(ctx.poisoned().is_none());
    assert_no_leaks(&ctx);
    if !not_checked.is_empty() {
        cudakit_suite::not_run(format!(
            "{} of 14 checks of freed memory not run, the driver did not reuse the freed range: \
             {}",
            not_checked.len(),
            not_checked.join("; ")
        ));
    }
}

cudakit::device_struct! {
    #[derive(Debug)]
    struct P12 {
        a: u32,
        b: u32,
        c: u32,
    }
}

cudakit::device_struct! {
    #[derive(Debug)]
    #[repr(align(16))]
    struct P16 {
        x: f64,
        y: i64,
    }
}

cudakit::device_struct! {
    #[derive(Debug)]
    struct Big {
        v: [u32; 24],
    }
}

cudakit::device_struct! {
    #[derive(Debug)]
    #[repr(align(64))]
    struct A64 {
        v: [u32; 16],
    }
}

cudakit::device_struct! {
    #[derive(Debug)]
    #[repr(align(128))]
    struct A128 {
        v: [u32; 32],
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_param_list_spilled_past_16_arguments_launches_and_every_value_arrives() {
    let _guard = lock();
    let ctx = ctx();
    let m = module(&ctx);
    let f = m.function("many_params").unwrap();
    let mut rng = Rng::new();
    let r = &mut rng;
    let (p1, p2, p3, p4) = (
        r.next_u64() as i8,
        r.next_u64() as i16,
        r.i32(),
        r.next_u64() as i64,
    );
    let (p5, p6, p7, p8) = (
        r.next_u64() as u8,
        r.next_u64() as u16,
        r.next_u32(),
        r.next_u64(),
    );
    let (p9, p10) = (r.f32_sym(), r.f64_sym());
    let p12 = P12 {
        a: r.next_u32(),
        b: r.next_u32(),
        c: r.next_u32(),
    };
    let p13 = P16 {
        x: r.f64_sym(),
        y: r.next_u64() as i64,
    };
    let (p14, p15, p16) = (r.next_u64() as i8, r.f64_sym(), r.next_u64() as u8);
    let (p18, p19, p20, p21, p22) = (
        r.next_u64() as i16,
        r.f32_sym(),
        r.next_u64() as i64,
        r.next_u32() & 0x0fff_ffff,
        r.next_u64() as u8,
    );
    let stream = ctx.stream().unwrap();
    // Device pointers: views at odd offsets, before and after the 16th
    // argument.
    {
        let in1_host = random_u32s(r, 9);
        let in2_host = random_u32s(r, 11);
        let in1 = ctx.upload(&in1_host).unwrap();
        let in2 = ctx.upload(&in2_host).unwrap();
        let (v1, v2) = (in1.view(3..).unwrap(), in2.view(5..).unwrap());
        let out = ctx.alloc::<u64>(28).unwrap();
        out.fill(u64::MAX).unwrap();
        let tail = ctx.alloc::<u32>(4).unwrap();
        tail.fill(POISON_U32).unwrap();
        let p = params![
            &out, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, v1, p12, p13, p14, p15, p16, v2, p18,
            p19, p20, p21, p22, &tail
        ];
        assert_eq!(p.len(), 24);
        assert!(p.is_spilled(), "24 arguments live on the heap");
        let table = p.describe();
        for (i, row) in table.iter().enumerate() {
            assert_eq!(row.index, i);
            assert_eq!(row.offset % row.align, 0, "{row}");
            let pointer = matches!(row.kind, ArgKind::DevicePointer { .. });
            assert_eq!(pointer, [0, 11, 17, 23].contains(&i), "{row}");
        }
        assert_eq!(table[13].align, 16, "P16 is 16-aligned");
        // SAFETY: many_params reads in1[0] and in2[0], writes out[0..28) and
        // tail[0..4), with one thread.
        ctx.scope(|s| unsafe { s.launch(&stream, &f, &LaunchConfig::new(1, 1), &p) })
            .unwrap();
        let want: [u64; 28] = [
            u64::from(p1 as u8),
            u64::from(p2 as u16),
            u64::from(p3 as u32),
            p4 as u64,
            u64::from(p5),
            u64::from(p6),
            u64::from(p7),
            p8,
            u64::from(p9.to_bits()),
            p10.to_bits(),
            v1.device_ptr().as_raw(),
            u64::from(in1_host[3]),
            u64::from(p12.a),
            u64::from(p12.b),
            u64::from(p12.c),
            p13.x.to_bits(),
            p13.y as u64,
            u64::from(p14 as u8),
            p15.to_bits(),
            u64::from(p16),
            v2.device_ptr().as_raw(),
            u64::from(in2_host[5]),
            u64::from(p18 as u16),
            u64::from(p19.to_bits()),
            p20 as u64,
            u64::from(p21),
            u64::from(p22),
            tail.device_ptr().as_raw(),
        ];
        let got = out.to_vec().unwrap();
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            assert_eq!(
                *g,
                w,
                "parameter slot {i}: {}; {}",
                table_row(&p, i),
                rng.describe()
            );
        }
        check_u32(
            "tail",
            &tail.to_vec().unwrap(),
            &[p21, p21 + 1, p21 + 2, p21 + 3],
            &rng,
        );
    }

    // Spilled by bytes: four arguments, 296 bytes.
    {
        let g = m.function("big_params").unwrap();
        let bigs: [Big; 3] = std::array::from_fn(|_| Big {
            v: std::array::from_fn(|_| rng.next_u32()),
        });
        let out = ctx.alloc::<u32>(72).unwrap();
        out.fill(POISON_U32).unwrap();
        let p = params![&out, bigs[0], bigs[1], bigs[2]];
        assert_eq!(p.len(), 4);
        assert!(p.is_spilled(), "296 bytes of arguments live on the heap");
        // SAFETY: big_params writes out[0..72) with 24 threads.
        ctx.scope(|s| unsafe { s.launch(&stream, &g, &LaunchConfig::new(1, 32), &p) })
            .unwrap();
        let want: Vec<u32> = bigs.iter().flat_map(|b| b.v).collect();
        check_u32("three 96-byte structs", &out.to_vec().unwrap(), &want, &rng);
    }
    drop(stream);
    assert_no_leaks(&ctx);
}

fn table_row(p: &ParamList<'_>, i: usize) -> String {
    p.describe()
        .get(i.min(p.len() - 1))
        .map(|d| d.to_string())
        .unwrap_or_default()
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn parameters_aligned_to_64_bytes_arrive_intact_and_over_max_align_is_a_typed_error() {
    let _guard = lock();
    let ctx = ctx();
    let m = module(&ctx);
    let mut rng = Rng::new();
    let stream = ctx.stream().unwrap();
    let pad = rng.next_u64() as u8;

    // 64 bytes, after a 1-byte argument: the value must sit at offset 64.
    {
        let f = m.function("align64_param").unwrap();
        let x = A64 {
            v: std::array::from_fn(|_| rng.next_u32()),
        };
        let out = ctx.alloc::<u32>(17).unwrap();
        out.fill(POISON_U32).unwrap();
        let p = params![pad, x, &out];
        // SAFETY: align64_param writes out[0..17) with 32 threads.
        let result = ctx.scope(|s| unsafe { s.launch(&stream, &f, &LaunchConfig::new(1, 32), &p) });
        if MAX_ALIGN >= 64 {
            result.unwrap();
            let d = p.describe();
            assert_eq!(
                (d[1].offset, d[1].align, d[1].size),
                (64, 64, 64),
                "{}",
                d[1]
            );
            assert_eq!(
                d[1].pointer % 64,
                0,
                "the value itself is 64-aligned in host storage"
            );
            let mut want = x.v.to_vec();
            want.push(u32::from(pad));
            check_u32("A64 by value", &out.to_vec().unwrap(), &want, &rng);
        } else {
            over_aligned_is_refused(&ctx, result, 64, &out);
        }
    }

    // 128 bytes: beyond MAX_ALIGN (64 today).
    {
        let g = m.function("align128_param").unwrap();
        let y = A128 {
            v: std::array::from_fn(|_| rng.next_u32()),
        };
        let out = ctx.alloc::<u32>(33).unwrap();
        out.fill(POISON_U32).unwrap();
        let p = params![pad, y, &out];
        // SAFETY: align128_param writes out[0..33) with 64 threads.
        let result = ctx.scope(|s| unsafe { s.launch(&stream, &g, &LaunchConfig::new(1, 64), &p) });
        if MAX_ALIGN >= 128 {
            result.unwrap();
            let mut want = y.v.to_vec();
            want.push(u32::from(pad));
            check_u32("A128 by value", &out.to_vec().unwrap(), &want, &rng);
        } else {
            over_aligned_is_refused(&ctx, result, 128, &out);
        }
    }
    drop(stream);
    assert_no_leaks(&ctx);
}

/// An argument aligned beyond `MAX_ALIGN` is refused before the driver with
/// a typed error naming the alignment; nothing ran.
fn over_aligned_is_refused(
    ctx: &Context,
    result: cudakit::Result<()>,
    align: usize,
    out: &cudakit::DeviceBuffer<'_, u32>,
) {
    match result {
        Err(Error::InvalidArgument(msg)) => {
            assert!(msg.contains(&format!("{align}-byte alignment")), "{msg}")
        }
        other => panic!("a {align}-aligned argument with MAX_ALIGN {MAX_ALIGN}: {other:?}"),
    }
    assert!(
        out.to_vec().unwrap().iter().all(|&v| v == POISON_U32),
        "nothing ran"
    );
    assert!(ctx.poisoned().is_none());
}

/// Source of the program thread `k` compiles: its own constant, so that
/// sixteen different programs go through NVRTC, the cache and the loader
/// at the same time.
fn thread_program(k: u32) -> String {
    format!(
        "extern \"C\" __global__ void per_thread(const unsigned* in, unsigned* out, unsigned a, unsigned n) {{\n\
         \x20   unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n\
         \x20   if (i < n) out[i] = in[i] * a + {k}u;\n\
         }}\n"
    )
}

fn thread_work(ctx: &Context, shared: &Function<'_>, k: u32, rng: &mut Rng) -> u64 {
    let compiled = Program::new(format!("thread{k}.cu"), thread_program(k))
        .compile_for(ctx)
        .unwrap_or_else(|e| panic!("thread {k}: {e}"));
    let module = ctx.load_module(&compiled).unwrap();
    let own = module.function("per_thread").unwrap();
    let stream = ctx.stream().unwrap();
    let mut launches = 0;
    for round in 0..6 {
        let n = rng.range(1000, 70_000) | 1;
        let data = random_u32s(rng, n);
        let (a, b) = (rng.next_u32() | 1, rng.next_u32());
        let mut src = ctx.alloc_pinned::<u32>(n).unwrap();
        src.copy_from_slice(&data);
        let d_in = ctx.alloc::<u32>(n).unwrap();
        let d_mid = ctx.alloc::<u32>(n).unwrap();
        let d_out = ctx.alloc::<u32>(n).unwrap();
        d_mid.fill(POISON_U32).unwrap();
        d_out.fill(POISON_U32).unwrap();
        let mut unified = ctx.alloc_unified::<u32>(n).unwrap();
        let mut back = ctx.alloc_pinned::<u32>(n).unwrap();
        back.fill(POISON_U32);
        let cfg = LaunchConfig::for_elements(n, 128).unwrap();
        ctx.scope(|s| {
            s.copy_to_device(&stream, &src, &d_in)?;
            let p = params![&d_in, &d_mid, a, b, 0i64, n as u32];
            // SAFETY: affine_after reads and writes n elements.
            unsafe { s.launch(&stream, shared, &cfg, &p) }?;
            let q = params![&d_mid, &d_out, a, n as u32];
            // SAFETY: per_thread reads and writes n elements.
            unsafe { s.launch(&stream, &own, &cfg, &q) }?;
            s.copy_to_host(&stream, &d_out, &mut back)?;
            s.copy(&stream, &d_out, &mut unified)
        })
        .unwrap_or_else(|e| panic!("thread {k} round {round}: {e}"));
        launches += 2;
        let mid = affine(&data, a, b);
        let want = affine(&mid, a, k);
        let what = format!("thread {k} round {round}");
        check_u32(&format!("{what}: pinned"), &back, &want, rng);
        check_u32(
            &format!("{what}: unified"),
            &unified.to_vec().unwrap(),
            &want,
            rng,
        );
        check_u32(
            &format!("{what}: synchronous"),
            &d_mid.to_vec().unwrap(),
            &mid,
            rng,
        );
    }
    launches
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn one_context_used_from_sixteen_threads_at_once() {
    let _guard = lock();
    let ctx = ctx();
    let m = module(&ctx);
    let shared = m.function("affine_after").unwrap();
    let mut rng = Rng::new();
    let before = ctx.metrics().launches;
    let threads = 16;
    let barrier = Barrier::new(threads);
    let mut forks: Vec<Rng> = (0..threads).map(|_| rng.fork()).collect();
    let launches: u64 = std::thread::scope(|t| {
        let handles: Vec<_> = forks
            .iter_mut()
            .enumerate()
            .map(|(k, r)| {
                let (ctx, shared, barrier) = (&ctx, &shared, &barrier);
                t.spawn(move || {
                    // Each thread its own handle of the one context.
                    let own = Context::new(0).unwrap();
                    assert!(own.same(ctx));
                    barrier.wait();
                    thread_work(&own, shared, k as u32, r)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .sum()
    });
    assert_eq!(launches, 16 * 6 * 2);
    assert_eq!(ctx.metrics().launches - before, launches);
    assert!(ctx.poisoned().is_none());
    assert_no_leaks(&ctx);
}

/// Turns kernel timing off when dropped, also when the test fails.
struct TimingOff<'a>(&'a Context);

impl Drop for TimingOff<'_> {
    fn drop(&mut self) {
        self.0.set_kernel_timing(false);
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn kernel_timing_switched_on_and_off_between_scopes() {
    let _guard = lock();
    let ctx = ctx();
    let _off = TimingOff(&ctx);
    let m = module(&ctx);
    let on = m.function("timing_probe_on").unwrap();
    let off = m.function("timing_probe_off").unwrap();
    let mut rng = Rng::new();
    let n = rng.range(1 << 16, 1 << 18);
    let data = random_u32s(&mut rng, n);
    let input = ctx.upload(&data).unwrap();
    let out = ctx.alloc::<u32>(n).unwrap();
    let cfg = LaunchConfig::for_elements(n, 256).unwrap();
    let stream = ctx.stream().unwrap();
    let mut host = ctx.alloc_pinned::<u32>(n).unwrap();
    host.copy_from_slice(&data);
    // Launches `f` `times` times (each adding or subtracting k) in one scope
    // with an asynchronous upload, and checks the last result.
    let mut run = |f: &Function<'_>, times: usize, add: bool| {
        let k = rng.next_u32();
        out.fill(POISON_U32).unwrap();
        ctx.scope(|s| {
            s.copy_to_device(&stream, &host, &input)?;
            for _ in 0..times {
                let p = params![&input, &out, k, n as u32];
                // SAFETY: the probes read and write n elements.
                unsafe { s.launch(&stream, f, &cfg, &p) }?;
            }
            Ok(())
        })
        .unwrap();
        let want: Vec<u32> = data
            .iter()
            .map(|&v| {
                if add {
                    v.wrapping_add(k)
                } else {
                    v.wrapping_sub(k)
                }
            })
            .collect();
        check_u32(f.name(), &out.to_vec().unwrap(), &want, &rng);
    };
    let entry = |name: &str| ctx.metrics().kernels.get(name).cloned();
    assert!(entry("timing_probe_on").is_none() && entry("timing_probe_off").is_none());

    ctx.set_kernel_timing(false);
    let m0 = ctx.metrics();
    run(&off, 3, false);
    let m1 = ctx.metrics();
    assert_eq!(m1.launches - m0.launches, 3);
    assert!(
        entry("timing_probe_off").is_none(),
        "timing off: no kernel time"
    );
    assert_eq!(m1.htod.time, m0.htod.time, "timing off: no copy time");

    ctx.set_kernel_timing(true);
    run(&on, 5, true);
    let m2 = ctx.metrics();
    let t = entry("timing_probe_on").expect("timing on: kernel time recorded");
    assert_eq!(t.launches, 5);
    assert!(t.total > Duration::ZERO, "{t:?}");
    assert!(
        m2.htod.time > m1.htod.time,
        "timing on: the upload was timed"
    );
    assert!(entry("timing_probe_off").is_none());

    ctx.set_kernel_timing(false);
    run(&on, 2, true);
    let m3 = ctx.metrics();
    assert_eq!(
        entry("timing_probe_on"),
        Some(t),
        "timing off again: unchanged"
    );
    assert_eq!(m3.launches - m2.launches, 2);
    assert_eq!(m3.htod.time, m2.htod.time);

    ctx.set_kernel_timing(true);
    let started = Instant::now();
    run(&off, 1, false);
    let wall = started.elapsed();
    let t_off = entry("timing_probe_off").expect("on again: recorded");
    assert_eq!(t_off.launches, 1);
    assert!(
        t_off.total > Duration::ZERO && t_off.total <= wall,
        "{t_off:?} vs {wall:?}"
    );
    assert_eq!(
        entry("timing_probe_on"),
        Some(t),
        "the other function untouched"
    );
    drop((input, out, host, stream));
    assert_no_leaks(&ctx);
}
