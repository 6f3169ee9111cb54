/* Reads file paths from stdin; prints "ACCEPT path" or "REJECT path reason" for each,
 * applying flatcc's generated verifier and the content checks of IREE's HIP loader
 * (without the device-limit checks). Buffers are copied to 16-byte aligned memory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hip_executable_def_reader.h"
#include "hip_executable_def_verifier.h"

static const char* check_location(iree_hal_debug_FileLineLocDef_table_t loc) {
  if (!loc) return NULL;
  if (flatbuffers_string_len(iree_hal_debug_FileLineLocDef_filename_get(loc)) == 0) return "debug filename empty";
  return NULL;
}

static const char* check(const void* data, size_t size) {
  int rc = iree_hal_hip_ExecutableDef_verify_as_root(data, size);
  if (rc != flatcc_verify_ok) return flatcc_verify_error_string(rc);
  iree_hal_hip_ExecutableDef_table_t root = iree_hal_hip_ExecutableDef_as_root(data);
  iree_hal_hip_ModuleDef_vec_t modules = iree_hal_hip_ExecutableDef_modules_get(root);
  size_t module_count = iree_hal_hip_ModuleDef_vec_len(modules);
  for (size_t i = 0; i < module_count; ++i) {
    iree_hal_hip_ModuleDef_table_t m = iree_hal_hip_ModuleDef_vec_at(modules, i);
    if (!m) return "module null";
    if (flatbuffers_string_len(iree_hal_hip_ModuleDef_hsaco_image_get(m)) == 0) return "module empty";
  }
  iree_hal_hip_ExportDef_vec_t exports = iree_hal_hip_ExecutableDef_exports_get(root);
  for (size_t i = 0; i < iree_hal_hip_ExportDef_vec_len(exports); ++i) {
    iree_hal_hip_ExportDef_table_t e = iree_hal_hip_ExportDef_vec_at(exports, i);
    if (!e) continue;
    if (iree_hal_hip_ExportDef_module_ordinal_get(e) >= module_count) return "module ordinal";
    if (flatbuffers_string_len(iree_hal_hip_ExportDef_kernel_name_get(e)) == 0) return "name empty";
    if (!iree_hal_hip_ExportDef_block_dims_is_present(e)) return "no block dims";
    if (iree_hal_hip_ExportDef_constant_count_get(e) > 64) return "constants";
    if (iree_hal_hip_BindingBits_vec_len(iree_hal_hip_ExportDef_binding_flags_get(e)) > 16) return "bindings";
    iree_hal_debug_ExportDef_table_t d = iree_hal_hip_ExportDef_debug_info_get(e);
    if (d) {
      const char* r = check_location(iree_hal_debug_ExportDef_location_get(d));
      if (r) return r;
      iree_hal_debug_StageLocationDef_vec_t st = iree_hal_debug_ExportDef_stage_locations_get(d);
      for (size_t j = 0; j < iree_hal_debug_StageLocationDef_vec_len(st); ++j) {
        iree_hal_debug_StageLocationDef_table_t s = iree_hal_debug_StageLocationDef_vec_at(st, j);
        if (!s) return "stage null";
        if (flatbuffers_string_len(iree_hal_debug_StageLocationDef_stage_get(s)) == 0) return "stage empty";
        r = check_location(iree_hal_debug_StageLocationDef_location_get(s));
        if (r) return r;
      }
    }
  }
  return NULL;
}

int main(void) {
  char path[4096];
  while (fgets(path, sizeof path, stdin)) {
    path[strcspn(path, "\n")] = 0;
    FILE* f = fopen(path, "rb");
    if (!f) { perror(path); return 2; }
    fseek(f, 0, SEEK_END); long size = ftell(f); fseek(f, 0, SEEK_SET);
    void* data = NULL;
    if (posix_memalign(&data, 16, (size_t)size + 16)) return 2;
    if (fread(data, 1, (size_t)size, f) != (size_t)size) return 2;
    fclose(f);
    const char* reason = check(data, (size_t)size);
    if (reason) printf("REJECT %s %s\n", path, reason); else printf("ACCEPT %s\n", path);
    free(data);
  }
  return 0;
}
