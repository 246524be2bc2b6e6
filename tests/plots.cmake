# The plots of `kaudit validators --plot` (validators/plots.c), read back:
# PNG pixels through cairo, SVG through expat (libexpat1-dev).  Built where
# cairo was found (validators/CMakeLists.txt); under CI a missing cairo or
# expat is an error rather than a test left out.
if(NOT TARGET kaudit_validators OR NOT KAUDIT_PLOTS)
  return()
endif()
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(CAIRO QUIET IMPORTED_TARGET cairo)
  pkg_check_modules(EXPAT IMPORTED_TARGET expat)
endif()
if(NOT CAIRO_FOUND OR NOT EXPAT_FOUND)
  if(DEFINED ENV{CI})
    message(FATAL_ERROR "kaudit: CI is set but cairo or expat is missing: the plot tests would not run "
      "(apt-get install libcairo2-dev libexpat1-dev fonts-dejavu-core)")
  endif()
  message(STATUS "kaudit: the plot tests need cairo and expat (libcairo2-dev libexpat1-dev); left out")
  return()
endif()
add_executable(test_plots ${CMAKE_CURRENT_LIST_DIR}/test_plots.c)
target_link_libraries(test_plots PRIVATE kaudit_validators PkgConfig::CAIRO PkgConfig::EXPAT PkgConfig::CRITERION)
kaudit_sanitize(test_plots)
add_test(NAME validators_plots COMMAND test_plots)
add_test(NAME cli_validators_plots COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/cli_plots.sh $<TARGET_FILE:kaudit>
  ${CMAKE_SOURCE_DIR})
if(KAUDIT_SANITIZE)
  set_tests_properties(validators_plots cli_validators_plots PROPERTIES
    ENVIRONMENT "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_LIST_DIR}/lsan_fontconfig.supp:print_suppressions=0")
endif()
