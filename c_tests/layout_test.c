// Compares, row by row, the size, alignment and field offsets of every shared type, and
// the value of every shared constant, in our header with IREE v3.3.0's headers; then the
// bytes of the bit-field and union images.
#include <stdio.h>
#include <string.h>

#include "layout_record.h"

static int compare_rows(void) {
  int failures = 0;
  for (size_t i = 0; i < layout_row_count; ++i) {
    const layout_row_t* ours = &layout_ours[i];
    const layout_row_t* iree = &layout_iree[i];
    if (ours->size_or_value == iree->size_or_value &&
        ours->offset_or_alignment == iree->offset_or_alignment) {
      continue;
    }
    ++failures;
    switch (ours->kind) {
      case LAYOUT_ROW_TYPE:
        fprintf(stderr, "%s: ours size %llu align %zu, IREE size %llu align %zu\n",
                ours->type, ours->size_or_value, ours->offset_or_alignment,
                iree->size_or_value, iree->offset_or_alignment);
        break;
      case LAYOUT_ROW_FIELD:
        fprintf(stderr, "%s.%s: ours size %llu offset %zu, IREE size %llu offset %zu\n",
                ours->type, ours->field, ours->size_or_value, ours->offset_or_alignment,
                iree->size_or_value, iree->offset_or_alignment);
        break;
      case LAYOUT_ROW_VALUE:
        fprintf(stderr, "%s: ours %#llx, IREE %#llx\n", ours->type, ours->size_or_value,
                iree->size_or_value);
        break;
    }
  }
  return failures;
}

static int compare_images(void) {
  int failures = 0;
  for (size_t i = 0; i < layout_image_count; ++i) {
    const layout_image_t* ours = &layout_images_ours[i];
    const layout_image_t* iree = &layout_images_iree[i];
    if (ours->size == iree->size && memcmp(ours->bytes, iree->bytes, ours->size) == 0) {
      continue;
    }
    ++failures;
    fprintf(stderr, "%s image of %s differs:\n  ours:", ours->type, ours->what);
    for (size_t j = 0; j < ours->size; ++j) {
      fprintf(stderr, " %02x", ((const unsigned char*)ours->bytes)[j]);
    }
    fprintf(stderr, "\n  IREE:");
    for (size_t j = 0; j < iree->size; ++j) {
      fprintf(stderr, " %02x", ((const unsigned char*)iree->bytes)[j]);
    }
    fprintf(stderr, "\n");
  }
  return failures;
}

int main(void) {
  int row_failures = compare_rows();
  int image_failures = compare_images();
  printf("layout_test: %zu rows compared, %d mismatches; %zu bit images compared, %d "
         "mismatches\n",
         layout_row_count, row_failures, layout_image_count, image_failures);
  return row_failures == 0 && image_failures == 0 ? 0 : 1;
}
