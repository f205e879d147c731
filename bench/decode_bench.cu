#include "decode_bench.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>

#include "device_parts.cuh"
#include "lib/check.hpp"
#include "lib/measure.hpp"

namespace xgemv::bench {
namespace {

// A step captured as one graph, instantiated and uploaded; or why it could not be.
struct StepGraph {
  cudaGraphExec_t exec = nullptr;
  int kernels = 0;    // kernel nodes
  std::string error;  // a call refused during capture, or the capture failed

  StepGraph() = default;
  StepGraph(const StepGraph&) = delete;
  StepGraph& operator=(const StepGraph&) = delete;
  // Unwinding after an error only: destroy() reports.
  ~StepGraph() {
    if (exec) cudaGraphExecDestroy(exec);
  }
  void destroy() {
    check_cuda(cudaGraphExecDestroy(exec), "cudaGraphExecDestroy");
    exec = nullptr;
  }
};

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

template <class T>
constexpr Dtype dtype_of() {
  return std::is_same_v<T, __half> ? Dtype::fp16 : Dtype::bf16;
}

class CudaDecodeBench final : public DecodeBench, private DeviceSession {
 public:
  explicit CudaDecodeBench(int ordinal) : DeviceSession(ordinal) {}

  void describe(RunInfo& info) const override { describe_device(info); }

  int sm_clock_mhz() const override { return nvml_->sm_clock_mhz(); }

  void reserve(const DecodeStep& step) override {
    const struct {
      DeviceMemory* buffer;
      int64_t bytes;
      const char* what;
    } buffers[] = {
        {&weights_, step.weight_buffer_bytes, "the step's weights"},
        {&x_, step.x_buffer_bytes, "the step's x vectors"},
        {&y_, step.y_buffer_bytes, "the step's y vectors"},
        {&y_ref_, step.largest_output() * step.nrhs * int64_t{sizeof(double)}, "reference y"},
    };
    // The previous step's buffers of another size go first: two steps need not fit together (the
    // steps of one model at several nrhs keep its weights).
    for (const auto& b : buffers)
      if (b.buffer->pointer && b.buffer->bytes != b.bytes)
        b.buffer->release("freeing the previous step's buffers");
    for (const auto& b : buffers)
      if (!b.buffer->pointer) b.buffer->allocate(b.bytes, b.what);
  }

  std::vector<DecodeRow> run(const DecodeStep& step, Dtype dtype,
                             const Options& options) override {
    if (weights_.bytes != step.weight_buffer_bytes || y_.bytes != step.y_buffer_bytes)
      throw std::logic_error("run() of a step that reserve() did not allocate");
    switch (dtype) {
      case Dtype::fp16: return run_typed<__half>(step, options);
      case Dtype::bf16: return run_typed<__nv_bfloat16>(step, options);
      case Dtype::fp32:
      case Dtype::fp64: break;
    }
    throw std::invalid_argument("the decode suite runs bf16 and fp16");
  }

 private:
  template <class T>
  std::vector<DecodeRow> run_typed(const DecodeStep& step, const Options& options) {
    constexpr Dtype dtype = dtype_of<T>();
    fill(weights_.as<T>(), weights_.bytes / int64_t{sizeof(T)}, kSeedA);
    fill(x_.as<T>(), x_.bytes / int64_t{sizeof(T)}, kSeedX);
    const std::vector<std::vector<double>> references = reference<T>(step);
    const DecodeTimingPlan plan = plan_decode_timing(options.quick);

    std::vector<DecodeRow> rows;
    rows.push_back(measure_read(step, dtype, kOneRead, plan, [&] {
      return enqueue_stream_read(weights_.pointer, weights_.bytes / 16);
    }));
    rows.push_back(measure_read(step, dtype, kPerGemvReads, plan, [&] {
      for (const DecodeGemv& gemv : step.gemvs)
        if (std::string error = enqueue_stream_read(weights_.as<char>() + gemv.weight_offset,
                                                    (gemv.weight_bytes() + 15) / 16);
            !error.empty())
          return error;
      return std::string();
    }));
    for (const DeviceLibrary<T>& library : device_libraries<T>()) {
      if (!options.runs_row(library.name, step.nrhs)) continue;
      if (library.name == "xgemv") {
        rows.push_back(measure_library(step, library, "xgemv", false, references, plan));
        rows.push_back(measure_library(step, library, kXgemvEarlyStart, true, references, plan));
      } else {
        rows.push_back(measure_library(step, library, library.name, false, references, plan));
      }
    }
    return rows;
  }

  template <class T>
  Problem<T> gemv_problem(const DecodeGemv& gemv) const {
    return {'T',
            gemv.in,
            gemv.out,
            gemv.in,
            1.0f,
            reinterpret_cast<const T*>(weights_.as<char>() + gemv.weight_offset),
            reinterpret_cast<const T*>(x_.as<char>() + gemv.x_offset),
            1,
            0.0f,
            reinterpret_cast<T*>(y_.as<char>() + gemv.y_offset),
            1,
            gemv.nrhs,
            gemv.in,
            gemv.out};
  }

  // Y_ref of every GEMV of the step, fp64, in step order (each column after column).
  template <class T>
  std::vector<std::vector<double>> reference(const DecodeStep& step) {
    std::vector<std::vector<double>> references;
    for (const DecodeGemv& gemv : step.gemvs) {
      const Problem<T> p = gemv_problem<T>(gemv);
      const ReferenceArguments<T> arguments{/*transposed=*/true, p.m, p.n, p.lda, p.incx, p.incy,
                                            p.alpha, p.beta, p.a, p.x, p.y, y_ref_.as<double>(),
                                            p.nrhs, p.ldx, p.ldy};
      const int64_t threads = gemv.out * gemv.nrhs * 32;
      reference_gemv<T><<<static_cast<unsigned>((threads + 255) / 256), 256, 0,
                          handles_.stream>>>(arguments);
      check_cuda(cudaGetLastError(), "reference_gemv");
      std::vector<double>& y_ref =
          references.emplace_back(static_cast<size_t>(gemv.out * gemv.nrhs));
      check_cuda(cudaMemcpyAsync(y_ref.data(), y_ref_.pointer, y_ref.size() * sizeof(double),
                                 cudaMemcpyDeviceToHost, handles_.stream),
                 "copy reference");
      check_cuda(cudaStreamSynchronize(handles_.stream), "reference");
    }
    return references;
  }

  // Captures enqueue() (the step's launches; returns an error text) into `graph`.
  void capture(StepGraph& graph, const std::function<std::string()>& enqueue) {
    check_cuda(cudaStreamBeginCapture(handles_.stream, cudaStreamCaptureModeThreadLocal),
               "cudaStreamBeginCapture");
    graph.error = enqueue();
    cudaGraph_t captured = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(handles_.stream, &captured);
    if (ended != cudaSuccess && graph.error.empty())
      graph.error = std::string("stream capture: ") + cudaGetErrorString(ended);
    if (!graph.error.empty()) {
      if (captured) check_cuda(cudaGraphDestroy(captured), "cudaGraphDestroy");
      // The failure is the row's; later checks must not see it again.
      static_cast<void>(cudaGetLastError());
      return;
    }
    graph.kernels = kernel_nodes(captured);
    const cudaError_t instantiated = cudaGraphInstantiate(&graph.exec, captured, 0);
    check_cuda(cudaGraphDestroy(captured), "cudaGraphDestroy");
    if (instantiated != cudaSuccess) {
      graph.exec = nullptr;
      graph.error = std::string("cudaGraphInstantiate: ") + cudaGetErrorString(instantiated);
      static_cast<void>(cudaGetLastError());
      return;
    }
    check_cuda(cudaGraphUpload(graph.exec, handles_.stream), "cudaGraphUpload");
  }

  // Median of timed replays after warm-up ones, each between two events.
  void time_replays(DecodeRow& row, const StepGraph& graph, const DecodeTimingPlan& plan) {
    std::vector<double> ms;
    for (int replay = 0; replay < plan.warmup_replays + plan.replays; ++replay) {
      check_cuda(cudaEventRecord(start_, handles_.stream), "cudaEventRecord");
      check_cuda(cudaGraphLaunch(graph.exec, handles_.stream), "cudaGraphLaunch");
      check_cuda(cudaEventRecord(stop_, handles_.stream), "cudaEventRecord");
      check_cuda(cudaEventSynchronize(stop_), "a timed replay");
      float elapsed = 0;
      check_cuda(cudaEventElapsedTime(&elapsed, start_, stop_), "cudaEventElapsedTime");
      if (replay >= plan.warmup_replays) ms.push_back(elapsed);
    }
    row.replays = plan.replays;
    row.ms = median(ms);
  }

  // A read row: the reads write nothing to check (the weights they read are random).
  DecodeRow measure_read(const DecodeStep& step, Dtype dtype, const std::string& name,
                         const DecodeTimingPlan& plan,
                         const std::function<std::string()>& enqueue) {
    DecodeRow row(step, dtype, name, "stream_read");
    StepGraph graph;
    capture(graph, enqueue);
    row.kernels = graph.kernels;
    if (!graph.error.empty()) {
      row.status = "error: " + graph.error;
      return row;
    }
    time_replays(row, graph, plan);
    graph.destroy();
    return row;
  }

  // Every GEMV's Y after one replay, against its reference; Y is NaN before the replay, so a
  // GEMV that writes nothing fails.
  template <class T>
  void check_replay(DecodeRow& row, const DecodeStep& step, const StepGraph& graph,
                    const std::vector<std::vector<double>>& references) {
    check_cuda(cudaMemsetAsync(y_.pointer, 0xFF, static_cast<size_t>(y_.bytes), handles_.stream),
               "poison y");
    check_cuda(cudaGraphLaunch(graph.exec, handles_.stream), "cudaGraphLaunch");
    std::vector<T> y(static_cast<size_t>(y_.bytes) / sizeof(T));
    check_cuda(cudaMemcpyAsync(y.data(), y_.pointer, static_cast<size_t>(y_.bytes),
                               cudaMemcpyDeviceToHost, handles_.stream),
               "copy y");
    check_cuda(cudaStreamSynchronize(handles_.stream), "the checked replay");
    for (size_t i = 0; i < step.gemvs.size(); ++i) {
      const DecodeGemv& gemv = step.gemvs[i];
      const T* first = y.data() + gemv.y_offset / int64_t{sizeof(T)};
      std::vector<double> values(static_cast<size_t>(gemv.out * gemv.nrhs));
      std::transform(first, first + values.size(), values.begin(), to_double<T>);
      add_gemv_check(row, gemv.tag,
                     compare_to_reference(decode_gemv_case(step, gemv, dtype_of<T>()), values,
                                          references[i]));
    }
  }

  template <class T>
  DecodeRow measure_library(const DecodeStep& step, const DeviceLibrary<T>& library,
                            const std::string& name, bool early_start,
                            const std::vector<std::vector<double>>& references,
                            const DecodeTimingPlan& plan) {
    DecodeRow row(step, dtype_of<T>(), name, library.function);
    for (const DecodeGemv& gemv : step.gemvs)
      if (const std::string why = library.restriction(decode_gemv_case(step, gemv, row.dtype));
          !why.empty()) {
        row.status = "skipped: " + why;
        return row;
      }
    const bool is_xgemv = library.name.rfind("xgemv", 0) == 0;
    std::vector<std::string> variants;  // xgemv's kernel variants, in order of first use
    const auto enqueue_step = [&]() -> std::string {
      for (const DecodeGemv& gemv : step.gemvs) {
        if (const std::string error = library.call(handles_, gemv_problem<T>(gemv));
            !error.empty())
          return gemv.tag + ": " + error;
        if (!is_xgemv) continue;
        if (const char* variant = xgemv_get_last_kernel_variant(handles_.xgemv);
            variant && std::find(variants.begin(), variants.end(), variant) == variants.end())
          variants.emplace_back(variant);
      }
      return "";
    };
    StepGraph graph;
    if (is_xgemv) {
      // The flag is read as each call launches, so it is set for the capture and restored after.
      int previous = 0;
      check_xgemv(xgemv_get_early_start(handles_.xgemv, &previous), "xgemv_get_early_start");
      check_xgemv(xgemv_set_early_start(handles_.xgemv, early_start ? 1 : 0),
                  "xgemv_set_early_start");
      capture(graph, enqueue_step);
      check_xgemv(xgemv_set_early_start(handles_.xgemv, previous), "xgemv_set_early_start");
      for (size_t i = 0; i < variants.size(); ++i)
        row.function += (i == 0 ? "/" : "+") + variants[i];
    } else {
      capture(graph, enqueue_step);
    }
    row.kernels = graph.kernels;
    if (!graph.error.empty()) {
      row.status = "error: " + graph.error;
      return row;
    }
    check_replay<T>(row, step, graph, references);
    if (row.status == "ok") time_replays(row, graph, plan);
    graph.destroy();
    return row;
  }

  DeviceMemory weights_, x_, y_, y_ref_;
};

}  // namespace

std::unique_ptr<DecodeBench> DecodeBench::open(int ordinal, std::string* why_not) {
  *why_not = device_unavailable(ordinal);
  return why_not->empty() ? std::make_unique<CudaDecodeBench>(ordinal) : nullptr;
}

}  // namespace xgemv::bench
