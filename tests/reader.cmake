# Tests of the trace reader, the session directory and `kaudit dump`.
# Included from tests/CMakeLists.txt when Criterion is found
# (include(${CMAKE_CURRENT_SOURCE_DIR}/reader.cmake)).

# Writes synthetic traces the way the preload writer lays them out.
add_library(kaudit_trace_builder STATIC ${CMAKE_CURRENT_LIST_DIR}/trace_builder.c)
target_include_directories(kaudit_trace_builder PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(kaudit_trace_builder PUBLIC kaudit_format)

add_executable(test_trace_reader ${CMAKE_CURRENT_LIST_DIR}/test_trace_reader.c)
target_link_libraries(test_trace_reader PRIVATE kaudit_session kaudit_trace_builder
  PkgConfig::CRITERION)
add_test(NAME trace_reader COMMAND test_trace_reader)

# End to end: runs the built kaudit on a synthetic session directory.
if(TARGET kaudit)
  add_executable(test_dump ${CMAKE_CURRENT_LIST_DIR}/test_dump.c)
  target_link_libraries(test_dump PRIVATE kaudit_trace_builder PkgConfig::CRITERION)
  target_compile_definitions(test_dump PRIVATE KAUDIT_BIN="$<TARGET_FILE:kaudit>")
  add_dependencies(test_dump kaudit)
  add_test(NAME dump COMMAND test_dump)
endif()

# The environment rule shared by `kaudit run` and the preload's re-injection.
add_executable(test_child_env ${CMAKE_CURRENT_LIST_DIR}/test_child_env.c)
target_link_libraries(test_child_env PRIVATE kaudit_session PkgConfig::CRITERION)
add_test(NAME child_env COMMAND test_child_env)

# The JSON writer (session/json_writer.h) and, with the analyzer, the
# Perfetto timeline that writes kernel names through it.
add_executable(test_json_writer ${CMAKE_CURRENT_LIST_DIR}/test_json_writer.c)
target_link_libraries(test_json_writer PRIVATE kaudit_session PkgConfig::CRITERION)
if(TARGET kaudit_analyzer AND NOT KAUDIT_NO_ANALYZER)
  target_link_libraries(test_json_writer PRIVATE kaudit_analyzer)
  target_compile_definitions(test_json_writer PRIVATE KAUDIT_TEST_PERFETTO=1)
endif()
kaudit_sanitize(test_json_writer)
add_test(NAME json_writer COMMAND test_json_writer)
