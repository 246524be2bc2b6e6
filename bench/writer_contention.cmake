# The writer contention benchmark (bench/writer_contention.c): a vendor
# record's store against CUPTI's conversion, one record per lock or chunked,
# host-only.  include()d from tests/CMakeLists.txt after the fragments, where
# the writer linked alone (kaudit_writer_host, tests/writer.cmake) exists.
if(NOT TARGET kaudit_writer_host)
  return()
endif()
add_executable(kaudit_writer_contention ${CMAKE_CURRENT_LIST_DIR}/writer_contention.c)
target_link_libraries(kaudit_writer_contention PRIVATE kaudit_writer_host)
# linked with the writer as built: sanitized under KAUDIT_SANITIZE
kaudit_sanitize(kaudit_writer_contention)

# It runs (no speed is asserted: the figures come from running it by hand).
add_test(NAME writer_contention_smoke COMMAND kaudit_writer_contention 200 3)
set_tests_properties(writer_contention_smoke PROPERTIES LABELS "bench" TIMEOUT 120
  PASS_REGULAR_EXPRESSION "chunked +[0-9.]+ +[0-9]+ +[0-9.]+")
