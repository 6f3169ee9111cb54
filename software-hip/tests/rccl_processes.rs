//! RCCL ranks in separate processes, as `mpirun` starts them: the test makes a unique id and
//! re-executes this binary once per rank process (the `rank_process` test, selected by the
//! RCCL_TEST_ROLE variable), passing the id in hex; the ranks meet in shared memory under a
//! directory of the test's own (SOFTWARE_HIP_RCCL_SHM_DIR), which must be empty afterwards.
//! Every collective x every data type x every reduction is checked against values computed
//! here; send/recv rings and grouped pairs, splits, a 2 processes x 2 threads mix, and the
//! failures (a rank process that exits or stalls, an abort, count mismatches, duplicates).
#![allow(non_upper_case_globals)]
#[macro_use]
mod common;
use amdhip64::rccl::types::*;
use common::*;
use std::ffi::CStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const ROLE_ENV: &str = "RCCL_TEST_ROLE";
const ID_ENV: &str = "RCCL_TEST_ID";
/// A child that has not finished after this long is killed and the test fails.
const LIMIT: Duration = Duration::from_secs(60);
/// Elements per rank of each collective.
const COUNT: usize = 5;

macro_rules! nccl_ok {
    ($call:expr) => {{
        // SAFETY (tests): arguments are valid per the NCCL contract.
        let result = unsafe { $call };
        assert_eq!(result, ncclSuccess, "{} failed: {} ({})", stringify!($call), result, last_error());
    }};
}

fn last_error() -> String {
    unsafe { CStr::from_ptr(ncclGetLastError(std::ptr::null_mut())) }.to_string_lossy().into_owned()
}

// ---- the parent's side ---------------------------------------------------------------------

fn new_id_hex() -> String {
    let mut id = ncclUniqueId { internal: [0; 128] };
    nccl_ok!(ncclGetUniqueId(&mut id));
    id.internal.iter().map(|b| format!("{:02x}", *b as u8)).collect()
}

/// A fresh base directory for one test's communicators (on tmpfs when there is one).
fn shm_base(test: &str) -> PathBuf {
    let root = if Path::new("/dev/shm").is_dir() { PathBuf::from("/dev/shm") } else { std::env::temp_dir() };
    let dir = root.join(format!("softhip-rccl-test-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect()
}

struct Finished {
    success: bool,
    stdout: String,
    stderr: String,
}

impl Finished {
    /// The `RESULT` lines the child printed, fields split at '|'.
    fn results(&self) -> Vec<Vec<String>> {
        self.stdout
            .lines()
            // The harness may have printed "test rank_process ... " before it on the line.
            .filter_map(|l| l.find("RESULT|").map(|at| &l[at + "RESULT|".len()..]))
            .map(|l| l.split('|').map(str::to_owned).collect())
            .collect()
    }
}

/// Rank processes started by one test.
struct Ranks {
    base: PathBuf,
    id: String,
    timeout_ms: u64,
    running: Vec<(u32, mpsc::Receiver<Finished>)>,
}

impl Ranks {
    fn new(test: &str, timeout_ms: u64) -> Ranks {
        init();
        Ranks { base: shm_base(test), id: new_id_hex(), timeout_ms, running: Vec::new() }
    }

    /// Starts a process running `role` (see `rank_process`); returns its index.
    fn spawn(&mut self, role: &str) -> usize {
        let child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "rank_process", "--nocapture", "--test-threads=1"])
            .env(ROLE_ENV, role)
            .env(ID_ENV, &self.id)
            .env("SOFTWARE_HIP_RCCL_SHM_DIR", &self.base)
            .env("SOFTWARE_HIP_RCCL_TIMEOUT_MS", self.timeout_ms.to_string())
            // One device per rank, as with real GPUs: a HIP free synchronizes its whole
            // device, which would wait for a collective of another rank thread on it.
            .env("SOFTWARE_HIP_DEVICE_COUNT", "4")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start a rank process");
        let pid = child.id();
        let (sender, receiver) = mpsc::channel();
        std::thread::spawn(move || {
            let output = child.wait_with_output().expect("wait for a rank process");
            let _ = sender.send(Finished {
                success: output.status.success(),
                stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            });
        });
        self.running.push((pid, receiver));
        self.running.len() - 1
    }

    fn kill(&self, index: usize) {
        // SAFETY: plain syscall on a child of this process that has not been waited for yet
        // (its waiter thread reaps it).
        unsafe { libc::kill(self.running[index].0 as i32, libc::SIGKILL) };
    }

    /// Waits for process `index` (killing every process if it takes longer than LIMIT).
    fn wait(&self, index: usize) -> Finished {
        match self.running[index].1.recv_timeout(LIMIT) {
            Ok(finished) => finished,
            Err(_) => {
                (0..self.running.len()).for_each(|i| self.kill(i));
                panic!("rank process {index} hung past {LIMIT:?}");
            }
        }
    }

    /// Waits for every process and asserts each succeeded.
    fn wait_all_succeeded(&self) -> Vec<Finished> {
        let all: Vec<Finished> = (0..self.running.len()).map(|i| self.wait(i)).collect();
        for (index, finished) in all.iter().enumerate() {
            assert!(finished.success, "rank process {index} failed:\n{}\n{}", finished.stdout, finished.stderr);
        }
        all
    }

    /// Asserts no shared-memory file is left, then removes the base directory.
    fn assert_cleaned_up(&self) {
        let left = entries(&self.base);
        assert!(left.is_empty(), "left behind in {}: {left:?}", self.base.display());
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

impl Drop for Ranks {
    fn drop(&mut self) {
        if std::thread::panicking() {
            (0..self.running.len()).for_each(|i| self.kill(i));
        }
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

// ---- the rank processes' side --------------------------------------------------------------

/// One rank process: does nothing unless started by a test with RCCL_TEST_ROLE set to
/// `<role>:<nranks>:<ranks, comma separated>`; each listed rank runs on its own thread.
#[test]
fn rank_process() {
    let Ok(role) = std::env::var(ROLE_ENV) else { return };
    init();
    let mut fields = role.split(':');
    let (role, ranks, mine) = (fields.next().unwrap().to_owned(), fields.next().unwrap().parse::<usize>().unwrap(), fields.next().unwrap());
    let mine: Vec<usize> = mine.split(',').map(|r| r.parse().unwrap()).collect();
    let id = id_from_env();
    let threads: Vec<_> = mine
        .into_iter()
        .map(|rank| {
            let role = role.clone();
            std::thread::spawn(move || match role.as_str() {
                "suite" => suite(id, ranks, rank),
                "allreduce" => allreduce_and_report(id, ranks, rank),
                "exit" => {
                    join(id, ranks, rank);
                    std::process::exit(0)
                }
                "stall" => {
                    join(id, ranks, rank);
                    println!("RESULT|joined");
                    std::thread::sleep(Duration::from_secs(120));
                }
                "abort" => {
                    let comm = join(id, ranks, rank);
                    nccl_ok!(ncclCommAbort(comm));
                }
                "init" => {
                    let mut comm = std::ptr::null_mut();
                    let start = Instant::now();
                    let result = unsafe { ncclCommInitRank(&mut comm, ranks as i32, id, rank as i32) };
                    println!("RESULT|{result}|{}|{}", start.elapsed().as_millis(), last_error());
                    if result == ncclSuccess {
                        nccl_ok!(ncclCommDestroy(comm));
                    }
                }
                "id" => {
                    let mut fresh = ncclUniqueId { internal: [0; 128] };
                    nccl_ok!(ncclGetUniqueId(&mut fresh));
                    println!("RESULT|{}", fresh.internal.iter().map(|b| format!("{:02x}", *b as u8)).collect::<String>());
                }
                other => panic!("unknown role {other}"),
            })
        })
        .collect();
    for thread in threads {
        thread.join().expect("rank thread");
    }
}

fn id_from_env() -> ncclUniqueId {
    let hex = std::env::var(ID_ENV).expect("id");
    let mut id = ncclUniqueId { internal: [0; 128] };
    for (index, slot) in id.internal.iter_mut().enumerate() {
        *slot = u8::from_str_radix(&hex[index * 2..index * 2 + 2], 16).unwrap() as i8 as _;
    }
    id
}

/// Joins as `rank` on device `rank % device count`; odd ranks through ncclCommInitRankConfig.
fn join(id: ncclUniqueId, ranks: usize, rank: usize) -> ncclComm_t {
    let mut devices = 0;
    hip_ok!(hipGetDeviceCount(&mut devices));
    hip_ok!(hipSetDevice(rank as i32 % devices));
    let mut comm = std::ptr::null_mut();
    if rank % 2 == 1 {
        let mut config = ncclConfig_t {
            size: std::mem::size_of::<ncclConfig_t>(),
            magic: 0xcafe_beef,
            version: NCCL_VERSION_CODE as u32,
            blocking: 1,
            cgaClusterSize: i32::MIN,
            minCTAs: i32::MIN,
            maxCTAs: i32::MIN,
            netName: std::ptr::null(),
            splitShare: i32::MIN,
        };
        nccl_ok!(ncclCommInitRankConfig(&mut comm, ranks as i32, id, rank as i32, &mut config));
    } else {
        nccl_ok!(ncclCommInitRank(&mut comm, ranks as i32, id, rank as i32));
    }
    let (mut count, mut user_rank) = (0, 0);
    nccl_ok!(ncclCommCount(comm, &mut count));
    nccl_ok!(ncclCommUserRank(comm, &mut user_rank));
    assert_eq!((count as usize, user_rank as usize), (ranks, rank));
    comm
}

/// One all-reduce, then `RESULT|<hipStreamSynchronize>|<async error>|<ms>|<ncclGetLastError>`.
fn allreduce_and_report(id: ncclUniqueId, ranks: usize, rank: usize) {
    let comm = join(id, ranks, rank);
    let stream = create_stream(hipStreamNonBlocking);
    let input = [rank as f32; 4];
    let mut output = [0f32; 4];
    let start = Instant::now();
    nccl_ok!(ncclAllReduce(input.as_ptr().cast(), output.as_mut_ptr().cast(), 4, ncclFloat32, ncclSum, comm, stream));
    let synchronized = unsafe { hipStreamSynchronize(stream) };
    let took = start.elapsed().as_millis();
    let mut error = 99;
    nccl_ok!(ncclCommGetAsyncError(comm, &mut error));
    let text = unsafe { CStr::from_ptr(ncclGetLastError(comm)) }.to_string_lossy().into_owned();
    println!("RESULT|{synchronized}|{error}|{took}|{text}");
    nccl_ok!(ncclCommDestroy(comm));
}

// ---- expected values, computed independently of the library --------------------------------

const TYPES: [(ncclDataType_t, &str); 10] = [
    (ncclInt8, "i8"),
    (ncclUint8, "u8"),
    (ncclInt32, "i32"),
    (ncclUint32, "u32"),
    (ncclInt64, "i64"),
    (ncclUint64, "u64"),
    (ncclFloat16, "f16"),
    (ncclFloat32, "f32"),
    (ncclFloat64, "f64"),
    (ncclBfloat16, "bf16"),
];

fn is_integer(data_type: ncclDataType_t) -> bool {
    data_type <= ncclUint64
}

fn is_signed(data_type: ncclDataType_t) -> bool {
    !matches!(data_type, ncclUint8 | ncclUint32 | ncclUint64)
}

/// Rank `rank`'s element `index`: small integers (1..3, negative on signed types for odd
/// rank+index) so that sums, products, averages over 1, 2 or 4 ranks and the pre-multiplied
/// sums are exact in every type, including f16 and bf16.
fn value(data_type: ncclDataType_t, rank: usize, index: usize) -> f64 {
    let magnitude = ((rank + 2 * index) % 3 + 1) as f64;
    if is_signed(data_type) && (rank + index) % 2 == 1 {
        -magnitude
    } else {
        magnitude
    }
}

/// Little-endian bytes of `x` (exactly representable) as `data_type`.
fn encode(data_type: ncclDataType_t, x: f64) -> Vec<u8> {
    let integer = x as i128;
    match data_type {
        ncclInt8 => vec![integer as i8 as u8],
        ncclUint8 => vec![integer as u8],
        ncclInt32 => (integer as i32).to_le_bytes().to_vec(),
        ncclUint32 => (integer as u32).to_le_bytes().to_vec(),
        ncclInt64 => (integer as i64).to_le_bytes().to_vec(),
        ncclUint64 => (integer as u64).to_le_bytes().to_vec(),
        ncclFloat32 => (x as f32).to_le_bytes().to_vec(),
        ncclFloat64 => x.to_le_bytes().to_vec(),
        ncclBfloat16 => {
            let bits = (x as f32).to_bits();
            assert_eq!(bits & 0xffff, 0, "{x} is not exact in bf16");
            ((bits >> 16) as u16).to_le_bytes().to_vec()
        }
        ncclFloat16 => {
            if x == 0.0 {
                return vec![0, 0];
            }
            let bits = (x as f32).to_bits();
            let exponent = ((bits >> 23) & 0xff) as i32 - 127 + 15;
            assert!((1..31).contains(&exponent) && bits & 0x1fff == 0, "{x} is not exact in f16");
            let half = ((bits >> 16) & 0x8000) | ((exponent as u32) << 10) | ((bits >> 13) & 0x3ff);
            (half as u16).to_le_bytes().to_vec()
        }
        _ => unreachable!(),
    }
}

fn encode_all(data_type: ncclDataType_t, values: impl IntoIterator<Item = f64>) -> Vec<u8> {
    values.into_iter().flat_map(|x| encode(data_type, x)).collect()
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Sum,
    Prod,
    Max,
    Min,
    Avg,
    /// Each rank's input times rank + 1 (a host scalar), summed.
    PreMulHost,
    /// Each rank's input times rank + 2 (a device scalar written on the stream just before).
    PreMulDevice,
}

const OPS: [Op; 7] = [Op::Sum, Op::Prod, Op::Max, Op::Min, Op::Avg, Op::PreMulHost, Op::PreMulDevice];

/// The reduction of element `index` over ranks 0..`ranks`.
fn reduced(data_type: ncclDataType_t, op: Op, ranks: usize, index: usize) -> f64 {
    let values = (0..ranks).map(|r| value(data_type, r, index));
    match op {
        Op::Sum => values.sum(),
        Op::Prod => values.product(),
        Op::Max => values.fold(f64::MIN, f64::max),
        Op::Min => values.fold(f64::MAX, f64::min),
        Op::Avg if is_integer(data_type) => (values.sum::<f64>() as i128 / ranks as i128) as f64,
        Op::Avg => values.sum::<f64>() / ranks as f64,
        Op::PreMulHost => (0..ranks).map(|r| value(data_type, r, index) * (r + 1) as f64).sum(),
        Op::PreMulDevice => (0..ranks).map(|r| value(data_type, r, index) * (r + 2) as f64).sum(),
    }
}

/// A collective in flight: its receive buffer and what it must hold after the stream ran.
struct Check {
    what: String,
    received: Vec<u8>,
    expected: Vec<u8>,
}

/// Every collective x every type x every reduction, send/recv, splits, on one rank.
fn suite(id: ncclUniqueId, ranks: usize, rank: usize) {
    let comm = join(id, ranks, rank);
    let stream = create_stream(hipStreamNonBlocking);
    let mut checks: Vec<Check> = Vec::new();
    // Inputs and scalars must live until the stream has run.
    let mut keep: Vec<Vec<u8>> = Vec::new();
    let mut device_scalars: Vec<*mut c_void> = Vec::new();
    let mut operators: Vec<ncclRedOp_t> = Vec::new();
    for (type_index, (data_type, name)) in TYPES.into_iter().enumerate() {
        let size = encode(data_type, 0.0).len();
        let mut host_factor = encode(data_type, (rank + 1) as f64);
        let (mut host_op, mut device_op) = (0, 0);
        nccl_ok!(ncclRedOpCreatePreMulSum(&mut host_op, host_factor.as_mut_ptr().cast(), data_type, ncclScalarHostImmediate, comm));
        host_factor.fill(0x77); // an immediate scalar is read by the call
        let mut scalar = std::ptr::null_mut();
        hip_ok!(hipMalloc(&mut scalar, size));
        let wrong = encode(data_type, 100.0);
        unsafe { std::ptr::copy_nonoverlapping(wrong.as_ptr(), scalar.cast::<u8>(), size) };
        nccl_ok!(ncclRedOpCreatePreMulSum(&mut device_op, scalar, data_type, ncclScalarDevice, comm));
        let right = encode(data_type, (rank + 2) as f64);
        device_scalars.push(scalar);
        operators.extend([host_op, device_op]);
        for op in OPS {
            let nccl_op = match op {
                Op::Sum => ncclSum,
                Op::Prod => ncclProd,
                Op::Max => ncclMax,
                Op::Min => ncclMin,
                Op::Avg => ncclAvg,
                Op::PreMulHost => host_op,
                Op::PreMulDevice => device_op,
            };
            // The device scalar becomes right only in stream order, just before each use.
            let set_scalar = || {
                if op == Op::PreMulDevice {
                    hip_ok!(hipMemcpyAsync(scalar, right.as_ptr().cast(), size, hipMemcpyHostToDevice, stream));
                }
            };
            let input = encode_all(data_type, (0..COUNT).map(|i| value(data_type, rank, i)));
            let result = encode_all(data_type, (0..COUNT).map(|i| reduced(data_type, op, ranks, i)));

            let mut received = vec![0x5au8; COUNT * size];
            set_scalar();
            nccl_ok!(ncclAllReduce(input.as_ptr().cast(), received.as_mut_ptr().cast(), COUNT, data_type, nccl_op, comm, stream));
            checks.push(Check { what: format!("AllReduce {name} {op:?}"), received, expected: result.clone() });

            let root = (type_index + 1) % ranks;
            let mut received = vec![0x5au8; COUNT * size];
            set_scalar();
            nccl_ok!(ncclReduce(input.as_ptr().cast(), received.as_mut_ptr().cast(), COUNT, data_type, nccl_op, root as i32, comm, stream));
            let expected = if rank == root { result.clone() } else { vec![0x5au8; COUNT * size] };
            checks.push(Check { what: format!("Reduce {name} {op:?} root {root}"), received, expected });

            let scatter_input = encode_all(data_type, (0..COUNT * ranks).map(|i| value(data_type, rank, i)));
            let mut received = vec![0x5au8; COUNT * size];
            set_scalar();
            nccl_ok!(ncclReduceScatter(scatter_input.as_ptr().cast(), received.as_mut_ptr().cast(), COUNT, data_type, nccl_op, comm, stream));
            let expected = encode_all(data_type, (rank * COUNT..(rank + 1) * COUNT).map(|i| reduced(data_type, op, ranks, i)));
            checks.push(Check { what: format!("ReduceScatter {name} {op:?}"), received, expected });
            keep.extend([input, scatter_input]);
        }
        keep.extend([right, host_factor]);

        let input = encode_all(data_type, (0..COUNT).map(|i| value(data_type, rank, i)));
        let root = type_index % ranks;
        let mut received = vec![0x5au8; COUNT * size];
        nccl_ok!(ncclBroadcast(input.as_ptr().cast(), received.as_mut_ptr().cast(), COUNT, data_type, root as i32, comm, stream));
        let expected = encode_all(data_type, (0..COUNT).map(|i| value(data_type, root, i)));
        checks.push(Check { what: format!("Broadcast {name} root {root}"), received, expected: expected.clone() });
        let mut in_place = input.clone();
        nccl_ok!(ncclBcast(in_place.as_mut_ptr().cast(), COUNT, data_type, root as i32, comm, stream));
        checks.push(Check { what: format!("Bcast {name} root {root}"), received: in_place, expected });

        let mut received = vec![0x5au8; COUNT * size * ranks];
        nccl_ok!(ncclAllGather(input.as_ptr().cast(), received.as_mut_ptr().cast(), COUNT, data_type, comm, stream));
        let expected = encode_all(data_type, (0..ranks).flat_map(|r| (0..COUNT).map(move |i| value(data_type, r, i))));
        checks.push(Check { what: format!("AllGather {name}"), received, expected });
        keep.push(input);
    }
    hip_ok!(hipStreamSynchronize(stream));
    let mut error = 99;
    nccl_ok!(ncclCommGetAsyncError(comm, &mut error));
    assert_eq!(error, ncclSuccess, "{}", last_error());
    for check in &checks {
        assert_eq!(check.received, check.expected, "rank {rank} of {ranks}: {}", check.what);
    }
    for op in operators {
        nccl_ok!(ncclRedOpDestroy(op, comm));
    }

    send_and_receive(comm, stream, ranks, rank);
    split(comm, stream, ranks, rank);

    hip_ok!(hipStreamSynchronize(stream));
    nccl_ok!(ncclCommGetAsyncError(comm, &mut error));
    assert_eq!(error, ncclSuccess, "{}", last_error());
    for scalar in device_scalars {
        hip_ok!(hipFree(scalar));
    }
    hip_ok!(hipStreamDestroy(stream));
    nccl_ok!(ncclCommFinalize(comm));
    nccl_ok!(ncclCommDestroy(comm));
}

/// A ring (three messages to the next rank, arriving in send order, then from the previous),
/// then grouped pairs that receive before they send (0 <-> 1, 2 <-> 3; alone: itself).
fn send_and_receive(comm: ncclComm_t, stream: hipStream_t, ranks: usize, rank: usize) {
    let next = (rank + 1) % ranks;
    let previous = (rank + ranks - 1) % ranks;
    let messages: Vec<[u64; 3]> = (0..3).map(|k| [rank as u64, k, 1000 * rank as u64 + k]).collect();
    for message in &messages {
        nccl_ok!(ncclSend(message.as_ptr().cast(), 3, ncclUint64, next as i32, comm, stream));
    }
    let mut received = [[0u64; 3]; 3];
    for slot in received.iter_mut() {
        nccl_ok!(ncclRecv(slot.as_mut_ptr().cast(), 3, ncclUint64, previous as i32, comm, stream));
    }
    let partner = if ranks == 1 { 0 } else if rank ^ 1 < ranks { rank ^ 1 } else { rank };
    let outgoing = [rank as i32 * 7 + 1; 4];
    let mut incoming = [0i32; 4];
    nccl_ok!(ncclGroupStart());
    nccl_ok!(ncclRecv(incoming.as_mut_ptr().cast(), 4, ncclInt32, partner as i32, comm, stream));
    nccl_ok!(ncclSend(outgoing.as_ptr().cast(), 4, ncclInt32, partner as i32, comm, stream));
    nccl_ok!(ncclGroupEnd());
    hip_ok!(hipStreamSynchronize(stream));
    for (k, message) in received.iter().enumerate() {
        assert_eq!(*message, [previous as u64, k as u64, 1000 * previous as u64 + k as u64], "rank {rank}: ring message {k}");
    }
    assert_eq!(incoming, [partner as i32 * 7 + 1; 4], "rank {rank}: grouped pair with {partner}");
}

/// Split by parity with keys reversing the order, all-reduce within each color; then a split
/// where rank 0 gives NCCL_SPLIT_NOCOLOR and the others all-gather their old ranks.
fn split(comm: ncclComm_t, stream: hipStream_t, ranks: usize, rank: usize) {
    let color = (rank % 2) as i32;
    let mut half = std::ptr::null_mut();
    nccl_ok!(ncclCommSplit(comm, color, -(rank as i32), &mut half, std::ptr::null_mut()));
    let members: Vec<usize> = (0..ranks).filter(|r| r % 2 == rank % 2).rev().collect();
    let (mut count, mut new_rank) = (0, 0);
    nccl_ok!(ncclCommCount(half, &mut count));
    nccl_ok!(ncclCommUserRank(half, &mut new_rank));
    assert_eq!(count as usize, members.len());
    assert_eq!(members[new_rank as usize], rank, "the larger key comes first");
    let input = [rank as i32 + 1; 2];
    let mut output = [0i32; 2];
    nccl_ok!(ncclAllReduce(input.as_ptr().cast(), output.as_mut_ptr().cast(), 2, ncclInt32, ncclSum, half, stream));

    let mut rest = std::ptr::null_mut();
    let color = if rank == 0 { NCCL_SPLIT_NOCOLOR } else { 4 };
    nccl_ok!(ncclCommSplit(comm, color, 0, &mut rest, std::ptr::null_mut()));
    let mut gathered = vec![0u32; ranks.saturating_sub(1)];
    let mine = [rank as u32];
    if rank == 0 {
        assert!(rest.is_null(), "NCCL_SPLIT_NOCOLOR gives no communicator");
    } else {
        nccl_ok!(ncclAllGather(mine.as_ptr().cast(), gathered.as_mut_ptr().cast(), 1, ncclUint32, rest, stream));
    }
    hip_ok!(hipStreamSynchronize(stream));
    let sum: usize = members.iter().map(|r| r + 1).sum();
    assert_eq!(output, [sum as i32; 2], "rank {rank}: all-reduce within color");
    if rank != 0 {
        assert_eq!(gathered, (1..ranks as u32).collect::<Vec<_>>());
        nccl_ok!(ncclCommDestroy(rest));
    }
    nccl_ok!(ncclCommDestroy(half));
}

// ---- the tests -----------------------------------------------------------------------------

fn run_suite(test: &str, processes: &[&str], ranks: usize) {
    let mut started = Ranks::new(test, 20_000);
    for ranks_of_process in processes {
        started.spawn(&format!("suite:{ranks}:{ranks_of_process}"));
    }
    started.wait_all_succeeded();
    started.assert_cleaned_up();
}

#[test]
fn one_rank_in_its_own_process() {
    run_suite("one", &["0"], 1);
}

/// A communicator directory whose ranks all exited without destroying it is removed by the
/// next communicator creation under the same base; one still without joiners is kept.
#[test]
fn a_new_communicator_sweeps_directories_whose_processes_all_exited() {
    let mut started = Ranks::new("sweep", 20_000);
    let mut gone = Command::new("true").spawn().unwrap();
    let dead_pid = gone.id();
    gone.wait().unwrap();
    let abandoned = started.base.join("softhip-rccl-00000000000000000000000000000001");
    std::fs::create_dir_all(&abandoned).unwrap();
    std::fs::write(abandoned.join("join-0"), format!("2 {dead_pid} 1")).unwrap();
    std::fs::write(abandoned.join("c0-0-1"), b"stale contribution").unwrap();
    let being_created = started.base.join("softhip-rccl-00000000000000000000000000000002");
    std::fs::create_dir_all(&being_created).unwrap();
    started.spawn("suite:1:0");
    started.wait_all_succeeded();
    assert!(!abandoned.exists(), "swept");
    assert!(being_created.exists(), "kept");
    std::fs::remove_dir(&being_created).unwrap();
    started.assert_cleaned_up();
}

#[test]
fn two_rank_processes_run_every_collective_type_and_reduction() {
    run_suite("two", &["0", "1"], 2);
}

#[test]
fn four_rank_processes_run_every_collective_type_and_reduction() {
    run_suite("four", &["0", "1", "2", "3"], 4);
}

#[test]
fn two_processes_of_two_rank_threads_each() {
    run_suite("mixed", &["0,2", "1,3"], 4);
}

/// (hipStreamSynchronize, async error, milliseconds, message) of an `allreduce` child.
fn allreduce_report(finished: &Finished) -> (hipError_t, ncclResult_t, u64, String) {
    let results = finished.results();
    assert_eq!(results.len(), 1, "{}\n{}", finished.stdout, finished.stderr);
    let r = &results[0];
    (r[0].parse().unwrap(), r[1].parse().unwrap(), r[2].parse().unwrap(), r[3].clone())
}

#[test]
fn a_rank_process_that_exits_fails_the_others_naming_it_before_the_timeout() {
    let timeout_ms = 5_000;
    let mut started = Ranks::new("exits", timeout_ms);
    let survivors = [started.spawn("allreduce:3:0"), started.spawn("allreduce:3:1")];
    let leaver = started.spawn("exit:3:2");
    assert!(started.wait(leaver).success);
    for index in survivors {
        let finished = started.wait(index);
        assert!(finished.success, "{}\n{}", finished.stdout, finished.stderr);
        let (synchronized, error, took, message) = allreduce_report(&finished);
        assert_eq!(synchronized, hipErrorLaunchFailure, "the device's sticky error: {message}");
        assert_eq!(error, ncclRemoteError, "{message}");
        assert!(message.contains("rank(s) [2]") && message.contains("exited"), "{message}");
        assert!(took < timeout_ms, "found out before the timeout: {took} ms");
    }
    // The exited rank never left; the survivors count it as gone and remove the directory.
    started.assert_cleaned_up();
}

#[test]
fn a_rank_process_that_stalls_fails_the_others_after_the_timeout() {
    let timeout_ms = 2_000;
    let mut started = Ranks::new("stalls", timeout_ms);
    let waiting = started.spawn("allreduce:2:0");
    let staller = started.spawn("stall:2:1");
    let finished = started.wait(waiting);
    started.kill(staller);
    assert!(finished.success, "{}\n{}", finished.stdout, finished.stderr);
    let (synchronized, error, took, message) = allreduce_report(&finished);
    assert_eq!(synchronized, hipErrorLaunchFailure, "{message}");
    assert_eq!(error, ncclRemoteError, "{message}");
    assert!(message.contains("rank 0 of 2 timed out after 2000 ms") && message.contains("rank(s) [1] never called it"), "{message}");
    assert!(took >= timeout_ms && took < timeout_ms + 15_000, "{took} ms");
    started.wait(staller);
}

#[test]
fn an_abort_in_one_process_fails_the_others() {
    let mut started = Ranks::new("abort", 20_000);
    let others = [started.spawn("allreduce:3:0"), started.spawn("allreduce:3:2")];
    let aborting = started.spawn("abort:3:1");
    assert!(started.wait(aborting).success);
    for index in others {
        let (synchronized, error, took, message) = allreduce_report(&started.wait(index));
        assert_eq!((synchronized, error), (hipErrorLaunchFailure, ncclRemoteError), "{message}");
        assert!(message.contains("rank 1 aborted the communicator"), "{message}");
        assert!(took < 20_000, "{took} ms");
    }
    started.assert_cleaned_up();
}

/// (result, milliseconds, message) of an `init` child.
fn init_report(finished: &Finished) -> (ncclResult_t, u64, String) {
    let results = finished.results();
    assert!(finished.success && results.len() == 1, "{}\n{}", finished.stdout, finished.stderr);
    (results[0][0].parse().unwrap(), results[0][1].parse().unwrap(), results[0][2].clone())
}

#[test]
fn rank_processes_disagreeing_on_the_count_all_fail_at_once() {
    let mut started = Ranks::new("count", 20_000);
    let processes = [started.spawn("init:2:0"), started.spawn("init:3:1")];
    for index in processes {
        let (result, took, message) = init_report(&started.wait(index));
        assert_eq!(result, ncclInvalidArgument, "{message}");
        assert!(message.contains("nranks 2") && message.contains("nranks 3"), "{message}");
        assert!(took < 20_000, "at once, not by timeout: {took} ms");
    }
    started.assert_cleaned_up();
}

#[test]
fn a_rank_joining_twice_from_two_processes_fails_every_rank() {
    let mut started = Ranks::new("twice", 20_000);
    let processes = [started.spawn("init:3:2"), started.spawn("init:3:2")];
    for index in processes {
        let (result, took, message) = init_report(&started.wait(index));
        assert_eq!(result, ncclInvalidUsage, "{message}");
        assert!(message.contains("rank 2 of 3 joined the same unique id twice"), "{message}");
        assert!(took < 20_000, "{took} ms");
    }
    started.assert_cleaned_up();
}

#[test]
fn unique_ids_differ_between_processes_and_calls() {
    let mut started = Ranks::new("ids", 20_000);
    let child = started.spawn("id:1:0");
    let finished = started.wait(child);
    let theirs = &finished.results()[0][0];
    let mine = [new_id_hex(), new_id_hex()];
    assert_ne!(mine[0], mine[1]);
    assert!(!mine.contains(theirs));
    assert_eq!(theirs.len(), 256);
}
