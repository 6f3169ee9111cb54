// Every struct the library shares with IREE, with every field. Included twice: once by
// layout_ours.c under our header, once by layout_iree.c under IREE v3.3.0's headers, each
// time with STRUCT/FIELD defined to record sizeof/offsetof, so layout_test.c can compare.
STRUCT(iree_string_view_t)
FIELD(iree_string_view_t, data)
FIELD(iree_string_view_t, size)

STRUCT(iree_string_pair_t)
FIELD(iree_string_pair_t, key)
FIELD(iree_string_pair_t, value)

STRUCT(iree_allocator_t)
FIELD(iree_allocator_t, self)
FIELD(iree_allocator_t, ctl)

STRUCT(iree_allocator_alloc_params_t)
FIELD(iree_allocator_alloc_params_t, byte_length)

STRUCT(iree_status_code_t)
STRUCT(iree_status_t)
STRUCT(iree_allocator_command_t)
STRUCT(iree_host_size_t)
STRUCT(iree_device_size_t)
STRUCT(iree_hal_device_id_t)

STRUCT(iree_hal_resource_t)
FIELD(iree_hal_resource_t, ref_count)
FIELD(iree_hal_resource_t, vtable)

STRUCT(iree_hal_device_info_t)
FIELD(iree_hal_device_info_t, device_id)
FIELD(iree_hal_device_info_t, path)
FIELD(iree_hal_device_info_t, name)

STRUCT(iree_hal_driver_info_t)
FIELD(iree_hal_driver_info_t, driver_name)
FIELD(iree_hal_driver_info_t, full_name)

STRUCT(iree_hal_driver_vtable_t)
FIELD(iree_hal_driver_vtable_t, destroy)
FIELD(iree_hal_driver_vtable_t, query_available_devices)
FIELD(iree_hal_driver_vtable_t, dump_device_info)
FIELD(iree_hal_driver_vtable_t, create_device_by_id)
FIELD(iree_hal_driver_vtable_t, create_device_by_path)

STRUCT(iree_hal_driver_factory_t)
FIELD(iree_hal_driver_factory_t, self)
FIELD(iree_hal_driver_factory_t, enumerate)
FIELD(iree_hal_driver_factory_t, try_create)

STRUCT(iree_hal_hip_command_buffer_mode_t)
STRUCT(iree_hal_hip_nccl_id_t)
FIELD(iree_hal_hip_nccl_id_t, data)

STRUCT(iree_hal_hip_memory_pool_params_t)
FIELD(iree_hal_hip_memory_pool_params_t, minimum_capacity)
FIELD(iree_hal_hip_memory_pool_params_t, release_threshold)

STRUCT(iree_hal_hip_memory_pooling_params_t)
FIELD(iree_hal_hip_memory_pooling_params_t, device_local)
FIELD(iree_hal_hip_memory_pooling_params_t, other)

STRUCT(iree_hal_hip_device_params_t)
FIELD(iree_hal_hip_device_params_t, queue_count)
FIELD(iree_hal_hip_device_params_t, arena_block_size)
FIELD(iree_hal_hip_device_params_t, event_pool_capacity)
FIELD(iree_hal_hip_device_params_t, command_buffer_mode)
FIELD(iree_hal_hip_device_params_t, stream_tracing)
FIELD(iree_hal_hip_device_params_t, async_allocations)
FIELD(iree_hal_hip_device_params_t, file_transfer_buffer_size)
FIELD(iree_hal_hip_device_params_t, file_transfer_chunk_size)
FIELD(iree_hal_hip_device_params_t, memory_pools)
FIELD(iree_hal_hip_device_params_t, allow_inline_execution)

STRUCT(iree_hal_hip_driver_options_t)
FIELD(iree_hal_hip_driver_options_t, default_device_index)
FIELD(iree_hal_hip_driver_options_t, hip_lib_search_paths)
FIELD(iree_hal_hip_driver_options_t, hip_lib_search_path_count)
