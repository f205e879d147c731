// libxgemv_blas.so's results and routing, call by call: sgemv_, dgemv_ and cblas_{s,d}gemv in
// both layouts, every op, odd shapes and leading dimensions, negative increments, beta == 0
// over a NaN-poisoned y, alpha == 0, quick returns; canaries between and after strided y
// elements. Data are small integers, so every result is exact and is compared by value with
// the host reference GEMV (support/reference_gemv.hpp). XGEMV_BLAS_LOG=1 (set by CTest) makes
// the library name who served each call, which is checked against the mode:
//
//   host    host arrays -> the next BLAS (a library that is not xgemv's). Runs without a GPU.
//   staged  XGEMV_BLAS_HOST=gpu: host arrays staged through the GPU; with no GPU they must still
//           be served by the next BLAS. Runs for real with and without a GPU.
//   device  arrays in device memory, in managed memory, and device A with host x, y: served by
//           xgemv. Needs a GPU (exit 77 without).
//
// The program links libxgemv_blas.so and the CUDA runtime only: no BLAS of its own.
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "cblas_gemv_abi.h"
#include "interface_test_support.h"
#include "support/gemv_layout.hpp"
#include "support/reference_gemv.hpp"

namespace {

using xgemv_test::vector_extent;
using xgemv_test::vector_offset;

enum class Api { fortran, cblas_column_major, cblas_row_major };
enum class Memory { host, device, managed, device_matrix_only };

constexpr float kCanary = 7777.0f;

int failures = 0;
int calls_checked = 0;

void fail(const std::string &what) {
  if (++failures <= 25) std::printf("FAIL %s\n", what.c_str());
}

template <class T>
struct Problem {
  Api api;
  char trans;
  int m, n, lda, incx, incy;
  T alpha, beta;

  bool row_major() const { return api == Api::cblas_row_major; }
  bool transposed() const { return trans != 'N' && trans != 'n'; }
  // op(A) is rows x cols: y has `rows` elements, x `cols`.
  int rows() const { return transposed() ? n : m; }
  int cols() const { return transposed() ? m : n; }
  size_t matrix_size() const { return size_t(lda) * size_t(row_major() ? m : n); }
  // The call on column-major storage, as CBLAS folds it: row-major A is column-major A^T, so the
  // op flips and m, n swap.
  xgemv_test::GemvShape column_major_shape() const {
    if (!row_major()) return {trans, m, n, lda, incx, incy};
    return {transposed() ? 'N' : 'T', n, m, lda, incx, incy};
  }
  bool quick_return() const { return m == 0 || n == 0 || (alpha == T(0) && beta == T(1)); }

  std::string describe() const {
    static const char *apis[] = {"fortran", "cblas col-major", "cblas row-major"};
    char text[200];
    std::snprintf(text, sizeof text, "%s %s trans=%c m=%d n=%d lda=%d incx=%d incy=%d a=%g b=%g",
                  std::is_same_v<T, float> ? "s" : "d", apis[int(api)], trans, m, n, lda, incx,
                  incy, double(alpha), double(beta));
    return text;
  }
};

uint32_t random_state = 12345;
int small_integer() {  // in [-4, 4]
  random_state = random_state * 1664525u + 1013904223u;
  return int((random_state >> 16) % 9) - 4;
}

template <class T>
const char *entry_name(Api api) {
  if (api == Api::fortran) return std::is_same_v<T, float> ? "sgemv_" : "dgemv_";
  return std::is_same_v<T, float> ? "cblas_sgemv" : "cblas_dgemv";
}

template <class T>
void call_blas(const Problem<T> &p, const T *a, const T *x, T *y) {
  if (p.api == Api::fortran) {
    if constexpr (std::is_same_v<T, float>) {
      sgemv_(&p.trans, &p.m, &p.n, &p.alpha, a, &p.lda, x, &p.incx, &p.beta, y, &p.incy, 1);
    } else {
      dgemv_(&p.trans, &p.m, &p.n, &p.alpha, a, &p.lda, x, &p.incx, &p.beta, y, &p.incy, 1);
    }
    return;
  }
  const CBLAS_LAYOUT layout = p.row_major() ? CblasRowMajor : CblasColMajor;
  const CBLAS_TRANSPOSE trans = p.trans == 'N'   ? CblasNoTrans
                                : p.trans == 'T' ? CblasTrans
                                                 : CblasConjTrans;
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemv(layout, trans, p.m, p.n, p.alpha, a, p.lda, x, p.incx, p.beta, y, p.incy);
  } else {
    cblas_dgemv(layout, trans, p.m, p.n, p.alpha, a, p.lda, x, p.incx, p.beta, y, p.incy);
  }
}

// A buffer in the memory the case asks for, with the host copy kept in step around the call.
template <class T>
class Buffer {
 public:
  Buffer(const std::vector<T> &host, bool on_gpu, bool managed) : host_(host) {
    if (!on_gpu || host.empty()) return;
    const size_t bytes = host.size() * sizeof(T);
    void **gpu = reinterpret_cast<void **>(&gpu_);
    const cudaError_t error = managed ? cudaMallocManaged(gpu, bytes) : cudaMalloc(gpu, bytes);
    if (error != cudaSuccess ||
        cudaMemcpy(gpu_, host.data(), bytes, cudaMemcpyDefault) != cudaSuccess)
      fail("cannot allocate test memory on the GPU");
  }
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;
  ~Buffer() { cudaFree(gpu_); }

  T *data() { return gpu_ != nullptr ? gpu_ : host_.data(); }
  // The contents after the call.
  const std::vector<T> &result() {
    if (gpu_ != nullptr &&
        cudaMemcpy(host_.data(), gpu_, host_.size() * sizeof(T), cudaMemcpyDefault) != cudaSuccess)
      fail("cannot read test memory back from the GPU");
    return host_;
  }

 private:
  std::vector<T> host_;
  T *gpu_ = nullptr;
};

enum class Mode { host, staged, device };
bool gpu_present = false;

// Who must serve a call (the log line says "<entry> -> <this>"), by mode and memory.
template <class T>
const char *expected_server(const Problem<T> &p, Mode mode, Memory memory) {
  const char *host_blas = "host BLAS (";
  // A and x are not read when alpha == 0: only y's memory counts then.
  const bool device_arrays = memory == Memory::device || memory == Memory::managed ||
                             (memory == Memory::device_matrix_only && p.alpha != T(0));
  if (device_arrays)
    return memory == Memory::device_matrix_only ? "xgemv (device arrays, host arrays staged)"
                                                : "xgemv (device arrays)";
  if (mode == Mode::staged && gpu_present) return "xgemv (host arrays staged through the GPU)";
  return host_blas;
}

template <class T>
void run_case(const Problem<T> &p, Mode mode, Memory memory) {
  const int rows = p.rows(), cols = p.cols();
  std::vector<T> a(std::max<size_t>(p.matrix_size(), 1)),
      x(std::max<size_t>(vector_extent(cols, p.incx), 1));
  for (T &value : a) value = T(small_integer());
  for (T &value : x) value = T(small_integer());
  // y: canaries everywhere, then the logical elements (NaN when beta == 0: must not leak).
  std::vector<T> y(vector_extent(rows, p.incy) + 3, T(kCanary));
  for (int i = 0; i < rows; ++i)
    y[vector_offset(i, rows, p.incy)] =
        p.beta == T(0) ? std::numeric_limits<T>::quiet_NaN() : T(small_integer());

  std::vector<T> expected_y = y;
  const std::vector<double> logical_y = xgemv_test::reference_gemv(
      p.column_major_shape(), p.alpha, a.data(), x.data(), p.beta, y.data());
  for (int i = 0; i < rows; ++i) expected_y[vector_offset(i, rows, p.incy)] = T(logical_y[i]);

  const bool gpu = memory != Memory::host;
  Buffer<T> a_buffer(a, gpu, memory == Memory::managed);
  Buffer<T> x_buffer(x, gpu && memory != Memory::device_matrix_only, memory == Memory::managed);
  Buffer<T> y_buffer(y, gpu && memory != Memory::device_matrix_only, memory == Memory::managed);

  test_capture_begin(2);
  call_blas(p, a_buffer.data(), x_buffer.data(), y_buffer.data());
  const std::string log = test_capture_end();
  ++calls_checked;

  const std::vector<T> &got = y_buffer.result();
  for (size_t k = 0; k < got.size(); ++k) {
    // Exact, by value: NaN only where expected (never for beta == 0), zeros of either sign.
    const bool same = got[k] == expected_y[k] || (std::isnan(got[k]) && std::isnan(expected_y[k]));
    if (!same) {
      fail(p.describe() + ": y[" + std::to_string(k) + "] = " + std::to_string(double(got[k])) +
           ", expected " + std::to_string(double(expected_y[k])));
      break;
    }
  }

  const std::string expected = std::string("xgemv_blas: ") + entry_name<T>(p.api) + " -> " +
                               expected_server(p, mode, memory);
  if (p.quick_return()) {
    if (!log.empty()) fail(p.describe() + ": quick return logged \"" + log + "\"");
  } else if (log.find(expected) == std::string::npos) {
    fail(p.describe() + ": expected \"" + expected + "\" in the log, got \"" + log + "\"");
  } else if (log.find("host BLAS") != std::string::npos &&
             log.find("xgemv_blas.so") != std::string::npos) {
    fail(p.describe() + ": the host BLAS is libxgemv_blas.so itself");
  }
}

template <class T>
void run_all(Mode mode, Memory memory, bool with_large) {
  struct Shape {
    int m, n;
  };
  const Shape shapes[] = {{1, 1}, {7, 5}, {33, 17}, {5, 64}};
  struct Scalars {
    T alpha, beta;
  };
  const Scalars scalars[] = {{1, 0}, {-2, 1}, {0, -1}, {3, 0.5}};
  for (Api api : {Api::fortran, Api::cblas_column_major, Api::cblas_row_major})
    for (char trans : {'N', 'T', 'C'})
      for (const Shape &shape : shapes)
        for (int lda_pad : {0, 3})
          for (int incx : {1, -2})
            for (int incy : {1, -3})
              for (const Scalars &s : scalars) {
                const int lda_base = api == Api::cblas_row_major ? shape.n : shape.m;
                run_case(Problem<T>{api, trans, shape.m, shape.n, std::max(1, lda_base + lda_pad),
                                    incx, incy, s.alpha, s.beta},
                         mode, memory);
              }
  // Lowercase op, and quick returns (nothing read, y untouched, nothing logged).
  run_case(Problem<T>{Api::fortran, 't', 9, 4, 9, 1, 1, 2, 1}, mode, memory);
  run_case(Problem<T>{Api::fortran, 'n', 9, 4, 10, -1, 2, 2, -1}, mode, memory);
  run_case(Problem<T>{Api::fortran, 'N', 0, 4, 1, 1, 1, 2, 0}, mode, memory);
  run_case(Problem<T>{Api::cblas_row_major, 'T', 4, 0, 1, 1, 1, 2, 0}, mode, memory);
  run_case(Problem<T>{Api::cblas_column_major, 'N', 4, 4, 4, 1, 1, 0, 1}, mode, memory);
  if (with_large) {  // enough blocks for split reductions on the GPU
    run_case(Problem<T>{Api::fortran, 'N', 1000, 3000, 1003, 1, 1, 1, 0}, mode, memory);
    run_case(Problem<T>{Api::cblas_row_major, 'N', 1000, 3000, 3000, 1, -1, 1, 1}, mode, memory);
  }
}

bool environment_is(const char *name, const char *value) {
  const char *actual = std::getenv(name);
  return actual != nullptr && std::strcmp(actual, value) == 0;
}

}  // namespace

int main(int argc, char **argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (!environment_is("XGEMV_BLAS_LOG", "1")) {
    std::printf("FAIL: run with XGEMV_BLAS_LOG=1 (the checks read the routing log)\n");
    return 1;
  }
  gpu_present = test_gpu_count() > 0;
  if (mode == "host") {
    run_all<float>(Mode::host, Memory::host, false);
    run_all<double>(Mode::host, Memory::host, false);
  } else if (mode == "staged") {
    if (!environment_is("XGEMV_BLAS_HOST", "gpu")) {
      std::printf("FAIL: the staged mode runs with XGEMV_BLAS_HOST=gpu\n");
      return 1;
    }
    std::printf("%s\n", gpu_present ? "GPU present: host arrays must be staged through it"
                                    : "no GPU: host arrays must still be served by the next BLAS");
    run_all<float>(Mode::staged, Memory::host, gpu_present);
    run_all<double>(Mode::staged, Memory::host, gpu_present);
  } else if (mode == "device") {
    if (!gpu_present) {
      std::printf("SKIPPED: no CUDA device\n");
      return TEST_SKIPPED;
    }
    run_all<float>(Mode::device, Memory::device, true);
    run_all<double>(Mode::device, Memory::device, true);
    run_all<float>(Mode::device, Memory::managed, false);
    run_all<double>(Mode::device, Memory::device_matrix_only, false);
  } else {
    std::printf("usage: %s host|staged|device\n", argv[0]);
    return 2;
  }
  std::printf("%s: %d call(s) checked, %d failure(s)\n", failures ? "FAILED" : "PASSED",
              calls_checked, failures);
  return failures ? 1 : 0;
}
