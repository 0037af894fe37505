//! cudakit's serialized IPC handle: a versioned header that names the
//! exporter's device and process and what the handle is, then the driver's
//! opaque bytes; file descriptors travel beside it (over a Unix socket with
//! `SCM_RIGHTS`, see [`IpcChannel`](super::IpcChannel)).
//!
//! # Format (version 1, little-endian)
//!
//! | offset | bytes | field |
//! |-------:|------:|-------|
//! | 0  | 8  | magic `cudakIPC` |
//! | 8  | 2  | format version (1) |
//! | 10 | 1  | kind ([`HandleKind`]: 1 legacy memory, 2 shareable allocation, 3 pool, 4 pool pointer, 5 event) |
//! | 11 | 1  | flags (0) |
//! | 12 | 4  | file descriptors that travel with it |
//! | 16 | 16 | the exporter's device UUID (`cuDeviceGetUuid_v2`) |
//! | 32 | 8  | the exporter's process token (random per process) |
//! | 40 | 8  | bytes of the buffer (0 for a pool or an event) |
//! | 48 | 4  | element size in bytes (0 for a pool or an event) |
//! | 52 | 4  | payload length |
//! | 56 | 8  | pool identity (pool and pool-pointer handles; 0 otherwise) |
//! | 64 | …  | payload: the driver's 64 bytes (`CUipcMemHandle`, `CUmemPoolPtrExportData`, `CUipcEventHandle`), or one `u64` size per physical allocation of a shareable buffer |
//!
//! Parsing checks every field before any driver call: a blob that is
//! short, has the wrong magic or version, an unknown kind, a payload of the
//! wrong length or sizes that do not add up is an [`IpcError`], and so is
//! a descriptor count that differs from the descriptors that came with it.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use crate::error::{Error, IpcError, Result};

/// The first 8 bytes of every handle blob.
pub const MAGIC: [u8; 8] = *b"cudakIPC";
/// The format version this cudakit writes and reads.
pub const VERSION: u16 = 1;
/// Bytes of the header before the payload.
pub const HEADER_LEN: usize = 64;
/// The most physical allocations a shareable handle may name (and so the
/// most descriptors one handle carries).
pub const MAX_CHUNKS: usize = 64;

/// What an [`IpcHandle`] shares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HandleKind {
    /// A [`DeviceBuffer`](crate::DeviceBuffer)'s legacy IPC handle
    /// (`cuIpcGetMemHandle`): 64 bytes, no descriptor.
    LegacyMemory,
    /// A shareable [`VirtualBuffer`](crate::VirtualBuffer)'s physical
    /// allocations (`cuMemExportToShareableHandle`): one POSIX file
    /// descriptor per allocation.
    Shareable,
    /// An exportable stream-ordered pool
    /// (`cuMemPoolExportToShareableHandle`): one POSIX file descriptor.
    Pool,
    /// One allocation of an exported pool (`cuMemPoolExportPointer`): 64
    /// bytes, no descriptor; opened in the pool imported from the
    /// [`HandleKind::Pool`] handle.
    PoolPointer,
    /// An interprocess event (`cuIpcGetEventHandle`): 64 bytes, no
    /// descriptor.
    Event,
}

impl HandleKind {
    fn code(self) -> u8 {
        match self {
            HandleKind::LegacyMemory => 1,
            HandleKind::Shareable => 2,
            HandleKind::Pool => 3,
            HandleKind::PoolPointer => 4,
            HandleKind::Event => 5,
        }
    }

    fn from_code(code: u8) -> Option<HandleKind> {
        Some(match code {
            1 => HandleKind::LegacyMemory,
            2 => HandleKind::Shareable,
            3 => HandleKind::Pool,
            4 => HandleKind::PoolPointer,
            5 => HandleKind::Event,
            _ => return None,
        })
    }

    /// The kind's name, as errors print it.
    pub fn name(self) -> &'static str {
        match self {
            HandleKind::LegacyMemory => "legacy memory",
            HandleKind::Shareable => "shareable allocation",
            HandleKind::Pool => "pool",
            HandleKind::PoolPointer => "pool pointer",
            HandleKind::Event => "event",
        }
    }
}

/// A handle that lets another process open memory or an event of this
/// one: cudakit's header (device, process, kind, sizes) and the driver's
/// bytes, with the file descriptors it needs ([`IpcHandle::descriptors`]).
///
/// It is data: holding one keeps nothing alive in the exporting process
/// (the exporter's [`Exported`](super::Exported) guard does that), and its
/// descriptors are closed when it drops. [`IpcHandle::to_bytes`] gives the
/// blob for any channel; descriptors must travel as descriptors
/// ([`IpcChannel`](super::IpcChannel) sends both).
pub struct IpcHandle {
    pub(crate) kind: HandleKind,
    pub(crate) device: [u8; 16],
    pub(crate) process: u64,
    pub(crate) bytes: u64,
    pub(crate) elem_size: u32,
    pub(crate) pool_id: u64,
    pub(crate) payload: Vec<u8>,
    pub(crate) fds: Vec<OwnedFd>,
}

impl std::fmt::Debug for IpcHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IpcHandle")
            .field("kind", &self.kind)
            .field("device", &uuid_text(&self.device))
            .field("bytes", &self.bytes)
            .field("elem_size", &self.elem_size)
            .field("descriptors", &self.fds.len())
            .finish()
    }
}

/// A UUID as the usual hex groups.
pub(crate) fn uuid_text(b: &[u8; 16]) -> String {
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// The UUID of `ctx`'s device, read from the driver once per ordinal
/// (`cuDeviceGetUuid_v2`; it does not change while the process runs).
pub(crate) fn device_uuid(ctx: &crate::Context) -> Result<[u8; 16]> {
    static UUIDS: [std::sync::OnceLock<[u8; 16]>; 64] = [const { std::sync::OnceLock::new() }; 64];
    let ordinal = ctx.device().ordinal();
    let Some(slot) = usize::try_from(ordinal).ok().and_then(|o| UUIDS.get(o)) else {
        return ctx.device().uuid();
    };
    if let Some(u) = slot.get() {
        return Ok(*u);
    }
    let u = ctx.device().uuid()?;
    Ok(*slot.get_or_init(|| u))
}

/// This process's token: random, made once, different in every process
/// (a legacy handle's own process is refused by it before the driver).
pub(crate) fn process_token() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    static TOKEN: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *TOKEN.get_or_init(|| {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u32(std::process::id());
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        h.write_u128(now);
        // Never 0, which no field of a real handle holds.
        h.finish() | 1
    })
}

fn read_u16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn read_u32(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(a)
}

fn read_u64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

fn malformed(reason: impl Into<String>) -> Error {
    Error::Ipc(IpcError::Malformed {
        reason: reason.into(),
    })
}

impl IpcHandle {
    /// What the handle shares.
    pub fn kind(&self) -> HandleKind {
        self.kind
    }

    /// The exporter's device UUID.
    pub fn device_uuid(&self) -> [u8; 16] {
        self.device
    }

    /// Bytes of the exported buffer (0 for a pool or an event).
    pub fn byte_len(&self) -> u64 {
        self.bytes
    }

    /// The exported buffer's element size in bytes (0 for a pool or an
    /// event).
    pub fn element_size(&self) -> usize {
        self.elem_size as usize
    }

    /// The file descriptors that travel with the handle, in order.
    pub fn descriptors(&self) -> Vec<BorrowedFd<'_>> {
        self.fds.iter().map(AsFd::as_fd).collect()
    }

    /// The descriptors, taking them out of the handle.
    pub fn into_descriptors(self) -> Vec<OwnedFd> {
        self.fds
    }

    /// The blob: header and payload, without the descriptors (see the
    /// [module documentation](self) for the format).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER_LEN + self.payload.len());
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.push(self.kind.code());
        out.push(0);
        out.extend_from_slice(&(self.fds.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.device);
        out.extend_from_slice(&self.process.to_le_bytes());
        out.extend_from_slice(&self.bytes.to_le_bytes());
        out.extend_from_slice(&self.elem_size.to_le_bytes());
        out.extend_from_slice(&(self.payload.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.pool_id.to_le_bytes());
        out.extend_from_slice(&self.payload);
        out
    }

    /// Parses a blob written by [`IpcHandle::to_bytes`], with the
    /// descriptors that came with it (none for legacy memory, pool
    /// pointers and events). Nothing reaches the driver.
    ///
    /// # Errors
    ///
    /// [`Error::Ipc`] with [`IpcError::Truncated`], [`IpcError::BadMagic`],
    /// [`IpcError::UnsupportedVersion`], [`IpcError::Malformed`] (unknown
    /// kind, flags, a payload of the wrong length, sizes that do not add
    /// up, trailing bytes) or [`IpcError::Descriptors`] (the count in the
    /// header differs from the descriptors given). The descriptors are
    /// closed on error.
    pub fn from_bytes(bytes: &[u8], fds: Vec<OwnedFd>) -> Result<IpcHandle> {
        if bytes.len() < 8 {
            return Err(Error::Ipc(IpcError::Truncated {
                needed: HEADER_LEN,
                got: bytes.len(),
            }));
        }
        let mut magic = [0u8; 8];
        magic.copy_from_slice(&bytes[..8]);
        if magic != MAGIC {
            return Err(Error::Ipc(IpcError::BadMagic { found: magic }));
        }
        if bytes.len() < HEADER_LEN {
            return Err(Error::Ipc(IpcError::Truncated {
                needed: HEADER_LEN,
                got: bytes.len(),
            }));
        }
        let version = read_u16(bytes, 8);
        if version != VERSION {
            return Err(Error::Ipc(IpcError::UnsupportedVersion {
                found: version,
                supported: VERSION,
            }));
        }
        let kind = HandleKind::from_code(bytes[10])
            .ok_or_else(|| malformed(format!("unknown kind {}", bytes[10])))?;
        if bytes[11] != 0 {
            return Err(malformed(format!("unknown flags {:#04x}", bytes[11])));
        }
        let fd_count = read_u32(bytes, 12) as usize;
        let mut device = [0u8; 16];
        device.copy_from_slice(&bytes[16..32]);
        let process = read_u64(bytes, 32);
        let byte_len = read_u64(bytes, 40);
        let elem_size = read_u32(bytes, 48);
        let payload_len = read_u32(bytes, 52) as usize;
        let pool_id = read_u64(bytes, 56);
        let needed = HEADER_LEN.saturating_add(payload_len);
        if bytes.len() < needed {
            return Err(Error::Ipc(IpcError::Truncated {
                needed,
                got: bytes.len(),
            }));
        }
        if bytes.len() > needed {
            return Err(malformed(format!(
                "{} bytes past the payload",
                bytes.len() - needed
            )));
        }
        let payload = bytes[HEADER_LEN..needed].to_vec();
        let handle = IpcHandle {
            kind,
            device,
            process,
            bytes: byte_len,
            elem_size,
            pool_id,
            payload,
            fds,
        };
        handle.validate(fd_count)?;
        Ok(handle)
    }

    /// The kind's rules for the payload, sizes and descriptors.
    fn validate(&self, fd_count: usize) -> Result<()> {
        let expected_fds = match self.kind {
            HandleKind::LegacyMemory | HandleKind::PoolPointer | HandleKind::Event => 0,
            HandleKind::Pool => 1,
            HandleKind::Shareable => self.payload.len() / 8,
        };
        let has_buffer = matches!(
            self.kind,
            HandleKind::LegacyMemory | HandleKind::Shareable | HandleKind::PoolPointer
        );
        match self.kind {
            HandleKind::LegacyMemory | HandleKind::PoolPointer | HandleKind::Event => {
                if self.payload.len() != 64 {
                    return Err(malformed(format!(
                        "a {} handle has 64 payload bytes, not {}",
                        self.kind.name(),
                        self.payload.len()
                    )));
                }
            }
            HandleKind::Pool => {
                if !self.payload.is_empty() {
                    return Err(malformed("a pool handle has no payload"));
                }
            }
            HandleKind::Shareable => {
                let n = self.payload.len() / 8;
                if self.payload.len() % 8 != 0 || n == 0 || n > MAX_CHUNKS {
                    return Err(malformed(format!(
                        "a shareable handle names 1 to {MAX_CHUNKS} allocations of 8 bytes \
                         each; its payload has {} bytes",
                        self.payload.len()
                    )));
                }
                let mut total: u64 = 0;
                for size in self.chunk_sizes() {
                    if size == 0 {
                        return Err(malformed("an allocation of 0 bytes"));
                    }
                    total = total
                        .checked_add(size)
                        .ok_or_else(|| malformed("the allocations' sizes overflow"))?;
                }
                if total < self.bytes {
                    return Err(malformed(format!(
                        "the allocations hold {total} bytes, fewer than the buffer's {}",
                        self.bytes
                    )));
                }
            }
        }
        if has_buffer {
            if self.elem_size == 0 || self.bytes == 0 || self.bytes % u64::from(self.elem_size) != 0
            {
                return Err(malformed(format!(
                    "{} bytes is not a whole, non-zero number of {}-byte elements",
                    self.bytes, self.elem_size
                )));
            }
        } else if self.bytes != 0 || self.elem_size != 0 {
            return Err(malformed(format!(
                "a {} handle has no buffer size",
                self.kind.name()
            )));
        }
        if matches!(self.kind, HandleKind::Pool | HandleKind::PoolPointer) && self.pool_id == 0 {
            return Err(malformed("a pool handle without the pool's identity"));
        }
        if fd_count != expected_fds || self.fds.len() != expected_fds {
            return Err(Error::Ipc(IpcError::Descriptors {
                expected: expected_fds,
                got: if fd_count != expected_fds {
                    fd_count
                } else {
                    self.fds.len()
                },
            }));
        }
        Ok(())
    }

    /// The physical allocations' sizes of a shareable handle.
    pub(crate) fn chunk_sizes(&self) -> impl Iterator<Item = u64> + '_ {
        self.payload.chunks_exact(8).map(|c| read_u64(c, 0))
    }

    /// The 64 driver bytes (legacy memory, pool pointer, event).
    pub(crate) fn driver_bytes(&self) -> [u8; 64] {
        let mut out = [0u8; 64];
        if self.payload.len() == 64 {
            out.copy_from_slice(&self.payload);
        }
        out
    }

    /// A copy whose descriptors are duplicates (`dup`), for a second
    /// receiver.
    ///
    /// # Errors
    ///
    /// [`IpcError::Channel`] when a descriptor cannot be duplicated.
    pub fn try_clone(&self) -> Result<IpcHandle> {
        let fds = self
            .fds
            .iter()
            .map(|fd| fd.try_clone())
            .collect::<std::io::Result<Vec<_>>>()
            .map_err(|e| {
                Error::Ipc(IpcError::Channel {
                    call: "dup",
                    message: e.to_string(),
                })
            })?;
        Ok(IpcHandle {
            kind: self.kind,
            device: self.device,
            process: self.process,
            bytes: self.bytes,
            elem_size: self.elem_size,
            pool_id: self.pool_id,
            payload: self.payload.clone(),
            fds,
        })
    }

    /// Checks that the handle is of `kind`, of `ctx`'s device, and (for a
    /// buffer) of elements of `elem_size` bytes.
    pub(crate) fn check_for(
        &self,
        kind: HandleKind,
        ctx: &crate::Context,
        elem_size: Option<usize>,
    ) -> Result<()> {
        if self.kind != kind {
            return Err(Error::Ipc(IpcError::WrongKind {
                expected: kind.name(),
                found: self.kind.name(),
            }));
        }
        if let Some(size) = elem_size {
            if self.elem_size as usize != size {
                return Err(Error::Ipc(IpcError::ElementSize {
                    exported: self.elem_size as usize,
                    asked: size,
                }));
            }
        }
        let own = device_uuid(ctx)?;
        if own != self.device {
            return Err(Error::Ipc(IpcError::WrongDevice {
                exporter: uuid_text(&self.device),
                importer: uuid_text(&own),
            }));
        }
        Ok(())
    }

    /// The buffer's length in elements (checked non-zero and whole when
    /// parsed or made).
    pub(crate) fn elements(&self) -> Result<usize> {
        let n = self.bytes / u64::from(self.elem_size.max(1));
        usize::try_from(n).map_err(|_| malformed("the buffer is larger than this process can map"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn legacy() -> IpcHandle {
        IpcHandle {
            kind: HandleKind::LegacyMemory,
            device: [7; 16],
            process: 42,
            bytes: 4096,
            elem_size: 4,
            pool_id: 0,
            payload: (0..64).collect(),
            fds: Vec::new(),
        }
    }

    #[test]
    fn a_blob_round_trips() {
        let h = legacy();
        let bytes = h.to_bytes();
        assert_eq!(bytes.len(), HEADER_LEN + 64);
        assert_eq!(&bytes[..8], b"cudakIPC");
        let back = IpcHandle::from_bytes(&bytes, Vec::new()).expect("parses");
        assert_eq!(back.kind(), HandleKind::LegacyMemory);
        assert_eq!(back.device_uuid(), [7; 16]);
        assert_eq!((back.byte_len(), back.element_size()), (4096, 4));
        assert_eq!(back.process, 42);
        assert_eq!(back.driver_bytes().to_vec(), (0..64).collect::<Vec<u8>>());
        assert_eq!(back.to_bytes(), bytes);
    }

    #[test]
    fn every_prefix_is_truncated_and_the_magic_is_checked() {
        let bytes = legacy().to_bytes();
        for n in 0..bytes.len() {
            match IpcHandle::from_bytes(&bytes[..n], Vec::new()) {
                Err(Error::Ipc(IpcError::Truncated { got, .. })) => assert_eq!(got, n),
                Err(Error::Ipc(IpcError::BadMagic { .. })) => panic!("prefix {n}: magic"),
                other => panic!("prefix {n}: {other:?}"),
            }
        }
        let mut bad = bytes.clone();
        bad[0] = b'X';
        assert!(matches!(
            IpcHandle::from_bytes(&bad, Vec::new()),
            Err(Error::Ipc(IpcError::BadMagic { found })) if found[0] == b'X'
        ));
        let mut v2 = bytes.clone();
        v2[8] = 2;
        assert!(matches!(
            IpcHandle::from_bytes(&v2, Vec::new()),
            Err(Error::Ipc(IpcError::UnsupportedVersion {
                found: 2,
                supported: 1
            }))
        ));
        let mut kind = bytes.clone();
        kind[10] = 99;
        assert!(matches!(
            IpcHandle::from_bytes(&kind, Vec::new()),
            Err(Error::Ipc(IpcError::Malformed { .. }))
        ));
        let mut long = bytes.clone();
        long.push(0);
        assert!(matches!(
            IpcHandle::from_bytes(&long, Vec::new()),
            Err(Error::Ipc(IpcError::Malformed { .. }))
        ));
        // A size that is not a whole number of elements.
        let mut odd = bytes.clone();
        odd[40] = 3;
        assert!(matches!(
            IpcHandle::from_bytes(&odd, Vec::new()),
            Err(Error::Ipc(IpcError::Malformed { .. }))
        ));
    }

    #[test]
    fn descriptors_must_match_the_kind() {
        let mut h = legacy();
        h.kind = HandleKind::Shareable;
        h.payload = [4096u64.to_le_bytes(), 4096u64.to_le_bytes()].concat();
        // The header says 0 descriptors; 2 allocations need 2.
        let bytes = h.to_bytes();
        assert!(matches!(
            IpcHandle::from_bytes(&bytes, Vec::new()),
            Err(Error::Ipc(IpcError::Descriptors {
                expected: 2,
                got: 0
            }))
        ));
        // Allocations that hold fewer bytes than the buffer.
        let mut small = legacy();
        small.kind = HandleKind::Shareable;
        small.payload = 1024u64.to_le_bytes().to_vec();
        assert!(matches!(
            IpcHandle::from_bytes(&small.to_bytes(), Vec::new()),
            Err(Error::Ipc(IpcError::Malformed { .. }))
        ));
    }

    #[test]
    fn uuids_print_in_groups() {
        let t = uuid_text(&[0xab; 16]);
        assert_eq!(t, "abababab-abab-abab-abab-abababababab");
        assert_ne!(process_token(), 0);
        assert_eq!(process_token(), process_token());
    }
}
