//! Types of CUDA 13.0's `cuda.h`: handles, `CUresult`, the C enums as
//! integer newtypes, the `#define` constants, and the `#[repr(C)]` structs.
//!
//! No Rust `enum` ever receives a value from C: a driver newer than these
//! bindings may return a value such an enum lacks, which would be undefined
//! behaviour. Every C enum is a `#[repr(transparent)]` newtype over its
//! integer with one associated constant per enumerator, named exactly as in
//! the header.
//!
//! Every struct's size and alignment, and the offsets of the fields that are
//! easy to get wrong (after unions, around padding), are checked at compile
//! time against numbers measured by compiling a C program that includes the
//! real 13.0 header with gcc on x86-64 Linux. Every struct here is plain
//! data: its `Default` is all-zero bytes, what C code gets from
//! `memset(&s, 0, sizeof s)` (null pointers, `None` callbacks, zero enums).
//!
//! Versioned typedefs are kept as aliases (`CUDA_MEMCPY2D_v2` and
//! `CUDA_MEMCPY2D` are one type), so a signature can be written with
//! whichever name the header uses.
//!
//! The items live in one file per section of the header, the way ash splits
//! its `vk/` folder: `handles`, `result`, `device`, `context`, `green`, `stream`,
//! `memory`, `module`, `launch`, `graph`, `array`. Each file's items are
//! re-exported here (and from the crate root), so every path is
//! `cuda_sys::types::NAME` and `cuda_sys::NAME`, whichever file holds it.

use std::ffi::{c_char, c_int, c_longlong, c_uchar, c_uint, c_ulonglong, c_ushort, c_void};
use std::marker::{PhantomData, PhantomPinned};

/// Declares a C enum as a `#[repr(transparent)]` integer newtype with one
/// associated constant per enumerator and a table of (name, value) pairs.
///
/// Several enumerators may share a value (the header keeps deprecated
/// aliases); `name()` then returns the first one in header order.
macro_rules! c_enum {
    (
        $(#[$meta:meta])*
        pub struct $name:ident($repr:ty) {
            $( $(#[$cmeta:meta])* $cname:ident = $value:expr, )*
        }
    ) => {
        $(#[$meta])*
        #[repr(transparent)]
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        pub struct $name(pub $repr);

        #[allow(non_upper_case_globals)]
        impl $name {
            $(
                $(#[$cmeta])*
                pub const $cname: $name = $name($value);
            )*
            /// Every enumerator of the header as (name, value), in header order.
            pub const ALL: &'static [(&'static str, $name)] = &[$((stringify!($cname), $name($value))),*];

            /// The enumerator's name in the header, or `None` for a value
            /// these bindings do not know (a newer driver's, say).
            pub fn name(self) -> Option<&'static str> {
                Self::ALL.iter().find(|(_, v)| *v == self).map(|(n, _)| *n)
            }
        }

        impl ::std::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                match self.name() {
                    Some(name) => write!(f, "{}({})", name, self.0),
                    None => write!(f, "{}({})", stringify!($name), self.0),
                }
            }
        }
    };
}
pub(crate) use c_enum;

/// Declares opaque C structs and the handle types that point to them.
macro_rules! opaque_handles {
    ($( $(#[$meta:meta])* $handle:ident = *mut $tag:ident; )*) => {
        $(
            #[doc = concat!("The opaque C struct `", stringify!($tag), "` behind [`", stringify!($handle), "`]; never constructed in Rust.")]
            #[repr(C)]
            #[derive(Debug)]
            pub struct $tag {
                _private: [u8; 0],
                _marker: PhantomData<(*mut u8, PhantomPinned)>,
            }
            $(#[$meta])*
            pub type $handle = *mut $tag;
        )*
    };
}

/// Checks a struct's size and alignment, and optionally field offsets,
/// against the numbers measured from the C header, at compile time.
macro_rules! assert_layout {
    ($ty:ty, size = $size:expr, align = $align:expr $(, $field:ident = $off:expr)* $(,)?) => {
        const _: () = assert!(
            ::std::mem::size_of::<$ty>() == $size && ::std::mem::align_of::<$ty>() == $align
        );
        $( const _: () = assert!(::std::mem::offset_of!($ty, $field) == $off); )*
    };
}

/// Implements `Default` as all-zero bytes for plain-data C structs.
macro_rules! zeroed_default {
    ($($ty:ty),* $(,)?) => {
        $(
            impl Default for $ty {
                fn default() -> Self {
                    // SAFETY: the type is a `#[repr(C)]` struct or union whose
                    // fields are integers, floats, raw pointers, `Option`s of
                    // `extern "C" fn`, `c_enum!` newtypes, or arrays, structs
                    // and unions of those; all-zero bytes is a valid value of
                    // each (0, 0.0, null, `None`).
                    unsafe { ::std::mem::zeroed() }
                }
            }
        )*
    };
}

// The header makes `CUdeviceptr` 32 bits wide on 32-bit targets, and every
// layout number in these files was measured on a 64-bit one.
#[cfg(not(target_pointer_width = "64"))]
compile_error!("cuda-sys mirrors the 64-bit layout of cuda.h only");

mod array;
mod context;
mod device;
mod graph;
mod green;
mod handles;
mod launch;
mod memory;
mod module;
mod result;
mod stream;
mod tensor_map;

pub use array::*;
pub use context::*;
pub use device::*;
pub use graph::*;
pub use green::*;
pub use handles::*;
pub use launch::*;
pub use memory::*;
pub use module::*;
pub use result::*;
pub use stream::*;
pub use tensor_map::*;

/// `CUDA_VERSION`: the API version of the header these bindings mirror (13.0).
pub const CUDA_VERSION: c_int = 13000;
