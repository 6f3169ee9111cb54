//! Collective commands in stream and graph command buffers of the Rust HIP device, over the
//! software device's RCCL: ranks as threads of this process (one device per GPU; two, and
//! four in a child process with four GPUs), as processes (one per GPU, as under `mpirun`),
//! and as the queues of one device over several GPUs driven from one thread. Every kind
//! with several element types and every reduction, inputs differing per rank, results
//! checked against values computed here, in both modes; one-shot, reusable with a binding
//! table (both modes), and inline command buffers; graph mode mixing fills and copies with
//! collectives; splits; refusals (i16, NULL and foreign channels, bad ops, short buffers,
//! two queues), a communicator that cannot be made, and a rank process that exits.

mod common;

use common::*;
use iree_hal_hip_rs::abi::*;
use iree_hal_hip_rs::command_buffer::HipCommandBuffer;
use iree_hal_hip_rs::device::HipDevice;
use iree_hal_hip_rs::hal_object::HalObject;
use iree_hal_hip_rs::hip::context::ContextGuard;
use iree_hal_hip_rs::hip::types::*;
use iree_hal_hip_rs::hip_call;
use iree_hal_hip_rs::status::StatusCode;
use std::sync::OnceLock;

static ALLOCATOR: CountingAllocator = CountingAllocator::new();

/// A directory linking `libamdhip64.so` and `librccl.so` to the software device.
fn library_dir() -> &'static str {
    static DIR: OnceLock<String> = OnceLock::new();
    DIR.get_or_init(|| {
        let library = software_hip_library();
        let dir = library.parent().unwrap().join("collectives-test-hip-rccl");
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["libamdhip64.so", "librccl.so"] {
            match std::os::unix::fs::symlink(&library, dir.join(name)) {
                Err(error) if error.kind() != std::io::ErrorKind::AlreadyExists => panic!("linking {name}: {error}"),
                _ => {}
            }
        }
        dir.display().to_string()
    })
}



/// One rank: a device on one GPU, a channel on it, and a stream of our own.
struct Rank {
    driver: *mut iree_hal_driver_t,
    device: *mut iree_hal_device_t,
    channel: *mut iree_hal_channel_t,
    stream: hipStream_t,
    rank: i32,
    count: i32,
}

unsafe impl Send for Rank {}

impl Rank {
    fn new(path: &'static str, params: &[(&'static str, &'static str)], id: &[u8], rank: i32, count: i32) -> Rank {
        let driver = software_driver_with_search_paths(&[library_dir()], ALLOCATOR.as_iree());
        let device = device_at(driver, path, params, ALLOCATOR.as_iree());
        let channel = create_channel_on(device, IREE_HAL_QUEUE_AFFINITY_ANY, id, rank, count).unwrap();
        let mut this = Rank { driver, device, channel, stream: core::ptr::null_mut(), rank, count };
        let mut stream: hipStream_t = core::ptr::null_mut();
        {
            let _context = ContextGuard::push(this.hip(), this.ours().gpus()[0].context()).unwrap();
            hip_call!(this.hip(), hipStreamCreateWithFlags(&mut stream, hipStreamNonBlocking)).unwrap();
        }
        this.stream = stream;
        this
    }

    /// Rank `rank` of `count`, its device on GPU `rank` (stream command buffers).
    fn on_own_gpu(id: &[u8], rank: i32, count: i32) -> Rank {
        Rank::on_own_gpu_in("stream", id, rank, count)
    }

    /// Rank `rank` of `count`, its device on GPU `rank`, in command buffer mode `mode`.
    fn on_own_gpu_in(mode: &'static str, id: &[u8], rank: i32, count: i32) -> Rank {
        const PATHS: [&str; 4] = ["0", "1", "2", "3"];
        Rank::new(PATHS[rank as usize], &[("command_buffer_mode", mode)], id, rank, count)
    }

    fn ours(&self) -> &HipDevice {
        unsafe { HipDevice::from_raw(self.device) }.unwrap()
    }

    fn hip(&self) -> &iree_hal_hip_rs::hip::HipSymbols {
        self.ours().hip()
    }

    fn context(&self) -> ContextGuard<'_> {
        ContextGuard::push(self.hip(), self.ours().gpus()[0].context()).unwrap()
    }

    fn buffer(&self, bytes: &[u8]) -> Buffer {
        buffer_on(self.device, bytes)
    }

    fn write(&self, buffer: &Buffer, bytes: &[u8]) {
        write_on(self.device, buffer, bytes)
    }

    fn read(&self, buffer: &Buffer, length: usize) -> Vec<u8> {
        read_on(self.device, buffer, length)
    }

    fn command_buffer(&self, mode: iree_hal_command_buffer_mode_t, binding_capacity: usize) -> CommandBuffer {
        command_buffer_on(self.device, mode, IREE_HAL_QUEUE_AFFINITY_ANY, binding_capacity)
    }

    /// Issues onto our stream and waits for it.
    fn issue(&self, command_buffer: &CommandBuffer, table: &[iree_hal_buffer_binding_t]) -> Result<(), (StatusCode, String)> {
        let ours = unsafe { HipCommandBuffer::from_raw(command_buffer.0) }.unwrap();
        let c_table = iree_hal_buffer_binding_table_t { count: table.len(), bindings: table.as_ptr() };
        let table = unsafe { iree_hal_hip_rs::hal_object::Binding::from_c(&c_table) }.unwrap();
        let gpu = self.ours().gpus()[0].clone();
        let queue = iree_hal_hip_rs::queue::StreamContext { hip: self.hip(), gpu: &gpu, gpu_index: 0, stream: self.stream, epoch: 0, profile: None };
        ours.issue(&queue, table).map_err(|s| (s.code(), s.to_string()))?;
        let _context = self.context();
        hip_call!(self.hip(), hipStreamSynchronize(self.stream)).map_err(|s| (s.code(), s.to_string()))
    }
}

impl Drop for Rank {
    fn drop(&mut self) {
        {
            let _context = self.context();
            hip_call!(self.hip(), hipStreamDestroy(self.stream)).unwrap();
        }
        unsafe { iree_hal_hip_rs::hal_object::resource::release(self.channel) };
        unsafe { iree_hal_hip_rs::hal_object::resource::release(self.device) };
        release_driver(self.driver);
    }
}

fn vtable_of(device: *mut iree_hal_device_t) -> &'static iree_hal_device_vtable_t {
    unsafe { &*((*device).resource.vtable as *const iree_hal_device_vtable_t) }
}

fn ours_of(device: *mut iree_hal_device_t) -> &'static HipDevice {
    unsafe { HipDevice::from_raw(device) }.unwrap()
}

/// The device's first GPU current (buffers of any of its GPUs are host memory here).
fn context_of(device: *mut iree_hal_device_t) -> ContextGuard<'static> {
    let ours = ours_of(device);
    ContextGuard::push(ours.hip(), ours.gpus()[0].context()).unwrap()
}

/// `create_channel` of `device` for the queues of `affinity`.
fn create_channel_on(device: *mut iree_hal_device_t, affinity: iree_hal_queue_affinity_t, id: &[u8], rank: i32, count: i32) -> Result<*mut iree_hal_channel_t, (StatusCode, String)> {
    let params = iree_hal_channel_params_t {
        flags: IREE_HAL_CHANNEL_FLAG_NONE,
        id: iree_const_byte_span_t { data: id.as_ptr(), data_length: id.len() },
        group: sv(""),
        rank,
        count,
    };
    let mut channel = core::ptr::null_mut();
    match take_status(unsafe { (vtable_of(device).create_channel.unwrap())(device, affinity, params, &mut channel) }) {
        None => Ok(channel),
        Some(failure) => Err(failure),
    }
}

fn pointer(buffer: &Buffer) -> *mut core::ffi::c_void {
    unsafe { iree_hal_hip_rs::buffer::HipBuffer::from_raw(buffer.0) }.unwrap().device_pointer()
}

/// A device buffer of `device` holding `bytes`.
fn buffer_on(device: *mut iree_hal_device_t, bytes: &[u8]) -> Buffer {
    let allocator = unsafe { (vtable_of(device).device_allocator.unwrap())(device) };
    let vtable = unsafe { &*((*allocator).resource.vtable as *const iree_hal_allocator_vtable_t) };
    let params = iree_hal_buffer_params_t {
        usage: IREE_HAL_BUFFER_USAGE_DEFAULT,
        access: IREE_HAL_MEMORY_ACCESS_ALL,
        type_: IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL,
        queue_affinity: IREE_HAL_QUEUE_AFFINITY_ANY,
        min_alignment: 0,
    };
    let mut buffer = core::ptr::null_mut();
    assert_ok(unsafe { (vtable.allocate_buffer.unwrap())(allocator, &params, bytes.len().max(1) as u64, &mut buffer) });
    let buffer = Buffer(buffer);
    if !bytes.is_empty() {
        write_on(device, &buffer, bytes);
    }
    buffer
}

fn write_on(device: *mut iree_hal_device_t, buffer: &Buffer, bytes: &[u8]) {
    let _context = context_of(device);
    hip_call!(ours_of(device).hip(), hipMemcpy(pointer(buffer), bytes.as_ptr().cast(), bytes.len(), hipMemcpyHostToDevice)).unwrap();
}

fn read_on(device: *mut iree_hal_device_t, buffer: &Buffer, length: usize) -> Vec<u8> {
    let mut bytes = vec![0u8; length];
    let _context = context_of(device);
    hip_call!(ours_of(device).hip(), hipMemcpy(bytes.as_mut_ptr().cast(), pointer(buffer), length, hipMemcpyDeviceToHost)).unwrap();
    bytes
}

fn command_buffer_on(device: *mut iree_hal_device_t, mode: iree_hal_command_buffer_mode_t, affinity: iree_hal_queue_affinity_t, binding_capacity: usize) -> CommandBuffer {
    let mut command_buffer = core::ptr::null_mut();
    assert_ok(unsafe { (vtable_of(device).create_command_buffer.unwrap())(device, mode, IREE_HAL_COMMAND_CATEGORY_ANY, affinity, binding_capacity, &mut command_buffer) });
    CommandBuffer(command_buffer)
}

struct Buffer(*mut iree_hal_buffer_t);

impl Drop for Buffer {
    fn drop(&mut self) {
        unsafe { iree_hal_hip_rs::hal_object::resource::release_buffer(self.0) };
    }
}

fn direct(buffer: &Buffer, length: u64) -> iree_hal_buffer_ref_t {
    iree_hal_buffer_ref_t { reserved_and_buffer_slot: 0, buffer: buffer.0, offset: 0, length }
}

fn slot(slot: u32, length: u64) -> iree_hal_buffer_ref_t {
    let mut r = iree_hal_buffer_ref_t { reserved_and_buffer_slot: 0, buffer: core::ptr::null_mut(), offset: 0, length };
    r.set_buffer_slot(slot);
    r
}

fn none_ref() -> iree_hal_buffer_ref_t {
    iree_hal_buffer_ref_t { reserved_and_buffer_slot: 0, buffer: core::ptr::null_mut(), offset: 0, length: 0 }
}

struct CommandBuffer(*mut iree_hal_command_buffer_t);

impl CommandBuffer {
    fn vtable(&self) -> &iree_hal_command_buffer_vtable_t {
        unsafe { &*((*self.0).resource.vtable as *const iree_hal_command_buffer_vtable_t) }
    }
    fn begin(&self) {
        assert_ok(unsafe { (self.vtable().begin.unwrap())(self.0) });
    }
    fn end(&self) {
        assert_ok(unsafe { (self.vtable().end.unwrap())(self.0) });
    }
    fn collective(
        &self,
        channel: *mut iree_hal_channel_t,
        op: iree_hal_collective_op_t,
        param: u32,
        send: iree_hal_buffer_ref_t,
        recv: iree_hal_buffer_ref_t,
        count: u64,
    ) -> iree_status_t {
        unsafe { (self.vtable().collective.unwrap())(self.0, channel, op, param, send, recv, count) }
    }
    fn fill(&self, target: iree_hal_buffer_ref_t, pattern: &[u8]) {
        assert_ok(unsafe { (self.vtable().fill_buffer.unwrap())(self.0, target, pattern.as_ptr().cast(), pattern.len(), 0) });
    }
    fn copy(&self, source: iree_hal_buffer_ref_t, target: iree_hal_buffer_ref_t) {
        assert_ok(unsafe { (self.vtable().copy_buffer.unwrap())(self.0, source, target, 0) });
    }
    fn barrier(&self) {
        assert_ok(unsafe {
            (self.vtable().execution_barrier.unwrap())(
                self.0,
                IREE_HAL_EXECUTION_STAGE_COMMAND_RETIRE,
                IREE_HAL_EXECUTION_STAGE_COMMAND_ISSUE,
                0,
                0,
                core::ptr::null(),
                0,
                core::ptr::null(),
            )
        });
    }
}

impl Drop for CommandBuffer {
    fn drop(&mut self) {
        unsafe { iree_hal_hip_rs::hal_object::resource::release(self.0) };
    }
}

//===----------------------------------------------------------------------===//
// Element types and reference arithmetic
//===----------------------------------------------------------------------===//

#[derive(Clone, Copy, Debug, PartialEq)]
enum Ty {
    F32,
    I32,
    Bf16,
    U8,
    I8,
    U32,
    I64,
    U64,
    F64,
}

const TYPES: [Ty; 9] = [Ty::F32, Ty::I32, Ty::Bf16, Ty::U8, Ty::I8, Ty::U32, Ty::I64, Ty::U64, Ty::F64];

/// f32 to bf16 bits, rounding to nearest even.
fn bf16_bits(value: f32) -> u16 {
    let bits = value.to_bits();
    ((bits + 0x7fff + ((bits >> 16) & 1)) >> 16) as u16
}

fn bf16_value(bits: u16) -> f32 {
    f32::from_bits(u32::from(bits) << 16)
}

impl Ty {
    fn iree(self) -> iree_hal_collective_element_type_t {
        match self {
            Ty::F32 => IREE_HAL_COLLECTIVE_ELEMENT_TYPE_FLOAT_32,
            Ty::I32 => IREE_HAL_COLLECTIVE_ELEMENT_TYPE_SINT_32,
            Ty::Bf16 => IREE_HAL_COLLECTIVE_ELEMENT_TYPE_BFLOAT_16,
            Ty::U8 => IREE_HAL_COLLECTIVE_ELEMENT_TYPE_UINT_8,
            Ty::I8 => IREE_HAL_COLLECTIVE_ELEMENT_TYPE_SINT_8,
            Ty::U32 => IREE_HAL_COLLECTIVE_ELEMENT_TYPE_UINT_32,
            Ty::I64 => IREE_HAL_COLLECTIVE_ELEMENT_TYPE_SINT_64,
            Ty::U64 => IREE_HAL_COLLECTIVE_ELEMENT_TYPE_UINT_64,
            Ty::F64 => IREE_HAL_COLLECTIVE_ELEMENT_TYPE_FLOAT_64,
        }
    }

    fn size(self) -> usize {
        match self {
            Ty::U8 | Ty::I8 => 1,
            Ty::Bf16 => 2,
            Ty::F32 | Ty::I32 | Ty::U32 => 4,
            Ty::I64 | Ty::U64 | Ty::F64 => 8,
        }
    }

    fn signed(self) -> bool {
        matches!(self, Ty::I32 | Ty::I8 | Ty::I64 | Ty::F32 | Ty::F64)
    }

    /// Rank `rank`'s element `index` of input `stream` (each collective gets its own).
    fn input(self, stream: usize, rank: i32, index: usize) -> f64 {
        if self == Ty::Bf16 {
            // Sums that bf16 must round: 256 + 4k (exact) plus 1.5 + k/4 (exact).
            return if rank == 0 { 256.0 + 4.0 * ((index + stream) % 4) as f64 } else { 1.5 + 0.25 * ((index + stream + rank as usize) % 3) as f64 };
        }
        let v = ((rank as usize * 5 + index * 3 + stream * 7) % 7) as f64;
        let v = if self.signed() { v - 3.0 } else { v + 1.0 };
        if matches!(self, Ty::F32 | Ty::F64) {
            v + 0.5
        } else {
            v
        }
    }

    fn encode(self, values: &[f64]) -> Vec<u8> {
        let mut bytes = Vec::new();
        for &v in values {
            match self {
                Ty::F32 => bytes.extend((v as f32).to_le_bytes()),
                Ty::F64 => bytes.extend(v.to_le_bytes()),
                Ty::Bf16 => bytes.extend(bf16_bits(v as f32).to_le_bytes()),
                Ty::I32 => bytes.extend((v as i32).to_le_bytes()),
                Ty::U32 => bytes.extend((v as u32).to_le_bytes()),
                Ty::I64 => bytes.extend((v as i64).to_le_bytes()),
                Ty::U64 => bytes.extend((v as u64).to_le_bytes()),
                Ty::I8 => bytes.extend((v as i8).to_le_bytes()),
                Ty::U8 => bytes.extend((v as u8).to_le_bytes()),
            }
        }
        bytes
    }

    fn float(self) -> bool {
        matches!(self, Ty::F32 | Ty::F64 | Ty::Bf16)
    }

    /// `a op b` computed as the element type computes it (bf16: rounded to bf16).
    fn combine(self, reduction: u8, a: f64, b: f64) -> f64 {
        let exact = match reduction {
            IREE_HAL_COLLECTIVE_REDUCTION_SUM | IREE_HAL_COLLECTIVE_REDUCTION_AVERAGE => a + b,
            IREE_HAL_COLLECTIVE_REDUCTION_PRODUCT => a * b,
            IREE_HAL_COLLECTIVE_REDUCTION_MINIMUM => a.min(b),
            IREE_HAL_COLLECTIVE_REDUCTION_MAXIMUM => a.max(b),
            _ => unreachable!(),
        };
        self.round(exact)
    }

    /// `v` as the element type holds it: floats rounded, integers wrapped (products of
    /// four ranks overflow eight bits).
    fn round(self, v: f64) -> f64 {
        match self {
            Ty::F32 => v as f32 as f64,
            Ty::Bf16 => bf16_value(bf16_bits(v as f32)) as f64,
            Ty::U8 => (v as i64 as u8) as f64,
            Ty::I8 => (v as i64 as i8) as f64,
            Ty::U32 => (v as i64 as u32) as f64,
            Ty::I32 => (v as i64 as i32) as f64,
            Ty::I64 | Ty::U64 | Ty::F64 => v,
        }
    }

    /// The reduction of `values` (one per rank).
    fn reduce(self, reduction: u8, values: &[f64]) -> f64 {
        let mut acc = values[0];
        for &v in &values[1..] {
            acc = self.combine(reduction, acc, v);
        }
        if reduction == IREE_HAL_COLLECTIVE_REDUCTION_AVERAGE {
            let n = values.len() as f64;
            acc = if self.float() { self.round(acc / n) } else { (acc / n).trunc() };
        }
        acc
    }
}

const REDUCTIONS: [u8; 5] = [
    IREE_HAL_COLLECTIVE_REDUCTION_SUM,
    IREE_HAL_COLLECTIVE_REDUCTION_PRODUCT,
    IREE_HAL_COLLECTIVE_REDUCTION_MINIMUM,
    IREE_HAL_COLLECTIVE_REDUCTION_MAXIMUM,
    IREE_HAL_COLLECTIVE_REDUCTION_AVERAGE,
];

fn op(kind: u8, reduction: u8, ty: Ty) -> iree_hal_collective_op_t {
    iree_hal_collective_op_t::new(kind, reduction, ty.iree())
}

const SENTINEL: u8 = 0xEE;

/// One recorded collective: its buffers and what its receive buffer must hold afterwards.
struct Case {
    name: String,
    recv: Buffer,
    expected: Vec<u8>,
    _send: Buffer,
}

/// Inputs of every rank for stream `stream`: `length` elements each.
fn inputs(ty: Ty, stream: usize, ranks: i32, length: usize) -> Vec<Vec<f64>> {
    (0..ranks).map(|rank| (0..length).map(|i| ty.input(stream, rank, i)).collect()).collect()
}

/// Records every kind (and every reduction of the reducing ones) for `ty` into
/// `command_buffer` on `rank`, with a barrier halfway; the cases to check once it ran.
fn record_all_kinds(rank: &Rank, command_buffer: &CommandBuffer, ty: Ty) -> Vec<Case> {
    let (me, n) = (rank.rank, rank.count);
    let root = n - 1; // root 1 with two ranks
    let peer = (me + 1) % n;
    let c = 5usize;
    let size = ty.size();
    let mut cases = Vec::new();
    let mut stream = 0;
    let mut add = |name: String, kind: u8, reduction: u8, param: u32, send_len: usize, recv_len: usize, count: usize, expected: &dyn Fn(&[Vec<f64>], usize) -> Option<Vec<f64>>| {
        stream += 1;
        let all = inputs(ty, stream, n, send_len);
        let send = rank.buffer(&ty.encode(&all[me as usize]));
        let recv = rank.buffer(&vec![SENTINEL; recv_len * size]);
        assert_ok(command_buffer.collective(
            rank.channel,
            op(kind, reduction, ty),
            param,
            direct(&send, (send_len * size) as u64),
            direct(&recv, (recv_len * size) as u64),
            count as u64,
        ));
        let expected = match expected(&all, stream) {
            Some(values) => ty.encode(&values),
            None => vec![SENTINEL; recv_len * size],
        };
        cases.push(Case { name: format!("{name} {ty:?}"), recv, expected, _send: send });
    };
    for reduction in REDUCTIONS {
        add(format!("all_reduce {reduction}"), IREE_HAL_COLLECTIVE_KIND_ALL_REDUCE, reduction, 0, c, c, c, &|all, _| {
            Some((0..c).map(|i| ty.reduce(reduction, &all.iter().map(|x| x[i]).collect::<Vec<_>>())).collect())
        });
        add(format!("reduce {reduction} root {root}"), IREE_HAL_COLLECTIVE_KIND_REDUCE, reduction, root as u32, c, c, c, &|all, _| {
            (me == root).then(|| (0..c).map(|i| ty.reduce(reduction, &all.iter().map(|x| x[i]).collect::<Vec<_>>())).collect())
        });
        add(format!("reduce_scatter {reduction}"), IREE_HAL_COLLECTIVE_KIND_REDUCE_SCATTER, reduction, 0, c * n as usize, c, c, &|all, _| {
            Some((0..c).map(|i| ty.reduce(reduction, &all.iter().map(|x| x[me as usize * c + i]).collect::<Vec<_>>())).collect())
        });
    }
    command_buffer.barrier();
    add("all_gather".into(), IREE_HAL_COLLECTIVE_KIND_ALL_GATHER, 0, 0, c, c * n as usize, c, &|all, _| Some(all.concat()));
    // IREE's compiler records all_gather with the gathered count (its result's elements).
    add("all_gather, gathered count".into(), IREE_HAL_COLLECTIVE_KIND_ALL_GATHER, 0, 0, c, c * n as usize, c * n as usize, &|all, _| Some(all.concat()));
    add(format!("broadcast root {root}"), IREE_HAL_COLLECTIVE_KIND_BROADCAST, 0, root as u32, c, c, c, &|all, _| Some(all[root as usize].clone()));
    let k = 3;
    add("all_to_all".into(), IREE_HAL_COLLECTIVE_KIND_ALL_TO_ALL, 0, 0, k * n as usize, k * n as usize, k * n as usize, &|all, _| {
        Some((0..n as usize).flat_map(|p| all[p][me as usize * k..(me as usize + 1) * k].to_vec()).collect())
    });
    // A send to the next rank and a receive from the previous one, in one group.
    let previous = (me + n - 1) % n;
    add(format!("send to {peer}"), IREE_HAL_COLLECTIVE_KIND_SEND, 0, peer as u32, c, 0, c, &|_, _| Some(Vec::new()));
    // The data received is the previous rank's input of the send's stream (the one before).
    add(format!("recv from {previous}"), IREE_HAL_COLLECTIVE_KIND_RECV, 0, previous as u32, 0, c, c, &|_, stream| {
        Some(inputs(ty, stream - 1, n, c)[previous as usize].clone())
    });
    // send_recv: rank 0 sends to the last rank and receives nothing (zero-filled); the last
    // rank receives from rank 0 and sends nothing; others (none with two) skip both.
    let last = n - 1;
    let (send_peer, recv_peer): (i32, i32) = if n == 1 {
        (0, 0)
    } else if me == 0 {
        (last, -1)
    } else if me == last {
        (-1, 0)
    } else {
        (-1, -1)
    };
    let param = (send_peer as u16 as u32) | ((recv_peer as u16 as u32) << 16);
    add(format!("send_recv {send_peer}/{recv_peer}"), IREE_HAL_COLLECTIVE_KIND_SEND_RECV, 0, param, c, c, c, &|all, _| {
        Some(if recv_peer == -1 { vec![0.0; c] } else { all[recv_peer as usize].clone() })
    });
    cases
}

fn check(rank: &Rank, cases: &[Case]) {
    for case in cases {
        let got = rank.read(&case.recv, case.expected.len());
        assert_eq!(got, case.expected, "rank {} of {}: {}", rank.rank, rank.count, case.name);
    }
}

//===----------------------------------------------------------------------===//
// Tests
//===----------------------------------------------------------------------===//

/// The command buffer modes the main tests run in: STREAM, and GRAPH (where the collectives
/// are issued on the stream between the graphs of the other commands).
const MODES: [&str; 2] = ["stream", "graph"];

/// Two ranks on two GPUs: every kind, type and reduction, in one-shot command buffers (one
/// per element type, its collectives batched into RCCL groups split by a barrier), in both
/// command buffer modes.
/// One test at a time holds the GPUs. A collective holds its stream until every rank
/// arrived, and a HIP free synchronizes its whole device: two multi-rank tests at once could
/// each wait in a free for a collective of the other's (as on real GPUs), until RCCL's
/// timeout fails them.
fn exclusive_gpus() -> std::sync::MutexGuard<'static, ()> {
    static GPUS: std::sync::Mutex<()> = std::sync::Mutex::new(());
    GPUS.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[test]
fn two_ranks_run_every_kind_type_and_reduction() {
    let _gpus = exclusive_gpus();
    for mode in MODES {
        ranks_run_every_kind_type_and_reduction_in(mode, 2);
    }
}

fn ranks_run_every_kind_type_and_reduction_in(mode: &'static str, count: i32) {
    let id = fresh_rccl_id("collectives-test", &format!("every-kind-{mode}-{count}"));
    on_ranks(count, move |me| {
        let rank = Rank::on_own_gpu_in(mode, &id, me, count);
        for ty in TYPES {
            run_every_kind(&rank, ty);
        }
    });
}

/// Records every kind for `ty` in one one-shot command buffer, runs it and checks the results.
fn run_every_kind(rank: &Rank, ty: Ty) {
    let command_buffer = rank.command_buffer(IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
    command_buffer.begin();
    let cases = record_all_kinds(rank, &command_buffer, ty);
    command_buffer.end();
    rank.issue(&command_buffer, &[]).unwrap();
    check(rank, &cases);
}

/// A channel of one rank: every kind still runs (reductions of one value, self send/recv).
#[test]
fn one_rank_alone_runs_every_kind() {
    let _gpus = exclusive_gpus();
    let rank = Rank::on_own_gpu(&fresh_rccl_id("collectives-test", "alone"), 0, 1);
    for ty in [Ty::F32, Ty::Bf16, Ty::I32, Ty::U8] {
        run_every_kind(&rank, ty);
    }
}

/// bf16 goes to RCCL as bf16: 256 + 1.5 rounds to 258 in bf16 (a float64 reading of the
/// bytes would give something else entirely).
#[test]
fn bf16_sums_are_bf16_values() {
    let _gpus = exclusive_gpus();
    let id = fresh_rccl_id("collectives-test", "bf16");
    on_ranks(2, move |me| {
        let rank = Rank::on_own_gpu(&id, me, 2);
        let mine = [if me == 0 { 256.0f32 } else { 1.5 }, if me == 0 { 3.0 } else { 0.0078125 }];
        let send = rank.buffer(&mine.iter().flat_map(|v| bf16_bits(*v).to_le_bytes()).collect::<Vec<_>>());
        let recv = rank.buffer(&[SENTINEL; 4]);
        let command_buffer = rank.command_buffer(IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
        command_buffer.begin();
        assert_ok(command_buffer.collective(rank.channel, op(IREE_HAL_COLLECTIVE_KIND_ALL_REDUCE, IREE_HAL_COLLECTIVE_REDUCTION_SUM, Ty::Bf16), 0, direct(&send, 4), direct(&recv, 4), 2));
        command_buffer.end();
        rank.issue(&command_buffer, &[]).unwrap();
        let got = rank.read(&recv, 4);
        let got = [u16::from_le_bytes([got[0], got[1]]), u16::from_le_bytes([got[2], got[3]])];
        assert_eq!(bf16_value(got[0]), 258.0);
        assert_eq!(bf16_value(got[1]), bf16_value(bf16_bits(3.0 + 0.0078125)));
        assert_eq!(bf16_value(got[1]), 3.0, "3 + 2^-7 rounds to 3 in bf16");
    });
}

/// A reusable command buffer with a binding table runs twice over different buffers, in
/// both command buffer modes.
#[test]
fn reusable_with_a_binding_table() {
    let _gpus = exclusive_gpus();
    for mode in MODES {
        reusable_with_a_binding_table_in(mode);
    }
}

fn reusable_with_a_binding_table_in(mode: &'static str) {
    let id = fresh_rccl_id("collectives-test", &format!("reusable-{mode}"));
    on_ranks(2, move |me| {
        let rank = Rank::on_own_gpu_in(mode, &id, me, 2);
        let c = 4usize;
        let command_buffer = rank.command_buffer(IREE_HAL_COMMAND_BUFFER_MODE_DEFAULT, 4);
        command_buffer.begin();
        assert_ok(command_buffer.collective(rank.channel, op(IREE_HAL_COLLECTIVE_KIND_ALL_REDUCE, IREE_HAL_COLLECTIVE_REDUCTION_SUM, Ty::F32), 0, slot(0, 16), slot(1, 16), c as u64));
        assert_ok(command_buffer.collective(rank.channel, op(IREE_HAL_COLLECTIVE_KIND_ALL_GATHER, 0, Ty::I32), 0, slot(2, 16), slot(3, IREE_HAL_WHOLE_BUFFER), c as u64));
        command_buffer.end();
        for run in 0..2usize {
            let reduce_inputs = inputs(Ty::F32, 100 + run, 2, c);
            let gather_inputs = inputs(Ty::I32, 200 + run, 2, c);
            let buffers = [
                rank.buffer(&Ty::F32.encode(&reduce_inputs[me as usize])),
                rank.buffer(&[SENTINEL; 16]),
                rank.buffer(&Ty::I32.encode(&gather_inputs[me as usize])),
                rank.buffer(&[SENTINEL; 32]),
            ];
            let table: Vec<_> = buffers.iter().map(|b| iree_hal_buffer_binding_t { buffer: b.0, offset: 0, length: IREE_HAL_WHOLE_BUFFER }).collect();
            rank.issue(&command_buffer, &table).unwrap();
            let sum: Vec<f64> = (0..c).map(|i| Ty::F32.reduce(IREE_HAL_COLLECTIVE_REDUCTION_SUM, &[reduce_inputs[0][i], reduce_inputs[1][i]])).collect();
            assert_eq!(rank.read(&buffers[1], 16), Ty::F32.encode(&sum), "run {run}");
            assert_eq!(rank.read(&buffers[3], 32), Ty::I32.encode(&gather_inputs.concat()), "run {run}");
        }
        // A table whose receive buffer is too small for the gather fails before anything runs.
        let small = [rank.buffer(&[0; 16]), rank.buffer(&[0; 16]), rank.buffer(&[0; 16]), rank.buffer(&[0; 16])];
        let table: Vec<_> = small.iter().map(|b| iree_hal_buffer_binding_t { buffer: b.0, offset: 0, length: IREE_HAL_WHOLE_BUFFER }).collect();
        let (code, message) = rank.issue(&command_buffer, &table).unwrap_err();
        assert_eq!(code, StatusCode::OutOfRange, "{message}");
    });
}

/// Graph mode with fills and copies before, between and after collectives in one reusable
/// command buffer (graph, RCCL group, graph, RCCL call, graph on one stream), slots in both
/// kinds of segments, run over two binding tables: every result checked each run.
#[test]
fn graph_mode_mixes_transfers_and_collectives() {
    let _gpus = exclusive_gpus();
    let id = fresh_rccl_id("collectives-test", "graph-mixed");
    on_ranks(2, move |me| {
        let rank = Rank::on_own_gpu_in("graph", &id, me, 2);
        let f32s = |value: f32| -> Vec<u8> { (0..4).flat_map(|_| value.to_le_bytes()).collect() };
        let [a, b, e, f, g] = [(); 5].map(|()| rank.buffer(&[SENTINEL; 16]));
        let all_reduce = op(IREE_HAL_COLLECTIVE_KIND_ALL_REDUCE, IREE_HAL_COLLECTIVE_REDUCTION_SUM, Ty::F32);
        let command_buffer = rank.command_buffer(IREE_HAL_COMMAND_BUFFER_MODE_DEFAULT, 2);
        command_buffer.begin();
        // Graph: a = me + 1 in every element.
        command_buffer.fill(direct(&a, 16), &(me as f32 + 1.0).to_le_bytes());
        command_buffer.barrier();
        // RCCL group: b = sum of a (3), e = rank 1's a (2).
        assert_ok(command_buffer.collective(rank.channel, all_reduce, 0, direct(&a, 16), direct(&b, 16), 4));
        assert_ok(command_buffer.collective(rank.channel, op(IREE_HAL_COLLECTIVE_KIND_BROADCAST, 0, Ty::F32), 1, direct(&a, 16), direct(&e, 16), 4));
        command_buffer.barrier();
        // Graph: slot 0 = b (3), f = 0xFF bytes, slot 1 = 0x07 bytes (overwritten next).
        command_buffer.copy(direct(&b, 16), slot(0, 16));
        command_buffer.fill(direct(&f, 16), &[0xFF]);
        command_buffer.fill(slot(1, 16), &[0x07]);
        command_buffer.barrier();
        // RCCL: slot 1 = sum of slot 0 (6).
        assert_ok(command_buffer.collective(rank.channel, all_reduce, 0, slot(0, 16), slot(1, 16), 4));
        command_buffer.barrier();
        // Graph: g = slot 1 (6).
        command_buffer.copy(slot(1, 16), direct(&g, 16));
        command_buffer.end();
        for run in 0..2 {
            for buffer in [&a, &b, &e, &f, &g] {
                rank.write(buffer, &[SENTINEL; 16]);
            }
            let table_buffers = [rank.buffer(&[SENTINEL; 16]), rank.buffer(&[SENTINEL; 16])];
            let table: Vec<_> = table_buffers.iter().map(|b| iree_hal_buffer_binding_t { buffer: b.0, offset: 0, length: IREE_HAL_WHOLE_BUFFER }).collect();
            rank.issue(&command_buffer, &table).unwrap();
            assert_eq!(rank.read(&a, 16), f32s(me as f32 + 1.0), "run {run}: a");
            assert_eq!(rank.read(&b, 16), f32s(3.0), "run {run}: b");
            assert_eq!(rank.read(&e, 16), f32s(2.0), "run {run}: e");
            assert_eq!(rank.read(&f, 16), vec![0xFF; 16], "run {run}: f");
            assert_eq!(rank.read(&table_buffers[0], 16), f32s(3.0), "run {run}: slot 0");
            assert_eq!(rank.read(&table_buffers[1], 16), f32s(6.0), "run {run}: slot 1");
            assert_eq!(rank.read(&g, 16), f32s(6.0), "run {run}: g");
        }
    });
}

/// Inline command buffers: a send and a receive recorded one after the other go to RCCL as
/// one group (at `end`), so neither rank waits for the other's receive.
#[test]
fn inline_command_buffers_batch_collectives() {
    let _gpus = exclusive_gpus();
    let id = fresh_rccl_id("collectives-test", "inline");
    on_ranks(2, move |me| {
        let rank = Rank::new(if me == 0 { "0" } else { "1" }, &[("command_buffer_mode", "stream"), ("allow_inline_execution", "true")], &id, me, 2);
        let mine = inputs(Ty::U8, 300, 2, 6);
        let send = rank.buffer(&Ty::U8.encode(&mine[me as usize]));
        let recv = rank.buffer(&[SENTINEL; 6]);
        let command_buffer = rank.command_buffer(IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT | IREE_HAL_COMMAND_BUFFER_MODE_ALLOW_INLINE_EXECUTION, 0);
        command_buffer.begin();
        let peer = (1 - me) as u32;
        assert_ok(command_buffer.collective(rank.channel, op(IREE_HAL_COLLECTIVE_KIND_SEND, 0, Ty::U8), peer, direct(&send, 6), none_ref(), 6));
        assert_ok(command_buffer.collective(rank.channel, op(IREE_HAL_COLLECTIVE_KIND_RECV, 0, Ty::U8), peer, none_ref(), direct(&recv, 6), 6));
        command_buffer.end();
        // Releasing an inline command buffer waits for its stream.
        drop(command_buffer);
        assert_eq!(rank.read(&recv, 6), Ty::U8.encode(&mine[peer as usize]));
    });
}

/// Unknown or unsupported operations, NULL and foreign channels and short buffers are
/// refused when recorded; graph command buffers accept collectives (one rank alone here).
#[test]
fn refusals() {
    let _gpus = exclusive_gpus();
    let rank = Rank::on_own_gpu(&fresh_rccl_id("collectives-test", "refusals"), 0, 1);
    let send = rank.buffer(&[0; 64]);
    let recv = rank.buffer(&[0; 64]);
    let command_buffer = rank.command_buffer(IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
    command_buffer.begin();
    let all_reduce = |reduction, element_type| iree_hal_collective_op_t::new(IREE_HAL_COLLECTIVE_KIND_ALL_REDUCE, reduction, element_type);
    let record = |channel, op, count| command_buffer.collective(channel, op, 0, direct(&send, 64), direct(&recv, 64), count);
    for sixteen in [IREE_HAL_COLLECTIVE_ELEMENT_TYPE_SINT_16, IREE_HAL_COLLECTIVE_ELEMENT_TYPE_UINT_16] {
        let message = assert_code(record(rank.channel, all_reduce(IREE_HAL_COLLECTIVE_REDUCTION_SUM, sixteen), 4), StatusCode::Unimplemented);
        assert!(message.contains("16"), "{message}");
    }
    assert_code(record(core::ptr::null_mut(), all_reduce(IREE_HAL_COLLECTIVE_REDUCTION_SUM, Ty::F32.iree()), 4), StatusCode::InvalidArgument);
    // A channel of another implementation.
    unsafe extern "C" fn foreign_destroy(_: *mut iree_hal_channel_t) {}
    static FOREIGN_VTABLE: iree_hal_channel_vtable_t = iree_hal_channel_vtable_t { destroy: Some(foreign_destroy), split: None, query_rank_and_count: None };
    let mut foreign = iree_hal_channel_t {
        resource: iree_hal_resource_t { ref_count: core::sync::atomic::AtomicI32::new(1), vtable: (&FOREIGN_VTABLE as *const iree_hal_channel_vtable_t).cast() },
    };
    assert_code(record(&mut foreign as *mut iree_hal_channel_t, all_reduce(IREE_HAL_COLLECTIVE_REDUCTION_SUM, Ty::F32.iree()), 4), StatusCode::InvalidArgument);
    assert_code(record(rank.channel, iree_hal_collective_op_t::new(9, 0, Ty::F32.iree()), 4), StatusCode::InvalidArgument);
    assert_code(record(rank.channel, all_reduce(6, Ty::F32.iree()), 4), StatusCode::InvalidArgument);
    assert_code(record(rank.channel, all_reduce(IREE_HAL_COLLECTIVE_REDUCTION_SUM, 12), 4), StatusCode::InvalidArgument);
    assert_code(record(rank.channel, iree_hal_collective_op_t::new(IREE_HAL_COLLECTIVE_KIND_ALL_GATHER, IREE_HAL_COLLECTIVE_REDUCTION_SUM, Ty::F32.iree()), 4), StatusCode::InvalidArgument);
    assert_code(record(rank.channel, all_reduce(IREE_HAL_COLLECTIVE_REDUCTION_NONE, Ty::F32.iree()), 4), StatusCode::Unimplemented);
    // 17 f32 need 68 bytes.
    assert_code(record(rank.channel, all_reduce(IREE_HAL_COLLECTIVE_REDUCTION_SUM, Ty::F32.iree()), 17), StatusCode::OutOfRange);
    command_buffer.end();
    rank.issue(&command_buffer, &[]).unwrap();

    // Graph mode accepts collectives (they run between its graphs), and refuses what
    // stream mode refuses.
    drop(command_buffer);
    let graph = Rank::new("0", &[("command_buffer_mode", "graph")], &fresh_rccl_id("collectives-test", "graph"), 0, 1);
    let (send, recv) = (graph.buffer(&Ty::F32.encode(&[1.0, 2.0, 3.0, 4.0])), graph.buffer(&[0; 16]));
    let command_buffer = graph.command_buffer(IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
    command_buffer.begin();
    assert_ok(command_buffer.collective(graph.channel, all_reduce(IREE_HAL_COLLECTIVE_REDUCTION_SUM, Ty::F32.iree()), 0, direct(&send, 16), direct(&recv, 16), 4));
    assert_code(
        command_buffer.collective(graph.channel, all_reduce(IREE_HAL_COLLECTIVE_REDUCTION_SUM, IREE_HAL_COLLECTIVE_ELEMENT_TYPE_SINT_16), 0, direct(&send, 16), direct(&recv, 16), 4),
        StatusCode::Unimplemented,
    );
    assert_code(command_buffer.collective(core::ptr::null_mut(), all_reduce(IREE_HAL_COLLECTIVE_REDUCTION_SUM, Ty::F32.iree()), 0, direct(&send, 16), direct(&recv, 16), 4), StatusCode::InvalidArgument);
    command_buffer.end();
    graph.issue(&command_buffer, &[]).unwrap();
    assert_eq!(graph.read(&recv, 16), Ty::F32.encode(&[1.0, 2.0, 3.0, 4.0]));
}

//===----------------------------------------------------------------------===//
// A device of two GPUs: each queue is a rank
//===----------------------------------------------------------------------===//

/// One device over several GPUs (a queue each), driven from one thread.
struct MultiGpuDevice {
    driver: *mut iree_hal_driver_t,
    device: *mut iree_hal_device_t,
}

impl MultiGpuDevice {
    /// GPUs 0 to `gpus - 1` (2 or 4).
    fn new(mode: &'static str, gpus: usize) -> MultiGpuDevice {
        let driver = software_driver_with_search_paths(&[library_dir()], ALLOCATOR.as_iree());
        let path = if gpus == 4 { "0,1,2,3" } else { "0,1" };
        let device = device_at(driver, path, &[("command_buffer_mode", mode)], ALLOCATOR.as_iree());
        MultiGpuDevice { driver, device }
    }

    /// The channel of rank `rank` on queue `queue`: returned at once, its communicator made
    /// on a thread of its own while the other ranks are created.
    fn channel(&self, queue: u32, id: &[u8], rank: i32, count: i32) -> Result<*mut iree_hal_channel_t, (StatusCode, String)> {
        create_channel_on(self.device, 1 << queue, id, rank, count)
    }

    fn semaphore(&self) -> *mut iree_hal_semaphore_t {
        semaphore_on(self.device)
    }

    fn execute(&self, queue: u32, command_buffer: &CommandBuffer, semaphore: *mut iree_hal_semaphore_t) {
        execute_on(self.device, 1 << queue, command_buffer, semaphore)
    }

    fn wait(&self, semaphore: *mut iree_hal_semaphore_t) -> Option<(StatusCode, String)> {
        wait_on(self.device, semaphore)
    }
}

fn semaphore_on(device: *mut iree_hal_device_t) -> *mut iree_hal_semaphore_t {
    let mut semaphore = core::ptr::null_mut();
    assert_ok(unsafe { (vtable_of(device).create_semaphore.unwrap())(device, 0, 0, &mut semaphore) });
    semaphore
}

/// `queue_execute` of `command_buffer` on the queues of `affinity`, signalling `semaphore` to 1.
fn execute_on(device: *mut iree_hal_device_t, affinity: iree_hal_queue_affinity_t, command_buffer: &CommandBuffer, semaphore: *mut iree_hal_semaphore_t) {
    let (mut semaphores, mut values) = ([semaphore], [1u64]);
    let signals = iree_hal_semaphore_list_t { count: 1, semaphores: semaphores.as_mut_ptr(), payload_values: values.as_mut_ptr() };
    let waits = iree_hal_semaphore_list_t { count: 0, semaphores: core::ptr::null_mut(), payload_values: core::ptr::null_mut() };
    let table = iree_hal_buffer_binding_table_t { count: 0, bindings: core::ptr::null() };
    assert_ok(unsafe { (vtable_of(device).queue_execute.unwrap())(device, affinity, waits, signals, command_buffer.0, table) });
}

/// Waits (at most a minute) for `semaphore` to reach 1.
fn wait_on(device: *mut iree_hal_device_t, semaphore: *mut iree_hal_semaphore_t) -> Option<(StatusCode, String)> {
    let (mut semaphores, mut values) = ([semaphore], [1u64]);
    let list = iree_hal_semaphore_list_t { count: 1, semaphores: semaphores.as_mut_ptr(), payload_values: values.as_mut_ptr() };
    let timeout = iree_timeout_t { type_: IREE_TIMEOUT_RELATIVE, nanos: 60_000_000_000 };
    take_status(unsafe { (vtable_of(device).wait_semaphores.unwrap())(device, IREE_HAL_WAIT_MODE_ALL, list, timeout) })
}

impl Drop for MultiGpuDevice {
    fn drop(&mut self) {
        unsafe { iree_hal_hip_rs::hal_object::resource::release(self.device) };
        release_driver(self.driver);
    }
}

fn query_rank_and_count(channel: *mut iree_hal_channel_t) -> (i32, i32) {
    let vtable = unsafe { &*((*channel).resource.vtable as *const iree_hal_channel_vtable_t) };
    let (mut rank, mut count) = (-2, -2);
    unsafe { (vtable.query_rank_and_count.unwrap())(channel, &mut rank, &mut count) };
    (rank, count)
}

fn split(channel: *mut iree_hal_channel_t, color: i32, key: i32) -> *mut iree_hal_channel_t {
    let vtable = unsafe { &*((*channel).resource.vtable as *const iree_hal_channel_vtable_t) };
    let mut split = core::ptr::null_mut();
    assert_ok(unsafe { (vtable.split.unwrap())(channel, color, key, 0, &mut split) });
    split
}

/// One thread creates a channel per queue of a two-GPU device (each blocks nothing: the
/// communicators are made while the other ranks are created), records a command buffer per
/// queue (all-reduce, all-gather, a send/receive ring), submits them all and checks every
/// result; then splits the channels from the same thread (reversed keys, and with four
/// queues two colors) and runs an all-gather over the split channels, whose ranks come out
/// reversed. Both command buffer modes.
#[test]
fn each_queue_of_a_two_gpu_device_is_a_rank() {
    let _gpus = exclusive_gpus();
    for mode in MODES {
        queues_are_ranks(mode, 2);
    }
}

fn queues_are_ranks(mode: &'static str, gpus: usize) {
    let device = MultiGpuDevice::new(mode, gpus);
    let n = gpus as i32;
    let id = fresh_rccl_id("collectives-test", &format!("multi-gpu-device-{mode}-{gpus}"));
    let channels: Vec<_> = (0..gpus).map(|queue| device.channel(queue as u32, &id, queue as i32, n).unwrap()).collect();
    let ranks: Vec<_> = channels.iter().map(|c| query_rank_and_count(*c)).collect();
    assert_eq!(ranks, (0..n).map(|rank| (rank, n)).collect::<Vec<_>>());
    let c = 6usize;
    let reduce_inputs = inputs(Ty::F32, 1, n, c);
    let gather_inputs = inputs(Ty::I32, 2, n, c);
    let ring_inputs = inputs(Ty::U8, 3, n, c);
    let mut kept = Vec::new();
    let mut outputs = Vec::new();
    let semaphores: Vec<_> = (0..gpus).map(|_| device.semaphore()).collect();
    for queue in 0..gpus {
        let channel = channels[queue];
        let command_buffer = command_buffer_on(device.device, IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 1 << queue, 0);
        command_buffer.begin();
        let [reduce_send, gather_send, ring_send] = [
            buffer_on(device.device, &Ty::F32.encode(&reduce_inputs[queue])),
            buffer_on(device.device, &Ty::I32.encode(&gather_inputs[queue])),
            buffer_on(device.device, &Ty::U8.encode(&ring_inputs[queue])),
        ];
        let [reduce_recv, gather_recv, ring_recv] = [
            buffer_on(device.device, &vec![SENTINEL; 4 * c]),
            buffer_on(device.device, &vec![SENTINEL; 4 * c * gpus]),
            buffer_on(device.device, &vec![SENTINEL; c]),
        ];
        let all_reduce = op(IREE_HAL_COLLECTIVE_KIND_ALL_REDUCE, IREE_HAL_COLLECTIVE_REDUCTION_SUM, Ty::F32);
        assert_ok(command_buffer.collective(channel, all_reduce, 0, direct(&reduce_send, 4 * c as u64), direct(&reduce_recv, 4 * c as u64), c as u64));
        let all_gather = op(IREE_HAL_COLLECTIVE_KIND_ALL_GATHER, 0, Ty::I32);
        assert_ok(command_buffer.collective(channel, all_gather, 0, direct(&gather_send, 4 * c as u64), direct(&gather_recv, (4 * c * gpus) as u64), c as u64));
        // A ring: send to the next queue's rank, receive from the previous one.
        let (next, previous) = ((queue + 1) % gpus, (queue + gpus - 1) % gpus);
        assert_ok(command_buffer.collective(channel, op(IREE_HAL_COLLECTIVE_KIND_SEND, 0, Ty::U8), next as u32, direct(&ring_send, c as u64), none_ref(), c as u64));
        assert_ok(command_buffer.collective(channel, op(IREE_HAL_COLLECTIVE_KIND_RECV, 0, Ty::U8), previous as u32, none_ref(), direct(&ring_recv, c as u64), c as u64));
        command_buffer.end();
        device.execute(queue as u32, &command_buffer, semaphores[queue]);
        outputs.push([reduce_recv, gather_recv, ring_recv]);
        kept.push((command_buffer, [reduce_send, gather_send, ring_send]));
    }
    for semaphore in semaphores {
        assert_eq!(device.wait(semaphore), None, "{mode}");
        unsafe { iree_hal_hip_rs::hal_object::resource::release(semaphore) };
    }
    let sum: Vec<f64> = (0..c).map(|i| Ty::F32.reduce(IREE_HAL_COLLECTIVE_REDUCTION_SUM, &reduce_inputs.iter().map(|x| x[i]).collect::<Vec<_>>())).collect();
    for (queue, [reduce_recv, gather_recv, ring_recv]) in outputs.iter().enumerate() {
        assert_eq!(read_on(device.device, reduce_recv, 4 * c), Ty::F32.encode(&sum), "{mode}: queue {queue} all_reduce");
        assert_eq!(read_on(device.device, gather_recv, 4 * c * gpus), Ty::I32.encode(&gather_inputs.concat()), "{mode}: queue {queue} all_gather");
        assert_eq!(read_on(device.device, ring_recv, c), Ty::U8.encode(&ring_inputs[(queue + gpus - 1) % gpus]), "{mode}: queue {queue} recv");
    }
    drop(kept);

    // Split from the same thread: two colors (even and odd queues) with four GPUs, one with
    // two; keys reverse the ranks within each color.
    let colors = if gpus == 4 { 2 } else { 1 };
    let splits: Vec<_> = (0..gpus).map(|queue| split(channels[queue], (queue % colors) as i32, -(queue as i32))).collect();
    let members = |queue: usize| -> Vec<usize> { (0..gpus).filter(|q| q % colors == queue % colors).rev().collect() };
    for queue in 0..gpus {
        let mine = members(queue);
        let expected = (mine.iter().position(|q| *q == queue).unwrap() as i32, mine.len() as i32);
        assert_eq!(query_rank_and_count(splits[queue]), expected, "{mode}: queue {queue} split");
    }
    let semaphores: Vec<_> = (0..gpus).map(|_| device.semaphore()).collect();
    let mut gathered = Vec::new();
    for queue in 0..gpus {
        let size = members(queue).len();
        let send = buffer_on(device.device, &Ty::I32.encode(&gather_inputs[queue]));
        let recv = buffer_on(device.device, &vec![SENTINEL; 4 * c * size]);
        let command_buffer = command_buffer_on(device.device, IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 1 << queue, 0);
        command_buffer.begin();
        let all_gather = op(IREE_HAL_COLLECTIVE_KIND_ALL_GATHER, 0, Ty::I32);
        assert_ok(command_buffer.collective(splits[queue], all_gather, 0, direct(&send, 4 * c as u64), direct(&recv, (4 * c * size) as u64), c as u64));
        command_buffer.end();
        device.execute(queue as u32, &command_buffer, semaphores[queue]);
        gathered.push((recv, send, command_buffer));
    }
    for semaphore in semaphores {
        assert_eq!(device.wait(semaphore), None, "{mode}");
        unsafe { iree_hal_hip_rs::hal_object::resource::release(semaphore) };
    }
    for (queue, (recv, _, _)) in gathered.iter().enumerate() {
        let expected: Vec<f64> = members(queue).into_iter().flat_map(|q| gather_inputs[q].clone()).collect();
        assert_eq!(read_on(device.device, recv, 4 * c * members(queue).len()), Ty::I32.encode(&expected), "{mode}: queue {queue} split all_gather");
    }
    drop(gathered);
    for channel in splits.into_iter().chain(channels) {
        unsafe { iree_hal_hip_rs::hal_object::resource::release(channel) };
    }
}

/// Four GPUs (a child process, the software device made with four): four ranks as threads,
/// each on a device of its own, run every kind, type and reduction in both modes; and one
/// device over the four GPUs has a rank per queue.
#[test]
fn four_ranks() {
    let _gpus = exclusive_gpus();
    run_in_child("four_ranks_child", &[("SOFTWARE_HIP_DEVICE_COUNT", "4".into())]);
}

#[test]
#[ignore = "run by four_ranks in a child process with four GPUs"]
fn four_ranks_child() {
    for mode in MODES {
        ranks_run_every_kind_type_and_reduction_in(mode, 4);
        queues_are_ranks(mode, 4);
    }
}

/// A communicator that cannot be made (the two queues' ranks disagree on the count) is not
/// the channel's creation's failure on a two-GPU device (it is made later, on a thread of
/// its own), but every collective on it fails its submission's semaphores with RCCL's error,
/// naming the call; recording still checks what it can.
#[test]
fn a_communicator_that_cannot_be_made_fails_the_collectives_on_it() {
    let _gpus = exclusive_gpus();
    let device = MultiGpuDevice::new("stream", 2);
    let id = fresh_rccl_id("collectives-test", "two-gpu-device-mismatch");
    let channels = [device.channel(0, &id, 0, 2).unwrap(), device.channel(1, &id, 1, 3).unwrap()];
    assert_eq!(query_rank_and_count(channels[1]), (1, 3));
    // Two queues in one channel are still refused at once.
    let (code, message) = create_channel_on(device.device, 0b11, &fresh_rccl_id("collectives-test", "two-queues"), 0, 2).unwrap_err();
    assert_eq!(code, StatusCode::InvalidArgument, "{message}");
    for queue in 0..2usize {
        let send = buffer_on(device.device, &[1; 16]);
        let recv = buffer_on(device.device, &[0; 16]);
        let command_buffer = command_buffer_on(device.device, IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 1 << queue, 0);
        command_buffer.begin();
        assert_ok(command_buffer.collective(channels[queue], op(IREE_HAL_COLLECTIVE_KIND_ALL_REDUCE, IREE_HAL_COLLECTIVE_REDUCTION_SUM, Ty::F32), 0, direct(&send, 16), direct(&recv, 16), 4));
        command_buffer.end();
        let semaphore = device.semaphore();
        device.execute(queue as u32, &command_buffer, semaphore);
        let (code, message) = device.wait(semaphore).expect("the collective fails");
        // The semaphore failed (ABORTED) with the root cause: RCCL's refusal, in its words.
        assert_eq!(code, StatusCode::Aborted, "{message}");
        for part in ["INVALID_ARGUMENT", "ncclCommInitRank failed", "ncclInvalidArgument", "nranks 3", "creating a collective channel", "queue_execute"] {
            assert!(message.contains(part), "{part:?} in {message}");
        }
        unsafe { iree_hal_hip_rs::hal_object::resource::release(semaphore) };
    }
    for channel in channels {
        unsafe { iree_hal_hip_rs::hal_object::resource::release(channel) };
    }
}

//===----------------------------------------------------------------------===//
// Ranks as processes
//===----------------------------------------------------------------------===//

/// Starts `count` processes of this test binary, each running the ignored test `child` as
/// rank RANK of COUNT (environment) on its own GPU of a software device of `count` GPUs,
/// over communicator id `id` (hex in ID); waits for all of them (two minutes at most) and
/// fails with every failed rank's output.
fn on_rank_processes(child: &str, count: i32, id: &[u8], env: &[(&str, &str)]) {
    let exe = std::env::current_exe().unwrap();
    let hex: String = id.iter().map(|byte| format!("{byte:02x}")).collect();
    let mut children: Vec<_> = (0..count)
        .map(|rank| {
            std::process::Command::new(&exe)
                .args(["--ignored", "--exact", child, "--nocapture", "--test-threads=1"])
                .env("COLLECTIVES_TEST_RANK", rank.to_string())
                .env("COLLECTIVES_TEST_COUNT", count.to_string())
                .env("COLLECTIVES_TEST_ID", &hex)
                .env("SOFTWARE_HIP_DEVICE_COUNT", count.max(2).to_string())
                .envs(env.iter().copied())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let mut failures = Vec::new();
    for (rank, child) in children.iter_mut().enumerate() {
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break Some(status);
            }
            if std::time::Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        };
        let mut text = String::new();
        use std::io::Read;
        child.stdout.take().unwrap().read_to_string(&mut text).unwrap();
        child.stderr.take().unwrap().read_to_string(&mut text).unwrap();
        match status {
            Some(status) if status.success() && (text.contains("1 passed") || text.contains(RANK_PROCESS_DONE)) => {}
            Some(status) => failures.push(format!("rank {rank} of {count} ({status}):\n{text}")),
            None => failures.push(format!("rank {rank} of {count} did not finish within two minutes:\n{text}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// What a rank process that leaves by `exit` prints first, for `on_rank_processes`.
const RANK_PROCESS_DONE: &str = "rank process done";

/// This child's rank, count and communicator id (see `on_rank_processes`).
fn rank_process_role() -> (i32, i32, Vec<u8>) {
    let var = |name: &str| std::env::var(name).unwrap_or_else(|_| panic!("{name} is set by on_rank_processes"));
    let hex = var("COLLECTIVES_TEST_ID");
    let id = (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
    (var("COLLECTIVES_TEST_RANK").parse().unwrap(), var("COLLECTIVES_TEST_COUNT").parse().unwrap(), id)
}

/// Ranks as processes (one per GPU, as under `mpirun`): 1, 2 and 4 processes run every
/// kind, several element types and every reduction in both command buffer modes, and split
/// their channel; the data moves between processes through the software device's RCCL.
#[test]
fn ranks_as_processes_run_every_kind() {
    let _gpus = exclusive_gpus();
    for count in [1, 2, 4] {
        on_rank_processes("rank_process_child", count, &fresh_rccl_id("collectives-test", &format!("processes-{count}")), &[]);
    }
}

#[test]
#[ignore = "run by ranks_as_processes_run_every_kind, one process per rank"]
fn rank_process_child() {
    let (me, count, id) = rank_process_role();
    for (index, mode) in MODES.into_iter().enumerate() {
        // A communicator id serves one communicator: each mode's differs in its last byte.
        let mut id = id.clone();
        id[127] = b'a' + index as u8;
        let rank = Rank::on_own_gpu_in(mode, &id, me, count);
        let types: &[Ty] = if mode == "stream" { &TYPES } else { &[Ty::F32, Ty::Bf16, Ty::I8, Ty::U64] };
        for ty in types {
            run_every_kind(&rank, *ty);
        }
        // Split: reversed ranks, even and odd ranks apart when there are four.
        let colors = if count == 4 { 2 } else { 1 };
        let split = split(rank.channel, me % colors, -me);
        let members: Vec<i32> = (0..count).filter(|r| r % colors == me % colors).rev().collect();
        let expected = (members.iter().position(|r| *r == me).unwrap() as i32, members.len() as i32);
        assert_eq!(query_rank_and_count(split), expected, "{mode}: split");
        let mine = inputs(Ty::I32, 9, count, 3);
        let send = rank.buffer(&Ty::I32.encode(&mine[me as usize]));
        let recv = rank.buffer(&vec![SENTINEL; 12 * members.len()]);
        let command_buffer = rank.command_buffer(IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
        command_buffer.begin();
        assert_ok(command_buffer.collective(split, op(IREE_HAL_COLLECTIVE_KIND_ALL_GATHER, 0, Ty::I32), 0, direct(&send, 12), direct(&recv, 12 * members.len() as u64), 3));
        command_buffer.end();
        rank.issue(&command_buffer, &[]).unwrap();
        let gathered: Vec<f64> = members.iter().flat_map(|r| mine[*r as usize].clone()).collect();
        assert_eq!(rank.read(&recv, 12 * members.len()), Ty::I32.encode(&gathered), "{mode}: split all_gather");
        drop(command_buffer);
        unsafe { iree_hal_hip_rs::hal_object::resource::release(split) };
    }
}

/// A rank process that exits before its first collective: the others fail within RCCL's
/// timeout with an error naming it (never a hang); ranks whose counts disagree fail at once.
#[test]
fn a_rank_process_that_exits_fails_the_others() {
    let _gpus = exclusive_gpus();
    let id = fresh_rccl_id("collectives-test", "processes-exit");
    on_rank_processes("rank_process_exits_child", 2, &id, &[("SOFTWARE_HIP_RCCL_TIMEOUT_MS", "3000")]);
    let id = fresh_rccl_id("collectives-test", "processes-exit-queue");
    on_rank_processes("rank_process_exits_child", 2, &id, &[("SOFTWARE_HIP_RCCL_TIMEOUT_MS", "3000"), ("COLLECTIVES_TEST_THROUGH_QUEUE", "1")]);
}

#[test]
#[ignore = "run by a_rank_process_that_exits_fails_the_others, one process per rank"]
fn rank_process_exits_child() {
    let (me, count, id) = rank_process_role();
    let rank = Rank::on_own_gpu(&id, me, count);
    if me == 1 {
        // Leaves without a word: no collective, no communicator teardown.
        println!("{RANK_PROCESS_DONE}");
        std::process::exit(0);
    }
    let send = rank.buffer(&[1; 16]);
    let recv = rank.buffer(&[0; 16]);
    let command_buffer = rank.command_buffer(IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
    command_buffer.begin();
    assert_ok(command_buffer.collective(rank.channel, op(IREE_HAL_COLLECTIVE_KIND_ALL_REDUCE, IREE_HAL_COLLECTIVE_REDUCTION_SUM, Ty::F32), 0, direct(&send, 16), direct(&recv, 16), 4));
    command_buffer.end();
    let started = std::time::Instant::now();
    if std::env::var("COLLECTIVES_TEST_THROUGH_QUEUE").is_ok() {
        // Through the device's queue: the submission's semaphore fails with RCCL's reason,
        // it is never signalled as if the collective had run.
        let semaphore = semaphore_on(rank.device);
        execute_on(rank.device, IREE_HAL_QUEUE_AFFINITY_ANY, &command_buffer, semaphore);
        let (code, message) = wait_on(rank.device, semaphore).expect("the collective's submission fails");
        assert!(started.elapsed() < std::time::Duration::from_secs(20), "failed within the timeout: {:?}: {message}", started.elapsed());
        assert_eq!(code, StatusCode::Aborted, "{message}");
        for part in ["ncclRemoteError", "rank(s) [1]", "exited", "ncclCommGetAsyncError", "queue_execute", "on GPU 0"] {
            assert!(message.contains(part), "{part:?} in {message}");
        }
        println!("rank 0's submission failed after {:?}: {message}", started.elapsed());
        // The device is still destroyed cleanly, its failure notwithstanding.
        unsafe { iree_hal_hip_rs::hal_object::resource::release(semaphore) };
        drop(command_buffer);
        drop((send, recv));
        drop(rank);
        assert_eq!(iree_hal_hip_rs::hip::error::release_failures(), 0, "a release failed (see stderr)");
        println!("{RANK_PROCESS_DONE}");
        std::process::exit(0);
    }
    // The collective fails on the stream: synchronizing it reports the failure.
    let (_, message) = rank.issue(&command_buffer, &[]).expect_err("a collective with a departed rank fails");
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "failed within the timeout: {:?}: {message}", started.elapsed());
    // RCCL says why: the communicator's asynchronous error and its last error text.
    let channel = unsafe { iree_hal_hip_rs::channel::HipChannel::from_raw(rank.channel) }.unwrap();
    let mut async_error = 0;
    iree_hal_hip_rs::rccl_call!(channel.rccl(), ncclCommGetAsyncError(channel.comm().unwrap(), &mut async_error)).unwrap();
    assert_eq!(async_error, 6, "ncclRemoteError");
    println!("rank 0 failed after {:?}: {message}", started.elapsed());
    // The device has a sticky error now: nothing of it is released cleanly.
    println!("{RANK_PROCESS_DONE}");
    std::process::exit(0);
}
