//! The HIP driver object (`iree_hal_driver_t` with IREE's driver vtable): loads HIP,
//! enumerates and describes devices, and resolves device ids and paths to the GPUs a new
//! device spans.

use crate::abi::*;
use crate::boundary::{self, OutParam};
use crate::device_path::{self, DevicePath, DeviceSelector};
use crate::hip::types::{hipDevice_t, hipUUID};
use crate::hip::HipSymbols;
use crate::hip_call;
use crate::host_allocator::HostAllocator;
use crate::status::Result;
use crate::string_builder::StringBuilder;
use core::ffi::{c_char, c_int};
use core::sync::atomic::AtomicI32;
use std::sync::Arc;

/// The longest device name HIP reports (its properties' name field holds 256 bytes).
const MAX_DEVICE_NAME_BYTES: usize = 256;

/// Our `iree_hal_driver_t`. C sees only the resource header at its start.
#[repr(C)]
pub struct HipDriver {
    resource: iree_hal_resource_t,
    identifier: String,
    hip: Arc<HipSymbols>,
    default_params: iree_hal_hip_device_params_t,
    default_device_index: i32,
}

/// One GPU as the driver reports it.
#[derive(Debug, Clone)]
pub struct PhysicalDevice {
    pub ordinal: c_int,
    pub device: hipDevice_t,
    pub uuid: [u8; 16],
    pub name: String,
}

/// What a new device is made from: the GPUs it spans and its parameters.
#[derive(Debug)]
pub struct DeviceRequest {
    pub devices: Vec<PhysicalDevice>,
    pub params: iree_hal_hip_device_params_t,
}

// Device ids handed to IREE are HIP device handles plus one, so that id 0 stays
// IREE_HAL_DEVICE_ID_DEFAULT.
fn device_id_of(device: hipDevice_t) -> iree_hal_device_id_t {
    (device as iree_hal_device_id_t) + 1
}

impl HipDriver {
    /// Loads HIP from `search_paths`, initialises it and makes a driver.
    pub fn create(
        identifier: &str,
        search_paths: &[String],
        default_params: iree_hal_hip_device_params_t,
        default_device_index: i32,
    ) -> Result<Box<HipDriver>> {
        crate::device_params::validate(&default_params)?;
        let hip = Arc::new(HipSymbols::load(search_paths)?);
        hip_call!(&hip, hipInit(0))?;
        Ok(Box::new(HipDriver {
            resource: iree_hal_resource_t { ref_count: AtomicI32::new(1), vtable: (&HIP_DRIVER_VTABLE as *const iree_hal_driver_vtable_t).cast() },
            identifier: identifier.to_owned(),
            hip,
            default_params,
            default_device_index,
        }))
    }

    /// The driver's identifier (the name it was registered under).
    pub fn identifier(&self) -> &str {
        &self.identifier
    }

    /// The loaded HIP runtime.
    pub fn hip(&self) -> &Arc<HipSymbols> {
        &self.hip
    }

    /// Borrows the driver behind a C handle, checking that it is one of ours.
    ///
    /// # Safety
    /// `driver` must be NULL or a live HAL driver.
    pub unsafe fn from_raw<'a>(driver: *mut iree_hal_driver_t) -> Result<&'a HipDriver> {
        // SAFETY: per the caller, a non-null driver starts with a resource header.
        let header = unsafe { boundary::try_ref(driver.cast_const(), "driver") }?;
        if !core::ptr::eq(header.resource.vtable.cast::<iree_hal_driver_vtable_t>(), &HIP_DRIVER_VTABLE) {
            return Err(crate::status!(InvalidArgument, "driver is not a HIP driver of this library"));
        }
        // SAFETY: our vtable means our allocation, whose first field is this header.
        Ok(unsafe { &*driver.cast::<HipDriver>() })
    }

    /// Every GPU HIP reports, in ordinal order.
    pub fn devices(&self) -> Result<Vec<PhysicalDevice>> {
        let mut count: c_int = 0;
        hip_call!(&self.hip, hipGetDeviceCount(&mut count))?;
        (0..count).map(|ordinal| self.device(ordinal)).collect()
    }

    fn device(&self, ordinal: c_int) -> Result<PhysicalDevice> {
        let mut device: hipDevice_t = 0;
        hip_call!(&self.hip, hipDeviceGet(&mut device, ordinal))?;
        let mut name = [0 as c_char; MAX_DEVICE_NAME_BYTES];
        hip_call!(&self.hip, hipDeviceGetName(name.as_mut_ptr(), name.len() as c_int, device))?;
        name[MAX_DEVICE_NAME_BYTES - 1] = 0;
        let mut uuid = hipUUID::default();
        hip_call!(&self.hip, hipDeviceGetUuid(&mut uuid, device))?;
        // SAFETY: terminated above.
        let name = unsafe { core::ffi::CStr::from_ptr(name.as_ptr()) }.to_string_lossy().into_owned();
        Ok(PhysicalDevice { ordinal, device, uuid: uuid.bytes.map(|b| b as u8), name })
    }

    /// The device list `query_available_devices` returns: one allocation from
    /// `host_allocator` holding the infos, then every path and name, sized exactly.
    fn device_infos(&self, host_allocator: HostAllocator) -> Result<(usize, *mut iree_hal_device_info_t)> {
        let devices = self.devices()?;
        if devices.is_empty() {
            return Ok((0, core::ptr::null_mut()));
        }
        let paths: Vec<String> = devices.iter().map(|d| device_path::format_uuid_path(&d.uuid)).collect();
        let infos_size = devices.len() * core::mem::size_of::<iree_hal_device_info_t>();
        let strings: usize = devices.iter().zip(&paths).map(|(d, p)| d.name.len() + p.len()).sum();
        let memory = host_allocator.allocate_zeroed(infos_size + strings)?;
        // SAFETY: `memory` holds the infos followed by exactly `strings` bytes of text.
        unsafe {
            let mut text = memory.add(infos_size);
            let mut place = |s: &str| {
                core::ptr::copy_nonoverlapping(s.as_ptr(), text, s.len());
                let view = iree_string_view_t { data: text.cast(), size: s.len() };
                text = text.add(s.len());
                view
            };
            for (i, (device, path)) in devices.iter().zip(&paths).enumerate() {
                let info = iree_hal_device_info_t { device_id: device_id_of(device.device), path: place(path), name: place(&device.name) };
                memory.cast::<iree_hal_device_info_t>().add(i).write(info);
            }
        }
        Ok((devices.len(), memory.cast()))
    }

    fn device_by_id(&self, device_id: iree_hal_device_id_t) -> Result<PhysicalDevice> {
        let devices = self.devices()?;
        if device_id == IREE_HAL_DEVICE_ID_DEFAULT {
            if devices.is_empty() {
                return Err(crate::status!(Unavailable, "no compatible HIP devices were found"));
            }
            let index = self.default_device_index;
            return usize::try_from(index)
                .ok()
                .and_then(|i| devices.get(i).cloned())
                .ok_or_else(|| crate::status!(NotFound, "default device {index} not found (of {} enumerated)", devices.len()));
        }
        devices
            .into_iter()
            .find(|d| device_id_of(d.device) == device_id)
            .ok_or_else(|| crate::status!(NotFound, "HIP device id {device_id} does not name a device of this driver"))
    }

    fn resolve(&self, selector: DeviceSelector, devices: &[PhysicalDevice]) -> Result<PhysicalDevice> {
        match selector {
            DeviceSelector::Index(index) => devices
                .get(index)
                .cloned()
                .ok_or_else(|| crate::status!(NotFound, "device {index} not found (of {} enumerated)", devices.len())),
            DeviceSelector::Uuid(uuid) => devices
                .iter()
                .find(|d| d.uuid == uuid)
                .cloned()
                .ok_or_else(|| crate::status!(NotFound, "HIP device with UUID {} not found", device_path::format_uuid_path(&uuid))),
        }
    }

    /// The GPUs a device path names, checked (no GPU twice).
    pub fn devices_for_path(&self, path: &str) -> Result<Vec<PhysicalDevice>> {
        match device_path::parse(path)? {
            DevicePath::Default => Ok(vec![self.device_by_id(IREE_HAL_DEVICE_ID_DEFAULT)?]),
            DevicePath::Devices(selectors) => {
                let all = self.devices()?;
                let mut chosen: Vec<PhysicalDevice> = Vec::with_capacity(selectors.len());
                for selector in selectors {
                    let device = self.resolve(selector, &all)?;
                    if chosen.iter().any(|d| d.device == device.device) {
                        return Err(crate::status!(InvalidArgument, "device path '{path}' names device {} more than once", device.ordinal));
                    }
                    chosen.push(device);
                }
                Ok(chosen)
            }
        }
    }

    /// The parameters for a new device: the driver's defaults with URI overrides.
    pub fn params_with(&self, pairs: &[(String, String)]) -> Result<iree_hal_hip_device_params_t> {
        let mut params = self.default_params;
        crate::device_params::apply_overrides(&mut params, pairs)?;
        Ok(params)
    }

    fn create_device(&self, request: DeviceRequest, host_allocator: HostAllocator) -> Result<*mut iree_hal_device_t> {
        crate::device::HipDevice::create(self.hip.clone(), request, host_allocator)
    }

    fn dump_device_info(&self, device_id: iree_hal_device_id_t, builder: &mut StringBuilder) -> Result<()> {
        let device = self.device_by_id(device_id)?;
        builder.append(&format!("\n- amdhip64_dylib_path: {}", self.hip.library_path.display()))?;
        let get_properties = self.hip.hipGetDeviceProperties.ok_or_else(|| {
            crate::status!(
                Unavailable,
                "hipGetDeviceProperties is missing from {}; device properties cannot be dumped",
                self.hip.library_path.display()
            )
        })?;
        let mut prop = crate::hip::types::hipDeviceProp_tR0000::default();
        // SAFETY: the optional symbol's signature is HIP's; `prop` is the R0000 layout.
        let error = unsafe { get_properties(&mut prop, device.device) };
        self.hip.check(error, "hipGetDeviceProperties", crate::here!())?;
        // SAFETY: HIP fills gcnArchName with a NUL-terminated string; force the end anyway.
        let arch = {
            let mut arch = prop.gcnArchName;
            arch[arch.len() - 1] = 0;
            unsafe { core::ffi::CStr::from_ptr(arch.as_ptr()) }.to_string_lossy().into_owned()
        };
        let lines = [
            format!("\n- gpu-compute-capability: {}.{}", prop.major, prop.minor),
            format!("\n- gpu-arch-name: {arch}"),
            "\n".to_owned(),
            format!("\n- launch-max-block-dims: ({}, {}, {})", prop.maxThreadsDim[0], prop.maxThreadsDim[1], prop.maxThreadsDim[2]),
            "\n".to_owned(),
            format!("\n- block-max-thread-count: {}", prop.maxThreadsPerBlock),
            format!("\n- block-max-32-bit-register-count: {}", prop.regsPerBlock),
            format!("\n- block-max-shared-memory: {} KB", prop.sharedMemPerBlock / 1024),
            "\n".to_owned(),
            format!("\n- memory-is-integrated-memory: {}", prop.integrated),
            format!("\n- memory-supports-managed-memory: {}", prop.managedMemory),
            format!("\n- memory-total-const-memory-size: {} MB", prop.totalConstMem / 1024 / 1024),
            format!("\n- memory-total-global-memory-size: {} MB", prop.totalGlobalMem / 1024 / 1024),
            format!("\n- memory-l2-cache-size: {} bytes", prop.l2CacheSize),
            "\n".to_owned(),
            format!("\n- gpu-compute-unit-count: {}", prop.multiProcessorCount),
            format!("\n- gpu-compute-max-clock-rate: {} mHz", prop.clockRate / 1000),
            format!("\n- gpu-memory-max-clock-rate: {} mHz", prop.memoryClockRate / 1000),
            format!("\n- gpu-warp-size: {}", prop.warpSize),
            "\n".to_owned(),
        ];
        lines.iter().try_for_each(|line| builder.append(line))
    }
}

fn params_from_c(count: iree_host_size_t, params: *const iree_string_pair_t) -> Result<Vec<(String, String)>> {
    if count == 0 {
        return Ok(Vec::new());
    }
    boundary::non_null(params, "params")?;
    (0..count)
        .map(|i| {
            // SAFETY: the caller passes `count` valid pairs.
            let pair = unsafe { &*params.add(i) };
            // SAFETY: as above, each view is valid.
            let (key, value) = unsafe { (boundary::view_bytes(pair.key, "param key")?, boundary::view_bytes(pair.value, "param value")?) };
            Ok((String::from_utf8_lossy(key).into_owned(), String::from_utf8_lossy(value).into_owned()))
        })
        .collect()
}

//===----------------------------------------------------------------------===//
// The driver vtable
//===----------------------------------------------------------------------===//

static HIP_DRIVER_VTABLE: iree_hal_driver_vtable_t = iree_hal_driver_vtable_t {
    destroy: Some(driver_destroy),
    query_available_devices: Some(driver_query_available_devices),
    dump_device_info: Some(driver_dump_device_info),
    create_device_by_id: Some(driver_create_device_by_id),
    create_device_by_path: Some(driver_create_device_by_path),
};

unsafe extern "C" fn driver_destroy(driver: *mut iree_hal_driver_t) {
    boundary::value_entry("iree_hal_hip_driver_destroy", (), || {
        // SAFETY: IREE calls destroy once, when the last reference goes.
        if unsafe { HipDriver::from_raw(driver) }.is_ok() {
            // SAFETY: our drivers are boxed `HipDriver`s.
            drop(unsafe { Box::from_raw(driver.cast::<HipDriver>()) });
        }
    })
}

unsafe extern "C" fn driver_query_available_devices(
    driver: *mut iree_hal_driver_t,
    host_allocator: iree_allocator_t,
    out_device_info_count: *mut iree_host_size_t,
    out_device_infos: *mut *mut iree_hal_device_info_t,
) -> iree_status_t {
    boundary::status_entry("iree_hal_hip_driver_query_available_devices", || {
        // SAFETY: per IREE's driver contract.
        let (out_count, out_infos) = unsafe {
            (
                OutParam::new(out_device_info_count, "out_device_info_count", 0)?,
                OutParam::new(out_device_infos, "out_device_infos", core::ptr::null_mut())?,
            )
        };
        // SAFETY: per IREE's driver contract.
        let driver = unsafe { HipDriver::from_raw(driver) }?;
        let (count, infos) = driver.device_infos(HostAllocator(host_allocator))?;
        out_count.set(count);
        out_infos.set(infos);
        Ok(())
    })
}

unsafe extern "C" fn driver_dump_device_info(
    driver: *mut iree_hal_driver_t,
    device_id: iree_hal_device_id_t,
    builder: *mut iree_string_builder_t,
) -> iree_status_t {
    boundary::status_entry("iree_hal_hip_driver_dump_device_info", || {
        // SAFETY: per IREE's driver contract.
        let driver = unsafe { HipDriver::from_raw(driver) }?;
        // SAFETY: per IREE's driver contract.
        let mut builder = unsafe { StringBuilder::from_raw(builder) }?;
        driver.dump_device_info(device_id, &mut builder)
    })
}

unsafe extern "C" fn driver_create_device_by_id(
    driver: *mut iree_hal_driver_t,
    device_id: iree_hal_device_id_t,
    param_count: iree_host_size_t,
    params: *const iree_string_pair_t,
    host_allocator: iree_allocator_t,
    out_device: *mut *mut iree_hal_device_t,
) -> iree_status_t {
    boundary::status_entry("iree_hal_hip_driver_create_device_by_id", || {
        // SAFETY: per IREE's driver contract.
        let out = unsafe { OutParam::new(out_device, "out_device", core::ptr::null_mut()) }?;
        // SAFETY: per IREE's driver contract.
        let driver = unsafe { HipDriver::from_raw(driver) }?;
        let params = driver.params_with(&params_from_c(param_count, params)?)?;
        let request = DeviceRequest { devices: vec![driver.device_by_id(device_id)?], params };
        out.set(driver.create_device(request, HostAllocator(host_allocator))?);
        Ok(())
    })
}

unsafe extern "C" fn driver_create_device_by_path(
    driver: *mut iree_hal_driver_t,
    _driver_name: iree_string_view_t,
    device_path: iree_string_view_t,
    param_count: iree_host_size_t,
    params: *const iree_string_pair_t,
    host_allocator: iree_allocator_t,
    out_device: *mut *mut iree_hal_device_t,
) -> iree_status_t {
    boundary::status_entry("iree_hal_hip_driver_create_device_by_path", || {
        // SAFETY: per IREE's driver contract.
        let out = unsafe { OutParam::new(out_device, "out_device", core::ptr::null_mut()) }?;
        // SAFETY: per IREE's driver contract.
        let driver = unsafe { HipDriver::from_raw(driver) }?;
        // SAFETY: per IREE's driver contract.
        let path = String::from_utf8_lossy(unsafe { boundary::view_bytes(device_path, "device_path") }?).into_owned();
        let params = driver.params_with(&params_from_c(param_count, params)?)?;
        let request = DeviceRequest { devices: driver.devices_for_path(&path)?, params };
        out.set(driver.create_device(request, HostAllocator(host_allocator))?);
        Ok(())
    })
}

//===----------------------------------------------------------------------===//
// C API
//===----------------------------------------------------------------------===//

/// Initialises `out_options` to IREE v3.3.0's defaults: device index 0, no search paths
/// (the system loader finds libamdhip64.so).
///
/// # Safety
/// `out_options` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn iree_hal_hip_driver_options_initialize(out_options: *mut iree_hal_hip_driver_options_t) {
    boundary::value_entry("iree_hal_hip_driver_options_initialize", (), || {
        if !out_options.is_null() {
            let defaults = iree_hal_hip_driver_options_t {
                default_device_index: 0,
                hip_lib_search_paths: core::ptr::null_mut(),
                hip_lib_search_path_count: 0,
            };
            // SAFETY: non-null and writable per the caller.
            unsafe { out_options.write(defaults) };
        }
    })
}

/// Initialises `out_params` to IREE v3.3.0's defaults.
///
/// # Safety
/// `out_params` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn iree_hal_hip_device_params_initialize(out_params: *mut iree_hal_hip_device_params_t) {
    boundary::value_entry("iree_hal_hip_device_params_initialize", (), || {
        if !out_params.is_null() {
            // SAFETY: non-null and writable per the caller.
            unsafe { out_params.write(crate::device_params::default_params()) };
        }
    })
}

/// Reads the search paths of driver options.
///
/// # Safety
/// `options` must point at valid options whose search path array holds `count` views.
pub unsafe fn search_paths_of(options: &iree_hal_hip_driver_options_t) -> Result<Vec<String>> {
    if options.hip_lib_search_path_count == 0 {
        return Ok(Vec::new());
    }
    boundary::non_null(options.hip_lib_search_paths, "options->hip_lib_search_paths")?;
    (0..options.hip_lib_search_path_count)
        .map(|i| {
            // SAFETY: per the caller.
            let view = unsafe { *options.hip_lib_search_paths.add(i) };
            // SAFETY: per the caller.
            let bytes = unsafe { boundary::view_bytes(view, "hip_lib_search_paths entry") }?;
            Ok(String::from_utf8_lossy(bytes).into_owned())
        })
        .collect()
}

/// Creates a HIP driver named `identifier`: loads the HIP runtime as `options` says,
/// initialises it, and keeps `default_params` for the devices it creates.
///
/// # Safety
/// `options` and `default_params` must be NULL or valid; `out_driver` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn iree_hal_hip_driver_create(
    identifier: iree_string_view_t,
    options: *const iree_hal_hip_driver_options_t,
    default_params: *const iree_hal_hip_device_params_t,
    host_allocator: iree_allocator_t,
    out_driver: *mut *mut iree_hal_driver_t,
) -> iree_status_t {
    let _ = host_allocator;
    boundary::status_entry("iree_hal_hip_driver_create", || {
        // SAFETY: per the caller.
        let out = unsafe { OutParam::new(out_driver, "out_driver", core::ptr::null_mut()) }?;
        // SAFETY: per the caller.
        let options = unsafe { boundary::try_ref(options, "options") }?;
        // SAFETY: per the caller.
        let params = unsafe { boundary::try_ref(default_params, "default_params") }?;
        // SAFETY: per the caller.
        let identifier = String::from_utf8_lossy(unsafe { boundary::view_bytes(identifier, "identifier") }?).into_owned();
        // SAFETY: per the caller.
        let search_paths = unsafe { search_paths_of(options) }?;
        let driver = HipDriver::create(&identifier, &search_paths, *params, options.default_device_index)?;
        out.set(Box::into_raw(driver).cast());
        Ok(())
    })
}
