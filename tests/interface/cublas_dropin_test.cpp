// The cuBLAS drop-in end to end, from a program that knows nothing of xgemv: it is linked against
// the real cuBLAS and the CUDA runtime only. CTest runs it as
//   xgemv      LD_PRELOAD=libxgemv_cublas.so, and a second executable linked with the drop-in
//              before cuBLAS: every valid BLAS call is served by xgemv, the rest by cuBLAS;
//   cublas     without the drop-in: the same results, no drop-in log line (real cuBLAS only);
//   forwarded  LD_PRELOAD with XGEMV_CUBLAS_DISABLE=1: everything forwarded to cuBLAS.
// XGEMV_CUBLAS_LOG=1 in every run; the log is read call by call (stderr captured around it).
//
// Valid calls are compared exactly with the host reference GEMV (small integers are exact).
// Calls that are not valid BLAS (m = -1, incx = 0, lda < m, CUBLAS_OP_CONJG, trans 7, GEMMs
// that are not a GEMV, other compute types) are compared, status and result, with the real
// cuBLAS called directly (dlopen by soname + dlsym, past the drop-in): the caller must see
// cuBLAS's own behaviour. Covered: {S,D}gemv_v2[_64], the six {S,D,HSH,HSS,TST,TSS} types in
// gemvBatched / gemvStridedBatched [_64], GemmEx[_64], Sgemm_v2 and Dgemm_v2 with C of one row /
// column and of 2..16 columns or rows (served as one problem of several vectors up to a count
// by its op and type, most_vectors_of below: its log line names them, and its result is
// compared with cuBLAS's too; more vectors are forwarded, with the reason logged, and must give
// cuBLAS's bits),
// device-pointer scalars, a non-default stream (the call must wait behind work queued on it),
// CUDA graph capture (on a stream seen before and on a new one; a long reduction whose first
// call is captured is split across blocks in the graph, as outside one), cublasDestroy_v2. Exits 77 without a GPU. XGEMV_TEST_PROFILE=sanitizer
// (runs under compute-sanitizer, which serialises device work) leaves out the one check that
// needs two streams to run side by side.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "dropin_test.hpp"
#include "interface_test_support.h"
#include "support/element_types.hpp"
#include "support/gemv_layout.hpp"
#include "support/graph_kernels.hpp"
#include "support/reference_gemv.hpp"
#include "support/test_profile.hpp"

namespace {

using namespace dropin_test;
using xgemv_test::vector_offset;

// --- gemv families ------------------------------------------------------------------------------

enum class Family { single, single_64, batched, batched_64, strided, strided_64 };
const char *const kFamilyNames[] = {
    "", "_64", "Batched", "Batched_64", "StridedBatched", "StridedBatched_64"};

// The cuBLAS gemv entry points of one type triple (A/x, y, scalars), in Family order: those of
// cuBLAS's type prefix P ("cublas" P "gemvBatched", ...), the single-problem ones given (nullptr
// where cuBLAS has none).
template <class TA, class TY, class S>
struct GemvEntryPoints;

#define XGEMV_GEMV_ENTRY_POINTS(TA, TY, S, P, SINGLE, SINGLE_64)          \
  template <>                                                             \
  struct GemvEntryPoints<TA, TY, S> {                                     \
    static constexpr const char *prefix_name = "cublas" #P "gemv";        \
    static constexpr auto single = SINGLE;                                \
    static constexpr auto single_64 = SINGLE_64;                          \
    static constexpr auto batched = &cublas##P##gemvBatched;              \
    static constexpr auto batched_64 = &cublas##P##gemvBatched_64;        \
    static constexpr auto strided = &cublas##P##gemvStridedBatched;       \
    static constexpr auto strided_64 = &cublas##P##gemvStridedBatched_64; \
  }
XGEMV_GEMV_ENTRY_POINTS(float, float, float, S, &cublasSgemv_v2, &cublasSgemv_v2_64);
XGEMV_GEMV_ENTRY_POINTS(double, double, double, D, &cublasDgemv_v2, &cublasDgemv_v2_64);
XGEMV_GEMV_ENTRY_POINTS(__half, __half, float, HSH, nullptr, nullptr);
XGEMV_GEMV_ENTRY_POINTS(__half, float, float, HSS, nullptr, nullptr);
XGEMV_GEMV_ENTRY_POINTS(__nv_bfloat16, __nv_bfloat16, float, TST, nullptr, nullptr);
XGEMV_GEMV_ENTRY_POINTS(__nv_bfloat16, float, float, TSS, nullptr, nullptr);
#undef XGEMV_GEMV_ENTRY_POINTS

// The exported name of a family's entry point ("cublasSgemv_v2", "cublasHSHgemvBatched_64").
template <class TA, class TY, class S>
std::string entry_name(Family family) {
  const std::string prefix = GemvEntryPoints<TA, TY, S>::prefix_name;
  if (family == Family::single) return prefix + "_v2";
  if (family == Family::single_64) return prefix + "_v2_64";
  return prefix + kFamilyNames[int(family)];
}

// Calls `function` as linked (through the drop-in when there is one) or the real cuBLAS one.
template <class Function, class... Args>
cublasStatus_t invoke(bool real, const std::string &name, Function function, Args... args) {
  return real ? real_cublas<Function>(name.c_str())(args...) : function(args...);
}

template <class TA, class TY, class S>
struct GemvProblem {
  cublasOperation_t op;
  int m, n, lda, incx, incy;
  S alpha, beta;
  int batch = 1;

  bool valid_blas() const {
    return (op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C) && m >= 0 && n >= 0 &&
           lda >= std::max(1, m) && incx != 0 && incy != 0 && batch >= 0;
  }
  bool transposed() const { return op == CUBLAS_OP_T || op == CUBLAS_OP_C; }
  // The BLAS call, for valid_blas() problems.
  xgemv_test::GemvShape shape() const {
    return {op == CUBLAS_OP_N ? 'N' : op == CUBLAS_OP_T ? 'T' : 'C', m, n, lda, incx, incy};
  }
  int x_length() const { return transposed() ? m : n; }
  int y_length() const { return transposed() ? n : m; }
  // Generous element counts per problem, also for the invalid arguments cuBLAS accepts.
  size_t a_elements() const { return size_t(std::max(lda, 1)) * size_t(std::max({m, n, 1})); }
  size_t vector_elements(int inc) const {
    return size_t(std::max({m, n, 1})) * size_t(std::max(std::abs(inc), 1)) + 2;
  }

  std::string describe(Family family) const {
    char text[160];
    std::snprintf(text, sizeof text, "%s op=%d m=%d n=%d lda=%d incx=%d incy=%d a=%g b=%g batch=%d",
                  entry_name<TA, TY, S>(family).c_str(), int(op), m, n, lda, incx, incy,
                  double(alpha), double(beta), batch);
    return text;
  }
};

// y of one problem after a valid call, on the host.
template <class TA, class TY, class S>
std::vector<TY> host_gemv(const GemvProblem<TA, TY, S> &p, const TA *a, const TA *x,
                          std::vector<TY> y) {
  const std::vector<double> logical_y =
      xgemv_test::reference_gemv(p.shape(), p.alpha, a, x, p.beta, y.data());
  for (int i = 0; i < p.y_length(); ++i)
    y[vector_offset(i, p.y_length(), p.incy)] = from_double<TY>(logical_y[i]);
  return y;
}

// The batch's operands, one buffer per operand; problem b at b * stride. Pointer-array forms
// point at the same places.
template <class TA, class TY, class S>
struct GemvOperands {
  GemvOperands(const GemvProblem<TA, TY, S> &p, int batch_slots)
      : stride_a(p.a_elements() + 5),
        stride_x(p.vector_elements(p.incx) + 3),
        stride_y(p.vector_elements(p.incy) + 2),
        a(random_values<TA>(stride_a * batch_slots)),
        x(random_values<TA>(stride_x * batch_slots)),
        y(random_values<TY>(stride_y * batch_slots)) {
    if (p.beta == S(0))  // NaN must not leak through beta == 0
      for (TY &value : y) value = from_double<TY>(std::numeric_limits<double>::quiet_NaN());
  }
  size_t stride_a, stride_x, stride_y;
  std::vector<TA> a, x;
  std::vector<TY> y;
};

// Runs problem `p` through `family` on `handle`, as linked or on the real cuBLAS. Returns the
// status and y afterwards.
template <class TA, class TY, class S>
cublasStatus_t run_family(Family family, bool real, cublasHandle_t handle,
                          const GemvProblem<TA, TY, S> &p, const GemvOperands<TA, TY, S> &operands,
                          std::vector<TY> &y_after, const S *alpha, const S *beta) {
  using Entry = GemvEntryPoints<TA, TY, S>;
  const std::string name = entry_name<TA, TY, S>(family);
  const DeviceArray<TA> a(operands.a), x(operands.x);
  const DeviceArray<TY> y(operands.y);
  const int slots = std::max(p.batch, 1);
  std::vector<const TA *> a_pointers, x_pointers;
  std::vector<TY *> y_pointers;
  for (int b = 0; b < slots; ++b) {
    a_pointers.push_back(a.get() + b * operands.stride_a);
    x_pointers.push_back(x.get() + b * operands.stride_x);
    y_pointers.push_back(y.get() + b * operands.stride_y);
  }
  const DeviceArray<const TA *> a_array(a_pointers), x_array(x_pointers);
  const DeviceArray<TY *> y_array(y_pointers);
  const long long sa = operands.stride_a, sx = operands.stride_x, sy = operands.stride_y;
  const int64_t m = p.m, n = p.n, lda = p.lda, incx = p.incx, incy = p.incy, batch = p.batch;

  cublasStatus_t status = CUBLAS_STATUS_NOT_SUPPORTED;
  switch (family) {
    case Family::single:
      if constexpr (!std::is_null_pointer_v<decltype(Entry::single)>)
        status = invoke(real, name, Entry::single, handle, p.op, p.m, p.n, alpha, a.get(), p.lda,
                        x.get(), p.incx, beta, y.get(), p.incy);
      break;
    case Family::single_64:
      if constexpr (!std::is_null_pointer_v<decltype(Entry::single_64)>)
        status = invoke(real, name, Entry::single_64, handle, p.op, m, n, alpha, a.get(), lda,
                        x.get(), incx, beta, y.get(), incy);
      break;
    case Family::batched:
      status = invoke(real, name, Entry::batched, handle, p.op, p.m, p.n, alpha, a_array.get(),
                      p.lda, x_array.get(), p.incx, beta, y_array.get(), p.incy, p.batch);
      break;
    case Family::batched_64:
      status = invoke(real, name, Entry::batched_64, handle, p.op, m, n, alpha, a_array.get(), lda,
                      x_array.get(), incx, beta, y_array.get(), incy, batch);
      break;
    case Family::strided:
      status = invoke(real, name, Entry::strided, handle, p.op, p.m, p.n, alpha, a.get(), p.lda, sa,
                      x.get(), p.incx, sx, beta, y.get(), p.incy, sy, p.batch);
      break;
    case Family::strided_64:
      status = invoke(real, name, Entry::strided_64, handle, p.op, m, n, alpha, a.get(), lda, sa,
                      x.get(), incx, sx, beta, y.get(), incy, sy, batch);
      break;
  }
  check_cuda(cudaDeviceSynchronize(), "synchronize after a gemv");
  y_after = y.read();
  return status;
}

// One problem through one family: valid BLAS against the host loop, the rest against the real
// cuBLAS; and who served it.
template <class TA, class TY, class S>
void check_gemv(cublasHandle_t handle, Family family, const GemvProblem<TA, TY, S> &p) {
  const bool batched = family != Family::single && family != Family::single_64;
  const GemvOperands<TA, TY, S> operands(p, std::max(p.batch, 1));
  std::vector<TY> y_after;
  cublasStatus_t status;
  {
    const ServedBy served(entry_name<TA, TY, S>(family).c_str(), p.valid_blas(),
                          p.describe(family));
    status = run_family(family, false, handle, p, operands, y_after, &p.alpha, &p.beta);
  }
  if (p.valid_blas()) {
    std::vector<TY> expected = operands.y;
    for (int b = 0; b < (batched ? p.batch : 1); ++b) {
      std::vector<TY> y_b(expected.begin() + b * operands.stride_y,
                          expected.begin() + (b + 1) * operands.stride_y);
      y_b = host_gemv(p, operands.a.data() + b * operands.stride_a,
                      operands.x.data() + b * operands.stride_x, y_b);
      std::copy(y_b.begin(), y_b.end(), expected.begin() + b * operands.stride_y);
    }
    if (status != CUBLAS_STATUS_SUCCESS)
      fail(p.describe(family) + ": status " + std::to_string(status));
    for (size_t k = 0; k < expected.size(); ++k) {
      if (!same_value(y_after[k], expected[k])) {
        fail(p.describe(family) + ": y[" + std::to_string(k) +
             "] = " + std::to_string(to_double(y_after[k])) + ", expected " +
             std::to_string(to_double(expected[k])));
        break;
      }
    }
  } else {
    std::vector<TY> y_cublas;
    const cublasStatus_t cublas_status =
        run_family(family, true, handle, p, operands, y_cublas, &p.alpha, &p.beta);
    if (status != cublas_status)
      fail(p.describe(family) + ": status " + std::to_string(status) + ", cuBLAS gives " +
           std::to_string(cublas_status));
    // With incy == 0 every output lands on y[0]: cuBLAS's own result is a race then.
    if (p.incy != 0 && !same_bits(y_after, y_cublas))
      fail(p.describe(family) + ": y differs from cuBLAS's");
  }
}

template <class TA, class TY, class S>
void check_gemv_type(cublasHandle_t handle) {
  using Problem = GemvProblem<TA, TY, S>;
  constexpr bool has_single = !std::is_null_pointer_v<decltype(GemvEntryPoints<TA, TY, S>::single)>;
  const cublasOperation_t ops[] = {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C};
  struct Shape {
    int m, n;
  };
  const Shape shapes[] = {{1, 1}, {7, 5}, {33, 24}, {3, 70}, {300, 2}};
  struct Scalars {
    S alpha, beta;
  };
  const Scalars scalars[] = {{1, 0}, {-1, 1}, {2, -1}, {0, -1}};
  for (Family family : {Family::single, Family::single_64, Family::batched, Family::batched_64,
                        Family::strided, Family::strided_64}) {
    const bool batched = family != Family::single && family != Family::single_64;
    if (!batched && !has_single) continue;
    const int batch = batched ? 3 : 1;
    for (cublasOperation_t op : ops)
      for (const Shape &shape : shapes)
        for (const Scalars &s : scalars) {
          const int incx = (shape.m + shape.n) % 2 ? -2 : 1, incy = s.beta == S(1) ? 3 : -1;
          check_gemv(
              handle, family,
              Problem{op, shape.m, shape.n, shape.m + 2, incx, incy, s.alpha, s.beta, batch});
        }
    // Quick returns and the calls cuBLAS accepts but Reference BLAS does not.
    const Problem odd[] = {
        {CUBLAS_OP_N, 0, 4, 1, 1, 1, 1, 0, batch},  // m == 0: valid, nothing touched
        {CUBLAS_OP_T, 0, 4, 1, 1, 1, 1, 0, batch},
        {CUBLAS_OP_N, 5, 4, 5, 1, 1, 0, 1, batch},           // alpha 0, beta 1
        {CUBLAS_OP_N, 5, 4, 5, 1, 1, 1, 0, 0},               // batch 0 (single: batch ignored)
        {CUBLAS_OP_N, -1, 4, 1, 1, 1, 1, 0, batch},          // cuBLAS: SUCCESS, y untouched
        {CUBLAS_OP_T, 6, 4, 5, 1, 1, 1, 0, batch},           // lda < m: INVALID_VALUE
        {CUBLAS_OP_N, 0, 4, 0, 1, 1, 1, 0, batch},           // lda 0, m 0
        {CUBLAS_OP_N, 5, 4, 5, 0, 1, 1, 0, batch},           // incx 0: x[0] repeated
        {CUBLAS_OP_T, 5, 4, 5, 1, 0, 1, 1, batch},           // incy 0
        {CUBLAS_OP_CONJG, 5, 4, 5, 1, 1, 2, 1, batch},       // as op N
        {cublasOperation_t(7), 5, 4, 5, 1, 1, 2, 1, batch},  // as a transpose
    };
    for (const Problem &p : odd) {
      if (!batched && p.batch == 0) {
        Problem single = p;
        single.batch = 1;
        check_gemv(handle, family, single);
      } else {
        check_gemv(handle, family, p);
      }
    }
    if (batched) {
      check_gemv(handle, family, Problem{CUBLAS_OP_N, 5, 4, 5, 1, 1, 1, 0, -1});
      // A batch past the 65535 grid limit of one dimension: one launch must still cover it.
      check_gemv(handle, family, Problem{CUBLAS_OP_T, 4, 3, 4, 1, 1, 1, 0, 70000});
    }
  }
}

// --- device-pointer scalars, a non-default stream, graph capture ------------------------------

void check_device_scalars(cublasHandle_t handle) {
  const GemvProblem<float, float, float> p{CUBLAS_OP_T, 40, 30, 41, 1, -1, 2, -1};
  const GemvOperands<float, float, float> operands(p, 1);
  const DeviceArray<float> scalars(std::vector<float>{p.alpha, p.beta});
  check_cuda(cudaDeviceSynchronize(), "sync");
  if (cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_DEVICE) != CUBLAS_STATUS_SUCCESS)
    fail("cublasSetPointerMode");
  std::vector<float> y_after;
  cublasStatus_t status;
  {
    const ServedBy served("cublasSgemv_v2", true, "device-pointer scalars");
    status = run_family(Family::single, false, handle, p, operands, y_after, scalars.get(),
                        scalars.get() + 1);
  }
  cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST);
  const std::vector<float> expected =
      host_gemv(p, operands.a.data(), operands.x.data(), operands.y);
  if (status != CUBLAS_STATUS_SUCCESS || !same_values(y_after, expected))
    fail("device-pointer scalars: wrong result");
}

// The call must be ordered on the handle's stream: queued behind a host function that holds
// the stream, it must not have run while the stream is held.
void check_stream(cublasHandle_t handle) {
  cudaStream_t stream = nullptr, reader = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  check_cuda(cudaStreamCreateWithFlags(&reader, cudaStreamNonBlocking), "stream");
  const int m = 64, n = 48;
  std::vector<float> a(m * n, 1.0f), x(n, 1.0f), y(m, -5.0f);
  const DeviceArray<float> d_a(a), d_x(x), d_y(y);
  const float alpha = 1, beta = 0;
  cublasSetStream(handle, stream);
  {  // first use of this stream: the drop-in makes its xgemv handle now, not behind the hold
    const ServedBy served("cublasSgemv_v2", true, "non-default stream, first call");
    cublasSgemv_v2(handle, CUBLAS_OP_N, m, n, &alpha, d_a.get(), m, d_x.get(), 1, &beta, d_y.get(),
                   1);
  }
  check_cuda(cudaStreamSynchronize(stream), "stream sync");
  check_cuda(cudaMemcpyAsync(d_y.get(), y.data(), m * sizeof(float), cudaMemcpyHostToDevice,
                             stream),
             "reset");
  check_cuda(cudaStreamSynchronize(stream), "reset sync");  // landed before the early read
  // Under compute-sanitizer the early read would queue behind the held stream itself.
  const bool check_order = !xgemv_test::sanitizer_profile();
  if (!check_order)
    std::printf("note: sanitizer profile, the early read of y beside the held stream is left out\n");
  std::atomic<bool> released{!check_order};
  auto hold = [](void *flag) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!static_cast<std::atomic<bool> *>(flag)->load() &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::microseconds(100));
  };
  check_cuda(cudaLaunchHostFunc(stream, hold, &released), "cudaLaunchHostFunc");
  {
    const ServedBy served("cublasSgemv_v2", true, "non-default stream");
    if (cublasSgemv_v2(handle, CUBLAS_OP_N, m, n, &alpha, d_a.get(), m, d_x.get(), 1, &beta,
                       d_y.get(), 1) != CUBLAS_STATUS_SUCCESS)
      fail("non-default stream: status");
  }
  if (check_order) {
    std::vector<float> early(m);
    check_cuda(
        cudaMemcpyAsync(early.data(), d_y.get(), m * sizeof(float), cudaMemcpyDeviceToHost, reader),
        "early read");
    check_cuda(cudaStreamSynchronize(reader), "reader sync");
    released = true;
    if (early != y) fail("non-default stream: the gemv ran before the work queued ahead of it");
  }
  check_cuda(cudaStreamSynchronize(stream), "stream sync");
  if (d_y.read() != std::vector<float>(m, float(n))) fail("non-default stream: wrong result");
  cublasSetStream(handle, nullptr);
  retire(stream);
  retire(reader);
}

// Captured on a stream the drop-in has not seen (as PyTorch captures, on a stream of its own)
// and on one it has seen: served by xgemv inside the graph either way (a handle made during the
// capture leaves the capture alone). Both graphs must compute, replayed twice.
void check_graph_capture(cublasHandle_t handle) {
  const int m = 96, n = 80;
  const std::vector<float> a(m * n, 0.5f), x(n, 2.0f);
  const DeviceArray<float> d_a(a), d_x(x), d_y(std::vector<float>(m, 0.0f));
  const float alpha = 1, beta = 1;
  for (bool seen_before : {false, true}) {
    cudaStream_t stream = nullptr;
    check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
    cublasSetStream(handle, stream);
    // On the stream: a default-stream memset is not ordered before a non-blocking stream's work.
    check_cuda(cudaMemsetAsync(d_y.get(), 0, m * sizeof(float), stream), "memset");
    if (seen_before) {  // one call outside capture: y = 80
      const ServedBy served("cublasSgemv_v2", true, "before capture");
      cublasSgemv_v2(handle, CUBLAS_OP_N, m, n, &alpha, d_a.get(), m, d_x.get(), 1, &beta,
                     d_y.get(), 1);
    }
    check_cuda(cudaStreamSynchronize(stream), "sync");
    cudaGraph_t graph = nullptr;
    check_cuda(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "begin capture");
    {
      const ServedBy served("cublasSgemv_v2", true,
                            seen_before ? "capture on a known stream" : "capture on a new stream");
      cublasSgemv_v2(handle, CUBLAS_OP_N, m, n, &alpha, d_a.get(), m, d_x.get(), 1, &beta,
                     d_y.get(), 1);
    }
    check_cuda(cudaStreamEndCapture(stream, &graph), "end capture");
    cudaGraphExec_t exec = nullptr;
    check_cuda(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
    for (int replay = 0; replay < 2; ++replay) check_cuda(cudaGraphLaunch(exec, stream), "launch");
    check_cuda(cudaStreamSynchronize(stream), "sync");
    const float expected = float(n) * (seen_before ? 3 : 2);
    if (d_y.read() != std::vector<float>(m, expected))
      fail(std::string("graph capture (") + (seen_before ? "known" : "new") +
           " stream): wrong result");
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cublasSetStream(handle, nullptr);
    retire(stream);
  }
}

// A long reduction (op T, 16 outputs of 20011 terms: split across blocks outside a capture)
// whose first call on its stream is captured: the xgemv handle made during the capture has its
// split workspace, so the graph's kernel is split too (grid.y > 1) and its log line names the
// row-block variant. Small integers: exact whatever the order of the sums.
void check_split_reduction_captured(cublasHandle_t handle) {
  const int m = 20011, n = 16;
  const std::vector<float> a = random_values<float>(size_t(m) * n), x = random_values<float>(m),
                           y = random_values<float>(n);
  const DeviceArray<float> d_a(a), d_x(x), d_y(y);
  const float alpha = 1, beta = -1;
  std::vector<float> expected(n);
  for (int j = 0; j < n; ++j) {
    double dot = 0;
    for (int i = 0; i < m; ++i) dot += double(a[i + size_t(j) * m]) * x[i];
    expected[j] = float(alpha * dot + beta * y[j]);
  }
  cudaStream_t stream = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  cublasSetStream(handle, stream);
  cudaGraph_t graph = nullptr;
  check_cuda(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "begin capture");
  {
    const ServedBy served("cublasSgemv_v2", true, "long reduction, first call in a capture",
                          " t_rowblock_32");
    cublasSgemv_v2(handle, CUBLAS_OP_T, m, n, &alpha, d_a.get(), m, d_x.get(), 1, &beta,
                   d_y.get(), 1);
  }
  check_cuda(cudaStreamEndCapture(stream, &graph), "end capture (long reduction)");
  if (graph != nullptr) {
    if (expected_server == Expect::xgemv && xgemv_test::largest_grid_y(graph) < 2)
      fail("long reduction, first call in a capture: not split across blocks in the graph");
    cudaGraphExec_t exec = nullptr;
    check_cuda(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
    check_cuda(cudaGraphLaunch(exec, stream), "launch");
    check_cuda(cudaStreamSynchronize(stream), "sync");
    if (d_y.read() != expected) fail("long reduction, first call in a capture: wrong result");
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
  cublasSetStream(handle, nullptr);
  retire(stream);
}

// --- GEMMs of at most 16 columns or rows
// ---------------------------------------------------------------

// The drop-in maps GEMMs whose C has at most this many columns or rows to one GEMV problem of
// that many vectors: C's columns when n == 1 or (m != 1 and n <= 16), else C's rows. It serves
// one vector for every served type; several up to a count by the problem's op (op T: columns
// with op(A) = A^T, rows with op(B) = B) and type (most_vectors_of): more are left to cuBLAS's
// GEMM, which is faster there.
constexpr int kMaxGemmVectors = 16;

bool vectors_are_columns(int m, int n) { return n == 1 || (m != 1 && n <= kMaxGemmVectors); }

int gemm_vectors(int m, int n) { return vectors_are_columns(m, n) ? n : m; }

// The most vectors xgemv serves as op T and as op N for A and B of a type; beyond them cuBLAS's
// GEMM is faster and keeps the call.
struct MostVectors {
  int op_t, op_n;
};
MostVectors most_vectors_of(cudaDataType ab_type) {
  if (ab_type == CUDA_R_32F) return {8, 4};
  if (ab_type == CUDA_R_64F) return {kMaxGemmVectors, kMaxGemmVectors};
  return {kMaxGemmVectors, 8};
}

// Whether xgemv serves a GEMM of at most 16 columns or rows whose types and compute type it
// serves: one vector always, several up to the count of the problem's op (op T: columns with
// op(A) = A^T, rows with op(B) = B).
bool vectors_served(MostVectors most, bool ta, bool tb, int m, int n) {
  const bool op_t = vectors_are_columns(m, n) ? ta : !tb;
  return gemm_vectors(m, n) <= (op_t ? most.op_t : most.op_n);
}

// The forward reason the drop-in logs for several vectors it leaves to cuBLAS.
const char *const kSeveralVectorsReason = "several vectors where cuBLAS's GEMM is faster";

// C = alpha*op(A)*op(B) + beta*C on the host (exact on small integers, rounded once).
template <class TAB, class TC>
std::vector<TC> host_gemm(bool ta, bool tb, int m, int n, int k, float alpha,
                          const std::vector<TAB> &a, int lda, const std::vector<TAB> &b, int ldb,
                          float beta, std::vector<TC> c, int ldc) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int l = 0; l < k; ++l)
        sum += to_double(ta ? a[l + size_t(i) * lda] : a[i + size_t(l) * lda]) *
               to_double(tb ? b[j + size_t(l) * ldb] : b[l + size_t(j) * ldb]);
      TC &out = c[i + size_t(j) * ldc];
      out = from_double<TC>(double(alpha) * sum + double(beta) * to_double(out));
    }
  return c;
}

template <class TAB, class TC>
void check_gemm_ex(cublasHandle_t handle, cudaDataType ab_type, cudaDataType c_type,
                   cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
                   cublasComputeType_t compute, bool use_64) {
  const bool ta = transa != CUBLAS_OP_N, tb = transb != CUBLAS_OP_N;
  const int lda = (ta ? k : m) + 1, ldb = (tb ? n : k) + 2, ldc = m + 3;
  const std::vector<TAB> a = random_values<TAB>(size_t(lda) * (ta ? m : k));
  const std::vector<TAB> b = random_values<TAB>(size_t(ldb) * (tb ? k : n));
  const std::vector<TC> c = random_values<TC>(size_t(ldc) * n);
  const bool fp32_compute = compute == CUBLAS_COMPUTE_32F || compute == CUBLAS_COMPUTE_32F_PEDANTIC;
  const bool gemv_shape = m <= kMaxGemmVectors || n <= kMaxGemmVectors;
  const bool kept_by_cublas =  // several vectors beyond xgemv's counts
      fp32_compute && gemv_shape && !vectors_served(most_vectors_of(ab_type), ta, tb, m, n);
  const bool served = fp32_compute && gemv_shape && !kept_by_cublas;
  const float alpha = 2, beta = -1;
  const __half alpha_h = __float2half(2.0f), beta_h = __float2half(-1.0f);
  const void *alpha_p = fp32_compute ? static_cast<const void *>(&alpha) : &alpha_h;
  const void *beta_p = fp32_compute ? static_cast<const void *>(&beta) : &beta_h;
  char context[160];
  std::snprintf(context, sizeof context,
                "GemmEx%s types %d->%d ops %d,%d m=%d n=%d k=%d compute %d", use_64 ? "_64" : "",
                int(ab_type), int(c_type), int(transa), int(transb), m, n, k, int(compute));

  auto run = [&](bool real, std::vector<TC> &result) {
    const DeviceArray<TAB> d_a(a), d_b(b);
    const DeviceArray<TC> d_c(c);
    const char *name = use_64 ? "cublasGemmEx_64" : "cublasGemmEx";
    cublasStatus_t status;
    if (use_64) {
      status = invoke(real, name, &cublasGemmEx_64, handle, transa, transb, int64_t(m), int64_t(n),
                      int64_t(k), alpha_p, static_cast<const void *>(d_a.get()), ab_type,
                      int64_t(lda), static_cast<const void *>(d_b.get()), ab_type, int64_t(ldb),
                      beta_p, static_cast<void *>(d_c.get()), c_type, int64_t(ldc), compute,
                      CUBLAS_GEMM_DEFAULT);
    } else {
      using GemmEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                        int, int, const void *, const void *, cudaDataType, int,
                                        const void *, cudaDataType, int, const void *, void *,
                                        cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
      status = invoke(real, name, static_cast<GemmEx>(&cublasGemmEx), handle, transa, transb, m, n,
                      k, alpha_p, static_cast<const void *>(d_a.get()), ab_type, lda,
                      static_cast<const void *>(d_b.get()), ab_type, ldb, beta_p,
                      static_cast<void *>(d_c.get()), c_type, ldc, compute, CUBLAS_GEMM_DEFAULT);
    }
    check_cuda(cudaDeviceSynchronize(), "sync");
    result = d_c.read();
    return status;
  };

  std::vector<TC> got;
  cublasStatus_t status;
  {
    const ServedBy served_by(use_64 ? "cublasGemmEx_64" : "cublasGemmEx", served, context,
                             served           ? " nrhs=" + std::to_string(gemm_vectors(m, n)) + " "
                             : kept_by_cublas ? kSeveralVectorsReason
                                              : "");
    status = run(false, got);
  }
  std::vector<TC> reference;
  const cublasStatus_t cublas_status = run(true, reference);
  if (served) {
    // Exact: the host's sums and cuBLAS's (fp32 accumulation of small integers) are the same
    // values, rounded once to C's type.
    const std::vector<TC> expected =
        host_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    if (status != CUBLAS_STATUS_SUCCESS || !same_values(got, expected))
      fail(std::string(context) + ": wrong result");
    if (cublas_status != CUBLAS_STATUS_SUCCESS || !same_values(got, reference))
      fail(std::string(context) + ": differs from cuBLAS");
  } else if (status != cublas_status || !same_bits(got, reference)) {
    fail(std::string(context) + ": differs from cuBLAS");
  }
}

// cublasSgemm_v2 / cublasDgemm_v2 with ops N,N and T,N of 1 column (xgemv's), 2, 8 and 16
// (several vectors: xgemv's up to its count for the op and type, cuBLAS's beyond), then 17 (a
// GEMM); the forwarded ones are compared with cuBLAS bit for bit.
template <class T, class Gemm>
void check_real_gemms(cublasHandle_t handle, const char *entry, Gemm gemm, MostVectors most) {
  const int m = 50, k = 30, max_n = 17;
  const std::vector<T> a = random_values<T>(m * k), b = random_values<T>(k * max_n);
  const std::vector<T> c = random_values<T>(m * max_n);
  const T alpha = 1, beta = 2;
  for (cublasOperation_t transa : {CUBLAS_OP_N, CUBLAS_OP_T})
    for (int n : {1, 2, 8, 16, 17}) {
      const bool ta = transa == CUBLAS_OP_T;
      const int lda = ta ? k : m;
      auto run = [&](bool real, std::vector<T> &result) {
        const DeviceArray<T> d_a(a), d_b(b), d_c(c);
        const cublasStatus_t status =
            invoke(real, entry, gemm, handle, transa, CUBLAS_OP_N, m, n, k, &alpha, d_a.get(), lda,
                   d_b.get(), k, &beta, d_c.get(), m);
        check_cuda(cudaDeviceSynchronize(), "sync");
        result = d_c.read();
        return status;
      };
      const bool gemv_shape = n <= kMaxGemmVectors;
      const bool served = gemv_shape && vectors_served(most, ta, false, m, n);
      const std::string context =
          std::string(entry) + " op " + (ta ? "T" : "N") + " n=" + std::to_string(n);
      std::vector<T> got, reference;
      cublasStatus_t status;
      {
        const ServedBy served_by(entry, served, context,
                                 served       ? " nrhs=" + std::to_string(n) + " "
                                 : gemv_shape ? kSeveralVectorsReason
                                              : "");
        status = run(false, got);
      }
      if (run(true, reference) != status) fail(context + ": status differs from cuBLAS");
      if (served ? !same_values(got, reference) : !same_bits(got, reference))
        fail(context + ": differs from cuBLAS");
      if (served &&
          !same_values(got, host_gemm(ta, false, m, n, k, float(alpha), a, lda, b, k, float(beta),
                                      c, m)))
        fail(context + ": wrong result");
    }
}

void check_gemms(cublasHandle_t handle) {
  // cuBLAS keeps fp32 partial sums (no split-K reduction in C's type): its results on small
  // integers are exact, as the host's.
  cublasSetMathMode(handle, CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
  struct Shape {
    int m, n, k;
  };
  const Shape shapes[] = {
      {1, 37, 19}, {29, 1, 23}, {1, 1, 40},                  // one row or column
      {6, 5, 7},   {29, 2, 23}, {33, 16, 19}, {40, 7, 64},   // 2..16 columns
      {2, 37, 19}, {16, 45, 21}, {5, 300, 33}, {1, 9, 17},   // 2..16 rows; one row, 9 columns
      {17, 17, 9}, {20, 40, 8},                              // GEMMs: cuBLAS's
  };
  for (cublasOperation_t transa : {CUBLAS_OP_N, CUBLAS_OP_T})
    for (cublasOperation_t transb : {CUBLAS_OP_N, CUBLAS_OP_T})
      for (const Shape &s : shapes)
        for (bool use_64 : {false, true}) {
          check_gemm_ex<__half, __half>(handle, CUDA_R_16F, CUDA_R_16F, transa, transb, s.m, s.n,
                                        s.k, CUBLAS_COMPUTE_32F, use_64);
          check_gemm_ex<__nv_bfloat16, __nv_bfloat16>(handle, CUDA_R_16BF, CUDA_R_16BF, transa,
                                                      transb, s.m, s.n, s.k, CUBLAS_COMPUTE_32F,
                                                      use_64);
          check_gemm_ex<float, float>(handle, CUDA_R_32F, CUDA_R_32F, transa, transb, s.m, s.n, s.k,
                                      CUBLAS_COMPUTE_32F_PEDANTIC, use_64);
          check_gemm_ex<__half, float>(handle, CUDA_R_16F, CUDA_R_32F, transa, transb, s.m, s.n,
                                       s.k, CUBLAS_COMPUTE_32F, use_64);
          check_gemm_ex<__nv_bfloat16, float>(handle, CUDA_R_16BF, CUDA_R_32F, transa, transb,
                                              s.m, s.n, s.k, CUBLAS_COMPUTE_32F, use_64);
        }
  // fp16 compute (half scalars) is not xgemv's: forwarded, also with few columns.
  for (int n : {1, 4})
    check_gemm_ex<__half, __half>(handle, CUDA_R_16F, CUDA_R_16F, CUBLAS_OP_T, CUBLAS_OP_N, 37, n,
                                  19, CUBLAS_COMPUTE_16F, false);

  check_real_gemms<float>(handle, "cublasSgemm_v2", &cublasSgemm_v2,
                          most_vectors_of(CUDA_R_32F));
  check_real_gemms<double>(handle, "cublasDgemm_v2", &cublasDgemm_v2,
                           most_vectors_of(CUDA_R_64F));
  cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH);
}

// Where the program's cublasSgemv_v2 comes from: the drop-in, or cuBLAS.
std::string provider_of_sgemv() {
  Dl_info info{};
  void *symbol = dlsym(RTLD_DEFAULT, "cublasSgemv_v2");
  return symbol != nullptr && dladdr(symbol, &info) != 0 && info.dli_fname != nullptr
             ? info.dli_fname
             : "?";
}

}  // namespace

int main(int argc, char **argv) {
  if (const int stop = start(argc, argv)) return stop;
  const std::string provider = provider_of_sgemv();
  std::printf("cublasSgemv_v2 comes from %s\n", provider.c_str());
  const bool drop_in_loaded = provider.find("xgemv_cublas") != std::string::npos;
  if (drop_in_loaded != (expected_server != Expect::cublas)) {
    std::printf("FAIL: cublasSgemv_v2 from %s in mode %s\n", provider.c_str(), argv[1]);
    return 1;
  }
  if (!found_real(real_cublas<void *>("cublasSgemv_v2"), "cuBLAS")) return 1;
  cublasHandle_t handle = nullptr;
  if (!created(cublasCreate(&handle), "cublasCreate")) return 1;
  check_gemv_type<float, float, float>(handle);
  check_gemv_type<double, double, double>(handle);
  check_gemv_type<__half, __half, float>(handle);
  check_gemv_type<__half, float, float>(handle);
  check_gemv_type<__nv_bfloat16, __nv_bfloat16, float>(handle);
  check_gemv_type<__nv_bfloat16, float, float>(handle);
  check_device_scalars(handle);
  check_stream(handle);
  check_graph_capture(handle);
  check_split_reduction_captured(handle);
  check_gemms(handle);

  // Destroying the cuBLAS handle releases the xgemv handles behind it.
  check_destroy_releases("cublasDestroy_v2", "cublas", [&] { return cublasDestroy(handle); });
  return finish();
}
