/* IREE 3.13 CTS executable "command_buffer_dispatch_multi_workgroup_test":
 * export 0 `write_workgroup_ids`. Binding 0 = output i32[N]. Workgroups of one
 * thread; workgroup x stores x into output[x]. */
#include <stdint.h>

#include "software_hip_kernel.h"

static int32_t write_workgroup_ids_entry(const softhip_kernel_context_t* ctx) {
  uint32_t* output = SOFTHIP_ARG(ctx, 0, uint32_t*);
  output[ctx->block_idx.x] = ctx->block_idx.x;
  return 0;
}
SOFTHIP_KERNEL(write_workgroup_ids, SOFTHIP_PER_THREAD,
               write_workgroup_ids_entry, SOFTHIP_PARAM(void*));
