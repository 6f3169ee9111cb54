// IREE 3.13's async semaphore and proactor pool headers: what bindgen reads for the layouts
// that depend on IREE's build configuration, and what async_glue.c is compiled against.
#include "iree/async/semaphore.h"
#include "iree/async/util/proactor_pool.h"
