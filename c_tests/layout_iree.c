// The layout tables of the same types under IREE v3.3.0's own headers.
#include "iree/base/api.h"
#include "iree/hal/api.h"
#include "iree/hal/command_buffer_validation.h"
#include "iree/hal/drivers/hip/api.h"
#include "iree/io/file_handle.h"
#include "layout_record.h"

#define STRUCT LAYOUT_STRUCT_ROW
#define FIELD LAYOUT_FIELD_ROW
#define VALUE LAYOUT_VALUE_ROW
const layout_row_t layout_iree[] = {
#include "layout_fields.h"
};

#define IMAGE LAYOUT_IMAGE_IREE
const layout_image_t layout_images_iree[] = {
#include "layout_images.h"
};
