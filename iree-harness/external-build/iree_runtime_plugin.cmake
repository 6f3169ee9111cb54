# IREE CMake plugin: puts this repository's Rust HIP driver into an IREE build through
# IREE's external HAL driver mechanism, in place of IREE's C HIP driver:
#
#   cmake -S <iree> -B <build> -DIREE_CMAKE_PLUGIN_PATHS=<this repo>/iree-harness/external-build \
#     -DIREE_EXTERNAL_HAL_DRIVERS=rust_hip -DIREE_HAL_DRIVER_HIP=OFF ...
#
# The driver keeps the name "hip" (hip:// devices, --hip_* flags), as IREE's does.
iree_register_external_hal_driver(
  NAME rust_hip
  SOURCE_DIR "${CMAKE_CURRENT_LIST_DIR}/driver"
  BINARY_DIR "rust_hip"
  DRIVER_TARGET iree_hal_hip_rs_external_driver
  REGISTER_FN iree_hal_hip_driver_module_register)
