// What xgemv-bench (xgemv_bench.cu: shape cases, decode steps) and xgemv-nccl-bench (a rank of
// nccl/xgemv_nccl_bench.cu) share on the device: error checks, element conversions, the operand
// fill, the fp64 reference GEMV, the stream-read ceiling kernel, device buffers, the library
// calls, graph capture, and the session (device, stream, handles on it, timing events, the timed
// repetitions).
// Everything is TU-local (an anonymous namespace): each CUDA file compiles its own copy.
#pragma once

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>
#include <xgemv/xgemv.hpp>

#include "lib/case.hpp"
#include "lib/options.hpp"
#include "lib/random_values.hpp"
#include "lib/record.hpp"
#include "support/check_cuda.hpp"
#include "support/element_types.hpp"
#include "support/gemv_layout.hpp"
#include "system_info.hpp"

namespace xgemv::bench {
namespace {

using xgemv_test::check_cuda;
using xgemv_test::vector_offset;

template <class T>
inline constexpr bool kIs16Bit = std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;

// Scalar<T>, the type of alpha and beta: fp64 for fp64, fp32 for the others (cuBLAS's and
// xgemv's convention). to_double and from_double run on the device too.
template <class T>
using Scalar = xgemv_test::ScalarOf<T>;
using xgemv_test::from_double;
using xgemv_test::to_double;

// Calls f with a value of the element type of `dtype`.
template <class F>
decltype(auto) with_element_type(Dtype dtype, F&& f) {
  switch (dtype) {
    case Dtype::fp32:
      return f(float{});
    case Dtype::fp64:
      return f(double{});
    case Dtype::fp16:
      return f(__half{});
    case Dtype::bf16:
      return f(__nv_bfloat16{});
  }
  throw std::logic_error("unknown dtype");
}

template <class T>
__global__ void fill_random(T* data, int64_t count, uint64_t seed) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += stride)
    data[i] = from_double<T>(random_value(seed, i));  // a float: exact on the way through double
}

template <class T>
struct ReferenceArguments {
  bool transposed;
  int64_t m, n, lda, incx, incy;
  double alpha, beta;
  const T* a;
  const T* x;
  const T* y0;
  double* y_ref;           // logical order, unit stride, column after column (y_length apart)
  int64_t nrhs, ldx, ldy;  // vectors: column j of X at x + j*ldx, of Y at y0 + j*ldy
};

// Y_ref = alpha*op(A)*X + beta*Y0 in fp64, one warp per output element, in a fixed order: slow
// and obviously right. The warps of one output row are neighbours (the vectors vary fastest), so
// they read the same part of A.
template <class T>
__global__ void reference_gemv(ReferenceArguments<T> p) {
  const int64_t x_length = p.transposed ? p.m : p.n;
  const int64_t y_length = p.transposed ? p.n : p.m;
  const int64_t warp = (int64_t{blockIdx.x} * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (warp >= y_length * p.nrhs) return;  // whole warps leave together
  const int64_t out = warp / p.nrhs, vector = warp % p.nrhs;
  const T* x = p.x + vector * p.ldx;
  double sum = 0;
  for (int64_t k = lane; k < x_length; k += 32) {
    const int64_t row = p.transposed ? k : out;
    const int64_t column = p.transposed ? out : k;
    sum += to_double(p.a[row + column * p.lda]) * to_double(x[vector_offset(k, x_length, p.incx)]);
  }
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (lane != 0) return;
  double y = p.alpha * sum;
  if (p.beta != 0)
    y += p.beta * to_double(p.y0[vector * p.ldy + vector_offset(out, y_length, p.incy)]);
  p.y_ref[vector * y_length + out] = y;
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

struct DeviceMemory {
  void* pointer = nullptr;
  int64_t bytes = 0;

  DeviceMemory() = default;
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  ~DeviceMemory() { cudaFree(pointer); }  // a destructor cannot report; release() does

  void allocate(int64_t size, const char* what) {
    check_cuda(cudaMalloc(&pointer, static_cast<size_t>(size)), what);
    bytes = size;
  }
  void release(const char* what) {
    check_cuda(cudaFree(pointer), what);
    pointer = nullptr;
    bytes = 0;
  }
  template <class T>
  T* as() const {
    return static_cast<T*>(pointer);
  }
};

struct Handles {
  cudaStream_t stream = nullptr;
  xgemv_handle xgemv = nullptr;
  cublasHandle_t cublas = nullptr;
};

// One call's operands, A at a chosen copy: one GEMV (x, incx; y, incy), or with nrhs vectors
// column-major X (x, ldx) and Y (y, ldy). The one-vector calls take nrhs == 1.
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
  int64_t nrhs, ldx, ldy;
};

// --- the device libraries --------------------------------------------------------------------

std::string xgemv_status_text(xgemv_status status) {
  return status == XGEMV_STATUS_SUCCESS ? std::string() : xgemv_status_string(status);
}

template <class T>
std::string call_xgemv(const Handles& h, const Problem<T>& p) {
  return xgemv_status_text(xgemv::gemv(h.xgemv, p.op, p.m, p.n, &p.alpha, p.a, p.lda, p.x, p.incx,
                                       &p.beta, p.y, p.incy));
}

// The few-right-hand-side call, nrhs == 1 included.
template <class T>
std::string call_xgemv_nrhs(const Handles& h, const Problem<T>& p) {
  return xgemv_status_text(xgemv::gemv_nrhs(h.xgemv, p.op, p.m, p.n, &p.alpha, p.a, p.lda, p.x,
                                            p.ldx, &p.beta, p.y, p.ldy, p.nrhs));
}

// The cuBLAS entry points real clients call take int sizes.
std::string needs_int_sizes(const Case& c) {
  const int64_t largest =
      std::max({c.m, c.n, c.lda(), std::abs(c.incx), std::abs(c.incy), c.nrhs, c.ldx(), c.ldy()});
  return largest > INT_MAX ? "a size or increment exceeds int" : "";
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
    return cublas_status_text(cublasHSHgemvStridedBatched(h.cublas, op, m, n, &p.alpha, p.a, lda, 0,
                                                          p.x, incx, 0, &p.beta, p.y, incy, 0, 1));
  else
    return cublas_status_text(cublasTSTgemvStridedBatched(h.cublas, op, m, n, &p.alpha, p.a, lda, 0,
                                                          p.x, incx, 0, &p.beta, p.y, incy, 0, 1));
}

// The GEMMs take contiguous columns; --nrhs asks for unit increments, so only a run of one
// vector with --incx or --incy has them skip.
std::string gemmex_restriction(const Case& c) {
  if (c.incx != 1 || c.incy != 1) return "a one-column GEMM needs unit increments";
  return needs_int_sizes(c);
}

// Y = op(A) X as a GEMM with the problem's nrhs columns (one for a GEMV), CUBLAS_COMPUTE_32F:
// what PyTorch calls for a 16-bit x @ W.T with x of nrhs rows
// (tests/interface/torch_dropin_test.py sees it in the drop-in's log).
template <class T>
std::string call_cublas_gemmex(const Handles& h, const Problem<T>& p) {
  static_assert(kIs16Bit<T>);
  constexpr cudaDataType type = std::is_same_v<T, __half> ? CUDA_R_16F : CUDA_R_16BF;
  const bool transposed = p.op == 'T';
  const int rows = static_cast<int>(transposed ? p.n : p.m);
  const int depth = static_cast<int>(transposed ? p.m : p.n);
  return cublas_status_text(cublasGemmEx(
      h.cublas, transposed ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, rows, static_cast<int>(p.nrhs),
      depth, &p.alpha, p.a, type, static_cast<int>(p.lda), p.x, type, static_cast<int>(p.ldx),
      &p.beta, p.y, type, static_cast<int>(p.ldy), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

// Y = op(A) X with the problem's nrhs columns, fp32 or fp64.
template <class T>
std::string call_cublas_gemm(const Handles& h, const Problem<T>& p) {
  static_assert(!kIs16Bit<T>);
  const bool transposed = p.op == 'T';
  const int rows = static_cast<int>(transposed ? p.n : p.m);
  const int depth = static_cast<int>(transposed ? p.m : p.n);
  const int columns = static_cast<int>(p.nrhs), lda = static_cast<int>(p.lda);
  const int ldx = static_cast<int>(p.ldx), ldy = static_cast<int>(p.ldy);
  const cublasOperation_t op = transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  if constexpr (std::is_same_v<T, float>)
    return cublas_status_text(cublasSgemm_v2(h.cublas, op, CUBLAS_OP_N, rows, columns, depth,
                                             &p.alpha, p.a, lda, p.x, ldx, &p.beta, p.y, ldy));
  else
    return cublas_status_text(cublasDgemm_v2(h.cublas, op, CUBLAS_OP_N, rows, columns, depth,
                                             &p.alpha, p.a, lda, p.x, ldx, &p.beta, p.y, ldy));
}

std::string no_restriction(const Case&) { return ""; }

template <class T>
struct DeviceLibrary {
  std::string name;                         // the row's library: a --lib name, or xgemv-nrhs
  std::string function;                     // recorded with the results
  std::string (*restriction)(const Case&);  // why it cannot run a case; empty if it can
  std::string (*call)(const Handles&, const Problem<T>&);  // enqueues one call; error text
};

// The libraries for element type T, in the order they run; Options::runs_row says which of them
// a case of nrhs vectors gets.
template <class T>
std::vector<DeviceLibrary<T>> device_libraries() {
  // The entry points of each element type, in kAllDtypes order.
  const int type = std::is_same_v<T, float>    ? 0
                   : std::is_same_v<T, double> ? 1
                   : std::is_same_v<T, __half> ? 2
                                               : 3;
  const std::string xgemv[] = {"xgemv_sgemv", "xgemv_dgemv", "xgemv_hgemv", "xgemv_bf16gemv"};
  const std::string cublas[] = {"cublasSgemv_v2", "cublasDgemv_v2", "cublasHSHgemvStridedBatched",
                                "cublasTSTgemvStridedBatched"};
  std::vector<DeviceLibrary<T>> libraries = {
      {"xgemv", xgemv[type], no_restriction, call_xgemv<T>},
      {kXgemvNrhs, xgemv[type] + "_nrhs", no_restriction, call_xgemv_nrhs<T>},
      {"cublas", cublas[type], needs_int_sizes, call_cublas_gemv<T>},
  };
  if constexpr (kIs16Bit<T>)
    libraries.push_back({kCublasGemmEx, "cublasGemmEx", gemmex_restriction, call_cublas_gemmex<T>});
  else
    libraries.push_back({kCublasGemm, type == 0 ? "cublasSgemm_v2" : "cublasDgemm_v2",
                         gemmex_restriction, call_cublas_gemm<T>});
  return libraries;
}

// --- the session --------------------------------------------------------------------------------

void check_xgemv(xgemv_status status, const char* what) {
  if (status != XGEMV_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": " + xgemv_status_string(status));
}

void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": " + cublasGetStatusString(status));
}

// Why CUDA device `ordinal` cannot be used ("" when it can).
std::string device_unavailable(int ordinal) {
  int count = 0;
  if (const cudaError_t error = cudaGetDeviceCount(&count); error != cudaSuccess)
    return cudaGetErrorString(error);
  if (ordinal >= count)
    return "CUDA device " + std::to_string(ordinal) + " not found (" + std::to_string(count) +
           " visible)";
  return "";
}

int kernel_nodes(cudaGraph_t graph) {
  size_t count = 0;
  check_cuda(cudaGraphGetNodes(graph, nullptr, &count), "cudaGraphGetNodes");
  std::vector<cudaGraphNode_t> nodes(count);
  check_cuda(cudaGraphGetNodes(graph, nodes.data(), &count), "cudaGraphGetNodes");
  int kernels = 0;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type{};
    check_cuda(cudaGraphNodeGetType(node, &type), "cudaGraphNodeGetType");
    kernels += type == cudaGraphNodeTypeKernel;
  }
  return kernels;
}

// A captured graph, instantiated and uploaded, with its kernel nodes; or why there is none (a call
// refused during the capture, or the capture failed).
struct Graph {
  cudaGraphExec_t exec = nullptr;
  int kernels = 0;
  std::string error;

  Graph() = default;
  Graph(Graph&& other) noexcept { *this = std::move(other); }
  Graph& operator=(Graph&& other) noexcept {
    std::swap(exec, other.exec);
    kernels = other.kernels;
    error = std::move(other.error);
    return *this;
  }
  ~Graph() {
    if (exec) cudaGraphExecDestroy(exec);  // a destructor cannot report
  }
};

// The device, a non-blocking stream, xgemv's and cuBLAS's handles on it and a pair of timing
// events: the base of every bench.
class DeviceSession {
 protected:
  explicit DeviceSession(int ordinal) : ordinal_(ordinal) {
    check_cuda(cudaSetDevice(ordinal), "cudaSetDevice");
    check_cuda(cudaGetDeviceProperties(&properties_, ordinal), "cudaGetDeviceProperties");
    char bus_id[32] = {};
    check_cuda(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, ordinal), "cudaDeviceGetPCIBusId");
    nvml_ = std::make_unique<Nvml>(bus_id);
    check_cuda(cudaStreamCreateWithFlags(&handles_.stream, cudaStreamNonBlocking),
               "cudaStreamCreate");
    check_cuda(cudaEventCreate(&start_), "cudaEventCreate");
    check_cuda(cudaEventCreate(&stop_), "cudaEventCreate");
    check_xgemv(xgemv_create(&handles_.xgemv), "xgemv_create");
    check_xgemv(xgemv_set_stream(handles_.xgemv, handles_.stream), "xgemv_set_stream");
    check_cublas(cublasCreate(&handles_.cublas), "cublasCreate");
    check_cublas(cublasSetStream(handles_.cublas, handles_.stream), "cublasSetStream");
    // An explicit workspace: cuBLAS then never allocates inside a graph capture.
    cublas_workspace_.allocate(int64_t{32} << 20, "cuBLAS workspace");
    check_cublas(cublasSetWorkspace(handles_.cublas, cublas_workspace_.pointer,
                                    static_cast<size_t>(cublas_workspace_.bytes)),
                 "cublasSetWorkspace");
    sink_.allocate(sizeof(unsigned), "ceiling sink");
  }

  // A destructor cannot report: the work was checked when it was waited for.
  ~DeviceSession() {
    cudaStreamSynchronize(handles_.stream);
    cublasDestroy(handles_.cublas);
    xgemv_destroy(handles_.xgemv);
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
    cudaStreamDestroy(handles_.stream);
  }

  DeviceSession(const DeviceSession&) = delete;
  DeviceSession& operator=(const DeviceSession&) = delete;

  void describe_device(RunInfo& info) const {
    info.device = properties_.name;
    int sm_khz = 0, memory_khz = 0, driver = 0, runtime = 0;
    check_cuda(cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, ordinal_),
               "cudaDeviceGetAttribute");
    check_cuda(cudaDeviceGetAttribute(&memory_khz, cudaDevAttrMemoryClockRate, ordinal_),
               "cudaDeviceGetAttribute");
    info.sm_clock_max_mhz = nvml_->max_sm_clock_mhz() ? nvml_->max_sm_clock_mhz() : sm_khz / 1000;
    info.mem_clock_max_mhz =
        nvml_->max_memory_clock_mhz() ? nvml_->max_memory_clock_mhz() : memory_khz / 1000;
    check_cuda(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
    check_cuda(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
    const std::string driver_version = nvml_->driver_version();
    info.driver = (driver_version.empty() ? std::string() : driver_version + " ") + "(CUDA " +
                  std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10) + ")";
    info.cuda = std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10);
  }

  // Fills `count` elements with the bench's random values in [-1, 1) (never zeros).
  template <class T>
  void fill(T* data, int64_t count, uint64_t seed) {
    const int blocks = static_cast<int>(
        std::clamp<int64_t>((count + 255) / 256, 1, int64_t{properties_.multiProcessorCount} * 32));
    fill_random<T><<<blocks, 256, 0, handles_.stream>>>(data, count, seed);
    check_cuda(cudaGetLastError(), "fill_random");
  }

  // Enqueues the ceiling's read of `vectors` 16-byte words from `data`; the launch's error text.
  std::string enqueue_stream_read(const void* data, int64_t vectors) {
    constexpr int64_t kVectorsPerBlockStep = kStreamThreads * kStreamLoadsInFlight;
    const int blocks = static_cast<int>(
        std::clamp<int64_t>((vectors + kVectorsPerBlockStep - 1) / kVectorsPerBlockStep, 1,
                            int64_t{properties_.multiProcessorCount} * kStreamBlocksPerSm));
    stream_read<<<blocks, kStreamThreads, 0, handles_.stream>>>(static_cast<const uint4*>(data),
                                                                vectors, sink_.as<unsigned>());
    const cudaError_t error = cudaGetLastError();
    return error == cudaSuccess ? std::string() : std::string(cudaGetErrorString(error));
  }

  // Y_ref of one GEMV (every column), fp64, computed on the device into p.y_ref.
  template <class T>
  std::vector<double> reference(const ReferenceArguments<T>& p) {
    const int64_t outputs = (p.transposed ? p.n : p.m) * p.nrhs;
    if (outputs == 0) return {};
    reference_gemv<T>
        <<<static_cast<unsigned>((outputs * 32 + 255) / 256), 256, 0, handles_.stream>>>(p);
    check_cuda(cudaGetLastError(), "reference_gemv");
    return copy_to_host<double>(p.y_ref, outputs, "reference");
  }

  // `count` elements from the device once the stream's work is done (a fault in it surfaces here).
  template <class T>
  std::vector<T> copy_to_host(const void* data, int64_t count, const char* what) {
    std::vector<T> values(static_cast<size_t>(count));
    check_cuda(cudaMemcpyAsync(values.data(), data, values.size() * sizeof(T),
                               cudaMemcpyDeviceToHost, handles_.stream),
               "copy to host");
    check_cuda(cudaStreamSynchronize(handles_.stream), what);
    return values;
  }

  // Captures enqueue()'s launches on the stream into a graph.
  Graph capture(const std::function<std::string()>& enqueue) {
    Graph graph;
    check_cuda(cudaStreamBeginCapture(handles_.stream, cudaStreamCaptureModeThreadLocal),
               "cudaStreamBeginCapture");
    graph.error = enqueue();
    cudaGraph_t captured = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(handles_.stream, &captured);
    if (ended != cudaSuccess && graph.error.empty())
      graph.error = std::string("stream capture: ") + cudaGetErrorString(ended);
    if (graph.error.empty()) {
      graph.kernels = kernel_nodes(captured);
      if (const cudaError_t error = cudaGraphInstantiate(&graph.exec, captured, 0);
          error != cudaSuccess) {
        graph.exec = nullptr;
        graph.error = std::string("cudaGraphInstantiate: ") + cudaGetErrorString(error);
      }
    }
    if (captured) check_cuda(cudaGraphDestroy(captured), "cudaGraphDestroy");
    if (!graph.error.empty()) {
      static_cast<void>(cudaGetLastError());  // the failure is the capture's, not a later call's
      return graph;
    }
    check_cuda(cudaGraphUpload(graph.exec, handles_.stream), "cudaGraphUpload");
    return graph;
  }

  // Repetitions on the stream: prepare(i) before each, untimed, then body() between two events;
  // the microseconds per call (`calls` per repetition) of those after `warmup` go into `us`.
  // Stops at the first error either returns.
  std::string time_repetitions(int warmup, int repetitions, int calls,
                               const std::function<std::string(int)>& prepare,
                               const std::function<std::string()>& body, std::vector<double>& us) {
    for (int repetition = 0; repetition < warmup + repetitions; ++repetition) {
      if (std::string error = prepare(repetition); !error.empty()) return error;
      check_cuda(cudaEventRecord(start_, handles_.stream), "cudaEventRecord");
      if (std::string error = body(); !error.empty()) return error;
      check_cuda(cudaEventRecord(stop_, handles_.stream), "cudaEventRecord");
      check_cuda(cudaEventSynchronize(stop_), "a timed repetition");
      float ms = 0;
      check_cuda(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
      if (repetition >= warmup) us.push_back(1e3 * ms / calls);
    }
    return "";
  }

  // Replays the graph on the stream: a body for time_repetitions().
  std::string launch(const Graph& graph) {
    check_cuda(cudaGraphLaunch(graph.exec, handles_.stream), "cudaGraphLaunch");
    return "";
  }

  int ordinal_;
  cudaDeviceProp properties_{};
  std::unique_ptr<Nvml> nvml_;
  Handles handles_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  DeviceMemory cublas_workspace_, sink_;
};

}  // namespace
}  // namespace xgemv::bench
