//! Images: CUDA arrays, pitched allocations, textures and surfaces, tensor
//! maps, and the copy descriptors they share.

pub mod array;
pub(crate) mod copy3d;
pub mod pitched;
pub mod tensor_map;
pub mod texture;
