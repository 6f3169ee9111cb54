/* A tracing provider for IREE (IREE_TRACING_PROVIDER_H) that records IREE's device tracing
 * calls instead of sending them to Tracy: GPU contexts, calibrations, zones (begin, end,
 * notify) and plots, one JSON object per line appended to the file $HIP_RS_TRACING_LOG
 * (nothing without it). It provides IREE's device instrumentation; the CPU instrumentation
 * macros (which IREE's C HIP driver needs enabled for its kernels' debug names) record
 * nothing, and allocations and messages are not provided.
 *
 * The functions are defined here, weak: every file that includes IREE's tracing header gets
 * a copy, the linker keeps one per binary and the dynamic linker binds every library (and a
 * preloaded driver) to the first, so a process has one recorder. iree-harness/tracing/. */
#ifndef HIP_RS_RECORDING_PROVIDER_H_
#define HIP_RS_RECORDING_PROVIDER_H_

#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define IREE_TRACING_FEATURES                                                   \
  (IREE_TRACING_FEATURES_REQUESTED & (IREE_TRACING_FEATURE_INSTRUMENTATION |    \
                                      IREE_TRACING_FEATURE_INSTRUMENTATION_DEVICE))

/* Evaluates and drops a macro's arguments (they may be variables used nowhere else). */
static inline void hip_rs_recorder_ignore(int unused, ...) { (void)unused; }

/* CPU instrumentation: enabled (IREE_TRACE(x) keeps x) but recording nothing. */
#define IREE_TRACE(expr) expr
#define IREE_TRACE_APP_ENTER()
#define IREE_TRACE_APP_EXIT(exit_code)
#define IREE_TRACE_SET_APP_INFO(value, value_length) ((void)(value), (void)(value_length))
#define IREE_TRACE_SET_THREAD_NAME(name) ((void)(name))
#define IREE_TRACE_FIBER_ENTER(fiber)
#define IREE_TRACE_FIBER_LEAVE()
#define IREE_TRACE_PUBLISH_SOURCE_FILE(filename, filename_length, content, content_length) \
  ((void)(filename), (void)(filename_length), (void)(content), (void)(content_length))
#define IREE_TRACE_ZONE_BEGIN(zone_id) \
  iree_zone_id_t zone_id = 0;          \
  (void)zone_id;
#define IREE_TRACE_ZONE_BEGIN_NAMED(zone_id, name_literal) IREE_TRACE_ZONE_BEGIN(zone_id)
#define IREE_TRACE_ZONE_BEGIN_NAMED_DYNAMIC(zone_id, name, name_length) \
  IREE_TRACE_ZONE_BEGIN(zone_id)                                       \
  (void)(name);                                                        \
  (void)(name_length);
#define IREE_TRACE_ZONE_BEGIN_EXTERNAL(zone_id, file_name, file_name_length, line, \
                                       function_name, function_name_length, name,  \
                                       name_length)                                \
  IREE_TRACE_ZONE_BEGIN(zone_id)                                                   \
  (void)(file_name);                                                               \
  (void)(file_name_length);                                                        \
  (void)(line);                                                                    \
  (void)(function_name);                                                           \
  (void)(function_name_length);                                                    \
  (void)(name);                                                                    \
  (void)(name_length);
#define IREE_TRACE_ZONE_END(zone_id) (void)(zone_id)
#define IREE_RETURN_AND_END_ZONE_IF_ERROR(zone_id, ...) IREE_RETURN_IF_ERROR(__VA_ARGS__)
#define IREE_TRACE_ZONE_SET_COLOR(zone_id, color_xrgb)
#define IREE_TRACE_ZONE_APPEND_VALUE_I64(zone_id, value) ((void)(zone_id), (void)(value))
#define IREE_TRACE_ZONE_APPEND_TEXT(zone_id, ...) hip_rs_recorder_ignore(((void)(zone_id), 0), __VA_ARGS__)
#define IREE_TRACE_SET_PLOT_TYPE(name_literal, plot_type, step, fill, color)
#define IREE_TRACE_PLOT_VALUE_I64(name_literal, value) ((void)(name_literal), (void)(value))
#define IREE_TRACE_PLOT_VALUE_F32(name_literal, value) ((void)(name_literal), (void)(value))
#define IREE_TRACE_PLOT_VALUE_F64(name_literal, value) ((void)(name_literal), (void)(value))
#define IREE_TRACE_FRAME_MARK()
#define IREE_TRACE_FRAME_MARK_NAMED(name_literal)
#define IREE_TRACE_FRAME_MARK_BEGIN_NAMED(name_literal)
#define IREE_TRACE_FRAME_MARK_END_NAMED(name_literal)
#define IREE_TRACE_MESSAGE(level, value_literal)
#define IREE_TRACE_MESSAGE_COLORED(color, value_literal)
#define IREE_TRACE_MESSAGE_DYNAMIC(level, value, value_length) ((void)(value), (void)(value_length))
#define IREE_TRACE_MESSAGE_DYNAMIC_COLORED(color, value, value_length) ((void)(value), (void)(value_length))
#ifdef __cplusplus
#define IREE_TRACE_SCOPE()
#define IREE_TRACE_SCOPE_NAMED(name_literal)
#define IREE_TRACE_SCOPE_ID 0
#endif  /* __cplusplus */

typedef uint32_t iree_zone_id_t;

/* Tracy's source location layout, which IREE's stream tracing macros fill in. */
typedef struct iree_tracing_location_t {
  const char* name;
  const char* function;
  const char* file;
  uint32_t line;
  uint32_t color;
} iree_tracing_location_t;

#define TracyConcatIndirect(x, y) x##y
#define TracyConcat(x, y) TracyConcatIndirect(x, y)

typedef enum iree_tracing_gpu_context_type_e {
  IREE_TRACING_GPU_CONTEXT_TYPE_INVALID = 0,
  IREE_TRACING_GPU_CONTEXT_TYPE_OPENGL,
  IREE_TRACING_GPU_CONTEXT_TYPE_VULKAN,
  IREE_TRACING_GPU_CONTEXT_TYPE_OPENCL,
  IREE_TRACING_GPU_CONTEXT_TYPE_DIRECT3D12,
  IREE_TRACING_GPU_CONTEXT_TYPE_DIRECT3D11,
} iree_tracing_gpu_context_type_t;

#ifdef __cplusplus
extern "C" {
#endif

#define HIP_RS_RECORDER __attribute__((weak, used, noinline))

HIP_RS_RECORDER void hip_rs_recorder_line(const char* format, ...) {
  static int fd = -2;
  if (fd == -2) {
    const char* path = getenv("HIP_RS_TRACING_LOG");
    fd = path ? open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : -1;
  }
  if (fd < 0) return;
  char line[1024];
  va_list args;
  va_start(args, format);
  int length = vsnprintf(line, sizeof(line) - 1, format, args);
  va_end(args);
  if (length < 0) return;
  if (length > (int)sizeof(line) - 2) length = (int)sizeof(line) - 2;
  line[length++] = '\n';
  ssize_t written = write(fd, line, (size_t)length);
  (void)written;
}

/* A name as a JSON string body (quotes and backslashes dropped; names are identifiers). */
HIP_RS_RECORDER const char* hip_rs_recorder_name(char* buffer, size_t capacity, const char* name,
                                                 size_t length) {
  size_t out = 0;
  for (size_t i = 0; name && i < length && out + 1 < capacity; ++i) {
    char c = name[i];
    if (c == '"' || c == '\\' || (unsigned char)c < 0x20) continue;
    buffer[out++] = c;
  }
  buffer[out] = 0;
  return buffer;
}

HIP_RS_RECORDER int64_t iree_tracing_time(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

HIP_RS_RECORDER int64_t iree_tracing_frequency(void) { return 1000000000; }

HIP_RS_RECORDER uint8_t iree_tracing_gpu_context_allocate(
    iree_tracing_gpu_context_type_t type, const char* name, size_t name_length,
    bool is_calibrated, uint64_t cpu_timestamp, uint64_t gpu_timestamp,
    float timestamp_period) {
  static uint32_t next_context = 0;
  uint8_t id = (uint8_t)(__atomic_fetch_add(&next_context, 1, __ATOMIC_RELAXED) % 255);
  char shown[256];
  hip_rs_recorder_line(
      "{\"op\":\"context\",\"context\":%u,\"type\":%d,\"name\":\"%s\",\"calibrated\":%s,"
      "\"cpu\":%llu,\"gpu\":%llu,\"period\":%g}",
      id, (int)type, hip_rs_recorder_name(shown, sizeof(shown), name, name_length),
      is_calibrated ? "true" : "false", (unsigned long long)cpu_timestamp,
      (unsigned long long)gpu_timestamp, (double)timestamp_period);
  return id;
}

HIP_RS_RECORDER void iree_tracing_gpu_context_calibrate(uint8_t context_id, int64_t cpu_delta,
                                                        int64_t cpu_timestamp,
                                                        int64_t gpu_timestamp) {
  hip_rs_recorder_line("{\"op\":\"calibrate\",\"context\":%u,\"cpu_delta\":%lld,\"cpu\":%lld,\"gpu\":%lld}",
                       context_id, (long long)cpu_delta, (long long)cpu_timestamp,
                       (long long)gpu_timestamp);
}

HIP_RS_RECORDER void iree_tracing_gpu_zone_begin(uint8_t context_id, uint16_t query_id,
                                                 const iree_tracing_location_t* src_loc) {
  char shown[512];
  const char* name = src_loc && src_loc->name ? src_loc->name
                     : src_loc && src_loc->function ? src_loc->function : "";
  hip_rs_recorder_line("{\"op\":\"begin\",\"context\":%u,\"query\":%u,\"name\":\"%s\",\"cpu\":%lld}",
                       context_id, query_id,
                       hip_rs_recorder_name(shown, sizeof(shown), name, strlen(name)),
                       (long long)iree_tracing_time());
}

HIP_RS_RECORDER void iree_tracing_gpu_zone_begin_external(
    uint8_t context_id, uint16_t query_id, const char* file_name, size_t file_name_length,
    uint32_t line, const char* function_name, size_t function_name_length, const char* name,
    size_t name_length) {
  (void)file_name;
  (void)file_name_length;
  (void)line;
  char shown[512];
  const char* label = name && name_length ? name : function_name;
  size_t label_length = name && name_length ? name_length : function_name_length;
  hip_rs_recorder_line("{\"op\":\"begin\",\"context\":%u,\"query\":%u,\"name\":\"%s\",\"cpu\":%lld}",
                       context_id, query_id,
                       hip_rs_recorder_name(shown, sizeof(shown), label, label_length),
                       (long long)iree_tracing_time());
}

HIP_RS_RECORDER void iree_tracing_gpu_zone_end(uint8_t context_id, uint16_t query_id) {
  hip_rs_recorder_line("{\"op\":\"end\",\"context\":%u,\"query\":%u,\"cpu\":%lld}", context_id,
                       query_id, (long long)iree_tracing_time());
}

HIP_RS_RECORDER void iree_tracing_gpu_zone_notify(uint8_t context_id, uint16_t query_id,
                                                  int64_t gpu_timestamp) {
  hip_rs_recorder_line("{\"op\":\"notify\",\"context\":%u,\"query\":%u,\"gpu\":%lld}", context_id,
                       query_id, (long long)gpu_timestamp);
}

HIP_RS_RECORDER void iree_tracing_set_plot_type_impl(const char* name_literal, uint8_t plot_type,
                                                     bool step, bool fill, uint32_t color) {
  (void)step;
  (void)fill;
  (void)color;
  hip_rs_recorder_line("{\"op\":\"plot_type\",\"name\":\"%s\",\"type\":%u}", name_literal, plot_type);
}

HIP_RS_RECORDER void iree_tracing_plot_value_i64_impl(const char* name_literal, int64_t value) {
  hip_rs_recorder_line("{\"op\":\"plot\",\"name\":\"%s\",\"value\":%lld}", name_literal,
                       (long long)value);
}

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif  /* HIP_RS_RECORDING_PROVIDER_H_ */
