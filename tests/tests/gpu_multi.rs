//! Several GPUs: peer access, peer copies, peer kernel arguments, fault
//! isolation between devices, and NCCL collectives (one process over both
//! devices, and two processes joined by a unique id sent through a pipe).
//!
//! Every GPU test needs two GPUs; on a machine with fewer it reports
//! `cudakit_suite::not_run("needs 2 GPUs, found N")`. Tests that need a
//! process of their own (a fault, a second NCCL rank, a rank that never
//! joins, a missing NCCL) re-run this binary, filtered to themselves, with
//! `CUDAKIT_MULTI_CHILD` naming the role; the parent kills a child that
//! outlives its limit, so nothing hangs.
//!
//! On the shared multi-GPU machines NVLink multicast stays off: the command
//! exports `NCCL_NVLS_ENABLE=0`, and [`nvls_off`] sets it again before NCCL
//! is first loaded, and for every child.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard, Once};
use std::time::{Duration, Instant};

use cudakit::compile::program::Program;
use cudakit::multi::nccl::{self, Communicator, NcclElement, ReduceOp, UniqueId};
use cudakit::multi::{self, copy_peer, PeerMatrix};
use cudakit::work::launch::LaunchConfig;
use cudakit::{params, Bf16, Context, Error, F16};
use cudakit_suite::kernels::FAULTS;
use cudakit_suite::rng::Rng;

const CHILD: &str = "CUDAKIT_MULTI_CHILD";

/// Peer access is per context, shared by every test of the process: tests
/// that set it hold this lock.
static PEER_STATE: Mutex<()> = Mutex::new(());

fn peer_lock() -> MutexGuard<'static, ()> {
    PEER_STATE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Belt and braces: NVLink multicast off before NCCL is first loaded.
fn nvls_off() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if std::env::var("NCCL_NVLS_ENABLE").as_deref() != Ok("0") {
            std::env::set_var("NCCL_NVLS_ENABLE", "0");
        }
    });
}

/// The contexts of devices 0 and 1, or the test ends as not run.
fn two_gpus() -> (Context, Context) {
    let n = cudakit::Device::count().unwrap_or(0);
    if n < 2 {
        cudakit_suite::not_run(format!("needs 2 GPUs, found {n}"));
    }
    (Context::new(0).unwrap(), Context::new(1).unwrap())
}

/// Runs this binary's test `test` as a child with role `role`, `input` on
/// its standard input; kills it after `limit`. Returns (success, stdout,
/// stderr).
fn run_child(
    test: &str,
    role: &str,
    input: &str,
    limit: Duration,
    env: &[(&str, &str)],
) -> (bool, String, String) {
    let exe = std::env::current_exe().expect("own executable");
    let mut cmd = Command::new(exe);
    cmd.args([
        test,
        "--exact",
        "--include-ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(CHILD, role)
    .env("NCCL_NVLS_ENABLE", "0")
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn the child test");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .expect("write the child's input");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_t = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err_t = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the child") {
            break Some(status);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (stdout, stderr) = (out_t.join().unwrap(), err_t.join().unwrap());
    match status {
        None => {
            panic!("child {role} of {test} ran past {limit:?} and was killed:\n{stdout}\n{stderr}")
        }
        Some(s) => (s.success(), stdout, stderr),
    }
}

/// The line of the child's output that starts with `tag`.
fn line_of(stdout: &str, stderr: &str, tag: &str) -> String {
    stdout
        .lines()
        .find_map(|l| l.find(tag).map(|i| l[i..].to_owned()))
        .unwrap_or_else(|| panic!("no {tag} line from the child:\n{stdout}\n{stderr}"))
}

/// `Some(role)` in a child (checked against `expected`).
fn child_role(expected: &str) -> Option<()> {
    let role = std::env::var(CHILD).ok()?;
    assert_eq!(
        role, expected,
        "{CHILD}={role} is set, but this test's child role is {expected}: unset it"
    );
    Some(())
}

const PEER_KERNEL: &str = r#"
extern "C" __global__ void peer_axpy(const float* a, const float* b, float* out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + 2.0f * b[i];
}
"#;

// ---------------------------------------------------------------- topology

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn topology_and_one_context_per_device_from_any_thread() {
    let (c0, c1) = two_gpus();
    let matrix = PeerMatrix::read().unwrap();
    println!("{matrix}");
    assert!(matrix.devices.len() >= 2);
    let l01 = matrix.get(0, 1).unwrap();
    let l10 = matrix.get(1, 0).unwrap();
    assert_eq!((l01.from, l01.to), (0, 1));
    assert_eq!(l01.can_access, c0.can_access_peer(&c1).unwrap());
    assert_eq!(l10.can_access, c1.can_access_peer(&c0).unwrap());
    assert!(matrix.get(0, 0).is_none());
    let all = multi::contexts().unwrap();
    assert!(all[0].same(&c0) && all[1].same(&c1));
    // Each context from another thread than the one that made it.
    let mut rng = Rng::new();
    let data: Vec<Vec<f32>> = (0..2).map(|_| rng.vec_f32(4099)).collect();
    std::thread::scope(|t| {
        for (ctx, d) in [(&c1, &data[0]), (&c0, &data[1])] {
            t.spawn(move || {
                let b = ctx.upload(d).unwrap();
                assert_eq!(&b.to_vec().unwrap(), d);
            });
        }
    });
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn peer_access_is_idempotent_and_impossible_access_is_typed() {
    let (c0, c1) = two_gpus();
    let _g = peer_lock();
    match c0.enable_peer_access(&c0) {
        Err(Error::PeerAccessUnsupported { from: 0, to: 0, .. }) => {}
        other => panic!("same device: {other:?}"),
    }
    if !c0.can_access_peer(&c1).unwrap() {
        assert!(matches!(
            c0.enable_peer_access(&c1),
            Err(Error::PeerAccessUnsupported { from: 0, to: 1, .. })
        ));
        cudakit_suite::not_run("devices 0 and 1 cannot reach each other (no peer access)");
    }
    c0.enable_peer_access(&c1).unwrap();
    c0.enable_peer_access(&c1).unwrap();
    assert!(c0.peer_access_enabled(&c1));
    // SAFETY: nothing else queues work meanwhile; no device-launched graph.
    unsafe { c0.disable_peer_access(&c1) }.unwrap();
    // SAFETY: nothing else queues work meanwhile; no device-launched graph.
    unsafe { c0.disable_peer_access(&c1) }.unwrap();
    assert!(!c0.peer_access_enabled(&c1));
}

// ------------------------------------------------------------------ copies

fn set_peer(c0: &Context, c1: &Context, on: bool) {
    for (a, b) in [(c0, c1), (c1, c0)] {
        if on {
            a.enable_peer_access(b).unwrap();
        } else {
            // SAFETY: as above.
            unsafe { a.disable_peer_access(b) }.unwrap();
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn peer_copies_with_and_without_peer_access() {
    let (c0, c1) = two_gpus();
    let _g = peer_lock();
    let can = c0.can_access_peer(&c1).unwrap() && c1.can_access_peer(&c0).unwrap();
    let mut rng = Rng::new();
    for on in [false, true] {
        if on && !can {
            cudakit_suite::not_run(
                "no peer access between devices 0 and 1 (the copies without it passed)",
            );
        }
        set_peer(&c0, &c1, on);
        for n in [1usize, 7, 100_003] {
            let x = rng.vec_f32(n);
            let y = rng.vec_f32(n);
            let (a0, a1) = (c0.upload(&x).unwrap(), c1.upload(&y).unwrap());
            let (b0, b1) = (c0.alloc::<f32>(n).unwrap(), c1.alloc::<f32>(n).unwrap());
            b0.fill(f32::NAN).unwrap();
            b1.fill(f32::NAN).unwrap();
            // Synchronous, each way.
            copy_peer(&a0, &b1).unwrap();
            copy_peer(&a1, &b0).unwrap();
            assert_eq!(
                b1.to_vec().unwrap(),
                x,
                "sync 0->1 peer={on} n={n} {}",
                rng.describe()
            );
            assert_eq!(b0.to_vec().unwrap(), y, "sync 1->0 peer={on} n={n}");
            // Inside scopes, each way, both at once, on either device's stream.
            b0.fill(f32::NAN).unwrap();
            b1.fill(f32::NAN).unwrap();
            let (s0, s1) = (c0.stream().unwrap(), c1.stream().unwrap());
            c0.scope(|s| {
                c1.scope(|t| {
                    s.copy_peer(&s0, &a0, &b1)?;
                    t.copy_peer(&s1, &a1, &b0)
                })
            })
            .unwrap();
            assert_eq!(b1.to_vec().unwrap(), x, "scope 0->1 peer={on} n={n}");
            assert_eq!(b0.to_vec().unwrap(), y, "scope 1->0 peer={on} n={n}");
            // The stream of the destination's device pulls.
            b1.fill(f32::NAN).unwrap();
            c1.scope(|t| t.copy_peer(&s1, &a0, &b1)).unwrap();
            assert_eq!(b1.to_vec().unwrap(), x, "pull 0->1 peer={on} n={n}");
            // A scope of neither buffer's context is refused.
            let c0b = c0.upload(&x).unwrap();
            assert!(matches!(
                c1.scope(|t| t.copy_peer(&s1, &a0, &c0b)),
                Err(Error::ContextMismatch { .. })
            ));
        }
    }
}

// ------------------------------------------------------- kernel arguments

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn peer_kernel_arguments_with_and_without_peer_access() {
    let (c0, c1) = two_gpus();
    let _g = peer_lock();
    let compiled = Program::new("peer_axpy.cu", PEER_KERNEL)
        .compile_for(&c0)
        .unwrap();
    let module = c0.load_module(&compiled).unwrap();
    let f = module.function("peer_axpy").unwrap();
    let stream = c0.stream().unwrap();
    let mut rng = Rng::new();
    let n = 10_007usize;
    let (x, y) = (rng.vec_f32(n), rng.vec_f32(n));
    let a = c0.upload(&x).unwrap();
    let b = c1.upload(&y).unwrap(); // device 1
    let out = c0.alloc::<f32>(n).unwrap();
    out.fill(f32::NAN).unwrap();
    let cfg = LaunchConfig::for_elements(n, 256).unwrap();
    // SAFETY: nothing else queues work meanwhile; no device-launched graph.
    unsafe { c0.disable_peer_access(&c1) }.unwrap();
    // SAFETY: peer_axpy reads n elements of a and b and writes n of out.
    let refused =
        c0.scope(|s| unsafe { s.launch(&stream, &f, &cfg, &params![&a, &b, &out, n as u32]) });
    match refused {
        Err(Error::ArgumentContextMismatch {
            index: 1,
            argument_device: 1,
            kernel_device: 0,
            ..
        }) => {}
        other => panic!("a device-1 argument without peer access: {other:?}"),
    }
    assert!(c0.poisoned().is_none());
    assert!(
        out.to_vec().unwrap().iter().all(|v| v.is_nan()),
        "refused launch wrote"
    );
    if !c0.can_access_peer(&c1).unwrap() {
        cudakit_suite::not_run(
            "device 0 cannot reach device 1 (the refusal without peer access passed)",
        );
    }
    c0.enable_peer_access(&c1).unwrap();
    // SAFETY: as above; device 0 has peer access to b's memory.
    c0.scope(|s| unsafe { s.launch(&stream, &f, &cfg, &params![&a, &b, &out, n as u32]) })
        .unwrap();
    let got = out.to_vec().unwrap();
    for i in 0..n {
        let want = x[i] as f64 + 2.0 * y[i] as f64;
        assert!(
            (got[i] as f64 - want).abs() <= 1e-6 * want.abs().max(1.0),
            "out[{i}] = {} want {want} {}",
            got[i],
            rng.describe()
        );
    }
    // Disabling again refuses again.
    // SAFETY: nothing else queues work meanwhile; no device-launched graph.
    unsafe { c0.disable_peer_access(&c1) }.unwrap();
    // SAFETY: as above.
    let again =
        c0.scope(|s| unsafe { s.launch(&stream, &f, &cfg, &params![&a, &b, &out, n as u32]) });
    assert!(matches!(
        again,
        Err(Error::ArgumentContextMismatch { index: 1, .. })
    ));
}

// -------------------------------------------------------- fault isolation

/// Runs peer_axpy on device 0 and checks every element; `Ok(false)` for a
/// wrong element.
fn device0_axpy(c0: &Context, x: &[f32], y: &[f32]) -> cudakit::Result<bool> {
    let n = x.len();
    let compiled = Program::new("peer_axpy.cu", PEER_KERNEL).compile_for(c0)?;
    let m0 = c0.load_module(&compiled)?;
    let f = m0.function("peer_axpy")?;
    let (a, b, out) = (c0.upload(x)?, c0.upload(y)?, c0.alloc::<f32>(n)?);
    out.fill(f32::NAN)?;
    let s0 = c0.stream()?;
    let cfg = LaunchConfig::for_elements(n, 128)?;
    // SAFETY: peer_axpy reads and writes n elements of buffers of device 0.
    c0.scope(|s| unsafe { s.launch(&s0, &f, &cfg, &params![&a, &b, &out, n as u32]) })?;
    let got = out.to_vec()?;
    Ok((0..n).all(|i| got[i] == x[i] + 2.0 * y[i]))
}

/// In one process: a trap on device 1 poisons device 1's context, and
/// cudakit spreads nothing to device 0's. What the driver then does to
/// device 0 is its own: the first H200 run (driver 580) answered device 0's
/// next call with the same 719, as CUDA documents for launch failures ("the
/// process must be terminated"). The test accepts either outcome the driver
/// may choose, but never a silent one: device 0 either computes every
/// element right, or fails with a typed sticky error that cudakit records
/// on device 0's context, naming the call that met it.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn fault_on_one_device_poisons_only_its_context() {
    if child_role("fault").is_some() {
        let (c0, c1) = two_gpus();
        let faults = Program::new("faults.cu", FAULTS).compile_for(&c1).unwrap();
        let m1 = c1.load_module(&faults).unwrap();
        let trap = m1.function("fault_trap").unwrap();
        let s1 = c1.stream().unwrap();
        // SAFETY: the fault is the point; this is a child process.
        let err = c1
            .scope(|s| unsafe { s.launch(&s1, &trap, &LaunchConfig::new(1, 1), &params![]) })
            .unwrap_err();
        assert!(err.is_sticky(), "{err}");
        let code = err.driver_error().unwrap().code.number();
        assert!(c1.poisoned().is_some());
        assert!(matches!(
            c1.alloc::<f32>(4),
            Err(Error::ContextPoisoned { device: 1, .. })
        ));
        // cudakit itself spreads nothing.
        let untouched = c0.poisoned().is_none();
        let mut rng = Rng::new();
        let n = 4097usize;
        let (x, y) = (rng.vec_f32(n), rng.vec_f32(n));
        let device0 = match device0_axpy(&c0, &x, &y) {
            Ok(true) if c0.poisoned().is_none() => "usable".to_owned(),
            Ok(_) => "wrong-results".to_owned(),
            Err(e) if e.is_sticky() && c0.poisoned().is_some() => {
                let cause = c0.poisoned().unwrap();
                format!("typed-sticky:{}:{}", cause.call, cause.code.number())
            }
            Err(e) => format!("untyped:{}", e.to_string().replace(' ', "_")),
        };
        println!(
            "ISOLATION device1_error={code} device1_poisoned={} device0_untouched_by_cudakit={untouched} \
             device0={device0}",
            c1.poisoned().is_some(),
        );
        drop((m1, s1));
        return;
    }
    let _ = two_gpus();
    let (ok, out, err) = run_child(
        "fault_on_one_device_poisons_only_its_context",
        "fault",
        "",
        Duration::from_secs(120),
        &[],
    );
    assert!(ok, "child failed:\n{out}\n{err}");
    let line = line_of(&out, &err, "ISOLATION ");
    println!("{line}");
    assert!(line.contains("device1_poisoned=true"), "{line}");
    assert!(line.contains("device0_untouched_by_cudakit=true"), "{line}");
    assert!(
        line.contains("device0=usable") || line.contains("device0=typed-sticky:"),
        "device 0 must either work or fail with a typed sticky error: {line}"
    );
}

/// The dependable isolation: one process per device. A child process on
/// device 1 traps while this process keeps computing on device 0, before,
/// during and after the fault, every element checked.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_fault_in_another_process_leaves_this_device_working() {
    if child_role("fault-process").is_some() {
        let c1 = Context::new(1).unwrap();
        let faults = Program::new("faults.cu", FAULTS).compile_for(&c1).unwrap();
        let m1 = c1.load_module(&faults).unwrap();
        let trap = m1.function("fault_trap").unwrap();
        let s1 = c1.stream().unwrap();
        // SAFETY: the fault is the point; this is a child process.
        let err = c1
            .scope(|s| unsafe { s.launch(&s1, &trap, &LaunchConfig::new(1, 1), &params![]) })
            .unwrap_err();
        println!("CHILD-FAULT sticky={} {err}", err.is_sticky());
        drop((m1, s1));
        return;
    }
    let (c0, _c1) = two_gpus();
    let mut rng = Rng::new();
    let n = 65_537usize;
    let (x, y) = (rng.vec_f32(n), rng.vec_f32(n));
    assert!(
        device0_axpy(&c0, &x, &y).unwrap(),
        "device 0 before the fault"
    );
    let stop = std::sync::atomic::AtomicBool::new(false);
    let rounds = std::thread::scope(|t| {
        let worker = t.spawn(|| {
            let mut rounds = 0u32;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                assert!(
                    device0_axpy(&c0, &x, &y).unwrap(),
                    "device 0 during the fault"
                );
                rounds += 1;
            }
            rounds
        });
        let (ok, out, err) = run_child(
            "a_fault_in_another_process_leaves_this_device_working",
            "fault-process",
            "",
            Duration::from_secs(120),
            &[],
        );
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let line = line_of(&out, &err, "CHILD-FAULT ");
        assert!(ok, "child failed:\n{out}\n{err}");
        assert!(line.contains("sticky=true"), "{line}");
        worker.join().expect("device 0 worker")
    });
    assert!(rounds > 0, "device 0 ran no round while the child faulted");
    assert!(c0.poisoned().is_none());
    assert!(
        device0_axpy(&c0, &x, &y).unwrap(),
        "device 0 after the fault"
    );
    println!("device 0 computed {rounds} checked rounds while device 1's process faulted");
}

// ------------------------------------------------------------ collectives

/// An NCCL element type with what the checks need.
trait Elem: NcclElement + std::fmt::Debug + Send + Sync {
    const NAME: &'static str;
    const INT: bool;
    fn gen(rng: &mut Rng) -> Self;
    fn to_f64(self) -> f64;
    fn from_f64(v: f64) -> Self;
    fn poison() -> Self;
}

macro_rules! int_elem {
    ($($t:ty => $poison:expr),*) => {$(
        impl Elem for $t {
            const NAME: &'static str = stringify!($t);
            const INT: bool = true;
            fn gen(rng: &mut Rng) -> Self { rng.below(6) as $t }
            fn to_f64(self) -> f64 { self as f64 }
            fn from_f64(v: f64) -> Self { v as $t }
            fn poison() -> Self { $poison }
        }
    )*};
}
int_elem!(i8 => -77, u8 => 201, i32 => -123_457, u32 => 0xdead_beef, i64 => -9_876_543_210, u64 => 0xdead_beef_cafe);

impl Elem for f32 {
    const NAME: &'static str = "f32";
    const INT: bool = false;
    fn gen(rng: &mut Rng) -> Self {
        rng.f32_sym()
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn poison() -> Self {
        f32::NAN
    }
}

impl Elem for f64 {
    const NAME: &'static str = "f64";
    const INT: bool = false;
    fn gen(rng: &mut Rng) -> Self {
        rng.f64_sym()
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn from_f64(v: f64) -> Self {
        v
    }
    fn poison() -> Self {
        f64::NAN
    }
}

/// Half types get small integers (and halves, from Avg): every result is exact.
impl Elem for F16 {
    const NAME: &'static str = "f16";
    const INT: bool = false;
    fn gen(rng: &mut Rng) -> Self {
        F16::from_f32(rng.i32_in(-5, 6) as f32)
    }
    fn to_f64(self) -> f64 {
        self.to_f32() as f64
    }
    fn from_f64(v: f64) -> Self {
        F16::from_f32(v as f32)
    }
    fn poison() -> Self {
        F16(0x7e00)
    }
}

impl Elem for Bf16 {
    const NAME: &'static str = "bf16";
    const INT: bool = false;
    fn gen(rng: &mut Rng) -> Self {
        Bf16::from_f32(rng.i32_in(-5, 6) as f32)
    }
    fn to_f64(self) -> f64 {
        self.to_f32() as f64
    }
    fn from_f64(v: f64) -> Self {
        Bf16::from_f32(v as f32)
    }
    fn poison() -> Self {
        Bf16(0x7fc0)
    }
}

fn reduce_ref<T: Elem>(op: ReduceOp, a: T, b: T) -> T {
    let (x, y) = (a.to_f64(), b.to_f64());
    let v = match op {
        ReduceOp::Sum => x + y,
        ReduceOp::Prod => x * y,
        ReduceOp::Max => x.max(y),
        ReduceOp::Min => x.min(y),
        ReduceOp::Avg if T::INT => ((x + y) / 2.0).trunc(),
        ReduceOp::Avg => (x + y) / 2.0,
        _ => unreachable!(),
    };
    T::from_f64(v)
}

fn check_all<T: Elem>(what: &str, got: &[T], want: &[T], rng: &Rng) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        // Bit-exact: every reference is the correctly rounded result NCCL
        // computes (sums, products, extrema and halving of two values).
        let (g, w) = (g.to_f64(), w.to_f64());
        assert!(
            g == w,
            "{what} {}: element {i} is {g}, want {w}; {}",
            T::NAME,
            rng.describe()
        );
    }
}

struct Pair {
    c0: Context,
    c1: Context,
    comms: Vec<Communicator>,
}

fn collectives_of<T: Elem>(p: &Pair, rng: &mut Rng, n: usize) {
    let (c0, c1, comms) = (&p.c0, &p.c1, &p.comms);
    let (s0, s1) = (c0.stream().unwrap(), c1.stream().unwrap());
    let gen = |rng: &mut Rng, n: usize| -> Vec<T> { (0..n).map(|_| T::gen(rng)).collect() };
    let poison = |n: usize| vec![T::poison(); n];
    let (x0, x1) = (gen(rng, n), gen(rng, n));
    let (a0, a1) = (c0.upload(&x0).unwrap(), c1.upload(&x1).unwrap());

    // All-reduce, every operator.
    for op in [
        ReduceOp::Sum,
        ReduceOp::Prod,
        ReduceOp::Max,
        ReduceOp::Min,
        ReduceOp::Avg,
    ] {
        let (r0, r1) = (
            c0.upload(&poison(n)).unwrap(),
            c1.upload(&poison(n)).unwrap(),
        );
        c0.scope(|s| {
            c1.scope(|t| {
                nccl::group(|g| {
                    g.all_reduce(&comms[0], s, &s0, &a0, &r0, op)?;
                    g.all_reduce(&comms[1], t, &s1, &a1, &r1, op)
                })
            })
        })
        .unwrap();
        let want: Vec<T> = x0
            .iter()
            .zip(&x1)
            .map(|(&a, &b)| reduce_ref(op, a, b))
            .collect();
        check_all(
            &format!("all_reduce {op:?} n={n} rank 0"),
            &r0.to_vec().unwrap(),
            &want,
            rng,
        );
        check_all(
            &format!("all_reduce {op:?} n={n} rank 1"),
            &r1.to_vec().unwrap(),
            &want,
            rng,
        );
    }

    // Broadcast from rank 1, in place.
    let (b0, b1) = (c0.upload(&poison(n)).unwrap(), c1.upload(&x1).unwrap());
    c0.scope(|s| {
        c1.scope(|t| {
            nccl::group(|g| {
                g.broadcast(&comms[0], s, &s0, &b0, 1)?;
                g.broadcast(&comms[1], t, &s1, &b1, 1)
            })
        })
    })
    .unwrap();
    check_all(
        &format!("broadcast n={n} rank 0"),
        &b0.to_vec().unwrap(),
        &x1,
        rng,
    );
    check_all(
        &format!("broadcast n={n} rank 1"),
        &b1.to_vec().unwrap(),
        &x1,
        rng,
    );

    // Reduce to rank 0; rank 1's receive buffer stays untouched.
    let (r0, r1) = (
        c0.upload(&poison(n)).unwrap(),
        c1.upload(&poison(n)).unwrap(),
    );
    c0.scope(|s| {
        c1.scope(|t| {
            nccl::group(|g| {
                g.reduce(&comms[0], s, &s0, &a0, &r0, ReduceOp::Max, 0)?;
                g.reduce(&comms[1], t, &s1, &a1, &r1, ReduceOp::Max, 0)
            })
        })
    })
    .unwrap();
    let want: Vec<T> = x0
        .iter()
        .zip(&x1)
        .map(|(&a, &b)| reduce_ref(ReduceOp::Max, a, b))
        .collect();
    check_all(
        &format!("reduce n={n} root"),
        &r0.to_vec().unwrap(),
        &want,
        rng,
    );
    let untouched = r1.to_vec().unwrap();
    assert!(
        untouched
            .iter()
            .all(|v| v.to_f64().to_bits() == T::poison().to_f64().to_bits()),
        "reduce wrote the non-root's buffer ({})",
        T::NAME
    );

    // All-gather.
    let (g0, g1) = (
        c0.upload(&poison(2 * n)).unwrap(),
        c1.upload(&poison(2 * n)).unwrap(),
    );
    c0.scope(|s| {
        c1.scope(|t| {
            nccl::group(|g| {
                g.all_gather(&comms[0], s, &s0, &a0, &g0)?;
                g.all_gather(&comms[1], t, &s1, &a1, &g1)
            })
        })
    })
    .unwrap();
    let want: Vec<T> = x0.iter().chain(&x1).copied().collect();
    check_all(
        &format!("all_gather n={n} rank 0"),
        &g0.to_vec().unwrap(),
        &want,
        rng,
    );
    check_all(
        &format!("all_gather n={n} rank 1"),
        &g1.to_vec().unwrap(),
        &want,
        rng,
    );

    // Reduce-scatter: each rank sends 2n, gets its n.
    let (y0, y1) = (gen(rng, 2 * n), gen(rng, 2 * n));
    let (e0, e1) = (c0.upload(&y0).unwrap(), c1.upload(&y1).unwrap());
    let (r0, r1) = (
        c0.upload(&poison(n)).unwrap(),
        c1.upload(&poison(n)).unwrap(),
    );
    c0.scope(|s| {
        c1.scope(|t| {
            nccl::group(|g| {
                g.reduce_scatter(&comms[0], s, &s0, &e0, &r0, ReduceOp::Sum)?;
                g.reduce_scatter(&comms[1], t, &s1, &e1, &r1, ReduceOp::Sum)
            })
        })
    })
    .unwrap();
    let sum: Vec<T> = y0
        .iter()
        .zip(&y1)
        .map(|(&a, &b)| reduce_ref(ReduceOp::Sum, a, b))
        .collect();
    check_all(
        &format!("reduce_scatter n={n} rank 0"),
        &r0.to_vec().unwrap(),
        &sum[..n],
        rng,
    );
    check_all(
        &format!("reduce_scatter n={n} rank 1"),
        &r1.to_vec().unwrap(),
        &sum[n..],
        rng,
    );

    // Send / receive: the ranks swap their buffers.
    let (q0, q1) = (
        c0.upload(&poison(n)).unwrap(),
        c1.upload(&poison(n)).unwrap(),
    );
    c0.scope(|s| {
        c1.scope(|t| {
            nccl::group(|g| {
                g.send(&comms[0], s, &s0, &a0, 1)?;
                g.recv(&comms[0], s, &s0, &q0, 1)?;
                g.send(&comms[1], t, &s1, &a1, 0)?;
                g.recv(&comms[1], t, &s1, &q1, 0)
            })
        })
    })
    .unwrap();
    check_all(
        &format!("send/recv n={n} rank 0"),
        &q0.to_vec().unwrap(),
        &x1,
        rng,
    );
    check_all(
        &format!("send/recv n={n} rank 1"),
        &q1.to_vec().unwrap(),
        &x0,
        rng,
    );
}

fn pair() -> Pair {
    nvls_off();
    let (c0, c1) = two_gpus();
    let comms = match Communicator::init_all(&[&c0, &c1]) {
        Ok(c) => c,
        Err(Error::Load(e)) => cudakit_suite::not_run(format!("NCCL is not installed: {e}")),
        Err(e) => panic!("ncclCommInitAll: {e}"),
    };
    assert_eq!(
        (comms[0].rank(), comms[1].rank(), comms[1].size()),
        (0, 1, 2)
    );
    Pair { c0, c1, comms }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn every_collective_every_type_against_a_cpu_reference() {
    let p = pair();
    println!(
        "NCCL {:?} from {:?}",
        nccl::version().unwrap(),
        nccl::origin()
    );
    let mut rng = Rng::new();
    for n in [1usize, 3, 1001, 65_537] {
        collectives_of::<i8>(&p, &mut rng, n);
        collectives_of::<u8>(&p, &mut rng, n);
        collectives_of::<i32>(&p, &mut rng, n);
        collectives_of::<u32>(&p, &mut rng, n);
        collectives_of::<i64>(&p, &mut rng, n);
        collectives_of::<u64>(&p, &mut rng, n);
        collectives_of::<F16>(&p, &mut rng, n);
        collectives_of::<Bf16>(&p, &mut rng, n);
        collectives_of::<f32>(&p, &mut rng, n);
        collectives_of::<f64>(&p, &mut rng, n);
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn bad_collective_input_is_a_typed_error_with_nothing_queued() {
    let p = pair();
    let (c0, c1, comms) = (&p.c0, &p.c1, &p.comms);
    let (s0, s1) = (c0.stream().unwrap(), c1.stream().unwrap());
    let x0 = c0.upload(&[1.0f32; 5]).unwrap();
    let x1 = c1.upload(&[2.0f32; 7]).unwrap();
    let r0 = c0.upload(&[f32::NAN; 5]).unwrap();
    let r1 = c1.upload(&[f32::NAN; 7]).unwrap();
    // Lengths that differ between the ranks.
    let e = c0
        .scope(|s| {
            c1.scope(|t| {
                nccl::group(|g| {
                    g.all_reduce(&comms[0], s, &s0, &x0, &r0, ReduceOp::Sum)?;
                    g.all_reduce(&comms[1], t, &s1, &x1, &r1, ReduceOp::Sum)
                })
            })
        })
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::CollectiveMismatch {
                call: "ncclAllReduce",
                ..
            }
        ),
        "{e}"
    );
    println!("lengths: {e}");
    // Element types that differ between the ranks.
    let i1 = c1.upload(&[2i32; 5]).unwrap();
    let j1 = c1.upload(&[0i32; 5]).unwrap();
    let e = c0
        .scope(|s| {
            c1.scope(|t| {
                nccl::group(|g| {
                    g.all_reduce(&comms[0], s, &s0, &x0, &r0, ReduceOp::Sum)?;
                    g.all_reduce(&comms[1], t, &s1, &i1, &j1, ReduceOp::Sum)
                })
            })
        })
        .unwrap_err();
    assert!(e.to_string().contains("element type"), "{e}");
    // A buffer of a device outside the communicator's rank.
    let e = c0
        .scope(|s| nccl::group(|g| g.all_reduce(&comms[0], s, &s0, &x1, &r0, ReduceOp::Sum)))
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::CommunicatorDevice {
                rank: 0,
                communicator_device: 0,
                got: 1,
                ..
            }
        ),
        "{e}"
    );
    // A lone rank of a one-process communicator would wait forever.
    let e = c0
        .scope(|s| comms[0].all_reduce(s, &s0, &x0, &r0, ReduceOp::Sum))
        .unwrap_err();
    assert!(matches!(e, Error::CollectiveMismatch { .. }), "{e}");
    // A receive buffer of the wrong length.
    let e = c0
        .scope(|s| nccl::group(|g| g.all_gather(&comms[0], s, &s0, &x0, &r0)))
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::LengthMismatch {
                expected: 10,
                got: 5,
                ..
            }
        ),
        "{e}"
    );
    // Mismatched send/receive.
    let e = c0
        .scope(|s| {
            c1.scope(|t| {
                nccl::group(|g| {
                    g.send(&comms[0], s, &s0, &x0, 1)?;
                    g.recv(&comms[1], t, &s1, &x1, 0)
                })
            })
        })
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::CollectiveMismatch {
                call: "ncclSend",
                ..
            }
        ),
        "{e}"
    );
    // Nothing was queued, no data lost, and the communicators still work.
    assert!(r0.to_vec().unwrap().iter().all(|v| v.is_nan()));
    assert!(r1.to_vec().unwrap().iter().all(|v| v.is_nan()));
    assert_eq!(x1.to_vec().unwrap(), [2.0; 7]);
    let y1 = c1.upload(&[3.0f32; 5]).unwrap();
    let z1 = c1.upload(&[f32::NAN; 5]).unwrap();
    c0.scope(|s| {
        c1.scope(|t| {
            nccl::group(|g| {
                g.all_reduce(&comms[0], s, &s0, &x0, &r0, ReduceOp::Sum)?;
                g.all_reduce(&comms[1], t, &s1, &y1, &z1, ReduceOp::Sum)
            })
        })
    })
    .unwrap();
    assert_eq!(r0.to_vec().unwrap(), [4.0; 5]);
    assert_eq!(z1.to_vec().unwrap(), [4.0; 5]);
    assert!(comms.iter().all(|c| c.aborted().is_none()));
}

// ------------------------------------------------------ several processes

/// Rank `rank` of the two-process run: all-reduce f32 and broadcast bf16,
/// checked against references computed from the shared seed.
fn two_process_rank(ctx: &Context, id: &UniqueId, rank: usize, seed: u64) {
    let comm = Communicator::init_rank(ctx, id, rank, 2, Duration::from_secs(60)).unwrap();
    assert!(comm.is_nonblocking());
    let mut rng = Rng::from_seed(seed);
    let n = 100_001usize;
    let inputs: Vec<Vec<f32>> = (0..2).map(|_| rng.vec_f32(n)).collect();
    let halves: Vec<Bf16> = (0..n).map(|i| Bf16::from_f32((i % 17) as f32)).collect();
    let stream = ctx.stream().unwrap();
    let x = ctx.upload(&inputs[rank]).unwrap();
    let r = ctx.upload(&vec![f32::NAN; n]).unwrap();
    let b = if rank == 0 {
        ctx.upload(&halves).unwrap()
    } else {
        ctx.upload(&vec![Bf16(0x7fc0); n]).unwrap()
    };
    ctx.scope(|s| {
        comm.all_reduce(s, &stream, &x, &r, ReduceOp::Sum)?;
        comm.broadcast(s, &stream, &b, 0)?;
        comm.synchronize(&stream, Duration::from_secs(60))
    })
    .unwrap();
    let got = r.to_vec().unwrap();
    for i in 0..n {
        assert_eq!(
            got[i],
            inputs[0][i] + inputs[1][i],
            "rank {rank} element {i}; {}",
            rng.describe()
        );
    }
    let got = b.to_vec().unwrap();
    assert!(
        got.iter().zip(&halves).all(|(g, h)| g.0 == h.0),
        "rank {rank}: broadcast"
    );
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn nccl_two_processes_with_the_id_through_a_pipe() {
    nvls_off();
    if child_role("rank1").is_some() {
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).unwrap();
        let (hex, seed) = line.trim().split_once(' ').expect("`<id hex> <seed>`");
        let id = UniqueId::from_hex(hex).unwrap();
        let ctx = Context::new(1).unwrap();
        two_process_rank(&ctx, &id, 1, seed.parse().unwrap());
        println!("RANK1 ok");
        return;
    }
    let (c0, _c1) = two_gpus();
    let id = match UniqueId::new() {
        Ok(id) => id,
        Err(Error::Load(e)) => cudakit_suite::not_run(format!("NCCL is not installed: {e}")),
        Err(e) => panic!("{e}"),
    };
    let seed = Rng::new().next_u64();
    let input = format!("{} {seed}\n", id.to_hex());
    let child = std::thread::spawn(move || {
        run_child(
            "nccl_two_processes_with_the_id_through_a_pipe",
            "rank1",
            &input,
            Duration::from_secs(150),
            &[],
        )
    });
    two_process_rank(&c0, &id, 0, seed);
    let (ok, out, err) = child.join().unwrap();
    assert!(ok, "rank 1 failed:\n{out}\n{err}");
    println!("{}", line_of(&out, &err, "RANK1 "));
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn nccl_rank_that_never_joins_times_out_and_aborts() {
    nvls_off();
    if child_role("lonely").is_some() {
        let ctx = Context::new(0).unwrap();
        let id = UniqueId::new().unwrap();
        let start = Instant::now();
        let e = Communicator::init_rank(&ctx, &id, 0, 2, Duration::from_secs(3)).unwrap_err();
        assert!(matches!(e, Error::NcclTimeout { rank: 0, .. }), "{e}");
        // The device is still usable after the abort.
        let b = ctx.upload(&[1u32, 2, 3]).unwrap();
        assert_eq!(b.to_vec().unwrap(), [1, 2, 3]);
        println!("LONELY timeout after {:?}: {e}", start.elapsed());
        return;
    }
    let _ = two_gpus();
    if let Err(e) = nccl::version() {
        cudakit_suite::not_run(format!("NCCL is not installed: {e}"));
    }
    let (ok, out, err) = run_child(
        "nccl_rank_that_never_joins_times_out_and_aborts",
        "lonely",
        "",
        Duration::from_secs(90),
        &[],
    );
    assert!(ok, "child failed:\n{out}\n{err}");
    println!("{}", line_of(&out, &err, "LONELY "));
}

/// Needs no GPU: a missing NCCL is a typed load error listing the path.
#[test]
fn a_missing_nccl_is_a_typed_load_error() {
    if child_role("missing").is_some() {
        match nccl::version() {
            Err(Error::Load(cudakit::sys::LoadError::NotFound {
                library: "libnccl",
                attempts,
                ..
            })) => {
                assert_eq!(attempts.len(), 1);
                assert_eq!(attempts[0].candidate, "/nonexistent/libnccl.so.2");
                println!(
                    "MISSING {}",
                    nccl::version()
                        .unwrap_err()
                        .to_string()
                        .replace('\n', " | ")
                );
            }
            other => panic!("expected a NotFound load error, got {other:?}"),
        }
        return;
    }
    let (ok, out, err) = run_child(
        "a_missing_nccl_is_a_typed_load_error",
        "missing",
        "",
        Duration::from_secs(60),
        &[("CUDAKIT_LIBNCCL", "/nonexistent/libnccl.so.2")],
    );
    assert!(ok, "child failed:\n{out}\n{err}");
    let line = line_of(&out, &err, "MISSING ");
    assert!(
        line.contains("/nonexistent/libnccl.so.2: no such file"),
        "{line}"
    );
}

// -------------------------------------------------------------- benchmarks

/// The rows of `cudakit_suite::bench_multi`, printed (run it alone:
/// `--exact benchmark_rows_against_raw_calls --include-ignored --nocapture`).
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn benchmark_rows_against_raw_calls() {
    nvls_off();
    let (c0, c1) = two_gpus();
    let _g = peer_lock();
    let mut rows = cudakit_suite::bench_multi::peer_copies(&c0, &c1, 256 << 20, 15, 5).unwrap();
    match cudakit_suite::bench_multi::all_reduce(&c0, &c1, &[1 << 20, 16 << 20, 256 << 20], 15, 20)
    {
        Ok(r) => rows.extend(r),
        Err(Error::Load(e)) => println!("all-reduce rows not run: NCCL is not installed: {e}"),
        Err(e) => panic!("{e}"),
    }
    for r in &rows {
        println!(
            "BENCH {} | cudakit {:?} | raw {:?} | ratio {:.3} | samples {}",
            r.name,
            r.cudakit,
            r.raw.unwrap(),
            r.ratio().unwrap(),
            r.samples
        );
    }
}
