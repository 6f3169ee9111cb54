//! Collective channels of the Rust HIP device over the software device's RCCL (ranks are
//! threads of this process): creation with explicit and default ids, ranks and counts,
//! splits, the queue's GPU made current for RCCL, refused arguments and a missing RCCL.
//! `ncclCommInitRank` and `ncclCommSplit` block until every rank joins, so each rank of a
//! communicator runs on a thread of its own.

mod common;

use common::*;
use core::ffi::c_void;
use core::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use iree_hal_hip_rs::abi::*;
use iree_hal_hip_rs::channel::HipChannel;
use iree_hal_hip_rs::hal_object::HalObject;
use iree_hal_hip_rs::status::StatusCode;
use std::sync::{Arc, Condvar, Mutex, OnceLock};

static ALLOCATOR: CountingAllocator = CountingAllocator::new();

/// A directory holding the software device as `libamdhip64.so` (and, with `rccl`, a
/// `librccl.so` link to it: its library exports the RCCL functions too); beside the built
/// library, shared by every run. Without RCCL the library is a copy, not a link: the driver
/// also looks for RCCL beside the file HIP was loaded from, and the build puts a
/// `librccl.so` beside the built library.
fn library_dir(rccl: bool) -> &'static str {
    static DIRS: OnceLock<[String; 2]> = OnceLock::new();
    let dirs = DIRS.get_or_init(|| {
        let library = software_hip_library();
        [false, true].map(|with_rccl| {
            let dir = library.parent().unwrap().join(if with_rccl { "channels-test-hip-rccl" } else { "channels-test-hip" });
            std::fs::create_dir_all(&dir).unwrap();
            if !with_rccl {
                // Copied whole under a name of this process, then renamed into place.
                let partial = dir.join(format!("libamdhip64.so.{}", std::process::id()));
                std::fs::copy(&library, &partial).unwrap();
                std::fs::rename(&partial, dir.join("libamdhip64.so")).unwrap();
                return dir.display().to_string();
            }
            for name in ["libamdhip64.so", "librccl.so"] {
                // Another test process may have made it first.
                match std::os::unix::fs::symlink(&library, dir.join(name)) {
                    Err(error) if error.kind() != std::io::ErrorKind::AlreadyExists => panic!("linking {name}: {error}"),
                    _ => {}
                }
            }
            dir.display().to_string()
        })
    });
    &dirs[rccl as usize]
}

/// A driver and one device of it.
struct Device {
    driver: *mut iree_hal_driver_t,
    device: *mut iree_hal_device_t,
}

impl Device {
    /// The device at `path` ("0", "1", "0,1") of a driver that finds RCCL beside HIP.
    fn new(path: &'static str) -> Device {
        Device::with_rccl(path, true)
    }

    fn with_rccl(path: &'static str, rccl: bool) -> Device {
        let driver = software_driver_with_search_paths(&[library_dir(rccl)], ALLOCATOR.as_iree());
        Device { driver, device: device_at(driver, path, &[], ALLOCATOR.as_iree()) }
    }

    fn vtable(&self) -> &iree_hal_device_vtable_t {
        unsafe { &*((*self.device).resource.vtable as *const iree_hal_device_vtable_t) }
    }

    /// `create_channel` with `id` (empty: the default), `rank` and `count`.
    fn channel(&self, affinity: u64, id: &[u8], rank: i32, count: i32) -> Result<Channel, (StatusCode, String)> {
        let params = iree_hal_channel_params_t {
            flags: IREE_HAL_CHANNEL_FLAG_NONE,
            id: iree_const_byte_span_t { data: if id.is_empty() { core::ptr::null() } else { id.as_ptr() }, data_length: id.len() },
            group: sv(""),
            rank,
            count,
        };
        let mut channel = 0x1 as *mut iree_hal_channel_t;
        let status = unsafe { (self.vtable().create_channel.unwrap())(self.device, affinity, params, &mut channel) };
        match take_status(status) {
            None => Ok(Channel(channel)),
            Some(failure) => {
                assert!(channel.is_null(), "a refused create_channel leaves its output NULL");
                Err(failure)
            }
        }
    }

    fn set_provider(&self, provider: *mut iree_hal_channel_provider_t) {
        unsafe { (self.vtable().replace_channel_provider.unwrap())(self.device, provider) };
    }
}

// HAL drivers and devices may be used from any thread (IREE's contract).
unsafe impl Send for Device {}
unsafe impl Sync for Device {}

impl Drop for Device {
    fn drop(&mut self) {
        unsafe { iree_hal_hip_rs::hal_object::resource::release(self.device) };
        release_driver(self.driver);
    }
}

/// One reference to a channel, released when dropped.
struct Channel(*mut iree_hal_channel_t);

unsafe impl Send for Channel {}

impl Channel {
    fn vtable(&self) -> &iree_hal_channel_vtable_t {
        unsafe { &*((*self.0).resource.vtable as *const iree_hal_channel_vtable_t) }
    }

    fn rank_and_count(&self) -> (i32, i32) {
        let (mut rank, mut count) = (-7, -7);
        unsafe { (self.vtable().query_rank_and_count.unwrap())(self.0, &mut rank, &mut count) };
        (rank, count)
    }

    /// `split`; Ok(None) for OK with no channel.
    fn split(&self, color: i32, key: i32) -> Result<Option<Channel>, (StatusCode, String)> {
        let mut split = 0x1 as *mut iree_hal_channel_t;
        let status = unsafe { (self.vtable().split.unwrap())(self.0, color, key, IREE_HAL_CHANNEL_FLAG_NONE, &mut split) };
        match take_status(status) {
            None => Ok((!split.is_null()).then_some(Channel(split))),
            Some(failure) => Err(failure),
        }
    }

    fn ours(&self) -> &HipChannel {
        unsafe { HipChannel::from_raw(self.0) }.expect("one of ours")
    }
}

impl Drop for Channel {
    fn drop(&mut self) {
        unsafe { iree_hal_hip_rs::hal_object::resource::release(self.0) };
    }
}



fn no_release_failed() {
    assert_eq!(iree_hal_hip_rs::hip::error::release_failures(), 0, "a channel release failed (see stderr)");
}

/// Two devices, one on each GPU, one rank each: ranks and counts as given, the communicator
/// on the queue's GPU (not the thread's current device, which is 0 on a new thread); a
/// split with keys reversing the ranks swaps them; NO_COLOR leaves a participant out.
#[test]
fn two_ranks_on_two_gpus_create_split_and_release() {
    let id = fresh_rccl_id("channels-test", "two-gpus");
    on_ranks(2, move |rank| {
        let device = Device::new(if rank == 0 { "0" } else { "1" });
        let channel = device.channel(IREE_HAL_QUEUE_AFFINITY_ANY, &id, rank, 2).unwrap();
        assert_eq!(channel.rank_and_count(), (rank, 2));
        assert_eq!(channel.ours().hip_device(), rank);
        assert_eq!(channel.ours().communicator_device().unwrap(), rank, "RCCL saw the queue's GPU current");

        let swapped = channel.split(0, -rank).unwrap().expect("a channel for color 0");
        assert_eq!(swapped.rank_and_count(), (1 - rank, 2));
        assert_eq!(swapped.ours().communicator_device().unwrap(), rank);

        // Everyone out: OK and no channel for each.
        assert!(channel.split(IREE_HAL_CHANNEL_NO_COLOR, 0).unwrap().is_none());
        // Rank 0 out, rank 1 alone in its own channel.
        let color = if rank == 0 { IREE_HAL_CHANNEL_NO_COLOR } else { 3 };
        match channel.split(color, 0).unwrap() {
            None => assert_eq!(rank, 0),
            Some(alone) => {
                assert_eq!(rank, 1);
                assert_eq!(alone.rank_and_count(), (0, 1));
            }
        }

        // A split channel keeps its parent: released first, the split still works.
        drop(channel);
        let again = swapped.split(7, 0).unwrap().expect("split of a split");
        assert_eq!(again.rank_and_count(), (1 - rank, 2), "same key: ranks keep their order");
        drop(swapped);
        drop(again);
        drop(device);
    });
    no_release_failed();
}

/// One device over both GPUs: the affinity picks the queue, and so the GPU, of each rank.
#[test]
fn the_affinity_picks_the_gpu_of_a_two_gpu_device() {
    let device = Arc::new(Device::new("0,1"));
    let id = fresh_rccl_id("channels-test", "affinity");
    let shared = device.clone();
    let channels = on_ranks(2, move |rank| {
        let device = &shared;
        let channel = device.channel(1 << rank, &id, rank, 2).unwrap();
        assert_eq!(channel.rank_and_count(), (rank, 2));
        assert_eq!(channel.ours().hip_device(), rank);
        assert_eq!(channel.ours().communicator_device().unwrap(), rank);
        channel
    });
    // The affinity 0 is the first queue, as for every call.
    let alone = device.channel(0, &fresh_rccl_id("channels-test", "affinity-0"), 0, 1).unwrap();
    assert_eq!(alone.ours().hip_device(), 0);
    drop(channels);
    drop(alone);
    drop(device);
    no_release_failed();
}

/// A communicator of one: no other thread needed.
#[test]
fn a_channel_of_one_participant() {
    let device = Device::new("1");
    let channel = device.channel(1, &fresh_rccl_id("channels-test", "one"), 0, 1).unwrap();
    assert_eq!(channel.rank_and_count(), (0, 1));
    assert_eq!(channel.ours().communicator_device().unwrap(), 1);
    let split = channel.split(5, 42).unwrap().unwrap();
    assert_eq!(split.rank_and_count(), (0, 1));
    assert!(channel.split(IREE_HAL_CHANNEL_NO_COLOR, 0).unwrap().is_none());
    // query_rank_and_count tolerates NULL outputs.
    unsafe { (channel.vtable().query_rank_and_count.unwrap())(channel.0, core::ptr::null_mut(), core::ptr::null_mut()) };
    drop(channel);
    drop(split);
    no_release_failed();
}

//===----------------------------------------------------------------------===//
// A channel provider written against IREE's C vtable
//===----------------------------------------------------------------------===//

/// The id rank 0 hands to the other ranks.
#[derive(Default)]
struct Exchange {
    id: Mutex<Option<Vec<u8>>>,
    published: Condvar,
}

#[repr(C)]
struct TestProvider {
    resource: iree_hal_resource_t,
    rank: i32,
    count: i32,
    exchange: Arc<Exchange>,
    /// What rank 0 passed in (the id RCCL made) or what another rank received.
    seen: Mutex<Option<Vec<u8>>>,
    destroyed: Arc<AtomicUsize>,
}

static TEST_PROVIDER_VTABLE: iree_hal_channel_provider_vtable_t = iree_hal_channel_provider_vtable_t {
    destroy: Some(provider_destroy),
    query_default_rank_and_count: Some(provider_query),
    exchange_default_id: Some(provider_exchange),
};

unsafe extern "C" fn provider_destroy(provider: *mut iree_hal_channel_provider_t) {
    let provider = unsafe { Box::from_raw(provider.cast::<TestProvider>()) };
    provider.destroyed.fetch_add(1, Ordering::SeqCst);
}

unsafe extern "C" fn provider_query(provider: *mut iree_hal_channel_provider_t, out_rank: *mut i32, out_count: *mut i32) -> iree_status_t {
    let provider = unsafe { &*provider.cast::<TestProvider>() };
    unsafe {
        *out_rank = provider.rank;
        *out_count = provider.count;
    }
    core::ptr::null_mut()
}

unsafe extern "C" fn provider_exchange(provider: *mut iree_hal_channel_provider_t, id: iree_byte_span_t) -> iree_status_t {
    let provider = unsafe { &*provider.cast::<TestProvider>() };
    let bytes = unsafe { core::slice::from_raw_parts_mut(id.data, id.data_length) };
    let mut slot = provider.exchange.id.lock().unwrap();
    if provider.rank == 0 {
        *slot = Some(bytes.to_vec());
        provider.exchange.published.notify_all();
    } else {
        while slot.is_none() {
            slot = provider.exchange.published.wait(slot).unwrap();
        }
        bytes.copy_from_slice(slot.as_ref().unwrap());
    }
    *provider.seen.lock().unwrap() = Some(bytes.to_vec());
    core::ptr::null_mut()
}

fn new_provider(rank: i32, count: i32, exchange: Arc<Exchange>, destroyed: Arc<AtomicUsize>) -> *mut iree_hal_channel_provider_t {
    let provider = Box::new(TestProvider {
        resource: iree_hal_resource_t { ref_count: AtomicI32::new(1), vtable: &TEST_PROVIDER_VTABLE as *const _ as *const c_void },
        rank,
        count,
        exchange,
        seen: Mutex::new(None),
        destroyed,
    });
    Box::into_raw(provider).cast()
}

/// Default rank, count and id through the device's channel provider: rank 0's id comes
/// from ncclGetUniqueId and reaches rank 1 through the provider's exchange.
#[test]
fn defaults_come_from_the_channel_provider() {
    let exchange = Arc::new(Exchange::default());
    let destroyed = Arc::new(AtomicUsize::new(0));
    let (exchange_, destroyed_) = (exchange.clone(), destroyed.clone());
    let seen = on_ranks(2, move |rank| {
        let (exchange, destroyed) = (&exchange_, &destroyed_);
        let device = Device::new(if rank == 0 { "0" } else { "1" });
        let provider = new_provider(rank, 2, exchange.clone(), destroyed.clone());
        device.set_provider(provider);
        let channel = device.channel(IREE_HAL_QUEUE_AFFINITY_ANY, &[], IREE_HAL_CHANNEL_RANK_DEFAULT, IREE_HAL_CHANNEL_COUNT_DEFAULT).unwrap();
        assert_eq!(channel.rank_and_count(), (rank, 2));
        assert_eq!(channel.ours().communicator_device().unwrap(), rank);
        let seen = unsafe { (*provider.cast::<TestProvider>()).seen.lock().unwrap().clone() }.expect("exchanged");
        // Only the defaulted value is asked of the provider.
        let explicit = device.channel(IREE_HAL_QUEUE_AFFINITY_ANY, &fresh_rccl_id("channels-test", &format!("mixed-{rank}")), 0, 1);
        assert_eq!(explicit.unwrap().rank_and_count(), (0, 1));
        unsafe { iree_hal_hip_rs::hal_object::resource::release(provider) };
        drop(channel);
        drop(device);
        seen
    });
    assert_eq!(seen[0], seen[1], "rank 1 got rank 0's id");
    assert!(seen[0].starts_with(b"softhip-nccl:"), "rank 0's id is RCCL's: {:?}", String::from_utf8_lossy(&seen[0]));
    assert_eq!(destroyed.load(Ordering::SeqCst), 2, "the devices released their providers");
    no_release_failed();
}

/// Rank 0 cannot make the default id (ncclGetUniqueId fails): its status names the call,
/// and it still takes part in the provider's exchange, so rank 1 (which waits there; under
/// MPI a broadcast with no end) fails at once saying rank 0 sent no id. In a child process:
/// the software device reads SOFTWARE_HIP_FAIL once per process.
#[test]
fn a_failed_default_id_fails_every_rank_instead_of_leaving_them_waiting() {
    run_in_child("failed_default_id_child", &[("SOFTWARE_HIP_FAIL", "ncclGetUniqueId:1:ncclSystemError".to_string())]);
}

#[test]
#[ignore = "run by a_failed_default_id_fails_every_rank_instead_of_leaving_them_waiting in a child process"]
fn failed_default_id_child() {
    let exchange = Arc::new(Exchange::default());
    let destroyed = Arc::new(AtomicUsize::new(0));
    let (exchange_, destroyed_) = (exchange.clone(), destroyed.clone());
    let refused = on_ranks(2, move |rank| {
        let device = Device::new(if rank == 0 { "0" } else { "1" });
        let provider = new_provider(rank, 2, exchange_.clone(), destroyed_.clone());
        device.set_provider(provider);
        let refused = device.channel(IREE_HAL_QUEUE_AFFINITY_ANY, &[], IREE_HAL_CHANNEL_RANK_DEFAULT, IREE_HAL_CHANNEL_COUNT_DEFAULT).err();
        unsafe { iree_hal_hip_rs::hal_object::resource::release(provider) };
        drop(device);
        refused.expect("no channel without an id")
    });
    let (code, text) = &refused[0];
    assert_eq!(*code, StatusCode::Internal, "{text}");
    assert!(text.contains("ncclGetUniqueId failed: RCCL error ncclSystemError"), "{text}");
    let (code, text) = &refused[1];
    assert_eq!(*code, StatusCode::Unavailable, "{text}");
    assert!(text.contains("rank 0 of the collective group sent no NCCL ID"), "{text}");
    assert_eq!(destroyed.load(Ordering::SeqCst), 2);
    no_release_failed();
}

/// Only the defaulted one of rank and count is replaced by the provider's.
#[test]
fn a_given_count_stays_with_a_default_rank() {
    let exchange = Arc::new(Exchange::default());
    let destroyed = Arc::new(AtomicUsize::new(0));
    let device = Device::new("0");
    // The provider says rank 0 of 4; the caller asks for a channel of one.
    let provider = new_provider(0, 4, exchange, destroyed.clone());
    device.set_provider(provider);
    unsafe { iree_hal_hip_rs::hal_object::resource::release(provider) };
    let channel = device.channel(IREE_HAL_QUEUE_AFFINITY_ANY, &fresh_rccl_id("channels-test", "given-count"), IREE_HAL_CHANNEL_RANK_DEFAULT, 1).unwrap();
    assert_eq!(channel.rank_and_count(), (0, 1));
    drop(channel);
    drop(device);
    assert_eq!(destroyed.load(Ordering::SeqCst), 1);
}

//===----------------------------------------------------------------------===//
// Refusals
//===----------------------------------------------------------------------===//

#[test]
fn bad_channel_arguments_are_refused() {
    let device = Device::new("0,1");
    let id = fresh_rccl_id("channels-test", "refused");
    let refused = |affinity: u64, id: &[u8], rank: i32, count: i32| device.channel(affinity, id, rank, count).err().expect("refused");

    let (code, text) = refused(0b11, &id, 0, 1);
    assert_eq!(code, StatusCode::InvalidArgument, "{text}");
    assert!(text.contains("exactly one queue"), "{text}");
    let (code, text) = refused(1 << 5, &id, 0, 1);
    assert_eq!(code, StatusCode::InvalidArgument, "{text}");
    assert!(text.contains("names no queue"), "{text}");

    let (code, text) = refused(1, &[0u8; 128], 0, 1);
    assert_eq!(code, StatusCode::InvalidArgument, "{text}");
    assert!(text.contains("all zeros"), "{text}");

    let (code, text) = refused(1, &id[..16], 0, 1);
    assert_eq!(code, StatusCode::InvalidArgument, "{text}");
    assert!(text.contains("128 bytes") && text.contains("provided 16 bytes"), "{text}");

    for (rank, count) in [(IREE_HAL_CHANNEL_RANK_DEFAULT, 2), (0, IREE_HAL_CHANNEL_COUNT_DEFAULT)] {
        let (code, text) = refused(1, &id, rank, count);
        assert_eq!(code, StatusCode::InvalidArgument, "{text}");
        assert!(text.contains("no channel provider"), "{text}");
    }

    let (code, text) = refused(1, &[], 0, 1);
    assert_eq!(code, StatusCode::InvalidArgument, "{text}");
    assert!(text.contains("default collective channel ID requested but no channel provider"), "{text}");

    for (rank, count) in [(2, 2), (-2, 2), (0, 0)] {
        let (code, text) = refused(1, &id, rank, count);
        assert_eq!(code, StatusCode::InvalidArgument, "{text}");
        assert!(text.contains("participants"), "{text}");
    }

    // NULL id bytes with a length.
    let params = iree_hal_channel_params_t {
        flags: 0,
        id: iree_const_byte_span_t { data: core::ptr::null(), data_length: 128 },
        group: sv(""),
        rank: 0,
        count: 1,
    };
    let mut channel = core::ptr::null_mut();
    let text = assert_code(unsafe { (device.vtable().create_channel.unwrap())(device.device, 1, params, &mut channel) }, StatusCode::InvalidArgument);
    assert!(text.contains("params.id"), "{text}");

    // None of these made a channel: a valid one still can be.
    let channel = device.channel(1, &id, 0, 1).unwrap();
    assert_eq!(channel.rank_and_count(), (0, 1));
}

/// An RCCL error is a status naming the call, RCCL's error and its description: a split
/// with a negative color other than NO_COLOR (refused by RCCL before any rendezvous).
#[test]
fn rccl_errors_name_the_call_and_the_rccl_error() {
    let device = Device::new("0");
    let channel = device.channel(1, &fresh_rccl_id("channels-test", "rccl-error"), 0, 1).unwrap();
    let (code, text) = channel.split(-5, 0).err().expect("refused by RCCL");
    assert_eq!(code, StatusCode::InvalidArgument, "{text}");
    assert!(text.contains("ncclCommSplit failed: RCCL error ncclInvalidArgument (4): invalid argument"), "{text}");
    // The channel still works.
    assert_eq!(channel.split(0, 0).unwrap().unwrap().rank_and_count(), (0, 1));
}

/// Without librccl.so anywhere the driver looks: UNAVAILABLE naming where it looked, every
/// time. In a child process: "beside the loaded HIP library" is the directory HIP was first
/// loaded from in the process, which in this one may hold a librccl.so; and without cargo's
/// LD_LIBRARY_PATH, which names the build's directory, where a librccl.so lies.
#[test]
fn missing_rccl_is_unavailable_and_says_where_it_looked() {
    run_in_child("missing_rccl_child", &[("LD_LIBRARY_PATH", String::new())]);
}

#[test]
#[ignore = "run by missing_rccl_is_unavailable_and_says_where_it_looked in a child process"]
fn missing_rccl_child() {
    let device = Device::with_rccl("0", false);
    for _ in 0..2 {
        let (code, text) = device.channel(1, &fresh_rccl_id("channels-test", "no-rccl"), 0, 1).err().expect("no RCCL");
        assert_eq!(code, StatusCode::Unavailable, "{text}");
        assert!(text.contains("tried: librccl.so") && text.contains(&format!("tried: {}/librccl.so", library_dir(false))), "{text}");
        assert!(text.contains("creating a collective channel"), "{text}");
    }
}
