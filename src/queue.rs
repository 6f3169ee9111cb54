//! Queue operations: each physical GPU of a device has one queue, a HIP stream and a
//! worker thread. An operation waits for its wait semaphores without blocking the thread
//! that submitted it (timepoints on the semaphores hand it to the worker once all are
//! reached, so a wait may run ahead of a signal submitted later), is then issued onto the
//! stream by the worker, and its signal semaphores are signalled by a host function that
//! HIP runs on the stream once the work before it has finished.
//!
//! No HIP call is ever made from a HIP host callback or a semaphore timepoint: both only
//! hand work to a worker or signal semaphores. Every failure, while waiting (a failed wait
//! semaphore) or while issuing (a HIP error), fails the operation's signal semaphores with
//! the root cause, annotated with the operation, so every waiter sees why.

use crate::device::PhysicalGpu;
use crate::hip::context::ContextGuard;
use crate::hip::types::{hipStreamNonBlocking, hipStream_t};
use crate::hip::HipSymbols;
use crate::hip_call;
use crate::semaphore::SemaphoreRef;
use crate::status::{Result, Status};
use core::ffi::c_void;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};

/// What an operation does on the stream once its waits are satisfied.
pub type IssueFn = Box<dyn FnOnce(&StreamContext) -> Result<()> + Send>;

/// What an operation's issue step gets: the GPU, its stream and the HIP runtime, with the
/// GPU's context already current.
pub struct StreamContext<'a> {
    pub hip: &'a HipSymbols,
    pub gpu: PhysicalGpu,
    pub gpu_index: usize,
    pub stream: hipStream_t,
}

/// One queue operation.
pub struct Operation {
    /// Names the operation in failures ("queue_fill", ...).
    pub name: &'static str,
    pub waits: Vec<(SemaphoreRef, u64)>,
    pub signals: Vec<(SemaphoreRef, u64)>,
    pub issue: IssueFn,
    /// Objects the operation uses (buffers, command buffers...), dropped once it finished.
    pub keep_alive: Vec<Box<dyn Send>>,
}

/// What the worker and the stream callback need once the waits are over.
struct ReadyOperation {
    name: &'static str,
    signals: Vec<(SemaphoreRef, u64)>,
    issue: IssueFn,
    keep_alive: Vec<Box<dyn Send>>,
}

impl ReadyOperation {
    fn fail(self, status: Status) {
        fail_signals(&self.signals, status);
    }
}

fn fail_signals(signals: &[(SemaphoreRef, u64)], status: Status) {
    for (semaphore, _) in signals {
        semaphore.fail(status.duplicate());
    }
}

enum Message {
    Ready(ReadyOperation),
    /// A finished operation that used objects: they are dropped on the worker (releasing a
    /// buffer may call HIP, e.g. hipFree, which HIP forbids inside the host callback that
    /// reports completion) and only then are its semaphores signalled, so a waiter that
    /// wakes finds the driver holding nothing of the operation. (IREE's VM aborts if a
    /// module is torn down while a driver still holds a file or imported buffer over the
    /// module's constant data.)
    Completed { signals: Vec<(SemaphoreRef, u64)>, keep_alive: Vec<Box<dyn Send>> },
    Stop,
}

/// One GPU's queue.
pub struct Queue {
    sender: Mutex<mpsc::Sender<Message>>,
    worker: Option<std::thread::JoinHandle<()>>,
    hip: Arc<HipSymbols>,
    gpu: PhysicalGpu,
    stream: hipStream_t,
}

// SAFETY: the stream handle is only used by the worker and, on drop, by the owner after
// the worker stopped; HIP streams may be used from any thread.
unsafe impl Send for Queue {}
unsafe impl Sync for Queue {}

struct StreamHandle(hipStream_t);
// SAFETY: see Queue.
unsafe impl Send for StreamHandle {}

impl Queue {
    /// Creates the GPU's stream and worker.
    pub fn create(hip: Arc<HipSymbols>, gpu: PhysicalGpu, gpu_index: usize) -> Result<Queue> {
        let mut stream: hipStream_t = core::ptr::null_mut();
        {
            let _context = ContextGuard::push(&hip, gpu.context)?;
            hip_call!(&hip, hipStreamCreateWithFlags(&mut stream, hipStreamNonBlocking))?;
        }
        let (sender, receiver) = mpsc::channel::<Message>();
        let worker_hip = hip.clone();
        let worker_stream = StreamHandle(stream);
        let releases = sender.clone();
        let worker = std::thread::Builder::new()
            .name(format!("iree-hip-queue-{gpu_index}"))
            .spawn(move || {
                let stream = worker_stream;
                run_worker(&worker_hip, gpu, gpu_index, stream.0, receiver, releases)
            })
            .map_err(|e| crate::status!(ResourceExhausted, "cannot start the queue worker thread: {e}"))?;
        Ok(Queue { sender: Mutex::new(sender), worker: Some(worker), hip, gpu, stream })
    }

    /// Submits an operation; returns at once. Waits already satisfied send it straight to
    /// the worker.
    pub fn submit(&self, operation: Operation) {
        let Operation { name, waits, signals, issue, keep_alive } = operation;
        let ready = ReadyOperation { name, signals, issue, keep_alive };
        let sender = self.sender.lock().clone();
        if waits.is_empty() {
            send_ready(&sender, ready);
            return;
        }
        let pending = Arc::new(PendingOperation { remaining: AtomicUsize::new(waits.len()), operation: Mutex::new(Some(ready)), sender: Mutex::new(sender) });
        for (semaphore, value) in &waits {
            let pending = pending.clone();
            let value = *value;
            semaphore.on_value(value, move |outcome| match outcome {
                Ok(()) => {
                    if pending.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
                        if let Some(ready) = pending.operation.lock().take() {
                            send_ready(&pending.sender.lock(), ready);
                        }
                    }
                }
                Err(status) => {
                    if let Some(ready) = pending.operation.lock().take() {
                        let name = ready.name;
                        ready.fail(status.annotate(&format!("{name} was waiting for semaphore value {value}")));
                    }
                }
            });
        }
    }

    /// The queue's HIP stream (for work issued outside the worker: inline command buffers).
    pub fn stream(&self) -> hipStream_t {
        self.stream
    }

    /// Blocks until everything issued so far has finished on the stream.
    pub fn synchronize(&self) -> Result<()> {
        let _context = ContextGuard::push(&self.hip, self.gpu.context)?;
        hip_call!(&self.hip, hipStreamSynchronize(self.stream))
    }
}

struct PendingOperation {
    remaining: AtomicUsize,
    operation: Mutex<Option<ReadyOperation>>,
    sender: Mutex<mpsc::Sender<Message>>,
}

fn send_ready(sender: &mpsc::Sender<Message>, ready: ReadyOperation) {
    if let Err(mpsc::SendError(Message::Ready(ready))) = sender.send(Message::Ready(ready)) {
        let name = ready.name;
        ready.fail(crate::status!(Cancelled, "{name} was cancelled: its device was destroyed"));
    }
}

fn run_worker(hip: &HipSymbols, gpu: PhysicalGpu, gpu_index: usize, stream: hipStream_t, receiver: mpsc::Receiver<Message>, releases: mpsc::Sender<Message>) {
    loop {
        let ready = match receiver.recv() {
            Ok(Message::Ready(ready)) => ready,
            Ok(Message::Completed { signals, keep_alive }) => {
                drop(keep_alive);
                signal_all(&signals);
                continue;
            }
            Ok(Message::Stop) | Err(_) => break,
        };
        let ReadyOperation { name, signals, issue, keep_alive } = ready;
        let context = match ContextGuard::push(hip, gpu.context) {
            Ok(context) => context,
            Err(status) => {
                fail_signals(&signals, status.annotate(&format!("while issuing {name}")));
                continue;
            }
        };
        if let Err(status) = issue(&StreamContext { hip, gpu, gpu_index, stream }) {
            fail_signals(&signals, status.annotate(&format!("while issuing {name}")));
            continue;
        }
        // Signal once the stream has run everything issued so far.
        let completion = Box::into_raw(Box::new(Completion { signals, keep_alive, releases: releases.clone() }));
        if let Err(status) = hip_call!(hip, hipLaunchHostFunc(stream, Some(complete_operation), completion.cast())) {
            // SAFETY: HIP did not take the callback, so we still own it.
            let completion = unsafe { Box::from_raw(completion) };
            fail_signals(&completion.signals, status.annotate(&format!("while issuing {name}")));
        }
        drop(context);
    }
}

/// Signals `signals`, failing a semaphore whose signal is refused.
fn signal_all(signals: &[(SemaphoreRef, u64)]) {
    for (semaphore, value) in signals {
        if let Err(status) = semaphore.signal(*value) {
            semaphore.fail(status);
        }
    }
}

/// Signals an operation's semaphores once the stream reached it: at once when it holds
/// nothing, else from the worker after releasing what it used (`Message::Completed`).
struct Completion {
    signals: Vec<(SemaphoreRef, u64)>,
    keep_alive: Vec<Box<dyn Send>>,
    releases: mpsc::Sender<Message>,
}

unsafe extern "C" fn complete_operation(user_data: *mut c_void) {
    crate::boundary::value_entry("iree_hal_hip_queue_complete_operation", (), || {
        // SAFETY: the Box handed to hipLaunchHostFunc, run exactly once by HIP.
        let completion = unsafe { Box::from_raw(user_data.cast::<Completion>()) };
        let Completion { signals, keep_alive, releases } = *completion;
        if keep_alive.is_empty() {
            signal_all(&signals);
            return;
        }
        // The worker outlives every completion (the queue synchronizes its stream before
        // stopping it), so this send does not fail in practice; if it did, the objects
        // would be dropped here as a last resort, and the semaphores signalled.
        if let Err(mpsc::SendError(Message::Completed { signals, keep_alive })) = releases.send(Message::Completed { signals, keep_alive }) {
            drop(keep_alive);
            signal_all(&signals);
        }
    })
}

impl Drop for Queue {
    fn drop(&mut self) {
        // Let the stream finish (its completions queue their releases and signals to the
        // worker), then stop the worker after it has handled them, then destroy the stream.
        let context = ContextGuard::push(&self.hip, self.gpu.context);
        if context.is_ok() {
            let _ = hip_call!(&self.hip, hipStreamSynchronize(self.stream));
        }
        let _ = self.sender.lock().send(Message::Stop);
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
        if context.is_ok() {
            let _ = hip_call!(&self.hip, hipStreamDestroy(self.stream));
        }
    }
}

/// A raw pointer moved into an issue closure; the memory it points at is kept alive by the
/// operation's `keep_alive` until the stream has finished with it.
#[derive(Clone, Copy)]
pub struct SendPtr(pub *mut c_void);
// SAFETY: see above; the pointee's lifetime is managed by the operation.
unsafe impl Send for SendPtr {}

impl SendPtr {
    /// The pointer (a method, so closures capture the whole `SendPtr`).
    pub fn get(self) -> *mut c_void {
        self.0
    }
}

/// A fill pattern of 1, 2 or 4 bytes, widened to what hipMemsetD{8,16,32}Async take.
#[derive(Clone, Copy, Debug)]
pub enum FillPattern {
    U8(u8),
    U16(u16),
    U32(u32),
}

/// Reads a fill pattern.
///
/// # Safety
/// `pattern` must point at `length` readable bytes.
pub unsafe fn fill_pattern(pattern: *const c_void, length: usize) -> Result<FillPattern> {
    // SAFETY: per the caller (unaligned reads: the pattern has no alignment guarantee).
    unsafe {
        match length {
            1 => Ok(FillPattern::U8(*pattern.cast::<u8>())),
            2 => Ok(FillPattern::U16(pattern.cast::<u16>().read_unaligned())),
            4 => Ok(FillPattern::U32(pattern.cast::<u32>().read_unaligned())),
            _ => Err(crate::status!(InvalidArgument, "fill pattern length {length} is not 1, 2 or 4 bytes")),
        }
    }
}

/// Enqueues a fill of `count` pattern elements at `target`.
pub fn issue_fill(q: &StreamContext, target: SendPtr, count: usize, pattern: FillPattern) -> Result<()> {
    match pattern {
        FillPattern::U8(v) => hip_call!(q.hip, hipMemsetD8Async(target.get(), v as core::ffi::c_char, count, q.stream)),
        FillPattern::U16(v) => hip_call!(q.hip, hipMemsetD16Async(target.get(), v as core::ffi::c_short, count, q.stream)),
        FillPattern::U32(v) => hip_call!(q.hip, hipMemsetD32Async(target.get(), v as core::ffi::c_int, count, q.stream)),
    }
}
