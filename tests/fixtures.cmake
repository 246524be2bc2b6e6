# Sessions recorded on the H200 by tests/gpu/run.sh (examples/h200-*), checked
# again in CI with the GPU suite's own assertions: the trace reader, kaudit dump
# and the checker must still find on real evidence what they found there.
find_package(Python3 COMPONENTS Interpreter)
if(NOT Python3_Interpreter_FOUND)
  message(WARNING "kaudit: python3 not found; the recorded-session checks are not run")
  return()
endif()

set(KAT_GPU_CHECKER ${CMAKE_SOURCE_DIR}/tests/gpu/check_session.py)
add_test(NAME gpu_checker_selftest
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tests/gpu/selftest_check_session.py)
# The overhead benchmark's readings (bench/overhead.sh), on synthetic runs.
add_test(NAME bench_summary_selftest
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/bench/selftest_summarize.py)

foreach(scenario raw_cublas torch_ops side_stream fork_subprocess ctypes_cublas)
  string(REPLACE "_" "-" name ${scenario})
  set(dir ${CMAKE_SOURCE_DIR}/examples/h200-${name})
  set(extra "")
  if(EXISTS ${dir}/profile.json)
    set(extra "--profile ${dir}/profile.json")
  endif()
  add_test(NAME recorded_${scenario}
    COMMAND sh -c "\"$<TARGET_FILE:kaudit>\" dump --json \"${dir}/session\" > recorded_${scenario}.json && \"${Python3_EXECUTABLE}\" \"${KAT_GPU_CHECKER}\" ${scenario} --dump recorded_${scenario}.json --stderr \"${dir}/stderr.txt\" ${extra}")
  set_tests_properties(recorded_${scenario} PROPERTIES LABELS recorded)
endforeach()
