//! The shape shared by every function table: a struct of function pointers,
//! one field per API entry point, filled from a loaded shared library.
//!
//! Each entry is written once, as
//!
//! ```text
//! cuMemAlloc = "cuMemAlloc_v2": fn(dptr: *mut CUdeviceptr, bytesize: usize) -> CUresult;
//! ```
//!
//! that is: the API name as the header spells it (the field), the exact
//! symbol the library exports (what the header's `#define` maps the API name
//! to), and the C signature. Entries under `required` must be exported by every
//! supported library version: a missing one fails the whole load with a
//! [`LoadError::MissingSymbol`](crate::LoadError::MissingSymbol) naming it.
//! Entries under `optional` become `Option`s that are `None` when the library
//! lacks the symbol.

use std::ffi::CString;

use libloading::Library;

/// Resolves `name` in `library` as a value of type `T`.
///
/// Returns the symbol, or the loader's message when it is not exported.
///
/// # Safety
///
/// `T` must be a function-pointer type whose signature is exactly the C
/// signature of the exported symbol `name`; a wrong type makes every later
/// call through the pointer undefined behaviour. The library must stay loaded
/// for as long as the returned value is used (cuda-sys never unloads).
pub(crate) unsafe fn resolve<T: Copy>(library: &Library, name: &str) -> Result<T, String> {
    let cname = CString::new(name).map_err(|_| format!("symbol name {name:?} contains NUL"))?;
    // SAFETY: the caller guarantees that `T` is the symbol's true C type and
    // that the library outlives every use of the copied pointer.
    let symbol = unsafe { library.get::<T>(cname.as_bytes_with_nul()) };
    match symbol {
        Ok(symbol) => Ok(*symbol),
        Err(err) => Err(err.to_string()),
    }
}

/// Declares a function table and its loader. See the module documentation.
macro_rules! function_table {
    (
        $(#[$meta:meta])*
        pub struct $name:ident;
        library = $library:literal;
        required {
            $(
                $(#[$rdoc:meta])*
                $rfield:ident = $rsym:literal : fn($($rarg:ident : $raty:ty),* $(,)?) -> $rret:ty;
            )*
        }
        optional {
            $(
                $(#[$odoc:meta])*
                $ofield:ident = $osym:literal : fn($($oarg:ident : $oaty:ty),* $(,)?) -> $oret:ty;
            )*
        }
    ) => {
        $(#[$meta])*
        #[allow(non_snake_case)]
        #[derive(Clone, Copy)]
        pub struct $name {
            $(
                $(#[$rdoc])*
                #[doc = concat!("\n\nExported symbol: `", $rsym, "` (required).")]
                pub $rfield: unsafe extern "C" fn($($rarg: $raty),*) -> $rret,
            )*
            $(
                $(#[$odoc])*
                #[doc = concat!("\n\nExported symbol: `", $osym, "` (optional: `None` when the library lacks it).")]
                pub $ofield: Option<unsafe extern "C" fn($($oarg: $oaty),*) -> $oret>,
            )*
        }

        impl $name {
            /// Every required symbol, as exported by the library, in table order.
            pub const REQUIRED_SYMBOLS: &'static [&'static str] = &[$($rsym),*];
            /// Every optional symbol, as exported by the library, in table order.
            pub const OPTIONAL_SYMBOLS: &'static [&'static str] = &[$($osym),*];

            /// Fills the table from an opened library.
            ///
            /// # Safety
            ///
            /// `library` must be the library this table describes (the
            /// declared signatures are trusted), and it must never be
            /// unloaded while the table or a pointer copied out of it is in
            /// use.
            pub(crate) unsafe fn from_library(
                library: &libloading::Library,
                path: &str,
            ) -> Result<Self, $crate::LoadError> {
                Ok(Self {
                    $(
                        // SAFETY: the field's type is the C signature of the
                        // symbol as written from the header; the caller keeps
                        // the library loaded.
                        $rfield: unsafe {
                            $crate::table::resolve::<unsafe extern "C" fn($($raty),*) -> $rret>(library, $rsym)
                        }
                        .map_err(|reason| $crate::LoadError::MissingSymbol {
                            library: $library,
                            path: path.to_owned(),
                            symbol: $rsym,
                            reason,
                        })?,
                    )*
                    $(
                        // SAFETY: as above.
                        $ofield: unsafe {
                            $crate::table::resolve::<unsafe extern "C" fn($($oaty),*) -> $oret>(library, $osym)
                        }
                        .ok(),
                    )*
                })
            }

            /// The optional symbols this library lacks.
            pub fn missing_optional(&self) -> Vec<&'static str> {
                #[allow(unused_mut)]
                let mut missing = Vec::new();
                $(
                    if self.$ofield.is_none() {
                        missing.push($osym);
                    }
                )*
                missing
            }
        }

        impl ::std::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("required", &Self::REQUIRED_SYMBOLS.len())
                    .field("optional_missing", &self.missing_optional())
                    .finish()
            }
        }
    };
}

pub(crate) use function_table;
