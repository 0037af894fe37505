//! Every copy path of the library, over every buffer kind, synchronous and
//! asynchronous (inside `ctx.scope`, on a stream):
//!
//! - host to device: from a `Vec`, a `PinnedBuffer`, a write-combined
//!   `PinnedBuffer` and the host view of a `UnifiedBuffer`, into a
//!   `DeviceBuffer`, a `DeviceView` and (asynchronously) a `UnifiedBuffer`;
//! - device to host: from a `DeviceBuffer`, a `DeviceView` and
//!   (asynchronously) a `UnifiedBuffer`, into the same four host kinds
//!   (and `to_vec`);
//! - device to device (`copy_from` and `Scope::copy`): every pair of
//!   `DeviceBuffer`, `DeviceView` and `UnifiedBuffer`.
//!
//! Unified memory has no synchronous host copy of its own: the host reads
//! and writes it through its host view, which `gpu_memory.rs` and
//! `gpu_soundness.rs` test; here that view is a copy's host side.
//!
//! Views sit at odd element offsets of a larger buffer (for `u8` and the
//! 6-byte struct, device addresses aligned to nothing), with odd lengths
//! from 1 up; what lies around a destination view must stay untouched,
//! and what lies around a source view must not be read. Element types: `u8`,
//! `f32`, `f64` and a 6-byte `#[repr(C)]` struct (filled by the upload path,
//! not a memset). Inputs are fresh random values that never equal the
//! poison every destination starts with, and every element is checked.
//! Each test ends with the context's arena empty; the file's tests take
//! one lock, so that holds under any `--test-threads`.

use std::sync::{Mutex, MutexGuard};

use cudakit::{Context, DeviceBuffer, DeviceCopy, Error, PinnedBuffer, Stream, UnifiedBuffer};
use cudakit_suite::reference::{POISON_U32, POISON_U64};
use cudakit_suite::rng::Rng;

/// One test at a time: they share the device's primary context and check
/// its arena.
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

cudakit::device_struct! {
    /// Six bytes, alignment 2: no size or address of it is a multiple of 4.
    #[derive(Debug)]
    struct Rgb {
        r: u16,
        g: u16,
        b: u16,
    }
}

/// An element type of these tests: random values that never equal its
/// poison, compared bit for bit.
trait Elem: DeviceCopy + std::fmt::Debug {
    const NAME: &'static str;
    fn random(rng: &mut Rng) -> Self;
    fn poison() -> Self;
    fn same(&self, other: &Self) -> bool;
}

impl Elem for u8 {
    const NAME: &'static str = "u8";
    fn random(rng: &mut Rng) -> u8 {
        rng.below(255) as u8
    }
    fn poison() -> u8 {
        0xFF
    }
    fn same(&self, other: &u8) -> bool {
        self == other
    }
}

impl Elem for f32 {
    const NAME: &'static str = "f32";
    fn random(rng: &mut Rng) -> f32 {
        rng.f32_sym()
    }
    fn poison() -> f32 {
        f32::from_bits(POISON_U32)
    }
    fn same(&self, other: &f32) -> bool {
        self.to_bits() == other.to_bits()
    }
}

impl Elem for f64 {
    const NAME: &'static str = "f64";
    fn random(rng: &mut Rng) -> f64 {
        rng.f64_sym()
    }
    fn poison() -> f64 {
        f64::from_bits(POISON_U64)
    }
    fn same(&self, other: &f64) -> bool {
        self.to_bits() == other.to_bits()
    }
}

impl Elem for Rgb {
    const NAME: &'static str = "Rgb";
    fn random(rng: &mut Rng) -> Rgb {
        let mut c = || rng.below(0xFFFF) as u16;
        Rgb {
            r: c(),
            g: c(),
            b: c(),
        }
    }
    fn poison() -> Rgb {
        Rgb {
            r: 0xFFFF,
            g: 0xFFFF,
            b: 0xFFFF,
        }
    }
    fn same(&self, other: &Rgb) -> bool {
        (self.r, self.g, self.b) == (other.r, other.g, other.b)
    }
}

fn random_vec<T: Elem>(rng: &mut Rng, n: usize) -> Vec<T> {
    (0..n).map(|_| T::random(rng)).collect()
}

/// Asserts `got == want` element by element, naming the first mismatches,
/// how many there are, and the seed.
fn check<T: Elem>(what: &str, got: &[T], want: &[T], rng: &Rng) {
    assert_eq!(got.len(), want.len(), "{what}: length; {}", rng.describe());
    let bad: Vec<usize> = (0..got.len()).filter(|&i| !got[i].same(&want[i])).collect();
    if let Some(&first) = bad.first() {
        let poisoned = bad.iter().filter(|&&i| got[i].same(&T::poison())).count();
        let shown: Vec<String> = bad
            .iter()
            .take(5)
            .map(|&i| format!("[{i}] got {:?} want {:?}", got[i], want[i]))
            .collect();
        panic!(
            "{what}: {} of {} elements wrong ({poisoned} still poisoned), first at {first}: {}; {}",
            bad.len(),
            got.len(),
            shown.join(", "),
            rng.describe()
        );
    }
}

/// Lengths: 1, 3, an odd one in the thousands, and an odd one of about a
/// quarter million (a real DMA).
fn lengths(rng: &mut Rng) -> [usize; 4] {
    [
        1,
        3,
        rng.range(1000, 5000) | 1,
        (1 << 18) + 2 * rng.range(0, 500) + 1,
    ]
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Sync,
    Async,
}

/// Host memory kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Host {
    Vec,
    Pinned,
    WriteCombined,
    Unified,
}

const HOSTS: [Host; 4] = [Host::Vec, Host::Pinned, Host::WriteCombined, Host::Unified];

/// Device memory kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dev {
    Buffer,
    View,
    Unified,
}

const DEVS: [Dev; 3] = [Dev::Buffer, Dev::View, Dev::Unified];

/// Host memory of one kind.
enum HostBuf<'c, T: DeviceCopy> {
    Vec(Vec<T>),
    Pinned(PinnedBuffer<'c, T>),
    Unified(UnifiedBuffer<'c, T>),
}

impl<'c, T: Elem> HostBuf<'c, T> {
    fn new(ctx: &'c Context, kind: Host, contents: &[T]) -> Self {
        let n = contents.len();
        match kind {
            Host::Vec => HostBuf::Vec(contents.to_vec()),
            Host::Pinned | Host::WriteCombined => {
                let mut p = if kind == Host::Pinned {
                    ctx.alloc_pinned::<T>(n).unwrap()
                } else {
                    ctx.alloc_pinned_write_combined::<T>(n).unwrap()
                };
                assert_eq!(p.is_write_combined(), kind == Host::WriteCombined);
                p.copy_from_slice(contents);
                HostBuf::Pinned(p)
            }
            Host::Unified => {
                let mut u = ctx.alloc_unified::<T>(n).unwrap();
                u.as_mut_slice().unwrap().copy_from_slice(contents);
                HostBuf::Unified(u)
            }
        }
    }

    fn read(&self) -> Vec<T> {
        match self {
            HostBuf::Vec(v) => v.clone(),
            HostBuf::Pinned(p) => p.to_vec(),
            HostBuf::Unified(u) => u.to_vec().unwrap(),
        }
    }
}

/// Device memory of one kind. A view is `len` elements at `start` of a
/// parent buffer that has `tail` more elements after them.
enum DevBuf<'c, T: DeviceCopy> {
    Buffer(DeviceBuffer<'c, T>),
    View {
        parent: DeviceBuffer<'c, T>,
        start: usize,
        len: usize,
    },
    Unified(UnifiedBuffer<'c, T>),
}

impl<'c, T: Elem> DevBuf<'c, T> {
    /// Where a buffer of `kind` puts `n` elements: (start, tail). A view
    /// starts at an odd offset from 1 to 7 and has 1 to 5 elements after.
    fn layout(kind: Dev, rng: &mut Rng) -> (usize, usize) {
        match kind {
            Dev::View => (2 * rng.range(0, 4) + 1, rng.range(1, 6)),
            Dev::Buffer | Dev::Unified => (0, 0),
        }
    }

    /// A buffer holding `backing` (for a view: the whole parent), its
    /// elements `start..backing.len() - tail` being the ones a copy uses.
    fn new(ctx: &'c Context, kind: Dev, backing: &[T], start: usize, tail: usize) -> Self {
        match kind {
            Dev::Buffer => DevBuf::Buffer(ctx.upload(backing).unwrap()),
            Dev::View => DevBuf::View {
                parent: ctx.upload(backing).unwrap(),
                start,
                len: backing.len() - start - tail,
            },
            Dev::Unified => {
                let mut u = ctx.alloc_unified::<T>(backing.len()).unwrap();
                u.as_mut_slice().unwrap().copy_from_slice(backing);
                DevBuf::Unified(u)
            }
        }
    }

    /// Everything the buffer holds (for a view: the whole parent).
    fn whole(&self) -> Vec<T> {
        match self {
            DevBuf::Buffer(b) => b.to_vec().unwrap(),
            DevBuf::View { parent, .. } => parent.to_vec().unwrap(),
            DevBuf::Unified(u) => u.to_vec().unwrap(),
        }
    }
}

/// Binds `$src` to the device-readable form of `$buf` (a `&DevBuf`) and
/// evaluates `$body` with it: `&DeviceBuffer`, `DeviceView` or
/// `&UnifiedBuffer`, each its own type.
macro_rules! with_src {
    ($buf:expr, $src:ident => $body:expr) => {
        match $buf {
            DevBuf::Buffer(b) => {
                let $src = b;
                $body
            }
            DevBuf::View { parent, start, len } => {
                let $src = parent.view(*start..*start + *len).unwrap();
                $body
            }
            DevBuf::Unified(u) => {
                let $src = u;
                $body
            }
        }
    };
}

/// Binds `$dst` to the device-writable form of `$buf` (a `&mut DevBuf`):
/// `&DeviceBuffer`, `DeviceView` or `&mut UnifiedBuffer`.
macro_rules! with_dst {
    ($buf:expr, $dst:ident => $body:expr) => {
        match $buf {
            DevBuf::Buffer(b) => {
                let $dst = &*b;
                $body
            }
            DevBuf::View { parent, start, len } => {
                let $dst = parent.view(*start..*start + *len).unwrap();
                $body
            }
            DevBuf::Unified(u) => {
                let $dst = u;
                $body
            }
        }
    };
}

/// `backing` with `data` written at `start`.
fn placed<T: Elem>(backing: &[T], start: usize, data: &[T]) -> Vec<T> {
    let mut v = backing.to_vec();
    v[start..start + data.len()].copy_from_slice(data);
    v
}

fn host_to_device<T: Elem>(
    ctx: &Context,
    rng: &mut Rng,
    stream: &Stream<'_>,
    n: usize,
    host: Host,
    dev: Dev,
    mode: Mode,
) {
    let what = format!("{mode:?} {host:?} -> {dev:?}, {} x {n}", T::NAME);
    let data: Vec<T> = random_vec(rng, n);
    let src = HostBuf::new(ctx, host, &data);
    let (start, tail) = DevBuf::<T>::layout(dev, rng);
    let backing = vec![T::poison(); start + n + tail];
    let mut dst = DevBuf::new(ctx, dev, &backing, start, tail);
    {
        // The host side as a slice; a unified buffer's through its view,
        // held for the copy.
        let view;
        let src_slice: &[T] = match &src {
            HostBuf::Vec(v) => v,
            HostBuf::Pinned(p) => p,
            HostBuf::Unified(u) => {
                view = u.as_slice().unwrap();
                &view
            }
        };
        match mode {
            Mode::Sync => match &dst {
                DevBuf::Buffer(b) => b.copy_from_host(src_slice).unwrap(),
                DevBuf::View { parent, start, len } => parent
                    .view(*start..*start + *len)
                    .unwrap()
                    .copy_from_host(src_slice)
                    .unwrap(),
                DevBuf::Unified(_) => unreachable!("no synchronous host copy into unified memory"),
            },
            Mode::Async => {
                let result =
                    ctx.scope(|s| with_dst!(&mut dst, d => s.copy_to_device(stream, src_slice, d)));
                if host == Host::Unified && !ctx.limits().concurrent_managed_access {
                    // A host view of unified memory excludes device work on
                    // such a device: the copy is refused, typed.
                    assert!(
                        matches!(result, Err(Error::UnifiedAccess { .. })),
                        "{what}: {result:?}"
                    );
                    return;
                }
                result.unwrap_or_else(|e| panic!("{what}: {e}"));
            }
        }
    }
    check(&what, &dst.whole(), &placed(&backing, start, &data), rng);
    check(&format!("{what}: source"), &src.read(), &data, rng);
}

fn device_to_host<T: Elem>(
    ctx: &Context,
    rng: &mut Rng,
    stream: &Stream<'_>,
    n: usize,
    dev: Dev,
    host: Host,
    mode: Mode,
) {
    let what = format!("{mode:?} {dev:?} -> {host:?}, {} x {n}", T::NAME);
    let data: Vec<T> = random_vec(rng, n);
    let (start, tail) = DevBuf::<T>::layout(dev, rng);
    // Around a source view: other random values, which must not be read.
    let backing = placed(&random_vec(rng, start + n + tail), start, &data);
    let src = DevBuf::new(ctx, dev, &backing, start, tail);
    let mut dst = HostBuf::new(ctx, host, &vec![T::poison(); n]);
    {
        let mut view;
        let dst_slice: &mut [T] = match &mut dst {
            HostBuf::Vec(v) => v,
            HostBuf::Pinned(p) => p,
            HostBuf::Unified(u) => {
                view = u.as_mut_slice().unwrap();
                &mut view
            }
        };
        match mode {
            Mode::Sync => match &src {
                DevBuf::Buffer(b) => {
                    b.copy_to_host(dst_slice).unwrap();
                    check(&format!("{what}: to_vec"), &b.to_vec().unwrap(), &data, rng);
                }
                DevBuf::View { parent, start, len } => {
                    let v = parent.view(*start..*start + *len).unwrap();
                    v.copy_to_host(dst_slice).unwrap();
                    check(&format!("{what}: to_vec"), &v.to_vec().unwrap(), &data, rng);
                }
                DevBuf::Unified(_) => {
                    unreachable!("no synchronous device copy out of unified memory")
                }
            },
            Mode::Async => {
                let result =
                    ctx.scope(|s| with_src!(&src, d => s.copy_to_host(stream, d, dst_slice)));
                if host == Host::Unified && !ctx.limits().concurrent_managed_access {
                    // As in host_to_device: refused, typed.
                    assert!(
                        matches!(result, Err(Error::UnifiedAccess { .. })),
                        "{what}: {result:?}"
                    );
                    return;
                }
                result.unwrap_or_else(|e| panic!("{what}: {e}"));
            }
        }
    }
    check(&what, &dst.read(), &data, rng);
    check(&format!("{what}: source"), &src.whole(), &backing, rng);
}

fn device_to_device<T: Elem>(
    ctx: &Context,
    rng: &mut Rng,
    stream: &Stream<'_>,
    n: usize,
    from: Dev,
    to: Dev,
    mode: Mode,
) {
    let what = format!("{mode:?} {from:?} -> {to:?}, {} x {n}", T::NAME);
    let data: Vec<T> = random_vec(rng, n);
    let (s_start, s_tail) = DevBuf::<T>::layout(from, rng);
    let s_backing = placed(&random_vec(rng, s_start + n + s_tail), s_start, &data);
    let src = DevBuf::new(ctx, from, &s_backing, s_start, s_tail);
    let (d_start, d_tail) = DevBuf::<T>::layout(to, rng);
    let d_backing = vec![T::poison(); d_start + n + d_tail];
    let mut dst = DevBuf::new(ctx, to, &d_backing, d_start, d_tail);
    match mode {
        Mode::Sync => match &mut dst {
            DevBuf::Buffer(b) => with_src!(&src, x => b.copy_from(x)).unwrap(),
            DevBuf::View { parent, start, len } => {
                let v = parent.view(*start..*start + *len).unwrap();
                with_src!(&src, x => v.copy_from(x)).unwrap()
            }
            DevBuf::Unified(u) => with_src!(&src, x => u.copy_from(x)).unwrap(),
        },
        Mode::Async => ctx
            .scope(|s| with_src!(&src, x => with_dst!(&mut dst, y => s.copy(stream, x, y))))
            .unwrap_or_else(|e| panic!("{what}: {e}")),
    }
    check(
        &what,
        &dst.whole(),
        &placed(&d_backing, d_start, &data),
        rng,
    );
    check(&format!("{what}: source"), &src.whole(), &s_backing, rng);
}

/// Every host-to-device combination for one element type.
fn all_host_to_device<T: Elem>(ctx: &Context, rng: &mut Rng, stream: &Stream<'_>, mode: Mode) {
    for n in lengths(rng) {
        for host in HOSTS {
            for dev in DEVS {
                if mode == Mode::Sync && dev == Dev::Unified {
                    continue; // no such API: the host writes unified memory through its view
                }
                host_to_device::<T>(ctx, rng, stream, n, host, dev, mode);
            }
        }
    }
}

fn all_device_to_host<T: Elem>(ctx: &Context, rng: &mut Rng, stream: &Stream<'_>, mode: Mode) {
    for n in lengths(rng) {
        for dev in DEVS {
            if mode == Mode::Sync && dev == Dev::Unified {
                continue; // no such API: the host reads unified memory through its view
            }
            for host in HOSTS {
                device_to_host::<T>(ctx, rng, stream, n, dev, host, mode);
            }
        }
    }
}

fn all_device_to_device<T: Elem>(ctx: &Context, rng: &mut Rng, stream: &Stream<'_>, mode: Mode) {
    for n in lengths(rng) {
        for from in DEVS {
            for to in DEVS {
                device_to_device::<T>(ctx, rng, stream, n, from, to, mode);
            }
        }
    }
}

/// Runs `each` for every element type, then checks the arena.
macro_rules! every_type {
    ($each:ident, $mode:expr) => {{
        let _guard = lock();
        let ctx = ctx();
        let mut rng = Rng::new();
        let stream = ctx.stream().unwrap();
        $each::<u8>(&ctx, &mut rng, &stream, $mode);
        $each::<f32>(&ctx, &mut rng, &stream, $mode);
        $each::<f64>(&ctx, &mut rng, &stream, $mode);
        $each::<Rgb>(&ctx, &mut rng, &stream, $mode);
        drop(stream);
        assert!(ctx.poisoned().is_none());
        assert_no_leaks(&ctx);
    }};
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn host_to_device_sync_from_every_host_kind_into_every_device_kind() {
    every_type!(all_host_to_device, Mode::Sync);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn host_to_device_async_from_every_host_kind_into_every_device_kind() {
    every_type!(all_host_to_device, Mode::Async);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn device_to_host_sync_from_every_device_kind_into_every_host_kind() {
    every_type!(all_device_to_host, Mode::Sync);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn device_to_host_async_from_every_device_kind_into_every_host_kind() {
    every_type!(all_device_to_host, Mode::Async);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn device_to_device_sync_between_every_pair_of_device_kinds() {
    every_type!(all_device_to_device, Mode::Sync);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn device_to_device_async_between_every_pair_of_device_kinds() {
    every_type!(all_device_to_device, Mode::Async);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_chain_through_every_kind_on_one_stream_keeps_its_order() {
    // Each copy reads what the one before it wrote; all are queued before
    // any runs, so a copy that overtook its predecessor would carry poison.
    let _guard = lock();
    let ctx = ctx();
    let mut rng = Rng::new();
    let stream = ctx.stream().unwrap();
    for n in lengths(&mut rng) {
        let data: Vec<f32> = random_vec(&mut rng, n);
        let poison = f32::poison();
        let mut pinned_in = ctx.alloc_pinned::<f32>(n).unwrap();
        pinned_in.copy_from_slice(&data);
        let parent = ctx.alloc::<f32>(n + 8).unwrap();
        parent.fill(poison).unwrap();
        let mut unified = ctx.alloc_unified::<f32>(n).unwrap();
        unified.as_mut_slice().unwrap().fill(poison);
        let device = ctx.alloc::<f32>(n).unwrap();
        device.fill(poison).unwrap();
        let view2 = ctx.alloc::<f32>(n + 2).unwrap();
        view2.fill(poison).unwrap();
        let mut pinned_out = ctx.alloc_pinned::<f32>(n).unwrap();
        pinned_out.fill(poison);
        let mut vec_out = vec![poison; n];
        ctx.scope(|s| {
            let v = parent.view(3..3 + n)?;
            let w = view2.view(1..1 + n)?;
            s.copy_to_device(&stream, &pinned_in, v)?; // pinned -> view
            s.copy(&stream, v, &device)?; // view -> device
            s.copy(&stream, &device, w)?; // device -> view
            s.copy_to_host(&stream, w, &mut pinned_out)?; // view -> pinned
            s.copy_to_host(&stream, &device, &mut vec_out)?; // device -> Vec
                                                             // Last: a unified destination is borrowed exclusively until the
                                                             // scope ends, so nothing in the scope reads it after this.
            s.copy(&stream, w, &mut unified)?; // view -> unified
            Ok(())
        })
        .unwrap();
        check("pinned out", &pinned_out, &data, &rng);
        check("vec out", &vec_out, &data, &rng);
        check("unified", &unified.to_vec().unwrap(), &data, &rng);
        let mut want = vec![poison; n + 8];
        want[3..3 + n].copy_from_slice(&data);
        check(
            "first view's parent",
            &parent.to_vec().unwrap(),
            &want,
            &rng,
        );
        let mut want = vec![poison; n + 2];
        want[1..1 + n].copy_from_slice(&data);
        check(
            "second view's parent",
            &view2.to_vec().unwrap(),
            &want,
            &rng,
        );
    }
    drop(stream);
    assert_no_leaks(&ctx);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn mismatched_lengths_are_typed_errors_on_every_copy_path() {
    let _guard = lock();
    let ctx = ctx();
    let mut rng = Rng::new();
    let n = rng.range(10, 100);
    let stream = ctx.stream().unwrap();
    let a = ctx.upload(&random_vec::<u8>(&mut rng, n)).unwrap();
    let b = ctx.alloc::<u8>(n + 1).unwrap();
    b.fill(0xFF).unwrap();
    let mut u = ctx.alloc_unified::<u8>(n + 2).unwrap();
    let short = vec![0u8; n - 1];
    let mut long = vec![0u8; n + 1];
    let is_mismatch = |r: cudakit::Result<()>, what: &str| match r {
        Err(Error::LengthMismatch { .. }) => {}
        other => panic!("{what}: expected LengthMismatch, got {other:?}"),
    };
    is_mismatch(a.copy_from_host(&short), "copy_from_host");
    is_mismatch(a.copy_to_host(&mut long), "copy_to_host");
    is_mismatch(b.copy_from(&a), "copy_from, buffer");
    is_mismatch(
        a.view(1..).unwrap().copy_from(a.view(..).unwrap()),
        "copy_from, view",
    );
    is_mismatch(u.copy_from(&a), "copy_from, unified");
    is_mismatch(
        ctx.scope(|s| s.copy_to_device(&stream, &short, &a)),
        "Scope::copy_to_device",
    );
    is_mismatch(
        ctx.scope(|s| s.copy_to_host(&stream, &a, &mut long)),
        "Scope::copy_to_host",
    );
    is_mismatch(ctx.scope(|s| s.copy(&stream, &a, &b)), "Scope::copy");
    is_mismatch(
        ctx.scope(|s| s.copy(&stream, &a, &mut u)),
        "Scope::copy, unified",
    );
    // Nothing was written, nothing is poisoned.
    assert!(b.to_vec().unwrap().iter().all(|&x| x == 0xFF));
    assert!(u.to_vec().unwrap().iter().all(|&x| x == 0));
    assert!(ctx.poisoned().is_none());
    drop((a, b, u, stream));
    assert_no_leaks(&ctx);
}
