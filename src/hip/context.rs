//! Making HIP calls on the right device whatever thread makes them: a guard pushes the
//! device's primary context on the calling thread's context stack and pops it when
//! dropped, so a call never depends on which device the thread selected last.

use super::types::hipCtx_t;
use super::HipSymbols;
use crate::status::Result;

/// The device's context is current on this thread while the guard lives.
pub struct ContextGuard<'a> {
    hip: &'a HipSymbols,
}

impl<'a> ContextGuard<'a> {
    // The context is an opaque HIP handle that HIP itself validates; we never dereference it.
    #[allow(clippy::not_unsafe_ptr_arg_deref)]
    pub fn push(hip: &'a HipSymbols, context: hipCtx_t) -> Result<ContextGuard<'a>> {
        crate::hip_call!(hip, hipCtxPushCurrent(context))?;
        Ok(ContextGuard { hip })
    }
}

impl Drop for ContextGuard<'_> {
    fn drop(&mut self) {
        super::error::record_release("current context", crate::hip_value!(self.hip, hipCtxPopCurrent()).map(|_popped: hipCtx_t| ()));
    }
}
