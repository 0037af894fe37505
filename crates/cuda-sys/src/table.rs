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
//!
//! Besides the struct, the macro generates what every library needs, once:
//! the symbol lists, `from_library` (fill the table from an opened library),
//! `open` (the standard search of [`crate::loader`]), `load_from` (an
//! explicit path), `finish` (fill, then leak the library so it is never
//! unloaded), and the process-wide table behind `cuda_sys::driver()` and
//! `cuda_sys::nvrtc()`.

use std::ffi::c_void;
use std::ptr::NonNull;

use libloading::Library;

/// The address `library` exports under `name` (NUL-terminated), or the
/// dynamic loader's message when it exports none.
///
/// Not generic: one copy serves every entry of every table, which keeps
/// cuda-sys quick to compile (issue 14); the per-entry typing is
/// [`function_at`].
fn address(library: &Library, name: &str) -> Result<NonNull<c_void>, String> {
    // SAFETY: the symbol is read as `*mut c_void`, i.e. only its address is
    // taken (what `dlsym` returns); nothing is called or dereferenced here.
    let symbol = unsafe { library.get::<*mut c_void>(name.as_bytes()) };
    match symbol {
        Ok(symbol) => NonNull::new(*symbol).ok_or_else(|| {
            format!(
                "{}: the exported address is null",
                name.trim_end_matches('\0')
            )
        }),
        Err(err) => Err(err.to_string()),
    }
}

/// Resolves a required entry point: its address, or a
/// [`LoadError::MissingSymbol`](crate::LoadError::MissingSymbol) naming it.
/// `symbol` is NUL-terminated.
pub(crate) fn required(
    library: &Library,
    path: &str,
    which: &'static str,
    symbol: &'static str,
) -> Result<NonNull<c_void>, crate::LoadError> {
    address(library, symbol).map_err(|reason| crate::LoadError::MissingSymbol {
        library: which,
        path: path.to_owned(),
        symbol: symbol.trim_end_matches('\0'),
        reason,
    })
}

/// Resolves an optional entry point: its address, or `None`. `symbol` is
/// NUL-terminated.
pub(crate) fn optional(library: &Library, symbol: &'static str) -> Option<NonNull<c_void>> {
    address(library, symbol).ok()
}

/// The crate's one audited reinterpretation: the function pointer of type
/// `F` at `address`. Every table entry goes through it.
///
/// # Safety
///
/// `F` must be an `unsafe extern "C" fn` type whose signature is exactly the
/// C signature of the function at `address` (a wrong type makes every call
/// through the result undefined behaviour), and the code at `address` must
/// stay mapped for as long as the result is used (cuda-sys never unloads a
/// library). That `F` is pointer-sized is checked at compile time.
pub(crate) unsafe fn function_at<F: Copy>(address: NonNull<c_void>) -> F {
    const {
        assert!(std::mem::size_of::<F>() == std::mem::size_of::<NonNull<c_void>>());
    }
    // SAFETY: `F` is a function-pointer type of the same size as the
    // address (checked above); on the platforms cuda-sys supports (64-bit
    // Linux, where POSIX requires `dlsym`'s result to be usable as a function
    // pointer) a function pointer is represented as its code address, so the
    // bits of `address` are a valid `F`. The caller guarantees the signature
    // and that the code stays mapped.
    unsafe { std::mem::transmute_copy::<NonNull<c_void>, F>(&address) }
}

/// Declares a function table and its loader. See the module documentation.
macro_rules! function_table {
    (
        $(#[$meta:meta])*
        pub struct $name:ident;
        library = $library:literal;
        header = $header:literal;
        search = $which:ident;
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
                            $crate::table::function_at::<unsafe extern "C" fn($($raty),*) -> $rret>(
                                $crate::table::required(library, path, $library, concat!($rsym, "\0"))?,
                            )
                        },
                    )*
                    $(
                        $ofield: $crate::table::optional(library, concat!($osym, "\0")).map(|address| {
                            // SAFETY: as above.
                            unsafe {
                                $crate::table::function_at::<unsafe extern "C" fn($($oaty),*) -> $oret>(address)
                            }
                        }),
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

            #[doc = concat!("Opens ", $library, " by the standard search (see [`crate::loader`]).")]
            pub(crate) fn open() -> Result<(Self, $crate::Loaded), $crate::LoadError> {
                let (library, loaded) = $crate::loader::open($crate::loader::Which::$which)?;
                Self::finish(library, loaded)
            }

            #[doc = concat!(
                "Opens the library at `path` (or a soname) as ", $library,
                ", bypassing the search. A library opened by path has NVRTC's ",
                "`libnvrtc-builtins` from its folder preloaded, when it is libnvrtc. ",
                "The library is never unloaded."
            )]
            ///
            /// # Errors
            ///
            /// [`LoadError::NotFound`](crate::LoadError::NotFound) when it
            /// does not open;
            /// [`LoadError::MissingSymbol`](crate::LoadError::MissingSymbol)
            /// naming the first required entry point it lacks.
            ///
            /// # Safety
            ///
            #[doc = concat!(
                "The library's initialisers run, and its exported symbols are trusted to ",
                "have the signatures of CUDA 13.0's `", $header, "`: pointing this at anything ",
                "other than a ", $library, " (or a faithful stand-in) is undefined behaviour ",
                "at the first call."
            )]
            pub unsafe fn load_from(path: &str) -> Result<Self, $crate::LoadError> {
                let (library, loaded) = $crate::loader::open_from(
                    $crate::loader::Which::$which,
                    vec![path.to_owned()],
                )?;
                Self::finish(library, loaded).map(|(table, _)| table)
            }

            /// Fills the table from `library`, then leaks the library so that
            /// it is never unloaded.
            fn finish(
                library: ::libloading::Library,
                loaded: $crate::Loaded,
            ) -> Result<(Self, $crate::Loaded), $crate::LoadError> {
                // SAFETY: the library was opened as this table's library (by
                // the search, or by a caller of `load_from` who vouched for
                // it), and it is leaked below, so it is never unloaded while
                // the table is in use.
                let table = unsafe { Self::from_library(&library, &loaded.candidate) }?;
                ::std::mem::forget(library);
                Ok((table, loaded))
            }

            /// The process's cell: the outcome of the first search, kept.
            fn process_cell() -> &'static ::once_cell::sync::OnceCell<
                Result<(Self, $crate::Loaded), $crate::LoadError>,
            > {
                static CELL: ::once_cell::sync::OnceCell<
                    Result<($name, $crate::Loaded), $crate::LoadError>,
                > = ::once_cell::sync::OnceCell::new();
                &CELL
            }

            /// The process's table and where it came from: searched for and
            /// loaded on the first call, then the same table (or the same
            /// error) for the life of the process.
            pub(crate) fn process() -> Result<(&'static Self, &'static $crate::Loaded), $crate::LoadError> {
                match Self::process_cell().get_or_init(Self::open) {
                    Ok((table, loaded)) => Ok((table, loaded)),
                    Err(err) => Err(err.clone()),
                }
            }

            /// The process's table if an earlier call loaded it; never
            /// starts a search.
            pub(crate) fn process_if_loaded() -> Option<&'static Self> {
                match Self::process_cell().get() {
                    Some(Ok((table, _))) => Some(table),
                    _ => None,
                }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The running program itself, which exports libc's symbols.
    fn this_program() -> Library {
        libloading::os::unix::Library::this().into()
    }

    extern "C" fn add_one(x: i32) -> i32 {
        x + 1
    }

    #[test]
    fn function_at_gives_back_the_function_at_an_address() {
        let f: extern "C" fn(i32) -> i32 = add_one;
        let address = NonNull::new(f as *mut c_void).unwrap();
        // SAFETY: `address` is `add_one`, whose signature is the one asked
        // for, and it is part of this program.
        let g = unsafe { function_at::<extern "C" fn(i32) -> i32>(address) };
        assert_eq!(g(41), 42);
    }

    #[test]
    fn required_symbols_resolve_or_name_what_is_missing() {
        let program = this_program();
        assert!(required(&program, "self", "libc", "malloc\0").is_ok());
        assert!(optional(&program, "free\0").is_some());
        assert!(optional(&program, "cudakit_no_such_symbol\0").is_none());
        let err = required(&program, "self", "libcuda", "cudakit_no_such_symbol\0").unwrap_err();
        let crate::LoadError::MissingSymbol {
            library,
            path,
            symbol,
            reason,
        } = &err
        else {
            panic!("expected MissingSymbol, got {err:?}");
        };
        assert_eq!(
            (*library, path.as_str(), *symbol),
            ("libcuda", "self", "cudakit_no_such_symbol")
        );
        assert!(reason.contains("cudakit_no_such_symbol"), "{reason}");
        assert!(!err.to_string().contains('\0'));
    }
}
