//! Packs software HIP code objects into IREE's HIP executable format (HIP1)
//! and reads such files back.
//!
//! - `hip1`: the HIP1 schema as Rust values, `pack` and `parse`.
//! - `flatbuffer`: the small hand-written FlatBuffers writer/reader behind it.
//! - `code_object`: checks that a code object defines the exported kernels.

pub mod code_object;
pub mod flatbuffer;
pub mod hip1;

pub use hip1::{
    has_file_header, strip_file_header, with_file_header, Executable, Export, BINDING_INDIRECT,
    BINDING_READ_ONLY, FILE_HEADER_BYTES,
};

/// Checks every export against its module: the kernel's descriptor exists
/// and declares one parameter per binding plus one per push constant (the
/// way IREE's HIP command buffers pass arguments).
pub fn check_kernels(executable: &Executable) -> Result<(), String> {
    let mut modules = Vec::with_capacity(executable.modules.len());
    for (i, image) in executable.modules.iter().enumerate() {
        modules
            .push(code_object::CodeObject::parse(image).map_err(|e| format!("module {i}: {e}"))?);
    }
    for export in &executable.exports {
        let module = modules.get(export.module_ordinal as usize).ok_or_else(|| {
            format!(
                "export `{}`: module ordinal out of range",
                export.kernel_name
            )
        })?;
        let kernel = module.kernel(&export.kernel_name)?;
        let expected = export.binding_flags.len() as u64 + export.constant_count as u64;
        if kernel.param_count as u64 != expected {
            return Err(format!(
                "kernel `{}` declares {} parameters but the export has {} bindings + {} constants",
                export.kernel_name,
                kernel.param_count,
                export.binding_flags.len(),
                export.constant_count
            ));
        }
    }
    Ok(())
}
