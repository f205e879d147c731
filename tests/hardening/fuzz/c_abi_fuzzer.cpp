// The C ABI (libxgemv.so, the real shipped library): every xgemv_*gemv and
// xgemv_*gemv_strided_batched entry point with a NULL handle and pointers that fault when
// touched. The answer must be exactly the contract's: the Reference BLAS argument position of the
// first bad argument, then XGEMV_STATUS_INVALID_BATCH for batch_count < 0, then
// XGEMV_STATUS_INVALID_HANDLE; and nothing may be read (a touched pointer crashes the fuzzer).
#include <xgemv/xgemv.hpp>

#include <cstdint>

#include "fuzz_support.hpp"

namespace xgemv_fuzz {
namespace {

struct Arguments {
  char trans;
  int64_t m, n, lda, stride_a, incx, stride_x, incy, stride_y, batch_count;
};

// The status the contract prescribes for a call with a NULL handle.
xgemv_status expected_status(const Arguments &a, bool batched) {
  if (const int info = reference_gemv_info(a.trans, a.m, a.n, a.lda, a.incx, a.incy); info != 0)
    return static_cast<xgemv_status>(info);
  if (batched && a.batch_count < 0) return XGEMV_STATUS_INVALID_BATCH;
  return XGEMV_STATUS_INVALID_HANDLE;
}

// Each operand is a pointer into poisoned memory or NULL (bit i of `null_operands`: alpha, A, x,
// beta, y): with a NULL handle neither may matter.
template <class T, class S>
xgemv_status call(const Arguments &a, bool batched, unsigned null_operands) {
  const PoisonedMemory &poison = PoisonedMemory::instance();
  const auto operand = [&](auto *poisoned, int bit) {
    return (null_operands >> bit) & 1 ? nullptr : poisoned;
  };
  const S *alpha = operand(poison.at<const S>(0), 0);
  const T *matrix = operand(poison.at<const T>(64), 1);
  const T *x = operand(poison.at<const T>(128), 2);
  const S *beta = operand(poison.at<const S>(192), 3);
  T *y = operand(poison.at<T>(256), 4);
  if (batched)
    return xgemv::gemv_strided_batched(nullptr, a.trans, a.m, a.n, alpha, matrix, a.lda,
                                       a.stride_a, x, a.incx, a.stride_x, beta, y, a.incy,
                                       a.stride_y, a.batch_count);
  return xgemv::gemv(nullptr, a.trans, a.m, a.n, alpha, matrix, a.lda, x, a.incx, beta, y, a.incy);
}

}  // namespace
}  // namespace xgemv_fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *bytes, std::size_t size) {
  using namespace xgemv_fuzz;
  FuzzedDataProvider data(bytes, size);
  const int element_type = data.ConsumeIntegralInRange(0, 3);
  const bool batched = data.ConsumeBool();
  Arguments a{};
  a.trans = consume_trans(data);
  a.m = consume_argument<int64_t>(data);
  a.n = consume_argument<int64_t>(data);
  a.lda = consume_leading_dimension<int64_t>(data, a.m);
  a.incx = consume_argument<int64_t>(data);
  a.incy = consume_argument<int64_t>(data);
  a.batch_count = consume_argument<int64_t>(data);
  a.stride_a = consume_argument<int64_t>(data);
  a.stride_x = consume_argument<int64_t>(data);
  a.stride_y = consume_argument<int64_t>(data);
  const unsigned null_operands = data.ConsumeIntegralInRange(0u, 31u);

  xgemv_status status = XGEMV_STATUS_SUCCESS;
  switch (element_type) {
    case 0: status = call<float, float>(a, batched, null_operands); break;
    case 1: status = call<double, double>(a, batched, null_operands); break;
    case 2: status = call<xgemv_half, float>(a, batched, null_operands); break;
    default: status = call<xgemv_bfloat16, float>(a, batched, null_operands); break;
  }
  const xgemv_status expected = expected_status(a, batched);
  require(status == expected,
          "type %d %s trans 0x%02x m %lld n %lld lda %lld incx %lld incy %lld batch %lld: "
          "status %d, expected %d",
          element_type, batched ? "strided batched" : "single", static_cast<unsigned char>(a.trans),
          static_cast<long long>(a.m), static_cast<long long>(a.n), static_cast<long long>(a.lda),
          static_cast<long long>(a.incx), static_cast<long long>(a.incy),
          static_cast<long long>(a.batch_count), int(status), int(expected));
  // The position a status names is the Reference BLAS one (0 for the non-argument statuses).
  const int info = reference_gemv_info(a.trans, a.m, a.n, a.lda, a.incx, a.incy);
  require(xgemv_status_argument(status) == info, "xgemv_status_argument(%d) is not %d", int(status),
          info);
  return 0;
}
