#include "device_bench.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>

#include "device_parts.cuh"
#include "lib/check.hpp"
#include "lib/measure.hpp"

namespace xgemv::bench {
namespace {

// Bytes the ceiling reads for a case: the case's bytes, rounded up to whole 16-byte words.
int64_t ceiling_bytes(const Case& c) { return (c.bytes() + 15) / 16 * 16; }

// --- the bench -------------------------------------------------------------------------------

struct Timing {
  double us = 0;  // median per call
  TimingPlan plan;
  int64_t copies = 0;  // distinct copies of A the calls cycle through
  std::string error;
};

class CudaDeviceBench final : public DeviceBench, private DeviceSession {
 public:
  explicit CudaDeviceBench(int ordinal) : DeviceSession(ordinal) {}

  void describe(RunInfo& info) const override { describe_device(info); }

  int sm_clock_mhz() const override { return nvml_->sm_clock_mhz(); }

  void reserve(const std::vector<Case>& cases) override {
    int64_t pool = 0, x = 0, y = 0, y_elements = 1;
    for (const Case& c : cases) {
      const int64_t size = element_size(c.dtype);
      const int64_t x_bytes = c.x_elements() * size;
      const int64_t y_bytes = c.y_elements() * size;
      // Room for the ceiling's read from the last copy, which runs past A by X + Y.
      pool = std::max(pool, rotation_layout(c.a_bytes()).pool_bytes() + x_bytes + y_bytes + 256);
      x = std::max(x, x_bytes);
      y = std::max(y, y_bytes);
      y_elements = std::max(y_elements, c.y_length() * c.nrhs);
    }
    pool_.allocate(pool, "the rotation pool of A copies");
    x_.allocate(x, "x");
    y_.allocate(y, "y");
    y_initial_.allocate(y, "initial y");
    y_ref_.allocate(y_elements * int64_t{sizeof(double)}, "reference y");
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
  DeviceCaseResult run_typed(const Case& c, const Options& options) {
    const RotationLayout layout = rotation_layout(c.a_bytes());
    fill(pool_.as<T>(), layout.pool_bytes() / int64_t{sizeof(T)}, kSeedA);
    fill(x_.as<T>(), c.x_elements(), kSeedX);
    fill(y_initial_.as<T>(), c.y_elements(), kSeedY);

    DeviceCaseResult result;
    result.reference = reference<T>(c);
    result.rows.push_back(measure_ceiling(c, layout, options));

    const int64_t copy_stride = layout.copy_stride_bytes / int64_t{sizeof(T)};
    using S = Scalar<T>;
    Problem<T> problem{c.op, c.m, c.n, c.lda(), static_cast<S>(c.alpha), pool_.as<T>(),
                       x_.as<T>(), c.incx, static_cast<S>(c.beta), y_.as<T>(), c.incy, c.nrhs,
                       c.ldx(), c.ldy()};
    for (const DeviceLibrary<T>& library : device_libraries<T>()) {
      if (!options.runs_row(library.name, c.nrhs)) continue;
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
      if (library.name.rfind("xgemv", 0) == 0)
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
                                          y_initial_.as<T>(), y_ref_.as<double>(), c.nrhs,
                                          c.ldx(), c.ldy()};
    const int64_t threads = c.y_length() * c.nrhs * 32;
    reference_gemv<T><<<static_cast<unsigned>((threads + 255) / 256), 256, 0, handles_.stream>>>(
        arguments);
    check_cuda(cudaGetLastError(), "reference_gemv");
    std::vector<double> y_ref(static_cast<size_t>(c.y_length() * c.nrhs));
    check_cuda(cudaMemcpyAsync(y_ref.data(), y_ref_.pointer, y_ref.size() * sizeof(double),
                               cudaMemcpyDeviceToHost, handles_.stream),
               "copy reference");
    check_cuda(cudaStreamSynchronize(handles_.stream), "reference");
    return y_ref;
  }

  // Y before a checked call: NaN everywhere when beta == 0 (all-ones bytes are NaN in every
  // type here), else the initial random values.
  template <class T>
  void reset_y(const Case& c) {
    const size_t bytes = static_cast<size_t>(c.y_elements()) * sizeof(T);
    check_cuda(c.beta == 0 ? cudaMemsetAsync(y_.pointer, 0xFF, bytes, handles_.stream)
                           : cudaMemcpyAsync(y_.pointer, y_initial_.pointer, bytes,
                                             cudaMemcpyDeviceToDevice, handles_.stream),
               "reset y");
  }

  // Y after a call, logical order, column after column (synchronises: a fault in the call
  // surfaces here and ends the run).
  template <class T>
  std::vector<double> read_y(const Case& c) {
    std::vector<T> stored(static_cast<size_t>(c.y_elements()));
    check_cuda(cudaMemcpyAsync(stored.data(), y_.pointer, stored.size() * sizeof(T),
                               cudaMemcpyDeviceToHost, handles_.stream),
               "copy y");
    check_cuda(cudaStreamSynchronize(handles_.stream), "the checked call");
    std::vector<double> values(stored.size());
    std::transform(stored.begin(), stored.end(), values.begin(), to_double<T>);
    std::vector<double> logical;
    logical.reserve(static_cast<size_t>(c.y_length() * c.nrhs));
    for (int64_t column = 0; column < c.nrhs; ++column) {
      const std::vector<double> y =
          gather_vector(values.data() + column * c.ldy(), c.y_length(), c.incy);
      logical.insert(logical.end(), y.begin(), y.end());
    }
    return logical;
  }

  Measurement measure_ceiling(const Case& c, const RotationLayout& layout,
                              const Options& options) {
    Measurement row(c, kCeiling, "stream_read", options.graph ? "graph" : "stream");
    const int64_t vectors = ceiling_bytes(c) / 16;
    const Timing timing = time_calls(c.bytes(), layout.copies, options, [&](int64_t copy) {
      return enqueue_stream_read(pool_.as<char>() + copy * layout.copy_stride_bytes, vectors);
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

  DeviceMemory pool_, x_, y_, y_initial_, y_ref_;
};

}  // namespace

std::unique_ptr<DeviceBench> DeviceBench::open(int ordinal, std::string* why_not) {
  *why_not = device_unavailable(ordinal);
  return why_not->empty() ? std::make_unique<CudaDeviceBench>(ordinal) : nullptr;
}

}  // namespace xgemv::bench
