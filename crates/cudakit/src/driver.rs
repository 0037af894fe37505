//! The process's driver table, initialised once (`cuInit`).

use cuda_sys::Driver;
use once_cell::sync::OnceCell;

use crate::error::{check, Error, Result};

static INIT: OnceCell<Result<&'static Driver>> = OnceCell::new();

/// The loaded and initialised libcuda table.
///
/// # Errors
///
/// [`Error::Load`] when libcuda cannot be loaded (the error lists every
/// candidate tried); [`Error::Driver`] when `cuInit` fails (no device, a
/// driver too old, ...). The first outcome is kept for the process.
#[inline]
pub(crate) fn cu() -> Result<&'static Driver> {
    match INIT.get() {
        Some(Ok(table)) => Ok(table),
        Some(Err(err)) => Err(err.clone()),
        None => INIT.get_or_init(init).clone(),
    }
}

fn init() -> Result<&'static Driver> {
    let table = cuda_sys::driver().map_err(Error::Load)?;
    // SAFETY: cuInit takes flags by value; 0 is the only defined value.
    check("cuInit", unsafe { (table.cuInit)(0) })?;
    Ok(table)
}

/// The driver's CUDA version as (major, minor), e.g. (13, 0).
///
/// # Errors
///
/// Load and `cuInit` errors, and `cuDriverGetVersion` failing.
pub fn driver_version() -> Result<(i32, i32)> {
    let cu = cu()?;
    let mut version = 0;
    // SAFETY: a valid out-pointer.
    check("cuDriverGetVersion", unsafe {
        (cu.cuDriverGetVersion)(&mut version)
    })?;
    Ok((version / 1000, (version % 1000) / 10))
}

/// Returns the optional entry point or [`Error::NotSupported`].
macro_rules! optional {
    ($cu:expr, $field:ident, $needs:literal) => {
        match $cu.$field {
            Some(f) => f,
            None => {
                return Err($crate::error::Error::NotSupported {
                    feature: stringify!($field),
                    needs_driver: $needs,
                })
            }
        }
    };
}
pub(crate) use optional;
