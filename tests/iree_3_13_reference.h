// IREE 3.13's HAL and HIP driver headers: the reference the 3.13 layout test compares our
// mirrors with (build.rs, generate_iree_3_13_reference).
#include "iree/hal/api.h"
#include "iree/hal/drivers/hip/api.h"
