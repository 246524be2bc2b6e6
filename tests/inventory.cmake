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
  # Calibration from the sessions recorded on the H200 (examples/).
  add_executable(inventory_calibrate ${KINV_TEST_DIR}/inventory_calibrate.c)
  target_link_libraries(inventory_calibrate PRIVATE kaudit_inventory kaudit_trace_builder PkgConfig::CRITERION)
  target_compile_definitions(inventory_calibrate PRIVATE KINV_REPO_DIR="${KINV_TEST_DIR}/..")
  add_test(NAME inventory_calibrate COMMAND inventory_calibrate)
  set_tests_properties(inventory_calibrate PROPERTIES LABELS "inventory" TIMEOUT 120)
  # The name-collision rule on the sessions recorded on the H200 (examples/),
  # against the shipped H200-calibrated inventory.
  add_executable(inventory_attribution_recorded ${KINV_TEST_DIR}/inventory_attribution_recorded.c)
  target_link_libraries(inventory_attribution_recorded PRIVATE kaudit_inventory PkgConfig::CRITERION)
  target_compile_definitions(inventory_attribution_recorded PRIVATE KAUDIT_SOURCE_DIR="${KINV_TEST_DIR}/..")
  add_test(NAME inventory_attribution_recorded COMMAND inventory_attribution_recorded)
  set_tests_properties(inventory_attribution_recorded PROPERTIES LABELS "inventory" TIMEOUT 120)
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

# `kaudit inventory calibrate` end to end: the shipped inventory and the H200
# sessions give an observed nvjet entry that verify and lookup report.
if(TARGET kaudit)
  add_test(NAME inventory_calibrate_cli
    COMMAND sh -c "\"$1\" inventory calibrate -o \"$2\" \"$3\" \"$4\" \"$5\" && \"$1\" inventory verify \"$2\" && \"$1\" inventory lookup \"$2\" nvjet_sm90_tst_64x40_64x16_2x1_v_bz_NNT"
            sh $<TARGET_FILE:kaudit> ${CMAKE_CURRENT_BINARY_DIR}/inventory_calibrated.inv
            ${KINV_TEST_DIR}/../inventory/data/cuda-13.0-lib64.inventory.zst
            ${KINV_TEST_DIR}/../examples/h200-torch-ops/session ${KINV_TEST_DIR}/../examples/h200-ctypes-cublas/session)
  set_tests_properties(inventory_calibrate_cli PROPERTIES LABELS "inventory" TIMEOUT 120
    PASS_REGULAR_EXPRESSION "observed 1, pattern.*nvjet_sm90_tst_64x40_64x16_2x1_v_bz_NNT: observed \\(observed\\) in libcublas.so.13")
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

# The shipped H200-calibrated inventory verifies, and calibrating the shipped
# base inventory from the shipped session reproduces its entries.
set(KINV_CALIBRATION_TAR ${CMAKE_SOURCE_DIR}/inventory/data/calibration/h200-torch2.11-calibration-session.tar.gz)
set(KINV_CALIBRATED ${CMAKE_SOURCE_DIR}/inventory/data/h200-torch2.11-calibrated.inventory.zst)
set(KINV_BASE ${CMAKE_SOURCE_DIR}/inventory/data/cuda-13.0-lib64.inventory.zst)
add_test(NAME inventory_calibrated_reproduces
  COMMAND sh -c "set -e; rm -rf calibration-repro; mkdir calibration-repro; tar xzf '${KINV_CALIBRATION_TAR}' -C calibration-repro; \"$<TARGET_FILE:kaudit>\" inventory verify '${KINV_CALIBRATED}'; \"$<TARGET_FILE:kaudit>\" inventory calibrate -o calibration-repro/out.inventory.zst '${KINV_BASE}' calibration-repro/calibration > /dev/null; \"$<TARGET_FILE:kaudit>\" inventory diff '${KINV_CALIBRATED}' calibration-repro/out.inventory.zst; \"$<TARGET_FILE:kaudit>\" inventory lookup '${KINV_CALIBRATED}' nvjet_sm90_hsh_128x128_64x6_2x1_v_bz_NTT | grep -q ': observed'")
set_tests_properties(inventory_calibrated_reproduces PROPERTIES LABELS "inventory")
