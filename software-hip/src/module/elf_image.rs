//! Recognises this device's code objects (x86-64 ELF shared objects) behind a
//! bare pointer and copies exactly the image's bytes into an `ImageFile`.
//!
//! `hipModuleLoadData` passes no size, so the size is derived from the ELF
//! headers: the end of the furthest program header segment, section or header
//! table. Reads are staged: the 16-byte identification first, then the rest of
//! the 64-byte header, then the header tables, then the rest. Every read of
//! the caller's memory goes through `ImageFile::append_from`, which reports
//! unreadable memory as an error instead of faulting.

use super::image_file::ImageFile;

const EHDR_SIZE: usize = 64;
const PHDR_SIZE: usize = 56;
const SHDR_SIZE: usize = 64;

const ELFCLASS64: u8 = 2;
const ELFDATA2LSB: u8 = 1;
const EV_CURRENT: u8 = 1;
const ET_DYN: u16 = 3;
const EM_X86_64: u16 = 62;
const PT_LOAD: u32 = 1;
const PT_DYNAMIC: u32 = 2;
const SHT_NOBITS: u32 = 8;
/// Section counts at or above this use ELF's extended numbering, which real
/// kernel libraries never need; rejected to keep the parser small.
const SHN_LORESERVE: u16 = 0xff00;
const PN_XNUM: u16 = 0xffff;

/// Largest code object accepted: bounds how much memory a bogus header can
/// make us copy.
pub const MAX_IMAGE_BYTES: usize = 256 << 20;

/// Why an image was rejected (all map to `hipErrorInvalidImage`; the reason is
/// kept for tests and diagnostics).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageError {
    /// The memory behind the pointer is not readable for as long as the
    /// headers say the image is.
    Unreadable,
    NotElf,
    /// An ELF file, but not for this device (e.g. an AMDGPU code object).
    WrongTarget {
        machine: u16,
        class: u8,
        data: u8,
        elf_type: u16,
    },
    MalformedHeader(&'static str),
    TooLarge,
    /// The headers describe more bytes than the caller said it has.
    Truncated,
    /// The memfd could not be created or written for reasons other than the
    /// source memory.
    Io,
}

fn u16_at(bytes: &[u8], offset: usize) -> u16 {
    u16::from_le_bytes([bytes[offset], bytes[offset + 1]])
}
fn u32_at(bytes: &[u8], offset: usize) -> u32 {
    u32::from_le_bytes(bytes[offset..offset + 4].try_into().expect("4 bytes"))
}
fn u64_at(bytes: &[u8], offset: usize) -> u64 {
    u64::from_le_bytes(bytes[offset..offset + 8].try_into().expect("8 bytes"))
}

/// `offset + count * entry` as a usize no larger than `MAX_IMAGE_BYTES`.
fn table_end(offset: u64, count: u64, entry: u64) -> Result<usize, ImageError> {
    count
        .checked_mul(entry)
        .and_then(|bytes| bytes.checked_add(offset))
        .filter(|&end| end <= MAX_IMAGE_BYTES as u64)
        .map(|end| end as usize)
        .ok_or(ImageError::TooLarge)
}

/// Copies more of the source so that `file` holds its first `end` bytes,
/// never reading at or past `available`.
///
/// # Safety
/// See `ImageFile::append_from`.
unsafe fn copy_until(
    file: &mut ImageFile,
    source: *const u8,
    available: usize,
    end: usize,
) -> Result<(), ImageError> {
    if end > available {
        return Err(ImageError::Truncated);
    }
    let have = file.len();
    if end <= have {
        return Ok(());
    }
    // SAFETY: forwarded contract; unreadable memory is reported, not touched.
    unsafe { file.append_from(source.wrapping_add(have), end - have) }.map_err(|err| {
        if err.raw_os_error() == Some(libc::EFAULT) {
            ImageError::Unreadable
        } else {
            ImageError::Io
        }
    })
}

/// The fields of the ELF header this loader relies on.
struct ElfHeader {
    phoff: u64,
    phnum: u16,
    shoff: u64,
    shnum: u16,
}

fn parse_identification(ident: &[u8]) -> Result<(), ImageError> {
    if &ident[0..4] != b"\x7fELF" {
        return Err(ImageError::NotElf);
    }
    Ok(())
}

fn parse_header(header: &[u8]) -> Result<ElfHeader, ImageError> {
    let (class, data, version) = (header[4], header[5], header[6]);
    let elf_type = u16_at(header, 16);
    let machine = u16_at(header, 18);
    if class != ELFCLASS64 || data != ELFDATA2LSB || elf_type != ET_DYN || machine != EM_X86_64 {
        return Err(ImageError::WrongTarget {
            machine,
            class,
            data,
            elf_type,
        });
    }
    if version != EV_CURRENT || u32_at(header, 20) != EV_CURRENT as u32 {
        return Err(ImageError::MalformedHeader("unknown ELF version"));
    }
    let phoff = u64_at(header, 32);
    let shoff = u64_at(header, 40);
    let ehsize = u16_at(header, 52);
    let phentsize = u16_at(header, 54);
    let phnum = u16_at(header, 56);
    let shentsize = u16_at(header, 58);
    let shnum = u16_at(header, 60);
    let shstrndx = u16_at(header, 62);
    if ehsize as usize != EHDR_SIZE {
        return Err(ImageError::MalformedHeader("e_ehsize"));
    }
    if phnum == 0 || phnum == PN_XNUM || phentsize as usize != PHDR_SIZE {
        return Err(ImageError::MalformedHeader("program header table"));
    }
    if phoff < EHDR_SIZE as u64 || !phoff.is_multiple_of(8) {
        return Err(ImageError::MalformedHeader("e_phoff"));
    }
    if shnum != 0
        && (shnum >= SHN_LORESERVE
            || shentsize as usize != SHDR_SIZE
            || shoff < EHDR_SIZE as u64
            || !shoff.is_multiple_of(8)
            || shstrndx >= shnum)
    {
        return Err(ImageError::MalformedHeader("section header table"));
    }
    Ok(ElfHeader {
        phoff,
        phnum,
        shoff,
        shnum,
    })
}

/// Validates the code object at `source` and copies all of its bytes into
/// `file`. Returns the image size. `available` is how many bytes the caller
/// knows to be there (`usize::MAX` when only a pointer is known).
///
/// # Safety
/// `source` may point anywhere (unreadable memory is detected), but memory it
/// points to must not change while this runs.
pub unsafe fn copy_code_object(
    source: *const u8,
    available: usize,
    file: &mut ImageFile,
) -> Result<usize, ImageError> {
    if source.is_null() {
        return Err(ImageError::Unreadable);
    }
    // SAFETY (all copy_until calls): forwarded contract.
    unsafe { copy_until(file, source, available, 4) }?;
    parse_identification(&file.read_at(0, 4).map_err(|_| ImageError::Io)?)?;
    unsafe { copy_until(file, source, available, EHDR_SIZE) }?;
    let header = parse_header(&file.read_at(0, EHDR_SIZE).map_err(|_| ImageError::Io)?)?;

    let program_headers_end = table_end(header.phoff, header.phnum as u64, PHDR_SIZE as u64)?;
    let section_headers_end = if header.shnum == 0 {
        0
    } else {
        table_end(header.shoff, header.shnum as u64, SHDR_SIZE as u64)?
    };
    let mut image_end = program_headers_end.max(section_headers_end);
    unsafe { copy_until(file, source, available, image_end) }?;

    let program_headers = file
        .read_at(
            header.phoff as usize,
            program_headers_end - header.phoff as usize,
        )
        .map_err(|_| ImageError::Io)?;
    let (mut has_load, mut has_dynamic) = (false, false);
    for entry in program_headers.chunks_exact(PHDR_SIZE) {
        let kind = u32_at(entry, 0);
        has_load |= kind == PT_LOAD;
        has_dynamic |= kind == PT_DYNAMIC;
        let end = table_end(u64_at(entry, 8), u64_at(entry, 32), 1)?;
        image_end = image_end.max(end);
    }
    if !has_load || !has_dynamic {
        return Err(ImageError::MalformedHeader("not a dynamic shared object"));
    }

    if header.shnum != 0 {
        let section_headers = file
            .read_at(
                header.shoff as usize,
                section_headers_end - header.shoff as usize,
            )
            .map_err(|_| ImageError::Io)?;
        for entry in section_headers.chunks_exact(SHDR_SIZE) {
            if u32_at(entry, 4) == SHT_NOBITS {
                continue;
            }
            let end = table_end(u64_at(entry, 24), u64_at(entry, 32), 1)?;
            image_end = image_end.max(end);
        }
    }
    unsafe { copy_until(file, source, available, image_end) }?;
    Ok(image_end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header_with(machine: u16) -> Vec<u8> {
        let mut h = vec![0u8; EHDR_SIZE];
        h[0..4].copy_from_slice(b"\x7fELF");
        h[4] = ELFCLASS64;
        h[5] = ELFDATA2LSB;
        h[6] = EV_CURRENT;
        h[16..18].copy_from_slice(&ET_DYN.to_le_bytes());
        h[18..20].copy_from_slice(&machine.to_le_bytes());
        h[20..24].copy_from_slice(&1u32.to_le_bytes());
        h[32..40].copy_from_slice(&64u64.to_le_bytes());
        h[52..54].copy_from_slice(&64u16.to_le_bytes());
        h[54..56].copy_from_slice(&56u16.to_le_bytes());
        h[56..58].copy_from_slice(&1u16.to_le_bytes());
        h
    }

    #[test]
    fn header_parser_rejects_other_machines_and_bad_tables() {
        assert!(parse_header(&header_with(EM_X86_64)).is_ok());
        assert!(matches!(
            parse_header(&header_with(224)),
            Err(ImageError::WrongTarget { machine: 224, .. })
        ));
        let mut bad_phentsize = header_with(EM_X86_64);
        bad_phentsize[54] = 32;
        assert_eq!(
            parse_header(&bad_phentsize).err(),
            Some(ImageError::MalformedHeader("program header table"))
        );
        let mut bad_shstrndx = header_with(EM_X86_64);
        bad_shstrndx[40..48].copy_from_slice(&4096u64.to_le_bytes());
        bad_shstrndx[58..60].copy_from_slice(&64u16.to_le_bytes());
        bad_shstrndx[60..62].copy_from_slice(&3u16.to_le_bytes());
        bad_shstrndx[62..64].copy_from_slice(&3u16.to_le_bytes());
        assert_eq!(
            parse_header(&bad_shstrndx).err(),
            Some(ImageError::MalformedHeader("section header table"))
        );
    }

    #[test]
    fn table_end_is_bounded() {
        assert_eq!(table_end(64, 2, 56), Ok(176));
        assert_eq!(table_end(u64::MAX, 1, 1), Err(ImageError::TooLarge));
        assert_eq!(table_end(0, u64::MAX, 56), Err(ImageError::TooLarge));
        assert_eq!(
            table_end(MAX_IMAGE_BYTES as u64, 1, 1),
            Err(ImageError::TooLarge)
        );
    }
}
