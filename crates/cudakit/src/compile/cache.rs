//! The compile cache: a keyed, verified byte store, in memory (per process)
//! and on disk (shared by processes). It stores entries of tagged sections
//! and knows nothing of what they mean:
//! [`Compiled`](crate::compile::program::Compiled) encodes itself into
//! sections and decodes itself from them, and
//! [`Program`](crate::compile::program::Program) derives the key (see
//! [`Program::cache_key`](crate::compile::program::Program::cache_key)) with
//! this module's hash.
//!
//! # Where
//!
//! The process's cache ([`Cache::global`]) is configured from the
//! environment when first used:
//!
//! | variable | meaning |
//! |---|---|
//! | `CUDAKIT_CACHE` | `0`, `off`, `false` or `no`: no cache at all; `memory`: memory only |
//! | `CUDAKIT_CACHE_DIR` | the disk folder |
//! | `XDG_CACHE_HOME` | else the folder is `$XDG_CACHE_HOME/cudakit` |
//! | `HOME` | else `~/.cache/cudakit`; with none of the three, memory only |
//! | `CUDAKIT_CACHE_MAX_BYTES` | the size bound, in bytes or with a `K`, `M`, `G` suffix (binary units); default 256 MiB |
//!
//! [`Cache::in_dir`] makes a cache over an explicit folder (tests, tools),
//! independent of the environment.
//!
//! # Key and hash
//!
//! A key is 128 bits ([`CacheKey`]). The hash behind keys and checksums is
//! 128-bit FNV-1a ([`stable_hash`], written in this crate: std's
//! `DefaultHasher` may change between Rust releases); key derivations hash
//! length-prefixed fields with it, so that no two field sequences hash the
//! same bytes. What a compile's key covers is listed at
//! [`Program::cache_key`](crate::compile::program::Program::cache_key).
//! Programs whose include paths hold more than [`MAX_INCLUDE_FILES`] files
//! (CUDA's own header folders, keyed by their version, do not count) bypass
//! the cache, and say so:
//! [`Compiled::cache_bypass`](crate::compile::program::Compiled::cache_bypass).
//!
//! # Entries
//!
//! One file per key, `<32 hex digits>.ckc`:
//!
//! ```text
//! magic "CUDAKITC" | format u32 | reserved u32 | key 16 bytes | file length u64
//! | section count u32 | sections: (tag u32, length u64, bytes)...
//! | checksum: FNV-1a 128 of everything before it (16 bytes)
//! ```
//!
//! (integers little-endian; each tag appears at most once). An entry is
//! written to a temporary file in the same folder and renamed over the
//! final name, so readers see a whole entry or none, and several processes
//! may write the same entry at once. On read, the magic, format, length,
//! checksum, key and every section bound are verified, then the caller
//! decodes the sections; an entry that fails any check (truncated,
//! corrupted, from another key or another format) or that its caller cannot
//! decode is a miss, counted in [`CacheStats::rejected`], and is replaced by
//! the next store of its key. Cache errors never fail a compile.
//!
//! The memory layer keeps entries already verified (read from disk, or
//! stored by this process): a memory hit only decodes, it does not verify
//! the checksum again.
//!
//! # Size
//!
//! After each write, the oldest entries (by modification time; a hit
//! refreshes it) are removed until the folder's entries fit the bound. The
//! memory layer keeps the same bound, dropping the least recently used.

use std::collections::HashMap;
use std::fmt;
use std::fs::{self, File};
use std::io::{self, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use once_cell::sync::Lazy;

use crate::error::{Error, Result};

/// The default size bound: 256 MiB.
pub const DEFAULT_MAX_BYTES: u64 = 256 << 20;

/// Programs whose include paths hold more files than this are not cached
/// (their fingerprint would cost more than it saves). CUDA's own header
/// folders are not counted: the key holds their version instead
/// ([`crate::compile::headers`]).
pub const MAX_INCLUDE_FILES: usize = 10_000;

const MAGIC: &[u8; 8] = b"CUDAKITC";
const FORMAT: u32 = 1;
const HEADER_LEN: usize = 8 + 4 + 4 + 16 + 8 + 4;
const SECTION_HEADER_LEN: usize = 4 + 8;
const CHECKSUM_LEN: usize = 16;
const ENTRY_SUFFIX: &str = ".ckc";
const TEMP_SUFFIX: &str = ".tmp";
const STALE_TEMP: Duration = Duration::from_secs(3600);

const FNV_OFFSET: u128 = 0x6c62272e07bb014262b821756295c58d;
const FNV_PRIME: u128 = 0x0000000001000000000000000000013B;

/// FNV-1a, 128 bits: the cache's key and checksum hash. Stable across Rust
/// releases and platforms (it is defined here, byte by byte).
pub fn stable_hash(bytes: &[u8]) -> u128 {
    let mut h = StableHasher::new();
    h.write(bytes);
    h.finish()
}

/// [`stable_hash`] fed piece by piece, with length-prefixed fields: what key
/// derivations hash with.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StableHasher(u128);

impl StableHasher {
    pub(crate) fn new() -> Self {
        StableHasher(FNV_OFFSET)
    }

    /// Raw bytes, with no framing.
    pub(crate) fn write(&mut self, bytes: &[u8]) {
        let mut h = self.0;
        for &b in bytes {
            h ^= u128::from(b);
            h = h.wrapping_mul(FNV_PRIME);
        }
        self.0 = h;
    }

    /// A length-prefixed field, so that no two field sequences hash the
    /// same bytes (`"ab","c"` and `"a","bc"` differ).
    pub(crate) fn field(&mut self, bytes: &[u8]) {
        self.count(bytes.len());
        self.write(bytes);
    }

    /// A count (of the fields that follow), as a little-endian u64.
    pub(crate) fn count(&mut self, n: usize) {
        self.write(&(n as u64).to_le_bytes());
    }

    pub(crate) fn finish(self) -> u128 {
        self.0
    }

    /// The hash as a key.
    pub(crate) fn finish_key(self) -> CacheKey {
        CacheKey(self.0)
    }
}

/// A cache key: 128 bits, shown as 32 hex digits (the entry's file name).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CacheKey(u128);

impl CacheKey {
    /// The key as a number.
    pub fn as_u128(self) -> u128 {
        self.0
    }

    /// The key as 32 lowercase hex digits.
    pub fn to_hex(self) -> String {
        format!("{:032x}", self.0)
    }
}

impl fmt::Debug for CacheKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CacheKey({:032x})", self.0)
    }
}

impl fmt::Display for CacheKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

/// Counters of a cache, and what it holds now.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CacheStats {
    /// Whether the cache is on.
    pub enabled: bool,
    /// The disk folder, when there is one.
    pub dir: Option<PathBuf>,
    /// The size bound of each layer, in bytes.
    pub max_bytes: u64,
    /// Lookups the memory layer answered.
    pub memory_hits: u64,
    /// Lookups the memory layer could not answer.
    pub memory_misses: u64,
    /// Lookups the disk layer answered (after a memory miss).
    pub disk_hits: u64,
    /// Lookups the disk layer could not answer (no entry, or a rejected one).
    pub disk_misses: u64,
    /// Disk entries found invalid (truncated, corrupted, foreign) and ignored.
    pub rejected: u64,
    /// Entries written to disk.
    pub writes: u64,
    /// Disk writes that failed (the compile still succeeded).
    pub write_errors: u64,
    /// Entries removed to keep the bound (disk and memory).
    pub evictions: u64,
    /// Entries in memory now.
    pub memory_entries: usize,
    /// Bytes in memory now.
    pub memory_bytes: u64,
    /// Entry files in the folder now.
    pub disk_entries: usize,
    /// Bytes of entry files in the folder now.
    pub disk_bytes: u64,
}

/// Why an entry was not trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reject {
    /// Not a cudakit entry (bad magic, or too short to be one).
    NotAnEntry,
    /// Another format version.
    Format,
    /// The length recorded differs from the file's.
    Truncated,
    /// The checksum does not match.
    Checksum,
    /// An entry of another key.
    Foreign,
    /// A section runs past the end, a tag repeats, or bytes are left over.
    Malformed,
}

/// A bounds-checked little-endian reader over bytes: for entries, and for
/// the callers' own encodings inside sections.
#[derive(Debug)]
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes }
    }

    /// The next `n` bytes.
    pub(crate) fn take(&mut self, n: usize) -> std::result::Result<&'a [u8], Reject> {
        if n > self.bytes.len() {
            return Err(Reject::Malformed);
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    /// The next `N` bytes as an array.
    fn array<const N: usize>(&mut self) -> std::result::Result<[u8; N], Reject> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    pub(crate) fn u32(&mut self) -> std::result::Result<u32, Reject> {
        self.array().map(u32::from_le_bytes)
    }

    pub(crate) fn u64(&mut self) -> std::result::Result<u64, Reject> {
        self.array().map(u64::from_le_bytes)
    }

    fn u128(&mut self) -> std::result::Result<u128, Reject> {
        self.array().map(u128::from_le_bytes)
    }

    /// Bytes not read yet.
    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len()
    }

    /// `Ok` when every byte was read.
    pub(crate) fn finish(self) -> std::result::Result<(), Reject> {
        if self.bytes.is_empty() {
            Ok(())
        } else {
            Err(Reject::Malformed)
        }
    }
}

/// A verified entry: its bytes as stored (see the [module](self) docs) and
/// where each section lies in them.
#[derive(Debug)]
pub(crate) struct Entry {
    bytes: Vec<u8>,
    sections: Vec<(u32, Range<usize>)>,
}

impl Entry {
    /// Serializes `sections` as the entry of `key`. Each tag must appear at
    /// most once.
    pub(crate) fn encode<B: AsRef<[u8]>>(key: CacheKey, sections: &[(u32, B)]) -> Entry {
        let body: usize = sections
            .iter()
            .map(|(_, b)| SECTION_HEADER_LEN + b.as_ref().len())
            .sum();
        let total = HEADER_LEN + body + CHECKSUM_LEN;
        let mut bytes = Vec::with_capacity(total);
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&FORMAT.to_le_bytes());
        bytes.extend_from_slice(&0u32.to_le_bytes());
        bytes.extend_from_slice(&key.0.to_le_bytes());
        bytes.extend_from_slice(&(total as u64).to_le_bytes());
        bytes.extend_from_slice(&(sections.len() as u32).to_le_bytes());
        let mut index = Vec::with_capacity(sections.len());
        for (tag, data) in sections {
            let data = data.as_ref();
            debug_assert!(
                index.iter().all(|(t, _)| t != tag),
                "section {tag} given twice"
            );
            bytes.extend_from_slice(&tag.to_le_bytes());
            bytes.extend_from_slice(&(data.len() as u64).to_le_bytes());
            index.push((*tag, bytes.len()..bytes.len() + data.len()));
            bytes.extend_from_slice(data);
        }
        let checksum = stable_hash(&bytes);
        bytes.extend_from_slice(&checksum.to_le_bytes());
        debug_assert_eq!(bytes.len(), total);
        Entry {
            bytes,
            sections: index,
        }
    }

    /// Verifies `bytes` as an entry of `key` and indexes its sections.
    pub(crate) fn parse(key: CacheKey, bytes: Vec<u8>) -> std::result::Result<Entry, Reject> {
        if bytes.len() < HEADER_LEN + CHECKSUM_LEN || &bytes[..MAGIC.len()] != MAGIC {
            return Err(Reject::NotAnEntry);
        }
        let mut header = Reader::new(&bytes[MAGIC.len()..HEADER_LEN]);
        let format = header.u32()?;
        let _reserved = header.u32()?;
        let stored_key = header.u128()?;
        let total = header.u64()?;
        let count = header.u32()?;
        if total != bytes.len() as u64 {
            return Err(Reject::Truncated);
        }
        let (body, checksum) = bytes.split_at(bytes.len() - CHECKSUM_LEN);
        if stable_hash(body) != Reader::new(checksum).u128()? {
            return Err(Reject::Checksum);
        }
        if format != FORMAT {
            return Err(Reject::Format);
        }
        if stored_key != key.0 {
            return Err(Reject::Foreign);
        }
        let mut reader = Reader::new(&body[HEADER_LEN..]);
        // Each section needs at least its header: bound the allocation.
        if count as usize > reader.remaining() / SECTION_HEADER_LEN {
            return Err(Reject::Malformed);
        }
        let mut sections = Vec::with_capacity(count as usize);
        for _ in 0..count {
            let tag = reader.u32()?;
            let len = usize::try_from(reader.u64()?).map_err(|_| Reject::Malformed)?;
            let start = body.len() - reader.remaining();
            reader.take(len)?;
            sections.push((tag, start..start + len));
        }
        reader.finish()?;
        let mut tags: Vec<u32> = sections.iter().map(|(t, _)| *t).collect();
        tags.sort_unstable();
        if tags.windows(2).any(|w| w[0] == w[1]) {
            return Err(Reject::Malformed);
        }
        Ok(Entry { bytes, sections })
    }

    /// The bytes of section `tag`, when the entry has it.
    pub(crate) fn section(&self, tag: u32) -> Option<&[u8]> {
        self.sections
            .iter()
            .find(|(t, _)| *t == tag)
            .map(|(_, range)| &self.bytes[range.clone()])
    }

    /// The sections' tags, in stored order.
    pub(crate) fn tags(&self) -> impl Iterator<Item = u32> + '_ {
        self.sections.iter().map(|(t, _)| *t)
    }

    /// The entry as stored.
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// Which layer answered a lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layer {
    /// The memory layer.
    Memory,
    /// The disk layer (the entry was verified on read).
    Disk,
}

#[derive(Default)]
struct Counters {
    memory_hits: AtomicU64,
    memory_misses: AtomicU64,
    disk_hits: AtomicU64,
    disk_misses: AtomicU64,
    rejected: AtomicU64,
    writes: AtomicU64,
    write_errors: AtomicU64,
    evictions: AtomicU64,
}

fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

/// An entry of the memory layer: verified, with its last use.
#[derive(Debug)]
struct Slot {
    entry: Arc<Entry>,
    used: u64,
}

#[derive(Debug, Default)]
struct Memory {
    map: HashMap<u128, Slot>,
    bytes: usize,
    clock: u64,
}

impl Memory {
    /// Removes `key`'s entry; `true` when there was one.
    fn remove(&mut self, key: u128) -> bool {
        match self.map.remove(&key) {
            Some(slot) => {
                self.bytes -= slot.entry.as_bytes().len();
                true
            }
            None => false,
        }
    }
}

struct Inner {
    enabled: bool,
    dir: Option<PathBuf>,
    max_bytes: AtomicU64,
    memory: Mutex<Memory>,
    counters: Counters,
}

/// A compile cache: a memory layer, and a disk layer when it has a folder.
/// Cheap to clone (clones share one cache). See the [module](self) docs.
#[derive(Clone)]
pub struct Cache {
    inner: Arc<Inner>,
}

impl fmt::Debug for Cache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cache")
            .field("enabled", &self.inner.enabled)
            .field("dir", &self.inner.dir)
            .field("max_bytes", &self.max_bytes())
            .finish()
    }
}

impl Cache {
    fn build(enabled: bool, dir: Option<PathBuf>, max_bytes: u64) -> Cache {
        Cache {
            inner: Arc::new(Inner {
                enabled,
                dir,
                max_bytes: AtomicU64::new(max_bytes),
                memory: Mutex::new(Memory::default()),
                counters: Counters::default(),
            }),
        }
    }

    /// The process's cache, configured from the environment on first use
    /// (see the [module](self) docs).
    /// [`Program`](crate::compile::program::Program)s compile through it
    /// unless told otherwise.
    pub fn global() -> &'static Cache {
        static GLOBAL: Lazy<Cache> = Lazy::new(Cache::from_env);
        &GLOBAL
    }

    /// A cache configured from the environment now (`CUDAKIT_CACHE`,
    /// `CUDAKIT_CACHE_DIR`, `XDG_CACHE_HOME`, `HOME`,
    /// `CUDAKIT_CACHE_MAX_BYTES`).
    pub fn from_env() -> Cache {
        Self::from_env_with(&|name| std::env::var(name).ok())
    }

    pub(crate) fn from_env_with(env: &dyn Fn(&str) -> Option<String>) -> Cache {
        let max = env("CUDAKIT_CACHE_MAX_BYTES")
            .and_then(|v| parse_size(&v))
            .unwrap_or(DEFAULT_MAX_BYTES);
        match env("CUDAKIT_CACHE").map(|v| v.trim().to_ascii_lowercase()) {
            Some(v) if matches!(v.as_str(), "0" | "off" | "false" | "no") => {
                Self::build(false, None, max)
            }
            Some(v) if v == "memory" => Self::build(true, None, max),
            _ => Self::build(true, default_dir(env), max),
        }
    }

    /// A cache in memory and in `dir` (created on the first write), with
    /// the default size bound; independent of the environment.
    pub fn in_dir(dir: impl Into<PathBuf>) -> Cache {
        Self::build(true, Some(dir.into()), DEFAULT_MAX_BYTES)
    }

    /// A cache in memory only.
    pub fn memory_only() -> Cache {
        Self::build(true, None, DEFAULT_MAX_BYTES)
    }

    /// A cache that keeps nothing (as `CUDAKIT_CACHE=0`).
    pub fn disabled() -> Cache {
        Self::build(false, None, DEFAULT_MAX_BYTES)
    }

    /// Sets the size bound of each layer, in bytes (for every clone of this
    /// cache); it is enforced at the next write.
    pub fn with_max_bytes(self, bytes: u64) -> Cache {
        self.inner.max_bytes.store(bytes, Ordering::Relaxed);
        self
    }

    /// Whether the cache keeps anything.
    pub fn is_enabled(&self) -> bool {
        self.inner.enabled
    }

    /// The disk folder, when there is one.
    pub fn dir(&self) -> Option<&Path> {
        self.inner.dir.as_deref()
    }

    /// The size bound of each layer, in bytes.
    pub fn max_bytes(&self) -> u64 {
        self.inner.max_bytes.load(Ordering::Relaxed)
    }

    /// The file an entry of `key` is stored in, when there is a folder.
    pub fn entry_path(&self, key: CacheKey) -> Option<PathBuf> {
        self.dir()
            .map(|d| d.join(format!("{}{ENTRY_SUFFIX}", key.to_hex())))
    }

    /// The counters, and what the layers hold now (the folder is listed).
    pub fn stats(&self) -> CacheStats {
        let c = &self.inner.counters;
        let (memory_entries, memory_bytes) = {
            let memory = self.memory();
            (memory.map.len(), memory.bytes as u64)
        };
        let (disk_entries, disk_bytes) = match self.dir() {
            Some(dir) => {
                let entries = list_entries(dir);
                (entries.len(), entries.iter().map(|e| e.1).sum())
            }
            None => (0, 0),
        };
        CacheStats {
            enabled: self.inner.enabled,
            dir: self.inner.dir.clone(),
            max_bytes: self.max_bytes(),
            memory_hits: c.memory_hits.load(Ordering::Relaxed),
            memory_misses: c.memory_misses.load(Ordering::Relaxed),
            disk_hits: c.disk_hits.load(Ordering::Relaxed),
            disk_misses: c.disk_misses.load(Ordering::Relaxed),
            rejected: c.rejected.load(Ordering::Relaxed),
            writes: c.writes.load(Ordering::Relaxed),
            write_errors: c.write_errors.load(Ordering::Relaxed),
            evictions: c.evictions.load(Ordering::Relaxed),
            memory_entries,
            memory_bytes,
            disk_entries,
            disk_bytes,
        }
    }

    /// Empties the memory layer and removes every entry (and leftover
    /// temporary file) from the folder. Other processes' memory layers are
    /// not affected.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the folder cannot be listed or an entry cannot be
    /// removed (a folder that does not exist is empty, not an error).
    pub fn clear(&self) -> Result<()> {
        {
            let mut memory = self.memory();
            memory.map.clear();
            memory.bytes = 0;
        }
        let Some(dir) = self.dir() else {
            return Ok(());
        };
        let io_err = |path: &Path, err: io::Error| Error::Io {
            path: path.display().to_string(),
            message: err.to_string(),
        };
        let entries = match fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(err) => return Err(io_err(dir, err)),
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if is_entry_name(&name) || is_temp_name(&name) {
                match fs::remove_file(entry.path()) {
                    Ok(()) => {}
                    Err(err) if err.kind() == io::ErrorKind::NotFound => {}
                    Err(err) => return Err(io_err(&entry.path(), err)),
                }
            }
        }
        Ok(())
    }

    fn memory(&self) -> MutexGuard<'_, Memory> {
        // The map is updated by single inserts and removes: a panic while it
        // was held cannot leave it inconsistent.
        crate::context::lock(&self.inner.memory)
    }

    /// Looks `key` up in memory, then on disk, and decodes the entry with
    /// `decode`. An entry `decode` refuses (`None`) counts as rejected and
    /// is a miss of its layer; a refused memory entry is dropped from
    /// memory. A disk hit is kept in memory.
    pub(crate) fn lookup_with<T>(
        &self,
        key: CacheKey,
        decode: impl Fn(&Entry) -> Option<T>,
    ) -> Option<(T, Layer)> {
        if !self.inner.enabled {
            return None;
        }
        let c = &self.inner.counters;
        let in_memory = {
            let mut memory = self.memory();
            memory.clock += 1;
            let clock = memory.clock;
            memory.map.get_mut(&key.0).map(|slot| {
                slot.used = clock;
                Arc::clone(&slot.entry)
            })
        };
        if let Some(entry) = in_memory {
            // Verified when it entered memory: decode only.
            if let Some(value) = decode(&entry) {
                bump(&c.memory_hits);
                return Some((value, Layer::Memory));
            }
            bump(&c.rejected);
            self.memory().remove(key.0);
        }
        bump(&c.memory_misses);
        let path = self.entry_path(key)?;
        let decoded = fs::read(&path).ok().map(|bytes| {
            Entry::parse(key, bytes)
                .ok()
                .and_then(|entry| Some((decode(&entry)?, entry)))
        });
        match decoded {
            Some(Some((value, entry))) => {
                bump(&c.disk_hits);
                touch(&path);
                self.remember(key, Arc::new(entry));
                Some((value, Layer::Disk))
            }
            Some(None) => {
                bump(&c.rejected);
                bump(&c.disk_misses);
                None
            }
            None => {
                bump(&c.disk_misses);
                None
            }
        }
    }

    /// Stores `sections` (tag and bytes; each tag at most once) as the
    /// entry of `key`, in memory and on disk; never fails (write errors are
    /// counted).
    pub(crate) fn store<B: AsRef<[u8]>>(&self, key: CacheKey, sections: &[(u32, B)]) {
        if !self.inner.enabled {
            return;
        }
        let entry = Entry::encode(key, sections);
        if let Some(dir) = self.dir() {
            match write_entry(dir, key, entry.as_bytes()) {
                Ok(()) => {
                    bump(&self.inner.counters.writes);
                    let evicted = enforce_bound(dir, self.max_bytes());
                    self.inner
                        .counters
                        .evictions
                        .fetch_add(evicted, Ordering::Relaxed);
                }
                Err(_) => bump(&self.inner.counters.write_errors),
            }
        }
        self.remember(key, Arc::new(entry));
    }

    /// Keeps a verified entry in memory, evicting the least recently used
    /// ones to stay within the bound.
    fn remember(&self, key: CacheKey, entry: Arc<Entry>) {
        let size = entry.as_bytes().len();
        let max = usize::try_from(self.max_bytes()).unwrap_or(usize::MAX);
        let mut memory = self.memory();
        memory.clock += 1;
        let clock = memory.clock;
        memory.remove(key.0);
        if size > max {
            return;
        }
        memory.map.insert(key.0, Slot { entry, used: clock });
        memory.bytes += size;
        let mut evicted = 0;
        while memory.bytes > max {
            let Some(oldest) = memory
                .map
                .iter()
                .min_by_key(|(_, slot)| slot.used)
                .map(|(k, _)| *k)
            else {
                break;
            };
            if memory.remove(oldest) {
                evicted += 1;
            }
        }
        drop(memory);
        self.inner
            .counters
            .evictions
            .fetch_add(evicted, Ordering::Relaxed);
    }
}

/// The process's cache's counters ([`Cache::global`]).
pub fn stats() -> CacheStats {
    Cache::global().stats()
}

/// Empties the process's cache ([`Cache::global`]), memory and disk.
///
/// # Errors
///
/// As [`Cache::clear`].
pub fn clear() -> Result<()> {
    Cache::global().clear()
}

/// The default folder: `CUDAKIT_CACHE_DIR`, else `$XDG_CACHE_HOME/cudakit`,
/// else `$HOME/.cache/cudakit`.
pub(crate) fn default_dir(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let non_empty = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    if let Some(dir) = non_empty("CUDAKIT_CACHE_DIR") {
        return Some(PathBuf::from(dir));
    }
    if let Some(xdg) = non_empty("XDG_CACHE_HOME").filter(|v| Path::new(v).is_absolute()) {
        return Some(Path::new(&xdg).join("cudakit"));
    }
    non_empty("HOME").map(|home| Path::new(&home).join(".cache").join("cudakit"))
}

/// Parses `1048576`, `512K`, `64M`, `2G`, `2GiB`, `512MB` (binary units).
pub(crate) fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let t = t
        .strip_suffix("iB")
        .or_else(|| t.strip_suffix('B'))
        .unwrap_or(t);
    let (digits, shift) = match t.chars().last()? {
        'k' | 'K' => (&t[..t.len() - 1], 10),
        'm' | 'M' => (&t[..t.len() - 1], 20),
        'g' | 'G' => (&t[..t.len() - 1], 30),
        _ => (t, 0),
    };
    let n: u64 = digits.trim().parse().ok()?;
    n.checked_mul(1u64 << shift)
}

fn is_entry_name(name: &str) -> bool {
    name.len() == 32 + ENTRY_SUFFIX.len()
        && name.ends_with(ENTRY_SUFFIX)
        && name[..32].bytes().all(|b| b.is_ascii_hexdigit())
}

fn is_temp_name(name: &str) -> bool {
    name.starts_with('.') && name.ends_with(TEMP_SUFFIX)
}

/// (path, size, mtime) of every entry in `dir`.
fn list_entries(dir: &Path) -> Vec<(PathBuf, u64, SystemTime)> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| is_entry_name(&e.file_name().to_string_lossy()))
        .filter_map(|e| {
            let meta = e.metadata().ok()?;
            meta.is_file()
                .then(|| (e.path(), meta.len(), meta.modified().unwrap_or(UNIX_EPOCH)))
        })
        .collect()
}

/// Removes the oldest entries until the folder fits `max`, and temporary
/// files left by writers that died. Returns the number of entries removed.
fn enforce_bound(dir: &Path, max: u64) -> u64 {
    if let Ok(entries) = fs::read_dir(dir) {
        let now = SystemTime::now();
        for entry in entries.flatten() {
            if !is_temp_name(&entry.file_name().to_string_lossy()) {
                continue;
            }
            let stale = entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| now.duration_since(t).ok())
                .is_some_and(|age| age > STALE_TEMP);
            if stale {
                let _ = fs::remove_file(entry.path());
            }
        }
    }
    let mut entries = list_entries(dir);
    let mut total: u64 = entries.iter().map(|e| e.1).sum();
    if total <= max {
        return 0;
    }
    entries.sort_by(|a, b| a.2.cmp(&b.2).then_with(|| a.0.cmp(&b.0)));
    let mut removed = 0;
    for (path, len, _) in entries {
        if total <= max {
            break;
        }
        // Another process may have removed it already: either way it is gone.
        match fs::remove_file(&path) {
            Ok(()) => removed += 1,
            Err(err) if err.kind() == io::ErrorKind::NotFound => {}
            Err(_) => continue,
        }
        total = total.saturating_sub(len);
    }
    removed
}

/// Refreshes an entry's modification time, so that eviction removes the
/// least recently used entries first.
fn touch(path: &Path) {
    if let Ok(file) = File::options().write(true).open(path) {
        let _ = file.set_modified(SystemTime::now());
    }
}

/// Writes `bytes` as the entry of `key`: a new temporary file in the same
/// folder, then an atomic rename over the entry's name.
fn write_entry(dir: &Path, key: CacheKey, bytes: &[u8]) -> io::Result<()> {
    static SEQUENCE: AtomicU64 = AtomicU64::new(0);
    fs::create_dir_all(dir)?;
    let hex = key.to_hex();
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let temp = dir.join(format!(
        ".{hex}.{}.{}.{nanos}{TEMP_SUFFIX}",
        std::process::id(),
        SEQUENCE.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut file = File::create_new(&temp)?;
        file.write_all(bytes)?;
        drop(file);
        fs::rename(&temp, dir.join(format!("{hex}{ENTRY_SUFFIX}")))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stable_hash_is_fnv1a_128() {
        // The published FNV-1a 128-bit test vectors.
        assert_eq!(stable_hash(b""), 0x6c62272e07bb014262b821756295c58d);
        assert_eq!(stable_hash(b"a"), 0xd228cb696f1a8caf78912b704e4a8964);
        assert_eq!(stable_hash(b"foobar"), 0x343e1662793c64bf6f0d3597ba446f18);
    }

    #[test]
    fn fields_are_length_prefixed() {
        let hash = |fields: &[&[u8]]| {
            let mut h = StableHasher::new();
            for f in fields {
                h.field(f);
            }
            h.finish()
        };
        assert_ne!(hash(&[b"ab", b"c"]), hash(&[b"a", b"bc"]));
        assert_ne!(hash(&[b"abc"]), hash(&[b"abc", b""]));
        let mut h = StableHasher::new();
        h.count(3);
        h.write(b"abc");
        assert_eq!(h.finish(), hash(&[b"abc"]));
    }

    fn sample_sections() -> Vec<(u32, Vec<u8>)> {
        vec![
            (1, b"p.cu".to_vec()),
            (7, Vec::new()),
            (5, b"\x7fELF....".to_vec()),
        ]
    }

    #[test]
    fn entries_round_trip_and_every_damage_is_rejected() {
        let k = CacheKey(42);
        let bytes = Entry::encode(k, &sample_sections()).as_bytes().to_vec();
        let back = Entry::parse(k, bytes.clone()).unwrap();
        assert_eq!(back.as_bytes(), &bytes[..]);
        assert_eq!(back.tags().collect::<Vec<_>>(), [1, 7, 5]);
        assert_eq!(back.section(1), Some(&b"p.cu"[..]));
        assert_eq!(back.section(7), Some(&b""[..]));
        assert_eq!(back.section(5), Some(&b"\x7fELF...."[..]));
        assert_eq!(back.section(2), None);
        assert_eq!(
            Entry::parse(CacheKey(43), bytes.clone()).unwrap_err(),
            Reject::Foreign
        );
        for cut in [0, 1, 8, HEADER_LEN, bytes.len() / 2, bytes.len() - 1] {
            assert!(
                Entry::parse(k, bytes[..cut].to_vec()).is_err(),
                "cut at {cut}"
            );
        }
        for i in 0..bytes.len() {
            for bit in 0..8 {
                let mut bad = bytes.clone();
                bad[i] ^= 1 << bit;
                assert!(Entry::parse(k, bad).is_err(), "flip of bit {bit} at {i}");
            }
        }
        assert_eq!(
            Entry::parse(
                k,
                b"garbage garbage garbage garbage garbage garbage garbage garbage".to_vec()
            )
            .unwrap_err(),
            Reject::NotAnEntry
        );
    }

    /// An entry whose checksum is right but whose sections are not: what a
    /// writer with a bug (or another program) could leave.
    fn resealed(mut bytes: Vec<u8>) -> Vec<u8> {
        bytes.truncate(bytes.len() - CHECKSUM_LEN);
        let total = (bytes.len() + CHECKSUM_LEN) as u64;
        bytes[32..40].copy_from_slice(&total.to_le_bytes());
        let checksum = stable_hash(&bytes);
        bytes.extend_from_slice(&checksum.to_le_bytes());
        bytes
    }

    #[test]
    fn malformed_sections_are_rejected_even_with_a_good_checksum() {
        let k = CacheKey(7);
        let good = Entry::encode(k, &sample_sections()).as_bytes().to_vec();
        assert!(Entry::parse(k, resealed(good.clone())).is_ok());
        // A repeated tag.
        let mut twice = good.clone();
        twice[HEADER_LEN..HEADER_LEN + 4].copy_from_slice(&5u32.to_le_bytes());
        assert_eq!(
            Entry::parse(k, resealed(twice)).unwrap_err(),
            Reject::Malformed
        );
        // A section running past the end.
        let mut long = good.clone();
        long[HEADER_LEN + 4..HEADER_LEN + 12].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(
            Entry::parse(k, resealed(long)).unwrap_err(),
            Reject::Malformed
        );
        // Bytes after the last section.
        let mut extra = good[..good.len() - CHECKSUM_LEN].to_vec();
        extra.push(0);
        extra.extend_from_slice(&[0; CHECKSUM_LEN]);
        assert_eq!(
            Entry::parse(k, resealed(extra)).unwrap_err(),
            Reject::Malformed
        );
        // More sections than the bytes could hold.
        let mut many = good;
        many[HEADER_LEN - 4..HEADER_LEN].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(
            Entry::parse(k, resealed(many)).unwrap_err(),
            Reject::Malformed
        );
    }

    /// A fresh folder under the system's temporary folder.
    fn temp_dir(tag: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("cudakit-cache-unit-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    fn decode_program(entry: &Entry) -> Option<Vec<u8>> {
        entry.section(1).map(<[u8]>::to_vec)
    }

    #[test]
    fn lookups_go_memory_then_disk_and_refusals_are_rejected_misses() {
        let dir = temp_dir("layers");
        let cache = Cache::in_dir(&dir);
        let k = CacheKey(1);
        assert_eq!(cache.lookup_with(k, decode_program), None);
        cache.store(k, &sample_sections());
        assert_eq!(
            cache.lookup_with(k, decode_program),
            Some((b"p.cu".to_vec(), Layer::Memory))
        );
        // A decoder that refuses the entry: a rejected miss in both layers,
        // and the memory layer drops it.
        assert_eq!(cache.lookup_with(k, |_| None::<()>), None);
        let s = cache.stats();
        assert_eq!(
            (s.memory_hits, s.memory_misses, s.disk_misses, s.rejected),
            (1, 2, 2, 2),
            "{s:?}"
        );
        assert_eq!(s.memory_entries, 0);
        // The disk entry is still good for a decoder that accepts it.
        assert_eq!(
            cache.lookup_with(k, decode_program),
            Some((b"p.cu".to_vec(), Layer::Disk))
        );
        assert_eq!(
            cache.lookup_with(k, decode_program),
            Some((b"p.cu".to_vec(), Layer::Memory))
        );
        let s = cache.stats();
        assert_eq!((s.disk_hits, s.memory_entries, s.writes), (1, 1, 1));
        assert_eq!(s.memory_bytes, s.disk_bytes);
        cache.clear().unwrap();
        assert_eq!(cache.lookup_with(k, decode_program), None);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_damaged_file_is_a_rejected_miss() {
        let dir = temp_dir("damaged");
        let k = CacheKey(2);
        Cache::in_dir(&dir).store(k, &sample_sections());
        let path = Cache::in_dir(&dir).entry_path(k).unwrap();
        let mut bytes = fs::read(&path).unwrap();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 1;
        fs::write(&path, bytes).unwrap();
        let fresh = Cache::in_dir(&dir);
        assert_eq!(fresh.lookup_with(k, decode_program), None);
        let s = fresh.stats();
        assert_eq!((s.rejected, s.disk_misses, s.disk_hits), (1, 1, 0));
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_memory_layer_keeps_its_bound() {
        let entry_size = Entry::encode(CacheKey(0), &[(1u32, [0u8; 100])])
            .as_bytes()
            .len() as u64;
        let cache = Cache::memory_only().with_max_bytes(entry_size * 2);
        for k in 0..3 {
            cache.store(CacheKey(k), &[(1u32, [k as u8; 100])]);
        }
        let s = cache.stats();
        assert_eq!((s.memory_entries, s.evictions), (2, 1), "{s:?}");
        assert_eq!(s.memory_bytes, entry_size * 2);
        let first = |entry: &Entry| entry.section(1).map(|b| b[0]);
        assert_eq!(cache.lookup_with(CacheKey(0), first), None);
        assert_eq!(
            cache.lookup_with(CacheKey(2), first),
            Some((2, Layer::Memory))
        );
        let disabled = Cache::disabled();
        disabled.store(CacheKey(0), &[(1u32, [0u8; 4])]);
        assert_eq!(disabled.lookup_with(CacheKey(0), first), None);
        assert_eq!(disabled.stats().memory_entries, 0);
    }

    #[test]
    fn the_default_folder_follows_the_environment() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(
            default_dir(&env(&[("CUDAKIT_CACHE_DIR", "/c"), ("HOME", "/h")])),
            Some(PathBuf::from("/c"))
        );
        assert_eq!(
            default_dir(&env(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/h")])),
            Some(PathBuf::from("/x/cudakit"))
        );
        assert_eq!(
            default_dir(&env(&[("XDG_CACHE_HOME", "relative"), ("HOME", "/h")])),
            Some(PathBuf::from("/h/.cache/cudakit"))
        );
        assert_eq!(default_dir(&env(&[])), None);
        assert!(!Cache::from_env_with(&env(&[("CUDAKIT_CACHE", "0")])).is_enabled());
        assert!(!Cache::from_env_with(&env(&[("CUDAKIT_CACHE", "off")])).is_enabled());
        let memory = Cache::from_env_with(&env(&[("CUDAKIT_CACHE", "memory"), ("HOME", "/h")]));
        assert!(memory.is_enabled() && memory.dir().is_none());
        let sized =
            Cache::from_env_with(&env(&[("CUDAKIT_CACHE_MAX_BYTES", "64M"), ("HOME", "/h")]));
        assert_eq!(sized.max_bytes(), 64 << 20);
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("1048576"), Some(1 << 20));
        assert_eq!(parse_size("512K"), Some(512 << 10));
        assert_eq!(parse_size("64M"), Some(64 << 20));
        assert_eq!(parse_size("2GiB"), Some(2 << 30));
        assert_eq!(parse_size("3MB"), Some(3 << 20));
        assert_eq!(parse_size(""), None);
        assert_eq!(parse_size("lots"), None);
        assert_eq!(parse_size("99999999999999G"), None);
    }

    #[test]
    fn entry_names_are_recognised() {
        assert!(is_entry_name(&format!("{}.ckc", CacheKey(1).to_hex())));
        assert!(!is_entry_name("notes.txt"));
        assert!(!is_entry_name("0123.ckc"));
        assert!(is_temp_name(".abc.1.2.3.tmp"));
    }
}
