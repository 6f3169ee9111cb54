//! Placeholder until the software HIP runtime lands (the core owns this file;
//! the kernels branch only needs the two module declarations below).
pub mod module;
pub mod types;
