//! Compiling and loading device code: NVRTC programs ([`program`]), the
//! compile cache ([`cache`], a keyed byte store), modules and their
//! functions and globals ([`module`]), and the driver linker ([`linker`]).

pub mod cache;
pub mod linker;
pub mod module;
pub mod program;
