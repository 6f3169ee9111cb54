# The registry entry points an IREE build defines itself (iree::hal's driver_registry.c)
# and iree_flag_register (ours is there for preloading, src/registration/preload.rs): made
# weak in our static library wherever it is linked into an IREE program, so IREE's win.
set(IREE_HAL_HIP_RS_REGISTRY_SYMBOLS
  iree_hal_driver_registry_default iree_hal_driver_registry_allocate
  iree_hal_driver_registry_free iree_hal_driver_registry_register_factory
  iree_hal_driver_registry_unregister_factory iree_hal_driver_registry_enumerate
  iree_hal_driver_registry_try_create iree_hal_create_device iree_flag_register)
