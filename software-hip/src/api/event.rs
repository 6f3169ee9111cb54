//! Event entry points.

use super::{hip_export, write_out};
use crate::event::{self, Event};
use crate::stream;
use crate::types::*;
use core::ffi::c_uint;

fn create_event(out: *mut hipEvent_t, flags: c_uint) -> crate::errors::HipResult<()> {
    if out.is_null() {
        return Err(hipErrorInvalidValue);
    }
    let handle = event::events().insert(Event::new(flags)?);
    // SAFETY: `out` checked non-null; the caller provides a writable hipEvent_t.
    unsafe { write_out(out, handle as hipEvent_t) }
}

hip_export!(
    fn hipEventCreate(out: *mut hipEvent_t) {
        create_event(out, hipEventDefault)
    }
);

hip_export!(
    fn hipEventCreateWithFlags(out: *mut hipEvent_t, flags: c_uint) {
        create_event(out, flags)
    }
);

hip_export!(
    fn hipEventDestroy(handle: hipEvent_t) {
        event::events().remove(handle as usize).map(drop)
    }
);

hip_export!(
    fn hipEventRecord(handle: hipEvent_t, stream_handle: hipStream_t) {
        let event = event::events().get(handle as usize)?;
        let target = stream::resolve(stream_handle as usize)?;
        event.record(&target)
    }
);

hip_export!(
    fn hipEventQuery(handle: hipEvent_t) {
        event::events().get(handle as usize)?.query()
    }
);

hip_export!(
    fn hipEventSynchronize(handle: hipEvent_t) {
        event::events().get(handle as usize)?.synchronize();
        // Pools over their release thresholds give memory back at event synchronizations
        // too (the calling thread's device: events do not keep theirs).
        if let Ok(device) = crate::context::current_device() {
            device.release_pools_over_threshold();
        }
        Ok(())
    }
);

hip_export!(
    fn hipEventElapsedTime(milliseconds: *mut f32, start: hipEvent_t, stop: hipEvent_t) {
        if milliseconds.is_null() {
            return Err(hipErrorInvalidValue);
        }
        let start = event::events().get(start as usize)?;
        let stop = event::events().get(stop as usize)?;
        write_out(milliseconds, event::elapsed_milliseconds(&start, &stop)?)
    }
);
