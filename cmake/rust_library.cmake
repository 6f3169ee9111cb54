# Builds the Rust library with cargo (release) and exposes it as three imported targets:
#   iree_hal_hip_rs::shared           (libiree_hal_hip_rs.so, the cdylib)
#   iree_hal_hip_rs::static           (libiree_hal_hip_rs.a, the staticlib, iree_flag_register weak)
#   iree_hal_hip_rs::static_for_iree  (the staticlib with the registry entry points weak)
# iree_hal_hip_rs_import_rust_library() makes the same three targets for another build of
# the library (cmake/sanitizers.cmake: the library built with the Rust address sanitizer).
find_program(CARGO cargo REQUIRED)
find_program(OBJCOPY objcopy REQUIRED)
set(IREE_HAL_HIP_RS_TARGET_DIR "${CMAKE_CURRENT_LIST_DIR}/../target" CACHE PATH "Cargo target directory")
set(IREE_HAL_HIP_RS_LIB_DIR "${IREE_HAL_HIP_RS_TARGET_DIR}/release")
set(IREE_HAL_HIP_RS_INCLUDE_DIR "${CMAKE_CURRENT_LIST_DIR}/../include")

include(${CMAKE_CURRENT_LIST_DIR}/registry_symbols.cmake)

# _iree_hal_hip_rs_weakened_archive(<target> <archive target> <file> <lib dir> <cargo target> <symbol>...)
# The imported static library <target>: cargo's libiree_hal_hip_rs.a from <lib dir> copied
# to <file> by objcopy (custom target <archive target>) with the given symbols made weak.
function(_iree_hal_hip_rs_weakened_archive target archive_target file lib_dir cargo_target)
  set(_weaken_args)
  foreach(_symbol IN LISTS ARGN)
    list(APPEND _weaken_args "--weaken-symbol=${_symbol}")
  endforeach()
  get_filename_component(_file_name "${file}" NAME)
  list(JOIN ARGN " " _symbols)
  add_custom_command(
    OUTPUT ${file}
    COMMAND ${OBJCOPY} ${_weaken_args} ${lib_dir}/libiree_hal_hip_rs.a ${file}
    DEPENDS ${cargo_target} ${lib_dir}/libiree_hal_hip_rs.a
    COMMENT "${_file_name} (weak: ${_symbols})")
  add_custom_target(${archive_target} ALL DEPENDS ${file})
  add_library(${target} STATIC IMPORTED GLOBAL)
  set_target_properties(${target} PROPERTIES
    IMPORTED_LOCATION ${file}
    INTERFACE_INCLUDE_DIRECTORIES ${IREE_HAL_HIP_RS_INCLUDE_DIR}
    INTERFACE_LINK_LIBRARIES "pthread;dl;m")
  add_dependencies(${target} ${archive_target})
endfunction()

# iree_hal_hip_rs_import_rust_library(<name> <lib dir> <cargo target>)
# Imported targets <name>::shared, <name>::static and <name>::static_for_iree for the
# libiree_hal_hip_rs.so and .a that the custom target <cargo target> builds into <lib dir>;
# the two weakened archives are ${CMAKE_BINARY_DIR}/lib<name>_static.a and
# lib<name>_for_iree.a, made by the targets <name>_static_archive and <name>_for_iree_archive.
function(iree_hal_hip_rs_import_rust_library name lib_dir cargo_target)
  add_library(${name}_shared SHARED IMPORTED GLOBAL)
  set_target_properties(${name}_shared PROPERTIES
    IMPORTED_LOCATION ${lib_dir}/libiree_hal_hip_rs.so
    IMPORTED_NO_SONAME ON
    INTERFACE_INCLUDE_DIRECTORIES ${IREE_HAL_HIP_RS_INCLUDE_DIR})
  add_dependencies(${name}_shared ${cargo_target})
  add_library(${name}::shared ALIAS ${name}_shared)

  # The static library as cargo makes it, but with our iree_flag_register (exported for
  # preloading, src/registration/preload.rs) weak, so that a program may also link IREE's
  # flag library (IREE's definition then wins; nothing is defined twice).
  _iree_hal_hip_rs_weakened_archive(${name}_static ${name}_static_archive
    "${CMAKE_BINARY_DIR}/lib${name}_static.a" ${lib_dir} ${cargo_target} iree_flag_register)
  add_library(${name}::static ALIAS ${name}_static)

  # The static library for linking into an IREE build, which has its own driver registry
  # (iree::hal's driver_registry.c) and flag library: the same archive with our registry
  # entry points and our iree_flag_register made weak, so IREE's definitions win whatever
  # the link order and nothing is defined twice. The HIP driver registers its factory
  # into whichever registry the program uses.
  _iree_hal_hip_rs_weakened_archive(${name}_static_for_iree ${name}_for_iree_archive
    "${CMAKE_BINARY_DIR}/lib${name}_for_iree.a" ${lib_dir} ${cargo_target} ${IREE_HAL_HIP_RS_REGISTRY_SYMBOLS})
  add_library(${name}::static_for_iree ALIAS ${name}_static_for_iree)
endfunction()

add_custom_target(iree_hal_hip_rs_cargo ALL
  COMMAND ${CARGO} build --release --package iree-hal-hip-rs --package software-hip --target-dir ${IREE_HAL_HIP_RS_TARGET_DIR}
  WORKING_DIRECTORY ${CMAKE_CURRENT_LIST_DIR}/..
  BYPRODUCTS ${IREE_HAL_HIP_RS_LIB_DIR}/libiree_hal_hip_rs.so ${IREE_HAL_HIP_RS_LIB_DIR}/libiree_hal_hip_rs.a
  COMMENT "cargo build --release -p iree-hal-hip-rs -p software-hip"
  USES_TERMINAL)
iree_hal_hip_rs_import_rust_library(iree_hal_hip_rs ${IREE_HAL_HIP_RS_LIB_DIR} iree_hal_hip_rs_cargo)
set(IREE_HAL_HIP_RS_STATIC "${CMAKE_BINARY_DIR}/libiree_hal_hip_rs_static.a")
set(IREE_HAL_HIP_RS_STATIC_FOR_IREE "${CMAKE_BINARY_DIR}/libiree_hal_hip_rs_for_iree.a")

# The builds of the library that the tests are linked with, each a name <b> with
# IREE_HAL_HIP_RS_<b>_TARGETS (the <name> above), _LIB_DIR (its libiree_hal_hip_rs.* and the
# software HIP device's libamdhip64.so), _SUFFIX (added to test and target names), _LABELS
# (added to the tests' labels) and _CTS_SET (the name of its CTS set,
# iree-harness/cts/CMakeLists.txt).
# cmake/sanitizers.cmake adds "asan".
set(IREE_HAL_HIP_RS_RUST_BUILDS default)
set(IREE_HAL_HIP_RS_default_TARGETS iree_hal_hip_rs)
set(IREE_HAL_HIP_RS_default_CTS_SET rust)
set(IREE_HAL_HIP_RS_default_LIB_DIR "${IREE_HAL_HIP_RS_LIB_DIR}")
set(IREE_HAL_HIP_RS_default_SUFFIX "")
set(IREE_HAL_HIP_RS_default_LABELS "")
