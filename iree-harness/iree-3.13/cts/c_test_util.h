// What the 3.13 C tests beside the CTS share (queue_pool_test.c, external_*_test.c,
// executable_global_test.c): a fatal CHECK, a status printed and reduced to its code, and
// the driver, proactor pool and devices IREE 3.13 programs create.
#ifndef IREE_HAL_HIP_RS_313_C_TEST_UTIL_H_
#define IREE_HAL_HIP_RS_313_C_TEST_UTIL_H_

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "iree/async/util/proactor_pool.h"
#include "iree/base/api.h"
#include "iree/base/threading/numa.h"
#include "iree/hal/api.h"
#include "iree/hal/drivers/hip/registration/driver_module.h"

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

// Prints a failure (what the test expects to see) and returns its code.
static inline iree_status_code_t code_of(iree_status_t status) {
  iree_status_code_t code = iree_status_code(status);
  if (!iree_status_is_ok(status)) {
    iree_status_fprint(stdout, status);
    fprintf(stdout, "\n");
  }
  iree_status_free(status);
  return code;
}

// A proactor pool and the create params that carry it (IREE 3.13 devices need one).
typedef struct test_proactors_t {
  iree_async_proactor_pool_t* pool;
  iree_hal_device_create_params_t create_params;
} test_proactors_t;

static inline test_proactors_t test_proactors_create(void) {
  test_proactors_t proactors;
  proactors.pool = NULL;
  IREE_CHECK_OK(iree_async_proactor_pool_create(
      iree_numa_node_count(), NULL, iree_async_proactor_pool_options_default(),
      iree_allocator_system(), &proactors.pool));
  proactors.create_params = iree_hal_device_create_params_default();
  proactors.create_params.proactor_pool = proactors.pool;
  return proactors;
}

// The "hip" driver as IREE's registry creates it (our registration).
static inline iree_hal_driver_t* test_registered_driver(void) {
  iree_hal_driver_registry_t* registry = iree_hal_driver_registry_default();
  IREE_CHECK_OK(iree_hal_hip_driver_module_register(registry));
  iree_hal_driver_t* driver = NULL;
  IREE_CHECK_OK(iree_hal_driver_registry_try_create(
      registry, IREE_SV("hip"), iree_allocator_system(), &driver));
  return driver;
}

static inline iree_hal_device_t* test_default_device(
    iree_hal_driver_t* driver, const test_proactors_t* proactors) {
  iree_hal_device_t* device = NULL;
  IREE_CHECK_OK(iree_hal_driver_create_default_device(
      driver, &proactors->create_params, iree_allocator_system(), &device));
  return device;
}

static inline iree_hal_semaphore_t* test_semaphore(iree_hal_device_t* device) {
  iree_hal_semaphore_t* semaphore = NULL;
  IREE_CHECK_OK(iree_hal_semaphore_create(device, IREE_HAL_QUEUE_AFFINITY_ANY, 0,
                                          IREE_HAL_SEMAPHORE_FLAG_DEFAULT,
                                          &semaphore));
  return semaphore;
}

// The libamdhip64.so that IREE_HIP_DYLIB_PATH names (the one the driver loads), opened
// for the test's own HIP calls, initialized, with device 0 current.
static inline void* test_open_hip(void) {
  const char* dir = getenv("IREE_HIP_DYLIB_PATH");
  CHECK(dir);
  char path[4096];
  snprintf(path, sizeof(path), "%s/libamdhip64.so", dir);
  void* hip = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  CHECK(hip);
  int (*hip_init)(unsigned) = (int (*)(unsigned))dlsym(hip, "hipInit");
  int (*hip_set_device)(int) = (int (*)(int))dlsym(hip, "hipSetDevice");
  CHECK(hip_init && hip_set_device);
  CHECK(hip_init(0) == 0);
  CHECK(hip_set_device(0) == 0);
  return hip;
}

#endif  // IREE_HAL_HIP_RS_313_C_TEST_UTIL_H_
