//! The libcuda function table, written by hand from CUDA 13.0's `cuda.h`.
//!
//! Each entry names the symbol the header's `#define` block maps the API name
//! to (`cuMemAlloc` is exported as `cuMemAlloc_v2`). The per-thread default
//! stream variants (`_ptds`, `_ptsz`) are not used: cudakit always passes an
//! explicit stream. Entry points that every driver from CUDA 12.0 on exports
//! are required; newer ones are `Option`s.

use std::ffi::{c_char, c_int, c_uint, c_void};

use crate::loader::{self, Loaded, Which};
use crate::table::function_table;
use crate::types::*;
use crate::LoadError;

function_table! {
    /// Entry points of libcuda. Obtain the process's table with
    /// [`crate::driver()`], or open a specific library with
    /// [`Driver::load_from`].
    pub struct Driver;
    library = "libcuda";
    required {
        // --- initialisation and versions
        cuInit = "cuInit": fn(Flags: c_uint) -> CUresult;
        cuDriverGetVersion = "cuDriverGetVersion": fn(driverVersion: *mut c_int) -> CUresult;
    }
    optional {
        cuFuncGetParamInfo = "cuFuncGetParamInfo": fn(func: CUfunction, paramIndex: usize, paramOffset: *mut usize, paramSize: *mut usize) -> CUresult;
    }
}

impl Driver {
    /// Opens libcuda by the standard search (see [`crate::loader`]).
    pub(crate) fn open() -> Result<(Self, Loaded), LoadError> {
        let (library, loaded) = loader::open(Which::Cuda)?;
        Self::finish(library, loaded)
    }

    /// Opens the library at `path` (or soname) as libcuda, bypassing the
    /// search. The library is never unloaded.
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
    /// have the signatures of CUDA 13.0's `cuda.h`: pointing this at anything
    /// other than a libcuda (or a faithful stand-in) is undefined behaviour at
    /// the first call.
    pub unsafe fn load_from(path: &str) -> Result<Self, LoadError> {
        let (library, loaded) = loader::open_from(Which::Cuda, vec![path.to_owned()])?;
        Self::finish(library, loaded).map(|(table, _)| table)
    }

    fn finish(library: libloading::Library, loaded: Loaded) -> Result<(Self, Loaded), LoadError> {
        // SAFETY: the library is libcuda (or what the user named as libcuda)
        // and is leaked below, so it is never unloaded.
        let table = unsafe { Self::from_library(&library, &loaded.candidate) }?;
        std::mem::forget(library);
        Ok((table, loaded))
    }
}
