# Tests of contracts and the analyzer's verdict rules (docs/analysis.md).
# Included from tests/CMakeLists.txt when Criterion is found.
if(NOT TARGET kaudit_analyzer)
  return()
endif()
add_executable(test_contract ${CMAKE_CURRENT_LIST_DIR}/test_contract.c)
target_link_libraries(test_contract PRIVATE kaudit_analyzer kaudit_trace_builder PkgConfig::CRITERION)
kaudit_sanitize(test_contract)
add_test(NAME contract COMMAND test_contract)

add_executable(test_analysis ${CMAKE_CURRENT_LIST_DIR}/test_analysis.c)
target_link_libraries(test_analysis PRIVATE kaudit_analyzer kaudit_trace_builder PkgConfig::CRITERION)
kaudit_sanitize(test_analysis)
add_test(NAME analysis COMMAND test_analysis)

# kaudit analyze / report / contract on bad input, the saved analysis and the timeline.
add_test(NAME cli_analyze COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/cli_analyze.sh $<TARGET_FILE:kaudit> ${CMAKE_SOURCE_DIR})
add_test(NAME cli_seal COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/cli_seal.sh $<TARGET_FILE:kaudit> ${CMAKE_SOURCE_DIR})

# The H200 controls and the GPU suite's sessions against their expected verdicts.
add_executable(test_controls ${CMAKE_CURRENT_LIST_DIR}/test_controls.c)
target_link_libraries(test_controls PRIVATE kaudit_analyzer PkgConfig::CRITERION)
target_compile_definitions(test_controls PRIVATE KAUDIT_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
kaudit_sanitize(test_controls)
add_test(NAME controls COMMAND test_controls)
set_tests_properties(controls PROPERTIES LABELS recorded)

# The work classes of real kernel names, one operator family at a time (analyzer/work_classes.c).
add_executable(test_work_classes ${CMAKE_CURRENT_LIST_DIR}/test_work_classes.c)
target_link_libraries(test_work_classes PRIVATE kaudit_analyzer PkgConfig::CRITERION)
kaudit_sanitize(test_work_classes)
add_test(NAME analysis_work_classes COMMAND test_work_classes)
