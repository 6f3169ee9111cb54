//! A minimal FlatBuffers writer and reader, enough for the HIP1 schema.
//!
//! Written by hand instead of using the `flatbuffers` crate: the schema has
//! five small tables, no flatc is available to generate Rust code, and a
//! hand-written reader doubles as an independent check of the writer.
//!
//! The writer lays the buffer out front to back: the root offset and file
//! identifier, then each table preceded by its vtable, then the objects the
//! table refers to (FlatBuffers offsets are unsigned, so referenced objects
//! must come after the field that refers to them). Every scalar is stored at
//! an address aligned to its size, as flatcc's verifier requires.

/// A value a table field refers to by offset.
#[derive(Clone, Debug)]
pub enum Object {
    Table(Table),
    /// A `string`: length, bytes, NUL. `data_align` aligns the first byte.
    String {
        bytes: Vec<u8>,
        data_align: usize,
    },
    /// A vector of 64-bit scalars.
    VectorU64(Vec<u64>),
    VectorOfTables(Vec<Table>),
}

/// A field stored inside the table.
#[derive(Clone, Debug)]
pub enum Field {
    U32(u32),
    /// A struct: raw little-endian bytes and their alignment.
    Struct {
        bytes: Vec<u8>,
        align: usize,
    },
    Offset(Object),
}

/// A table; `fields[i]` is the field with schema id `i` (None = absent).
#[derive(Clone, Debug, Default)]
pub struct Table {
    pub fields: Vec<Option<Field>>,
}

impl Field {
    fn size_and_align(&self) -> (usize, usize) {
        match self {
            Field::U32(_) | Field::Offset(_) => (4, 4),
            Field::Struct { bytes, align } => (bytes.len(), *align),
        }
    }
}

struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    fn pad_to(&mut self, align: usize, offset_within: usize) {
        while !(self.buf.len() + offset_within).is_multiple_of(align) {
            self.buf.push(0);
        }
    }

    fn put_u16(&mut self, v: u16) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    fn put_u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    fn patch_offset(&mut self, at: usize, target: usize) {
        let relative = u32::try_from(target - at).expect("buffer under 4 GiB");
        self.buf[at..at + 4].copy_from_slice(&relative.to_le_bytes());
    }

    /// Writes a vtable and its table; returns the table's position.
    fn table(&mut self, table: &Table) -> usize {
        // Field positions inside the table (after the 4-byte vtable offset).
        let max_align = table
            .fields
            .iter()
            .flatten()
            .map(|f| f.size_and_align().1)
            .fold(4, usize::max);
        let mut field_offsets = Vec::with_capacity(table.fields.len());
        let mut inline_end = 4usize;
        for field in &table.fields {
            match field {
                None => field_offsets.push(0u16),
                Some(field) => {
                    let (size, align) = field.size_and_align();
                    inline_end = inline_end.next_multiple_of(align);
                    field_offsets.push(u16::try_from(inline_end).expect("small table"));
                    inline_end += size;
                }
            }
        }
        let table_size = inline_end.next_multiple_of(4);

        self.pad_to(2, 0);
        let vtable_pos = self.buf.len();
        self.put_u16(u16::try_from(4 + 2 * field_offsets.len()).expect("small vtable"));
        self.put_u16(u16::try_from(table_size).expect("small table"));
        for &offset in &field_offsets {
            self.put_u16(offset);
        }
        self.pad_to(max_align, 0);
        let table_pos = self.buf.len();
        let back_to_vtable = i32::try_from(table_pos - vtable_pos).expect("near vtable");
        self.buf.extend_from_slice(&back_to_vtable.to_le_bytes());
        self.buf.resize(table_pos + table_size, 0);

        let mut pending = Vec::new();
        for (field, &offset) in table.fields.iter().zip(&field_offsets) {
            let at = table_pos + offset as usize;
            match field {
                None => {}
                Some(Field::U32(v)) => self.buf[at..at + 4].copy_from_slice(&v.to_le_bytes()),
                Some(Field::Struct { bytes, .. }) => {
                    self.buf[at..at + bytes.len()].copy_from_slice(bytes)
                }
                Some(Field::Offset(object)) => pending.push((at, object)),
            }
        }
        for (at, object) in pending {
            let target = self.object(object);
            self.patch_offset(at, target);
        }
        table_pos
    }

    /// Writes an object; returns the position offsets must point to.
    fn object(&mut self, object: &Object) -> usize {
        match object {
            Object::Table(table) => self.table(table),
            Object::String { bytes, data_align } => {
                self.pad_to((*data_align).max(4), 4);
                let pos = self.buf.len();
                self.put_u32(u32::try_from(bytes.len()).expect("string under 4 GiB"));
                self.buf.extend_from_slice(bytes);
                self.buf.push(0);
                pos
            }
            Object::VectorU64(values) => {
                self.pad_to(8, 4);
                let pos = self.buf.len();
                self.put_u32(u32::try_from(values.len()).expect("short vector"));
                for v in values {
                    self.buf.extend_from_slice(&v.to_le_bytes());
                }
                pos
            }
            Object::VectorOfTables(tables) => {
                self.pad_to(4, 0);
                let pos = self.buf.len();
                self.put_u32(u32::try_from(tables.len()).expect("short vector"));
                let slots: Vec<usize> = tables
                    .iter()
                    .map(|_| {
                        let at = self.buf.len();
                        self.put_u32(0);
                        at
                    })
                    .collect();
                for (table, at) in tables.iter().zip(slots) {
                    let target = self.table(table);
                    self.patch_offset(at, target);
                }
                pos
            }
        }
    }
}

/// Serialises `root` with a 4-byte file identifier.
pub fn finish(root: &Table, identifier: &[u8; 4]) -> Vec<u8> {
    let mut writer = Writer { buf: Vec::new() };
    writer.put_u32(0);
    writer.buf.extend_from_slice(identifier);
    let root_pos = writer.table(root);
    writer.patch_offset(0, root_pos);
    // Keep the total size a multiple of 8 so the buffer can be embedded
    // back to back with others without misaligning them.
    writer.pad_to(8, 0);
    writer.buf
}

/// Reading errors: the buffer is not a well-formed flatbuffer of the
/// expected shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadError(pub String);

fn err<T>(message: impl Into<String>) -> Result<T, ReadError> {
    Err(ReadError(message.into()))
}

/// A bounds-checked view of a flatbuffer.
#[derive(Clone, Copy)]
pub struct Reader<'a> {
    buf: &'a [u8],
}

/// A table inside a `Reader`'s buffer.
#[derive(Clone, Copy)]
pub struct TableRef<'a> {
    reader: Reader<'a>,
    pos: usize,
    vtable: usize,
    vtable_len: usize,
    table_len: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf }
    }

    fn bytes(&self, pos: usize, len: usize) -> Result<&'a [u8], ReadError> {
        match pos.checked_add(len) {
            Some(end) if end <= self.buf.len() => Ok(&self.buf[pos..end]),
            _ => err(format!(
                "{len} bytes at {pos} run past the buffer end {}",
                self.buf.len()
            )),
        }
    }

    fn aligned(&self, pos: usize, align: usize, what: &str) -> Result<(), ReadError> {
        if !pos.is_multiple_of(align) {
            return err(format!("{what} at {pos} is not {align}-byte aligned"));
        }
        Ok(())
    }

    pub fn u16_at(&self, pos: usize) -> Result<u16, ReadError> {
        Ok(u16::from_le_bytes(self.bytes(pos, 2)?.try_into().unwrap()))
    }

    pub fn u32_at(&self, pos: usize) -> Result<u32, ReadError> {
        Ok(u32::from_le_bytes(self.bytes(pos, 4)?.try_into().unwrap()))
    }

    pub fn u64_at(&self, pos: usize) -> Result<u64, ReadError> {
        Ok(u64::from_le_bytes(self.bytes(pos, 8)?.try_into().unwrap()))
    }

    /// Follows the unsigned offset stored at `pos`.
    fn follow(&self, pos: usize) -> Result<usize, ReadError> {
        self.aligned(pos, 4, "offset")?;
        let relative = self.u32_at(pos)? as usize;
        if relative == 0 {
            return err(format!("null offset at {pos}"));
        }
        let target = pos + relative;
        if target >= self.buf.len() {
            return err(format!("offset at {pos} points outside the buffer"));
        }
        Ok(target)
    }

    /// The root table, after checking the file identifier.
    pub fn root(&self, identifier: &[u8; 4]) -> Result<TableRef<'a>, ReadError> {
        if self.bytes(4, 4)? != identifier {
            return err(format!(
                "file identifier is {:?}, expected {:?}",
                String::from_utf8_lossy(self.bytes(4, 4)?),
                String::from_utf8_lossy(identifier)
            ));
        }
        self.table_at(self.follow(0)?)
    }

    fn table_at(&self, pos: usize) -> Result<TableRef<'a>, ReadError> {
        self.aligned(pos, 4, "table")?;
        let back = i32::from_le_bytes(self.bytes(pos, 4)?.try_into().unwrap()) as i64;
        let vtable = pos as i64 - back;
        if vtable < 0 || vtable as usize >= self.buf.len() {
            return err(format!("vtable of table at {pos} is outside the buffer"));
        }
        let vtable = vtable as usize;
        self.aligned(vtable, 2, "vtable")?;
        let vtable_len = self.u16_at(vtable)? as usize;
        let table_len = self.u16_at(vtable + 2)? as usize;
        if vtable_len < 4 || !vtable_len.is_multiple_of(2) {
            return err(format!("bad vtable size {vtable_len} at {vtable}"));
        }
        self.bytes(vtable, vtable_len)?;
        self.bytes(pos, table_len)?;
        Ok(TableRef {
            reader: *self,
            pos,
            vtable,
            vtable_len,
            table_len,
        })
    }

    fn string_at(&self, pos: usize) -> Result<&'a [u8], ReadError> {
        let len = self.u32_at(pos)? as usize;
        let with_nul = self.bytes(pos + 4, len + 1)?;
        if with_nul[len] != 0 {
            return err(format!("string at {pos} lacks its NUL terminator"));
        }
        Ok(&with_nul[..len])
    }
}

impl<'a> TableRef<'a> {
    /// Position of field `id` inside the buffer, if present.
    fn field(&self, id: usize, size: usize, align: usize) -> Result<Option<usize>, ReadError> {
        let entry = 4 + 2 * id;
        if entry + 2 > self.vtable_len {
            return Ok(None);
        }
        let offset = self.reader.u16_at(self.vtable + entry)? as usize;
        if offset == 0 {
            return Ok(None);
        }
        if offset < 4 || offset + size > self.table_len {
            return err(format!(
                "field {id} of table at {} lies outside the table",
                self.pos
            ));
        }
        let at = self.pos + offset;
        self.reader.aligned(at, align, "field")?;
        Ok(Some(at))
    }

    pub fn u32(&self, id: usize, default: u32) -> Result<u32, ReadError> {
        match self.field(id, 4, 4)? {
            Some(at) => self.reader.u32_at(at),
            None => Ok(default),
        }
    }

    pub fn struct_bytes(
        &self,
        id: usize,
        size: usize,
        align: usize,
    ) -> Result<Option<&'a [u8]>, ReadError> {
        match self.field(id, size, align)? {
            Some(at) => Ok(Some(self.reader.bytes(at, size)?)),
            None => Ok(None),
        }
    }

    pub fn string(&self, id: usize) -> Result<Option<&'a [u8]>, ReadError> {
        match self.field(id, 4, 4)? {
            Some(at) => Ok(Some(self.reader.string_at(self.reader.follow(at)?)?)),
            None => Ok(None),
        }
    }

    pub fn table(&self, id: usize) -> Result<Option<TableRef<'a>>, ReadError> {
        match self.field(id, 4, 4)? {
            Some(at) => Ok(Some(self.reader.table_at(self.reader.follow(at)?)?)),
            None => Ok(None),
        }
    }

    pub fn vector_u64(&self, id: usize) -> Result<Option<Vec<u64>>, ReadError> {
        let Some(at) = self.field(id, 4, 4)? else {
            return Ok(None);
        };
        let pos = self.reader.follow(at)?;
        let len = self.reader.u32_at(pos)? as usize;
        self.reader.aligned(pos + 4, 8, "u64 vector")?;
        let bytes = self.reader.bytes(
            pos + 4,
            len.checked_mul(8)
                .ok_or(ReadError("vector length".into()))?,
        )?;
        Ok(Some(
            bytes
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
                .collect(),
        ))
    }

    pub fn vector_of_tables(&self, id: usize) -> Result<Option<Vec<TableRef<'a>>>, ReadError> {
        let Some(at) = self.field(id, 4, 4)? else {
            return Ok(None);
        };
        let pos = self.reader.follow(at)?;
        let len = self.reader.u32_at(pos)? as usize;
        self.reader.bytes(
            pos + 4,
            len.checked_mul(4)
                .ok_or(ReadError("vector length".into()))?,
        )?;
        (0..len)
            .map(|i| self.reader.table_at(self.reader.follow(pos + 4 + 4 * i)?))
            .collect::<Result<_, _>>()
            .map(Some)
    }

    /// Position of the table in the buffer (for tests).
    pub fn position(&self) -> usize {
        self.pos
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_a_table_that_reads_back_with_aligned_fields() {
        let inner = Table {
            fields: vec![Some(Field::U32(7))],
        };
        let root = Table {
            fields: vec![
                Some(Field::U32(0xdead_beef)),
                None,
                Some(Field::Struct {
                    bytes: vec![1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0],
                    align: 4,
                }),
                Some(Field::Offset(Object::String {
                    bytes: b"hello\0world".to_vec(),
                    data_align: 16,
                })),
                Some(Field::Offset(Object::VectorU64(vec![1, u64::MAX]))),
                Some(Field::Offset(Object::VectorOfTables(vec![
                    inner.clone(),
                    inner,
                ]))),
            ],
        };
        let bytes = finish(&root, b"TEST");
        assert_eq!(&bytes[4..8], b"TEST");
        assert_eq!(bytes.len() % 8, 0);
        let reader = Reader::new(&bytes);
        assert!(reader.root(b"NOPE").is_err());
        let table = reader.root(b"TEST").unwrap();
        assert_eq!(table.u32(0, 0).unwrap(), 0xdead_beef);
        assert_eq!(
            table.u32(1, 42).unwrap(),
            42,
            "absent field reads as default"
        );
        assert_eq!(
            table.u32(9, 5).unwrap(),
            5,
            "field beyond the vtable reads as default"
        );
        assert_eq!(
            table.struct_bytes(2, 12, 4).unwrap().unwrap(),
            &[1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0]
        );
        let string = table.string(3).unwrap().unwrap();
        assert_eq!(string, b"hello\0world");
        assert_eq!((string.as_ptr() as usize - bytes.as_ptr() as usize) % 16, 0);
        assert_eq!(table.vector_u64(4).unwrap().unwrap(), vec![1, u64::MAX]);
        let tables = table.vector_of_tables(5).unwrap().unwrap();
        assert_eq!(tables.len(), 2);
        assert!(tables.iter().all(|t| t.u32(0, 0).unwrap() == 7));
    }

    #[test]
    fn reader_rejects_out_of_bounds_offsets() {
        let root = Table {
            fields: vec![Some(Field::Offset(Object::String {
                bytes: b"abc".to_vec(),
                data_align: 4,
            }))],
        };
        let bytes = finish(&root, b"TEST");
        let table = Reader::new(&bytes).root(b"TEST").unwrap();
        let string_field = table.position() + 4;
        // Point the string offset past the end of the buffer.
        let mut broken = bytes.clone();
        broken[string_field..string_field + 4].copy_from_slice(&1000u32.to_le_bytes());
        let table = Reader::new(&broken).root(b"TEST").unwrap();
        assert!(table.string(0).is_err());
        // Truncated buffers fail cleanly wherever they are cut.
        for cut in 0..bytes.len() {
            let truncated = &bytes[..cut];
            let _ = Reader::new(truncated)
                .root(b"TEST")
                .and_then(|t| t.string(0));
        }
        assert!(Reader::new(&bytes[..3]).root(b"TEST").is_err());
    }
}
