# IREE CMake plugin of an installed iree-hal-hip-rs (`cmake --install`, README.md): puts the
# installed driver into an IREE build through IREE's external HAL driver mechanism, in place
# of IREE's C HIP driver, under the name "hip" (hip:// devices, --hip_* flags):
#
#   cmake -S <iree> -B <build> -DIREE_CMAKE_PLUGIN_PATHS=<prefix>/share/iree-hal-hip-rs/iree-plugin \
#     -DIREE_EXTERNAL_HAL_DRIVERS=rust_hip -DIREE_HAL_DRIVER_HIP=OFF ...
#
# (iree-harness/external-build/ is the same plugin building the library from this repository.)
iree_register_external_hal_driver(
  NAME rust_hip
  SOURCE_DIR "${CMAKE_CURRENT_LIST_DIR}/driver"
  BINARY_DIR "rust_hip"
  DRIVER_TARGET iree_hal_hip_rs_external_driver
  REGISTER_FN iree_hal_hip_driver_module_register)
