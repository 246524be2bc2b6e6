# The preload's trace writer alone, linked into host programs: no CUDA, no
# `kaudit run`, sanitizers where KAUDIT_SANITIZE says (the preload library
# itself never has them).  For the chunked-append test and the writer
# contention benchmark (bench/writer_contention.cmake).
if(NOT TARGET kaudit_session)
  return()
endif()
find_package(Threads REQUIRED)
set(KAUDIT_WRITER_DIR ${CMAKE_SOURCE_DIR}/preload)
add_library(kaudit_writer_host STATIC ${KAUDIT_WRITER_DIR}/trace_writer.c ${KAUDIT_WRITER_DIR}/trace_stage.c
  ${KAUDIT_WRITER_DIR}/util.c ${KAUDIT_WRITER_DIR}/host_clock.c ${KAUDIT_WRITER_DIR}/trace_handover.c ${CMAKE_CURRENT_LIST_DIR}/writer_host.c)
target_include_directories(kaudit_writer_host PUBLIC ${KAUDIT_WRITER_DIR})
target_link_libraries(kaudit_writer_host PUBLIC kaudit_format ${CMAKE_DL_LIBS} Threads::Threads)
kaudit_sanitize(kaudit_writer_host)

add_executable(test_trace_chunks ${CMAKE_CURRENT_LIST_DIR}/test_trace_chunks.c)
target_link_libraries(test_trace_chunks PRIVATE kaudit_writer_host kaudit_session PkgConfig::CRITERION)
kaudit_sanitize(test_trace_chunks)
add_test(NAME test_trace_chunks COMMAND test_trace_chunks --jobs=2)
set_tests_properties(test_trace_chunks PROPERTIES TIMEOUT 300 LABELS writer)

# The host clock (preload/host_clock.c) against clock_gettime.
add_executable(test_host_clock ${CMAKE_CURRENT_LIST_DIR}/test_host_clock.c)
target_link_libraries(test_host_clock PRIVATE kaudit_writer_host PkgConfig::CRITERION)
kaudit_sanitize(test_host_clock)
add_test(NAME test_host_clock COMMAND test_host_clock --jobs=1)
set_tests_properties(test_host_clock PROPERTIES TIMEOUT 120 LABELS writer)
