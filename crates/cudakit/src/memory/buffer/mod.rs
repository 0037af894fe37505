//! Buffers: the element types and the memory that holds them (device,
//! pinned host, unified, stream-ordered pools, virtual memory, and memory
//! imported from another process).

pub(crate) mod device;
pub(crate) mod element;
pub(crate) mod imported;
pub(crate) mod pinned;
pub mod pool;
pub(crate) mod unified;
pub(crate) mod virtual_mem;
