//! IREE's HIP executable format ("HIP1", schema
//! `iree/schemas/hip_executable_def.fbs` of IREE v3.3.0), as plain Rust
//! values that can be packed into a flatbuffer and parsed back.
//!
//! Field ids used below (schema order):
//!   ExecutableDef: 0 exports:[ExportDef], 1 modules:[ModuleDef],
//!                  2 source_files:[SourceFileDef] (never written)
//!   ExportDef:     0 module_ordinal:u32, 1 kernel_name:string,
//!                  2 block_dims:BlockDims{x,y,z:u32}, 3 block_shared_memory_size:u32,
//!                  4 constant_count:u32, 5 binding_flags:[BindingBits:u64],
//!                  6 debug_info:iree.hal.debug.ExportDef
//!   ModuleDef:     0 hsaco_image:string
//!   debug ExportDef: 0 name:string (location fields never written)

use crate::flatbuffer::{finish, Field, Object, ReadError, Reader, Table};

/// The flatbuffer file identifier of HIP executables.
pub const FILE_IDENTIFIER: &[u8; 4] = b"HIP1";
/// Size of the `iree_flatbuffer_file_header_t` that IREE 3.13's executables
/// start with (`iree/base/internal/flatcc/parsing.h`): magic (the file
/// identifier), u32 version 0, u64 content size, six reserved u64.
pub const FILE_HEADER_BYTES: usize = 64;
/// `BindingBits.READ_ONLY`.
pub const BINDING_READ_ONLY: u64 = 1 << 0;
/// `BindingBits.INDIRECT`.
pub const BINDING_INDIRECT: u64 = 1 << 1;
/// Limits IREE's HIP driver enforces when loading (native_executable.h).
pub const MAX_BINDINGS: usize = 16;
pub const MAX_CONSTANTS: u32 = 64;
/// The software HIP device's limits (software-hip's module.rs).
pub const MAX_THREADS_PER_BLOCK: u64 = 1024;
pub const MAX_SHARED_MEMORY_BYTES: u32 = 64 * 1024;

/// One exported kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Export {
    pub kernel_name: String,
    pub module_ordinal: u32,
    pub block_dims: [u32; 3],
    pub block_shared_memory_size: u32,
    pub constant_count: u32,
    /// One entry per binding (`BINDING_*` bits).
    pub binding_flags: Vec<u64>,
    /// Name recorded in the optional debug info.
    pub debug_name: Option<String>,
}

/// A whole HIP1 executable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Executable {
    /// Code object images, in module ordinal order.
    pub modules: Vec<Vec<u8>>,
    pub exports: Vec<Export>,
}

impl Executable {
    /// Checks what IREE's loader checks (non-empty images and names, module
    /// ordinals in range, block dims present, constant/binding counts) plus
    /// the software device's launch limits. Returns a description of the
    /// first problem.
    pub fn validate(&self) -> Result<(), String> {
        if self.modules.is_empty() {
            return Err("an executable needs at least one module".into());
        }
        if let Some(i) = self.modules.iter().position(|m| m.is_empty()) {
            return Err(format!("module {i} is empty"));
        }
        for (i, export) in self.exports.iter().enumerate() {
            let context = format!("export {i} ({})", export.kernel_name);
            if export.kernel_name.is_empty() || export.kernel_name.contains('\0') {
                return Err(format!(
                    "export {i}: kernel name must be non-empty and contain no NUL"
                ));
            }
            if export.module_ordinal as usize >= self.modules.len() {
                return Err(format!(
                    "{context}: module ordinal {} out of range",
                    export.module_ordinal
                ));
            }
            let threads: u64 = export.block_dims.iter().map(|&d| d as u64).product();
            if export.block_dims.contains(&0) || threads > MAX_THREADS_PER_BLOCK {
                return Err(format!(
                    "{context}: block dims {:?} invalid (1..={MAX_THREADS_PER_BLOCK} threads)",
                    export.block_dims
                ));
            }
            if export.block_shared_memory_size > MAX_SHARED_MEMORY_BYTES {
                return Err(format!(
                    "{context}: shared memory over {MAX_SHARED_MEMORY_BYTES} bytes"
                ));
            }
            if export.constant_count > MAX_CONSTANTS {
                return Err(format!("{context}: more than {MAX_CONSTANTS} constants"));
            }
            if export.binding_flags.len() > MAX_BINDINGS {
                return Err(format!("{context}: more than {MAX_BINDINGS} bindings"));
            }
            if export
                .binding_flags
                .iter()
                .any(|&f| f & !(BINDING_READ_ONLY | BINDING_INDIRECT) != 0)
            {
                return Err(format!("{context}: unknown binding flag bits"));
            }
        }
        Ok(())
    }

    /// Serialises the executable as a HIP1 flatbuffer.
    pub fn pack(&self) -> Result<Vec<u8>, String> {
        self.validate()?;
        let exports = self.exports.iter().map(export_table).collect();
        let modules = self
            .modules
            .iter()
            .map(|image| Table {
                // 16-byte aligned images: what a loader mapping ELF bytes likes.
                fields: vec![Some(Field::Offset(Object::String {
                    bytes: image.clone(),
                    data_align: 16,
                }))],
            })
            .collect();
        let root = Table {
            fields: vec![
                Some(Field::Offset(Object::VectorOfTables(exports))),
                Some(Field::Offset(Object::VectorOfTables(modules))),
            ],
        };
        Ok(finish(&root, FILE_IDENTIFIER))
    }

    /// Serialises the executable the way IREE 3.13 stores executables: the
    /// HIP1 flatbuffer behind an `iree_flatbuffer_file_header_t`.
    pub fn pack_with_file_header(&self) -> Result<Vec<u8>, String> {
        Ok(with_file_header(&self.pack()?))
    }

    /// Parses a HIP1 flatbuffer (checking bounds and alignment of every
    /// field it reads), with or without IREE 3.13's file header.
    pub fn parse(bytes: &[u8]) -> Result<Executable, ReadError> {
        let bytes = strip_file_header(bytes)?;
        let root = Reader::new(bytes).root(FILE_IDENTIFIER)?;
        let modules = root
            .vector_of_tables(1)?
            .unwrap_or_default()
            .iter()
            .map(|m| Ok(m.string(0)?.unwrap_or_default().to_vec()))
            .collect::<Result<Vec<_>, ReadError>>()?;
        let mut exports = Vec::new();
        for table in root.vector_of_tables(0)?.unwrap_or_default() {
            let dims = table
                .struct_bytes(2, 12, 4)?
                .ok_or_else(|| ReadError("export without block_dims".into()))?;
            let dim = |i: usize| u32::from_le_bytes(dims[4 * i..4 * i + 4].try_into().unwrap());
            let debug_name = match table.table(6)? {
                Some(debug) => debug
                    .string(0)?
                    .map(|s| String::from_utf8_lossy(s).into_owned()),
                None => None,
            };
            exports.push(Export {
                kernel_name: String::from_utf8_lossy(table.string(1)?.unwrap_or_default())
                    .into_owned(),
                module_ordinal: table.u32(0, 0)?,
                block_dims: [dim(0), dim(1), dim(2)],
                block_shared_memory_size: table.u32(3, 0)?,
                constant_count: table.u32(4, 0)?,
                binding_flags: table.vector_u64(5)?.unwrap_or_default(),
                debug_name,
            });
        }
        Ok(Executable { modules, exports })
    }
}

/// `flatbuffer` behind IREE 3.13's 64-byte `iree_flatbuffer_file_header_t`
/// (what IREE 3.13's `iree_hal_read_executable_flatbuffer_header` reads).
pub fn with_file_header(flatbuffer: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(FILE_HEADER_BYTES + flatbuffer.len());
    bytes.extend_from_slice(FILE_IDENTIFIER);
    bytes.extend_from_slice(&0u32.to_le_bytes()); // version
    bytes.extend_from_slice(&(flatbuffer.len() as u64).to_le_bytes());
    bytes.resize(FILE_HEADER_BYTES, 0); // reserved
    bytes.extend_from_slice(flatbuffer);
    bytes
}

/// True when `bytes` starts with IREE 3.13's file header (its magic; a bare
/// flatbuffer starts with its root offset, which is never "HIP1").
pub fn has_file_header(bytes: &[u8]) -> bool {
    bytes.starts_with(FILE_IDENTIFIER)
}

/// The flatbuffer inside `bytes`: all of it without a file header, else the
/// `content_size` bytes after the header, checked as IREE 3.13 checks them
/// (version 0, non-zero size within the file).
pub fn strip_file_header(bytes: &[u8]) -> Result<&[u8], ReadError> {
    if !has_file_header(bytes) {
        return Ok(bytes);
    }
    if bytes.len() < FILE_HEADER_BYTES {
        return Err(ReadError("file header truncated".into()));
    }
    let version = u32::from_le_bytes(bytes[4..8].try_into().unwrap());
    let size = u64::from_le_bytes(bytes[8..16].try_into().unwrap());
    if version != 0 {
        return Err(ReadError(format!("file header version {version}, expected 0")));
    }
    if size == 0 || size > (bytes.len() - FILE_HEADER_BYTES) as u64 {
        return Err(ReadError(format!(
            "file header content size {size} out of bounds ({} bytes follow it)",
            bytes.len() - FILE_HEADER_BYTES
        )));
    }
    Ok(&bytes[FILE_HEADER_BYTES..FILE_HEADER_BYTES + size as usize])
}

fn string(text: &str) -> Field {
    Field::Offset(Object::String {
        bytes: text.as_bytes().to_vec(),
        data_align: 4,
    })
}

fn export_table(export: &Export) -> Table {
    let dims: Vec<u8> = export
        .block_dims
        .iter()
        .flat_map(|d| d.to_le_bytes())
        .collect();
    let debug_info = export.debug_name.as_deref().map(|name| {
        Field::Offset(Object::Table(Table {
            fields: vec![Some(string(name))],
        }))
    });
    Table {
        fields: vec![
            Some(Field::U32(export.module_ordinal)),
            Some(string(&export.kernel_name)),
            Some(Field::Struct {
                bytes: dims,
                align: 4,
            }),
            Some(Field::U32(export.block_shared_memory_size)),
            Some(Field::U32(export.constant_count)),
            Some(Field::Offset(Object::VectorU64(
                export.binding_flags.clone(),
            ))),
            debug_info,
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Executable {
        Executable {
            modules: vec![b"\x7fELF first image\0with NULs".to_vec(), vec![0xAB; 1001]],
            exports: vec![
                Export {
                    kernel_name: "abs".into(),
                    module_ordinal: 0,
                    block_dims: [64, 1, 1],
                    block_shared_memory_size: 0,
                    constant_count: 0,
                    binding_flags: vec![BINDING_READ_ONLY, 0],
                    debug_name: Some("abs".into()),
                },
                Export {
                    kernel_name: "write_constants".into(),
                    module_ordinal: 1,
                    block_dims: [4, 4, 2],
                    block_shared_memory_size: 4096,
                    constant_count: 4,
                    binding_flags: vec![BINDING_READ_ONLY | BINDING_INDIRECT],
                    debug_name: None,
                },
                Export {
                    kernel_name: "no_bindings".into(),
                    module_ordinal: 1,
                    block_dims: [1, 1, 1],
                    block_shared_memory_size: 0,
                    constant_count: 0,
                    binding_flags: vec![],
                    debug_name: None,
                },
            ],
        }
    }

    #[test]
    fn pack_then_parse_round_trips() {
        let executable = sample();
        let bytes = executable.pack().unwrap();
        assert_eq!(&bytes[4..8], b"HIP1");
        assert_eq!(Executable::parse(&bytes).unwrap(), executable);
    }

    #[test]
    fn module_images_are_16_byte_aligned_in_the_buffer() {
        let bytes = sample().pack().unwrap();
        let root = Reader::new(&bytes).root(FILE_IDENTIFIER).unwrap();
        for module in root.vector_of_tables(1).unwrap().unwrap() {
            let image = module.string(0).unwrap().unwrap();
            assert_eq!((image.as_ptr() as usize - bytes.as_ptr() as usize) % 16, 0);
        }
    }

    #[test]
    fn validation_mirrors_the_loaders_checks() {
        let mut bad = sample();
        bad.exports[1].module_ordinal = 2;
        assert!(bad.pack().unwrap_err().contains("module ordinal"));
        let mut bad = sample();
        bad.exports[0].kernel_name.clear();
        assert!(bad.pack().is_err());
        let mut bad = sample();
        bad.exports[0].constant_count = 65;
        assert!(bad.pack().is_err());
        let mut bad = sample();
        bad.exports[0].binding_flags = vec![0; 17];
        assert!(bad.pack().is_err());
        let mut bad = sample();
        bad.exports[0].block_dims = [1024, 2, 1];
        assert!(bad.pack().is_err());
        let mut bad = sample();
        bad.modules[1].clear();
        assert!(bad.pack().is_err());
        let mut bad = sample();
        bad.exports[0].binding_flags[0] = 4;
        assert!(bad.pack().is_err());
    }

    #[test]
    fn parse_rejects_other_identifiers_and_garbage() {
        let mut bytes = sample().pack().unwrap();
        assert!(Executable::parse(&bytes[..bytes.len() / 2]).is_err());
        bytes[4..8].copy_from_slice(b"HIP2");
        assert!(Executable::parse(&bytes).is_err());
        assert!(Executable::parse(&[0u8; 3]).is_err());
    }
}
