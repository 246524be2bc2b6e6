# Tests of the semantic axis's numerics: the tensor file reader, the Python
# writer against it, and the calibrated tolerance.  Included from
# tests/CMakeLists.txt when Criterion is found.

add_executable(test_tolerance ${CMAKE_CURRENT_LIST_DIR}/test_tolerance.c)
target_link_libraries(test_tolerance PRIVATE kaudit_semantic PkgConfig::CRITERION)
kaudit_sanitize(test_tolerance)
add_test(NAME tolerance COMMAND test_tolerance)

add_executable(test_tensor_file ${CMAKE_CURRENT_LIST_DIR}/test_tensor_file.c)
target_link_libraries(test_tensor_file PRIVATE kaudit_semantic PkgConfig::CRITERION)
kaudit_sanitize(test_tensor_file)
add_test(NAME tensor_file COMMAND test_tensor_file)

# runner/kaudit_tensors.py writes, the C reader reads.  Only a python where
# `import torch` works can write the file; without one the test is skipped
# (77), not passed.
set(KAUDIT_TORCH_PYTHON "/usr/bin/python3" CACHE FILEPATH "a python with torch, for tensor_file_python")
set(_kaudit_torch_python "")
if(EXISTS "${KAUDIT_TORCH_PYTHON}")
  execute_process(COMMAND "${KAUDIT_TORCH_PYTHON}" -c "import torch"
    RESULT_VARIABLE _kaudit_torch_rc OUTPUT_QUIET ERROR_QUIET)
  if(_kaudit_torch_rc EQUAL 0)
    set(_kaudit_torch_python "${KAUDIT_TORCH_PYTHON}")
  endif()
endif()
if(NOT _kaudit_torch_python)
  message(STATUS "kaudit: no torch in ${KAUDIT_TORCH_PYTHON}; tensor_file_python will be skipped")
endif()
add_executable(tensor_file_python_check ${CMAKE_CURRENT_LIST_DIR}/tensor_file_python_check.c)
target_link_libraries(tensor_file_python_check PRIVATE kaudit_semantic)
kaudit_sanitize(tensor_file_python_check)
add_test(NAME tensor_file_python COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/tensor_file_python.sh
  "${_kaudit_torch_python}" $<TARGET_FILE:tensor_file_python_check> ${CMAKE_SOURCE_DIR}
  ${CMAKE_CURRENT_BINARY_DIR}/tensor_file_python)
set_tests_properties(tensor_file_python PROPERTIES SKIP_RETURN_CODE 77)

# The semantic verdict on runner directories built by hand (needs the
# analyzer tier's cJSON and xxHash: kaudit_stress).
if(TARGET kaudit_stress)
  add_executable(test_semantic ${CMAKE_CURRENT_LIST_DIR}/test_semantic.c)
  target_link_libraries(test_semantic PRIVATE kaudit_stress PkgConfig::CRITERION)
  kaudit_sanitize(test_semantic)
  add_test(NAME semantic_verdict COMMAND test_semantic)
endif()
