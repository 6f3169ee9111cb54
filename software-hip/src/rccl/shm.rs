//! Ranks in several processes: a communicator is a directory of small files in shared memory
//! (tmpfs, `/dev/shm` by default).
//!
//! Why files and not a mapped ring with atomics: every step of the protocol is "publish a
//! file under its final name, or find it there", which tmpfs makes atomic (a file is written
//! under a temporary name, then hard-linked to its final name; a link fails if the name
//! exists, which also makes "first one wins" decisions such as the failure record). No unsafe
//! code, no cross-process locks that a dying process could leave held, and every wait is a
//! poll that can also look at deadlines and at whether the peers' processes still live.
//! The cost is latency (a poll sleeps up to a millisecond), acceptable for a CPU device.
//!
//! Layout of one communicator's directory (`softhip-rccl-<32 hex digits>`):
//!
//! | file | written by | meaning |
//! | --- | --- | --- |
//! | `join-<rank>` | the rank, at init | `nranks pid process-start-time` (also how peers check it still lives) |
//! | `failed` | first failing rank | `code` line, then the message; every wait fails with it |
//! | `c<seq>-<from>-<to>` | rank `from` | its part of collective `seq` (header, then data), one hard link per reader; the reader unlinks it |
//! | `s<seq>-<from>-<to>` | rank `from` | its color and key for split `seq`, one link per reader |
//! | `m<from>-<to>-<n>` | rank `from` | its `n`-th message to `to` (ncclSend); the receiver unlinks it |
//! | `left-<rank>` | the rank, when its communicator is freed | the last rank to leave removes the directory |
//!
//! A split's communicators get fresh directories named from the parent's name, the split's
//! number and the color; each member creates its color's directory before it publishes its
//! request, so no member can remove it before every other member has it.

use super::types::*;
use super::{timeout, CollectiveKind, Failure, Operator, Part, ScalarSource};
use crate::rccl::reduce::{self, Reduction};
use parking_lot::Mutex;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Overrides the directory under which communicators' directories are made.
pub const SHM_DIR_ENV: &str = "SOFTWARE_HIP_RCCL_SHM_DIR";

/// How often a wait looks at whether its missing peers' processes still live.
const LIVENESS_PERIOD: Duration = Duration::from_millis(20);

/// Where communicator directories go: `SOFTWARE_HIP_RCCL_SHM_DIR`, else `/dev/shm`, else the
/// temporary directory.
pub fn base_dir() -> PathBuf {
    match std::env::var_os(SHM_DIR_ENV) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ if Path::new("/dev/shm").is_dir() => PathBuf::from("/dev/shm"),
        _ => std::env::temp_dir(),
    }
}

/// 128 bits of FNV-1a over `bytes` (two 64-bit lanes with different offsets): stable across
/// processes and builds, unlike std's hasher.
fn hash128(bytes: &[u8]) -> u128 {
    let lane = |offset: u64| {
        bytes.iter().fold(offset, |hash, byte| (hash ^ *byte as u64).wrapping_mul(0x0000_0100_0000_01b3))
    };
    ((lane(0xcbf2_9ce4_8422_2325) as u128) << 64) | lane(0x6c62_272e_07bb_0142) as u128
}

/// The directory name of the communicator created from `id`.
pub fn dir_name(id: &[u8]) -> String {
    format!("softhip-rccl-{:032x}", hash128(id))
}

fn system_error(what: &str, path: &Path, error: io::Error) -> Failure {
    (ncclSystemError, format!("software-hip RCCL: {what} {}: {error}", path.display()))
}

/// A temporary name in `dir` no other writer uses.
fn temporary(dir: &Path) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    dir.join(format!(".tmp-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed)))
}

/// Writes `bytes` to `dir/name` if no such file exists, atomically (readers never see a part
/// of it). Ok(false): the name was taken.
fn publish(dir: &Path, name: &str, bytes: &[u8]) -> Result<bool, Failure> {
    publish_links(dir, &[name.to_owned()], bytes).map(|created| created[0])
}

/// Writes `bytes` once and links it under each of `names` (one per reader, who unlinks its
/// own); per name, whether it was created.
fn publish_links(dir: &Path, names: &[String], bytes: &[u8]) -> Result<Vec<bool>, Failure> {
    let staged = temporary(dir);
    fs::write(&staged, bytes).map_err(|e| system_error("cannot write", &staged, e))?;
    let linked = names
        .iter()
        .map(|name| match fs::hard_link(&staged, dir.join(name)) {
            Ok(()) => Ok(true),
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => Ok(false),
            Err(error) => Err(system_error("cannot link", &dir.join(name), error)),
        })
        .collect();
    let _ = fs::remove_file(&staged);
    linked
}

/// Reads and unlinks `path` (a file published for this reader alone).
fn take_file(path: &Path) -> Result<Vec<u8>, Failure> {
    let bytes = fs::read(path).map_err(|e| system_error("cannot read", path, e))?;
    let _ = fs::remove_file(path);
    Ok(bytes)
}

/// The failure recorded in `dir`, if any.
fn recorded_failure(dir: &Path) -> Option<Failure> {
    let text = fs::read_to_string(dir.join("failed")).ok()?;
    let (code, message) = text.split_once('\n')?;
    Some((code.parse().ok()?, message.to_owned()))
}

/// Records `failure` for every rank of `dir` unless one is recorded; gives the recorded one.
fn record_failure(dir: &Path, failure: Failure) -> Failure {
    let text = format!("{}\n{}", failure.0, failure.1);
    match publish(dir, "failed", text.as_bytes()) {
        Ok(false) => recorded_failure(dir).unwrap_or(failure),
        _ => failure,
    }
}

/// Sleeps a little longer each time, from 20 µs up to 1 ms.
struct Backoff(Duration);

impl Backoff {
    fn new() -> Backoff {
        Backoff(Duration::from_micros(20))
    }

    fn sleep(&mut self) {
        std::thread::sleep(self.0);
        self.0 = (self.0 * 2).min(Duration::from_millis(1));
    }
}

/// A rank's process: its id and start time (so a reused pid is not taken for it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Process {
    pub pid: u32,
    pub start: u64,
}

impl Process {
    pub fn this() -> Process {
        let pid = std::process::id();
        Process { pid, start: process_state(pid).map_or(0, |(_, start)| start) }
    }

    /// False once the process has exited (or is a zombie); true when that cannot be told.
    pub fn alive(&self) -> bool {
        if self.pid == std::process::id() {
            return true;
        }
        match fs::read_to_string(format!("/proc/{}/stat", self.pid)) {
            Ok(stat) => match parse_stat(&stat) {
                Some((state, start)) => !matches!(state, 'Z' | 'X') && (self.start == 0 || start == self.start),
                None => true,
            },
            Err(error) => error.kind() != io::ErrorKind::NotFound || !Path::new("/proc/self").exists(),
        }
    }
}

/// (state, start time in clock ticks) from /proc/<pid>/stat.
fn process_state(pid: u32) -> Option<(char, u64)> {
    parse_stat(&fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

fn parse_stat(stat: &str) -> Option<(char, u64)> {
    // The command name (field 2) may hold spaces and parentheses: fields resume after the
    // last ')'. Field 3 is the state, field 22 the start time.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let start = fields.nth(18)?.parse().ok()?;
    Some((state, start))
}

fn join_name(rank: usize) -> String {
    format!("join-{rank}")
}

fn left_name(rank: usize) -> String {
    format!("left-{rank}")
}

/// Rank `rank`'s `join-<rank>` file in `dir`: (nranks, process).
fn read_join(dir: &Path, rank: usize) -> Option<(usize, Process)> {
    let text = fs::read_to_string(dir.join(join_name(rank))).ok()?;
    let mut words = text.split_whitespace().map(|w| w.parse::<u64>().ok());
    let (ranks, pid, start) = (words.next()??, words.next()??, words.next()??);
    Some((ranks as usize, Process { pid: pid as u32, start }))
}

/// Every `join-<rank>` file of `dir`: (rank, nranks, process), by rank.
fn joined_ranks(dir: &Path) -> Vec<(usize, usize, Process)> {
    let Ok(entries) = fs::read_dir(dir) else { return Vec::new() };
    let mut joined: Vec<(usize, usize, Process)> = entries
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            let rank = name.strip_prefix("join-")?.parse().ok()?;
            let (ranks, process) = read_join(dir, rank)?;
            Some((rank, ranks, process))
        })
        .collect();
    joined.sort_by_key(|(rank, _, _)| *rank);
    joined
}

/// Removes `dir` once every rank that joined it has left or exited (best effort).
fn remove_if_all_left(dir: &Path) {
    let joined = joined_ranks(dir);
    if joined.iter().all(|(rank, _, process)| dir.join(left_name(*rank)).exists() || !process.alive()) {
        let _ = fs::remove_dir_all(dir);
    }
}

/// Removes communicator directories under `base` whose ranks' processes have all exited
/// (every rank of them ended without destroying its communicator). A directory with no
/// `join-<rank>` file yet is being created and is kept.
fn sweep_abandoned(base: &Path) {
    let Ok(entries) = fs::read_dir(base) else { return };
    for entry in entries.flatten() {
        if !entry.file_name().to_string_lossy().starts_with("softhip-rccl-") {
            continue;
        }
        let dir = entry.path();
        let joined = joined_ranks(&dir);
        if !joined.is_empty() && joined.iter().all(|(_, _, process)| !process.alive()) {
            let _ = fs::remove_dir_all(&dir);
        }
    }
}

/// Outcome of the creation rendezvous: every rank's process, and whether they are all this
/// process (then the caller uses the in-process clique and dissolves the directory).
pub struct Joined {
    pub dir: PathBuf,
    pub processes: Vec<Process>,
}

impl Joined {
    pub fn all_in_this_process(&self) -> bool {
        let me = std::process::id();
        self.processes.iter().all(|process| process.pid == me)
    }

    /// Removes the directory (every rank has seen the rendezvous complete).
    pub fn dissolve(&self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// `ncclCommInitRank`'s rendezvous in `base/<dir_name(id)>`: publishes `join-<rank>` and waits
/// until ranks 0..`ranks` have all joined. A rank count differing from another joiner's fails
/// every joiner (ncclInvalidArgument), a rank joining twice too (ncclInvalidUsage), a missing
/// rank fails them at the deadline or when its process is seen to have exited
/// (ncclRemoteError). On failure this rank leaves (`left-<rank>`); the last to leave removes
/// the directory.
pub fn rendezvous(base: &Path, id: &[u8], ranks: usize, rank: usize) -> Result<Joined, Failure> {
    let dir = base.join(dir_name(id));
    let deadline = Instant::now() + timeout();
    sweep_abandoned(base);
    fs::create_dir_all(&dir).map_err(|e| system_error("cannot create", &dir, e))?;
    if let Some(failure) = recorded_failure(&dir) {
        return Err(failure);
    }
    let me = Process::this();
    let created = publish(&dir, &join_name(rank), format!("{ranks} {} {}", me.pid, me.start).as_bytes())?;
    if !created {
        let failure = (
            ncclInvalidUsage,
            format!("software-hip RCCL: ncclCommInitRank: rank {rank} of {ranks} joined the same unique id twice"),
        );
        return Err(record_failure(&dir, failure));
    }
    let outcome = wait_for_joiners(&dir, deadline, ranks, rank);
    if outcome.is_err() {
        let _ = publish(&dir, &left_name(rank), b"");
        remove_if_all_left(&dir);
    }
    outcome.map(|processes| Joined { dir, processes })
}

fn wait_for_joiners(dir: &Path, deadline: Instant, ranks: usize, rank: usize) -> Result<Vec<Process>, Failure> {
    let mut backoff = Backoff::new();
    let mut next_liveness_check = Instant::now();
    loop {
        // The failure record is read before the join files: a failure recorded after every
        // rank had joined (an abort right after creation) then never hides the creation.
        let failure = recorded_failure(dir);
        let joined = joined_ranks(dir);
        let disagreeing: Vec<(usize, usize)> =
            joined.iter().filter(|(_, n, _)| *n != ranks).map(|(r, n, _)| (*r, *n)).collect();
        if let Some((_, other_count)) = disagreeing.first() {
            let others: Vec<usize> = disagreeing.iter().map(|(r, _)| *r).collect();
            let failure = (
                ncclInvalidArgument,
                format!(
                    "software-hip RCCL: ncclCommInitRank: rank {rank} joined with nranks {ranks} but rank(s) {others:?} \
                     joined the same unique id with nranks {other_count}"
                ),
            );
            return Err(record_failure(dir, failure));
        }
        // Looked up by name, not from the listing, so that no join is missed.
        let processes: Vec<Option<Process>> =
            (0..ranks).map(|r| read_join(dir, r).filter(|(n, _)| *n == ranks).map(|(_, p)| p)).collect();
        if processes.iter().all(Option::is_some) {
            // Created, even if a rank has failed it since: its calls fail from now on.
            return Ok(processes.into_iter().map(|p| p.expect("all joined")).collect());
        }
        if let Some(failure) = failure {
            return Err(failure);
        }
        let now = Instant::now();
        if now >= next_liveness_check {
            next_liveness_check = now + LIVENESS_PERIOD;
            let exited: Vec<(usize, u32)> =
                joined.iter().filter(|(_, _, p)| !p.alive()).map(|(r, _, p)| (*r, p.pid)).collect();
            if !exited.is_empty() {
                let failure = (
                    ncclRemoteError,
                    format!(
                        "software-hip RCCL: ncclCommInitRank: rank {rank} of {ranks}: rank(s) {:?} (process(es) {:?}) \
                         exited before the communicator was created",
                        exited.iter().map(|e| e.0).collect::<Vec<_>>(),
                        exited.iter().map(|e| e.1).collect::<Vec<_>>()
                    ),
                );
                return Err(record_failure(dir, failure));
            }
        }
        if now >= deadline {
            let absent: Vec<usize> = (0..ranks).filter(|r| processes[*r].is_none()).collect();
            let failure = (
                ncclRemoteError,
                format!(
                    "software-hip RCCL: ncclCommInitRank: rank {rank} of {ranks} timed out after {} ms: rank(s) \
                     {absent:?} never joined (SOFTWARE_HIP_RCCL_TIMEOUT_MS)",
                    timeout().as_millis()
                ),
            );
            return Err(record_failure(dir, failure));
        }
        backoff.sleep();
    }
}

/// One rank of a communicator whose ranks may live in other processes.
pub struct SharedRank {
    base: PathBuf,
    dir: PathBuf,
    pub size: usize,
    pub rank: usize,
    /// Each rank's process (to tell an exited peer from a slow one).
    processes: Vec<Process>,
    /// Messages sent to / received from each peer so far.
    sent: Mutex<Vec<u64>>,
    received: Mutex<Vec<u64>>,
}

impl SharedRank {
    pub fn new(base: &Path, joined: Joined, rank: usize) -> SharedRank {
        let size = joined.processes.len();
        SharedRank {
            base: base.to_owned(),
            dir: joined.dir,
            size,
            rank,
            processes: joined.processes,
            sent: Mutex::new(vec![0; size]),
            received: Mutex::new(vec![0; size]),
        }
    }

    fn fail(&self, failure: Failure) -> Failure {
        record_failure(&self.dir, failure)
    }

    /// Polls until `missing` gives no rank, the communicator failed, a missing rank's
    /// process exited, or the deadline passed (then fails the communicator for all ranks).
    fn wait(
        &self,
        what: &str,
        mut missing: impl FnMut() -> Vec<usize>,
        timed_out: impl FnOnce(&[usize]) -> String,
    ) -> Result<(), Failure> {
        let deadline = Instant::now() + timeout();
        let mut backoff = Backoff::new();
        let mut next_liveness_check = Instant::now() + LIVENESS_PERIOD;
        loop {
            if let Some(failure) = recorded_failure(&self.dir) {
                return Err(failure);
            }
            let absent = missing();
            if absent.is_empty() {
                return Ok(());
            }
            let now = Instant::now();
            if now >= next_liveness_check {
                next_liveness_check = now + LIVENESS_PERIOD;
                let exited: Vec<usize> = absent.iter().copied().filter(|r| !self.processes[*r].alive()).collect();
                if !exited.is_empty() {
                    let pids: Vec<u32> = exited.iter().map(|r| self.processes[*r].pid).collect();
                    return Err(self.fail((
                        ncclRemoteError,
                        format!(
                            "software-hip RCCL: rank {} of {}: rank(s) {exited:?} (process(es) {pids:?}) exited \
                             before {what}; the communicator has failed",
                            self.rank, self.size
                        ),
                    )));
                }
            }
            if now >= deadline {
                return Err(self.fail((ncclRemoteError, timed_out(&absent))));
            }
            backoff.sleep();
        }
    }

    /// Publishes `bytes` for every other rank under `<tag>-<from>-<to>`, waits for theirs and
    /// takes them: every rank's bytes, in rank order (this rank's own included).
    fn exchange(&self, tag: &str, bytes: Vec<u8>, what: &str, timed_out: impl FnOnce(&[usize]) -> String) -> Result<Vec<Vec<u8>>, Failure> {
        let others: Vec<usize> = (0..self.size).filter(|r| *r != self.rank).collect();
        let name = |from: usize, to: usize| format!("{tag}-{from}-{to}");
        if let Some(failure) = recorded_failure(&self.dir) {
            return Err(failure);
        }
        let links: Vec<String> = others.iter().map(|to| name(self.rank, *to)).collect();
        if !links.is_empty() {
            publish_links(&self.dir, &links, &bytes).map_err(|f| self.fail(f))?;
        }
        self.wait(what, || others.iter().copied().filter(|from| !self.dir.join(name(*from, self.rank)).exists()).collect(), timed_out)?;
        let mut all = Vec::with_capacity(self.size);
        for from in 0..self.size {
            all.push(if from == self.rank { Vec::new() } else { take_file(&self.dir.join(name(from, self.rank))).map_err(|f| self.fail(f))? });
        }
        all[self.rank] = bytes;
        Ok(all)
    }

    /// Runs this rank's part of collective `sequence`: publishes its contribution, waits for
    /// everyone's, and computes its own result (every rank reduces the same inputs in the same
    /// order, so they agree bit for bit).
    pub fn run_collective(&self, sequence: u64, part: Part) -> Result<(), Failure> {
        let (rank, size) = (self.rank, self.size);
        let element = element_size(part.data_type).ok_or((ncclInvalidArgument, "unknown data type".to_owned()))?;
        let bytes = part.count * element;
        // A device-resident factor is read now, when the collective runs.
        let operator = match part.operator {
            Operator::PreMulSum { factor: ScalarSource::Address(address) } => {
                let value = super::scalar_at(address, part.data_type)
                    .map_err(|code| (code, format!("software-hip RCCL: rank {rank}: unreadable pre-multiplication scalar")))?;
                Operator::PreMulSum { factor: ScalarSource::Value(value) }
            }
            other => other,
        };
        let input_bytes = match part.kind {
            CollectiveKind::Broadcast if rank != part.root => 0,
            CollectiveKind::ReduceScatter => bytes * size,
            _ => bytes,
        };
        let mut message = Header { kind: part.kind, count: part.count, data_type: part.data_type, root: part.root, operator }.encode();
        let start = message.len();
        message.resize(start + input_bytes, 0);
        if input_bytes > 0 {
            // SAFETY: the caller guaranteed `send` holds the bytes NCCL defines for this
            // collective until it has run (the collective runs now, on the caller's stream).
            unsafe { std::ptr::copy_nonoverlapping(part.send as *const u8, message[start..].as_mut_ptr(), input_bytes) };
        }
        let what = format!("collective #{sequence} ({:?})", part.kind);
        let contributions = self.exchange(&format!("c{sequence}"), message, &what, |absent| {
            format!(
                "software-hip RCCL: rank {rank} of {size} timed out after {} ms in {what}: rank(s) {absent:?} never \
                 called it (SOFTWARE_HIP_RCCL_TIMEOUT_MS); the communicator has failed",
                timeout().as_millis()
            )
        })?;
        let disagree = |code| {
            (code, format!("software-hip RCCL: rank {rank}: the ranks' calls of collective #{sequence} disagree (kind, count, type, root or operator)"))
        };
        let parts = contributions
            .iter()
            .map(|bytes| Header::decode(bytes).ok_or(ncclInternalError))
            .collect::<Result<Vec<_>, _>>()
            .map_err(disagree)?;
        let output = combine(&parts, rank).map_err(disagree)?;
        if let Some(output) = output {
            debug_assert_eq!(output.len(), if part.kind == CollectiveKind::AllGather { bytes * size } else { bytes });
            if !output.is_empty() {
                // SAFETY: the caller guaranteed `recv` holds the bytes NCCL defines for this
                // collective (`output` is exactly that many) until it has run.
                unsafe { std::ptr::copy_nonoverlapping(output.as_ptr(), part.recv as *mut u8, output.len()) };
            }
        }
        Ok(())
    }

    /// `ncclSend` when it runs: publishes the message and returns (never waits for the peer).
    pub fn post(&self, to: usize, message: &[u8]) -> Result<(), Failure> {
        let number = {
            let mut sent = self.sent.lock();
            sent[to] += 1;
            sent[to] - 1
        };
        publish(&self.dir, &format!("m{}-{to}-{number}", self.rank), message).map(drop).map_err(|f| self.fail(f))
    }

    /// `ncclRecv` when it runs: waits for `from`'s next message to this rank, in send order.
    pub fn take(&self, from: usize) -> Result<Vec<u8>, Failure> {
        let mut received = self.received.lock();
        let path = self.dir.join(format!("m{from}-{}-{}", self.rank, received[from]));
        let (rank, size) = (self.rank, self.size);
        self.wait("sending the message ncclRecv waits for", || if path.exists() { vec![] } else { vec![from] }, |_| {
            format!(
                "software-hip RCCL: rank {rank} of {size} timed out after {} ms in ncclRecv: peer rank {from} never sent \
                 the matching ncclSend (SOFTWARE_HIP_RCCL_TIMEOUT_MS); the communicator has failed",
                timeout().as_millis()
            )
        })?;
        let message = take_file(&path).map_err(|f| self.fail(f))?;
        received[from] += 1;
        Ok(message)
    }

    pub fn abort(&self) {
        self.fail((ncclRemoteError, format!("software-hip RCCL: rank {} aborted the communicator (ncclCommAbort)", self.rank)));
    }

    /// `ncclCommSplit` number `sequence`: this rank's new communicator (a fresh directory per
    /// color), or None for NCCL_SPLIT_NOCOLOR.
    pub fn split(&self, sequence: u64, color: i32, key: i32) -> Result<Option<SharedRank>, Failure> {
        let (rank, size) = (self.rank, self.size);
        let child_dir = |color: i32| {
            let parent = self.dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            self.base.join(dir_name(format!("{parent}/split{sequence}/color{color}").as_bytes()))
        };
        let mine = (color != NCCL_SPLIT_NOCOLOR).then(|| child_dir(color));
        if let Some(dir) = &mine {
            fs::create_dir_all(dir).map_err(|e| system_error("cannot create", dir, e))?;
        }
        let what = format!("ncclCommSplit #{sequence}");
        let requests = self.exchange(&format!("s{sequence}"), format!("{color} {key}").into_bytes(), &what, |absent| {
            format!(
                "software-hip RCCL: rank {rank} of {size} timed out after {} ms in {what}: rank(s) {absent:?} never \
                 called it (SOFTWARE_HIP_RCCL_TIMEOUT_MS); the communicator has failed",
                timeout().as_millis()
            )
        });
        let requests = match requests {
            Ok(requests) => requests,
            Err(failure) => {
                if let Some(dir) = &mine {
                    let _ = fs::remove_dir(dir); // only if no member has used it
                }
                return Err(failure);
            }
        };
        let Some(dir) = mine else { return Ok(None) };
        let parsed: Vec<(i32, i32)> = requests
            .iter()
            .map(|bytes| {
                let text = String::from_utf8_lossy(bytes);
                let mut words = text.split_whitespace().map(|w| w.parse::<i32>().unwrap_or(NCCL_SPLIT_NOCOLOR));
                (words.next().unwrap_or(NCCL_SPLIT_NOCOLOR), words.next().unwrap_or(0))
            })
            .collect();
        let mut members: Vec<usize> = (0..size).filter(|r| parsed[*r].0 == color).collect();
        members.sort_by_key(|r| (parsed[*r].1, *r));
        let new_rank = members.iter().position(|r| *r == rank).expect("this rank has its color");
        let processes: Vec<Process> = members.iter().map(|r| self.processes[*r]).collect();
        // So that the directory is swept if every member exits without destroying it.
        let me = processes[new_rank];
        publish(&dir, &join_name(new_rank), format!("{} {} {}", members.len(), me.pid, me.start).as_bytes())?;
        Ok(Some(SharedRank::new(&self.base, Joined { dir, processes }, new_rank)))
    }
}

impl Drop for SharedRank {
    /// Leaves the communicator; the last rank to leave (peers whose process exited count as
    /// gone) removes the directory.
    fn drop(&mut self) {
        let _ = publish(&self.dir, &left_name(self.rank), b"");
        let gone = |rank: usize| self.dir.join(left_name(rank)).exists() || !self.processes[rank].alive();
        if (0..self.size).all(gone) {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

/// What each rank tells the others about its part of a collective.
#[derive(Debug, Clone, PartialEq)]
struct Header {
    kind: CollectiveKind,
    count: usize,
    data_type: ncclDataType_t,
    root: usize,
    /// Always a builtin or a pre-multiplication by a value.
    operator: Operator,
}

const HEADER_BYTES: usize = 1 + 8 + 4 + 8 + 1 + 8;

fn kinds() -> [CollectiveKind; 5] {
    [CollectiveKind::AllReduce, CollectiveKind::Reduce, CollectiveKind::Broadcast, CollectiveKind::AllGather, CollectiveKind::ReduceScatter]
}

fn reductions() -> [Reduction; 6] {
    [Reduction::Sum, Reduction::Prod, Reduction::Max, Reduction::Min, Reduction::Avg, Reduction::PreMulSum]
}

/// A header followed by the data.
struct Contribution<'a> {
    header: Header,
    data: &'a [u8],
}

impl Header {
    fn encode(&self) -> Vec<u8> {
        let kind = kinds().iter().position(|k| *k == self.kind).expect("known kind") as u8;
        let (reduction, factor) = match self.operator {
            Operator::Builtin(reduction) => (reduction, 1.0),
            Operator::PreMulSum { factor: ScalarSource::Value(value) } => (Reduction::PreMulSum, value),
            Operator::PreMulSum { factor: ScalarSource::Address(_) } => unreachable!("resolved before encoding"),
        };
        let mut bytes = Vec::with_capacity(HEADER_BYTES);
        bytes.push(kind);
        bytes.extend_from_slice(&(self.count as u64).to_le_bytes());
        bytes.extend_from_slice(&self.data_type.to_le_bytes());
        bytes.extend_from_slice(&(self.root as u64).to_le_bytes());
        bytes.push(reductions().iter().position(|r| *r == reduction).expect("known reduction") as u8);
        bytes.extend_from_slice(&factor.to_le_bytes());
        bytes
    }

    fn decode(bytes: &[u8]) -> Option<Contribution<'_>> {
        if bytes.len() < HEADER_BYTES {
            return None;
        }
        let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
        let kind = *kinds().get(bytes[0] as usize)?;
        let reduction = *reductions().get(bytes[21] as usize)?;
        let factor = f64::from_bits(word(22));
        let operator = match reduction {
            Reduction::PreMulSum => Operator::PreMulSum { factor: ScalarSource::Value(factor) },
            other => Operator::Builtin(other),
        };
        let header = Header {
            kind,
            count: word(1) as usize,
            data_type: u32::from_le_bytes(bytes[9..13].try_into().expect("4 bytes")),
            root: word(13) as usize,
            operator,
        };
        Some(Contribution { header, data: &bytes[HEADER_BYTES..] })
    }
}

/// This rank's result of a collective from every rank's contribution (None: it receives
/// nothing). The same checks as the in-process path: the ranks must agree on kind, count,
/// type and root, and on the operator (builtin, or all pre-multiplied sums).
fn combine<'a>(parts: &[Contribution<'a>], rank: usize) -> Result<Option<Vec<u8>>, ncclResult_t> {
    let first = &parts[0].header;
    let consistent = parts.iter().all(|p| {
        p.header.kind == first.kind && p.header.count == first.count && p.header.data_type == first.data_type && p.header.root == first.root
    });
    if !consistent {
        return Err(ncclInvalidUsage);
    }
    let element = element_size(first.data_type).ok_or(ncclInvalidArgument)?;
    let bytes = first.count * element;
    let size = parts.len();
    let input_bytes = if first.kind == CollectiveKind::ReduceScatter { bytes * size } else { bytes };
    let data_of = |part: &Contribution<'a>| -> Result<&'a [u8], ncclResult_t> {
        part.data.get(..input_bytes).ok_or(ncclInternalError)
    };
    let reduce_all = || -> Result<Vec<u8>, ncclResult_t> {
        let reduction = match first.operator {
            Operator::Builtin(reduction) => {
                if parts.iter().any(|p| p.header.operator != first.operator) {
                    return Err(ncclInvalidUsage);
                }
                reduction
            }
            Operator::PreMulSum { .. } => Reduction::PreMulSum,
        };
        let factors = parts
            .iter()
            .map(|p| match p.header.operator {
                Operator::PreMulSum { factor: ScalarSource::Value(value) } if reduction == Reduction::PreMulSum => Ok(value),
                Operator::Builtin(_) if reduction != Reduction::PreMulSum => Ok(1.0),
                _ => Err(ncclInvalidUsage),
            })
            .collect::<Result<Vec<f64>, _>>()?;
        let inputs = parts.iter().map(data_of).collect::<Result<Vec<&[u8]>, _>>()?;
        let mut output = vec![0u8; input_bytes];
        reduce::reduce(first.data_type, reduction, &inputs, &factors, &mut output)?;
        Ok(output)
    };
    Ok(match first.kind {
        CollectiveKind::AllReduce => Some(reduce_all()?),
        // Every rank reduces so that every rank sees the same errors; only the root keeps it.
        CollectiveKind::Reduce => Some(reduce_all()?).filter(|_| rank == first.root),
        CollectiveKind::Broadcast => Some(parts[first.root].data.get(..bytes).ok_or(ncclInternalError)?.to_vec()),
        CollectiveKind::AllGather => {
            let mut gathered = Vec::with_capacity(bytes * size);
            for part in parts {
                gathered.extend_from_slice(data_of(part)?);
            }
            Some(gathered)
        }
        CollectiveKind::ReduceScatter => Some(reduce_all()?[rank * bytes..(rank + 1) * bytes].to_vec()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_stable_and_spread() {
        assert_eq!(dir_name(b"a"), dir_name(b"a"));
        assert_ne!(dir_name(b"a"), dir_name(b"b"));
        assert_eq!(dir_name(&[0u8; 128]).len(), "softhip-rccl-".len() + 32);
    }

    #[test]
    fn this_process_lives_and_a_reaped_child_does_not() {
        assert!(Process::this().alive());
        assert!(Process::this().start > 0);
        let mut child = std::process::Command::new("true").spawn().expect("spawn true");
        let process = Process { pid: child.id(), start: process_state(child.id()).map_or(0, |s| s.1) };
        child.wait().expect("wait");
        assert!(!process.alive());
    }

    #[test]
    fn headers_round_trip() {
        let header = Header {
            kind: CollectiveKind::ReduceScatter,
            count: 7,
            data_type: ncclBfloat16,
            root: 3,
            operator: Operator::PreMulSum { factor: ScalarSource::Value(0.25) },
        };
        let mut bytes = header.encode();
        bytes.extend_from_slice(&[1, 2]);
        let decoded = Header::decode(&bytes).expect("decodes");
        assert_eq!(decoded.header, header);
        assert_eq!(decoded.data, &[1, 2]);
    }

    #[test]
    fn stat_lines_with_odd_command_names_parse() {
        let stat = "42 (a) b) c) S 1 42 42 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 98765 1000 10";
        assert_eq!(parse_stat(stat), Some(('S', 98765)));
    }
}
