//! Checks that a code object is one the software HIP device can load and
//! that it defines each exported kernel with the expected parameter count.
//!
//! Reads the ELF file directly: the dynamic symbol table gives the address of
//! `softhip_kernel__<name>` (the descriptor defined by SOFTHIP_KERNEL() in
//! software_hip_kernel.h), and the section holding that address gives the
//! descriptor's bytes on disk. Only its plain integer fields (magic, ABI
//! version, granularity, parameter count) are read; its pointers are
//! relocated at load time and meaningless in the file.

/// Descriptor symbol prefix (`SOFTHIP_KERNEL_SYMBOL_PREFIX`).
pub const KERNEL_SYMBOL_PREFIX: &str = "softhip_kernel__";
/// `SOFTHIP_KERNEL_MAGIC`.
pub const KERNEL_MAGIC: u32 = 0x314B_4853;
/// `SOFTHIP_KERNEL_ABI_VERSION`: version 2 (48-byte descriptors, SIMT
/// fields); version-1 descriptors (32 bytes) are accepted too.
pub const KERNEL_ABI_VERSION: u32 = 2;

const SHT_DYNSYM: u32 = 11;
const SHT_NOBITS: u32 = 8;
const EM_X86_64: u16 = 62;
const ET_DYN: u16 = 3;

/// The integer fields of a kernel descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelInfo {
    pub granularity: u32,
    pub param_count: u32,
}

fn slice(bytes: &[u8], offset: u64, len: u64) -> Result<&[u8], String> {
    let start = usize::try_from(offset).map_err(|_| "offset too large")?;
    let len = usize::try_from(len).map_err(|_| "length too large")?;
    start
        .checked_add(len)
        .filter(|&end| end <= bytes.len())
        .map(|end| &bytes[start..end])
        .ok_or_else(|| {
            format!(
                "ELF data at {offset}+{len} lies beyond the file ({} bytes)",
                bytes.len()
            )
        })
}
fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

struct Section {
    kind: u32,
    address: u64,
    offset: u64,
    size: u64,
    link: u32,
    entry_size: u64,
}

/// Parsed view of a software HIP code object.
pub struct CodeObject<'a> {
    bytes: &'a [u8],
    sections: Vec<Section>,
}

impl<'a> CodeObject<'a> {
    /// Accepts only little-endian 64-bit x86-64 shared objects with section
    /// headers.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, String> {
        let header = slice(bytes, 0, 64).map_err(|_| "not an ELF file (too short)".to_string())?;
        if &header[0..4] != b"\x7fELF" {
            return Err("not an ELF file".into());
        }
        let machine = u16_at(header, 18);
        if header[4] != 2 || header[5] != 1 || u16_at(header, 16) != ET_DYN || machine != EM_X86_64
        {
            return Err(format!(
                "not an x86-64 little-endian 64-bit shared object (e_machine {machine}{})",
                if machine == 224 {
                    ", an AMDGPU code object"
                } else {
                    ""
                }
            ));
        }
        let (shoff, shentsize, shnum) =
            (u64_at(header, 40), u16_at(header, 58), u16_at(header, 60));
        if shnum == 0 || shentsize != 64 {
            return Err("no usable section headers".into());
        }
        let table = slice(bytes, shoff, shnum as u64 * 64)?;
        let sections = table
            .chunks_exact(64)
            .map(|s| Section {
                kind: u32_at(s, 4),
                address: u64_at(s, 16),
                offset: u64_at(s, 24),
                size: u64_at(s, 32),
                link: u32_at(s, 40),
                entry_size: u64_at(s, 56),
            })
            .collect();
        Ok(CodeObject { bytes, sections })
    }

    /// Value and size of dynamic symbol `name`, if defined.
    fn dynamic_symbol(&self, name: &str) -> Result<Option<(u64, u64)>, String> {
        let Some(dynsym) = self.sections.iter().find(|s| s.kind == SHT_DYNSYM) else {
            return Err("no dynamic symbol table".into());
        };
        let strings = self
            .sections
            .get(dynsym.link as usize)
            .ok_or("bad dynsym string table link")?;
        let strings = slice(self.bytes, strings.offset, strings.size)?;
        if dynsym.entry_size != 24 {
            return Err("unexpected symbol entry size".into());
        }
        for symbol in slice(self.bytes, dynsym.offset, dynsym.size)?.chunks_exact(24) {
            let name_offset = u32_at(symbol, 0) as usize;
            let section_index = u16_at(symbol, 6);
            if section_index == 0 || name_offset >= strings.len() {
                continue; // undefined or malformed
            }
            let symbol_name = strings[name_offset..]
                .split(|&b| b == 0)
                .next()
                .unwrap_or_default();
            if symbol_name == name.as_bytes() {
                return Ok(Some((u64_at(symbol, 8), u64_at(symbol, 16))));
            }
        }
        Ok(None)
    }

    /// File bytes backing `len` bytes at virtual address `address`.
    fn bytes_at_address(&self, address: u64, len: u64) -> Result<&'a [u8], String> {
        let section = self
            .sections
            .iter()
            .find(|s| {
                s.kind != SHT_NOBITS && s.address <= address && address + len <= s.address + s.size
            })
            .ok_or_else(|| format!("address {address:#x} is not backed by file data"))?;
        slice(
            self.bytes,
            section.offset + (address - section.address),
            len,
        )
    }

    /// The descriptor of kernel `name`, checked for magic and ABI version.
    pub fn kernel(&self, name: &str) -> Result<KernelInfo, String> {
        let symbol = format!("{KERNEL_SYMBOL_PREFIX}{name}");
        let (address, size) = self
            .dynamic_symbol(&symbol)?
            .ok_or_else(|| format!("kernel `{name}` not found (no exported symbol `{symbol}`)"))?;
        if size < 32 {
            return Err(format!(
                "`{symbol}` is not a kernel descriptor ({size} bytes)"
            ));
        }
        let descriptor = self.bytes_at_address(address, 16)?;
        if u32_at(descriptor, 0) != KERNEL_MAGIC {
            return Err(format!("`{symbol}` is not a kernel descriptor (bad magic)"));
        }
        let version = u32_at(descriptor, 4);
        if version != KERNEL_ABI_VERSION && version != 1 {
            return Err(format!(
                "kernel `{name}` uses ABI version {version}, expected 1 or {KERNEL_ABI_VERSION}"
            ));
        }
        if version == KERNEL_ABI_VERSION && size < 48 {
            return Err(format!(
                "`{symbol}` is not a version-2 kernel descriptor ({size} bytes)"
            ));
        }
        Ok(KernelInfo {
            granularity: u32_at(descriptor, 8),
            param_count: u32_at(descriptor, 12),
        })
    }
}
