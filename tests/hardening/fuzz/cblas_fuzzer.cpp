// The CBLAS ABI of libxgemv_blas.so (cblas_sgemv, cblas_dgemv), both orders, with the program's
// own cblas_xerbla recording every call. The answer is the reference CBLAS's (CBLAS/src/
// cblas_sgemv.c on top of sgemv.f, written out here): layout error 1 and TransA error 2 with
// their messages; otherwise the column-major call (row-major: trans flipped, M and N swapped)
// checked as sgemv.f does, its INFO + 1 reported; RowMajorStrg set during a row-major report and
// CBLAS_CallFromC during every report, both 0 afterwards. A, x and y are poisoned: an error reads
// nothing, and a valid call reaches the routing step (recorded) once, folded to column-major.
#include <cstdarg>
#include <cstddef>
#include <cstring>
#include <string>
#include <type_traits>

#include "blas_abi.hpp"
#include "blas_call_recorder.hpp"
#include "fuzz_support.hpp"

namespace xgemv_fuzz {
namespace {

constexpr int kRowMajor = 101, kColMajor = 102;
constexpr int kNoTrans = 111, kTrans = 112, kConjTrans = 113;

struct CblasXerblaRecord {
  int calls = 0;
  int info = 0;
  std::string routine, form;
  int form_value = 0;  // the %d argument of the layout and TransA messages
  int row_major_strg = 0, call_from_c = 0;
} cblas_xerbla_record;

// What the reference CBLAS does with a call.
struct CblasExpectation {
  int info = 0;  // 0: the column-major Fortran call below runs
  const char *form = "";
  int form_value = 0;
  bool row_major = false;
  char trans = 0;  // the column-major call
  int m = 0, n = 0;
};

CblasExpectation reference_cblas_gemv(int layout, int trans, int m, int n, int lda, int incx,
                                      int incy) {
  CblasExpectation e;
  if (layout != kRowMajor && layout != kColMajor)
    return {1, "Illegal layout setting, %d\n", layout};
  e.row_major = layout == kRowMajor;
  switch (trans) {
    case kNoTrans: e.trans = e.row_major ? 'T' : 'N'; break;
    case kTrans: e.trans = e.row_major ? 'N' : 'T'; break;
    case kConjTrans: e.trans = e.row_major ? 'N' : 'C'; break;
    default:
      e.info = 2;
      e.form = "Illegal TransA setting, %d\n";
      e.form_value = trans;
      return e;
  }
  e.m = e.row_major ? n : m;
  e.n = e.row_major ? m : n;
  if (const int info = reference_gemv_info(e.trans, e.m, e.n, lda, incx, incy); info != 0)
    e.info = info + 1;  // CBLAS's F77_xerbla: one more argument (the layout) in front
  return e;
}

int consume_enum(FuzzedDataProvider &data, int first_valid, int last_valid) {
  return data.ConsumeBool() ? data.ConsumeIntegralInRange(first_valid - 1, last_valid + 1)
                            : data.ConsumeIntegral<int>();
}

template <class T>
void fuzz_one_call(FuzzedDataProvider &data) {
  const int layout = consume_enum(data, kRowMajor, kColMajor);
  const int trans = consume_enum(data, kNoTrans, kConjTrans);
  const int m = consume_argument<int>(data), n = consume_argument<int>(data);
  // lda is checked against the rows of the column-major call: M, or N when row-major.
  const int lda = consume_leading_dimension<int>(data, layout == kRowMajor ? n : m);
  const int incx = consume_argument<int>(data), incy = consume_argument<int>(data);
  const T alpha = data.ConsumeFloatingPoint<T>(), beta = data.ConsumeFloatingPoint<T>();
  const PoisonedMemory &poison = PoisonedMemory::instance();
  const T *a = poison.at<const T>(0), *x = poison.at<const T>(64);
  T *y = poison.at<T>(128);

  cblas_xerbla_record = {};
  gemv_record<T> = {};
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemv(layout, trans, m, n, alpha, a, lda, x, incx, beta, y, incy);
  } else {
    cblas_dgemv(layout, trans, m, n, alpha, a, lda, x, incx, beta, y, incy);
  }

  const char *routine = std::is_same_v<T, float> ? "cblas_sgemv" : "cblas_dgemv";
  const CblasExpectation e = reference_cblas_gemv(layout, trans, m, n, lda, incx, incy);
  const CblasXerblaRecord &got = cblas_xerbla_record;
  require(RowMajorStrg == 0 && CBLAS_CallFromC == 0,
          "%s: RowMajorStrg %d, CBLAS_CallFromC %d after the call (expected 0, 0)", routine,
          RowMajorStrg, CBLAS_CallFromC);
  if (e.info != 0) {
    require(got.calls == 1 && gemv_record<T>.calls == 0,
            "%s layout %d trans %d m %d n %d lda %d incx %d incy %d: %d cblas_xerbla calls, "
            "%d runs (expected one cblas_xerbla with %d)",
            routine, layout, trans, m, n, lda, incx, incy, got.calls, gemv_record<T>.calls, e.info);
    require(got.info == e.info && got.routine == routine && got.form == e.form &&
                (e.form[0] == '\0' || got.form_value == e.form_value),
            "%s layout %d trans %d m %d n %d lda %d: cblas_xerbla(%d, \"%s\", \"%s\", %d), "
            "expected (%d, \"%s\", \"%s\", %d)",
            routine, layout, trans, m, n, lda, got.info, got.routine.c_str(), got.form.c_str(),
            got.form_value, e.info, routine, e.form, e.form_value);
    require(got.row_major_strg == (e.row_major ? 1 : 0) && got.call_from_c == 1,
            "%s: during cblas_xerbla RowMajorStrg %d, CBLAS_CallFromC %d (expected %d, 1)", routine,
            got.row_major_strg, got.call_from_c, e.row_major ? 1 : 0);
    return;
  }
  require(got.calls == 0 && gemv_record<T>.calls == 1,
          "%s layout %d trans %d m %d n %d lda %d incx %d incy %d is valid: %d cblas_xerbla "
          "calls, %d runs",
          routine, layout, trans, m, n, lda, incx, incy, got.calls, gemv_record<T>.calls);
  const xgemv::GemvProblem &run = *gemv_record<T>.last.value();
  require(run.trans == e.trans && run.m == e.m && run.n == e.n && run.a.ld == lda &&
              run.x.inc == incx && run.y.inc == incy && run.a.data == a && run.x.data == x &&
              run.y.data == y && run.batch_count == 1,
          "%s layout %d trans %d m %d n %d: ran trans %c m %d n %d, expected trans %c m %d n %d",
          routine, layout, trans, m, n, run.trans, int(run.m), int(run.n), e.trans, e.m, e.n);
  require(std::memcmp(&gemv_record<T>.alpha, &alpha, sizeof(T)) == 0 &&
              std::memcmp(&gemv_record<T>.beta, &beta, sizeof(T)) == 0,
          "%s: alpha or beta changed on the way", routine);
  require(std::strcmp(gemv_record<T>.entry, routine) == 0, "%s: logged as %s", routine,
          gemv_record<T>.entry);
}

}  // namespace
}  // namespace xgemv_fuzz

extern "C" {

// The program's own handler, as the reference CBLAS test programs supply one. It returns (the
// reference one ends the process).
void cblas_xerbla(int info, const char *routine, const char *form, ...) {
  auto &record = xgemv_fuzz::cblas_xerbla_record;
  ++record.calls;
  record.info = info;
  record.routine = routine;
  record.form = form;
  record.row_major_strg = RowMajorStrg;
  record.call_from_c = CBLAS_CallFromC;
  if (std::strstr(form, "%d") != nullptr) {
    va_list values;
    va_start(values, form);
    record.form_value = va_arg(values, int);
    va_end(values);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *bytes, std::size_t size) {
  return xgemv_fuzz::fuzz_float_or_double(bytes, size, [](auto element, FuzzedDataProvider &data) {
    xgemv_fuzz::fuzz_one_call<decltype(element)>(data);
  });
}

}  // extern "C"
