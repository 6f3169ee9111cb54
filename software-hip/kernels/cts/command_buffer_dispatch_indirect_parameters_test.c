/* IREE 3.13 CTS executable "command_buffer_dispatch_indirect_parameters_test":
 * export 0 `write_dispatch_params`. Binding 0 = output i32[3]. One workgroup
 * of one thread writes the workgroup count {4, 1, 1} that a later indirect
 * dispatch reads. */
#include <stdint.h>

#include "software_hip_kernel.h"

static int32_t write_dispatch_params_entry(const softhip_kernel_context_t* ctx) {
  uint32_t* output = SOFTHIP_ARG(ctx, 0, uint32_t*);
  output[0] = 4;
  output[1] = 1;
  output[2] = 1;
  return 0;
}
SOFTHIP_KERNEL(write_dispatch_params, SOFTHIP_PER_THREAD,
               write_dispatch_params_entry, SOFTHIP_PARAM(void*));
