//! The built libamdhip64.so: soname, IREE's symbol table, and symbol hiding.
use std::path::{Path, PathBuf};

/// IREE v3.3.0's HIP symbol table (dynamic_symbol_tables.h), checked against the source too
/// when it can be found.
const IREE_HIP_SYMBOLS: &[&str] = &[
    "hipCtxSetCurrent", "hipCtxGetCurrent", "hipCtxPushCurrent", "hipCtxPopCurrent", "hipDeviceCanAccessPeer",
    "hipDeviceEnablePeerAccess", "hipDeviceGet", "hipDeviceGetAttribute", "hipDeviceGetName", "hipDeviceGetUuid",
    "hipDevicePrimaryCtxRelease", "hipDevicePrimaryCtxRetain", "hipDrvGraphAddMemcpyNode", "hipEventCreate",
    "hipEventCreateWithFlags", "hipEventDestroy", "hipEventElapsedTime", "hipEventQuery", "hipEventRecord",
    "hipEventSynchronize", "hipFree", "hipFreeAsync", "hipFuncSetAttribute", "hipGetDeviceCount",
    "hipGetDeviceProperties", "hipGetErrorName", "hipGetErrorString", "hipGraphAddEmptyNode",
    "hipGraphAddEventRecordNode", "hipGraphAddKernelNode", "hipGraphAddMemsetNode", "hipGraphCreate",
    "hipGraphDestroy", "hipGraphExecDestroy", "hipGraphInstantiate", "hipGraphLaunch", "hipHostFree",
    "hipHostGetDevicePointer", "hipHostMalloc", "hipHostRegister", "hipHostUnregister", "hipInit",
    "hipLaunchHostFunc", "hipLaunchKernel", "hipMalloc", "hipMallocFromPoolAsync", "hipMallocManaged",
    "hipMallocAsync", "hipMemcpy", "hipMemcpyAsync", "hipMemcpyHtoDAsync", "hipMemPoolCreate", "hipMemPoolDestroy",
    "hipMemPoolGetAttribute", "hipMemPoolSetAttribute", "hipMemPoolTrimTo", "hipMemPrefetchAsync", "hipMemset",
    "hipMemsetAsync", "hipMemsetD8Async", "hipMemsetD16Async", "hipMemsetD32Async", "hipModuleGetFunction",
    "hipModuleLaunchKernel", "hipModuleLoadData", "hipModuleLoadDataEx", "hipModuleUnload", "hipSetDevice",
    "hipStreamCreateWithFlags", "hipStreamDestroy", "hipStreamSynchronize", "hipStreamWaitEvent",
];

/// What IREE 3.13's HIP symbol table (eerie-sys 0.5.0) adds to v3.3.0's.
const IREE_313_EXTRA_HIP_SYMBOLS: &[&str] = &["hipFuncGetAttribute", "hipGetLastError", "hipModuleGetGlobal"];

fn built_library() -> PathBuf {
    let deps = std::env::current_exe().unwrap().parent().unwrap().to_path_buf();
    [deps.join("libamdhip64.so"), deps.parent().unwrap().join("libamdhip64.so")]
        .into_iter()
        .find(|path| path.exists())
        .expect("libamdhip64.so is built next to the tests")
}

/// Names declared in one of IREE's HIP driver symbol tables, when its source is available
/// (IREE_SOURCE_DIR or the cargo registry's eerie-sys 0.2.5).
fn iree_table_from_source(file: &str, prefix: &str) -> Option<Vec<String>> {
    let explicit = std::env::var_os("IREE_SOURCE_DIR").map(PathBuf::from);
    iree_table_from_crate(explicit, "eerie-sys-0.2.5", file, prefix)
}

/// The same table from `root` if given, else from the cargo registry's `crate_dir`.
fn iree_table_from_crate(root: Option<PathBuf>, crate_dir: &str, file: &str, prefix: &str) -> Option<Vec<String>> {
    let mut roots: Vec<PathBuf> = root.into_iter().collect();
    let registry = Path::new(&std::env::var("CARGO_HOME").unwrap_or_else(|_| format!("{}/.cargo", std::env::var("HOME").unwrap_or_default()))).join("registry/src");
    if let Ok(indexes) = std::fs::read_dir(registry) {
        roots.extend(indexes.flatten().map(|index| index.path().join(crate_dir).join("iree")));
    }
    let table = roots
        .iter()
        .map(|root| root.join("runtime/src/iree/hal/drivers/hip").join(file))
        .find(|path| path.exists())?;
    let text = std::fs::read_to_string(table).ok()?;
    // Entries look like `SOME_PFN_DECL(name, ...)` or `SOME_PFN_..._DECL...(name)`.
    Some(
        text.split("PFN_")
            .skip(1)
            .filter_map(|rest| {
                let open = rest.find('(')?;
                if !rest[..open].chars().all(|c| c.is_ascii_uppercase() || c == '_') {
                    return None;
                }
                Some(rest[open + 1..].split([',', ')']).next()?.trim().to_string())
            })
            .filter(|name| name.starts_with(prefix))
            .collect(),
    )
}

fn assert_matches_source(embedded: &[&str], file: &str, prefix: &str) {
    if let Some(mut from_source) = iree_table_from_source(file, prefix) {
        let mut embedded: Vec<String> = embedded.iter().map(|s| s.to_string()).collect();
        embedded.sort();
        from_source.sort();
        assert_eq!(embedded, from_source, "embedded list is out of date with IREE's {file}");
    } else if std::env::var("SOFTWARE_HIP_ALLOW_MISSING_IREE_HEADERS").as_deref() == Ok("1") {
        eprintln!("IREE source not found; {file} comparison does not run (SOFTWARE_HIP_ALLOW_MISSING_IREE_HEADERS=1)");
    } else {
        panic!(
            "IREE's {file} not found: run tools/iree-source/locate.sh (test.sh exports \
             IREE_SOURCE_DIR) or set IREE_SOURCE_DIR; SOFTWARE_HIP_ALLOW_MISSING_IREE_HEADERS=1 \
             skips this check"
        );
    }
}

fn exported(library: &libloading::Library, name: &str) -> bool {
    // SAFETY: only the address is looked up; nothing is called.
    unsafe { library.get::<*const ()>(name.as_bytes()) }.is_ok()
}

#[test]
fn library_has_the_real_soname() {
    let bytes = std::fs::read(built_library()).unwrap();
    assert!(bytes.windows(15).any(|w| w == b"libamdhip64.so\0"));
}

#[test]
fn every_symbol_of_iree_table_is_exported() {
    assert_matches_source(IREE_HIP_SYMBOLS, "dynamic_symbol_tables.h", "hip");
    // SAFETY: loading our own library runs no constructors with preconditions.
    let library = unsafe { libloading::Library::new(built_library()) }.unwrap();
    let missing: Vec<&str> = IREE_HIP_SYMBOLS.iter().copied().filter(|name| !exported(&library, name)).collect();
    assert!(missing.is_empty(), "missing exports: {missing:?}");
    // Beyond v3.3.0's table: IREE 3.13's HIP driver also loads hipFuncGetAttribute and
    // hipModuleGetGlobal; the stream memory operations (hipStreamWaitValue32/64,
    // hipStreamWriteValue32/64) are exported for drivers and tests that signal through memory.
    for extra in ["hipDeviceSynchronize", "hipGetLastError", "hipStreamCreate", "hipStreamQuery", "softhip_device_memory_usage",
                  "hipFuncGetAttribute", "hipModuleGetGlobal", "hipStreamWaitValue32", "hipStreamWaitValue64",
                  "hipStreamWriteValue32", "hipStreamWriteValue64"] {
        assert!(exported(&library, extra), "{extra}");
    }
    // The dlopened library works as a C library.
    unsafe {
        let init: libloading::Symbol<unsafe extern "C" fn(u32) -> u32> = library.get(b"hipInit").unwrap();
        let count: libloading::Symbol<unsafe extern "C" fn(*mut i32) -> u32> = library.get(b"hipGetDeviceCount").unwrap();
        assert_eq!(init(0), 0);
        let mut devices = 0;
        assert_eq!(count(&mut devices), 0);
        assert_eq!(devices, 2);
    }
}

/// IREE 3.13's C HIP driver loads three more symbols; checked against its table when the
/// 3.13 sources are there (IREE_313_SOURCE_DIR, or `tools/iree-source/locate.sh 3.13`'s
/// eerie-sys 0.5.0 in the cargo registry).
#[test]
fn every_symbol_of_iree_313_table_is_exported() {
    let mut expected: Vec<String> =
        IREE_HIP_SYMBOLS.iter().chain(IREE_313_EXTRA_HIP_SYMBOLS).map(|name| name.to_string()).collect();
    expected.sort();
    let explicit = std::env::var_os("IREE_313_SOURCE_DIR").map(PathBuf::from);
    match iree_table_from_crate(explicit, "eerie-sys-0.5.0", "dynamic_symbol_tables.h", "hip") {
        Some(mut from_source) => {
            from_source.sort();
            assert_eq!(expected, from_source, "IREE 3.13's dynamic_symbol_tables.h changed");
        }
        None => eprintln!("IREE 3.13 sources not found; only the embedded list is checked"),
    }
    // SAFETY: loading our own library runs no constructors with preconditions.
    let library = unsafe { libloading::Library::new(built_library()) }.unwrap();
    let missing: Vec<&String> = expected.iter().filter(|name| !exported(&library, name)).collect();
    assert!(missing.is_empty(), "missing exports: {missing:?}");
}

fn scratch_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("softhip-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn hidden_symbols_are_missing_from_the_written_copy() {
    let output = scratch_dir("hide-lib").join("libamdhip64.so");
    amdhip64::hide_symbols::write_copy_with_hidden_symbols(&built_library(), &output, &["hipMalloc", "hipDrvGraphAddMemcpyNode"]).unwrap();
    // SAFETY: a copy of our own library.
    let library = unsafe { libloading::Library::new(&output) }.unwrap();
    assert!(!exported(&library, "hipMalloc"));
    assert!(!exported(&library, "hipDrvGraphAddMemcpyNode"));
    assert!(exported(&library, "hipMallocAsync"), "neighbouring names survive");
    assert!(exported(&library, "hipFree"));
    let error = amdhip64::hide_symbols::write_copy_with_hidden_symbols(&built_library(), &output, &["hipNoSuchFunction"]).unwrap_err();
    assert!(error.contains("hipNoSuchFunction"));
    drop(library);
    let _ = std::fs::remove_dir_all(output.parent().unwrap());
}

#[test]
fn hide_tool_takes_names_from_the_environment() {
    let output = scratch_dir("hide-tool").join("libamdhip64.so");
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_softhip-hide-symbols"))
        .arg(built_library())
        .arg(&output)
        .env("SOFTWARE_HIP_HIDE_SYMBOLS", "hipGetDeviceProperties, hipMemPoolTrimTo")
        .status()
        .unwrap();
    assert!(status.success());
    // SAFETY: a copy of our own library.
    let library = unsafe { libloading::Library::new(&output) }.unwrap();
    assert!(!exported(&library, "hipGetDeviceProperties"));
    assert!(!exported(&library, "hipMemPoolTrimTo"));
    assert!(exported(&library, "hipGetDeviceCount"));
    drop(library);
    let _ = std::fs::remove_dir_all(output.parent().unwrap());
}

const RCCL_SYMBOLS: &[&str] = &[
    "ncclGetVersion", "ncclGetUniqueId", "ncclCommInitRankConfig", "ncclCommInitRank", "ncclCommInitAll",
    "ncclCommSplit", "ncclCommFinalize", "ncclCommDestroy", "ncclCommAbort", "ncclGetErrorString",
    "ncclGetLastError", "ncclCommGetAsyncError", "ncclCommCount", "ncclCommCuDevice", "ncclCommUserRank",
    "ncclRedOpCreatePreMulSum", "ncclRedOpDestroy", "ncclReduce", "ncclBcast", "ncclBroadcast", "ncclAllReduce",
    "ncclReduceScatter", "ncclAllGather", "ncclSend", "ncclRecv", "ncclGroupStart", "ncclGroupEnd",
];

#[test]
fn librccl_symlink_loads_the_same_runtime_with_iree_rccl_table() {
    let dir = scratch_dir("rccl");
    let link = dir.join("librccl.so");
    let _ = std::fs::remove_file(&link);
    assert_matches_source(RCCL_SYMBOLS, "rccl_dynamic_symbol_table.h", "nccl");
    std::os::unix::fs::symlink(built_library(), &link).unwrap();
    // SAFETY: our own library, loaded twice under two names.
    let hip = unsafe { libloading::Library::new(built_library()) }.unwrap();
    let rccl = unsafe { libloading::Library::new(&link) }.unwrap();
    let missing: Vec<&str> = RCCL_SYMBOLS.iter().copied().filter(|name| !exported(&rccl, name)).collect();
    assert!(missing.is_empty(), "missing RCCL exports: {missing:?}");
    // One loaded object: the same function address through either name.
    unsafe {
        let a: libloading::Symbol<*const ()> = hip.get(b"ncclAllReduce").unwrap();
        let b: libloading::Symbol<*const ()> = rccl.get(b"ncclAllReduce").unwrap();
        assert_eq!(*a, *b);
    }
    drop((hip, rccl));
    let _ = std::fs::remove_dir_all(dir);
}

/// The build puts `librccl.so` beside the library, linked to it: the software device is also
/// the RCCL, found where a driver looks for RCCL (beside its HIP runtime).
#[test]
fn librccl_is_linked_beside_the_library() {
    let library = built_library();
    let profile_dir = library.parent().unwrap();
    let profile_dir = if profile_dir.ends_with("deps") { profile_dir.parent().unwrap() } else { profile_dir };
    let rccl = profile_dir.join("librccl.so");
    assert_eq!(std::fs::read_link(&rccl).unwrap(), Path::new("libamdhip64.so"));
    assert_eq!(std::fs::canonicalize(&rccl).unwrap(), std::fs::canonicalize(profile_dir.join("libamdhip64.so")).unwrap());
}
