# The inventory benchmark program (bench/inventory_bench.sh runs it beside
# cuobjdump on the GPU machine).  Included from inventory/CMakeLists.txt.
add_executable(kaudit_inventory_bench ${CMAKE_CURRENT_LIST_DIR}/inventory_bench.c)
target_link_libraries(kaudit_inventory_bench PRIVATE kaudit_inventory)
