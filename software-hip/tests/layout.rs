//! The hand-written C mirrors have the layouts and values of the HIP headers IREE builds
//! against. Always checked against known numbers; also against a C compiler over the
//! HIP 6 headers from IREE's source tree (a missing tree fails: `iree_headers`).
mod iree_headers;

use amdhip64::types::*;
use std::mem::{offset_of, size_of};

/// (C expression, value in Rust) pairs compared with the compiler.
fn rust_facts() -> Vec<(&'static str, u64)> {
    macro_rules! facts {
        ($($c:literal => $rust:expr),* $(,)?) => { vec![$(($c, $rust as u64)),*] };
    }
    facts![
        "sizeof(hipDeviceProp_tR0000)" => size_of::<hipDeviceProp_tR0000>(),
        "offsetof(hipDeviceProp_tR0000, totalGlobalMem)" => offset_of!(hipDeviceProp_tR0000, totalGlobalMem),
        "offsetof(hipDeviceProp_tR0000, warpSize)" => offset_of!(hipDeviceProp_tR0000, warpSize),
        "offsetof(hipDeviceProp_tR0000, maxThreadsDim)" => offset_of!(hipDeviceProp_tR0000, maxThreadsDim),
        "offsetof(hipDeviceProp_tR0000, totalConstMem)" => offset_of!(hipDeviceProp_tR0000, totalConstMem),
        "offsetof(hipDeviceProp_tR0000, major)" => offset_of!(hipDeviceProp_tR0000, major),
        "offsetof(hipDeviceProp_tR0000, arch)" => offset_of!(hipDeviceProp_tR0000, arch),
        "offsetof(hipDeviceProp_tR0000, maxSharedMemoryPerMultiProcessor)" => offset_of!(hipDeviceProp_tR0000, maxSharedMemoryPerMultiProcessor),
        "offsetof(hipDeviceProp_tR0000, gcnArchName)" => offset_of!(hipDeviceProp_tR0000, gcnArchName),
        "offsetof(hipDeviceProp_tR0000, integrated)" => offset_of!(hipDeviceProp_tR0000, integrated),
        "offsetof(hipDeviceProp_tR0000, hdpMemFlushCntl)" => offset_of!(hipDeviceProp_tR0000, hdpMemFlushCntl),
        "offsetof(hipDeviceProp_tR0000, memPitch)" => offset_of!(hipDeviceProp_tR0000, memPitch),
        "offsetof(hipDeviceProp_tR0000, managedMemory)" => offset_of!(hipDeviceProp_tR0000, managedMemory),
        "offsetof(hipDeviceProp_tR0000, pageableMemoryAccessUsesHostPageTables)" => offset_of!(hipDeviceProp_tR0000, pageableMemoryAccessUsesHostPageTables),
        "sizeof(HIP_MEMCPY3D)" => size_of::<HIP_MEMCPY3D>(),
        "offsetof(HIP_MEMCPY3D, srcMemoryType)" => offset_of!(HIP_MEMCPY3D, srcMemoryType),
        "offsetof(HIP_MEMCPY3D, srcHost)" => offset_of!(HIP_MEMCPY3D, srcHost),
        "offsetof(HIP_MEMCPY3D, srcPitch)" => offset_of!(HIP_MEMCPY3D, srcPitch),
        "offsetof(HIP_MEMCPY3D, dstXInBytes)" => offset_of!(HIP_MEMCPY3D, dstXInBytes),
        "offsetof(HIP_MEMCPY3D, dstMemoryType)" => offset_of!(HIP_MEMCPY3D, dstMemoryType),
        "offsetof(HIP_MEMCPY3D, dstDevice)" => offset_of!(HIP_MEMCPY3D, dstDevice),
        "offsetof(HIP_MEMCPY3D, WidthInBytes)" => offset_of!(HIP_MEMCPY3D, WidthInBytes),
        "offsetof(HIP_MEMCPY3D, Depth)" => offset_of!(HIP_MEMCPY3D, Depth),
        "sizeof(hipKernelNodeParams)" => size_of::<hipKernelNodeParams>(),
        "offsetof(hipKernelNodeParams, func)" => offset_of!(hipKernelNodeParams, func),
        "offsetof(hipKernelNodeParams, gridDim)" => offset_of!(hipKernelNodeParams, gridDim),
        "offsetof(hipKernelNodeParams, kernelParams)" => offset_of!(hipKernelNodeParams, kernelParams),
        "offsetof(hipKernelNodeParams, sharedMemBytes)" => offset_of!(hipKernelNodeParams, sharedMemBytes),
        "sizeof(hipMemsetParams)" => size_of::<hipMemsetParams>(),
        "offsetof(hipMemsetParams, elementSize)" => offset_of!(hipMemsetParams, elementSize),
        "offsetof(hipMemsetParams, value)" => offset_of!(hipMemsetParams, value),
        "offsetof(hipMemsetParams, width)" => offset_of!(hipMemsetParams, width),
        "sizeof(hipMemPoolProps)" => size_of::<hipMemPoolProps>(),
        "offsetof(hipMemPoolProps, location)" => offset_of!(hipMemPoolProps, location),
        "offsetof(hipMemPoolProps, reserved)" => offset_of!(hipMemPoolProps, reserved),
        "sizeof(hipPointerAttribute_t)" => size_of::<hipPointerAttribute_t>(),
        "offsetof(hipPointerAttribute_t, isManaged)" => offset_of!(hipPointerAttribute_t, isManaged),
        "sizeof(hipUUID)" => size_of::<hipUUID>(),
        "sizeof(dim3)" => size_of::<dim3>(),
        "hipMemoryTypeHost" => hipMemoryTypeHost,
        "hipMemoryTypeDevice" => hipMemoryTypeDevice,
        "hipMemoryTypeUnified" => hipMemoryTypeUnified,
        "hipMemPoolAttrUsedMemHigh" => hipMemPoolAttrUsedMemHigh,
        "hipDeviceAttributeMemoryPoolsSupported" => hipDeviceAttributeMemoryPoolsSupported,
        "hipDeviceAttributeMaxSharedMemoryPerBlock" => hipDeviceAttributeMaxSharedMemoryPerBlock,
        "hipDeviceAttributeWarpSize" => hipDeviceAttributeWarpSize,
        "hipDeviceAttributeWallClockRate" => hipDeviceAttributeWallClockRate,
        "hipErrorPeerAccessAlreadyEnabled" => hipErrorPeerAccessAlreadyEnabled,
        "hipErrorTbd" => hipErrorTbd,
        "hipStreamNonBlocking" => hipStreamNonBlocking,
        "hipStreamWaitValueGte" => hipStreamWaitValueGte,
        "hipStreamWaitValueEq" => hipStreamWaitValueEq,
        "hipStreamWaitValueAnd" => hipStreamWaitValueAnd,
        "hipStreamWaitValueNor" => hipStreamWaitValueNor,
        "hipDeviceAttributeCanUseStreamWaitValue" => hipDeviceAttributeCanUseStreamWaitValue,
        "hipEventDisableTiming" => hipEventDisableTiming,
        "hipFuncAttributeMaxDynamicSharedMemorySize" => hipFuncAttributeMaxDynamicSharedMemorySize,
        "HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES" => HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
        "HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES" => HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        "HIP_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT" => HIP_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
    ]
}

#[test]
fn layouts_match_known_hip_values() {
    let facts: std::collections::HashMap<_, _> = rust_facts().into_iter().collect();
    assert_eq!(facts["sizeof(hipDeviceProp_tR0000)"], 792);
    assert_eq!(facts["offsetof(hipDeviceProp_tR0000, maxThreadsDim)"], 284);
    assert_eq!(facts["offsetof(hipDeviceProp_tR0000, gcnArchName)"], 396);
    assert_eq!(facts["sizeof(HIP_MEMCPY3D)"], 184);
    assert_eq!(facts["sizeof(hipKernelNodeParams)"], 64);
    assert_eq!(facts["sizeof(hipMemsetParams)"], 48);
    assert_eq!(facts["sizeof(hipMemPoolProps)"], 88);
    assert_eq!(facts["sizeof(hipPointerAttribute_t)"], 32);
    assert_eq!(facts["hipMemoryTypeHost"], 1);
    assert_eq!(facts["hipDeviceAttributeMemoryPoolsSupported"], 88);
}


#[test]
fn layouts_match_the_c_compiler_over_iree_hip_headers() {
    let Some(include) = iree_headers::iree_hip_headers() else {
        return;
    };
    let facts = rust_facts();
    let dir = std::env::temp_dir().join(format!("softhip-layout-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut program = String::from(
        "#define __HIP_PLATFORM_AMD__\n#include <hip/hip_runtime_api.h>\n#include <hip/hip_deprecated.h>\n#include <stddef.h>\n#include <stdio.h>\nint main(void) {\n",
    );
    for (expression, _) in &facts {
        program.push_str(&format!("  printf(\"%llu\\n\", (unsigned long long)({expression}));\n"));
    }
    program.push_str("  return 0;\n}\n");
    std::fs::write(dir.join("layout.c"), program).unwrap();
    let compiled = std::process::Command::new("cc")
        .arg("-I")
        .arg(&include)
        .arg(dir.join("layout.c"))
        .arg("-o")
        .arg(dir.join("layout"))
        .status();
    match compiled {
        Ok(status) if status.success() => {}
        other => panic!("compiling the layout probe failed: {other:?}"),
    }
    let output = std::process::Command::new(dir.join("layout")).output().unwrap();
    let values: Vec<u64> = String::from_utf8(output.stdout).unwrap().lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(values.len(), facts.len());
    for ((expression, rust), c) in facts.iter().zip(values) {
        assert_eq!(*rust, c, "{expression}: Rust {rust}, C {c}");
    }
    let _ = std::fs::remove_dir_all(dir);
}
