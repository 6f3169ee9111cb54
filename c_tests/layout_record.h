// One row of the layout tables built from layout_fields.h.
#ifndef IREE_HAL_HIP_RS_C_TESTS_LAYOUT_RECORD_H_
#define IREE_HAL_HIP_RS_C_TESTS_LAYOUT_RECORD_H_
#include <stddef.h>

typedef struct layout_row_t {
  const char* type;
  const char* field;  // NULL for the struct's own size and alignment row.
  size_t size;
  size_t offset_or_alignment;
} layout_row_t;

#define LAYOUT_STRUCT_ROW(T) {#T, NULL, sizeof(T), _Alignof(T)},
#define LAYOUT_FIELD_ROW(T, F) {#T, #F, sizeof(((T*)0)->F), offsetof(T, F)},

extern const layout_row_t layout_ours[];
extern const layout_row_t layout_iree[];
extern const size_t layout_row_count;
#endif
