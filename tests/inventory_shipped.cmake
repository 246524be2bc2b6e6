# inventory_shipped.cmake - the inventory shipped in inventory/data verifies,
# and rebuilding it from this machine's libraries gives the same inventory.
#   cmake -DKAUDIT=<kaudit> -DSHIPPED=<file> -DNAMES=<h200 names> -DLIBDIR=<dir> -DWORK=<dir>
#         -P inventory_shipped.cmake
# Prints "SKIPPED: ..." (the test's SKIP_REGULAR_EXPRESSION) when the
# libraries are not those the inventory pins.

execute_process(COMMAND ${KAUDIT} inventory verify ${SHIPPED} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the shipped inventory does not verify:\n${out}${err}")
endif()
message(STATUS "${out}")

# What PyTorch launched on the H200 (../shared/notes/h200-torch-kernel-names.txt):
# 19 names cuobjdump lists for cuBLAS/cuBLASLt/cuDNN are exact, the 12 nvjet
# GEMM kernels (named at run time) match a pattern, PyTorch's own kernels nothing.
execute_process(COMMAND ${KAUDIT} inventory lookup ${SHIPPED} -
  INPUT_FILE ${NAMES} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 1)      # 1: some names (PyTorch's own) have no match
  message(FATAL_ERROR "lookup of the H200 names: exit ${rc}\n${err}")
endif()
string(REPLACE "\n" ";" lines "${out}")
set(exact "")
set(pattern "")
set(none "")
foreach(line IN LISTS lines)
  if(line MATCHES "^([^:]+): exact \\(cubin\\)")
    list(APPEND exact ${CMAKE_MATCH_1})
  elseif(line MATCHES "^(nvjet_[^:]+): pattern 'nvjet_sm90_")
    list(APPEND pattern ${CMAKE_MATCH_1})
  elseif(line MATCHES "^([^:]+): no match$")
    list(APPEND none ${CMAKE_MATCH_1})
  endif()
endforeach()
list(REMOVE_DUPLICATES exact)
list(LENGTH exact n_exact)
list(LENGTH pattern n_pattern)
list(LENGTH none n_none)
if(NOT (n_exact EQUAL 19 AND n_pattern EQUAL 12 AND n_none EQUAL 10))
  message(FATAL_ERROR "H200 names: ${n_exact} exact (want 19), ${n_pattern} nvjet patterns (want 12), "
                      "${n_none} without match (want 10):\n${out}")
endif()
foreach(name IN LISTS none)
  if(NOT name MATCHES "^_ZN2at6native")
    message(FATAL_ERROR "'${name}' should have matched")
  endif()
endforeach()
message(STATUS "H200 names: 19 exact, 12 nvjet by pattern, 10 PyTorch kernels without match")

execute_process(COMMAND ${KAUDIT} inventory verify --libraries ${SHIPPED} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(STATUS "SKIPPED: the rebuild check needs the libraries the inventory pins: ${err}")
  return()
endif()

file(GLOB cudnn ${LIBDIR}/libcudnn*.so.9)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${KAUDIT} inventory build --meta set=cuda-13.0-lib64 --meta builder=kaudit-0.1.0
    -o ${WORK}/rebuilt.inventory.zst ${LIBDIR}/libcublas.so.13 ${LIBDIR}/libcublasLt.so.13 ${cudnn}
  RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "rebuild failed: ${err}")
endif()
execute_process(COMMAND ${KAUDIT} inventory diff ${SHIPPED} ${WORK}/rebuilt.inventory.zst
  RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the rebuilt inventory differs from the shipped one:\n${out}")
endif()
message(STATUS "rebuilt from ${LIBDIR}: identical (${out})")
