//! An RCCL (NCCL API) subset over the software HIP streams.
//!
//! Ranks are threads of this process, separate processes (one per GPU, as `mpirun` starts
//! them), or a mix. Communicator creation always meets in shared memory ([`shm`]: a directory
//! named from the unique id, where each rank registers its process), because a rank cannot
//! know beforehand where its peers are. When every rank turns out to be in this process they
//! share one in-process [`Clique`]: a collective is queued on the caller's stream like a
//! kernel; when it runs, the rank waits at a rendezvous until every rank's matching call has
//! arrived, the last arrival computes the result for all of them (device memory is host
//! memory), and everyone continues; sends copy eagerly into a mailbox so send/recv pairs
//! cannot deadlock. This keeps the thread case as fast and as exact as before and needs no
//! files while it runs. Otherwise each rank works through the shared-memory directory
//! ([`shm::SharedRank`]): the same stream ordering, rendezvous and failure rules, with data
//! passed as files (device memory of another process cannot be read directly).
//!
//! Every rendezvous (communicator creation and split, each collective, each receive) waits
//! at most [`timeout`] (`SOFTWARE_HIP_RCCL_TIMEOUT_MS`, default 30 s). When it expires the
//! waiting rank fails with `ncclRemoteError` (nccl.h: "A call failed possibly due to a network
//! error or a remote process exiting prematurely", the closest to a peer that never came;
//! `ncclSystemError` means a failed system call), the message naming the missing ranks goes to
//! `ncclGetLastError` (and, for stream work, to the communicator's `ncclCommGetAsyncError` and
//! the device's sticky `hipErrorLaunchFailure`), and the communicator is marked failed so its
//! other ranks fail at once too instead of waiting out their own deadlines.
//!
//! The NCCL entry points are exported from libamdhip64.so itself; `librccl.so` is a symlink
//! to it, so both names load one runtime (see README).

pub mod reduce;
pub mod shm;
pub mod types;

use crate::handles::HandleTable;
use crate::stream::Stream;
use parking_lot::{Condvar, Mutex};
use reduce::Reduction;
use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::ffi::CString;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use types::*;

pub type NcclResult<T> = Result<T, ncclResult_t>;

/// An error code with the message `ncclGetLastError` gives for it.
pub type Failure = (ncclResult_t, String);

static TIMEOUT_MS: AtomicU64 = AtomicU64::new(0);

/// How long a rendezvous waits for the other ranks: `SOFTWARE_HIP_RCCL_TIMEOUT_MS` (read
/// once), or what [`set_timeout`] chose.
pub fn timeout() -> Duration {
    let mut ms = TIMEOUT_MS.load(Ordering::Acquire);
    if ms == 0 {
        ms = crate::runtime::rccl_timeout_ms_from_env();
        ms = match TIMEOUT_MS.compare_exchange(0, ms, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => ms,
            Err(set) => set,
        };
    }
    Duration::from_millis(ms)
}

/// Overrides the rendezvous timeout for this process (tests; at least 1 ms).
pub fn set_timeout(timeout: Duration) {
    TIMEOUT_MS.store((timeout.as_millis() as u64).max(1), Ordering::Release);
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Records `message` as this thread's `ncclGetLastError` text.
pub fn set_last_error(message: &str) {
    let text = CString::new(message.replace('\0', " ")).expect("no NUL left");
    LAST_ERROR.with(|last| *last.borrow_mut() = text);
}

/// This thread's last error text; valid until the thread's next error.
pub fn last_error() -> *const core::ffi::c_char {
    LAST_ERROR.with(|last| last.borrow().as_ptr())
}

/// Sets the last error text and gives the code back (for synchronous failures).
fn report((code, message): Failure) -> ncclResult_t {
    set_last_error(&message);
    code
}

fn missing(present: impl Iterator<Item = bool>) -> Vec<usize> {
    present.enumerate().filter(|(_, here)| !*here).map(|(rank, _)| rank).collect()
}

/// A reduction operator as a collective uses it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Operator {
    Builtin(Reduction),
    /// Scale by a factor read now (host scalar) or when the collective runs (device scalar).
    PreMulSum { factor: ScalarSource },
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ScalarSource {
    Value(f64),
    /// Address of a device-resident scalar of the collective's data type.
    Address(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CollectiveKind {
    AllReduce,
    Reduce,
    Broadcast,
    AllGather,
    ReduceScatter,
}

/// One rank's part of a collective call.
#[derive(Debug, Clone, Copy)]
pub struct Part {
    pub kind: CollectiveKind,
    pub send: usize,
    pub recv: usize,
    /// Elements per rank (AllGather: sent; ReduceScatter: received; others: the buffer).
    pub count: usize,
    pub data_type: ncclDataType_t,
    pub operator: Operator,
    pub root: usize,
}

struct Rendezvous {
    parts: Vec<Option<Part>>,
    arrived: usize,
    done: bool,
    left: usize,
    result: NcclResult<()>,
}

struct CliqueState {
    collectives: HashMap<u64, Rendezvous>,
    /// Messages from (source rank, destination rank), in send order.
    mailboxes: HashMap<(usize, usize), VecDeque<Vec<u8>>>,
    splits: HashMap<u64, SplitRendezvous>,
    /// Set by ncclCommAbort or the first timeout: every wait of the clique fails with it.
    failure: Option<Failure>,
}

/// Per old rank: (new clique, new rank), or None for NCCL_SPLIT_NOCOLOR.
type SplitOutcome = Vec<Option<(Arc<Clique>, usize)>>;

struct SplitRendezvous {
    requests: Vec<Option<(i32, i32)>>,
    arrived: usize,
    outcome: Option<SplitOutcome>,
    left: usize,
}

/// The ranks of one communicator.
pub struct Clique {
    pub size: usize,
    state: Mutex<CliqueState>,
    changed: Condvar,
}

impl Clique {
    fn new(size: usize) -> Arc<Clique> {
        Arc::new(Clique {
            size,
            state: Mutex::new(CliqueState {
                collectives: HashMap::new(),
                mailboxes: HashMap::new(),
                splits: HashMap::new(),
                failure: None,
            }),
            changed: Condvar::new(),
        })
    }

    /// Runs rank `rank`'s part of collective number `sequence` (called on its stream).
    fn run_collective(&self, sequence: u64, rank: usize, part: Part) -> Result<(), Failure> {
        let deadline = Instant::now() + timeout();
        let mut state = self.state.lock();
        if let Some(failure) = &state.failure {
            return Err(failure.clone());
        }
        let size = self.size;
        let rendezvous = state.collectives.entry(sequence).or_insert_with(|| Rendezvous {
            parts: vec![None; size],
            arrived: 0,
            done: false,
            left: 0,
            result: Ok(()),
        });
        rendezvous.parts[rank] = Some(part);
        rendezvous.arrived += 1;
        if rendezvous.arrived == size {
            let parts: Vec<Part> = rendezvous.parts.iter().map(|p| p.expect("all arrived")).collect();
            rendezvous.result = execute_collective(&parts);
            rendezvous.done = true;
            self.changed.notify_all();
        }
        self.wait(&mut state, deadline, |state| state.collectives.get(&sequence).is_some_and(|r| r.done), |state| {
            let absent = missing(state.collectives[&sequence].parts.iter().map(Option::is_some));
            format!(
                "software-hip RCCL: rank {rank} of {size} timed out after {} ms in collective #{sequence} ({:?}): \
                 rank(s) {absent:?} never called it (SOFTWARE_HIP_RCCL_TIMEOUT_MS); the communicator has failed",
                timeout().as_millis(),
                part.kind
            )
        })?;
        let rendezvous = state.collectives.get_mut(&sequence).expect("present until all left");
        rendezvous.left += 1;
        let result = rendezvous.result;
        if rendezvous.left == size {
            state.collectives.remove(&sequence);
        }
        result.map_err(|code| {
            (code, format!("software-hip RCCL: rank {rank}: the ranks' calls of collective #{sequence} disagree (kind, count, type, root or operator)"))
        })
    }

    /// Waits until `ready` or the clique failed; at `deadline` fails the clique with
    /// ncclRemoteError and the message `timed_out` gives, waking every other waiter.
    fn wait(
        &self,
        state: &mut parking_lot::MutexGuard<'_, CliqueState>,
        deadline: Instant,
        ready: impl Fn(&CliqueState) -> bool,
        timed_out: impl FnOnce(&CliqueState) -> String,
    ) -> Result<(), Failure> {
        loop {
            if ready(state) {
                return Ok(());
            }
            if let Some(failure) = &state.failure {
                return Err(failure.clone());
            }
            if Instant::now() >= deadline {
                let failure = (ncclRemoteError, timed_out(state));
                state.failure = Some(failure.clone());
                self.changed.notify_all();
                return Err(failure);
            }
            self.changed.wait_until(state, deadline);
        }
    }

    fn post(&self, from: usize, to: usize, message: Vec<u8>) {
        self.state.lock().mailboxes.entry((from, to)).or_default().push_back(message);
        self.changed.notify_all();
    }

    fn take(&self, from: usize, to: usize) -> Result<Vec<u8>, Failure> {
        let deadline = Instant::now() + timeout();
        let mut state = self.state.lock();
        if let Some(failure) = &state.failure {
            return Err(failure.clone());
        }
        let has_message = |state: &CliqueState| state.mailboxes.get(&(from, to)).is_some_and(|queue| !queue.is_empty());
        self.wait(&mut state, deadline, has_message, |_| {
            format!(
                "software-hip RCCL: rank {to} of {} timed out after {} ms in ncclRecv: peer rank {from} never sent \
                 the matching ncclSend (SOFTWARE_HIP_RCCL_TIMEOUT_MS); the communicator has failed",
                self.size,
                timeout().as_millis()
            )
        })?;
        Ok(state.mailboxes.get_mut(&(from, to)).and_then(VecDeque::pop_front).expect("ready"))
    }

    fn abort(&self, rank: usize) {
        let mut state = self.state.lock();
        if state.failure.is_none() {
            let message = format!("software-hip RCCL: rank {rank} aborted the communicator (ncclCommAbort)");
            state.failure = Some((ncclRemoteError, message));
        }
        self.changed.notify_all();
    }

    /// ncclCommSplit rendezvous: blocks until every rank of this clique has asked.
    fn split(&self, sequence: u64, rank: usize, color: i32, key: i32) -> Result<Option<(Arc<Clique>, usize)>, Failure> {
        let deadline = Instant::now() + timeout();
        let mut state = self.state.lock();
        if let Some(failure) = &state.failure {
            return Err(failure.clone());
        }
        let size = self.size;
        let split = state.splits.entry(sequence).or_insert_with(|| SplitRendezvous {
            requests: vec![None; size],
            arrived: 0,
            outcome: None,
            left: 0,
        });
        split.requests[rank] = Some((color, key));
        split.arrived += 1;
        if split.arrived == size {
            let requests: Vec<(i32, i32)> = split.requests.iter().map(|r| r.expect("all arrived")).collect();
            let mut outcome: SplitOutcome = vec![None; size];
            let mut colors: Vec<i32> = requests.iter().map(|r| r.0).filter(|c| *c != NCCL_SPLIT_NOCOLOR).collect();
            colors.sort();
            colors.dedup();
            for color in colors {
                let mut members: Vec<usize> = (0..size).filter(|r| requests[*r].0 == color).collect();
                members.sort_by_key(|r| (requests[*r].1, *r));
                let clique = Clique::new(members.len());
                for (new_rank, old_rank) in members.into_iter().enumerate() {
                    outcome[old_rank] = Some((clique.clone(), new_rank));
                }
            }
            split.outcome = Some(outcome);
            self.changed.notify_all();
        }
        let ready = |state: &CliqueState| state.splits.get(&sequence).is_some_and(|s| s.outcome.is_some());
        self.wait(&mut state, deadline, ready, |state| {
            let absent = missing(state.splits[&sequence].requests.iter().map(Option::is_some));
            format!(
                "software-hip RCCL: rank {rank} of {size} timed out after {} ms in ncclCommSplit #{sequence}: \
                 rank(s) {absent:?} never called it (SOFTWARE_HIP_RCCL_TIMEOUT_MS); the communicator has failed",
                timeout().as_millis()
            )
        })?;
        let split = state.splits.get_mut(&sequence).expect("present until all left");
        let mine = split.outcome.as_ref().expect("decided")[rank].clone();
        split.left += 1;
        if split.left == size {
            state.splits.remove(&sequence);
        }
        Ok(mine)
    }
}

/// Where a communicator's other ranks are.
enum Ranks {
    /// All in this process: one clique object shared by every rank.
    Local(Arc<Clique>),
    /// Possibly in other processes: this rank's view of a shared-memory directory.
    Shared(shm::SharedRank),
}

/// One rank's handle on a clique (`ncclComm_t`).
pub struct Comm {
    ranks: Ranks,
    pub rank: usize,
    pub device: usize,
    next_collective: AtomicU64,
    next_split: AtomicU64,
    async_error: AtomicU32,
    async_message: Mutex<String>,
    operators: Mutex<HashMap<ncclRedOp_t, ScalarSource>>,
    next_operator: AtomicU32,
}

impl Comm {
    fn new(clique: Arc<Clique>, rank: usize, device: usize) -> Arc<Comm> {
        Comm::with_ranks(Ranks::Local(clique), rank, device)
    }

    fn shared(shared: shm::SharedRank, device: usize) -> Arc<Comm> {
        let rank = shared.rank;
        Comm::with_ranks(Ranks::Shared(shared), rank, device)
    }

    fn with_ranks(ranks: Ranks, rank: usize, device: usize) -> Arc<Comm> {
        Arc::new(Comm {
            ranks,
            rank,
            device,
            next_collective: AtomicU64::new(0),
            next_split: AtomicU64::new(0),
            async_error: AtomicU32::new(ncclSuccess),
            async_message: Mutex::new(String::new()),
            operators: Mutex::new(HashMap::new()),
            next_operator: AtomicU32::new(ncclNumOps),
        })
    }

    /// The number of ranks (`ncclCommCount`).
    pub fn size(&self) -> usize {
        match &self.ranks {
            Ranks::Local(clique) => clique.size,
            Ranks::Shared(shared) => shared.size,
        }
    }

    /// Whether the other ranks may live in other processes (shared-memory communicator).
    pub fn is_shared(&self) -> bool {
        matches!(self.ranks, Ranks::Shared(_))
    }

    pub fn async_error(&self) -> ncclResult_t {
        self.async_error.load(Ordering::Acquire)
    }

    /// The message of the first asynchronous error (empty when none).
    pub fn async_message(&self) -> String {
        self.async_message.lock().clone()
    }

    /// Records the first failure of stream work on `device`; a failed peer (ncclRemoteError)
    /// also becomes the device's sticky error, as a failed kernel does.
    fn record_failure(&self, (code, message): Failure, device: usize) {
        let mut first = self.async_message.lock();
        if self.async_error.compare_exchange(ncclSuccess, code, Ordering::AcqRel, Ordering::Acquire).is_ok() {
            *first = message;
        }
        drop(first);
        if code == ncclRemoteError {
            if let Ok(device) = crate::runtime::device(device as i64) {
                device.set_sticky_error(crate::types::hipErrorLaunchFailure);
            }
        }
    }

    /// Resolves a reduction operator handle of this communicator.
    pub fn operator(&self, op: ncclRedOp_t) -> NcclResult<Operator> {
        Ok(match op {
            ncclSum => Operator::Builtin(Reduction::Sum),
            ncclProd => Operator::Builtin(Reduction::Prod),
            ncclMax => Operator::Builtin(Reduction::Max),
            ncclMin => Operator::Builtin(Reduction::Min),
            ncclAvg => Operator::Builtin(Reduction::Avg),
            _ => Operator::PreMulSum { factor: *self.operators.lock().get(&op).ok_or(ncclInvalidArgument)? },
        })
    }

    pub fn create_premul_sum(&self, factor: ScalarSource) -> ncclRedOp_t {
        let op = self.next_operator.fetch_add(1, Ordering::Relaxed);
        self.operators.lock().insert(op, factor);
        op
    }

    pub fn destroy_operator(&self, op: ncclRedOp_t) -> NcclResult<()> {
        self.operators.lock().remove(&op).map(|_| ()).ok_or(ncclInvalidArgument)
    }

    pub fn abort(&self) {
        match &self.ranks {
            Ranks::Local(clique) => clique.abort(self.rank),
            Ranks::Shared(shared) => shared.abort(),
        }
    }

    /// `ncclCommSplit`: returns this rank's new communicator, or None for NCCL_SPLIT_NOCOLOR.
    pub fn split(&self, color: i32, key: i32) -> NcclResult<Option<Arc<Comm>>> {
        if color < NCCL_SPLIT_NOCOLOR {
            return Err(ncclInvalidArgument);
        }
        let sequence = self.next_split.fetch_add(1, Ordering::Relaxed);
        Ok(match &self.ranks {
            Ranks::Local(clique) => {
                let outcome = clique.split(sequence, self.rank, color, key).map_err(report)?;
                outcome.map(|(clique, rank)| Comm::new(clique, rank, self.device))
            }
            Ranks::Shared(shared) => {
                let outcome = shared.split(sequence, color, key).map_err(report)?;
                outcome.map(|shared| Comm::shared(shared, self.device))
            }
        })
    }

    /// Queues this rank's part of the next collective on `stream`.
    pub fn collective(self: &Arc<Self>, stream: Arc<Stream>, part: Part) -> NcclResult<()> {
        validate_part(&part, self.size())?;
        let sequence = self.next_collective.fetch_add(1, Ordering::Relaxed);
        let comm = self.clone();
        let device = stream.device;
        submit(stream, false, Box::new(move || {
            let outcome = match &comm.ranks {
                Ranks::Local(clique) => clique.run_collective(sequence, comm.rank, part),
                Ranks::Shared(shared) => shared.run_collective(sequence, part),
            };
            if let Err(failure) = outcome {
                comm.record_failure(failure, device);
            }
        }))
    }

    /// `ncclSend`: the data is copied when the send runs, so it never waits for the receiver.
    pub fn send(self: &Arc<Self>, stream: Arc<Stream>, buffer: usize, bytes: usize, peer: usize) -> NcclResult<()> {
        if peer >= self.size() || (buffer == 0 && bytes > 0) {
            return Err(ncclInvalidArgument);
        }
        let comm = self.clone();
        let device = stream.device;
        submit(stream, true, Box::new(move || {
            let mut message = vec![0u8; bytes];
            // SAFETY: the caller guaranteed `buffer` holds `bytes` readable bytes until the
            // send has run (NCCL's contract).
            unsafe { std::ptr::copy_nonoverlapping(buffer as *const u8, message.as_mut_ptr(), bytes) };
            match &comm.ranks {
                Ranks::Local(clique) => clique.post(comm.rank, peer, message),
                Ranks::Shared(shared) => {
                    if let Err(failure) = shared.post(peer, &message) {
                        comm.record_failure(failure, device);
                    }
                }
            }
        }))
    }

    /// `ncclRecv`: waits in stream order for the peer's next message.
    pub fn recv(self: &Arc<Self>, stream: Arc<Stream>, buffer: usize, bytes: usize, peer: usize) -> NcclResult<()> {
        if peer >= self.size() || (buffer == 0 && bytes > 0) {
            return Err(ncclInvalidArgument);
        }
        let comm = self.clone();
        let device = stream.device;
        let take = move |comm: &Comm| match &comm.ranks {
            Ranks::Local(clique) => clique.take(peer, comm.rank),
            Ranks::Shared(shared) => shared.take(peer),
        };
        submit(stream, false, Box::new(move || match take(&comm) {
            Ok(message) if message.len() == bytes => {
                // SAFETY: the caller guaranteed `buffer` holds `bytes` writable bytes.
                unsafe { std::ptr::copy_nonoverlapping(message.as_ptr(), buffer as *mut u8, bytes) }
            }
            Ok(message) => {
                let text = format!(
                    "software-hip RCCL: rank {}: ncclRecv of {bytes} bytes from rank {peer} matched a send of {} bytes",
                    comm.rank,
                    message.len()
                );
                comm.record_failure((ncclInvalidUsage, text), device)
            }
            Err(failure) => comm.record_failure(failure, device),
        }))
    }
}

fn validate_part(part: &Part, size: usize) -> NcclResult<()> {
    let element = element_size(part.data_type).ok_or(ncclInvalidArgument)?;
    part.count.checked_mul(element).and_then(|b| b.checked_mul(size)).ok_or(ncclInvalidArgument)?;
    if part.count > 0 && (part.recv == 0 || (part.send == 0 && part.kind != CollectiveKind::Broadcast)) {
        return Err(ncclInvalidArgument);
    }
    if matches!(part.kind, CollectiveKind::Reduce | CollectiveKind::Broadcast) && part.root >= size {
        return Err(ncclInvalidArgument);
    }
    Ok(())
}

/// Computes a collective once every rank's part is known (all ranks are waiting).
fn execute_collective(parts: &[Part]) -> NcclResult<()> {
    let first = parts[0];
    let consistent = parts.iter().all(|p| {
        p.kind == first.kind && p.count == first.count && p.data_type == first.data_type && p.root == first.root
    });
    if !consistent {
        return Err(ncclInvalidUsage);
    }
    let element = element_size(first.data_type).ok_or(ncclInvalidArgument)?;
    let bytes = first.count * element;
    let ranks = parts.len();
    // SAFETY (all reads/writes below): each rank's caller guaranteed its buffers hold the
    // sizes NCCL defines for this collective until it has run; every rank is parked at the
    // rendezvous while this runs, so nothing else touches them.
    let read = |address: usize, length: usize| -> Vec<u8> {
        let mut copy = vec![0u8; length];
        if length > 0 {
            unsafe { std::ptr::copy_nonoverlapping(address as *const u8, copy.as_mut_ptr(), length) };
        }
        copy
    };
    let write = |address: usize, data: &[u8]| {
        if !data.is_empty() {
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), address as *mut u8, data.len()) };
        }
    };
    let reduce_all = |input_bytes: usize| -> NcclResult<Vec<u8>> {
        let inputs: Vec<Vec<u8>> = parts.iter().map(|p| read(p.send, input_bytes)).collect();
        let slices: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
        let (reduction, factors) = reduction_of(parts, first.data_type)?;
        let mut output = vec![0u8; input_bytes];
        reduce::reduce(first.data_type, reduction, &slices, &factors, &mut output)?;
        Ok(output)
    };
    match first.kind {
        CollectiveKind::AllReduce => {
            let result = reduce_all(bytes)?;
            parts.iter().for_each(|p| write(p.recv, &result));
        }
        CollectiveKind::Reduce => {
            let result = reduce_all(bytes)?;
            write(parts[first.root].recv, &result);
        }
        CollectiveKind::Broadcast => {
            let data = read(parts[first.root].send, bytes);
            parts.iter().for_each(|p| write(p.recv, &data));
        }
        CollectiveKind::AllGather => {
            let gathered: Vec<u8> = parts.iter().flat_map(|p| read(p.send, bytes)).collect();
            parts.iter().for_each(|p| write(p.recv, &gathered));
        }
        CollectiveKind::ReduceScatter => {
            let result = reduce_all(bytes * ranks)?;
            for (rank, part) in parts.iter().enumerate() {
                write(part.recv, &result[rank * bytes..(rank + 1) * bytes]);
            }
        }
    }
    Ok(())
}

/// The reduction of a collective and each rank's pre-multiplication factor.
fn reduction_of(parts: &[Part], data_type: ncclDataType_t) -> NcclResult<(Reduction, Vec<f64>)> {
    match parts[0].operator {
        Operator::Builtin(reduction) => {
            if parts.iter().any(|p| p.operator != parts[0].operator) {
                return Err(ncclInvalidUsage);
            }
            Ok((reduction, vec![1.0; parts.len()]))
        }
        Operator::PreMulSum { .. } => {
            let factors = parts
                .iter()
                .map(|p| match p.operator {
                    Operator::PreMulSum { factor: ScalarSource::Value(value) } => Ok(value),
                    Operator::PreMulSum { factor: ScalarSource::Address(address) } => scalar_at(address, data_type),
                    Operator::Builtin(_) => Err(ncclInvalidUsage),
                })
                .collect::<NcclResult<Vec<f64>>>()?;
            Ok((Reduction::PreMulSum, factors))
        }
    }
}

/// Reads one element of `data_type` at `address` as f64 (for pre-multiplication factors).
pub fn scalar_at(address: usize, data_type: ncclDataType_t) -> NcclResult<f64> {
    let size = element_size(data_type).ok_or(ncclInvalidArgument)?;
    if address == 0 {
        return Err(ncclInvalidArgument);
    }
    let mut bytes = [0u8; 8];
    // SAFETY: the scalar's owner guaranteed one element is readable at `address`.
    unsafe { std::ptr::copy_nonoverlapping(address as *const u8, bytes.as_mut_ptr(), size) };
    let half = u16::from_le_bytes([bytes[0], bytes[1]]);
    let word: [u8; 4] = bytes[..4].try_into().expect("4 bytes");
    Ok(match data_type {
        ncclInt8 => bytes[0] as i8 as f64,
        ncclUint8 => bytes[0] as f64,
        ncclInt32 => i32::from_le_bytes(word) as f64,
        ncclUint32 => u32::from_le_bytes(word) as f64,
        ncclInt64 => i64::from_le_bytes(bytes) as f64,
        ncclUint64 => u64::from_le_bytes(bytes) as f64,
        ncclFloat16 => reduce::f16_to_f32(half) as f64,
        ncclBfloat16 => reduce::bf16_to_f32(half) as f64,
        ncclFloat32 => f32::from_le_bytes(word) as f64,
        ncclFloat64 => f64::from_le_bytes(bytes),
        _ => return Err(ncclInvalidArgument),
    })
}

// ---- communicator creation -----------------------------------------------------------------

/// Ids whose creation failed in this process: ranks of this process joining one later fail
/// at once with the same error (its shared-memory directory is gone once its ranks left).
fn failed_ids() -> &'static Mutex<HashMap<Vec<u8>, Failure>> {
    static FAILED: OnceLock<Mutex<HashMap<Vec<u8>, Failure>>> = OnceLock::new();
    FAILED.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Cliques of ids whose ranks all turned out to be in this process: id -> (clique, ranks
/// that have taken it); the last rank to take it removes the entry.
type LocalCliques = Mutex<HashMap<Vec<u8>, (Arc<Clique>, usize)>>;

fn local_cliques() -> &'static LocalCliques {
    static LOCAL: OnceLock<LocalCliques> = OnceLock::new();
    LOCAL.get_or_init(|| Mutex::new(HashMap::new()))
}

/// `ncclGetUniqueId`: unique across processes and over time (process id, a counter, the time
/// and a random nonce), so a directory a crashed run left behind never matches a new id.
pub fn new_unique_id() -> [u8; NCCL_UNIQUE_ID_BYTES] {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let text = format!(
        "softhip-nccl:{}:{}:{nanos}:{:016x}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed),
        random_nonce()
    );
    let mut id = [0u8; NCCL_UNIQUE_ID_BYTES];
    id[..text.len()].copy_from_slice(text.as_bytes());
    id
}

/// 64 random bits: /dev/urandom, else std's randomly keyed hasher.
fn random_nonce() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    use std::io::Read;
    let mut bytes = [0u8; 8];
    match std::fs::File::open("/dev/urandom").and_then(|mut file| file.read_exact(&mut bytes)) {
        Ok(()) => u64::from_le_bytes(bytes),
        Err(_) => std::collections::hash_map::RandomState::new().build_hasher().finish(),
    }
}

/// `ncclCommInitRank`: blocks until all `ranks` ranks have joined with the same id, at most
/// [`timeout`], in this process or others (the rendezvous is in shared memory, see
/// [`shm::rendezvous`]). A rank count that differs from another joiner's fails every rank of
/// the id with ncclInvalidArgument at once, a rank joining twice fails them all with
/// ncclInvalidUsage, and a rank still missing at the deadline (or whose process exited) fails
/// them with ncclRemoteError; ranks of this process joining a failed id later fail at once.
/// When every rank is in this process they share one in-process clique (threads, as before);
/// otherwise each rank works through the shared-memory directory.
pub fn init_rank(id: &[u8; NCCL_UNIQUE_ID_BYTES], ranks: usize, rank: usize, device: usize) -> NcclResult<Arc<Comm>> {
    init_rank_waiting(id, ranks, rank, device).map_err(report)
}

fn init_rank_waiting(id: &[u8; NCCL_UNIQUE_ID_BYTES], ranks: usize, rank: usize, device: usize) -> Result<Arc<Comm>, Failure> {
    if ranks == 0 || rank >= ranks {
        return Err((ncclInvalidArgument, format!("software-hip RCCL: ncclCommInitRank: rank {rank} is not below nranks {ranks}")));
    }
    let key = id.to_vec();
    if let Some(failure) = failed_ids().lock().get(&key) {
        return Err(failure.clone());
    }
    let base = shm::base_dir();
    let joined = match shm::rendezvous(&base, id, ranks, rank) {
        Ok(joined) => joined,
        Err(failure) => {
            failed_ids().lock().entry(key).or_insert_with(|| failure.clone());
            return Err(failure);
        }
    };
    if !joined.all_in_this_process() {
        return Ok(Comm::shared(shm::SharedRank::new(&base, joined, rank), device));
    }
    let mut local = local_cliques().lock();
    let (clique, taken) = local.entry(key.clone()).or_insert_with(|| (Clique::new(ranks), 0));
    let clique = clique.clone();
    *taken += 1;
    if *taken == ranks {
        // Every rank has seen the rendezvous complete: the directory is no longer needed.
        local.remove(&key);
        joined.dissolve();
    }
    Ok(Comm::new(clique, rank, device))
}

/// `ncclCommInitAll`: one communicator per listed device, in this thread.
pub fn init_all(devices: &[usize]) -> NcclResult<Vec<Arc<Comm>>> {
    if devices.is_empty() {
        return Err(ncclInvalidArgument);
    }
    let clique = Clique::new(devices.len());
    Ok(devices.iter().enumerate().map(|(rank, device)| Comm::new(clique.clone(), rank, *device)).collect())
}

pub fn comms() -> &'static HandleTable<Comm> {
    static TABLE: OnceLock<HandleTable<Comm>> = OnceLock::new();
    TABLE.get_or_init(|| HandleTable::new(ncclInvalidArgument))
}

// ---- groups --------------------------------------------------------------------------------

type Task = Box<dyn FnOnce() + Send>;
/// Work held by an open group: its stream, whether it is a send, and the work.
type GroupedWork = (Arc<Stream>, bool, Task);
/// One stream's share of a closed group: (is a send, work) in call order.
type StreamShare = (Arc<Stream>, Vec<(bool, Task)>);

thread_local! {
    static GROUP: RefCell<(usize, Vec<GroupedWork>)> = const { RefCell::new((0, Vec::new())) };
}

/// Queues work now, or holds it until the outermost ncclGroupEnd of this thread.
fn submit(stream: Arc<Stream>, is_send: bool, work: Task) -> NcclResult<()> {
    let held = GROUP.with(|group| {
        let mut group = group.borrow_mut();
        if group.0 > 0 {
            group.1.push((stream.clone(), is_send, work));
            None
        } else {
            Some(work)
        }
    });
    match held {
        Some(work) => stream.enqueue(work).map(|_| ()).map_err(|_| ncclUnhandledCudaError),
        None => Ok(()),
    }
}

pub fn group_start() {
    GROUP.with(|group| group.borrow_mut().0 += 1);
}

/// Ends a group; at the outermost end each stream gets one item running its sends first
/// (they never block), then the rest in call order, so grouped send/recv pairs complete.
pub fn group_end() -> NcclResult<()> {
    let pending = GROUP.with(|group| {
        let mut group = group.borrow_mut();
        if group.0 == 0 {
            return Err(ncclInvalidUsage);
        }
        group.0 -= 1;
        Ok(if group.0 == 0 { std::mem::take(&mut group.1) } else { Vec::new() })
    })?;
    let mut per_stream: Vec<StreamShare> = Vec::new();
    for (stream, is_send, work) in pending {
        match per_stream.iter_mut().find(|(s, _)| Arc::ptr_eq(s, &stream)) {
            Some((_, items)) => items.push((is_send, work)),
            None => per_stream.push((stream, vec![(is_send, work)])),
        }
    }
    let mut result = Ok(());
    for (stream, items) in per_stream {
        let (sends, others): (Vec<_>, Vec<_>) = items.into_iter().partition(|(is_send, _)| *is_send);
        let queued = stream.enqueue(Box::new(move || {
            for (_, work) in sends.into_iter().chain(others) {
                work();
            }
        }));
        if queued.is_err() {
            result = Err(ncclUnhandledCudaError);
        }
    }
    result
}
