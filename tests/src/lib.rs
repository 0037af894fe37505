//! Shared helpers of the hardware test suite.
