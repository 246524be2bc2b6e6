# NVTX injection, library and thread records.  include()d from
# tests/CMakeLists.txt (paths are relative to this file's directory).
#
#   nvtx_prog       fixture: NVTX ranges/marks/domains + three threads
#   kat_nvtx_dup    fixture: a shared object with a SONAME, also copied to a
#                   second directory so that it can be loaded twice
#   test_nvtx_unit  nvtx_inject.c, libraries.c and threads.c against an
#                   in-memory writer stand-in (no kaudit run needed)
#   test_nvtx       `kaudit run` on nvtx_prog, read back with the trace reader

set(KAT_NVTX_DIR ${CMAKE_CURRENT_LIST_DIR})

add_executable(nvtx_prog ${KAT_NVTX_DIR}/programs/nvtx_prog.c)
target_include_directories(nvtx_prog PRIVATE ${KAUDIT_CUDA_MAIN_INCLUDE})
target_link_libraries(nvtx_prog PRIVATE ${CMAKE_DL_LIBS} pthread)

add_library(kat_nvtx_dup SHARED ${KAT_NVTX_DIR}/programs/nvtx_dup_lib.c)
set_target_properties(kat_nvtx_dup PROPERTIES
  OUTPUT_NAME kat_nvtx_dup NO_SONAME OFF
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/nvtx_dup_a)
target_link_options(kat_nvtx_dup PRIVATE -Wl,-soname,libkat_nvtx_dup.so)
set(KAT_NVTX_DUP_COPY ${CMAKE_CURRENT_BINARY_DIR}/nvtx_dup_b/libkat_nvtx_dup.so)
add_custom_command(TARGET kat_nvtx_dup POST_BUILD
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/nvtx_dup_b
  COMMAND ${CMAKE_COMMAND} -E copy $<TARGET_FILE:kat_nvtx_dup> ${KAT_NVTX_DUP_COPY})

if(CRITERION_FOUND)
  add_executable(test_nvtx_unit ${KAT_NVTX_DIR}/test_nvtx_unit.c
    ${CMAKE_SOURCE_DIR}/preload/nvtx_inject.c
    ${CMAKE_SOURCE_DIR}/preload/libraries.c
    ${CMAKE_SOURCE_DIR}/preload/threads.c)
  target_include_directories(test_nvtx_unit PRIVATE ${CMAKE_SOURCE_DIR}/preload ${CMAKE_SOURCE_DIR}/session
    ${KAUDIT_CUDA_MAIN_INCLUDE})
  # Hidden like the preload itself; what is exported (pthread_create, the fake
  # cudaEventElapsedTime) must be seen by dlsym(RTLD_DEFAULT).
  target_compile_options(test_nvtx_unit PRIVATE -fvisibility=hidden)
  set_target_properties(test_nvtx_unit PROPERTIES ENABLE_EXPORTS ON)
  target_compile_definitions(test_nvtx_unit PRIVATE
    KAT_DUP_LIB="$<TARGET_FILE:kat_nvtx_dup>" KAT_DUP_COPY="${KAT_NVTX_DUP_COPY}")
  target_link_libraries(test_nvtx_unit PRIVATE PkgConfig::CRITERION ${CMAKE_DL_LIBS} pthread)
  add_dependencies(test_nvtx_unit kat_nvtx_dup)
  add_test(NAME nvtx_unit COMMAND test_nvtx_unit)

endif()

if(CRITERION_FOUND AND TARGET kaudit)
  add_executable(test_nvtx ${KAT_NVTX_DIR}/test_nvtx.c)
  target_link_libraries(test_nvtx PRIVATE kaudit_session PkgConfig::CRITERION)
  target_compile_definitions(test_nvtx PRIVATE
    KAUDIT_BIN="$<TARGET_FILE:kaudit>" NVTX_PROG="$<TARGET_FILE:nvtx_prog>")
  add_dependencies(test_nvtx kaudit kaudit_preload nvtx_prog)
  add_test(NAME nvtx COMMAND test_nvtx)
endif()
