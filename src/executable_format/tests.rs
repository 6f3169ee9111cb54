//! Tests of the HIP1 parser. Valid inputs come from hip-executable-pack's writer (its
//! `Executable::pack` for ordinary files, its low-level table writer for shapes `pack`
//! refuses to write); malformed ones are those files with bytes patched in place.

use super::*;
use crate::status::StatusCode;
use hip_executable_pack::flatbuffer::{finish, Field, Object, Table as TableBuilder};
use hip_executable_pack::{Executable, Export, BINDING_INDIRECT, BINDING_READ_ONLY};

// ---------------------------------------------------------------------------------------
// Building inputs.

fn sample_executable() -> Executable {
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
                debug_name: Some("abs_debug".into()),
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
                constant_count: 64,
                binding_flags: vec![],
                debug_name: None,
            },
        ],
    }
}

fn sample() -> Vec<u8> {
    sample_executable().pack().unwrap()
}

fn string(bytes: &[u8]) -> Option<Field> {
    Some(Field::Offset(Object::String {
        bytes: bytes.to_vec(),
        data_align: 4,
    }))
}

fn table(fields: Vec<Option<Field>>) -> TableBuilder {
    TableBuilder { fields }
}

fn sub_table(fields: Vec<Option<Field>>) -> Option<Field> {
    Some(Field::Offset(Object::Table(table(fields))))
}

fn tables(tables: Vec<TableBuilder>) -> Option<Field> {
    Some(Field::Offset(Object::VectorOfTables(tables)))
}

fn u32_field(value: u32) -> Option<Field> {
    Some(Field::U32(value))
}

fn dims(x: u32, y: u32, z: u32) -> Option<Field> {
    Some(Field::Struct {
        bytes: [x, y, z].iter().flat_map(|d| d.to_le_bytes()).collect(),
        align: 4,
    })
}

fn flags(values: &[u64]) -> Option<Field> {
    Some(Field::Offset(Object::VectorU64(values.to_vec())))
}

/// An ExportDef table with every field given.
fn export_table(
    module_ordinal: Option<Field>,
    kernel_name: Option<Field>,
    block_dims: Option<Field>,
    debug_info: Option<Field>,
) -> TableBuilder {
    table(vec![
        module_ordinal,
        kernel_name,
        block_dims,
        u32_field(0),
        u32_field(0),
        flags(&[0]),
        debug_info,
    ])
}

fn module_table(image: &[u8]) -> TableBuilder {
    table(vec![string(image)])
}

fn executable_table(exports: Vec<TableBuilder>, modules: Vec<TableBuilder>) -> TableBuilder {
    table(vec![tables(exports), tables(modules)])
}

fn pack(root: &TableBuilder) -> Vec<u8> {
    finish(root, FILE_IDENTIFIER)
}

/// One export named `kernel` with the given debug info, over one module.
fn with_debug_info(debug_info: Option<Field>) -> Vec<u8> {
    pack(&executable_table(
        vec![export_table(
            u32_field(0),
            string(b"kernel"),
            dims(1, 1, 1),
            debug_info,
        )],
        vec![module_table(b"image")],
    ))
}

/// A file with every optional part: debug locations, stages, source files.
fn debug_rich() -> Vec<u8> {
    let location = |file: &[u8], line: i32| sub_table(vec![string(file), u32_field(line as u32)]);
    let debug = sub_table(vec![
        string(b"original_name"),
        location(b"model.mlir", 12),
        tables(vec![
            table(vec![
                string(b"executable-sources"),
                location(b"dispatch.mlir", -3),
            ]),
            table(vec![string(b"executable-targets"), None]),
        ]),
    ]);
    let mut root = executable_table(
        vec![
            export_table(u32_field(1), string(b"dispatch_0"), dims(8, 4, 2), debug),
            export_table(None, string(b"dispatch_1"), dims(1, 1, 1), None),
        ],
        vec![module_table(b"m0"), module_table(b"m1")],
    );
    root.fields.push(tables(vec![
        table(vec![string(b"dispatch.mlir"), string(b"func.func @main")]),
        table(vec![None, None]),
    ]));
    pack(&root)
}

// ---------------------------------------------------------------------------------------
// Reading positions out of a valid buffer, to patch it.

fn read_u32(data: &[u8], pos: usize) -> u32 {
    u32::from_le_bytes(data[pos..pos + 4].try_into().unwrap())
}

fn read_u16(data: &[u8], pos: usize) -> u16 {
    u16::from_le_bytes(data[pos..pos + 2].try_into().unwrap())
}

fn write_u32(data: &mut [u8], pos: usize, value: u32) {
    data[pos..pos + 4].copy_from_slice(&value.to_le_bytes());
}

fn root_table(data: &[u8]) -> usize {
    read_u32(data, 0) as usize
}

fn vtable_of(data: &[u8], table: usize) -> usize {
    (table as i64 - read_u32(data, table) as i32 as i64) as usize
}

/// Position of field `id` in `table` (panics if absent: a test bug).
fn field_pos(data: &[u8], table: usize, id: usize) -> usize {
    let vtable = vtable_of(data, table);
    let offset = read_u16(data, vtable + 4 + 2 * id) as usize;
    assert_ne!(offset, 0, "field {id} absent");
    table + offset
}

fn follow(data: &[u8], slot: usize) -> usize {
    slot + read_u32(data, slot) as usize
}

/// Position of element `index` of the table vector in field `id` of `table`.
fn table_element(data: &[u8], table: usize, id: usize, index: usize) -> usize {
    let vector = follow(data, field_pos(data, table, id));
    follow(data, vector + 4 + 4 * index)
}

fn export_pos(data: &[u8], index: usize) -> usize {
    table_element(data, root_table(data), 0, index)
}

fn module_pos(data: &[u8], index: usize) -> usize {
    table_element(data, root_table(data), 1, index)
}

/// The message of the INVALID_ARGUMENT status `parse` must fail with.
fn parse_error(data: &[u8]) -> String {
    match parse(data) {
        Ok(def) => panic!("parsed malformed input: {def:?}"),
        Err(status) => {
            assert_eq!(status.code(), StatusCode::InvalidArgument, "{status}");
            status.message()
        }
    }
}

fn assert_error(data: &[u8], expected: &str) {
    let message = parse_error(data);
    assert!(
        message.contains(expected),
        "message {message:?} does not contain {expected:?}"
    );
}

// ---------------------------------------------------------------------------------------
// Valid files.

#[test]
fn parses_exactly_the_fields_written() {
    let written = sample_executable();
    let data = written.pack().unwrap();
    let def = parse(&data).unwrap();
    assert_eq!(def.modules.len(), 2);
    for (module, image) in def.modules.iter().zip(&written.modules) {
        assert_eq!(module.image, &image[..]);
    }
    assert_eq!(def.exports.len(), written.exports.len());
    for (parsed, export) in def.exports.iter().zip(&written.exports) {
        assert_eq!(parsed.kernel_name.to_str().unwrap(), export.kernel_name);
        assert_eq!(parsed.module_ordinal, export.module_ordinal);
        assert_eq!(parsed.block_dims, export.block_dims);
        assert_eq!(
            parsed.block_shared_memory_size,
            export.block_shared_memory_size
        );
        assert_eq!(parsed.constant_count, export.constant_count);
        assert_eq!(parsed.binding_count(), export.binding_flags.len());
        let parsed_flags: Vec<u64> = parsed.binding_flags.iter().map(|f| f.bits()).collect();
        assert_eq!(parsed_flags, export.binding_flags);
        let debug_name = parsed
            .debug_info
            .as_ref()
            .and_then(|d| d.name)
            .map(|n| n.to_str().unwrap().to_string());
        assert_eq!(debug_name, export.debug_name);
    }
    let flags = def.exports[1].binding_flags.get(0).unwrap();
    assert!(flags.is_read_only() && flags.is_indirect());
    assert!(!def.exports[0].binding_flags.get(1).unwrap().is_read_only());
    assert_eq!(def.exports[0].binding_flags.get(2), None);
    assert_eq!(def.exports[1].threads_per_block(), 32);
    assert!(def.source_files.is_empty());
}

#[test]
fn views_borrow_the_input_buffer() {
    let data = sample();
    let def = parse(&data).unwrap();
    let range = data.as_ptr_range();
    assert!(range.contains(&def.modules[1].image.as_ptr()));
    assert!(range.contains(&def.exports[0].kernel_name.as_ptr().cast()));
    // The image is followed by the string's terminator, as HIP's loader may rely on.
    let image = def.modules[0].image;
    let offset = image.as_ptr() as usize - data.as_ptr() as usize;
    assert_eq!(data[offset + image.len()], 0);
}

#[test]
fn parses_debug_info_locations_stages_and_source_files() {
    let data = debug_rich();
    let def = parse(&data).unwrap();
    assert_eq!(def.modules[1].image, b"m1");
    let export = &def.exports[0];
    assert_eq!(export.module_ordinal, 1);
    assert_eq!(export.kernel_name, c"dispatch_0");
    assert_eq!(export.block_dims, [8, 4, 2]);
    assert_eq!(export.binding_flags.len(), 1);
    let debug = export.debug_info.as_ref().unwrap();
    assert_eq!(debug.name.unwrap().as_bytes(), b"original_name");
    let location = debug.location.unwrap();
    assert_eq!(
        (location.filename.as_bytes(), location.line),
        (&b"model.mlir"[..], 12)
    );
    assert_eq!(debug.stage_locations.len(), 2);
    assert_eq!(
        debug.stage_locations[0].stage.as_bytes(),
        b"executable-sources"
    );
    let stage_location = debug.stage_locations[0].location.unwrap();
    assert_eq!(stage_location.filename.as_bytes(), b"dispatch.mlir");
    assert_eq!(stage_location.line, -3);
    assert_eq!(
        debug.stage_locations[1].stage.as_bytes(),
        b"executable-targets"
    );
    assert_eq!(debug.stage_locations[1].location, None);
    // IREE shows the first stage's location when stages are recorded.
    assert_eq!(debug.source_location(), Some(stage_location));

    let second = &def.exports[1];
    assert_eq!(
        second.module_ordinal, 0,
        "absent module_ordinal defaults to 0"
    );
    assert_eq!(second.debug_info, None);

    assert_eq!(def.source_files.len(), 2);
    assert_eq!(
        def.source_files[0].path.unwrap().as_bytes(),
        b"dispatch.mlir"
    );
    // The content was written as a string, so its vector bytes end before the NUL.
    assert_eq!(def.source_files[0].content, b"func.func @main");
    assert_eq!(def.source_files[1].path, None);
    assert!(def.source_files[1].content.is_empty());
}

#[test]
fn debug_info_falls_back_to_the_canonical_location() {
    let data = with_debug_info(sub_table(vec![
        None,
        sub_table(vec![string(b"a.mlir"), u32_field(7)]),
        None,
    ]));
    let def = parse(&data).unwrap();
    let debug = def.exports[0].debug_info.as_ref().unwrap();
    assert_eq!(debug.name, None);
    let location = debug.source_location().unwrap();
    assert_eq!(
        (location.filename.as_bytes(), location.line),
        (&b"a.mlir"[..], 7)
    );
}

#[test]
fn accepts_what_iree_accepts_beyond_the_common_case() {
    // No exports and no modules at all: IREE's loader accepts it (nothing to load).
    let empty = pack(&table(vec![]));
    let def = parse(&empty).unwrap();
    assert!(def.modules.is_empty() && def.exports.is_empty());
    // Modules without exports.
    let modules_only = pack(&executable_table(vec![], vec![module_table(b"x")]));
    let def = parse(&modules_only).unwrap();
    assert_eq!(def.modules.len(), 1);
    // Binding flag bits IREE does not know, and non-UTF-8 kernel names, pass through.
    let data = pack(&executable_table(
        vec![table(vec![
            None,
            string(b"k\xff"),
            dims(1, 1, 1),
            None,
            None,
            flags(&[u64::MAX; MAX_BINDING_COUNT]),
        ])],
        vec![module_table(b"x")],
    ));
    let def = parse(&data).unwrap();
    assert_eq!(def.exports[0].kernel_name.to_bytes(), b"k\xff");
    assert_eq!(def.exports[0].binding_count(), MAX_BINDING_COUNT);
    assert_eq!(
        def.exports[0].binding_flags.get(15).unwrap().bits(),
        u64::MAX
    );
    // Fields beyond the schema (a newer producer) are ignored.
    let mut root = executable_table(vec![], vec![module_table(b"x")]);
    root.fields.extend([None, u32_field(5), u32_field(6)]);
    assert_eq!(parse(&pack(&root)).unwrap().modules.len(), 1);
}

#[test]
fn cts_executables_parse() {
    // The three executables software-hip/kernels/build_cts_testdata.sh packs, with the same
    // arguments (the module bytes stand in for the compiled code objects, which the
    // parser does not look into).
    let cts = [
        ("abs", [2, 1, 1], 0, vec![0, 0]),
        ("write_constants", [1, 1, 1], 4, vec![0]),
        ("abs", [1, 1, 1], 0, vec![0, 0]),
    ];
    for (kernel, block_dims, constant_count, binding_flags) in cts {
        let executable = Executable {
            modules: vec![b"\x7fELF\x02\x01\x01 code object".to_vec()],
            exports: vec![Export {
                kernel_name: kernel.into(),
                module_ordinal: 0,
                block_dims,
                block_shared_memory_size: 0,
                constant_count,
                binding_flags: binding_flags.clone(),
                debug_name: Some(kernel.into()),
            }],
        };
        let data = executable.pack().unwrap();
        let def = parse(&data).unwrap();
        assert_eq!(def.modules.len(), 1);
        let export = &def.exports[0];
        assert_eq!(export.kernel_name.to_str().unwrap(), kernel);
        assert_eq!(export.block_dims, block_dims);
        assert_eq!(export.constant_count, constant_count);
        assert_eq!(export.binding_count(), binding_flags.len());
        check_limits(&def, &SOFTWARE_DEVICE).unwrap();
    }
}

// ---------------------------------------------------------------------------------------
// Header and structure.

#[test]
fn rejects_data_shorter_than_the_header() {
    let data = sample();
    for len in 0..8 {
        assert_error(
            &data[..len],
            &format!("data is {len} bytes, shorter than the 8-byte flatbuffer header"),
        );
    }
}

#[test]
fn rejects_a_wrong_file_identifier() {
    let mut data = sample();
    data[4..8].copy_from_slice(b"SPV1");
    assert_error(&data, r#"file identifier is "SPV1", expected "HIP1""#);
}

#[test]
fn rejects_bad_root_offsets() {
    let mut data = sample();
    write_u32(&mut data, 0, 0);
    assert_error(&data, "null table offset at byte 0");
    let len = data.len() as u32;
    write_u32(&mut data, 0, len);
    assert_error(&data, "outside the");
    write_u32(&mut data, 0, u32::MAX);
    assert_error(&data, "outside the");
    let root = root_table(&sample());
    write_u32(&mut data, 0, root as u32 + 2);
    assert_error(&data, "misaligned");
}

#[test]
fn rejects_bad_vtables() {
    let data = sample();
    let root = root_table(&data);
    let vtable = vtable_of(&data, root);

    let mut bad = data.clone();
    // Vtable before the start of the buffer.
    write_u32(&mut bad, root, (root as i32 + 2).cast_unsigned());
    assert_error(&bad, "outside the");
    // Vtable past the end.
    write_u32(
        &mut bad,
        root,
        (root as i32 - data.len() as i32).cast_unsigned(),
    );
    assert_error(&bad, "outside the");
    // Odd vtable position.
    write_u32(&mut bad, root, 1);
    assert_error(&bad, "misaligned");

    let mut bad = data.clone();
    bad[vtable..vtable + 2].copy_from_slice(&5u16.to_le_bytes());
    assert_error(&bad, "invalid size 5");
    bad[vtable..vtable + 2].copy_from_slice(&2u16.to_le_bytes());
    assert_error(&bad, "invalid size 2");
    bad[vtable..vtable + 2].copy_from_slice(&u16::MAX.wrapping_sub(1).to_le_bytes());
    assert_error(&bad, "invalid size 65534");

    // Table size past the buffer end.
    let mut bad = data.clone();
    bad[vtable + 2..vtable + 4].copy_from_slice(&u16::MAX.to_le_bytes());
    // The root is near the start, so 64 KiB runs past this small buffer.
    assert!(data.len() < 60_000);
    assert_error(&bad, "runs past the end");
}

#[test]
fn rejects_fields_outside_their_table_or_misaligned() {
    let data = sample();
    let export = export_pos(&data, 0);
    let vtable = vtable_of(&data, export);
    let table_size = read_u16(&data, vtable + 2);

    // module_ordinal (id 0) entry pointing at the last two bytes of the table.
    let mut bad = data.clone();
    bad[vtable + 4..vtable + 6].copy_from_slice(&(table_size - 2).to_le_bytes());
    assert_error(&bad, "export 0 module_ordinal: field at offset");
    // block_dims (id 2) at an odd offset.
    let mut bad = data.clone();
    let dims_offset = read_u16(&data, vtable + 8);
    bad[vtable + 8..vtable + 10].copy_from_slice(&(dims_offset - 1).to_le_bytes());
    assert_error(&bad, "export 0 block_dims: field at byte");
}

#[test]
fn rejects_bad_strings() {
    let data = sample();
    let export = export_pos(&data, 1);
    let name_slot = field_pos(&data, export, 1);
    let name = follow(&data, name_slot);

    let mut bad = data.clone();
    data[name + 4..name + 4 + 15]
        .iter()
        .for_each(|&b| assert_ne!(b, 0));
    bad[name + 4 + 15] = b'!';
    assert_error(&bad, "export 1 kernel_name: string at byte");
    assert_error(&bad, "is not NUL-terminated");

    let mut bad = data.clone();
    write_u32(&mut bad, name, (data.len() - name - 4) as u32);
    assert_error(&bad, "export 1 kernel_name: string at byte");
    assert_error(&bad, "runs past the end");
    write_u32(&mut bad, name, u32::MAX);
    assert_error(&bad, "runs past the end");

    let mut bad = data.clone();
    write_u32(&mut bad, name_slot, 0);
    assert_error(&bad, "export 1 kernel_name: null string offset");
    write_u32(&mut bad, name_slot, read_u32(&data, name_slot) + 1);
    assert_error(&bad, "export 1 kernel_name: string at byte");
    write_u32(&mut bad, name_slot, (data.len() - name_slot) as u32);
    assert_error(&bad, "export 1 kernel_name: string offset at byte");

    // A module image that runs off the end.
    let mut bad = data.clone();
    let image = follow(&data, field_pos(&data, module_pos(&data, 1), 0));
    write_u32(&mut bad, image, 1_000_000);
    assert_error(&bad, "module 1 hsaco_image: string at byte");
}

#[test]
fn rejects_bad_vectors() {
    let data = sample();
    let export = export_pos(&data, 0);
    let flags_slot = field_pos(&data, export, 5);
    let flags_vector = follow(&data, flags_slot);

    // A count whose byte size overflows 32 bits, and one just past the end.
    let mut bad = data.clone();
    write_u32(&mut bad, flags_vector, u32::MAX);
    assert_error(&bad, "export 0 binding_flags: vector at byte");
    assert_error(&bad, "4294967295 elements of 8 bytes runs past the end");
    let fitting = (data.len() - flags_vector - 4) / 8;
    write_u32(&mut bad, flags_vector, fitting as u32 + 1);
    assert_error(&bad, "runs past the end");

    // 64-bit elements that are not 8-byte aligned: move the vector by 4 bytes.
    let mut bad = data.clone();
    write_u32(&mut bad, flags_slot, read_u32(&data, flags_slot) + 4);
    assert_error(&bad, "export 0 binding_flags: vector at byte");
    assert_error(&bad, "misaligned");

    // The exports vector itself, with a count past the end.
    let mut bad = data.clone();
    let exports = follow(&data, field_pos(&data, root_table(&data), 0));
    write_u32(&mut bad, exports, 0x4000_0000);
    assert_error(&bad, "exports: vector at byte");
    // A vector offset that points past the end.
    let mut bad = data.clone();
    let slot = field_pos(&data, root_table(&data), 1);
    write_u32(&mut bad, slot, (data.len() - slot) as u32);
    assert_error(&bad, "modules: vector offset at byte");
}

#[test]
fn rejects_table_elements_that_are_null_or_outside() {
    let data = sample();
    let exports = follow(&data, field_pos(&data, root_table(&data), 0));
    let mut bad = data.clone();
    write_u32(&mut bad, exports + 4 + 4 * 2, 0);
    assert_error(&bad, "export 2: null table offset");
    write_u32(&mut bad, exports + 4 + 4 * 2, 0x7fff_fff0);
    assert_error(&bad, "export 2: table offset at byte");
}

/// A hand assembler for layouts the writer does not produce: bytes appended in order,
/// offset slots linked to targets once everything is placed.
struct Assembler {
    data: Vec<u8>,
}

impl Assembler {
    fn new() -> Self {
        let mut asm = Assembler { data: Vec::new() };
        asm.u32(0); // root offset
        asm.data.extend_from_slice(FILE_IDENTIFIER);
        asm
    }

    fn pos(&self) -> usize {
        self.data.len()
    }

    fn u16(&mut self, value: u16) {
        self.data.extend_from_slice(&value.to_le_bytes());
    }

    fn u32(&mut self, value: u32) -> usize {
        let at = self.pos();
        self.data.extend_from_slice(&value.to_le_bytes());
        at
    }

    fn align4(&mut self) {
        while !self.pos().is_multiple_of(4) {
            self.data.push(0);
        }
    }

    /// A vtable: sizes then field offsets.
    fn vtable(&mut self, table_size: u16, fields: &[u16]) -> usize {
        let at = self.pos();
        self.u16(4 + 2 * fields.len() as u16);
        self.u16(table_size);
        for &field in fields {
            self.u16(field);
        }
        at
    }

    /// A table start (its vtable offset); the caller appends its fields.
    fn table(&mut self, vtable: usize) -> usize {
        self.align4();
        let at = self.pos();
        self.u32((at - vtable) as u32);
        at
    }

    fn string(&mut self, bytes: &[u8]) -> usize {
        self.align4();
        let at = self.u32(bytes.len() as u32);
        self.data.extend_from_slice(bytes);
        self.data.push(0);
        at
    }

    /// A vector of `count` offset slots; returns its position.
    fn slots(&mut self, count: usize) -> usize {
        self.align4();
        let at = self.u32(count as u32);
        for _ in 0..count {
            self.u32(0);
        }
        at
    }

    fn link(&mut self, slot: usize, target: usize) {
        assert!(target > slot, "offsets only point forward");
        self.data[slot..slot + 4].copy_from_slice(&((target - slot) as u32).to_le_bytes());
    }

    fn finish(mut self, root: usize) -> Vec<u8> {
        self.link(0, root);
        self.data
    }
}

/// An executable whose one export is referenced `export_slots` times and whose debug
/// info lists one stage `stage_slots` times: all slots share one table.
fn shared_tables(export_slots: usize, stage_slots: usize) -> Vec<u8> {
    let mut asm = Assembler::new();
    let root_vtable = asm.vtable(12, &[4, 8]);
    let export_vtable = asm.vtable(24, &[0, 4, 8, 0, 0, 0, 20]);
    let debug_vtable = asm.vtable(8, &[0, 0, 4]);
    let stage_vtable = asm.vtable(8, &[4]);
    let module_vtable = asm.vtable(8, &[4]);

    let root = asm.table(root_vtable);
    let root_exports = asm.u32(0);
    let root_modules = asm.u32(0);
    let exports = asm.slots(export_slots);
    let modules = asm.slots(1);
    let export = asm.table(export_vtable);
    let export_name = asm.u32(0);
    for dim in [2, 3, 4] {
        asm.u32(dim);
    }
    let export_debug = asm.u32(0);
    let debug = asm.table(debug_vtable);
    let debug_stages = asm.u32(0);
    let stages = asm.slots(stage_slots);
    let stage = asm.table(stage_vtable);
    let stage_name = asm.u32(0);
    let module = asm.table(module_vtable);
    let module_image = asm.u32(0);
    let name = asm.string(b"shared");
    let image = asm.string(b"image");

    asm.link(root_exports, exports);
    asm.link(root_modules, modules);
    for i in 0..export_slots {
        asm.link(exports + 4 + 4 * i, export);
    }
    asm.link(modules + 4, module);
    asm.link(export_name, name);
    asm.link(export_debug, debug);
    asm.link(debug_stages, stages);
    for i in 0..stage_slots {
        asm.link(stages + 4 + 4 * i, stage);
    }
    asm.link(stage_name, name);
    asm.link(module_image, image);
    asm.finish(root)
}

#[test]
fn accepts_modestly_shared_tables_and_strings() {
    // Several slots naming one table or string is legal FlatBuffers; flatcc accepts it.
    let data = shared_tables(3, 4);
    let def = parse(&data).unwrap();
    assert_eq!(def.exports.len(), 3);
    for export in &def.exports {
        assert_eq!(export.kernel_name, c"shared");
        assert_eq!(export.block_dims, [2, 3, 4]);
        let stages = &export.debug_info.as_ref().unwrap().stage_locations;
        assert_eq!(stages.len(), 4);
        assert!(stages.iter().all(|s| s.stage.as_bytes() == b"shared"));
    }
}

#[test]
fn shared_tables_cannot_multiply_the_work() {
    // 3000 export slots x 3000 stage slots would be 9 million visits from a 24 KB buffer.
    let data = shared_tables(3000, 3000);
    assert!(data.len() < 25_000);
    let started = std::time::Instant::now();
    assert_error(&data, "refers to more than");
    assert!(started.elapsed() < std::time::Duration::from_secs(1));
}

#[test]
fn accepts_a_vtable_placed_after_its_table() {
    // The root table first, then its vtable (a negative vtable offset): a layout flatcc's
    // builder produces and its verifier accepts.
    let mut asm = Assembler::new();
    let root = asm.pos();
    asm.u32((-8i32).cast_unsigned()); // vtable at root + 8
    let exports_slot = asm.u32(0);
    asm.u16(6); // vtable: size 6, table size 8, exports at 4
    asm.u16(8);
    asm.u16(4);
    let exports = asm.slots(0);
    asm.link(exports_slot, exports);
    let data = asm.finish(root);
    let def = parse(&data).unwrap();
    assert!(def.exports.is_empty() && def.modules.is_empty());
}

// ---------------------------------------------------------------------------------------
// What IREE's loader checks beyond the structure.

#[test]
fn rejects_modules_without_images() {
    let export = || export_table(u32_field(0), string(b"k"), dims(1, 1, 1), None);
    let data = pack(&executable_table(
        vec![export()],
        vec![module_table(b"x"), table(vec![])],
    ));
    assert_eq!(
        parse_error(&data),
        "HIP executable: module 1: has no hsaco_image"
    );
    let data = pack(&executable_table(vec![export()], vec![module_table(b"")]));
    assert_eq!(
        parse_error(&data),
        "HIP executable: module 0: hsaco_image is empty"
    );
}

#[test]
fn rejects_module_ordinals_out_of_range() {
    let mut executable = sample_executable();
    executable.exports[1].module_ordinal = 1;
    let mut data = executable.pack().unwrap();
    let ordinal = field_pos(&data, export_pos(&data, 1), 0);
    write_u32(&mut data, ordinal, 5);
    assert_eq!(
        parse_error(&data),
        "HIP executable: export 1: module ordinal 5 out of range (2 modules)"
    );
    write_u32(&mut data, ordinal, u32::MAX);
    assert_error(
        &data,
        "export 1: module ordinal 4294967295 out of range (2 modules)",
    );
    // Exports with no modules at all.
    let data = pack(&executable_table(
        vec![export_table(None, string(b"k"), dims(1, 1, 1), None)],
        vec![],
    ));
    assert_error(&data, "export 0: module ordinal 0 out of range (0 modules)");
}

#[test]
fn rejects_missing_empty_or_truncating_kernel_names() {
    let one = |name: Option<Field>| {
        pack(&executable_table(
            vec![export_table(None, name, dims(1, 1, 1), None)],
            vec![module_table(b"x")],
        ))
    };
    assert_eq!(
        parse_error(&one(None)),
        "HIP executable: export 0: has no kernel_name"
    );
    assert_eq!(
        parse_error(&one(string(b""))),
        "HIP executable: export 0: kernel_name is empty"
    );
    assert_eq!(
        parse_error(&one(string(b"abs\0evil"))),
        r#"HIP executable: export 0: kernel_name "abs\0evil" contains a NUL byte"#
    );
}

#[test]
fn rejects_missing_or_zero_block_dims() {
    let one = |block_dims: Option<Field>| {
        pack(&executable_table(
            vec![export_table(None, string(b"k"), block_dims, None)],
            vec![module_table(b"x")],
        ))
    };
    assert_eq!(
        parse_error(&one(None)),
        "HIP executable: export 0: has no block_dims"
    );
    for (x, y, z) in [(0, 1, 1), (1, 0, 1), (1, 1, 0)] {
        assert_eq!(
            parse_error(&one(dims(x, y, z))),
            format!("HIP executable: export 0: block dims {x}x{y}x{z} have a zero dimension")
        );
    }
}

#[test]
fn rejects_too_many_constants_or_bindings() {
    let mut data = sample();
    let constants = field_pos(&data, export_pos(&data, 2), 4);
    assert_eq!(
        read_u32(&data, constants),
        64,
        "the maximum itself is accepted"
    );
    write_u32(&mut data, constants, 65);
    assert_eq!(
        parse_error(&data),
        "HIP executable: export 2: constant count 65 exceeds the maximum of 64"
    );

    let mut executable = sample_executable();
    executable.exports[0].binding_flags = vec![0; MAX_BINDING_COUNT];
    let mut data = executable.pack().unwrap();
    assert_eq!(parse(&data).unwrap().exports[0].binding_count(), 16);
    // The vector is followed by other objects, so one more element still lies inside.
    let vector = follow(&data, field_pos(&data, export_pos(&data, 0), 5));
    write_u32(&mut data, vector, 17);
    assert_eq!(
        parse_error(&data),
        "HIP executable: export 0: binding count 17 exceeds the maximum of 16"
    );
}

#[test]
fn rejects_debug_info_iree_rejects() {
    let location = |file: &[u8]| sub_table(vec![string(file), u32_field(1)]);
    let data = with_debug_info(sub_table(vec![None, location(b""), None]));
    assert_eq!(
        parse_error(&data),
        "HIP executable: export 0 debug_info location: filename is missing or empty"
    );
    let data = with_debug_info(sub_table(vec![None, sub_table(vec![]), None]));
    assert_error(
        &data,
        "export 0 debug_info location: filename is missing or empty",
    );
    let data = with_debug_info(sub_table(vec![
        None,
        None,
        tables(vec![
            table(vec![string(b"stage"), location(b"f")]),
            table(vec![string(b""), None]),
        ]),
    ]));
    assert_eq!(
        parse_error(&data),
        "HIP executable: export 0 debug_info stage_location 1: stage name is missing or empty"
    );
    let data = with_debug_info(sub_table(vec![
        None,
        None,
        tables(vec![table(vec![string(b"stage"), location(b"")])]),
    ]));
    assert_eq!(
        parse_error(&data),
        "HIP executable: export 0 debug_info stage_location 0 location: filename is missing \
         or empty"
    );
    // An empty debug name is fine: IREE only requires locations to name a file.
    let data = with_debug_info(sub_table(vec![string(b"")]));
    assert!(parse(&data).unwrap().exports[0]
        .debug_info
        .as_ref()
        .unwrap()
        .name
        .unwrap()
        .is_empty());
}

// ---------------------------------------------------------------------------------------
// Device limits.

/// The software HIP device's limits (what the CTS files must fit).
const SOFTWARE_DEVICE: DeviceLimits = DeviceLimits {
    max_block_dims: [1024, 1024, 64],
    max_threads_per_block: 1024,
    max_shared_memory_bytes: 64 * 1024,
};

#[test]
fn check_limits_accepts_exports_within_and_at_the_limits() {
    let data = sample();
    let def = parse(&data).unwrap();
    check_limits(&def, &SOFTWARE_DEVICE).unwrap();
    // Exactly at every limit: export 0 is 64x1x1 and export 1 is 4x4x2 with 4096 bytes.
    let tight = DeviceLimits {
        max_block_dims: [64, 4, 2],
        max_threads_per_block: 64,
        max_shared_memory_bytes: 4096,
    };
    check_limits(&def, &tight).unwrap();
}

fn limits_error(def: &HipExecutableDef<'_>, limits: &DeviceLimits) -> String {
    let status = check_limits(def, limits).unwrap_err();
    assert_eq!(status.code(), StatusCode::InvalidArgument);
    status.message()
}

#[test]
fn check_limits_rejects_exports_over_the_device_limits() {
    let data = sample();
    let def = parse(&data).unwrap();
    let mut limits = SOFTWARE_DEVICE;
    limits.max_block_dims = [1024, 1024, 1];
    assert_eq!(
        limits_error(&def, &limits),
        "HIP executable: export 1 (`write_constants`): block dims 4x4x2 exceed the device \
         maximum 1024x1024x1"
    );
    let mut limits = SOFTWARE_DEVICE;
    limits.max_block_dims[0] = 63;
    assert_error_contains(
        &limits_error(&def, &limits),
        "export 0 (`abs`): block dims 64x1x1",
    );
    let mut limits = SOFTWARE_DEVICE;
    limits.max_threads_per_block = 31;
    assert_eq!(
        limits_error(&def, &limits),
        "HIP executable: export 0 (`abs`): 64 threads per block (64x1x1) exceed the device \
         maximum of 31"
    );
    let mut limits = SOFTWARE_DEVICE;
    limits.max_shared_memory_bytes = 4095;
    assert_eq!(
        limits_error(&def, &limits),
        "HIP executable: export 1 (`write_constants`): 4096 bytes of shared memory per block \
         exceed the device maximum of 4095 bytes"
    );
}

#[test]
fn check_limits_counts_threads_without_overflow() {
    let data = pack(&executable_table(
        vec![export_table(
            None,
            string(b"big"),
            dims(u32::MAX, u32::MAX, u32::MAX),
            None,
        )],
        vec![module_table(b"x")],
    ));
    let def = parse(&data).unwrap();
    let limits = DeviceLimits {
        max_block_dims: [u32::MAX; 3],
        max_threads_per_block: u32::MAX,
        max_shared_memory_bytes: u64::MAX,
    };
    assert_error_contains(&limits_error(&def, &limits), "threads per block");
}

fn assert_error_contains(message: &str, expected: &str) {
    assert!(
        message.contains(expected),
        "{message:?} does not contain {expected:?}"
    );
}

// ---------------------------------------------------------------------------------------
// Robustness: truncation, byte flips and random mutation never panic, and whatever
// parses is consistent.

/// Checks the invariants `parse` promises on a successful result.
fn assert_consistent(data: &[u8], def: &HipExecutableDef<'_>) {
    let range = data.as_ptr_range();
    let inside = |bytes: &[u8]| {
        bytes.is_empty()
            || (range.contains(&bytes.as_ptr())
                && bytes.as_ptr() as usize + bytes.len() <= range.end as usize)
    };
    for module in &def.modules {
        assert!(!module.image.is_empty() && inside(module.image));
    }
    for export in &def.exports {
        assert!((export.module_ordinal as usize) < def.modules.len());
        assert!(!export.kernel_name.is_empty() && inside(export.kernel_name.to_bytes_with_nul()));
        assert!(export.block_dims.iter().all(|&d| d >= 1));
        assert!(export.constant_count <= MAX_CONSTANT_COUNT);
        assert!(export.binding_count() <= MAX_BINDING_COUNT);
        assert_eq!(export.binding_flags.iter().count(), export.binding_count());
        if let Some(debug) = &export.debug_info {
            let locations = debug
                .stage_locations
                .iter()
                .filter_map(|s| s.location)
                .chain(debug.location);
            for location in locations {
                assert!(!location.filename.is_empty() && inside(location.filename.as_bytes()));
            }
            assert!(debug.stage_locations.iter().all(|s| !s.stage.is_empty()));
        }
    }
    for file in &def.source_files {
        assert!(inside(file.content));
    }
    // Any limits work on a parsed file.
    let _ = check_limits(def, &SOFTWARE_DEVICE);
}

/// Parses `data`; a success must be consistent. Returns whether it parsed.
fn parse_checked(data: &[u8]) -> bool {
    match parse(data) {
        Ok(def) => {
            assert_consistent(data, &def);
            true
        }
        Err(status) => {
            assert_eq!(status.code(), StatusCode::InvalidArgument, "{status}");
            assert!(status.message().starts_with("HIP executable: "));
            false
        }
    }
}

fn valid_inputs() -> Vec<Vec<u8>> {
    vec![sample(), debug_rich(), shared_tables(3, 2)]
}

#[test]
fn every_truncation_fails_cleanly_or_parses_the_same() {
    for data in valid_inputs() {
        let full = parse(&data).unwrap();
        for len in 0..data.len() {
            let prefix = &data[..len];
            if parse_checked(prefix) {
                // Only trailing padding can be cut off without losing anything referenced.
                assert_eq!(parse(prefix).unwrap(), full, "prefix of {len} bytes");
                assert!(data[len..].iter().all(|&b| b == 0));
            }
        }
    }
}

#[test]
fn every_single_byte_change_is_survived() {
    for data in valid_inputs() {
        for pos in 0..data.len() {
            for value in [data[pos] ^ 0xff, data[pos] ^ 0x01, data[pos] ^ 0x80, 0] {
                let mut changed = data.clone();
                changed[pos] = value;
                parse_checked(&changed);
            }
        }
    }
}

/// xorshift64*: a small deterministic generator, so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Applies one to four random edits: byte writes, bit flips, interesting 32-bit values
/// at aligned positions (offsets and lengths), cuts, duplications and insertions.
fn mutate(rng: &mut Rng, data: &mut Vec<u8>) {
    for _ in 0..1 + rng.below(4) {
        let len = data.len();
        match rng.below(7) {
            0 if len > 0 => {
                let pos = rng.below(len);
                data[pos] = rng.next() as u8;
            }
            1 if len > 0 => {
                let pos = rng.below(len);
                data[pos] ^= 1 << rng.below(8);
            }
            2 if len >= 4 => {
                let pos = rng.below(len / 4) * 4;
                let interesting = [
                    0,
                    1,
                    4,
                    8,
                    len as u32,
                    (len - pos) as u32,
                    (len - pos) as u32 - 4,
                    u32::MAX,
                    u32::MAX - 3,
                    0x8000_0000,
                    rng.next() as u32 % 64,
                ];
                let value = interesting[rng.below(interesting.len())];
                data[pos..pos + 4].copy_from_slice(&value.to_le_bytes());
            }
            3 if len > 0 => data.truncate(rng.below(len)),
            4 if len > 0 => {
                let start = rng.below(len);
                let end = (start + 1 + rng.below(16)).min(len);
                let chunk = data[start..end].to_vec();
                let at = rng.below(len);
                data.splice(at..at, chunk);
            }
            5 if len > 0 => {
                let start = rng.below(len);
                let end = (start + 1 + rng.below(16)).min(len);
                data.drain(start..end);
            }
            _ => {
                let pos = rng.below(len + 1);
                data.insert(pos, rng.next() as u8);
            }
        }
    }
}

#[test]
fn random_mutations_never_panic() {
    let seeds = valid_inputs();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut parsed = 0;
    let iterations = 20_000;
    for i in 0..iterations {
        let mut data = seeds[i % seeds.len()].clone();
        mutate(&mut rng, &mut data);
        if parse_checked(&data) {
            parsed += 1;
        }
    }
    // Some mutations land in padding or data and still parse; most do not.
    assert!(
        parsed > 0 && parsed < iterations,
        "{parsed} of {iterations} parsed"
    );
}

#[test]
fn parses_agree_with_the_writers_own_reader() {
    // hip-executable-pack's reader is independent of this one; on inputs both accept
    // they must read the same fields.
    let mut rng = Rng(42);
    let seed = sample();
    let mut compared = 0;
    for _ in 0..1000 {
        let mut data = seed.clone();
        mutate(&mut rng, &mut data);
        let (Ok(def), Ok(theirs)) = (parse(&data), Executable::parse(&data)) else {
            continue;
        };
        compared += 1;
        assert_eq!(def.modules.len(), theirs.modules.len());
        for (module, image) in def.modules.iter().zip(&theirs.modules) {
            assert_eq!(module.image, &image[..]);
        }
        assert_eq!(def.exports.len(), theirs.exports.len());
        for (export, their) in def.exports.iter().zip(&theirs.exports) {
            assert_eq!(export.kernel_name.to_string_lossy(), their.kernel_name);
            assert_eq!(export.module_ordinal, their.module_ordinal);
            assert_eq!(export.block_dims, their.block_dims);
            assert_eq!(
                export.block_shared_memory_size,
                their.block_shared_memory_size
            );
            assert_eq!(export.constant_count, their.constant_count);
            let flags: Vec<u64> = export.binding_flags.iter().map(|f| f.bits()).collect();
            assert_eq!(flags, their.binding_flags);
        }
    }
    assert!(compared > 0);
}

/// Regenerates the fuzzer's seed corpus (`fuzz/corpus/hip_executable_parse/seed-*`):
/// `cargo test --lib executable_format::tests::write_fuzz_seed_corpus -- --ignored`.
#[test]
#[ignore = "writes files into the source tree"]
fn write_fuzz_seed_corpus() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/hip_executable_parse");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, data) in ["sample", "debug-rich", "shared-tables"]
        .iter()
        .zip(valid_inputs())
    {
        parse(&data).unwrap();
        std::fs::write(dir.join(format!("seed-{name}.hip1")), data).unwrap();
    }
}

/// Differential check against IREE's own acceptance rules: flatcc's verifier generated
/// from IREE's schema plus the content checks of IREE's HIP loader, compiled into a
/// program that reads file paths on stdin and prints `ACCEPT path` or `REJECT path why`
/// for each (its path in `HIP1_IREE_CHECKER`; fuzz/README.md says how to build one). Every mutated input must get the same
/// verdict from both, except where this parser rejects on purpose (see the module docs).
#[test]
#[ignore = "needs HIP1_IREE_CHECKER, a program built from IREE's flatcc verifier"]
fn verdicts_match_irees_checker() {
    use std::io::Write;
    let checker = std::env::var("HIP1_IREE_CHECKER").expect("set HIP1_IREE_CHECKER");
    let dir = std::env::temp_dir().join(format!("hip1-differential-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let seeds = valid_inputs();
    let mut rng = Rng(0x5eed);
    let mut inputs = Vec::new();
    for i in 0..20_000 {
        let mut data = seeds[i % seeds.len()].clone();
        mutate(&mut rng, &mut data);
        let path = dir.join(format!("{i}.hip1"));
        std::fs::write(&path, &data).unwrap();
        inputs.push((path, data));
    }
    // Optionally also every file in HIP1_EXTRA_INPUTS (a fuzzer's corpus, say).
    if let Ok(extra) = std::env::var("HIP1_EXTRA_INPUTS") {
        for entry in std::fs::read_dir(extra).unwrap() {
            let path = entry.unwrap().path();
            let data = std::fs::read(&path).unwrap();
            inputs.push((path, data));
        }
    }
    let mut child = std::process::Command::new(checker)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let list: String = inputs
        .iter()
        .map(|(path, _)| format!("{}\n", path.display()))
        .collect();
    let writer = std::thread::spawn(move || stdin.write_all(list.as_bytes()).unwrap());
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    let verdicts = String::from_utf8(output.stdout).unwrap();
    let verdicts: Vec<&str> = verdicts.lines().collect();
    assert_eq!(verdicts.len(), inputs.len());

    let deliberate = [
        "have a zero dimension",
        "contains a NUL byte",
        "refers to more than",
    ];
    let (mut accepted, mut deliberate_rejections, mut mismatches) = (0, 0, Vec::new());
    for ((path, data), verdict) in inputs.iter().zip(verdicts) {
        let iree_accepts = verdict.starts_with("ACCEPT ");
        match parse(data) {
            Ok(_) if iree_accepts => accepted += 1,
            Err(_) if !iree_accepts => {}
            Err(status) if deliberate.iter().any(|d| status.message().contains(d)) => {
                deliberate_rejections += 1
            }
            ours => mismatches.push(format!(
                "{}: ours {:?}, IREE {verdict}",
                path.display(),
                ours.map(|_| "accept").map_err(|s| s.message())
            )),
        }
    }
    eprintln!(
        "{} inputs: {accepted} accepted by both, {deliberate_rejections} rejected only here \
         on purpose, {} mismatches",
        inputs.len(),
        mismatches.len()
    );
    assert!(
        mismatches.is_empty(),
        "{:#?}",
        &mismatches[..mismatches.len().min(10)]
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// IREE 3.13's 64-byte file header around a flatbuffer, as IREE 3.13's compiler writes it.
#[cfg(feature = "iree-3-13")]
fn with_file_header(magic: &[u8; 4], version: u32, content_size: u64, content: &[u8]) -> Vec<u8> {
    let mut data = Vec::new();
    data.extend_from_slice(magic);
    data.extend_from_slice(&version.to_le_bytes());
    data.extend_from_slice(&content_size.to_le_bytes());
    data.extend_from_slice(&[0u8; 48]);
    data.extend_from_slice(content);
    data
}

#[cfg(feature = "iree-3-13")]
#[test]
fn iree_3_13_file_header_is_read_and_checked() {
    let flatbuffer = sample();
    let data = with_file_header(b"HIP1", 0, flatbuffer.len() as u64, &flatbuffer);
    assert_eq!(super::strip_file_header(&data).unwrap(), &flatbuffer[..]);
    assert_eq!(super::verified_size(&data).unwrap(), 64 + flatbuffer.len());
    // Trailing bytes beyond the content are not part of it.
    let mut padded = data.clone();
    padded.extend_from_slice(&[0xAB; 7]);
    assert_eq!(super::strip_file_header(&padded).unwrap().len(), flatbuffer.len());
    let refused = |data: &[u8], code: crate::status::StatusCode, text: &str| {
        let status = super::strip_file_header(data).unwrap_err();
        assert_eq!(status.code(), code, "{status}");
        assert!(status.message().contains(text), "{status}");
    };
    use crate::status::StatusCode::*;
    refused(&data[..63], InvalidArgument, "less than header size");
    refused(&with_file_header(b"CUD1", 0, flatbuffer.len() as u64, &flatbuffer), InvalidArgument, "identifier");
    refused(&with_file_header(b"HIP1", 1, flatbuffer.len() as u64, &flatbuffer), Incompatible, "version 1");
    refused(&with_file_header(b"HIP1", 0, 0, &flatbuffer), InvalidArgument, "zero-length");
    refused(&with_file_header(b"HIP1", 0, flatbuffer.len() as u64 + 1, &flatbuffer), OutOfRange, "exceeds");
}
