//! The supported-ROCm table, tested: every function the driver requires is exported by every
//! supported ROCm release, and every optional one missing from a release is a documented
//! degradation. The export lists are facts from ROCm's own sources, kept as test data in
//! `tests/data/rocm/` (each file's header names the repository, file and tag per release);
//! the driver is also run against a copy of the software device stripped to each release's
//! exports.
mod common;
use common::*;
use iree_hal_hip_rs::hal_object::HalObject;
use iree_hal_hip_rs::hip::rccl::RcclSymbols;
use iree_hal_hip_rs::hip::version::MINIMUM_RUNTIME;
use iree_hal_hip_rs::hip::HipSymbols;
use std::collections::BTreeMap;
use std::path::Path;

static ALLOCATOR: CountingAllocator = CountingAllocator::new();

/// The releases the data covers, oldest first.
const RELEASES: &[&str] = &["5.2", "5.3", "5.4", "5.5", "5.6", "5.7", "6.0", "6.1", "6.2", "6.3", "6.4", "7.0", "7.1"];

/// Optional HIP functions absent from supported releases, and the releases: what README's
/// table lists as degraded. A new gap fails the test until it is documented here and there.
const DOCUMENTED_HIP_GAPS: &[(&str, &[&str])] = &[
    // Graph command buffers copy with hipGraphAddMemcpyNode1D instead.
    ("hipDrvGraphAddMemcpyNode", &["6.0"]),
];

/// The supported releases: from the driver's minimum runtime on.
fn supported() -> Vec<&'static str> {
    let minimum = format!("{}.{}", MINIMUM_RUNTIME.major(), MINIMUM_RUNTIME.minor());
    let first = RELEASES.iter().position(|r| *r == minimum).expect("the minimum runtime is a release of the data");
    RELEASES[first..].to_vec()
}

/// `name -> (first, last)` from a `name<TAB>first<TAB>last` file of `tests/data/rocm/`.
fn exports(file: &str) -> BTreeMap<String, (usize, usize)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rocm").join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let index = |release: &str| RELEASES.iter().position(|r| *r == release).unwrap_or_else(|| panic!("{file}: unknown release {release}"));
    text.lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            assert_eq!(fields.len(), 3, "{file}: malformed line {line:?}");
            (fields[0].to_owned(), (index(fields[1]), index(fields[2].trim())))
        })
        .collect()
}

fn exported_in(table: &BTreeMap<String, (usize, usize)>, name: &str, release: &str) -> bool {
    let at = RELEASES.iter().position(|r| *r == release).unwrap();
    table.get(name).is_some_and(|(first, last)| (*first..=*last).contains(&at))
}

#[test]
fn the_export_data_names_its_sources() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rocm/hip-exports.tsv");
    let header: String = std::fs::read_to_string(path).unwrap().lines().filter(|l| l.starts_with('#')).collect::<Vec<_>>().join("\n");
    // Each release opens a source line of the header ("#  6.1  ROCm/clr ...", "#  7.0, 7.1  ...").
    let sourced = |release: &str| {
        header.lines().any(|line| line.trim_start_matches('#').split([' ', ',']).filter(|word| !word.is_empty()).take(2).any(|word| word == release))
    };
    for release in RELEASES {
        assert!(sourced(release), "no source for {release}");
    }
    let hip = exports("hip-exports.tsv");
    assert!(hip.len() > 500, "{} HIP names", hip.len());
    // Facts the driver's design rests on, as the data records them.
    assert!(!exported_in(&hip, "hipDrvGraphAddMemcpyNode", "6.0") && exported_in(&hip, "hipDrvGraphAddMemcpyNode", "6.1"));
    assert!(exported_in(&hip, "hipGetDevicePropertiesR0600", "6.0") && !exported_in(&hip, "hipGetDevicePropertiesR0600", "5.7"));
    assert!(exported_in(&hip, "hipGetDeviceProperties", "7.1"), "the unversioned (R0000) entry stays");
}

#[test]
fn every_required_hip_function_is_exported_by_every_supported_release() {
    let hip = exports("hip-exports.tsv");
    let mut gaps: Vec<(String, Vec<&str>)> = Vec::new();
    for (name, required) in HipSymbols::TABLE {
        let missing: Vec<&str> = supported().into_iter().filter(|release| !exported_in(&hip, name, release)).collect();
        if *required {
            assert!(missing.is_empty(), "required {name} is missing from ROCm {missing:?}");
        } else if !missing.is_empty() {
            gaps.push((name.to_string(), missing));
        }
    }
    let documented: Vec<(String, Vec<&str>)> = DOCUMENTED_HIP_GAPS.iter().map(|(name, releases)| (name.to_string(), releases.to_vec())).collect();
    assert_eq!(gaps, documented, "optional functions missing from supported releases (document each in README's ROCm table)");
}

/// RCCL's data covers 5.2 to 6.3 (its header says why no later release could be read).
#[test]
fn every_rccl_function_is_exported_by_every_supported_release_the_data_covers() {
    let rccl = exports("rccl-exports.tsv");
    let newest = rccl.values().map(|(_, last)| *last).max().unwrap();
    let covered: Vec<&str> = supported().into_iter().filter(|release| RELEASES.iter().position(|r| r == release).unwrap() <= newest).collect();
    assert!(covered.contains(&"6.0") && covered.contains(&"6.3"), "{covered:?}");
    for (name, required) in RcclSymbols::TABLE {
        assert!(*required, "{name}: RCCL's table has no optional functions");
        for release in &covered {
            assert!(exported_in(&rccl, name, release), "required {name} is missing from RCCL of ROCm {release}");
        }
    }
}

/// The driver on the software device stripped to each supported release's exports (and
/// behaving as that release): it loads, leaves exactly the missing optional functions unset,
/// and a device works.
#[test]
fn the_driver_runs_on_each_supported_releases_exports() {
    let hip = exports("hip-exports.tsv");
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("rocm-exports-{}", std::process::id()));
    for release in supported() {
        let missing: Vec<String> = HipSymbols::TABLE.iter().filter(|(name, _)| !exported_in(&hip, name, release)).map(|(name, _)| name.to_string()).collect();
        let release_dir = dir.join(release);
        std::fs::create_dir_all(&release_dir).unwrap();
        let library = release_dir.join("libamdhip64.so");
        amdhip64::hide_symbols::write_copy_with_hidden_symbols(&software_hip_library(), &library, &missing).unwrap();
        run_in_child(
            "child_driver_on_release_exports",
            &[
                ("SOFTWARE_HIP_ROCM_RELEASE", release.to_owned()),
                ("ROCM_EXPORTS_TEST_LIBRARY", library.display().to_string()),
                ("ROCM_EXPORTS_TEST_MISSING", missing.join(",")),
            ],
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
#[ignore = "run by the_driver_runs_on_each_supported_releases_exports"]
fn child_driver_on_release_exports() {
    let library = std::path::PathBuf::from(std::env::var("ROCM_EXPORTS_TEST_LIBRARY").unwrap());
    let missing = std::env::var("ROCM_EXPORTS_TEST_MISSING").unwrap();
    let driver = software_driver_from(&library, ALLOCATOR.as_iree(), |_| {});
    let device = device_at(driver, "0", &[("command_buffer_mode", "graph")], ALLOCATOR.as_iree());
    let hip = unsafe { iree_hal_hip_rs::device::HipDevice::from_raw(device) }.unwrap().hip().clone();
    assert_eq!(hip.library_path, library);
    let mut unset: Vec<&str> = [
        ("hipDrvGraphAddMemcpyNode", hip.hipDrvGraphAddMemcpyNode.is_none()),
        ("hipGraphAddMemcpyNode1D", hip.hipGraphAddMemcpyNode1D.is_none()),
        ("hipGetDeviceProperties", hip.hipGetDeviceProperties.is_none()),
        ("hipModuleGetGlobal", hip.hipModuleGetGlobal.is_none()),
    ]
    .into_iter()
    .filter_map(|(name, unset)| unset.then_some(name))
    .collect();
    unset.sort_unstable();
    let mut missing: Vec<&str> = missing.split(',').filter(|name| !name.is_empty()).collect();
    missing.sort_unstable();
    assert_eq!(unset, missing);
    unsafe { iree_hal_hip_rs::hal_object::resource::release(device) };
    release_driver(driver);
}

#[test]
fn the_tables_optional_functions_are_the_ones_the_child_checks() {
    let optional: Vec<&str> = HipSymbols::TABLE.iter().filter(|(_, required)| !required).map(|(name, _)| *name).collect();
    assert_eq!(optional, ["hipDrvGraphAddMemcpyNode", "hipGetDeviceProperties", "hipGraphAddMemcpyNode1D", "hipModuleGetGlobal"]);
}
