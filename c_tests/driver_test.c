// The HIP driver from C: registered in the default registry, created by name, devices
// enumerated, described and resolved by path, with the errors a user meets. Runs against
// the software HIP device (IREE_HIP_DYLIB_PATH, set by CTest).
//
// The same file builds three ways: against our header and library alone, against IREE
// v3.3.0's own headers and C runtime with our library in place of IREE's C HIP driver
// (DRIVER_TEST_WITH_IREE_RUNTIME), and so against IREE 3.13 with our library's 3.13 build
// (also DRIVER_TEST_IREE_3_13: devices take IREE 3.13's create params, with a proactor
// pool); the few calls that differ go through the adapters below.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(DRIVER_TEST_WITH_IREE_RUNTIME)
#include "iree/base/api.h"
#include "iree/hal/api.h"
#include "iree/hal/drivers/hip/api.h"
#include "iree/hal/drivers/hip/registration/driver_module.h"
#define test_status_code iree_status_code
#define test_system_allocator iree_allocator_system
#if defined(DRIVER_TEST_IREE_3_13)
#include "iree/async/util/proactor_pool.h"
#include "iree/base/threading/numa.h"
// One proactor pool for every device the test makes, as IREE 3.13's tools have one.
static const iree_hal_device_create_params_t* test_create_params(void) {
  static iree_async_proactor_pool_t* pool = NULL;
  static iree_hal_device_create_params_t params;
  if (!pool) {
    IREE_CHECK_OK(iree_async_proactor_pool_create(
        iree_numa_node_count(), /*node_ids=*/NULL,
        iree_async_proactor_pool_options_default(), iree_allocator_system(), &pool));
    params = iree_hal_device_create_params_default();
    params.proactor_pool = pool;
  }
  return &params;
}
#endif
static iree_status_t test_query(iree_hal_driver_t* driver, iree_host_size_t* count,
                                iree_hal_device_info_t** infos) {
  return iree_hal_driver_query_available_devices(driver, iree_allocator_system(), count, infos);
}
static iree_status_t test_dump(iree_hal_driver_t* driver, iree_hal_device_id_t id, char** text) {
  iree_string_builder_t builder;
  iree_string_builder_initialize(iree_allocator_system(), &builder);
  iree_status_t status = iree_hal_driver_dump_device_info(driver, id, &builder);
  *text = strdup(builder.buffer ? builder.buffer : "");
  iree_string_builder_deinitialize(&builder);
  return status;
}
static iree_status_t test_create_by_path(iree_hal_driver_t* driver, const char* path,
                                         iree_hal_device_t** device) {
#if defined(DRIVER_TEST_IREE_3_13)
  return iree_hal_driver_create_device_by_path(driver, IREE_SV("hip"), iree_make_cstring_view(path), 0,
                                               NULL, test_create_params(), iree_allocator_system(),
                                               device);
#else
  return iree_hal_driver_create_device_by_path(driver, IREE_SV("hip"), iree_make_cstring_view(path), 0,
                                               NULL, iree_allocator_system(), device);
#endif
}
static iree_status_t test_create_device(iree_hal_driver_registry_t* registry, iree_string_view_t uri,
                                        iree_allocator_t allocator, iree_hal_device_t** device) {
#if defined(DRIVER_TEST_IREE_3_13)
  return iree_hal_create_device(registry, uri, test_create_params(), allocator, device);
#else
  return iree_hal_create_device(registry, uri, allocator, device);
#endif
}
#define test_release_driver iree_hal_driver_release
#define test_release_device iree_hal_device_release
static int64_t test_device_concurrency(iree_hal_device_t* device) {
  int64_t value = 0;
  IREE_CHECK_OK(iree_hal_device_query_i64(device, IREE_SV("hal.device"), IREE_SV("concurrency"), &value));
  return value;
}
#else
#include "iree_hal_hip_rs.h"
#define test_status_code iree_hal_hip_rs_status_code
#define test_system_allocator test_allocator
static const iree_hal_driver_vtable_t* test_vtable(iree_hal_driver_t* driver) {
  return (const iree_hal_driver_vtable_t*)driver->resource.vtable;
}
static iree_allocator_t test_allocator(void) {
  iree_allocator_t allocator = {NULL, iree_allocator_system_ctl};
  return allocator;
}
static iree_status_t test_query(iree_hal_driver_t* driver, iree_host_size_t* count,
                                iree_hal_device_info_t** infos) {
  return test_vtable(driver)->query_available_devices(driver, test_allocator(), count, infos);
}
typedef struct {  // iree_string_builder_t
  iree_allocator_t allocator;
  char* buffer;
  size_t size;
  size_t capacity;
} test_string_builder_t;
static iree_status_t test_dump(iree_hal_driver_t* driver, iree_hal_device_id_t id, char** text) {
  test_string_builder_t builder = {test_allocator(), NULL, 0, 0};
  iree_status_t status = test_vtable(driver)->dump_device_info(driver, id, (iree_string_builder_t*)&builder);
  *text = strdup(builder.buffer ? builder.buffer : "");
  free(builder.buffer);
  return status;
}
static iree_status_t test_create_by_path(iree_hal_driver_t* driver, const char* path,
                                         iree_hal_device_t** device) {
  iree_string_view_t name = {"hip", 3}, device_path = {path, strlen(path)};
  return test_vtable(driver)->create_device_by_path(driver, name, device_path, 0, NULL,
                                                    test_allocator(), device);
}
static void test_release_driver(iree_hal_driver_t* driver) {
  if (__atomic_sub_fetch(&driver->resource.ref_count, 1, __ATOMIC_SEQ_CST) == 0) {
    test_vtable(driver)->destroy(driver);
  }
}
static const iree_hal_device_vtable_t* test_device_vtable(iree_hal_device_t* device) {
  return (const iree_hal_device_vtable_t*)device->resource.vtable;
}
static void test_release_device(iree_hal_device_t* device) {
  if (__atomic_sub_fetch(&device->resource.ref_count, 1, __ATOMIC_SEQ_CST) == 0) {
    test_device_vtable(device)->destroy(device);
  }
}
static iree_status_t test_create_device(iree_hal_driver_registry_t* registry, iree_string_view_t uri,
                                        iree_allocator_t allocator, iree_hal_device_t** device) {
  return iree_hal_create_device(registry, uri, allocator, device);
}
static int64_t test_device_concurrency(iree_hal_device_t* device) {
  int64_t value = 0;
  iree_string_view_t category = {"hal.device", 10}, key = {"concurrency", 11};
  iree_status_t status = test_device_vtable(device)->query_i64(device, category, key, &value);
  if (status) exit(1);
  return value;
}
#endif

#define CHECK(cond)                                                              \
  do {                                                                           \
    if (!(cond)) {                                                               \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);   \
      exit(1);                                                                   \
    }                                                                            \
  } while (0)

// Prints and frees |status|, checking its code and that its text has |needle|.
static void expect_status(iree_status_t status, iree_status_code_t code, const char* needle) {
  iree_allocator_t allocator = test_system_allocator();
  char* text = NULL;
  iree_host_size_t length = 0;
  CHECK(iree_status_to_string(status, &allocator, &text, &length));
  printf("  status: %s\n", text);
  if (test_status_code(status) != code || (needle && !strstr(text, needle))) {
    fprintf(stderr, "expected code %d containing '%s'\n", (int)code, needle ? needle : "");
    exit(1);
  }
  free(text);
  iree_status_free(status);
}

int main(int argc, char** argv) {
  // argv[1]: the expected length of device names (255 with SOFTWARE_HIP_MAX_LENGTH_NAME=1).
  size_t expected_name_length = argc > 1 ? (size_t)atoi(argv[1]) : strlen("Software HIP Device 0");
  iree_allocator_t allocator = test_system_allocator();
  iree_hal_driver_registry_t* registry = iree_hal_driver_registry_default();
  expect_status(iree_hal_hip_driver_module_register(registry), IREE_STATUS_OK, NULL);

  iree_hal_driver_t* driver = NULL;
  iree_string_view_t hip = {"hip", 3};
  expect_status(iree_hal_driver_registry_try_create(registry, hip, allocator, &driver),
                IREE_STATUS_OK, NULL);

  iree_host_size_t count = 0;
  iree_hal_device_info_t* infos = NULL;
  expect_status(test_query(driver, &count, &infos), IREE_STATUS_OK, NULL);
  CHECK(count == 2);
  for (iree_host_size_t i = 0; i < count; ++i) {
    printf("device %zu: id=%zu path=%.*s name=%.*s\n", i, (size_t)infos[i].device_id,
           (int)infos[i].path.size, infos[i].path.data, (int)infos[i].name.size,
           infos[i].name.data);
    CHECK(infos[i].path.size == 40 && memcmp(infos[i].path.data, "GPU-", 4) == 0);
    CHECK(infos[i].name.size == expected_name_length);
  }
  char uuid_path[64];
  snprintf(uuid_path, sizeof(uuid_path), "%.*s", (int)infos[1].path.size, infos[1].path.data);
  iree_hal_device_id_t second_id = infos[1].device_id;
  free(infos);

  char* text = NULL;
  expect_status(test_dump(driver, second_id, &text), IREE_STATUS_OK, NULL);
  printf("dump:%s\n", text);
  CHECK(strstr(text, "- gpu-arch-name: gfx942") && strstr(text, "- gpu-warp-size: 64"));
  free(text);

  // Each path form makes a device over the right number of GPUs (its "concurrency");
  // malformed paths are refused.
  iree_hal_device_t* device = NULL;
  expect_status(test_create_by_path(driver, uuid_path, &device), IREE_STATUS_OK, NULL);
  CHECK(test_device_concurrency(device) == 1);
  test_release_device(device);
  expect_status(test_create_by_path(driver, "1,0", &device), IREE_STATUS_OK, NULL);
  CHECK(test_device_concurrency(device) == 2);
  test_release_device(device);
  device = NULL;
  expect_status(test_create_by_path(driver, "7", &device), IREE_STATUS_NOT_FOUND,
                "device 7 not found (of 2 enumerated)");
  expect_status(test_create_by_path(driver, "0,,1", &device), IREE_STATUS_INVALID_ARGUMENT,
                "empty entry");
  expect_status(test_create_by_path(driver, "-3", &device), IREE_STATUS_INVALID_ARGUMENT,
                "negative");
  CHECK(device == NULL);
  test_release_driver(driver);

  iree_string_view_t uri = {"hip://0?queue_count=2&no_such_key=1", 35};
  expect_status(test_create_device(registry, uri, allocator, &device),
                IREE_STATUS_INVALID_ARGUMENT, "unknown HIP device parameter 'no_such_key'");
  printf("driver_test: all passed\n");
  return 0;
}
