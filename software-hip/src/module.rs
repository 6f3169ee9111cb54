//! Code objects (`hipModule_t`) and kernels (`hipFunction_t`) of the software
//! HIP device.
//!
//! A code object is an x86-64 ELF shared object built against
//! `include/software_hip_kernel.h`; that header documents the kernel ABI
//! (descriptor symbols, the context a kernel sees, execution granularity,
//! shared memory and return codes). This module validates an image behind a
//! bare pointer, loads it from an in-memory file with the dynamic loader,
//! looks kernels up by name, captures launch arguments and runs grids.

mod abi;
mod args;
mod elf_image;
mod execute;
mod helpers;
mod image_file;
mod library;
mod simt;
#[cfg(test)]
mod tests;

pub use args::KernelArgs;
pub use execute::THREADS_ENV;
use simt::LaneMode;
pub use simt::{SimtStats, LANE_STACK_ENV};

use crate::types::{
    hipErrorInvalidConfiguration, hipErrorInvalidImage, hipErrorInvalidValue, hipErrorNotFound,
    hipErrorOutOfMemory, hipError_t,
};
use abi::{Dim3, Granularity, KernelDescriptor, KernelEntry, ParamDescriptor};
use args::ParamLayout;
use core::ffi::{c_void, CStr};
use library::Library;
use std::sync::Arc;

/// Most threads in one workgroup.
pub const MAX_THREADS_PER_BLOCK: u32 = 1024;
/// Most threads along each workgroup dimension.
pub const MAX_BLOCK_DIMS: [u32; 3] = [1024, 1024, 1024];
/// Most workgroups along each grid dimension.
pub const MAX_GRID_DIMS: [u32; 3] = [i32::MAX as u32, i32::MAX as u32, i32::MAX as u32];
/// Most dynamic shared memory one workgroup may request.
pub const MAX_DYNAMIC_SHARED_BYTES: u32 = 64 * 1024;
/// Longest kernel name looked up.
const MAX_KERNEL_NAME_BYTES: usize = 1024;
/// Most parameters one kernel may declare.
const MAX_KERNEL_PARAMS: u32 = 1024;

/// Why a code object could not be loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadError {
    pub code: hipError_t,
    pub message: String,
}

impl LoadError {
    fn new(code: hipError_t, message: String) -> Self {
        LoadError { code, message }
    }
}

/// A loaded code object.
pub struct Module {
    library: Library,
    image_size: usize,
}

/// A kernel of a loaded code object; keeps the module loaded.
#[derive(Clone)]
pub struct Function {
    module: Arc<Module>,
    name: String,
    entry: KernelEntry,
    granularity: Granularity,
    layout: Arc<ParamLayout>,
    simt: SimtConfig,
    stats: Arc<simt::SimtCounters>,
}

/// The ABI-version-2 fields of a descriptor (zero for version 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct SimtConfig {
    /// How a PER_LANE kernel's lanes run: plain loop, fibers (`SOFTHIP_KERNEL_SYNC`),
    /// coroutines (with `SOFTHIP_KERNEL_COROUTINE` too), scheduled by the runtime or,
    /// with `SOFTHIP_KERNEL_WORKGROUP_LOOP`, by the code object.
    lanes: LaneMode,
    /// 32 or 64.
    wave_size: u32,
    static_shared_bytes: u32,
}

/// The wave size of the software device (gfx942's warpSize).
pub const DEVICE_WAVE_SIZE: u32 = 64;

/// The shape of one launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchDims {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_shared_bytes: u32,
}

impl Module {
    /// Loads the code object at `image`. `hipModuleLoadData` gives only a
    /// pointer: the image's size is derived from its ELF headers. Anything
    /// that is not an x86-64 ELF shared object this device can load (random
    /// bytes, an AMDGPU code object, a truncated or inconsistent header,
    /// unreadable memory) gives `hipErrorInvalidImage`.
    ///
    /// # Safety
    /// `image` may be any pointer: unreadable memory is detected and reported.
    /// Readable memory must not be modified concurrently. Loading runs the
    /// object's initialisers, so only images from a trusted producer should
    /// be loaded (as with any HIP code object).
    pub unsafe fn load(image: *const c_void) -> Result<Arc<Module>, hipError_t> {
        // SAFETY: forwarded contract.
        unsafe { Self::load_with_log(image) }.map_err(|err| err.code)
    }

    /// `load`, with a human-readable reason on failure (for
    /// `hipJitOptionErrorLogBuffer` of `hipModuleLoadDataEx`).
    ///
    /// # Safety
    /// As `load`.
    pub unsafe fn load_with_log(image: *const c_void) -> Result<Arc<Module>, LoadError> {
        // SAFETY: forwarded contract.
        unsafe { Self::load_bounded(image.cast(), usize::MAX) }
    }

    /// Loads a code object held in `image` (e.g. a file read by
    /// `hipModuleLoad`); headers describing more than `image.len()` bytes
    /// give `hipErrorInvalidImage`, and nothing past the slice is read.
    pub fn load_bytes(image: &[u8]) -> Result<Arc<Module>, LoadError> {
        // SAFETY: reads stay within the slice, which is borrowed immutably.
        unsafe { Self::load_bounded(image.as_ptr(), image.len()) }
    }

    /// # Safety
    /// As `load`; at most `available` bytes at `image` are read.
    unsafe fn load_bounded(image: *const u8, available: usize) -> Result<Arc<Module>, LoadError> {
        let mut file = image_file::ImageFile::create().map_err(|err| {
            LoadError::new(hipErrorOutOfMemory, format!("cannot create a memfd: {err}"))
        })?;
        // SAFETY: forwarded contract; every read goes through the kernel.
        let image_size = unsafe { elf_image::copy_code_object(image, available, &mut file) }
            .map_err(|err| {
                let code = match err {
                    elf_image::ImageError::Io => hipErrorOutOfMemory,
                    _ => hipErrorInvalidImage,
                };
                LoadError::new(code, format!("not a software HIP code object: {err:?}"))
            })?;
        let library = Library::open(file).map_err(|message| {
            LoadError::new(hipErrorInvalidImage, format!("dlopen failed: {message}"))
        })?;
        Ok(Arc::new(Module {
            library,
            image_size,
        }))
    }

    /// Size in bytes of the loaded image, as derived from its headers.
    pub fn image_size(&self) -> usize {
        self.image_size
    }

    /// Looks up kernel `name` (its plain name; the descriptor symbol is
    /// `softhip_kernel__<name>`). Unknown names, and symbols that are not
    /// kernel descriptors, give `hipErrorNotFound`; a descriptor with an
    /// unsupported ABI version or invalid fields gives `hipErrorInvalidImage`.
    pub fn function(self: &Arc<Self>, name: &CStr) -> Result<Function, hipError_t> {
        let plain = name.to_bytes();
        if plain.is_empty() || plain.len() > MAX_KERNEL_NAME_BYTES {
            return Err(hipErrorNotFound);
        }
        let mut symbol = Vec::with_capacity(abi::KERNEL_SYMBOL_PREFIX.len() + plain.len() + 1);
        symbol.extend_from_slice(abi::KERNEL_SYMBOL_PREFIX.as_bytes());
        symbol.extend_from_slice(plain);
        let symbol = std::ffi::CString::new(symbol).map_err(|_| hipErrorNotFound)?;
        let address = self
            .library
            .data_symbol(&symbol, abi::KERNEL_DESCRIPTOR_V1_BYTES)
            .ok_or(hipErrorNotFound)?;
        // SAFETY: the symbol is a data object of this module at least as large
        // as a version-1 descriptor, whose fields come first in the struct; the
        // module stays loaded while `self` lives. The version-2 fields stay
        // zero unless the descriptor says it has them (checked below).
        let mut descriptor = KernelDescriptor {
            magic: 0,
            abi_version: 0,
            granularity: 0,
            param_count: 0,
            params: core::ptr::null(),
            entry: core::ptr::null(),
            flags: 0,
            wave_size: 0,
            static_shared_bytes: 0,
        };
        unsafe {
            core::ptr::copy_nonoverlapping(
                address.cast::<u8>(),
                (&mut descriptor as *mut KernelDescriptor).cast::<u8>(),
                abi::KERNEL_DESCRIPTOR_V1_BYTES,
            )
        };
        if descriptor.magic != abi::KERNEL_MAGIC {
            return Err(hipErrorNotFound);
        }
        if descriptor.abi_version == abi::KERNEL_ABI_VERSION {
            // A version-2 descriptor must be a whole one.
            self.library
                .data_symbol(&symbol, core::mem::size_of::<KernelDescriptor>())
                .ok_or(hipErrorInvalidImage)?;
            // SAFETY: as above, now for the full size.
            descriptor = unsafe { address.cast::<KernelDescriptor>().read_unaligned() };
        }
        let (entry, granularity, layout) = self.validate_descriptor(&descriptor)?;
        let simt = Self::validate_simt(&descriptor, granularity)?;
        Ok(Function {
            module: Arc::clone(self),
            name: String::from_utf8_lossy(plain).into_owned(),
            entry,
            granularity,
            layout: Arc::new(layout),
            simt,
            stats: Arc::default(),
        })
    }

    /// A global variable of the code object (`hipModuleGetGlobal`): the
    /// address and size of a data object it defines. Kernel descriptors
    /// (`softhip_kernel__*`, what `.kd` symbols are to an AMDGPU code object)
    /// and LDS (thread-locals of the object) are not globals; unknown names
    /// give `hipErrorNotFound`.
    pub fn global(&self, name: &CStr) -> Result<(*const c_void, usize), hipError_t> {
        let bytes = name.to_bytes();
        if bytes.is_empty() || bytes.starts_with(abi::KERNEL_SYMBOL_PREFIX.as_bytes()) {
            return Err(hipErrorNotFound);
        }
        self.library.data_object(name).ok_or(hipErrorNotFound)
    }

    /// Version-2 fields: known flags only (SYNC only with PER_LANE, COROUTINE only
    /// with SYNC, WORKGROUP_LOOP alone or with both), wave size
    /// 0 (the device's), 32 or 64, static LDS at most 64 KiB.
    fn validate_simt(
        descriptor: &KernelDescriptor,
        granularity: Granularity,
    ) -> Result<SimtConfig, hipError_t> {
        let known_flags =
            abi::KERNEL_FLAG_SYNC | abi::KERNEL_FLAG_COROUTINE | abi::KERNEL_FLAG_WORKGROUP_LOOP;
        let coroutine = abi::KERNEL_FLAG_SYNC | abi::KERNEL_FLAG_COROUTINE;
        if descriptor.flags & !known_flags != 0
            || (descriptor.flags != 0 && granularity != Granularity::PerLane)
            || descriptor.flags == abi::KERNEL_FLAG_COROUTINE
            || (descriptor.flags & abi::KERNEL_FLAG_WORKGROUP_LOOP != 0
                && descriptor.flags & coroutine != coroutine
                && descriptor.flags & coroutine != 0)
            || descriptor.static_shared_bytes > MAX_DYNAMIC_SHARED_BYTES as u64
        {
            return Err(hipErrorInvalidImage);
        }
        let wave_size = match descriptor.wave_size {
            0 => DEVICE_WAVE_SIZE,
            32 | 64 => descriptor.wave_size,
            _ => return Err(hipErrorInvalidImage),
        };
        Ok(SimtConfig {
            lanes: if descriptor.flags == abi::KERNEL_FLAG_WORKGROUP_LOOP {
                LaneMode::PlainWorkgroupLoop
            } else if descriptor.flags & abi::KERNEL_FLAG_WORKGROUP_LOOP != 0 {
                LaneMode::WorkgroupLoop
            } else if descriptor.flags & abi::KERNEL_FLAG_COROUTINE != 0 {
                LaneMode::Coroutines
            } else if descriptor.flags & abi::KERNEL_FLAG_SYNC != 0 {
                LaneMode::Fibers
            } else {
                LaneMode::Plain
            },
            wave_size,
            static_shared_bytes: descriptor.static_shared_bytes as u32,
        })
    }

    fn validate_descriptor(
        &self,
        descriptor: &KernelDescriptor,
    ) -> Result<(KernelEntry, Granularity, ParamLayout), hipError_t> {
        if (descriptor.abi_version != abi::KERNEL_ABI_VERSION
            && descriptor.abi_version != abi::KERNEL_ABI_VERSION_1)
            || descriptor.param_count > MAX_KERNEL_PARAMS
        {
            return Err(hipErrorInvalidImage);
        }
        let granularity =
            Granularity::from_raw(descriptor.granularity).ok_or(hipErrorInvalidImage)?;
        if granularity == Granularity::PerLane && descriptor.abi_version < abi::KERNEL_ABI_VERSION
        {
            return Err(hipErrorInvalidImage);
        }
        if descriptor.entry.is_null() || !self.library.contains(descriptor.entry) {
            return Err(hipErrorInvalidImage);
        }
        let count = descriptor.param_count as usize;
        let params: Vec<ParamDescriptor> = if count == 0 {
            Vec::new()
        } else {
            let first = descriptor.params;
            let last = first.wrapping_add(count).cast::<u8>().wrapping_sub(1);
            if first.is_null()
                || !(first as usize).is_multiple_of(core::mem::align_of::<ParamDescriptor>())
                || !self.library.contains(first.cast())
                || !self.library.contains(last.cast())
            {
                return Err(hipErrorInvalidImage);
            }
            // SAFETY: the array is aligned and its first and last bytes lie in
            // loaded segments of this module, which stays loaded during the
            // read. (A hostile object could span an unmapped gap between
            // segments, but a hostile object already runs code when loaded.)
            unsafe { core::slice::from_raw_parts(first, count) }.to_vec()
        };
        let layout = ParamLayout::new(&params).ok_or(hipErrorInvalidImage)?;
        // SAFETY: a non-null address inside the code object, declared by the
        // descriptor as a softhip_kernel_fn_t.
        let entry: KernelEntry =
            unsafe { core::mem::transmute::<*const c_void, KernelEntry>(descriptor.entry) };
        Ok((entry, granularity, layout))
    }
}

impl Function {
    /// The kernel's plain name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The module this kernel belongs to.
    pub fn module(&self) -> &Arc<Module> {
        &self.module
    }

    /// How many workgroups of this kernel ran on fibers and how many as a
    /// plain loop of lanes (SOFTHIP_PER_LANE kernels), since it was looked up.
    pub fn simt_stats(&self) -> SimtStats {
        self.stats.snapshot()
    }

    /// The kernel's wave size (32 or 64).
    pub fn wave_size(&self) -> u32 {
        self.simt.wave_size
    }

    /// Static LDS bytes per workgroup the descriptor declares.
    pub fn static_shared_bytes(&self) -> u32 {
        self.simt.static_shared_bytes
    }

    /// Number of parameters the kernel declares.
    pub fn param_count(&self) -> usize {
        self.layout.count()
    }

    /// Copies the argument values at launch time, as HIP does
    /// (`kernelParams`: one pointer per parameter; or `extra` with
    /// `HIP_LAUNCH_PARAM_BUFFER_POINTER/SIZE/END`). NULL or missing pointers,
    /// both forms at once, or a short `extra` buffer give
    /// `hipErrorInvalidValue`.
    ///
    /// # Safety
    /// Non-null pointers must be valid for the reads HIP defines for them.
    pub unsafe fn capture_args(
        &self,
        kernel_params: *mut *mut c_void,
        extra: *mut *mut c_void,
    ) -> Result<KernelArgs, hipError_t> {
        // SAFETY: forwarded contract.
        unsafe { KernelArgs::capture(&self.layout, kernel_params, extra) }
    }

    /// Checks a launch shape: every dimension > 0, at most
    /// `MAX_THREADS_PER_BLOCK` threads per workgroup, per-dimension limits,
    /// at most `MAX_DYNAMIC_SHARED_BYTES` of dynamic plus the kernel's static
    /// shared memory, and at
    /// most 2^64 - 1 workgroups in total.
    /// Violations give `hipErrorInvalidConfiguration`.
    pub fn validate(&self, dims: &LaunchDims) -> Result<(), hipError_t> {
        let positive = dims.grid.iter().chain(dims.block.iter()).all(|&d| d > 0);
        // Workgroups are numbered with a u64; larger grids could never finish.
        let countable = dims
            .grid
            .iter()
            .try_fold(1u64, |total, &d| total.checked_mul(d as u64))
            .is_some();
        let block_threads = dims.block.iter().map(|&d| d as u64).product::<u64>();
        let within_limits =
            (0..3).all(|i| dims.block[i] <= MAX_BLOCK_DIMS[i] && dims.grid[i] <= MAX_GRID_DIMS[i]);
        if !positive
            || !countable
            || !within_limits
            || block_threads > MAX_THREADS_PER_BLOCK as u64
            || dims.dynamic_shared_bytes as u64 + self.simt.static_shared_bytes as u64
                > MAX_DYNAMIC_SHARED_BYTES as u64
        {
            return Err(hipErrorInvalidConfiguration);
        }
        Ok(())
    }

    /// Runs the whole grid and returns when every workgroup has finished.
    /// Workgroups are spread over up to `SOFTWARE_HIP_KERNEL_THREADS` host
    /// threads (default: all cores; small grids run on the calling thread
    /// alone). Errors: `hipErrorInvalidConfiguration` (bad dims),
    /// `hipErrorInvalidValue` (arguments captured for a kernel with other
    /// parameters), `hipErrorLaunchFailure` (a kernel call returned non-zero).
    pub fn run(&self, dims: &LaunchDims, args: &KernelArgs) -> Result<(), hipError_t> {
        self.run_with(dims, args, None)
    }

    /// `run` on exactly `min(threads, workgroups)` host threads (for tests
    /// and for callers that manage their own parallelism).
    pub fn run_on_threads(
        &self,
        dims: &LaunchDims,
        args: &KernelArgs,
        threads: usize,
    ) -> Result<(), hipError_t> {
        self.run_with(dims, args, Some(threads))
    }

    fn run_with(
        &self,
        dims: &LaunchDims,
        args: &KernelArgs,
        threads: Option<usize>,
    ) -> Result<(), hipError_t> {
        self.validate(dims)?;
        if args.layout() != &*self.layout {
            return Err(hipErrorInvalidValue);
        }
        let pointers = args.pointers();
        let grid = execute::Grid {
            name: &self.name,
            entry: self.entry,
            granularity: self.granularity,
            lanes: self.simt.lanes,
            wave_size: self.simt.wave_size,
            static_shared_bytes: self.simt.static_shared_bytes,
            stats: &self.stats,
            grid: Dim3::from_array(dims.grid),
            block: Dim3::from_array(dims.block),
            dynamic_shared_bytes: dims.dynamic_shared_bytes,
            args: &pointers,
        };
        let started = std::time::Instant::now();
        let result = grid.run(threads.unwrap_or_else(|| grid.default_workers()));
        crate::profile::record_kernel(started.elapsed());
        result
    }
}

impl std::fmt::Debug for Module {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Module")
            .field("image_size", &self.image_size)
            .finish()
    }
}

impl std::fmt::Debug for Function {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Function")
            .field("name", &self.name)
            .field("granularity", &self.granularity)
            .field("simt", &self.simt)
            .field("params", &self.layout.count())
            .finish()
    }
}
