//! The RCCL (NCCL API) subset: communicators, collectives, send/recv, split, errors.
#[macro_use]
mod common;
use amdhip64::rccl::types::*;
use common::*;
use std::ffi::CStr;

macro_rules! nccl_ok {
    ($call:expr) => {{
        // SAFETY (tests): arguments are valid per the NCCL contract.
        let result = unsafe { $call };
        assert_eq!(result, ncclSuccess, "{} failed: {}", stringify!($call), result);
    }};
}

/// Communicators for devices 0 and 1, created in this thread, with a stream on each device.
fn two_ranks() -> ([ncclComm_t; 2], [hipStream_t; 2]) {
    init();
    let mut comms = [std::ptr::null_mut(); 2];
    nccl_ok!(ncclCommInitAll(comms.as_mut_ptr(), 2, [0, 1].as_ptr()));
    let streams = [0, 1].map(|device| {
        hip_ok!(hipSetDevice(device));
        create_stream(hipStreamNonBlocking)
    });
    hip_ok!(hipSetDevice(0));
    (comms, streams)
}

fn finish(comms: [ncclComm_t; 2], streams: [hipStream_t; 2]) {
    for stream in streams {
        hip_ok!(hipStreamSynchronize(stream));
        hip_ok!(hipStreamDestroy(stream));
    }
    for comm in comms {
        let mut error = 99;
        nccl_ok!(ncclCommGetAsyncError(comm, &mut error));
        assert_eq!(error, ncclSuccess);
        nccl_ok!(ncclCommDestroy(comm));
    }
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn as_f32(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}

#[test]
fn all_reduce_broadcast_gather_and_scatter_across_two_devices() {
    let (comms, streams) = two_ranks();
    let inputs = [f32_bytes(&[1.0, 2.0, 3.0, 4.0]), f32_bytes(&[10.0, 20.0, 30.0, 40.0])];
    let mut outputs = [vec![0u8; 16], vec![0u8; 16]];
    nccl_ok!(ncclGroupStart());
    for rank in 0..2 {
        nccl_ok!(ncclAllReduce(
            inputs[rank].as_ptr().cast(), outputs[rank].as_mut_ptr().cast(), 4, ncclFloat32, ncclSum, comms[rank], streams[rank]
        ));
    }
    nccl_ok!(ncclGroupEnd());
    for stream in streams {
        hip_ok!(hipStreamSynchronize(stream));
    }
    for output in &outputs {
        assert_eq!(as_f32(output), vec![11.0, 22.0, 33.0, 44.0]);
    }

    // Without a group too: each call only queues work, so one thread can drive both ranks.
    let mut gathered = [vec![0u8; 32], vec![0u8; 32]];
    let mut scattered = [vec![0u8; 8], vec![0u8; 8]];
    let mut broadcast = [f32_bytes(&[7.0, 8.0, 9.0, 6.0]), vec![0u8; 16]];
    for rank in 0..2 {
        nccl_ok!(ncclAllGather(inputs[rank].as_ptr().cast(), gathered[rank].as_mut_ptr().cast(), 4, ncclFloat32, comms[rank], streams[rank]));
        nccl_ok!(ncclReduceScatter(inputs[rank].as_ptr().cast(), scattered[rank].as_mut_ptr().cast(), 2, ncclFloat32, ncclMax, comms[rank], streams[rank]));
        nccl_ok!(ncclBcast(broadcast[rank].as_mut_ptr().cast(), 4, ncclFloat32, 0, comms[rank], streams[rank]));
    }
    for stream in streams {
        hip_ok!(hipStreamSynchronize(stream));
    }
    for rank in 0..2 {
        assert_eq!(as_f32(&gathered[rank]), vec![1.0, 2.0, 3.0, 4.0, 10.0, 20.0, 30.0, 40.0]);
        assert_eq!(as_f32(&broadcast[rank]), vec![7.0, 8.0, 9.0, 6.0]);
    }
    assert_eq!(as_f32(&scattered[0]), vec![10.0, 20.0]);
    assert_eq!(as_f32(&scattered[1]), vec![30.0, 40.0]);
    finish(comms, streams);
}

#[test]
fn reduce_average_and_pre_multiplied_sums() {
    let (comms, streams) = two_ranks();
    let ints = [[5i64, -3], [7, 9]];
    let mut root_output = [0i64; 2];
    let mut other_output = [123i64; 2];
    let halves: [[u16; 1]; 2] = [[0x3e00], [0x4000]]; // 1.5 and 2.0 in float16
    let mut averaged = [[0u16; 1]; 2];
    let doubles = [[2.0f64], [4.0f64]];
    let mut scaled = [[0f64], [0f64]];
    let factors = [0.5f64, 0.25f64];
    let mut operators = [0; 2];
    for rank in 0..2 {
        nccl_ok!(ncclRedOpCreatePreMulSum(
            &mut operators[rank], (&factors[rank] as *const f64).cast_mut().cast(), ncclFloat64, ncclScalarHostImmediate, comms[rank]
        ));
        assert!(operators[rank] >= 5);
    }
    nccl_ok!(ncclGroupStart());
    for rank in 0..2 {
        let output = if rank == 1 { root_output.as_mut_ptr() } else { other_output.as_mut_ptr() };
        nccl_ok!(ncclReduce(ints[rank].as_ptr().cast(), output.cast(), 2, ncclInt64, ncclSum, 1, comms[rank], streams[rank]));
        nccl_ok!(ncclAllReduce(halves[rank].as_ptr().cast(), averaged[rank].as_mut_ptr().cast(), 1, ncclFloat16, ncclAvg, comms[rank], streams[rank]));
        nccl_ok!(ncclAllReduce(doubles[rank].as_ptr().cast(), scaled[rank].as_mut_ptr().cast(), 1, ncclFloat64, operators[rank], comms[rank], streams[rank]));
    }
    nccl_ok!(ncclGroupEnd());
    for stream in streams {
        hip_ok!(hipStreamSynchronize(stream));
    }
    assert_eq!(root_output, [12, 6]);
    assert_eq!(other_output, [123, 123], "only the root receives a reduce");
    assert_eq!(averaged, [[0x3f00], [0x3f00]], "(1.5 + 2.0) / 2 = 1.75");
    assert_eq!(scaled, [[2.0], [2.0]], "2*0.5 + 4*0.25");
    for rank in 0..2 {
        nccl_ok!(ncclRedOpDestroy(operators[rank], comms[rank]));
    }
    assert_eq!(unsafe { ncclRedOpDestroy(operators[0], comms[0]) }, ncclInvalidArgument);
    finish(comms, streams);
}

#[test]
fn ranks_on_threads_join_by_unique_id_and_exchange_messages() {
    init();
    let mut id = ncclUniqueId { internal: [0; 128] };
    nccl_ok!(ncclGetUniqueId(&mut id));
    let results: Vec<(i32, i32, i32, Vec<u32>)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..2)
            .map(|rank: i32| {
                scope.spawn(move || {
                    hip_ok!(hipSetDevice(rank));
                    let mut comm = std::ptr::null_mut();
                    nccl_ok!(ncclCommInitRank(&mut comm, 2, id, rank));
                    let (mut count, mut device, mut user_rank) = (0, 0, 0);
                    nccl_ok!(ncclCommCount(comm, &mut count));
                    nccl_ok!(ncclCommCuDevice(comm, &mut device));
                    nccl_ok!(ncclCommUserRank(comm, &mut user_rank));
                    let stream = create_stream(hipStreamDefault);
                    let message = [rank as u32 * 100 + 1, rank as u32 * 100 + 2];
                    let mut received = [0u32; 2];
                    let peer = 1 - rank;
                    // Both ranks receive first inside the group: the group still completes.
                    nccl_ok!(ncclGroupStart());
                    nccl_ok!(ncclRecv(received.as_mut_ptr().cast(), 2, ncclUint32, peer, comm, stream));
                    nccl_ok!(ncclSend(message.as_ptr().cast(), 2, ncclUint32, peer, comm, stream));
                    nccl_ok!(ncclGroupEnd());
                    hip_ok!(hipStreamSynchronize(stream));
                    hip_ok!(hipStreamDestroy(stream));
                    nccl_ok!(ncclCommFinalize(comm));
                    nccl_ok!(ncclCommDestroy(comm));
                    (count, device, user_rank, received.to_vec())
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    assert_eq!(results[0], (2, 0, 0, vec![101, 102]));
    assert_eq!(results[1], (2, 1, 1, vec![1, 2]));
}

#[test]
fn split_groups_ranks_by_color_and_orders_by_key() {
    init();
    let mut comms = [std::ptr::null_mut(); 2];
    nccl_ok!(ncclCommInitAll(comms.as_mut_ptr(), 2, std::ptr::null()));
    // Split is collective and blocking: each rank calls from its own thread.
    let split: Vec<(usize, usize)> = std::thread::scope(|scope| {
        let handles: Vec<_> = comms
            .iter()
            .enumerate()
            .map(|(rank, comm)| {
                let comm = *comm as usize;
                scope.spawn(move || {
                    let mut new_comm = std::ptr::null_mut();
                    let key = if rank == 0 { 5 } else { 1 };
                    nccl_ok!(ncclCommSplit(comm as ncclComm_t, 3, key, &mut new_comm, std::ptr::null_mut()));
                    (new_comm as usize, rank)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (new_comm, old_rank) in split {
        let (mut count, mut rank) = (0, 0);
        nccl_ok!(ncclCommCount(new_comm as ncclComm_t, &mut count));
        nccl_ok!(ncclCommUserRank(new_comm as ncclComm_t, &mut rank));
        assert_eq!(count, 2);
        assert_eq!(rank as usize, 1 - old_rank, "the lower key takes rank 0");
        nccl_ok!(ncclCommDestroy(new_comm as ncclComm_t));
    }
    let none: Vec<usize> = std::thread::scope(|scope| {
        let handles: Vec<_> = comms
            .iter()
            .map(|comm| {
                let comm = *comm as usize;
                scope.spawn(move || {
                    let mut new_comm = 1 as ncclComm_t;
                    nccl_ok!(ncclCommSplit(comm as ncclComm_t, NCCL_SPLIT_NOCOLOR, 0, &mut new_comm, std::ptr::null_mut()));
                    new_comm as usize
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(none, vec![0, 0]);
    for comm in comms {
        nccl_ok!(ncclCommDestroy(comm));
    }
}

#[test]
fn errors_and_strings() {
    init();
    let mut version = 0;
    nccl_ok!(ncclGetVersion(&mut version));
    assert_eq!(version, 21803);
    let message = unsafe { CStr::from_ptr(ncclGetErrorString(ncclInvalidUsage)) }.to_str().unwrap();
    assert!(message.starts_with("invalid usage"));
    let bogus = 0x1234 as ncclComm_t;
    let mut count = 0;
    assert_eq!(unsafe { ncclCommCount(bogus, &mut count) }, ncclInvalidArgument);
    let mut comms = [std::ptr::null_mut(); 2];
    assert_eq!(unsafe { ncclCommInitAll(comms.as_mut_ptr(), 2, [0, 7].as_ptr()) }, ncclInvalidArgument);
    nccl_ok!(ncclCommInitAll(comms.as_mut_ptr(), 2, std::ptr::null()));
    let buffer = [0u8; 16];
    assert_eq!(
        unsafe { ncclAllReduce(buffer.as_ptr().cast(), buffer.as_ptr() as *mut _, 4, 77, ncclSum, comms[0], std::ptr::null_mut()) },
        ncclInvalidArgument
    );
    assert_eq!(
        unsafe { ncclBroadcast(buffer.as_ptr().cast(), buffer.as_ptr() as *mut _, 4, ncclInt32, 5, comms[0], std::ptr::null_mut()) },
        ncclInvalidArgument
    );
    assert_eq!(unsafe { ncclGroupEnd() }, ncclInvalidUsage);
    for comm in comms {
        nccl_ok!(ncclCommDestroy(comm));
    }
}
