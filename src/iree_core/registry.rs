//! The HAL driver registry (`iree_hal_driver_registry_*`, `iree_hal_create_device`, exported
//! by `crate::exports::registry`), with the observable behaviour of IREE v3.3.0's
//! `driver_registry.c` and two of its bugs fixed: unregistering a factory other than the
//! last one keeps the others intact, and the capacity really is 16 factories.
//!
//! Factories are borrowed C objects: the registry keeps their addresses in registration
//! order. One re-entrant lock serialises every call into a factory, as IREE's mutex does, so
//! a factory may assume its callbacks never run concurrently and that none runs after its
//! unregistration returns; being re-entrant, a factory's `try_create` may itself call back
//! into the registry on the same thread without deadlocking (IREE's would).
//!
//! C holds a registry as an opaque `iree_hal_driver_registry_t*` (`hal_object::host_memory`):
//! the default one lives for the process, allocated ones in their host allocator's memory.

use crate::abi::*;
use crate::hal_object::foreign::{DriverInfo, FactoryRef};
use crate::hal_object::host_memory::{HandleToFree, HostList, Hosted};
use crate::iree_core::driver_handle::{self, DriverRef};
use crate::iree_core::host_allocator::HostAllocator;
use crate::iree_core::uri;
use crate::status::Result;
use core::cell::RefCell;
use parking_lot::{ReentrantMutex, ReentrantMutexGuard};
use std::sync::OnceLock;

/// How many factories one registry holds.
pub const MAX_FACTORY_COUNT: usize = 16;

/// A driver registry.
pub struct DriverRegistry {
    factories: ReentrantMutex<RefCell<Vec<FactoryRef>>>,
}

crate::opaque_handle!(DriverRegistry: iree_hal_driver_registry_t, "registry");

/// The registry's lock, held for every call into a factory.
type Lock<'r> = ReentrantMutexGuard<'r, RefCell<Vec<FactoryRef>>>;

/// The drivers a factory offers, borrowed for as long as the lock is held.
fn offered<'l>(_lock: &'l Lock<'_>, factory: FactoryRef) -> Result<&'l [DriverInfo]> {
    // SAFETY: `factory` is registered (the caller read it from the registry under `_lock`);
    // while the lock is held no other thread can unregister it, and its registrant keeps it
    // and its infos alive until it does. Holding the lock serialises the call.
    unsafe { factory.enumerate() }
}

/// Creates the driver `driver_name` with a registered factory.
fn create_with(_lock: &Lock<'_>, factory: FactoryRef, driver_name: &[u8], host_allocator: HostAllocator) -> Result<DriverRef> {
    // SAFETY: as `offered`.
    unsafe { factory.try_create(driver_name, host_allocator) }
}

impl DriverRegistry {
    fn new() -> DriverRegistry {
        DriverRegistry { factories: ReentrantMutex::new(RefCell::new(Vec::with_capacity(MAX_FACTORY_COUNT))) }
    }

    fn default_hosted() -> &'static Hosted<DriverRegistry> {
        static DEFAULT: OnceLock<Hosted<DriverRegistry>> = OnceLock::new();
        DEFAULT.get_or_init(|| Hosted::unowned(DriverRegistry::new()))
    }

    /// `iree_hal_driver_registry_default`: the process-wide registry, created once on first
    /// use and never freed.
    pub fn default_handle() -> *mut iree_hal_driver_registry_t {
        Self::default_hosted().handle()
    }

    /// `iree_hal_driver_registry_allocate`: an empty registry in memory from
    /// `host_allocator`.
    pub fn allocate(host_allocator: HostAllocator) -> Result<*mut iree_hal_driver_registry_t> {
        Hosted::new_in(DriverRegistry::new(), host_allocator)
    }

    /// `iree_hal_driver_registry_free`: frees an allocated registry (factories are simply
    /// forgotten); NULL and the default registry are left alone.
    pub fn free(registry: HandleToFree<'_, DriverRegistry>) {
        registry.free()
    }

    /// `iree_hal_driver_registry_register_factory`.
    pub fn register(&self, factory: FactoryRef) -> Result<()> {
        let guard = self.factories.lock();
        let mut factories = guard.borrow_mut();
        if factories.contains(&factory) {
            return Err(crate::status!(AlreadyExists, "factory has already been registered"));
        }
        if factories.len() >= MAX_FACTORY_COUNT {
            return Err(crate::status!(
                ResourceExhausted,
                "the maximum number of factories ({MAX_FACTORY_COUNT}) have been registered"
            ));
        }
        factories.push(factory);
        Ok(())
    }

    /// `iree_hal_driver_registry_unregister_factory`.
    pub fn unregister(&self, factory: FactoryRef) -> Result<()> {
        let guard = self.factories.lock();
        let mut factories = guard.borrow_mut();
        match factories.iter().position(|f| *f == factory) {
            Some(index) => {
                factories.remove(index);
                Ok(())
            }
            None => Err(crate::status!(NotFound, "factory to remove is not registered at this time")),
        }
    }

    fn snapshot(&self) -> Vec<FactoryRef> {
        self.factories.lock().borrow().clone()
    }

    /// `iree_hal_driver_registry_enumerate`: every driver of every factory, in registration
    /// order, copied into one allocation from `host_allocator`: the infos first, then all
    /// their strings. With no drivers nothing is allocated (IREE's asks its allocator for
    /// zero bytes, which fails).
    pub fn enumerate(&self, host_allocator: HostAllocator) -> Result<(usize, *mut iree_hal_driver_info_t)> {
        let lock = self.factories.lock();
        let mut all: Vec<&DriverInfo> = Vec::new();
        for factory in self.snapshot() {
            all.extend(offered(&lock, factory)?);
        }
        let strings: usize = all.iter().map(|info| info.text_size()).sum();
        let mut list = HostList::<iree_hal_driver_info_t>::allocate(host_allocator, all.len(), strings)?;
        for info in &all {
            let driver_name = list.string(info.driver_name("driver info string")?)?;
            let full_name = list.string(info.full_name("driver info string")?)?;
            list.push(iree_hal_driver_info_t { driver_name, full_name })?;
        }
        list.finish()
    }

    /// `iree_hal_driver_registry_try_create`: creates the driver named `driver_name` with
    /// the most recently registered factory that offers it (the last matching info of that
    /// factory).
    pub fn try_create(&self, driver_name: &[u8], host_allocator: HostAllocator) -> Result<DriverRef> {
        let lock = self.factories.lock();
        let mut hit = None;
        'search: for factory in self.snapshot().into_iter().rev() {
            for info in offered(&lock, factory)?.iter().rev() {
                if info.driver_name("driver name")? == driver_name {
                    hit = Some(factory);
                    break 'search;
                }
            }
        }
        let Some(factory) = hit else {
            return Err(crate::status!(NotFound, "no driver '{}' registered", String::from_utf8_lossy(driver_name)));
        };
        create_with(&lock, factory, driver_name, host_allocator)
    }

    /// `iree_hal_create_device`: creates a device from a `driver://path?key=value` URI; the
    /// driver named by the scheme is created for the call and released after the device is
    /// made.
    pub fn create_device(&self, device_uri: &[u8], create_params: DeviceCreateParams, host_allocator: HostAllocator) -> Result<*mut iree_hal_device_t> {
        let parts = uri::split(device_uri);
        let driver = self
            .try_create(parts.driver, host_allocator)
            .map_err(|s| s.annotate(&format!("creating driver for device '{}'", String::from_utf8_lossy(device_uri))))?;
        driver_handle::create_device_by_uri(&driver, device_uri, create_params, host_allocator)
            .map_err(|s| s.annotate(&format!("creating device '{}'", String::from_utf8_lossy(device_uri))))
    }
}
