/* CTS executable "command_buffer_dispatch_constants_test": export 0
 * `write_constants`. Binding 0 = output i32[4]; 4 push constants.
 * One workgroup of one thread storing constant i into output[i]. */
#include <stdint.h>

#include "software_hip_kernel.h"

static int32_t write_constants_entry(const softhip_kernel_context_t* ctx) {
  uint32_t* output = SOFTHIP_ARG(ctx, 0, uint32_t*);
  for (uint32_t i = 0; i < 4; ++i) output[i] = SOFTHIP_ARG(ctx, 1 + i, uint32_t);
  return 0;
}
SOFTHIP_KERNEL(write_constants, SOFTHIP_PER_THREAD, write_constants_entry,
               SOFTHIP_PARAM(void*), SOFTHIP_PARAM(uint32_t),
               SOFTHIP_PARAM(uint32_t), SOFTHIP_PARAM(uint32_t),
               SOFTHIP_PARAM(uint32_t));
