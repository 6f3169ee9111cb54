//! IREE collective operations (`iree_hal_collective_op_t`) in RCCL's terms: a pure
//! translation (no GPU, no RCCL), as IREE v3.3.0's C HIP driver does it in `rccl_channel.c`
//! (`iree_hal_hip_get_nccl_data_type`, `iree_hal_hip_get_nccl_reduction_type`), except:
//! - bf16 is `ncclBfloat16` (IREE's C driver sends it as `ncclFloat64`, reading and writing
//!   four times the bytes and reducing them as doubles);
//! - everything is checked at record time: unknown kinds, reductions and element types are
//!   INVALID_ARGUMENT (IREE's validation), a reduction on a non-reducing collective is
//!   INVALID_ARGUMENT (IREE's validation), and what IREE's driver only finds when it submits
//!   (i16/u16, which RCCL has no type for; a reducing collective without a reduction) is
//!   UNIMPLEMENTED at once;
//! - the buffers must hold what RCCL will read and write (`rccl_count`; IREE does not
//!   check);
//! - all_gather takes its count either way IREE writes it: IREE's HAL documents the count
//!   each rank sends (receive = ranks x count, `ncclAllGather`'s `sendcount`), while IREE's
//!   compiler (v3.3.0 and later: `flow.collective.all_gather` lowers with the element count
//!   of its *result*) records the gathered count. A count whose documented reading the
//!   buffers cannot hold, but whose gathered reading they hold exactly as the compiler
//!   sizes them, is the gathered count: RCCL gets count / ranks. IREE's C driver passes the
//!   compiler's count on as the send count, so RCCL reads past the send buffer and writes
//!   ranks times past the receive buffer.
//!
//! The numeric values are those of NCCL's `nccl.h` (RCCL's is the same):
//! `ncclInt8 = 0, ncclUint8 = 1, ncclInt32 = 2, ncclUint32 = 3, ncclInt64 = 4,
//! ncclUint64 = 5, ncclFloat16 = 6, ncclFloat32 = 7, ncclFloat64 = 8, ncclBfloat16 = 9`;
//! `ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3, ncclAvg = 4`.

use crate::abi::*;
use crate::hip::rccl::{NcclDataType, NcclRedOp};
use crate::status::Result;

/// `ncclDataType_t` values.
pub(crate) const NCCL_INT8: NcclDataType = 0;
pub(crate) const NCCL_UINT8: NcclDataType = 1;
pub(crate) const NCCL_INT32: NcclDataType = 2;
pub(crate) const NCCL_UINT32: NcclDataType = 3;
pub(crate) const NCCL_INT64: NcclDataType = 4;
pub(crate) const NCCL_UINT64: NcclDataType = 5;
pub(crate) const NCCL_FLOAT16: NcclDataType = 6;
pub(crate) const NCCL_FLOAT32: NcclDataType = 7;
pub(crate) const NCCL_FLOAT64: NcclDataType = 8;
pub(crate) const NCCL_BFLOAT16: NcclDataType = 9;

/// `ncclRedOp_t` values.
pub(crate) const NCCL_SUM: NcclRedOp = 0;
pub(crate) const NCCL_PROD: NcclRedOp = 1;
pub(crate) const NCCL_MAX: NcclRedOp = 2;
pub(crate) const NCCL_MIN: NcclRedOp = 3;
pub(crate) const NCCL_AVG: NcclRedOp = 4;

/// The collective kinds IREE defines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    AllGather,
    AllReduce,
    AllToAll,
    Broadcast,
    Reduce,
    ReduceScatter,
    Send,
    Recv,
    SendRecv,
}

impl Kind {
    fn from_iree(kind: iree_hal_collective_kind_t) -> Option<Kind> {
        Some(match kind {
            IREE_HAL_COLLECTIVE_KIND_ALL_GATHER => Kind::AllGather,
            IREE_HAL_COLLECTIVE_KIND_ALL_REDUCE => Kind::AllReduce,
            IREE_HAL_COLLECTIVE_KIND_ALL_TO_ALL => Kind::AllToAll,
            IREE_HAL_COLLECTIVE_KIND_BROADCAST => Kind::Broadcast,
            IREE_HAL_COLLECTIVE_KIND_REDUCE => Kind::Reduce,
            IREE_HAL_COLLECTIVE_KIND_REDUCE_SCATTER => Kind::ReduceScatter,
            IREE_HAL_COLLECTIVE_KIND_SEND => Kind::Send,
            IREE_HAL_COLLECTIVE_KIND_RECV => Kind::Recv,
            IREE_HAL_COLLECTIVE_KIND_SEND_RECV => Kind::SendRecv,
            _ => return None,
        })
    }

    /// Whether the kind takes a reduction.
    pub(crate) fn reduces(self) -> bool {
        matches!(self, Kind::AllReduce | Kind::Reduce | Kind::ReduceScatter)
    }

    /// Whether the kind reads a send buffer.
    pub(crate) fn uses_send(self) -> bool {
        self != Kind::Recv
    }

    /// Whether the kind writes a receive buffer.
    pub(crate) fn uses_recv(self) -> bool {
        self != Kind::Send
    }

    /// IREE's name of the kind, for messages.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::AllGather => "all_gather",
            Kind::AllReduce => "all_reduce",
            Kind::AllToAll => "all_to_all",
            Kind::Broadcast => "broadcast",
            Kind::Reduce => "reduce",
            Kind::ReduceScatter => "reduce_scatter",
            Kind::Send => "send",
            Kind::Recv => "recv",
            Kind::SendRecv => "send_recv",
        }
    }
}

/// A collective operation in RCCL's terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RcclOp {
    pub kind: Kind,
    pub data_type: NcclDataType,
    /// Bytes of one element.
    pub element_bytes: u8,
    /// The reduction of a reducing kind; None for the others.
    pub reduction: Option<NcclRedOp>,
}

/// RCCL's data type of an IREE element type, and its size in bytes.
pub(crate) fn data_type(element_type: iree_hal_collective_element_type_t) -> Result<(NcclDataType, u8)> {
    Ok(match element_type {
        IREE_HAL_COLLECTIVE_ELEMENT_TYPE_SINT_8 => (NCCL_INT8, 1),
        IREE_HAL_COLLECTIVE_ELEMENT_TYPE_UINT_8 => (NCCL_UINT8, 1),
        IREE_HAL_COLLECTIVE_ELEMENT_TYPE_SINT_16 => {
            return Err(crate::status!(Unimplemented, "collective: SINT16 is not supported for collective op (RCCL has no 16-bit integer type)"))
        }
        IREE_HAL_COLLECTIVE_ELEMENT_TYPE_UINT_16 => {
            return Err(crate::status!(Unimplemented, "collective: UINT16 is not supported for collective op (RCCL has no 16-bit integer type)"))
        }
        IREE_HAL_COLLECTIVE_ELEMENT_TYPE_SINT_32 => (NCCL_INT32, 4),
        IREE_HAL_COLLECTIVE_ELEMENT_TYPE_UINT_32 => (NCCL_UINT32, 4),
        IREE_HAL_COLLECTIVE_ELEMENT_TYPE_SINT_64 => (NCCL_INT64, 8),
        IREE_HAL_COLLECTIVE_ELEMENT_TYPE_UINT_64 => (NCCL_UINT64, 8),
        IREE_HAL_COLLECTIVE_ELEMENT_TYPE_FLOAT_16 => (NCCL_FLOAT16, 2),
        IREE_HAL_COLLECTIVE_ELEMENT_TYPE_FLOAT_32 => (NCCL_FLOAT32, 4),
        IREE_HAL_COLLECTIVE_ELEMENT_TYPE_FLOAT_64 => (NCCL_FLOAT64, 8),
        IREE_HAL_COLLECTIVE_ELEMENT_TYPE_BFLOAT_16 => (NCCL_BFLOAT16, 2),
        other => return Err(crate::status!(InvalidArgument, "collective: unknown collective element type {other}")),
    })
}

/// RCCL's reduction of an IREE reduction; None for `IREE_HAL_COLLECTIVE_REDUCTION_NONE`.
pub(crate) fn reduction(reduction: iree_hal_collective_reduction_t) -> Result<Option<NcclRedOp>> {
    Ok(Some(match reduction {
        IREE_HAL_COLLECTIVE_REDUCTION_NONE => return Ok(None),
        IREE_HAL_COLLECTIVE_REDUCTION_SUM => NCCL_SUM,
        IREE_HAL_COLLECTIVE_REDUCTION_PRODUCT => NCCL_PROD,
        IREE_HAL_COLLECTIVE_REDUCTION_MINIMUM => NCCL_MIN,
        IREE_HAL_COLLECTIVE_REDUCTION_MAXIMUM => NCCL_MAX,
        IREE_HAL_COLLECTIVE_REDUCTION_AVERAGE => NCCL_AVG,
        other => return Err(crate::status!(InvalidArgument, "collective: unknown collective reduction {other}")),
    }))
}

/// Translates `op`, with IREE's validation and what its driver refuses (see the module docs).
pub(crate) fn translate(op: iree_hal_collective_op_t) -> Result<RcclOp> {
    let kind = Kind::from_iree(op.kind()).ok_or_else(|| crate::status!(InvalidArgument, "collective: unknown collective operation {}", op.kind()))?;
    let reduction = reduction(op.reduction())?;
    let (data_type, element_bytes) = data_type(op.element_type())?;
    match (kind.reduces(), reduction) {
        (false, Some(_)) => Err(crate::status!(
            InvalidArgument,
            "collective: reduction operation cannot be specified on a non-reducing collective ({})",
            kind.name()
        )),
        (true, None) => Err(crate::status!(Unimplemented, "collective: unhandled reduction type (none) for the reducing collective {}", kind.name())),
        _ => Ok(RcclOp { kind, data_type, element_bytes, reduction }),
    }
}

/// The bytes RCCL reads from the send buffer and writes to the receive buffer for `count`
/// elements over `ranks` participants (0 for a buffer the kind does not use).
pub(crate) fn byte_lengths(op: &RcclOp, count: u64, ranks: u32) -> Result<(u64, u64)> {
    let overflow = || crate::status!(OutOfRange, "collective: {} of {count} elements over {ranks} ranks overflows a device size", op.kind.name());
    let bytes = count.checked_mul(u64::from(op.element_bytes)).ok_or_else(overflow)?;
    let all = bytes.checked_mul(u64::from(ranks)).ok_or_else(overflow)?;
    Ok(match op.kind {
        Kind::AllGather => (bytes, all),
        Kind::ReduceScatter => (all, bytes),
        Kind::Send => (bytes, 0),
        Kind::Recv => (0, bytes),
        // IREE: each peer gets `count / ranks` elements; the remainder is not sent.
        Kind::AllToAll => {
            let used = count / u64::from(ranks.max(1)) * u64::from(ranks) * u64::from(op.element_bytes);
            (used, used)
        }
        Kind::AllReduce | Kind::Broadcast | Kind::Reduce | Kind::SendRecv => (bytes, bytes),
    })
}

/// Checks that the send and receive ranges (their lengths) hold what RCCL accesses.
pub(crate) fn check_lengths(op: &RcclOp, count: u64, ranks: u32, send_length: u64, recv_length: u64) -> Result<()> {
    rccl_count(op, count, ranks, send_length, recv_length).map(|_| ())
}

/// The element count RCCL gets for a collective recorded with `count` (all_gather: the
/// count each rank sends, read from the compiler's gathered count where that is what the
/// buffers say, see the module docs), once the ranges are checked to hold what RCCL
/// accesses.
pub(crate) fn rccl_count(op: &RcclOp, count: u64, ranks: u32, send_length: u64, recv_length: u64) -> Result<u64> {
    let (send, recv) = byte_lengths(op, count, ranks)?;
    let fits = send_length >= send && recv_length >= recv;
    if fits {
        return Ok(count);
    }
    if op.kind == Kind::AllGather && ranks > 1 && count % u64::from(ranks) == 0 {
        let per_rank = count / u64::from(ranks);
        let (send, recv) = byte_lengths(op, per_rank, ranks)?;
        // The compiler sizes the send range to exactly what each rank sends.
        if send_length == send && recv_length >= recv {
            return Ok(per_rank);
        }
    }
    for (what, needed, length) in [("send", send, send_length), ("recv", recv, recv_length)] {
        if length < needed {
            return Err(crate::status!(
                OutOfRange,
                "collective: {} of {count} elements over {ranks} ranks needs {needed} bytes of {what} buffer but the range holds {length}",
                op.kind.name()
            ));
        }
    }
    unreachable!("one of the ranges is short when the documented reading does not fit")
}

/// The send and receive peers of a send_recv's `param`: the send peer in the low 16 bits,
/// the receive peer in the high 16, each -1 (0xFFFF) to skip that side (as IREE).
pub(crate) fn send_recv_peers(param: u32) -> (Option<i32>, Option<i32>) {
    let side = |bits: u16| {
        let peer = bits as i16;
        (peer != -1).then_some(i32::from(peer))
    };
    (side(param as u16), side((param >> 16) as u16))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::StatusCode;

    fn op(kind: u8, reduction: u8, element_type: u8) -> iree_hal_collective_op_t {
        iree_hal_collective_op_t::new(kind, reduction, element_type)
    }

    #[test]
    fn element_types_map_to_nccl_h_values() {
        let expected = [
            (IREE_HAL_COLLECTIVE_ELEMENT_TYPE_SINT_8, 0, 1),
            (IREE_HAL_COLLECTIVE_ELEMENT_TYPE_UINT_8, 1, 1),
            (IREE_HAL_COLLECTIVE_ELEMENT_TYPE_SINT_32, 2, 4),
            (IREE_HAL_COLLECTIVE_ELEMENT_TYPE_UINT_32, 3, 4),
            (IREE_HAL_COLLECTIVE_ELEMENT_TYPE_SINT_64, 4, 8),
            (IREE_HAL_COLLECTIVE_ELEMENT_TYPE_UINT_64, 5, 8),
            (IREE_HAL_COLLECTIVE_ELEMENT_TYPE_FLOAT_16, 6, 2),
            (IREE_HAL_COLLECTIVE_ELEMENT_TYPE_FLOAT_32, 7, 4),
            (IREE_HAL_COLLECTIVE_ELEMENT_TYPE_FLOAT_64, 8, 8),
            // ncclBfloat16, not IREE's C driver's ncclFloat64.
            (IREE_HAL_COLLECTIVE_ELEMENT_TYPE_BFLOAT_16, 9, 2),
        ];
        for (iree, nccl, bytes) in expected {
            assert_eq!(data_type(iree).unwrap(), (nccl, bytes), "element type {iree}");
        }
        for sixteen in [IREE_HAL_COLLECTIVE_ELEMENT_TYPE_SINT_16, IREE_HAL_COLLECTIVE_ELEMENT_TYPE_UINT_16] {
            let status = data_type(sixteen).unwrap_err();
            assert_eq!(status.code(), StatusCode::Unimplemented);
            assert!(status.to_string().contains("16"), "{status}");
        }
        assert_eq!(data_type(12).unwrap_err().code(), StatusCode::InvalidArgument);
    }

    #[test]
    fn reductions_map_to_nccl_h_values() {
        assert_eq!(reduction(IREE_HAL_COLLECTIVE_REDUCTION_NONE).unwrap(), None);
        assert_eq!(reduction(IREE_HAL_COLLECTIVE_REDUCTION_SUM).unwrap(), Some(0));
        assert_eq!(reduction(IREE_HAL_COLLECTIVE_REDUCTION_PRODUCT).unwrap(), Some(1));
        assert_eq!(reduction(IREE_HAL_COLLECTIVE_REDUCTION_MAXIMUM).unwrap(), Some(2));
        assert_eq!(reduction(IREE_HAL_COLLECTIVE_REDUCTION_MINIMUM).unwrap(), Some(3));
        assert_eq!(reduction(IREE_HAL_COLLECTIVE_REDUCTION_AVERAGE).unwrap(), Some(4));
        assert_eq!(reduction(6).unwrap_err().code(), StatusCode::InvalidArgument);
    }

    #[test]
    fn translation_checks_kinds_and_reductions() {
        let f32 = IREE_HAL_COLLECTIVE_ELEMENT_TYPE_FLOAT_32;
        let all_reduce = translate(op(IREE_HAL_COLLECTIVE_KIND_ALL_REDUCE, IREE_HAL_COLLECTIVE_REDUCTION_AVERAGE, f32)).unwrap();
        assert_eq!(all_reduce, RcclOp { kind: Kind::AllReduce, data_type: NCCL_FLOAT32, element_bytes: 4, reduction: Some(NCCL_AVG) });
        let gather = translate(op(IREE_HAL_COLLECTIVE_KIND_ALL_GATHER, 0, IREE_HAL_COLLECTIVE_ELEMENT_TYPE_BFLOAT_16)).unwrap();
        assert_eq!(gather, RcclOp { kind: Kind::AllGather, data_type: NCCL_BFLOAT16, element_bytes: 2, reduction: None });
        for kind in 0..=IREE_HAL_COLLECTIVE_KIND_MAX_VALUE {
            let reduces = [IREE_HAL_COLLECTIVE_KIND_ALL_REDUCE, IREE_HAL_COLLECTIVE_KIND_REDUCE, IREE_HAL_COLLECTIVE_KIND_REDUCE_SCATTER].contains(&kind);
            let with_sum = translate(op(kind, IREE_HAL_COLLECTIVE_REDUCTION_SUM, f32));
            let without = translate(op(kind, IREE_HAL_COLLECTIVE_REDUCTION_NONE, f32));
            if reduces {
                assert_eq!(with_sum.unwrap().reduction, Some(NCCL_SUM));
                assert_eq!(without.unwrap_err().code(), StatusCode::Unimplemented);
            } else {
                assert_eq!(with_sum.unwrap_err().code(), StatusCode::InvalidArgument);
                assert_eq!(without.unwrap().reduction, None);
            }
        }
        assert_eq!(translate(op(9, 0, f32)).unwrap_err().code(), StatusCode::InvalidArgument);
    }

    #[test]
    fn lengths_follow_the_kind() {
        let f32 = IREE_HAL_COLLECTIVE_ELEMENT_TYPE_FLOAT_32;
        let of = |kind, reduction| translate(op(kind, reduction, f32)).unwrap();
        assert_eq!(byte_lengths(&of(IREE_HAL_COLLECTIVE_KIND_ALL_GATHER, 0), 3, 2).unwrap(), (12, 24));
        assert_eq!(byte_lengths(&of(IREE_HAL_COLLECTIVE_KIND_REDUCE_SCATTER, 1), 3, 2).unwrap(), (24, 12));
        assert_eq!(byte_lengths(&of(IREE_HAL_COLLECTIVE_KIND_ALL_REDUCE, 1), 3, 2).unwrap(), (12, 12));
        assert_eq!(byte_lengths(&of(IREE_HAL_COLLECTIVE_KIND_SEND, 0), 3, 2).unwrap(), (12, 0));
        assert_eq!(byte_lengths(&of(IREE_HAL_COLLECTIVE_KIND_RECV, 0), 3, 2).unwrap(), (0, 12));
        assert_eq!(byte_lengths(&of(IREE_HAL_COLLECTIVE_KIND_ALL_TO_ALL, 0), 5, 2).unwrap(), (16, 16));
        let gather = of(IREE_HAL_COLLECTIVE_KIND_ALL_GATHER, 0);
        assert!(check_lengths(&gather, 3, 2, 12, 24).is_ok());
        assert_eq!(check_lengths(&gather, 3, 2, 12, 23).unwrap_err().code(), StatusCode::OutOfRange);
        // IREE's HAL reading (3 f32 from each of 2 ranks) and its compiler's (6 gathered).
        assert_eq!(rccl_count(&gather, 3, 2, 12, 24).unwrap(), 3);
        assert_eq!(rccl_count(&gather, 6, 2, 12, 24).unwrap(), 3);
        // Buffers large enough for the documented reading keep it.
        assert_eq!(rccl_count(&gather, 6, 2, 24, 48).unwrap(), 6);
        // The gathered reading needs a send range of exactly what each rank sends.
        assert_eq!(rccl_count(&gather, 6, 2, 16, 24).unwrap_err().code(), StatusCode::OutOfRange);
        // A gathered count the ranks do not divide, or a short receive, stays refused.
        assert_eq!(rccl_count(&gather, 5, 2, 12, 24).unwrap_err().code(), StatusCode::OutOfRange);
        assert_eq!(rccl_count(&gather, 6, 2, 12, 20).unwrap_err().code(), StatusCode::OutOfRange);
        // Other kinds never reinterpret.
        let reduce = of(IREE_HAL_COLLECTIVE_KIND_ALL_REDUCE, 1);
        assert_eq!(rccl_count(&reduce, 6, 2, 12, 24).unwrap_err().code(), StatusCode::OutOfRange);
        assert_eq!(byte_lengths(&gather, u64::MAX, 2).unwrap_err().code(), StatusCode::OutOfRange);
    }

    #[test]
    fn send_recv_param_packs_two_peers() {
        assert_eq!(send_recv_peers(0x0001_0000), (Some(0), Some(1)));
        assert_eq!(send_recv_peers(0xFFFF_0001), (Some(1), None));
        assert_eq!(send_recv_peers(0x0000_FFFF), (None, Some(0)));
        assert_eq!(send_recv_peers(u32::MAX), (None, None));
    }
}
