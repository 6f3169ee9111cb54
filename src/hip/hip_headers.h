/* What bindgen reads for the HIP types (the driver's own declarations of each function come
 * from its symbol table, not from here). */
#define __HIP_PLATFORM_AMD__ 1
#include <hip/hip_runtime_api.h>
