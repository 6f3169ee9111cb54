//! The HAL objects a command buffer's commands name, each retained once however many
//! commands name it, and released together when the command buffer goes.
//!
//! Recording names the same few buffers and executables over and over (a model's
//! dispatches share their executable and most of their buffers), so each kind keeps a small
//! window of the objects it took last: a hit costs a few compares instead of an atomic
//! retain now, a release later and a slot in the list.

use super::commands::{RetainedBuffer, RetainedExecutable};
use crate::abi::*;

/// How many recently held objects of a kind are checked before taking a new reference.
const RECENT_WINDOW: usize = 8;

/// The last few distinct objects of one kind added to a set.
struct RecentWindow<T> {
    entries: [*const T; RECENT_WINDOW],
    next: usize,
}

impl<T> Default for RecentWindow<T> {
    fn default() -> Self {
        RecentWindow { entries: [core::ptr::null(); RECENT_WINDOW], next: 0 }
    }
}

impl<T> RecentWindow<T> {
    fn contains(&self, object: *const T) -> bool {
        self.entries.contains(&object)
    }

    /// Remembers `object`, forgetting the oldest entry when full.
    fn remember(&mut self, object: *const T) {
        self.entries[self.next] = object;
        self.next = (self.next + 1) % RECENT_WINDOW;
    }
}

/// References held for a command buffer's commands. An object already held may be held
/// again (when it left the recent window): that only costs one more reference.
#[derive(Default)]
pub(crate) struct ResourceSet {
    buffers: Vec<RetainedBuffer>,
    executables: Vec<RetainedExecutable>,
    recent_buffers: RecentWindow<iree_hal_buffer_t>,
    recent_executables: RecentWindow<iree_hal_executable_t>,
}

// SAFETY: the windows only compare addresses of objects the lists hold references to; the
// lists are Send + Sync.
unsafe impl Send for ResourceSet {}
unsafe impl Sync for ResourceSet {}

impl ResourceSet {
    /// Keeps `buffer` alive until the set is dropped.
    ///
    /// # Safety
    /// `buffer` must be a live HAL buffer.
    #[inline]
    pub(crate) unsafe fn hold_buffer(&mut self, buffer: *mut iree_hal_buffer_t) {
        // Held, so alive: its address cannot have been reused by another buffer.
        if self.recent_buffers.contains(buffer) {
            return;
        }
        // SAFETY: per the caller.
        self.buffers.push(unsafe { RetainedBuffer::retain_live(buffer) });
        self.recent_buffers.remember(buffer);
    }

    /// Keeps `executable` alive until the set is dropped.
    ///
    /// # Safety
    /// `executable` must be a live HAL executable.
    #[inline]
    pub(crate) unsafe fn hold_executable(&mut self, executable: *mut iree_hal_executable_t) {
        if self.recent_executables.contains(executable) {
            return;
        }
        // SAFETY: per the caller.
        self.executables.push(unsafe { RetainedExecutable::retain(executable) });
        self.recent_executables.remember(executable);
    }

    /// Releases every reference, keeping the lists' storage for reuse.
    pub(crate) fn clear(&mut self) {
        self.buffers.clear();
        self.executables.clear();
        self.recent_buffers = RecentWindow::default();
        self.recent_executables = RecentWindow::default();
    }

    /// Bytes of storage the set keeps allocated.
    pub(crate) fn capacity_bytes(&self) -> usize {
        self.buffers.capacity() * core::mem::size_of::<RetainedBuffer>()
            + self.executables.capacity() * core::mem::size_of::<RetainedExecutable>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_forgets_the_oldest_entry() {
        let objects: Vec<u64> = (0..=RECENT_WINDOW as u64).collect();
        let mut window = RecentWindow::<u64>::default();
        for object in &objects[..RECENT_WINDOW] {
            window.remember(object);
        }
        assert!(window.contains(&objects[0]));
        assert!(!window.contains(&objects[RECENT_WINDOW]));
        window.remember(&objects[RECENT_WINDOW]);
        assert!(!window.contains(&objects[0]), "the oldest entry makes room");
        assert!(window.contains(&objects[1]) && window.contains(&objects[RECENT_WINDOW]));
    }
}
