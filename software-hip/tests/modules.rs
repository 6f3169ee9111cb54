//! Module and launch plumbing up to the code-object layer.
#[macro_use]
mod common;
use common::*;

#[test]
fn invalid_images_handles_and_names_are_rejected() {
    init();
    let mut module = std::ptr::null_mut();
    let garbage = [0u8; 64];
    assert_eq!(hip_code!(hipModuleLoadData(&mut module, garbage.as_ptr().cast())), hipErrorInvalidImage);
    assert_eq!(
        hip_code!(hipModuleLoadDataEx(&mut module, garbage.as_ptr().cast(), 0, std::ptr::null_mut(), std::ptr::null_mut())),
        hipErrorInvalidImage
    );
    assert_eq!(hip_code!(hipModuleLoadData(&mut module, std::ptr::null())), hipErrorInvalidValue);
    assert_eq!(hip_code!(hipModuleLoadData(std::ptr::null_mut(), garbage.as_ptr().cast())), hipErrorInvalidValue);
    let mut function = std::ptr::null_mut();
    assert_eq!(
        hip_code!(hipModuleGetFunction(&mut function, 0x4242 as hipModule_t, c"main".as_ptr())),
        hipErrorInvalidHandle
    );
    assert_eq!(hip_code!(hipModuleUnload(0x4242 as hipModule_t)), hipErrorInvalidHandle);
    assert_eq!(
        hip_code!(hipModuleLaunchKernel(
            0x77 as hipFunction_t, 1, 1, 1, 1, 1, 1, 0, std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut()
        )),
        hipErrorInvalidDeviceFunction
    );
    let one = dim3 { x: 1, y: 1, z: 1 };
    assert_eq!(
        hip_code!(hipLaunchKernel(0x77 as *const c_void, one, one, std::ptr::null_mut(), 0, std::ptr::null_mut())),
        hipErrorInvalidDeviceFunction
    );
    assert_eq!(
        hip_code!(hipFuncSetAttribute(0x77 as *const c_void, hipFuncAttributeMaxDynamicSharedMemorySize, 1024)),
        hipErrorInvalidDeviceFunction
    );
}
