# Fuzzing the analyzer for a bounded time (fuzz/analyzer/run.sh): the
# contract parser and the analysis of a session with a hostile trace.  Builds
# the fuzz targets with clang's libFuzzer in its own build tree; SKIPs (exit
# 77, with the reason) when clang or libFuzzer is missing.  Label "fuzz":
# `ctest -LE fuzz` leaves it out.  include()d from tests/CMakeLists.txt.
set(KA_FUZZ_SECONDS 20 CACHE STRING "seconds each analyzer fuzzer runs in the analyzer_fuzz test")
add_test(NAME analyzer_fuzz
  COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/../fuzz/analyzer/run.sh ${CMAKE_CURRENT_BINARY_DIR}/analyzer_fuzz ${KA_FUZZ_SECONDS})
set_tests_properties(analyzer_fuzz PROPERTIES LABELS "analyzer;fuzz" TIMEOUT 900 SKIP_RETURN_CODE 77)
