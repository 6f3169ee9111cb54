// A program compiled by IREE's compiler, run through our HIP driver: IREE v3.3.0's VM,
// bytecode module and HAL module (the same pieces iree-run-module uses) with our driver
// linked in place of IREE's. It loads iree-harness/programs/copies.mlir compiled for
// HIP (iree-harness/programs/compile.sh), calls @copies on two matrices, reads the three
// results back and checks them against values computed here.
//
// usage: run_program <copies.hip.vmfb> [device URI, default "hip"]
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "iree/base/api.h"
#include "iree/hal/api.h"
#include "iree/hal/drivers/hip/registration/driver_module.h"
#include "iree/modules/hal/module.h"
#include "iree/vm/api.h"
#include "iree/vm/bytecode/module.h"

enum { A_ROWS = 4, B_ROWS = 2, COLS = 8 };

// Reads |path| whole into memory from |allocator| (the bytecode module frees it).
static iree_status_t read_file(const char* path, iree_allocator_t allocator,
                               iree_byte_span_t* out_contents) {
  *out_contents = iree_make_byte_span(NULL, 0);
  FILE* file = fopen(path, "rb");
  if (!file) return iree_make_status(IREE_STATUS_NOT_FOUND, "cannot open '%s'", path);
  fseek(file, 0, SEEK_END);
  long size = ftell(file);
  fseek(file, 0, SEEK_SET);
  iree_status_t status = size > 0 ? iree_ok_status()
                                  : iree_make_status(IREE_STATUS_INVALID_ARGUMENT, "'%s' is empty", path);
  if (iree_status_is_ok(status)) {
    status = iree_allocator_malloc(allocator, (iree_host_size_t)size, (void**)&out_contents->data);
  }
  if (iree_status_is_ok(status)) {
    out_contents->data_length = (iree_host_size_t)size;
    if (fread(out_contents->data, 1, (size_t)size, file) != (size_t)size) {
      status = iree_make_status(IREE_STATUS_DATA_LOSS, "short read of '%s'", path);
    }
  }
  fclose(file);
  return status;
}

// Uploads a rows x COLS matrix of int32 to the device and appends it to |list|.
static iree_status_t push_matrix(iree_hal_device_t* device, const int32_t* values,
                                 iree_hal_dim_t rows, iree_vm_list_t* list) {
  const iree_hal_dim_t shape[2] = {rows, COLS};
  iree_hal_buffer_params_t params = {
      .type = IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL,
      .usage = IREE_HAL_BUFFER_USAGE_DEFAULT,
  };
  iree_hal_buffer_view_t* view = NULL;
  IREE_RETURN_IF_ERROR(iree_hal_buffer_view_allocate_buffer_copy(
      device, iree_hal_device_allocator(device), 2, shape, IREE_HAL_ELEMENT_TYPE_INT_32,
      IREE_HAL_ENCODING_TYPE_DENSE_ROW_MAJOR, params,
      iree_make_const_byte_span(values, rows * COLS * sizeof(int32_t)), &view));
  iree_vm_ref_t ref = iree_hal_buffer_view_move_ref(view);
  return iree_vm_list_push_ref_move(list, &ref);
}

// Reads result |index| back from the device, prints it and compares it with |expected|.
static iree_status_t check_result(iree_hal_device_t* device, iree_vm_list_t* outputs,
                                  iree_host_size_t index, const int32_t* expected,
                                  iree_hal_dim_t rows, int* mismatches) {
  iree_hal_buffer_view_t* view = iree_vm_list_get_buffer_view_assign(outputs, index);
  if (!view) return iree_make_status(IREE_STATUS_INVALID_ARGUMENT, "result %zu is not a tensor", (size_t)index);
  if (iree_hal_buffer_view_shape_rank(view) != 2 || iree_hal_buffer_view_shape_dim(view, 0) != rows ||
      iree_hal_buffer_view_shape_dim(view, 1) != COLS) {
    return iree_make_status(IREE_STATUS_FAILED_PRECONDITION, "result %zu has an unexpected shape", (size_t)index);
  }
  int32_t values[6 * COLS];
  IREE_RETURN_IF_ERROR(iree_hal_device_transfer_d2h(
      device, iree_hal_buffer_view_buffer(view), 0, values, rows * COLS * sizeof(int32_t),
      IREE_HAL_TRANSFER_BUFFER_FLAG_DEFAULT, iree_infinite_timeout()));
  printf("  result[%zu] %" PRIu64 "x%dxi32 =", (size_t)index, (uint64_t)rows, COLS);
  for (iree_hal_dim_t i = 0; i < rows * COLS; ++i) {
    printf("%s%" PRId32, i % COLS == 0 ? " [" : " ", values[i]);
    if (i % COLS == COLS - 1) printf("]");
    if (values[i] != expected[i]) ++*mismatches;
  }
  printf("\n");
  return iree_ok_status();
}

static iree_status_t run(const char* vmfb_path, const char* device_uri, int* mismatches) {
  iree_allocator_t host_allocator = iree_allocator_system();
  iree_vm_instance_t* instance = NULL;
  iree_hal_device_t* device = NULL;
  iree_vm_module_t* modules[2] = {NULL, NULL};
  iree_vm_context_t* context = NULL;
  iree_vm_list_t* inputs = NULL;
  iree_vm_list_t* outputs = NULL;

  iree_status_t status = iree_vm_instance_create(IREE_VM_TYPE_CAPACITY_DEFAULT, host_allocator, &instance);
  if (iree_status_is_ok(status)) status = iree_hal_module_register_all_types(instance);
  // Our driver, through the registry as any IREE program finds its drivers.
  iree_hal_driver_registry_t* registry = iree_hal_driver_registry_default();
  if (iree_status_is_ok(status)) status = iree_hal_hip_driver_module_register(registry);
  if (iree_status_is_ok(status)) {
    status = iree_hal_create_device(registry, iree_make_cstring_view(device_uri), host_allocator, &device);
  }
  if (iree_status_is_ok(status)) {
    printf("device %s created through our driver\n", device_uri);
    status = iree_hal_module_create(instance, 1, &device, IREE_HAL_MODULE_FLAG_NONE,
                                    iree_hal_module_debug_sink_null(), host_allocator, &modules[0]);
  }
  iree_byte_span_t bytecode = iree_make_byte_span(NULL, 0);
  if (iree_status_is_ok(status)) status = read_file(vmfb_path, host_allocator, &bytecode);
  if (iree_status_is_ok(status)) {
    status = iree_vm_bytecode_module_create(instance, iree_make_const_byte_span(bytecode.data, bytecode.data_length),
                                            host_allocator, host_allocator, &modules[1]);
    if (!iree_status_is_ok(status)) iree_allocator_free(host_allocator, bytecode.data);
  } else {
    iree_allocator_free(host_allocator, bytecode.data);
  }
  // Creating the context runs the module's initializers: device selection, constant
  // uploads and the recording of its reusable command buffers.
  if (iree_status_is_ok(status)) {
    status = iree_vm_context_create_with_modules(instance, IREE_VM_CONTEXT_FLAG_NONE, 2, modules,
                                                 host_allocator, &context);
  }
  iree_vm_function_t function;
  if (iree_status_is_ok(status)) {
    status = iree_vm_context_resolve_function(context, IREE_SV("module.copies"), &function);
  }

  int32_t a[A_ROWS * COLS], b[B_ROWS * COLS];
  for (int i = 0; i < A_ROWS * COLS; ++i) a[i] = i;
  for (int i = 0; i < B_ROWS * COLS; ++i) b[i] = 100 + i;
  if (iree_status_is_ok(status)) status = iree_vm_list_create(iree_vm_make_undefined_type_def(), 2, host_allocator, &inputs);
  if (iree_status_is_ok(status)) status = push_matrix(device, a, A_ROWS, inputs);
  if (iree_status_is_ok(status)) status = push_matrix(device, b, B_ROWS, inputs);
  if (iree_status_is_ok(status)) status = iree_vm_list_create(iree_vm_make_undefined_type_def(), 3, host_allocator, &outputs);
  if (iree_status_is_ok(status)) {
    printf("calling copies(a: 4x8xi32 = 0..31, b: 2x8xi32 = 100..115)\n");
    status = iree_vm_invoke(context, function, IREE_VM_INVOCATION_FLAG_NONE, NULL, inputs, outputs, host_allocator);
  }

  // What the program computes: rows 1-2 of a; a then b; a with rows 2-3 replaced by b.
  int32_t rows[B_ROWS * COLS], stacked[(A_ROWS + B_ROWS) * COLS], updated[A_ROWS * COLS];
  memcpy(rows, a + COLS, sizeof(rows));
  memcpy(stacked, a, sizeof(a));
  memcpy(stacked + A_ROWS * COLS, b, sizeof(b));
  memcpy(updated, a, sizeof(a));
  memcpy(updated + 2 * COLS, b, sizeof(b));
  if (iree_status_is_ok(status)) status = check_result(device, outputs, 0, rows, B_ROWS, mismatches);
  if (iree_status_is_ok(status)) status = check_result(device, outputs, 1, stacked, A_ROWS + B_ROWS, mismatches);
  if (iree_status_is_ok(status)) status = check_result(device, outputs, 2, updated, A_ROWS, mismatches);

  iree_vm_list_release(outputs);
  iree_vm_list_release(inputs);
  iree_vm_context_release(context);
  iree_vm_module_release(modules[1]);
  iree_vm_module_release(modules[0]);
  iree_hal_device_release(device);
  iree_vm_instance_release(instance);
  return status;
}

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: %s <copies.hip.vmfb> [device URI, default hip]\n", argv[0]);
    return 2;
  }
  int mismatches = 0;
  iree_status_t status = run(argv[1], argc == 3 ? argv[2] : "hip", &mismatches);
  if (!iree_status_is_ok(status)) {
    fprintf(stderr, "run_program: ");
    iree_status_fprint(stderr, status);
    iree_status_free(status);
    return 1;
  }
  if (mismatches) {
    fprintf(stderr, "run_program: %d values differ from the expected ones\n", mismatches);
    return 1;
  }
  printf("run_program: the compiled program's 3 results are correct\n");
  return 0;
}
