//! The HAL objects a command buffer's commands name, each retained once however many
//! commands name it, and released together when the command buffer goes.
//!
//! Recording names the same few buffers and executables over and over (a model's
//! dispatches share their executable and most of their buffers), so each kind keeps a small
//! window of the objects it took last: a hit costs a few compares instead of an atomic
//! retain now, a release later and a slot in the list.

use super::commands::RetainedBuffer;
use crate::abi::*;
use crate::channel::HipChannel;
use crate::hal_object::{Borrowed, Retained};

/// How many recently held objects of a kind are checked before taking a new reference.
const RECENT_WINDOW: usize = 8;

/// The last few distinct objects of one kind added to a set: their addresses (compared
/// only; a held object's address cannot be reused) and where the set holds them.
struct RecentWindow {
    entries: [(usize, u32); RECENT_WINDOW],
    next: usize,
}

impl Default for RecentWindow {
    fn default() -> Self {
        RecentWindow { entries: [(0, 0); RECENT_WINDOW], next: 0 }
    }
}

impl RecentWindow {
    /// Where the set holds the object at `address`, if it is in the window.
    fn find(&self, address: usize) -> Option<u32> {
        self.entries.iter().find(|(entry, _)| *entry == address).map(|&(_, index)| index)
    }

    /// Remembers the object at `address`, held at `index`, forgetting the oldest entry.
    fn remember(&mut self, address: usize, index: u32) {
        self.entries[self.next] = (address, index);
        self.next = (self.next + 1) % RECENT_WINDOW;
    }
}

/// A buffer held by a resource set: its place there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct HeldBuffer(u32);

/// An executable held by a resource set: its place there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct HeldExecutable(u32);

/// A channel held by a resource set: its place there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct HeldChannel(u32);

/// References held for a command buffer's commands. An object already held may be held
/// again (when it left the recent window): that only costs one more reference.
#[derive(Default)]
pub(crate) struct ResourceSet {
    buffers: Vec<RetainedBuffer>,
    executables: Vec<Retained<iree_hal_executable_t>>,
    /// Collective channels (few: held once per command naming one).
    channels: Vec<Retained<HipChannel>>,
    recent_buffers: RecentWindow,
    recent_executables: RecentWindow,
}

impl ResourceSet {
    /// Keeps `buffer` alive until the set is dropped; where it is held.
    #[inline]
    pub(crate) fn hold_buffer(&mut self, buffer: Borrowed<'_, iree_hal_buffer_t>) -> HeldBuffer {
        let address = buffer.as_ptr() as usize;
        if let Some(index) = self.recent_buffers.find(address) {
            return HeldBuffer(index);
        }
        let index = self.buffers.len() as u32;
        self.buffers.push(buffer.retain());
        self.recent_buffers.remember(address, index);
        HeldBuffer(index)
    }

    /// Keeps `executable` alive until the set is dropped; where it is held.
    #[inline]
    pub(crate) fn hold_executable(&mut self, executable: Borrowed<'_, iree_hal_executable_t>) -> HeldExecutable {
        let address = executable.as_ptr() as usize;
        if let Some(index) = self.recent_executables.find(address) {
            return HeldExecutable(index);
        }
        let index = self.executables.len() as u32;
        self.executables.push(executable.retain());
        self.recent_executables.remember(address, index);
        HeldExecutable(index)
    }

    /// Keeps `channel` alive until the set is dropped; where it is held.
    pub(crate) fn hold_channel(&mut self, channel: &HipChannel) -> HeldChannel {
        if let Some(index) = self.channels.iter().position(|held| core::ptr::eq(&**held, channel)) {
            return HeldChannel(index as u32);
        }
        self.channels.push(Retained::from_ours(channel));
        HeldChannel(self.channels.len() as u32 - 1)
    }

    /// The channels the set holds.
    pub(crate) fn channels(&self) -> &[Retained<HipChannel>] {
        &self.channels
    }

    /// A channel the set holds.
    pub(crate) fn channel(&self, held: HeldChannel) -> &HipChannel {
        &self.channels[held.0 as usize]
    }

    /// A buffer the set holds.
    #[inline]
    pub(crate) fn buffer(&self, held: HeldBuffer) -> Borrowed<'_, iree_hal_buffer_t> {
        self.buffers[held.0 as usize].borrow()
    }

    /// An executable the set holds.
    #[inline]
    pub(crate) fn executable(&self, held: HeldExecutable) -> Borrowed<'_, iree_hal_executable_t> {
        self.executables[held.0 as usize].borrow()
    }

    /// Every executable held (each once).
    pub(crate) fn executables(&self) -> impl Iterator<Item = Borrowed<'_, iree_hal_executable_t>> {
        self.executables.iter().map(|executable| executable.borrow())
    }

    /// Releases every reference, keeping the lists' storage for reuse.
    pub(crate) fn clear(&mut self) {
        self.buffers.clear();
        self.executables.clear();
        self.channels.clear();
        self.recent_buffers = RecentWindow::default();
        self.recent_executables = RecentWindow::default();
    }

    /// Bytes of storage the set keeps allocated.
    pub(crate) fn capacity_bytes(&self) -> usize {
        self.buffers.capacity() * core::mem::size_of::<RetainedBuffer>()
            + self.executables.capacity() * core::mem::size_of::<Retained<iree_hal_executable_t>>()
            + self.channels.capacity() * core::mem::size_of::<Retained<HipChannel>>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_forgets_the_oldest_entry() {
        let mut window = RecentWindow::default();
        for address in 1..=RECENT_WINDOW {
            window.remember(address * 16, address as u32);
        }
        assert_eq!(window.find(16), Some(1));
        assert_eq!(window.find((RECENT_WINDOW + 1) * 16), None);
        window.remember((RECENT_WINDOW + 1) * 16, 99);
        assert_eq!(window.find(16), None, "the oldest entry makes room");
        assert_eq!(window.find(32), Some(2));
        assert_eq!(window.find((RECENT_WINDOW + 1) * 16), Some(99));
    }
}
