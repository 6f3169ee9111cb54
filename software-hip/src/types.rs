//! PLACEHOLDER — replaced at merge by the core's `types` module.
//!
//! The kernel/module layer depends only on the names below: the `hipError_t`
//! type and six error constants, with the numeric values of ROCm's headers.
#![allow(non_camel_case_types, non_upper_case_globals)]

pub type hipError_t = u32;

pub const hipErrorInvalidValue: hipError_t = 1;
pub const hipErrorOutOfMemory: hipError_t = 2;
pub const hipErrorInvalidConfiguration: hipError_t = 9;
pub const hipErrorInvalidImage: hipError_t = 200;
pub const hipErrorNotFound: hipError_t = 500;
pub const hipErrorLaunchFailure: hipError_t = 719;
