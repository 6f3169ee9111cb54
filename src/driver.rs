//! The HIP driver object (`iree_hal_driver_t` with IREE's driver vtable): loads HIP,
//! enumerates and describes devices, and resolves device ids and paths to the GPUs a new
//! device spans.

use crate::abi::*;
use crate::hal_object::thunk::{Builder, DriverOptionsValue};
use crate::hal_object::host_memory::HostList;
use crate::hal_object::{self, Bytes, Ours, Out};
#[cfg(feature = "iree-3-13")]
use crate::hal_object::Ref;
use crate::device_path::{self, DevicePath, DeviceSelector};
use crate::hip::types::{hipDevice_t, hipUUID};
use crate::hip::version::HipVersion;
use crate::hip::HipSymbols;
use crate::hip_call;
use crate::iree_core::host_allocator::HostAllocator;
use crate::status::Result;
use crate::iree_core::string_builder::StringBuilder;
use core::ffi::{c_char, c_int};
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
    /// The loaded HIP's driver version (its runtime version is `hip.runtime_version`).
    driver_version: HipVersion,
    /// Where each new device writes its trace (`crate::profiling::trace_file`):
    /// `--hip_trace_file`, else `IREE_HIP_TRACE_FILE`.
    trace_file: Option<String>,
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
    /// IREE 3.13: the proactor pool from the device create params, held by the device.
    #[cfg(feature = "iree-3-13")]
    pub proactor: crate::iree_3_13::ProactorLease,
    /// Where the device writes a trace of its whole life, if anywhere.
    pub trace_file: Option<String>,
}

/// Which GPUs a device creation asks for.
enum Selection<'a> {
    Id(iree_hal_device_id_t),
    Path(&'a [u8]),
}

/// What a device creation brings beyond the selection and parameters: nothing in IREE
/// v3.3.0; IREE 3.13's create params.
#[cfg(not(feature = "iree-3-13"))]
type CreateParamsRef<'a> = ();
#[cfg(feature = "iree-3-13")]
type CreateParamsRef<'a> = &'a iree_hal_device_create_params_t;

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
        let driver_version = hip.driver_version()?;
        HipVersion::check_supported(hip.runtime_version, driver_version, &hip.library_path)?;
        hip_call!(&hip, hipInit(0))?;
        Ok(Box::new(HipDriver {
            driver_version,
            resource: hal_object::resource_header::<HipDriver>(),
            identifier: identifier.to_owned(),
            hip,
            default_params,
            default_device_index,
            trace_file: std::env::var("IREE_HIP_TRACE_FILE").ok().filter(|path| !path.is_empty()),
        }))
    }

    /// Devices created from now on write their trace to `path` (a flag overriding the
    /// environment).
    pub fn set_trace_file(&mut self, path: Option<String>) {
        if path.is_some() {
            self.trace_file = path;
        }
    }

    /// The driver's identifier (the name it was registered under).
    pub fn identifier(&self) -> &str {
        &self.identifier
    }

    /// The loaded HIP runtime.
    pub fn hip(&self) -> &Arc<HipSymbols> {
        &self.hip
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
        let mut uuid = hipUUID::default();
        hip_call!(&self.hip, hipDeviceGetUuid(&mut uuid, device))?;
        let name = c_chars_to_string(&name);
        Ok(PhysicalDevice { ordinal, device, uuid: uuid.bytes.map(|b| b as u8), name })
    }

    /// The device list `query_available_devices` returns: one allocation from
    /// `host_allocator` holding the infos, then every path and name, sized exactly (the
    /// caller frees it with that allocator); an empty list is `(0, NULL)`.
    fn device_infos(&self, host_allocator: HostAllocator) -> Result<(usize, *mut iree_hal_device_info_t)> {
        let devices: Vec<(iree_hal_device_id_t, String, String)> =
            self.devices()?.into_iter().map(|d| (device_id_of(d.device), device_path::format_uuid_path(&d.uuid), d.name)).collect();
        let strings: usize = devices.iter().map(|(_, path, name)| path.len() + name.len()).sum();
        let mut list = HostList::<iree_hal_device_info_t>::allocate(host_allocator, devices.len(), strings)?;
        for (device_id, path, name) in &devices {
            let info = iree_hal_device_info_t { device_id: *device_id, path: list.string(path.as_bytes())?, name: list.string(name.as_bytes())? };
            list.push(info)?;
        }
        list.finish()
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

    /// `create_device_by_id`/`_by_path` of either ABI: the GPUs selected, the parameters with
    /// `pairs` applied, and under IREE 3.13 the proactor pool of IREE's create params.
    fn create_selected(
        &self,
        selection: Selection<'_>,
        pairs: &[(String, String)],
        create_params: CreateParamsRef<'_>,
        host_allocator: HostAllocator,
    ) -> Result<*mut iree_hal_device_t> {
        let params = self.params_with(pairs)?;
        let devices = match selection {
            Selection::Id(device_id) => vec![self.device_by_id(device_id)?],
            Selection::Path(path) => self.devices_for_path(&String::from_utf8_lossy(path))?,
        };
        #[cfg(not(feature = "iree-3-13"))]
        let () = create_params;
        let request = DeviceRequest {
            devices,
            params,
            #[cfg(feature = "iree-3-13")]
            proactor: crate::iree_3_13::ProactorLease::acquire(create_params)?,
            trace_file: self.trace_file.clone(),
        };
        self.create_device(request, host_allocator)
    }

    fn dump_device_info(&self, device_id: iree_hal_device_id_t, builder: &mut StringBuilder) -> Result<()> {
        let device = self.device_by_id(device_id)?;
        builder.append(&format!("\n- amdhip64_dylib_path: {}", self.hip.library_path.display()))?;
        let (runtime, driver) = (self.hip.runtime_version, self.driver_version);
        builder.append(&format!("\n- hip-runtime-version: {runtime} ({})\n- hip-driver-version: {driver} ({})", runtime.0, driver.0))?;
        let prop = self.hip.device_properties(device.device)?;
        let arch = c_chars_to_string(&prop.gcnArchName);
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

/// A C string in a fixed array (HIP's names), up to its NUL or the array's end.
fn c_chars_to_string(chars: &[c_char]) -> String {
    let bytes: Vec<u8> = chars.iter().map(|&c| c as u8).take_while(|&b| b != 0).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

//===----------------------------------------------------------------------===//
// The driver vtable
//===----------------------------------------------------------------------===//

crate::hal_object!(HipDriver { resource: iree_hal_driver_t }, HIP_DRIVER_VTABLE);

static HIP_DRIVER_VTABLE: iree_hal_driver_vtable_t = iree_hal_driver_vtable_t {
    destroy: Some(hal_object::destroy::<HipDriver>),
    query_available_devices: Some(driver_query_available_devices),
    dump_device_info: Some(driver_dump_device_info),
    create_device_by_id: Some(driver_create_device_by_id),
    create_device_by_path: Some(driver_create_device_by_path),
};

crate::hal_thunks! {
    fn driver_query_available_devices(
        driver: Ours<HipDriver>,
        host_allocator: iree_allocator_t,
        out_device_info_count: Out<iree_host_size_t>,
        out_device_infos: Out<*mut iree_hal_device_info_t>,
    ) -> Status {
        let (count, infos) = driver.device_infos(HostAllocator(host_allocator))?;
        out_device_info_count.set(count);
        out_device_infos.set(infos);
        Ok(())
    }

    fn driver_dump_device_info(driver: Ours<HipDriver>, device_id: iree_hal_device_id_t, builder: Builder) -> Status {
        let mut builder = builder;
        driver.dump_device_info(device_id, &mut builder)
    }

}

#[cfg(not(feature = "iree-3-13"))]
crate::hal_thunks! {
    fn driver_create_device_by_id(
        driver: Ours<HipDriver>,
        device_id: iree_hal_device_id_t,
        param_count: iree_host_size_t,
        params: *const iree_string_pair_t,
        host_allocator: iree_allocator_t,
        out_device: Out<*mut iree_hal_device_t>,
    ) -> Status
    where pairs = string_pairs(param_count, params)
    {
        out_device.set(driver.create_selected(Selection::Id(device_id), &pairs, (), HostAllocator(host_allocator))?);
        Ok(())
    }

    fn driver_create_device_by_path(
        driver: Ours<HipDriver>,
        _driver_name: iree_string_view_t,
        device_path: Bytes,
        param_count: iree_host_size_t,
        params: *const iree_string_pair_t,
        host_allocator: iree_allocator_t,
        out_device: Out<*mut iree_hal_device_t>,
    ) -> Status
    where pairs = string_pairs(param_count, params)
    {
        out_device.set(driver.create_selected(Selection::Path(device_path), &pairs, (), HostAllocator(host_allocator))?);
        Ok(())
    }
}

// IREE 3.13: devices are created with IREE's create params, whose proactor pool the device
// keeps (`ProactorLease`).
#[cfg(feature = "iree-3-13")]
crate::hal_thunks! {
    fn driver_create_device_by_id(
        driver: Ours<HipDriver>,
        device_id: iree_hal_device_id_t,
        param_count: iree_host_size_t,
        params: *const iree_string_pair_t,
        create_params: Ref<iree_hal_device_create_params_t>,
        host_allocator: iree_allocator_t,
        out_device: Out<*mut iree_hal_device_t>,
    ) -> Status
    where pairs = string_pairs(param_count, params)
    {
        out_device.set(driver.create_selected(Selection::Id(device_id), &pairs, create_params, HostAllocator(host_allocator))?);
        Ok(())
    }

    fn driver_create_device_by_path(
        driver: Ours<HipDriver>,
        _driver_name: iree_string_view_t,
        device_path: Bytes,
        param_count: iree_host_size_t,
        params: *const iree_string_pair_t,
        create_params: Ref<iree_hal_device_create_params_t>,
        host_allocator: iree_allocator_t,
        out_device: Out<*mut iree_hal_device_t>,
    ) -> Status
    where pairs = string_pairs(param_count, params)
    {
        out_device.set(driver.create_selected(Selection::Path(device_path), &pairs, create_params, HostAllocator(host_allocator))?);
        Ok(())
    }
}

//===----------------------------------------------------------------------===//
// C API
//===----------------------------------------------------------------------===//

// The C API is exported by `crate::exports`; these are its bodies.

/// `iree_hal_hip_driver_options_initialize`: IREE v3.3.0's defaults, device index 0 and no
/// search paths (the system loader finds libamdhip64.so).
pub fn default_driver_options() -> iree_hal_hip_driver_options_t {
    iree_hal_hip_driver_options_t { default_device_index: 0, hip_lib_search_paths: core::ptr::null_mut(), hip_lib_search_path_count: 0 }
}

/// `iree_hal_hip_driver_create`: loads the HIP runtime as the options say, initialises it,
/// and keeps `default_params` for the devices it creates.
pub fn create_driver(identifier: &[u8], options: &DriverOptionsValue, default_params: &iree_hal_hip_device_params_t) -> Result<*mut iree_hal_driver_t> {
    let identifier = String::from_utf8_lossy(identifier).into_owned();
    let driver = HipDriver::create(&identifier, &options.search_paths, *default_params, options.default_device_index)?;
    Ok(hal_object::into_raw(driver))
}
