// The driver registry used from C exactly as an IREE program uses it: factories that live
// in the program, drivers created by name and by URI, statuses printed by IREE's code.
#include <pthread.h>

#include "test_util.h"

//===----------------------------------------------------------------------===//
// A fake driver and factory
//===----------------------------------------------------------------------===//

typedef struct fake_driver_t {
  iree_hal_driver_t base;
  const char* tag;
} fake_driver_t;

typedef struct fake_device_t {
  char path[64];
  char params[128];
} fake_device_t;

static int g_live_drivers = 0;

static void fake_driver_destroy(iree_hal_driver_t* driver) {
  free(driver);
  __atomic_fetch_sub(&g_live_drivers, 1, __ATOMIC_SEQ_CST);
}

static iree_status_t fake_create_device_by_path(
    iree_hal_driver_t* driver, iree_string_view_t driver_name,
    iree_string_view_t device_path, iree_host_size_t param_count,
    const iree_string_pair_t* params, iree_allocator_t host_allocator,
    iree_hal_device_t** out_device) {
  (void)driver;
  (void)driver_name;
  (void)host_allocator;
  fake_device_t* device = calloc(1, sizeof(*device));
  snprintf(device->path, sizeof(device->path), "%.*s", (int)device_path.size,
           device_path.data);
  for (iree_host_size_t i = 0; i < param_count; ++i) {
    size_t used = strlen(device->params);
    snprintf(device->params + used, sizeof(device->params) - used, "[%.*s=%.*s]",
             (int)params[i].key.size, params[i].key.data,
             (int)params[i].value.size, params[i].value.data);
  }
  *out_device = (iree_hal_device_t*)device;
  return NULL;
}

static const iree_hal_driver_vtable_t fake_driver_vtable = {
    .destroy = fake_driver_destroy,
    .create_device_by_path = fake_create_device_by_path,
};

typedef struct fake_factory_t {
  iree_hal_driver_factory_t factory;
  iree_hal_driver_info_t info;
  const char* tag;
} fake_factory_t;

static iree_status_t fake_enumerate(void* self, iree_host_size_t* out_count,
                                    const iree_hal_driver_info_t** out_infos) {
  fake_factory_t* factory = (fake_factory_t*)self;
  *out_count = 1;
  *out_infos = &factory->info;
  return NULL;
}

static iree_status_t fake_try_create(void* self, iree_string_view_t driver_name,
                                     iree_allocator_t host_allocator,
                                     iree_hal_driver_t** out_driver) {
  (void)driver_name;
  (void)host_allocator;
  fake_factory_t* factory = (fake_factory_t*)self;
  fake_driver_t* driver = calloc(1, sizeof(*driver));
  driver->base.resource.ref_count = 1;
  driver->base.resource.vtable = &fake_driver_vtable;
  driver->tag = factory->tag;
  __atomic_fetch_add(&g_live_drivers, 1, __ATOMIC_SEQ_CST);
  *out_driver = &driver->base;
  return NULL;
}

static void fake_factory_init(fake_factory_t* factory, const char* name,
                              const char* tag) {
  factory->factory.self = factory;
  factory->factory.enumerate = fake_enumerate;
  factory->factory.try_create = fake_try_create;
  factory->info.driver_name = test_sv(name);
  factory->info.full_name = test_sv(tag);
  factory->tag = tag;
}

static void release_driver(iree_hal_driver_t* driver) {
  if (__atomic_sub_fetch(&driver->resource.ref_count, 1, __ATOMIC_SEQ_CST) == 0) {
    ((const iree_hal_driver_vtable_t*)driver->resource.vtable)->destroy(driver);
  }
}

static const char* created_tag(iree_hal_driver_registry_t* registry,
                               const char* name) {
  iree_hal_driver_t* driver = NULL;
  CHECK_OK(iree_hal_driver_registry_try_create(registry, test_sv(name),
                                               test_system_allocator(), &driver));
  const char* tag = ((fake_driver_t*)driver)->tag;
  release_driver(driver);
  return tag;
}

//===----------------------------------------------------------------------===//
// Tests
//===----------------------------------------------------------------------===//

static void test_enumerate_order_and_single_allocation(void) {
  iree_hal_driver_registry_t* registry = NULL;
  CHECK_OK(iree_hal_driver_registry_allocate(test_system_allocator(), &registry));
  fake_factory_t a, b;
  fake_factory_init(&a, "alpha", "A");
  fake_factory_init(&b, "beta", "B");
  CHECK_OK(iree_hal_driver_registry_register_factory(registry, &a.factory));
  CHECK_OK(iree_hal_driver_registry_register_factory(registry, &b.factory));
  iree_host_size_t count = 0;
  iree_hal_driver_info_t* infos = NULL;
  CHECK_OK(iree_hal_driver_registry_enumerate(registry, test_system_allocator(),
                                              &count, &infos));
  CHECK(count == 2);
  CHECK(infos[0].driver_name.size == 5 &&
        memcmp(infos[0].driver_name.data, "alpha", 5) == 0);
  CHECK(infos[1].driver_name.size == 4 &&
        memcmp(infos[1].driver_name.data, "beta", 4) == 0);
  // The strings are copies inside the one allocation, right after the infos.
  CHECK(infos[0].driver_name.data == (const char*)(infos + 2));
  CHECK(infos[0].driver_name.data != a.info.driver_name.data);
  free(infos);  // One free releases everything (ASan would report otherwise).
  iree_hal_driver_registry_free(registry);
}

static void test_duplicate_and_unknown(void) {
  iree_hal_driver_registry_t* registry = NULL;
  CHECK_OK(iree_hal_driver_registry_allocate(test_system_allocator(), &registry));
  fake_factory_t a;
  fake_factory_init(&a, "alpha", "A");
  CHECK_OK(iree_hal_driver_registry_register_factory(registry, &a.factory));
  CHECK_STATUS_CONTAINS(
      iree_hal_driver_registry_register_factory(registry, &a.factory),
      IREE_STATUS_ALREADY_EXISTS, "already been registered");
  iree_hal_driver_t* driver = (iree_hal_driver_t*)0x1;
  CHECK_STATUS_CONTAINS(
      iree_hal_driver_registry_try_create(registry, test_sv("zeta"),
                                          test_system_allocator(), &driver),
      IREE_STATUS_NOT_FOUND, "no driver 'zeta' registered");
  CHECK(driver == NULL);  // Cleared even on failure.
  iree_hal_driver_registry_free(registry);
}

static void test_latest_registration_wins(void) {
  iree_hal_driver_registry_t* registry = NULL;
  CHECK_OK(iree_hal_driver_registry_allocate(test_system_allocator(), &registry));
  fake_factory_t old_factory, new_factory;
  fake_factory_init(&old_factory, "hip", "old");
  fake_factory_init(&new_factory, "hip", "new");
  CHECK_OK(iree_hal_driver_registry_register_factory(registry, &old_factory.factory));
  CHECK_OK(iree_hal_driver_registry_register_factory(registry, &new_factory.factory));
  CHECK(strcmp(created_tag(registry, "hip"), "new") == 0);
  CHECK_OK(iree_hal_driver_registry_unregister_factory(registry, &new_factory.factory));
  CHECK(strcmp(created_tag(registry, "hip"), "old") == 0);
  iree_hal_driver_registry_free(registry);
}

// IREE's C registry corrupts the factories after a removed one that is not the last.
static void test_unregister_middle_keeps_others(void) {
  iree_hal_driver_registry_t* registry = NULL;
  CHECK_OK(iree_hal_driver_registry_allocate(test_system_allocator(), &registry));
  fake_factory_t f[4];
  const char* names[4] = {"d0", "d1", "d2", "d3"};
  for (int i = 0; i < 4; ++i) {
    fake_factory_init(&f[i], names[i], names[i]);
    CHECK_OK(iree_hal_driver_registry_register_factory(registry, &f[i].factory));
  }
  CHECK_OK(iree_hal_driver_registry_unregister_factory(registry, &f[1].factory));
  for (int i = 0; i < 4; ++i) {
    if (i == 1) continue;
    CHECK(strcmp(created_tag(registry, names[i]), names[i]) == 0);
  }
  CHECK_STATUS_CONTAINS(
      iree_hal_driver_registry_unregister_factory(registry, &f[1].factory),
      IREE_STATUS_NOT_FOUND, "not registered");
  iree_hal_driver_registry_free(registry);
}

// IREE's C registry refuses the 16th factory.
static void test_capacity_is_sixteen(void) {
  iree_hal_driver_registry_t* registry = NULL;
  CHECK_OK(iree_hal_driver_registry_allocate(test_system_allocator(), &registry));
  fake_factory_t f[17];
  for (int i = 0; i < 17; ++i) fake_factory_init(&f[i], "x", "x");
  for (int i = 0; i < 16; ++i) {
    CHECK_OK(iree_hal_driver_registry_register_factory(registry, &f[i].factory));
  }
  CHECK_STATUS_CONTAINS(
      iree_hal_driver_registry_register_factory(registry, &f[16].factory),
      IREE_STATUS_RESOURCE_EXHAUSTED, "(16)");
  iree_hal_driver_registry_free(registry);
}

static void test_null_arguments(void) {
  iree_hal_driver_registry_t* registry = NULL;
  CHECK_STATUS_CONTAINS(
      iree_hal_driver_registry_allocate(test_system_allocator(), NULL),
      IREE_STATUS_INVALID_ARGUMENT, "out_registry must not be NULL");
  CHECK_OK(iree_hal_driver_registry_allocate(test_system_allocator(), &registry));
  CHECK_STATUS_CONTAINS(iree_hal_driver_registry_register_factory(registry, NULL),
                        IREE_STATUS_INVALID_ARGUMENT, "factory");
  CHECK_STATUS_CONTAINS(
      iree_hal_driver_registry_enumerate(NULL, test_system_allocator(), NULL, NULL),
      IREE_STATUS_INVALID_ARGUMENT, "must not be NULL");
  iree_hal_device_t* device = NULL;
  CHECK_STATUS_CONTAINS(
      iree_hal_create_device(NULL, test_sv("x://"), test_system_allocator(), &device),
      IREE_STATUS_INVALID_ARGUMENT, "registry must not be NULL");
  iree_hal_driver_registry_free(NULL);
  iree_hal_driver_registry_free(registry);
}

static void test_create_device_by_uri(void) {
  iree_hal_driver_registry_t* registry = iree_hal_driver_registry_default();
  CHECK(registry == iree_hal_driver_registry_default());
  fake_factory_t f;
  fake_factory_init(&f, "fake", "fake");
  CHECK_OK(iree_hal_driver_registry_register_factory(registry, &f.factory));
  iree_hal_device_t* device = NULL;
  CHECK_OK(iree_hal_create_device(registry, test_sv("fake://0,1?queue_count=2&x"),
                                  test_system_allocator(), &device));
  fake_device_t* fake_device = (fake_device_t*)device;
  CHECK(strcmp(fake_device->path, "0,1") == 0);
  CHECK(strcmp(fake_device->params, "[queue_count=2][x=]") == 0);
  free(fake_device);
  CHECK(g_live_drivers == 0);  // The driver made for the call was released.
  CHECK_STATUS_CONTAINS(
      iree_hal_create_device(registry, test_sv("nope://0"), test_system_allocator(), &device),
      IREE_STATUS_NOT_FOUND, "creating driver for device 'nope://0'");
  CHECK_OK(iree_hal_driver_registry_unregister_factory(registry, &f.factory));
}

//===----------------------------------------------------------------------===//
// Many threads at once
//===----------------------------------------------------------------------===//

static iree_hal_driver_registry_t* g_stress_registry = NULL;

static void* stress_thread(void* arg) {
  fake_factory_t* factory = (fake_factory_t*)arg;
  for (int i = 0; i < 500; ++i) {
    CHECK_OK(iree_hal_driver_registry_register_factory(g_stress_registry, &factory->factory));
    CHECK(strcmp(created_tag(g_stress_registry, factory->tag), factory->tag) == 0);
    iree_host_size_t count = 0;
    iree_hal_driver_info_t* infos = NULL;
    CHECK_OK(iree_hal_driver_registry_enumerate(g_stress_registry, test_system_allocator(),
                                                &count, &infos));
    int seen = 0;
    for (iree_host_size_t j = 0; j < count; ++j) {
      if (infos[j].driver_name.size == strlen(factory->tag) &&
          memcmp(infos[j].driver_name.data, factory->tag, strlen(factory->tag)) == 0) {
        ++seen;
      }
    }
    CHECK(seen == 1);
    free(infos);
    CHECK_OK(iree_hal_driver_registry_unregister_factory(g_stress_registry, &factory->factory));
  }
  return NULL;
}

static void test_concurrent_use(void) {
  CHECK_OK(iree_hal_driver_registry_allocate(test_system_allocator(), &g_stress_registry));
  enum { kThreads = 8 };
  static const char* tags[kThreads] = {"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"};
  fake_factory_t factories[kThreads];
  pthread_t threads[kThreads];
  for (int i = 0; i < kThreads; ++i) {
    fake_factory_init(&factories[i], tags[i], tags[i]);
    CHECK(pthread_create(&threads[i], NULL, stress_thread, &factories[i]) == 0);
  }
  for (int i = 0; i < kThreads; ++i) pthread_join(threads[i], NULL);
  iree_host_size_t count = 1;
  iree_hal_driver_info_t* infos = NULL;
  CHECK_OK(iree_hal_driver_registry_enumerate(g_stress_registry, test_system_allocator(),
                                              &count, &infos));
  CHECK(count == 0 && infos == NULL);
  CHECK(g_live_drivers == 0);
  iree_hal_driver_registry_free(g_stress_registry);
}

int main(void) {
  test_enumerate_order_and_single_allocation();
  test_duplicate_and_unknown();
  test_latest_registration_wins();
  test_unregister_middle_keeps_others();
  test_capacity_is_sixteen();
  test_null_arguments();
  test_create_device_by_uri();
  test_concurrent_use();
  printf("registry_test: all passed\n");
  return 0;
}
