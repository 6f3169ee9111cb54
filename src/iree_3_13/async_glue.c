// The calls of IREE 3.13's async semaphore and proactor pool functions, for
// src/iree_3_13/async.rs. Under IREE 3.13 a HAL semaphore is an IREE async
// semaphore: IREE's core owns its timeline, failure and timepoints, and waits on
// it without asking the driver. This file is compiled against IREE 3.13's
// headers, so the structures it touches have the layout of the IREE the library
// meets; the functions come from that IREE (linked into the program, or the
// shared runtime the library is preloaded beside). They are weak references: a
// process without them (the library loaded alone) gets a clear status from
// iree_hal_hip_rs_async_available() instead of a failed load.
#include "async_glue.h"

#pragma weak iree_async_semaphore_initialize
#pragma weak iree_async_semaphore_deinitialize
#pragma weak iree_async_semaphore_advance_timeline
#pragma weak iree_async_semaphore_dispatch_timepoints
#pragma weak iree_async_semaphore_fail
#pragma weak iree_async_semaphore_multi_wait
#pragma weak iree_async_semaphore_acquire_timepoint
#pragma weak iree_async_proactor_pool_retain
#pragma weak iree_async_proactor_pool_release
#pragma weak iree_async_proactor_pool_get

bool iree_hal_hip_rs_async_available(void) {
  return iree_async_semaphore_initialize && iree_async_semaphore_deinitialize &&
         iree_async_semaphore_advance_timeline &&
         iree_async_semaphore_dispatch_timepoints && iree_async_semaphore_fail &&
         iree_async_semaphore_multi_wait &&
         iree_async_semaphore_acquire_timepoint &&
         iree_async_proactor_pool_retain && iree_async_proactor_pool_release &&
         iree_async_proactor_pool_get;
}

// |frontier_offset|: where, inside |semaphore|'s allocation, IREE may keep the
// semaphore's frontier (no entries: the driver records no causal frontier).
void iree_hal_hip_rs_async_semaphore_initialize(
    const iree_async_semaphore_vtable_t* vtable, iree_async_proactor_t* proactor,
    uint64_t initial_value, iree_host_size_t frontier_offset,
    iree_async_semaphore_t* semaphore) {
  iree_async_semaphore_initialize(vtable, proactor, initial_value,
                                  frontier_offset, 0, semaphore);
}

void iree_hal_hip_rs_async_semaphore_deinitialize(
    iree_async_semaphore_t* semaphore) {
  iree_async_semaphore_deinitialize(semaphore);
}

uint64_t iree_hal_hip_rs_async_semaphore_value(
    iree_async_semaphore_t* semaphore) {
  return (uint64_t)iree_atomic_load(&semaphore->timeline_value,
                                    iree_memory_order_acquire);
}

// The first failure, still owned by the semaphore (NULL: none).
iree_status_t iree_hal_hip_rs_async_semaphore_failure(
    iree_async_semaphore_t* semaphore) {
  return (iree_status_t)iree_atomic_load(&semaphore->failure_status,
                                         iree_memory_order_acquire);
}

iree_status_t iree_hal_hip_rs_async_semaphore_signal(
    iree_async_semaphore_t* semaphore, uint64_t value) {
  iree_status_t status =
      iree_async_semaphore_advance_timeline(semaphore, value, NULL);
  if (iree_status_is_ok(status)) {
    iree_async_semaphore_dispatch_timepoints(semaphore, value);
  }
  return status;
}

// Takes ownership of |status|.
void iree_hal_hip_rs_async_semaphore_fail(iree_async_semaphore_t* semaphore,
                                          iree_status_t status) {
  iree_async_semaphore_fail(semaphore, status);
}

iree_status_t iree_hal_hip_rs_async_semaphore_multi_wait(
    iree_async_wait_mode_t wait_mode, iree_async_semaphore_t** semaphores,
    const uint64_t* minimum_values, iree_host_size_t count,
    iree_timeout_t timeout, iree_async_wait_flags_t flags,
    iree_allocator_t allocator) {
  return iree_async_semaphore_multi_wait(wait_mode, semaphores, minimum_values,
                                         count, timeout, flags, allocator);
}

// |timepoint| stays at its address until |callback| ran; |callback| may run
// before this returns.
iree_status_t iree_hal_hip_rs_async_semaphore_acquire_timepoint(
    iree_async_semaphore_t* semaphore, uint64_t minimum_value,
    iree_async_semaphore_timepoint_t* timepoint,
    iree_async_semaphore_timepoint_fn_t callback, void* user_data) {
  timepoint->callback = callback;
  timepoint->user_data = user_data;
  return iree_async_semaphore_acquire_timepoint(semaphore, minimum_value,
                                                timepoint);
}

void iree_hal_hip_rs_async_proactor_pool_retain(
    iree_async_proactor_pool_t* pool) {
  iree_async_proactor_pool_retain(pool);
}

void iree_hal_hip_rs_async_proactor_pool_release(
    iree_async_proactor_pool_t* pool) {
  iree_async_proactor_pool_release(pool);
}

iree_status_t iree_hal_hip_rs_async_proactor_pool_get(
    iree_async_proactor_pool_t* pool, iree_host_size_t index,
    iree_async_proactor_t** out_proactor) {
  return iree_async_proactor_pool_get(pool, index, out_proactor);
}
