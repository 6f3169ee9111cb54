// The layout tables of our header's types.
#include "iree_hal_hip_rs.h"
#include "layout_record.h"

#define STRUCT LAYOUT_STRUCT_ROW
#define FIELD LAYOUT_FIELD_ROW
#define VALUE LAYOUT_VALUE_ROW
const layout_row_t layout_ours[] = {
#include "layout_fields.h"
};
const size_t layout_row_count = sizeof(layout_ours) / sizeof(layout_ours[0]);

#define IMAGE LAYOUT_IMAGE_OURS
const layout_image_t layout_images_ours[] = {
#include "layout_images.h"
};
const size_t layout_image_count =
    sizeof(layout_images_ours) / sizeof(layout_images_ours[0]);
