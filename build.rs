//! Build steps:
//! 1. bindgen over the real HIP headers for the HIP types the driver uses;
//! 2. the small C shim for linking into IREE programs (src/registration/iree_link_shim.c):
//!    factory registration through the program's registry, flags with IREE's flag library;
//! 3. cbindgen for the C header (into OUT_DIR; the committed copy in include/ is compared
//!    with it by the tests, and IREE_HAL_HIP_RS_WRITE_HEADER=1 rewrites it).

use std::path::{Path, PathBuf};

/// A HIP header tree: its `include` directory and the HIP version its `hip_version.h` states.
struct HipHeaders {
    include_dir: PathBuf,
    /// Which rule found it (`HIP_PATH`, `ROCM_PATH`, `/opt/rocm`, `/usr`).
    found_by: &'static str,
    version: (u32, u32, u32),
}

/// The HIP headers to build against, first found of: `$HIP_PATH/include`,
/// `$ROCM_PATH/include`, `/opt/rocm/include`, `/usr/include` (Debian's libamdhip64-dev). A
/// variable that is set must point at a tree with headers: a wrong `HIP_PATH` is an error,
/// not a silent fall-back to another HIP.
fn find_hip_headers() -> HipHeaders {
    const HEADER: &str = "hip/hip_runtime_api.h";
    for variable in ["HIP_PATH", "ROCM_PATH"] {
        println!("cargo:rerun-if-env-changed={variable}");
        if let Some(root) = std::env::var_os(variable).filter(|value| !value.is_empty()) {
            let include_dir = PathBuf::from(&root).join("include");
            if !include_dir.join(HEADER).is_file() {
                panic!(
                    "{variable}={} has no include/{HEADER}: point {variable} at a ROCm or HIP tree (the folder holding include/hip), or unset it",
                    PathBuf::from(root).display()
                );
            }
            return HipHeaders { version: hip_version(&include_dir), include_dir, found_by: variable };
        }
    }
    for root in ["/opt/rocm", "/usr"] {
        let include_dir = Path::new(root).join("include");
        if include_dir.join(HEADER).is_file() {
            return HipHeaders { version: hip_version(&include_dir), include_dir, found_by: root };
        }
    }
    panic!(
        "HIP headers not found (looked for {HEADER} under $HIP_PATH/include, $ROCM_PATH/include, /opt/rocm/include, \
         /usr/include). Install ROCm, or Debian's libamdhip64-dev (`apt-get install libamdhip64-dev`), or set HIP_PATH."
    );
}

/// `HIP_VERSION_MAJOR`, `_MINOR`, `_PATCH` of `hip/hip_version.h`.
fn hip_version(include_dir: &Path) -> (u32, u32, u32) {
    let file = include_dir.join("hip/hip_version.h");
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
    let number = |name: &str| -> u32 {
        text.lines()
            .filter_map(|line| line.trim().strip_prefix("#define "))
            .filter_map(|rest| rest.trim().strip_prefix(name))
            .find_map(|value| value.trim().parse().ok())
            .unwrap_or_else(|| panic!("{} does not define {name}", file.display()))
    };
    (number("HIP_VERSION_MAJOR "), number("HIP_VERSION_MINOR "), number("HIP_VERSION_PATCH "))
}

fn generate_hip_types(crate_dir: &Path, out_dir: &Path) {
    let headers = find_hip_headers();
    let include_dir = &headers.include_dir;
    let (major, minor, patch) = headers.version;
    println!(
        "cargo:warning=HIP headers: {} (HIP {major}.{minor}.{patch}, found by {})",
        include_dir.display(),
        headers.found_by
    );
    println!("cargo:rerun-if-changed={}", include_dir.join("hip/hip_version.h").display());
    println!("cargo:rerun-if-changed=src/hip/hip_headers.h");
    let bindings = bindgen::Builder::default()
        .header(crate_dir.join("src/hip/hip_headers.h").display().to_string())
        .clang_arg(format!("-I{}", include_dir.display()))
        .clang_arg("-D__HIP_PLATFORM_AMD__")
        .allowlist_type("hip.*")
        .allowlist_type("HIP_.*")
        .allowlist_type("dim3")
        .allowlist_var("hip.*")
        .allowlist_var("HIP_FUNC_ATTRIBUTE_.*")
        // Defined by hand for the HIP 6 ABI (src/hip/mod.rs): ROCm 5 headers differ for the
        // first two, and ROCm 6 headers name the properties layout IREE reads
        // (`hipDeviceProp_tR0000`, ROCm 5's `hipDeviceProp_t`) only in hip_deprecated.h.
        .blocklist_type("HIP_MEMCPY3D")
        .blocklist_type("hipMemoryType")
        .blocklist_item("hipMemoryType.*")
        .blocklist_type("hipDeviceProp_t.*")
        // Its layout depends on the runtime's major version (ROCm 7.0 reordered it).
        .blocklist_type("hipMemsetParams")
        .blocklist_function(".*")
        .default_enum_style(bindgen::EnumVariation::Consts)
        .prepend_enum_name(false)
        .derive_default(true)
        .layout_tests(true)
        // Some header trees need bindgen's helper types (HIP 6.1's union fields),
        // whose unsafe functions must be lint-clean under `unsafe_op_in_unsafe_fn`.
        .wrap_unsafe_ops(true)
        .generate()
        .unwrap_or_else(|e| panic!("bindgen failed on the HIP headers in {}: {e}", include_dir.display()));
    bindings.write_to_file(out_dir.join("hip_types.rs")).expect("writing hip_types.rs");
    check_hip_abi(crate_dir, out_dir, &headers);
}

/// One line of `src/hip/abi_layout.txt`.
enum AbiItem {
    /// `headers`: the C condition under which the headers declare the same layout.
    Struct { name: String, size: u64, headers: Option<&'static str>, c_name: Option<String> },
    Field { rust: String, c: String, offset: u64 },
    Const { name: String, value: i64, headers: Option<&'static str> },
}

/// The header versions a marked item of abi_layout.txt is checked against.
fn header_condition(words: &[&str]) -> Option<&'static str> {
    words.iter().find_map(|word| match *word {
        "hip6" => Some("HIP_VERSION_MAJOR >= 6"),
        "hip7" => Some("HIP_VERSION_MAJOR >= 7"),
        "before-hip7" => Some("HIP_VERSION_MAJOR < 7"),
        _ => None,
    })
}

fn read_abi_table(path: &Path) -> Vec<AbiItem> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let bad = |line: &str| -> ! { panic!("{}: malformed line '{line}'", path.display()) };
    let mut items = Vec::new();
    for line in text.lines().map(str::trim).filter(|line| !line.is_empty() && !line.starts_with('#')) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let number = |word: Option<&&str>| word.and_then(|w| w.parse::<i64>().ok()).unwrap_or_else(|| bad(line));
        let headers = header_condition(&words[3.min(words.len())..]);
        items.push(match words[0] {
            "struct" => AbiItem::Struct {
                name: words.get(1).unwrap_or_else(|| bad(line)).to_string(),
                size: number(words.get(2)) as u64,
                headers,
                c_name: words.iter().skip(3).find_map(|w| w.strip_prefix("c=")).map(str::to_owned),
            },
            "field" => {
                let name = words.get(1).unwrap_or_else(|| bad(line));
                let (rust, c) = name.split_once(':').unwrap_or((name, name));
                AbiItem::Field { rust: rust.to_owned(), c: c.to_owned(), offset: number(words.get(2)) as u64 }
            }
            "const" => AbiItem::Const { name: words.get(1).unwrap_or_else(|| bad(line)).to_string(), value: number(words.get(2)), headers },
            _ => bad(line),
        });
    }
    items
}

/// The compile-time ABI checks of `src/hip/abi_layout.txt`: Rust assertions over the types
/// the crate compiles with (`OUT_DIR/hip_abi_checks.rs`, included by src/hip/mod.rs), and C
/// static assertions compiled (syntax only) against the HIP headers found.
fn check_hip_abi(crate_dir: &Path, out_dir: &Path, headers: &HipHeaders) {
    let table_path = crate_dir.join("src/hip/abi_layout.txt");
    println!("cargo:rerun-if-changed={}", table_path.display());
    let items = read_abi_table(&table_path);
    let mut rust = String::from("// Generated by build.rs from src/hip/abi_layout.txt.\n");
    let mut c = String::from(
        "/* Generated by build.rs from src/hip/abi_layout.txt: the HIP headers against the ABI the driver speaks. */\n\
         #include <stddef.h>\n#include \"hip_headers.h\"\n\
         #if HIP_VERSION_MAJOR >= 6\n#if __has_include(<hip/hip_deprecated.h>)\n#include <hip/hip_deprecated.h>\n\
         #define IREE_HAL_HIP_RS_PROPS_R0000 hipDeviceProp_tR0000\n#endif\n\
         #else\n#define IREE_HAL_HIP_RS_PROPS_R0000 hipDeviceProp_t\n#endif\n",
    );
    // The struct whose fields follow: (Rust name, C type).
    let mut current: Option<(String, String)> = None;
    // Whether the C side is inside a struct's `#if`.
    let mut c_group_open = false;
    fn close_c_group(c: &mut String, open: &mut bool) {
        if std::mem::take(open) {
            c.push_str("#endif\n");
        }
    }
    for item in &items {
        match item {
            AbiItem::Struct { name, size, headers, c_name } => {
                close_c_group(&mut c, &mut c_group_open);
                rust.push_str(&format!(
                    "const _: () = assert!(::core::mem::size_of::<{name}>() == {size}, \"HIP ABI: size of {name} is not {size} bytes\");\n"
                ));
                let c_type = c_name.clone().unwrap_or_else(|| name.clone());
                let condition = match (headers, c_name) {
                    (Some(condition), _) => condition.to_string(),
                    (None, Some(macro_name)) if macro_name.starts_with("IREE_") => format!("defined({macro_name})"),
                    (None, _) => "1".to_owned(),
                };
                c.push_str(&format!("#if {condition}\n"));
                c.push_str(&format!("_Static_assert(sizeof({c_type}) == {size}, \"HIP ABI: size of {name} is not {size} bytes\");\n"));
                c_group_open = true;
                current = Some((name.clone(), c_type));
            }
            AbiItem::Field { rust: field, c: c_field, offset } => {
                let (name, c_type) = current.as_ref().unwrap_or_else(|| panic!("abi_layout.txt: field {field} before any struct"));
                rust.push_str(&format!(
                    "const _: () = assert!(::core::mem::offset_of!({name}, {field}) == {offset}, \"HIP ABI: {name}.{field} is not at offset {offset}\");\n"
                ));
                c.push_str(&format!(
                    "_Static_assert(offsetof({c_type}, {c_field}) == {offset}, \"HIP ABI: {name}.{c_field} is not at offset {offset}\");\n"
                ));
            }
            AbiItem::Const { name, value, headers } => {
                close_c_group(&mut c, &mut c_group_open);
                current = None;
                rust.push_str(&format!("const _: () = assert!({name} as i64 == {value}, \"HIP ABI: {name} is not {value}\");\n"));
                let line = format!("_Static_assert({name} == {value}, \"HIP ABI: {name} is not {value}\");\n");
                if let Some(condition) = headers {
                    c.push_str(&format!("#if {condition}\n{line}#endif\n"));
                } else {
                    c.push_str(&line);
                }
            }
        }
    }
    close_c_group(&mut c, &mut c_group_open);
    std::fs::write(out_dir.join("hip_abi_checks.rs"), rust).expect("writing hip_abi_checks.rs");
    let c_file = out_dir.join("hip_abi_checks.c");
    std::fs::write(&c_file, c).expect("writing hip_abi_checks.c");
    // Syntax only: the assertions are the product, there is nothing to link.
    let compiler = cc::Build::new().cargo_metadata(false).get_compiler();
    let output = compiler
        .to_command()
        .arg("-fsyntax-only")
        .arg("-D__HIP_PLATFORM_AMD__")
        .arg(format!("-I{}", headers.include_dir.display()))
        .arg(format!("-I{}", crate_dir.join("src/hip").display()))
        .arg(&c_file)
        .output()
        .unwrap_or_else(|e| panic!("running the C compiler for the HIP ABI checks: {e}"));
    if !output.status.success() {
        panic!(
            "the HIP headers in {} do not match the HIP ABI this driver speaks (src/hip/abi_layout.txt):\n{}",
            headers.include_dir.display(),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

fn compile_iree_link_shim() {
    println!("cargo:rerun-if-changed=src/registration/iree_link_shim.c");
    let mut build = cc::Build::new();
    build.file("src/registration/iree_link_shim.c").flag_if_supported("-Wall").flag_if_supported("-Wextra");
    // IREE 3.13's C driver has one flag more (--hip_async_caching).
    if std::env::var_os("CARGO_FEATURE_IREE_3_13").is_some() {
        build.define("IREE_HAL_HIP_RS_IREE_3_13", None);
    }
    build.compile("iree_hal_hip_rs_iree_link_shim");
    // IREE's device tracing API, weakly referenced (src/profiling/tracy.rs).
    println!("cargo:rerun-if-changed=src/profiling/tracing_glue.c");
    cc::Build::new()
        .file("src/profiling/tracing_glue.c")
        .flag_if_supported("-Wall")
        .flag_if_supported("-Wextra")
        .compile("iree_hal_hip_rs_tracing_glue");
}

fn generate_c_header(crate_dir: &Path, out_dir: &Path) {
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rerun-if-env-changed=IREE_HAL_HIP_RS_WRITE_HEADER");
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("cbindgen.toml is invalid");
    match cbindgen::Builder::new().with_crate(crate_dir).with_config(config).generate() {
        Ok(bindings) => {
            let mut text = Vec::new();
            bindings.write(&mut text);
            let header = v3_3_header(&String::from_utf8(text).expect("cbindgen writes UTF-8"));
            std::fs::write(out_dir.join("iree_hal_hip_rs.h"), &header).expect("writing the C header");
            if std::env::var_os("IREE_HAL_HIP_RS_WRITE_HEADER").is_some() {
                std::fs::write(crate_dir.join("include/iree_hal_hip_rs.h"), &header).expect("writing include/iree_hal_hip_rs.h");
            }
        }
        Err(error) => panic!("cbindgen failed to generate the C header: {error}"),
    }
}

/// The header describes IREE v3.3.0's ABI, the default build: cbindgen marks what differs
/// for IREE 3.13 with `IREE_HAL_HIP_RS_IREE_3_13` (cbindgen.toml), and this keeps the
/// v3.3.0 side only. (The 3.13 build's C users include IREE 3.13's own headers.) A field's
/// closing `;` follows cbindgen's `#endif`, and goes with it.
fn v3_3_header(text: &str) -> String {
    const ONLY_3_13: &str = "#if defined(IREE_HAL_HIP_RS_IREE_3_13)";
    const NOT_3_13: &str = "#if !defined(IREE_HAL_HIP_RS_IREE_3_13)";
    let mut out = String::with_capacity(text.len());
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        match line.trim() {
            ONLY_3_13 => {
                for skipped in lines.by_ref() {
                    if skipped.trim() == "#endif" {
                        break;
                    }
                }
                if lines.peek().map(|next| next.trim()) == Some(";") {
                    lines.next();
                }
                // The blank line that separated the dropped item from the next one.
                if out.ends_with("\n\n") && lines.peek().map(|next| next.trim().is_empty()) == Some(true) {
                    lines.next();
                }
            }
            NOT_3_13 => {
                for kept in lines.by_ref() {
                    if kept.trim() == "#endif" {
                        break;
                    }
                    out.push_str(kept);
                    out.push('\n');
                }
                if lines.peek().map(|next| next.trim()) == Some(";") {
                    lines.next();
                    out.truncate(out.trim_end().len());
                    out.push_str(";\n");
                }
            }
            _ => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

/// IREE 3.13's runtime sources (`iree/` of eerie-sys 0.5.0): `$IREE_3_13_SOURCE_DIR`, or
/// what `tools/iree-source/locate.sh 3.13` finds (downloading it through cargo).
fn locate_iree_3_13(crate_dir: &Path) -> PathBuf {
    println!("cargo:rerun-if-env-changed=IREE_3_13_SOURCE_DIR");
    if let Some(dir) = std::env::var_os("IREE_3_13_SOURCE_DIR") {
        return PathBuf::from(dir);
    }
    let output = std::process::Command::new("bash")
        .arg(crate_dir.join("tools/iree-source/locate.sh"))
        .arg("3.13")
        .output()
        .unwrap_or_else(|e| panic!("running tools/iree-source/locate.sh 3.13: {e}"));
    if !output.status.success() {
        panic!(
            "the iree-3-13 feature needs IREE 3.13's sources: tools/iree-source/locate.sh 3.13 failed \
             ({}); set IREE_3_13_SOURCE_DIR to an IREE 3.13 tree",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    PathBuf::from(String::from_utf8_lossy(&output.stdout).trim())
}

/// IREE 3.13's own types the 3.13 ABI passes (`src/abi/iree_3_13.rs`).
const IREE_3_13_TYPES: &[&str] = &[
    "iree_async_semaphore_t",
    "iree_async_semaphore_timepoint_t",
    "iree_async_semaphore_timepoint_fn_t",
    "iree_async_frontier_t",
    "iree_async_proactor_t",
    "iree_async_proactor_pool_t",
    "iree_async_file_t",
    "iree_async_wait_flags_t",
    "iree_async_wait_mode_t",
    "iree_async_wait_mode_e",
    "iree_hal_alloca_flag_bits_t",
    "iree_hal_dealloca_flag_bits_t",
    "iree_hal_execute_flag_bits_t",
    "iree_hal_host_call_flag_bits_e",
    "iree_hal_alloca_flags_t",
    "iree_hal_dealloca_flags_t",
    "iree_hal_execute_flags_t",
    "iree_hal_host_call_flags_t",
    "iree_hal_host_call_t",
    "iree_hal_host_call_context_t",
    "iree_hal_pool_t",
    "iree_hal_physical_memory_t",
    "iree_hal_memory_protection_t",
    "iree_hal_memory_advice_t",
    "iree_hal_device_create_params_t",
    "iree_hal_device_capabilities_t",
    "iree_hal_device_topology_info_t",
    "iree_hal_topology_edge_t",
    "iree_hal_queue_pool_backend_t",
    "iree_hal_pool_reservation_t",
    "iree_hal_pool_acquire_result_e",
    "iree_hal_pool_reserve_flag_bits_e",
    "iree_hal_slab_provider_t",
    "iree_hal_slab_provider_vtable_t",
    "iree_hal_slab_t",
    "iree_hal_slab_provider_stats_t",
    "iree_hal_slab_provider_visited_set_t",
    "iree_hal_slab_provider_trim_flags_t",
    "iree_async_notification_t",
    "iree_hal_device_external_capture_options_t",
    "iree_hal_device_profiling_options_t",
    "iree_hal_dispatch_config_t",
    "iree_hal_executable_function_t",
    "iree_hal_executable_function_info_t",
    "iree_hal_executable_function_parameter_t",
    "iree_hal_external_timepoint_t",
    "iree_hal_external_timepoint_type_t",
    "iree_hal_external_timepoint_flags_t",
    // HAL-native profiling (src/profiling/iree_sink.rs): the sink, its chunks' metadata and
    // the record types of profile_schema.h, with their flag and type enums.
    "iree_hal_profile_.*",
    "iree_hal_device_profiling_.*",
];

/// Types both IREE versions have, mirrored by hand in `src/abi/` (and checked against both
/// versions' headers): bindgen names them rather than defining them again. The list is
/// every type `src/abi/` defines (a test compares them).
const OUR_MIRRORS: &[&str] = &[
    "iree_allocator_alloc_params_t",
    "iree_allocator_command_t",
    "iree_allocator_ctl_fn_t",
    "iree_allocator_t",
    "iree_byte_span_t",
    "iree_const_byte_span_t",
    "iree_device_size_t",
    "iree_duration_t",
    "iree_hal_access_scope_t",
    "iree_hal_allocator_memory_heap_t",
    "iree_hal_allocator_pool_t",
    "iree_hal_allocator_statistics_t",
    "iree_hal_allocator_t",
    "iree_hal_allocator_vtable_t",
    "iree_hal_buffer_barrier_t",
    "iree_hal_buffer_binding_requirements_t",
    "iree_hal_buffer_binding_t",
    "iree_hal_buffer_binding_table_t",
    "iree_hal_buffer_compatibility_t",
    "iree_hal_buffer_mapping_impl_t",
    "iree_hal_buffer_mapping_t",
    "iree_hal_buffer_overlap_t",
    "iree_hal_buffer_params_t",
    "iree_hal_buffer_placement_flags_t",
    "iree_hal_buffer_placement_t",
    "iree_hal_buffer_ref_list_t",
    "iree_hal_buffer_ref_t",
    "iree_hal_buffer_release_callback_t",
    "iree_hal_buffer_release_fn_t",
    "iree_hal_buffer_t",
    "iree_hal_buffer_usage_t",
    "iree_hal_buffer_vtable_t",
    "iree_hal_channel_flags_t",
    "iree_hal_channel_params_t",
    "iree_hal_channel_provider_t",
    "iree_hal_channel_provider_vtable_t",
    "iree_hal_channel_t",
    "iree_hal_channel_vtable_t",
    "iree_hal_collective_element_type_t",
    "iree_hal_collective_kind_t",
    "iree_hal_collective_op_t",
    "iree_hal_collective_reduction_t",
    "iree_hal_command_buffer_mode_t",
    "iree_hal_command_buffer_t",
    "iree_hal_command_buffer_validation_state_t",
    "iree_hal_command_buffer_vtable_t",
    "iree_hal_command_category_t",
    "iree_hal_copy_flags_t",
    "iree_hal_device_feature_t",
    "iree_hal_device_id_t",
    "iree_hal_device_info_t",
    "iree_hal_device_profiling_mode_t",
    "iree_hal_device_t",
    "iree_hal_device_vtable_t",
    "iree_hal_dispatch_flags_t",
    "iree_hal_driver_factory_t",
    "iree_hal_driver_info_t",
    "iree_hal_driver_registry_t",
    "iree_hal_driver_t",
    "iree_hal_driver_vtable_t",
    "iree_hal_event_flags_t",
    "iree_hal_event_t",
    "iree_hal_event_vtable_t",
    "iree_hal_executable_cache_t",
    "iree_hal_executable_cache_vtable_t",
    "iree_hal_executable_caching_mode_t",
    "iree_hal_executable_params_t",
    "iree_hal_executable_t",
    "iree_hal_executable_vtable_t",
    "iree_hal_execution_barrier_flags_t",
    "iree_hal_execution_stage_t",
    "iree_hal_external_buffer_device_allocation_t",
    "iree_hal_external_buffer_flags_t",
    "iree_hal_external_buffer_handle_t",
    "iree_hal_external_buffer_host_allocation_t",
    "iree_hal_external_buffer_opaque_fd_t",
    "iree_hal_external_buffer_opaque_win32_t",
    "iree_hal_external_buffer_t",
    "iree_hal_external_buffer_type_t",
    "iree_hal_external_file_flags_t",
    "iree_hal_file_mode_t",
    "iree_hal_file_t",
    "iree_hal_file_vtable_t",
    "iree_hal_fill_flags_t",
    "iree_hal_hip_command_buffer_mode_t",
    "iree_hal_hip_device_params_t",
    "iree_hal_hip_driver_options_t",
    "iree_hal_hip_memory_pool_params_t",
    "iree_hal_hip_memory_pooling_params_t",
    "iree_hal_hip_nccl_id_t",
    "iree_hal_label_color_t",
    "iree_hal_label_location_t",
    "iree_hal_mapping_mode_t",
    "iree_hal_memory_access_t",
    "iree_hal_memory_advise_flags_t",
    "iree_hal_memory_barrier_t",
    "iree_hal_memory_type_t",
    "iree_hal_queue_affinity_t",
    "iree_hal_read_flags_t",
    "iree_hal_resource_t",
    "iree_hal_resource_vtable_t",
    "iree_hal_semaphore_compatibility_t",
    "iree_hal_semaphore_flags_t",
    "iree_hal_semaphore_list_t",
    "iree_hal_semaphore_t",
    "iree_hal_semaphore_vtable_t",
    "iree_hal_transfer_buffer_flags_t",
    "iree_hal_update_flags_t",
    "iree_hal_wait_mode_t",
    "iree_hal_write_flags_t",
    "iree_host_size_t",
    "iree_io_file_access_t",
    "iree_io_file_handle_fields_t",
    "iree_io_file_handle_primitive_t",
    "iree_io_file_handle_primitive_value_t",
    "iree_io_file_handle_release_callback_t",
    "iree_io_file_handle_release_fn_t",
    "iree_io_file_handle_t",
    "iree_io_file_handle_type_t",
    "iree_loop_command_t",
    "iree_loop_ctl_fn_t",
    "iree_loop_t",
    "iree_status_code_t",
    "iree_status_handle_t",
    "iree_status_payload_formatter_t",
    "iree_status_payload_message_t",
    "iree_status_payload_t",
    "iree_status_payload_type_t",
    "iree_status_storage_t",
    "iree_status_t",
    "iree_string_builder_layout_t",
    "iree_string_builder_t",
    "iree_string_pair_t",
    "iree_string_view_t",
    "iree_time_t",
    "iree_timeout_t",
    "iree_timeout_type_t",
    "iree_wait_primitive_type_t",
    "iree_wait_source_command_t",
    "iree_wait_source_ctl_fn_t",
    "iree_wait_source_export_params_t",
    "iree_wait_source_t",
    "iree_wait_source_wait_params_t",
];

/// IREE 3.13 only: the layouts that depend on IREE's build configuration (its async
/// semaphore embeds IREE's mutex) come from IREE's own headers through bindgen, as opaque
/// blobs of the right size and alignment, and the glue that calls IREE's async semaphore
/// functions (src/iree_3_13/async_glue.c) is compiled against the same headers.
/// `IREE_3_13_CFLAGS` passes IREE build options (`-DIREE_...`) that change those layouts.
fn build_iree_3_13_glue(crate_dir: &Path, out_dir: &Path) {
    let iree = locate_iree_3_13(crate_dir);
    let include = iree.join("runtime/src");
    println!("cargo:rerun-if-env-changed=IREE_3_13_CFLAGS");
    println!("cargo:rerun-if-changed=src/iree_3_13/async_glue.c");
    println!("cargo:rerun-if-changed=src/iree_3_13/pool_glue.c");
    println!("cargo:rerun-if-changed=src/iree_3_13/iree_3_13.h");
    let extra_flags: Vec<String> =
        std::env::var("IREE_3_13_CFLAGS").unwrap_or_default().split_whitespace().map(str::to_owned).collect();
    // The types only IREE 3.13 has, as IREE 3.13's headers define them; the types both
    // versions share are our mirrors (src/abi/), which bindgen's output names.
    let mut builder = bindgen::Builder::default()
        .header(crate_dir.join("src/iree_3_13/iree_3_13.h").display().to_string())
        .clang_arg(format!("-I{}", include.display()))
        .clang_args(&extra_flags)
        .raw_line("use crate::abi::*;")
        .opaque_type("iree_async_semaphore_t")
        .opaque_type("iree_async_semaphore_timepoint_t")
        .opaque_type("iree_async_frontier_t")
        .opaque_type("iree_async_notification_t")
        .opaque_type("iree_slim_mutex_t")
        .blocklist_function(".*")
        // Constants of the enums we mirror come from our mirrors.
        .blocklist_item("IREE_ALLOCATOR_COMMAND_.*")
        .blocklist_item("IREE_TIMEOUT_.*")
        .blocklist_item("IREE_STATUS_.*")
        .blocklist_item("iree_status_code_e")
        .blocklist_item("iree_(allocator_command|timeout_type)_e")
        .default_enum_style(bindgen::EnumVariation::Consts)
        .prepend_enum_name(false)
        .derive_default(true)
        .layout_tests(true);
    for ty in IREE_3_13_TYPES {
        builder = builder.allowlist_type(ty);
    }
    for ty in OUR_MIRRORS {
        builder = builder.blocklist_type(ty);
    }
    let bindings = builder
        .generate()
        .unwrap_or_else(|e| panic!("bindgen failed on IREE 3.13's headers in {}: {e}", include.display()));
    bindings.write_to_file(out_dir.join("iree_3_13_types.rs")).expect("writing iree_3_13_types.rs");
    let mut build = cc::Build::new();
    // IREE's headers as system headers (their own warnings are not ours); gnu11 as IREE builds.
    build
        .file("src/iree_3_13/async_glue.c")
        .file("src/iree_3_13/pool_glue.c")
        .flag("-isystem")
        .flag(include.display().to_string())
        .flag_if_supported("-Wall")
        .flag("-std=gnu11");
    for flag in &extra_flags {
        build.flag(flag);
    }
    build.compile("iree_hal_hip_rs_iree_3_13_async_glue");
    generate_iree_3_13_reference(&include, &extra_flags, out_dir);
}

/// For the 3.13 layout test (tests/iree_3_13_layout.rs) only: every type `src/abi/` mirrors,
/// as IREE 3.13's headers define it, to compare sizes, alignments, offsets and constants
/// with. Nothing in the library uses it.
fn generate_iree_3_13_reference(include: &Path, extra_flags: &[String], out_dir: &Path) {
    println!("cargo:rerun-if-changed=tests/iree_3_13_reference.h");
    let bindings = bindgen::Builder::default()
        .header("tests/iree_3_13_reference.h")
        .clang_arg(format!("-I{}", include.display()))
        .clang_args(extra_flags)
        .allowlist_type("iree_.*")
        .allowlist_var("IREE_.*")
        .blocklist_function(".*")
        .default_enum_style(bindgen::EnumVariation::Consts)
        .prepend_enum_name(false)
        .layout_tests(false)
        .generate()
        .unwrap_or_else(|e| panic!("bindgen failed on IREE 3.13's HAL headers in {}: {e}", include.display()));
    bindings.write_to_file(out_dir.join("iree_3_13_reference.rs")).expect("writing iree_3_13_reference.rs");
}

fn main() {
    let crate_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    generate_hip_types(&crate_dir, &out_dir);
    if std::env::var_os("CARGO_FEATURE_IREE_3_13").is_some() {
        build_iree_3_13_glue(&crate_dir, &out_dir);
    }
    compile_iree_link_shim();
    generate_c_header(&crate_dir, &out_dir);
}
