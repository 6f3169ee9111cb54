//! What a command buffer records: a list of commands in safe Rust, each holding references
//! to the HAL objects it names, and how a recorded buffer reference becomes a device
//! address range once the binding table of a submission is known.

use crate::abi::*;
use crate::buffer::{BufferMemory, HipBuffer};
pub(crate) use crate::event::RetainedEvent;
use crate::status::Result;
use core::ffi::c_void;

/// One reference to a HAL buffer, released when dropped.
pub(crate) struct RetainedBuffer(*mut iree_hal_buffer_t);

// SAFETY: HAL buffers are reference counted atomically and immutable in what we read
// (header fields and our HipBuffer's pointers), so references may move across threads.
unsafe impl Send for RetainedBuffer {}
unsafe impl Sync for RetainedBuffer {}

impl RetainedBuffer {
    /// # Safety
    /// `buffer` must be a live HAL buffer.
    pub(crate) unsafe fn retain(buffer: *mut iree_hal_buffer_t) -> RetainedBuffer {
        // SAFETY: per the caller.
        unsafe { crate::hal_resource::retain(buffer) };
        RetainedBuffer(buffer)
    }

    pub(crate) fn as_ptr(&self) -> *mut iree_hal_buffer_t {
        self.0
    }
}

impl Drop for RetainedBuffer {
    fn drop(&mut self) {
        // SAFETY: we own the reference taken in `retain`.
        unsafe { crate::hal_resource::release_buffer(self.0) };
    }
}

/// One reference to a HAL executable, released when dropped.
pub(crate) struct RetainedExecutable(*mut iree_hal_executable_t);

// SAFETY: as for buffers: atomic reference counts, immutable after creation.
unsafe impl Send for RetainedExecutable {}
unsafe impl Sync for RetainedExecutable {}

impl RetainedExecutable {
    /// # Safety
    /// `executable` must be a live HAL executable.
    pub(crate) unsafe fn retain(executable: *mut iree_hal_executable_t) -> RetainedExecutable {
        // SAFETY: per the caller.
        unsafe { crate::hal_resource::retain(executable) };
        RetainedExecutable(executable)
    }

    pub(crate) fn as_ptr(&self) -> *mut iree_hal_executable_t {
        self.0
    }
}

impl Drop for RetainedExecutable {
    fn drop(&mut self) {
        // SAFETY: we own the reference taken in `retain`.
        unsafe { crate::hal_resource::release(self.0) };
    }
}

/// Where a recorded buffer reference finds its buffer.
pub(crate) enum BufferSource {
    /// A buffer named at record time.
    Direct(RetainedBuffer),
    /// A slot of the binding table given at submission.
    Slot(u32),
    /// No buffer at all (a dispatch binding left NULL in a command buffer without a table).
    Unbound,
}

/// A recorded `iree_hal_buffer_ref_t`.
pub(crate) struct BufferRef {
    pub source: BufferSource,
    pub offset: u64,
    /// May be `IREE_HAL_WHOLE_BUFFER`.
    pub length: u64,
}

/// A resolved range: device address of its first byte and its length.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DeviceRange {
    pub pointer: *mut u8,
    pub length: u64,
    /// The allocation the range lies in (identity only, for overlap checks).
    pub allocation: *const c_void,
    /// Offset of `pointer` within that allocation.
    pub allocation_offset: u64,
}

impl DeviceRange {
    pub(crate) fn device_pointer(&self) -> *mut c_void {
        self.pointer.cast()
    }

    fn unbound() -> DeviceRange {
        DeviceRange { pointer: core::ptr::null_mut(), length: 0, allocation: core::ptr::null(), allocation_offset: 0 }
    }

    /// Whether two ranges share any byte of the same allocation.
    pub(crate) fn overlaps(&self, other: &DeviceRange) -> bool {
        if self.allocation.is_null() || self.allocation != other.allocation || self.length == 0 || other.length == 0 {
            return false;
        }
        let (a0, a1) = (self.allocation_offset, self.allocation_offset + self.length);
        let (b0, b1) = (other.allocation_offset, other.allocation_offset + other.length);
        a0 < b1 && b0 < a1
    }
}

/// IREE's `iree_hal_buffer_calculate_range`: the range `[offset, offset + length)` of a
/// region of `max_length` bytes starting at `base_offset`, with `IREE_HAL_WHOLE_BUFFER`
/// meaning to the region's end. Returns the absolute offset and the length.
pub(crate) fn subrange(base_offset: u64, max_length: u64, offset: u64, length: u64, what: &str) -> Result<(u64, u64)> {
    if offset > max_length {
        return Err(crate::status!(
            OutOfRange,
            "{what}: offset {offset} is past the end of the {max_length}-byte buffer range"
        ));
    }
    let length = if length == IREE_HAL_WHOLE_BUFFER { max_length - offset } else { length };
    if length > max_length - offset {
        return Err(crate::status!(
            OutOfRange,
            "{what}: range [{offset}, +{length}) runs past the end of the {max_length}-byte buffer range"
        ));
    }
    let absolute = base_offset
        .checked_add(offset)
        .ok_or_else(|| crate::status!(OutOfRange, "{what}: offset {offset} overflows"))?;
    Ok((absolute, length))
}

/// A checked range of a buffer given directly: our allocated buffer behind it and the
/// absolute range within that allocation.
struct LocatedRange<'a> {
    allocated: *mut iree_hal_buffer_t,
    hip_buffer: &'a HipBuffer,
    start: u64,
    length: u64,
}

impl LocatedRange<'_> {
    fn with_pointer(&self, pointer: *mut c_void) -> DeviceRange {
        DeviceRange {
            pointer: pointer.cast::<u8>().wrapping_add(self.start as usize),
            length: self.length,
            allocation: self.allocated.cast_const().cast(),
            allocation_offset: self.start,
        }
    }
}

/// Checks `[offset, +length)` of a buffer given directly (possibly a subspan of one of our
/// buffers made by IREE's core) against the buffer and its allocation.
///
/// # Safety
/// `buffer` must be a live HAL buffer, and stay live for the returned borrow.
unsafe fn locate_buffer_range<'a>(buffer: *mut iree_hal_buffer_t, offset: u64, length: u64, what: &str) -> Result<LocatedRange<'a>> {
    // SAFETY: per the caller.
    let header = unsafe { crate::boundary::try_ref(buffer.cast_const(), what) }?;
    let allocated = if header.allocated_buffer.is_null() { buffer } else { header.allocated_buffer };
    // SAFETY: the allocated buffer of a live buffer is live.
    let hip_buffer = unsafe { HipBuffer::from_raw(allocated) }
        .map_err(|_| crate::status!(InvalidArgument, "{what}: buffer was not allocated by a HIP device of this library"))?;
    let (start, length) = subrange(header.byte_offset, header.byte_length, offset, length, what)?;
    // SAFETY: checked ours above, so a live HAL buffer header.
    let allocation_size = unsafe { (*allocated).allocation_size };
    if start.checked_add(length).is_none_or(|end| end > allocation_size) {
        return Err(crate::status!(
            OutOfRange,
            "{what}: range [{start}, +{length}) lies outside the {allocation_size}-byte allocation"
        ));
    }
    Ok(LocatedRange { allocated, hip_buffer, start, length })
}

/// Resolves `[offset, +length)` of a buffer given directly to its device range.
///
/// # Safety
/// `buffer` must be a live HAL buffer.
pub(crate) unsafe fn resolve_buffer(buffer: *mut iree_hal_buffer_t, offset: u64, length: u64, what: &str) -> Result<DeviceRange> {
    // SAFETY: per the caller.
    let located = unsafe { locate_buffer_range(buffer, offset, length, what) }?;
    Ok(located.with_pointer(located.hip_buffer.checked_device_pointer()?))
}

/// `resolve_buffer` for a command being recorded: a stream-ordered buffer whose
/// queue_alloca has not been issued yet (IREE records work on a buffer right after
/// submitting its allocation) has its range checked now and `None` for a device range;
/// the commands resolve it again when they are issued, after the allocation.
///
/// # Safety
/// `buffer` must be a live HAL buffer.
pub(crate) unsafe fn resolve_buffer_for_recording(buffer: *mut iree_hal_buffer_t, offset: u64, length: u64, what: &str) -> Result<(u64, Option<DeviceRange>)> {
    // SAFETY: per the caller.
    let located = unsafe { locate_buffer_range(buffer, offset, length, what) }?;
    let pointer = located.hip_buffer.device_pointer();
    if pointer.is_null() && located.hip_buffer.memory() == BufferMemory::StreamOrdered {
        return Ok((located.length, None));
    }
    Ok((located.length, Some(located.with_pointer(pointer))))
}

impl BufferRef {
    /// The device range this reference names under `binding_table`.
    pub(crate) fn resolve(&self, binding_table: &[iree_hal_buffer_binding_t], what: &str) -> Result<DeviceRange> {
        // SAFETY: `locate` passes only live buffers.
        self.locate(binding_table, what, DeviceRange::unbound(), |buffer, offset, length| unsafe { resolve_buffer(buffer, offset, length, what) })
    }

    /// `resolve` at submission, before the queue has issued earlier work: every check that
    /// needs no device address, and `None` for a stream-ordered buffer whose queue_alloca
    /// has not been issued yet (issuing resolves it again, after the allocation).
    pub(crate) fn resolve_if_allocated(&self, binding_table: &[iree_hal_buffer_binding_t], what: &str) -> Result<Option<DeviceRange>> {
        self.locate(binding_table, what, Some(DeviceRange::unbound()), |buffer, offset, length| {
            // SAFETY: `locate` passes only live buffers.
            unsafe { resolve_buffer_for_recording(buffer, offset, length, what) }.map(|(_, range)| range)
        })
    }

    /// Finds the buffer and range this reference names under `binding_table` and hands
    /// them to `resolve` (a live buffer, an offset and length within its view).
    fn locate<T>(
        &self,
        binding_table: &[iree_hal_buffer_binding_t],
        what: &str,
        unbound: T,
        resolve: impl FnOnce(*mut iree_hal_buffer_t, u64, u64) -> Result<T>,
    ) -> Result<T> {
        match &self.source {
            // Retained, so live.
            BufferSource::Direct(buffer) => resolve(buffer.as_ptr(), self.offset, self.length),
            BufferSource::Unbound => Ok(unbound),
            BufferSource::Slot(slot) => {
                let binding = binding_table.get(*slot as usize).ok_or_else(|| {
                    crate::status!(
                        OutOfRange,
                        "{what}: binding table slot {slot} is out of range of the {}-entry binding table",
                        binding_table.len()
                    )
                })?;
                if binding.buffer.is_null() {
                    return Err(crate::status!(InvalidArgument, "{what}: binding table slot {slot} has no buffer"));
                }
                // SAFETY: the submitter keeps the table's buffers live during the call.
                let byte_length = unsafe { (*binding.buffer).byte_length };
                let max_length = if binding.length == IREE_HAL_WHOLE_BUFFER {
                    byte_length.checked_sub(binding.offset).ok_or_else(|| {
                        crate::status!(
                            OutOfRange,
                            "{what}: binding table slot {slot} offset {} is past the end of its {byte_length}-byte buffer",
                            binding.offset
                        )
                    })?
                } else {
                    binding.length
                };
                let (offset, length) = subrange(binding.offset, max_length, self.offset, self.length, what)?;
                resolve(binding.buffer, offset, length)
            }
        }
    }
}

/// How many workgroups a dispatch launches.
pub(crate) enum Workgroups {
    Direct([u32; 3]),
    /// Three u32 values read from this buffer range when the dispatch is issued.
    Indirect(BufferRef),
}

/// A recorded dispatch.
pub(crate) struct Dispatch {
    pub executable: RetainedExecutable,
    pub export_ordinal: u32,
    pub workgroups: Workgroups,
    pub constants: Vec<u32>,
    pub bindings: Vec<BufferRef>,
}

/// One recorded command.
pub(crate) enum Command {
    /// Writes `pattern` (its low `pattern_length` bytes, 1, 2 or 4) over the range.
    Fill { target: BufferRef, pattern: u32, pattern_length: u8 },
    /// Copies bytes captured at record time into the range.
    Update { target: BufferRef, data: Box<[u8]> },
    Copy { source: BufferRef, target: BufferRef },
    Dispatch(Box<Dispatch>),
    /// Everything before completes before anything after starts.
    Barrier,
    /// Signals the event once everything before has completed (`crate::event`).
    SignalEvent(RetainedEvent),
    /// Needs no GPU work (see `crate::event`); holds the event as IREE's command buffers do.
    ResetEvent { _event: RetainedEvent },
    /// Everything after waits for the latest issued signal of each event.
    WaitEvents(Vec<RetainedEvent>),
}

impl Command {
    /// The IREE operation's name, for messages.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Command::Fill { .. } => "fill_buffer",
            Command::Update { .. } => "update_buffer",
            Command::Copy { .. } => "copy_buffer",
            Command::Dispatch(d) if matches!(d.workgroups, Workgroups::Indirect(_)) => "dispatch_indirect",
            Command::Dispatch(_) => "dispatch",
            Command::Barrier => "execution_barrier",
            Command::SignalEvent(_) => "signal_event",
            Command::ResetEvent { .. } => "reset_event",
            Command::WaitEvents(_) => "wait_events",
        }
    }
}

/// Whether some wait names an event not signalled earlier in `commands`: such waits depend
/// on other submissions, which a graph cannot express, so the commands go onto a stream.
pub(crate) fn waits_outside(commands: &[Command]) -> bool {
    let mut signalled: Vec<*const iree_hal_event_t> = Vec::new();
    for command in commands {
        match command {
            Command::SignalEvent(event) => signalled.push(event.as_ptr()),
            Command::WaitEvents(events) if events.iter().any(|event| !signalled.contains(&event.as_ptr())) => return true,
            _ => {}
        }
    }
    false
}

impl Command {
    /// Resolves every binding table slot the command names against `binding_table`, with
    /// the checks issuing would make, so that a bad table fails at submission. Slots whose
    /// stream-ordered buffers are not allocated yet get the checks that need no address.
    pub(crate) fn check_slots(&self, binding_table: &[iree_hal_buffer_binding_t]) -> Result<()> {
        let what = self.name();
        let is_slot = |r: &BufferRef| matches!(r.source, BufferSource::Slot(_));
        match self {
            Command::Fill { target, pattern_length, .. } if is_slot(target) => match target.resolve_if_allocated(binding_table, what)? {
                Some(range) => check_fill_alignment(&range, *pattern_length, what),
                None => Ok(()),
            },
            Command::Update { target, data } if is_slot(target) => {
                if let Some(range) = target.resolve_if_allocated(binding_table, what)? {
                    if range.length != data.len() as u64 {
                        return Err(crate::status!(Internal, "{what}: resolved {} bytes for {} bytes of data", range.length, data.len()));
                    }
                }
                Ok(())
            }
            Command::Copy { source, target } if is_slot(source) || is_slot(target) => {
                let source = source.resolve_if_allocated(binding_table, what)?;
                let target = target.resolve_if_allocated(binding_table, what)?;
                if let (Some(source), Some(target)) = (source, target) {
                    check_copy_ranges(&source, &target, what)?;
                }
                Ok(())
            }
            Command::Dispatch(dispatch) => {
                let indirect = match &dispatch.workgroups {
                    Workgroups::Indirect(workgroups_ref) => Some(workgroups_ref),
                    Workgroups::Direct(_) => None,
                };
                for buffer_ref in dispatch.bindings.iter().chain(indirect).filter(|r| is_slot(r)) {
                    buffer_ref.resolve_if_allocated(binding_table, what)?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

/// The checks a copy's two resolved ranges must pass: equal lengths, no overlap.
pub(crate) fn check_copy_ranges(source: &DeviceRange, target: &DeviceRange, what: &str) -> Result<()> {
    if source.length != target.length {
        return Err(crate::status!(
            InvalidArgument,
            "{what}: source length {} and target length {} differ",
            source.length,
            target.length
        ));
    }
    if source.overlaps(target) {
        return Err(crate::status!(InvalidArgument, "{what}: source and target ranges overlap within the same buffer"));
    }
    Ok(())
}

/// Checks a resolved fill range against the pattern's alignment rules.
pub(crate) fn check_fill_alignment(range: &DeviceRange, pattern_length: u8, what: &str) -> Result<()> {
    let pattern_length = u64::from(pattern_length);
    if !range.length.is_multiple_of(pattern_length) || !(range.pointer as usize as u64).is_multiple_of(pattern_length) {
        return Err(crate::status!(
            InvalidArgument,
            "{what}: range (offset {} in its allocation, length {}) is not aligned to the {pattern_length}-byte pattern",
            range.allocation_offset,
            range.length
        ));
    }
    Ok(())
}
