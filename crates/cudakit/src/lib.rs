//! cudakit: safe layer (in progress).
