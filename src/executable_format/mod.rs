//! IREE's HIP executable format (flatbuffer file identifier `HIP1`, schema
//! `iree/schemas/hip_executable_def.fbs` of IREE v3.3.0 with the debug info tables of
//! `executable_debug_info.fbs`), verified completely before the driver uses it.
//!
//! `parse` returns a view that borrows the caller's bytes (module images, names and
//! flags are slices of the buffer) after checking every offset, size and alignment the
//! way flatcc's verifier does, and every rule IREE's HIP driver applies when it loads an
//! executable (`native_executable.c`). `check_limits` then checks each export against the
//! device it will run on. Every failure is an INVALID_ARGUMENT status whose message says
//! what is wrong and where (`export 3: module ordinal 5 out of range (2 modules)`).
//!
//! Where IREE's driver accepts a file it then misuses, we reject it instead:
//! - a kernel name with a NUL inside (HIP would look up only the part before the NUL);
//! - a zero block dimension (the launch would fail at dispatch time);
//! - (in `check_limits`) more threads per block than the device allows, which IREE does
//!   not check at load time and which fails at dispatch time;
//! - buffers whose shared tables or vectors make verification grow beyond linear work.
//!
//! Everything else IREE accepts is accepted (a differential test against flatcc's verifier
//! and IREE's checks agrees on 20,000 mutated files, see `fuzz/README.md`), including an
//! executable with no modules and no exports, unknown binding flag bits and names that are
//! not UTF-8. Alignment is measured from the start of the buffer, so unlike flatcc the
//! buffer's own address need not be 4-byte aligned (every value is read bytewise).
//!
//! Field ids (schema order):
//! - ExecutableDef: 0 exports:[ExportDef], 1 modules:[ModuleDef],
//!   2 source_files:[debug.SourceFileDef]
//! - ExportDef: 0 module_ordinal:uint32, 1 kernel_name:string, 2 block_dims:BlockDims,
//!   3 block_shared_memory_size:uint32, 4 constant_count:uint32,
//!   5 binding_flags:[BindingBits:uint64], 6 debug_info:debug.ExportDef
//! - ModuleDef: 0 hsaco_image:string
//! - debug.ExportDef: 0 name:string, 1 location:FileLineLocDef,
//!   2 stage_locations:[StageLocationDef]
//! - debug.FileLineLocDef: 0 filename:string, 1 line:int32
//! - debug.StageLocationDef: 0 stage:string, 1 location:FileLineLocDef
//! - debug.SourceFileDef: 0 path:string, 1 content:[uint8]

mod flatbuffer;
#[cfg(test)]
mod tests;

use crate::status::Result;
use core::ffi::CStr;
use core::fmt;
use flatbuffer::{fail as invalid, FbResult, FormatError, Path, Table, Verifier};
use std::borrow::Cow;
use std::collections::HashMap;

/// The flatbuffer file identifier of HIP executables.
pub const FILE_IDENTIFIER: &[u8; 4] = b"HIP1";

/// Most push constants an export may declare (IREE's
/// `IREE_HAL_HIP_MAX_DISPATCH_CONSTANT_COUNT`).
pub const MAX_CONSTANT_COUNT: u32 = 64;

/// Most bindings an export may declare (IREE's `IREE_HAL_HIP_MAX_DISPATCH_BINDING_COUNT`).
pub const MAX_BINDING_COUNT: usize = 16;

/// A string from the buffer: its bytes without the NUL terminator that follows them.
/// IREE does not require UTF-8, so neither do we; `to_str` says whether it is.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct FlatString<'a>(&'a [u8]);

impl<'a> FlatString<'a> {
    pub fn as_bytes(&self) -> &'a [u8] {
        self.0
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The text, if it is UTF-8.
    pub fn to_str(&self) -> Option<&'a str> {
        core::str::from_utf8(self.0).ok()
    }

    /// The text with invalid UTF-8 replaced, for messages and tracing.
    pub fn to_string_lossy(&self) -> Cow<'a, str> {
        String::from_utf8_lossy(self.0)
    }
}

impl fmt::Debug for FlatString<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.to_string_lossy(), f)
    }
}

/// The `BindingBits` flags of one binding.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct BindingFlags(pub u64);

impl BindingFlags {
    pub const READ_ONLY: u64 = 1 << 0;
    pub const INDIRECT: u64 = 1 << 1;

    pub fn bits(self) -> u64 {
        self.0
    }

    pub fn is_read_only(self) -> bool {
        self.0 & Self::READ_ONLY != 0
    }

    pub fn is_indirect(self) -> bool {
        self.0 & Self::INDIRECT != 0
    }
}

/// An export's per-binding flags, read in place (8 little-endian bytes each).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct BindingFlagList<'a>(&'a [u8]);

impl<'a> BindingFlagList<'a> {
    /// The number of bindings the export declares.
    pub fn len(&self) -> usize {
        self.0.len() / 8
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn get(&self, index: usize) -> Option<BindingFlags> {
        let bytes = self
            .0
            .get(index.checked_mul(8)?..index.checked_mul(8)? + 8)?;
        Some(BindingFlags(u64::from_le_bytes(bytes.try_into().ok()?)))
    }

    pub fn iter(&self) -> impl Iterator<Item = BindingFlags> + 'a {
        self.0
            .chunks_exact(8)
            .map(|chunk| BindingFlags(u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]))))
    }
}

impl fmt::Debug for BindingFlagList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter().map(|b| b.0)).finish()
    }
}

/// One code object (HSACO image, or a software HIP shared object).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct ModuleDef<'a> {
    /// The image bytes, non-empty. A NUL byte follows them in the buffer.
    pub image: &'a [u8],
}

/// A file name and line (`FileLineLocDef`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct FileLineLocation<'a> {
    /// Non-empty, as IREE requires.
    pub filename: FlatString<'a>,
    pub line: i32,
}

/// A source location of one compilation stage (`StageLocationDef`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct StageLocation<'a> {
    /// Non-empty, as IREE requires.
    pub stage: FlatString<'a>,
    pub location: Option<FileLineLocation<'a>>,
}

/// Optional debug information of an export (`iree.hal.debug.ExportDef`).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct DebugInfo<'a> {
    /// The original export name from the compiler.
    pub name: Option<FlatString<'a>>,
    pub location: Option<FileLineLocation<'a>>,
    /// Sorted by stage name by the producer (not checked, as IREE does not).
    pub stage_locations: Vec<StageLocation<'a>>,
}

impl<'a> DebugInfo<'a> {
    /// The location tools should show: the first stage's if any stage has locations
    /// recorded, otherwise the canonical one (IREE's choice for tracing).
    pub fn source_location(&self) -> Option<FileLineLocation<'a>> {
        match self.stage_locations.first() {
            Some(stage) => stage.location,
            None => self.location,
        }
    }
}

/// One exported kernel, in entry point ordinal order.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ExportDef<'a> {
    /// Index into `HipExecutableDef::modules` (checked in range).
    pub module_ordinal: u32,
    /// The kernel symbol to look up in the module: non-empty, without inner NULs.
    pub kernel_name: &'a CStr,
    /// Threads per block in x, y, z; each at least 1.
    pub block_dims: [u32; 3],
    /// Dynamic shared memory per block, in bytes.
    pub block_shared_memory_size: u32,
    /// 32-bit push constants (at most `MAX_CONSTANT_COUNT`).
    pub constant_count: u32,
    /// One entry per binding (at most `MAX_BINDING_COUNT`).
    pub binding_flags: BindingFlagList<'a>,
    pub debug_info: Option<DebugInfo<'a>>,
}

impl ExportDef<'_> {
    pub fn binding_count(&self) -> usize {
        self.binding_flags.len()
    }

    /// Threads per block (the product of the block dims, saturating: three 32-bit dims
    /// can exceed 64 bits).
    pub fn threads_per_block(&self) -> u64 {
        self.block_dims
            .iter()
            .fold(1u64, |product, &d| product.saturating_mul(d as u64))
    }
}

/// An embedded source file (`iree.hal.debug.SourceFileDef`), for tooling.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct SourceFileDef<'a> {
    pub path: Option<FlatString<'a>>,
    pub content: &'a [u8],
}

/// A verified HIP executable, borrowing the buffer it was parsed from.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct HipExecutableDef<'a> {
    pub modules: Vec<ModuleDef<'a>>,
    pub exports: Vec<ExportDef<'a>>,
    pub source_files: Vec<SourceFileDef<'a>>,
}

/// What the device allows per block (from `hipDeviceGetAttribute`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct DeviceLimits {
    pub max_block_dims: [u32; 3],
    pub max_threads_per_block: u32,
    pub max_shared_memory_bytes: u64,
}

/// Verifies `data` as a HIP executable and returns a view of it. Any problem is an
/// INVALID_ARGUMENT status naming it and where it is.
pub fn parse(data: &[u8]) -> Result<HipExecutableDef<'_>> {
    parse_executable(data).map_err(|FormatError(message)| {
        crate::status!(InvalidArgument, "HIP executable: {message}")
    })
}

/// IREE 3.13: the size of `iree_flatbuffer_file_header_t`.
#[cfg(feature = "iree-3-13")]
pub const FILE_HEADER_BYTES: usize = 64;

/// IREE 3.13: executable data starts with IREE's file header (`iree_flatbuffer_file_header_t`,
/// 64 bytes: the file identifier as magic, version 0, the 64-bit size of the content that
/// follows, reserved words), then the flatbuffer. Returns the content; refusals as IREE's
/// `iree_hal_read_executable_flatbuffer_header`.
#[cfg(feature = "iree-3-13")]
pub fn strip_file_header(data: &[u8]) -> Result<&[u8]> {
    const HEADER_BYTES: usize = FILE_HEADER_BYTES;
    if data.len() < HEADER_BYTES {
        return Err(crate::status!(InvalidArgument, "executable flatbuffer data is not present or less than header size"));
    }
    if data[..4] != FILE_IDENTIFIER[..] {
        return Err(crate::status!(InvalidArgument, "executable file identifier does not match; expected `HIP1`"));
    }
    let version = u32::from_le_bytes([data[4], data[5], data[6], data[7]]);
    let content_size = u64::from_le_bytes(data[8..16].try_into().expect("8 bytes"));
    if content_size == 0 {
        return Err(crate::status!(InvalidArgument, "executable flatbuffer reported as zero-length"));
    }
    if version != 0 {
        return Err(crate::status!(Incompatible, "executable version {version} not compatible with this build"));
    }
    let remaining = (data.len() - HEADER_BYTES) as u64;
    if content_size > remaining {
        return Err(crate::status!(
            OutOfRange,
            "executable flatbuffer size {content_size} exceeds the {remaining} bytes after the header"
        ));
    }
    Ok(&data[HEADER_BYTES..HEADER_BYTES + content_size as usize])
}

/// IREE 3.13: the size of executable data (header and content) once its flatbuffer
/// verifies (`infer_format`).
#[cfg(feature = "iree-3-13")]
pub fn verified_size(data: &[u8]) -> Result<usize> {
    let content = strip_file_header(data)?;
    parse(content)?;
    Ok(FILE_HEADER_BYTES + content.len())
}

/// Checks every export of `def` against the device: each block dim, the threads per
/// block and the shared memory per block. The first export over a limit is an
/// INVALID_ARGUMENT status naming it.
pub fn check_limits(def: &HipExecutableDef<'_>, limits: &DeviceLimits) -> Result<()> {
    for (index, export) in def.exports.iter().enumerate() {
        let name = export.kernel_name.to_string_lossy();
        let [x, y, z] = export.block_dims;
        let [max_x, max_y, max_z] = limits.max_block_dims;
        if x > max_x || y > max_y || z > max_z {
            return Err(crate::status!(
                InvalidArgument,
                "HIP executable: export {index} (`{name}`): block dims {x}x{y}x{z} exceed the \
                 device maximum {max_x}x{max_y}x{max_z}"
            ));
        }
        let threads = export.threads_per_block();
        if threads > limits.max_threads_per_block as u64 {
            return Err(crate::status!(
                InvalidArgument,
                "HIP executable: export {index} (`{name}`): {threads} threads per block \
                 ({x}x{y}x{z}) exceed the device maximum of {}",
                limits.max_threads_per_block
            ));
        }
        if export.block_shared_memory_size as u64 > limits.max_shared_memory_bytes {
            return Err(crate::status!(
                InvalidArgument,
                "HIP executable: export {index} (`{name}`): {} bytes of shared memory per block \
                 exceed the device maximum of {} bytes",
                export.block_shared_memory_size,
                limits.max_shared_memory_bytes
            ));
        }
    }
    Ok(())
}

fn parse_executable(data: &[u8]) -> FbResult<HipExecutableDef<'_>> {
    let mut verifier = Verifier::new(data);
    let root = verifier.root(FILE_IDENTIFIER)?;
    let root_path = Path::ROOT;

    let modules_path = root_path.field("modules");
    let mut modules = Vec::new();
    if let Some(vector) = verifier.table_vector_field(&root, 1, &modules_path)? {
        modules.reserve_exact(vector.count);
        for index in 0..vector.count {
            let path = modules_path.element("module", index);
            let table = verifier.table_at(vector.slot(index), &path)?;
            modules.push(parse_module(&mut verifier, &table, &path)?);
        }
    }

    let exports_path = root_path.field("exports");
    let mut exports = Vec::new();
    // Kernel names already checked for inner NULs, by position: exports may share one
    // string, and rescanning it for each would make the work quadratic.
    let mut kernel_names = HashMap::new();
    if let Some(vector) = verifier.table_vector_field(&root, 0, &exports_path)? {
        exports.reserve_exact(vector.count);
        for index in 0..vector.count {
            let path = exports_path.element("export", index);
            let table = verifier.table_at(vector.slot(index), &path)?;
            exports.push(parse_export(
                &mut verifier,
                &table,
                &path,
                modules.len(),
                &mut kernel_names,
            )?);
        }
    }

    let source_files_path = root_path.field("source_files");
    let mut source_files = Vec::new();
    if let Some(vector) = verifier.table_vector_field(&root, 2, &source_files_path)? {
        source_files.reserve_exact(vector.count);
        for index in 0..vector.count {
            let path = source_files_path.element("source_file", index);
            let table = verifier.table_at(vector.slot(index), &path)?;
            let path_string = verifier
                .string_field(&table, 0, &path.field("path"))?
                .map(|(_, bytes)| FlatString(bytes));
            let content = verifier
                .scalar_vector_field(&table, 1, 1, &path.field("content"))?
                .unwrap_or_default();
            source_files.push(SourceFileDef {
                path: path_string,
                content,
            });
        }
    }

    Ok(HipExecutableDef {
        modules,
        exports,
        source_files,
    })
}

fn parse_module<'a>(
    verifier: &mut Verifier<'a>,
    table: &Table,
    path: &Path<'_>,
) -> FbResult<ModuleDef<'a>> {
    let image_path = path.field("hsaco_image");
    match verifier.string_field(table, 0, &image_path)? {
        None => invalid(path, format_args!("has no hsaco_image")),
        Some((_, [])) => invalid(path, format_args!("hsaco_image is empty")),
        Some((_, image)) => Ok(ModuleDef { image }),
    }
}

fn parse_export<'a>(
    verifier: &mut Verifier<'a>,
    table: &Table,
    path: &Path<'_>,
    module_count: usize,
    kernel_names: &mut HashMap<usize, &'a CStr>,
) -> FbResult<ExportDef<'a>> {
    let module_ordinal = verifier.u32_field(table, 0, 0, &path.field("module_ordinal"))?;
    if module_ordinal as usize >= module_count {
        return invalid(
            path,
            format_args!("module ordinal {module_ordinal} out of range ({module_count} modules)"),
        );
    }

    let name_path = path.field("kernel_name");
    let kernel_name = match verifier.string_field(table, 1, &name_path)? {
        None => return invalid(path, format_args!("has no kernel_name")),
        Some((_, [])) => return invalid(path, format_args!("kernel_name is empty")),
        Some((pos, bytes)) => match kernel_names.get(&pos) {
            Some(&name) => name,
            None => {
                // The verified terminator follows the bytes, so this only fails on an
                // inner NUL.
                let with_nul = verifier.string_with_nul(pos, bytes.len());
                let Some(name) = with_nul.and_then(|b| CStr::from_bytes_with_nul(b).ok()) else {
                    return invalid(
                        path,
                        format_args!(
                            "kernel_name {:?} contains a NUL byte",
                            String::from_utf8_lossy(bytes)
                        ),
                    );
                };
                kernel_names.insert(pos, name);
                name
            }
        },
    };

    let dims_path = path.field("block_dims");
    let Some(dims) = verifier.struct_field(table, 2, 12, 4, &dims_path)? else {
        return invalid(path, format_args!("has no block_dims"));
    };
    let dim = |i: usize| {
        dims.get(4 * i..4 * i + 4)
            .and_then(|b| b.try_into().ok())
            .map_or(0, u32::from_le_bytes)
    };
    let block_dims = [dim(0), dim(1), dim(2)];
    if block_dims.contains(&0) {
        return invalid(
            path,
            format_args!(
                "block dims {}x{}x{} have a zero dimension",
                block_dims[0], block_dims[1], block_dims[2]
            ),
        );
    }

    let block_shared_memory_size =
        verifier.u32_field(table, 3, 0, &path.field("block_shared_memory_size"))?;

    let constant_count = verifier.u32_field(table, 4, 0, &path.field("constant_count"))?;
    if constant_count > MAX_CONSTANT_COUNT {
        return invalid(
            path,
            format_args!(
                "constant count {constant_count} exceeds the maximum of {MAX_CONSTANT_COUNT}"
            ),
        );
    }

    let binding_flags = BindingFlagList(
        verifier
            .scalar_vector_field(table, 5, 8, &path.field("binding_flags"))?
            .unwrap_or_default(),
    );
    if binding_flags.len() > MAX_BINDING_COUNT {
        return invalid(
            path,
            format_args!(
                "binding count {} exceeds the maximum of {MAX_BINDING_COUNT}",
                binding_flags.len()
            ),
        );
    }

    let debug_path = path.field("debug_info");
    let debug_info = match verifier.table_field(table, 6, &debug_path)? {
        Some(debug_table) => Some(parse_debug_info(verifier, &debug_table, &debug_path)?),
        None => None,
    };

    Ok(ExportDef {
        module_ordinal,
        kernel_name,
        block_dims,
        block_shared_memory_size,
        constant_count,
        binding_flags,
        debug_info,
    })
}

fn parse_debug_info<'a>(
    verifier: &mut Verifier<'a>,
    table: &Table,
    path: &Path<'_>,
) -> FbResult<DebugInfo<'a>> {
    let name = verifier
        .string_field(table, 0, &path.field("name"))?
        .map(|(_, bytes)| FlatString(bytes));
    let location = parse_optional_location(verifier, table, 1, &path.field("location"))?;
    let stages_path = path.field("stage_locations");
    let mut stage_locations = Vec::new();
    if let Some(vector) = verifier.table_vector_field(table, 2, &stages_path)? {
        stage_locations.reserve_exact(vector.count);
        for index in 0..vector.count {
            let stage_path = stages_path.element("stage_location", index);
            let stage_table = verifier.table_at(vector.slot(index), &stage_path)?;
            let stage = match verifier.string_field(&stage_table, 0, &stage_path.field("stage"))? {
                Some((_, bytes)) if !bytes.is_empty() => FlatString(bytes),
                _ => return invalid(&stage_path, format_args!("stage name is missing or empty")),
            };
            let location =
                parse_optional_location(verifier, &stage_table, 1, &stage_path.field("location"))?;
            stage_locations.push(StageLocation { stage, location });
        }
    }
    Ok(DebugInfo {
        name,
        location,
        stage_locations,
    })
}

fn parse_optional_location<'a>(
    verifier: &mut Verifier<'a>,
    table: &Table,
    id: usize,
    path: &Path<'_>,
) -> FbResult<Option<FileLineLocation<'a>>> {
    let Some(location) = verifier.table_field(table, id, path)? else {
        return Ok(None);
    };
    let filename = match verifier.string_field(&location, 0, &path.field("filename"))? {
        Some((_, bytes)) if !bytes.is_empty() => FlatString(bytes),
        _ => return invalid(path, format_args!("filename is missing or empty")),
    };
    let line = verifier.u32_field(&location, 1, 0, &path.field("line"))? as i32;
    Ok(Some(FileLineLocation { filename, line }))
}
