//! Compiling and loading device code: NVRTC programs ([`program`]), the
//! compile cache ([`cache`], a keyed byte store), modules and their
//! functions and globals ([`module`]), the linker ([`linker`]: the driver's,
//! or nvJitLink ([`nvjitlink`]) for LTO-IR), and the device runtime that
//! device-side launches link against ([`devrt`]), CUDA's own headers for
//! NVRTC ([`headers`]), and kernel signatures as
//! C types ([`signature`]: demangled names, declared signatures, PTX
//! parameter kinds) that launch arguments are checked against.
//!
//! Arrows run one way: `module` and `linker` use `program`; `program` uses
//! `headers` and `cache`; `headers` uses `cache`'s hash; `cache` uses none
//! of them.

use std::ffi::CString;

use crate::error::{Error, Result};

/// Builder setters, each taking the builder and returning it:
/// `name(argument: type) => field = value;`, each with its docs, after the
/// builder's type.
macro_rules! builder_setters {
    (
        $owner:ident;
        $($(#[$doc:meta])* $name:ident($arg:ident: $ty:ty) => $($field:ident).+ = $value:expr;)*
    ) => {$(
        $(#[$doc])*
        pub fn $name(mut self, $arg: $ty) -> $owner {
            self.$($field).+ = $value;
            self
        }
    )*};
}

pub mod cache;
pub mod devrt;
pub mod headers;
pub mod library;
pub mod linker;
pub mod module;
pub mod nvjitlink;
pub mod program;
pub mod signature;

/// `text` as a C string for NVRTC or the driver: [`Error::InteriorNul`]
/// naming `what` when it holds a NUL byte.
pub(crate) fn c_string(text: impl Into<Vec<u8>>, what: &'static str) -> Result<CString> {
    CString::new(text).map_err(|_| Error::InteriorNul { what })
}
