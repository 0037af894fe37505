//! NVTX ranges and marks, for profilers (Nsight Systems and any other tool
//! that speaks NVTX).
//!
//! Nothing is linked: on first use cudakit looks for a tool, once per
//! process.
//!
//! 1. `NVTX_INJECTION64_PATH` names a tool's injection library (the NVTX v3
//!    convention, which `nsys` follows): cudakit loads it and runs the v3
//!    injection protocol itself ([`cuda_sys::nvtx::Injection`]), so the tool
//!    fills cudakit's function slots directly.
//! 2. Otherwise `CUDAKIT_LIBNVTOOLSEXT` may name an `libnvToolsExt.so.1`
//!    (NVTX v2), whose exports are bound; that library looks for a tool
//!    itself.
//! 3. Otherwise no tool is attached, and every call here costs one branch
//!    on an already-initialized flag.
//!
//! With `CUDAKIT_NVTX=1` in the environment (and a tool attached), cudakit's
//! own work emits ranges too, in the domain `cudakit`: compiles
//! (`nvrtc <program name>`), module loads, launches (named after the
//! kernel), synchronous copies (`copy HtoD` ...), and graph launches
//! (`graph launch`). Without it, the launch path pays one branch.
//!
//! Ranges nest per thread (NVTX's push/pop), so a [`Range`] is not `Send`:
//! it is popped on the thread that pushed it. Forgetting one (`mem::forget`)
//! leaves the range open in the tool's view and nothing else; no guarantee
//! rests on its destructor.
//!
//! ```no_run
//! use cudakit::nvtx::{self, Color, Domain};
//!
//! let _outer = nvtx::range("load weights");
//! nvtx::mark("checkpoint");
//! let mine = Domain::new("my-server");
//! {
//!     let _r = mine.range_colored("decode", Color::rgb(0x20, 0xa0, 0x40));
//! }
//! ```

use std::ffi::CString;
use std::marker::PhantomData;
use std::ptr;

use cuda_sys::nvtx::{event_attributes, nvtxDomainHandle_t, Injection, Nvtx, NvtxLoadError};
use once_cell::sync::Lazy;

/// A colour for a range or mark (0xAARRGGBB).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Color(pub u32);

impl Color {
    /// An opaque colour from its red, green and blue parts.
    pub const fn rgb(r: u8, g: u8, b: u8) -> Self {
        Color(0xff00_0000 | (r as u32) << 16 | (g as u32) << 8 | b as u32)
    }

    /// The 0xAARRGGBB value.
    pub const fn argb(self) -> u32 {
        self.0
    }
}

enum Backend {
    Off(String),
    On(Nvtx),
}

static BACKEND: Lazy<Backend> = Lazy::new(|| match find_tool() {
    Ok(table) => Backend::On(table),
    Err(why) => Backend::Off(why),
});

fn find_tool() -> std::result::Result<Nvtx, String> {
    if let Some(path) = std::env::var_os("NVTX_INJECTION64_PATH").filter(|p| !p.is_empty()) {
        // SAFETY: NVTX_INJECTION64_PATH is the tool's own declaration that
        // the library is an NVTX injection library; loading it is what every
        // NVTX client does with it.
        return unsafe { Injection::load(path.as_ref()) }.map_err(|e: NvtxLoadError| e.to_string());
    }
    if let Some(path) = std::env::var_os("CUDAKIT_LIBNVTOOLSEXT").filter(|p| !p.is_empty()) {
        // SAFETY: the variable is cudakit's documented way to name a
        // genuine libnvToolsExt.
        return unsafe { Nvtx::load_library(path.as_ref()) }.map_err(|e| e.to_string());
    }
    Err("no tool attached (NVTX_INJECTION64_PATH and CUDAKIT_LIBNVTOOLSEXT are unset)".into())
}

#[inline]
fn table() -> Option<&'static Nvtx> {
    match &*BACKEND {
        Backend::On(t) => Some(t),
        Backend::Off(_) => None,
    }
}

/// Whether a tool is attached (loads it on first call).
pub fn is_attached() -> bool {
    table().is_some()
}

/// Why no tool is attached, or `None` when one is.
pub fn status() -> Option<&'static str> {
    match &*BACKEND {
        Backend::On(_) => None,
        Backend::Off(why) => Some(why),
    }
}

/// A NUL-terminated copy of `name`, cut at an interior NUL.
fn c_name(name: &str) -> CString {
    let cut = name.split('\0').next().unwrap_or("");
    CString::new(cut).unwrap_or_default()
}

/// An open NVTX range of the calling thread: popped when dropped. Made by
/// [`range`], [`range_colored`] or [`Domain::range`].
#[must_use = "the range ends when this guard is dropped"]
#[derive(Debug)]
pub struct Range<'d> {
    /// `None`: nothing was pushed (no tool, or the tool does not take pushes).
    pushed: Option<(&'static Nvtx, nvtxDomainHandle_t)>,
    /// Not `Send`: NVTX nests ranges per thread; also borrows the domain.
    _thread: PhantomData<(*const (), &'d ())>,
}

impl Range<'_> {
    const fn off() -> Self {
        Range {
            pushed: None,
            _thread: PhantomData,
        }
    }

    /// Whether this range reached a tool.
    pub fn is_recorded(&self) -> bool {
        self.pushed.is_some()
    }
}

#[cold]
#[inline(never)]
fn push(
    t: &'static Nvtx,
    domain: nvtxDomainHandle_t,
    name: &str,
    color: Option<Color>,
) -> Range<'static> {
    let name = c_name(name);
    let attrs = event_attributes(&name, color.map(Color::argb));
    if domain.is_null() {
        if let Some(f) = t.nvtxRangePushEx {
            // SAFETY: `attrs` is a complete v3 event attribute struct whose
            // message points at `name`, alive across the call; the tool
            // copies what it keeps.
            unsafe { f(&attrs) };
            return Range {
                pushed: Some((t, ptr::null_mut())),
                _thread: PhantomData,
            };
        }
    } else if let Some(f) = t.nvtxDomainRangePushEx {
        // SAFETY: as above; `domain` came from the tool's nvtxDomainCreateA
        // and is not destroyed while a range of it is open (the range
        // borrows its `Domain`, or the domain is cudakit's static one).
        unsafe { f(domain, &attrs) };
        return Range {
            pushed: Some((t, domain)),
            _thread: PhantomData,
        };
    }
    Range::off()
}

impl Drop for Range<'_> {
    fn drop(&mut self) {
        let Some((t, domain)) = self.pushed else {
            return;
        };
        if domain.is_null() {
            if let Some(f) = t.nvtxRangePop {
                // SAFETY: pops the range this guard pushed on this thread
                // (the guard is not Send).
                unsafe { f() };
            }
        } else if let Some(f) = t.nvtxDomainRangePop {
            // SAFETY: as above, for the domain the range was pushed in,
            // which is still alive (borrowed by the guard).
            unsafe { f(domain) };
        }
    }
}

#[cold]
#[inline(never)]
fn mark_in(t: &'static Nvtx, domain: nvtxDomainHandle_t, name: &str, color: Option<Color>) {
    let name = c_name(name);
    let attrs = event_attributes(&name, color.map(Color::argb));
    if domain.is_null() {
        if let Some(f) = t.nvtxMarkEx {
            // SAFETY: `attrs` is complete and its message alive across the call.
            unsafe { f(&attrs) };
        }
    } else if let Some(f) = t.nvtxDomainMarkEx {
        // SAFETY: as above; `domain` is alive (borrowed by the caller).
        unsafe { f(domain, &attrs) };
    }
}

/// Pushes a range named `name` (`nvtxRangePushEx`); it ends when the guard
/// is dropped (`nvtxRangePop`). With no tool attached, one branch.
#[inline]
pub fn range(name: &str) -> Range<'static> {
    match table() {
        None => Range::off(),
        Some(t) => push(t, ptr::null_mut(), name, None),
    }
}

/// [`range`], coloured.
#[inline]
pub fn range_colored(name: &str, color: Color) -> Range<'static> {
    match table() {
        None => Range::off(),
        Some(t) => push(t, ptr::null_mut(), name, Some(color)),
    }
}

/// An instantaneous mark named `name` (`nvtxMarkEx`).
#[inline]
pub fn mark(name: &str) {
    if let Some(t) = table() {
        mark_in(t, ptr::null_mut(), name, None);
    }
}

/// [`mark`], coloured.
#[inline]
pub fn mark_colored(name: &str, color: Color) {
    if let Some(t) = table() {
        mark_in(t, ptr::null_mut(), name, Some(color));
    }
}

/// An NVTX domain (`nvtxDomainCreateA`): a named group of ranges and marks
/// that a tool shows apart from the others. Destroyed when dropped
/// (`nvtxDomainDestroy`); its ranges borrow it, so none outlives it.
#[derive(Debug)]
pub struct Domain {
    raw: nvtxDomainHandle_t,
    name: String,
}

// SAFETY: NVTX's entry points are thread-safe, and a domain handle may be
// used from any thread.
unsafe impl Send for Domain {}
// SAFETY: as for Send.
unsafe impl Sync for Domain {}

impl Domain {
    /// Creates the domain `name` (`nvtxDomainCreateA`). With no tool
    /// attached (or a tool without domains) its ranges and marks go nowhere.
    pub fn new(name: &str) -> Self {
        Domain {
            raw: create_domain(name),
            name: name.to_owned(),
        }
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Pushes a range of this domain (`nvtxDomainRangePushEx`), popped when
    /// the guard drops (`nvtxDomainRangePop`).
    #[inline]
    pub fn range(&self, name: &str) -> Range<'_> {
        match table() {
            Some(t) if !self.raw.is_null() => push(t, self.raw, name, None),
            _ => Range::off(),
        }
    }

    /// [`Domain::range`], coloured.
    #[inline]
    pub fn range_colored(&self, name: &str, color: Color) -> Range<'_> {
        match table() {
            Some(t) if !self.raw.is_null() => push(t, self.raw, name, Some(color)),
            _ => Range::off(),
        }
    }

    /// A mark of this domain (`nvtxDomainMarkEx`).
    pub fn mark(&self, name: &str) {
        if let Some(t) = table().filter(|_| !self.raw.is_null()) {
            mark_in(t, self.raw, name, None);
        }
    }
}

fn create_domain(name: &str) -> nvtxDomainHandle_t {
    match table().and_then(|t| t.nvtxDomainCreateA) {
        None => ptr::null_mut(),
        Some(f) => {
            let name = c_name(name);
            // SAFETY: `name` is NUL-terminated and alive across the call; the
            // tool copies it.
            unsafe { f(name.as_ptr()) }
        }
    }
}

impl Drop for Domain {
    fn drop(&mut self) {
        if self.raw.is_null() {
            return;
        }
        if let Some(f) = table().and_then(|t| t.nvtxDomainDestroy) {
            // SAFETY: the handle came from nvtxDomainCreateA; no range of it
            // is open (each borrows `self`).
            unsafe { f(self.raw) };
        }
    }
}

/// cudakit's own domain, for `CUDAKIT_NVTX=1`: created once, never destroyed.
struct Own(nvtxDomainHandle_t);
// SAFETY: see Domain.
unsafe impl Send for Own {}
// SAFETY: see Domain.
unsafe impl Sync for Own {}

static AUTO: Lazy<Option<(&'static Nvtx, Own)>> = Lazy::new(|| {
    let on = std::env::var("CUDAKIT_NVTX").is_ok_and(|v| v == "1");
    let t = table().filter(|_| on)?;
    Some((t, Own(create_domain("cudakit"))))
});

/// A range for cudakit's own work, when `CUDAKIT_NVTX=1` and a tool is
/// attached; otherwise one branch.
#[inline]
pub(crate) fn auto(name: &str) -> Range<'static> {
    match &*AUTO {
        None => Range::off(),
        Some((t, own)) => push(t, own.0, name, None),
    }
}

/// Whether [`auto`] emits ranges (`CUDAKIT_NVTX=1` and a tool attached).
#[inline]
pub(crate) fn auto_on() -> bool {
    AUTO.is_some()
}

/// [`auto`] with a name built only when a range is emitted.
#[inline]
pub(crate) fn auto_with(name: impl FnOnce() -> String) -> Range<'static> {
    match &*AUTO {
        None => Range::off(),
        Some((t, own)) => push(t, own.0, &name(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_and_names() {
        assert_eq!(Color::rgb(0x12, 0x34, 0x56).argb(), 0xff12_3456);
        assert_eq!(c_name("a\0b").as_c_str(), c"a");
        assert_eq!(c_name("kernel").as_c_str(), c"kernel");
    }
}
