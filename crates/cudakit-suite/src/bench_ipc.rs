//! Opening an IPC handle: cudakit's `Context::open_ipc` + `ImportedBuffer::close`
//! against raw `cuIpcOpenMemHandle_v2` + `cuIpcCloseMemHandle`.
//!
//! CUDA refuses to open a legacy handle in the process that exported it
//! (`CUDA_ERROR_INVALID_CONTEXT`), so the row needs two processes: this
//! one exports a 64 MiB buffer and runs the program again as a child (the
//! caller builds the command; [`CHILD_ENV`] names the socket), which
//! receives the handle over a Unix socket and times both sides there,
//! batches alternating, warm-up excluded, the median of each, and sends the
//! medians back.

use std::os::unix::net::UnixListener;
use std::process::Command;
use std::time::{Duration, Instant};

use cudakit::ipc::IpcChannel;
use cudakit::sys::{CUipcMemHandle, CUipcMem_flags};
use cudakit::{Context, Error, IpcError, Result};

use crate::bench::{alternating_medians, check, Row};

/// The environment variable that puts the program in the child's role; it
/// holds the socket path.
pub const CHILD_ENV: &str = "CUDAKIT_BENCH_IPC_CHILD";

/// Open + close pairs per timed batch.
const PER_BATCH: usize = 20;

fn channel_error(message: impl Into<String>) -> Error {
    Error::Ipc(IpcError::Channel {
        call: "bench",
        message: message.into(),
    })
}

/// The exporter's side: exports a buffer, runs `child` (which must run
/// [`ipc_open_child`] with [`CHILD_ENV`] set to the socket path this sets on
/// it), sends the handle, and returns the row the child measured.
///
/// # Errors
///
/// cudakit errors; [`IpcError::Channel`] when the child cannot be run or
/// does not answer.
pub fn ipc_open(ctx: &Context, samples: usize, mut child: Command) -> Result<Vec<Row>> {
    let samples = samples.max(5);
    let buffer = ctx.alloc::<u8>(64 << 20)?;
    let export = buffer.export_ipc()?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let socket = std::env::temp_dir().join(format!(
        "cudakit-bench-ipc-{}-{nanos}.sock",
        std::process::id()
    ));
    let listener = UnixListener::bind(&socket).map_err(|e| channel_error(e.to_string()))?;
    let mut kid = child
        .env(CHILD_ENV, &socket)
        .env("CUDAKIT_BENCH_IPC_SAMPLES", samples.to_string())
        .spawn()
        .map_err(|e| channel_error(format!("spawning the importer: {e}")))?;
    let outcome = (|| {
        listener
            .set_nonblocking(true)
            .map_err(|e| channel_error(e.to_string()))?;
        let start = Instant::now();
        let stream = loop {
            match listener.accept() {
                Ok((stream, _)) => break stream,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(channel_error(e.to_string())),
            }
            if let Ok(Some(status)) = kid.try_wait() {
                return Err(channel_error(format!(
                    "the importer exited before connecting: {status}"
                )));
            }
            if start.elapsed() > Duration::from_secs(120) {
                let _ = kid.kill();
                return Err(channel_error("the importer never connected"));
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        stream
            .set_nonblocking(false)
            .map_err(|e| channel_error(e.to_string()))?;
        let ch = IpcChannel::new(stream);
        export.send(&ch)?;
        let (answer, _) = ch.recv_message()?;
        let text = String::from_utf8_lossy(&answer).into_owned();
        let v: Vec<u64> = text
            .split_whitespace()
            .filter_map(|w| w.parse().ok())
            .collect();
        if v.len() != 3 {
            return Err(channel_error(format!("the importer answered {text:?}")));
        }
        Ok(vec![Row {
            name: "opening an IPC handle (open + close, in a second process)".into(),
            cudakit: Duration::from_nanos(v[0]),
            raw: Some(Duration::from_nanos(v[1])),
            samples: v[2] as usize,
        }])
    })();
    let status = kid.wait().map_err(|e| channel_error(e.to_string()))?;
    let _ = std::fs::remove_file(&socket);
    // The importer has closed every open (it answered, then exited).
    export.release();
    drop(buffer);
    if !status.success() && outcome.is_ok() {
        return Err(channel_error(format!("the importer exited with {status}")));
    }
    outcome
}

/// The importer's side, in the child: connects to `socket`, receives the
/// handle, times `samples` batches of each side on device `device`, and
/// sends the medians back (nanoseconds per open + close).
///
/// # Errors
///
/// cudakit errors.
pub fn ipc_open_child(socket: &str, device: usize) -> Result<()> {
    let samples: usize = std::env::var("CUDAKIT_BENCH_IPC_SAMPLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(21);
    let ctx = Context::new(device)?;
    // Makes the context current on this thread, as the raw calls below
    // need (`Context::new` does not: cudakit enters a context at its first
    // call that reaches the driver).
    ctx.synchronize()?;
    let ch = IpcChannel::connect(socket)?;
    let handle = ch.recv()?;
    let cu = cudakit::sys::driver()?;
    let mut raw = CUipcMemHandle::default();
    let blob = handle.to_bytes();
    for (d, s) in raw.reserved.iter_mut().zip(&blob[64..128]) {
        *d = *s as std::ffi::c_char;
    }
    let flags = CUipcMem_flags::CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS.0 as u32;
    let raw_batch = || -> Result<Duration> {
        let t = Instant::now();
        for _ in 0..PER_BATCH {
            let mut ptr = 0u64;
            // SAFETY: a valid out-pointer, 64 handle bytes by value, the one
            // flag; the exporter keeps the buffer until this process exits.
            check("cuIpcOpenMemHandle_v2", unsafe {
                (cu.cuIpcOpenMemHandle)(&mut ptr, raw, flags)
            })?;
            // SAFETY: the mapping just opened, closed once.
            check("cuIpcCloseMemHandle", unsafe {
                (cu.cuIpcCloseMemHandle)(ptr)
            })?;
        }
        Ok(t.elapsed() / PER_BATCH as u32)
    };
    let kit_batch = || -> Result<Duration> {
        let t = Instant::now();
        for _ in 0..PER_BATCH {
            // SAFETY: the exporter keeps the buffer until this process
            // exits; closed before the next open.
            let b = unsafe { ctx.open_ipc::<u8>(&handle)? };
            b.close()?;
        }
        Ok(t.elapsed() / PER_BATCH as u32)
    };
    // Warm-up, not timed.
    for _ in 0..3 {
        kit_batch()?;
        raw_batch()?;
    }
    let (r, k) = alternating_medians(samples, raw_batch, kit_batch)?;
    let answer = format!("{} {} {samples}", k.as_nanos(), r.as_nanos());
    ch.send_message(answer.as_bytes(), &[])?;
    Ok(())
}
