/* IREE 3.13 CTS executable "executable_test": export 0 `export0` with 2
 * bindings and 2 constants that does nothing (the CTS only reflects on it). */
#include <stdint.h>

#include "software_hip_kernel.h"

static int32_t export0_entry(const softhip_kernel_context_t* ctx) {
  (void)ctx;
  return 0;
}
SOFTHIP_KERNEL(export0, SOFTHIP_PER_THREAD, export0_entry, SOFTHIP_PARAM(void*),
               SOFTHIP_PARAM(void*), SOFTHIP_PARAM(uint32_t),
               SOFTHIP_PARAM(uint32_t));
