//! RCCL (NCCL API) entry points; see `crate::rccl`. Results are `ncclResult_t` values.
//! Fault injection applies (`SOFTWARE_HIP_FAIL=ncclAllReduce:2:5` returns ncclInvalidUsage).

use super::{read_in, write_out};
use crate::context;
use crate::rccl::types::*;
use crate::rccl::{self, CollectiveKind, NcclResult, Operator, Part, ScalarSource};
use crate::stream;
use crate::types::hipStream_t;
use core::ffi::{c_char, c_int, c_void};
use std::ffi::CStr;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// Common rules of every NCCL entry point: fault injection, no panics across the boundary.
fn nccl_guard(name: &'static str, body: impl FnOnce() -> NcclResult<()>) -> ncclResult_t {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        crate::fault::check(name)?;
        body()
    }));
    match outcome {
        Ok(Ok(())) => ncclSuccess,
        Ok(Err(code)) => code,
        Err(_) => ncclInternalError,
    }
}

macro_rules! nccl_export {
    ($(#[$meta:meta])* fn $name:ident($($arg:ident : $ty:ty),* $(,)?) $body:block) => {
        $(#[$meta])*
        #[no_mangle]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> ncclResult_t {
            nccl_guard(stringify!($name), move || -> NcclResult<()> {
                #[allow(unused_unsafe)]
                // SAFETY: the caller upholds the NCCL contract for this function's pointers;
                // NULL is checked before use.
                unsafe { $body }
            })
        }
    };
}

fn comm(handle: ncclComm_t) -> NcclResult<Arc<rccl::Comm>> {
    rccl::comms().get(handle as usize)
}

fn stream_of(handle: hipStream_t) -> NcclResult<Arc<stream::Stream>> {
    stream::resolve(handle as usize).map_err(|_| ncclInvalidArgument)
}

/// HIP wrappers report HIP errors; NCCL callers expect NCCL codes.
fn out<T>(pointer: *mut T, value: T) -> NcclResult<()> {
    // SAFETY: forwarded caller guarantee; NULL rejected by write_out.
    unsafe { write_out(pointer, value) }.map_err(|_| ncclInvalidArgument)
}

// Mirrors the C collectives' argument lists.
#[allow(clippy::too_many_arguments)]
fn collective(
    kind: CollectiveKind,
    send: *const c_void,
    recv: *mut c_void,
    count: usize,
    data_type: ncclDataType_t,
    op: Option<ncclRedOp_t>,
    root: c_int,
    handle: ncclComm_t,
    stream_handle: hipStream_t,
) -> NcclResult<()> {
    let comm = comm(handle)?;
    let operator = match op {
        Some(op) => comm.operator(op)?,
        None => Operator::Builtin(rccl::reduce::Reduction::Sum),
    };
    let root = usize::try_from(root).map_err(|_| ncclInvalidArgument)?;
    let part = Part { kind, send: send as usize, recv: recv as usize, count, data_type, operator, root };
    comm.collective(stream_of(stream_handle)?, part)
}

nccl_export!(
    fn ncclGetVersion(version: *mut c_int) {
        out(version, NCCL_VERSION_CODE)
    }
);

nccl_export!(
    fn ncclGetUniqueId(id: *mut ncclUniqueId) {
        let bytes = rccl::new_unique_id();
        out(id, ncclUniqueId { internal: bytes.map(|b| b as c_char) })
    }
);

fn init_rank(out_comm: *mut ncclComm_t, ranks: c_int, id: ncclUniqueId, rank: c_int) -> NcclResult<()> {
    if out_comm.is_null() {
        return Err(ncclInvalidArgument);
    }
    let ranks = usize::try_from(ranks).map_err(|_| ncclInvalidArgument)?;
    let rank = usize::try_from(rank).map_err(|_| ncclInvalidArgument)?;
    let device = context::current_device_index();
    let comm = rccl::init_rank(&id.internal.map(|b| b as u8), ranks, rank, device)?;
    out(out_comm, rccl::comms().insert(comm) as ncclComm_t)
}

nccl_export!(
    fn ncclCommInitRank(out_comm: *mut ncclComm_t, ranks: c_int, id: ncclUniqueId, rank: c_int) {
        init_rank(out_comm, ranks, id, rank)
    }
);

nccl_export!(
    /// The configuration is accepted (blocking init is always used).
    fn ncclCommInitRankConfig(
        out_comm: *mut ncclComm_t,
        ranks: c_int,
        id: ncclUniqueId,
        rank: c_int,
        config: *mut ncclConfig_t,
    ) {
        if !config.is_null() {
            read_in(config).map_err(|_| ncclInvalidArgument)?;
        }
        init_rank(out_comm, ranks, id, rank)
    }
);

nccl_export!(
    fn ncclCommInitAll(out_comms: *mut ncclComm_t, count: c_int, device_list: *const c_int) {
        let count = usize::try_from(count).map_err(|_| ncclInvalidArgument)?;
        if out_comms.is_null() || count == 0 {
            return Err(ncclInvalidArgument);
        }
        let devices: Vec<usize> = if device_list.is_null() {
            (0..count).collect()
        } else {
            std::slice::from_raw_parts(device_list, count)
                .iter()
                .map(|d| usize::try_from(*d).map_err(|_| ncclInvalidArgument))
                .collect::<NcclResult<_>>()?
        };
        if devices.iter().any(|d| *d >= crate::runtime::device_count()) {
            return Err(ncclInvalidArgument);
        }
        for (index, comm) in rccl::init_all(&devices)?.into_iter().enumerate() {
            out(out_comms.add(index), rccl::comms().insert(comm) as ncclComm_t)?;
        }
        Ok(())
    }
);

nccl_export!(
    fn ncclCommSplit(handle: ncclComm_t, color: c_int, key: c_int, new_comm: *mut ncclComm_t, _config: *mut ncclConfig_t) {
        if new_comm.is_null() {
            return Err(ncclInvalidArgument);
        }
        let split = comm(handle)?.split(color, key)?;
        let value = split.map_or(std::ptr::null_mut(), |c| rccl::comms().insert(c) as ncclComm_t);
        out(new_comm, value)
    }
);

nccl_export!(
    fn ncclCommFinalize(handle: ncclComm_t) {
        comm(handle).map(drop)
    }
);

nccl_export!(
    fn ncclCommDestroy(handle: ncclComm_t) {
        rccl::comms().remove(handle as usize).map(drop)
    }
);

nccl_export!(
    fn ncclCommAbort(handle: ncclComm_t) {
        rccl::comms().remove(handle as usize)?.abort();
        Ok(())
    }
);

#[no_mangle]
pub extern "C" fn ncclGetErrorString(result: ncclResult_t) -> *const c_char {
    const MESSAGES: [&CStr; 9] = [
        c"no error",
        c"unhandled cuda error (run with NCCL_DEBUG=INFO for details)",
        c"unhandled system error (run with NCCL_DEBUG=INFO for details)",
        c"internal error - please report this issue to the NCCL developers",
        c"invalid argument (run with NCCL_DEBUG=WARN for details)",
        c"invalid usage (run with NCCL_DEBUG=WARN for details)",
        c"remote process exited or there was a network error",
        c"NCCL operation in progress",
        c"unknown result code",
    ];
    MESSAGES[(result as usize).min(MESSAGES.len() - 1)].as_ptr()
}

/// This thread's last failure in words (e.g. which rank never came); when the thread has
/// none yet, the first asynchronous failure of `comm`. Valid until this thread's next failure.
#[no_mangle]
pub extern "C" fn ncclGetLastError(handle: ncclComm_t) -> *const c_char {
    let text = rccl::last_error();
    // SAFETY: last_error points at this thread's NUL-terminated message.
    if unsafe { *text } == 0 && !handle.is_null() {
        if let Ok(comm) = comm(handle) {
            let message = comm.async_message();
            if !message.is_empty() {
                rccl::set_last_error(&message);
                return rccl::last_error();
            }
        }
    }
    text
}

nccl_export!(
    /// The first failure of the communicator's stream work (a peer that never came:
    /// ncclRemoteError); its message becomes this thread's ncclGetLastError text.
    fn ncclCommGetAsyncError(handle: ncclComm_t, result: *mut ncclResult_t) {
        let comm = comm(handle)?;
        let error = comm.async_error();
        if error != ncclSuccess {
            rccl::set_last_error(&comm.async_message());
        }
        out(result, error)
    }
);

nccl_export!(
    fn ncclCommCount(handle: ncclComm_t, count: *mut c_int) {
        out(count, comm(handle)?.size() as c_int)
    }
);

nccl_export!(
    fn ncclCommCuDevice(handle: ncclComm_t, device: *mut c_int) {
        out(device, comm(handle)?.device as c_int)
    }
);

nccl_export!(
    fn ncclCommUserRank(handle: ncclComm_t, rank: *mut c_int) {
        out(rank, comm(handle)?.rank as c_int)
    }
);

nccl_export!(
    fn ncclRedOpCreatePreMulSum(
        op: *mut ncclRedOp_t,
        scalar: *mut c_void,
        data_type: ncclDataType_t,
        residence: ncclScalarResidence_t,
        handle: ncclComm_t,
    ) {
        let comm = comm(handle)?;
        let factor = match residence {
            ncclScalarHostImmediate => ScalarSource::Value(rccl::scalar_at(scalar as usize, data_type)?),
            ncclScalarDevice => {
                element_size(data_type).ok_or(ncclInvalidArgument)?;
                if scalar.is_null() {
                    return Err(ncclInvalidArgument);
                }
                ScalarSource::Address(scalar as usize)
            }
            _ => return Err(ncclInvalidArgument),
        };
        if op.is_null() {
            return Err(ncclInvalidArgument);
        }
        out(op, comm.create_premul_sum(factor))
    }
);

nccl_export!(
    fn ncclRedOpDestroy(op: ncclRedOp_t, handle: ncclComm_t) {
        comm(handle)?.destroy_operator(op)
    }
);

nccl_export!(
    fn ncclReduce(
        send: *const c_void,
        recv: *mut c_void,
        count: usize,
        data_type: ncclDataType_t,
        op: ncclRedOp_t,
        root: c_int,
        handle: ncclComm_t,
        stream: hipStream_t,
    ) {
        collective(CollectiveKind::Reduce, send, recv, count, data_type, Some(op), root, handle, stream)
    }
);

nccl_export!(
    fn ncclBcast(buffer: *mut c_void, count: usize, data_type: ncclDataType_t, root: c_int, handle: ncclComm_t, stream: hipStream_t) {
        collective(CollectiveKind::Broadcast, buffer, buffer, count, data_type, None, root, handle, stream)
    }
);

nccl_export!(
    fn ncclBroadcast(
        send: *const c_void,
        recv: *mut c_void,
        count: usize,
        data_type: ncclDataType_t,
        root: c_int,
        handle: ncclComm_t,
        stream: hipStream_t,
    ) {
        collective(CollectiveKind::Broadcast, send, recv, count, data_type, None, root, handle, stream)
    }
);

nccl_export!(
    fn ncclAllReduce(
        send: *const c_void,
        recv: *mut c_void,
        count: usize,
        data_type: ncclDataType_t,
        op: ncclRedOp_t,
        handle: ncclComm_t,
        stream: hipStream_t,
    ) {
        collective(CollectiveKind::AllReduce, send, recv, count, data_type, Some(op), 0, handle, stream)
    }
);

nccl_export!(
    fn ncclReduceScatter(
        send: *const c_void,
        recv: *mut c_void,
        recv_count: usize,
        data_type: ncclDataType_t,
        op: ncclRedOp_t,
        handle: ncclComm_t,
        stream: hipStream_t,
    ) {
        collective(CollectiveKind::ReduceScatter, send, recv, recv_count, data_type, Some(op), 0, handle, stream)
    }
);

nccl_export!(
    fn ncclAllGather(
        send: *const c_void,
        recv: *mut c_void,
        send_count: usize,
        data_type: ncclDataType_t,
        handle: ncclComm_t,
        stream: hipStream_t,
    ) {
        collective(CollectiveKind::AllGather, send, recv, send_count, data_type, None, 0, handle, stream)
    }
);

fn bytes_of(count: usize, data_type: ncclDataType_t) -> NcclResult<usize> {
    count.checked_mul(element_size(data_type).ok_or(ncclInvalidArgument)?).ok_or(ncclInvalidArgument)
}

nccl_export!(
    fn ncclSend(send: *const c_void, count: usize, data_type: ncclDataType_t, peer: c_int, handle: ncclComm_t, stream: hipStream_t) {
        let peer = usize::try_from(peer).map_err(|_| ncclInvalidArgument)?;
        comm(handle)?.send(stream_of(stream)?, send as usize, bytes_of(count, data_type)?, peer)
    }
);

nccl_export!(
    fn ncclRecv(recv: *mut c_void, count: usize, data_type: ncclDataType_t, peer: c_int, handle: ncclComm_t, stream: hipStream_t) {
        let peer = usize::try_from(peer).map_err(|_| ncclInvalidArgument)?;
        comm(handle)?.recv(stream_of(stream)?, recv as usize, bytes_of(count, data_type)?, peer)
    }
);

nccl_export!(
    fn ncclGroupStart() {
        rccl::group_start();
        Ok(())
    }
);

nccl_export!(
    fn ncclGroupEnd() {
        rccl::group_end()
    }
);
