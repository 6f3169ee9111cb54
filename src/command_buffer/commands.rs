//! What a command buffer records: a list of commands in safe Rust, each holding references
//! to the HAL objects it names, and how a recorded buffer reference becomes a device
//! address range once the binding table of a submission is known.

use crate::abi::*;
use crate::argument_rules::{BufferWindow, FillPattern};
use super::collective::RcclOp;
use super::resource_set::{HeldBuffer, HeldChannel, HeldExecutable, ResourceSet};
use crate::buffer::HipBuffer;
use crate::event::HipEvent;
use crate::hal_object::{Binding, Borrowed, BufferRefView, Retained};
use crate::status::Result;
use core::ffi::c_void;

pub(crate) use crate::buffer::RetainedBuffer;

/// Where a recorded buffer reference finds its buffer.
#[derive(Clone, Copy)]
pub(crate) enum BufferSource {
    /// A buffer named at record time, held by the command list's resource set.
    Direct(HeldBuffer),
    /// A slot of the binding table given at submission.
    Slot(u32),
    /// No buffer at all (a dispatch binding left NULL in a command buffer without a table).
    Unbound,
}

/// A recorded `iree_hal_buffer_ref_t`.
#[derive(Clone, Copy)]
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

/// Where `[offset, +length)` of a buffer given directly (possibly a subspan of one of our
/// buffers made by IREE's core) lies in its allocation, checked to be in range
/// (`argument_rules::buffer_range`). The range's device address is left NULL: a
/// stream-ordered buffer may only get memory when the work using it is issued
/// (`resolve_buffer` adds it). The allocation is checked to be one of our buffers.
#[inline]
pub(crate) fn locate_buffer(buffer: Borrowed<'_, iree_hal_buffer_t>, offset: u64, length: u64, what: &str) -> Result<DeviceRange> {
    locate_in(buffer, offset, length, what).map(|(range, _)| range)
}

/// `locate_buffer`, with the allocation it found.
#[inline(always)]
fn locate_in<'a>(buffer: Borrowed<'a, iree_hal_buffer_t>, offset: u64, length: u64, what: &str) -> Result<(DeviceRange, &'a HipBuffer)> {
    let header = buffer.header();
    let Some(ours) = buffer.allocated_ours::<HipBuffer>() else {
        return Err(not_our_memory(what));
    };
    let window = BufferWindow { allocation_size: ours.allocation_size(), byte_offset: header.byte_offset, byte_length: header.byte_length };
    let range = crate::argument_rules::buffer_range(what, window, offset, length)?;
    let allocation = (ours as *const HipBuffer).cast();
    Ok((DeviceRange { pointer: core::ptr::null_mut(), length: range.length, allocation, allocation_offset: range.start }, ours))
}

#[cold]
#[inline(never)]
fn not_our_memory(what: &str) -> crate::status::Status {
    crate::status!(InvalidArgument, "{what}: buffer was not allocated by a HIP device of this library")
}

/// Resolves `[offset, +length)` of a buffer given directly to its device range.
#[inline(always)]
pub(crate) fn resolve_buffer(buffer: Borrowed<'_, iree_hal_buffer_t>, offset: u64, length: u64, what: &str) -> Result<DeviceRange> {
    let (range, ours) = locate_in(buffer, offset, length, what)?;
    let pointer = ours.checked_device_pointer()?.cast::<u8>().wrapping_add(range.allocation_offset as usize);
    Ok(DeviceRange { pointer, ..range })
}

impl BufferRef {
    /// The device range this reference names under `binding_table`.
    pub(crate) fn resolve(&self, resources: &ResourceSet, binding_table: &[Binding<'_>], what: &str) -> Result<DeviceRange> {
        self.range::<true>(resources, binding_table, what)
    }

    /// The range this reference names, checked but without its device address (NULL): at
    /// submission a stream-ordered buffer may not be allocated yet; issuing resolves it.
    pub(crate) fn locate(&self, resources: &ResourceSet, binding_table: &[Binding<'_>], what: &str) -> Result<DeviceRange> {
        self.range::<false>(resources, binding_table, what)
    }

    #[inline(always)]
    fn range<const WITH_ADDRESS: bool>(&self, resources: &ResourceSet, binding_table: &[Binding<'_>], what: &str) -> Result<DeviceRange> {
        let find = |buffer, offset, length| if WITH_ADDRESS { resolve_buffer(buffer, offset, length, what) } else { locate_buffer(buffer, offset, length, what) };
        match &self.source {
            BufferSource::Direct(held) => find(resources.buffer(*held), self.offset, self.length),
            BufferSource::Unbound => Ok(DeviceRange::unbound()),
            BufferSource::Slot(slot) => {
                let binding = binding_table.get(*slot as usize).ok_or_else(|| {
                    crate::status!(
                        OutOfRange,
                        "{what}: binding table slot {slot} is out of range of the {}-entry binding table",
                        binding_table.len()
                    )
                })?;
                let Some(buffer) = binding.buffer else {
                    return Err(crate::status!(InvalidArgument, "{what}: binding table slot {slot} has no buffer"));
                };
                let (offset, length) = crate::argument_rules::binding_slot_range(
                    what,
                    *slot,
                    buffer.header().byte_length,
                    binding.offset,
                    binding.length,
                    self.offset,
                    self.length,
                )?;
                find(buffer, offset, length)
            }
        }
    }
}

/// How many workgroups a dispatch launches.
#[derive(Clone, Copy)]
pub(crate) enum Workgroups {
    Direct([u32; 3]),
    /// Three u32 values read from this buffer range when the dispatch is issued.
    Indirect(BufferRef),
}

/// A run of entries in one of a command list's shared arrays.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Span {
    pub start: usize,
    pub len: usize,
}

impl Span {
    fn of<T>(items: &[T], span: Span) -> &[T] {
        &items[span.start..span.start + span.len]
    }
}

/// A recorded dispatch; its constants and bindings live in the command list's shared
/// arrays (`CommandList::constants`, `CommandList::bindings`).
#[derive(Clone, Copy)]
pub(crate) struct Dispatch {
    /// Held by the list's resource set.
    pub executable: HeldExecutable,
    pub export_ordinal: u32,
    pub workgroups: Workgroups,
    pub constants: Span,
    pub bindings: Span,
}

/// A recorded collective operation (`super::collective`). The buffer references a kind
/// does not use are `BufferSource::Unbound`.
#[derive(Clone, Copy)]
pub(crate) struct Collective {
    /// Held by the list's resource set.
    pub channel: HeldChannel,
    pub op: RcclOp,
    /// Root (broadcast, reduce), peer (send, recv) or packed peers (send_recv).
    pub param: u32,
    pub send: BufferRef,
    pub recv: BufferRef,
    pub count: u64,
}

/// One recorded command. Variable-length payloads (dispatch constants and bindings,
/// update data) live in the command list's shared arrays, named by spans, so recording a
/// command allocates nothing of its own.
pub(crate) enum Command {
    /// Writes the pattern over the range.
    Fill { target: BufferRef, pattern: FillPattern },
    /// Copies bytes captured at record time (`CommandList::update_data`) into the range.
    Update { target: BufferRef, data: Span },
    Copy { source: BufferRef, target: BufferRef },
    Dispatch(Dispatch),
    /// Consecutive collectives go to RCCL as one group (`ncclGroupStart`/`ncclGroupEnd`).
    Collective(Collective),
    /// Everything before completes before anything after starts.
    Barrier,
    /// Signals the event once everything before has completed (`crate::event`).
    SignalEvent(Retained<HipEvent>),
    /// Needs no GPU work (see `crate::event`); holds the event as IREE's command buffers do.
    ResetEvent { _event: Retained<HipEvent> },
    /// Everything after waits for the latest issued signal of each event.
    WaitEvents(Vec<Retained<HipEvent>>),
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
            Command::Collective(_) => "collective",
            Command::Barrier => "execution_barrier",
            Command::SignalEvent(_) => "signal_event",
            Command::ResetEvent { .. } => "reset_event",
            Command::WaitEvents(_) => "wait_events",
        }
    }
}

/// What a command buffer recorded: its commands, the arrays their payloads live in, and the
/// references that keep every object they name alive for as long as the list lives.
///
/// Lists are recycled (`CommandList::take`, `CommandList::recycle`): a program records
/// command buffers of much the same shape over and over, and reusing the grown arrays
/// saves their reallocations and the page faults of fresh memory on every recording.
#[derive(Default)]
pub(crate) struct CommandList {
    commands: Vec<Command>,
    /// Each command's index among the HAL operations recorded (IREE's command index, which
    /// profiles report): it differs from the position where an operation recorded nothing
    /// (a STREAM command buffer's barriers, empty ranges).
    operation_indices: Vec<u32>,
    /// Every dispatch's bindings, back to back.
    bindings: Vec<BufferRef>,
    /// Every dispatch's constants, back to back.
    constants: Vec<u32>,
    /// Every update's data, back to back; not touched once the list is complete, so issued
    /// copies may read it while the list lives.
    update_data: Vec<u8>,
    resources: ResourceSet,
}

/// How many emptied lists are kept for reuse, process wide.
const RECYCLED_LISTS: usize = 8;

/// Lists holding more storage than this are freed rather than kept.
const RECYCLED_LIST_MAX_BYTES: usize = 1 << 20;

/// Emptied lists with their storage, waiting for the next command buffer.
static RECYCLED: parking_lot::Mutex<Vec<CommandList>> = parking_lot::Mutex::new(Vec::new());

impl CommandList {
    /// An empty list, reusing the storage of one recycled earlier when there is one.
    pub(crate) fn take() -> CommandList {
        RECYCLED.lock().pop().unwrap_or_default()
    }

    /// Releases everything the list holds and keeps its storage for `take`, unless enough
    /// lists are kept already or this one is too large to keep.
    pub(crate) fn recycle(mut self) {
        self.commands.clear();
        self.operation_indices.clear();
        self.bindings.clear();
        self.constants.clear();
        self.update_data.clear();
        self.resources.clear();
        if self.capacity_bytes() > RECYCLED_LIST_MAX_BYTES {
            return;
        }
        let mut recycled = RECYCLED.lock();
        if recycled.len() < RECYCLED_LISTS {
            recycled.push(self);
        }
    }

    /// Gives back the slack its arrays grew into when the list is too large to be recycled:
    /// for a reusable command buffer, which keeps its list for its whole life, that slack
    /// is up to as much again as what it recorded. Only before anything reads the arrays'
    /// addresses (nothing is issued from the list yet, no graph is built from it).
    pub(crate) fn shrink_if_not_recyclable(&mut self) {
        if self.capacity_bytes() <= RECYCLED_LIST_MAX_BYTES {
            return;
        }
        self.commands.shrink_to_fit();
        self.operation_indices.shrink_to_fit();
        self.bindings.shrink_to_fit();
        self.constants.shrink_to_fit();
        self.update_data.shrink_to_fit();
    }

    /// Bytes of storage the list keeps allocated.
    fn capacity_bytes(&self) -> usize {
        self.commands.capacity() * core::mem::size_of::<Command>()
            + self.bindings.capacity() * core::mem::size_of::<BufferRef>()
            + self.constants.capacity() * core::mem::size_of::<u32>()
            + self.update_data.capacity()
            + self.resources.capacity_bytes()
    }

    pub(crate) fn commands(&self) -> &[Command] {
        &self.commands
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.commands.is_empty()
    }

    #[inline]
    /// Appends the command of HAL operation `operation_index`.
    pub(crate) fn push(&mut self, command: Command, operation_index: u32) {
        self.commands.push(command);
        self.operation_indices.push(operation_index);
    }

    /// The HAL operation index of the command at `position`.
    pub(crate) fn operation_index(&self, position: usize) -> u32 {
        self.operation_indices.get(position).copied().unwrap_or(position as u32)
    }

    /// Removes the last command (one that failed to issue inline). Its payloads stay in the
    /// shared arrays, unused; its objects stay held until the list goes.
    pub(crate) fn pop(&mut self) {
        self.commands.pop();
        self.operation_indices.pop();
    }

    pub(crate) fn bindings(&self, dispatch: &Dispatch) -> &[BufferRef] {
        Span::of(&self.bindings, dispatch.bindings)
    }

    pub(crate) fn constants(&self, dispatch: &Dispatch) -> &[u32] {
        Span::of(&self.constants, dispatch.constants)
    }

    pub(crate) fn update_data(&self, data: Span) -> &[u8] {
        Span::of(&self.update_data, data)
    }

    /// Appends a dispatch's constants.
    #[inline]
    pub(crate) fn add_constants(&mut self, constants: impl Iterator<Item = u32>) -> Span {
        let start = self.constants.len();
        self.constants.extend(constants);
        Span { start, len: self.constants.len() - start }
    }

    /// Appends a dispatch's bindings. A buffer given directly that is one of ours and in
    /// range is held and recorded here; any other reference (a slot, NULL, or one that fails
    /// the checks) is left to `capture`, which records it or explains the failure. On
    /// failure none of the dispatch's bindings are kept.
    #[inline]
    pub(crate) fn add_bindings(
        &mut self,
        refs: &[BufferRefView<'_>],
        mut capture: impl FnMut(&mut ResourceSet, usize, &BufferRefView<'_>) -> Result<BufferRef>,
    ) -> Result<Span> {
        let start = self.bindings.len();
        self.bindings.reserve(refs.len());
        for (index, buffer_ref) in refs.iter().enumerate() {
            // A failure here is explained again, with the binding's index, by `capture`.
            let located = buffer_ref.buffer.and_then(|buffer| locate_buffer(buffer, buffer_ref.offset, buffer_ref.length, "dispatch").ok().map(|range| (buffer, range)));
            let binding = match located {
                Some((buffer, range)) => {
                    let held = self.resources.hold_buffer(buffer);
                    BufferRef { source: BufferSource::Direct(held), offset: buffer_ref.offset, length: range.length }
                }
                None => match capture(&mut self.resources, index, buffer_ref) {
                    Ok(binding) => binding,
                    Err(status) => {
                        self.bindings.truncate(start);
                        return Err(status);
                    }
                },
            };
            self.bindings.push(binding);
        }
        Ok(Span { start, len: refs.len() })
    }

    /// Copies an update's data in.
    pub(crate) fn add_update_data(&mut self, data: &[u8]) -> Result<Span> {
        let start = self.update_data.len();
        self.update_data
            .try_reserve(data.len())
            .map_err(|_| crate::status!(ResourceExhausted, "update_buffer: cannot hold {} bytes of update data", data.len()))?;
        self.update_data.extend_from_slice(data);
        Ok(Span { start, len: data.len() })
    }

    pub(crate) fn resources(&mut self) -> &mut ResourceSet {
        &mut self.resources
    }

    /// The objects the commands name.
    pub(crate) fn resource_set(&self) -> &ResourceSet {
        &self.resources
    }
}

/// Whether some wait names an event not signalled earlier in `commands`: such waits depend
/// on other submissions, which a graph cannot express, so the commands go onto a stream.
pub(crate) fn waits_outside(commands: &[Command]) -> bool {
    let mut signalled: Vec<*const iree_hal_event_t> = Vec::new();
    for command in commands {
        match command {
            Command::SignalEvent(event) => signalled.push(event.as_raw().cast_const()),
            Command::WaitEvents(events) if events.iter().any(|event| !signalled.contains(&event.as_raw().cast_const())) => return true,
            _ => {}
        }
    }
    false
}

impl Command {
    /// Resolves every binding table slot the command names against `binding_table`, with
    /// the checks issuing would make, so that a bad table fails at submission.
    pub(crate) fn check_slots(&self, list: &CommandList, binding_table: &[Binding<'_>]) -> Result<()> {
        let what = self.name();
        let resources = list.resource_set();
        let is_slot = |r: &BufferRef| matches!(r.source, BufferSource::Slot(_));
        match self {
            Command::Fill { target, pattern } if is_slot(target) => {
                let range = target.locate(resources, binding_table, what)?;
                crate::argument_rules::fill_pattern(what, pattern.bytes(), range.allocation_offset, range.length).map(drop)
            }
            Command::Update { target, data } if is_slot(target) => {
                let range = target.locate(resources, binding_table, what)?;
                if range.length != data.len as u64 {
                    return Err(crate::status!(Internal, "{what}: resolved {} bytes for {} bytes of data", range.length, data.len));
                }
                Ok(())
            }
            Command::Copy { source, target } if is_slot(source) || is_slot(target) => {
                super::stream::check_copy(&source.locate(resources, binding_table, what)?, &target.locate(resources, binding_table, what)?, what)
            }
            Command::Dispatch(dispatch) => {
                let indirect = match &dispatch.workgroups {
                    Workgroups::Indirect(workgroups_ref) => Some(workgroups_ref),
                    Workgroups::Direct(_) => None,
                };
                for buffer_ref in list.bindings(dispatch).iter().chain(indirect).filter(|r| is_slot(r)) {
                    buffer_ref.locate(resources, binding_table, what)?;
                }
                Ok(())
            }
            Command::Collective(collective) if is_slot(&collective.send) || is_slot(&collective.recv) => {
                collective.check_ranges(resources, binding_table).map(drop)
            }
            _ => Ok(()),
        }
    }
}

impl Collective {
    /// The send and receive ranges (without device addresses), checked to hold what RCCL
    /// accesses.
    pub(crate) fn check_ranges(&self, resources: &ResourceSet, binding_table: &[Binding<'_>]) -> Result<(DeviceRange, DeviceRange)> {
        self.ranges::<false>(resources, binding_table)
    }

    /// The send and receive device ranges (an unused one NULL and empty) and the element
    /// count RCCL gets (see `collective::rccl_count`), checked as `check_ranges` does.
    pub(crate) fn resolve_with_count(&self, resources: &ResourceSet, binding_table: &[Binding<'_>]) -> Result<(DeviceRange, DeviceRange, u64)> {
        self.ranges_and_count::<true>(resources, binding_table)
    }

    fn ranges<const WITH_ADDRESS: bool>(&self, resources: &ResourceSet, binding_table: &[Binding<'_>]) -> Result<(DeviceRange, DeviceRange)> {
        self.ranges_and_count::<WITH_ADDRESS>(resources, binding_table).map(|(send, recv, _)| (send, recv))
    }

    fn ranges_and_count<const WITH_ADDRESS: bool>(&self, resources: &ResourceSet, binding_table: &[Binding<'_>]) -> Result<(DeviceRange, DeviceRange, u64)> {
        let what = "collective";
        let find = |r: &BufferRef| if WITH_ADDRESS { r.resolve(resources, binding_table, what) } else { r.locate(resources, binding_table, what) };
        let (send, recv) = (find(&self.send)?, find(&self.recv)?);
        let (_, ranks) = resources.channel(self.channel).rank_and_count()?;
        let count = super::collective::rccl_count(&self.op, self.count, ranks as u32, send.length, recv.length)?;
        Ok((send, recv, count))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list_of_barriers(count: usize) -> CommandList {
        let mut list = CommandList::default();
        for _ in 0..count {
            list.push(Command::Barrier, list.commands().len() as u32);
        }
        list
    }

    /// A list larger than a recycled one may be gives back the room it grew into; a small
    /// one keeps it, for the next command buffer that takes it.
    #[test]
    fn only_lists_too_large_to_recycle_shrink() {
        let count = RECYCLED_LIST_MAX_BYTES / core::mem::size_of::<Command>() + 1000;
        let mut large = list_of_barriers(count);
        assert!(large.commands.capacity() > count, "grown by doubling: capacity {}", large.commands.capacity());
        large.shrink_if_not_recyclable();
        assert_eq!(large.commands.capacity(), count);
        assert_eq!(large.commands().len(), count);
        let mut small = list_of_barriers(100);
        let capacity = small.commands.capacity();
        assert!(capacity > 100);
        small.shrink_if_not_recyclable();
        assert_eq!(small.commands.capacity(), capacity);
    }
}
