//! What a queue operation holds until its work has finished on the stream.
//!
//! A finished operation's semaphores are signalled only once the driver has let go of what
//! the operation used, so that a woken waiter finds nothing of it still held by us (IREE's
//! VM, for one, checks at module teardown that nobody holds its constant buffers). Letting
//! go of the last reference to an object may tear it down and call HIP, which the
//! completion callback must not do; letting go of a reference others still hold cannot.
//! `Held::release_shared` does the latter in the callback, and only what remains goes to
//! the queue's worker, which drops it and then signals.

use crate::queue::IssueFn;

/// An object (or set of objects) an operation keeps alive.
pub trait Held: Send {
    /// Gives up every reference held here that is not the last one of its object; returns
    /// whether nothing is held any more. Never tears anything down, so it may run in a HIP
    /// host callback.
    fn release_shared(&mut self) -> bool;

    /// Why the work that used this failed although its stream ran to the end (a collective
    /// whose peers went away: RCCL reports it asynchronously, the stream goes on). Asked in
    /// the completion callback before anything is released, so it must not call HIP.
    fn failure_after_completion(&self) -> Option<crate::status::Status> {
        None
    }

    /// What the work that used this runs ("dispatches of abs, softmax"), for a failure
    /// found after the work was issued (`QueueShared::lose`); asked on the worker.
    fn describe(&self) -> Option<String> {
        None
    }

    /// Fails what the work would have signalled by itself (a host call on the stream that
    /// signals its own semaphores), once its queue is lost and the work will never run;
    /// asked on the worker.
    fn fail_with(&self, _status: &crate::status::Status) {}
}

/// The semaphores a host call on the stream signals itself (IREE 3.13's blocking
/// `queue_host_call`), held so that a lost queue can fail them.
pub struct CalledSignals(pub Vec<Option<crate::semaphore::SemaphoreRef>>);

impl Held for CalledSignals {
    fn release_shared(&mut self) -> bool {
        let mut all = true;
        for semaphore in &mut self.0 {
            all &= semaphore.release_shared();
        }
        all
    }

    fn fail_with(&self, status: &crate::status::Status) {
        for semaphore in self.0.iter().flatten() {
            semaphore.fail(status.duplicate());
        }
    }
}

/// Host data copied for the operation: plain memory, freed anywhere.
impl Held for Vec<u8> {
    fn release_shared(&mut self) -> bool {
        *self = Vec::new();
        true
    }
}

/// The issue step of an operation that never ran: what it captured is dropped on the worker.
impl Held for IssueFn {
    fn release_shared(&mut self) -> bool {
        false
    }
}

/// Releases what can be released in place (every object, not stopping at the first that
/// cannot); whether everything was.
pub fn release_all_shared(held: &mut [Box<dyn Held>]) -> bool {
    let mut all = true;
    for object in held {
        all &= object.release_shared();
    }
    all
}
