//! IREE 3.13's async runtime, which a 3.13 HAL needs: its semaphores are IREE async
//! semaphores (IREE's core owns their timeline, failure and timepoints), and devices keep
//! the proactor pool they were created with. Reached through `async_glue.c`, compiled
//! against IREE 3.13's headers; the functions come from the IREE the library meets.
//!
//! This module is the only place that calls them: everything above uses `ProactorLease`,
//! `EmbeddedAsyncSemaphore` (`crate::semaphore`) and `HostCall`.

use crate::abi::*;
use crate::hal_object::Address;
use crate::status::{Result, Status};

pub mod pool;

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

/// IREE's async semaphore at the start of each of our 3.13 semaphores. IREE's core reads and
/// changes it from any thread (it is its own synchronised object), hence the cell; this type
/// is the one place that calls IREE's functions on it.
///
/// Invariant: `initialize` ran on it at its final address before any other method, and
/// `deinitialize` runs once, last (`unplaced`'s contract).
#[repr(transparent)]
pub struct EmbeddedAsyncSemaphore(core::cell::UnsafeCell<iree_hal_semaphore_t>);

// SAFETY: IREE's async semaphore is thread-safe: its state is atomics and a mutex.
unsafe impl Send for EmbeddedAsyncSemaphore {}
unsafe impl Sync for EmbeddedAsyncSemaphore {}

/// One registration: IREE's timepoint (first, so that IREE's pointer to it is ours too) and
/// the callback it runs.
#[repr(C)]
struct Timepoint {
    timepoint: iree_async_semaphore_timepoint_t,
    callback: Option<crate::semaphore::TimepointCallback>,
}

/// IREE runs a timepoint once: with OK, or with a status it hands over.
unsafe extern "C" fn timepoint_fired(user_data: *mut core::ffi::c_void, _timepoint: *mut iree_async_semaphore_timepoint_t, status: iree_status_t) {
    crate::boundary::value_entry("iree_hal_hip_semaphore_timepoint", (), || {
        // SAFETY: `user_data` is the box `add_timepoint` leaked for this one call, and the
        // status is ours to own.
        let (mut timepoint, outcome) = unsafe { (Box::from_raw(user_data.cast::<Timepoint>()), Status::from_raw(status)) };
        if let Some(callback) = timepoint.callback.take() {
            crate::semaphore::run_timepoint(callback, outcome);
        }
    })
}

impl EmbeddedAsyncSemaphore {
    /// Storage for one, zeroed.
    ///
    /// # Safety
    /// `initialize` must run on it, at its final address, before any other method, and
    /// `deinitialize` once when it is done with.
    pub unsafe fn unplaced() -> EmbeddedAsyncSemaphore {
        EmbeddedAsyncSemaphore(core::cell::UnsafeCell::new(iree_hal_semaphore_t { async_semaphore: Default::default() }))
    }

    fn raw(&self) -> *mut iree_async_semaphore_t {
        self.0.get().cast()
    }

    /// Sets it up with our vtable, the device's proactor and no causal frontier.
    ///
    /// # Safety
    /// `self` is at its final address and not yet shared; `frontier_offset` bytes from it
    /// lies room for an `iree_async_frontier_t` in the same allocation.
    pub unsafe fn initialize(&self, vtable: &'static iree_hal_semaphore_vtable_t, proactor: &ProactorLease, initial_value: u64, frontier_offset: usize) {
        let vtable: *const iree_async_semaphore_vtable_t = &vtable.async_;
        // SAFETY: per the caller.
        unsafe { ffi::iree_hal_hip_rs_async_semaphore_initialize(vtable, proactor.proactor(), initial_value, frontier_offset, self.raw()) }
    }

    /// Runs the timepoints still pending with CANCELLED and frees the failure.
    ///
    /// # Safety
    /// Last use: nothing touches it afterwards.
    pub unsafe fn deinitialize(&self) {
        // SAFETY: per the caller; initialised per the invariant.
        unsafe { ffi::iree_hal_hip_rs_async_semaphore_deinitialize(self.raw()) }
    }

    /// The current value.
    pub fn value(&self) -> u64 {
        // SAFETY: initialised (the invariant).
        unsafe { ffi::iree_hal_hip_rs_async_semaphore_value(self.raw()) }
    }

    /// A copy of the first failure, if any.
    pub fn failure(&self) -> Option<Status> {
        // SAFETY: initialised; the failure stays the semaphore's (live until deinitialize),
        // this copies it.
        let raw = unsafe { ffi::iree_hal_hip_rs_async_semaphore_failure(self.raw()) };
        (!raw.is_null()).then(|| unsafe { Status::duplicate_raw(raw) })
    }

    /// IREE's query answer: the value, or the first failure encoded as IREE's core decodes it
    /// (`iree_hal_status_as_semaphore_failure`; the status stays the semaphore's).
    pub fn query_encoded(&self) -> u64 {
        // SAFETY: initialised (the invariant).
        let failure = unsafe { ffi::iree_hal_hip_rs_async_semaphore_failure(self.raw()) };
        if failure.is_null() {
            self.value()
        } else {
            IREE_HAL_SEMAPHORE_FAILURE_VALUE_STATUS_BIT | failure as u64
        }
    }

    /// Advances the timeline to `value` and runs the timepoints it satisfies.
    pub fn signal(&self, value: u64) -> Result<()> {
        // SAFETY: initialised (the invariant).
        unsafe { Status::from_raw(ffi::iree_hal_hip_rs_async_semaphore_signal(self.raw(), value)) }
    }

    /// Records the first failure (later ones are dropped) and fails every timepoint.
    pub fn fail(&self, status: Status) {
        // SAFETY: initialised; IREE takes ownership of the status.
        unsafe { ffi::iree_hal_hip_rs_async_semaphore_fail(self.raw(), status.into_raw()) }
    }

    /// Blocks until the value reaches `value`, the semaphore fails or the timeout passes
    /// (IREE's multi-wait over this one semaphore).
    pub fn wait(&self, value: u64, timeout: iree_timeout_t, flags: iree_async_wait_flags_t, allocator: iree_allocator_t) -> Result<()> {
        let mut semaphores = [self.raw()];
        // SAFETY: initialised; one semaphore and one value.
        unsafe {
            Status::from_raw(ffi::iree_hal_hip_rs_async_semaphore_multi_wait(
                IREE_ASYNC_WAIT_MODE_ALL as iree_async_wait_mode_t,
                semaphores.as_mut_ptr(),
                &value,
                1,
                timeout,
                flags,
                allocator,
            ))
        }
    }

    /// Runs `callback` once, when the value reaches `value`, the semaphore fails or it is
    /// destroyed; at once, on this thread, if that already happened.
    pub fn add_timepoint(&self, value: u64, callback: crate::semaphore::TimepointCallback) {
        let timepoint = Box::into_raw(Box::new(Timepoint { timepoint: Default::default(), callback: Some(callback) }));
        // SAFETY: initialised; the box stays at its address until `timepoint_fired` takes it
        // back, which IREE calls exactly once (this driver never cancels).
        let registered = unsafe {
            Status::from_raw(ffi::iree_hal_hip_rs_async_semaphore_acquire_timepoint(
                self.raw(),
                value,
                core::ptr::addr_of_mut!((*timepoint).timepoint),
                Some(timepoint_fired),
                timepoint.cast(),
            ))
        };
        if let Err(status) = registered {
            // IREE's acquire does not fail today; if it ever does, the callback still runs.
            // SAFETY: not registered, so still ours.
            let mut timepoint = unsafe { Box::from_raw(timepoint) };
            if let Some(callback) = timepoint.callback.take() {
                crate::semaphore::run_timepoint(callback, Err(status));
            }
        }
    }
}
