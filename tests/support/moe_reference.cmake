# xgemv::test_moe_reference: the host reference of the mixture-of-experts calls (moe_reference),
# on xgemv's headers only. A file of its own, included (once) by tests/support and by the bench,
# which checks its MoE calls by it and is also built without the tests.
include_guard(GLOBAL)
include(${CMAKE_CURRENT_LIST_DIR}/test_headers.cmake)

add_library(xgemv_test_moe_reference STATIC ${CMAKE_CURRENT_LIST_DIR}/moe_reference.cpp)
add_library(xgemv::test_moe_reference ALIAS xgemv_test_moe_reference)
target_include_directories(xgemv_test_moe_reference PUBLIC ${PROJECT_SOURCE_DIR}/include)
target_compile_features(xgemv_test_moe_reference PUBLIC cxx_std_20)
target_link_libraries(xgemv_test_moe_reference PUBLIC xgemv::test_headers)
target_compile_options(xgemv_test_moe_reference PRIVATE -Wall -Wextra)
