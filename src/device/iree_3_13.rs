//! IREE 3.13's device vtable entries, over the same device: the ones whose signatures
//! changed (semaphores take a queue affinity, allocations a pool and flags, executions
//! flags, caches no loop) and the ones 3.13 added (capabilities, topology, queue host calls
//! and dispatches, external capture).

use super::{with_default_buffer_params, HipDevice};
use crate::abi::*;
use crate::hal_object::{self, BindingTable, BufferRefList, ConstBytes, Live, Mut, Nullable, Ours, Out, SemaphoreList};
use crate::hal_object::thunk::DispatchConfig;
use crate::semaphore::Semaphore;

/// Flags this driver knows for each entry; others are refused rather than ignored.
const KNOWN_ALLOCA_FLAGS: iree_hal_alloca_flags_t = IREE_HAL_ALLOCA_FLAG_INDETERMINATE_LIFETIME as u64 | IREE_HAL_ALLOCA_FLAG_ALLOW_POOL_WAIT_FRONTIER as u64;
const KNOWN_DEALLOCA_FLAGS: iree_hal_dealloca_flags_t = IREE_HAL_DEALLOCA_FLAG_PREFER_ORIGIN as u64;
const KNOWN_EXECUTE_FLAGS: iree_hal_execute_flags_t = IREE_HAL_EXECUTE_FLAG_BORROW_BINDING_TABLE_LIFETIME as u64;
const KNOWN_HOST_CALL_FLAGS: iree_hal_host_call_flags_t =
    IREE_HAL_HOST_CALL_FLAG_NON_BLOCKING as u64 | IREE_HAL_HOST_CALL_FLAG_WAIT_ACTIVE as u64 | IREE_HAL_HOST_CALL_FLAG_RELAXED as u64;

fn check_flags(entry: &str, flags: u64, known: u64) -> crate::status::Result<()> {
    if flags & !known != 0 {
        return Err(crate::status!(InvalidArgument, "{entry}: unknown flags {:#x}", flags & !known));
    }
    Ok(())
}

crate::hal_thunks! {
    /// Nothing beyond what `query_i64` reports, as IREE's C driver.
    pub(super) fn device_query_capabilities(_device: Ours<HipDevice>, out_capabilities: Mut<iree_hal_device_capabilities_t>) -> Status {
        *out_capabilities = iree_hal_device_capabilities_t::default();
        Ok(())
    }

    pub(super) fn device_topology_info(device: Ours<HipDevice>) -> *const iree_hal_device_topology_info_t [fallback: core::ptr::null()] {
        // The value lives in the device, which outlives every caller of this.
        &device.topology.lock().0 as *const iree_hal_device_topology_info_t
    }

    /// The edge IREE derived from the capabilities stands; HIP adds nothing to it.
    pub(super) fn device_refine_topology_edge(
        _src_device: Ours<HipDevice>,
        _dst_device: *mut iree_hal_device_t,
        _edge: *mut iree_hal_topology_edge_t,
    ) -> Status {
        Ok(())
    }

    /// Keeps IREE's topology for the device (NULL clears it). The driver records no causal
    /// frontiers, so the frontier tracker is not used.
    pub(super) fn device_assign_topology_info(device: Ours<HipDevice>, topology_info: *const iree_hal_device_topology_info_t) -> Status {
        // SAFETY: NULL or readable for the call (IREE's contract).
        let info = unsafe { topology_info.as_ref() };
        *device.topology.lock() = crate::iree_3_13::TopologyInfo(info.copied().unwrap_or_default());
        Ok(())
    }

    pub(super) fn device_create_executable_cache(
        device: Ours<HipDevice>,
        _identifier: iree_string_view_t,
        out_executable_cache: Out<*mut iree_hal_executable_cache_t>,
    ) -> Status {
        out_executable_cache.set(crate::executable_cache::HipExecutableCache::create(device)?);
        Ok(())
    }

    /// Semaphores work on every queue of the device, whatever the affinity.
    pub(super) fn device_create_semaphore(
        device: Ours<HipDevice>,
        _queue_affinity: iree_hal_queue_affinity_t,
        initial_value: u64,
        _flags: iree_hal_semaphore_flags_t,
        out_semaphore: Out<*mut iree_hal_semaphore_t>,
    ) -> Status {
        out_semaphore.set(Semaphore::create(initial_value, &device.proactor, std::sync::Arc::downgrade(&device.timepoint_gates), device.host_allocator.0)?);
        Ok(())
    }

    /// What callers build queue allocation pools from, for the one queue the affinity
    /// names (IREE's C driver offers none): `crate::queue_pool`.
    pub(super) fn device_query_queue_pool_backend(
        device: Ours<HipDevice>,
        queue_affinity: iree_hal_queue_affinity_t,
        out_backend: Mut<iree_hal_queue_pool_backend_t>,
    ) -> Status {
        let queue_index = device.queue_index(queue_affinity)?;
        let parts = crate::queue_pool::BackendParts { hip: &device.hip, gpus: &device.gpus, device: hal_object::as_raw(device), proactor: device.proactor.proactor() };
        *out_backend = device.queue_pools.backend(queue_index, parts)?;
        Ok(())
    }

    pub(super) fn device_queue_alloca(
        device: Ours<HipDevice>,
        queue_affinity: iree_hal_queue_affinity_t,
        wait_semaphore_list: SemaphoreList,
        signal_semaphore_list: SemaphoreList,
        pool: *mut iree_hal_pool_t,
        params: iree_hal_buffer_params_t,
        allocation_size: iree_device_size_t,
        flags: iree_hal_alloca_flags_t,
        out_buffer: Out<*mut iree_hal_buffer_t>,
    ) -> Status {
        check_flags("queue_alloca", flags, KNOWN_ALLOCA_FLAGS)?;
        // An empty allocation needs no pool memory: it takes the device's own path.
        if !pool.is_null() && allocation_size != 0 {
            let queue_index = device.queue_index(queue_affinity)?;
            let buffer = device.queue_pools.alloca(crate::queue_pool::PoolAlloca {
                device: hal_object::as_raw(device),
                queue_index,
                waits: wait_semaphore_list,
                signals: signal_semaphore_list,
                pool,
                params,
                allocation_size,
                allow_wait_frontier: flags & IREE_HAL_ALLOCA_FLAG_ALLOW_POOL_WAIT_FRONTIER as u64 != 0,
                hip: device.hip.clone(),
            })?;
            // Its memory event (the pool's allocations run on the pools' own thread, not as
            // queue operations).
            device.note_alloca(buffer, queue_index, &params, allocation_size);
            out_buffer.set(buffer);
            return Ok(());
        }
        out_buffer.set(device.queue_alloca(queue_affinity, wait_semaphore_list, signal_semaphore_list, with_default_buffer_params(params), allocation_size)?);
        Ok(())
    }

    pub(super) fn device_queue_dealloca(
        device: Ours<HipDevice>,
        queue_affinity: iree_hal_queue_affinity_t,
        wait_semaphore_list: SemaphoreList,
        signal_semaphore_list: SemaphoreList,
        buffer: Live<iree_hal_buffer_t>,
        flags: iree_hal_dealloca_flags_t,
    ) -> Status {
        check_flags("queue_dealloca", flags, KNOWN_DEALLOCA_FLAGS)?;
        device.submit_dealloca(queue_affinity, wait_semaphore_list, signal_semaphore_list, buffer)
    }

    /// The call runs on the queue's stream once the waits and the work queued before it are
    /// done (a HIP host function), then signals, or fails, the signal semaphores; a
    /// DEFERRED call signals them itself later. A NON_BLOCKING call gets no semaphores: they
    /// are signalled when the queue reaches the call, and the call runs on a thread of its
    /// own so that the queue does not wait for it.
    pub(super) fn device_queue_host_call(
        device: Ours<HipDevice>,
        queue_affinity: iree_hal_queue_affinity_t,
        wait_semaphore_list: SemaphoreList,
        signal_semaphore_list: SemaphoreList,
        call: iree_hal_host_call_t,
        args: *const u64,
        flags: iree_hal_host_call_flags_t,
    ) -> Status {
        check_flags("queue_host_call", flags, KNOWN_HOST_CALL_FLAGS)?;
        // SAFETY: IREE's contract: `args` holds four values (read now: the call gets a copy).
        let call = unsafe { crate::iree_3_13::HostCall::new(hal_object::as_raw(device), queue_affinity, call, args) }?;
        let signals = crate::semaphore::retain_list(signal_semaphore_list)?;
        let non_blocking = flags & IREE_HAL_HOST_CALL_FLAG_NON_BLOCKING as u64 != 0;
        if non_blocking {
            // The queue signals when it reaches the call; the call itself runs aside.
            let issue: crate::queue::IssueFn = Box::new(move |_| {
                std::thread::Builder::new()
                    .name("iree-hal-hip-host-call".into())
                    .spawn(move || call.run(&[]))
                    .map(|_| ())
                    .map_err(|error| crate::status!(ResourceExhausted, "queue_host_call: cannot start the call's thread: {error}"))
            });
            return device.submit("queue_host_call", queue_affinity, wait_semaphore_list, signal_semaphore_list, issue, Vec::new());
        }
        // The call signals them itself; a lost queue (the call never runs) fails them.
        let held = crate::queue::CalledSignals(signals.iter().map(|(semaphore, _)| Some(semaphore.clone())).collect());
        let issue: crate::queue::IssueFn = Box::new(move |stream| {
            crate::hip::host_func::launch(stream.hip, stream.stream, (call, signals), |(call, signals)| call.run(&signals))
            .map_err(|(status, _)| status)
        });
        let keep_alive: Vec<Box<dyn crate::queue::Held>> = vec![Box::new(held)];
        device.submit("queue_host_call", queue_affinity, wait_semaphore_list, hal_object::SemaphoreListView { semaphores: &[], values: &[] }, issue, keep_alive)
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn device_queue_dispatch(
        device: Ours<HipDevice>,
        queue_affinity: iree_hal_queue_affinity_t,
        wait_semaphore_list: SemaphoreList,
        signal_semaphore_list: SemaphoreList,
        executable: Nullable<iree_hal_executable_t>,
        function: iree_hal_executable_function_t,
        config: DispatchConfig,
        constants: ConstBytes,
        bindings: BufferRefList,
        flags: iree_hal_dispatch_flags_t,
    ) -> Status {
        let spec = crate::command_buffer::CommandBufferSpec {
            mode: IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT,
            categories: IREE_HAL_COMMAND_CATEGORY_DISPATCH,
            queue_affinity,
            binding_capacity: 0,
            execution_mode: device.params.command_buffer_mode,
            device_allocator: device.device_allocator.lock().as_ref().map_or(core::ptr::null_mut(), |allocator| allocator.as_ptr()),
            inline_target: None,
            graph_target: None,
        };
        let (issue, keep_alive) =
            crate::command_buffer::prepare_single_dispatch(device.hip.clone(), spec, executable, function, config, constants, bindings, flags)?;
        device.submit("queue_dispatch", queue_affinity, wait_semaphore_list, signal_semaphore_list, issue, keep_alive)
    }

    pub(super) fn device_queue_execute(
        device: Ours<HipDevice>,
        queue_affinity: iree_hal_queue_affinity_t,
        wait_semaphore_list: SemaphoreList,
        signal_semaphore_list: SemaphoreList,
        command_buffer: Nullable<iree_hal_command_buffer_t>,
        binding_table: BindingTable,
        flags: iree_hal_execute_flags_t,
    ) -> Status {
        // Borrowing the binding table's lifetime is an allowance; retaining is always right.
        check_flags("queue_execute", flags, KNOWN_EXECUTE_FLAGS)?;
        let prepared = crate::command_buffer::prepare_execution(command_buffer, binding_table)?;
        device.submit_execution(queue_affinity, wait_semaphore_list, signal_semaphore_list, prepared)
    }

    /// External capture tools (RenderDoc-like) are not wired to HIP (as IREE's C driver).
    pub(super) fn device_external_capture_begin(_device: Ours<HipDevice>, _options: *const iree_hal_device_external_capture_options_t) -> Status {
        Err(crate::status!(Unimplemented, "HIP external capture is not supported by this driver"))
    }

    pub(super) fn device_external_capture_end(_device: Ours<HipDevice>) -> Status {
        Err(crate::status!(Unimplemented, "HIP external capture is not supported by this driver"))
    }
}
