# CMake functions that build IREE 3.13's HAL conformance test suite (CTS) for a
# HIP driver from IREE's sources, without IREE_BUILD_TESTS and without
# iree-compile.
#
# IREE 3.13's CTS is a registry (runtime/src/iree/hal/cts/util/registry.h):
# every suite file registers its gtest suites at static initialisation, a
# "backend" file registers a device factory (with the tests that backend skips
# and the ones it expects to fail), testdata files register executable formats,
# and one main (util/test_main.cc) instantiates every suite for every backend.
# IREE links suites by category (buffer_tests, command_buffer_tests, ...); this
# file links one binary per suite file (28) so a result names its suite, and
# takes the backend file and the driver registration library as parameters, so
# the same suites can be linked with IREE's C HIP driver or with another driver
# that exports iree_hal_hip_driver_module_register.
#
# Everything IREE marks TESTONLY (so does not define with IREE_BUILD_TESTS=OFF)
# is defined here from IREE's sources: the CTS utilities, the suites,
# iree::testing::gtest's headers and temp_file.

include_guard(GLOBAL)

# Every CTS suite of IREE 3.13: <category>/<file stem> under
# runtime/src/iree/hal/cts (runtime/src/iree/hal/cts/*/CMakeLists.txt).
set(IREE_313_CTS_ALL_SUITES
  buffer/allocator_test
  buffer/mapping_test
  command_buffer/basic_test
  command_buffer/copy_buffer_test
  command_buffer/dispatch_constants_bindings_test
  command_buffer/dispatch_constants_test
  command_buffer/dispatch_indirect_parameters_test
  command_buffer/dispatch_multi_entrypoint_test
  command_buffer/dispatch_multi_workgroup_test
  command_buffer/dispatch_pipeline_test
  command_buffer/dispatch_reuse_test
  command_buffer/dispatch_test
  command_buffer/fill_buffer_test
  command_buffer/stress_test
  command_buffer/transient_buffer_test
  command_buffer/update_buffer_test
  core/driver_test
  core/event_test
  core/executable_cache_test
  core/executable_test
  core/semaphore_test
  core/semaphore_thread_test
  file/file_test
  queue/queue_alloca_test
  queue/queue_dispatch_test
  queue/queue_host_call_test
  queue/queue_transfer_test
  queue/semaphore_submission_test
  CACHE INTERNAL "")

# Suites that load executables: IREE links them with the testdata libraries
# (all_dispatch_tests, all_executable_tests, queue_dispatch_test in
# build_tools/cmake/iree_hal_cts_test_suite.cmake). Without an executable format
# they instantiate no test at all, so they are only built with testdata.
set(IREE_313_CTS_EXECUTABLE_SUITES
  command_buffer/dispatch_constants_bindings_test
  command_buffer/dispatch_constants_test
  command_buffer/dispatch_indirect_parameters_test
  command_buffer/dispatch_multi_entrypoint_test
  command_buffer/dispatch_multi_workgroup_test
  command_buffer/dispatch_pipeline_test
  command_buffer/dispatch_reuse_test
  command_buffer/dispatch_test
  core/executable_cache_test
  core/executable_test
  queue/queue_dispatch_test
  CACHE INTERNAL "")

# The executables those suites ask for (executable_data("<name>")), one per
# runtime/src/iree/hal/cts/testdata/<name>.mlir.
set(IREE_313_CTS_TESTDATA_FILES
  command_buffer_dispatch_constants_bindings_test.bin
  command_buffer_dispatch_constants_test.bin
  command_buffer_dispatch_indirect_parameters_test.bin
  command_buffer_dispatch_multi_entrypoint_test.bin
  command_buffer_dispatch_multi_workgroup_test.bin
  command_buffer_dispatch_test.bin
  executable_cache_test.bin
  executable_test.bin
  CACHE INTERNAL "")

# The command lines IREE gives its C HIP driver's CTS
# (runtime/src/iree/hal/drivers/hip/cts/CMakeLists.txt), per mode.
set(IREE_313_CTS_HIP_STREAM_ARGS "--hip_use_streams=true" CACHE INTERNAL "")
set(IREE_313_CTS_HIP_GRAPH_ARGS
  "--hip_use_streams=false"
  "--gtest_filter=-CTS/QueueTransferTest.*:CTS/AsyncTransientBufferTest.*:CTS/TransientBufferTest.*"
  CACHE INTERNAL "")

# Suite name used in targets and test names: the file stem without "_test",
# prefixed by its category unless it already starts with it
# (command_buffer/basic_test -> command_buffer_basic, queue/queue_alloca_test ->
# queue_alloca, file/file_test -> file).
function(iree_313_cts_suite_name suite out_var)
  string(REPLACE "/" ";" _parts "${suite}")
  list(GET _parts 0 _category)
  list(GET _parts 1 _stem)
  string(REGEX REPLACE "_test$" "" _stem "${_stem}")
  string(FIND "${_stem}" "${_category}" _at)
  if(_at EQUAL 0)
    set(${out_var} "${_stem}" PARENT_SCOPE)
  else()
    set(${out_var} "${_category}_${_stem}" PARENT_SCOPE)
  endif()
endfunction()

# iree_313_cts_define_support_targets(<iree dir> <googletest dir>)
# Defines, once:
#   gtest, gmock              googletest (IREE 3.13's submodule is not in the
#                             crate; IREE v3.3.0's copy, 1.14.0, is used)
#   iree_313_cts_gtest        iree::testing::gtest (gtest.h, status_matchers.h)
#   iree_313_cts_temp_file    iree::testing::temp_file
#   iree_313_cts_util         registry.cc, test_base.cc, profile_test_util.cc
#   iree_313_cts_test_main    util/test_main.cc (object library: IREE's main)
#   iree_313_cts_<suite>_objects   one object library per suite file
function(iree_313_cts_define_support_targets iree_dir googletest_dir)
  if(TARGET iree_313_cts_util)
    return()
  endif()
  set(_cts "${iree_dir}/runtime/src/iree/hal/cts")

  if(NOT TARGET gtest)
    # What IREE does for its own googletest (iree_set_googletest_cmake_options
    # and the -fexceptions strip in IREE's CMakeLists.txt).
    set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
    set(gtest_force_shared_crt ON CACHE BOOL "" FORCE)
    add_subdirectory("${googletest_dir}" "${CMAKE_BINARY_DIR}/googletest" EXCLUDE_FROM_ALL)
    foreach(_gtest_target gtest gtest_main gmock gmock_main)
      if(TARGET ${_gtest_target})
        get_target_property(_flags ${_gtest_target} COMPILE_FLAGS)
        if(_flags)
          string(REPLACE "-fexceptions" "" _flags "${_flags}")
          set_target_properties(${_gtest_target} PROPERTIES COMPILE_FLAGS "${_flags}")
        endif()
      endif()
    endforeach()
  endif()

  add_library(iree_313_cts_gtest INTERFACE)
  target_include_directories(iree_313_cts_gtest INTERFACE
    "${iree_dir}/runtime/src")
  target_link_libraries(iree_313_cts_gtest INTERFACE gmock gtest iree::base)

  add_library(iree_313_cts_temp_file STATIC
    "${iree_dir}/runtime/src/iree/testing/temp_file.cc")
  target_link_libraries(iree_313_cts_temp_file PUBLIC iree_313_cts_gtest)

  # What the suites and utilities link (the union of the DEPS of IREE's suite
  # and util libraries; none of these is TESTONLY).
  add_library(iree_313_cts_deps INTERFACE)
  target_link_libraries(iree_313_cts_deps INTERFACE
    iree_313_cts_gtest
    iree_313_cts_temp_file
    iree::async
    iree::async::util::proactor_pool
    iree::base
    iree::base::threading
    iree::base::tooling::flags
    iree::hal
    iree::hal::memory::fixed_block_pool
    iree::hal::memory::passthrough_pool
    iree::hal::memory::tlsf_pool
    iree::io::file_handle
    iree::io::stream)

  add_library(iree_313_cts_util STATIC
    "${_cts}/util/registry.cc"
    "${_cts}/util/test_base.cc"
    "${_cts}/util/profile_test_util.cc")
  target_link_libraries(iree_313_cts_util PUBLIC iree_313_cts_deps)

  foreach(_target IN ITEMS iree_313_cts_gtest iree_313_cts_temp_file iree_313_cts_util)
    get_target_property(_type ${_target} TYPE)
    if(NOT _type STREQUAL "INTERFACE_LIBRARY")
      set_target_properties(${_target} PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON)
    endif()
  endforeach()

  # Suites and main register at static initialisation: object libraries, so
  # nothing is dropped at link time (IREE's ALWAYSLINK).
  add_library(iree_313_cts_test_main OBJECT "${_cts}/util/test_main.cc")
  set_target_properties(iree_313_cts_test_main PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON)
  target_link_libraries(iree_313_cts_test_main PUBLIC iree_313_cts_util)

  foreach(_suite IN LISTS IREE_313_CTS_ALL_SUITES)
    iree_313_cts_suite_name("${_suite}" _name)
    add_library(iree_313_cts_${_name}_objects OBJECT "${_cts}/${_suite}.cc")
    set_target_properties(iree_313_cts_${_name}_objects PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON)
    target_link_libraries(iree_313_cts_${_name}_objects PUBLIC iree_313_cts_util)
  endforeach()
endfunction()

# iree_313_cts_add_testdata_library(
#   NAME <target>              object library to create
#   DIR <dir>                  directory holding the IREE_313_CTS_TESTDATA_FILES
#   BACKEND_NAME <name>        CtsRegistry backend the format is added to ("hip")
#   FORMAT_NAME <name>         suffix of the test parameter names ("hip")
#   FORMAT_STRING <c-expr>     executable format, e.g. "\"HSACO\""
#   PRESENT_VAR <v>            set to TRUE when every file exists
# )
# Embeds the executables with IREE's iree-c-embed-data under their file names
# and registers them with IREE's own registration template (the source that
# iree_hal_cts_testdata() generates). Only when every file exists; otherwise
# PRESENT_VAR is FALSE and nothing is created.
function(iree_313_cts_add_testdata_library)
  cmake_parse_arguments(_ARG "" "NAME;DIR;BACKEND_NAME;FORMAT_NAME;FORMAT_STRING;PRESENT_VAR" "" ${ARGN})
  set(${_ARG_PRESENT_VAR} FALSE PARENT_SCOPE)
  if(_ARG_DIR AND IS_DIRECTORY "${_ARG_DIR}")
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_ARG_DIR}")
  endif()
  set(_files "")
  set(_missing "")
  foreach(_file IN LISTS IREE_313_CTS_TESTDATA_FILES)
    if(_ARG_DIR AND EXISTS "${_ARG_DIR}/${_file}")
      list(APPEND _files "${_ARG_DIR}/${_file}")
    else()
      list(APPEND _missing "${_file}")
    endif()
  endforeach()
  if(_missing)
    message(STATUS "iree-3.13/cts: testdata '${_ARG_DIR}' lacks ${_missing}: "
                   "the suites that load executables are not built")
    return()
  endif()

  set(_dir "${CMAKE_CURRENT_BINARY_DIR}/${_ARG_NAME}")
  set(_identifier "${_ARG_NAME}")
  add_custom_command(
    OUTPUT "${_dir}/${_ARG_NAME}.c" "${_dir}/${_ARG_NAME}.h"
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${_dir}"
    COMMAND iree-c-embed-data
      "--output_header=${_dir}/${_ARG_NAME}.h"
      "--output_impl=${_dir}/${_ARG_NAME}.c"
      "--identifier=${_identifier}"
      --flatten
      ${_files}
    DEPENDS iree-c-embed-data ${_files}
    COMMENT "Embedding IREE 3.13 CTS testdata into ${_ARG_NAME}")

  # IREE's template (build_tools/cmake/iree_hal_cts_test_suite.cmake) with
  # the variables iree_hal_cts_testdata() sets.
  if(NOT DEFINED _IREE_CTS_TESTDATA_TEMPLATE)
    include("${IREE_313_CTS_IREE_DIR}/build_tools/cmake/iree_hal_cts_test_suite.cmake")
  endif()
  string(REPLACE "_" ";" _parts "${_ARG_FORMAT_NAME}")
  set(FORMAT_FUNC_NAME "")
  foreach(_part IN LISTS _parts)
    string(SUBSTRING "${_part}" 0 1 _first)
    string(TOUPPER "${_first}" _first)
    string(SUBSTRING "${_part}" 1 -1 _rest)
    string(APPEND FORMAT_FUNC_NAME "${_first}${_rest}")
  endforeach()
  set(HEADER_PATH "${_ARG_NAME}.h")
  set(IDENTIFIER "${_identifier}")
  set(FORMAT_VAR_NAME "${_ARG_FORMAT_NAME}_format")
  set(BACKEND_NAME "${_ARG_BACKEND_NAME}")
  set(FORMAT_NAME "${_ARG_FORMAT_NAME}")
  set(FORMAT_STRING "${_ARG_FORMAT_STRING}")
  string(CONFIGURE "${_IREE_CTS_TESTDATA_TEMPLATE}" _registration @ONLY)
  file(GENERATE OUTPUT "${_dir}/${_ARG_NAME}_registration.cc" CONTENT "${_registration}")

  add_library(${_ARG_NAME} OBJECT
    "${_dir}/${_ARG_NAME}.c"
    "${_dir}/${_ARG_NAME}_registration.cc")
  set_target_properties(${_ARG_NAME} PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON)
  target_include_directories(${_ARG_NAME} PRIVATE "${_dir}")
  target_link_libraries(${_ARG_NAME} PUBLIC iree_313_cts_util)
  set(${_ARG_PRESENT_VAR} TRUE PARENT_SCOPE)
endfunction()

# iree_313_cts_add_hip_set(
#   SET_NAME <name>                  prefix of targets, test names, output dir
#   DRIVER_REGISTRATION_TARGET <t>   library exporting
#                                    iree_hal_hip_driver_module_register
#   [BACKENDS_SOURCE <file>]         the CtsRegistry backend: device factory,
#                                    unsupported tests, expected failures
#                                    (default: IREE's C driver's,
#                                    runtime/src/iree/hal/drivers/hip/cts/backends.cc)
#   [DRIVER_REGISTRATION_HDR <path>] header declaring the registration function
#                                    (IREE-root relative ok; default IREE's)
#   [TESTDATA_TARGET <t>]            from iree_313_cts_add_testdata_library();
#                                    without it the executable suites are left out
#   [STREAM_ARGS <arg>...]           default: IREE's (--hip_use_streams=true)
#   [GRAPH_ARGS <arg>...]            default: IREE's (--hip_use_streams=false and
#                                    IREE's gtest filter for its C driver)
#   [EXCLUDED_SUITES <suite>...]     <category>/<stem> entries left out
#   [ENVIRONMENT <VAR=value>...]
#   [LABELS <label>...]
#   [TIMEOUT <seconds>]              default 300
#   [OUTPUT_DIR <dir>]               default <binary dir>/<SET_NAME>
# )
# Defines <SET_NAME>_cts (every binary of the set), a driver probe and one
# binary per suite and mode, hip_<mode>_<suite>_test, each a CTest test
# <SET_NAME>/hip_<mode>_<suite> labelled LABELS, driver=hip, mode=<mode>,
# suite=<suite>.
function(iree_313_cts_add_hip_set)
  cmake_parse_arguments(_ARG ""
    "SET_NAME;DRIVER_REGISTRATION_TARGET;BACKENDS_SOURCE;DRIVER_REGISTRATION_HDR;TESTDATA_TARGET;TIMEOUT;OUTPUT_DIR"
    "STREAM_ARGS;GRAPH_ARGS;EXCLUDED_SUITES;ENVIRONMENT;LABELS"
    ${ARGN})
  if(_ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "iree_313_cts_add_hip_set: unknown arguments ${_ARG_UNPARSED_ARGUMENTS}")
  endif()
  set(_iree "${IREE_313_CTS_IREE_DIR}")
  if(NOT _ARG_BACKENDS_SOURCE)
    set(_ARG_BACKENDS_SOURCE "${_iree}/runtime/src/iree/hal/drivers/hip/cts/backends.cc")
  endif()
  if(NOT _ARG_DRIVER_REGISTRATION_HDR)
    set(_ARG_DRIVER_REGISTRATION_HDR "iree/hal/drivers/hip/registration/driver_module.h")
  endif()
  if(NOT DEFINED _ARG_STREAM_ARGS)
    set(_ARG_STREAM_ARGS ${IREE_313_CTS_HIP_STREAM_ARGS})
  endif()
  if(NOT DEFINED _ARG_GRAPH_ARGS)
    set(_ARG_GRAPH_ARGS ${IREE_313_CTS_HIP_GRAPH_ARGS})
  endif()
  if(NOT _ARG_TIMEOUT)
    set(_ARG_TIMEOUT 300)
  endif()
  if(NOT _ARG_OUTPUT_DIR)
    set(_ARG_OUTPUT_DIR "${CMAKE_CURRENT_BINARY_DIR}/${_ARG_SET_NAME}")
  endif()
  set(_set ${_ARG_SET_NAME})
  add_custom_target(${_set}_cts)

  # The backend (device factory and skip lists) with this set's driver.
  add_library(${_set}_backends OBJECT "${_ARG_BACKENDS_SOURCE}")
  set_target_properties(${_set}_backends PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON)
  target_include_directories(${_set}_backends PRIVATE "${_iree}" "${_iree}/runtime/src")
  target_link_libraries(${_set}_backends PUBLIC ${_ARG_DRIVER_REGISTRATION_TARGET} iree_313_cts_util)

  # A probe that prints why the driver or device is unavailable (the CTS only
  # skips); the v3.3.0 harness's, with 3.13's device creation parameters.
  set(_probe ${_set}_hip_driver_probe)
  add_executable(${_probe} "${IREE_CTS_PROBE_SOURCE}")
  set_target_properties(${_probe} PROPERTIES
    OUTPUT_NAME hip_driver_probe
    RUNTIME_OUTPUT_DIRECTORY "${_ARG_OUTPUT_DIR}")
  target_compile_definitions(${_probe} PRIVATE
    "IREE_CTS_PROBE_REGISTRATION_HDR=\"${_ARG_DRIVER_REGISTRATION_HDR}\""
    "IREE_CTS_PROBE_REGISTRATION_FN=iree_hal_hip_driver_module_register"
    IREE_CTS_PROBE_DEVICE_CREATE_PARAMS)
  target_include_directories(${_probe} PRIVATE "${_iree}" "${_iree}/runtime/src")
  target_link_libraries(${_probe} PRIVATE
    ${_ARG_DRIVER_REGISTRATION_TARGET}
    iree::async::util::proactor_pool
    iree::base
    iree::base::threading
    iree::base::tooling::flags
    iree::hal)
  add_dependencies(${_set}_cts ${_probe})
  add_test(NAME "${_set}/hip_driver_probe" COMMAND ${_probe})
  set_tests_properties("${_set}/hip_driver_probe" PROPERTIES
    LABELS "${_ARG_LABELS};driver=hip"
    ENVIRONMENT "${_ARG_ENVIRONMENT}"
    TIMEOUT 60)

  foreach(_suite IN LISTS IREE_313_CTS_ALL_SUITES)
    if(_suite IN_LIST _ARG_EXCLUDED_SUITES)
      continue()
    endif()
    set(_objects $<TARGET_OBJECTS:iree_313_cts_test_main> $<TARGET_OBJECTS:${_set}_backends>)
    if(_suite IN_LIST IREE_313_CTS_EXECUTABLE_SUITES)
      if(NOT _ARG_TESTDATA_TARGET)
        continue()
      endif()
      list(APPEND _objects $<TARGET_OBJECTS:${_ARG_TESTDATA_TARGET}>)
    endif()
    iree_313_cts_suite_name("${_suite}" _name)
    list(APPEND _objects $<TARGET_OBJECTS:iree_313_cts_${_name}_objects>)

    foreach(_mode IN ITEMS stream graph)
      string(TOUPPER "${_mode}" _MODE)
      set(_file "hip_${_mode}_${_name}_test")
      set(_target "${_set}_${_file}")
      add_executable(${_target} ${_objects})
      set_target_properties(${_target} PROPERTIES
        OUTPUT_NAME "${_file}"
        RUNTIME_OUTPUT_DIRECTORY "${_ARG_OUTPUT_DIR}")
      target_link_libraries(${_target} PRIVATE ${_ARG_DRIVER_REGISTRATION_TARGET} iree_313_cts_util)
      add_dependencies(${_set}_cts ${_target})

      set(_test "${_set}/hip_${_mode}_${_name}")
      add_test(NAME "${_test}" COMMAND ${_target} ${_ARG_${_MODE}_ARGS})
      set_tests_properties("${_test}" PROPERTIES
        LABELS "${_ARG_LABELS};driver=hip;mode=${_mode};suite=${_name}"
        ENVIRONMENT "${_ARG_ENVIRONMENT}"
        TIMEOUT ${_ARG_TIMEOUT}
        # test_base.h skips every test when the factory says UNAVAILABLE; a
        # missing libamdhip64.so or HIP symbol must fail instead.
        FAIL_REGULAR_EXPRESSION "Backend '[^']*' unavailable on this system")
    endforeach()
  endforeach()
endfunction()
