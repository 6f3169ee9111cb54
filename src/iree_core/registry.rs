//! The HAL driver registry (`iree_hal_driver_registry_*`, `iree_hal_create_device`), with
//! the observable behaviour of IREE v3.3.0's `driver_registry.c` and two of its bugs fixed:
//! unregistering a factory other than the last one keeps the others intact, and the
//! capacity really is 16 factories.
//!
//! Factories are borrowed C objects: the registry keeps their addresses in registration
//! order. One re-entrant lock serialises every call into a factory, as IREE's mutex does, so
//! a factory may assume its callbacks never run concurrently and that none runs after its
//! unregistration returns; being re-entrant, a factory's `try_create` may itself call back
//! into the registry on the same thread without deadlocking (IREE's would).

use crate::abi::*;
use crate::boundary::{self, OutParam};
use crate::iree_core::driver_handle::DriverRef;
use crate::iree_core::host_allocator::HostAllocator;
use crate::status::{Result, Status};
use core::cell::RefCell;
use core::ffi::c_char;
use parking_lot::ReentrantMutex;
use std::sync::OnceLock;

/// How many factories one registry holds.
pub const MAX_FACTORY_COUNT: usize = 16;

/// A registered factory's address. The registrant keeps it alive until it unregisters.
#[derive(Clone, Copy, PartialEq, Eq)]
struct FactoryPtr(*const iree_hal_driver_factory_t);

// SAFETY: factories are required by IREE's API to be callable from any thread; the
// registry only calls them with its lock held.
unsafe impl Send for FactoryPtr {}

impl FactoryPtr {
    /// The drivers the factory offers, borrowed from the factory.
    fn enumerate(self) -> Result<&'static [iree_hal_driver_info_t]> {
        // SAFETY: the factory is alive while registered, and we hold the registry lock.
        let factory = unsafe { &*self.0 };
        let enumerate = factory
            .enumerate
            .ok_or_else(|| boundary::missing_callback("factory enumerate"))?;
        let mut count: iree_host_size_t = 0;
        let mut infos: *const iree_hal_driver_info_t = core::ptr::null();
        // SAFETY: IREE's factory contract.
        unsafe { Status::from_raw(enumerate(factory.self_, &mut count, &mut infos)) }?;
        if count == 0 {
            return Ok(&[]);
        }
        if infos.is_null() {
            return Err(crate::status!(
                InvalidArgument,
                "factory enumerated {count} drivers but returned no infos"
            ));
        }
        // SAFETY: the factory's infos stay immutable while it is registered (IREE's contract).
        Ok(unsafe { core::slice::from_raw_parts(infos, count) })
    }
}

/// A driver registry. C sees it only as an opaque `iree_hal_driver_registry_t*`.
pub struct DriverRegistry {
    /// Allocator that holds this registry (None for the process-wide default).
    host_allocator: Option<HostAllocator>,
    factories: ReentrantMutex<RefCell<Vec<FactoryPtr>>>,
}

impl DriverRegistry {
    fn new(host_allocator: Option<HostAllocator>) -> DriverRegistry {
        DriverRegistry {
            host_allocator,
            factories: ReentrantMutex::new(RefCell::new(Vec::with_capacity(MAX_FACTORY_COUNT))),
        }
    }

    /// The process-wide registry, created once on first use.
    pub fn default_registry() -> &'static DriverRegistry {
        static DEFAULT: OnceLock<DriverRegistry> = OnceLock::new();
        DEFAULT.get_or_init(|| DriverRegistry::new(None))
    }

    fn register(&self, factory: FactoryPtr) -> Result<()> {
        let guard = self.factories.lock();
        let mut factories = guard.borrow_mut();
        if factories.contains(&factory) {
            return Err(crate::status!(
                AlreadyExists,
                "factory has already been registered"
            ));
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

    fn unregister(&self, factory: FactoryPtr) -> Result<()> {
        let guard = self.factories.lock();
        let mut factories = guard.borrow_mut();
        match factories.iter().position(|f| *f == factory) {
            Some(index) => {
                factories.remove(index);
                Ok(())
            }
            None => Err(crate::status!(
                NotFound,
                "factory to remove is not registered at this time"
            )),
        }
    }

    fn snapshot(&self) -> Vec<FactoryPtr> {
        self.factories.lock().borrow().clone()
    }

    /// Every driver of every factory, in registration order, copied into one allocation
    /// from `host_allocator`: the infos first, then all their strings. With no drivers
    /// nothing is allocated (IREE's asks its allocator for zero bytes, which fails).
    fn enumerate(
        &self,
        host_allocator: HostAllocator,
    ) -> Result<(usize, *mut iree_hal_driver_info_t)> {
        let _lock = self.factories.lock();
        let mut all: Vec<iree_hal_driver_info_t> = Vec::new();
        for factory in self.snapshot() {
            all.extend_from_slice(factory.enumerate()?);
        }
        if all.is_empty() {
            return Ok((0, core::ptr::null_mut()));
        }
        let strings: usize = all
            .iter()
            .map(|i| i.driver_name.size + i.full_name.size)
            .sum();
        let infos_size = all.len() * core::mem::size_of::<iree_hal_driver_info_t>();
        let memory = host_allocator.allocate_zeroed(infos_size + strings)?;
        let infos = memory.cast::<iree_hal_driver_info_t>();
        // SAFETY: `memory` has room for the infos followed by every string byte; the source
        // strings are valid per the factory contract (checked non-null when non-empty).
        unsafe {
            let mut text = memory.add(infos_size);
            for (index, info) in all.iter().enumerate() {
                let mut copy_view = |view: iree_string_view_t| -> Result<iree_string_view_t> {
                    let bytes = boundary::view_bytes(view, "driver info string")?;
                    core::ptr::copy_nonoverlapping(bytes.as_ptr(), text, bytes.len());
                    let copied = iree_string_view_t {
                        data: text.cast::<c_char>(),
                        size: bytes.len(),
                    };
                    text = text.add(bytes.len());
                    Ok(copied)
                };
                let copied = copy_view(info.driver_name).and_then(|driver_name| {
                    Ok(iree_hal_driver_info_t {
                        driver_name,
                        full_name: copy_view(info.full_name)?,
                    })
                });
                match copied {
                    Ok(copied) => infos.add(index).write(copied),
                    Err(status) => {
                        host_allocator.free(memory);
                        return Err(status);
                    }
                }
            }
        }
        Ok((all.len(), infos))
    }

    /// Creates the driver named `driver_name` with the most recently registered factory
    /// that offers it (the last matching info of that factory).
    fn try_create(&self, driver_name: &[u8], host_allocator: HostAllocator) -> Result<DriverRef> {
        let _lock = self.factories.lock();
        let mut hit = None;
        'search: for factory in self.snapshot().into_iter().rev() {
            for info in factory.enumerate()?.iter().rev() {
                // SAFETY: driver info strings are valid per the factory contract.
                if unsafe { boundary::view_bytes(info.driver_name, "driver name") }? == driver_name
                {
                    hit = Some(factory);
                    break 'search;
                }
            }
        }
        let Some(factory) = hit else {
            return Err(crate::status!(
                NotFound,
                "no driver '{}' registered",
                String::from_utf8_lossy(driver_name)
            ));
        };
        // SAFETY: registered factories are alive; we hold the lock as IREE does.
        let factory = unsafe { &*factory.0 };
        let try_create = factory
            .try_create
            .ok_or_else(|| boundary::missing_callback("factory try_create"))?;
        let mut driver: *mut iree_hal_driver_t = core::ptr::null_mut();
        let name = iree_string_view_t {
            data: driver_name.as_ptr().cast(),
            size: driver_name.len(),
        };
        // SAFETY: IREE's factory contract.
        unsafe {
            Status::from_raw(try_create(
                factory.self_,
                name,
                host_allocator.0,
                &mut driver,
            ))
        }?;
        // SAFETY: a factory that succeeded hands us one reference to a valid driver.
        unsafe { DriverRef::adopt(driver) }.ok_or_else(|| {
            crate::status!(
                Internal,
                "factory for '{}' returned no driver",
                String::from_utf8_lossy(driver_name)
            )
        })
    }
}

/// # Safety
/// `registry` must be NULL or a registry from this library that is still alive.
unsafe fn registry_ref<'a>(
    registry: *mut iree_hal_driver_registry_t,
) -> Result<&'a DriverRegistry> {
    // SAFETY: per the caller; registry handles are `DriverRegistry` pointers.
    unsafe { boundary::try_ref(registry.cast::<DriverRegistry>().cast_const(), "registry") }
}

//===----------------------------------------------------------------------===//
// C API
//===----------------------------------------------------------------------===//

/// Returns the process-wide driver registry (created once, never freed).
#[no_mangle]
pub extern "C" fn iree_hal_driver_registry_default() -> *mut iree_hal_driver_registry_t {
    boundary::value_entry(
        "iree_hal_driver_registry_default",
        core::ptr::null_mut(),
        || {
            (DriverRegistry::default_registry() as *const DriverRegistry)
                .cast_mut()
                .cast()
        },
    )
}

/// Allocates an empty registry from `host_allocator`; free it with
/// `iree_hal_driver_registry_free`.
///
/// # Safety
/// `out_registry` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn iree_hal_driver_registry_allocate(
    host_allocator: iree_allocator_t,
    out_registry: *mut *mut iree_hal_driver_registry_t,
) -> iree_status_t {
    boundary::status_entry("iree_hal_driver_registry_allocate", || {
        // SAFETY: per the caller.
        let out = unsafe { OutParam::new(out_registry, "out_registry", core::ptr::null_mut()) }?;
        let allocator = HostAllocator(host_allocator);
        let memory = allocator.allocate_zeroed(core::mem::size_of::<DriverRegistry>())?;
        if memory.align_offset(core::mem::align_of::<DriverRegistry>()) != 0 {
            // SAFETY: just allocated from this allocator.
            unsafe { allocator.free(memory) };
            return Err(crate::status!(
                InvalidArgument,
                "host allocator returned memory unaligned for a registry"
            ));
        }
        let registry = memory.cast::<DriverRegistry>();
        // SAFETY: fresh, aligned, large enough.
        unsafe { registry.write(DriverRegistry::new(Some(allocator))) };
        out.set(registry.cast());
        Ok(())
    })
}

/// Frees a registry from `iree_hal_driver_registry_allocate`; factories are simply
/// forgotten. NULL and the default registry are ignored.
///
/// # Safety
/// `registry` must be NULL, the default registry, or an allocated registry no other thread
/// is using.
#[no_mangle]
pub unsafe extern "C" fn iree_hal_driver_registry_free(registry: *mut iree_hal_driver_registry_t) {
    boundary::value_entry("iree_hal_driver_registry_free", (), || {
        let registry = registry.cast::<DriverRegistry>();
        if registry.is_null() || core::ptr::eq(registry, DriverRegistry::default_registry()) {
            return;
        }
        // SAFETY: an allocated registry, exclusively ours now per the caller.
        unsafe {
            let allocator = (*registry).host_allocator;
            core::ptr::drop_in_place(registry);
            if let Some(allocator) = allocator {
                allocator.free(registry.cast());
            }
        }
    })
}

/// Registers `factory` (not copied: it must stay alive until unregistered). ALREADY_EXISTS
/// if it is registered already, RESOURCE_EXHAUSTED past 16 factories.
///
/// # Safety
/// `registry` must be a live registry; `factory` NULL or valid until unregistered.
#[no_mangle]
pub unsafe extern "C" fn iree_hal_driver_registry_register_factory(
    registry: *mut iree_hal_driver_registry_t,
    factory: *const iree_hal_driver_factory_t,
) -> iree_status_t {
    boundary::status_entry("iree_hal_driver_registry_register_factory", || {
        // SAFETY: per the caller.
        let registry = unsafe { registry_ref(registry) }?;
        registry.register(FactoryPtr(boundary::non_null(factory, "factory")?))
    })
}

/// Unregisters `factory`; NOT_FOUND if it is not registered. No call into the factory is
/// in progress or starts once this returns.
///
/// # Safety
/// `registry` must be a live registry.
#[no_mangle]
pub unsafe extern "C" fn iree_hal_driver_registry_unregister_factory(
    registry: *mut iree_hal_driver_registry_t,
    factory: *const iree_hal_driver_factory_t,
) -> iree_status_t {
    boundary::status_entry("iree_hal_driver_registry_unregister_factory", || {
        // SAFETY: per the caller.
        let registry = unsafe { registry_ref(registry) }?;
        registry.unregister(FactoryPtr(boundary::non_null(factory, "factory")?))
    })
}

/// Lists every registered driver in one allocation from `host_allocator` (infos, then
/// their strings), which the caller frees with that allocator. With no drivers the count
/// is 0 and the list NULL.
///
/// # Safety
/// `registry` must be a live registry; the out pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn iree_hal_driver_registry_enumerate(
    registry: *mut iree_hal_driver_registry_t,
    host_allocator: iree_allocator_t,
    out_driver_info_count: *mut iree_host_size_t,
    out_driver_infos: *mut *mut iree_hal_driver_info_t,
) -> iree_status_t {
    boundary::status_entry("iree_hal_driver_registry_enumerate", || {
        // SAFETY: per the caller.
        let (out_count, out_infos) = unsafe {
            (
                OutParam::new(out_driver_info_count, "out_driver_info_count", 0)?,
                OutParam::new(out_driver_infos, "out_driver_infos", core::ptr::null_mut())?,
            )
        };
        // SAFETY: per the caller.
        let registry = unsafe { registry_ref(registry) }?;
        let (count, infos) = registry.enumerate(HostAllocator(host_allocator))?;
        out_count.set(count);
        out_infos.set(infos);
        Ok(())
    })
}

/// Creates a driver by name through the most recently registered factory offering it.
///
/// # Safety
/// `registry` must be a live registry; `driver_name` a valid view; `out_driver` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn iree_hal_driver_registry_try_create(
    registry: *mut iree_hal_driver_registry_t,
    driver_name: iree_string_view_t,
    host_allocator: iree_allocator_t,
    out_driver: *mut *mut iree_hal_driver_t,
) -> iree_status_t {
    boundary::status_entry("iree_hal_driver_registry_try_create", || {
        // SAFETY: per the caller.
        let out = unsafe { OutParam::new(out_driver, "out_driver", core::ptr::null_mut()) }?;
        // SAFETY: per the caller.
        let registry = unsafe { registry_ref(registry) }?;
        // SAFETY: per the caller.
        let name = unsafe { boundary::view_bytes(driver_name, "driver_name") }?;
        out.set(
            registry
                .try_create(name, HostAllocator(host_allocator))?
                .into_raw(),
        );
        Ok(())
    })
}

/// Creates a device from a `driver://path?key=value` URI: the driver named by the scheme is
/// created for the call and released after the device is made.
///
/// # Safety
/// `registry` must be a live registry; `device_uri` a valid view; `out_device` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn iree_hal_create_device(
    registry: *mut iree_hal_driver_registry_t,
    device_uri: iree_string_view_t,
    host_allocator: iree_allocator_t,
    out_device: *mut *mut iree_hal_device_t,
) -> iree_status_t {
    boundary::status_entry("iree_hal_create_device", || {
        // SAFETY: per the caller.
        let out = unsafe { OutParam::new(out_device, "out_device", core::ptr::null_mut()) }?;
        // SAFETY: per the caller.
        let registry = unsafe { registry_ref(registry) }?;
        // SAFETY: per the caller.
        let uri = unsafe { boundary::view_bytes(device_uri, "device_uri") }?;
        let parts = crate::iree_core::uri::split(uri);
        let driver = registry
            .try_create(parts.driver, HostAllocator(host_allocator))
            .map_err(|s| {
                s.annotate(&format!(
                    "creating driver for device '{}'",
                    String::from_utf8_lossy(uri)
                ))
            })?;
        let device = driver
            .create_device_by_uri(uri, HostAllocator(host_allocator))
            .map_err(|s| {
                s.annotate(&format!(
                    "creating device '{}'",
                    String::from_utf8_lossy(uri)
                ))
            })?;
        out.set(device);
        Ok(())
    })
}
