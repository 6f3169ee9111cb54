//! Owning HIP handles: each value owns one handle and what releasing it needs (the HIP
//! runtime, and the primary context to make current where the handle belongs to one), and
//! releases it when dropped. A release that fails is recorded (`release_failures`, and one
//! line on stderr), never dropped silently.
//!
//! Handles are made through `Current`, a primary context made current on this thread, so a
//! handle always records the context it was made in. A handle whose context cannot be made
//! current when it is dropped is left alone (the call would go to whichever device is
//! current) and that is recorded as a failed release.

use super::context::ContextGuard;
use super::error::{record_release, record_release_failure};
use super::types::*;
use super::HipSymbols;
use crate::status::Result;
use crate::{hip_call, hip_value};
use core::ffi::{c_uint, c_void};
use core::marker::PhantomData;
use std::sync::Arc;

pub use super::error::release_failures;

/// One reference to a device's primary context (hipDevicePrimaryCtxRetain), released when
/// dropped.
pub struct PrimaryContext {
    hip: Arc<HipSymbols>,
    device: hipDevice_t,
    raw: hipCtx_t,
}

// SAFETY: a primary context may be made current on, and released from, any thread.
unsafe impl Send for PrimaryContext {}
unsafe impl Sync for PrimaryContext {}

impl PrimaryContext {
    /// Retains the primary context of HIP device `device`.
    pub fn retain(hip: &Arc<HipSymbols>, device: hipDevice_t) -> Result<PrimaryContext> {
        let raw = hip_value!(hip, hipDevicePrimaryCtxRetain(device))?;
        Ok(PrimaryContext { hip: hip.clone(), device, raw })
    }

    /// The HIP device ordinal.
    pub fn device(&self) -> hipDevice_t {
        self.device
    }

    /// The context handle.
    pub fn raw(&self) -> hipCtx_t {
        self.raw
    }

    /// The HIP runtime the context belongs to.
    pub fn hip(&self) -> &Arc<HipSymbols> {
        &self.hip
    }

    /// Makes the context current on this thread until the result is dropped.
    pub fn make_current(self: &Arc<Self>) -> Result<Current<'_>> {
        Ok(Current { _guard: ContextGuard::push(&self.hip, self.raw)?, context: self, _same_thread: PhantomData })
    }
}

impl Drop for PrimaryContext {
    fn drop(&mut self) {
        record_release("primary context", hip_call!(&self.hip, hipDevicePrimaryCtxRelease(self.device)));
    }
}

impl core::fmt::Debug for PrimaryContext {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "PrimaryContext(device {}, {:p})", self.device, self.raw)
    }
}

/// A primary context current on this thread (popped when dropped); makes the handles that
/// belong to it.
pub struct Current<'a> {
    _guard: ContextGuard<'a>,
    context: &'a Arc<PrimaryContext>,
    /// Pushed on this thread's context stack, so popped on this thread.
    _same_thread: PhantomData<*const ()>,
}

impl Current<'_> {
    /// The context that is current.
    pub fn context(&self) -> &Arc<PrimaryContext> {
        self.context
    }

    /// The HIP runtime.
    pub fn hip(&self) -> &Arc<HipSymbols> {
        &self.context.hip
    }

    /// hipStreamCreateWithFlags.
    pub fn create_stream(&self, flags: c_uint) -> Result<Stream> {
        let raw = hip_value!(self.hip(), hipStreamCreateWithFlags(flags))?;
        Ok(Stream { raw, context: self.context.clone() })
    }

    /// hipEventCreateWithFlags.
    pub fn create_event(&self, flags: c_uint) -> Result<Event> {
        let raw = hip_value!(self.hip(), hipEventCreateWithFlags(flags))?;
        Ok(Event { raw, context: self.context.clone() })
    }

    /// hipModuleLoadDataEx with JIT options (`options[i]` set to `values[i]`).
    pub fn load_module(&self, image: &[u8], options: &mut [hipJitOption], values: &mut [*mut c_void]) -> Result<Module> {
        let count = options.len().min(values.len()) as c_uint;
        // The image is HIP's to parse; the option arrays hold `count` entries each.
        let raw = hip_value!(self.hip(), hipModuleLoadDataEx(image.as_ptr().cast(), count, options.as_mut_ptr(), values.as_mut_ptr()))?;
        if raw.is_null() {
            return Err(crate::status!(Internal, "hipModuleLoadDataEx succeeded but returned no module"));
        }
        Ok(Module { raw, context: self.context.clone() })
    }

    /// hipMemPoolCreate.
    pub fn create_mem_pool(&self, properties: &hipMemPoolProps) -> Result<MemPool> {
        let raw = hip_value!(self.hip(), hipMemPoolCreate(properties))?;
        Ok(MemPool { raw, context: self.context.clone() })
    }

    /// hipGraphInstantiate, for launching `graph` on this context's device.
    pub fn instantiate(&self, graph: &Graph) -> Result<GraphExec> {
        let mut error_node: hipGraphNode_t = core::ptr::null_mut();
        let raw = hip_value!(self.hip(), hipGraphInstantiate(graph.raw, &mut error_node, core::ptr::null_mut(), 0))?;
        Ok(GraphExec { raw, context: self.context.clone() })
    }
}

/// Runs `release` with `context` current and records its outcome; without the context the
/// handle is left alone and that is recorded.
fn release_in(context: &Arc<PrimaryContext>, kind: &str, release: impl FnOnce(&HipSymbols) -> Result<()>) {
    match context.make_current() {
        Ok(current) => record_release(kind, release(current.hip())),
        Err(status) => record_release_failure(kind, &status.annotate("making its context current to release it; the handle is left alive")),
    }
}

/// An owning handle of a kind that belongs to a context, destroyed in that context.
macro_rules! context_handle {
    ($(#[$doc:meta])* $name:ident($raw:ty), $kind:literal, $destroy:ident) => {
        $(#[$doc])*
        pub struct $name {
            raw: $raw,
            context: Arc<PrimaryContext>,
        }

        // SAFETY: HIP handles may be used and destroyed from any thread (with their
        // context current, which the destroy makes it).
        unsafe impl Send for $name {}
        unsafe impl Sync for $name {}

        impl $name {
            /// The handle, valid while `self` lives.
            pub fn raw(&self) -> $raw {
                self.raw
            }

            /// The context it was made in.
            pub fn context(&self) -> &Arc<PrimaryContext> {
                &self.context
            }
        }

        impl Drop for $name {
            fn drop(&mut self) {
                let raw = self.raw;
                release_in(&self.context, $kind, |hip| hip_call!(hip, $destroy(raw)));
            }
        }

        impl core::fmt::Debug for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                write!(f, "{}({:p}, {:?})", stringify!($name), self.raw, self.context)
            }
        }
    };
}

context_handle!(
    /// A HIP stream, destroyed with hipStreamDestroy.
    Stream(hipStream_t), "stream", hipStreamDestroy
);
context_handle!(
    /// A HIP event, destroyed with hipEventDestroy.
    Event(hipEvent_t), "event", hipEventDestroy
);
context_handle!(
    /// A loaded code module, unloaded with hipModuleUnload.
    Module(hipModule_t), "module", hipModuleUnload
);
context_handle!(
    /// A stream-ordered memory pool, destroyed with hipMemPoolDestroy.
    MemPool(hipMemPool_t), "memory pool", hipMemPoolDestroy
);
context_handle!(
    /// An instantiated graph, destroyed with hipGraphExecDestroy.
    GraphExec(hipGraphExec_t), "graph exec", hipGraphExecDestroy
);

/// A HIP graph under construction, destroyed with hipGraphDestroy (which needs no context).
pub struct Graph {
    raw: hipGraph_t,
    hip: Arc<HipSymbols>,
}

// SAFETY: a graph handle may be used and destroyed from any thread.
unsafe impl Send for Graph {}
unsafe impl Sync for Graph {}

impl Graph {
    /// hipGraphCreate.
    pub fn create(hip: &Arc<HipSymbols>) -> Result<Graph> {
        let raw = hip_value!(hip, hipGraphCreate(0))?;
        Ok(Graph { raw, hip: hip.clone() })
    }

    /// The handle, valid while `self` lives.
    pub fn raw(&self) -> hipGraph_t {
        self.raw
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        record_release("graph", hip_call!(&self.hip, hipGraphDestroy(self.raw)));
    }
}

/// A stream some other object owns (a queue's), named by code that only enqueues on it
/// while the owner lives; copying the handle is harmless.
#[derive(Clone, Copy, Debug)]
pub struct BorrowedStream(pub hipStream_t);

// SAFETY: HIP streams may be used from any thread; see above for the lifetime.
unsafe impl Send for BorrowedStream {}
unsafe impl Sync for BorrowedStream {}

impl BorrowedStream {
    /// The handle (a method, so closures capture the whole value).
    pub fn raw(self) -> hipStream_t {
        self.0
    }
}

/// A memory pool some other object owns (the device's pools, which outlive the queues'
/// work), named by the queue operations that allocate from it.
#[derive(Clone, Copy, Debug)]
pub struct BorrowedPool(pub hipMemPool_t);

// SAFETY: HIP pool handles may be used from any thread; see above for the lifetime.
unsafe impl Send for BorrowedPool {}
unsafe impl Sync for BorrowedPool {}

impl BorrowedPool {
    /// The handle (a method, so closures capture the whole value).
    pub fn raw(self) -> hipMemPool_t {
        self.0
    }
}

/// Properties of a pinned memory pool on `device`, every other field zero.
pub fn device_pool_properties(device: hipDevice_t) -> hipMemPoolProps {
    // SAFETY: a plain C struct for which all zeroes is a valid value.
    let mut properties: hipMemPoolProps = unsafe { core::mem::zeroed() };
    properties.allocType = hipMemAllocationTypePinned;
    properties.handleTypes = hipMemHandleTypeNone;
    properties.location = hipMemLocation { type_: hipMemLocationTypeDevice, id: device };
    properties
}
