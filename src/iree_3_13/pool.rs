//! IREE 3.13's allocation pools and notifications, reached through `pool_glue.c`: the one
//! place that calls a caller's `iree_hal_pool_t` or an `iree_async_notification_t`.
//! Everything above (`crate::queue_pool`) uses `CallerPool`, `Reservation`, `Acquired` and
//! `Notification`.

use crate::abi::*;
use crate::hal_object::{Address, Retained};
use crate::status::{Result, Status};

/// IREE's `iree_async_axis_t`: one timeline of a frontier (here, one of our queues).
pub type Axis = u64;

#[allow(improper_ctypes)]
mod ffi {
    use crate::abi::*;

    extern "C" {
        pub fn iree_hal_hip_rs_notification_available() -> bool;
        pub fn iree_hal_hip_rs_notification_create(
            proactor: *mut iree_async_proactor_t,
            out_notification: *mut *mut iree_async_notification_t,
        ) -> iree_status_t;
        pub fn iree_hal_hip_rs_notification_release(notification: *mut iree_async_notification_t);
        pub fn iree_hal_hip_rs_notification_epoch(notification: *mut iree_async_notification_t) -> u32;
        pub fn iree_hal_hip_rs_pool_acquire(
            pool: *mut iree_hal_pool_t,
            size: iree_device_size_t,
            alignment: iree_device_size_t,
            flags: u32,
            out_reservation: *mut iree_hal_pool_reservation_t,
            out_wait_frontier: *mut *const iree_async_frontier_t,
            out_result: *mut u32,
        ) -> iree_status_t;
        pub fn iree_hal_hip_rs_pool_release(
            pool: *mut iree_hal_pool_t,
            reservation: *const iree_hal_pool_reservation_t,
            death_frontier: *const iree_async_frontier_t,
        );
        pub fn iree_hal_hip_rs_pool_release_at(pool: *mut iree_hal_pool_t, reservation: *const iree_hal_pool_reservation_t, axis: u64, epoch: u64);
        pub fn iree_hal_hip_rs_pool_materialize(
            pool: *mut iree_hal_pool_t,
            params: *const iree_hal_buffer_params_t,
            reservation: *const iree_hal_pool_reservation_t,
            out_buffer: *mut *mut iree_hal_buffer_t,
        ) -> iree_status_t;
        pub fn iree_hal_hip_rs_pool_notification(pool: *mut iree_hal_pool_t) -> *mut iree_async_notification_t;
        pub fn iree_hal_hip_rs_frontier_entry_count(frontier: *const iree_async_frontier_t) -> iree_host_size_t;
        pub fn iree_hal_hip_rs_frontier_entry(frontier: *const iree_async_frontier_t, index: iree_host_size_t, out_axis: *mut u64, out_epoch: *mut u64);
    }
}

/// FAILED_PRECONDITION unless IREE 3.13's notification functions are in the process.
fn require_notifications() -> Result<()> {
    // SAFETY: reads weak symbol addresses only.
    if unsafe { ffi::iree_hal_hip_rs_notification_available() } {
        Ok(())
    } else {
        Err(crate::status!(
            FailedPrecondition,
            "IREE 3.13's async notifications (iree_async_notification_*) are not in this process: \
             queue allocation pools need the driver linked into, or preloaded beside, an IREE 3.13 runtime"
        ))
    }
}

/// An owned reference to an IREE notification.
#[derive(Debug)]
pub struct Notification(Address);

impl Notification {
    /// A new notification on `proactor` (which must outlive it).
    pub fn create(proactor: *mut iree_async_proactor_t) -> Result<Notification> {
        require_notifications()?;
        let mut notification = core::ptr::null_mut();
        // SAFETY: a live proactor (the device's lease); the output is ours.
        unsafe { Status::from_raw(ffi::iree_hal_hip_rs_notification_create(proactor, &mut notification))? };
        Ok(Notification(Address(notification.cast())))
    }

    pub fn as_ptr(&self) -> *mut iree_async_notification_t {
        self.0.get().cast()
    }
}

impl Drop for Notification {
    fn drop(&mut self) {
        // SAFETY: the reference `create` returned.
        unsafe { ffi::iree_hal_hip_rs_notification_release(self.as_ptr()) }
    }
}

/// A notification's epoch now: it changes each time the notification is signalled.
/// `notification` must be live (a pool's, which the pool's owner keeps alive).
fn notification_epoch(notification: Address) -> u32 {
    // SAFETY: per the caller's contract with the pool.
    unsafe { ffi::iree_hal_hip_rs_notification_epoch(notification.get().cast()) }
}

/// A caller's pool, borrowed: IREE's rule is that a pool outlives every reservation and
/// buffer made from it, so whoever holds one of those may use the pool.
#[derive(Clone, Copy, Debug)]
pub struct CallerPool(Address);

/// One reservation of a caller's pool, given back exactly once (`release*`).
pub struct Reservation {
    pool: CallerPool,
    reservation: iree_hal_pool_reservation_t,
    /// The pool's frontier the reservation waits on (NEEDS_WAIT), owned by the pool until
    /// the reservation is released.
    wait_frontier: Address,
}

// SAFETY: plain values and addresses of pool-owned data, which the pool synchronises.
unsafe impl Send for Reservation {}

/// What an acquisition gives.
pub enum Acquired {
    /// The bytes may be used at once.
    Ready(Reservation),
    /// The bytes may be used once every `(axis, epoch)` is reached.
    AfterFrontier(Reservation, Vec<(Axis, u64)>),
    /// Nothing to reserve now; retry once the pool's notification moved past `token`.
    Exhausted { token: u32 },
}

impl CallerPool {
    /// The pool queue_alloca was handed. IREE's contract for it: a live `iree_hal_pool_t`
    /// that outlives every reservation and buffer made from it, which is what this type's
    /// calls into the pool rely on.
    pub fn new(pool: *mut iree_hal_pool_t) -> Result<CallerPool> {
        crate::boundary::non_null(pool, "pool")?;
        Ok(CallerPool(Address(pool.cast())))
    }

    fn raw(self) -> *mut iree_hal_pool_t {
        self.0.get().cast()
    }

    /// The pool's notification, which its releases signal.
    fn notification(self) -> Result<Address> {
        // SAFETY: a live pool (`new`).
        let notification = unsafe { ffi::iree_hal_hip_rs_pool_notification(self.raw()) };
        crate::boundary::non_null(notification, "the pool's notification")?;
        Ok(Address(notification.cast()))
    }

    /// Whether the pool's notification moved past `token`.
    pub fn notified_since(self, token: u32) -> Result<bool> {
        Ok(notification_epoch(self.notification()?) != token)
    }

    /// Tries to reserve `size` bytes, allowing NEEDS_WAIT answers (the caller decides what to
    /// do with them).
    pub fn acquire(self, size: u64, alignment: u64) -> Result<Acquired> {
        // Observed before trying, so that a release racing with the attempt still counts.
        let token = notification_epoch(self.notification()?);
        let mut reservation = iree_hal_pool_reservation_t::default();
        let mut wait_frontier = core::ptr::null();
        let mut result = 0u32;
        // SAFETY: a live pool (`new`); the outputs are ours.
        unsafe {
            Status::from_raw(ffi::iree_hal_hip_rs_pool_acquire(
                self.raw(),
                size,
                alignment,
                IREE_HAL_POOL_RESERVE_FLAG_ALLOW_WAIT_FRONTIER,
                &mut reservation,
                &mut wait_frontier,
                &mut result,
            ))?
        };
        let held = |wait_frontier: *const iree_async_frontier_t| Reservation { pool: self, reservation, wait_frontier: Address(wait_frontier as *mut _) };
        match result {
            IREE_HAL_POOL_ACQUIRE_OK | IREE_HAL_POOL_ACQUIRE_OK_FRESH => Ok(Acquired::Ready(held(core::ptr::null()))),
            IREE_HAL_POOL_ACQUIRE_OK_NEEDS_WAIT => {
                // SAFETY: the pool's frontier, valid while the reservation is held.
                let count = unsafe { ffi::iree_hal_hip_rs_frontier_entry_count(wait_frontier) };
                let entries = (0..count)
                    .map(|index| {
                        let (mut axis, mut epoch) = (0u64, 0u64);
                        // SAFETY: `index` is below the frontier's count.
                        unsafe { ffi::iree_hal_hip_rs_frontier_entry(wait_frontier, index, &mut axis, &mut epoch) };
                        (axis, epoch)
                    })
                    .collect();
                Ok(Acquired::AfterFrontier(held(wait_frontier), entries))
            }
            IREE_HAL_POOL_ACQUIRE_EXHAUSTED | IREE_HAL_POOL_ACQUIRE_OVER_BUDGET => Ok(Acquired::Exhausted { token }),
            other => Err(crate::status!(Internal, "the pool answered an unknown acquisition result {other}")),
        }
    }
}

impl Reservation {
    /// The reserved bytes as a buffer of the pool's making (a view: the reservation stays
    /// ours).
    pub fn materialize(&self, params: &iree_hal_buffer_params_t) -> Result<Retained<iree_hal_buffer_t>> {
        let mut buffer = core::ptr::null_mut();
        // SAFETY: a live pool and one of its live reservations; the output is ours.
        unsafe { Status::from_raw(ffi::iree_hal_hip_rs_pool_materialize(self.pool.raw(), params, &self.reservation, &mut buffer))? };
        // SAFETY: a new buffer with one reference, which this takes.
        unsafe { Retained::adopt(buffer) }.ok_or_else(|| crate::status!(Internal, "the pool materialized no buffer"))
    }

    /// Gives the bytes back, usable by others once `axis` reached `epoch`.
    pub fn release_at(self, axis: Axis, epoch: u64) {
        // SAFETY: a live pool and its live reservation, released once (consumed).
        unsafe { ffi::iree_hal_hip_rs_pool_release_at(self.pool.raw(), &self.reservation, axis, epoch) }
    }

    /// Gives the bytes back, usable by others at once (nothing of ours uses them any more).
    pub fn release_idle(self) {
        // SAFETY: as `release_at`.
        unsafe { ffi::iree_hal_hip_rs_pool_release(self.pool.raw(), &self.reservation, core::ptr::null()) }
    }

    /// Gives the bytes back as they were before this reservation took them: after the
    /// frontier it came with, or at once.
    pub fn release(self) {
        // SAFETY: as `release_at`; the frontier is the pool's own for this reservation.
        unsafe { ffi::iree_hal_hip_rs_pool_release(self.pool.raw(), &self.reservation, self.wait_frontier.get() as *const _) }
    }
}

/// What answers a pool's epoch queries (IREE's try-before-fence): whether an axis reached an
/// epoch.
pub trait EpochSource: Sync + 'static {
    fn reached(&self, axis: Axis, epoch: u64) -> bool;
}

/// IREE's epoch query over `source`, which must outlive every pool made with it (IREE's
/// contract for a device's queue pool backend: the device outlives those pools).
pub fn epoch_query<T: EpochSource>(source: &T) -> iree_hal_pool_epoch_query_t {
    unsafe extern "C" fn query<T: EpochSource>(user_data: *mut core::ffi::c_void, axis: Axis, epoch: u64) -> bool {
        // SAFETY: `user_data` is the `&T` below, alive for as long as pools may ask.
        let source = unsafe { &*(user_data as *const T) };
        // No panic crosses into C: an unanswerable query is "not reached".
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| source.reached(axis, epoch))).unwrap_or(false)
    }
    iree_hal_pool_epoch_query_t { fn_: Some(query::<T>), user_data: source as *const T as *mut core::ffi::c_void }
}
