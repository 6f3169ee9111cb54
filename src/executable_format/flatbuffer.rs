//! A defensive FlatBuffers verifier and reader, just enough for the HIP1 schema.
//!
//! Every read is bounds-checked against the buffer and every offset, vtable, field,
//! string and vector is checked by the rules flatcc's verifier applies (the verifier
//! IREE's C driver runs), so a buffer that verifier accepts is accepted here:
//!
//! - offsets are non-zero and land inside the buffer on a 4-byte boundary;
//! - a table's vtable lies inside the buffer, is 2-byte aligned, has an even size of at
//!   least 4 bytes, and the table's inline size fits in the buffer; a present field lies
//!   inside the table's inline size and is aligned to its own size;
//! - a string's bytes and its NUL terminator lie inside the buffer;
//! - a vector's length times its element size cannot overflow and fits in the buffer, and
//!   element 0 is aligned to the element alignment (at least 4).
//!
//! Alignment is measured from the start of the buffer (flatcc measures the address of a
//! buffer it requires to be 4-byte aligned; the two agree for such buffers).
//!
//! Offsets may point anywhere, backwards included, so a hostile buffer can make many slots
//! refer to one shared table or vector. The walk itself follows the schema (which has no
//! recursive types), so it always terminates; to keep its cost linear in the buffer size,
//! the verifier hands out a budget of object visits (`Verifier::new`).

use core::fmt;

/// Size of the header every buffer starts with: root offset and file identifier.
pub const HEADER_SIZE: usize = 8;

/// flatcc refuses buffers this large or larger (no offset may overflow 32 bits).
pub const MAX_BUFFER_SIZE: usize = u32::MAX as usize - 8;

/// Where in the schema a problem is: a chain like `export 3 debug_info location`.
#[derive(Clone, Copy)]
pub struct Path<'p> {
    parent: Option<&'p Path<'p>>,
    segment: Segment,
}

#[derive(Clone, Copy)]
enum Segment {
    Root,
    Field(&'static str),
    Element(&'static str, usize),
}

impl<'p> Path<'p> {
    /// The root table.
    pub const ROOT: Path<'static> = Path {
        parent: None,
        segment: Segment::Root,
    };

    /// A named field below this path.
    pub fn field(&'p self, name: &'static str) -> Path<'p> {
        Path {
            parent: Some(self),
            segment: Segment::Field(name),
        }
    }

    /// Element `index` of a vector below this path, printed as `name index`.
    pub fn element(&'p self, name: &'static str, index: usize) -> Path<'p> {
        Path {
            parent: Some(self),
            segment: Segment::Element(name, index),
        }
    }
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // An element replaces the vector field that led to it: `export 3 kernel_name`
        // rather than `exports export 3 kernel_name`. The root prints nothing.
        let mut segments: Vec<Segment> = Vec::new();
        let mut node = Some(self);
        while let Some(path) = node {
            segments.push(path.segment);
            if matches!(path.segment, Segment::Element(..)) {
                // Elements carry their own name; drop the vector field that led here.
                node = path.parent.and_then(|p| p.parent);
            } else {
                node = path.parent;
            }
        }
        let mut first = true;
        for segment in segments.iter().rev() {
            let text = match segment {
                Segment::Root => continue,
                Segment::Field(name) => (*name).to_string(),
                Segment::Element(name, index) => format!("{name} {index}"),
            };
            if !first {
                f.write_str(" ")?;
            }
            f.write_str(&text)?;
            first = false;
        }
        Ok(())
    }
}

/// A structural problem, already phrased with its location.
#[derive(Debug)]
pub struct FormatError(pub String);

pub type FbResult<T> = Result<T, FormatError>;

/// A failure at `path`: `export 3 kernel_name: message`, or just the message at the root.
pub fn fail<T>(path: &Path<'_>, message: fmt::Arguments<'_>) -> FbResult<T> {
    let place = path.to_string();
    if place.is_empty() {
        Err(FormatError(message.to_string()))
    } else {
        Err(FormatError(format!("{place}: {message}")))
    }
}

/// The buffer under verification and the remaining visit budget.
pub struct Verifier<'a> {
    buf: &'a [u8],
    visits_left: usize,
    visit_limit: usize,
}

/// A verified table: its position, vtable position and sizes.
#[derive(Clone, Copy)]
pub struct Table {
    pos: usize,
    vtable: usize,
    vtable_size: usize,
    table_size: usize,
}

/// A verified vector of offsets to tables: `count` slots starting at `first_slot`.
#[derive(Clone, Copy)]
pub struct TableVector {
    first_slot: usize,
    pub count: usize,
}

impl TableVector {
    /// Position of slot `index` (the caller keeps `index < count`).
    pub fn slot(&self, index: usize) -> usize {
        self.first_slot + 4 * index
    }
}

impl<'a> Verifier<'a> {
    /// A verifier over `buf`. Without shared subobjects every object is reached through
    /// its own 4-byte offset slot, so a buffer of N bytes holds at most N/4 + 1 objects;
    /// more visits than that (plus slack) mean shared tables or vectors are multiplying the
    /// work, which no producer needs and which would otherwise grow quadratically.
    pub fn new(buf: &'a [u8]) -> Self {
        let visit_limit = buf.len() / 4 + 64;
        Verifier {
            buf,
            visits_left: visit_limit,
            visit_limit,
        }
    }

    fn bytes(&self, pos: usize, len: usize) -> Option<&'a [u8]> {
        self.buf.get(pos..pos.checked_add(len)?)
    }

    fn u16_at(&self, pos: usize) -> Option<u16> {
        Some(u16::from_le_bytes(self.bytes(pos, 2)?.try_into().ok()?))
    }

    fn u32_at(&self, pos: usize) -> Option<u32> {
        Some(u32::from_le_bytes(self.bytes(pos, 4)?.try_into().ok()?))
    }

    fn visit(&mut self, path: &Path<'_>) -> FbResult<()> {
        if self.visits_left == 0 {
            return fail(
                path,
                format_args!(
                    "the {}-byte buffer refers to more than {} objects (shared tables or \
                     vectors are multiplying the work)",
                    self.buf.len(),
                    self.visit_limit
                ),
            );
        }
        self.visits_left -= 1;
        Ok(())
    }

    /// Checks the header (size, identifier) and returns the verified root table.
    pub fn root(&mut self, identifier: &[u8; 4]) -> FbResult<Table> {
        let path = Path::ROOT;
        if self.buf.len() < HEADER_SIZE {
            return fail(
                &path,
                format_args!(
                    "data is {} bytes, shorter than the {HEADER_SIZE}-byte flatbuffer header",
                    self.buf.len()
                ),
            );
        }
        if self.buf.len() > MAX_BUFFER_SIZE {
            return fail(
                &path,
                format_args!(
                    "data is {} bytes, over the flatbuffer limit",
                    self.buf.len()
                ),
            );
        }
        let found = &self.buf[4..8];
        if found != identifier {
            return fail(
                &path,
                format_args!(
                    "file identifier is {:?}, expected {:?}",
                    String::from_utf8_lossy(found),
                    String::from_utf8_lossy(identifier)
                ),
            );
        }
        self.table_at(0, &path)
    }

    /// Follows the offset stored at `slot` to an object header: non-zero, in the buffer
    /// with room for a 4-byte header, and aligned to `align` (at least 4) where the object's
    /// data starts right after that header (vectors) or at it (tables, strings).
    fn follow(
        &self,
        slot: usize,
        data_align: usize,
        what: &str,
        path: &Path<'_>,
    ) -> FbResult<usize> {
        let Some(relative) = self.u32_at(slot) else {
            return fail(
                path,
                format_args!("offset slot at byte {slot} is outside the buffer"),
            );
        };
        if relative == 0 {
            return fail(path, format_args!("null {what} offset at byte {slot}"));
        }
        let target = slot as u64 + relative as u64;
        if target + 4 > self.buf.len() as u64 {
            return fail(
                path,
                format_args!(
                    "{what} offset at byte {slot} points to byte {target}, outside the \
                     {}-byte buffer",
                    self.buf.len()
                ),
            );
        }
        let target = target as usize;
        if !target.is_multiple_of(4) || !(target + 4).is_multiple_of(data_align) {
            return fail(path, format_args!("{what} at byte {target} is misaligned"));
        }
        Ok(target)
    }

    /// Verifies the table whose offset is stored at `slot`.
    pub fn table_at(&mut self, slot: usize, path: &Path<'_>) -> FbResult<Table> {
        self.visit(path)?;
        let pos = self.follow(slot, 4, "table", path)?;
        let Some(back) = self.u32_at(pos) else {
            return fail(
                path,
                format_args!("table at byte {pos} is outside the buffer"),
            );
        };
        let vtable = pos as i64 - back as i32 as i64;
        if vtable < 0 || vtable + 4 > self.buf.len() as i64 {
            return fail(
                path,
                format_args!(
                    "vtable of the table at byte {pos} would be at byte {vtable}, outside the \
                     {}-byte buffer",
                    self.buf.len()
                ),
            );
        }
        let vtable = vtable as usize;
        if !vtable.is_multiple_of(2) {
            return fail(path, format_args!("vtable at byte {vtable} is misaligned"));
        }
        let (Some(vtable_size), Some(table_size)) = (self.u16_at(vtable), self.u16_at(vtable + 2))
        else {
            return fail(
                path,
                format_args!("vtable at byte {vtable} is outside the buffer"),
            );
        };
        let (vtable_size, table_size) = (vtable_size as usize, table_size as usize);
        if vtable_size < 4
            || !vtable_size.is_multiple_of(2)
            || vtable + vtable_size > self.buf.len()
        {
            return fail(
                path,
                format_args!(
                    "vtable at byte {vtable} has invalid size {vtable_size} (even, at least 4, \
                     inside the {}-byte buffer)",
                    self.buf.len()
                ),
            );
        }
        if pos + table_size > self.buf.len() {
            return fail(
                path,
                format_args!(
                    "table at byte {pos} of {table_size} bytes runs past the end of the \
                     {}-byte buffer",
                    self.buf.len()
                ),
            );
        }
        Ok(Table {
            pos,
            vtable,
            vtable_size,
            table_size,
        })
    }

    /// Position of field `id` of `table` if present, checked to lie inside the table and to
    /// be aligned to `align`.
    fn field(
        &self,
        table: &Table,
        id: usize,
        size: usize,
        align: usize,
        path: &Path<'_>,
    ) -> FbResult<Option<usize>> {
        let entry = 4 + 2 * id;
        if entry >= table.vtable_size {
            return Ok(None);
        }
        // The vtable was checked to lie inside the buffer, so this read succeeds.
        let offset = self.u16_at(table.vtable + entry).unwrap_or(0) as usize;
        if offset == 0 {
            return Ok(None);
        }
        if offset + size > table.table_size {
            return fail(
                path,
                format_args!(
                    "field at offset {offset} of the table at byte {} runs past the table's \
                     {} bytes",
                    table.pos, table.table_size
                ),
            );
        }
        let at = table.pos + offset;
        if !at.is_multiple_of(align) {
            return fail(path, format_args!("field at byte {at} is misaligned"));
        }
        Ok(Some(at))
    }

    /// A scalar `u32` field, or `default` when absent.
    pub fn u32_field(
        &self,
        table: &Table,
        id: usize,
        default: u32,
        path: &Path<'_>,
    ) -> FbResult<u32> {
        match self.field(table, id, 4, 4, path)? {
            Some(at) => Ok(self.u32_at(at).unwrap_or(default)),
            None => Ok(default),
        }
    }

    /// The raw bytes of an inline struct field, if present.
    pub fn struct_field(
        &self,
        table: &Table,
        id: usize,
        size: usize,
        align: usize,
        path: &Path<'_>,
    ) -> FbResult<Option<&'a [u8]>> {
        match self.field(table, id, size, align, path)? {
            Some(at) => Ok(self.bytes(at, size)),
            None => Ok(None),
        }
    }

    /// A string field: its bytes without the terminator, which is checked to be NUL.
    /// Also returns the string's position, which identifies shared strings.
    pub fn string_field(
        &mut self,
        table: &Table,
        id: usize,
        path: &Path<'_>,
    ) -> FbResult<Option<(usize, &'a [u8])>> {
        let Some(slot) = self.field(table, id, 4, 4, path)? else {
            return Ok(None);
        };
        self.visit(path)?;
        let pos = self.follow(slot, 4, "string", path)?;
        let len = self.u32_at(pos).unwrap_or(0) as usize;
        let start = pos + 4;
        // The length plus the terminator must fit: `end - start > len`.
        if self.buf.len() - start <= len {
            return fail(
                path,
                format_args!(
                    "string at byte {pos} of length {len} runs past the end of the {}-byte \
                     buffer",
                    self.buf.len()
                ),
            );
        }
        if self.buf[start + len] != 0 {
            return fail(
                path,
                format_args!("string at byte {pos} of length {len} is not NUL-terminated"),
            );
        }
        Ok(Some((pos, &self.buf[start..start + len])))
    }

    /// A table field, verified if present.
    pub fn table_field(
        &mut self,
        table: &Table,
        id: usize,
        path: &Path<'_>,
    ) -> FbResult<Option<Table>> {
        match self.field(table, id, 4, 4, path)? {
            Some(slot) => Ok(Some(self.table_at(slot, path)?)),
            None => Ok(None),
        }
    }

    /// The bytes of a verified string (`pos` is its length prefix) with the terminator.
    pub fn string_with_nul(&self, pos: usize, len: usize) -> Option<&'a [u8]> {
        self.bytes(pos.checked_add(4)?, len.checked_add(1)?)
    }

    /// A vector of scalars field: the element bytes (`count * elem_size` of them).
    pub fn scalar_vector_field(
        &mut self,
        table: &Table,
        id: usize,
        elem_size: usize,
        path: &Path<'_>,
    ) -> FbResult<Option<&'a [u8]>> {
        let Some(slot) = self.field(table, id, 4, 4, path)? else {
            return Ok(None);
        };
        let (start, count) = self.vector_at(slot, elem_size, elem_size.max(4), path)?;
        Ok(Some(&self.buf[start..start + count * elem_size]))
    }

    /// A vector of tables field: the slots, each still to be verified with `table_at`.
    pub fn table_vector_field(
        &mut self,
        table: &Table,
        id: usize,
        path: &Path<'_>,
    ) -> FbResult<Option<TableVector>> {
        let Some(slot) = self.field(table, id, 4, 4, path)? else {
            return Ok(None);
        };
        let (first_slot, count) = self.vector_at(slot, 4, 4, path)?;
        Ok(Some(TableVector { first_slot, count }))
    }

    /// Verifies the vector whose offset is stored at `slot`; returns where its elements
    /// start and how many there are.
    fn vector_at(
        &mut self,
        slot: usize,
        elem_size: usize,
        align: usize,
        path: &Path<'_>,
    ) -> FbResult<(usize, usize)> {
        self.visit(path)?;
        let pos = self.follow(slot, align, "vector", path)?;
        let count = self.u32_at(pos).unwrap_or(0) as u64;
        let start = pos + 4;
        let available = (self.buf.len() - start) as u64;
        // u64 arithmetic: a 32-bit count times a small element size cannot overflow.
        if count * elem_size as u64 > available {
            return fail(
                path,
                format_args!(
                    "vector at byte {pos} of {count} elements of {elem_size} bytes runs past \
                     the end of the {}-byte buffer",
                    self.buf.len()
                ),
            );
        }
        Ok((start, count as usize))
    }
}
