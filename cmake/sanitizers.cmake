# The sanitizer build (IREE_HAL_HIP_RS_SANITIZER_BUILD=ON; tools/sanitizers/run.sh runs it,
# tools/sanitizers/README.md says what it covers). Included by CMakeLists.txt before any
# target is defined.
#
# Every C and C++ file of the build tree (IREE v3.3.0's C runtime and host tools,
# googletest, IREE's HAL CTS and our C tests) is compiled with AddressSanitizer and
# UndefinedBehaviorSanitizer, UB made fatal (-fno-sanitize-recover=all), and LeakSanitizer
# checks every test process at exit (ASan's, detect_leaks=1). Only what the CTS with our
# driver and the C tests need is configured: no IREE C driver CTS, examples, benchmarks or
# IREE tool builds.
#
# IREE_HAL_HIP_RS_RUST_ASAN=ON adds a second build of our library (and of the software HIP
# device, libamdhip64.so): nightly rustc with -Zsanitizer=address, the C shim in it
# (src/registration/iree_link_shim.c) compiled with -fsanitize=address by this build's C
# compiler. Every test that links our library is then defined once more, linked with that
# build (names ending in _rust_asan, CTS set rust_asan, label rust-asan), and loads the
# instrumented software HIP device. The ASan runtime in each program is the C compiler's
# (clang's), which nightly rustc's instrumentation calls into.

set(IREE_HAL_HIP_RS_SANITIZER_FLAGS
  -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
add_compile_options(${IREE_HAL_HIP_RS_SANITIZER_FLAGS})
add_link_options(-fsanitize=address,undefined)

# The suppressions (tools/sanitizers/*.supp) name only findings proven to be in code this
# project cannot change; each is documented where it is listed.
get_filename_component(_supp_dir "${CMAKE_CURRENT_LIST_DIR}/../tools/sanitizers" ABSOLUTE)
set(IREE_HAL_HIP_RS_ASAN_OPTIONS
  "detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1:fast_unwind_on_malloc=0")
# Reports need symbolized stacks: the suppressions match function names. The symbolizer of
# the compiler's own LLVM first (Debian: llvm-14, which clang-14 brings in).
string(REGEX MATCH "^[0-9]+" _llvm_major "${CMAKE_C_COMPILER_VERSION}")
find_program(IREE_HAL_HIP_RS_LLVM_SYMBOLIZER
  NAMES llvm-symbolizer-${_llvm_major} llvm-symbolizer
  HINTS /usr/lib/llvm-${_llvm_major}/bin)
if(NOT IREE_HAL_HIP_RS_LLVM_SYMBOLIZER)
  message(FATAL_ERROR "sanitizer build: llvm-symbolizer not found (Debian: apt-get install llvm-${_llvm_major}); "
                      "set IREE_HAL_HIP_RS_LLVM_SYMBOLIZER")
endif()
set(IREE_HAL_HIP_RS_SANITIZER_ENV
  "ASAN_SYMBOLIZER_PATH=${IREE_HAL_HIP_RS_LLVM_SYMBOLIZER}"
  "ASAN_OPTIONS=${IREE_HAL_HIP_RS_ASAN_OPTIONS}"
  "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1"
  "LSAN_OPTIONS=suppressions=${_supp_dir}/lsan.supp:print_suppressions=0")

# IREE's C driver's CTS (set iree_c, label iree-c-driver-cts) is left out unless asked for.
option(IREE_HAL_HIP_RS_SANITIZE_IREE_C_CTS "Sanitizer build: also the CTS with IREE's C HIP driver" OFF)

option(IREE_HAL_HIP_RS_RUST_ASAN
  "Sanitizer build: also build our library with the Rust address sanitizer (nightly) and run every test with it" OFF)
if(IREE_HAL_HIP_RS_RUST_ASAN)
  set(IREE_HAL_HIP_RS_RUST_ASAN_TOOLCHAIN nightly CACHE STRING
    "rustup toolchain that builds the library with -Zsanitizer=address")
  set(IREE_HAL_HIP_RS_RUST_ASAN_TARGET_DIR "${CMAKE_CURRENT_LIST_DIR}/../target-asan" CACHE PATH
    "Cargo target directory of the address-sanitized build of the library")
  # Sanitizer builds need an explicit --target (build scripts and proc macros then stay
  # uninstrumented, RUSTFLAGS going to the target crates only).
  set(IREE_HAL_HIP_RS_RUST_ASAN_TRIPLE x86_64-unknown-linux-gnu CACHE STRING
    "Rust target triple of the address-sanitized build")
  set(_triple "${IREE_HAL_HIP_RS_RUST_ASAN_TRIPLE}")
  string(REPLACE "-" "_" _triple_env "${_triple}")
  set(_asan_lib_dir "${IREE_HAL_HIP_RS_RUST_ASAN_TARGET_DIR}/${_triple}/release")
  add_custom_target(iree_hal_hip_rs_asan_cargo ALL
    COMMAND ${CMAKE_COMMAND} -E env
      "RUSTFLAGS=-Zsanitizer=address -Cforce-frame-pointers=yes"
      "CC_${_triple_env}=${CMAKE_C_COMPILER}"
      "CFLAGS_${_triple_env}=-fsanitize=address -fno-omit-frame-pointer"
      ${CARGO} +${IREE_HAL_HIP_RS_RUST_ASAN_TOOLCHAIN} build --release --target ${_triple}
      --package iree-hal-hip-rs --package software-hip
      --target-dir ${IREE_HAL_HIP_RS_RUST_ASAN_TARGET_DIR}
    WORKING_DIRECTORY ${CMAKE_CURRENT_LIST_DIR}/..
    BYPRODUCTS ${_asan_lib_dir}/libiree_hal_hip_rs.so ${_asan_lib_dir}/libiree_hal_hip_rs.a
               ${_asan_lib_dir}/libamdhip64.so
    COMMENT "cargo +${IREE_HAL_HIP_RS_RUST_ASAN_TOOLCHAIN} build --release --target ${_triple} (-Zsanitizer=address)"
    USES_TERMINAL)
  iree_hal_hip_rs_import_rust_library(iree_hal_hip_rs_asan ${_asan_lib_dir} iree_hal_hip_rs_asan_cargo)
  list(APPEND IREE_HAL_HIP_RS_RUST_BUILDS asan)
  set(IREE_HAL_HIP_RS_asan_TARGETS iree_hal_hip_rs_asan)
  set(IREE_HAL_HIP_RS_asan_LIB_DIR "${_asan_lib_dir}")
  set(IREE_HAL_HIP_RS_asan_SUFFIX _rust_asan)
  set(IREE_HAL_HIP_RS_asan_LABELS rust-asan)
  set(IREE_HAL_HIP_RS_asan_CTS_SET rust_asan)

  # The canary (tools/sanitizers/canary.sh): a Rust staticlib built exactly like the library
  # above, with a heap overflow and a leak, called from a C program of this build. Its two
  # tests pass only when the sanitizers report both: the instrumentation and the runtime
  # work together in this very build, not just in principle.
  set(_canary_src "${_supp_dir}/canary")
  set(_canary_target_dir "${IREE_HAL_HIP_RS_RUST_ASAN_TARGET_DIR}/canary")
  set(_canary_lib "${_canary_target_dir}/${_triple}/release/libsanitizer_canary.a")
  add_custom_command(
    OUTPUT ${_canary_lib}
    COMMAND ${CMAKE_COMMAND} -E env
      "RUSTFLAGS=-Zsanitizer=address -Cforce-frame-pointers=yes"
      ${CARGO} +${IREE_HAL_HIP_RS_RUST_ASAN_TOOLCHAIN} build --release --locked --target ${_triple}
      --manifest-path ${_canary_src}/Cargo.toml --target-dir ${_canary_target_dir}
    DEPENDS ${_canary_src}/Cargo.toml ${_canary_src}/Cargo.lock ${_canary_src}/src/lib.rs
    COMMENT "sanitizer canary (cargo +${IREE_HAL_HIP_RS_RUST_ASAN_TOOLCHAIN}, -Zsanitizer=address)")
  add_custom_target(sanitizer_canary_cargo DEPENDS ${_canary_lib})
  add_executable(sanitizer_canary ${_canary_src}/main.c)
  target_link_libraries(sanitizer_canary PRIVATE ${_canary_lib} pthread dl m)
  add_dependencies(sanitizer_canary sanitizer_canary_cargo)
  add_test(NAME sanitizer_canary_rust_asan_overflow
    COMMAND ${_supp_dir}/canary.sh $<TARGET_FILE:sanitizer_canary> overflow)
  add_test(NAME sanitizer_canary_rust_asan_leak
    COMMAND ${_supp_dir}/canary.sh $<TARGET_FILE:sanitizer_canary> leak)
  set_tests_properties(sanitizer_canary_rust_asan_overflow sanitizer_canary_rust_asan_leak
    PROPERTIES LABELS "sanitizer-canary;rust-asan" ENVIRONMENT "${IREE_HAL_HIP_RS_SANITIZER_ENV}")
endif()
