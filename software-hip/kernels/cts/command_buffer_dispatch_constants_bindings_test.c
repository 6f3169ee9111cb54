/* IREE 3.13 CTS executable "command_buffer_dispatch_constants_bindings_test":
 * export 0 `scale_and_offset`. Bindings: 0 = input i32[4], 1 = output i32[4];
 * constants: 0 = scale, 1 = offset. One workgroup of one thread:
 * output[i] = input[i] * scale + offset (i32, wrapping). */
#include <stdint.h>

#include "software_hip_kernel.h"

static int32_t scale_and_offset_entry(const softhip_kernel_context_t* ctx) {
  const uint32_t* input = SOFTHIP_ARG(ctx, 0, const uint32_t*);
  uint32_t* output = SOFTHIP_ARG(ctx, 1, uint32_t*);
  uint32_t scale = SOFTHIP_ARG(ctx, 2, uint32_t);
  uint32_t offset = SOFTHIP_ARG(ctx, 3, uint32_t);
  for (uint32_t i = 0; i < 4; ++i) output[i] = input[i] * scale + offset;
  return 0;
}
SOFTHIP_KERNEL(scale_and_offset, SOFTHIP_PER_THREAD, scale_and_offset_entry,
               SOFTHIP_PARAM(void*), SOFTHIP_PARAM(void*),
               SOFTHIP_PARAM(uint32_t), SOFTHIP_PARAM(uint32_t));
