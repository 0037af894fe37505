//! Types of CUDA 13.0's `cuda.h`: handles, `CUresult`, the C enums as
//! integer newtypes, and the `#[repr(C)]` structs.
//!
//! No Rust `enum` ever receives a value from C: a driver newer than these
//! bindings may return a value such an enum lacks, which would be undefined
//! behaviour. Every C enum is a `#[repr(transparent)]` newtype over its
//! integer with one associated constant per enumerator, named exactly as in
//! the header.

use std::ffi::{c_char, c_int, c_uint, c_void};

/// Declares a C enum as a `#[repr(transparent)]` integer newtype with one
/// associated constant per enumerator and a table of (name, value) pairs.
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

c_enum! {
    /// `CUresult`: the status every driver entry point returns.
    #[must_use]
    pub struct CUresult(c_int) {
        /// The API call returned with no errors.
        CUDA_SUCCESS = 0,
    }
}
