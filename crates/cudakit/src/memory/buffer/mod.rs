//! Buffers: the element types and the memory that holds them (device,
//! pinned host, unified, stream-ordered pools).

pub(crate) mod device;
pub(crate) mod element;
pub(crate) mod pinned;
pub mod pool;
pub(crate) mod unified;
