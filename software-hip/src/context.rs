//! Per-thread current device/context, as `hipSetDevice` and the `hipCtx*` calls see it.
//!
//! Each thread has a stack of device ordinals; its top is the current context. An empty
//! stack means device 0, which is where HIP starts every thread.

use crate::device::Device;
use crate::errors::HipResult;
use crate::runtime;
use crate::types::*;
use std::cell::RefCell;

thread_local! {
    static CONTEXT_STACK: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

pub fn current_device_index() -> usize {
    CONTEXT_STACK.with(|stack| stack.borrow().last().copied().unwrap_or(0))
}

/// The current thread's device; fails when there are no devices at all.
pub fn current_device() -> HipResult<&'static Device> {
    runtime::device(current_device_index() as i64).map_err(|_| hipErrorNoDevice)
}

/// `hipSetDevice`/`hipCtxSetCurrent`: replaces the top of the stack.
pub fn set_current(device: usize) {
    CONTEXT_STACK.with(|stack| {
        let mut stack = stack.borrow_mut();
        match stack.last_mut() {
            Some(top) => *top = device,
            None => stack.push(device),
        }
    });
}

/// `hipCtxSetCurrent(NULL)`: unbinds the current context.
pub fn clear_current() {
    CONTEXT_STACK.with(|stack| {
        stack.borrow_mut().pop();
    });
}

pub fn push(device: usize) {
    CONTEXT_STACK.with(|stack| stack.borrow_mut().push(device));
}

pub fn pop() -> HipResult<usize> {
    CONTEXT_STACK.with(|stack| stack.borrow_mut().pop()).ok_or(hipErrorInvalidContext)
}

/// Maps a `hipCtx_t` back to its device.
pub fn device_of_context(handle: usize) -> HipResult<&'static Device> {
    runtime::devices().iter().find(|device| device.context_handle() == handle).ok_or(hipErrorInvalidContext)
}
