# The timing statistics on synthetic latencies with known answers
# (timing/timing_stats.h).  Included from tests/CMakeLists.txt.
add_executable(test_timing_stats ${CMAKE_CURRENT_LIST_DIR}/test_timing_stats.c)
target_link_libraries(test_timing_stats PRIVATE kaudit_timing PkgConfig::CRITERION)
kaudit_sanitize(test_timing_stats)
add_test(NAME timing_stats COMMAND test_timing_stats)

# The decisions on runner logs written by hand (audit/audit_timing.c).
if(TARGET kaudit_audit_pipeline)
  add_executable(test_audit_timing ${CMAKE_CURRENT_LIST_DIR}/test_audit_timing.c)
  target_link_libraries(test_audit_timing PRIVATE kaudit_audit_pipeline PkgConfig::CRITERION)
  kaudit_sanitize(test_audit_timing)
  add_test(NAME audit_timing COMMAND test_audit_timing)
endif()
