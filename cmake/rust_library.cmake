# Builds the Rust library with cargo (release) and exposes it as two imported targets:
#   iree_hal_hip_rs::shared  (libiree_hal_hip_rs.so, the cdylib)
#   iree_hal_hip_rs::static  (libiree_hal_hip_rs.a, the staticlib, iree_flag_register weak)
find_program(CARGO cargo REQUIRED)
set(IREE_HAL_HIP_RS_TARGET_DIR "${CMAKE_CURRENT_LIST_DIR}/../target" CACHE PATH "Cargo target directory")
set(IREE_HAL_HIP_RS_LIB_DIR "${IREE_HAL_HIP_RS_TARGET_DIR}/release")
set(IREE_HAL_HIP_RS_INCLUDE_DIR "${CMAKE_CURRENT_LIST_DIR}/../include")

add_custom_target(iree_hal_hip_rs_cargo ALL
  COMMAND ${CARGO} build --release --package iree-hal-hip-rs --package software-hip --target-dir ${IREE_HAL_HIP_RS_TARGET_DIR}
  WORKING_DIRECTORY ${CMAKE_CURRENT_LIST_DIR}/..
  BYPRODUCTS ${IREE_HAL_HIP_RS_LIB_DIR}/libiree_hal_hip_rs.so ${IREE_HAL_HIP_RS_LIB_DIR}/libiree_hal_hip_rs.a
  COMMENT "cargo build --release -p iree-hal-hip-rs -p software-hip"
  USES_TERMINAL)

add_library(iree_hal_hip_rs_shared SHARED IMPORTED GLOBAL)
set_target_properties(iree_hal_hip_rs_shared PROPERTIES
  IMPORTED_LOCATION ${IREE_HAL_HIP_RS_LIB_DIR}/libiree_hal_hip_rs.so
  IMPORTED_NO_SONAME ON
  INTERFACE_INCLUDE_DIRECTORIES ${IREE_HAL_HIP_RS_INCLUDE_DIR})
add_dependencies(iree_hal_hip_rs_shared iree_hal_hip_rs_cargo)
add_library(iree_hal_hip_rs::shared ALIAS iree_hal_hip_rs_shared)

# The static library as cargo makes it, but with our iree_flag_register (exported for
# preloading, src/registration/preload.rs) weak, so that a program may also link IREE's
# flag library (IREE's definition then wins; nothing is defined twice).
find_program(OBJCOPY objcopy REQUIRED)
set(IREE_HAL_HIP_RS_STATIC "${CMAKE_BINARY_DIR}/libiree_hal_hip_rs_static.a")
add_custom_command(
  OUTPUT ${IREE_HAL_HIP_RS_STATIC}
  COMMAND ${OBJCOPY} --weaken-symbol=iree_flag_register ${IREE_HAL_HIP_RS_LIB_DIR}/libiree_hal_hip_rs.a ${IREE_HAL_HIP_RS_STATIC}
  DEPENDS iree_hal_hip_rs_cargo ${IREE_HAL_HIP_RS_LIB_DIR}/libiree_hal_hip_rs.a
  COMMENT "libiree_hal_hip_rs_static.a (iree_flag_register weak)")
add_custom_target(iree_hal_hip_rs_static_archive ALL DEPENDS ${IREE_HAL_HIP_RS_STATIC})
add_library(iree_hal_hip_rs_static STATIC IMPORTED GLOBAL)
set_target_properties(iree_hal_hip_rs_static PROPERTIES
  IMPORTED_LOCATION ${IREE_HAL_HIP_RS_STATIC}
  INTERFACE_INCLUDE_DIRECTORIES ${IREE_HAL_HIP_RS_INCLUDE_DIR}
  INTERFACE_LINK_LIBRARIES "pthread;dl;m")
add_dependencies(iree_hal_hip_rs_static iree_hal_hip_rs_static_archive)
add_library(iree_hal_hip_rs::static ALIAS iree_hal_hip_rs_static)

# The static library for linking into an IREE build, which has its own driver registry
# (iree::hal's driver_registry.c) and flag library: the same archive with our registry
# entry points and our iree_flag_register (there for preloading, src/registration/preload.rs)
# made weak, so IREE's definitions win whatever the link order and nothing is defined twice.
# The HIP driver registers its factory into whichever registry the program uses.
set(IREE_HAL_HIP_RS_REGISTRY_SYMBOLS
  iree_hal_driver_registry_default iree_hal_driver_registry_allocate
  iree_hal_driver_registry_free iree_hal_driver_registry_register_factory
  iree_hal_driver_registry_unregister_factory iree_hal_driver_registry_enumerate
  iree_hal_driver_registry_try_create iree_hal_create_device iree_flag_register)
set(_weaken_args)
foreach(_symbol IN LISTS IREE_HAL_HIP_RS_REGISTRY_SYMBOLS)
  list(APPEND _weaken_args "--weaken-symbol=${_symbol}")
endforeach()
set(IREE_HAL_HIP_RS_STATIC_FOR_IREE "${CMAKE_BINARY_DIR}/libiree_hal_hip_rs_for_iree.a")
add_custom_command(
  OUTPUT ${IREE_HAL_HIP_RS_STATIC_FOR_IREE}
  COMMAND ${OBJCOPY} ${_weaken_args} ${IREE_HAL_HIP_RS_LIB_DIR}/libiree_hal_hip_rs.a ${IREE_HAL_HIP_RS_STATIC_FOR_IREE}
  DEPENDS iree_hal_hip_rs_cargo ${IREE_HAL_HIP_RS_LIB_DIR}/libiree_hal_hip_rs.a
  COMMENT "libiree_hal_hip_rs_for_iree.a (registry symbols weak)")
add_custom_target(iree_hal_hip_rs_for_iree_archive ALL DEPENDS ${IREE_HAL_HIP_RS_STATIC_FOR_IREE})
add_library(iree_hal_hip_rs_static_for_iree STATIC IMPORTED GLOBAL)
set_target_properties(iree_hal_hip_rs_static_for_iree PROPERTIES
  IMPORTED_LOCATION ${IREE_HAL_HIP_RS_STATIC_FOR_IREE}
  INTERFACE_INCLUDE_DIRECTORIES ${IREE_HAL_HIP_RS_INCLUDE_DIR}
  INTERFACE_LINK_LIBRARIES "pthread;dl;m")
add_dependencies(iree_hal_hip_rs_static_for_iree iree_hal_hip_rs_for_iree_archive)
add_library(iree_hal_hip_rs::static_for_iree ALIAS iree_hal_hip_rs_static_for_iree)
