# CMake functions that build IREE's HAL conformance test suite (CTS) binaries
# for a HIP driver without iree-compile.
#
# IREE's own iree_hal_cts_test_suite() compiles the executable testdata with
# iree-compile and needs IREE_BUILD_TESTS. These functions produce the same
# binaries from IREE's cts_test_template.cc.in, but embed executable testdata
# that was built beforehand (a directory of HIP1 flatbuffers), and take the
# driver registration library as a parameter so one suite definition can be
# linked against IREE's C HIP driver or against a replacement driver.

include_guard(GLOBAL)

# Lists and paths shared by these functions are INTERNAL cache entries so the
# functions also work when called from a parent project's directory.

# Every CTS suite IREE v3.3.0 defines (runtime/src/iree/hal/cts/CMakeLists.txt).
set(IREE_CTS_ALL_SUITES
  allocator
  buffer_mapping
  command_buffer
  command_buffer_copy_buffer
  command_buffer_dispatch
  command_buffer_dispatch_constants
  command_buffer_fill_buffer
  command_buffer_update_buffer
  driver
  event
  executable_cache
  file
  semaphore
  semaphore_submission
  CACHE INTERNAL "")

# Suites that load executables; each maps to testdata/<suite>_test.mlir and
# asks get_test_executable_data() for "<suite>_test.bin".
set(IREE_CTS_EXECUTABLE_SUITES
  command_buffer_dispatch
  command_buffer_dispatch_constants
  executable_cache
  CACHE INTERNAL "")

# iree_cts_add_testdata_library(
#   NAME <target>            library target to create
#   DIR <dir>                directory holding <suite>_test.bin files
#   TARGET_BACKEND <name>    prefix the template uses to look files up
#   EMBEDDED_SUITES_VAR <v>  set to the executable suites whose file exists
#   HEADER_VAR <v>           set to the generated header's file name
# )
# Embeds the prebuilt executables with IREE's iree-c-embed-data tool under the
# names the CTS template looks for ("<backend>_<suite>_test.bin"). Suites whose
# file is missing are left out (and reported in EMBEDDED_SUITES_VAR), so the
# rest of the CTS builds before any testdata exists. No library is created when
# no file exists.
function(iree_cts_add_testdata_library)
  cmake_parse_arguments(_ARG "" "NAME;DIR;TARGET_BACKEND;EMBEDDED_SUITES_VAR;HEADER_VAR" "" ${ARGN})
  set(_present "")
  set(_staged "")
  set(_stage_dir "${CMAKE_CURRENT_BINARY_DIR}/${_ARG_NAME}")
  # Adding files to the directory changes its mtime: re-run CMake then.
  if(_ARG_DIR AND IS_DIRECTORY "${_ARG_DIR}")
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_ARG_DIR}")
  endif()
  foreach(_suite IN LISTS IREE_CTS_EXECUTABLE_SUITES)
    # Either plain or already carrying the backend prefix the template looks up.
    set(_src "${_ARG_DIR}/${_suite}_test.bin")
    if(NOT EXISTS "${_src}")
      set(_src "${_ARG_DIR}/${_ARG_TARGET_BACKEND}_${_suite}_test.bin")
    endif()
    if(_ARG_DIR AND EXISTS "${_src}")
      set(_dst "${_stage_dir}/${_ARG_TARGET_BACKEND}_${_suite}_test.bin")
      add_custom_command(
        OUTPUT "${_dst}"
        COMMAND "${CMAKE_COMMAND}" -E copy "${_src}" "${_dst}"
        DEPENDS "${_src}"
        COMMENT "Staging CTS testdata ${_suite}_test.bin")
      list(APPEND _present ${_suite})
      list(APPEND _staged "${_dst}")
    endif()
  endforeach()
  set(${_ARG_EMBEDDED_SUITES_VAR} "${_present}" PARENT_SCOPE)
  set(${_ARG_HEADER_VAR} "${_ARG_NAME}.h" PARENT_SCOPE)
  if(NOT _present)
    return()
  endif()

  set(_c "${_stage_dir}/${_ARG_NAME}.c")
  set(_h "${_stage_dir}/${_ARG_NAME}.h")
  add_custom_command(
    OUTPUT "${_c}" "${_h}"
    COMMAND iree-c-embed-data
      "--output_header=${_h}"
      "--output_impl=${_c}"
      "--identifier=iree_cts_testdata_executables"
      --flatten
      ${_staged}
    DEPENDS iree-c-embed-data ${_staged}
    COMMENT "Embedding CTS testdata into ${_ARG_NAME}")
  add_library(${_ARG_NAME} STATIC "${_c}")
  target_include_directories(${_ARG_NAME} PUBLIC "${_stage_dir}")
endfunction()

# iree_cts_add_driver_suite(
#   SET_NAME <name>                  prefix of targets and ctest names
#   DRIVER_NAME <name>               driver name the registry is asked for
#   VARIANT <name>                   e.g. stream, graph
#   DRIVER_REGISTRATION_TARGET <t>   library providing the registration fn
#   DRIVER_REGISTRATION_HDR <path>   #include path (IREE-root relative ok)
#   DRIVER_REGISTRATION_FN <fn>      C function registering DRIVER_NAME
#   EXECUTABLE_FORMAT <c-expr>       C string expression, e.g. "\"HSACO\""
#   TARGET_BACKEND <name>            testdata name prefix (see above)
#   TESTDATA_TARGET <t>              from iree_cts_add_testdata_library()
#   TESTDATA_HEADER <file>           from iree_cts_add_testdata_library()
#   TESTDATA_SUITES <suite>...       executable suites that have testdata
#   ARGS <arg>...                    command line of every test binary
#   EXCLUDED_SUITES <suite>...       suites left out for this variant
#   ENVIRONMENT <VAR=value>...       ctest environment
#   LABELS <label>...                ctest labels
#   TIMEOUT <seconds>
#   AGGREGATE_TARGET <t>             custom target that depends on all binaries
#   OUTPUT_DIR <dir>                 where binaries are written
#   OBJECTS_FROM_SET <set>           link the suites compiled for another set
#                                    (its SET_NAME, same DRIVER_NAME) instead of
#                                    compiling them again: only the driver
#                                    registration library differs
# )
# Creates one test binary per suite, named
#   <SET_NAME>_<DRIVER_NAME>_<VARIANT>_<suite>_test   (target)
#   <DRIVER_NAME>_<VARIANT>_<suite>_test              (file, as IREE names it)
# and registers it with CTest as <SET_NAME>/<DRIVER_NAME>_<VARIANT>_<suite>.
#
# IREE's CTS setup treats an unavailable driver or device as "skip every
# test", which would let a missing libamdhip64.so pass silently. The tests
# registered here fail instead when the output says so.
function(iree_cts_add_driver_suite)
  cmake_parse_arguments(_ARG ""
    "SET_NAME;DRIVER_NAME;VARIANT;DRIVER_REGISTRATION_TARGET;DRIVER_REGISTRATION_HDR;DRIVER_REGISTRATION_FN;EXECUTABLE_FORMAT;TARGET_BACKEND;TESTDATA_TARGET;TESTDATA_HEADER;TIMEOUT;AGGREGATE_TARGET;OUTPUT_DIR;OBJECTS_FROM_SET"
    "TESTDATA_SUITES;ARGS;EXCLUDED_SUITES;ENVIRONMENT;LABELS"
    ${ARGN})
  if(_ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "iree_cts_add_driver_suite: unknown arguments ${_ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT _ARG_TIMEOUT)
    set(_ARG_TIMEOUT 300)
  endif()
  set(_template "${IREE_CTS_IREE_DIR}/runtime/src/iree/hal/cts/cts_test_template.cc.in")
  set(_src_dir "${CMAKE_CURRENT_BINARY_DIR}/${_ARG_SET_NAME}_sources")

  foreach(_suite IN LISTS IREE_CTS_ALL_SUITES)
    if(_suite IN_LIST _ARG_EXCLUDED_SUITES)
      continue()
    endif()
    set(_uses_executables OFF)
    if(_suite IN_LIST IREE_CTS_EXECUTABLE_SUITES)
      if(NOT _suite IN_LIST _ARG_TESTDATA_SUITES)
        continue()
      endif()
      set(_uses_executables ON)
    endif()

    # What a suite's objects and programs link: this set's driver, IREE and the tests.
    set(_suite_libraries ${_ARG_DRIVER_REGISTRATION_TARGET} iree_cts_test_headers
      iree_cts_gtest_main iree::base iree::hal)
    if(_uses_executables)
      list(APPEND _suite_libraries ${_ARG_TESTDATA_TARGET})
    endif()

    # The generated source depends on the set and the suite, never on the
    # variant (variants differ only in ARGS), so each suite is compiled once
    # per set into an object library that all of its variants link.
    set(_objects "${_ARG_SET_NAME}_${_ARG_DRIVER_NAME}_${_suite}_objects")
    if(NOT TARGET ${_objects} AND NOT _ARG_OBJECTS_FROM_SET)
      # Variables read by IREE's template (#cmakedefine IREE_CTS_*).
      set(IREE_CTS_TEST_FILE_PATH "runtime/src/iree/hal/cts/${_suite}_test.h")
      set(IREE_CTS_DRIVER_REGISTRATION_HDR "${_ARG_DRIVER_REGISTRATION_HDR}")
      set(IREE_CTS_DRIVER_REGISTRATION_FN "${_ARG_DRIVER_REGISTRATION_FN}")
      set(IREE_CTS_DRIVER_NAME "${_ARG_DRIVER_NAME}")
      set(IREE_CTS_TARGET_BACKEND "${_ARG_TARGET_BACKEND}")
      set(IREE_CTS_TARGET_DEVICE "")
      if(_uses_executables)
        set(IREE_CTS_EXECUTABLE_FORMAT "${_ARG_EXECUTABLE_FORMAT}")
        set(IREE_CTS_EXECUTABLES_TESTDATA_HDR "${_ARG_TESTDATA_HEADER}")
      else()
        set(IREE_CTS_EXECUTABLE_FORMAT "")
        set(IREE_CTS_EXECUTABLES_TESTDATA_HDR "")
      endif()
      set(_source "${_src_dir}/${_ARG_DRIVER_NAME}_${_suite}_test.cc")
      configure_file("${_template}" "${_source}")

      add_library(${_objects} OBJECT "${_source}")
      set_target_properties(${_objects} PROPERTIES
        CXX_STANDARD 17
        CXX_STANDARD_REQUIRED ON)
      target_link_libraries(${_objects} PUBLIC ${_suite_libraries})
    endif()

    set(_file_name "${_ARG_DRIVER_NAME}_${_ARG_VARIANT}_${_suite}_test")
    set(_target "${_ARG_SET_NAME}_${_file_name}")
    add_executable(${_target})
    set_target_properties(${_target} PROPERTIES
      OUTPUT_NAME "${_file_name}"
      RUNTIME_OUTPUT_DIRECTORY "${_ARG_OUTPUT_DIR}")
    if(_ARG_OBJECTS_FROM_SET)
      # The other set's objects without its usage requirements (its driver library).
      set(_shared_objects "${_ARG_OBJECTS_FROM_SET}_${_ARG_DRIVER_NAME}_${_suite}_objects")
      if(NOT TARGET ${_shared_objects})
        message(FATAL_ERROR "iree_cts_add_driver_suite: set ${_ARG_OBJECTS_FROM_SET} has no ${_suite} objects")
      endif()
      target_sources(${_target} PRIVATE $<TARGET_OBJECTS:${_shared_objects}>)
      target_link_libraries(${_target} PRIVATE ${_suite_libraries})
    else()
      target_link_libraries(${_target} PRIVATE ${_objects})
    endif()
    if(_ARG_AGGREGATE_TARGET)
      add_dependencies(${_ARG_AGGREGATE_TARGET} ${_target})
    endif()

    set(_test "${_ARG_SET_NAME}/${_ARG_DRIVER_NAME}_${_ARG_VARIANT}_${_suite}")
    add_test(NAME "${_test}" COMMAND ${_target} ${_ARG_ARGS})
    set_tests_properties("${_test}" PROPERTIES
      LABELS "${_ARG_LABELS};driver=${_ARG_DRIVER_NAME};variant=${_ARG_VARIANT}"
      ENVIRONMENT "${_ARG_ENVIRONMENT}"
      TIMEOUT ${_ARG_TIMEOUT}
      FAIL_REGULAR_EXPRESSION "Skipping test as [^\n]*driver is unavailable")
  endforeach()
endfunction()
