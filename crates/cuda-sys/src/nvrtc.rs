//! NVRTC, written by hand from CUDA 13.0's `nvrtc.h`: `nvrtcResult`, the
//! program handle, and the table of entry points.

use std::ffi::{c_char, c_int, c_void};

use crate::loader::{self, Loaded, Which};
use crate::table::function_table;
use crate::types::c_enum;
use crate::LoadError;

c_enum! {
    /// `nvrtcResult`: the status every NVRTC entry point returns.
    #[must_use]
    pub struct nvrtcResult(c_int) {
        /// No error.
        NVRTC_SUCCESS = 0,
    }
}

/// `nvrtcProgram`: an opaque handle to a program.
pub type nvrtcProgram = *mut c_void;

function_table! {
    /// Entry points of libnvrtc. Obtain the process's table with
    /// [`crate::nvrtc()`], or open a specific library with
    /// [`Nvrtc::load_from`].
    pub struct Nvrtc;
    library = "libnvrtc";
    required {
        nvrtcVersion = "nvrtcVersion": fn(major: *mut c_int, minor: *mut c_int) -> nvrtcResult;
        nvrtcGetErrorString = "nvrtcGetErrorString": fn(result: nvrtcResult) -> *const c_char;
    }
    optional {
    }
}

impl Nvrtc {
    /// Opens libnvrtc by the standard search (see [`crate::loader`]),
    /// preloading `libnvrtc-builtins` from the same folder when needed.
    pub(crate) fn open() -> Result<(Self, Loaded), LoadError> {
        let (library, loaded) = loader::open(Which::Nvrtc)?;
        Self::finish(library, loaded)
    }

    /// Opens the library at `path` (or soname) as libnvrtc, bypassing the
    /// search; `libnvrtc-builtins` beside a path is preloaded. The library
    /// is never unloaded.
    ///
    /// # Errors
    ///
    /// [`LoadError::NotFound`] when it does not open;
    /// [`LoadError::MissingSymbol`] naming the first required entry point it
    /// lacks.
    ///
    /// # Safety
    ///
    /// The library's initialisers run, and its exported symbols are trusted to
    /// have the signatures of CUDA 13.0's `nvrtc.h`.
    pub unsafe fn load_from(path: &str) -> Result<Self, LoadError> {
        let (library, loaded) = loader::open_from(Which::Nvrtc, vec![path.to_owned()])?;
        Self::finish(library, loaded).map(|(table, _)| table)
    }

    fn finish(library: libloading::Library, loaded: Loaded) -> Result<(Self, Loaded), LoadError> {
        // SAFETY: the library is libnvrtc (or what the user named as such)
        // and is leaked below, so it is never unloaded.
        let table = unsafe { Self::from_library(&library, &loaded.candidate) }?;
        std::mem::forget(library);
        Ok((table, loaded))
    }
}
