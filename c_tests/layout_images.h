// Byte images of the C bit-fields and union overlays that our header mirrors with plain
// fields. IMAGE(T, what, IREE_INIT, OURS_INIT): a T initialized with IREE_INIT under IREE's
// headers must have the same bytes as a T initialized with OURS_INIT under ours. Each
// initializer is a single designator (no commas: these are macro arguments). The expected
// bit positions are those of the Itanium C ABI on little-endian targets (GCC and Clang on
// x86_64 and aarch64).
IMAGE(iree_hal_buffer_ref_t, reserved, .reserved = 0x5A, .reserved_and_buffer_slot = 0x5Au)
IMAGE(iree_hal_buffer_ref_t, buffer_slot, .buffer_slot = 0xABCDEF, .reserved_and_buffer_slot = 0xABCDEF00u)
IMAGE(iree_hal_buffer_mapping_impl_t, is_persistent, .is_persistent = 1, .is_persistent_bits = 1)
IMAGE(iree_hal_buffer_mapping_impl_t, reserved_flags, .reserved_flags = 0x7FFFFFFF, .reserved_flags_bits = 0x7FFFFFFFu)
IMAGE(iree_hal_command_buffer_validation_state_t, has_began, .has_began = -1, .has_began_has_ended_debug_group_depth = 1)
IMAGE(iree_hal_command_buffer_validation_state_t, has_ended, .has_ended = -1, .has_began_has_ended_debug_group_depth = 2)
IMAGE(iree_hal_command_buffer_validation_state_t, debug_group_depth, .debug_group_depth = 5, .has_began_has_ended_debug_group_depth = 5 << 2)
IMAGE(iree_hal_collective_op_t, kind, .kind = 0x11, .packed = 0x11u)
IMAGE(iree_hal_collective_op_t, reduction, .reduction = 0x22, .packed = 0x2200u)
IMAGE(iree_hal_collective_op_t, element_type, .element_type = 0x33, .packed = 0x330000u)
IMAGE(iree_hal_collective_op_t, reserved, .reserved = 0x44, .packed = 0x44000000u)
IMAGE(iree_hal_label_color_t, r, .r = 0x11, .value = 0x11u)
IMAGE(iree_hal_label_color_t, g, .g = 0x22, .value = 0x2200u)
IMAGE(iree_hal_label_color_t, b, .b = 0x33, .value = 0x330000u)
IMAGE(iree_hal_label_color_t, a, .a = 0x44, .value = 0x44000000u)
IMAGE(iree_wait_source_t, storage_0, .storage[0] = 0x1122334455667788ull, .self = (void*)0x1122334455667788ull)
IMAGE(iree_wait_source_t, storage_1, .storage[1] = 0x99AABBCCDDEEFF00ull, .data = 0x99AABBCCDDEEFF00ull)
