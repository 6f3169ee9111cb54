//! Placeholder until the software HIP runtime lands.
