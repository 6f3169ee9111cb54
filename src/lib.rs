//! Rust replacement for IREE v3.3.0 HIP HAL driver.
