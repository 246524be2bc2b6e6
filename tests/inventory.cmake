# Tests of the vendor kernel inventory (inventory/, docs/inventory.md).
# include()d from tests/CMakeLists.txt, after the kaudit and kaudit_inventory
# targets exist.  Labels: "inventory" on all; "slow" (the exactness test reads
# ~1.1 GB of CUDA libraries), "fuzz" (builds with clang and fuzzes for a
# bounded time): `ctest -LE fuzz` leaves the fuzzers out.
if(NOT TARGET kaudit_inventory)
  message(STATUS "kaudit: inventory tests not built (no kaudit_inventory target)")
  return()
endif()

set(KINV_TEST_DIR ${CMAKE_CURRENT_LIST_DIR})
set(KINV_FIXTURES ${KINV_TEST_DIR}/fixtures/inventory)
if(DEFINED KAUDIT_CUDA_ROOT)
  set(KINV_CUDA_LIBDIR ${KAUDIT_CUDA_ROOT}/lib64)
else()
  set(KINV_CUDA_LIBDIR /usr/local/cuda/lib64)
endif()
set(KINV_FUZZ_SECONDS 20 CACHE STRING "seconds each inventory fuzzer runs in the inventory_fuzz test")

# Unit tests (Criterion): synthetic libraries, format, verification, lookups,
# patterns, bad input, the attribution rule.
if(CRITERION_FOUND)
  add_executable(inventory_test ${KINV_TEST_DIR}/inventory_test.c)
  target_link_libraries(inventory_test PRIVATE kaudit_inventory_synth kaudit_inventory PkgConfig::CRITERION)
  target_compile_definitions(inventory_test PRIVATE KINV_FIXTURES_DIR="${KINV_FIXTURES}")
  add_test(NAME inventory_unit COMMAND inventory_test)
  set_tests_properties(inventory_unit PROPERTIES LABELS "inventory" TIMEOUT 300)
else()
  message(STATUS "kaudit: inventory unit tests not built (Criterion not found)")
endif()

# Exactness against the cuobjdump oracle, for the CUDA libraries of this
# machine whose sha256 matches the oracle's (skipped, exit 77, otherwise).
add_executable(inventory_exact ${KINV_TEST_DIR}/inventory_exact.c)
target_link_libraries(inventory_exact PRIVATE kaudit_inventory)
add_test(NAME inventory_exact
  COMMAND inventory_exact ${KINV_FIXTURES}/cuobjdump-entry-oracle.txt.gz ${KINV_CUDA_LIBDIR})
set_tests_properties(inventory_exact PROPERTIES LABELS "inventory;slow" TIMEOUT 900 SKIP_RETURN_CODE 77)

# `kaudit inventory` end to end.
add_executable(inventory_mkfixture ${KINV_TEST_DIR}/inventory_mkfixture.c)
target_link_libraries(inventory_mkfixture PRIVATE kaudit_inventory_synth)
if(TARGET kaudit)
  add_test(NAME inventory_cli
    COMMAND ${CMAKE_COMMAND} -DKAUDIT=$<TARGET_FILE:kaudit> -DMKFIXTURE=$<TARGET_FILE:inventory_mkfixture>
            -DWORK=${CMAKE_CURRENT_BINARY_DIR}/inventory_cli -P ${KINV_TEST_DIR}/inventory_cli.cmake)
  set_tests_properties(inventory_cli PROPERTIES LABELS "inventory" TIMEOUT 120)
endif()

# The inventory shipped in inventory/data verifies, and rebuilds identically
# from this machine's CUDA libraries (skipped when they are not the pinned ones).
if(TARGET kaudit)
  add_test(NAME inventory_shipped
    COMMAND ${CMAKE_COMMAND} -DKAUDIT=$<TARGET_FILE:kaudit>
            -DSHIPPED=${KINV_TEST_DIR}/../inventory/data/cuda-13.0-lib64.inventory.zst
            -DNAMES=${KINV_FIXTURES}/h200-torch-kernel-names.txt
            -DLIBDIR=${KINV_CUDA_LIBDIR} -DWORK=${CMAKE_CURRENT_BINARY_DIR}/inventory_shipped
            -P ${KINV_TEST_DIR}/inventory_shipped.cmake)
  set_tests_properties(inventory_shipped PROPERTIES LABELS "inventory;slow" TIMEOUT 900
    SKIP_REGULAR_EXPRESSION "SKIPPED:")
endif()

# Synthetic libraries for the benchmark smoke test.
add_test(NAME inventory_fixture_libs
  COMMAND inventory_mkfixture ${CMAKE_CURRENT_BINARY_DIR}/inventory_libs)
set_tests_properties(inventory_fixture_libs PROPERTIES LABELS "inventory" FIXTURES_SETUP inventory_libs)

# The benchmark program runs (a smoke test: the figures come from bench/inventory_bench.sh).
if(TARGET kaudit_inventory_bench)
  add_test(NAME inventory_bench_smoke
    COMMAND kaudit_inventory_bench --repeat 1 --lookups 200000 ${CMAKE_CURRENT_BINARY_DIR}/inventory_libs)
  set_tests_properties(inventory_bench_smoke PROPERTIES LABELS "inventory" TIMEOUT 120
    FIXTURES_REQUIRED inventory_libs PASS_REGULAR_EXPRESSION "lookups: [0-9.]+ M names/s")
endif()

# Fuzzing for a bounded time (fuzz/inventory/run.sh): builds the fuzz targets
# with clang's libFuzzer in its own build tree; SKIPs (exit 77, with the
# reason) when clang or libFuzzer is missing.
add_test(NAME inventory_fuzz
  COMMAND sh ${KINV_TEST_DIR}/../fuzz/inventory/run.sh ${CMAKE_CURRENT_BINARY_DIR}/inventory_fuzz ${KINV_FUZZ_SECONDS})
set_tests_properties(inventory_fuzz PROPERTIES LABELS "inventory;fuzz" TIMEOUT 900 SKIP_RETURN_CODE 77)
