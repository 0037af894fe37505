//! The result of a compile, [`Compiled`]: its outputs, log and lowered
//! names, name lookups in the lowered-name map, and its encoding as the
//! sections of a cache entry.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use super::nvrtc::nvrtc_version;
use super::options::Arch;
use crate::compile::cache::{Cache, CacheKey, Entry, Layer, Reader};

/// Where a [`Compiled`] came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Origin {
    /// NVRTC compiled it in this call.
    Nvrtc,
    /// The cache's in-memory layer had it.
    MemoryCache,
    /// The cache's disk layer had it (verified on read).
    DiskCache,
}

/// Why a compile did not go through a cache
/// ([`Compiled::cache_bypass`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CacheBypass {
    /// The program asked for no cache
    /// ([`Program::without_cache`](super::Program::without_cache)).
    NotAsked,
    /// The cache is disabled (`CUDAKIT_CACHE=0`, or
    /// [`Cache::disabled`](crate::compile::cache::Cache::disabled)).
    Disabled,
    /// The include paths hold more than `limit` files to fingerprint
    /// ([`MAX_INCLUDE_FILES`](crate::compile::cache::MAX_INCLUDE_FILES));
    /// the count ran out in `folder`. CUDA's own header folders do not
    /// count: they are keyed by their version
    /// ([`crate::compile::headers`]).
    TooManyIncludeFiles {
        /// The include folder where the count ran out.
        folder: PathBuf,
        /// The limit.
        limit: usize,
    },
}

impl fmt::Display for CacheBypass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CacheBypass::NotAsked => f.write_str("the program asked for no cache"),
            CacheBypass::Disabled => f.write_str("the compile cache is disabled"),
            CacheBypass::TooManyIncludeFiles { folder, limit } => write!(
                f,
                "the include paths hold more than {limit} files (counted up to {}); \
                 they are not fingerprinted and the program is not cached",
                folder.display()
            ),
        }
    }
}

/// The output of [`Program::compile`](super::Program::compile): PTX, CUBIN
/// and/or LTO-IR as asked for, NVRTC's log (warnings included, also on
/// success), and the map from each name expression to its lowered name.
/// Load it with
/// [`Context::load_module`](crate::Context::load_module).
#[derive(Clone)]
pub struct Compiled {
    pub(super) program: String,
    pub(super) arch: Arch,
    pub(super) options: Vec<String>,
    pub(super) ptx: Option<String>,
    pub(super) cubin: Option<Vec<u8>>,
    pub(super) lto_ir: Option<Vec<u8>>,
    pub(super) log: String,
    pub(super) lowered: BTreeMap<String, String>,
    pub(super) origin: Origin,
    pub(super) elapsed: Duration,
    pub(super) key: Option<CacheKey>,
    pub(super) bypass: Option<CacheBypass>,
}

impl fmt::Debug for Compiled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Compiled")
            .field("program", &self.program)
            .field("arch", &self.arch)
            .field("options", &self.options)
            .field("ptx_bytes", &self.ptx.as_ref().map(String::len))
            .field("cubin_bytes", &self.cubin.as_ref().map(Vec::len))
            .field("lto_ir_bytes", &self.lto_ir.as_ref().map(Vec::len))
            .field("log", &self.log)
            .field("lowered", &self.lowered)
            .field("origin", &self.origin)
            .field("elapsed", &self.elapsed)
            .field("cache_bypass", &self.bypass)
            .finish()
    }
}

impl Compiled {
    /// The program's name.
    pub fn program(&self) -> &str {
        &self.program
    }

    /// The target architecture.
    pub fn arch(&self) -> Arch {
        self.arch
    }

    /// The NVRTC options of the compile (of the CUBIN/PTX run when LTO-IR
    /// was produced by a second run; that run's options are
    /// [`Program::options_for`](super::Program::options_for) with
    /// [`Output::LtoIr`](super::Output::LtoIr)).
    pub fn options(&self) -> &[String] {
        &self.options
    }

    /// The PTX, without the trailing NUL, when asked for.
    pub fn ptx(&self) -> Option<&str> {
        self.ptx.as_deref()
    }

    /// The CUBIN (an ELF image), when asked for.
    pub fn cubin(&self) -> Option<&[u8]> {
        self.cubin.as_deref()
    }

    /// The LTO-IR, when asked for.
    pub fn lto_ir(&self) -> Option<&[u8]> {
        self.lto_ir.as_deref()
    }

    /// NVRTC's log: warnings and remarks, possibly empty.
    pub fn log(&self) -> &str {
        &self.log
    }

    /// Name expression → lowered (mangled) name, for every name expression.
    pub fn lowered_names(&self) -> &BTreeMap<String, String> {
        &self.lowered
    }

    /// The lowered name of one name expression. The lookup tolerates
    /// whitespace differences (`ns::gemm<128,64>` finds
    /// `ns::gemm<128, 64>`) and a leading `&`.
    pub fn lowered_name(&self, expression: &str) -> Option<&str> {
        resolve_name(&self.lowered, expression)
    }

    /// Where this result came from: NVRTC or a cache layer.
    pub fn origin(&self) -> Origin {
        self.origin
    }

    /// Time spent producing this result in the call that returned it: the
    /// compile, or the cache lookup on a hit.
    pub fn elapsed(&self) -> Duration {
        self.elapsed
    }

    /// The cache key, when the compile went through a cache.
    pub fn cache_key(&self) -> Option<CacheKey> {
        self.key
    }

    /// Why the compile did not go through a cache; `None` when it did (a
    /// hit, or a miss that stored the result).
    pub fn cache_bypass(&self) -> Option<&CacheBypass> {
        self.bypass.as_ref()
    }

    /// Bytes of PTX, CUBIN and LTO-IR together.
    pub fn binary_bytes(&self) -> usize {
        self.ptx.as_ref().map_or(0, String::len)
            + self.cubin.as_ref().map_or(0, Vec::len)
            + self.lto_ir.as_ref().map_or(0, Vec::len)
    }
}

/// Looks a name up in a name-expression map: exactly, then with whitespace
/// normalized and a leading `&` ignored on both sides.
pub(crate) fn resolve_name<'a>(map: &'a BTreeMap<String, String>, name: &str) -> Option<&'a str> {
    if let Some(lowered) = map.get(name) {
        return Some(lowered);
    }
    let wanted = canonical_expression(name);
    map.iter()
        .find(|(expr, _)| canonical_expression(expr) == wanted)
        .map(|(_, lowered)| lowered.as_str())
}

/// A name expression with whitespace removed except a single space between
/// two identifier characters (`unsigned int`), and without a leading `&`.
pub(crate) fn canonical_expression(expression: &str) -> String {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let trimmed = expression.trim().trim_start_matches('&');
    let mut out = String::with_capacity(trimmed.len());
    let mut pending_space = false;
    for c in trimmed.chars() {
        if c.is_whitespace() {
            pending_space = true;
            continue;
        }
        if pending_space && out.chars().next_back().is_some_and(is_ident) && is_ident(c) {
            out.push(' ');
        }
        pending_space = false;
        out.push(c);
    }
    out
}

/// The tags of a result's sections in a cache entry.
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

impl Compiled {
    /// The result as the sections of a cache entry: program name,
    /// architecture, options (a list), log, the lowered-name map (a list of
    /// alternating expression and lowered name), cudakit's and NVRTC's
    /// versions, and the outputs it has. A list is a u32 count, then each
    /// item as a u32 length and its bytes (little-endian).
    pub(super) fn to_sections(&self) -> Vec<(u32, Cow<'_, [u8]>)> {
        let nvrtc = nvrtc_version()
            .map(|(major, minor)| format!("{major}.{minor}"))
            .unwrap_or_default();
        let options: Vec<&str> = self.options.iter().map(String::as_str).collect();
        let lowered: Vec<&str> = self
            .lowered
            .iter()
            .flat_map(|(k, v)| [k.as_str(), v.as_str()])
            .collect();
        let mut sections = vec![
            (tag::PROGRAM, Cow::Borrowed(self.program.as_bytes())),
            (tag::ARCH, Cow::Owned(self.arch.to_string().into_bytes())),
            (tag::OPTIONS, Cow::Owned(encode_list(&options))),
            (tag::LOG, Cow::Borrowed(self.log.as_bytes())),
            (tag::LOWERED, Cow::Owned(encode_list(&lowered))),
            (
                tag::CUDAKIT_VERSION,
                Cow::Borrowed(env!("CARGO_PKG_VERSION").as_bytes()),
            ),
            (tag::NVRTC_VERSION, Cow::Owned(nvrtc.into_bytes())),
        ];
        let outputs = [
            (tag::PTX, self.ptx.as_ref().map(String::as_bytes)),
            (tag::CUBIN, self.cubin.as_deref()),
            (tag::LTO_IR, self.lto_ir.as_deref()),
        ];
        for (t, bytes) in outputs {
            if let Some(bytes) = bytes {
                sections.push((t, Cow::Borrowed(bytes)));
            }
        }
        sections
    }

    /// A result from the sections [`Compiled::to_sections`] wrote; `None`
    /// when they are not that: an unknown or missing section, a text that
    /// is not UTF-8, a malformed list, no output at all. The origin is
    /// [`Origin::MemoryCache`] until the caller says otherwise.
    pub(super) fn from_entry(entry: &Entry, key: CacheKey) -> Option<Compiled> {
        if entry
            .tags()
            .any(|t| !(tag::PROGRAM..=tag::NVRTC_VERSION).contains(&t))
        {
            return None;
        }
        let required = |t: u32| entry.section(t);
        let arch: Arch = text(required(tag::ARCH)?)?.parse().ok()?;
        let options = decode_list(required(tag::OPTIONS)?)?;
        let pairs = decode_list(required(tag::LOWERED)?)?;
        if pairs.len() % 2 != 0 {
            return None;
        }
        let mut lowered = BTreeMap::new();
        let mut it = pairs.into_iter();
        while let (Some(k), Some(v)) = (it.next(), it.next()) {
            lowered.insert(k, v);
        }
        let ptx = match entry.section(tag::PTX) {
            Some(bytes) => Some(text(bytes)?),
            None => None,
        };
        let cubin = entry.section(tag::CUBIN).map(<[u8]>::to_vec);
        let lto_ir = entry.section(tag::LTO_IR).map(<[u8]>::to_vec);
        if ptx.is_none() && cubin.is_none() && lto_ir.is_none() {
            return None;
        }
        Some(Compiled {
            program: text(required(tag::PROGRAM)?)?,
            arch,
            options,
            ptx,
            cubin,
            lto_ir,
            log: text(required(tag::LOG)?)?,
            lowered,
            origin: Origin::MemoryCache,
            elapsed: Duration::ZERO,
            key: Some(key),
            bypass: None,
        })
    }

    /// The result `cache` holds for `key`, with the layer that had it as
    /// its origin. An entry that does not decode counts as rejected and is
    /// a miss.
    pub(super) fn lookup(cache: &Cache, key: CacheKey) -> Option<Compiled> {
        let (mut hit, layer) = cache.lookup_with(key, |entry| Compiled::from_entry(entry, key))?;
        hit.origin = match layer {
            Layer::Memory => Origin::MemoryCache,
            Layer::Disk => Origin::DiskCache,
        };
        Some(hit)
    }

    /// Stores the result in `cache` as the entry of `key`.
    pub(super) fn store(&self, cache: &Cache, key: CacheKey) {
        cache.store(key, &self.to_sections());
    }
}

/// UTF-8 bytes as a string.
fn text(bytes: &[u8]) -> Option<String> {
    std::str::from_utf8(bytes).ok().map(str::to_owned)
}

/// A list: a u32 count, then each item's u32 length and bytes.
fn encode_list(items: &[&str]) -> Vec<u8> {
    let bytes: usize = items.iter().map(|i| 4 + i.len()).sum();
    let mut out = Vec::with_capacity(4 + bytes);
    out.extend_from_slice(&(items.len() as u32).to_le_bytes());
    for item in items {
        out.extend_from_slice(&(item.len() as u32).to_le_bytes());
        out.extend_from_slice(item.as_bytes());
    }
    out
}

/// A list [`encode_list`] wrote, every byte of it.
fn decode_list(bytes: &[u8]) -> Option<Vec<String>> {
    let mut reader = Reader::new(bytes);
    let n = reader.u32().ok()? as usize;
    // Each item needs at least its 4-byte length: bound the allocation.
    if n > reader.remaining() / 4 {
        return None;
    }
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let len = reader.u32().ok()? as usize;
        out.push(text(reader.take(len).ok()?)?);
    }
    reader.finish().ok()?;
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::cache::StableHasher;

    #[test]
    fn canonical_expressions_ignore_spacing_and_ampersands() {
        assert_eq!(
            canonical_expression(" ns::gemm< 128 ,64 > "),
            "ns::gemm<128,64>"
        );
        assert_eq!(canonical_expression("&kernel"), "kernel");
        assert_eq!(canonical_expression("f<unsigned  int>"), "f<unsigned int>");
        let mut map = BTreeMap::new();
        map.insert("ns::gemm<128, 64>".to_owned(), "_Z1".to_owned());
        map.insert("&kernel".to_owned(), "_Z2".to_owned());
        assert_eq!(resolve_name(&map, "ns::gemm<128,64>"), Some("_Z1"));
        assert_eq!(resolve_name(&map, "kernel"), Some("_Z2"));
        assert_eq!(resolve_name(&map, "&kernel"), Some("_Z2"));
        assert_eq!(resolve_name(&map, "other"), None);
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
            bypass: None,
        }
    }

    fn test_key() -> CacheKey {
        StableHasher::new().finish_key()
    }

    /// Decodes `sections` as they would come back from the cache.
    fn decode(sections: &[(u32, Cow<'_, [u8]>)]) -> Option<Compiled> {
        let k = test_key();
        let bytes = Entry::encode(k, sections).as_bytes().to_vec();
        Compiled::from_entry(&Entry::parse(k, bytes).unwrap(), k)
    }

    #[test]
    fn results_round_trip_through_sections() {
        let back = decode(&sample().to_sections()).unwrap();
        assert_eq!(back.program, "p.cu");
        assert_eq!(back.arch, Arch::SmA(90));
        assert_eq!(back.options, ["-arch=sm_90a"]);
        assert_eq!(back.ptx.as_deref(), Some(".version 9.0"));
        assert_eq!(back.cubin.as_deref(), Some(&b"\x7fELF...."[..]));
        assert_eq!(back.lto_ir, None);
        assert_eq!(back.log, "warning");
        assert_eq!(back.lowered["scale<float>"], "_Z5scaleIfEvPT_");
        assert_eq!(back.key, Some(test_key()));
    }

    #[test]
    fn sections_that_are_not_a_result_do_not_decode() {
        let sample = sample();
        let good = sample.to_sections();
        let without = |t: u32| -> Vec<_> { good.iter().filter(|s| s.0 != t).cloned().collect() };
        let replaced = |t: u32, bytes: &'static [u8]| -> Vec<_> {
            let mut s = without(t);
            s.push((t, Cow::Borrowed(bytes)));
            s
        };
        let mut unknown = good.clone();
        unknown.push((11, Cow::Borrowed(&b"?"[..])));
        assert!(decode(&unknown).is_none(), "unknown section");
        for t in [
            tag::PROGRAM,
            tag::ARCH,
            tag::OPTIONS,
            tag::LOG,
            tag::LOWERED,
        ] {
            assert!(decode(&without(t)).is_none(), "without section {t}");
        }
        let no_output: Vec<_> = without(tag::PTX)
            .into_iter()
            .filter(|s| s.0 != tag::CUBIN)
            .collect();
        assert!(decode(&no_output).is_none(), "no output");
        assert!(decode(&replaced(tag::ARCH, b"gfx90a")).is_none());
        assert!(decode(&replaced(tag::PTX, b"\xff\xfe")).is_none());
        assert!(decode(&replaced(tag::PROGRAM, b"\xff")).is_none());
        // One item: an odd lowered-name list.
        assert!(decode(&replaced(tag::LOWERED, b"\x01\0\0\0\x01\0\0\0k")).is_none());
        // A count past the bytes, an item past the end, a byte left over.
        assert!(decode(&replaced(tag::OPTIONS, b"\xff\0\0\0")).is_none());
        assert!(decode(&replaced(tag::OPTIONS, b"\x01\0\0\0\x09\0\0\0ab")).is_none());
        assert!(decode(&replaced(tag::OPTIONS, b"\0\0\0\0!")).is_none());
        assert!(decode(&replaced(tag::OPTIONS, b"\0\0\0\0")).is_some());
    }

    #[test]
    fn a_cached_result_names_the_layer_that_had_it() {
        let cache = Cache::memory_only();
        let key = test_key();
        assert!(Compiled::lookup(&cache, key).is_none());
        sample().store(&cache, key);
        let hit = Compiled::lookup(&cache, key).unwrap();
        assert_eq!(hit.origin, Origin::MemoryCache);
        assert_eq!(hit.key, Some(key));
        assert_eq!(hit.cubin, sample().cubin);
    }
}
