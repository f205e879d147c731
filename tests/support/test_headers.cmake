# xgemv::test_headers: the include root of the test support ("support/<file>.hpp") and the
# header-only helpers below it. A file of its own, included (once) by tests/support, by the bench
# (built without the tests too) and by the fuzzers' project (built with another compiler).
include_guard(GLOBAL)

cmake_path(GET CMAKE_CURRENT_LIST_DIR PARENT_PATH xgemv_test_include_root)
add_library(xgemv_test_headers INTERFACE)
add_library(xgemv::test_headers ALIAS xgemv_test_headers)
target_include_directories(xgemv_test_headers INTERFACE ${xgemv_test_include_root})
target_compile_features(xgemv_test_headers INTERFACE cxx_std_17)
# Header-only, but on the CUDA runtime's headers (the 16-bit types, cudaError_t).
target_link_libraries(xgemv_test_headers INTERFACE CUDA::toolkit)
