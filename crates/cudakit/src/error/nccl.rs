//! NCCL's result codes as a typed enum, and the error an NCCL entry point
//! returns. The one place a raw `ncclResult_t` becomes a variant.

use cuda_sys::ncclResult_t;
use std::fmt;

/// What an NCCL entry point returned, other than `ncclSuccess`. Codes newer
/// than these bindings keep their number ([`NcclCode::Unknown`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NcclCode {
    /// `ncclUnhandledCudaError` (1): a CUDA call made by NCCL failed.
    UnhandledCudaError,
    /// `ncclSystemError` (2): a system call failed (socket, shared memory, ...).
    SystemError,
    /// `ncclInternalError` (3): an internal check of NCCL failed.
    InternalError,
    /// `ncclInvalidArgument` (4): an argument was invalid.
    InvalidArgument,
    /// `ncclInvalidUsage` (5): a call made in a wrong order or state.
    InvalidUsage,
    /// `ncclRemoteError` (6): a remote rank failed or the network broke.
    RemoteError,
    /// `ncclInProgress` (7): a non-blocking operation has not finished.
    InProgress,
    /// `ncclTimeout` (8): an operation timed out.
    Timeout,
    /// A code these bindings do not know, with its number.
    Unknown(i32),
}

impl NcclCode {
    /// The code of a raw result; `None` for `ncclSuccess`.
    pub fn from_raw(rc: ncclResult_t) -> Option<NcclCode> {
        Some(match rc {
            ncclResult_t::ncclSuccess => return None,
            ncclResult_t::ncclUnhandledCudaError => NcclCode::UnhandledCudaError,
            ncclResult_t::ncclSystemError => NcclCode::SystemError,
            ncclResult_t::ncclInternalError => NcclCode::InternalError,
            ncclResult_t::ncclInvalidArgument => NcclCode::InvalidArgument,
            ncclResult_t::ncclInvalidUsage => NcclCode::InvalidUsage,
            ncclResult_t::ncclRemoteError => NcclCode::RemoteError,
            ncclResult_t::ncclInProgress => NcclCode::InProgress,
            ncclResult_t::ncclTimeout => NcclCode::Timeout,
            other => NcclCode::Unknown(other.0),
        })
    }

    /// The raw number.
    pub fn number(self) -> i32 {
        match self {
            NcclCode::UnhandledCudaError => ncclResult_t::ncclUnhandledCudaError.0,
            NcclCode::SystemError => ncclResult_t::ncclSystemError.0,
            NcclCode::InternalError => ncclResult_t::ncclInternalError.0,
            NcclCode::InvalidArgument => ncclResult_t::ncclInvalidArgument.0,
            NcclCode::InvalidUsage => ncclResult_t::ncclInvalidUsage.0,
            NcclCode::RemoteError => ncclResult_t::ncclRemoteError.0,
            NcclCode::InProgress => ncclResult_t::ncclInProgress.0,
            NcclCode::Timeout => ncclResult_t::ncclTimeout.0,
            NcclCode::Unknown(n) => n,
        }
    }

    /// The header's name (`ncclInvalidArgument`), or `"unknown"`.
    pub fn name(self) -> &'static str {
        ncclResult_t(self.number()).name().unwrap_or("unknown")
    }

    /// A one-line meaning.
    pub fn meaning(self) -> &'static str {
        match self {
            NcclCode::UnhandledCudaError => "a cuda call made by nccl failed",
            NcclCode::SystemError => "a system call failed (socket, shared memory, ...)",
            NcclCode::InternalError => "an internal check of nccl failed",
            NcclCode::InvalidArgument => "an argument was invalid",
            NcclCode::InvalidUsage => "a call was made in a wrong order or state",
            NcclCode::RemoteError => "a remote rank failed or the network broke",
            NcclCode::InProgress => "a non-blocking operation has not finished",
            NcclCode::Timeout => "an operation timed out",
            NcclCode::Unknown(_) => "a code newer than these bindings",
        }
    }
}

impl std::fmt::Display for NcclCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.name(), self.number(), self.meaning())
    }
}

/// An NCCL entry point returned an error.
///
/// Displayed as `ncclAllReduce: ncclInvalidArgument (4): an argument was
/// invalid`, followed by NCCL's own message (`ncclGetLastError`) when it
/// gave one.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NcclError {
    /// The NCCL function that was called.
    pub call: &'static str,
    /// What it returned.
    pub code: NcclCode,
    /// NCCL's message about the error (`ncclGetLastError`), or empty.
    pub detail: String,
}
impl fmt::Display for NcclError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Self {
            call, code, detail, ..
        } = self;
        write!(
            f,
            "{call}: {code}{}",
            if detail.is_empty() {
                String::new()
            } else {
                format!(" ({detail})")
            },
        )
    }
}

impl std::error::Error for NcclError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_maps_and_keeps_its_number() {
        assert_eq!(NcclCode::from_raw(ncclResult_t::ncclSuccess), None);
        for (name, raw) in ncclResult_t::ALL.iter().skip(1) {
            let code = NcclCode::from_raw(*raw).unwrap();
            assert_eq!(code.number(), raw.0);
            assert_eq!(code.name(), *name);
            assert!(!matches!(code, NcclCode::Unknown(_)), "{name}");
        }
        let unknown = NcclCode::from_raw(ncclResult_t(42)).unwrap();
        assert_eq!(unknown, NcclCode::Unknown(42));
        assert_eq!(unknown.number(), 42);
    }

    #[test]
    fn errors_name_the_call() {
        let e = NcclError {
            call: "ncclAllReduce",
            code: NcclCode::InvalidArgument,
            detail: String::new(),
        };
        assert_eq!(
            e.to_string(),
            "ncclAllReduce: ncclInvalidArgument (4): an argument was invalid"
        );
        let e = NcclError {
            detail: "count 0".into(),
            ..e
        };
        assert!(e.to_string().ends_with("invalid (count 0)"));
    }
}
