//! Host functions on streams (`hipLaunchHostFunc`): a Rust value handed to a function that
//! HIP runs once, on its own thread, when the stream reaches it.

use super::types::hipStream_t;
use super::HipSymbols;
use crate::status::Status;

/// What HIP's callback gets back: the value and what to run on it, in one allocation.
struct Pending<T> {
    value: T,
    run: fn(T),
}

/// Enqueues `run(value)` on `stream`. If HIP refuses, the value comes back with the failure.
#[allow(clippy::not_unsafe_ptr_arg_deref)] // the stream is a handle, passed on to HIP
pub fn launch<T: Send + 'static>(hip: &HipSymbols, stream: hipStream_t, value: T, run: fn(T)) -> Result<(), (Status, T)> {
    let pending = Box::into_raw(Box::new(Pending { value, run }));
    match crate::hip_call!(hip, hipLaunchHostFunc(stream, Some(trampoline::<T>), pending.cast())) {
        Ok(()) => Ok(()),
        Err(status) => {
            // SAFETY: HIP did not take the callback, so the pending value is still ours.
            let pending = unsafe { Box::from_raw(pending) };
            Err((status, pending.value))
        }
    }
}

thread_local! {
    static IN_HOST_FUNCTION: core::cell::Cell<bool> = const { core::cell::Cell::new(false) };
}

/// Whether this thread is running one of our host functions, where HIP forbids HIP calls.
pub fn in_host_function() -> bool {
    IN_HOST_FUNCTION.with(core::cell::Cell::get)
}

/// Marks the thread as inside a host function while it lives.
struct InsideHostFunction;

impl InsideHostFunction {
    fn enter() -> InsideHostFunction {
        IN_HOST_FUNCTION.with(|inside| inside.set(true));
        InsideHostFunction
    }
}

impl Drop for InsideHostFunction {
    fn drop(&mut self) {
        IN_HOST_FUNCTION.with(|inside| inside.set(false));
    }
}

unsafe extern "C" fn trampoline<T: Send + 'static>(user_data: *mut core::ffi::c_void) {
    let _inside = InsideHostFunction::enter();
    crate::boundary::value_entry("iree_hal_hip_host_function", (), || {
        // SAFETY: the box `launch` handed to hipLaunchHostFunc, which HIP runs exactly once.
        let pending = unsafe { Box::from_raw(user_data.cast::<Pending<T>>()) };
        let Pending { value, run } = *pending;
        run(value)
    })
}
