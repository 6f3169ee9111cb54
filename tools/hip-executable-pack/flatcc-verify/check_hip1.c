/* Checks HIP1 files with the flatcc verifier and reader generated from
 * IREE's own schema (hip_executable_def.fbs), applying the same content
 * checks IREE's HIP driver applies before loading an executable.
 * usage: check_hip1 FILE...   (exit status 0 only if every file passes) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hip_executable_def_reader.h"
#include "hip_executable_def_verifier.h"

static int check_contents(const void* data) {
  iree_hal_hip_ExecutableDef_table_t root = iree_hal_hip_ExecutableDef_as_root(data);
  iree_hal_hip_ModuleDef_vec_t modules = iree_hal_hip_ExecutableDef_modules_get(root);
  size_t module_count = iree_hal_hip_ModuleDef_vec_len(modules);
  for (size_t i = 0; i < module_count; ++i) {
    iree_hal_hip_ModuleDef_table_t module = iree_hal_hip_ModuleDef_vec_at(modules, i);
    if (!module || flatbuffers_string_len(iree_hal_hip_ModuleDef_hsaco_image_get(module)) == 0) {
      fprintf(stderr, "  module %zu missing or empty\n", i);
      return 1;
    }
    printf("  module %zu: %zu bytes\n", i,
           flatbuffers_string_len(iree_hal_hip_ModuleDef_hsaco_image_get(module)));
  }
  iree_hal_hip_ExportDef_vec_t exports = iree_hal_hip_ExecutableDef_exports_get(root);
  for (size_t i = 0; i < iree_hal_hip_ExportDef_vec_len(exports); ++i) {
    iree_hal_hip_ExportDef_table_t e = iree_hal_hip_ExportDef_vec_at(exports, i);
    if (!e) continue;
    uint32_t ordinal = iree_hal_hip_ExportDef_module_ordinal_get(e);
    flatbuffers_string_t name = iree_hal_hip_ExportDef_kernel_name_get(e);
    if (ordinal >= module_count || flatbuffers_string_len(name) == 0 ||
        !iree_hal_hip_ExportDef_block_dims_is_present(e) ||
        iree_hal_hip_ExportDef_constant_count_get(e) > 64 ||
        iree_hal_hip_BindingBits_vec_len(iree_hal_hip_ExportDef_binding_flags_get(e)) > 16) {
      fprintf(stderr, "  export %zu fails the driver's checks\n", i);
      return 1;
    }
    const iree_hal_hip_BlockDims_t* dims = iree_hal_hip_ExportDef_block_dims_get(e);
    iree_hal_debug_ExportDef_table_t debug = iree_hal_hip_ExportDef_debug_info_get(e);
    printf("  export %zu: %s module=%u block=%ux%ux%u shared=%u constants=%u bindings=%zu debug_name=%s\n",
           i, name, ordinal, dims->x, dims->y, dims->z,
           iree_hal_hip_ExportDef_block_shared_memory_size_get(e),
           iree_hal_hip_ExportDef_constant_count_get(e),
           iree_hal_hip_BindingBits_vec_len(iree_hal_hip_ExportDef_binding_flags_get(e)),
           debug ? iree_hal_debug_ExportDef_name_get(debug) : "(none)");
  }
  return 0;
}

int main(int argc, char** argv) {
  int failures = 0;
  for (int a = 1; a < argc; ++a) {
    FILE* f = fopen(argv[a], "rb");
    if (!f) { perror(argv[a]); ++failures; continue; }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    /* The verifier checks alignment: malloc's 16-byte alignment matches
     * IREE's embedded data. (flatcc's headers redefine aligned_alloc.) */
    void* data = malloc((size_t)size + 16);
    if (!data || fread(data, 1, (size_t)size, f) != (size_t)size) { perror(argv[a]); ++failures; fclose(f); continue; }
    fclose(f);
    int rc = iree_hal_hip_ExecutableDef_verify_as_root(data, (size_t)size);
    if (rc != flatcc_verify_ok) {
      printf("%s: FAIL flatcc verifier: %s\n", argv[a], flatcc_verify_error_string(rc));
      ++failures;
    } else {
      printf("%s: flatcc verifier OK\n", argv[a]);
      if (check_contents(data)) { printf("%s: FAIL content checks\n", argv[a]); ++failures; }
    }
    free(data);
  }
  return failures ? 1 : 0;
}
