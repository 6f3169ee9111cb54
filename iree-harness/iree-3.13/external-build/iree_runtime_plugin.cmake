# IREE CMake plugin: puts this repository's Rust HIP driver, built for IREE 3.13 (Cargo
# feature iree-3-13, target/iree-3.13), into an IREE 3.13 build through IREE's external HAL
# driver mechanism, in place of IREE's C HIP driver (build.sh):
#
#   cmake -S <iree 3.13> -B <build> -DIREE_CMAKE_PLUGIN_PATHS=<repo>/iree-harness/iree-3.13/external-build \
#     -DIREE_EXTERNAL_HAL_DRIVERS=rust_hip -DIREE_HAL_DRIVER_HIP=OFF ...
#
# IREE 3.13's mechanism is v3.3.0's (runtime/src/iree/hal/drivers/CMakeLists.txt: a target
# and a registration function per driver, called from a generated init_external.c). The
# driver keeps the name "hip" (hip:// devices, --hip_* flags), as IREE's does.
iree_register_external_hal_driver(
  NAME rust_hip
  SOURCE_DIR "${CMAKE_CURRENT_LIST_DIR}/driver"
  BINARY_DIR "rust_hip"
  DRIVER_TARGET iree_hal_hip_rs_313_external_driver
  REGISTER_FN iree_hal_hip_driver_module_register)
