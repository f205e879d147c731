// The Fortran BLAS ABI of libxgemv_blas.so (sgemv_, dgemv_), with the program's own xerbla_
// recording every call. An invalid call must reach xerbla_ exactly once, with the Reference BLAS
// routine name ("SGEMV ", length 6) and argument position, and read nothing else: alpha, beta, A,
// x and y point into poisoned memory. A valid call must reach the routing step (recorded, see
// blas_call_recorder.hpp) once, with its arguments unchanged, and xerbla_ never.
#include <cstddef>
#include <cstring>
#include <type_traits>

#include "blas_abi.hpp"
#include "blas_call_recorder.hpp"
#include "fuzz_support.hpp"

namespace xgemv_fuzz {
namespace {

struct XerblaRecord {
  int calls = 0;
  char routine[16] = {};
  std::size_t routine_length = 0;
  int info = 0;
} xerbla_record;

template <class T>
void fuzz_one_call(FuzzedDataProvider &data) {
  const char trans = consume_trans(data);
  const int m = consume_argument<int>(data), n = consume_argument<int>(data);
  const int lda = consume_leading_dimension<int>(data, m);
  const int incx = consume_argument<int>(data), incy = consume_argument<int>(data);
  // The hidden length of trans: only its first character counts, whatever the caller passes.
  const std::size_t trans_length = data.ConsumeIntegralInRange<std::size_t>(0, 2);
  const T alpha_value = data.ConsumeFloatingPoint<T>(), beta_value = data.ConsumeFloatingPoint<T>();

  const int info = reference_gemv_info(trans, m, n, lda, incx, incy);
  const PoisonedMemory &poison = PoisonedMemory::instance();
  // Scalars are read only by a valid call.
  const T *alpha = info == 0 ? &alpha_value : poison.at<const T>(0);
  const T *beta = info == 0 ? &beta_value : poison.at<const T>(64);
  const T *a = poison.at<const T>(128), *x = poison.at<const T>(192);
  T *y = poison.at<T>(256);

  xerbla_record = {};
  gemv_record<T> = {};
  if constexpr (std::is_same_v<T, float>) {
    sgemv_(&trans, &m, &n, alpha, a, &lda, x, &incx, beta, y, &incy, trans_length);
  } else {
    dgemv_(&trans, &m, &n, alpha, a, &lda, x, &incx, beta, y, &incy, trans_length);
  }

  const char *name = std::is_same_v<T, float> ? "SGEMV " : "DGEMV ";
  if (info != 0) {
    require(xerbla_record.calls == 1 && gemv_record<T>.calls == 0,
            "%s trans 0x%02x m %d n %d lda %d incx %d incy %d: %d xerbla_ calls, %d runs "
            "(expected one xerbla_ with INFO %d)",
            name, static_cast<unsigned char>(trans), m, n, lda, incx, incy, xerbla_record.calls,
            gemv_record<T>.calls, info);
    require(xerbla_record.info == info, "%s: xerbla_ INFO %d, expected %d", name,
            xerbla_record.info, info);
    require(xerbla_record.routine_length == 6 && std::memcmp(xerbla_record.routine, name, 6) == 0,
            "%s: xerbla_ got the routine name '%.*s' (length %zu)", name,
            static_cast<int>(std::min<std::size_t>(xerbla_record.routine_length, 15)),
            xerbla_record.routine, xerbla_record.routine_length);
    return;
  }
  require(xerbla_record.calls == 0 && gemv_record<T>.calls == 1,
          "%s trans 0x%02x m %d n %d lda %d incx %d incy %d is valid: %d xerbla_ calls, %d runs",
          name, static_cast<unsigned char>(trans), m, n, lda, incx, incy, xerbla_record.calls,
          gemv_record<T>.calls);
  const xgemv::GemvProblem &run = *gemv_record<T>.last.value();
  require(run.trans == trans && run.m == m && run.n == n && run.a.ld == lda &&
              run.x.inc == incx && run.y.inc == incy && run.a.data == a && run.x.data == x &&
              run.y.data == y && run.batch_count == 1,
          "%s: the call was changed on its way to the routing step", name);
  require(std::memcmp(&gemv_record<T>.alpha, alpha, sizeof(T)) == 0 &&
              std::memcmp(&gemv_record<T>.beta, beta, sizeof(T)) == 0,
          "%s: alpha or beta changed on the way", name);
}

}  // namespace
}  // namespace xgemv_fuzz

extern "C" {

// The program's own error handler, as a Fortran program (or the BLAS test suite) supplies it.
void xerbla_(const char *routine, const int *info, std::size_t routine_length) {
  auto &record = xgemv_fuzz::xerbla_record;
  ++record.calls;
  record.routine_length = routine_length;
  std::memcpy(record.routine, routine, std::min(routine_length, sizeof record.routine - 1));
  record.info = *info;
}

int LLVMFuzzerTestOneInput(const uint8_t *bytes, std::size_t size) {
  return xgemv_fuzz::fuzz_float_or_double(bytes, size, [](auto element, FuzzedDataProvider &data) {
    xgemv_fuzz::fuzz_one_call<decltype(element)>(data);
  });
}

}  // extern "C"
