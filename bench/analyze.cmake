# The analyzer benchmark (bench/analyze_bench.c; bench/analyze_bench.sh runs
# it, docs/analyzer-bench.md has the figures).  include()d from
# tests/CMakeLists.txt after the fragments, where kaudit_trace_builder
# (tests/reader.cmake) and Criterion exist.  Built only when the analyzer is.
if(NOT TARGET kaudit_analyzer OR NOT TARGET kaudit_trace_builder OR KAUDIT_NO_ANALYZER)
  message(STATUS "kaudit: analyzer benchmark not built (no analyzer or no trace builder)")
  return()
endif()
find_package(Threads REQUIRED)
add_executable(kaudit_analyze_bench ${CMAKE_CURRENT_LIST_DIR}/analyze_bench.c)
target_link_libraries(kaudit_analyze_bench PRIVATE kaudit_analyzer kaudit_trace_builder Threads::Threads)

# The benchmark program runs (a smoke test: no speed is asserted; the figures
# come from bench/analyze_bench.sh).
add_test(NAME analyze_bench_smoke
  COMMAND kaudit_analyze_bench --kernels 200000 --repeat 1
          --contract ${CMAKE_CURRENT_LIST_DIR}/../contracts/controls/matmul.json)
set_tests_properties(analyze_bench_smoke PROPERTIES LABELS "bench" TIMEOUT 300
  PASS_REGULAR_EXPRESSION "analyze: 200000 kernels in [0-9.]+ s = [0-9.]+ M kernel records/s")
