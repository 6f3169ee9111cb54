//! Stream entry points.

use super::{hip_export, write_out};
use crate::context;
use crate::stream::{self, Stream};
use crate::stream_ops::{self, WaitCondition, Width, Word};
use crate::types::*;
use core::ffi::{c_int, c_uint, c_void};

fn create_stream(out: *mut hipStream_t, flags: c_uint, priority: c_int) -> crate::errors::HipResult<()> {
    if out.is_null() || flags & !hipStreamNonBlocking != 0 {
        return Err(hipErrorInvalidValue);
    }
    let device = context::current_device()?;
    let created = Stream::create(device.index, flags & hipStreamNonBlocking != 0, priority)?;
    let handle = stream::streams().insert(created);
    // SAFETY: `out` checked non-null above; the caller provides a writable hipStream_t.
    unsafe { write_out(out, handle as hipStream_t) }
}

hip_export!(
    fn hipStreamCreate(out: *mut hipStream_t) {
        create_stream(out, hipStreamDefault, 0)
    }
);

hip_export!(
    fn hipStreamCreateWithFlags(out: *mut hipStream_t, flags: c_uint) {
        create_stream(out, flags, 0)
    }
);

hip_export!(
    fn hipStreamCreateWithPriority(out: *mut hipStream_t, flags: c_uint, priority: c_int) {
        create_stream(out, flags, priority)
    }
);

hip_export!(
    fn hipDeviceGetStreamPriorityRange(least: *mut c_int, greatest: *mut c_int) {
        if !least.is_null() {
            write_out(least, 0)?;
        }
        if !greatest.is_null() {
            write_out(greatest, -1)?;
        }
        Ok(())
    }
);

hip_export!(
    /// Work already queued still runs; the worker exits once it is done, as in HIP.
    fn hipStreamDestroy(handle: hipStream_t) {
        if handle.is_null() {
            return Err(hipErrorInvalidHandle);
        }
        stream::streams().remove(handle as usize).map(drop).map_err(|_| stream::INVALID_STREAM)
    }
);

hip_export!(
    fn hipStreamSynchronize(handle: hipStream_t) {
        stream::resolve(handle as usize)?.synchronize()
    }
);

hip_export!(
    fn hipStreamQuery(handle: hipStream_t) {
        let target = stream::resolve(handle as usize)?;
        crate::runtime::device(target.device as i64)?.check_sticky_error()?;
        if target.is_idle() {
            Ok(())
        } else {
            Err(hipErrorNotReady)
        }
    }
);

hip_export!(
    fn hipStreamGetFlags(handle: hipStream_t, flags: *mut c_uint) {
        let target = stream::resolve(handle as usize)?;
        write_out(flags, target.flags)
    }
);

hip_export!(
    fn hipStreamGetPriority(handle: hipStream_t, priority: *mut c_int) {
        let target = stream::resolve(handle as usize)?;
        write_out(priority, target.priority)
    }
);

hip_export!(
    fn hipStreamGetDevice(handle: hipStream_t, device: *mut hipDevice_t) {
        let target = stream::resolve(handle as usize)?;
        write_out(device, target.device as hipDevice_t)
    }
);

hip_export!(
    fn hipStreamWaitEvent(handle: hipStream_t, event: hipEvent_t, flags: c_uint) {
        if flags != 0 {
            return Err(hipErrorInvalidValue);
        }
        let target = stream::resolve(handle as usize)?;
        let event = crate::event::events().get(event as usize)?;
        event.make_stream_wait(&target)
    }
);

/// Carries the C callback and its argument to the stream worker.
struct HostCallback {
    function: unsafe extern "C" fn(*mut c_void),
    user_data: usize,
}

hip_export!(
    /// The callback runs on the stream's worker thread in stream order; it may call HIP
    /// (enqueue onto other streams, record events) but must not wait on its own stream.
    /// Once work on the device has failed (a sticky error: a kernel failed, a peer of a
    /// collective went away), callbacks still queued are not called: HIP does not say, CUDA
    /// documents this for cudaLaunchHostFunc, and ROCm itself ends the process on a GPU
    /// exception, so no program can see a callback run after one. The stream's failure is
    /// reported by hipStreamQuery and hipStreamSynchronize.
    fn hipLaunchHostFunc(handle: hipStream_t, function: hipHostFn_t, user_data: *mut c_void) {
        let function = function.ok_or(hipErrorInvalidValue)?;
        let target = stream::resolve(handle as usize)?;
        let callback = HostCallback { function, user_data: user_data as usize };
        let device = target.device;
        target
            .enqueue(Box::new(move || {
                let callback = callback;
                let failed = crate::runtime::device(device as i64).map_or(true, |device| device.check_sticky_error().is_err());
                if failed {
                    return;
                }
                // SAFETY: the caller registered this function with this argument for
                // exactly one call on the stream (hipLaunchHostFunc's contract).
                unsafe { (callback.function)(callback.user_data as *mut c_void) }
            }))
            .map(|_| ())
    }
);

// ---- stream memory operations (src/stream_ops.rs) ---------------------------------------

hip_export!(
    /// Later work on the stream waits until `(*ptr & mask)` meets `value` under `flags`
    /// (hipStreamWaitValueGte/Eq/And/Nor). `ptr`: non-null, 4-byte aligned host memory.
    fn hipStreamWaitValue32(handle: hipStream_t, ptr: *mut c_void, value: u32, flags: c_uint, mask: u32) {
        let word = Word::new(ptr, Width::Bits32)?;
        let condition = WaitCondition::from_flags(flags)?;
        let target = stream::resolve(handle as usize)?;
        stream_ops::enqueue_wait(&target, word, condition, value as u64, mask as u64)
    }
);

hip_export!(
    /// As hipStreamWaitValue32 on an 8-byte aligned 64-bit word.
    fn hipStreamWaitValue64(handle: hipStream_t, ptr: *mut c_void, value: u64, flags: c_uint, mask: u64) {
        let word = Word::new(ptr, Width::Bits64)?;
        let condition = WaitCondition::from_flags(flags)?;
        let target = stream::resolve(handle as usize)?;
        stream_ops::enqueue_wait(&target, word, condition, value, mask)
    }
);

hip_export!(
    /// Stores `value` at `ptr` (non-null, 4-byte aligned) after earlier work on the stream;
    /// `flags` must be 0.
    fn hipStreamWriteValue32(handle: hipStream_t, ptr: *mut c_void, value: u32, flags: c_uint) {
        let word = Word::new(ptr, Width::Bits32)?;
        if flags != 0 {
            return Err(hipErrorInvalidValue);
        }
        let target = stream::resolve(handle as usize)?;
        stream_ops::enqueue_write(&target, word, value as u64)
    }
);

hip_export!(
    /// As hipStreamWriteValue32 for an 8-byte aligned 64-bit word.
    fn hipStreamWriteValue64(handle: hipStream_t, ptr: *mut c_void, value: u64, flags: c_uint) {
        let word = Word::new(ptr, Width::Bits64)?;
        if flags != 0 {
            return Err(hipErrorInvalidValue);
        }
        let target = stream::resolve(handle as usize)?;
        stream_ops::enqueue_write(&target, word, value)
    }
);
