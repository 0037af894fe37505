//! Transfers: the copy plumbing every buffer type shares, and the staged
//! pipeline for pageable host memory.

pub(crate) mod copy;
pub(crate) mod registered;
pub mod staged;
