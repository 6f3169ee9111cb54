// The rows of the layout tables built from layout_fields.h and layout_images.h.
#ifndef IREE_HAL_HIP_RS_C_TESTS_LAYOUT_RECORD_H_
#define IREE_HAL_HIP_RS_C_TESTS_LAYOUT_RECORD_H_
#include <stddef.h>

typedef enum layout_row_kind_t {
  LAYOUT_ROW_TYPE,   // size and alignment of a type
  LAYOUT_ROW_FIELD,  // size and offset of a field
  LAYOUT_ROW_VALUE,  // value of a constant
} layout_row_kind_t;

typedef struct layout_row_t {
  layout_row_kind_t kind;
  const char* type;
  const char* field;  // NULL unless kind is LAYOUT_ROW_FIELD
  unsigned long long size_or_value;
  size_t offset_or_alignment;
} layout_row_t;

#define LAYOUT_STRUCT_ROW(T) {LAYOUT_ROW_TYPE, #T, NULL, sizeof(T), _Alignof(T)},
#define LAYOUT_FIELD_ROW(T, F) \
  {LAYOUT_ROW_FIELD, #T, #F, sizeof(((T*)0)->F), offsetof(T, F)},
#define LAYOUT_VALUE_ROW(C) {LAYOUT_ROW_VALUE, #C, NULL, (unsigned long long)(C), 0},

extern const layout_row_t layout_ours[];
extern const layout_row_t layout_iree[];
extern const size_t layout_row_count;

// The bytes of one object initialized by one side's initializer (static storage, so
// padding is zero on both sides).
typedef struct layout_image_t {
  const char* type;
  const char* what;
  const void* bytes;
  size_t size;
} layout_image_t;

#define LAYOUT_IMAGE_IREE(T, WHAT, IREE_INIT, OURS_INIT) \
  {#T, #WHAT, &(T){IREE_INIT}, sizeof(T)},
#define LAYOUT_IMAGE_OURS(T, WHAT, IREE_INIT, OURS_INIT) \
  {#T, #WHAT, &(T){OURS_INIT}, sizeof(T)},

extern const layout_image_t layout_images_ours[];
extern const layout_image_t layout_images_iree[];
extern const size_t layout_image_count;
#endif
