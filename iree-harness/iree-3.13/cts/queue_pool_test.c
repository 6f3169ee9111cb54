// Caller-supplied queue allocation pools through our driver's 3.13 build, beyond what IREE's
// CTS (QueueAllocaTest.Explicit*) checks:
// 1. the backend's epoch query: a fixed-block pool made with it reuses its one block on the
//    same queue once the dealloca finished, with no wait and no flag (the CTS makes its pools
//    without the query, so every reuse there is a wait);
// 2. the bytes are the pool's: two allocas reusing one block see the same device memory;
// 3. an affinity naming no queue is INVALID_ARGUMENT (what the CTS reads as "one queue");
// 4. an alloca parked on an exhausted pool when its device goes away fails its signal
//    semaphore (CANCELLED) instead of hanging, and its buffer is still released cleanly.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iree/async/frontier_tracker.h"
#include "iree/hal/memory/fixed_block_pool.h"

#include "c_test_util.h"

static const iree_hal_queue_affinity_t kQueue0 = 1;
static const iree_device_size_t kBlockSize = 4096;

static iree_hal_buffer_params_t alloca_params(void) {
  iree_hal_buffer_params_t params = {0};
  params.type = IREE_HAL_MEMORY_TYPE_OPTIMAL_FOR_DEVICE;
  params.access = IREE_HAL_MEMORY_ACCESS_ALL;
  params.usage =
      IREE_HAL_BUFFER_USAGE_TRANSFER | IREE_HAL_BUFFER_USAGE_DISPATCH_STORAGE;
  return params;
}

static void wait_for(iree_hal_semaphore_t* semaphore, uint64_t value) {
  IREE_CHECK_OK(iree_hal_semaphore_wait(semaphore, value,
                                        iree_infinite_timeout(),
                                        IREE_ASYNC_WAIT_FLAG_NONE));
}

// A one-block pool from the device's backend for queue 0, with or without its epoch query.
static iree_hal_pool_t* one_block_pool(iree_hal_device_t* device,
                                       bool with_epoch_query) {
  iree_hal_queue_pool_backend_t backend;
  memset(&backend, 0, sizeof(backend));
  IREE_CHECK_OK(
      iree_hal_device_query_queue_pool_backend(device, kQueue0, &backend));
  CHECK(backend.slab_provider && backend.notification && backend.epoch_query.fn);
  iree_hal_fixed_block_pool_options_t options;
  memset(&options, 0, sizeof(options));
  options.block_allocator_options.block_size = kBlockSize;
  options.block_allocator_options.block_count = 1;
  options.block_allocator_options.frontier_capacity = 2;
  iree_hal_pool_t* pool = NULL;
  IREE_CHECK_OK(iree_hal_fixed_block_pool_create(
      options, backend.slab_provider, backend.notification,
      with_epoch_query ? backend.epoch_query : iree_hal_pool_epoch_query_null(),
      iree_allocator_system(), &pool));
  return pool;
}

// queue_alloca of one block on queue 0 signalling |signal| to 1.
static iree_hal_buffer_t* alloca_block(iree_hal_device_t* device,
                                       iree_hal_pool_t* pool,
                                       iree_hal_semaphore_t* signal,
                                       iree_hal_alloca_flags_t flags) {
  uint64_t one = 1;
  iree_hal_semaphore_list_t signals = {1, &signal, &one};
  iree_hal_buffer_t* buffer = NULL;
  IREE_CHECK_OK(iree_hal_device_queue_alloca(
      device, kQueue0, iree_hal_semaphore_list_empty(), signals, pool,
      alloca_params(), kBlockSize, flags, &buffer));
  CHECK(buffer);
  return buffer;
}

static void dealloca_and_wait(iree_hal_device_t* device,
                              iree_hal_buffer_t* buffer) {
  iree_hal_semaphore_t* done = test_semaphore(device);
  uint64_t one = 1;
  iree_hal_semaphore_list_t signals = {1, &done, &one};
  IREE_CHECK_OK(iree_hal_device_queue_dealloca(
      device, kQueue0, iree_hal_semaphore_list_empty(), signals, buffer,
      IREE_HAL_DEALLOCA_FLAG_NONE));
  wait_for(done, 1);
  iree_hal_semaphore_release(done);
}

static void fill_and_wait(iree_hal_device_t* device, iree_hal_buffer_t* buffer,
                          uint32_t pattern) {
  iree_hal_semaphore_t* done = test_semaphore(device);
  uint64_t one = 1;
  iree_hal_semaphore_list_t signals = {1, &done, &one};
  IREE_CHECK_OK(iree_hal_device_queue_fill(
      device, kQueue0, iree_hal_semaphore_list_empty(), signals, buffer, 0,
      kBlockSize, &pattern, sizeof(pattern), IREE_HAL_FILL_FLAG_NONE));
  wait_for(done, 1);
  iree_hal_semaphore_release(done);
}

static uint32_t first_word(iree_hal_device_t* device, iree_hal_buffer_t* buffer) {
  uint32_t word = 0;
  IREE_CHECK_OK(iree_hal_device_transfer_d2h(
      device, buffer, 0, &word, sizeof(word),
      IREE_HAL_TRANSFER_BUFFER_FLAG_DEFAULT, iree_infinite_timeout()));
  return word;
}

static void test_epoch_query_reuse(iree_hal_device_t* device) {
  iree_hal_pool_t* pool = one_block_pool(device, /*with_epoch_query=*/true);

  iree_hal_semaphore_t* first_ready = test_semaphore(device);
  iree_hal_buffer_t* first =
      alloca_block(device, pool, first_ready, IREE_HAL_ALLOCA_FLAG_NONE);
  wait_for(first_ready, 1);
  fill_and_wait(device, first, 0x5EED5EEDu);
  dealloca_and_wait(device, first);
  iree_hal_buffer_release(first);

  // The dealloca finished: the epoch query proves it, so no flag is needed.
  iree_hal_semaphore_t* second_ready = test_semaphore(device);
  iree_hal_buffer_t* second =
      alloca_block(device, pool, second_ready, IREE_HAL_ALLOCA_FLAG_NONE);
  wait_for(second_ready, 1);
  iree_hal_pool_stats_t stats;
  iree_hal_pool_query_stats(pool, &stats);
  CHECK(stats.wait_count == 0);
  CHECK(stats.reuse_count == 1);
  // The same block: what the first buffer wrote is there.
  CHECK(first_word(device, second) == 0x5EED5EEDu);
  dealloca_and_wait(device, second);
  iree_hal_buffer_release(second);

  iree_hal_semaphore_release(second_ready);
  iree_hal_semaphore_release(first_ready);
  iree_hal_pool_release(pool);
  printf("epoch query reuse: ok\n");
}

static void test_unknown_queue(iree_hal_device_t* device) {
  iree_hal_queue_pool_backend_t backend;
  memset(&backend, 0, sizeof(backend));
  CHECK(code_of(iree_hal_device_query_queue_pool_backend(
            device, ((iree_hal_queue_affinity_t)1) << 5, &backend)) ==
        IREE_STATUS_INVALID_ARGUMENT);
  printf("unknown queue: ok\n");
}

// Destroys |device| and its |group| (which the caller created) with an alloca parked on a
// pool. (IREE asks
// that a device outlive the pools made from its backend; our slab provider keeps what it
// needs, so the pool's release after the device's is safe here.)
static void test_parked_alloca_cancelled(iree_hal_device_t* device,
                                         iree_hal_device_group_t* group) {
  iree_hal_pool_t* pool = one_block_pool(device, /*with_epoch_query=*/false);
  iree_hal_semaphore_t* held_ready = test_semaphore(device);
  iree_hal_buffer_t* held =
      alloca_block(device, pool, held_ready, IREE_HAL_ALLOCA_FLAG_NONE);
  wait_for(held_ready, 1);

  iree_hal_semaphore_t* parked_ready = test_semaphore(device);
  iree_hal_buffer_t* parked = alloca_block(
      device, pool, parked_ready, IREE_HAL_ALLOCA_FLAG_ALLOW_POOL_WAIT_FRONTIER);
  iree_hal_pool_stats_t stats;
  iree_hal_pool_query_stats(pool, &stats);
  CHECK(stats.exhausted_count >= 1);

  iree_hal_device_group_release(group);
  iree_hal_device_release(device);
  iree_status_code_t code = code_of(iree_hal_semaphore_wait(
      parked_ready, 1, iree_infinite_timeout(), IREE_ASYNC_WAIT_FLAG_NONE));
  CHECK(code == IREE_STATUS_CANCELLED);

  iree_hal_buffer_release(parked);
  iree_hal_buffer_release(held);
  iree_hal_semaphore_release(parked_ready);
  iree_hal_semaphore_release(held_ready);
  iree_hal_pool_release(pool);
  printf("parked alloca cancelled with its device: ok\n");
}

int main(void) {
  iree_allocator_t host_allocator = iree_allocator_system();
  iree_hal_driver_t* driver = test_registered_driver();
  test_proactors_t proactors = test_proactors_create();
  // IREE's core offers pool backends only for devices in a device group.
  iree_async_frontier_tracker_t* tracker = NULL;
  IREE_CHECK_OK(iree_async_frontier_tracker_create(
      iree_async_frontier_tracker_options_default(), host_allocator, &tracker));

  iree_hal_device_t* device = test_default_device(driver, &proactors);
  iree_hal_device_group_t* group = NULL;
  IREE_CHECK_OK(iree_hal_device_group_create_from_device(device, tracker,
                                                         host_allocator, &group));
  test_epoch_query_reuse(device);
  test_unknown_queue(device);
  iree_hal_device_group_release(group);
  iree_hal_device_release(device);

  device = test_default_device(driver, &proactors);
  IREE_CHECK_OK(iree_hal_device_group_create_from_device(device, tracker,
                                                         host_allocator, &group));
  test_parked_alloca_cancelled(device, group);

  iree_async_frontier_tracker_release(tracker);
  iree_async_proactor_pool_release(proactors.pool);
  iree_hal_driver_release(driver);
  printf("queue_pool_test: all passed\n");
  return 0;
}
