// The public header as a C++17 program sees it (built with -std=c++17 -Wall -Wextra -Werror
// -Wpedantic): C linkage, the CUDA 16-bit types, and a tiny run through the library.
#include <xgemv/xgemv.h>

#include <cstdio>
#include <cstring>
#include <type_traits>

static_assert(std::is_same_v<xgemv_half, __half>);
static_assert(std::is_same_v<xgemv_bfloat16, __nv_bfloat16>);
static_assert(std::is_pointer_v<xgemv_handle>);
static_assert(std::is_same_v<decltype(&xgemv_hgemv),
                             xgemv_status (*)(xgemv_handle, char, int64_t, int64_t, const float *,
                                              const __half *, int64_t, const __half *, int64_t,
                                              const float *, __half *, int64_t)>);
static_assert(std::is_same_v<decltype(&xgemv_bf16gemv_nrhs),
                             xgemv_status (*)(xgemv_handle, char, int64_t, int64_t, const float *,
                                              const __nv_bfloat16 *, int64_t,
                                              const __nv_bfloat16 *, int64_t, const float *,
                                              __nv_bfloat16 *, int64_t, int64_t)>);
static_assert(XGEMV_STATUS_INVALID_LDA == 6 && XGEMV_STATUS_INVALID_INCY == 11);
static_assert(XGEMV_STATUS_INVALID_LDX == 8 && XGEMV_STATUS_INVALID_LDY == 11 &&
              XGEMV_STATUS_INVALID_NRHS == 12);

int main() {
  const double one = 1.0;
  double y = 0.0;
  if (xgemv_dgemv_strided_batched(nullptr, 'N', -1, 1, &one, &y, 1, 0, &y, 1, 0, &one, &y, 1, 0,
                                  1) != XGEMV_STATUS_INVALID_M)
    return 1;
  if (xgemv_dgemv_nrhs(nullptr, 'N', 1, 1, &one, &y, 1, &y, 1, &one, &y, 1, -1) !=
      XGEMV_STATUS_INVALID_NRHS)
    return 2;
  if (std::strlen(xgemv_version_string()) == 0) return 3;
  std::printf("C++17: xgemv %s, %s\n", xgemv_version_string(),
              xgemv_status_string(XGEMV_STATUS_INVALID_M));
  return 0;
}
