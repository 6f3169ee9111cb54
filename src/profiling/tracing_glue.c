/* IREE's device tracing API (iree/base/tracing/tracy.h: iree_tracing_gpu_*), reached where
 * the program that links or preloads the driver has it: an IREE build with device tracing
 * (Tracy, IREE_TRACING_MODE >= 2, or a custom IREE_TRACING_PROVIDER_H). Each function is a
 * weak reference, NULL in builds without tracing; iree_hal_hip_rs_tracing_available() says
 * whether all of them are there, and the wrappers below are only called when it did
 * (src/profiling/tracy.rs). Signatures as IREE v3.3.0 and 3.13 declare them. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#pragma weak iree_tracing_time
#pragma weak iree_tracing_gpu_context_allocate
#pragma weak iree_tracing_gpu_context_calibrate
#pragma weak iree_tracing_gpu_zone_begin_external
#pragma weak iree_tracing_gpu_zone_end
#pragma weak iree_tracing_gpu_zone_notify
#pragma weak iree_tracing_set_plot_type_impl
#pragma weak iree_tracing_plot_value_i64_impl

int64_t iree_tracing_time(void);
uint8_t iree_tracing_gpu_context_allocate(int type, const char* name, size_t name_length,
                                          bool is_calibrated, uint64_t cpu_timestamp,
                                          uint64_t gpu_timestamp, float timestamp_period);
void iree_tracing_gpu_context_calibrate(uint8_t context_id, int64_t cpu_delta,
                                        int64_t cpu_timestamp, int64_t gpu_timestamp);
void iree_tracing_gpu_zone_begin_external(uint8_t context_id, uint16_t query_id,
                                          const char* file_name, size_t file_name_length,
                                          uint32_t line, const char* function_name,
                                          size_t function_name_length, const char* name,
                                          size_t name_length);
void iree_tracing_gpu_zone_end(uint8_t context_id, uint16_t query_id);
void iree_tracing_gpu_zone_notify(uint8_t context_id, uint16_t query_id, int64_t gpu_timestamp);
void iree_tracing_set_plot_type_impl(const char* name_literal, uint8_t plot_type, bool step,
                                     bool fill, uint32_t color);
void iree_tracing_plot_value_i64_impl(const char* name_literal, int64_t value);

/* IREE_TRACING_GPU_CONTEXT_TYPE_VULKAN: what IREE's C HIP driver allocates (Tracy then
 * assumes single-threaded submission per context, which our serialized emission keeps). */
#define HIP_RS_GPU_CONTEXT_TYPE 2

int iree_hal_hip_rs_tracing_available(void) {
  return iree_tracing_time && iree_tracing_gpu_context_allocate &&
         iree_tracing_gpu_context_calibrate && iree_tracing_gpu_zone_begin_external &&
         iree_tracing_gpu_zone_end && iree_tracing_gpu_zone_notify;
}

int iree_hal_hip_rs_tracing_plots_available(void) {
  return iree_tracing_set_plot_type_impl && iree_tracing_plot_value_i64_impl;
}

int64_t iree_hal_hip_rs_tracing_time(void) { return iree_tracing_time(); }

uint8_t iree_hal_hip_rs_tracing_context_allocate(const char* name, size_t name_length,
                                                 uint64_t cpu_timestamp, uint64_t gpu_timestamp) {
  return iree_tracing_gpu_context_allocate(HIP_RS_GPU_CONTEXT_TYPE, name, name_length,
                                           /*is_calibrated=*/true, cpu_timestamp,
                                           gpu_timestamp, /*timestamp_period=*/1.0f);
}

void iree_hal_hip_rs_tracing_context_calibrate(uint8_t context_id, int64_t cpu_delta,
                                               int64_t cpu_timestamp, int64_t gpu_timestamp) {
  iree_tracing_gpu_context_calibrate(context_id, cpu_delta, cpu_timestamp, gpu_timestamp);
}

void iree_hal_hip_rs_tracing_zone_begin(uint8_t context_id, uint16_t query, const char* name,
                                        size_t name_length, int64_t timestamp) {
  static const char file[] = "iree-hal-hip-rs";
  static const char function[] = "hip";
  iree_tracing_gpu_zone_begin_external(context_id, query, file, sizeof(file) - 1, 0, function,
                                       sizeof(function) - 1, name, name_length);
  iree_tracing_gpu_zone_notify(context_id, query, timestamp);
}

void iree_hal_hip_rs_tracing_zone_end(uint8_t context_id, uint16_t query, int64_t timestamp) {
  iree_tracing_gpu_zone_end(context_id, query);
  iree_tracing_gpu_zone_notify(context_id, query, timestamp);
}

/* Plot names must outlive the process's trace (Tracy keeps the pointer): one static name
 * per GPU, up to 16. */
static const char* const hip_rs_plot_names[16] = {
    "HIP GPU 0 queue allocations", "HIP GPU 1 queue allocations", "HIP GPU 2 queue allocations",
    "HIP GPU 3 queue allocations", "HIP GPU 4 queue allocations", "HIP GPU 5 queue allocations",
    "HIP GPU 6 queue allocations", "HIP GPU 7 queue allocations", "HIP GPU 8 queue allocations",
    "HIP GPU 9 queue allocations", "HIP GPU 10 queue allocations", "HIP GPU 11 queue allocations",
    "HIP GPU 12 queue allocations", "HIP GPU 13 queue allocations", "HIP GPU 14 queue allocations",
    "HIP GPU 15 queue allocations",
};

void iree_hal_hip_rs_tracing_plot_allocations(uint32_t gpu, int64_t bytes) {
  if (gpu >= 16 || !iree_hal_hip_rs_tracing_plots_available()) return;
  static int types_set[16]; /* a benign race: setting the type twice is harmless */
  if (!types_set[gpu]) {
    /* IREE_TRACING_PLOT_TYPE_MEMORY, stepped, filled. */
    iree_tracing_set_plot_type_impl(hip_rs_plot_names[gpu], 1, true, true, 0);
    types_set[gpu] = 1;
  }
  iree_tracing_plot_value_i64_impl(hip_rs_plot_names[gpu], bytes);
}
