//! `iree/hal/queue.h`: queue affinities.

/// `iree_hal_queue_affinity_t`: a bit per queue a command may run on.
pub type iree_hal_queue_affinity_t = u64;
/// `IREE_HAL_QUEUE_AFFINITY_ANY`: any queue the device picks.
pub const IREE_HAL_QUEUE_AFFINITY_ANY: iree_hal_queue_affinity_t = u64::MAX;
