//! The allocation arena: every allocation cudakit makes (device, pinned,
//! unified, and host storage for its own use) is recorded with its kind,
//! size and the caller's location, and removed when freed.
//!
//! The records and the counters sit behind one mutex, taken once per
//! allocation and once per free (never by a launch or a copy: those
//! allocate nothing), and briefly by [`Arena::stats`] and [`Arena::live`].
//! One lock instead of a map lock plus a counter atomic per field: each
//! locked instruction costs about as much as the map update itself.

use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::panic::Location;
use std::sync::Mutex;

/// What kind of memory an allocation is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AllocKind {
    /// Device memory (`cuMemAlloc_v2`).
    Device,
    /// Page-locked host memory (`cuMemHostAlloc`).
    Pinned,
    /// Unified (managed) memory (`cuMemAllocManaged`).
    Unified,
    /// Host memory cudakit allocates for its own use (launch parameter
    /// storage that does not fit inline, JIT log buffers).
    HostStorage,
    /// Page-locked chunks of the staged pipeline for pageable transfers
    /// (`cuMemHostAlloc`), kept by the context between transfers and freed
    /// by [`Context::release_staging`](crate::Context::release_staging) or
    /// when the context goes. Not a leak: [`Arena::leak_report`] leaves them
    /// out; [`Arena::stats`] counts them.
    Staging,
    /// Device memory allocated and freed in stream order from a memory
    /// pool (`cuMemAllocAsync`, `cuMemAllocFromPoolAsync`, `cuMemFreeAsync`).
    StreamOrdered,
    /// Device memory the driver allocates for a graph's memory-allocation
    /// nodes (`cuGraphAddMemAllocNode`): recorded when an executable graph
    /// that allocates it is instantiated, freed when it is destroyed.
    Graph,
    /// Physical memory of a [`VirtualBuffer`](crate::memory::VirtualBuffer)
    /// (`cuMemCreate`), one record per allocation mapped into its reserved
    /// range, made by the call that grew the buffer; freed when it is
    /// unmapped and released (`cuMemUnmap`, `cuMemRelease`).
    Virtual,
    /// Memory of another process mapped into this one
    /// ([`ImportedBuffer`](crate::ipc::ImportedBuffer)): a legacy IPC
    /// handle opened (`cuIpcOpenMemHandle_v2`), a shareable allocation
    /// imported and mapped (`cuMemImportFromShareableHandle`, `cuMemMap`),
    /// or a pool pointer imported (`cuMemPoolImportPointer`). Recorded by
    /// the call that imported it; removed only when the driver closed or
    /// unmapped it (a refused close leaves it, as leaked).
    Imported,
    /// Memory kept on purpose: the driver refused its free, or a wait for
    /// work that may still use it failed, so it was not handed back (freeing
    /// what the GPU may still touch is a use-after-free). The record keeps
    /// its size and caller; [`AllocRecord::leaked`] says why.
    Leaked,
}

impl AllocKind {
    /// Every kind, in a stable order.
    pub const ALL: [AllocKind; 10] = [
        AllocKind::Device,
        AllocKind::Pinned,
        AllocKind::Unified,
        AllocKind::HostStorage,
        AllocKind::Staging,
        AllocKind::StreamOrdered,
        AllocKind::Graph,
        AllocKind::Virtual,
        AllocKind::Imported,
        AllocKind::Leaked,
    ];

    fn index(self) -> usize {
        match self {
            AllocKind::Device => 0,
            AllocKind::Pinned => 1,
            AllocKind::Unified => 2,
            AllocKind::HostStorage => 3,
            AllocKind::Staging => 4,
            AllocKind::StreamOrdered => 5,
            AllocKind::Graph => 6,
            AllocKind::Virtual => 7,
            AllocKind::Imported => 8,
            AllocKind::Leaked => 9,
        }
    }
}

/// One live allocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllocRecord {
    /// Identifier within the arena.
    pub id: u64,
    /// Kind of memory.
    pub kind: AllocKind,
    /// Size in bytes.
    pub bytes: usize,
    /// Where the allocation was asked for (`#[track_caller]`).
    pub location: &'static Location<'static>,
    /// For a [`AllocKind::Leaked`] record: the kind it was, and the driver
    /// call that was refused or the wait that failed.
    pub leaked: Option<(AllocKind, &'static str)>,
}

/// Counters of one kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KindStats {
    /// Allocations live now.
    pub live_count: u64,
    /// Bytes live now.
    pub live_bytes: u64,
    /// Highest `live_bytes` seen.
    pub peak_bytes: u64,
    /// Allocations made, in total.
    pub total_allocs: u64,
    /// Frees, in total.
    pub total_frees: u64,
    /// Bytes allocated, in total.
    pub total_bytes: u64,
}

/// A snapshot of an arena's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ArenaStats {
    /// Per kind, in [`AllocKind::ALL`] order.
    pub kinds: [KindStats; AllocKind::ALL.len()],
}

impl ArenaStats {
    /// The counters of one kind.
    pub fn kind(&self, kind: AllocKind) -> KindStats {
        self.kinds[kind.index()]
    }

    /// Live allocations of every kind, the staged pipeline's cached chunks
    /// ([`AllocKind::Staging`]) included; `Context::release_staging` hands
    /// those back.
    pub fn live_count(&self) -> u64 {
        self.kinds.iter().map(|k| k.live_count).sum()
    }

    /// Live bytes of every kind.
    pub fn live_bytes(&self) -> u64 {
        self.kinds.iter().map(|k| k.live_bytes).sum()
    }
}

/// Records every allocation. One per context, and one process-wide arena for
/// host storage that belongs to no context ([`host_arena`]).
#[derive(Default)]
pub struct Arena {
    inner: Mutex<Inner>,
}

/// What the arena's mutex guards.
#[derive(Default)]
struct Inner {
    /// The last id handed out (ids start at 1).
    last_id: u64,
    stats: ArenaStats,
    records: HashMap<u64, AllocRecord, BuildHasherDefault<IdHasher>>,
}

/// The records' hasher: ids are distinct sequential integers made here, so
/// a multiplicative hash (Fibonacci hashing) spreads them as well as SipHash
/// would, for a fraction of the cost; no key comes from outside.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `u64` ids are hashed; kept total for the trait.
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u64(&mut self, id: u64) {
        self.0 = id.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

impl fmt::Debug for Arena {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Arena")
            .field("stats", &self.stats())
            .finish()
    }
}

impl Arena {
    /// A new, empty arena.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records an allocation; returns its id for [`Arena::record_free`].
    pub fn record_alloc(
        &self,
        kind: AllocKind,
        bytes: usize,
        location: &'static Location<'static>,
    ) -> u64 {
        let mut g = self.lock();
        g.last_id += 1;
        let id = g.last_id;
        let c = &mut g.stats.kinds[kind.index()];
        c.live_count += 1;
        c.live_bytes += bytes as u64;
        c.peak_bytes = c.peak_bytes.max(c.live_bytes);
        c.total_allocs += 1;
        c.total_bytes += bytes as u64;
        let record = AllocRecord {
            id,
            kind,
            bytes,
            location,
            leaked: None,
        };
        g.records.insert(id, record);
        id
    }

    /// Removes the record of a freed allocation. Unknown ids are ignored.
    pub fn record_free(&self, id: u64) {
        let mut g = self.lock();
        let Some(record) = g.records.remove(&id) else {
            return;
        };
        let c = &mut g.stats.kinds[record.kind.index()];
        c.live_count -= 1;
        c.live_bytes -= record.bytes as u64;
        c.total_frees += 1;
    }

    /// Files the outcome of the driver call `call` that was to free the
    /// allocation `id`: freed when it returned `rc` success, otherwise kept
    /// and marked leaked ([`Arena::record_leak`]): a refused free is not a
    /// free.
    pub fn record_release(&self, id: u64, rc: cuda_sys::CUresult, call: &'static str) {
        if rc == cuda_sys::CUresult::CUDA_SUCCESS {
            self.record_free(id);
        } else {
            self.record_leak(id, call);
        }
    }

    /// Marks a live allocation as kept on purpose ([`AllocKind::Leaked`]):
    /// `why` (a refused driver call, a failed wait) kept it from being
    /// handed back. It stays in [`Arena::live`] and the leak report.
    /// Unknown ids are ignored.
    pub fn record_leak(&self, id: u64, why: &'static str) {
        let mut g = self.lock();
        let Some(mut record) = g.records.remove(&id) else {
            return;
        };
        if record.kind != AllocKind::Leaked {
            let c = &mut g.stats.kinds[record.kind.index()];
            c.live_count -= 1;
            c.live_bytes -= record.bytes as u64;
            let l = &mut g.stats.kinds[AllocKind::Leaked.index()];
            l.live_count += 1;
            l.live_bytes += record.bytes as u64;
            l.peak_bytes = l.peak_bytes.max(l.live_bytes);
            l.total_allocs += 1;
            l.total_bytes += record.bytes as u64;
            record.leaked = Some((record.kind, why));
            record.kind = AllocKind::Leaked;
        }
        g.records.insert(id, record);
    }

    /// Records memory kept on purpose that was never an allocation of the
    /// arena (a host callback's box whose wait failed): a new
    /// [`AllocKind::Leaked`] record, in the leak report from now on.
    #[track_caller]
    pub fn record_kept(&self, bytes: usize, why: &'static str) {
        let id = self.record_alloc(AllocKind::HostStorage, bytes, Location::caller());
        self.record_leak(id, why);
    }

    /// The counters now.
    pub fn stats(&self) -> ArenaStats {
        self.lock().stats
    }

    /// Every live allocation, oldest first.
    pub fn live(&self) -> Vec<AllocRecord> {
        let mut live: Vec<AllocRecord> = self.lock().records.values().cloned().collect();
        live.sort_by_key(|r| r.id);
        live
    }

    /// A readable report of what is live and where it was allocated; empty
    /// when nothing is. The staged pipeline's chunks
    /// ([`AllocKind::Staging`]) are a cache the context owns, not a leak,
    /// and are left out.
    pub fn leak_report(&self) -> String {
        let mut live = self.live();
        live.retain(|r| r.kind != AllocKind::Staging);
        if live.is_empty() {
            return String::new();
        }
        let bytes: usize = live.iter().map(|r| r.bytes).sum();
        let mut out = format!("{} live allocation(s), {} bytes:\n", live.len(), bytes);
        for r in &live {
            let why = match r.leaked {
                Some((was, why)) => format!(" (was {was:?}, kept: {why})"),
                None => String::new(),
            };
            out.push_str(&format!(
                "  #{} {:?}{} {} bytes at {}:{}:{}\n",
                r.id,
                r.kind,
                why,
                r.bytes,
                r.location.file(),
                r.location.line(),
                r.location.column()
            ));
        }
        out
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // Nothing under the lock can panic between its updates (integer
        // updates that cannot overflow in practice, one map insert or
        // remove), so a poisoned lock is safe to keep using.
        super::lock(&self.inner)
    }
}

/// The process-wide arena for host storage that belongs to no context
/// (launch parameter lists too large for their inline storage).
pub fn host_arena() -> &'static Arena {
    static HOST: once_cell::sync::Lazy<Arena> = once_cell::sync::Lazy::new(Arena::new);
    &HOST
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accounting_tracks_live_peak_and_totals_per_kind() {
        let arena = Arena::new();
        let here = Location::caller();
        let a = arena.record_alloc(AllocKind::Device, 100, here);
        let b = arena.record_alloc(AllocKind::Device, 50, here);
        let c = arena.record_alloc(AllocKind::Pinned, 7, here);
        let s = arena.stats();
        assert_eq!(s.kind(AllocKind::Device).live_count, 2);
        assert_eq!(s.kind(AllocKind::Device).live_bytes, 150);
        assert_eq!(s.kind(AllocKind::Pinned).live_bytes, 7);
        assert_eq!(s.live_count(), 3);
        arena.record_free(a);
        let s = arena.stats();
        assert_eq!(s.kind(AllocKind::Device).live_bytes, 50);
        assert_eq!(s.kind(AllocKind::Device).peak_bytes, 150);
        assert_eq!(s.kind(AllocKind::Device).total_allocs, 2);
        assert_eq!(s.kind(AllocKind::Device).total_frees, 1);
        assert_eq!(s.kind(AllocKind::Device).total_bytes, 150);
        // Freeing twice or an unknown id changes nothing.
        arena.record_free(a);
        arena.record_free(999);
        assert_eq!(arena.stats().kind(AllocKind::Device).total_frees, 1);
        arena.record_free(b);
        arena.record_free(c);
        let s = arena.stats();
        assert_eq!(s.live_count(), 0);
        assert_eq!(s.live_bytes(), 0);
        assert!(arena.leak_report().is_empty());
    }

    #[test]
    fn the_leak_report_names_kind_size_and_caller() {
        let arena = Arena::new();
        let id = arena.record_alloc(AllocKind::Unified, 4096, Location::caller());
        let report = arena.leak_report();
        assert!(
            report.starts_with("1 live allocation(s), 4096 bytes"),
            "{report}"
        );
        assert!(report.contains("Unified 4096 bytes at"), "{report}");
        assert!(report.contains(file!()), "{report}");
        assert_eq!(arena.live()[0].id, id);
    }

    #[test]
    fn concurrent_allocations_balance() {
        let arena = Arena::new();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for i in 0..1000 {
                        let id = arena.record_alloc(AllocKind::HostStorage, i, Location::caller());
                        arena.record_free(id);
                    }
                });
            }
        });
        let s = arena.stats().kind(AllocKind::HostStorage);
        assert_eq!((s.live_count, s.live_bytes), (0, 0));
        assert_eq!((s.total_allocs, s.total_frees), (4000, 4000));
    }
}
