// Minimal assertions for the C tests: print where and why, then exit non-zero.
#ifndef IREE_HAL_HIP_RS_C_TESTS_TEST_UTIL_H_
#define IREE_HAL_HIP_RS_C_TESTS_TEST_UTIL_H_

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iree_hal_hip_rs.h"

#define CHECK(cond)                                                   \
  do {                                                                \
    if (!(cond)) {                                                    \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, \
              #cond);                                                 \
      exit(1);                                                        \
    }                                                                 \
  } while (0)

static inline iree_allocator_t test_system_allocator(void) {
  iree_allocator_t allocator = {NULL, iree_allocator_system_ctl};
  return allocator;
}

static inline iree_string_view_t test_sv(const char* text) {
  iree_string_view_t view = {text, strlen(text)};
  return view;
}

// Renders |status| with IREE's own iree_status_to_string, frees it, and returns the text
// (caller frees). Checks that the code is |expected_code|.
static inline char* test_consume_status(iree_status_t status,
                                        iree_status_code_t expected_code) {
  iree_status_code_t code = iree_hal_hip_rs_status_code(status);
  if (code != expected_code) {
    fprintf(stderr, "expected status code %u, got %u\n", expected_code, code);
  }
  CHECK(code == expected_code);
  iree_allocator_t allocator = test_system_allocator();
  char* text = NULL;
  iree_host_size_t length = 0;
  CHECK(iree_status_to_string(status, &allocator, &text, &length));
  CHECK(strlen(text) == length);
  char* copy = strdup(text);
  free(text);
  iree_status_free(status);
  return copy;
}

#define CHECK_OK(expr) \
  free(test_consume_status((expr), IREE_STATUS_OK))

#define CHECK_STATUS_CONTAINS(expr, expected_code, needle)                      \
  do {                                                                          \
    char* _text = test_consume_status((expr), (expected_code));                 \
    if (!strstr(_text, (needle))) {                                             \
      fprintf(stderr, "%s:%d: status '%s' lacks '%s'\n", __FILE__, __LINE__,   \
              _text, (needle));                                                 \
      exit(1);                                                                  \
    }                                                                           \
    free(_text);                                                                \
  } while (0)

#endif  // IREE_HAL_HIP_RS_C_TESTS_TEST_UTIL_H_
