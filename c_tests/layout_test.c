// Compares, row by row, the size, alignment and field offsets of every shared type in our
// header with IREE v3.3.0's headers.
#include <stdio.h>
#include <string.h>

#include "layout_record.h"

int main(void) {
  int failures = 0;
  for (size_t i = 0; i < layout_row_count; ++i) {
    const layout_row_t* ours = &layout_ours[i];
    const layout_row_t* iree = &layout_iree[i];
    if (ours->size != iree->size ||
        ours->offset_or_alignment != iree->offset_or_alignment) {
      fprintf(stderr, "%s%s%s: ours size %zu %s %zu, IREE size %zu %s %zu\n",
              ours->type, ours->field ? "." : "", ours->field ? ours->field : "",
              ours->size, ours->field ? "offset" : "align", ours->offset_or_alignment,
              iree->size, iree->field ? "offset" : "align", iree->offset_or_alignment);
      ++failures;
    }
  }
  printf("layout_test: %zu rows compared, %d mismatches\n", layout_row_count, failures);
  return failures == 0 ? 0 : 1;
}
