# Adds IREE's C runtime (from the eerie-sys source copy) to this build with
# only what the HIP conformance tests need: the HAL, the HIP driver and its
# registration module, googletest and the flatcc/embed-data host tools.
#
# Design notes:
# - IREE_BUILD_TESTS stays OFF. With it ON, IREE would define hundreds of its
#   own tests (and register them with CTest), most of which need iree-compile.
#   The few test-only pieces the CTS needs (gtest_main, header-only CTS
#   libraries) are defined by iree_cts_define_support_targets() below instead.
# - IREE is added with EXCLUDE_FROM_ALL so `ninja` (all) only builds the CTS
#   binaries and whatever they link, never IREE's tools or samples.
# - No GPU SDK is needed: the HIP driver compiles against the headers bundled
#   in $IREE/third_party/hip-build-deps and loads libamdhip64.so at run time.

include_guard(GLOBAL)

# Finds IREE's source tree: an explicit -DIREE_SOURCE_DIR wins, otherwise the
# workspace's tools/iree-source/locate.sh (which asks cargo for eerie-sys).
#   iree_cts_locate_iree_source(<out_var>
#     [VERSION <v>]    argument of locate.sh (default: none, IREE v3.3.0; "3.13")
#     [MARKER <path>]  file that must exist in the tree (default: v3.3.0's CTS
#                      template runtime/src/iree/hal/cts/cts_test_template.cc.in))
function(iree_cts_locate_iree_source out_var)
  cmake_parse_arguments(_ARG "" "VERSION;MARKER" "" ${ARGN})
  if(NOT _ARG_MARKER)
    set(_ARG_MARKER "runtime/src/iree/hal/cts/cts_test_template.cc.in")
  endif()
  set(_what "IREE v3.3.0")
  if(_ARG_VERSION)
    set(_what "IREE ${_ARG_VERSION}")
  endif()
  if(IREE_SOURCE_DIR)
    set(_dir "${IREE_SOURCE_DIR}")
  else()
    set(_locate "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../../../tools/iree-source/locate.sh")
    execute_process(
      COMMAND bash "${_locate}" ${_ARG_VERSION}
      OUTPUT_VARIABLE _dir
      ERROR_VARIABLE _err
      RESULT_VARIABLE _rc
      OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT _rc EQUAL 0)
      message(FATAL_ERROR "tools/iree-source/locate.sh ${_ARG_VERSION} failed (${_rc}): ${_err}\n"
                          "Pass -DIREE_SOURCE_DIR=<path to ${_what} sources>.")
    endif()
  endif()
  get_filename_component(_dir "${_dir}" ABSOLUTE)
  if(NOT EXISTS "${_dir}/${_ARG_MARKER}")
    message(FATAL_ERROR "'${_dir}' does not look like ${_what}'s source tree "
                        "(${_ARG_MARKER} missing).")
  endif()
  set(${out_var} "${_dir}" PARENT_SCOPE)
endfunction()

# Sets the IREE cache options for a runtime-only, HIP-only build. The options
# that decide what gets configured are forced; cosmetic ones stay overridable.
macro(iree_cts_configure_iree_options)
  set(IREE_BUILD_COMPILER OFF CACHE BOOL "" FORCE)
  set(IREE_BUILD_TESTS OFF CACHE BOOL "" FORCE)
  set(IREE_BUILD_SAMPLES OFF CACHE BOOL "" FORCE)
  set(IREE_BUILD_PYTHON_BINDINGS OFF CACHE BOOL "" FORCE)
  set(IREE_BUILD_BINDINGS_TFLITE OFF CACHE BOOL "" FORCE)
  set(IREE_BUILD_BINDINGS_TFLITE_JAVA OFF CACHE BOOL "" FORCE)
  set(IREE_BUILD_DOCS OFF CACHE BOOL "" FORCE)
  set(IREE_BUILD_TRACY OFF CACHE BOOL "" FORCE)
  set(IREE_HAL_DRIVER_DEFAULTS OFF CACHE BOOL "" FORCE)
  set(IREE_HAL_DRIVER_HIP ON CACHE BOOL "" FORCE)
  # The eerie-sys copy is not a git checkout; skip IREE's submodule probe.
  set(IREE_ERROR_ON_MISSING_SUBMODULES OFF CACHE BOOL "" FORCE)
  # IREE's own CTS suites return early unless this names a gfx chip; ours do
  # not use it, and leaving it empty keeps IREE from expecting iree-compile.
  set(IREE_HIP_TEST_TARGET_CHIP "" CACHE STRING "" FORCE)
  # Newer compilers than IREE's CI may warn; a warning must not stop the build.
  set(IREE_ENABLE_WERROR_FLAG OFF CACHE BOOL "")
  # cpuinfo is only used by the task system for topology, which HIP ignores.
  set(IREE_ENABLE_CPUINFO OFF CACHE BOOL "")
endmacro()

# Defines the test-only pieces that IREE only creates under IREE_BUILD_TESTS:
#   iree_cts_gtest_main    IREE's gtest main (parses IREE flags, then gtest's)
#   iree_cts_test_headers  include paths for the CTS headers and the template
#                          (which includes them by IREE-root-relative paths)
function(iree_cts_define_support_targets iree_dir)
  if(TARGET iree_cts_gtest_main)
    return()
  endif()
  add_library(iree_cts_test_headers INTERFACE)
  target_include_directories(iree_cts_test_headers INTERFACE
    "${iree_dir}"
    "${iree_dir}/runtime/src")
  target_link_libraries(iree_cts_test_headers INTERFACE
    gmock gtest iree::base iree::hal)

  add_library(iree_cts_gtest_main STATIC
    "${iree_dir}/runtime/src/iree/testing/gtest_main.cc")
  set_target_properties(iree_cts_gtest_main PROPERTIES CXX_STANDARD 17)
  target_link_libraries(iree_cts_gtest_main PUBLIC
    iree_cts_test_headers iree::base::internal::flags)
endfunction()

# Adds IREE as a subdirectory (once per build tree) and defines the support
# targets. Sets IREE_CTS_IREE_DIR (INTERNAL cache, so visible everywhere).
macro(iree_cts_add_iree_runtime)
  iree_cts_locate_iree_source(_iree_cts_dir)
  set(IREE_CTS_IREE_DIR "${_iree_cts_dir}" CACHE INTERNAL "IREE source tree used by iree-harness/cts")
  if(NOT TARGET iree::hal::drivers::hip::registration)
    iree_cts_configure_iree_options()
    message(STATUS "iree-harness/cts: IREE sources at ${IREE_CTS_IREE_DIR}")
    add_subdirectory("${IREE_CTS_IREE_DIR}" "${CMAKE_BINARY_DIR}/iree" EXCLUDE_FROM_ALL)
  endif()
  iree_cts_define_support_targets("${IREE_CTS_IREE_DIR}")
endmacro()
