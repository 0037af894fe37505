//! [`TextureError`]: textures and surfaces the hardware cannot make,
//! refused before the driver (see `memory::texture`).

use std::fmt;

/// A texture or surface the hardware cannot make, refused before the
/// driver. Names are those of `memory::texture`'s enums (`Wrap`, `U8`,
/// `NormalizedFloat`, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TextureError {
    /// Wrap and mirror addressing work on normalized coordinates only.
    NeedsNormalizedCoordinates {
        /// The address mode asked for (`Wrap` or `Mirror`).
        mode: &'static str,
    },
    /// Linear filtering returns floats: float texels, or 8/16-bit integers
    /// read as normalized floats.
    LinearFilterNeedsFloat {
        /// The channel kind (`U8`, `I32`, ...).
        kind: &'static str,
        /// The read mode asked for.
        read: &'static str,
    },
    /// 32-bit integers are never promoted to normalized floats.
    NormalizedRead32 {
        /// The channel kind (`U32` or `I32`).
        kind: &'static str,
    },
    /// Textures over linear memory are fetched by integer index
    /// (`tex1Dfetch`): no filtering, no normalized coordinates.
    LinearMemory {
        /// What was asked for.
        what: &'static str,
    },
    /// A surface needs an array made with `Context::surface_array`.
    NotSurfaceCapable,
}
impl fmt::Display for TextureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NeedsNormalizedCoordinates { mode, .. } => write!(
                f,
                "address mode {mode} needs normalized coordinates \
                 (TextureDesc::normalized_coordinates(true))",
            ),
            Self::LinearFilterNeedsFloat { kind, read, .. } => write!(
                f,
                "linear filtering of {kind} texels read as {read} is not supported: filtering needs \
                 float texels, or 8/16-bit integers read as ReadMode::NormalizedFloat",
            ),
            Self::NormalizedRead32 { kind, .. } => write!(
                f,
                "{kind} texels cannot be read as normalized floats (only 8- and 16-bit integers can)",
            ),
            Self::LinearMemory { what, .. } => write!(
                f,
                "textures over linear memory are read with tex1Dfetch and do not support {what}",
            ),
            Self::NotSurfaceCapable => write!(
                f,
                "the array was not made for surfaces (CUDA_ARRAY3D_SURFACE_LDST); make it with \
                 Context::surface_array",
            ),
        }
    }
}

impl std::error::Error for TextureError {}
