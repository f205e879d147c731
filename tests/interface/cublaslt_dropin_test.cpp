// cublasLtMatmul under the cuBLAS drop-in, from a program linked against the real cuBLASLt and
// the CUDA runtime only. CTest runs it as
//   xgemv      LD_PRELOAD=libxgemv_cublas.so: the matmuls that are a GEMV or a few-vector GEMV
//              (D with at most 16 columns), default or bias epilogue, are served by xgemv;
//   cublas     without the drop-in: the same results, no drop-in log line;
//   forwarded  LD_PRELOAD with XGEMV_CUBLAS_DISABLE=1: everything forwarded to cuBLASLt.
// XGEMV_CUBLAS_LOG=1 in every run; the log is read call by call.
//
// The descriptors are made with cuBLASLt's own API, as PyTorch makes them for a Linear with bias
// (transa T, C = D, beta 0). Served calls are compared exactly with the host product (small
// integers: every product and sum is exact, and both sides round the same value once) and by
// value with the real cuBLASLt called directly (dlopen by soname + dlsym, past the drop-in);
// forwarded calls must give cuBLASLt's bits. Covered: bf16, fp16, fp16 -> fp32, fp32 and fp64,
// 1..16 columns, the bias and default epilogues, beta 1 in place, a row-major A, strided
// batches with one bias, C apart from D (beta 0: served; beta 1: forwarded), device scalars,
// graph capture, op N with several vectors (bf16 4 columns, fp64 16), and the forwarded kinds
// (another epilogue, a GEMM, more than 8 fp32 vectors, more than 8 bf16 vectors of op N), then
// cublasLtDestroy releasing the xgemv handles. Exits 77 without a GPU.
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "dropin_test.hpp"
#include "interface_test_support.h"
#include "support/element_types.hpp"

namespace {

using namespace dropin_test;

template <class T>
constexpr cudaDataType data_type_of() {
  return xgemv_test::per_element_type<T>(CUDA_R_32F, CUDA_R_64F, CUDA_R_16F, CUDA_R_16BF);
}

void check_lt(cublasStatus_t status, const std::string &what) {
  if (status != CUBLAS_STATUS_SUCCESS) fail(what + ": cuBLASLt status " + std::to_string(status));
}

// A matrix layout made with the public API.
class Layout {
 public:
  Layout(cudaDataType type, uint64_t rows, uint64_t cols, int64_t ld, int batch, int64_t stride,
         cublasLtOrder_t order = CUBLASLT_ORDER_COL) {
    check_lt(cublasLtMatrixLayoutCreate(&layout_, type, rows, cols, ld), "layout");
    check_lt(cublasLtMatrixLayoutSetAttribute(layout_, CUBLASLT_MATRIX_LAYOUT_ORDER, &order,
                                              sizeof order),
             "layout order");
    const int32_t count = batch;
    check_lt(cublasLtMatrixLayoutSetAttribute(layout_, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                              sizeof count),
             "batch count");
    check_lt(cublasLtMatrixLayoutSetAttribute(
                 layout_, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride),
             "batch stride");
  }
  Layout(const Layout &) = delete;
  Layout &operator=(const Layout &) = delete;
  ~Layout() { cublasLtMatrixLayoutDestroy(layout_); }
  cublasLtMatrixLayout_t get() const { return layout_; }

 private:
  cublasLtMatrixLayout_t layout_ = nullptr;
};

// One matmul: D (m x n) = alpha*op(A)*op(B) + beta*C (+ bias, then ReLU for RELU_BIAS), op(B) =
// B (k x n, ld k + 2), C holding the same start values as D.
// A is k x m with op T (ld k + 3; row_major_a: the same memory as an m x k row-major matrix
// with op N), or m x k with op N (ld m + 3). C and D are m x n (ld m + 1).
struct MatmulCase {
  std::string name;
  int64_t m, n, k;
  cublasOperation_t trans_a = CUBLAS_OP_T;
  bool row_major_a = false;
  int batch = 1;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
  double beta = 0;
  bool c_apart = false;  // C and D are different matrices
  bool device_scalars = false;
  bool in_graph = false;
  bool served = true;   // in mode xgemv
  std::string detail;   // in the log line (served: " nrhs=4 bias ", forwarded: the reason)
};

using MatmulFunction = decltype(&cublasLtMatmul);

template <class TAB, class TCD, class S>
void check_case(cublasLtHandle_t handle, cublasComputeType_t compute, const MatmulCase &c) {
  const std::string context = c.name;
  const cudaDataType ab = data_type_of<TAB>(), cd = data_type_of<TCD>();
  const bool a_transposed = c.trans_a == CUBLAS_OP_T;
  const int64_t lda = a_transposed ? c.k + 3 : c.m + 3, ldb = c.k + 2, ldc = c.m + 1;
  const int64_t a_size = lda * (a_transposed ? c.m : c.k), b_size = ldb * c.n,
                c_size = ldc * c.n;
  const std::vector<TAB> a = random_values<TAB>(size_t(a_size * c.batch));
  const std::vector<TAB> b = random_values<TAB>(size_t(b_size * c.batch));
  const std::vector<TCD> c_start = random_values<TCD>(size_t(c_size * c.batch));
  const std::vector<TCD> bias = random_values<TCD>(size_t(c.m));
  const S alpha = S(1), beta = S(c.beta);

  // The host product, exact, rounded once.
  std::vector<TCD> expected = c_start;
  for (int item = 0; item < c.batch; ++item) {
    for (int64_t j = 0; j < c.n; ++j) {
      for (int64_t i = 0; i < c.m; ++i) {
        double sum = 0;
        for (int64_t l = 0; l < c.k; ++l) {
          const int64_t a_index = a_transposed ? l + i * lda : i + l * lda;
          sum += to_double(a[size_t(item * a_size + a_index)]) *
                 to_double(b[size_t(item * b_size + l + j * ldb)]);
        }
        const size_t out = size_t(item * c_size + i + j * ldc);
        double value = double(alpha) * sum + double(beta) * to_double(c_start[out]);
        if (c.epilogue != CUBLASLT_EPILOGUE_DEFAULT) value += to_double(bias[size_t(i)]);
        if (c.epilogue == CUBLASLT_EPILOGUE_RELU_BIAS) value = std::max(value, 0.0);
        expected[out] = from_double<TCD>(value);
      }
    }
  }

  cublasLtMatmulDesc_t operation = nullptr;
  check_lt(cublasLtMatmulDescCreate(&operation, compute, data_type_of<S>()), context);
  const auto set = [&](cublasLtMatmulDescAttributes_t attribute, const auto &value) {
    check_lt(cublasLtMatmulDescSetAttribute(operation, attribute, &value, sizeof value),
             context + ": attribute " + std::to_string(attribute));
  };
  const cublasOperation_t op_a = c.row_major_a ? CUBLAS_OP_N : c.trans_a;
  set(CUBLASLT_MATMUL_DESC_TRANSA, op_a);
  set(CUBLASLT_MATMUL_DESC_EPILOGUE, c.epilogue);
  const DeviceArray<TCD> d_bias(bias);
  const void *bias_pointer = d_bias.get();
  if (c.epilogue != CUBLASLT_EPILOGUE_DEFAULT) set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias_pointer);
  const DeviceArray<S> d_scalars(std::vector<S>{alpha, beta});
  if (c.device_scalars) set(CUBLASLT_MATMUL_DESC_POINTER_MODE, CUBLASLT_POINTER_MODE_DEVICE);
  const S *alpha_pointer = c.device_scalars ? d_scalars.get() : &alpha;
  const S *beta_pointer = c.device_scalars ? d_scalars.get() + 1 : &beta;

  const Layout a_layout =
      c.row_major_a ? Layout(ab, uint64_t(c.m), uint64_t(c.k), lda, c.batch, a_size,
                             CUBLASLT_ORDER_ROW)
                    : Layout(ab, uint64_t(a_transposed ? c.k : c.m),
                             uint64_t(a_transposed ? c.m : c.k), lda, c.batch, a_size);
  const Layout b_layout(ab, uint64_t(c.k), uint64_t(c.n), ldb, c.batch, b_size);
  const Layout c_layout(cd, uint64_t(c.m), uint64_t(c.n), ldc, c.batch, c_size);
  const DeviceArray<TAB> d_a(a), d_b(b);

  cudaStream_t stream = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  // Runs the matmul through `matmul` on fresh copies of C and D; returns D.
  const auto run = [&](MatmulFunction matmul, cublasStatus_t *status) {
    const DeviceArray<TCD> d_c(c_start), d_d(c_start);
    TCD *const d = c.c_apart ? d_d.get() : d_c.get();
    const auto call = [&] {
      return matmul(handle, operation, alpha_pointer, d_a.get(), a_layout.get(), d_b.get(),
                    b_layout.get(), beta_pointer, d_c.get(), c_layout.get(), d, c_layout.get(),
                    nullptr, nullptr, 0, stream);
    };
    if (c.in_graph) {
      cudaGraph_t graph = nullptr;
      cudaGraphExec_t exec = nullptr;
      check_cuda(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "begin capture");
      *status = call();
      check_cuda(cudaStreamEndCapture(stream, &graph), "end capture");
      check_cuda(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
      check_cuda(cudaGraphLaunch(exec, stream), "launch");
      check_cuda(cudaStreamSynchronize(stream), "sync");
      cudaGraphExecDestroy(exec);
      cudaGraphDestroy(graph);
    } else {
      *status = call();
    }
    check_cuda(cudaStreamSynchronize(stream), "sync");
    return c.c_apart ? d_d.read() : d_c.read();
  };

  cublasStatus_t status = CUBLAS_STATUS_SUCCESS, real_status = CUBLAS_STATUS_SUCCESS;
  std::vector<TCD> got;
  {
    const ServedBy served_by("cublasLtMatmul", c.served, context, c.detail, "cublasLt");
    got = run(&cublasLtMatmul, &status);
  }
  const std::vector<TCD> reference =
      run(real_cublas_lt<MatmulFunction>("cublasLtMatmul"), &real_status);
  if (status != real_status) fail(context + ": status differs from cuBLASLt");
  check_lt(status, context);
  const bool xgemv_served = expected_server == Expect::xgemv && c.served;
  if (xgemv_served ? !same_values(got, reference) : !same_bits(got, reference))
    fail(context + ": differs from cuBLASLt");
  if (!same_values(got, expected)) fail(context + ": wrong result");
  cublasLtMatmulDescDestroy(operation);
  retire(stream);
}

void check_matmuls(cublasLtHandle_t handle) {
  using bf16 = __nv_bfloat16;
  // PyTorch's Linear with bias on 1, 3, 8 and 16 rows: one problem of that many vectors.
  for (const int64_t rows : {1, 3, 8, 16}) {
    MatmulCase linear{"bf16 linear with bias, rows " + std::to_string(rows), 1000, rows, 512};
    linear.detail = " nrhs=" + std::to_string(rows) + " bias ";
    check_case<bf16, bf16, float>(handle, CUBLAS_COMPUTE_32F, linear);
  }
  check_case<__half, __half, float>(handle, CUBLAS_COMPUTE_32F,
                                    {"fp16 linear with bias", 777, 2, 300});
  check_case<__half, float, float>(handle, CUBLAS_COMPUTE_32F,
                                   {"fp16 -> fp32 linear with bias", 256, 4, 128});
  check_case<float, float, float>(handle, CUBLAS_COMPUTE_32F,
                                  {"fp32 linear with bias, one row", 300, 1, 200});
  check_case<float, float, float>(handle, CUBLAS_COMPUTE_32F,
                                  {"fp32 linear with bias, 4 rows", 300, 4, 200});
  check_case<double, double, double>(handle, CUBLAS_COMPUTE_64F,
                                     {"fp64 linear with bias, one row", 300, 1, 200});
  check_case<double, double, double>(handle, CUBLAS_COMPUTE_64F,
                                     {"fp64 linear with bias, 16 rows", 300, 16, 200});

  MatmulCase in_place{"bf16 default epilogue, beta 1", 512, 4, 256};
  in_place.epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  in_place.beta = 1;
  in_place.detail = " nrhs=4 ";
  check_case<bf16, bf16, float>(handle, CUBLAS_COMPUTE_32F, in_place);

  MatmulCase row_major{"bf16 row-major A (op N)", 640, 2, 320};
  row_major.row_major_a = true;
  check_case<bf16, bf16, float>(handle, CUBLAS_COMPUTE_32F, row_major);

  MatmulCase batched{"bf16 strided batch of 3, one bias", 384, 2, 256};
  batched.batch = 3;
  batched.detail = " batch=3 ";
  check_case<bf16, bf16, float>(handle, CUBLAS_COMPUTE_32F, batched);

  MatmulCase apart{"bf16 C apart from D, beta 0", 256, 2, 128};
  apart.c_apart = true;
  check_case<bf16, bf16, float>(handle, CUBLAS_COMPUTE_32F, apart);
  MatmulCase apart_read = apart;
  apart_read.name = "bf16 C apart from D, beta 1";
  apart_read.beta = 1;
  apart_read.served = false;
  apart_read.detail = "C is not D";
  check_case<bf16, bf16, float>(handle, CUBLAS_COMPUTE_32F, apart_read);

  MatmulCase device{"bf16 device scalars, beta 1", 512, 2, 256};
  device.device_scalars = true;
  device.beta = 1;
  check_case<bf16, bf16, float>(handle, CUBLAS_COMPUTE_32F, device);

  MatmulCase graph{"bf16 linear with bias in a graph capture", 1024, 4, 1024};
  graph.in_graph = true;
  graph.detail = " nrhs=4 bias ";
  check_case<bf16, bf16, float>(handle, CUBLAS_COMPUTE_32F, graph);

  // Op N with several vectors: up to 8 of 16-bit, 16 of fp64.
  MatmulCase op_n_four{"bf16 op N, 4 columns", 256, 4, 128};
  op_n_four.trans_a = CUBLAS_OP_N;
  op_n_four.detail = " nrhs=4 bias ";
  check_case<bf16, bf16, float>(handle, CUBLAS_COMPUTE_32F, op_n_four);
  MatmulCase op_n_fp64{"fp64 op N, 16 columns", 300, 16, 200};
  op_n_fp64.trans_a = CUBLAS_OP_N;
  op_n_fp64.detail = " nrhs=16 bias ";
  check_case<double, double, double>(handle, CUBLAS_COMPUTE_64F, op_n_fp64);

  // Forwarded: another epilogue, a GEMM, more than 8 fp32 vectors, more than 8 16-bit vectors of
  // op N.
  MatmulCase relu{"bf16 RELU_BIAS epilogue", 256, 2, 128};
  relu.epilogue = CUBLASLT_EPILOGUE_RELU_BIAS;
  relu.served = false;
  relu.detail = "epilogue";
  check_case<bf16, bf16, float>(handle, CUBLAS_COMPUTE_32F, relu);
  MatmulCase gemm{"bf16 GEMM of 17 columns", 64, 17, 32};
  gemm.served = false;
  gemm.detail = "a GEMM";
  check_case<bf16, bf16, float>(handle, CUBLAS_COMPUTE_32F, gemm);
  MatmulCase fp32_several{"fp32 linear with bias, 12 rows", 256, 12, 128};
  fp32_several.served = false;
  fp32_several.detail = "several vectors";
  check_case<float, float, float>(handle, CUBLAS_COMPUTE_32F, fp32_several);
  MatmulCase op_n{"bf16 op N, 12 columns", 256, 12, 128};
  op_n.trans_a = CUBLAS_OP_N;
  op_n.served = false;
  op_n.detail = "several vectors";
  check_case<bf16, bf16, float>(handle, CUBLAS_COMPUTE_32F, op_n);
  MatmulCase op_n_one{"bf16 op N, one column", 256, 1, 128};
  op_n_one.trans_a = CUBLAS_OP_N;
  check_case<bf16, bf16, float>(handle, CUBLAS_COMPUTE_32F, op_n_one);
}

}  // namespace

int main(int argc, char **argv) {
  if (const int stop = start(argc, argv)) return stop;
  if (!found_real(real_cublas_lt<void *>("cublasLtMatmul"), "cuBLASLt")) return 1;
  cublasLtHandle_t handle = nullptr;
  if (!created(cublasLtCreate(&handle), "cublasLtCreate")) return 1;
  check_matmuls(handle);

  // Destroying the cuBLASLt handle releases the xgemv handles behind it.
  check_destroy_releases("cublasLtDestroy", "cublasLt", [&] { return cublasLtDestroy(handle); });
  return finish();
}
