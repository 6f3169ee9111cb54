# Our driver's IREE 3.13 build (cargo build --release --features iree-3-13, target/iree-3.13)
# prepared for linking into an IREE 3.13 program, as the 3.13 CTS (../cts/) and IREE 3.13's
# tools (../external-build/) link it:
# - the archive with the registry entry points weak (IREE's driver_registry.c wins);
# - IREE's async functions that the library references weakly (src/iree_3_13/async_glue.c)
#   named with --undefined, since a weak reference does not pull an archive member into a
#   static link.
#
# iree_hal_hip_rs_313_for_iree(<cargo target> <archive> <output> <archive target>)
#   makes <output> from <archive> (built by <cargo target>) and the custom target
#   <archive target> for it;
# IREE_HAL_HIP_RS_313_LINK_OPTIONS: the --undefined options (LINKER: form).
get_filename_component(_iree_hal_hip_rs_313_repo "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
include("${_iree_hal_hip_rs_313_repo}/cmake/registry_symbols.cmake")
find_program(OBJCOPY objcopy REQUIRED)

function(iree_hal_hip_rs_313_for_iree cargo_target archive output archive_target)
  list(TRANSFORM IREE_HAL_HIP_RS_REGISTRY_SYMBOLS PREPEND "--weaken-symbol=" OUTPUT_VARIABLE _weaken_args)
  get_filename_component(_name "${output}" NAME)
  add_custom_command(OUTPUT "${output}"
    COMMAND ${OBJCOPY} ${_weaken_args} "${archive}" "${output}"
    DEPENDS ${cargo_target} "${archive}"
    COMMENT "${_name} (registry entry points weak)")
  add_custom_target(${archive_target} DEPENDS "${output}")
endfunction()

# One list: src/iree_3_13/async_functions.txt (checked against the glue by ../test.sh).
file(STRINGS "${_iree_hal_hip_rs_313_repo}/src/iree_3_13/async_functions.txt" _iree_hal_hip_rs_313_async)
list(TRANSFORM _iree_hal_hip_rs_313_async PREPEND "LINKER:--undefined="
  OUTPUT_VARIABLE IREE_HAL_HIP_RS_313_LINK_OPTIONS)
