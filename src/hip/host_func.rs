//! Host functions on streams (`hipLaunchHostFunc`): a Rust value handed to a function that
//! HIP runs once, on its own thread, when the stream reaches it.

use super::types::hipStream_t;
use super::HipSymbols;
use crate::status::Status;

/// A value and the function HIP runs on it, in one allocation. The function gets the box
/// whole, so it can keep it for the next call instead of freeing it on HIP's thread (memory
/// another thread allocated: glibc's `free` took ~1 µs there, contending with that thread).
pub struct HostCall<T> {
    pub value: T,
    run: fn(Box<HostCall<T>>),
}

impl<T> HostCall<T> {
    pub fn new(value: T, run: fn(Box<HostCall<T>>)) -> Box<HostCall<T>> {
        Box::new(HostCall { value, run })
    }
}

/// Enqueues `run(value)` on `stream`. If HIP refuses, the value comes back with the failure.
pub fn launch<T: Send + 'static>(hip: &HipSymbols, stream: hipStream_t, value: T, run: fn(T)) -> Result<(), (Status, T)> {
    let call = HostCall::new((value, run), |call| {
        let (value, run) = call.value;
        run(value)
    });
    launch_call(hip, stream, call).map_err(|(status, call)| (status, call.value.0))
}

/// Enqueues `call` on `stream`: HIP runs its function on it once. If HIP refuses, the call
/// comes back with the failure.
#[allow(clippy::not_unsafe_ptr_arg_deref)] // the stream is a handle, passed on to HIP
pub fn launch_call<T: Send + 'static>(hip: &HipSymbols, stream: hipStream_t, call: Box<HostCall<T>>) -> Result<(), (Status, Box<HostCall<T>>)> {
    let pending = Box::into_raw(call);
    match crate::hip_call!(hip, hipLaunchHostFunc(stream, Some(trampoline::<T>), pending.cast())) {
        Ok(()) => Ok(()),
        // SAFETY: HIP did not take the callback, so the call is still ours.
        Err(status) => Err((status, unsafe { Box::from_raw(pending) })),
    }
}

thread_local! {
    static IN_HOST_FUNCTION: core::cell::Cell<bool> = const { core::cell::Cell::new(false) };
}

/// Whether this thread is running one of our host functions, where HIP forbids HIP calls.
pub fn in_host_function() -> bool {
    IN_HOST_FUNCTION.with(core::cell::Cell::get)
}

/// HIP calls made inside our host functions, process wide: always a bug (HIP forbids them,
/// and a real GPU's runtime may deadlock on one), counted where the software device lets
/// them through so that tests can tell.
static HIP_CALLS_IN_HOST_FUNCTIONS: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(0);

/// How many HIP calls our host functions made so far (`HipSymbols::check` counts them).
pub fn hip_calls_in_host_functions() -> u64 {
    HIP_CALLS_IN_HOST_FUNCTIONS.load(core::sync::atomic::Ordering::Relaxed)
}

/// Counts a HIP call made on this thread if it is inside one of our host functions.
#[inline]
pub fn note_hip_call() {
    if in_host_function() {
        HIP_CALLS_IN_HOST_FUNCTIONS.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
    }
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
        // SAFETY: the box `launch_call` handed to hipLaunchHostFunc, which HIP runs exactly once.
        let call = unsafe { Box::from_raw(user_data.cast::<HostCall<T>>()) };
        (call.run)(call)
    })
}
