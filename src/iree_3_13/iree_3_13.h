// IREE 3.13's headers for what bindgen generates under the iree-3-13 feature
// (build.rs): the types only IREE 3.13 has, and the async semaphore layouts.
#include "iree/hal/api.h"
#include "async_glue.h"
#include "iree/hal/memory/slab_provider.h"
#include "iree/hal/pool.h"
