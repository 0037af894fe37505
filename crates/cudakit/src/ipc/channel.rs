//! A Unix-socket channel for IPC handles: each message is a length-framed
//! blob, and the file descriptors it needs travel with its first byte as
//! `SCM_RIGHTS` ancillary data (`sendmsg`, `recvmsg`), so the receiver gets
//! descriptors of its own for the same open files.
//!
//! ```no_run
//! # fn main() -> cudakit::Result<()> {
//! use cudakit::ipc::IpcChannel;
//! let (a, b) = IpcChannel::pair()?;
//! let file = std::fs::File::open("/dev/null").expect("open");
//! a.send_message(b"hello", &[std::os::fd::AsFd::as_fd(&file)])?;
//! let (bytes, fds) = b.recv_message()?;
//! assert_eq!((bytes.as_slice(), fds.len()), (&b"hello"[..], 1));
//! # Ok(()) }
//! ```
//!
//! Threads: a channel is `Send` and `Sync` (a `UnixStream`); messages sent
//! from two threads at once may interleave their frames, so one thread
//! sends at a time (the methods take `&self` like `UnixStream`'s `Write for
//! &UnixStream`). Failures: a send that fails part way leaves the frame
//! cut (the receiver's next read fails as malformed or closed); a receive
//! that fails closes every descriptor it had received.

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::path::Path;

use super::handle::{IpcHandle, MAX_CHUNKS};
use crate::error::{Error, IpcError, Result};

/// The most descriptors one message carries.
pub const MAX_FDS: usize = MAX_CHUNKS;
/// The largest message body accepted (1 MiB): a handle is a few hundred
/// bytes, and a peer that announces more is refused rather than trusted
/// with an allocation.
pub const MAX_MESSAGE: usize = 1 << 20;

fn channel_error(call: &'static str, err: impl std::fmt::Display) -> Error {
    Error::Ipc(IpcError::Channel {
        call,
        message: err.to_string(),
    })
}

/// A connected Unix stream socket that carries [`IpcHandle`]s (blob and
/// descriptors) and small messages between two processes.
#[derive(Debug)]
pub struct IpcChannel {
    stream: UnixStream,
}

impl IpcChannel {
    /// A channel over a connected stream.
    pub fn new(stream: UnixStream) -> IpcChannel {
        IpcChannel { stream }
    }

    /// Two connected ends (`socketpair`): one for this process, one to
    /// hand to a child (threads of one process can use both).
    ///
    /// # Errors
    ///
    /// [`IpcError::Channel`] with the system's message.
    pub fn pair() -> Result<(IpcChannel, IpcChannel)> {
        let (a, b) = UnixStream::pair().map_err(|e| channel_error("socketpair", e))?;
        Ok((IpcChannel::new(a), IpcChannel::new(b)))
    }

    /// Connects to a listening socket at `path`.
    ///
    /// # Errors
    ///
    /// [`IpcError::Channel`] with the system's message.
    pub fn connect(path: impl AsRef<Path>) -> Result<IpcChannel> {
        UnixStream::connect(path)
            .map(IpcChannel::new)
            .map_err(|e| channel_error("connect", e))
    }

    /// The socket.
    pub fn stream(&self) -> &UnixStream {
        &self.stream
    }

    /// The socket, giving up the channel.
    pub fn into_inner(self) -> UnixStream {
        self.stream
    }

    /// Sends a handle: its blob ([`IpcHandle::to_bytes`]) and its
    /// descriptors.
    ///
    /// # Errors
    ///
    /// As [`IpcChannel::send_message`].
    pub fn send(&self, handle: &IpcHandle) -> Result<()> {
        self.send_message(&handle.to_bytes(), &handle.descriptors())
    }

    /// Receives a handle sent by [`IpcChannel::send`], parsed
    /// ([`IpcHandle::from_bytes`]) with the descriptors that came with it.
    ///
    /// # Errors
    ///
    /// As [`IpcChannel::recv_message`] and [`IpcHandle::from_bytes`].
    pub fn recv(&self) -> Result<IpcHandle> {
        let (bytes, fds) = self.recv_message()?;
        IpcHandle::from_bytes(&bytes, fds)
    }

    /// Sends `bytes` (at most [`MAX_MESSAGE`]) with `fds` (at most
    /// [`MAX_FDS`]) attached (`sendmsg` with an `SCM_RIGHTS` message, then
    /// plain sends for what the first call did not take). The receiver gets
    /// its own descriptors; these stay open here.
    ///
    /// # Errors
    ///
    /// [`IpcError::Channel`]: too large, too many descriptors, or the
    /// system's error (`EPIPE` when the peer has gone).
    pub fn send_message(&self, bytes: &[u8], fds: &[BorrowedFd<'_>]) -> Result<()> {
        if bytes.len() > MAX_MESSAGE {
            return Err(channel_error(
                "sendmsg",
                format!(
                    "a message of {} bytes is over the limit of {MAX_MESSAGE}",
                    bytes.len()
                ),
            ));
        }
        if fds.len() > MAX_FDS {
            return Err(channel_error(
                "sendmsg",
                format!("{} descriptors is over the limit of {MAX_FDS}", fds.len()),
            ));
        }
        let mut frame = Vec::with_capacity(4 + bytes.len());
        frame.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        frame.extend_from_slice(bytes);
        let raw: Vec<RawFd> = fds.iter().map(AsRawFd::as_raw_fd).collect();
        let sent = send_with_fds(self.stream.as_raw_fd(), &frame, &raw)
            .map_err(|e| channel_error("sendmsg", e))?;
        (&self.stream)
            .write_all(&frame[sent..])
            .map_err(|e| channel_error("send", e))
    }

    /// Receives one message sent by [`IpcChannel::send_message`]: its
    /// bytes and the descriptors that came with it (close-on-exec, owned
    /// by the caller).
    ///
    /// # Errors
    ///
    /// [`IpcError::Channel`]: the peer closed the socket, a frame over
    /// [`MAX_MESSAGE`], descriptors cut off (`MSG_CTRUNC`), or the system's
    /// error. Descriptors received before the error are closed.
    pub fn recv_message(&self) -> Result<(Vec<u8>, Vec<OwnedFd>)> {
        let mut header = [0u8; 4];
        let (n, fds) = recv_with_fds(self.stream.as_raw_fd(), &mut header)
            .map_err(|e| channel_error("recvmsg", e))?;
        if n == 0 {
            return Err(channel_error(
                "recvmsg",
                "the peer closed the channel before a message",
            ));
        }
        (&self.stream)
            .read_exact(&mut header[n..])
            .map_err(|e| channel_error("read", e))?;
        let len = u32::from_le_bytes(header) as usize;
        if len > MAX_MESSAGE {
            return Err(channel_error(
                "read",
                format!("the peer announced {len} bytes, over the limit of {MAX_MESSAGE}"),
            ));
        }
        let mut body = vec![0u8; len];
        (&self.stream)
            .read_exact(&mut body)
            .map_err(|e| channel_error("read", e))?;
        Ok((body, fds))
    }
}

/// `sendmsg` of `bytes` with `fds` as one `SCM_RIGHTS` control message
/// (none when `fds` is empty), `MSG_NOSIGNAL` (a closed peer is `EPIPE`, not
/// a signal). Returns the bytes the call took (at least one on success).
fn send_with_fds(socket: RawFd, bytes: &[u8], fds: &[RawFd]) -> std::io::Result<usize> {
    let fd_bytes = std::mem::size_of_val(fds);
    // SAFETY: CMSG_SPACE computes a size from its argument; no memory is
    // touched.
    let space = unsafe { libc::CMSG_SPACE(fd_bytes as u32) } as usize;
    // u64 words: the control buffer is aligned for `cmsghdr`.
    let mut control = vec![0u64; space.div_ceil(8)];
    let mut iov = libc::iovec {
        iov_base: bytes.as_ptr() as *mut libc::c_void,
        iov_len: bytes.len(),
    };
    // SAFETY: `msghdr` is plain data; all-zero is a valid empty header.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    if !fds.is_empty() {
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = space as _;
        // SAFETY: `msg` names a control buffer of `space` bytes, enough for
        // one header (CMSG_SPACE), so CMSG_FIRSTHDR returns a pointer into it.
        let cmsg = unsafe { libc::CMSG_FIRSTHDR(&msg) };
        // SAFETY: `cmsg` points at the start of the zeroed, aligned control
        // buffer, which holds a `cmsghdr`.
        unsafe {
            (*cmsg).cmsg_level = libc::SOL_SOCKET;
            (*cmsg).cmsg_type = libc::SCM_RIGHTS;
            (*cmsg).cmsg_len = libc::CMSG_LEN(fd_bytes as u32) as _;
        }
        // SAFETY: CMSG_DATA points `fd_bytes` bytes into the buffer that
        // CMSG_SPACE sized for them; `fds` holds `fd_bytes` bytes; the
        // destination may be unaligned for `c_int`, so bytes are copied.
        unsafe {
            std::ptr::copy_nonoverlapping(
                fds.as_ptr().cast::<u8>(),
                libc::CMSG_DATA(cmsg),
                fd_bytes,
            )
        };
    }
    loop {
        // SAFETY: `msg` points at one iovec of `bytes` (alive for the call)
        // and, with descriptors, at the control buffer filled above.
        let n = unsafe { libc::sendmsg(socket, &msg, libc::MSG_NOSIGNAL) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// `recvmsg` into `buf` with room for [`MAX_FDS`] descriptors, received
/// close-on-exec. Returns the bytes read (0 at end of stream) and the
/// descriptors, owned. `MSG_CTRUNC` (descriptors dropped by the kernel) is
/// an error, after the ones received are closed.
fn recv_with_fds(socket: RawFd, buf: &mut [u8]) -> std::io::Result<(usize, Vec<OwnedFd>)> {
    let fd_bytes = MAX_FDS * std::mem::size_of::<RawFd>();
    // SAFETY: CMSG_SPACE computes a size; no memory is touched.
    let space = unsafe { libc::CMSG_SPACE(fd_bytes as u32) } as usize;
    let mut control = vec![0u64; space.div_ceil(8)];
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: `msghdr` is plain data; all-zero is a valid empty header.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = space as _;
    let n = loop {
        // SAFETY: `msg` points at one iovec over `buf` and at a control
        // buffer of `space` bytes, both alive and writable for the call.
        let n = unsafe { libc::recvmsg(socket, &mut msg, libc::MSG_CMSG_CLOEXEC) };
        if n >= 0 {
            break n as usize;
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(err);
        }
    };
    let mut fds = Vec::new();
    // SAFETY: `msg` was filled by recvmsg; CMSG_FIRSTHDR reads its control
    // fields and returns null or a header inside the control buffer.
    let mut cmsg = unsafe { libc::CMSG_FIRSTHDR(&msg) };
    while !cmsg.is_null() {
        // SAFETY: a header inside the control buffer (CMSG_FIRSTHDR /
        // CMSG_NXTHDR checked its bounds).
        let (level, kind, len) =
            unsafe { ((*cmsg).cmsg_level, (*cmsg).cmsg_type, (*cmsg).cmsg_len) };
        if level == libc::SOL_SOCKET && kind == libc::SCM_RIGHTS {
            // SAFETY: CMSG_LEN(0) computes a size.
            let head = unsafe { libc::CMSG_LEN(0) } as usize;
            // `cmsg_len` is a `size_t` on glibc, a `u32` on musl.
            #[allow(clippy::unnecessary_cast)]
            let count = (len as usize).saturating_sub(head) / std::mem::size_of::<RawFd>();
            // SAFETY: the kernel wrote `count` descriptors after the header,
            // inside the buffer; read unaligned, as bytes may be.
            let data = unsafe { libc::CMSG_DATA(cmsg) }.cast::<RawFd>();
            for i in 0..count {
                // SAFETY: `i < count`, within the data the kernel wrote.
                let fd = unsafe { data.add(i).read_unaligned() };
                // SAFETY: SCM_RIGHTS installed `fd` in this process for this
                // call; nothing else owns it.
                fds.push(unsafe { OwnedFd::from_raw_fd(fd) });
            }
        }
        // SAFETY: `cmsg` is a header of `msg`'s control buffer.
        cmsg = unsafe { libc::CMSG_NXTHDR(&msg, cmsg) };
    }
    if msg.msg_flags & libc::MSG_CTRUNC != 0 {
        return Err(std::io::Error::other(format!(
            "descriptors were cut off (more than {MAX_FDS} sent); {} received and closed",
            fds.len()
        )));
    }
    Ok((n, fds))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Seek, SeekFrom};
    use std::os::fd::AsFd;

    #[test]
    fn a_descriptor_crosses_between_threads() {
        let (a, b) = IpcChannel::pair().expect("pair");
        let path = std::env::temp_dir().join(format!("cudakit-chan-{}", std::process::id()));
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .expect("create");
        file.write_all(b"through the socket").expect("write");
        let t = std::thread::spawn(move || {
            let (bytes, fds) = b.recv_message().expect("recv");
            assert_eq!(bytes, b"a file");
            assert_eq!(fds.len(), 1);
            let mut f = std::fs::File::from(fds.into_iter().next().expect("one"));
            f.seek(SeekFrom::Start(0)).expect("seek");
            let mut s = String::new();
            f.read_to_string(&mut s).expect("read");
            s
        });
        a.send_message(b"a file", &[file.as_fd()]).expect("send");
        assert_eq!(t.join().expect("thread"), "through the socket");
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn a_closed_peer_and_an_oversized_frame_are_errors() {
        let (a, b) = IpcChannel::pair().expect("pair");
        drop(b);
        assert!(matches!(
            a.send_message(b"x", &[]),
            Err(Error::Ipc(IpcError::Channel { .. }))
        ));
        let (a, b) = IpcChannel::pair().expect("pair");
        (&a.stream)
            .write_all(&(u32::MAX).to_le_bytes())
            .expect("raw header");
        assert!(matches!(
            b.recv_message(),
            Err(Error::Ipc(IpcError::Channel { call: "read", .. }))
        ));
        drop(a);
        assert!(matches!(
            b.recv_message(),
            Err(Error::Ipc(IpcError::Channel { .. }))
        ));
    }
}
