# The validator statistics (validators/): McNemar and Holm against the
# paper's Table B.2, the rates and bounds on ledgers with known answers, the
# ledger reader's refusals, and `kaudit validators` itself; the selection
# gates (test_selection) against Appendix G and a hand-counted pool.  Included
# from tests/CMakeLists.txt.
if(TARGET kaudit_validators)
  add_executable(test_validators ${CMAKE_CURRENT_LIST_DIR}/test_validators.c)
  target_link_libraries(test_validators PRIVATE kaudit_validators PkgConfig::CRITERION)
  target_compile_definitions(test_validators PRIVATE VALIDATORS_DIR="${CMAKE_CURRENT_LIST_DIR}/validators")
  kaudit_sanitize(test_validators)
  add_test(NAME validators COMMAND test_validators)
  add_executable(test_selection ${CMAKE_CURRENT_LIST_DIR}/test_selection.c)
  target_link_libraries(test_selection PRIVATE kaudit_validators PkgConfig::CRITERION)
  target_compile_definitions(test_selection PRIVATE VALIDATORS_DIR="${CMAKE_CURRENT_LIST_DIR}/validators")
  kaudit_sanitize(test_selection)
  add_test(NAME validators_selection COMMAND test_selection)
  # KernelBench's own results joined into a ledger as weak decisions (`kaudit ledger weak`)
  add_test(NAME cli_ledger_weak COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/cli_ledger_weak.sh $<TARGET_FILE:kaudit> ${CMAKE_SOURCE_DIR})
  add_test(NAME cli_validators COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/cli_validators.sh $<TARGET_FILE:kaudit>
    ${CMAKE_SOURCE_DIR})
endif()
# Agreement with human labels (validators/labels.c): the paper's Table 8 from
# Table H.1 (tests/validators/ov120.jsonl), the completion's known answers,
# the labels reader's refusals.
if(TARGET kaudit_validators)
  add_executable(test_validators_labels ${CMAKE_CURRENT_LIST_DIR}/test_validators_labels.c)
  target_link_libraries(test_validators_labels PRIVATE kaudit_validators PkgConfig::CRITERION)
  target_compile_definitions(test_validators_labels PRIVATE VALIDATORS_DIR="${CMAKE_CURRENT_LIST_DIR}/validators")
  kaudit_sanitize(test_validators_labels)
  add_test(NAME validators_labels COMMAND test_validators_labels)
endif()
