/* Our IREE 3.13 test of executable globals (iree-harness/iree-3.13/cts/
 * executable_global_test.c): a module global `global_words` of four words, and
 * export 0 `read_global` copying them to its binding, so the test can check that
 * the buffer lookup_global_by_name returns is the memory the kernel reads. */
#include <stdint.h>

#include "software_hip_kernel.h"

__attribute__((visibility("default"))) uint32_t global_words[4] = {11, 22, 33, 44};

static int32_t read_global_entry(const softhip_kernel_context_t* ctx) {
  uint32_t* out = SOFTHIP_ARG(ctx, 0, uint32_t*);
  for (int i = 0; i < 4; ++i) out[i] = global_words[i];
  return 0;
}
SOFTHIP_KERNEL(read_global, SOFTHIP_PER_THREAD, read_global_entry,
               SOFTHIP_PARAM(uint32_t*));
