# The six HIP CTS variants IREE v3.3.0 defines for its C HIP driver
# (runtime/src/iree/hal/drivers/hip/cts/CMakeLists.txt), as one call so a
# second driver can get the identical set.
#
# Note on the multi_queue variants: IREE's file passes DEVICE_CREATION_HDR,
# DEFAULT_DEVICE_CREATION_FN and DEFAULT_SUBMIT_QUEUE_AFFINITY, but in v3.3.0
# neither iree_hal_cts_test_suite() nor cts_test_template.cc.in nor
# cts_test_base.h has a hook for them: every variant creates the driver's
# default device and submits to any queue. Only the name and the
# --hip_use_streams flag differ, so the same holds here.

include_guard(GLOBAL)
include("${CMAKE_CURRENT_LIST_DIR}/HipCtsSuite.cmake")
set(IREE_CTS_PROBE_SOURCE "${CMAKE_CURRENT_LIST_DIR}/../probe/hip_driver_probe.c" CACHE INTERNAL "")

# Suites IREE excludes for every HIP variant: HAL events are unimplemented,
# and the other four fail on IREE's CI ("missing hipDrvGraphAddMemcpyNode").
set(IREE_CTS_HIP_EXCLUDED_SUITES
  event
  command_buffer_copy_buffer
  command_buffer_dispatch
  command_buffer_update_buffer
  file
  CACHE INTERNAL "")

# <variant name>:<--hip_use_streams value>
set(IREE_CTS_HIP_VARIANTS
  stream:true
  graph:false
  multi_queue_stream:true
  multi_queue_graph:false
  multi_queue_stream_queue_1:true
  multi_queue_graph_queue_1:false
  CACHE INTERNAL "")

# iree_cts_add_hip_variants(
#   SET_NAME <name>
#   DRIVER_REGISTRATION_TARGET <target>
#   [DRIVER_REGISTRATION_HDR <path>]  default: IREE's registration header
#   [ENVIRONMENT <VAR=value>...]
#   [LABELS <label>...]
#   [TESTDATA_TARGET <t> TESTDATA_HEADER <h> TESTDATA_SUITES <suite>...]
#   [OUTPUT_DIR <dir>]
#   [OBJECTS_FROM_SET <set>]   link another set's compiled suites (HipCtsSuite.cmake)
# )
# Defines <SET_NAME>_cts (builds every binary of the set) and the binaries.
function(iree_cts_add_hip_variants)
  cmake_parse_arguments(_ARG ""
    "SET_NAME;DRIVER_REGISTRATION_TARGET;DRIVER_REGISTRATION_HDR;TESTDATA_TARGET;TESTDATA_HEADER;OUTPUT_DIR;TIMEOUT;OBJECTS_FROM_SET"
    "ENVIRONMENT;LABELS;TESTDATA_SUITES;EXCLUDED_SUITES"
    ${ARGN})
  # IREE's exclusions for its C driver unless the caller names its own ("NONE": none).
  if(NOT DEFINED _ARG_EXCLUDED_SUITES)
    set(_ARG_EXCLUDED_SUITES ${IREE_CTS_HIP_EXCLUDED_SUITES})
  elseif(_ARG_EXCLUDED_SUITES STREQUAL "NONE")
    set(_ARG_EXCLUDED_SUITES "")
  endif()
  if(NOT _ARG_DRIVER_REGISTRATION_HDR)
    set(_ARG_DRIVER_REGISTRATION_HDR
      "runtime/src/iree/hal/drivers/hip/registration/driver_module.h")
  endif()
  if(NOT _ARG_OUTPUT_DIR)
    set(_ARG_OUTPUT_DIR "${CMAKE_CURRENT_BINARY_DIR}/${_ARG_SET_NAME}")
  endif()
  if(NOT _ARG_TIMEOUT)
    set(_ARG_TIMEOUT 300)
  endif()
  add_custom_target(${_ARG_SET_NAME}_cts)

  # A probe that prints why the driver or device is unavailable; the CTS
  # binaries only say that it is.
  set(_probe ${_ARG_SET_NAME}_hip_driver_probe)
  add_executable(${_probe} "${IREE_CTS_PROBE_SOURCE}")
  set_target_properties(${_probe} PROPERTIES
    OUTPUT_NAME hip_driver_probe
    RUNTIME_OUTPUT_DIRECTORY "${_ARG_OUTPUT_DIR}")
  target_compile_definitions(${_probe} PRIVATE
    "IREE_CTS_PROBE_REGISTRATION_HDR=\"${_ARG_DRIVER_REGISTRATION_HDR}\""
    "IREE_CTS_PROBE_REGISTRATION_FN=iree_hal_hip_driver_module_register")
  # The registration header path may be relative to IREE's root.
  target_include_directories(${_probe} PRIVATE "${IREE_CTS_IREE_DIR}")
  target_link_libraries(${_probe} PRIVATE
    ${_ARG_DRIVER_REGISTRATION_TARGET}
    iree::base
    iree::base::internal::flags
    iree::hal)
  add_dependencies(${_ARG_SET_NAME}_cts ${_probe})
  add_test(NAME "${_ARG_SET_NAME}/hip_driver_probe" COMMAND ${_probe})
  set_tests_properties("${_ARG_SET_NAME}/hip_driver_probe" PROPERTIES
    LABELS "${_ARG_LABELS};driver=hip"
    ENVIRONMENT "${_ARG_ENVIRONMENT}"
    TIMEOUT 60)

  foreach(_entry IN LISTS IREE_CTS_HIP_VARIANTS)
    string(REPLACE ":" ";" _entry "${_entry}")
    list(GET _entry 0 _variant)
    list(GET _entry 1 _use_streams)
    iree_cts_add_driver_suite(
      SET_NAME "${_ARG_SET_NAME}"
      DRIVER_NAME hip
      VARIANT "${_variant}"
      DRIVER_REGISTRATION_TARGET "${_ARG_DRIVER_REGISTRATION_TARGET}"
      DRIVER_REGISTRATION_HDR "${_ARG_DRIVER_REGISTRATION_HDR}"
      DRIVER_REGISTRATION_FN iree_hal_hip_driver_module_register
      # The format string IREE's HIP executable cache accepts
      # (nop_executable_cache.c: can_prepare_format == "HSACO").
      EXECUTABLE_FORMAT "\"HSACO\""
      TARGET_BACKEND rocm
      TESTDATA_TARGET "${_ARG_TESTDATA_TARGET}"
      TESTDATA_HEADER "${_ARG_TESTDATA_HEADER}"
      TESTDATA_SUITES ${_ARG_TESTDATA_SUITES}
      ARGS "--hip_use_streams=${_use_streams}"
      EXCLUDED_SUITES ${_ARG_EXCLUDED_SUITES}
      ENVIRONMENT ${_ARG_ENVIRONMENT}
      LABELS ${_ARG_LABELS}
      TIMEOUT ${_ARG_TIMEOUT}
      AGGREGATE_TARGET ${_ARG_SET_NAME}_cts
      OUTPUT_DIR "${_ARG_OUTPUT_DIR}"
      OBJECTS_FROM_SET "${_ARG_OBJECTS_FROM_SET}")
  endforeach()
endfunction()
