//! SOFTWARE_HIP_FAIL: the Nth call of a named function fails (own process, env set first).
#[macro_use]
mod common;
use common::*;

#[test]
fn nth_call_of_a_named_function_fails_with_the_given_error() {
    std::env::set_var("SOFTWARE_HIP_FAIL", "hipMalloc:3:hipErrorOutOfMemory,hipStreamCreate:1:hipErrorInvalidValue");
    init();
    let mut pointers = Vec::new();
    let mut codes = Vec::new();
    for _ in 0..4 {
        let mut pointer = std::ptr::null_mut();
        codes.push(hip_code!(hipMalloc(&mut pointer, 64)));
        pointers.push(pointer);
    }
    assert_eq!(codes, vec![hipSuccess, hipSuccess, hipErrorOutOfMemory, hipSuccess]);
    assert!(pointers[2].is_null(), "the failed call allocated nothing");
    let mut stream = std::ptr::null_mut();
    assert_eq!(hip_code!(hipStreamCreate(&mut stream)), hipErrorInvalidValue);
    hip_ok!(hipStreamCreate(&mut stream));
    hip_ok!(hipStreamDestroy(stream));
    for pointer in pointers.into_iter().filter(|p| !p.is_null()) {
        hip_ok!(hipFree(pointer));
    }
}
