//! `iree/base/time.h`: absolute times, durations and timeouts.

/// `iree_time_t`: nanoseconds on IREE's clock (CLOCK_REALTIME on Linux in v3.3.0).
pub type iree_time_t = i64;
/// `IREE_TIME_INFINITE_PAST`: a deadline that has always elapsed.
pub const IREE_TIME_INFINITE_PAST: iree_time_t = i64::MIN;
/// `IREE_TIME_INFINITE_FUTURE`: a deadline that never elapses.
pub const IREE_TIME_INFINITE_FUTURE: iree_time_t = i64::MAX;

/// `iree_duration_t`: a span of nanoseconds.
pub type iree_duration_t = i64;
/// `IREE_DURATION_ZERO`.
pub const IREE_DURATION_ZERO: iree_duration_t = 0;
/// `IREE_DURATION_INFINITE`.
pub const IREE_DURATION_INFINITE: iree_duration_t = i64::MAX;

/// `iree_timeout_type_t` (a C enum): how `iree_timeout_t::nanos` is read.
pub type iree_timeout_type_t = u32;
/// `nanos` is a deadline (an `iree_time_t`).
pub const IREE_TIMEOUT_ABSOLUTE: iree_timeout_type_t = 0;
/// `nanos` is a duration from now (an `iree_duration_t`).
pub const IREE_TIMEOUT_RELATIVE: iree_timeout_type_t = 1;

/// `iree_timeout_t`: a deadline or a relative timeout.
///
/// cbindgen:field-names=[type, nanos]
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct iree_timeout_t {
    pub type_: iree_timeout_type_t,
    pub nanos: iree_time_t,
}

const _: () = assert!(core::mem::size_of::<iree_timeout_t>() == 16);
const _: () = assert!(core::mem::offset_of!(iree_timeout_t, nanos) == 8);
