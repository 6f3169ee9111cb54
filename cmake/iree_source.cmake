# Finds IREE v3.3.0's sources (downloaded by cargo inside eerie-sys 0.2.5; never committed)
# and builds the part of IREE's base runtime that C users link: statuses, allocators and
# strings. Two copies are built, one per status layout IREE uses by default (mode 2 in
# release builds, mode 3 with stack traces in debug builds), so the tests show that our
# statuses work with both.
if(NOT IREE_SOURCE_DIR)
  execute_process(
    COMMAND ${CMAKE_CURRENT_LIST_DIR}/../tools/iree-source/locate.sh
    OUTPUT_VARIABLE IREE_SOURCE_DIR
    OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE _locate_result)
  if(NOT _locate_result EQUAL 0)
    message(FATAL_ERROR "Could not locate IREE v3.3.0 sources (tools/iree-source/locate.sh failed)")
  endif()
  set(IREE_SOURCE_DIR "${IREE_SOURCE_DIR}" CACHE PATH "IREE v3.3.0 source tree (eerie-sys 0.2.5 iree/)")
endif()
message(STATUS "IREE v3.3.0 sources: ${IREE_SOURCE_DIR}")
set(IREE_RUNTIME_INCLUDE_DIR "${IREE_SOURCE_DIR}/runtime/src")

set(_iree_base_sources
  ${IREE_RUNTIME_INCLUDE_DIR}/iree/base/allocator.c
  ${IREE_RUNTIME_INCLUDE_DIR}/iree/base/status.c
  ${IREE_RUNTIME_INCLUDE_DIR}/iree/base/status_stack_trace.c
  ${IREE_RUNTIME_INCLUDE_DIR}/iree/base/string_builder.c
  ${IREE_RUNTIME_INCLUDE_DIR}/iree/base/string_view.c)

foreach(_mode 2 3)
  add_library(iree_base_mode${_mode} STATIC ${_iree_base_sources})
  target_include_directories(iree_base_mode${_mode} SYSTEM PUBLIC ${IREE_RUNTIME_INCLUDE_DIR})
  target_compile_definitions(iree_base_mode${_mode} PUBLIC IREE_STATUS_MODE=${_mode})
  target_compile_options(iree_base_mode${_mode} PRIVATE -w)
endforeach()
