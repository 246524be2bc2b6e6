# Install layout (supervisor/resources.h finds everything from the binary):
#   P/bin/kaudit
#   P/lib/kaudit/libkaudit_preload.so, libkaudit_audit.so, kaudit-python/sitecustomize.py
#   P/share/kaudit/inventory/data/h200-torch2.11-calibrated.inventory.zst
#   P/share/kaudit/contracts/            (with manifest.json, which pins them)
#   P/share/kaudit/runner/               (kaudit audit's Python runner)
#   P/share/kaudit/examples/controls/... (the sessions `kaudit demo` judges)
# Fixed directories (no GNUInstallDirs lib64 or multiarch): the resolver
# looks exactly here.
set(KAUDIT_INSTALL_LIB lib/kaudit)
set(KAUDIT_INSTALL_DATA share/kaudit)

# The build tree: resources.c uses the source tree's data only when the binary
# runs from this build directory (a copied or installed binary never does).
target_compile_definitions(kaudit_supervisor PRIVATE
  KAUDIT_SOURCE_DIR="${CMAKE_SOURCE_DIR}" KAUDIT_BUILD_DIR="${CMAKE_BINARY_DIR}")

install(TARGETS kaudit RUNTIME DESTINATION bin)
install(TARGETS kaudit_preload kaudit_audit LIBRARY DESTINATION ${KAUDIT_INSTALL_LIB})
install(FILES ${CMAKE_BINARY_DIR}/lib/kaudit-python/sitecustomize.py
  DESTINATION ${KAUDIT_INSTALL_LIB}/kaudit-python)

# The data: what a full build can use (the core build ships no analyzer, but
# the data is small and keeps one layout).
install(FILES ${CMAKE_SOURCE_DIR}/inventory/data/h200-torch2.11-calibrated.inventory.zst
  DESTINATION ${KAUDIT_INSTALL_DATA}/inventory/data)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/contracts DESTINATION ${KAUDIT_INSTALL_DATA})
# kaudit_runner.py and the modules it imports from beside it: every
# runner/kaudit_*.py (a hand-kept list left a new module out of the install).
file(GLOB _kaudit_runner_modules CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/runner/kaudit_*.py)
install(FILES ${_kaudit_runner_modules} DESTINATION ${KAUDIT_INSTALL_DATA}/runner)
# The example sessions `kaudit demo` judges (tools/cmd_demo.c).
foreach(example controls/timing_thread controls/deleg_torch_matmul)
  install(DIRECTORY ${CMAKE_SOURCE_DIR}/examples/${example}
    DESTINATION ${KAUDIT_INSTALL_DATA}/examples/controls)
endforeach()
