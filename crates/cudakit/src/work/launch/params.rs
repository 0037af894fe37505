//! Kernel parameters, marshaled explicitly. This file is the part of the
//! launch path an FFI auditor reads from start to finish.
//!
//! `cuLaunchKernel` takes `void** kernelParams`: an array with one entry per
//! kernel parameter, each entry a *pointer to the parameter's value*. The
//! classic bug is to put a device pointer's value where a pointer to it
//! belongs, and get `CUDA_ERROR_ILLEGAL_ADDRESS` (700). Here:
//!
//! 1. [`ParamList::arg`] copies each argument's value (for a buffer: its
//!    device address, a `u64`) into storage owned by the list, at an offset
//!    aligned for the value's type. Up to [`INLINE_ARGS`] arguments and
//!    [`INLINE_BYTES`] bytes live inline: no heap allocation, and never one
//!    allocation per argument. Beyond that, the storage moves to one heap
//!    block, recorded in the process's host arena.
//! 2. Right before the driver call, `ParamList::pointers` fills an array
//!    with `storage + offset` for each argument: pointers *into* the list's
//!    own storage, which lives (borrowed) until the call returns. The driver
//!    copies the values during `cuLaunchKernel`; nothing needs to outlive it.
//! 3. [`ParamList::describe`] prints the table an auditor holds against the
//!    kernel's signature: index, Rust type, size, alignment, offset,
//!    pointer handed to the driver, value bytes in hex.
//!
//! What is checked: the kinds of argument (only [`DeviceCopy`] values and
//! cudakit's buffers implement [`KernelArg`]: a host reference does not
//! compile), and, before each launch, the count and sizes against the
//! kernel's own parameter table (`cuFuncGetParamInfo`, see
//! [`super::ParamCheck`]) and each argument's C type ([`ArgType`], stated
//! by its `KernelArg` impl: `f32` is `float`, `&DeviceBuffer<f64>` is
//! `double*`) against the kernel's parameter types where they are known
//! ([`Function::signature`](crate::Function::signature)).
//! [`ParamList::push_untyped`] is the `unsafe` escape that skips the type.
//! What cannot be checked: what the kernel does with a pointer (how far it
//! indexes, whether it writes through a pointer it was given to read). That
//! is why launching is `unsafe`.

use std::fmt;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::panic::Location;

pub use crate::compile::signature::check::{ArgType, Container};
use crate::context::arena::{host_arena, AllocKind};
use crate::context::Context;
use crate::memory::buffer::element::{ElementType, Scalar};
use crate::memory::{DeviceBuffer, DeviceCopy, DevicePtr, DeviceView, UnifiedBuffer};

/// Arguments that fit without a heap allocation.
pub const INLINE_ARGS: usize = 16;
/// Bytes of argument values that fit without a heap allocation.
pub const INLINE_BYTES: usize = 256;
/// The strictest alignment an argument may have: 128 bytes, for
/// `CUtensorMap` (`alignas(128)` in CUDA 13.0's header, passed as a
/// `__grid_constant__` parameter); CUDA's `float4`, `double2` and
/// `__align__(16)` structs need 16.
pub const MAX_ALIGN: usize = 128;

/// The storage's unit: aligned for every argument.
#[repr(C, align(128))]
#[derive(Clone, Copy)]
struct Chunk([u8; CHUNK]);

const CHUNK: usize = MAX_ALIGN;

/// What an argument is, for the audit table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArgKind {
    /// A value copied as it is (a scalar, a struct, an array).
    Value,
    /// The device address of a buffer of `len` elements.
    DevicePointer {
        /// Elements in the buffer.
        len: usize,
        /// The ordinal of the device whose context owns the buffer.
        device: i32,
    },
    /// A tensor map (`CUtensorMap`, 128 bytes by value) over memory of the
    /// device `device`.
    TensorMap {
        /// The ordinal of the device whose context owns the memory.
        device: i32,
    },
    /// A conditional handle (`cudaGraphConditionalHandle`, a 64-bit
    /// value) of the graph family `graph` (a graph and the bodies of its
    /// conditional nodes), on the device `device`. Only a kernel node of
    /// that family may take it.
    Condition {
        /// The identity of the family's outermost graph.
        graph: u64,
        /// The ordinal of the device whose context made the handle.
        device: i32,
    },
    /// A texture or surface object's handle (`CUtexObject`,
    /// `CUsurfObject`), valid only in the context that made it (peer
    /// access does not extend it).
    Object {
        /// `"texture"` or `"surface"`.
        object: &'static str,
        /// The ordinal of the device whose context owns the object.
        device: i32,
    },
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    offset: usize,
    size: usize,
    align: usize,
    type_name: &'static str,
    kind: ArgKind,
    /// For a buffer: the identity of its context ([`Context::id`]), which
    /// the launch compares with the kernel's; 0 for a value.
    context: usize,
    /// For a device pointer: the bytes it covers, as (address, bytes), and
    /// the stream its stream-ordered memory was allocated on; for the
    /// scope's ordering of uses across streams.
    range: (u64, u64),
    origin: Option<crate::context::stream_state::StreamOrigin>,
    /// The C type the argument stands for, checked against the kernel's
    /// parameter types: a constant (an address, not 24 bytes copied in on
    /// every push and read from the constant's cache line).
    ty: &'static ArgType,
}

// The inline variant is large on purpose: it is what spares the common launch
// a heap allocation.
#[allow(clippy::large_enum_variant)]
enum Storage {
    /// Bytes `..used` and entries `..len` are initialised (the alignment
    /// gaps between values are zeroed as they open); the rest is not (an
    /// empty list costs no zeroing).
    Inline(
        [MaybeUninit<Chunk>; INLINE_BYTES / CHUNK],
        [MaybeUninit<Entry>; INLINE_ARGS],
    ),
    Heap {
        bytes: Vec<Chunk>,
        entries: Vec<Entry>,
        arena_id: u64,
    },
}

/// A kernel's arguments: values in aligned storage owned by the list, plus
/// what each one is. `'a` is how long the buffers it names stay borrowed.
/// Usually built with [`params!`](crate::params); a device buffer is passed
/// as `&buffer`, also when the kernel writes it.
///
/// ```
/// use cudakit::work::launch::ParamList;
/// let params = ParamList::new().arg(7i32).arg(2.5f64).arg([1u8, 2, 3]);
/// println!("{}", params.describe_table()); // the audit table
/// let table = params.describe();
/// assert_eq!(table[0].offset, 0);
/// assert_eq!(table[1].offset, 8); // f64 aligned to 8
/// assert_eq!(table[2].bytes_hex, "010203");
/// ```
pub struct ParamList<'a> {
    storage: Storage,
    len: usize,
    used: usize,
    error: Option<String>,
    /// The contexts of the arguments that belong to one (buffers, tensor
    /// maps, objects, conditions), kept as they are pushed, so that a
    /// launch whose arguments are all of its own context skips the
    /// per-argument context check.
    contexts: Contexts,
    /// Whether a conditional handle was pushed.
    conditions: bool,
    /// The arguments' [`type_code`]s, argument `i` in byte `i`, for the
    /// launch fast path's per-handle cache of the last list that fitted
    /// ([`FitCache`]); [`SIG_NONE`] when an argument has no code or there
    /// are more than eight.
    sig: u64,
    /// Whether an argument is stream-ordered memory (has a stream origin).
    has_origin: bool,
    /// The device ranges of the first [`RANGES`] pointer arguments, as
    /// (address, bytes): `..nranges` are written; `nranges` is
    /// [`RANGES_MANY`] past that many (then the entries say).
    ranges: [MaybeUninit<(u64, u64)>; RANGES],
    nranges: u8,
    /// While the storage is inline: entry `i`'s offset, for `..len`.
    offsets: [MaybeUninit<u16>; INLINE_ARGS],
    _borrows: PhantomData<&'a ()>,
}

/// [`ParamList`]'s summary of its arguments' contexts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Contexts {
    /// No argument belongs to a context.
    None,
    /// Every argument that belongs to a context belongs to this one.
    One(usize),
    /// Arguments of two or more contexts.
    Mixed,
}

impl Contexts {
    #[inline(always)]
    fn add(self, context: usize) -> Self {
        match self {
            Contexts::None => Contexts::One(context),
            Contexts::One(c) if c == context => self,
            _ => Contexts::Mixed,
        }
    }
}

impl Default for ParamList<'_> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'a> ParamList<'a> {
    /// An empty list; no allocation.
    pub fn new() -> Self {
        ParamList {
            storage: Storage::Inline(
                [MaybeUninit::uninit(); INLINE_BYTES / CHUNK],
                [MaybeUninit::uninit(); INLINE_ARGS],
            ),
            len: 0,
            used: 0,
            error: None,
            contexts: Contexts::None,
            conditions: false,
            sig: 0,
            has_origin: false,
            ranges: [MaybeUninit::uninit(); RANGES],
            nranges: 0,
            offsets: [MaybeUninit::uninit(); INLINE_ARGS],
            _borrows: PhantomData,
        }
    }

    /// Appends an argument: a [`DeviceCopy`] value, `&DeviceBuffer`,
    /// [`DeviceView`] or `&mut UnifiedBuffer`.
    #[allow(clippy::should_implement_trait)]
    #[track_caller]
    pub fn arg(mut self, arg: impl KernelArg<'a>) -> Self {
        arg.push_into(&mut self);
        self
    }

    /// Appends an argument in place.
    #[track_caller]
    pub fn push(&mut self, arg: impl KernelArg<'a>) {
        arg.push_into(self);
    }

    /// Appends `value` as untyped bytes: the escape for the rare kernel
    /// whose parameter types cudakit cannot know, or where the argument
    /// stands for another C type than its Rust type says (a raw device
    /// address, `DevicePtr::as_raw`, for a `float*`). Its size is still
    /// checked against the kernel's parameter; its type is not.
    ///
    /// # Safety
    ///
    /// The bytes must be a valid value of the kernel's parameter type, and
    /// everything [`Scope::launch`](crate::Scope::launch)'s `# Safety`
    /// requires of raw addresses and handles holds for them (memory alive,
    /// of the right context, unaliased by the host until the scope has
    /// synchronized): none of it is checked.
    #[track_caller]
    pub unsafe fn push_untyped<T: DeviceCopy>(&mut self, value: T) {
        // SAFETY: `value` is a live `T`; DeviceCopy forbids implicit
        // padding, so all `size_of::<T>()` bytes are initialised.
        let bytes = unsafe {
            std::slice::from_raw_parts((&value as *const T).cast::<u8>(), std::mem::size_of::<T>())
        };
        self.push_bytes(
            bytes,
            std::mem::align_of::<T>(),
            std::any::type_name::<T>(),
            ArgKind::Value,
            0,
            &ArgType::Untyped,
        );
    }

    /// [`ParamList::push_untyped`], taking and returning the list.
    ///
    /// # Safety
    ///
    /// As [`ParamList::push_untyped`].
    #[track_caller]
    pub unsafe fn arg_untyped<T: DeviceCopy>(mut self, value: T) -> Self {
        // SAFETY: the caller's contract, passed on.
        unsafe { self.push_untyped(value) };
        self
    }

    /// The C types the arguments stand for, in order, with their sizes.
    pub(crate) fn types(&self) -> impl Iterator<Item = (&ArgType, usize)> + '_ {
        self.entries().iter().map(|e| (e.ty, e.size))
    }

    /// Argument `index` as an error names it (`DeviceBuffer<f64>`).
    pub(crate) fn describe_arg(&self, index: usize) -> String {
        self.entries()
            .get(index)
            .map_or_else(String::new, |e| e.ty.describe(e.type_name))
    }

    /// Number of arguments.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the storage moved to the heap (more than [`INLINE_ARGS`]
    /// arguments or [`INLINE_BYTES`] bytes).
    pub fn is_spilled(&self) -> bool {
        matches!(self.storage, Storage::Heap { .. })
    }

    /// An argument that could not be stored (over-aligned type), reported
    /// by the launch as a typed error.
    pub(crate) fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Records an argument that cannot be passed (the first one counts),
    /// reported by the launch or node as [`crate::Error::InvalidArgument`].
    pub(crate) fn set_error(&mut self, message: String) {
        self.error.get_or_insert(message);
    }

    /// The arguments' type signature for [`FitCache`] ([`SIG_NONE`]: none).
    #[inline(always)]
    pub(crate) fn sig(&self) -> u64 {
        self.sig
    }

    /// The device ranges of the pointer arguments, as (address, bytes),
    /// where there are at most [`RANGES`]; `None` past that (see
    /// [`Self::all_device_uses`]).
    #[inline(always)]
    pub(crate) fn pointer_ranges(&self) -> Option<&[(u64, u64)]> {
        let n = usize::from(self.nranges);
        if n > RANGES {
            return None;
        }
        // SAFETY: `..nranges` were written (`set_last_range`), and
        // MaybeUninit<(u64, u64)> has the layout of (u64, u64).
        Some(unsafe { std::slice::from_raw_parts(self.ranges.as_ptr().cast(), n) })
    }

    /// Whether an argument is stream-ordered memory, allocated on a stream
    /// (its origin).
    #[inline(always)]
    pub(crate) fn has_origin(&self) -> bool {
        self.has_origin
    }

    /// Whether the launch fast path may take these arguments for a kernel
    /// of the context whose identity is `id`: every argument was stored,
    /// none is a conditional handle, and every one that belongs to a
    /// context belongs to that one (so [`Self::foreign_argument`] finds
    /// nothing and no peer memory is used).
    #[inline(always)]
    pub(crate) fn all_plain_of(&self, id: usize) -> bool {
        self.error.is_none()
            && !self.conditions
            && (matches!(self.contexts, Contexts::None) || self.contexts == Contexts::One(id))
    }

    /// The device ranges of the arguments, as (address, bytes, stream
    /// origin), through a callback that may refuse one (`false` stops the
    /// walk and is returned).
    #[inline(always)]
    pub(crate) fn all_device_uses(
        &self,
        mut f: impl FnMut(u64, u64, Option<crate::context::stream_state::StreamOrigin>) -> bool,
    ) -> bool {
        for e in self.entries() {
            if matches!(e.kind, ArgKind::DevicePointer { .. }) && !f(e.range.0, e.range.1, e.origin)
            {
                return false;
            }
        }
        true
    }

    /// The first pointer argument whose context is not `ctx` and whose
    /// device `ctx` has no peer access to, as (index, device ordinal of its
    /// context).
    #[inline]
    pub(crate) fn foreign_argument(&self, ctx: &Context) -> Option<(usize, i32)> {
        self.foreign_to(ctx.id(), |device, owner| ctx.peer_enabled(device, owner))
    }

    /// [`Self::foreign_argument`] for the context whose identity is `id`
    /// and which has peer access to the devices `peer` accepts. Peer access
    /// extends only device pointers: a tensor map, texture or surface
    /// object of another context is foreign whatever `peer` says.
    fn foreign_to(&self, id: usize, peer: impl Fn(i32, usize) -> bool) -> Option<(usize, i32)> {
        // Every arm below needs an argument of another context than `id`.
        if matches!(self.contexts, Contexts::None) || self.contexts == Contexts::One(id) {
            return None;
        }
        self.entries()
            .iter()
            .enumerate()
            .find_map(|(index, e)| match e.kind {
                // A virtual buffer's access is per mapping (`grant_access`),
                // which context peer access does not grant, an imported
                // buffer is mapped for its importing device alone, and a
                // pool's allocations do not follow context peer access
                // either (`cuMemPoolSetAccess`): never a kernel argument of
                // another context, nor any view of one.
                ArgKind::DevicePointer { device, .. }
                    if e.context != id
                        && matches!(
                            e.ty,
                            ArgType::Pointer {
                                container: Container::VirtualBuffer
                                    | Container::ImportedBuffer
                                    | Container::PoolBuffer,
                                ..
                            }
                        ) =>
                {
                    Some((index, device))
                }
                ArgKind::DevicePointer { device, .. }
                    if e.context != id && !peer(device, e.context) =>
                {
                    Some((index, device))
                }
                ArgKind::TensorMap { device } if e.context != id => Some((index, device)),
                ArgKind::Object { device, .. } if e.context != id => Some((index, device)),
                ArgKind::Condition { device, .. } if e.context != id => Some((index, device)),
                _ => None,
            })
    }

    /// The buffers of contexts other than `id`'s, as (device ordinal,
    /// owner context id): peer memory a kernel of context `id` would use.
    pub(crate) fn peer_uses(&self, id: usize) -> impl Iterator<Item = (i32, usize)> + '_ {
        self.entries().iter().filter_map(move |e| match e.kind {
            ArgKind::DevicePointer { device, .. } if e.context != id => Some((device, e.context)),
            _ => None,
        })
    }

    /// Refuses a conditional handle of another graph family than
    /// `family` (`None`: a plain launch, where none may be passed).
    pub(crate) fn check_conditions(
        &self,
        what: &'static str,
        family: Option<u64>,
    ) -> Result<(), crate::Error> {
        if !self.conditions {
            return Ok(());
        }
        for e in self.entries() {
            if let ArgKind::Condition { graph, .. } = e.kind {
                if family != Some(graph) {
                    return Err(crate::Error::ForeignCondition {
                        what,
                        reason: if family.is_none() {
                            "a kernel sets a condition only as a node of the handle's graph or \
                             of one of its conditional bodies"
                        } else {
                            "pass it to kernel nodes of the graph it was made for, or of that \
                             graph's conditional bodies"
                        },
                    });
                }
            }
        }
        Ok(())
    }

    /// Sets the device range and stream origin of the argument just pushed.
    fn set_last_range(
        &mut self,
        address: u64,
        bytes: u64,
        origin: Option<crate::context::stream_state::StreamOrigin>,
    ) {
        let Some(i) = self.len.checked_sub(1) else {
            return;
        };
        let e = match &mut self.storage {
            // SAFETY: entry `i < len` was written by push_bytes.
            Storage::Inline(_, entries) => unsafe { entries[i].assume_init_mut() },
            Storage::Heap { entries, .. } => &mut entries[i],
        };
        e.range = (address, bytes);
        self.has_origin |= origin.is_some();
        e.origin = origin;
        let n = usize::from(self.nranges);
        if n < RANGES {
            self.ranges[n] = MaybeUninit::new((address, bytes));
            self.nranges += 1;
        } else {
            self.nranges = RANGES_MANY;
        }
    }

    /// The device memory the arguments cover, as (address, bytes, stream
    /// origin): what the scope orders across streams.
    pub(crate) fn device_uses(
        &self,
    ) -> impl Iterator<Item = (u64, u64, Option<crate::context::stream_state::StreamOrigin>)> + '_
    {
        self.entries()
            .iter()
            .filter(|e| matches!(e.kind, ArgKind::DevicePointer { .. }))
            .map(|e| (e.range.0, e.range.1, e.origin))
    }

    /// The sizes of the arguments, in order.
    pub(crate) fn sizes(&self) -> impl Iterator<Item = usize> + '_ {
        self.entries().iter().map(|e| e.size)
    }

    fn entries(&self) -> &[Entry] {
        match &self.storage {
            // SAFETY: the first `len` entries were written by push_bytes;
            // MaybeUninit<Entry> has Entry's layout.
            Storage::Inline(_, entries) => unsafe {
                std::slice::from_raw_parts(entries.as_ptr().cast::<Entry>(), self.len)
            },
            Storage::Heap { entries, .. } => entries,
        }
    }

    fn base(&self) -> *const u8 {
        match &self.storage {
            Storage::Inline(bytes, _) => bytes.as_ptr().cast(),
            Storage::Heap { bytes, .. } => bytes.as_ptr().cast(),
        }
    }

    fn capacity(&self) -> usize {
        match &self.storage {
            Storage::Inline(..) => INLINE_BYTES,
            Storage::Heap { bytes, .. } => bytes.len() * CHUNK,
        }
    }

    /// Keeps the summary fields up to date with an argument of `kind` and
    /// `context` (whether or not it could be stored).
    #[inline(always)]
    fn note_kind(&mut self, kind: ArgKind, context: usize) {
        match kind {
            ArgKind::Value => {}
            ArgKind::Condition { .. } => {
                self.conditions = true;
                self.contexts = self.contexts.add(context);
            }
            _ => self.contexts = self.contexts.add(context),
        }
    }

    /// Copies `size` bytes at `value` in, aligned to `align`. The common
    /// case (inline storage with room, a valid alignment) is inlined into
    /// each argument's push, where the value's size is a constant: no call,
    /// no `memcpy` or `memset`; the rest goes to [`Self::push_bytes_slow`].
    #[track_caller]
    #[inline(always)]
    pub(crate) fn push_bytes(
        &mut self,
        value: &[u8],
        align: usize,
        type_name: &'static str,
        kind: ArgKind,
        context: usize,
        ty: &'static ArgType,
    ) {
        self.note_kind(kind, context);
        let code = type_code(ty, value.len());
        if code == 0 || self.len >= SIG_ARGS {
            self.sig = SIG_NONE;
        } else {
            // A list with no code stays at SIG_NONE (all bits set).
            self.sig |= u64::from(code) << (8 * self.len);
        }
        if align <= MAX_ALIGN && align.is_power_of_two() && self.len < INLINE_ARGS {
            let used = self.used;
            // No overflow: `used <= INLINE_BYTES` while inline and
            // `align <= MAX_ALIGN`.
            let offset = (used + align - 1) & !(align - 1);
            let end = offset + value.len();
            if let Storage::Inline(bytes, entries) = &mut self.storage {
                if end <= INLINE_BYTES {
                    let base = bytes.as_mut_ptr().cast::<u8>();
                    for i in used..offset {
                        // SAFETY: `used <= i < offset <= end <= INLINE_BYTES`:
                        // inside the inline array. Zeroing the alignment gap
                        // keeps `..used` initialised once `used` moves past it.
                        unsafe { base.add(i).write(0) };
                    }
                    // SAFETY: `offset + value.len() == end <= INLINE_BYTES`;
                    // `value` is `value.len()` readable bytes that do not
                    // overlap the list's own storage.
                    unsafe {
                        std::ptr::copy_nonoverlapping(value.as_ptr(), base.add(offset), value.len())
                    };
                    // No truncation: `offset <= INLINE_BYTES`.
                    self.offsets[self.len] = MaybeUninit::new(offset as u16);
                    entries[self.len] = MaybeUninit::new(Entry {
                        offset,
                        size: value.len(),
                        align,
                        type_name,
                        kind,
                        context,
                        range: (0, 0),
                        origin: None,
                        ty,
                    });
                    self.used = end;
                    self.len += 1;
                    return;
                }
            }
        }
        self.push_bytes_slow(value, align, type_name, kind, context, ty);
    }

    /// [`Self::push_bytes`] for everything else: an invalid alignment (a
    /// typed error at launch), heap storage, or a push that moves the
    /// storage to the heap (more than [`INLINE_ARGS`] arguments or
    /// [`INLINE_BYTES`] bytes).
    #[track_caller]
    #[cold]
    #[inline(never)]
    fn push_bytes_slow(
        &mut self,
        value: &[u8],
        align: usize,
        type_name: &'static str,
        kind: ArgKind,
        context: usize,
        ty: &'static ArgType,
    ) {
        if align > MAX_ALIGN || !align.is_power_of_two() {
            self.error.get_or_insert_with(|| {
                format!(
                    "argument {} ({type_name}) needs {align}-byte alignment; kernel parameters \
                     are aligned to at most {MAX_ALIGN}",
                    self.len
                )
            });
            return;
        }
        // The fast path took every push an inline list has room for, so here
        // the list is on the heap, or moves there now.
        let offset = self.used.next_multiple_of(align);
        let end = offset + value.len();
        if !self.is_spilled() || end > self.capacity() {
            self.grow(end);
        }
        let entry = Entry {
            offset,
            size: value.len(),
            align,
            type_name,
            kind,
            context,
            range: (0, 0),
            origin: None,
            ty,
        };
        let Storage::Heap { bytes, entries, .. } = &mut self.storage else {
            unreachable!("grow moved the list to the heap")
        };
        // The heap block was zero-filled when made, so the gap is initialised
        // already.
        // SAFETY: the heap block has at least `end` bytes (grown above when
        // it had fewer).
        let dst = unsafe { bytes.as_mut_ptr().cast::<u8>().add(offset) };
        // SAFETY: `value` is `value.len()` readable bytes; `dst` has that many
        // writable bytes (`offset + value.len() == end`); they do not overlap.
        unsafe { std::ptr::copy_nonoverlapping(value.as_ptr(), dst, value.len()) };
        entries.push(entry);
        self.used = end;
        self.len += 1;
    }

    /// Moves the storage to (or grows) one heap block of at least `needed`
    /// bytes, recorded in the host arena.
    #[track_caller]
    fn grow(&mut self, needed: usize) {
        let chunks = needed.max(2 * self.capacity()).div_ceil(CHUNK);
        let mut bytes = vec![Chunk([0; CHUNK]); chunks];
        let old_used = self.used;
        // SAFETY: the new block has `chunks * CHUNK >= needed > used` bytes;
        // the old storage's bytes `..used` are initialised (values, and
        // alignment gaps zeroed by push_bytes); distinct blocks.
        unsafe {
            std::ptr::copy_nonoverlapping(self.base(), bytes.as_mut_ptr().cast::<u8>(), old_used)
        };
        let entries: Vec<Entry> = self.entries().to_vec();
        let arena_id =
            host_arena().record_alloc(AllocKind::HostStorage, chunks * CHUNK, Location::caller());
        let old = std::mem::replace(
            &mut self.storage,
            Storage::Heap {
                bytes,
                entries,
                arena_id,
            },
        );
        if let Storage::Heap { arena_id, .. } = old {
            host_arena().record_free(arena_id);
        }
    }

    /// The array handed to the driver as `kernelParams`: entry `i` points at
    /// argument `i`'s value inside this list's storage. Valid while `self`
    /// is borrowed and unchanged, which the launch guarantees by holding
    /// `&self` across the driver call.
    #[inline(always)]
    pub(crate) fn pointers(&self, out: &mut PointerArray) {
        if let Storage::Inline(bytes, _) = &self.storage {
            // Every inline push wrote its offset (`push_bytes`); a list
            // that moved to the heap never comes back inline.
            let base = bytes.as_ptr().cast::<u8>();
            out.len = self.len;
            for i in 0..self.len.min(INLINE_ARGS) {
                // SAFETY: `offsets[i]` was written for entry `i < len`, and
                // lies inside the inline storage (push_bytes checked
                // `offset + size <= INLINE_BYTES`).
                let at = unsafe { base.add(usize::from(self.offsets[i].assume_init())) };
                out.inline[i].write(at.cast_mut().cast());
            }
            return;
        }
        let base = self.base();
        let entries = self.entries();
        out.len = entries.len();
        // Entry `i`'s value, inside the storage.
        let at = |e: &Entry| -> *mut std::ffi::c_void {
            // SAFETY: every entry's range lies inside the storage
            // (push_bytes checked `offset + size <= capacity`).
            unsafe { base.add(e.offset) }.cast_mut().cast()
        };
        if entries.len() <= INLINE_ARGS {
            for (slot, e) in out.inline.iter_mut().zip(entries) {
                slot.write(at(e));
            }
        } else {
            out.heap.clear();
            out.heap.extend(entries.iter().map(at));
        }
    }

    /// The audit table: one row per argument.
    pub fn describe(&self) -> Vec<ParamDescription> {
        let base = self.base();
        self.entries()
            .iter()
            .enumerate()
            .map(|(index, e)| {
                // SAFETY: the entry's range lies inside the storage and was
                // written by push_bytes.
                let bytes = unsafe { std::slice::from_raw_parts(base.add(e.offset), e.size) };
                ParamDescription {
                    index,
                    type_name: e.type_name,
                    size: e.size,
                    align: e.align,
                    offset: e.offset,
                    pointer: base as usize + e.offset,
                    bytes_hex: bytes.iter().map(|b| format!("{b:02x}")).collect(),
                    kind: e.kind,
                    arg_type: *e.ty,
                }
            })
            .collect()
    }

    /// The audit table as text, one line per argument.
    pub fn describe_table(&self) -> String {
        let mut out =
            String::from("idx  size align offset pointer             type / value bytes\n");
        for d in self.describe() {
            out.push_str(&d.to_string());
            out.push('\n');
        }
        out
    }
}

impl Drop for ParamList<'_> {
    #[inline]
    fn drop(&mut self) {
        if let Storage::Heap { arena_id, .. } = self.storage {
            spilled_free(arena_id);
        }
    }
}

/// The host arena's record of a spilled list's storage, freed.
#[cold]
#[inline(never)]
fn spilled_free(arena_id: u64) {
    host_arena().record_free(arena_id);
}

impl fmt::Debug for ParamList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.describe()).finish()
    }
}

/// One row of [`ParamList::describe`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamDescription {
    /// Parameter index, from 0.
    pub index: usize,
    /// The Rust type (`std::any::type_name`).
    pub type_name: &'static str,
    /// Size in bytes.
    pub size: usize,
    /// Alignment in bytes.
    pub align: usize,
    /// Offset in the list's storage.
    pub offset: usize,
    /// The pointer the driver receives for this parameter (storage + offset).
    pub pointer: usize,
    /// The value's bytes, in memory order, as hex.
    pub bytes_hex: String,
    /// A value or a buffer's device address.
    pub kind: ArgKind,
    /// The C type the argument stands for.
    pub arg_type: ArgType,
}

impl fmt::Display for ParamDescription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            ArgKind::Value => String::new(),
            ArgKind::DevicePointer { len, device } => {
                format!(" (device pointer, {len} elements, device {device})")
            }
            ArgKind::TensorMap { device } => format!(" (tensor map, device {device})"),
            ArgKind::Object { object, device } => format!(" ({object} object, device {device})"),
            ArgKind::Condition { device, .. } => format!(" (conditional handle, device {device})"),
        };
        write!(
            f,
            "{:>3} {:>5} {:>5} {:>6} {:#018x}  {}{} = {}",
            self.index,
            self.size,
            self.align,
            self.offset,
            self.pointer,
            self.type_name,
            kind,
            self.bytes_hex
        )
    }
}

/// The `void*` array handed to the driver; inline for up to
/// [`INLINE_ARGS`] entries. Filled whole by [`ParamList::pointers`]: the
/// first `len` inline slots (or the heap copy, past [`INLINE_ARGS`]) are
/// initialised, the rest never read.
pub(crate) struct PointerArray {
    inline: [MaybeUninit<*mut std::ffi::c_void>; INLINE_ARGS],
    heap: Vec<*mut std::ffi::c_void>,
    len: usize,
}

impl PointerArray {
    #[inline(always)]
    pub(crate) fn new() -> Self {
        PointerArray {
            inline: [MaybeUninit::uninit(); INLINE_ARGS],
            heap: Vec::new(),
            len: 0,
        }
    }

    /// The array as the driver wants it (NULL when empty).
    #[inline(always)]
    pub(crate) fn as_mut_ptr(&mut self) -> *mut *mut std::ffi::c_void {
        if self.len == 0 {
            std::ptr::null_mut()
        } else if self.len <= INLINE_ARGS {
            self.inline.as_mut_ptr().cast()
        } else {
            self.heap.as_mut_ptr()
        }
    }

    #[cfg(test)]
    pub(crate) fn as_slice(&self) -> &[*mut std::ffi::c_void] {
        if self.len <= INLINE_ARGS {
            // SAFETY: the first `len` inline slots were written by
            // `ParamList::pointers`; MaybeUninit<T> has T's layout.
            unsafe { std::slice::from_raw_parts(self.inline.as_ptr().cast(), self.len) }
        } else {
            &self.heap
        }
    }
}

/// What may be passed to a kernel: [`DeviceCopy`] values (copied), and
/// cudakit's buffers (their device address), borrowed for `'a`. A host
/// reference or pointer does not implement it, so it cannot be passed by
/// mistake.
///
/// A device buffer is passed as `&buffer` (or a view), also when the kernel
/// writes it: device memory is written through shared references, as
/// [`DeviceBuffer::copy_from_host`] does, and the scope keeps the borrow
/// until the kernel is done. Only a [`UnifiedBuffer`], which the host can
/// also read directly, is passed as `&mut`.
pub trait KernelArg<'a>: sealed::Sealed {
    /// Appends the argument to `list`.
    fn push_into(self, list: &mut ParamList<'a>);
}

pub(crate) mod sealed {
    pub trait Sealed {}
}

impl<T: DeviceCopy> sealed::Sealed for T {}
impl<T: DeviceCopy> KernelArg<'_> for T {
    #[track_caller]
    #[inline]
    fn push_into(self, list: &mut ParamList<'_>) {
        // SAFETY: `self` is a live `T`; all `size_of::<T>()` bytes are
        // initialised, because DeviceCopy's contract forbids implicit padding
        // (every byte belongs to a field of plain data).
        let bytes = unsafe {
            std::slice::from_raw_parts((&self as *const T).cast::<u8>(), std::mem::size_of::<T>())
        };
        list.push_bytes(
            bytes,
            std::mem::align_of::<T>(),
            std::any::type_name::<T>(),
            ArgKind::Value,
            0,
            const { &ArgType::Value(T::ELEMENT_TYPE) },
        );
    }
}

/// The (constant) C type of a writable `T*` argument held in `container`:
/// with `container` known where it is inlined, one address.
#[inline(always)]
fn pointer_type<T: DeviceCopy>(container: Container) -> &'static ArgType {
    macro_rules! of {
        ($c:ident) => {
            const {
                &ArgType::Pointer {
                    element: T::ELEMENT_TYPE,
                    container: Container::$c,
                    read_only: false,
                }
            }
        };
    }
    match container {
        Container::DeviceBuffer => of!(DeviceBuffer),
        Container::DeviceView => of!(DeviceView),
        Container::UnifiedBuffer => of!(UnifiedBuffer),
        Container::VirtualBuffer => of!(VirtualBuffer),
        Container::ImportedBuffer => of!(ImportedBuffer),
        Container::PoolBuffer => of!(PoolBuffer),
    }
}

/// Appends a buffer of `len` elements of `T` at `address` held in
/// `container`: its address, standing for `T*` (or `const T*`).
#[inline]
fn push_pointer<T: DeviceCopy>(
    list: &mut ParamList<'_>,
    address: DevicePtr,
    len: usize,
    origin: Option<crate::context::stream_state::StreamOrigin>,
    ctx: &Context,
    container: Container,
) {
    list.push_bytes(
        &address.as_raw().to_ne_bytes(),
        8,
        std::any::type_name::<*mut T>(),
        ArgKind::DevicePointer {
            len,
            device: ctx.device().ordinal(),
        },
        ctx.id(),
        pointer_type::<T>(container),
    );
    let bytes = len * std::mem::size_of::<T>();
    list.set_last_range(address.as_raw(), bytes as u64, origin);
}

impl<T: DeviceCopy> sealed::Sealed for &DeviceBuffer<'_, T> {}
impl<'a, T: DeviceCopy> KernelArg<'a> for &'a DeviceBuffer<'_, T> {
    #[inline]
    fn push_into(self, list: &mut ParamList<'a>) {
        push_pointer::<T>(
            list,
            self.device_ptr(),
            self.len(),
            crate::memory::DeviceSrc::origin(&self),
            self.context(),
            Container::DeviceBuffer,
        );
    }
}

impl<T: DeviceCopy> sealed::Sealed for DeviceView<'_, T> {}
impl<'a, T: DeviceCopy> KernelArg<'a> for DeviceView<'a, T> {
    #[inline]
    fn push_into(self, list: &mut ParamList<'a>) {
        push_pointer::<T>(
            list,
            self.device_ptr(),
            self.len(),
            crate::memory::DeviceSrc::origin(&self),
            self.context(),
            self.container(),
        );
    }
}

/// `&$buffer` as a kernel argument: a device pointer of its own context,
/// with no stream origin (the memory is not stream-ordered).
macro_rules! buffer_pointer_arg {
    ($buffer:ident) => {
        impl<T: DeviceCopy> sealed::Sealed for &crate::memory::$buffer<'_, T> {}
        impl<'a, T: DeviceCopy> KernelArg<'a> for &'a crate::memory::$buffer<'_, T> {
            #[inline]
            fn push_into(self, list: &mut ParamList<'a>) {
                push_pointer::<T>(
                    list,
                    self.device_ptr(),
                    self.len(),
                    None,
                    self.context(),
                    Container::$buffer,
                );
            }
        }
    };
}
buffer_pointer_arg!(VirtualBuffer);
buffer_pointer_arg!(ImportedBuffer);

impl<T: DeviceCopy> sealed::Sealed for &mut UnifiedBuffer<'_, T> {}
impl<'a, T: DeviceCopy> KernelArg<'a> for &'a mut UnifiedBuffer<'_, T> {
    #[inline]
    fn push_into(self, list: &mut ParamList<'a>) {
        push_pointer::<T>(
            list,
            self.device_ptr(),
            self.len(),
            None,
            self.context(),
            Container::UnifiedBuffer,
        );
    }
}

impl sealed::Sealed for &crate::memory::image::tensor_map::TensorMap<'_> {}
impl<'a> KernelArg<'a> for &'a crate::memory::image::tensor_map::TensorMap<'_> {
    #[inline]
    fn push_into(self, list: &mut ParamList<'a>) {
        let raw = self.descriptor().as_raw();
        // SAFETY: a CUtensorMap is 16 u64 words, all initialised, no padding
        // (size 128 = 16 * 8).
        let bytes = unsafe {
            std::slice::from_raw_parts(
                (raw as *const cuda_sys::CUtensorMap).cast::<u8>(),
                std::mem::size_of::<cuda_sys::CUtensorMap>(),
            )
        };
        let ctx = self.context();
        list.push_bytes(
            bytes,
            std::mem::align_of::<cuda_sys::CUtensorMap>(),
            "CUtensorMap",
            ArgKind::TensorMap {
                device: ctx.device().ordinal(),
            },
            ctx.id(),
            &ArgType::TensorMap,
        );
    }
}

/// Builds a [`ParamList`] from arguments: `params![&a, &b, &mut unified, n]`.
#[macro_export]
macro_rules! params {
    ($($arg:expr),* $(,)?) => {{
        #[allow(unused_mut)]
        let mut list = $crate::work::launch::ParamList::new();
        $(list.push($arg);)*
        list
    }};
}

/// How many pointer arguments' ranges a [`ParamList`] keeps beside its
/// entries, for the launch fast path.
const RANGES: usize = 4;

/// [`ParamList`]'s `nranges` past [`RANGES`].
const RANGES_MANY: u8 = u8::MAX;

/// How many arguments a [`ParamList`]'s signature covers.
const SIG_ARGS: usize = 8;

/// The signature of a list that has none: every byte 0xff, which no list
/// has (no [`type_code`] is 0xff).
pub(crate) const SIG_NONE: u64 = u64::MAX;

/// A number for the C-type-relevant part of an argument: its [`ArgType`]
/// (without the container, which no parameter rule reads) at the size
/// that type always has; 0 for everything else (structs, unknown element
/// types, odd sizes), which the fast path then leaves to the full check.
/// Distinct (type, size) pairs get distinct codes, and a parameter rule's
/// verdict (`ParamRule::accepts`) and the size check depend on nothing
/// else: two lists of equal signatures fit the same kernels.
#[inline(always)]
pub(crate) const fn type_code(ty: &ArgType, size: usize) -> u8 {
    const fn scalar(s: Scalar) -> (u8, usize) {
        match s {
            Scalar::I8 => (0, 1),
            Scalar::U8 => (1, 1),
            Scalar::I16 => (2, 2),
            Scalar::U16 => (3, 2),
            Scalar::I32 => (4, 4),
            Scalar::U32 => (5, 4),
            Scalar::I64 => (6, 8),
            Scalar::U64 => (7, 8),
            Scalar::I128 => (8, 16),
            Scalar::U128 => (9, 16),
            Scalar::F32 => (10, 4),
            Scalar::F64 => (11, 8),
            Scalar::F16 => (12, 2),
            Scalar::Bf16 => (13, 2),
            Scalar::F8E4M3 => (14, 1),
            Scalar::F8E5M2 => (15, 1),
        }
    }
    match *ty {
        // 1..=16
        ArgType::Value(ElementType::Scalar(s)) => {
            let (i, bytes) = scalar(s);
            if size == bytes {
                1 + i
            } else {
                0
            }
        }
        // 17..=48
        ArgType::Pointer {
            element: ElementType::Scalar(s),
            read_only,
            ..
        } if size == 8 => 17 + 2 * scalar(s).0 + read_only as u8,
        // 49, 50
        ArgType::Pointer {
            element: ElementType::Unknown,
            read_only,
            ..
        } if size == 8 => 49 + read_only as u8,
        ArgType::Texture if size == 8 => 51,
        ArgType::Surface if size == 8 => 52,
        ArgType::TensorMap if size == 128 => 53,
        // 54..=58
        ArgType::Untyped => match size {
            1 => 54,
            2 => 55,
            4 => 56,
            8 => 57,
            16 => 58,
            _ => 0,
        },
        // 59..=122
        ArgType::Value(ElementType::Array { element, len }) if len >= 1 && len <= 4 => {
            let (i, bytes) = scalar(element);
            if size == bytes * len {
                59 + 4 * i + (len as u8 - 1)
            } else {
                0
            }
        }
        _ => 0,
    }
}

/// A [`Function`](crate::Function) handle's record of the last argument
/// signature ([`ParamList`]'s `sig`) that passed its full parameter check:
/// a list of the same signature passes it too (the kernel's parameter
/// table never changes once read, and the handle's types change only in
/// `declare_signature`, which resets the record). Per handle, not shared
/// by the handles of one function: two handles may declare different
/// types.
#[derive(Debug)]
pub(crate) struct FitCache(std::sync::atomic::AtomicU64);

impl Default for FitCache {
    fn default() -> Self {
        FitCache(std::sync::atomic::AtomicU64::new(SIG_NONE))
    }
}

impl FitCache {
    /// Whether `sig` (not [`SIG_NONE`]) is the signature recorded.
    #[inline(always)]
    pub(crate) fn holds(&self, sig: u64) -> bool {
        sig != SIG_NONE && self.0.load(std::sync::atomic::Ordering::Relaxed) == sig
    }

    /// Records `sig`, which passed the full check.
    #[inline(always)]
    pub(crate) fn store(&self, sig: u64) {
        if sig != SIG_NONE {
            self.0.store(sig, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every argument type the launch path can meet, as (key, type, size):
    /// the same key for types `type_code` must not tell apart (a pointer's
    /// container), a key of its own for everything else; vector arrays
    /// included (they have no code).
    fn encodable_types() -> Vec<(String, ArgType, usize)> {
        const SCALARS: [(Scalar, usize); 16] = [
            (Scalar::I8, 1),
            (Scalar::U8, 1),
            (Scalar::I16, 2),
            (Scalar::U16, 2),
            (Scalar::I32, 4),
            (Scalar::U32, 4),
            (Scalar::I64, 8),
            (Scalar::U64, 8),
            (Scalar::I128, 16),
            (Scalar::U128, 16),
            (Scalar::F32, 4),
            (Scalar::F64, 8),
            (Scalar::F16, 2),
            (Scalar::Bf16, 2),
            (Scalar::F8E4M3, 1),
            (Scalar::F8E5M2, 1),
        ];
        const CONTAINERS: [Container; 6] = [
            Container::DeviceBuffer,
            Container::DeviceView,
            Container::UnifiedBuffer,
            Container::VirtualBuffer,
            Container::ImportedBuffer,
            Container::PoolBuffer,
        ];
        let mut out = Vec::new();
        for (s, bytes) in SCALARS {
            out.push((
                format!("{s:?}"),
                ArgType::Value(ElementType::Scalar(s)),
                bytes,
            ));
            for len in 1..=4 {
                let ty = ArgType::Value(ElementType::Array { element: s, len });
                out.push((format!("[{s:?}; {len}]"), ty, bytes * len));
            }
            for read_only in [false, true] {
                for container in CONTAINERS {
                    let ty = ArgType::Pointer {
                        element: ElementType::Scalar(s),
                        container,
                        read_only,
                    };
                    out.push((format!("*{s:?} ro={read_only}"), ty, 8));
                }
            }
        }
        for read_only in [false, true] {
            for container in CONTAINERS {
                let ty = ArgType::Pointer {
                    element: ElementType::Unknown,
                    container,
                    read_only,
                };
                out.push((format!("*? ro={read_only}"), ty, 8));
            }
        }
        out.push(("texture".into(), ArgType::Texture, 8));
        out.push(("surface".into(), ArgType::Surface, 8));
        out.push(("tensor map".into(), ArgType::TensorMap, 128));
        for size in [1, 2, 4, 8, 16] {
            out.push((format!("untyped {size}"), ArgType::Untyped, size));
        }
        out
    }

    /// What the fast path's `FitCache` rests on: two argument types of one
    /// (nonzero) code get the same verdict from every parameter rule, for
    /// rules from C types (declared) and from PTX declarations alike.
    #[test]
    fn types_of_one_code_fit_the_same_parameters() {
        use crate::compile::signature::check::ParamRule;
        let declared = "char, signed char, unsigned char, short, unsigned short, int, \
            unsigned, long, unsigned long, long long, unsigned long long, __int128, \
            unsigned __int128, float, double, bool, __half, __nv_bfloat16, float2, float4, \
            double2, int4, uchar4, float*, const float*, double*, const double*, int*, \
            const int*, unsigned*, long long*, unsigned long long*, void*, const void*, \
            __half*, const __nv_bfloat16*, float4*, const float2*, char*, const unsigned char*, \
            cudaTextureObject_t, cudaSurfaceObject_t, Params, Params*, const Params*";
        let mut rules: Vec<(String, ParamRule)> =
            crate::compile::signature::parse_declared(declared)
                .expect("the declared list parses")
                .iter()
                .map(|t| (t.to_string(), ParamRule::from_ctype(t)))
                .collect();
        let ptx = ".version 8.8\n.target sm_90\n.address_size 64\n\
            .visible .entry e(\n.param .u8 a, .param .s8 b, .param .u16 c, .param .s16 d, \
            .param .u32 e, .param .s32 f, .param .u64 g, .param .s64 h, .param .f16 i, \
            .param .b16 j, .param .f32 k, .param .f64 l, .param .b32 m, .param .b64 n, \
            .param .align 8 .b8 o[16], .param .align 4 .b8 p[8], .param .align 1 .b8 q[1], \
            .param .align 64 .b8 r[128], .param .align 2 .b8 s[2], .param .align 16 .b8 t[16]\n)\n{\nret;\n}\n";
        let entries = crate::compile::signature::ptx::read_entries(ptx).expect("the PTX reads");
        for p in &entries[0].params {
            rules.push((format!("{p} (PTX)"), ParamRule::from_ptx(p)));
        }
        assert!(rules.len() >= 60, "{} rules", rules.len());
        let mut by_code: std::collections::HashMap<u8, (String, Vec<bool>)> = Default::default();
        for (key, ty, size) in encodable_types() {
            let code = type_code(&ty, size);
            if code == 0 {
                continue;
            }
            let verdicts: Vec<bool> = rules.iter().map(|(_, r)| r.accepts(&ty, size)).collect();
            let (first, want) = by_code
                .entry(code)
                .or_insert_with(|| (format!("{key} {ty:?}"), verdicts.clone()));
            for (i, (w, v)) in want.iter().zip(&verdicts).enumerate() {
                assert_eq!(
                    w, v,
                    "code {code}: {first} and {key} {ty:?} disagree on '{}'",
                    rules[i].0
                );
            }
        }
        // The rules tell types apart: every scalar and pointer type (not
        // the arrays, which few rules here take) is accepted by some rule
        // and refused by another; untyped bytes fit every rule's type.
        for (code, (first, verdicts)) in &by_code {
            if first.starts_with('[') {
                continue;
            }
            assert!(
                verdicts.iter().any(|v| *v),
                "code {code} ({first}) fits nothing"
            );
            assert_eq!(
                verdicts.iter().all(|v| *v),
                first.starts_with("untyped"),
                "code {code} ({first})"
            );
        }
    }

    /// `type_code` is injective on what it encodes, ignores the container
    /// (no parameter rule reads it), never gives 0xff (part of
    /// `SIG_NONE`), and gives 0 to every size a type never has.
    #[test]
    fn type_codes_tell_every_encoded_type_apart() {
        let mut owner: std::collections::HashMap<u8, String> = Default::default();
        let mut encoded = std::collections::HashSet::new();
        for (key, ty, size) in encodable_types() {
            let code = type_code(&ty, size);
            assert_ne!(code, 0xff, "{key}");
            for wrong in [0, 3, 5, 12, 24, 64, 256] {
                if wrong != size {
                    assert_eq!(type_code(&ty, wrong), 0, "{key} at {wrong} bytes");
                }
            }
            if code == 0 {
                continue;
            }
            encoded.insert(key.clone());
            let was = owner.entry(code).or_insert_with(|| key.clone());
            assert_eq!(*was, key, "code {code} given to both");
        }
        // 16 scalars (the value, arrays of 1 to 4, two pointers each), 2
        // unknown pointers, texture, surface, tensor map, 5 untyped sizes.
        let encoded = encoded.len();
        assert_eq!(encoded, 16 * 7 + 2 + 3 + 5);
        assert_eq!(owner.len(), encoded, "every listed type has its own code");
        // Not encoded: an array of five, an unknown value.
        assert_eq!(
            type_code(
                &ArgType::Value(ElementType::Array {
                    element: Scalar::F32,
                    len: 5
                }),
                20
            ),
            0
        );
        assert_eq!(type_code(&ArgType::Value(ElementType::Unknown), 4), 0);
        // A list's signature: one code a byte, SIG_NONE past eight.
        let mut p = ParamList::new().arg(1i32).arg(2.0f32);
        assert_eq!(
            p.sig(),
            u64::from(type_code(
                &ArgType::Value(ElementType::Scalar(Scalar::I32)),
                4
            )) | u64::from(type_code(
                &ArgType::Value(ElementType::Scalar(Scalar::F32)),
                4
            )) << 8
        );
        for i in 0..7 {
            p.push(i as u8);
        }
        assert_eq!(p.sig(), SIG_NONE, "nine arguments");
        assert_eq!(ParamList::new().sig(), 0, "no argument");
    }

    // The C layout of `struct { char a; double b; short c; }`, its padding
    // declared as fields (DeviceCopy forbids implicit padding).
    crate::device_struct! {
        struct Padded {
            a: u8,
            _p0: [u8; 7],
            b: f64,
            c: u16,
            _p1: [u8; 6],
        }
    }

    #[repr(C, align(256))]
    #[derive(Clone, Copy)]
    struct OverAligned([u8; 256]);
    // SAFETY: plain bytes, no padding (size 256 = alignment).
    unsafe impl DeviceCopy for OverAligned {}

    /// A `CUtensorMap`-like parameter: 128 bytes, 64-byte aligned.
    #[repr(C, align(64))]
    #[derive(Clone, Copy)]
    struct TensorMapLike([u64; 16]);
    // SAFETY: plain numbers, no padding (size 128, a multiple of 64).
    unsafe impl DeviceCopy for TensorMapLike {}

    fn value_at(list: &ParamList<'_>, ptrs: &PointerArray, i: usize, size: usize) -> Vec<u8> {
        let p = ptrs.as_slice()[i] as *const u8;
        let d = &list.describe()[i];
        assert_eq!(
            p as usize, d.pointer,
            "pointer array entry {i} = describe()'s pointer"
        );
        // SAFETY: the pointer points into the list's storage, `size` bytes.
        unsafe { std::slice::from_raw_parts(p, size) }.to_vec()
    }

    #[test]
    fn values_are_copied_aligned_and_the_array_points_at_them() {
        let list = ParamList::new()
            .arg(0x11u8)
            .arg(-2i16)
            .arg(0x0102_0304u32)
            .arg(1.5f64)
            .arg(-7i64)
            .arg(3.25f32)
            .arg([9u16, 8, 7]);
        let d = list.describe();
        let offsets: Vec<usize> = d.iter().map(|r| r.offset).collect();
        assert_eq!(offsets, vec![0, 2, 4, 8, 16, 24, 28]);
        for r in &d {
            assert_eq!(r.offset % r.align, 0);
            assert_eq!(r.pointer % r.align, 0, "the storage itself is 16-aligned");
        }
        assert_eq!(d[0].bytes_hex, "11");
        assert_eq!(d[1].bytes_hex, hex(&(-2i16).to_ne_bytes()));
        assert_eq!(d[3].bytes_hex, hex(&1.5f64.to_ne_bytes()));
        assert_eq!(d[6].bytes_hex, hex(&[9, 0, 8, 0, 7, 0]));
        let mut ptrs = PointerArray::new();
        list.pointers(&mut ptrs);
        assert_eq!(ptrs.as_slice().len(), 7);
        assert_eq!(value_at(&list, &ptrs, 2, 4), 0x0102_0304u32.to_ne_bytes());
        assert_eq!(value_at(&list, &ptrs, 4, 8), (-7i64).to_ne_bytes());
        assert_eq!(value_at(&list, &ptrs, 5, 4), 3.25f32.to_ne_bytes());
        assert!(!list.is_spilled());
    }

    #[test]
    fn structs_keep_their_layout_and_padding_is_sized() {
        let v = Padded {
            a: 1,
            _p0: [0; 7],
            b: 2.0,
            c: 3,
            _p1: [0; 6],
        };
        let list = ParamList::new().arg(1u8).arg(v);
        let d = list.describe();
        assert_eq!(d[1].size, std::mem::size_of::<Padded>());
        assert_eq!(d[1].size, 24);
        assert_eq!(d[1].offset, 8);
        let mut ptrs = PointerArray::new();
        list.pointers(&mut ptrs);
        let bytes = value_at(&list, &ptrs, 1, 24);
        assert_eq!(bytes[0], 1);
        assert_eq!(&bytes[8..16], &2.0f64.to_ne_bytes());
        assert_eq!(&bytes[16..18], &3u16.to_ne_bytes());
    }

    #[test]
    fn sixteen_small_arguments_stay_inline_and_more_spill_once() {
        let host_before = host_arena().stats().kind(AllocKind::HostStorage);
        let mut list = ParamList::new();
        for i in 0..16u64 {
            list.push(i);
        }
        assert!(!list.is_spilled());
        assert_eq!(
            host_arena()
                .stats()
                .kind(AllocKind::HostStorage)
                .total_allocs,
            host_before.total_allocs
        );
        for i in 16..40u64 {
            list.push(i);
        }
        assert!(list.is_spilled());
        let mut ptrs = PointerArray::new();
        list.pointers(&mut ptrs);
        assert_eq!(ptrs.as_slice().len(), 40);
        for i in 0..40 {
            assert_eq!(value_at(&list, &ptrs, i, 8), (i as u64).to_ne_bytes());
        }
        let during = host_arena().stats().kind(AllocKind::HostStorage);
        assert!(during.live_count > host_before.live_count.saturating_sub(1));
        drop(list);
    }

    #[test]
    fn large_values_spill_to_one_block() {
        let list = ParamList::new().arg([7u8; 200]).arg([9u64; 16]);
        assert!(list.is_spilled());
        let d = list.describe();
        assert_eq!(d[1].offset, 200);
        assert_eq!(d[1].size, 128);
        let mut ptrs = PointerArray::new();
        list.pointers(&mut ptrs);
        assert_eq!(value_at(&list, &ptrs, 0, 200), vec![7u8; 200]);
    }

    #[test]
    fn over_aligned_types_are_an_error_not_a_misaligned_value() {
        let list = ParamList::new().arg(OverAligned([0; 256]));
        assert!(list.error().unwrap().contains("256-byte alignment"));
        assert_eq!(list.len(), 0);
    }

    #[test]
    fn sixty_four_byte_aligned_values_land_aligned_with_zeroed_gaps() {
        let map = TensorMapLike(std::array::from_fn(|i| 0x1111_1111_1111_1111 * i as u64));
        let list = ParamList::new().arg(3u8).arg(map).arg(5u16);
        let d = list.describe();
        assert_eq!(d[1].offset, 64);
        assert_eq!(d[1].align, 64);
        assert_eq!(d[2].offset, 192);
        let mut ptrs = PointerArray::new();
        list.pointers(&mut ptrs);
        assert_eq!(
            ptrs.as_slice()[1] as usize % 64,
            0,
            "the value is 64-byte aligned"
        );
        let bytes = value_at(&list, &ptrs, 1, 128);
        assert_eq!(&bytes[8..16], &0x1111_1111_1111_1111u64.to_ne_bytes());
        // The gap between the u8 and the map was zeroed when it opened, and
        // survives a move to the heap.
        let mut spilled = list;
        for i in 0..20u32 {
            spilled.push(i);
        }
        assert!(spilled.is_spilled());
        let mut ptrs = PointerArray::new();
        spilled.pointers(&mut ptrs);
        let base = ptrs.as_slice()[0] as *const u8;
        // SAFETY: bytes 0..64 of the storage: the u8 and its zeroed gap.
        let head = unsafe { std::slice::from_raw_parts(base, 64) };
        assert_eq!(head[0], 3);
        assert!(head[1..].iter().all(|&b| b == 0));
        assert_eq!(value_at(&spilled, &ptrs, 1, 128), bytes);
    }

    #[test]
    fn the_macro_builds_the_same_list() {
        let a = params![1u32, 2.0f32];
        let b = ParamList::new().arg(1u32).arg(2.0f32);
        assert_eq!(a.describe(), {
            let mut d = b.describe();
            for (x, y) in d.iter_mut().zip(a.describe()) {
                x.pointer = y.pointer;
            }
            d
        });
        assert!(params![].is_empty());
        assert!(a.describe_table().contains("u32"));
    }

    /// A list holding one argument of `kind`, recorded as belonging to the
    /// context whose identity is `context`, after a plain value.
    fn one_of(kind: ArgKind, context: usize) -> ParamList<'static> {
        let mut list = ParamList::new().arg(1u32);
        let bytes = [0u8; 128];
        let size = if matches!(kind, ArgKind::TensorMap { .. }) {
            128
        } else {
            8
        };
        list.push_bytes(
            &bytes[..size],
            size,
            "arg",
            kind,
            context,
            &ArgType::Untyped,
        );
        list
    }

    #[test]
    fn objects_and_tensor_maps_of_another_context_are_foreign_even_with_peer_access() {
        const MINE: usize = 0x1000;
        const OTHER: usize = 0x2000;
        let texture = ArgKind::Object {
            object: "texture",
            device: 1,
        };
        let surface = ArgKind::Object {
            object: "surface",
            device: 1,
        };
        let map = ArgKind::TensorMap { device: 1 };
        let pointer = ArgKind::DevicePointer { len: 4, device: 1 };
        for kind in [texture, surface, map, pointer] {
            // Of the kernel's own context: never foreign.
            assert_eq!(one_of(kind, MINE).foreign_to(MINE, |_, _| false), None);
            // Of another context, no peer access: foreign, at index 1,
            // naming the device of the argument's context.
            assert_eq!(
                one_of(kind, OTHER).foreign_to(MINE, |_, _| false),
                Some((1, 1)),
                "{kind:?}"
            );
        }
        // Peer access to device 1 admits its pointers, and nothing else.
        let peer = |device: i32, _: usize| device == 1;
        assert_eq!(one_of(pointer, OTHER).foreign_to(MINE, peer), None);
        for kind in [texture, surface, map] {
            assert_eq!(
                one_of(kind, OTHER).foreign_to(MINE, peer),
                Some((1, 1)),
                "{kind:?} with peer access"
            );
        }
        // Values carry no context.
        assert_eq!(
            ParamList::new().arg(7u64).foreign_to(MINE, |_, _| false),
            None
        );
    }

    #[test]
    fn the_context_summary_never_hides_a_foreign_argument() {
        const MINE: usize = 0x1000;
        const OTHER: usize = 0x2000;
        let pointer = ArgKind::DevicePointer { len: 4, device: 1 };
        let bytes = [0u8; 8];
        // Own-context arguments first, one of another context last, inline
        // and spilled to the heap (20 arguments).
        for count in [3usize, 20] {
            let mut list = ParamList::new();
            for _ in 0..count - 1 {
                list.push_bytes(&bytes, 8, "arg", pointer, MINE, &ArgType::Untyped);
            }
            assert_eq!(list.contexts, Contexts::One(MINE));
            assert_eq!(list.foreign_to(MINE, |_, _| false), None);
            list.push_bytes(&bytes, 8, "arg", pointer, OTHER, &ArgType::Untyped);
            assert_eq!(list.contexts, Contexts::Mixed);
            assert_eq!(
                list.foreign_to(MINE, |_, _| false),
                Some((count - 1, 1)),
                "{count} arguments"
            );
            // Seen from the other context, the first one is foreign.
            assert_eq!(list.foreign_to(OTHER, |_, _| false), Some((0, 1)));
        }
        // Only arguments of another context: foreign although the summary
        // names one context.
        let list = one_of(pointer, OTHER);
        assert_eq!(list.contexts, Contexts::One(OTHER));
        assert_eq!(list.foreign_to(MINE, |_, _| false), Some((1, 1)));
        // A condition is noted, and checked.
        let mut list = ParamList::new().arg(1u32);
        assert!(!list.conditions);
        list.check_conditions("launch", None).expect("no condition");
        let cond = ArgKind::Condition {
            graph: 7,
            device: 0,
        };
        list.push_bytes(&bytes, 8, "cond", cond, MINE, &ArgType::Untyped);
        assert!(list.conditions);
        assert!(list.check_conditions("launch", None).is_err());
        assert!(list.check_conditions("node", Some(7)).is_ok());
        assert!(list.check_conditions("node", Some(8)).is_err());
    }

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }
}
