// The drop-in's interposition and forwarding on the CPU, in PyTorch's arrangement: this library
// links "libcublas.so.13" (the recording fake) and is itself dlopen'ed with RTLD_LOCAL by the
// host program, so cuBLAS sits in a local scope where RTLD_NEXT cannot see it. Under
// LD_PRELOAD=libxgemv_cublas.so, its cuBLAS calls reach the drop-in, which must find the fake by
// soname and forward, with every argument untouched, each call that is not valid BLAS, a GEMV
// or serveable; and log why. Modes: preload, disabled (XGEMV_CUBLAS_DISABLE=1), absent (no
// drop-in: straight to the fake, no log).
#include <cstdio>
#include <string>

#include "fake_cublas.hpp"
#include "interface_test_support.h"

namespace {

enum class Mode { preload, disabled, absent };
Mode mode = Mode::preload;
int failures = 0;
int checked = 0;

void fail(const std::string &what) {
  ++failures;
  std::printf("FAIL %s\n", what.c_str());
}

// Whether the captured log says the call went to cuBLAS for `reason` (by mode).
void check_log(const std::string &log, const char *entry, const std::string &reason) {
  const std::string line = std::string("xgemv_cublas: ") + entry + " -> cublas (";
  switch (mode) {
    case Mode::absent:
      if (log.find("xgemv_cublas:") != std::string::npos) fail(std::string(entry) + ": logged");
      return;
    case Mode::disabled:
    case Mode::preload:
      if (log.find(line + reason) == std::string::npos)
        fail(std::string(entry) + ": expected \"" + line + reason + "\" in \"" + log + "\"");
      return;
  }
}

// Calls `function`, which the drop-in must hand to cuBLAS untouched.
template <class Function, class... Args>
void expect_forwarded(Function function, const char *entry, const char *reason, Args... args) {
  const int calls_before = fake_cublas_last_call()->total_calls;
  test_capture_begin(2);
  const cublasStatus_t status = function(args...);
  const std::string log = test_capture_end();
  ++checked;
  if (status != kFakeStatus) fail(std::string(entry) + ": not cuBLAS's status");
  if (fake_cublas_last_call()->total_calls != calls_before + 1 ||
      !is_call(*fake_cublas_last_call(), entry, args...))
    fail(std::string(entry) + ": not forwarded with its arguments untouched");
  check_log(log, entry, mode == Mode::disabled ? "XGEMV_CUBLAS_DISABLE" : reason);
}

using GemmEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                  int, const void *, const void *, cudaDataType, int, const void *,
                                  cudaDataType, int, const void *, void *, cudaDataType, int,
                                  cublasComputeType_t, cublasGemmAlgo_t);

}  // namespace

extern "C" __attribute__((visibility("default"))) int run_dropin_forwarding_checks(
    const char *mode_name) {
  const std::string name = mode_name != nullptr ? mode_name : "";
  if (name == "preload") {
    mode = Mode::preload;
  } else if (name == "disabled") {
    mode = Mode::disabled;
  } else if (name == "absent") {
    mode = Mode::absent;
  } else {
    std::printf("unknown mode %s\n", name.c_str());
    return 2;
  }

  // Never dereferenced: every call here is forwarded (or, with a GPU, a quick return).
  const auto handle = reinterpret_cast<cublasHandle_t>(std::uintptr_t(0x5000));
  const auto f = reinterpret_cast<const float *>(std::uintptr_t(0x1000));
  const auto d = reinterpret_cast<const double *>(std::uintptr_t(0x2000));
  const auto h = reinterpret_cast<const __half *const *>(std::uintptr_t(0x3000));
  const auto t = reinterpret_cast<const __nv_bfloat16 *>(std::uintptr_t(0x4000));
  float *const y = reinterpret_cast<float *>(std::uintptr_t(0x6000));
  double *const dy = reinterpret_cast<double *>(std::uintptr_t(0x7000));
  __half *const *const hy = reinterpret_cast<__half *const *>(std::uintptr_t(0x8000));
  const void *v = f;

  expect_forwarded(&cublasSgemv_v2, "cublasSgemv_v2", "op is not N, T or C", handle,
                   CUBLAS_OP_CONJG, 4, 3, f, f, 4, f, 1, f, y, 1);
  expect_forwarded(&cublasSgemv_v2, "cublasSgemv_v2", "invalid argument 2", handle, CUBLAS_OP_N, -1,
                   3, f, f, 1, f, 1, f, y, 1);
  expect_forwarded(&cublasSgemv_v2, "cublasSgemv_v2", "op is not N, T or C", handle,
                   static_cast<cublasOperation_t>(7), 4, 3, f, f, 4, f, 1, f, y, 1);
  expect_forwarded(&cublasDgemv_v2_64, "cublasDgemv_v2_64", "invalid argument 6", handle,
                   CUBLAS_OP_T, int64_t(5), int64_t(3), d, d, int64_t(2), d, int64_t(1), d, dy,
                   int64_t(1));
  expect_forwarded(&cublasHSHgemvBatched, "cublasHSHgemvBatched", "invalid argument 8", handle,
                   CUBLAS_OP_N, 4, 3, f, h, 4, h, 0, f, hy, 1, 2);
  expect_forwarded(&cublasTSSgemvStridedBatched_64, "cublasTSSgemvStridedBatched_64",
                   "invalid batch count (< 0)", handle, CUBLAS_OP_T, int64_t(4), int64_t(3), f, t, int64_t(4),
                   12LL, t, int64_t(1), 4LL, f, y, int64_t(1), 3LL, int64_t(-1));
  expect_forwarded(static_cast<GemmEx>(&cublasGemmEx), "cublasGemmEx", "a GEMM", handle,
                   CUBLAS_OP_N, CUBLAS_OP_N, 17, 17, 3, v, v, CUDA_R_16F, 17, v, CUDA_R_16F, 3, v,
                   const_cast<void *>(v), CUDA_R_16F, 17, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  expect_forwarded(&cublasGemmEx_64, "cublasGemmEx_64", "compute type", handle, CUBLAS_OP_T,
                   CUBLAS_OP_N, int64_t(1), int64_t(4), int64_t(3), v, v, CUDA_R_16F, int64_t(3), v,
                   CUDA_R_16F, int64_t(3), v, const_cast<void *>(v), CUDA_R_16F, int64_t(1),
                   CUBLAS_COMPUTE_16F, CUBLAS_GEMM_DEFAULT);
  expect_forwarded(&cublasSgemm_v2, "cublasSgemm_v2", "empty GEMM", handle, CUBLAS_OP_N,
                   CUBLAS_OP_N, 4, 1, 0, f, f, 4, f, 1, f, y, 4);
  // Valid GEMMs of several vectors that cuBLAS keeps: more than 8 fp32 vectors (PyTorch's fp32
  // Linear on 12 rows), more than 4 of fp32 op N, more than 8 16-bit vectors of op N, and an
  // fp64 GEMM.
  const char *const kSeveralVectors = "several vectors where cuBLAS's GEMM is faster";
  expect_forwarded(&cublasSgemm_v2, "cublasSgemm_v2", kSeveralVectors, handle, CUBLAS_OP_T,
                   CUBLAS_OP_N, 8, 12, 3, f, f, 3, f, 3, f, y, 8);
  expect_forwarded(&cublasSgemm_v2, "cublasSgemm_v2", kSeveralVectors, handle, CUBLAS_OP_N,
                   CUBLAS_OP_N, 8, 6, 3, f, f, 8, f, 3, f, y, 8);
  expect_forwarded(&cublasDgemm_v2, "cublasDgemm_v2", "a GEMM", handle, CUBLAS_OP_T, CUBLAS_OP_N,
                   17, 17, 3, d, d, 3, d, 3, d, dy, 17);
  expect_forwarded(static_cast<GemmEx>(&cublasGemmEx), "cublasGemmEx", kSeveralVectors, handle,
                   CUBLAS_OP_N, CUBLAS_OP_N, 8, 12, 3, v, v, CUDA_R_16F, 8, v, CUDA_R_16F, 3, v,
                   const_cast<void *>(v), CUDA_R_16F, 8, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);

  // A valid call (m == 0: nothing is read). With a GPU xgemv serves it (a quick return); without
  // one no xgemv handle can be made and cuBLAS gets it, untouched.
  if (mode == Mode::preload && test_gpu_count() > 0) {
    const int calls_before = fake_cublas_last_call()->total_calls;
    test_capture_begin(2);
    const cublasStatus_t status = cublasSgemv_v2(handle, CUBLAS_OP_N, 0, 3, f, f, 1, f, 1, f, y, 1);
    const std::string log = test_capture_end();
    ++checked;
    if (status != CUBLAS_STATUS_SUCCESS || fake_cublas_last_call()->total_calls != calls_before ||
        log.find("xgemv_cublas: cublasSgemv_v2 -> xgemv (N m=0 n=3") == std::string::npos)
      fail("valid call with a GPU: not served by xgemv: " + log);
  } else {
    expect_forwarded(&cublasSgemv_v2, "cublasSgemv_v2", "", handle, CUBLAS_OP_N, 0, 3, f, f, 1, f,
                     1, f, y, 1);
  }

  // cublasDestroy_v2 is intercepted (the drop-in frees its handles) and forwarded.
  {
    const int calls_before = fake_cublas_last_call()->total_calls;
    test_capture_begin(2);
    const cublasStatus_t status = cublasDestroy_v2(handle);
    const std::string log = test_capture_end();
    ++checked;
    if (status != kFakeStatus || fake_cublas_last_call()->total_calls != calls_before + 1 ||
        !is_call(*fake_cublas_last_call(), "cublasDestroy_v2", handle))
      fail("cublasDestroy_v2: not forwarded untouched");
    if (mode != Mode::absent &&
        log.find("xgemv_cublas: cublasDestroy_v2 -> cublas (released ") == std::string::npos)
      fail("cublasDestroy_v2: not logged: " + log);
  }

  std::printf("%s: %d call(s) checked, %d failure(s)\n", failures ? "FAILED" : "PASSED", checked,
              failures);
  return failures ? 1 : 0;
}
