// The calls into IREE 3.13's allocation pools and notifications, for
// src/iree_3_13/pool.rs. A caller-supplied pool (queue_alloca with an
// iree_hal_pool_t) is IREE's object: this file reaches it through its vtable
// and reads the frontiers it hands out, compiled against IREE 3.13's headers so
// that every layout is the one of the IREE the library meets. The notification
// functions are weak references, as the async ones (async_glue.c).
#include <string.h>

#include "iree/async/frontier.h"
#include "iree/async/notification.h"
#include "iree/hal/pool.h"
#include "iree/hal/resource.h"

#pragma weak iree_async_notification_create
#pragma weak iree_async_notification_release
#pragma weak iree_async_notification_query_epoch

bool iree_hal_hip_rs_notification_available(void) {
  return iree_async_notification_create && iree_async_notification_release &&
         iree_async_notification_query_epoch;
}

iree_status_t iree_hal_hip_rs_notification_create(
    iree_async_proactor_t* proactor,
    iree_async_notification_t** out_notification) {
  return iree_async_notification_create(
      proactor, IREE_ASYNC_NOTIFICATION_FLAG_NONE, out_notification);
}

void iree_hal_hip_rs_notification_release(
    iree_async_notification_t* notification) {
  iree_async_notification_release(notification);
}

uint32_t iree_hal_hip_rs_notification_epoch(
    iree_async_notification_t* notification) {
  return iree_async_notification_query_epoch(notification);
}

static const iree_hal_pool_vtable_t* pool_vtable(iree_hal_pool_t* pool) {
  return (const iree_hal_pool_vtable_t*)((const iree_hal_resource_t*)pool)
      ->vtable;
}

// Acquires without a requester frontier (as IREE's own queues do): any block
// with a death frontier comes back as NEEDS_WAIT unless the pool's epoch query
// proves it complete. |out_wait_frontier| is the pool's, valid until the
// reservation is released.
iree_status_t iree_hal_hip_rs_pool_acquire(
    iree_hal_pool_t* pool, iree_device_size_t size,
    iree_device_size_t alignment, iree_hal_pool_reserve_flags_t flags,
    iree_hal_pool_reservation_t* out_reservation,
    const iree_async_frontier_t** out_wait_frontier, uint32_t* out_result) {
  iree_hal_pool_acquire_info_t info;
  memset(&info, 0, sizeof(info));
  iree_hal_pool_acquire_result_t result = IREE_HAL_POOL_ACQUIRE_EXHAUSTED;
  iree_status_t status = pool_vtable(pool)->acquire_reservation(
      pool, size, alignment, /*requester_frontier=*/NULL, flags,
      out_reservation, &info, &result);
  *out_wait_frontier = info.wait_frontier;
  *out_result = result;
  return status;
}

// Gives a reservation back with |death_frontier| (NULL: reusable at once).
void iree_hal_hip_rs_pool_release(iree_hal_pool_t* pool,
                                  const iree_hal_pool_reservation_t* reservation,
                                  const iree_async_frontier_t* death_frontier) {
  pool_vtable(pool)->release_reservation(pool, reservation, death_frontier);
}

// Gives a reservation back, reusable once |axis| reached |epoch|.
void iree_hal_hip_rs_pool_release_at(
    iree_hal_pool_t* pool, const iree_hal_pool_reservation_t* reservation,
    iree_async_axis_t axis, uint64_t epoch) {
  iree_async_single_frontier_t death_frontier;
  iree_async_single_frontier_initialize(&death_frontier, axis, epoch);
  pool_vtable(pool)->release_reservation(
      pool, reservation,
      iree_async_single_frontier_as_const_frontier(&death_frontier));
}

// A view of the reservation's bytes; the caller keeps the reservation.
iree_status_t iree_hal_hip_rs_pool_materialize(
    iree_hal_pool_t* pool, const iree_hal_buffer_params_t* params,
    const iree_hal_pool_reservation_t* reservation,
    iree_hal_buffer_t** out_buffer) {
  *out_buffer = NULL;
  return pool_vtable(pool)->materialize_reservation(
      pool, *params, reservation, IREE_HAL_POOL_MATERIALIZE_FLAG_NONE,
      out_buffer);
}

iree_async_notification_t* iree_hal_hip_rs_pool_notification(
    iree_hal_pool_t* pool) {
  return pool_vtable(pool)->notification(pool);
}

iree_host_size_t iree_hal_hip_rs_frontier_entry_count(
    const iree_async_frontier_t* frontier) {
  return frontier ? frontier->entry_count : 0;
}

void iree_hal_hip_rs_frontier_entry(const iree_async_frontier_t* frontier,
                                    iree_host_size_t index,
                                    iree_async_axis_t* out_axis,
                                    uint64_t* out_epoch) {
  *out_axis = frontier->entries[index].axis;
  *out_epoch = frontier->entries[index].epoch;
}
