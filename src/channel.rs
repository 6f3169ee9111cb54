//! Collective channels (`iree_hal_channel_t`) over RCCL communicators, as IREE v3.3.0's C
//! HIP driver makes them (`iree_hal_hip_device_create_channel`, `rccl_channel.c`).
//!
//! RCCL is loaded when the first channel of a device is created and kept by the device
//! (`HipDevice::rccl`). Without it the answer is UNAVAILABLE listing where it was looked for
//! (the system loader, then beside each of the driver's HIP search paths and the loaded HIP
//! library: `--hip_dylib_path` / `IREE_HIP_DYLIB_PATH`).
//!
//! A channel is one participant (rank) of a communicator on one queue's GPU:
//! - the queue affinity names exactly one queue (ANY and 0 the first, as every call reads
//!   an affinity); two or more queues are INVALID_ARGUMENT;
//! - rank or count `-1` (`IREE_HAL_CHANNEL_RANK_DEFAULT` / `COUNT_DEFAULT`) are asked of the
//!   device's channel provider (only the defaulted ones are replaced);
//! - an empty id is the default id: rank 0 makes one (`ncclGetUniqueId`) and every rank
//!   passes it through the provider's `exchange_default_id`; a given id must be exactly
//!   `sizeof(ncclUniqueId)` (128) bytes, and an all-zero id is refused;
//! - `ncclCommInitRank` runs with the queue's GPU context current (IREE's C driver leaves
//!   whatever context the thread had, IREE issue #18077), and blocks until every rank
//!   joined.
//!
//! On a device of several GPUs each queue is a rank, and one thread may create the channels
//! of all of them one after another (as a program creating a channel per queue does). A
//! blocking `ncclCommInitRank` would then wait for ranks its own thread has yet to create,
//! so there the communicator is made on a thread of its own (RCCL's timeout still applies)
//! and the channel is returned at once: recording waits for nothing, issuing a collective
//! waits until the communicator is made (on the queue's worker, never the submitting
//! thread) and fails with RCCL's error if it could not be. Splits of such channels are
//! deferred the same way; what needs the split's rank or count (a query, recording a
//! collective) waits for it. Devices of one GPU (one process per GPU, as under MPI) create
//! and split synchronously, as IREE's C driver does, so failures are the call's status.
//!
//! `split` is `ncclCommSplit` (the GPU current); `IREE_HAL_CHANNEL_NO_COLOR` leaves this
//! participant out: OK and no channel (IREE's C driver wraps a NULL communicator instead).
//! A split channel keeps its parent alive. Destroying a channel finalizes and destroys its
//! communicator with its GPU current; failures are recorded as every HIP release failure
//! (`crate::hip::error::record_release`). Every RCCL failure is a status naming the call and
//! RCCL's error string (`rccl_call!`).
//!
//! Collective operations use channels from command buffers (`crate::command_buffer`, its
//! `collective`, `stream` and `graph` modules): stream-mode command buffers (inline ones
//! too) issue them as RCCL groups on the queue's stream; graph-mode command buffers split
//! their commands at collectives into segments, HIP graphs for the other commands and the
//! collectives issued as in stream mode between the graph launches, on the same stream.
//!
//! RCCL reports a collective that could not finish (a peer that went away or never came)
//! asynchronously, and the stream goes on past it: the queue's completion callback asks
//! each channel of an executed command buffer (`asynchronous_failure`,
//! `ncclCommGetAsyncError`) and fails the submission's semaphores with RCCL's error instead
//! of signalling them.

use crate::abi::*;
use crate::device::HipDevice;
use crate::hal_object::foreign::ChannelProviderCalls;
use crate::hal_object::thunk::ChannelParamsView;
use crate::hal_object::{self, Address, Ours, OursConst, OptionalMut, Out, Retained};
use crate::hip::error::{record_release, record_release_failure};
use crate::hip::gpu::Gpu;
use crate::hip::rccl::{search_paths_beside, NcclComm, NcclUniqueId, RcclSymbols};
use crate::hip::HipSymbols;
use crate::rccl_call;
use crate::status::{Result, Status, StatusCode};
use std::sync::{Arc, OnceLock};

/// The bytes of an `ncclUniqueId`.
pub const NCCL_UNIQUE_ID_BYTES: usize = core::mem::size_of::<NcclUniqueId>();

/// Loads RCCL from beside the device's HIP runtime.
pub fn load_rccl(hip: &HipSymbols) -> Result<RcclSymbols> {
    RcclSymbols::load(&search_paths_beside(&hip.search_paths, &hip.library_path))
}

/// One rank's RCCL communicator, on the GPU it was made on; finalized and destroyed there
/// when dropped.
struct Communicator {
    rccl: Arc<RcclSymbols>,
    gpu: Gpu,
    comm: Address,
}

impl Communicator {
    fn raw(&self) -> NcclComm {
        self.comm.get()
    }
}

impl Drop for Communicator {
    fn drop(&mut self) {
        // Without the context the calls are still made: a communicator left alone leaks.
        let current = self.gpu.make_current();
        if let Err(status) = &current {
            record_release_failure("RCCL communicator", status);
        }
        // Blocking teardown, as IREE's C driver (finalize, then destroy).
        record_release("RCCL communicator", rccl_call!(&self.rccl, ncclCommFinalize(self.raw())));
        record_release("RCCL communicator", rccl_call!(&self.rccl, ncclCommDestroy(self.raw())));
        drop(current);
    }
}

/// A failure kept to be reported again each time the communicator is asked for.
#[derive(Clone)]
struct Failure {
    code: StatusCode,
    message: String,
}

impl Failure {
    fn of(status: Status) -> Failure {
        Failure { code: status.code(), message: status.to_string() }
    }

    fn status(&self) -> Status {
        Status::new(self.code, crate::here!(), &self.message)
    }
}

/// A communicator and this participant's (rank, count) in it, once RCCL made it.
struct Made {
    communicator: Communicator,
    rank: i32,
    count: i32,
}

/// Where a channel's communicator is: made at creation, or being made on a thread of its
/// own (multi-GPU devices, see the module documentation).
struct PendingCommunicator {
    made: OnceLock<core::result::Result<Made, Failure>>,
}

impl PendingCommunicator {
    fn ready(made: Result<Made>) -> Arc<PendingCommunicator> {
        let pending = Arc::new(PendingCommunicator { made: OnceLock::new() });
        let _ = pending.made.set(made.map_err(Failure::of));
        pending
    }

    /// Makes the communicator with `make` on a new thread; `what` names it in failures.
    fn deferred(what: &'static str, make: impl FnOnce() -> Result<Made> + Send + 'static) -> Result<Arc<PendingCommunicator>> {
        let pending = Arc::new(PendingCommunicator { made: OnceLock::new() });
        let for_thread = pending.clone();
        let started = std::thread::Builder::new().name("iree-hip-rccl-init".into()).spawn(move || {
            let made = std::panic::catch_unwind(std::panic::AssertUnwindSafe(make)).unwrap_or_else(|_| {
                Err(crate::status!(Internal, "{what}: the thread making the RCCL communicator panicked"))
            });
            let _ = for_thread.made.set(made.map_err(|status| Failure::of(status.annotate(what))));
        });
        started.map_err(|error| crate::status!(ResourceExhausted, "{what}: starting a thread to make the RCCL communicator: {error}"))?;
        Ok(pending)
    }

    /// The communicator, waiting until it is made.
    fn wait(&self) -> Result<&Made> {
        self.made.wait().as_ref().map_err(Failure::status)
    }
}

/// Our channel. C sees the `iree_hal_channel_t` header at its start.
#[repr(C)]
pub struct HipChannel {
    base: iree_hal_channel_t,
    /// Dropped before the parent is released (fields drop in order); a communicator still
    /// being made is destroyed by its thread once made.
    communicator: Arc<PendingCommunicator>,
    rccl: Arc<RcclSymbols>,
    gpu: Gpu,
    /// Made (and split) on threads of their own: see the module documentation.
    deferred: bool,
    /// The rank and count when known without RCCL (a created channel; a split's come from
    /// RCCL once it made the communicator).
    given_rank_and_count: Option<(i32, i32)>,
    /// The channel this one was split from, kept alive as long as this one.
    parent: Option<Retained<HipChannel>>,
}

crate::hal_object!(HipChannel { base: iree_hal_channel_t }, HIP_CHANNEL_VTABLE);

impl HipChannel {
    fn create(
        communicator: Arc<PendingCommunicator>,
        rccl: Arc<RcclSymbols>,
        gpu: Gpu,
        deferred: bool,
        given_rank_and_count: Option<(i32, i32)>,
        parent: Option<Retained<HipChannel>>,
    ) -> *mut iree_hal_channel_t {
        hal_object::into_raw(Box::new(HipChannel {
            base: iree_hal_channel_t { resource: hal_object::resource_header::<HipChannel>() },
            communicator,
            rccl,
            gpu,
            deferred,
            given_rank_and_count,
            parent,
        }))
    }

    /// This participant's rank and the number of participants (of a deferred split: once
    /// RCCL made it).
    pub fn rank_and_count(&self) -> Result<(i32, i32)> {
        if let Some(given) = self.given_rank_and_count {
            return Ok(given);
        }
        let made = self.communicator.wait()?;
        Ok((made.rank, made.count))
    }

    /// The RCCL communicator (for collective commands), waiting until it is made.
    pub fn comm(&self) -> Result<NcclComm> {
        Ok(self.communicator.wait()?.communicator.raw())
    }

    /// Whether the communicator is made on a thread of its own (multi-GPU devices): issuing
    /// a collective may then wait for it, so never on the submitting thread.
    pub fn is_deferred(&self) -> bool {
        self.deferred
    }

    /// RCCL's asynchronous error of the communicator (`ncclCommGetAsyncError`: a peer that
    /// went away or never came while the collectives ran), as a status with RCCL's words;
    /// None while it is still being made or is fine. Makes no HIP call.
    pub fn asynchronous_failure(&self) -> Option<Status> {
        let Some(Ok(made)) = self.communicator.made.get() else { return None };
        let (rank, count) = (made.rank, made.count);
        let mut result = 0;
        if let Err(status) = rccl_call!(&self.rccl, ncclCommGetAsyncError(made.communicator.raw(), &mut result)) {
            return Some(status);
        }
        self.rccl
            .check(result, "a collective operation (ncclCommGetAsyncError)", crate::here!())
            .err()
            .map(|status| status.annotate(&format!("the collective channel of rank {rank} of {count} failed")))
    }

    /// The RCCL the communicator belongs to (for collective commands).
    pub fn rccl(&self) -> &RcclSymbols {
        &self.rccl
    }

    /// The HIP device ordinal of the GPU of the channel's queue.
    pub fn hip_device(&self) -> i32 {
        self.gpu.device()
    }

    /// The device RCCL says the communicator belongs to (`ncclCommCuDevice`): the queue's
    /// GPU, whatever device the creating thread had current.
    pub fn communicator_device(&self) -> Result<i32> {
        let mut device = -1;
        rccl_call!(&self.rccl, ncclCommCuDevice(self.comm()?, &mut device))?;
        Ok(device)
    }

    /// `ncclCommSplit` of this channel's communicator; None when `color` is
    /// `IREE_HAL_CHANNEL_NO_COLOR` (this participant takes no part in any new channel).
    /// Deferred when this channel's communicator was.
    fn split(&self, color: i32, key: i32) -> Result<Option<*mut iree_hal_channel_t>> {
        let (rccl, gpu) = (self.rccl.clone(), self.gpu.clone());
        if !self.deferred {
            return Ok(split_communicator(self, color, key)?
                .map(|made| HipChannel::create(PendingCommunicator::ready(Ok(made)), rccl, gpu, self.deferred, None, Some(Retained::from_ours(self)))));
        }
        let parent = Retained::from_ours(self);
        if color == IREE_HAL_CHANNEL_NO_COLOR {
            // Still a participant of the split (RCCL waits for every rank to ask), but no
            // channel comes of it: nobody waits for this one.
            let pending = PendingCommunicator::deferred("splitting a collective channel", move || {
                split_communicator(&parent, color, key)?;
                Err(crate::status!(NotFound, "IREE_HAL_CHANNEL_NO_COLOR: no channel"))
            })?;
            drop(pending);
            return Ok(None);
        }
        let pending = PendingCommunicator::deferred("splitting a collective channel", move || {
            split_communicator(&parent, color, key)?.ok_or_else(|| crate::status!(Internal, "ncclCommSplit with color {color} returned no communicator"))
        })?;
        Ok(Some(HipChannel::create(pending, rccl, gpu, true, None, Some(Retained::from_ours(self)))))
    }
}

/// `ncclCommSplit` of `channel`'s communicator (made first), the GPU current.
fn split_communicator(channel: &HipChannel, color: i32, key: i32) -> Result<Option<Made>> {
    let (rccl, gpu) = (&channel.rccl, &channel.gpu);
    let parent = channel.comm()?;
    let mut comm: NcclComm = core::ptr::null_mut();
    {
        let _current = gpu.make_current()?;
        rccl_call!(rccl, ncclCommSplit(parent, color, key, &mut comm, core::ptr::null_mut()))?;
    }
    if comm.is_null() {
        if color == IREE_HAL_CHANNEL_NO_COLOR {
            return Ok(None);
        }
        return Err(crate::status!(Internal, "ncclCommSplit with color {color} returned no communicator"));
    }
    // Owned from here: destroyed if the queries below fail.
    let communicator = Communicator { rccl: rccl.clone(), gpu: gpu.clone(), comm: Address(comm) };
    if color == IREE_HAL_CHANNEL_NO_COLOR {
        return Err(crate::status!(Internal, "ncclCommSplit with IREE_HAL_CHANNEL_NO_COLOR returned a communicator"));
    }
    let (mut rank, mut count) = (0, 0);
    rccl_call!(rccl, ncclCommUserRank(comm, &mut rank))?;
    rccl_call!(rccl, ncclCommCount(comm, &mut count))?;
    Ok(Some(Made { communicator, rank, count }))
}

/// RCCL of `device`, loaded on first use and kept.
fn rccl_of(device: &HipDevice) -> Result<Arc<RcclSymbols>> {
    device.rccl(|| load_rccl(device.hip()).map(Arc::new)).map_err(|status| status.annotate("creating a collective channel"))
}

/// The rank and count of `params`, with defaults asked of the provider.
fn rank_and_count(provider: Option<&Retained<iree_hal_channel_provider_t>>, params: &ChannelParamsView<'_>) -> Result<(i32, i32)> {
    let (mut rank, mut count) = (params.rank, params.count);
    if rank == IREE_HAL_CHANNEL_RANK_DEFAULT || count == IREE_HAL_CHANNEL_COUNT_DEFAULT {
        let provider = provider.ok_or_else(|| {
            crate::status!(
                InvalidArgument,
                "default collective channel rank or count requested (rank {rank}, count {count}) but no channel provider has been set on the device to provide them"
            )
        })?;
        let (default_rank, default_count) =
            provider.query_default_rank_and_count().map_err(|status| status.annotate("querying default collective group rank and count"))?;
        if rank == IREE_HAL_CHANNEL_RANK_DEFAULT {
            rank = default_rank;
        }
        if count == IREE_HAL_CHANNEL_COUNT_DEFAULT {
            count = default_count;
        }
    }
    if count < 1 || rank < 0 || rank >= count {
        return Err(crate::status!(InvalidArgument, "collective channel rank {rank} is not one of {count} participants"));
    }
    Ok((rank, count))
}

/// The communicator id of `params`, the default one exchanged through the provider.
fn unique_id(rccl: &RcclSymbols, provider: Option<&Retained<iree_hal_channel_provider_t>>, params: &ChannelParamsView<'_>, rank: i32) -> Result<[u8; NCCL_UNIQUE_ID_BYTES]> {
    let mut id = [0u8; NCCL_UNIQUE_ID_BYTES];
    if params.id.is_empty() {
        let provider = provider.ok_or_else(|| {
            crate::status!(InvalidArgument, "default collective channel ID requested but no channel provider has been set on the device to provide it")
        })?;
        let mut made = Ok(());
        if rank == 0 {
            let mut root = NcclUniqueId { internal: [0; NCCL_UNIQUE_ID_BYTES] };
            made = rccl_call!(rccl, ncclGetUniqueId(&mut root)).map_err(|status| status.annotate("bootstrapping NCCL root"));
            if made.is_ok() {
                id = root.internal.map(|byte| byte as u8);
            }
        }
        // Rank 0 takes part in the exchange even without an id: the other ranks wait in it
        // (forever, with MPI) and learn from the all-zero id that there is none.
        let exchanged = provider.exchange_default_id(&mut id).map_err(|status| status.annotate("exchanging NCCL ID with other participants"));
        made?;
        exchanged?;
        if rank != 0 && id.iter().all(|byte| *byte == 0) {
            return Err(crate::status!(
                Unavailable,
                "rank 0 of the collective group sent no NCCL ID (all zeros): it could not make one (its own status names why)"
            ));
        }
    } else if params.id.len() != NCCL_UNIQUE_ID_BYTES {
        return Err(crate::status!(
            InvalidArgument,
            "NCCL ID must be {NCCL_UNIQUE_ID_BYTES} bytes matching the ncclUniqueId struct but caller provided {} bytes",
            params.id.len()
        ));
    } else {
        id.copy_from_slice(params.id);
    }
    if id.iter().all(|byte| *byte == 0) {
        return Err(crate::status!(InvalidArgument, "no default NCCL ID specified (all zeros)"));
    }
    Ok(id)
}

/// `create_channel` of `device`: see the module documentation.
pub fn create_channel(device: &HipDevice, queue_affinity: iree_hal_queue_affinity_t, params: ChannelParamsView<'_>) -> Result<*mut iree_hal_channel_t> {
    let rccl = rccl_of(device)?;
    if queue_affinity != IREE_HAL_QUEUE_AFFINITY_ANY && queue_affinity.count_ones() > 1 {
        return Err(crate::status!(
            InvalidArgument,
            "a collective channel takes exactly one queue (one participant) but queue affinity {queue_affinity:#x} names {}",
            queue_affinity.count_ones()
        ));
    }
    let gpu = device.gpus()[crate::argument_rules::gpu_for_affinity(queue_affinity, device.gpus().len())?].clone();
    // Not held locked: the provider's exchange blocks until every participant arrives.
    let provider = device.channel_provider();
    let (rank, count) = rank_and_count(provider.as_ref(), &params)?;
    let id = unique_id(&rccl, provider.as_ref(), &params, rank)?;
    let init = {
        let (rccl, gpu) = (rccl.clone(), gpu.clone());
        move || -> Result<Made> {
            let mut comm: NcclComm = core::ptr::null_mut();
            {
                let _current = gpu.make_current()?;
                let id = NcclUniqueId { internal: id.map(|byte| byte as core::ffi::c_char) };
                rccl_call!(&rccl, ncclCommInitRank(&mut comm, count, id, rank))?;
            }
            Ok(Made { communicator: Communicator { rccl, gpu, comm: Address(comm) }, rank, count })
        }
    };
    let deferred = device.gpus().len() > 1;
    let communicator = if deferred {
        PendingCommunicator::deferred("creating a collective channel", init)?
    } else {
        PendingCommunicator::ready(Ok(init()?))
    };
    Ok(HipChannel::create(communicator, rccl, gpu, deferred, Some((rank, count)), None))
}

//===----------------------------------------------------------------------===//
// The channel vtable
//===----------------------------------------------------------------------===//

crate::hal_thunks! {
    /// Flags are accepted and unused, as by IREE's C driver (IREE defines none for splits).
    fn channel_split(
        channel: Ours<HipChannel>,
        color: i32,
        key: i32,
        _flags: iree_hal_channel_flags_t,
        out_split_channel: Out<*mut iree_hal_channel_t>,
    ) -> Status {
        if let Some(split) = channel.split(color, key)? {
            out_split_channel.set(split);
        }
        Ok(())
    }

    /// A deferred split's rank and count are known once RCCL made it: this waits for it. A
    /// channel whose communicator could not be made answers rank -1 of 0 (the call cannot
    /// fail; using the channel reports why).
    fn channel_query_rank_and_count(channel: OursConst<HipChannel>, out_rank: OptionalMut<i32>, out_count: OptionalMut<i32>) -> () [fallback: ()] {
        let (rank, count) = channel.rank_and_count().unwrap_or((-1, 0));
        if let Some(out_rank) = out_rank {
            *out_rank = rank;
        }
        if let Some(out_count) = out_count {
            *out_count = count;
        }
    }
}

static HIP_CHANNEL_VTABLE: iree_hal_channel_vtable_t = iree_hal_channel_vtable_t {
    destroy: Some(hal_object::destroy::<HipChannel>),
    split: Some(channel_split),
    query_rank_and_count: Some(channel_query_rank_and_count),
};
