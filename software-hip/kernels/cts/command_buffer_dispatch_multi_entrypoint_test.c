/* IREE 3.13 CTS executable "command_buffer_dispatch_multi_entrypoint_test":
 * export 0 `negate` (output[i] = -input[i]) and export 1 `double_it`
 * (output[i] = input[i] * 2), both on i32[4] with bindings 0 = input,
 * 1 = output; one workgroup of one thread each. */
#include <stdint.h>

#include "software_hip_kernel.h"

static int32_t negate_entry(const softhip_kernel_context_t* ctx) {
  const uint32_t* input = SOFTHIP_ARG(ctx, 0, const uint32_t*);
  uint32_t* output = SOFTHIP_ARG(ctx, 1, uint32_t*);
  for (uint32_t i = 0; i < 4; ++i) output[i] = 0u - input[i];
  return 0;
}
SOFTHIP_KERNEL(negate, SOFTHIP_PER_THREAD, negate_entry, SOFTHIP_PARAM(void*),
               SOFTHIP_PARAM(void*));

static int32_t double_it_entry(const softhip_kernel_context_t* ctx) {
  const uint32_t* input = SOFTHIP_ARG(ctx, 0, const uint32_t*);
  uint32_t* output = SOFTHIP_ARG(ctx, 1, uint32_t*);
  for (uint32_t i = 0; i < 4; ++i) output[i] = input[i] * 2u;
  return 0;
}
SOFTHIP_KERNEL(double_it, SOFTHIP_PER_THREAD, double_it_entry,
               SOFTHIP_PARAM(void*), SOFTHIP_PARAM(void*));
