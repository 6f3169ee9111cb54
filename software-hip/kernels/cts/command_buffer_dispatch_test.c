/* CTS executable "command_buffer_dispatch_test": export 0 `abs`.
 * Bindings: 0 = input f32[2] (read), 1 = output f32[2] (write); no constants.
 * One workgroup of 2 threads; thread x stores |input[x]| into output[x].
 * The CTS binds both buffers at a 4-byte offset and expects
 * output = {-9, 2.5, 2.5, -9} after running on input filled with -2.5. */
#include <stdint.h>

#include "software_hip_kernel.h"

#define ELEMENT_COUNT 2u

static int32_t abs_entry(const softhip_kernel_context_t* ctx) {
  const float* input = SOFTHIP_ARG(ctx, 0, const float*);
  float* output = SOFTHIP_ARG(ctx, 1, float*);
  uint32_t i = softhip_global_x(ctx, ctx->thread_idx);
  if (i < ELEMENT_COUNT) output[i] = __builtin_fabsf(input[i]);
  return 0;
}
SOFTHIP_KERNEL(abs, SOFTHIP_PER_THREAD, abs_entry, SOFTHIP_PARAM(void*),
               SOFTHIP_PARAM(void*));
