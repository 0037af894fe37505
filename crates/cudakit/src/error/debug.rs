//! `Debug` for [`Error`]: the readable form that `fn main() -> cudakit::Result<()>`
//! prints, and the structural form under `{:#?}`.
//!
//! `{:?}` writes what `Display` writes (the message, with its own lines such
//! as the paths a load tried and the hint), then each cause that the message
//! does not already contain, under `Caused by:`, the way `anyhow` prints an
//! error. `{:#?}` writes the variant and its fields as `#[derive(Debug)]`
//! would.
//!
//! The structural form is generated from a list of the variants and their
//! fields. Its match is exhaustive and names every field without `..`, so a
//! new variant or field does not compile until it is listed here.

use std::error::Error as _;
use std::fmt;

use super::Error;

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if f.alternate() {
            self.fmt_structure(f)
        } else {
            write_readable(f, &self.to_string(), self.source())
        }
    }
}

/// Writes `message`, then the causes from `source` on that are not already
/// part of the text written, numbered, under `Caused by:`.
pub(super) fn write_readable(
    f: &mut fmt::Formatter<'_>,
    message: &str,
    source: Option<&(dyn std::error::Error + 'static)>,
) -> fmt::Result {
    f.write_str(message)?;
    let mut written = message.to_owned();
    let mut causes = Vec::new();
    let mut next = source;
    while let Some(cause) = next {
        let text = cause.to_string();
        if !written.contains(&text) {
            written.push_str(&text);
            causes.push(text);
        }
        next = cause.source();
    }
    if causes.is_empty() {
        return Ok(());
    }
    f.write_str("\n\nCaused by:")?;
    let numbered = causes.len() > 1;
    for (n, text) in causes.iter().enumerate() {
        let indent = if numbered { "       " } else { "    " };
        if numbered {
            write!(f, "\n{n:>4}: ")?;
        } else {
            f.write_str("\n    ")?;
        }
        // A cause of several lines keeps them under its first.
        f.write_str(&text.replace('\n', &format!("\n{indent}")))?;
    }
    Ok(())
}

/// `fmt_structure`, the derive-style `Debug` of each variant: a tuple
/// variant by `Name(value)`, a struct variant by `Name { field, ... }`, a
/// unit variant by `Name`.
macro_rules! structural_debug {
    ($ty:ident { $( $variant:ident $( ( $value:ident ) )? $( { $( $field:ident ),* $(,)? } )? ),* $(,)? }) => {
        impl $ty {
            fn fmt_structure(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self {
                    $(
                        $ty::$variant $( ( $value ) )? $( { $( $field ),* } )? => {
                            structural_debug!(@one f, $variant $( ( $value ) )? $( { $( $field ),* } )?)
                        }
                    )*
                }
            }
        }
    };
    (@one $f:ident, $variant:ident ( $value:ident )) => {
        $f.debug_tuple(stringify!($variant)).field($value).finish()
    };
    (@one $f:ident, $variant:ident { $( $field:ident ),* }) => {
        $f.debug_struct(stringify!($variant)) $( .field(stringify!($field), $field) )* .finish()
    };
    (@one $f:ident, $variant:ident) => {
        $f.write_str(stringify!($variant))
    };
}

structural_debug!(Error {
    Load(value),
    Driver(value),
    Nvrtc(value),
    Compile { program, options, code, log },
    ModuleLoad { call, code, log },
    ContextPoisoned { device, cause },
    NotSupported { feature, needs_driver },
    LaunchConfig { function, error },
    ArgumentCount { function, expected, got },
    ArgumentMismatch { function, index, expected_size, got_size },
    ArgumentType { function, index, expected, got },
    AmbiguousFunction { name, candidates },
    DeclaredSignature { function, reason },
    ZeroLength { what },
    SizeOverflow { len, elem_size },
    LengthMismatch { what, expected, got },
    OutOfBounds { start, end, len },
    ContextMismatch { what, a, b },
    ArgumentContextMismatch { function, index, argument_device, kernel_device },
    UnifiedAccess { device, reason },
    Alignment { what, type_name, align, limit },
    TensorMap { reason },
    InteriorNul { what },
    UnknownFunction { name, known },
    Global { name, reason },
    NoSuchDevice { ordinal, count },
    IllegalDuringCapture { operation, device },
    StreamCaptured { operation, device },
    InsideHostCallback { operation },
    AccessPolicy { reason },
    ForkedChild,
    WaitFailed { call, cause },
    ForeignGraphNode { what, index },
    EmptyGraph,
    ForeignCondition { what, reason },
    NodeNotAllowed { what, place, kind, allowed },
    GraphUpdate { node, reason },
    HostCallbackPanicked { message },
    AllocationTooLarge { call, bytes, device, device_bytes },
    InvalidArgument(value),
    Texture(value),
    JitLink { call, code, log },
    JitLinkUnavailable { input, why, source },
    DeviceRuntimeNotFound { looked_in },
    CudaHeadersNotFound { looked_in },
    Io { path, message },
    Nccl(value),
    PeerAccessUnsupported { from, to, reason },
    CommunicatorDevice { call, what, rank, communicator_device, got },
    CollectiveMismatch { call, reason },
    NcclTimeout { call, rank, waited },
    Rendezvous { rank, reason },
    CommunicatorAborted { rank, cause },
    VirtualMemory(value),
    SmGranularity { device, count, min, multiple, reported_by_driver },
    NotEnoughSms { device, requested, available },
    SmSplitMismatch { device, requested, got },
    GreenContextThread { device },
    Ipc(value),
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{check, LoadError};
    use cuda_sys::{Attempt, CUresult};

    fn not_found() -> Error {
        Error::Load(LoadError::NotFound {
            library: "libcuda",
            attempts: vec![
                Attempt {
                    candidate: "libcuda.so.1".into(),
                    reason: "cannot open shared object file".into(),
                },
                Attempt {
                    candidate: "/usr/local/cuda/lib64/libcuda.so.1".into(),
                    reason: "no such file".into(),
                },
            ],
            hint: "\nhint: install the driver",
        })
    }

    #[test]
    fn debug_reads_like_display_and_alternate_debug_keeps_the_structure() {
        let err = not_found();
        assert_eq!(format!("{err:?}"), err.to_string());
        assert!(format!("{err:?}").contains("\n  libcuda.so.1: cannot open"));
        assert!(format!("{err:?}").ends_with("\nhint: install the driver"));
        let structure = format!("{err:#?}");
        assert!(
            structure.starts_with("Load(\n    NotFound {"),
            "{structure}"
        );
        assert!(structure.contains("attempts: ["), "{structure}");

        let driver: Error = check("cuInit", CUresult::CUDA_ERROR_NO_DEVICE)
            .unwrap_err()
            .into();
        assert_eq!(format!("{driver:?}"), driver.to_string());
        assert!(format!("{driver:#?}").starts_with("Driver(\n    DriverError {"));
        assert_eq!(format!("{:#?}", Error::EmptyGraph), "EmptyGraph");
        let struct_form = format!("{:#?}", Error::ZeroLength { what: "alloc" });
        assert_eq!(struct_form, "ZeroLength {\n    what: \"alloc\",\n}");
    }

    #[test]
    fn a_cause_already_in_the_message_is_not_repeated() {
        let err = Error::JitLinkUnavailable {
            input: "a.ltoir".into(),
            why: "LTO-IR",
            source: LoadError::NotFound {
                library: "libnvJitLink",
                attempts: Vec::new(),
                hint: "\nhint: install nvJitLink",
            },
        };
        assert_eq!(format!("{err:?}"), err.to_string());
        assert!(!format!("{err:?}").contains("Caused by"));
    }

    /// An error whose causes are not in its message, to show the chain.
    #[derive(Debug)]
    struct Layer(&'static str, Option<Box<Layer>>);
    impl fmt::Display for Layer {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
    }
    impl std::error::Error for Layer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|l| l as _)
        }
    }
    struct Readable<'a>(&'a str, &'a Layer);
    impl fmt::Debug for Readable<'_> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write_readable(f, self.0, Some(self.1))
        }
    }

    #[test]
    fn causes_follow_on_their_own_lines_as_anyhow_prints_them() {
        let one = Layer("reading the cache", None);
        assert_eq!(
            format!("{:?}", Readable("compile failed", &one)),
            "compile failed\n\nCaused by:\n    reading the cache"
        );
        let two = Layer(
            "reading the cache",
            Some(Box::new(Layer("disk\nfull", None))),
        );
        assert_eq!(
            format!("{:?}", Readable("compile failed", &two)),
            "compile failed\n\nCaused by:\n   0: reading the cache\n   1: disk\n       full"
        );
    }
}
