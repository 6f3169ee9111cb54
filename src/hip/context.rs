//! Making HIP calls on the right device whatever thread makes them: a guard pushes the
//! device's primary context on the calling thread's context stack and pops it when
//! dropped, so a call never depends on which device the thread selected last. A guard
//! made while an outer guard of ours keeps the same context current pushes nothing.

use super::types::hipCtx_t;
use super::HipSymbols;
use crate::status::Result;
use std::cell::Cell;

thread_local! {
    /// The context our innermost pushing guard on this thread made current, and how many of
    /// our live guards rely on it (itself and the nested ones for the same context, which push
    /// nothing: a batch's issue and the command buffer issued in it both want the context).
    static OURS_CURRENT: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
}

/// The device's context is current on this thread while the guard lives. Guards live in
/// scopes, so they drop in the reverse order of their creation, as HIP's context stack wants.
pub struct ContextGuard<'a> {
    hip: &'a HipSymbols,
    /// What `OURS_CURRENT` was before this guard pushed; `None` for a nested guard, which
    /// pushed nothing.
    replaced: Option<(usize, usize)>,
}

impl<'a> ContextGuard<'a> {
    // The context is an opaque HIP handle that HIP itself validates; we never dereference it.
    #[allow(clippy::not_unsafe_ptr_arg_deref)]
    pub fn push(hip: &'a HipSymbols, context: hipCtx_t) -> Result<ContextGuard<'a>> {
        let key = context as usize;
        let (current, users) = OURS_CURRENT.with(Cell::get);
        if users > 0 && current == key {
            // Still current from an outer guard of ours on this thread: nothing to push.
            OURS_CURRENT.with(|ours| ours.set((current, users + 1)));
            return Ok(ContextGuard { hip, replaced: None });
        }
        crate::hip_call!(hip, hipCtxPushCurrent(context))?;
        OURS_CURRENT.with(|ours| ours.set((key, 1)));
        Ok(ContextGuard { hip, replaced: Some((current, users)) })
    }
}

impl Drop for ContextGuard<'_> {
    fn drop(&mut self) {
        match self.replaced {
            None => OURS_CURRENT.with(|ours| {
                let (current, users) = ours.get();
                ours.set((current, users.saturating_sub(1)));
            }),
            Some(replaced) => {
                super::error::record_release("current context", crate::hip_value!(self.hip, hipCtxPopCurrent()).map(|_popped: hipCtx_t| ()));
                OURS_CURRENT.with(|ours| ours.set(replaced));
            }
        }
    }
}
