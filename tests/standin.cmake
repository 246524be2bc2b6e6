# tests/standin.cmake - the CI tests that need no GPU (issue 2, item 7).
#
# include() this from tests/CMakeLists.txt.  It builds
#   ${CMAKE_BINARY_DIR}/standin/           stand-in CUDA libraries with the real
#                                          sonames, version nodes and entry points:
#       libcuda.so.1  libcupti.so.13  libcudart.so.13
#       libcublas.so.13  libcublasLt.so.13  libcudnn.so.9
#   ${CMAKE_BINARY_DIR}/standin-nocupti/   the same without libcupti
#   ${CMAKE_BINARY_DIR}/standin-programs/  test programs, libext.so and
#                                          libstandin_probe.so
# and, when Criterion and the trace reader are available, the test_run_*
# tests, which run `kaudit run` on those programs and read the sessions
# (test_run_standin checks the stand-ins themselves).  See standin/README.md.
#
# It needs only the CUDA headers (KAUDIT_CUDA_INCLUDE / KAUDIT_CUDA_MAIN_INCLUDE
# from the top-level CMakeLists.txt).

set(STANDIN_SOURCE_DIR ${CMAKE_CURRENT_LIST_DIR}/standin)
set(STANDIN_PROGRAM_SOURCE_DIR ${CMAKE_CURRENT_LIST_DIR}/programs)
set(STANDIN_PYTHON_SOURCE_DIR ${CMAKE_CURRENT_LIST_DIR}/python)
set(STANDIN_DIR ${CMAKE_BINARY_DIR}/standin)
set(STANDIN_NOCUPTI_DIR ${CMAKE_BINARY_DIR}/standin-nocupti)
set(STANDIN_PROGRAMS_DIR ${CMAKE_BINARY_DIR}/standin-programs)
set(STANDIN_GEN_DIR ${CMAKE_BINARY_DIR}/standin-gen)
set(STANDIN_INCLUDES ${STANDIN_SOURCE_DIR} ${KAUDIT_CUDA_INCLUDE} ${KAUDIT_CUDA_MAIN_INCLUDE})

file(MAKE_DIRECTORY ${STANDIN_DIR} ${STANDIN_NOCUPTI_DIR} ${STANDIN_PROGRAMS_DIR} ${STANDIN_GEN_DIR})

# CUPTI's callback and result names, from the headers in use.
add_custom_command(
  OUTPUT ${STANDIN_GEN_DIR}/standin_names.c
  COMMAND ${CMAKE_COMMAND} -DCUDA_INCLUDE=${KAUDIT_CUDA_INCLUDE}
          -DOUT=${STANDIN_GEN_DIR}/standin_names.c -P ${STANDIN_SOURCE_DIR}/gen_names.cmake
  DEPENDS ${STANDIN_SOURCE_DIR}/gen_names.cmake
          ${KAUDIT_CUDA_INCLUDE}/cupti_runtime_cbid.h ${KAUDIT_CUDA_INCLUDE}/cupti_driver_cbid.h
          ${KAUDIT_CUDA_INCLUDE}/cupti_result.h
  COMMENT "Generating the stand-in CUPTI name tables")

# The runtime, linked whole into libcudart.so.13 and, hidden, into each vendor
# library (the real cuBLAS/cuBLASLt/cuDNN carry a static cudart).
add_library(standin_rt_objects OBJECT ${STANDIN_SOURCE_DIR}/cudart.c)
add_library(standin_vendor_objects OBJECT ${STANDIN_SOURCE_DIR}/vendor_common.c)
foreach(t standin_rt_objects standin_vendor_objects)
  set_target_properties(${t} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_include_directories(${t} PRIVATE ${STANDIN_INCLUDES})
  target_compile_options(${t} PRIVATE -Wno-deprecated-declarations)
endforeach()

# standin_library(<target> <file name> <map> sources...)
function(standin_library target filename map)
  add_library(${target} SHARED ${ARGN})
  string(REGEX MATCH "^lib(.*)\\.so\\.([0-9]+)$" _ ${filename})
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME ${CMAKE_MATCH_1}
    SOVERSION ${CMAKE_MATCH_2}
    LIBRARY_OUTPUT_DIRECTORY ${STANDIN_DIR}
    BUILD_RPATH "\$ORIGIN"
    C_VISIBILITY_PRESET default
    LINK_DEPENDS ${STANDIN_SOURCE_DIR}/${map})
  target_include_directories(${target} PRIVATE ${STANDIN_INCLUDES})
  target_compile_options(${target} PRIVATE -Wno-deprecated-declarations)
  target_link_options(${target} PRIVATE
    "LINKER:--version-script=${STANDIN_SOURCE_DIR}/${map}" "LINKER:-Bsymbolic" "LINKER:--no-undefined"
    "LINKER:--no-as-needed")
  target_link_libraries(${target} PRIVATE ${CMAKE_DL_LIBS} pthread m)
  if(NOT target STREQUAL "standin_cupti")
    add_custom_command(TARGET ${target} POST_BUILD
      COMMAND ${CMAKE_COMMAND} -E copy $<TARGET_FILE:${target}> ${STANDIN_NOCUPTI_DIR}/
      VERBATIM)
  endif()
endfunction()

standin_library(standin_cuda libcuda.so.1 libcuda.map ${STANDIN_SOURCE_DIR}/cuda_driver.c)
standin_library(standin_cupti libcupti.so.13 libcupti.map ${STANDIN_SOURCE_DIR}/cupti.c
  ${STANDIN_GEN_DIR}/standin_names.c)
standin_library(standin_cudart libcudart.so.13 libcudart.map $<TARGET_OBJECTS:standin_rt_objects>)
standin_library(standin_cublaslt libcublasLt.so.13 libcublasLt.map ${STANDIN_SOURCE_DIR}/cublaslt.c
  $<TARGET_OBJECTS:standin_rt_objects> $<TARGET_OBJECTS:standin_vendor_objects>)
standin_library(standin_cublas libcublas.so.13 libcublas.map ${STANDIN_SOURCE_DIR}/cublas.c
  $<TARGET_OBJECTS:standin_rt_objects> $<TARGET_OBJECTS:standin_vendor_objects>)
standin_library(standin_cudnn libcudnn.so.9 libcudnn.map ${STANDIN_SOURCE_DIR}/cudnn.c
  $<TARGET_OBJECTS:standin_rt_objects> $<TARGET_OBJECTS:standin_vendor_objects>)
# The real libcublas.so.13 needs libcublasLt.so.13.
target_link_libraries(standin_cublas PRIVATE standin_cublaslt)
# Nothing links libcuda.so.1: the runtimes and CUPTI dlopen() it, like the real ones.
add_dependencies(standin_cudart standin_cuda)
add_dependencies(standin_cupti standin_cuda)

add_custom_target(standin_libraries ALL DEPENDS standin_cuda standin_cupti standin_cudart
  standin_cublas standin_cublaslt standin_cudnn)

# ---- test programs --------------------------------------------------------------

function(standin_program name)
  add_executable(${name} ${STANDIN_PROGRAM_SOURCE_DIR}/${name}.c)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${STANDIN_PROGRAMS_DIR})
  target_include_directories(${name} PRIVATE ${STANDIN_PROGRAM_SOURCE_DIR} ${STANDIN_INCLUDES})
  target_compile_options(${name} PRIVATE -Wno-deprecated-declarations)
  target_link_options(${name} PRIVATE "LINKER:--no-as-needed")
  target_link_libraries(${name} PRIVATE ${ARGN})
endfunction()

standin_program(prog_mixed standin_cudart standin_cublas standin_cublaslt standin_cudnn)
standin_program(prog_lt_cache standin_cudart standin_cublaslt)
standin_program(prog_proc standin_cudart standin_cublas pthread)
standin_program(prog_recording standin_cudart ${CMAKE_DL_LIBS})
standin_program(prog_subscriber standin_cudart standin_cupti)
standin_program(prog_dlopen ${CMAKE_DL_LIBS})
# The module program talks to the driver directly, so it links libcuda.so.1.
standin_program(prog_module standin_cuda)
# The causal probe's vendor channel, switched on through the preload's export (dlsym).
standin_program(prog_probe standin_cudart standin_cublas standin_cublaslt standin_cudnn ${CMAKE_DL_LIBS} m)
add_dependencies(prog_dlopen standin_ext standin_ext_copy)

# libext.so, and the same object under another name (libext_copy.so): loaded
# where libext.so was after it is unloaded, its cuBLAS call comes from the
# same address.
foreach(ext ext ext_copy)
  add_library(standin_${ext} SHARED ${STANDIN_PROGRAM_SOURCE_DIR}/libext.c)
  set_target_properties(standin_${ext} PROPERTIES OUTPUT_NAME ${ext} PREFIX lib
    LIBRARY_OUTPUT_DIRECTORY ${STANDIN_PROGRAMS_DIR} C_VISIBILITY_PRESET hidden)
  target_include_directories(standin_${ext} PRIVATE ${STANDIN_PROGRAM_SOURCE_DIR} ${STANDIN_INCLUDES})
  target_link_options(standin_${ext} PRIVATE "LINKER:--no-as-needed")
  target_link_libraries(standin_${ext} PRIVATE standin_cublas standin_cudart)
endforeach()

# A candidate's extension on the stand-in cuBLAS and cuBLASLt, for the CPU audit
# controls of the causal probe's vendor channel (tests/audit/candidates/probe_vendor_*).
add_library(standin_probe_ext SHARED ${STANDIN_PROGRAM_SOURCE_DIR}/libprobe_ext.c)
set_target_properties(standin_probe_ext PROPERTIES OUTPUT_NAME probe_ext PREFIX lib
  LIBRARY_OUTPUT_DIRECTORY ${STANDIN_PROGRAMS_DIR} C_VISIBILITY_PRESET hidden)
target_include_directories(standin_probe_ext PRIVATE ${STANDIN_PROGRAM_SOURCE_DIR} ${STANDIN_INCLUDES})
target_compile_options(standin_probe_ext PRIVATE -Wno-deprecated-declarations)
target_link_options(standin_probe_ext PRIVATE "LINKER:--no-as-needed")
target_link_libraries(standin_probe_ext PRIVATE standin_cublas standin_cublaslt standin_cudart)

# A minimal CUPTI client to check the stand-ins themselves (test_run_standin).
add_library(standin_probe SHARED ${STANDIN_SOURCE_DIR}/standin_probe.c)
set_target_properties(standin_probe PROPERTIES OUTPUT_NAME standin_probe PREFIX lib
  LIBRARY_OUTPUT_DIRECTORY ${STANDIN_PROGRAMS_DIR})
target_include_directories(standin_probe PRIVATE ${STANDIN_INCLUDES})
target_link_libraries(standin_probe PRIVATE standin_cupti)

add_custom_target(standin_programs ALL DEPENDS prog_mixed prog_lt_cache prog_proc prog_recording prog_subscriber prog_dlopen
  prog_module prog_probe standin_ext standin_probe standin_probe_ext)

# ---- the tests --------------------------------------------------------------------

# The interpreter itself, not a launcher script (pyenv shims are shell scripts).
set(STANDIN_PYTHON3 "")
find_program(STANDIN_PYTHON3_LAUNCHER NAMES python3)
if(STANDIN_PYTHON3_LAUNCHER)
  execute_process(COMMAND ${STANDIN_PYTHON3_LAUNCHER} -c "import sys; print(sys.executable)"
    OUTPUT_VARIABLE _standin_python OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _standin_rc
    ERROR_QUIET)
  if(_standin_rc EQUAL 0 AND EXISTS "${_standin_python}")
    set(STANDIN_PYTHON3 "${_standin_python}")
  endif()
endif()

if(NOT CRITERION_FOUND OR NOT TARGET kaudit_session OR NOT TARGET kaudit OR NOT TARGET kaudit_preload)
  message(STATUS "kaudit: stand-in run tests not built (need Criterion, kaudit, the preload and the reader)")
  return()
endif()

add_library(standin_run_helpers STATIC ${CMAKE_CURRENT_LIST_DIR}/run_helpers.c)
target_include_directories(standin_run_helpers PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(standin_run_helpers PUBLIC kaudit_session PkgConfig::CRITERION ${CMAKE_DL_LIBS})
target_compile_definitions(standin_run_helpers PUBLIC
  KAUDIT_BIN="$<TARGET_FILE:kaudit>"
  KAUDIT_PRELOAD_LIB="$<TARGET_FILE:kaudit_preload>"
  STANDIN_DIR="${STANDIN_DIR}"
  STANDIN_NOCUPTI_DIR="${STANDIN_NOCUPTI_DIR}"
  PROGRAMS_DIR="${STANDIN_PROGRAMS_DIR}"
  STANDIN_PROBE="$<TARGET_FILE:standin_probe>"
  PYTHON_DIR="${STANDIN_PYTHON_SOURCE_DIR}"
  PYTHON3="${STANDIN_PYTHON3}")
add_dependencies(standin_run_helpers standin_libraries standin_programs kaudit kaudit_preload)

file(GLOB STANDIN_RUN_TESTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/test_run_*.c)
foreach(src IN LISTS STANDIN_RUN_TESTS)
  get_filename_component(name ${src} NAME_WE)
  add_executable(${name} ${src})
  target_link_libraries(${name} PRIVATE standin_run_helpers)
  # Criterion runs tests in parallel workers; each test uses its own directory.
  add_test(NAME ${name} COMMAND ${name} --jobs=2)
  set_tests_properties(${name} PROPERTIES TIMEOUT 900 SKIP_RETURN_CODE 77 LABELS standin)
endforeach()

# ---- test_run_audit: vendor entry points found with dlsym() (LD_AUDIT) -------------

# cuBLAS through dlsym()/dlvsym() on RTLD_LOCAL handles, and libext.so loaded
# RTLD_DEEPBIND; links no CUDA library.
standin_program(prog_audit_local ${CMAKE_DL_LIBS})
add_dependencies(prog_audit_local standin_ext)
# libcublas under another file name, soname unchanged, as auditwheel leaves it.
add_custom_command(TARGET standin_cublas POST_BUILD
  COMMAND ${CMAKE_COMMAND} -E copy $<TARGET_FILE:standin_cublas>
          ${STANDIN_PROGRAMS_DIR}/libcublas-3b81d170.so.13
  VERBATIM)
# An interposer chain: libchain.so wraps malloc/free and looks cuBLAS up with
# RTLD_NEXT / RTLD_DEFAULT.  Linked first, so libcublas.so.13 comes after it.
add_library(standin_chain SHARED ${STANDIN_PROGRAM_SOURCE_DIR}/libchain.c)
set_target_properties(standin_chain PROPERTIES OUTPUT_NAME chain PREFIX lib
  LIBRARY_OUTPUT_DIRECTORY ${STANDIN_PROGRAMS_DIR} C_VISIBILITY_PRESET hidden)
target_link_libraries(standin_chain PRIVATE ${CMAKE_DL_LIBS})
standin_program(prog_audit_chain standin_chain standin_cublas standin_cudart ${CMAKE_DL_LIBS})
add_dependencies(test_run_audit prog_audit_local prog_audit_chain kaudit_audit)
target_compile_definitions(test_run_audit PRIVATE KAUDIT_AUDIT_LIB="$<TARGET_FILE:kaudit_audit>")

# ---- test_run_provenance: Python-side provenance judged by the analyzer -----------
if(TARGET kaudit_analyzer)
  target_link_libraries(test_run_provenance PRIVATE kaudit_analyzer)
else()
  set_target_properties(test_run_provenance PROPERTIES EXCLUDE_FROM_ALL ON)
  set_tests_properties(test_run_provenance PROPERTIES DISABLED ON)
endif()
