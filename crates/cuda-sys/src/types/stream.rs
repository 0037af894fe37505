//! Streams and events: flags, capture modes and states, stream
//! attributes, and the host-function and stream-callback types.

use super::*;

// ---------------------------------------------------------------------------
// Enums
// ---------------------------------------------------------------------------

c_enum! {
    /// `CUstream_flags`: stream creation flags.
    pub struct CUstream_flags(c_int) {
        /// Default stream behaviour.
        CU_STREAM_DEFAULT = 0x0,
        /// The stream does not synchronize with the legacy null stream.
        CU_STREAM_NON_BLOCKING = 0x1,
    }
}

c_enum! {
    /// `CUevent_flags`: event creation flags (a bit set).
    pub struct CUevent_flags(c_int) {
        /// Default event behaviour.
        CU_EVENT_DEFAULT = 0x0,
        /// Synchronizing on the event blocks the CPU thread instead of spinning.
        CU_EVENT_BLOCKING_SYNC = 0x1,
        /// The event records no timing data.
        CU_EVENT_DISABLE_TIMING = 0x2,
        /// The event can be shared between processes; needs `CU_EVENT_DISABLE_TIMING`.
        CU_EVENT_INTERPROCESS = 0x4,
    }
}

c_enum! {
    /// `CUevent_record_flags`: flags of `cuEventRecordWithFlags`.
    pub struct CUevent_record_flags(c_int) {
        /// Default record behaviour.
        CU_EVENT_RECORD_DEFAULT = 0x0,
        /// During stream capture, make an event-record node; invalid outside capture.
        CU_EVENT_RECORD_EXTERNAL = 0x1,
    }
}

c_enum! {
    /// `CUevent_wait_flags`: flags of `cuStreamWaitEvent`.
    pub struct CUevent_wait_flags(c_int) {
        /// Default wait behaviour.
        CU_EVENT_WAIT_DEFAULT = 0x0,
        /// During stream capture, make an event-wait node; invalid outside capture.
        CU_EVENT_WAIT_EXTERNAL = 0x1,
    }
}

c_enum! {
    /// `CUevent_sched_flags`: how the CPU waits on an event.
    pub struct CUevent_sched_flags(c_int) {
        /// Let the driver choose.
        CU_EVENT_SCHED_AUTO = 0x00,
        /// Spin.
        CU_EVENT_SCHED_SPIN = 0x01,
        /// Yield the CPU thread.
        CU_EVENT_SCHED_YIELD = 0x02,
        /// Block on a synchronization primitive.
        CU_EVENT_SCHED_BLOCKING_SYNC = 0x04,
    }
}

c_enum! {
    /// `CUstreamWaitValue_flags`: conditions and flags of `cuStreamWaitValue32/64`.
    pub struct CUstreamWaitValue_flags(c_int) {
        /// Wait until `(int32_t)(*addr - value) >= 0` (cyclic comparison); the default.
        CU_STREAM_WAIT_VALUE_GEQ = 0x0,
        /// Wait until `*addr == value`.
        CU_STREAM_WAIT_VALUE_EQ = 0x1,
        /// Wait until `(*addr & value) != 0`.
        CU_STREAM_WAIT_VALUE_AND = 0x2,
        /// Wait until `~(*addr | value) != 0`.
        CU_STREAM_WAIT_VALUE_NOR = 0x3,
        /// Flush outstanding remote writes after the wait.
        CU_STREAM_WAIT_VALUE_FLUSH = 1 << 30,
    }
}

c_enum! {
    /// `CUstreamWriteValue_flags`: flags of `cuStreamWriteValue32/64`.
    pub struct CUstreamWriteValue_flags(c_int) {
        /// Default: a memory fence precedes the write.
        CU_STREAM_WRITE_VALUE_DEFAULT = 0x0,
        /// Let the write be reordered with earlier writes (not in the v2 API).
        CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER = 0x1,
    }
}

c_enum! {
    /// `CUstreamCaptureStatus`: a stream's capture state.
    pub struct CUstreamCaptureStatus(c_int) {
        /// Not capturing.
        CU_STREAM_CAPTURE_STATUS_NONE = 0,
        /// Capturing.
        CU_STREAM_CAPTURE_STATUS_ACTIVE = 1,
        /// In a capture sequence that was invalidated but not yet ended.
        CU_STREAM_CAPTURE_STATUS_INVALIDATED = 2,
    }
}

c_enum! {
    /// `CUstreamCaptureMode`: which unsafe API calls other threads may make during a capture.
    pub struct CUstreamCaptureMode(c_int) {
        /// Prohibit unsafe calls from any thread while any global capture is active.
        CU_STREAM_CAPTURE_MODE_GLOBAL = 0,
        /// Prohibit unsafe calls only from this thread.
        CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
        /// Prohibit nothing.
        CU_STREAM_CAPTURE_MODE_RELAXED = 2,
    }
}

c_enum! {
    /// `CUstreamUpdateCaptureDependencies_flags`: flags of `cuStreamUpdateCaptureDependencies`.
    pub struct CUstreamUpdateCaptureDependencies_flags(c_int) {
        /// Add the nodes to the dependency set.
        CU_STREAM_ADD_CAPTURE_DEPENDENCIES = 0x0,
        /// Replace the dependency set with the nodes.
        CU_STREAM_SET_CAPTURE_DEPENDENCIES = 0x1,
    }
}

// ---------------------------------------------------------------------------
// Constants (`#define`)
// ---------------------------------------------------------------------------

/// `CU_STREAM_LEGACY`: the implicit stream with legacy synchronization
/// behaviour, passed where a `CUstream` is expected.
pub const CU_STREAM_LEGACY: CUstream = 0x1 as CUstream;
/// `CU_STREAM_PER_THREAD`: the implicit per-thread stream, passed where a
/// `CUstream` is expected.
pub const CU_STREAM_PER_THREAD: CUstream = 0x2 as CUstream;

/// `CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW`: stream spelling of the launch attribute.
pub const CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW: CUstreamAttrID =
    CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW;
/// `CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY`: stream spelling of the launch attribute.
pub const CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY: CUstreamAttrID =
    CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY;
/// `CU_STREAM_ATTRIBUTE_PRIORITY`: stream spelling of the launch attribute.
pub const CU_STREAM_ATTRIBUTE_PRIORITY: CUstreamAttrID =
    CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PRIORITY;
/// `CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP`: stream spelling of the launch attribute.
pub const CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP: CUstreamAttrID =
    CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP;
/// `CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN`: stream spelling of the launch attribute.
pub const CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN: CUstreamAttrID =
    CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN;

// ---------------------------------------------------------------------------
// Callback types
// ---------------------------------------------------------------------------

/// `CUhostFn`: a host function enqueued on a stream or a graph host node.
pub type CUhostFn = Option<unsafe extern "C" fn(userData: *mut c_void)>;

/// `CUstreamCallback`: a stream callback (`cuStreamAddCallback`); `status`
/// is `CUDA_SUCCESS` or the stream's sticky error.
pub type CUstreamCallback =
    Option<unsafe extern "C" fn(hStream: CUstream, status: CUresult, userData: *mut c_void)>;
