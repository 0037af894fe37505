//! Inter-process sharing on the device (`cudakit::ipc`): each test runs its
//! own binary again as a second process (an environment variable selects
//! the role; the test's own name and `--exact --include-ignored` select the
//! test), and the two talk over a Unix socket (`IpcChannel`, descriptors
//! as `SCM_RIGHTS`).
//!
//! The three sharing paths, 1 GiB each: the exporter spins the GPU for a
//! while (so the importer really waits), fills the buffer with a kernel
//! (a pattern of a fresh seed, never zero), records an interprocess event,
//! and sends the handles while that work runs; the importer waits on the
//! event, copies the whole buffer back and checks it byte for byte against
//! the pattern, closes its imports and says "done"; the exporter releases
//! its guards and frees only then. Paths: a legacy IPC handle of
//! `cuMemAlloc` memory, a shareable virtual buffer of two physical
//! allocations (two descriptors), a buffer of an exportable pool.
//!
//! Bad input: a legacy handle whose exporter has exited (observed: the
//! open fails, typed, the context stays usable), a shareable allocation
//! whose exporter has exited (its descriptor keeps it alive: imported
//! and verified after the exit), a handle of another device (refused before
//! the driver), descriptors that are not CUDA's (`/dev/null`, a socket, a
//! file), and a legacy handle opened in its own process (refused before the
//! driver; the raw driver call is made too, to observe that CUDA refuses
//! it). Nothing reads the checkout at run time.

use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixListener;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use cudakit::compile::program::Program;
use cudakit::ipc::{IpcChannel, IpcHandle};
use cudakit::{params, AllocKind, Context, Error, Function, IpcError, LaunchConfig, Module};
use cudakit_suite::rng::Rng;

const ROLE: &str = "CUDAKIT_IPC_CHILD";
const SOCKET: &str = "CUDAKIT_IPC_SOCKET";
const GIB: usize = 1 << 30;
const N: usize = GIB / 4;
const LIMIT: Duration = Duration::from_secs(300);

const KERNELS: &str = r#"
extern "C" __global__ void spin(unsigned long long ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now)); } while (now - start < ns);
}
extern "C" __global__ void pattern(unsigned* x, unsigned long long n, unsigned seed) {
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         i < n; i += (unsigned long long)gridDim.x * blockDim.x) {
        x[i] = (((unsigned)i * 0x9E3779B1u) ^ seed) | 1u;
    }
}
"#;

/// The pattern's element `i`, as the kernel writes it.
fn expected(i: usize, seed: u32) -> u32 {
    ((i as u32).wrapping_mul(0x9E37_79B1) ^ seed) | 1
}

fn module(ctx: &Context) -> Module<'_> {
    let compiled = Program::new("ipc.cu", KERNELS)
        .compile_for(ctx)
        .expect("compile the IPC kernels");
    ctx.load_module(&compiled).expect("load")
}

/// Checks every byte of `got` against the pattern of `seed`.
fn verify(got: &[u32], seed: u32) {
    assert_eq!(got.len(), N);
    if let Some(i) = (0..N).find(|&i| got[i] != expected(i, seed)) {
        panic!(
            "element {i} is {:#010x}, expected {:#010x} (seed {seed:#x})",
            got[i],
            expected(i, seed)
        );
    }
}

/// A fresh socket path in the temporary folder.
fn socket_path(tag: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    std::env::temp_dir().join(format!(
        "cudakit-ipc-{tag}-{}-{nanos}.sock",
        std::process::id()
    ))
}

/// Runs this binary's test `test` again as a child in role `role`,
/// connecting to `socket`.
fn spawn(test: &str, role: &str, socket: &PathBuf) -> Child {
    Command::new(std::env::current_exe().expect("own executable"))
        .args([
            test,
            "--exact",
            "--include-ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(ROLE, role)
        .env(SOCKET, socket)
        .spawn()
        .expect("spawn the child test")
}

/// Accepts the child's connection, or fails when it exits or time runs out.
fn accept(listener: &UnixListener, child: &mut Child) -> IpcChannel {
    listener.set_nonblocking(true).expect("nonblocking");
    let start = Instant::now();
    loop {
        match listener.accept() {
            Ok((stream, _)) => {
                stream.set_nonblocking(false).expect("blocking");
                return IpcChannel::new(stream);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => panic!("accept: {e}"),
        }
        if let Some(status) = child.try_wait().expect("try_wait") {
            panic!("the child exited before connecting: {status}");
        }
        assert!(start.elapsed() < LIMIT, "the child never connected");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Waits for the child to succeed, killing it after `LIMIT`.
fn finish(mut child: Child) {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            assert!(status.success(), "the child failed: {status}");
            return;
        }
        if start.elapsed() > LIMIT {
            let _ = child.kill();
            panic!("the child ran past {LIMIT:?} and was killed");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The child's channel, from the socket its parent named.
fn child_channel() -> IpcChannel {
    let path = std::env::var(SOCKET).expect("socket path");
    IpcChannel::connect(path).expect("connect to the parent")
}

fn send_seed(ch: &IpcChannel, seed: u32) {
    ch.send_message(&seed.to_le_bytes(), &[]).expect("seed");
}

fn recv_seed(ch: &IpcChannel) -> u32 {
    let (b, _) = ch.recv_message().expect("seed");
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

/// Launches, on `stream`, a spin of 300 ms and then the pattern of `seed`
/// into `dst` (N elements).
fn spin_and_fill<'s>(
    s: &'s cudakit::Scope<'s, '_>,
    stream: &'s cudakit::Stream<'_>,
    (spin, pattern): (&'s Function<'_>, &'s Function<'_>),
    dst: impl cudakit::KernelArg<'s>,
    seed: u32,
) -> cudakit::Result<()> {
    // SAFETY: `spin` touches no memory.
    unsafe {
        s.launch(
            stream,
            spin,
            &LaunchConfig::new(1, 1),
            &params![300_000_000u64],
        )?
    };
    // SAFETY: `pattern` writes N elements of `dst`, which holds N.
    unsafe {
        s.launch(
            stream,
            pattern,
            &LaunchConfig::new(4096, 256),
            &params![dst, N as u64, seed],
        )
    }
}

/// The importer's half, common to the three paths: wait on the event,
/// copy the buffer back on that stream, check it, close, say done.
fn import_and_check(
    ctx: &Context,
    ch: &IpcChannel,
    seed: u32,
    buffer: cudakit::ImportedBuffer<'_, u32>,
    event: &IpcHandle,
) {
    assert_eq!(buffer.len(), N);
    assert_eq!(ctx.stats().kind(AllocKind::Imported).live_count, 1);
    // SAFETY: the exporter keeps the event until it reads our "done".
    let ready = unsafe { ctx.open_ipc_event(event) }.expect("cuIpcOpenEventHandle");
    let stream = ctx.stream().expect("stream");
    stream.wait(&ready).expect("wait on the exporter's work");
    let mut host = vec![0u32; N];
    ctx.scope(|s| s.copy_to_host(&stream, &buffer, &mut host))
        .expect("copy back after the wait");
    verify(&host, seed);
    buffer.close().expect("close the import");
    drop(ready);
    assert_eq!(ctx.stats().kind(AllocKind::Imported).live_count, 0);
    assert!(ctx.leak_report().is_empty(), "{}", ctx.leak_report());
    ch.send_message(b"done", &[]).expect("done");
}

/// The exporter's wait for "done".
fn wait_done(ch: &IpcChannel) {
    let (msg, _) = ch.recv_message().expect("the importer's answer");
    assert_eq!(msg, b"done");
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn legacy_handle_shares_1_gib_with_another_process() {
    const TEST: &str = "legacy_handle_shares_1_gib_with_another_process";
    let ctx = Context::new(0).expect("device 0");
    if std::env::var(ROLE).as_deref() == Ok("importer") {
        let ch = child_channel();
        let seed = recv_seed(&ch);
        let (memory, event) = (ch.recv().expect("memory"), ch.recv().expect("event"));
        // SAFETY: the exporter frees the buffer only after our "done".
        let buffer = unsafe { ctx.open_ipc::<u32>(&memory) }.expect("cuIpcOpenMemHandle_v2");
        import_and_check(&ctx, &ch, seed, buffer, &event);
        return;
    }
    let mut rng = Rng::new();
    eprintln!("{}", rng.describe());
    let seed = rng.next_u32();
    let m = module(&ctx);
    let (spin, pattern) = (m.function("spin").unwrap(), m.function("pattern").unwrap());
    let stream = ctx.stream().expect("stream");
    let buffer = ctx.alloc::<u32>(N).expect("1 GiB");
    buffer
        .fill(0)
        .expect("poison: zeros, which the pattern never holds");
    let ready = ctx.ipc_event().expect("ipc event");
    let (memory, event) = (
        buffer.export_ipc().expect("export"),
        ready.export_ipc().expect("export event"),
    );
    let socket = socket_path("legacy");
    let listener = UnixListener::bind(&socket).expect("bind");
    let mut child = spawn(TEST, "importer", &socket);
    let ch = accept(&listener, &mut child);
    send_seed(&ch, seed);
    ctx.scope(|s| {
        spin_and_fill(s, &stream, (&spin, &pattern), &buffer, seed)?;
        ready.record(&stream)?;
        // Sent while the GPU still spins: the importer must wait.
        memory.send(&ch)?;
        event.send(&ch)
    })
    .expect("fill and send");
    wait_done(&ch);
    memory.release();
    event.release();
    finish(child);
    verify(&buffer.to_vec().expect("own copy"), seed);
    drop((buffer, ready));
    let _ = std::fs::remove_file(&socket);
    assert!(ctx.leak_report().is_empty(), "{}", ctx.leak_report());
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn shareable_virtual_buffer_shares_1_gib_with_another_process() {
    const TEST: &str = "shareable_virtual_buffer_shares_1_gib_with_another_process";
    let ctx = Context::new(0).expect("device 0");
    if std::env::var(ROLE).as_deref() == Ok("importer") {
        let ch = child_channel();
        let seed = recv_seed(&ch);
        let (memory, event) = (ch.recv().expect("memory"), ch.recv().expect("event"));
        assert_eq!(
            memory.descriptors().len(),
            2,
            "one descriptor per allocation"
        );
        let buffer = ctx.import_virtual::<u32>(&memory).expect("import and map");
        drop(memory); // the descriptors are not needed once imported
        import_and_check(&ctx, &ch, seed, buffer, &event);
        return;
    }
    let mut rng = Rng::new();
    eprintln!("{}", rng.describe());
    let seed = rng.next_u32();
    let m = module(&ctx);
    let (spin, pattern) = (m.function("spin").unwrap(), m.function("pattern").unwrap());
    let stream = ctx.stream().expect("stream");
    // 768 MiB, then grown to 1 GiB: two physical allocations.
    let mut v = ctx
        .alloc_virtual_shareable::<u32>(3 * N / 4, N)
        .expect("shareable virtual buffer");
    v.resize(N).expect("grow to 1 GiB");
    assert_eq!(v.allocations(), 2);
    v.fill(0).expect("poison");
    let ready = ctx.ipc_event().expect("ipc event");
    let (memory, event) = (
        v.export_ipc().expect("export"),
        ready.export_ipc().expect("export event"),
    );
    let socket = socket_path("vmm");
    let listener = UnixListener::bind(&socket).expect("bind");
    let mut child = spawn(TEST, "importer", &socket);
    let ch = accept(&listener, &mut child);
    send_seed(&ch, seed);
    ctx.scope(|s| {
        spin_and_fill(s, &stream, (&spin, &pattern), &v, seed)?;
        ready.record(&stream)?;
        memory.send(&ch)?;
        event.send(&ch)
    })
    .expect("fill and send");
    wait_done(&ch);
    memory.release();
    event.release();
    finish(child);
    verify(&v.to_vec().expect("own copy"), seed);
    drop((v, ready));
    let _ = std::fs::remove_file(&socket);
    assert!(ctx.leak_report().is_empty(), "{}", ctx.leak_report());
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn exportable_pool_shares_1_gib_with_another_process() {
    const TEST: &str = "exportable_pool_shares_1_gib_with_another_process";
    let ctx = Context::new(0).expect("device 0");
    if std::env::var(ROLE).as_deref() == Ok("importer") {
        let ch = child_channel();
        let seed = recv_seed(&ch);
        let pool = ch.recv().expect("pool");
        let (pointer, event) = (ch.recv().expect("pointer"), ch.recv().expect("event"));
        let imported = ctx
            .import_pool(&pool)
            .expect("cuMemPoolImportFromShareableHandle");
        // SAFETY: we touch the memory only after waiting on the exporter's
        // event (recorded after the allocation and the fill), and free it
        // (close) before saying "done", after which the exporter frees it.
        let buffer = unsafe { imported.import::<u32>(&pointer) }.expect("cuMemPoolImportPointer");
        import_and_check(&ctx, &ch, seed, buffer, &event);
        drop(imported);
        return;
    }
    let mut rng = Rng::new();
    eprintln!("{}", rng.describe());
    let seed = rng.next_u32();
    let m = module(&ctx);
    let (spin, pattern) = (m.function("spin").unwrap(), m.function("pattern").unwrap());
    let stream = ctx.stream().expect("stream");
    let default = ctx.default_pool().expect("default pool");
    assert!(
        matches!(
            default.export_ipc(),
            Err(Error::Ipc(IpcError::NotExportable { .. }))
        ),
        "the default pool cannot be exported"
    );
    let pool = ctx.create_exportable_pool().expect("exportable pool");
    let buffer = pool.alloc::<u32>(&stream, N).expect("1 GiB from the pool");
    let ready = ctx.ipc_event().expect("ipc event");
    let pool_export = pool.export_ipc().expect("export the pool");
    let (pointer, event) = (
        buffer.export_ipc().expect("export the pointer"),
        ready.export_ipc().expect("export event"),
    );
    let socket = socket_path("pool");
    let listener = UnixListener::bind(&socket).expect("bind");
    let mut child = spawn(TEST, "importer", &socket);
    let ch = accept(&listener, &mut child);
    send_seed(&ch, seed);
    ctx.scope(|s| {
        spin_and_fill(s, &stream, (&spin, &pattern), buffer.as_view(), seed)?;
        ready.record(&stream)?;
        pool_export.send(&ch)?;
        pointer.send(&ch)?;
        event.send(&ch)
    })
    .expect("fill and send");
    wait_done(&ch);
    pointer.release();
    event.release();
    pool_export.release();
    finish(child);
    let mut host = vec![0u32; N];
    ctx.scope(|s| s.copy_to_host(&stream, buffer.as_view(), &mut host))
        .expect("own copy");
    verify(&host, seed);
    drop(buffer);
    stream.synchronize().expect("the free ran");
    drop((pool, ready));
    let _ = std::fs::remove_file(&socket);
    assert!(ctx.leak_report().is_empty(), "{}", ctx.leak_report());
}

/// The child of the exited-exporter tests: exports, sends, synchronizes
/// and exits at once, without waiting for the importer.
fn exit_after_export(kind: &str) {
    let ctx = Context::new(0).expect("device 0");
    let ch = child_channel();
    let seed = recv_seed(&ch);
    let m = module(&ctx);
    let stream = ctx.stream().expect("stream");
    let pattern = m.function("pattern").expect("pattern");
    let cfg = LaunchConfig::new(4096, 256);
    if kind == "legacy" {
        let buffer = ctx.alloc::<u32>(N).expect("alloc");
        // SAFETY: `pattern` writes N elements of `buffer`, which holds N.
        ctx.scope(|s| unsafe {
            s.launch(&stream, &pattern, &cfg, &params![&buffer, N as u64, seed])
        })
        .expect("fill");
        let export = buffer.export_ipc().expect("export");
        export.send(&ch).expect("send");
        // Exits with the export unreleased: the process's end frees it.
        std::mem::forget(export);
    } else {
        let v = ctx.alloc_virtual_shareable::<u32>(N, N).expect("vmm");
        // SAFETY: as above.
        ctx.scope(|s| unsafe { s.launch(&stream, &pattern, &cfg, &params![&v, N as u64, seed]) })
            .expect("fill");
        let export = v.export_ipc().expect("export");
        export.send(&ch).expect("send");
        export.release();
        drop(v); // the importer's descriptor is now the only reference
    }
    let _ = std::io::stdout().flush();
    // Exit now, as a crashed exporter would, without destructors.
    std::process::exit(0);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn leak_legacy_handle_of_an_exited_exporter_is_refused() {
    const TEST: &str = "leak_legacy_handle_of_an_exited_exporter_is_refused";
    if std::env::var(ROLE).as_deref() == Ok("exporter") {
        exit_after_export("legacy");
        return;
    }
    let ctx = Context::new(0).expect("device 0");
    let socket = socket_path("exited");
    let listener = UnixListener::bind(&socket).expect("bind");
    let mut child = spawn(TEST, "exporter", &socket);
    let ch = accept(&listener, &mut child);
    send_seed(&ch, 0x1234_5678);
    let handle = ch.recv().expect("the handle, before the exporter exits");
    finish(child);
    std::thread::sleep(Duration::from_millis(200));
    // SAFETY: the exporter has exited: CUDA freed its memory with its
    // process; the open is expected to fail (observed below), and if it did
    // not, nothing here reads the memory before the close.
    let opened = unsafe { ctx.open_ipc::<u32>(&handle) };
    match &opened {
        Err(Error::Driver(e)) => {
            eprintln!("OBSERVED: opening a legacy handle of an exited exporter: {e}");
            assert_eq!(e.call, "cuIpcOpenMemHandle_v2");
        }
        Ok(_) => panic!(
            "OBSERVED: the driver opened a legacy handle whose exporter had exited; docs/ipc.md \
             says it fails"
        ),
        Err(other) => panic!("an error of another kind: {other:?}"),
    }
    drop(opened);
    assert_eq!(ctx.stats().kind(AllocKind::Imported).live_count, 0);
    // The context stays usable.
    let back = ctx.upload(&[5u32, 6, 7]).expect("still usable");
    assert_eq!(back.to_vec().expect("read back"), [5, 6, 7]);
    assert!(ctx.poisoned().is_none());
    let _ = std::fs::remove_file(&socket);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn shareable_allocation_outlives_its_exited_exporter() {
    const TEST: &str = "shareable_allocation_outlives_its_exited_exporter";
    if std::env::var(ROLE).as_deref() == Ok("exporter") {
        exit_after_export("shareable");
        return;
    }
    let ctx = Context::new(0).expect("device 0");
    let mut rng = Rng::new();
    eprintln!("{}", rng.describe());
    let seed = rng.next_u32();
    let socket = socket_path("outlives");
    let listener = UnixListener::bind(&socket).expect("bind");
    let mut child = spawn(TEST, "exporter", &socket);
    let ch = accept(&listener, &mut child);
    send_seed(&ch, seed);
    let handle = ch.recv().expect("the handle and its descriptor");
    finish(child);
    std::thread::sleep(Duration::from_millis(200));
    let buffer = ctx
        .import_virtual::<u32>(&handle)
        .expect("OBSERVED: the descriptor keeps the allocation alive after its exporter exited");
    drop(handle);
    verify(&buffer.to_vec().expect("read the imported memory"), seed);
    drop(buffer);
    assert!(ctx.leak_report().is_empty(), "{}", ctx.leak_report());
    let _ = std::fs::remove_file(&socket);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn bad_handles_are_typed_errors_and_the_context_stays_usable() {
    let ctx = Context::new(0).expect("device 0");
    let buffer = ctx.upload(&[1u32, 2, 3, 4]).expect("upload");
    let export = buffer.export_ipc().expect("export");
    let blob = export.handle().to_bytes();

    // Truncated and foreign blobs.
    assert!(matches!(
        IpcHandle::from_bytes(&blob[..blob.len() - 1], Vec::new()),
        Err(Error::Ipc(IpcError::Truncated { .. }))
    ));
    let mut wrong = blob.clone();
    wrong[0] ^= 0xFF;
    assert!(matches!(
        IpcHandle::from_bytes(&wrong, Vec::new()),
        Err(Error::Ipc(IpcError::BadMagic { .. }))
    ));

    // Its own process: refused before the driver ...
    // SAFETY: refused before the driver.
    let own = unsafe { ctx.open_ipc::<u32>(export.handle()) };
    assert!(
        matches!(own, Err(Error::Ipc(IpcError::OwnProcess))),
        "{own:?}"
    );
    // ... and the driver refuses it too (observed with the raw call).
    let cu = cudakit::sys::driver().expect("driver");
    let mut raw = cudakit::sys::CUipcMemHandle::default();
    for (d, s) in raw.reserved.iter_mut().zip(&blob[64..128]) {
        *d = *s as std::ffi::c_char;
    }
    let mut ptr = 0u64;
    // SAFETY: a valid out-pointer, 64 handle bytes by value, the one flag.
    let rc = unsafe { (cu.cuIpcOpenMemHandle)(&mut ptr, raw, 1) };
    eprintln!("OBSERVED: cuIpcOpenMemHandle_v2 in the exporting process: {rc:?}");
    if rc == cudakit::sys::CUresult::CUDA_SUCCESS {
        // SAFETY: the mapping just opened, closed once.
        let _ = unsafe { (cu.cuIpcCloseMemHandle)(ptr) };
        panic!("the driver opened a handle in its own process; OwnProcess is stricter than CUDA");
    }

    // Another device: the UUID in the handle differs from the context's.
    let other = if cudakit::Device::count().unwrap_or(1) >= 2 {
        let ctx1 = Context::new(1).expect("device 1");
        let b1 = ctx1.alloc::<u32>(4).expect("alloc on device 1");
        let e1 = b1.export_ipc().expect("export on device 1");
        let bytes = e1.handle().to_bytes();
        e1.release();
        bytes
    } else {
        let mut bytes = blob.clone();
        bytes[16] ^= 0xFF; // a UUID no device of this machine has
        bytes
    };
    let other = IpcHandle::from_bytes(&other, Vec::new()).expect("parses");
    // SAFETY: refused before the driver.
    let wrong_device = unsafe { ctx.open_ipc::<u32>(&other) };
    assert!(
        matches!(wrong_device, Err(Error::Ipc(IpcError::WrongDevice { .. }))),
        "{wrong_device:?}"
    );
    export.release();

    // Descriptors that are not CUDA handles.
    let v = ctx.alloc_virtual_shareable::<u32>(16, 16).expect("vmm");
    let vexport = v.export_ipc().expect("export");
    let vblob = vexport.handle().to_bytes();
    let pool = ctx.create_exportable_pool().expect("pool");
    let pexport = pool.export_ipc().expect("export pool");
    let pblob = pexport.handle().to_bytes();
    let file = std::env::temp_dir().join(format!("cudakit-ipc-bad-{}", std::process::id()));
    std::fs::write(&file, b"not a CUDA allocation").expect("file");
    let (sock, _peer) = std::os::unix::net::UnixStream::pair().expect("pair");
    let fds: Vec<(&str, OwnedFd)> = vec![
        (
            "/dev/null",
            std::fs::File::open("/dev/null").expect("null").into(),
        ),
        ("a socket", sock.into()),
        ("a file", std::fs::File::open(&file).expect("file").into()),
    ];
    for (what, fd) in fds {
        let dup = fd.as_fd().try_clone_to_owned().expect("dup");
        let h = IpcHandle::from_bytes(&vblob, vec![fd]).expect("parses");
        match ctx.import_virtual::<u32>(&h) {
            Err(Error::Driver(e)) => eprintln!("OBSERVED: {what} as an allocation: {e}"),
            other => panic!("{what} imported as an allocation: {other:?}"),
        }
        let h = IpcHandle::from_bytes(&pblob, vec![dup]).expect("parses");
        match ctx.import_pool(&h) {
            Err(Error::Driver(e)) => eprintln!("OBSERVED: {what} as a pool: {e}"),
            Ok(_) => panic!("{what} imported as a pool"),
            Err(other) => panic!("{what} as a pool: {other:?}"),
        }
    }
    let _ = std::fs::remove_file(&file);
    assert_eq!(ctx.stats().kind(AllocKind::Imported).live_count, 0);
    vexport.release();
    pexport.release();
    drop((v, pool));
    // Still usable.
    assert!(ctx.poisoned().is_none());
    assert_eq!(buffer.to_vec().expect("read"), [1, 2, 3, 4]);
    drop(buffer);
    assert!(ctx.leak_report().is_empty(), "{}", ctx.leak_report());
}
