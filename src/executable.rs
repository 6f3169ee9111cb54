//! HIP executables (`iree_hal_executable_t` with IREE's executable vtable): a verified HIP1
//! file whose code objects are loaded on every GPU of the logical device, with the launch
//! information of each export kept for the command buffers.
//!
//! Loading follows IREE's C driver (`native_executable.c`): each module image goes through
//! `hipModuleLoadDataEx` (with an error log for the JIT), each export's kernel through
//! `hipModuleGetFunction`, and each function is given its dynamic shared memory limit with
//! `hipFuncSetAttribute`. Unlike IREE we check the limits against every GPU (IREE checks
//! the first only) and also the threads per block (see `executable_format`), and the
//! kernel's static shared memory with the dynamic size it is given (`hipFuncGetAttribute`).
//! A failure at any step unloads what was already loaded.
//!
//! The data is always verified, even under `CACHING_MODE_DISABLE_VERIFICATION` (it is
//! cheap next to loading). Nothing borrows the caller's data after creation, so
//! `ALIAS_PROVIDED_DATA` needs no special handling. Executable-level constants are
//! ignored, as by IREE's C driver: HIP executables declare none.

use crate::abi::*;
use crate::executable_format::{self, BindingFlags, HipExecutableDef};
use crate::hal_object::thunk::ExecutableParamsRef;
use crate::hal_object::{self, Address};
use crate::hip::gpu::Gpu;
use crate::hip::handles::{Current, Module};
use crate::hip::types::*;
use crate::hip::HipSymbols;
use crate::hip_call;
use crate::status::Result;
use core::ffi::{c_int, c_void, CStr};
use std::ffi::CString;
use std::sync::Arc;

/// Format strings `prepare_executable` accepts: the one IREE's HAL CTS passes for HIP and
/// the one IREE's compiler records for HIP executables (the device answers it in
/// `hal.executable.format`). Both name the same HIP1 flatbuffer.
pub const ACCEPTED_FORMATS: [&str; 2] = ["HSACO", "rocm-hsaco-fb"];

/// IREE 3.13: the format `infer_format` names for HIP executable data.
#[cfg(feature = "iree-3-13")]
pub const INFERRED_FORMAT: &[u8] = b"HSACO";

/// Whether `format` is one this driver prepares.
pub fn is_accepted_format(format: &[u8]) -> bool {
    ACCEPTED_FORMATS.iter().any(|accepted| accepted.as_bytes() == format)
}

/// Size of the JIT error log given to `hipModuleLoadDataEx` (IREE uses the same).
const JIT_ERROR_LOG_BYTES: usize = 8192;

/// How one export is launched.
#[derive(Debug)]
pub struct ExportInfo {
    /// The kernel symbol in its module.
    pub kernel_name: CString,
    /// Threads per block in x, y, z.
    pub block_dims: [u32; 3],
    /// Dynamic shared memory per block, in bytes (passed to `hipModuleLaunchKernel`).
    pub block_shared_memory_size: u32,
    /// 32-bit push constants, passed after the bindings.
    pub constant_count: u32,
    /// One entry per binding, in binding order.
    pub binding_flags: Vec<BindingFlags>,
    /// The kernel on each GPU of the device, in the device's queue order (a HIP function
    /// handle, valid while the executable holds its module).
    functions: Vec<Address>,
}

impl ExportInfo {
    pub fn binding_count(&self) -> usize {
        self.binding_flags.len()
    }

    /// The kernel loaded on GPU `gpu_index` (the device's queue order).
    pub fn function(&self, gpu_index: usize) -> Result<hipFunction_t> {
        self.functions.get(gpu_index).map(|function| function.get().cast()).ok_or_else(|| {
            crate::status!(
                OutOfRange,
                "GPU index {gpu_index} out of range; the executable is loaded on {} GPUs",
                self.functions.len()
            )
        })
    }
}

/// Our executable. C sees the `iree_hal_executable_t` header at its start.
#[repr(C)]
pub struct HipExecutable {
    base: iree_hal_executable_t,
    hip: Arc<HipSymbols>,
    gpus: Vec<Gpu>,
    /// Per GPU, the modules loaded there so far (all of them once creation succeeds),
    /// unloaded as they drop.
    modules: Vec<Vec<Module>>,
    exports: Vec<ExportInfo>,
    /// Its identity and exports in profiles (`crate::profiling`).
    profile: Arc<crate::profiling::records::ExecutableProfile>,
}

/// Profile ids of executables, process wide.
static NEXT_PROFILE_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

crate::hal_object!(HipExecutable { base: iree_hal_executable_t }, HIP_EXECUTABLE_VTABLE);

#[cfg(not(feature = "iree-3-13"))]
static HIP_EXECUTABLE_VTABLE: iree_hal_executable_vtable_t = iree_hal_executable_vtable_t { destroy: Some(hal_object::destroy::<HipExecutable>) };

#[cfg(feature = "iree-3-13")]
static HIP_EXECUTABLE_VTABLE: iree_hal_executable_vtable_t = iree_hal_executable_vtable_t {
    destroy: Some(hal_object::destroy::<HipExecutable>),
    function_count: Some(iree_3_13::executable_function_count),
    function_info: Some(iree_3_13::executable_function_info),
    function_parameters: Some(iree_3_13::executable_function_parameters),
    lookup_function_by_name: Some(iree_3_13::executable_lookup_function_by_name),
    lookup_global_by_name: Some(iree_3_13::executable_lookup_global_by_name),
};

/// IREE 3.13's reflection entries: a function is an export, by its index.
#[cfg(feature = "iree-3-13")]
mod iree_3_13 {
    use super::{ExportInfo, HipExecutable};
    use crate::abi::*;
    use crate::hal_object::{Bytes, Mut, Ours, Out};
    use crate::status::Result;

    impl HipExecutable {
        fn global_buffer(&self, name: &[u8], queue_affinity: iree_hal_queue_affinity_t) -> Result<*mut iree_hal_buffer_t> {
            let shown = String::from_utf8_lossy(name);
            if name.is_empty() {
                return Err(crate::status!(InvalidArgument, "executable global name is empty"));
            }
            let c_name = std::ffi::CString::new(name).map_err(|_| crate::status!(InvalidArgument, "executable global name '{shown}' contains a NUL"))?;
            let gpu_index = crate::argument_rules::gpu_for_affinity(queue_affinity, self.gpus.len())?;
            let _current = self.gpus[gpu_index].make_current()?;
            let mut found = None;
            for module in &self.modules[gpu_index] {
                if let Some(global) = self.hip.module_global(module.raw(), &c_name)? {
                    found = Some(global);
                    break;
                }
            }
            let (device_ptr, size) = found.ok_or_else(|| crate::status!(NotFound, "executable global '{shown}' not found"))?;
            let owner = crate::hal_object::Retained::from_ours(self);
            let spec = crate::buffer::BufferSpec {
                placement: iree_hal_buffer_placement_t {
                    device: core::ptr::null_mut(),
                    queue_affinity: 1u64 << gpu_index,
                    flags: IREE_HAL_BUFFER_PLACEMENT_FLAG_NONE,
                    reserved: 0,
                },
                memory_type: IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL,
                access: IREE_HAL_MEMORY_ACCESS_READ | IREE_HAL_MEMORY_ACCESS_WRITE,
                usage: IREE_HAL_BUFFER_USAGE_DEFAULT,
                size: size as u64,
                memory: crate::buffer::BufferMemory::External,
                device_ptr,
                host_ptr: core::ptr::null_mut(),
                // The module's memory is the module's: nothing to free, only the executable
                // to let go of.
                release_hook: Some(Box::new(move |_buffer, _device_ptr| drop(owner))),
            };
            Ok(crate::buffer::HipBuffer::wrap(spec, self.hip.clone(), Default::default()))
        }

        /// The export a 3.13 function names (its index, below the export count).
        fn function_export(&self, function: iree_hal_executable_function_t) -> Result<&ExportInfo> {
            match u32::try_from(function.value) {
                Ok(ordinal) if (ordinal as usize) < self.exports.len() => self.export(ordinal),
                _ => Err(crate::status!(
                    OutOfRange,
                    "function {} is not one of the executable's {} functions",
                    function.value,
                    self.exports.len()
                )),
            }
        }
    }

    crate::hal_thunks! {
        pub(super) fn executable_function_count(executable: Ours<HipExecutable>) -> iree_host_size_t [fallback: 0] {
            executable.exports.len()
        }

        pub(super) fn executable_function_info(
            executable: Ours<HipExecutable>,
            function: iree_hal_executable_function_t,
            out_info: Mut<iree_hal_executable_function_info_t>,
        ) -> Status {
            let export = executable.function_export(function)?;
            let name = export.kernel_name.to_bytes();
            *out_info = iree_hal_executable_function_info_t {
                // The name lives as long as the executable, as IREE's C driver's does.
                name: iree_string_view_t { data: name.as_ptr().cast(), size: name.len() },
                flags: 0,
                constant_count: export.constant_count as u16,
                binding_count: export.binding_flags.len() as u16,
                parameter_count: 0,
                workgroup_size: export.block_dims,
                ..Default::default()
            };
            Ok(())
        }

        /// HIP executables carry no parameter reflection (as in IREE's C driver).
        pub(super) fn executable_function_parameters(
            executable: Ours<HipExecutable>,
            function: iree_hal_executable_function_t,
            _capacity: iree_host_size_t,
            _out_parameters: *mut iree_hal_executable_function_parameter_t,
        ) -> Status {
            executable.function_export(function)?;
            Err(crate::status!(Unimplemented, "HIP executables carry no parameter reflection"))
        }

        pub(super) fn executable_lookup_function_by_name(
            executable: Ours<HipExecutable>,
            name: Bytes,
            out_function: Out<iree_hal_executable_function_t>,
        ) -> Status {
            match executable.exports.iter().position(|export| export.kernel_name.to_bytes() == name) {
                Some(index) => {
                    out_function.set(iree_hal_executable_function_t { value: index as u64 });
                    Ok(())
                }
                None => Err(crate::status!(NotFound, "function '{}' not found in executable", String::from_utf8_lossy(name))),
            }
        }

        /// A global variable of the executable's code on the GPU `queue_affinity` selects,
        /// as a device-local buffer over its memory (hipModuleGetGlobal) that keeps the
        /// executable, and so the module, loaded while it lives.
        pub(super) fn executable_lookup_global_by_name(
            executable: Ours<HipExecutable>,
            name: Bytes,
            queue_affinity: iree_hal_queue_affinity_t,
            out_buffer: Out<*mut iree_hal_buffer_t>,
        ) -> Status {
            out_buffer.set(executable.global_buffer(name, queue_affinity)?);
            Ok(())
        }
    }
}

impl HipExecutable {
    /// Verifies `params` and loads the executable on every GPU in `gpus`.
    pub fn create(hip: Arc<HipSymbols>, gpus: &[Gpu], params: ExecutableParamsRef<'_>) -> Result<*mut iree_hal_executable_t> {
        if gpus.is_empty() {
            return Err(crate::status!(InvalidArgument, "an executable needs at least one GPU to load on"));
        }
        let format = params.format()?;
        if !is_accepted_format(format) {
            return Err(crate::status!(
                InvalidArgument,
                "executable format '{}' is not supported by the HIP driver (expected one of {:?})",
                String::from_utf8_lossy(format),
                ACCEPTED_FORMATS
            ));
        }
        let data = params.data()?;
        #[cfg(feature = "iree-3-13")]
        let data = executable_format::strip_file_header(data)?;
        let def = executable_format::parse(data)?;
        for (index, gpu) in gpus.iter().enumerate() {
            let limits = gpu.limits()?;
            executable_format::check_limits(&def, &limits).map_err(|status| status.annotate(&format!("on GPU {index} (HIP device {})", gpu.device())))?;
        }

        let functions = def
            .exports
            .iter()
            .map(|export| crate::profiling::records::FunctionProfile {
                name: export.kernel_name.to_string_lossy().into_owned(),
                workgroup_size: export.block_dims,
                constant_count: export.constant_count,
                binding_count: export.binding_flags.iter().count() as u32,
            })
            .collect();
        let id = NEXT_PROFILE_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut executable = Box::new(HipExecutable {
            base: iree_hal_executable_t { resource: hal_object::resource_header::<HipExecutable>() },
            profile: Arc::new(crate::profiling::records::ExecutableProfile { id, functions }),
            hip,
            gpus: gpus.to_vec(),
            modules: Vec::with_capacity(gpus.len()),
            exports: def
                .exports
                .iter()
                .map(|export| ExportInfo {
                    kernel_name: export.kernel_name.to_owned(),
                    block_dims: export.block_dims,
                    block_shared_memory_size: export.block_shared_memory_size,
                    constant_count: export.constant_count,
                    binding_flags: export.binding_flags.iter().collect(),
                    functions: Vec::with_capacity(gpus.len()),
                })
                .collect(),
        });
        // On failure the box drops here, unloading every module already loaded. IREE's
        // creation parameters carry no executable name, so the error names its kernels.
        for gpu_index in 0..gpus.len() {
            executable.load_on_gpu(gpu_index, &def).map_err(|status| status.annotate(&describe_executable(&def)))?;
        }
        Ok(hal_object::into_raw(executable))
    }

    /// Its identity and exports in profiles.
    pub fn profile(&self) -> &Arc<crate::profiling::records::ExecutableProfile> {
        &self.profile
    }

    /// Loads every module on GPU `gpu_index` and looks up every export's kernel there.
    fn load_on_gpu(&mut self, gpu_index: usize, def: &HipExecutableDef<'_>) -> Result<()> {
        let hip = self.hip.clone();
        let gpu = self.gpus[gpu_index].clone();
        let on_gpu = |status: crate::status::Status| status.annotate(&format!("loading on GPU {gpu_index} (HIP device {})", gpu.device()));
        let max_shared_memory_bytes = gpu.limits().map_err(on_gpu)?.max_shared_memory_bytes;
        let current = gpu.make_current().map_err(on_gpu)?;
        self.modules.push(Vec::with_capacity(def.modules.len()));
        for (module_index, module) in def.modules.iter().enumerate() {
            let loaded = load_module(&current, module.image)
                .map_err(|status| on_gpu(status.annotate(&format!("module {module_index} is {}", describe_code_object(module.image)))))?;
            self.modules[gpu_index].push(loaded);
        }
        for (export_index, export) in def.exports.iter().enumerate() {
            let module = self.modules[gpu_index][export.module_ordinal as usize].raw();
            let function = lookup_function(&hip, module, export.kernel_name, export.block_shared_memory_size, max_shared_memory_bytes).map_err(|status| {
                on_gpu(status.annotate(&format!(
                    "export {export_index} (kernel `{}` in module {})",
                    export.kernel_name.to_string_lossy(),
                    export.module_ordinal
                )))
            })?;
            self.exports[export_index].functions.push(Address(function.cast()));
        }
        Ok(())
    }

    /// All exports, in entry point ordinal order.
    pub fn exports(&self) -> &[ExportInfo] {
        &self.exports
    }

    /// The export with entry point ordinal `ordinal`.
    pub fn export(&self, ordinal: u32) -> Result<&ExportInfo> {
        self.exports.get(ordinal as usize).ok_or_else(|| {
            crate::status!(InvalidArgument, "export ordinal {ordinal} out of range; the executable has {} exports", self.exports.len())
        })
    }

    /// The kernel of export `ordinal` on GPU `gpu_index` (the device's queue order).
    pub fn function(&self, ordinal: u32, gpu_index: usize) -> Result<hipFunction_t> {
        self.export(ordinal)?.function(gpu_index)
    }

    /// The export `ordinal` and its kernel on the GPU `queue_affinity` selects (IREE's
    /// `lookup_kernel_params`), as the device picks a queue.
    pub fn lookup(&self, ordinal: u32, queue_affinity: iree_hal_queue_affinity_t) -> Result<(&ExportInfo, hipFunction_t)> {
        let gpu_index = crate::argument_rules::gpu_for_affinity(queue_affinity, self.gpus.len())?;
        let export = self.export(ordinal)?;
        Ok((export, export.function(gpu_index)?))
    }

    /// How many GPUs the executable is loaded on (all of its device's).
    pub fn gpu_count(&self) -> usize {
        self.gpus.len()
    }

    /// The modules loaded on GPU `gpu_index`, in module ordinal order.
    pub fn modules(&self, gpu_index: usize) -> &[Module] {
        self.modules.get(gpu_index).map_or(&[], Vec::as_slice)
    }
}

/// Names an executable in errors: its kernels, with where the compiler says each comes
/// from when it recorded that.
fn describe_executable(def: &HipExecutableDef<'_>) -> String {
    const SHOWN: usize = 3;
    let mut kernels: Vec<String> = def
        .exports
        .iter()
        .take(SHOWN)
        .map(|export| {
            let name = export.kernel_name.to_string_lossy();
            match export.debug_info.as_ref().and_then(|info| info.location.as_ref()) {
                Some(location) => format!("`{name}` ({}:{})", location.filename.to_string_lossy(), location.line),
                None => format!("`{name}`"),
            }
        })
        .collect();
    if def.exports.len() > SHOWN {
        kernels.push(format!("{} more", def.exports.len() - SHOWN));
    }
    format!("executable with kernels {}", kernels.join(", "))
}

/// What kind of code object `image` is, for load errors: AMD GPUs load AMDGPU objects; a
/// CPU implementation of HIP such as the software HIP device loads host objects.
fn describe_code_object(image: &[u8]) -> String {
    const EM_X86_64: u16 = 62;
    const EM_AMDGPU: u16 = 224;
    // e_ident: magic, class, data (1 = little endian); e_machine at byte 18.
    match image {
        [0x7f, b'E', b'L', b'F', _, 1, _, _, _, _, _, _, _, _, _, _, _, _, machine_lo, machine_hi, ..] => {
            match u16::from_le_bytes([*machine_lo, *machine_hi]) {
                EM_AMDGPU => "an AMDGPU code object (ELF machine EM_AMDGPU), which only an AMD GPU's HIP runtime can load".to_string(),
                EM_X86_64 => "an x86-64 ELF code object".to_string(),
                machine => format!("an ELF code object for machine {machine}"),
            }
        }
        [0x7f, b'E', b'L', b'F', ..] => "a big-endian or truncated ELF code object".to_string(),
        _ => "not an ELF code object".to_string(),
    }
}

/// Loads one code object in the `current` context. `image` is followed by a NUL byte in
/// the verified buffer (flatbuffer strings are terminated), as HIP's loaders expect of data
/// they size themselves.
fn load_module(current: &Current<'_>, image: &[u8]) -> Result<Module> {
    // On the stack: a zeroed heap buffer of this size (calloc) was most of the instructions
    // an executable load spent outside HIP.
    let mut error_log = [0u8; JIT_ERROR_LOG_BYTES];
    let mut options: [hipJitOption; 2] = [hipJitOptionErrorLogBuffer, hipJitOptionErrorLogBufferSizeBytes];
    // HIP reads the size option's value from the pointer slot itself.
    let mut values: [*mut c_void; 2] = [error_log.as_mut_ptr().cast(), JIT_ERROR_LOG_BYTES as *mut c_void];
    current.load_module(image, &mut options, &mut values).map_err(|status| {
        let mut status = status.annotate("mismatched target chip? missing/wrong bitcode directory?");
        let log_length = error_log.iter().position(|&b| b == 0).unwrap_or(error_log.len());
        if log_length > 0 {
            status = status.annotate(&String::from_utf8_lossy(&error_log[..log_length]));
        }
        status
    })
}

/// Looks up `name` in `module` (on the current context) and allows it the dynamic shared
/// memory the export declares, as IREE's C driver does for every export, once the kernel's
/// static LDS (`hipFuncGetAttribute`) and the dynamic size are known to fit the GPU's
/// `max_shared_memory_bytes` per block together. ROCm 6.4 made `hipFuncSetAttribute` refuse
/// a dynamic size the static LDS leaves no room for; before, the attribute was accepted and
/// the kernel could not launch. The check names both sizes in every release.
fn lookup_function(hip: &HipSymbols, module: hipModule_t, name: &CStr, dynamic_shared_bytes: u32, max_shared_memory_bytes: u64) -> Result<hipFunction_t> {
    let mut function: hipFunction_t = core::ptr::null_mut();
    hip_call!(hip, hipModuleGetFunction(&mut function, module, name.as_ptr()))?;
    if function.is_null() {
        return Err(crate::status!(NotFound, "kernel `{}` not found in its module", name.to_string_lossy()));
    }
    let mut static_shared: c_int = 0;
    hip_call!(hip, hipFuncGetAttribute(&mut static_shared, HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function))?;
    let total = u64::from(static_shared.max(0) as u32) + u64::from(dynamic_shared_bytes);
    if total > max_shared_memory_bytes {
        return Err(crate::status!(
            InvalidArgument,
            "kernel `{}` needs {static_shared} bytes of static and {dynamic_shared_bytes} bytes of dynamic shared memory, {total} in all, over the {max_shared_memory_bytes} bytes per block of the device",
            name.to_string_lossy()
        ));
    }
    // `check_limits` bounded the size by the device's shared memory, which fits in c_int.
    let shared = c_int::try_from(dynamic_shared_bytes)
        .map_err(|_| crate::status!(InvalidArgument, "{dynamic_shared_bytes} bytes of shared memory do not fit HIP's attribute"))?;
    hip_call!(hip, hipFuncSetAttribute(function as *const c_void, hipFuncAttributeMaxDynamicSharedMemorySize, shared))?;
    Ok(function)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_cts_and_compiler_format_names_only() {
        assert!(is_accepted_format(b"HSACO"));
        assert!(is_accepted_format(b"rocm-hsaco-fb"));
        assert!(!is_accepted_format(b"FOO?"));
        assert!(!is_accepted_format(b"hsaco"));
        assert!(!is_accepted_format(b""));
    }

    #[test]
    fn code_objects_are_described_by_their_elf_machine() {
        let elf = |machine: u16| {
            let mut header = vec![0u8; 64];
            header[..6].copy_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1]);
            header[18..20].copy_from_slice(&machine.to_le_bytes());
            header
        };
        assert!(describe_code_object(&elf(224)).starts_with("an AMDGPU code object"));
        assert_eq!(describe_code_object(&elf(62)), "an x86-64 ELF code object");
        assert_eq!(describe_code_object(&elf(183)), "an ELF code object for machine 183");
        assert_eq!(describe_code_object(&elf(224)[..10]), "a big-endian or truncated ELF code object");
        assert_eq!(describe_code_object(b"not elf at all, not elf at all"), "not an ELF code object");
        assert_eq!(describe_code_object(&[]), "not an ELF code object");
    }

    #[test]
    fn export_lookups_out_of_range_are_errors() {
        let export = ExportInfo {
            kernel_name: CString::new("k").unwrap(),
            block_dims: [1, 1, 1],
            block_shared_memory_size: 0,
            constant_count: 0,
            binding_flags: vec![],
            functions: vec![Address(core::ptr::null_mut())],
        };
        assert!(export.function(0).is_ok());
        let status = export.function(1).unwrap_err();
        assert_eq!(status.code(), crate::status::StatusCode::OutOfRange);
        assert!(status.message().contains("GPU index 1 out of range"), "{}", status.message());
    }
}
