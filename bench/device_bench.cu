#include "device_bench.hpp"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <xgemv/xgemv.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <type_traits>

#include "lib/check.hpp"
#include "lib/measure.hpp"
#include "lib/random_values.hpp"
#include "system_info.hpp"

namespace xgemv::bench {
namespace {

void check_cuda(cudaError_t error, const char* what) {
  if (error != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(error));
}

template <class T>
inline constexpr bool kIs16Bit =
    std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;

// alpha and beta: fp64 for fp64, fp32 for the others (cuBLAS's and xgemv's convention).
template <class T>
using Scalar = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <class T>
__host__ __device__ T from_float(float value) {
  if constexpr (std::is_same_v<T, __half>) return __float2half_rn(value);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __float2bfloat16_rn(value);
  else return static_cast<T>(value);
}

template <class T>
__host__ __device__ double to_double(T value) {
  if constexpr (std::is_same_v<T, __half>) return __half2float(value);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __bfloat162float(value);
  else return static_cast<double>(value);
}

template <class T>
__global__ void fill_random(T* data, int64_t count, uint64_t seed) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += stride)
    data[i] = from_float<T>(random_value(seed, i));
}

template <class T>
struct ReferenceArguments {
  bool transposed;
  int64_t m, n, lda, incx, incy;
  double alpha, beta;
  const T* a;
  const T* x;
  const T* y0;
  double* y_ref;  // logical order, unit stride
};

// y_ref = alpha*op(A)*x + beta*y0 in fp64, one warp per output element, in a fixed order:
// slow and obviously right.
template <class T>
__global__ void reference_gemv(ReferenceArguments<T> p) {
  const int64_t x_length = p.transposed ? p.m : p.n;
  const int64_t y_length = p.transposed ? p.n : p.m;
  const int64_t out = (int64_t{blockIdx.x} * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (out >= y_length) return;  // whole warps leave together
  double sum = 0;
  for (int64_t k = lane; k < x_length; k += 32) {
    const int64_t row = p.transposed ? k : out;
    const int64_t column = p.transposed ? out : k;
    sum += to_double(p.a[row + column * p.lda]) *
           to_double(p.x[element_offset(k, x_length, p.incx)]);
  }
  for (int offset = 16; offset > 0; offset /= 2)
    sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (lane != 0) return;
  double y = p.alpha * sum;
  if (p.beta != 0) y += p.beta * to_double(p.y0[element_offset(out, y_length, p.incy)]);
  p.y_ref[out] = y;
}

// The ceiling: a streaming read of `vectors` 16-byte words, kStreamLoadsInFlight independent
// loads per thread per step, evict-first like a GEMV's A.
constexpr int kStreamThreads = 256;
constexpr int kStreamLoadsInFlight = 4;
constexpr int kStreamBlocksPerSm = 8;

__global__ void stream_read(const uint4* __restrict__ data, int64_t vectors, unsigned* sink) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  unsigned folded = 0;
  for (; i + (kStreamLoadsInFlight - 1) * stride < vectors; i += kStreamLoadsInFlight * stride) {
    uint4 words[kStreamLoadsInFlight];
#pragma unroll
    for (int k = 0; k < kStreamLoadsInFlight; ++k) words[k] = __ldcs(data + i + k * stride);
#pragma unroll
    for (int k = 0; k < kStreamLoadsInFlight; ++k)
      folded ^= words[k].x ^ words[k].y ^ words[k].z ^ words[k].w;
  }
  for (; i < vectors; i += stride) {
    const uint4 word = __ldcs(data + i);
    folded ^= word.x ^ word.y ^ word.z ^ word.w;
  }
  if (folded == 0x9E3779B9u) *sink = folded;  // a use of every load the compiler cannot drop
}

// Bytes the ceiling reads for a case: the case's bytes, rounded up to whole 16-byte words.
int64_t ceiling_bytes(const Case& c) { return (c.bytes() + 15) / 16 * 16; }

struct DeviceMemory {
  void* pointer = nullptr;
  int64_t bytes = 0;

  DeviceMemory() = default;
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  ~DeviceMemory() { cudaFree(pointer); }

  void allocate(int64_t size, const char* what) {
    check_cuda(cudaMalloc(&pointer, static_cast<size_t>(size)), what);
    bytes = size;
  }
  template <class T>
  T* as() const { return static_cast<T*>(pointer); }
};

struct Handles {
  cudaStream_t stream = nullptr;
  xgemv_handle xgemv = nullptr;
  cublasHandle_t cublas = nullptr;
};

// One GEMV call's operands, A at a chosen copy.
template <class T>
struct Problem {
  char op;
  int64_t m, n, lda;
  Scalar<T> alpha;
  const T* a;
  const T* x;
  int64_t incx;
  Scalar<T> beta;
  T* y;
  int64_t incy;
};

// --- the device libraries --------------------------------------------------------------------

template <class T>
std::string xgemv_function() {
  if constexpr (std::is_same_v<T, float>) return "xgemv_sgemv";
  else if constexpr (std::is_same_v<T, double>) return "xgemv_dgemv";
  else if constexpr (std::is_same_v<T, __half>) return "xgemv_hgemv";
  else return "xgemv_bf16gemv";
}

template <class T>
std::string call_xgemv(const Handles& h, const Problem<T>& p) {
  xgemv_status status;
  if constexpr (std::is_same_v<T, float>)
    status = xgemv_sgemv(h.xgemv, p.op, p.m, p.n, &p.alpha, p.a, p.lda, p.x, p.incx, &p.beta,
                         p.y, p.incy);
  else if constexpr (std::is_same_v<T, double>)
    status = xgemv_dgemv(h.xgemv, p.op, p.m, p.n, &p.alpha, p.a, p.lda, p.x, p.incx, &p.beta,
                         p.y, p.incy);
  else if constexpr (std::is_same_v<T, __half>)
    status = xgemv_hgemv(h.xgemv, p.op, p.m, p.n, &p.alpha, p.a, p.lda, p.x, p.incx, &p.beta,
                         p.y, p.incy);
  else
    status = xgemv_bf16gemv(h.xgemv, p.op, p.m, p.n, &p.alpha, p.a, p.lda, p.x, p.incx, &p.beta,
                            p.y, p.incy);
  return status == XGEMV_STATUS_SUCCESS ? std::string() : xgemv_status_string(status);
}

// The cuBLAS entry points real clients call take int sizes.
std::string needs_int_sizes(const Case& c) {
  const int64_t largest = std::max({c.m, c.n, c.lda(), std::abs(c.incx), std::abs(c.incy)});
  return largest > INT_MAX ? "a size or increment exceeds int" : "";
}

template <class T>
std::string cublas_gemv_function() {
  if constexpr (std::is_same_v<T, float>) return "cublasSgemv_v2";
  else if constexpr (std::is_same_v<T, double>) return "cublasDgemv_v2";
  else if constexpr (std::is_same_v<T, __half>) return "cublasHSHgemvStridedBatched";
  else return "cublasTSTgemvStridedBatched";
}

std::string cublas_status_text(cublasStatus_t status) {
  return status == CUBLAS_STATUS_SUCCESS ? std::string() : cublasGetStatusString(status);
}

template <class T>
std::string call_cublas_gemv(const Handles& h, const Problem<T>& p) {
  const cublasOperation_t op = p.op == 'T' ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int m = static_cast<int>(p.m), n = static_cast<int>(p.n), lda = static_cast<int>(p.lda);
  const int incx = static_cast<int>(p.incx), incy = static_cast<int>(p.incy);
  if constexpr (std::is_same_v<T, float>)
    return cublas_status_text(
        cublasSgemv_v2(h.cublas, op, m, n, &p.alpha, p.a, lda, p.x, incx, &p.beta, p.y, incy));
  else if constexpr (std::is_same_v<T, double>)
    return cublas_status_text(
        cublasDgemv_v2(h.cublas, op, m, n, &p.alpha, p.a, lda, p.x, incx, &p.beta, p.y, incy));
  else if constexpr (std::is_same_v<T, __half>)
    return cublas_status_text(cublasHSHgemvStridedBatched(h.cublas, op, m, n, &p.alpha, p.a, lda,
                                                          0, p.x, incx, 0, &p.beta, p.y, incy, 0,
                                                          1));
  else
    return cublas_status_text(cublasTSTgemvStridedBatched(h.cublas, op, m, n, &p.alpha, p.a, lda,
                                                          0, p.x, incx, 0, &p.beta, p.y, incy, 0,
                                                          1));
}

std::string gemmex_restriction(const Case& c) {
  if (c.incx != 1 || c.incy != 1) return "a one-column GEMM needs unit increments";
  return needs_int_sizes(c);
}

// y = op(A) x as a GEMM with one column, CUBLAS_COMPUTE_32F: what PyTorch calls for a 16-bit
// matrix-vector product (tests/interface/torch_dropin_test.py sees it in the drop-in's log).
template <class T>
std::string call_cublas_gemmex(const Handles& h, const Problem<T>& p) {
  static_assert(kIs16Bit<T>);
  constexpr cudaDataType type = std::is_same_v<T, __half> ? CUDA_R_16F : CUDA_R_16BF;
  const bool transposed = p.op == 'T';
  const int rows = static_cast<int>(transposed ? p.n : p.m);
  const int depth = static_cast<int>(transposed ? p.m : p.n);
  return cublas_status_text(cublasGemmEx(
      h.cublas, transposed ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, rows, 1, depth, &p.alpha,
      p.a, type, static_cast<int>(p.lda), p.x, type, depth, &p.beta, p.y, type, rows,
      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

std::string no_restriction(const Case&) { return ""; }

template <class T>
struct DeviceLibrary {
  std::string name;      // as in --lib
  std::string function;  // recorded with the results
  std::string (*restriction)(const Case&);  // why it cannot run a case; empty if it can
  std::string (*call)(const Handles&, const Problem<T>&);  // enqueues one call; error text
};

// The libraries for element type T, in the order they run.
template <class T>
std::vector<DeviceLibrary<T>> device_libraries() {
  std::vector<DeviceLibrary<T>> libraries = {
      {"xgemv", xgemv_function<T>(), no_restriction, call_xgemv<T>},
      {"cublas", cublas_gemv_function<T>(), needs_int_sizes, call_cublas_gemv<T>},
  };
  if constexpr (kIs16Bit<T>)
    libraries.push_back(
        {"cublas-gemmex", "cublasGemmEx", gemmex_restriction, call_cublas_gemmex<T>});
  return libraries;
}

// --- the bench -------------------------------------------------------------------------------

struct Timing {
  double us = 0;  // median per call
  TimingPlan plan;
  int64_t copies = 0;  // distinct copies of A the calls cycle through
  std::string error;
};

class CudaDeviceBench final : public DeviceBench {
 public:
  explicit CudaDeviceBench(int ordinal) : ordinal_(ordinal) {
    check_cuda(cudaSetDevice(ordinal), "cudaSetDevice");
    check_cuda(cudaGetDeviceProperties(&properties_, ordinal), "cudaGetDeviceProperties");
    char bus_id[32] = {};
    check_cuda(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, ordinal), "cudaDeviceGetPCIBusId");
    nvml_ = std::make_unique<Nvml>(bus_id);
    check_cuda(cudaStreamCreateWithFlags(&handles_.stream, cudaStreamNonBlocking),
               "cudaStreamCreate");
    check_cuda(cudaEventCreate(&start_), "cudaEventCreate");
    check_cuda(cudaEventCreate(&stop_), "cudaEventCreate");
    if (const xgemv_status status = xgemv_create(&handles_.xgemv);
        status != XGEMV_STATUS_SUCCESS)
      throw std::runtime_error(std::string("xgemv_create: ") + xgemv_status_string(status));
    xgemv_set_stream(handles_.xgemv, handles_.stream);
    if (cublasCreate(&handles_.cublas) != CUBLAS_STATUS_SUCCESS)
      throw std::runtime_error("cublasCreate failed");
    cublasSetStream(handles_.cublas, handles_.stream);
    // An explicit workspace: cuBLAS then never allocates inside a graph capture.
    cublas_workspace_.allocate(int64_t{32} << 20, "cuBLAS workspace");
    cublasSetWorkspace(handles_.cublas, cublas_workspace_.pointer,
                       static_cast<size_t>(cublas_workspace_.bytes));
    sink_.allocate(sizeof(unsigned), "ceiling sink");
  }

  ~CudaDeviceBench() override {
    cudaStreamSynchronize(handles_.stream);
    cublasDestroy(handles_.cublas);
    xgemv_destroy(handles_.xgemv);
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
    cudaStreamDestroy(handles_.stream);
  }

  void describe(RunInfo& info) const override {
    info.device = properties_.name;
    int sm_khz = 0, memory_khz = 0, driver = 0, runtime = 0;
    cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, ordinal_);
    cudaDeviceGetAttribute(&memory_khz, cudaDevAttrMemoryClockRate, ordinal_);
    info.sm_clock_max_mhz =
        nvml_->max_sm_clock_mhz() ? nvml_->max_sm_clock_mhz() : sm_khz / 1000;
    info.mem_clock_max_mhz =
        nvml_->max_memory_clock_mhz() ? nvml_->max_memory_clock_mhz() : memory_khz / 1000;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    const std::string driver_version = nvml_->driver_version();
    info.driver = (driver_version.empty() ? std::string() : driver_version + " ") + "(CUDA " +
                  std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10) + ")";
    info.cuda = std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10);
  }

  int sm_clock_mhz() const override { return nvml_->sm_clock_mhz(); }

  void reserve(const std::vector<Case>& cases) override {
    int64_t pool = 0, x = 0, y = 0, y_length = 1;
    for (const Case& c : cases) {
      const int64_t size = element_size(c.dtype);
      const int64_t x_bytes = vector_span(c.x_length(), c.incx) * size;
      const int64_t y_bytes = vector_span(c.y_length(), c.incy) * size;
      // Room for the ceiling's read from the last copy, which runs past A by x + y.
      pool = std::max(pool, rotation_layout(c.a_bytes()).pool_bytes() + x_bytes + y_bytes + 256);
      x = std::max(x, x_bytes);
      y = std::max(y, y_bytes);
      y_length = std::max(y_length, c.y_length());
    }
    pool_.allocate(pool, "the rotation pool of A copies");
    x_.allocate(x, "x");
    y_.allocate(y, "y");
    y_initial_.allocate(y, "initial y");
    y_ref_.allocate(y_length * int64_t{sizeof(double)}, "reference y");
  }

  DeviceCaseResult run(const Case& c, const Options& options) override {
    switch (c.dtype) {
      case Dtype::fp32: return run_typed<float>(c, options);
      case Dtype::fp64: return run_typed<double>(c, options);
      case Dtype::fp16: return run_typed<__half>(c, options);
      case Dtype::bf16: return run_typed<__nv_bfloat16>(c, options);
    }
    throw std::logic_error("unknown dtype");
  }

 private:
  template <class T>
  void fill(T* data, int64_t count, uint64_t seed) {
    const int blocks = static_cast<int>(
        std::clamp<int64_t>((count + 255) / 256, 1,
                            int64_t{properties_.multiProcessorCount} * 32));
    fill_random<T><<<blocks, 256, 0, handles_.stream>>>(data, count, seed);
    check_cuda(cudaGetLastError(), "fill_random");
  }

  template <class T>
  DeviceCaseResult run_typed(const Case& c, const Options& options) {
    const RotationLayout layout = rotation_layout(c.a_bytes());
    const int64_t x_span = vector_span(c.x_length(), c.incx);
    const int64_t y_span = vector_span(c.y_length(), c.incy);
    fill(pool_.as<T>(), layout.pool_bytes() / int64_t{sizeof(T)}, kSeedA);
    fill(x_.as<T>(), x_span, kSeedX);
    fill(y_initial_.as<T>(), y_span, kSeedY);

    DeviceCaseResult result;
    result.reference = reference<T>(c);
    result.rows.push_back(measure_ceiling(c, layout, options));

    const int64_t copy_stride = layout.copy_stride_bytes / int64_t{sizeof(T)};
    Problem<T> problem{c.op, c.m, c.n, c.lda(), static_cast<Scalar<T>>(c.alpha), pool_.as<T>(),
                       x_.as<T>(), c.incx, static_cast<Scalar<T>>(c.beta), y_.as<T>(), c.incy};
    for (const DeviceLibrary<T>& library : device_libraries<T>()) {
      if (!options.wants_library(library.name)) continue;
      Measurement row(c, library.name, library.function, options.graph ? "graph" : "stream");
      if (const std::string why = library.restriction(c); !why.empty()) {
        row.status = "skipped: " + why;
        result.rows.push_back(row);
        continue;
      }
      problem.a = pool_.as<T>();
      reset_y<T>(c);
      if (const std::string error = library.call(handles_, problem); !error.empty()) {
        row.status = "error: " + error;
        result.rows.push_back(row);
        continue;
      }
      // Which kernel variant served the case: "xgemv_hgemv/t_rowblock_32".
      if (library.name == "xgemv")
        if (const char *variant = xgemv_get_last_kernel_variant(handles_.xgemv))
          row.function += std::string("/") + variant;
      const CheckResult check = compare_to_reference(c, read_y<T>(c), result.reference);
      row.max_error = check.max_error;
      row.tolerance = check.tolerance;
      if (!check.passed) {
        row.status = "check failed";
        result.rows.push_back(row);
        continue;
      }
      const Timing timing = time_calls(c.bytes(), layout.copies, options, [&](int64_t copy) {
        problem.a = pool_.as<T>() + copy * copy_stride;
        return library.call(handles_, problem);
      });
      record_timing(row, timing);
      result.rows.push_back(row);
    }
    return result;
  }

  template <class T>
  std::vector<double> reference(const Case& c) {
    const ReferenceArguments<T> arguments{c.transposed(), c.m, c.n, c.lda(), c.incx, c.incy,
                                          c.alpha, c.beta, pool_.as<T>(), x_.as<T>(),
                                          y_initial_.as<T>(), y_ref_.as<double>()};
    const int64_t threads = c.y_length() * 32;
    reference_gemv<T><<<static_cast<unsigned>((threads + 255) / 256), 256, 0, handles_.stream>>>(
        arguments);
    check_cuda(cudaGetLastError(), "reference_gemv");
    std::vector<double> y_ref(static_cast<size_t>(c.y_length()));
    check_cuda(cudaMemcpyAsync(y_ref.data(), y_ref_.pointer, y_ref.size() * sizeof(double),
                               cudaMemcpyDeviceToHost, handles_.stream),
               "copy reference");
    check_cuda(cudaStreamSynchronize(handles_.stream), "reference");
    return y_ref;
  }

  // y before a checked call: NaN everywhere when beta == 0 (all-ones bytes are NaN in every
  // type here), else the initial random values.
  template <class T>
  void reset_y(const Case& c) {
    const size_t bytes = static_cast<size_t>(vector_span(c.y_length(), c.incy)) * sizeof(T);
    check_cuda(c.beta == 0 ? cudaMemsetAsync(y_.pointer, 0xFF, bytes, handles_.stream)
                           : cudaMemcpyAsync(y_.pointer, y_initial_.pointer, bytes,
                                             cudaMemcpyDeviceToDevice, handles_.stream),
               "reset y");
  }

  // y after a call (synchronises: a fault in the call surfaces here and ends the run).
  template <class T>
  std::vector<double> read_y(const Case& c) {
    std::vector<T> stored(static_cast<size_t>(vector_span(c.y_length(), c.incy)));
    check_cuda(cudaMemcpyAsync(stored.data(), y_.pointer, stored.size() * sizeof(T),
                               cudaMemcpyDeviceToHost, handles_.stream),
               "copy y");
    check_cuda(cudaStreamSynchronize(handles_.stream), "the checked call");
    std::vector<double> values(stored.size());
    std::transform(stored.begin(), stored.end(), values.begin(), to_double<T>);
    return gather_vector(values.data(), c.y_length(), c.incy);
  }

  Measurement measure_ceiling(const Case& c, const RotationLayout& layout,
                              const Options& options) {
    Measurement row(c, kCeiling, "stream_read", options.graph ? "graph" : "stream");
    const int64_t vectors = ceiling_bytes(c) / 16;
    constexpr int64_t kVectorsPerBlockStep = kStreamThreads * kStreamLoadsInFlight;
    const int blocks = static_cast<int>(
        std::clamp<int64_t>((vectors + kVectorsPerBlockStep - 1) / kVectorsPerBlockStep, 1,
                            int64_t{properties_.multiProcessorCount} * kStreamBlocksPerSm));
    const Timing timing = time_calls(c.bytes(), layout.copies, options, [&](int64_t copy) {
      const auto* data =
          reinterpret_cast<const uint4*>(pool_.as<char>() + copy * layout.copy_stride_bytes);
      stream_read<<<blocks, kStreamThreads, 0, handles_.stream>>>(data, vectors,
                                                                  sink_.as<unsigned>());
      const cudaError_t error = cudaGetLastError();
      return error == cudaSuccess ? std::string() : std::string(cudaGetErrorString(error));
    });
    record_timing(row, timing);
    return row;
  }

  static void record_timing(Measurement& row, const Timing& timing) {
    row.copies = timing.copies;
    row.calls_per_batch = timing.plan.calls_per_batch;
    row.batches = timing.plan.batches;
    if (timing.error.empty()) row.us = timing.us;
    else row.status = "error: " + timing.error;
  }

  // Medians of batches of back-to-back calls after warm-up, each call on the next copy of A;
  // in graph mode each batch is one replay of a captured batch.
  Timing time_calls(int64_t bytes_per_call, int64_t copies, const Options& options,
                    const std::function<std::string(int64_t)>& enqueue) {
    Timing timing;
    timing.plan = plan_timing(bytes_per_call, options.quick);
    if (options.graph)
      timing.plan.calls_per_batch = static_cast<int>(graph_calls(timing.plan, copies));
    // A graph replays the same calls, so it cycles through only as many copies as it calls.
    timing.copies =
        options.graph ? std::min<int64_t>(copies, timing.plan.calls_per_batch) : copies;
    int64_t next_copy = 0;
    auto enqueue_batch = [&]() -> std::string {
      for (int call = 0; call < timing.plan.calls_per_batch; ++call) {
        if (std::string error = enqueue(next_copy); !error.empty()) return error;
        next_copy = (next_copy + 1) % copies;
      }
      return "";
    };
    cudaGraphExec_t replay = nullptr;
    if (options.graph) {
      cudaGraph_t graph = nullptr;
      check_cuda(cudaStreamBeginCapture(handles_.stream, cudaStreamCaptureModeThreadLocal),
                 "cudaStreamBeginCapture");
      timing.error = enqueue_batch();
      check_cuda(cudaStreamEndCapture(handles_.stream, &graph), "cudaStreamEndCapture");
      if (timing.error.empty())
        check_cuda(cudaGraphInstantiate(&replay, graph, 0), "cudaGraphInstantiate");
      cudaGraphDestroy(graph);
      if (!timing.error.empty()) return timing;
    }
    std::vector<double> per_call_us;
    for (int batch = 0; batch < timing.plan.warmup_batches + timing.plan.batches; ++batch) {
      check_cuda(cudaEventRecord(start_, handles_.stream), "cudaEventRecord");
      if (replay) {
        check_cuda(cudaGraphLaunch(replay, handles_.stream), "cudaGraphLaunch");
      } else if (timing.error = enqueue_batch(); !timing.error.empty()) {
        break;
      }
      check_cuda(cudaEventRecord(stop_, handles_.stream), "cudaEventRecord");
      check_cuda(cudaEventSynchronize(stop_), "timed batch");
      float ms = 0;
      check_cuda(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
      if (batch >= timing.plan.warmup_batches)
        per_call_us.push_back(1e3 * ms / timing.plan.calls_per_batch);
    }
    if (replay) cudaGraphExecDestroy(replay);
    timing.us = median(per_call_us);
    return timing;
  }

  int ordinal_;
  cudaDeviceProp properties_{};
  std::unique_ptr<Nvml> nvml_;
  Handles handles_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  DeviceMemory cublas_workspace_, sink_, pool_, x_, y_, y_initial_, y_ref_;
};

}  // namespace

std::unique_ptr<DeviceBench> DeviceBench::open(int ordinal, std::string* why_not) {
  int count = 0;
  if (const cudaError_t error = cudaGetDeviceCount(&count); error != cudaSuccess) {
    *why_not = cudaGetErrorString(error);
    return nullptr;
  }
  if (ordinal >= count) {
    *why_not = "CUDA device " + std::to_string(ordinal) + " not found (" + std::to_string(count) +
               " visible)";
    return nullptr;
  }
  return std::make_unique<CudaDeviceBench>(ordinal);
}

}  // namespace xgemv::bench
