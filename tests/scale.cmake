# Batches at scale (docs/audit.md, "Shards, GPUs and Slurm arrays"): the
# split (--shard, Slurm array variables, --gpus), kaudit ledger merge, and a
# 2-task Slurm job array of CPU audits on a one-node cluster started by the
# test (skipped without slurm-wlm and munge, unless CI is set).  Included
# from tests/CMakeLists.txt after audit.cmake, whose python it reuses.
if(NOT TARGET kaudit_analyzer)
  return()
endif()
add_executable(test_audit_shard ${CMAKE_CURRENT_LIST_DIR}/test_audit_shard.c)
target_link_libraries(test_audit_shard PRIVATE kaudit_audit_pipeline)
target_link_libraries(test_audit_shard PRIVATE PkgConfig::CRITERION)
kaudit_sanitize(test_audit_shard)
add_test(NAME audit_shard COMMAND test_audit_shard)
add_test(NAME audit_cli_shards COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/audit_cli_shards.sh $<TARGET_FILE:kaudit>)
if(NOT DEFINED _kaudit_audit_python)
  set(_kaudit_audit_python "/usr/bin/python3")
endif()
add_test(NAME slurm_array COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/slurm_array.sh
  $<TARGET_FILE:kaudit> "${_kaudit_audit_python}" ${CMAKE_SOURCE_DIR})
set_tests_properties(slurm_array PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900)

add_executable(test_audit_limits ${CMAKE_CURRENT_LIST_DIR}/test_audit_limits.c)
target_link_libraries(test_audit_limits PRIVATE kaudit_audit_pipeline)
target_link_libraries(test_audit_limits PRIVATE PkgConfig::CRITERION)
kaudit_sanitize(test_audit_limits)
add_test(NAME audit_limits COMMAND test_audit_limits)
