/* What linking into an IREE program needs that Rust cannot express:
 *
 * 1. Registering the driver factory through whatever iree_hal_driver_registry_register_factory
 *    the program resolves: IREE's own when our registry entry points are weak in an IREE
 *    build, ours otherwise. A registry pointer must only ever reach the registry that made
 *    it, so the Rust side never calls its own registry directly here.
 * 2. Registering the HIP driver's command-line flags (--hip_dylib_path, --hip_use_streams,
 * --hip_allow_inline_execution, --hip_async_allocations, --hip_tracing,
 * --hip_default_index, and for IREE 3.13 --hip_async_caching: the names and meanings of
 * IREE's C HIP driver) with IREE's flag
 * library when the program links one (IREE's tools and tests do). Without it nothing is
 * registered (our own iree_flag_register finds no flag library to forward to) and the
 * driver reads only the environment.
 * 3. Standing in for IREE's C HIP driver when preloaded (LD_PRELOAD) into an IREE build
 *    that has it: that driver's registration library still registers its own --hip_* flags.
 *    Our library exports iree_flag_register (src/exports/registration.rs), so IREE's
 *    registrations reach the filter below first; it drops the C driver's copies of our six
 *    flags and passes everything else on to IREE's flag library, leaving one set of
 *    --hip_* flags, ours.
 *
 * (This is C because Rust can declare neither a weak symbol nor a static initializer that
 * linkers keep. It only records what IREE parsed; src/registration/cli_flags.rs reads it.) */
#define _GNU_SOURCE /* RTLD_NEXT */
#include <dlfcn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char* data;
  size_t size;
} hip_rs_string_view_t; /* iree_string_view_t */

typedef void* hip_rs_status_t; /* iree_status_t */

typedef hip_rs_status_t (*hip_rs_flag_parse_fn)(hip_rs_string_view_t name, void* storage,
                                                hip_rs_string_view_t value);
typedef void (*hip_rs_flag_print_fn)(hip_rs_string_view_t name, void* storage, FILE* file);

/* From IREE's base library (iree/base/internal/flags.h, iree/base/status.h). Our own
 * library also defines iree_flag_register (part 3 below); the program's resolution picks. */
extern int iree_flag_register(const char* file, int line, int type, void* storage,
                              hip_rs_flag_parse_fn parse_callback,
                              hip_rs_flag_print_fn print_callback, hip_rs_string_view_t name,
                              hip_rs_string_view_t description) __attribute__((weak));
extern hip_rs_status_t iree_status_allocate_f(int code, const char* file, uint32_t line,
                                              const char* format, ...) __attribute__((weak));

#define HIP_RS_IREE_FLAG_TYPE_CALLBACK 1
#define HIP_RS_IREE_STATUS_INVALID_ARGUMENT 3
#define HIP_RS_MAX_DYLIB_PATHS 32

/* Mirrored by CliFlagsRaw in cli_flags.rs. A value is meaningful only when its |set| is 1. */
typedef struct {
  int32_t registered;
  int32_t use_streams_set, use_streams;
  int32_t allow_inline_execution_set, allow_inline_execution;
  int32_t async_allocations_set, async_allocations;
  int32_t tracing_set, tracing;
  int32_t default_index_set, default_index;
  size_t dylib_path_count;
  hip_rs_string_view_t dylib_paths[HIP_RS_MAX_DYLIB_PATHS];
  int32_t async_caching_set, async_caching; /* IREE 3.13 only */
  hip_rs_string_view_t trace_file;          /* size 0: not given */
} hip_rs_cli_flags_t;

static hip_rs_cli_flags_t hip_rs_flags;

enum {
  HIP_RS_FLAG_DYLIB_PATH,
  HIP_RS_FLAG_USE_STREAMS,
  HIP_RS_FLAG_ALLOW_INLINE_EXECUTION,
  HIP_RS_FLAG_ASYNC_ALLOCATIONS,
  HIP_RS_FLAG_TRACING,
  HIP_RS_FLAG_DEFAULT_INDEX,
#if defined(IREE_HAL_HIP_RS_IREE_3_13)
  HIP_RS_FLAG_ASYNC_CACHING,
#endif
  HIP_RS_FLAG_TRACE_FILE,
  HIP_RS_FLAG_COUNT,
};

static const char* const hip_rs_flag_names[HIP_RS_FLAG_COUNT] = {
    "hip_dylib_path",    "hip_use_streams", "hip_allow_inline_execution",
    "hip_async_allocations", "hip_tracing",  "hip_default_index",
#if defined(IREE_HAL_HIP_RS_IREE_3_13)
    "hip_async_caching",
#endif
    "hip_trace_file",
};

static const char* const hip_rs_flag_descriptions[HIP_RS_FLAG_COUNT] = {
    "Path to search for libamdhip64.so; may be repeated. An entry starting with 'file:' is an\n"
    "exact file, any other a directory. Without any, IREE_HIP_DYLIB_PATH (';'-separated) or\n"
    "the system loader's search is used.",
    "Use HIP streams (instead of graphs) for executing command buffers.",
    "Allow command buffers to execute inline against HIP streams when possible.",
    "Enables HIP asynchronous stream-ordered allocations when supported.",
    "Tracing verbosity when Tracy instrumentation is enabled: 0 off, 1 command buffers,\n"
    "2 kernels.",
    "Specifies the index of the default HIP device to use.",
#if defined(IREE_HAL_HIP_RS_IREE_3_13)
    "Enables caching for stream-ordered allocations.",
#endif
    "Writes each HIP device's queue operations, dispatches and allocations, timed on the GPU,\n"
    "to this file as a Chrome/Perfetto trace when the device is destroyed (a second device\n"
    "writes FILE.1, ...). Overrides IREE_HIP_TRACE_FILE.",
};

static hip_rs_string_view_t hip_rs_cstring_view(const char* text) {
  hip_rs_string_view_t view = {text, strlen(text)};
  return view;
}

static hip_rs_status_t hip_rs_flag_error(const char* name, hip_rs_string_view_t value,
                                         const char* expected) {
  if (!iree_status_allocate_f) return (hip_rs_status_t)(uintptr_t)HIP_RS_IREE_STATUS_INVALID_ARGUMENT;
  return iree_status_allocate_f(HIP_RS_IREE_STATUS_INVALID_ARGUMENT, __FILE__, __LINE__,
                                "flag --%s expects %s, got '%.*s'", name, expected,
                                (int)value.size, value.data);
}

static int hip_rs_equals(hip_rs_string_view_t value, const char* text) {
  return value.size == strlen(text) && memcmp(value.data, text, value.size) == 0;
}

static int hip_rs_parse_bool(hip_rs_string_view_t value, int32_t* out) {
  if (value.size == 0 || hip_rs_equals(value, "true") || hip_rs_equals(value, "1")) {
    *out = 1;
    return 1;
  }
  if (hip_rs_equals(value, "false") || hip_rs_equals(value, "0")) {
    *out = 0;
    return 1;
  }
  return 0;
}

static int hip_rs_parse_int(hip_rs_string_view_t value, int32_t* out) {
  char text[16];
  if (value.size == 0 || value.size >= sizeof(text)) return 0;
  memcpy(text, value.data, value.size);
  text[value.size] = 0;
  char* end = NULL;
  long parsed = strtol(text, &end, 10);
  if (*end != 0 || parsed < INT32_MIN || parsed > INT32_MAX) return 0;
  *out = (int32_t)parsed;
  return 1;
}

static hip_rs_status_t hip_rs_parse_flag(hip_rs_string_view_t name, void* storage,
                                         hip_rs_string_view_t value) {
  (void)name;
  uintptr_t flag = (uintptr_t)storage;
  const char* flag_name = hip_rs_flag_names[flag];
  hip_rs_cli_flags_t* f = &hip_rs_flags;
  switch (flag) {
    case HIP_RS_FLAG_DYLIB_PATH:
      if (f->dylib_path_count == HIP_RS_MAX_DYLIB_PATHS) {
        return hip_rs_flag_error(flag_name, value, "at most 32 occurrences");
      }
      f->dylib_paths[f->dylib_path_count++] = value;
      return NULL;
    case HIP_RS_FLAG_USE_STREAMS:
      if (!hip_rs_parse_bool(value, &f->use_streams)) return hip_rs_flag_error(flag_name, value, "true or false");
      f->use_streams_set = 1;
      return NULL;
    case HIP_RS_FLAG_ALLOW_INLINE_EXECUTION:
      if (!hip_rs_parse_bool(value, &f->allow_inline_execution)) return hip_rs_flag_error(flag_name, value, "true or false");
      f->allow_inline_execution_set = 1;
      return NULL;
    case HIP_RS_FLAG_ASYNC_ALLOCATIONS:
      if (!hip_rs_parse_bool(value, &f->async_allocations)) return hip_rs_flag_error(flag_name, value, "true or false");
      f->async_allocations_set = 1;
      return NULL;
    case HIP_RS_FLAG_TRACING:
      if (!hip_rs_parse_int(value, &f->tracing)) return hip_rs_flag_error(flag_name, value, "an integer");
      f->tracing_set = 1;
      return NULL;
    case HIP_RS_FLAG_DEFAULT_INDEX:
      if (!hip_rs_parse_int(value, &f->default_index)) return hip_rs_flag_error(flag_name, value, "an integer");
      f->default_index_set = 1;
      return NULL;
#if defined(IREE_HAL_HIP_RS_IREE_3_13)
    case HIP_RS_FLAG_ASYNC_CACHING:
      if (!hip_rs_parse_bool(value, &f->async_caching)) return hip_rs_flag_error(flag_name, value, "true or false");
      f->async_caching_set = 1;
      return NULL;
#endif
    case HIP_RS_FLAG_TRACE_FILE:
      f->trace_file = value;
      return NULL;
    default:
      return hip_rs_flag_error("?", value, "a known flag");
  }
}

static void hip_rs_print_flag(hip_rs_string_view_t name, void* storage, FILE* file) {
  (void)name;
  const hip_rs_cli_flags_t* f = &hip_rs_flags;
  switch ((uintptr_t)storage) {
    case HIP_RS_FLAG_DYLIB_PATH:
      for (size_t i = 0; i < f->dylib_path_count; ++i) {
        fprintf(file, "--hip_dylib_path=%.*s\n", (int)f->dylib_paths[i].size, f->dylib_paths[i].data);
      }
      break;
    case HIP_RS_FLAG_USE_STREAMS:
      fprintf(file, "--hip_use_streams=%s\n", (!f->use_streams_set || f->use_streams) ? "true" : "false");
      break;
    case HIP_RS_FLAG_ALLOW_INLINE_EXECUTION:
      fprintf(file, "--hip_allow_inline_execution=%s\n", f->allow_inline_execution ? "true" : "false");
      break;
    case HIP_RS_FLAG_ASYNC_ALLOCATIONS:
      fprintf(file, "--hip_async_allocations=%s\n", (!f->async_allocations_set || f->async_allocations) ? "true" : "false");
      break;
    case HIP_RS_FLAG_TRACING:
      fprintf(file, "--hip_tracing=%d\n", f->tracing_set ? f->tracing : 2);
      break;
    case HIP_RS_FLAG_DEFAULT_INDEX:
      fprintf(file, "--hip_default_index=%d\n", f->default_index);
      break;
#if defined(IREE_HAL_HIP_RS_IREE_3_13)
    case HIP_RS_FLAG_ASYNC_CACHING:
      fprintf(file, "--hip_async_caching=%s\n", (!f->async_caching_set || f->async_caching) ? "true" : "false");
      break;
#endif
    case HIP_RS_FLAG_TRACE_FILE:
      fprintf(file, "--hip_trace_file=%.*s\n", (int)f->trace_file.size, f->trace_file.data ? f->trace_file.data : "");
      break;
  }
}

/* Through whichever iree_flag_register the program resolves: IREE's flag library's, or
 * ours (which forwards to it, or refuses with -1 when the program has none). */
__attribute__((constructor)) static void hip_rs_register_flags(void) {
  if (!iree_flag_register || hip_rs_flags.registered) return;
  for (uintptr_t i = 0; i < HIP_RS_FLAG_COUNT; ++i) {
    int ordinal = iree_flag_register(__FILE__, __LINE__, HIP_RS_IREE_FLAG_TYPE_CALLBACK, (void*)i,
                                     hip_rs_parse_flag, hip_rs_print_flag,
                                     hip_rs_cstring_view(hip_rs_flag_names[i]),
                                     hip_rs_cstring_view(hip_rs_flag_descriptions[i]));
    if (ordinal < 0) return; /* no flag library in this program */
    hip_rs_flags.registered = 1;
  }
}

/* 3. The filter behind our exported iree_flag_register (see the top of this file). */
typedef int (*hip_rs_flag_register_fn)(const char* file, int line, int type, void* storage,
                                       hip_rs_flag_parse_fn parse_callback,
                                       hip_rs_flag_print_fn print_callback,
                                       hip_rs_string_view_t name,
                                       hip_rs_string_view_t description);

static int hip_rs_is_driver_flag(hip_rs_string_view_t name) {
  for (int i = 0; i < HIP_RS_FLAG_COUNT; ++i) {
    if (name.data && hip_rs_equals(name, hip_rs_flag_names[i])) return 1;
  }
  return 0;
}

int iree_hal_hip_rs_filter_flag_registration(const char* file, int line, int type, void* storage,
                                             hip_rs_flag_parse_fn parse_callback,
                                             hip_rs_flag_print_fn print_callback,
                                             hip_rs_string_view_t name,
                                             hip_rs_string_view_t description) {
  /* Another library's --hip_* flag of the same name: IREE's C HIP driver, which this
   * library replaces; its copy would shadow ours or be listed twice. */
  if (parse_callback != hip_rs_parse_flag && hip_rs_is_driver_flag(name)) return -1;
  /* The definition after ours in the lookup order: IREE's flag library, if loaded. */
  hip_rs_flag_register_fn next = (hip_rs_flag_register_fn)dlsym(RTLD_NEXT, "iree_flag_register");
  if (!next) return -1;
  return next(file, line, type, storage, parse_callback, print_callback, name, description);
}

/* The flags IREE parsed so far (zeros when IREE's flag library is absent). Called from
 * Rust, which also keeps this object, and so the constructor above, in every link. */
void iree_hal_hip_rs_cli_flags_snapshot(hip_rs_cli_flags_t* out_flags) { *out_flags = hip_rs_flags; }

/* 1. The program's registry entry point (see the top of this file). */
typedef struct hip_rs_driver_registry_t hip_rs_driver_registry_t;
typedef struct hip_rs_driver_factory_t hip_rs_driver_factory_t;
extern hip_rs_status_t iree_hal_driver_registry_register_factory(
    hip_rs_driver_registry_t* registry, const hip_rs_driver_factory_t* factory);

hip_rs_status_t iree_hal_hip_rs_register_factory_in_program_registry(
    hip_rs_driver_registry_t* registry, const hip_rs_driver_factory_t* factory) {
  return iree_hal_driver_registry_register_factory(registry, factory);
}
