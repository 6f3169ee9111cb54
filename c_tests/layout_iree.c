// The layout table of the same types under IREE v3.3.0's own headers.
#include "iree/base/api.h"
#include "iree/hal/api.h"
#include "iree/hal/drivers/hip/api.h"
#include "layout_record.h"

#define STRUCT LAYOUT_STRUCT_ROW
#define FIELD LAYOUT_FIELD_ROW
const layout_row_t layout_iree[] = {
#include "layout_fields.h"
};
