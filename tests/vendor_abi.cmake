# vendor_abi.cmake - the ABI test of the cuBLAS / cuBLASLt / cuDNN wrappers.
#
# include()d from tests/CMakeLists.txt.  Needs the real vendor headers
# (cublas_v2.h, cublasLt.h, cudnn.h); without them the test is left out with
# a message.  At run time the test loads libcublasLt.so.13 and libcudnn.so.9
# when it can (they need no GPU for descriptors) and skips those parts if not.
#
#   test_vendor_abi      C: prototypes and constants checked at compile time,
#                        then the wrappers run against fakes (ctest: vendor_abi)
#   test_vendor_abi_cxx  the same file compiled as C++, compile only: the half
#                        and bfloat16 cuBLAS routines are declared for C++ only

option(KAUDIT_VENDOR_ABI_CXX "also check the half/bfloat16 cuBLAS prototypes with a C++ compiler" ON)

find_path(KAUDIT_CUDNN_INCLUDE cudnn.h
  HINTS ${KAUDIT_CUDA_ROOT}/include /usr/include /usr/include/x86_64-linux-gnu)

if(EXISTS "${KAUDIT_CUDA_MAIN_INCLUDE}/cublas_v2.h" AND EXISTS "${KAUDIT_CUDA_MAIN_INCLUDE}/cublasLt.h"
   AND KAUDIT_CUDNN_INCLUDE)
  set(_kat_preload_dir ${PROJECT_SOURCE_DIR}/preload)
  set(_kat_abi_includes ${_kat_preload_dir} ${CMAKE_SOURCE_DIR}/session ${KAUDIT_CUDA_MAIN_INCLUDE} ${KAUDIT_CUDNN_INCLUDE})

  # The wrappers are compiled into the test, next to stand-ins for the preload core.
  add_executable(test_vendor_abi
    ${CMAKE_CURRENT_LIST_DIR}/test_vendor_abi.c
    ${_kat_preload_dir}/vendor_cublas.c
    ${_kat_preload_dir}/vendor_cublaslt.c
    ${_kat_preload_dir}/vendor_cudnn.c)
  target_include_directories(test_vendor_abi PRIVATE ${_kat_abi_includes})
  target_link_libraries(test_vendor_abi PRIVATE ${CMAKE_DL_LIBS} pthread)
  add_test(NAME vendor_abi COMMAND test_vendor_abi)
  # The toolkit's libraries, for the parts that use real descriptors.
  set_tests_properties(vendor_abi PROPERTIES
    ENVIRONMENT "LD_LIBRARY_PATH=${KAUDIT_CUDA_ROOT}/lib64:${KAUDIT_CUDA_ROOT}/lib:$ENV{LD_LIBRARY_PATH}")

  if(KAUDIT_VENDOR_ABI_CXX)
    include(CheckLanguage)
    check_language(CXX)
    if(CMAKE_CXX_COMPILER)
      enable_language(CXX)
      # A copy, so that the C target keeps compiling the file as C.
      configure_file(${CMAKE_CURRENT_LIST_DIR}/test_vendor_abi.c
                     ${CMAKE_CURRENT_BINARY_DIR}/test_vendor_abi_cxx.cpp COPYONLY)
      add_library(test_vendor_abi_cxx OBJECT ${CMAKE_CURRENT_BINARY_DIR}/test_vendor_abi_cxx.cpp)
      target_include_directories(test_vendor_abi_cxx PRIVATE ${_kat_abi_includes})
      set_target_properties(test_vendor_abi_cxx PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON)
      add_dependencies(test_vendor_abi test_vendor_abi_cxx)
    else()
      message(STATUS "kaudit: no C++ compiler, half/bfloat16 cuBLAS prototypes not checked")
    endif()
  endif()
else()
  message(STATUS "kaudit: cublas_v2.h, cublasLt.h or cudnn.h not found, vendor_abi test left out")
endif()
