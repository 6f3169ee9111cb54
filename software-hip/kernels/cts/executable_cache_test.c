/* CTS executable "executable_cache_test": export 0 `abs` on scalars.
 * Bindings: 0 = input f32 (read), 1 = output f32 (write); no constants.
 * One workgroup of one thread: *output = |*input|. The CTS only prepares
 * this executable; it never dispatches it. */
#include <stdint.h>

#include "software_hip_kernel.h"

static int32_t abs_entry(const softhip_kernel_context_t* ctx) {
  const float* input = SOFTHIP_ARG(ctx, 0, const float*);
  float* output = SOFTHIP_ARG(ctx, 1, float*);
  *output = __builtin_fabsf(*input);
  return 0;
}
SOFTHIP_KERNEL(abs, SOFTHIP_PER_THREAD, abs_entry, SOFTHIP_PARAM(void*),
               SOFTHIP_PARAM(void*));
