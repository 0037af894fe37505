//! Inter-process sharing (`cudakit::ipc`) on the test-only stand-in
//! libcuda, which exports real descriptors for shareable allocations and
//! pools (recognised again by inode), opens legacy handles at fresh
//! addresses, and can be told to refuse a close:
//!
//! - every kind of export gives a handle that crosses an `IpcChannel`
//!   (blob and descriptors, between threads here; `ipc_channel.rs` passes
//!   one between processes) and imports again, as an `ImportedBuffer`
//!   that is a kernel argument and a copy operand;
//! - every import is one `AllocKind::Imported` record with its caller,
//!   removed when the driver closed it; a refused close leaves it, leaked;
//! - an export guard not released keeps the buffer when it is dropped;
//! - bad input is typed and changes nothing: a legacy handle of this very
//!   process, another device, another element size or kind, a pool
//!   pointer of another pool, descriptors that are not CUDA's (`/dev/null`,
//!   a socket), the default pool and non-exportable memory; the context
//!   stays usable.
//!
//! Process-global (`CUDAKIT_LIBCUDA`), so in its own test binary and one
//! test function.

#[path = "../../cuda-sys/tests/support/stub.rs"]
mod stub;

use std::os::fd::OwnedFd;

use cudakit::ipc::{HandleKind, IpcChannel, IpcHandle};
use cudakit::{params, AllocKind, Context, Error, IpcError, LaunchConfig};

const MIB: usize = 1 << 20;

const PTX: &str = "
.version 8.0
.target sm_90
.address_size 64
.visible .entry touch(.param .u64 p0, .param .u32 p1)
{
    ret;
}
";

struct Stand {
    lib: libloading::Library,
}

impl Stand {
    fn ipc(&self) -> [u64; 11] {
        stub::counts(&self.lib, b"stub_ipc_counts\0")
    }

    fn vmm(&self) -> [u64; 10] {
        stub::counts(&self.lib, b"stub_vmm_counts\0")
    }

    fn fail_next_close(&self, code: i32) {
        // SAFETY: as above.
        let f = unsafe {
            self.lib
                .get::<unsafe extern "C" fn(i32)>(b"stub_fail_next_ipc_close\0")
        }
        .expect("stub_fail_next_ipc_close");
        // SAFETY: a plain integer argument.
        unsafe { f(code) };
    }

    fn set_params(&self, layout: &[(usize, usize)]) {
        stub::set_params(&self.lib, layout);
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

/// `h` with `bytes` written at `at` of its blob, with copies of its
/// descriptors (or `fds` instead).
fn forged(h: &IpcHandle, at: usize, bytes: &[u8], fds: Option<Vec<OwnedFd>>) -> IpcHandle {
    let mut blob = h.to_bytes();
    blob[at..at + bytes.len()].copy_from_slice(bytes);
    let fds = fds.unwrap_or_else(|| h.try_clone().expect("dup").into_descriptors());
    IpcHandle::from_bytes(&blob, fds).expect("a forged handle still parses")
}

/// A legacy handle as another process would see it: another process
/// token (offset 32).
fn from_elsewhere(h: &IpcHandle) -> IpcHandle {
    forged(h, 32, &0x0123_4567_89AB_CDEFu64.to_le_bytes(), None)
}

/// Sends `h` over a channel from another thread and receives it here.
fn through_channel(h: IpcHandle) -> IpcHandle {
    let (a, b) = IpcChannel::pair().expect("socketpair");
    let t = std::thread::spawn(move || a.send(&h).expect("send"));
    let got = b.recv().expect("recv");
    t.join().expect("sender");
    got
}

fn imported(ctx: &Context) -> (u64, u64) {
    let k = ctx.stats().kind(AllocKind::Imported);
    (k.live_count, k.live_bytes)
}

#[test]
fn exports_cross_a_channel_and_imports_are_recorded_exactly() {
    let path = stub::build_stub("");
    std::env::set_var("CUDAKIT_LIBCUDA", &path);
    // SAFETY: the stand-in library's initialisers are Rust statics only.
    let lib = unsafe { libloading::Library::new(&path) }.expect("open the stand-in");
    let stand = Stand { lib };
    let ctx = Context::new(0).expect("context on the stand-in");
    {
        let stream = ctx.stream().expect("stream");
        let module = ctx.load_module_image(PTX.as_bytes()).expect("module");
        let touch = module.function("touch").expect("touch");
        stand.set_params(&[(0, 8), (8, 4)]);

        // ---- Legacy handles of cuMemAlloc memory.
        let buffer = ctx.alloc::<u32>(1024).expect("alloc");
        let export = buffer.export_ipc().expect("cuIpcGetMemHandle");
        let h = through_channel(export.handle().try_clone().expect("dup"));
        assert_eq!(h.kind(), HandleKind::LegacyMemory);
        assert_eq!((h.byte_len(), h.element_size()), (4096, 4));
        assert_eq!(h.device_uuid(), ctx.device().uuid().expect("uuid"));
        // This very process: refused before the driver.
        let opens = stand.ipc()[1];
        // SAFETY: refused before the driver (nothing is opened).
        let own = unsafe { ctx.open_ipc::<u32>(&h) };
        assert!(
            matches!(own, Err(Error::Ipc(IpcError::OwnProcess))),
            "{own:?}"
        );
        let h = from_elsewhere(&h);
        // SAFETY: the stand-in's memory is fake; the exporter (this test)
        // keeps the buffer until the imports are closed.
        let wrong_size = unsafe { ctx.open_ipc::<u64>(&h) };
        assert!(
            matches!(
                wrong_size,
                Err(Error::Ipc(IpcError::ElementSize {
                    exported: 4,
                    asked: 8
                }))
            ),
            "{wrong_size:?}"
        );
        let other_device = forged(&h, 31, &[0xEE], None);
        // SAFETY: refused before the driver.
        let wrong_device = unsafe { ctx.open_ipc::<u32>(&other_device) };
        assert!(
            matches!(wrong_device, Err(Error::Ipc(IpcError::WrongDevice { .. }))),
            "{wrong_device:?}"
        );
        assert!(matches!(
            ctx.import_virtual::<u32>(&h),
            Err(Error::Ipc(IpcError::WrongKind { .. }))
        ));
        assert_eq!(stand.ipc()[1], opens, "nothing reached the driver");
        assert_eq!(imported(&ctx), (0, 0));
        // A blob that claims more bytes (offset 40) than the allocation it
        // opens has: opened, measured (cuMemGetAddressRange_v2), closed again,
        // refused; nothing recorded, nothing left open.
        let liar = forged(&h, 40, &(1u64 << 30).to_le_bytes(), None);
        let closes = stand.ipc()[2];
        // SAFETY: as above; the claim is checked before anything uses it.
        let too_big = unsafe { ctx.open_ipc::<u32>(&liar) };
        assert!(
            matches!(&too_big, Err(Error::Ipc(IpcError::Malformed { reason })) if reason.contains("1073741824")),
            "{too_big:?}"
        );
        assert_eq!(stand.ipc()[2], closes + 1, "the mapping was closed again");
        assert_eq!(stand.ipc()[0], 0, "nothing left open");
        assert_eq!(imported(&ctx), (0, 0));

        let line = line!() + 2;
        // SAFETY: as above.
        let mine = unsafe { ctx.open_ipc::<u32>(&h) }.expect("cuIpcOpenMemHandle_v2");
        assert_eq!(mine.len(), 1024);
        assert_eq!(mine.source(), "legacy");
        assert_eq!(imported(&ctx), (1, 4096));
        let record = ctx
            .arena()
            .live()
            .into_iter()
            .find(|r| r.kind == AllocKind::Imported)
            .expect("the import's record");
        assert_eq!(record.location.line(), line, "the caller that imported");
        assert!(record.location.file().ends_with("stub_ipc.rs"));
        // A kernel argument and a copy operand like any buffer.
        // SAFETY: the stand-in runs nothing.
        ctx.scope(|s| unsafe {
            s.launch(
                &stream,
                &touch,
                &LaunchConfig::new(1, 32),
                &params![&mine, 1024u32],
            )
        })
        .expect("launch with the imported buffer");
        assert_eq!(
            &stand.last_launch()[28..36],
            &mine.device_ptr().as_raw().to_ne_bytes()
        );
        buffer.copy_from(&mine).expect("dtod from the import");
        mine.copy_from(buffer.as_view()).expect("dtod into it");
        mine.fill(7).expect("fill");
        // A refused close is not a close: the record stays, as leaked.
        stand.fail_next_close(400);
        drop(mine);
        assert_eq!(imported(&ctx), (0, 0));
        let leaked: Vec<_> = ctx
            .arena()
            .live()
            .into_iter()
            .filter(|r| r.kind == AllocKind::Leaked)
            .collect();
        assert_eq!(leaked.len(), 1, "{leaked:?}");
        assert_eq!(
            leaked[0].leaked,
            Some((AllocKind::Imported, "cuIpcCloseMemHandle"))
        );
        assert!(ctx
            .drop_errors()
            .iter()
            .any(|e| e.call == "cuIpcCloseMemHandle"));
        assert_eq!(stand.ipc()[0], 1, "still open in the driver");
        // A close that succeeds removes the record; `close` returns the answer.
        // SAFETY: as above.
        let again = unsafe { ctx.open_ipc::<u32>(&h) }.expect("open again");
        again.close().expect("cuIpcCloseMemHandle");
        // SAFETY: as above.
        let third = unsafe { ctx.open_ipc::<u32>(&h) }.expect("open a third time");
        stand.fail_next_close(400);
        assert!(matches!(third.close(), Err(Error::Driver(e)) if e.call == "cuIpcCloseMemHandle"));
        assert_eq!(imported(&ctx), (0, 0));
        assert_eq!(ctx.stats().kind(AllocKind::Leaked).live_count, 2);
        export.release();

        // An export guard never released: the buffer's drop keeps the memory.
        let kept = ctx.alloc::<u8>(512).expect("alloc");
        std::mem::forget(kept.export_ipc().expect("export"));
        drop(kept);
        let last = ctx.arena().live().into_iter().max_by_key(|r| r.id).unwrap();
        assert_eq!(last.kind, AllocKind::Leaked);
        assert_eq!(last.leaked.map(|l| l.0), Some(AllocKind::Device));
        assert!(last.leaked.unwrap().1.contains("Exported"), "{last:?}");

        // ---- Shareable virtual-memory allocations: descriptors.
        let plain = ctx.alloc_virtual::<u32>(16, 1 << 20).expect("virtual");
        assert!(matches!(
            plain.export_ipc(),
            Err(Error::Ipc(IpcError::NotExportable { .. }))
        ));
        drop(plain);
        let vmm_before = stand.vmm();
        let mut v = ctx
            .alloc_virtual_shareable::<u32>(1000, 1 << 22)
            .expect("shareable");
        v.resize(3 * MIB / 4).expect("two allocations");
        assert_eq!(v.allocations(), 2);
        let export = v.export_ipc().expect("cuMemExportToShareableHandle");
        assert_eq!(export.handle().descriptors().len(), 2);
        let h = through_channel(export.handle().try_clone().expect("dup"));
        assert_eq!(h.kind(), HandleKind::Shareable);
        let line = line!() + 1;
        let mapped = ctx.import_virtual::<u32>(&h).expect("import and map");
        assert_eq!((mapped.len(), mapped.source()), (3 * MIB / 4, "shareable"));
        assert_eq!(imported(&ctx), (1, 4 * MIB as u64));
        let record = ctx
            .arena()
            .live()
            .into_iter()
            .find(|r| r.kind == AllocKind::Imported)
            .expect("record");
        assert_eq!(record.location.line(), line);
        assert_eq!(stand.ipc()[4], 2, "two descriptors imported");
        mapped.fill(3).expect("fill");
        // SAFETY: the stand-in runs nothing.
        ctx.scope(|s| unsafe {
            s.launch(
                &stream,
                &touch,
                &LaunchConfig::new(1, 32),
                &params![mapped.as_view(), 1u32],
            )
        })
        .expect("launch");
        drop(mapped);
        assert_eq!(imported(&ctx), (0, 0));
        drop(h);
        export.release();
        drop(v);
        let vmm = stand.vmm();
        assert_eq!(
            (vmm[0], vmm[1], vmm[2]),
            (vmm_before[0], vmm_before[1], vmm_before[2]),
            "nothing reserved, mapped or held: {vmm:?}"
        );
        assert_eq!(vmm[9], vmm_before[9], "the stand-in refused nothing");

        // Descriptors that are not CUDA allocations: typed driver errors,
        // nothing left behind, the context usable.
        let v = ctx
            .alloc_virtual_shareable::<u32>(16, 1 << 20)
            .expect("shareable");
        let export = v.export_ipc().expect("export");
        let dev_null: OwnedFd = std::fs::File::open("/dev/null").expect("/dev/null").into();
        let (socket, _other) = std::os::unix::net::UnixStream::pair().expect("pair");
        for fd in [dev_null, OwnedFd::from(socket)] {
            let bogus = forged(export.handle(), 0, b"cudakIPC", Some(vec![fd]));
            let before = (stand.vmm(), stand.ipc()[5]);
            match ctx.import_virtual::<u32>(&bogus) {
                Err(Error::Driver(e)) => assert_eq!(e.call, "cuMemImportFromShareableHandle"),
                other => panic!("a foreign descriptor imported: {other:?}"),
            }
            let after = stand.vmm();
            assert_eq!(
                (after[0], after[1], after[2]),
                (before.0[0], before.0[1], before.0[2]),
                "the reservation was given back"
            );
            assert_eq!(stand.ipc()[5], before.1 + 1, "refused by the driver");
            assert_eq!(imported(&ctx), (0, 0));
        }
        export.release();
        drop(v);
        // A blob cut short, or not cudakit's.
        let export = buffer.export_ipc().expect("export");
        let blob =
            from_elsewhere(&through_channel(export.handle().try_clone().unwrap())).to_bytes();
        export.release();
        assert!(matches!(
            IpcHandle::from_bytes(&blob[..40], Vec::new()),
            Err(Error::Ipc(IpcError::Truncated {
                needed: 64,
                got: 40
            }))
        ));
        let mut wrong = blob.clone();
        wrong[..8].copy_from_slice(b"NOTCUDA!");
        assert!(matches!(
            IpcHandle::from_bytes(&wrong, Vec::new()),
            Err(Error::Ipc(IpcError::BadMagic { .. }))
        ));

        // ---- Stream-ordered pools.
        let default = ctx.default_pool().expect("default pool");
        assert!(matches!(
            default.export_ipc(),
            Err(Error::Ipc(IpcError::NotExportable { what, .. })) if what.contains("default")
        ));
        let from_default = default.alloc::<f32>(&stream, 64).expect("alloc");
        assert!(matches!(
            from_default.export_ipc(),
            Err(Error::Ipc(IpcError::NotExportable { .. }))
        ));
        drop(from_default);
        let plain = ctx.create_pool().expect("pool");
        assert!(matches!(
            plain.export_ipc(),
            Err(Error::Ipc(IpcError::NotExportable { .. }))
        ));
        drop(plain);
        let pool = ctx.create_exportable_pool().expect("exportable pool");
        assert!(pool.is_exportable());
        let pool_export = pool.export_ipc().expect("cuMemPoolExportToShareableHandle");
        let pool_handle = through_channel(pool_export.handle().try_clone().unwrap());
        let imported_pool = ctx
            .import_pool(&pool_handle)
            .expect("cuMemPoolImportFromShareableHandle");
        let buf = pool.alloc::<f32>(&stream, 256).expect("pool buffer");
        let ptr_export = buf.export_ipc().expect("cuMemPoolExportPointer");
        let ptr_handle = through_channel(ptr_export.handle().try_clone().unwrap());
        let other_pool = forged(&ptr_handle, 56, &7u64.to_le_bytes(), None);
        // SAFETY: refused before the driver.
        let wrong_pool = unsafe { imported_pool.import::<f32>(&other_pool) };
        assert!(matches!(wrong_pool, Err(Error::Ipc(IpcError::WrongPool))));
        drop(wrong_pool);
        // SAFETY: the stand-in's memory is fake; the exporter (this test) frees
        // the buffer only after the import is dropped.
        let from_pool = unsafe { imported_pool.import::<f32>(&ptr_handle) }.expect("import");
        assert_eq!((from_pool.len(), from_pool.source()), (256, "pool"));
        assert_eq!(imported(&ctx), (1, 1024));
        assert_eq!(stand.ipc()[8], 1);
        drop(from_pool);
        assert_eq!((imported(&ctx), stand.ipc()[8]), ((0, 0), 0));
        // A pool descriptor that is not a pool's.
        let dev_null: OwnedFd = std::fs::File::open("/dev/null").expect("/dev/null").into();
        let bogus = forged(&pool_handle, 0, b"cudakIPC", Some(vec![dev_null]));
        assert!(matches!(
            ctx.import_pool(&bogus),
            Err(Error::Driver(e)) if e.call == "cuMemPoolImportFromShareableHandle"
        ));
        drop(imported_pool);
        ptr_export.release();
        drop(buf);
        pool_export.release();
        drop(pool);

        // ---- Interprocess events.
        let plain = ctx.event().expect("event");
        assert!(matches!(
            plain.export_ipc(),
            Err(Error::Ipc(IpcError::NotExportable { .. }))
        ));
        let event = ctx.ipc_event().expect("cuEventCreate interprocess");
        assert!(event.is_interprocess());
        event.record(&stream).expect("record");
        let event_export = event.export_ipc().expect("cuIpcGetEventHandle");
        let event_handle = through_channel(event_export.handle().try_clone().unwrap());
        assert!(matches!(
            ctx.import_pool(&event_handle),
            Err(Error::Ipc(IpcError::WrongKind { .. }))
        ));
        // SAFETY: the exporter (this test) keeps the event until the import
        // is dropped.
        let opened = unsafe { ctx.open_ipc_event(&event_handle) }.expect("cuIpcOpenEventHandle");
        stream
            .wait(&opened)
            .expect("a stream waits on the imported event");
        drop(opened);
        event_export.release();
        drop(event);

        // The context is still usable, and the arena exact.
        let after = ctx.upload(&[1u32, 2, 3]).expect("still usable");
        drop(after);
        assert_eq!(imported(&ctx), (0, 0));
        assert_eq!(stand.ipc()[0], 2, "the two refused closes left two opens");
        drop(buffer);
        let live: Vec<_> = ctx
            .arena()
            .live()
            .into_iter()
            .filter(|r| r.kind != AllocKind::Leaked)
            .collect();
        assert!(live.is_empty(), "{live:?}");
    }
    // The buffer kept for its forgotten export keeps its context: a reset
    // would free that memory under the other process, and is refused.
    let reset = ctx.reset();
    assert!(
        matches!(&reset, Err(Error::InvalidArgument(m)) if m.contains("exported over IPC")),
        "{reset:?}"
    );
}
