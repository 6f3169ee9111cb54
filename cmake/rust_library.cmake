# Builds the Rust library with cargo (release) and exposes it as two imported targets:
#   iree_hal_hip_rs::shared  (libiree_hal_hip_rs.so, the cdylib)
#   iree_hal_hip_rs::static  (libiree_hal_hip_rs.a, the staticlib)
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

add_library(iree_hal_hip_rs_static STATIC IMPORTED GLOBAL)
set_target_properties(iree_hal_hip_rs_static PROPERTIES
  IMPORTED_LOCATION ${IREE_HAL_HIP_RS_LIB_DIR}/libiree_hal_hip_rs.a
  INTERFACE_INCLUDE_DIRECTORIES ${IREE_HAL_HIP_RS_INCLUDE_DIR}
  INTERFACE_LINK_LIBRARIES "pthread;dl;m")
add_dependencies(iree_hal_hip_rs_static iree_hal_hip_rs_cargo)
add_library(iree_hal_hip_rs::static ALIAS iree_hal_hip_rs_static)
