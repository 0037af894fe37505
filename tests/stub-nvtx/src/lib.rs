//! A stand-in NVTX v3 tool: an injection library, as a profiler's would be.
//!
//! `InitializeInjectionNvtx2` asks the client for its callbacks export
//! table, takes the core and core2 modules' slot arrays, and writes its
//! recorders into the slots of the calls it models: `nvtxMarkEx`,
//! `nvtxRangePushEx`, `nvtxRangePop`, `nvtxDomainCreateA`,
//! `nvtxDomainDestroy`, `nvtxDomainMarkEx`, `nvtxDomainRangePushEx`,
//! `nvtxDomainRangePop`. Each call is recorded as one line, with the
//! calling thread's nesting depth in that domain:
//!
//! ```text
//! push <domain> <depth> <name> <argb or ->
//! pop <domain> <depth>
//! mark <domain> <name> <argb or ->
//! domain <name>
//! ```
//!
//! `<domain>` is `-` for the global one. A test reads the lines with
//! `stub_nvtx_take` (which also clears them) and `stub_nvtx_inits`.
//!
//! The layouts here are written from NVTX's headers independently of
//! cuda-sys, so a wrong layout there shows as wrong records here.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

static LOG: Mutex<Vec<String>> = Mutex::new(Vec::new());
static INITS: AtomicUsize = AtomicUsize::new(0);
static DOMAINS: Mutex<Vec<String>> = Mutex::new(Vec::new());

thread_local! {
    static DEPTH: RefCell<HashMap<usize, i64>> = RefCell::new(HashMap::new());
}

#[repr(C)]
struct Attributes {
    version: u16,
    size: u16,
    category: u32,
    color_type: i32,
    color: u32,
    payload_type: i32,
    reserved0: i32,
    payload: u64,
    message_type: i32,
    message: *const c_char,
}

#[repr(C)]
struct Callbacks {
    struct_size: usize,
    get_module_function_table: unsafe extern "C" fn(
        module: c_int,
        out_table: *mut *mut *mut *mut c_void,
        out_size: *mut c_uint,
    ) -> c_int,
}

fn log(line: String) {
    LOG.lock().unwrap_or_else(|e| e.into_inner()).push(line);
}

fn domain_name(domain: usize) -> String {
    if domain == 0 {
        return "-".into();
    }
    let d = DOMAINS.lock().unwrap_or_else(|e| e.into_inner());
    d.get(domain - 1)
        .cloned()
        .unwrap_or_else(|| format!("?{domain}"))
}

/// # Safety
/// `a` is null or a valid attribute struct whose ASCII message is NUL-terminated.
unsafe fn describe(a: *const Attributes) -> (String, String) {
    if a.is_null() {
        return ("<null attributes>".into(), "-".into());
    }
    // SAFETY: the caller passes a valid struct.
    let a = unsafe { &*a };
    if a.version != 3 || a.size != 48 {
        return (
            format!("<bad attributes v{} size {}>", a.version, a.size),
            "-".into(),
        );
    }
    let name = if a.message_type == 1 && !a.message.is_null() {
        // SAFETY: an ASCII message is NUL-terminated.
        unsafe { CStr::from_ptr(a.message) }
            .to_string_lossy()
            .into_owned()
    } else {
        format!("<message type {}>", a.message_type)
    };
    let color = if a.color_type == 1 {
        format!("{:08x}", a.color)
    } else {
        "-".into()
    };
    (name, color)
}

fn push(domain: usize, a: *const Attributes) -> c_int {
    // SAFETY: NVTX passes a valid struct.
    let (name, color) = unsafe { describe(a) };
    let depth = DEPTH.with(|d| {
        let mut d = d.borrow_mut();
        let e = d.entry(domain).or_insert(0);
        *e += 1;
        *e
    });
    log(format!(
        "push {} {depth} {name} {color}",
        domain_name(domain)
    ));
    depth as c_int - 1
}

fn pop(domain: usize) -> c_int {
    let depth = DEPTH.with(|d| {
        let mut d = d.borrow_mut();
        let e = d.entry(domain).or_insert(0);
        let was = *e;
        *e -= 1;
        was
    });
    log(format!("pop {} {depth}", domain_name(domain)));
    depth as c_int - 1
}

unsafe extern "C" fn range_push_ex(a: *const Attributes) -> c_int {
    push(0, a)
}
unsafe extern "C" fn range_pop() -> c_int {
    pop(0)
}
unsafe extern "C" fn mark_ex(a: *const Attributes) {
    // SAFETY: NVTX passes a valid struct.
    let (name, color) = unsafe { describe(a) };
    log(format!("mark - {name} {color}"));
}
unsafe extern "C" fn domain_create(name: *const c_char) -> *mut c_void {
    // SAFETY: NVTX passes a NUL-terminated name.
    let name = unsafe { CStr::from_ptr(name) }
        .to_string_lossy()
        .into_owned();
    log(format!("domain {name}"));
    let mut d = DOMAINS.lock().unwrap_or_else(|e| e.into_inner());
    d.push(name);
    d.len() as *mut c_void
}
unsafe extern "C" fn domain_destroy(domain: *mut c_void) {
    log(format!("destroy {}", domain_name(domain as usize)));
}
unsafe extern "C" fn domain_push_ex(domain: *mut c_void, a: *const Attributes) -> c_int {
    push(domain as usize, a)
}
unsafe extern "C" fn domain_pop(domain: *mut c_void) -> c_int {
    pop(domain as usize)
}
unsafe extern "C" fn domain_mark_ex(domain: *mut c_void, a: *const Attributes) {
    // SAFETY: NVTX passes a valid struct.
    let (name, color) = unsafe { describe(a) };
    log(format!(
        "mark {} {name} {color}",
        domain_name(domain as usize)
    ));
}

/// # Safety
/// `get` is the client's export-table getter.
unsafe fn fill(
    get: unsafe extern "C" fn(u32) -> *const c_void,
    module: c_int,
    entries: &[(usize, *mut c_void)],
) -> bool {
    // SAFETY: id 1 is the callbacks table.
    let cb = unsafe { get(1) } as *const Callbacks;
    if cb.is_null() {
        return false;
    }
    // SAFETY: the client's table is valid for the process.
    let cb = unsafe { &*cb };
    if cb.struct_size < std::mem::size_of::<Callbacks>() {
        return false;
    }
    let mut table: *mut *mut *mut c_void = std::ptr::null_mut();
    let mut size: c_uint = 0;
    // SAFETY: both out-pointers are valid.
    if unsafe { (cb.get_module_function_table)(module, &mut table, &mut size) } == 0
        || table.is_null()
    {
        return false;
    }
    for &(id, f) in entries {
        if id >= size as usize {
            return false;
        }
        // SAFETY: the table has `size` entries; entry `id` points at the
        // client's slot for that callback id.
        let slot = unsafe { *table.add(id) };
        if slot.is_null() {
            return false;
        }
        // SAFETY: the slot is writable (the protocol).
        unsafe { *slot = f };
    }
    true
}

/// The tool's entry point: 1 when attached.
///
/// # Safety
/// `get` is the client's export-table getter.
#[no_mangle]
pub unsafe extern "C" fn InitializeInjectionNvtx2(
    get: unsafe extern "C" fn(u32) -> *const c_void,
) -> c_int {
    INITS.fetch_add(1, Ordering::SeqCst);
    let core = [
        (1usize, mark_ex as *mut c_void),
        (8, range_push_ex as *mut c_void),
        (11, range_pop as *mut c_void),
    ];
    let core2 = [
        (1usize, domain_mark_ex as *mut c_void),
        (4, domain_push_ex as *mut c_void),
        (5, domain_pop as *mut c_void),
        (12, domain_create as *mut c_void),
        (14, domain_destroy as *mut c_void),
    ];
    // SAFETY: `get` is the client's getter.
    let ok = unsafe { fill(get, 1, &core) && fill(get, 5, &core2) };
    ok as c_int
}

/// Copies the log, one record a line, into `buf` (up to `len` bytes) and
/// clears it; returns the bytes the whole log needs (call again with a
/// bigger buffer if more than `len`; the log is then kept).
///
/// # Safety
/// `buf` is `len` writable bytes (or null with `len` 0).
#[no_mangle]
pub unsafe extern "C" fn stub_nvtx_take(buf: *mut u8, len: usize) -> usize {
    let mut l = LOG.lock().unwrap_or_else(|e| e.into_inner());
    let text: String = l.iter().map(|s| format!("{s}\n")).collect();
    if text.len() <= len {
        // SAFETY: `buf` has room for `len >= text.len()` bytes.
        unsafe { std::ptr::copy_nonoverlapping(text.as_ptr(), buf, text.len()) };
        l.clear();
    }
    text.len()
}

/// How many times `InitializeInjectionNvtx2` was called.
#[no_mangle]
pub extern "C" fn stub_nvtx_inits() -> usize {
    INITS.load(Ordering::SeqCst)
}
