//! IREE 3.13's async runtime, which a 3.13 HAL needs: its semaphores are IREE async
//! semaphores (IREE's core owns their timeline, failure and timepoints), and devices keep
//! the proactor pool they were created with. Reached through `async_glue.c`, compiled
//! against IREE 3.13's headers; the functions come from the IREE the library meets.
//!
//! This module is the only place that calls them: everything above uses `ProactorLease`
//! and `AsyncSemaphore` (`crate::semaphore`).

use crate::abi::*;
use crate::hal_object::Address;
use crate::status::{Result, Status};

// `iree_status_t` points at an opaque type: C never sees its (absent) fields.
#[allow(improper_ctypes)]
mod ffi {
    use crate::abi::*;

    extern "C" {
        pub fn iree_hal_hip_rs_async_available() -> bool;
        pub fn iree_hal_hip_rs_async_semaphore_initialize(
            vtable: *const iree_async_semaphore_vtable_t,
            proactor: *mut iree_async_proactor_t,
            initial_value: u64,
            frontier_offset: iree_host_size_t,
            semaphore: *mut iree_async_semaphore_t,
        );
        pub fn iree_hal_hip_rs_async_semaphore_deinitialize(semaphore: *mut iree_async_semaphore_t);
        pub fn iree_hal_hip_rs_async_semaphore_value(semaphore: *mut iree_async_semaphore_t) -> u64;
        pub fn iree_hal_hip_rs_async_semaphore_failure(semaphore: *mut iree_async_semaphore_t) -> iree_status_t;
        pub fn iree_hal_hip_rs_async_semaphore_signal(semaphore: *mut iree_async_semaphore_t, value: u64) -> iree_status_t;
        pub fn iree_hal_hip_rs_async_semaphore_fail(semaphore: *mut iree_async_semaphore_t, status: iree_status_t);
        pub fn iree_hal_hip_rs_async_semaphore_multi_wait(
            wait_mode: iree_async_wait_mode_t,
            semaphores: *mut *mut iree_async_semaphore_t,
            minimum_values: *const u64,
            count: iree_host_size_t,
            timeout: iree_timeout_t,
            flags: iree_async_wait_flags_t,
            allocator: iree_allocator_t,
        ) -> iree_status_t;
        pub fn iree_hal_hip_rs_async_semaphore_acquire_timepoint(
            semaphore: *mut iree_async_semaphore_t,
            minimum_value: u64,
            timepoint: *mut iree_async_semaphore_timepoint_t,
            callback: iree_async_semaphore_timepoint_fn_t,
            user_data: *mut core::ffi::c_void,
        ) -> iree_status_t;
        pub fn iree_hal_hip_rs_async_semaphore_cancel_timepoint(
            semaphore: *mut iree_async_semaphore_t,
            timepoint: *mut iree_async_semaphore_timepoint_t,
        ) -> bool;
        pub fn iree_hal_hip_rs_async_proactor_pool_retain(pool: *mut iree_async_proactor_pool_t);
        pub fn iree_hal_hip_rs_async_proactor_pool_release(pool: *mut iree_async_proactor_pool_t);
        pub fn iree_hal_hip_rs_async_proactor_pool_get(
            pool: *mut iree_async_proactor_pool_t,
            index: iree_host_size_t,
            out_proactor: *mut *mut iree_async_proactor_t,
        ) -> iree_status_t;
    }
}

/// FAILED_PRECONDITION unless IREE 3.13's async functions are in the process (the library
/// loaded without an IREE 3.13 runtime beside it).
pub fn require_async_runtime() -> Result<()> {
    // SAFETY: reads weak symbol addresses only.
    if unsafe { ffi::iree_hal_hip_rs_async_available() } {
        Ok(())
    } else {
        Err(crate::status!(
            FailedPrecondition,
            "IREE 3.13's async runtime (iree_async_semaphore_*, iree_async_proactor_pool_*) is not in this process: \
             this build of the driver must be linked into, or preloaded beside, an IREE 3.13 runtime"
        ))
    }
}

/// A device's hold on the proactor pool it was created with (IREE's rule: proactors live
/// as long as what uses them), and the proactor its semaphores use.
#[derive(Debug)]
pub struct ProactorLease {
    pool: Address,
    proactor: Address,
}

impl ProactorLease {
    /// Retains `create_params`' pool and takes its first proactor, as IREE's C driver does.
    pub fn acquire(create_params: &iree_hal_device_create_params_t) -> Result<ProactorLease> {
        require_async_runtime()?;
        let pool = create_params.proactor_pool;
        crate::boundary::non_null(pool, "create_params->proactor_pool")?;
        let mut proactor: *mut iree_async_proactor_t = core::ptr::null_mut();
        // SAFETY: a live pool (IREE's contract for the create call); the output is ours.
        unsafe {
            Status::from_raw(ffi::iree_hal_hip_rs_async_proactor_pool_get(pool, 0, &mut proactor))?;
            ffi::iree_hal_hip_rs_async_proactor_pool_retain(pool);
        }
        Ok(ProactorLease { pool: Address(pool.cast()), proactor: Address(proactor.cast()) })
    }

    pub fn proactor(&self) -> *mut iree_async_proactor_t {
        self.proactor.get().cast()
    }
}

impl Drop for ProactorLease {
    fn drop(&mut self) {
        // SAFETY: the reference `acquire` took.
        unsafe { ffi::iree_hal_hip_rs_async_proactor_pool_release(self.pool.get().cast()) }
    }
}

/// A device's place in its device group as IREE assigned it: plain data whose pointers are
/// IREE's (the topology and frontier tracker outlive the devices they describe).
#[derive(Clone, Copy, Default)]
pub struct TopologyInfo(pub iree_hal_device_topology_info_t);

// SAFETY: plain data; nothing here dereferences its pointers.
unsafe impl Send for TopologyInfo {}
unsafe impl Sync for TopologyInfo {}

/// A host call of IREE 3.13's `queue_host_call`: the caller's function and data, and where
/// it was queued, run once.
pub struct HostCall {
    device: Address,
    queue_affinity: iree_hal_queue_affinity_t,
    function: iree_hal_host_call_fn_t,
    user_data: Address,
    args: [u64; 4],
}

impl HostCall {
    /// # Safety
    /// `args` holds four readable values; the caller's function and data stay usable until
    /// the call ran (IREE's contract for host calls).
    pub unsafe fn new(device: *mut iree_hal_device_t, queue_affinity: iree_hal_queue_affinity_t, call: iree_hal_host_call_t, args: *const u64) -> Result<HostCall> {
        if call.fn_.is_none() {
            return Err(crate::status!(InvalidArgument, "queue_host_call: call.fn must not be NULL"));
        }
        crate::boundary::non_null(args, "args")?;
        // SAFETY: per the caller (read unaligned: any pointer C may pass).
        let args = unsafe { args.cast::<[u64; 4]>().read_unaligned() };
        Ok(HostCall { device: Address(device.cast()), queue_affinity, function: call.fn_, user_data: Address(call.user_data), args })
    }

    /// Makes the call with `signals` in its context, then signals them (OK), leaves them to
    /// the call (DEFERRED) or fails them with its status (any other failure). With no
    /// signals (NON_BLOCKING) a failure has nowhere to go and is dropped, as IREE does.
    pub fn run(self, signals: &[(crate::semaphore::SemaphoreRef, u64)]) {
        let mut handles: Vec<*mut iree_hal_semaphore_t> = signals.iter().map(|(semaphore, _)| semaphore.as_raw()).collect();
        let mut values: Vec<u64> = signals.iter().map(|(_, value)| *value).collect();
        let mut context = iree_hal_host_call_context_t {
            device: self.device.get().cast(),
            queue_affinity: self.queue_affinity,
            signal_semaphore_list: iree_hal_semaphore_list_t { count: signals.len(), semaphores: handles.as_mut_ptr(), payload_values: values.as_mut_ptr() },
        };
        let function = self.function.expect("checked when made");
        // SAFETY: the caller's function with its data (per `new`'s contract), four args and
        // a context that lives through the call; the status it returns is ours.
        let outcome = unsafe { Status::from_raw(function(self.user_data.get(), self.args.as_ptr(), &mut context)) };
        match outcome {
            Ok(()) => {
                for (semaphore, value) in signals {
                    if let Err(status) = semaphore.signal(*value) {
                        semaphore.fail(status);
                    }
                }
            }
            Err(status) if status.code() == crate::status::StatusCode::Deferred => {}
            Err(status) => {
                for (semaphore, _) in signals {
                    semaphore.fail(status.duplicate());
                }
            }
        }
    }
}

/// The calls on one embedded async semaphore (`iree_hal_semaphore_t::async_semaphore`).
/// Each is IREE's function of the same name; `semaphore` must point at an async semaphore
/// that `initialize` set up and `deinitialize` has not yet torn down.
pub mod semaphore {
    use super::ffi;
    use crate::abi::*;
    use crate::status::{Result, Status};

    /// # Safety
    /// `semaphore` is an allocated, not yet initialised async semaphore at its final address
    /// with `frontier_offset` bytes from it room for an `iree_async_frontier_t`.
    pub unsafe fn initialize(
        semaphore: *mut iree_async_semaphore_t,
        vtable: &'static iree_hal_semaphore_vtable_t,
        proactor: *mut iree_async_proactor_t,
        initial_value: u64,
        frontier_offset: usize,
    ) {
        let vtable: *const iree_async_semaphore_vtable_t = &vtable.async_;
        // SAFETY: per the caller.
        unsafe { ffi::iree_hal_hip_rs_async_semaphore_initialize(vtable, proactor, initial_value, frontier_offset, semaphore) }
    }

    /// # Safety
    /// As the module says; afterwards the semaphore must not be used.
    pub unsafe fn deinitialize(semaphore: *mut iree_async_semaphore_t) {
        // SAFETY: per the caller.
        unsafe { ffi::iree_hal_hip_rs_async_semaphore_deinitialize(semaphore) }
    }

    /// # Safety
    /// As the module says.
    pub unsafe fn value(semaphore: *mut iree_async_semaphore_t) -> u64 {
        // SAFETY: per the caller.
        unsafe { ffi::iree_hal_hip_rs_async_semaphore_value(semaphore) }
    }

    /// A copy of the first failure, if any.
    ///
    /// # Safety
    /// As the module says.
    pub unsafe fn failure(semaphore: *mut iree_async_semaphore_t) -> Option<Status> {
        // SAFETY: per the caller; the failure stays owned by the semaphore, we copy it.
        let raw = unsafe { ffi::iree_hal_hip_rs_async_semaphore_failure(semaphore) };
        if raw.is_null() {
            None
        } else {
            // SAFETY: a live status owned by the semaphore until it is deinitialised.
            Some(unsafe { Status::duplicate_raw(raw) })
        }
    }

    /// The failure itself, still owned by the semaphore (for the query encoding IREE's core
    /// decodes), or NULL.
    ///
    /// # Safety
    /// As the module says.
    pub unsafe fn failure_raw(semaphore: *mut iree_async_semaphore_t) -> iree_status_t {
        // SAFETY: per the caller.
        unsafe { ffi::iree_hal_hip_rs_async_semaphore_failure(semaphore) }
    }

    /// Advances the timeline to `value` and runs the timepoints it satisfies.
    ///
    /// # Safety
    /// As the module says.
    pub unsafe fn signal(semaphore: *mut iree_async_semaphore_t, value: u64) -> Result<()> {
        // SAFETY: per the caller.
        unsafe { Status::from_raw(ffi::iree_hal_hip_rs_async_semaphore_signal(semaphore, value)) }
    }

    /// Records the first failure (later ones are dropped) and fails every timepoint.
    ///
    /// # Safety
    /// As the module says.
    pub unsafe fn fail(semaphore: *mut iree_async_semaphore_t, status: Status) {
        // SAFETY: per the caller; IREE takes ownership of the status.
        unsafe { ffi::iree_hal_hip_rs_async_semaphore_fail(semaphore, status.into_raw()) }
    }

    /// Blocks until the semaphores reach their values (ALL or ANY), fail, or the timeout.
    ///
    /// # Safety
    /// Every pointer in `semaphores` is a live async semaphore of any origin.
    pub unsafe fn multi_wait(
        mode: iree_async_wait_mode_t,
        semaphores: &mut [*mut iree_async_semaphore_t],
        values: &[u64],
        timeout: iree_timeout_t,
        flags: iree_async_wait_flags_t,
        allocator: iree_allocator_t,
    ) -> Result<()> {
        debug_assert_eq!(semaphores.len(), values.len());
        // SAFETY: per the caller; both arrays have `len` entries.
        unsafe {
            Status::from_raw(ffi::iree_hal_hip_rs_async_semaphore_multi_wait(
                mode,
                semaphores.as_mut_ptr(),
                values.as_ptr(),
                semaphores.len(),
                timeout,
                flags,
                allocator,
            ))
        }
    }

    /// Registers `timepoint` for `value`; `callback` may run before this returns.
    ///
    /// # Safety
    /// `timepoint` stays at its address until the callback ran or `cancel_timepoint`
    /// returned true; `user_data` is what the callback expects.
    pub unsafe fn acquire_timepoint(
        semaphore: *mut iree_async_semaphore_t,
        value: u64,
        timepoint: *mut iree_async_semaphore_timepoint_t,
        callback: iree_async_semaphore_timepoint_fn_t,
        user_data: *mut core::ffi::c_void,
    ) -> Result<()> {
        // SAFETY: per the caller.
        unsafe { Status::from_raw(ffi::iree_hal_hip_rs_async_semaphore_acquire_timepoint(semaphore, value, timepoint, callback, user_data)) }
    }

    /// Whether the timepoint was still pending (then its callback never runs).
    ///
    /// # Safety
    /// `timepoint` was acquired on `semaphore`.
    pub unsafe fn cancel_timepoint(semaphore: *mut iree_async_semaphore_t, timepoint: *mut iree_async_semaphore_timepoint_t) -> bool {
        // SAFETY: per the caller.
        unsafe { ffi::iree_hal_hip_rs_async_semaphore_cancel_timepoint(semaphore, timepoint) }
    }
}
