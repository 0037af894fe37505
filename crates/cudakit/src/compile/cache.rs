//! The compile cache: results of [`Program::compile`](crate::compile::program::Program::compile)
//! kept in memory (per process) and on disk (shared by processes).
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
//! # Key
//!
//! A 128-bit FNV-1a hash ([`stable_hash`], written in this crate: std's
//! `DefaultHasher` may change between Rust releases) over length-prefixed
//! fields: cudakit's version, NVRTC's version, the program's name and
//! source, the in-memory headers (names and contents, sorted by name), a
//! fingerprint of the files under the include paths (relative path, size
//! and modification time of each), every option of every NVRTC run in
//! order (the architecture and defines included), the name expressions,
//! the architecture and the outputs asked for. Files reached other than
//! through include paths (an absolute `#include`) are not covered: use
//! [`Program::without_cache`](crate::compile::program::Program::without_cache) for
//! such programs. A program whose include paths hold more than
//! [`MAX_INCLUDE_FILES`] files bypasses the cache.
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
//! (integers little-endian). Sections: program name, architecture,
//! options, PTX, CUBIN, LTO-IR, log, lowered-name map, cudakit and NVRTC
//! versions. An entry is written to a temporary file in the same folder and
//! renamed over the final name, so readers see a whole entry or none, and
//! several processes may write the same entry at once. On read, the magic,
//! format, length, checksum, key and every section bound are verified; an
//! entry that fails any check (truncated, corrupted, from another key or
//! another format) is a miss, counted in [`CacheStats::rejected`], and is
//! replaced by the recompiled result. Cache errors never fail a compile.
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
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use once_cell::sync::Lazy;

use crate::compile::program::{Arch, Compiled, Origin};
use crate::error::{Error, Result};

/// The default size bound: 256 MiB.
pub const DEFAULT_MAX_BYTES: u64 = 256 << 20;

/// Programs whose include paths hold more files than this are not cached.
pub const MAX_INCLUDE_FILES: usize = 10_000;

const MAGIC: &[u8; 8] = b"CUDAKITC";
const FORMAT: u32 = 1;
const HEADER_LEN: usize = 8 + 4 + 4 + 16 + 8 + 4;
const CHECKSUM_LEN: usize = 16;
const ENTRY_SUFFIX: &str = ".ckc";
const TEMP_SUFFIX: &str = ".tmp";
const STALE_TEMP: Duration = Duration::from_secs(3600);

const FNV_OFFSET: u128 = 0x6c62272e07bb014262b821756295c58d;
const FNV_PRIME: u128 = 0x0000000001000000000000000000013B;

/// FNV-1a, 128 bits: the cache's key and checksum hash. Stable across Rust
/// releases and platforms (it is defined here, byte by byte).
pub fn stable_hash(bytes: &[u8]) -> u128 {
    let mut h = Fnv128::new();
    h.write(bytes);
    h.finish()
}

#[derive(Clone, Copy)]
struct Fnv128(u128);

impl Fnv128 {
    fn new() -> Self {
        Fnv128(FNV_OFFSET)
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut h = self.0;
        for &b in bytes {
            h ^= u128::from(b);
            h = h.wrapping_mul(FNV_PRIME);
        }
        self.0 = h;
    }

    /// A length-prefixed field, so that no two field sequences hash the
    /// same bytes (`"ab","c"` and `"a","bc"` differ).
    fn field(&mut self, bytes: &[u8]) {
        self.write(&(bytes.len() as u64).to_le_bytes());
        self.write(bytes);
    }

    fn count(&mut self, n: usize) {
        self.write(&(n as u64).to_le_bytes());
    }

    fn finish(self) -> u128 {
        self.0
    }
}

/// A compile's cache key: 128 bits, shown as 32 hex digits (the entry's
/// file name).
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

/// Everything a compile's result depends on.
pub(crate) struct KeyInputs<'a> {
    pub(crate) cudakit_version: &'a str,
    pub(crate) nvrtc_version: (i32, i32),
    pub(crate) name: &'a str,
    pub(crate) source: &'a str,
    /// Sorted by name.
    pub(crate) headers: &'a [(&'a str, &'a str)],
    pub(crate) include_fingerprint: u128,
    /// The options of each NVRTC run, in order.
    pub(crate) options: &'a [&'a [String]],
    pub(crate) name_expressions: &'a [String],
    pub(crate) arch: &'a str,
    pub(crate) outputs: &'a [&'a str],
}

/// The key of a compile.
pub(crate) fn key(inputs: &KeyInputs<'_>) -> CacheKey {
    let mut h = Fnv128::new();
    h.field(b"cudakit compile cache key v1");
    h.field(inputs.cudakit_version.as_bytes());
    h.write(&inputs.nvrtc_version.0.to_le_bytes());
    h.write(&inputs.nvrtc_version.1.to_le_bytes());
    h.field(inputs.name.as_bytes());
    h.field(inputs.source.as_bytes());
    h.count(inputs.headers.len());
    for (name, contents) in inputs.headers {
        h.field(name.as_bytes());
        h.field(contents.as_bytes());
    }
    h.write(&inputs.include_fingerprint.to_le_bytes());
    h.count(inputs.options.len());
    for run in inputs.options {
        h.count(run.len());
        for option in *run {
            h.field(option.as_bytes());
        }
    }
    h.count(inputs.name_expressions.len());
    for e in inputs.name_expressions {
        h.field(e.as_bytes());
    }
    h.field(inputs.arch.as_bytes());
    h.count(inputs.outputs.len());
    for o in inputs.outputs {
        h.field(o.as_bytes());
    }
    CacheKey(h.finish())
}

/// A fingerprint of the files under `folders`: for each folder, in order,
/// every file's relative path, size and modification time. `None` when
/// they hold more than [`MAX_INCLUDE_FILES`] files.
pub(crate) fn fingerprint_folders(folders: &[PathBuf]) -> Option<u128> {
    let mut h = Fnv128::new();
    h.count(folders.len());
    let mut budget = MAX_INCLUDE_FILES;
    for folder in folders {
        h.field(folder.as_os_str().as_encoded_bytes());
        let mut files = Vec::new();
        if !walk(folder, Path::new(""), &mut files, &mut budget) {
            return None;
        }
        files.sort();
        h.count(files.len());
        for (rel, len, mtime) in files {
            h.field(rel.as_os_str().as_encoded_bytes());
            h.write(&len.to_le_bytes());
            h.write(&mtime.to_le_bytes());
        }
    }
    Some(h.finish())
}

/// Collects (relative path, size, mtime in ns) of the files under `root`;
/// `false` when the budget runs out. Symbolic links to folders are not
/// followed (no cycles); links to files are.
fn walk(root: &Path, rel: &Path, out: &mut Vec<(PathBuf, u64, u128)>, budget: &mut usize) -> bool {
    let Ok(entries) = fs::read_dir(root.join(rel)) else {
        return true;
    };
    for entry in entries.flatten() {
        let rel_path = rel.join(entry.file_name());
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            if !walk(root, &rel_path, out, budget) {
                return false;
            }
            continue;
        }
        let Ok(meta) = fs::metadata(entry.path()) else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        if *budget == 0 {
            return false;
        }
        *budget -= 1;
        let mtime = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        out.push((rel_path, meta.len(), mtime));
    }
    true
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

#[derive(Default)]
struct Memory {
    map: HashMap<u128, (Arc<Compiled>, u64, usize)>,
    bytes: usize,
    clock: u64,
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
    /// (see the [module](self) docs). [`Program`](crate::compile::program::Program)s
    /// compile through it unless told otherwise.
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
        match self.inner.memory.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// Looks `key` up in memory, then on disk.
    pub(crate) fn lookup(&self, key: CacheKey) -> Option<Compiled> {
        if !self.inner.enabled {
            return None;
        }
        let c = &self.inner.counters;
        {
            let mut memory = self.memory();
            memory.clock += 1;
            let clock = memory.clock;
            if let Some(slot) = memory.map.get_mut(&key.0) {
                slot.1 = clock;
                bump(&c.memory_hits);
                let mut hit = (*slot.0).clone();
                hit.origin = Origin::MemoryCache;
                hit.key = Some(key);
                return Some(hit);
            }
        }
        bump(&c.memory_misses);
        let path = self.entry_path(key)?;
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(_) => {
                bump(&c.disk_misses);
                return None;
            }
        };
        match decode_entry(key, &bytes) {
            Ok(mut compiled) => {
                bump(&c.disk_hits);
                touch(&path);
                compiled.key = Some(key);
                self.remember(key, &compiled);
                compiled.origin = Origin::DiskCache;
                Some(compiled)
            }
            Err(_) => {
                bump(&c.rejected);
                bump(&c.disk_misses);
                None
            }
        }
    }

    /// Stores a result in memory and on disk; never fails (write errors are
    /// counted).
    pub(crate) fn store(&self, key: CacheKey, compiled: &Compiled) {
        if !self.inner.enabled {
            return;
        }
        self.remember(key, compiled);
        let Some(dir) = self.dir() else { return };
        let bytes = encode_entry(key, compiled);
        match write_entry(dir, key, &bytes) {
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

    fn remember(&self, key: CacheKey, compiled: &Compiled) {
        let size = compiled.footprint();
        let max = usize::try_from(self.max_bytes()).unwrap_or(usize::MAX);
        let mut memory = self.memory();
        memory.clock += 1;
        let clock = memory.clock;
        if let Some((_, _, old)) = memory.map.remove(&key.0) {
            memory.bytes -= old;
        }
        if size > max {
            return;
        }
        let mut stored = compiled.clone();
        stored.origin = Origin::Nvrtc;
        memory.map.insert(key.0, (Arc::new(stored), clock, size));
        memory.bytes += size;
        let mut evicted = 0;
        while memory.bytes > max {
            let Some(oldest) = memory
                .map
                .iter()
                .min_by_key(|(_, (_, used, _))| *used)
                .map(|(k, _)| *k)
            else {
                break;
            };
            if let Some((_, _, bytes)) = memory.map.remove(&oldest) {
                memory.bytes -= bytes;
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

mod tag {
    pub(super) const PROGRAM: u32 = 1;
    pub(super) const ARCH: u32 = 2;
    pub(super) const OPTIONS: u32 = 3;
    pub(super) const PTX: u32 = 4;
    pub(super) const CUBIN: u32 = 5;
    pub(super) const LTO_IR: u32 = 6;
    pub(super) const LOG: u32 = 7;
    pub(super) const LOWERED: u32 = 8;
    pub(super) const CUDAKIT_VERSION: u32 = 9;
    pub(super) const NVRTC_VERSION: u32 = 10;
}

fn encode_list<'a>(items: impl ExactSizeIterator<Item = &'a str>) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&(items.len() as u32).to_le_bytes());
    for item in items {
        out.extend_from_slice(&(item.len() as u32).to_le_bytes());
        out.extend_from_slice(item.as_bytes());
    }
    out
}

/// Serializes an entry (see the [module](self) docs for the layout).
pub(crate) fn encode_entry(key: CacheKey, c: &Compiled) -> Vec<u8> {
    let arch = c.arch.to_string();
    let nvrtc = crate::compile::program::nvrtc_version()
        .map(|(a, b)| format!("{a}.{b}"))
        .unwrap_or_default();
    let lowered: Vec<&str> = c
        .lowered
        .iter()
        .flat_map(|(k, v)| [k.as_str(), v.as_str()])
        .collect();
    let options = encode_list(c.options.iter().map(String::as_str));
    let lowered = encode_list(lowered.into_iter());
    let mut sections: Vec<(u32, &[u8])> = vec![
        (tag::PROGRAM, c.program.as_bytes()),
        (tag::ARCH, arch.as_bytes()),
        (tag::OPTIONS, &options),
        (tag::LOG, c.log.as_bytes()),
        (tag::LOWERED, &lowered),
        (tag::CUDAKIT_VERSION, env!("CARGO_PKG_VERSION").as_bytes()),
        (tag::NVRTC_VERSION, nvrtc.as_bytes()),
    ];
    if let Some(ptx) = &c.ptx {
        sections.push((tag::PTX, ptx.as_bytes()));
    }
    if let Some(cubin) = &c.cubin {
        sections.push((tag::CUBIN, cubin));
    }
    if let Some(lto) = &c.lto_ir {
        sections.push((tag::LTO_IR, lto));
    }
    let body: usize = sections.iter().map(|(_, b)| 4 + 8 + b.len()).sum();
    let total = HEADER_LEN + body + CHECKSUM_LEN;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&key.0.to_le_bytes());
    out.extend_from_slice(&(total as u64).to_le_bytes());
    out.extend_from_slice(&(sections.len() as u32).to_le_bytes());
    for (t, bytes) in &sections {
        out.extend_from_slice(&t.to_le_bytes());
        out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        out.extend_from_slice(bytes);
    }
    let checksum = stable_hash(&out);
    out.extend_from_slice(&checksum.to_le_bytes());
    debug_assert_eq!(out.len(), total);
    out
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
    /// A section is malformed, duplicated, unknown or missing.
    Malformed,
}

/// A bounds-checked reader over an entry's bytes.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> std::result::Result<&'a [u8], Reject> {
        if n > self.bytes.len() {
            return Err(Reject::Malformed);
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn u32(&mut self) -> std::result::Result<u32, Reject> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> std::result::Result<u64, Reject> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    fn list(mut self) -> std::result::Result<Vec<String>, Reject> {
        let n = self.u32()? as usize;
        // Each item needs at least its 4-byte length: bound the allocation.
        if n > self.bytes.len() / 4 {
            return Err(Reject::Malformed);
        }
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let len = self.u32()? as usize;
            out.push(text(self.take(len)?)?);
        }
        if !self.bytes.is_empty() {
            return Err(Reject::Malformed);
        }
        Ok(out)
    }
}

fn text(bytes: &[u8]) -> std::result::Result<String, Reject> {
    String::from_utf8(bytes.to_vec()).map_err(|_| Reject::Malformed)
}

/// Parses and verifies an entry of `key`.
pub(crate) fn decode_entry(key: CacheKey, bytes: &[u8]) -> std::result::Result<Compiled, Reject> {
    if bytes.len() < HEADER_LEN + CHECKSUM_LEN || &bytes[..8] != MAGIC {
        return Err(Reject::NotAnEntry);
    }
    let mut header = Reader {
        bytes: &bytes[8..HEADER_LEN],
    };
    let format = header.u32()?;
    let _reserved = header.u32()?;
    let mut key_bytes = [0u8; 16];
    key_bytes.copy_from_slice(header.take(16)?);
    let total = header.u64()?;
    let count = header.u32()?;
    if total != bytes.len() as u64 {
        return Err(Reject::Truncated);
    }
    let (body, checksum) = bytes.split_at(bytes.len() - CHECKSUM_LEN);
    let mut expected = [0u8; 16];
    expected.copy_from_slice(checksum);
    if stable_hash(body) != u128::from_le_bytes(expected) {
        return Err(Reject::Checksum);
    }
    if format != FORMAT {
        return Err(Reject::Format);
    }
    if u128::from_le_bytes(key_bytes) != key.0 {
        return Err(Reject::Foreign);
    }
    let mut reader = Reader {
        bytes: &body[HEADER_LEN..],
    };
    let mut sections: HashMap<u32, &[u8]> = HashMap::new();
    for _ in 0..count {
        let t = reader.u32()?;
        let len = usize::try_from(reader.u64()?).map_err(|_| Reject::Malformed)?;
        let data = reader.take(len)?;
        if !(tag::PROGRAM..=tag::NVRTC_VERSION).contains(&t) || sections.insert(t, data).is_some() {
            return Err(Reject::Malformed);
        }
    }
    if !reader.bytes.is_empty() {
        return Err(Reject::Malformed);
    }
    let get = |t: u32| sections.get(&t).copied().ok_or(Reject::Malformed);
    let arch: Arch = text(get(tag::ARCH)?)?
        .parse()
        .map_err(|_| Reject::Malformed)?;
    let options = Reader {
        bytes: get(tag::OPTIONS)?,
    }
    .list()?;
    let pairs = Reader {
        bytes: get(tag::LOWERED)?,
    }
    .list()?;
    if pairs.len() % 2 != 0 {
        return Err(Reject::Malformed);
    }
    let mut lowered = std::collections::BTreeMap::new();
    let mut it = pairs.into_iter();
    while let (Some(k), Some(v)) = (it.next(), it.next()) {
        lowered.insert(k, v);
    }
    let ptx = sections.get(&tag::PTX).map(|b| text(b)).transpose()?;
    let cubin = sections.get(&tag::CUBIN).map(|b| b.to_vec());
    let lto_ir = sections.get(&tag::LTO_IR).map(|b| b.to_vec());
    if ptx.is_none() && cubin.is_none() && lto_ir.is_none() {
        return Err(Reject::Malformed);
    }
    Ok(Compiled {
        program: text(get(tag::PROGRAM)?)?,
        arch,
        options,
        ptx,
        cubin,
        lto_ir,
        log: text(get(tag::LOG)?)?,
        lowered,
        origin: Origin::DiskCache,
        elapsed: Duration::ZERO,
        key: Some(key),
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn stable_hash_is_fnv1a_128() {
        // The published FNV-1a 128-bit test vectors.
        assert_eq!(stable_hash(b""), 0x6c62272e07bb014262b821756295c58d);
        assert_eq!(stable_hash(b"a"), 0xd228cb696f1a8caf78912b704e4a8964);
        assert_eq!(stable_hash(b"foobar"), 0x343e1662793c64bf6f0d3597ba446f18);
    }

    fn inputs<'a>(
        headers: &'a [(&'a str, &'a str)],
        options: &'a [&'a [String]],
        exprs: &'a [String],
    ) -> KeyInputs<'a> {
        KeyInputs {
            cudakit_version: "0.1.0",
            nvrtc_version: (13, 0),
            name: "k.cu",
            source: "__global__ void k() {}",
            headers,
            include_fingerprint: 7,
            options,
            name_expressions: exprs,
            arch: "sm_90",
            outputs: &["cubin"],
        }
    }

    /// The key of fixed inputs is a fixed constant: a change of the key
    /// derivation (or of the hash) would silently orphan every user's cache
    /// entries, so it must be deliberate and show up here.
    #[test]
    fn the_key_of_fixed_inputs_is_golden() {
        let options = vec!["-arch=sm_90".to_owned(), "-DN=4".to_owned()];
        let runs: [&[String]; 1] = [&options];
        let exprs = vec!["k".to_owned()];
        let headers = [("a.h", "#define A 1")];
        let k = key(&inputs(&headers, &runs, &exprs));
        assert_eq!(k.to_hex(), GOLDEN_KEY, "the cache key derivation changed");
    }

    const GOLDEN_KEY: &str = "f6f865d299508a37a97f8781725e8269";

    #[test]
    fn every_field_changes_the_key_and_framing_is_unambiguous() {
        let o1 = vec!["-DA".to_owned(), "B".to_owned()];
        let o2 = vec!["-DAB".to_owned()];
        let r1: [&[String]; 1] = [&o1];
        let r2: [&[String]; 1] = [&o2];
        let e: Vec<String> = Vec::new();
        let h1 = [("ab", "c")];
        let h2 = [("a", "bc")];
        let base = key(&inputs(&h1, &r1, &e));
        assert_ne!(base, key(&inputs(&h2, &r1, &e)));
        assert_ne!(base, key(&inputs(&h1, &r2, &e)));
        let mut i = inputs(&h1, &r1, &e);
        i.nvrtc_version = (13, 1);
        assert_ne!(base, key(&i));
        let mut i = inputs(&h1, &r1, &e);
        i.cudakit_version = "0.1.1";
        assert_ne!(base, key(&i));
        let mut i = inputs(&h1, &r1, &e);
        i.arch = "sm_90a";
        assert_ne!(base, key(&i));
        let mut i = inputs(&h1, &r1, &e);
        i.outputs = &["cubin", "ptx"];
        assert_ne!(base, key(&i));
        let mut i = inputs(&h1, &r1, &e);
        i.include_fingerprint = 8;
        assert_ne!(base, key(&i));
        assert_eq!(base, key(&inputs(&h1, &r1, &e)));
    }

    fn sample() -> Compiled {
        let mut lowered = BTreeMap::new();
        lowered.insert("scale<float>".to_owned(), "_Z5scaleIfEvPT_".to_owned());
        Compiled {
            program: "p.cu".to_owned(),
            arch: Arch::SmA(90),
            options: vec!["-arch=sm_90a".to_owned()],
            ptx: Some(".version 9.0".to_owned()),
            cubin: Some(b"\x7fELF....".to_vec()),
            lto_ir: None,
            log: "warning".to_owned(),
            lowered,
            origin: Origin::Nvrtc,
            elapsed: Duration::ZERO,
            key: None,
        }
    }

    #[test]
    fn entries_round_trip_and_every_damage_is_rejected() {
        let k = CacheKey(42);
        let bytes = encode_entry(k, &sample());
        let back = decode_entry(k, &bytes).unwrap();
        assert_eq!(back.program, "p.cu");
        assert_eq!(back.arch, Arch::SmA(90));
        assert_eq!(back.ptx.as_deref(), Some(".version 9.0"));
        assert_eq!(back.cubin.as_deref(), Some(&b"\x7fELF...."[..]));
        assert_eq!(back.lowered["scale<float>"], "_Z5scaleIfEvPT_");
        assert_eq!(
            decode_entry(CacheKey(43), &bytes).unwrap_err(),
            Reject::Foreign
        );
        for cut in [0, 1, 8, HEADER_LEN, bytes.len() / 2, bytes.len() - 1] {
            assert!(decode_entry(k, &bytes[..cut]).is_err(), "cut at {cut}");
        }
        for i in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[i] ^= 0x40;
            assert!(decode_entry(k, &bad).is_err(), "flip at {i}");
        }
        assert_eq!(
            decode_entry(
                k,
                b"garbage garbage garbage garbage garbage garbage garbage garbage"
            )
            .unwrap_err(),
            Reject::NotAnEntry
        );
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
