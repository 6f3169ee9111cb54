//! Writes copies of `libamdhip64.so` in which chosen exported symbols cannot be found.
//!
//! An ELF export table is fixed at link time, so "missing symbol" scenarios are produced by
//! rewriting a copy: each named symbol's string in `.dynstr` gets its first byte replaced by
//! '?', keeping every length and offset. The dynamic loader still finds the hash entry but
//! the name comparison fails, so `dlsym` reports the symbol missing.
//!
//! Driven by `SOFTWARE_HIP_HIDE_SYMBOLS=name1,name2` via [`names_from_env`] and the
//! `softhip-hide-symbols` binary.

use std::path::Path;

/// The environment variable listing symbols to hide.
pub const HIDE_SYMBOLS_ENV: &str = "SOFTWARE_HIP_HIDE_SYMBOLS";

const SHT_DYNSYM: u32 = 11;
const SECTION_HEADER_SIZE: usize = 64;
const SYMBOL_SIZE: usize = 24;
const HIDDEN_MARKER: u8 = b'?';

/// Names listed in `SOFTWARE_HIP_HIDE_SYMBOLS` (comma separated; empty when unset).
pub fn names_from_env() -> Vec<String> {
    std::env::var(HIDE_SYMBOLS_ENV)
        .map(|value| value.split(',').map(str::trim).filter(|n| !n.is_empty()).map(String::from).collect())
        .unwrap_or_default()
}

fn read_u16(bytes: &[u8], at: usize) -> Result<u16, String> {
    bytes.get(at..at + 2).map(|b| u16::from_le_bytes([b[0], b[1]])).ok_or_else(|| "truncated ELF file".to_string())
}

fn read_u32(bytes: &[u8], at: usize) -> Result<u32, String> {
    bytes
        .get(at..at + 4)
        .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
        .ok_or_else(|| "truncated ELF file".to_string())
}

fn read_u64(bytes: &[u8], at: usize) -> Result<u64, String> {
    bytes
        .get(at..at + 8)
        .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
        .ok_or_else(|| "truncated ELF file".to_string())
}

struct Section {
    kind: u32,
    offset: usize,
    size: usize,
    link: usize,
}

fn sections(elf: &[u8]) -> Result<Vec<Section>, String> {
    if elf.get(..4) != Some(b"\x7fELF") || elf.get(4) != Some(&2) || elf.get(5) != Some(&1) {
        return Err("not a 64-bit little-endian ELF file".into());
    }
    let table = read_u64(elf, 0x28)? as usize;
    let entry_size = read_u16(elf, 0x3A)? as usize;
    let count = read_u16(elf, 0x3C)? as usize;
    if entry_size != SECTION_HEADER_SIZE {
        return Err("unexpected ELF section header size".into());
    }
    (0..count)
        .map(|index| {
            let at = table + index * SECTION_HEADER_SIZE;
            Ok(Section {
                kind: read_u32(elf, at + 4)?,
                offset: read_u64(elf, at + 24)? as usize,
                size: read_u64(elf, at + 32)? as usize,
                link: read_u32(elf, at + 40)? as usize,
            })
        })
        .collect()
}

fn c_string_at(table: &[u8], offset: usize) -> &[u8] {
    let rest = table.get(offset..).unwrap_or(&[]);
    let end = rest.iter().position(|byte| *byte == 0).unwrap_or(rest.len());
    &rest[..end]
}

/// Returns a copy of the ELF image `library` with `names` hidden from its dynamic symbol
/// table. Every name must be a defined export; otherwise nothing is written.
pub fn hide_symbols(library: &[u8], names: &[impl AsRef<str>]) -> Result<Vec<u8>, String> {
    let mut elf = library.to_vec();
    let sections = sections(&elf)?;
    let dynsym = sections.iter().find(|s| s.kind == SHT_DYNSYM).ok_or("no .dynsym section")?;
    let dynstr = sections.get(dynsym.link).ok_or("bad .dynsym link")?;
    let strings_range = dynstr.offset..dynstr.offset + dynstr.size;
    let strings = elf.get(strings_range.clone()).ok_or("truncated .dynstr")?.to_vec();

    // (name offset, defined?) of every dynamic symbol.
    let symbols: Vec<(usize, bool)> = (0..dynsym.size / SYMBOL_SIZE)
        .map(|index| {
            let at = dynsym.offset + index * SYMBOL_SIZE;
            Ok((read_u32(&elf, at)? as usize, read_u16(&elf, at + 6)? != 0))
        })
        .collect::<Result<_, String>>()?;

    for name in names {
        let name = name.as_ref();
        let target = symbols
            .iter()
            .find(|(offset, defined)| *defined && c_string_at(&strings, *offset) == name.as_bytes())
            .map(|(offset, _)| *offset)
            .ok_or_else(|| format!("'{name}' is not exported by this library"))?;
        // A linker may store a name as the tail of a longer one; editing the shared byte
        // would rename that other symbol too, so refuse.
        let shared = symbols.iter().any(|(offset, _)| {
            *offset < target && *offset + c_string_at(&strings, *offset).len() >= target
        });
        if shared {
            return Err(format!("'{name}' shares its string with another symbol"));
        }
        elf[dynstr.offset + target] = HIDDEN_MARKER;
    }
    Ok(elf)
}

/// Reads `input`, hides `names`, writes `output` (a full copy of the library).
pub fn write_copy_with_hidden_symbols(input: &Path, output: &Path, names: &[impl AsRef<str>]) -> Result<(), String> {
    let library = std::fs::read(input).map_err(|e| format!("cannot read {}: {e}", input.display()))?;
    let edited = hide_symbols(&library, names)?;
    std::fs::write(output, edited).map_err(|e| format!("cannot write {}: {e}", output.display()))
}
