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

std::string no_error(int) { return ""; }

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

  std::vector<Record> run(const Case& c, const Options& options,
                          std::vector<double>& reference) override {
    return with_element_type(c.dtype, [&](auto value) {
      return run_case<decltype(value)>(c, options, reference);
    });
  }

  void reserve(const DecodeStep& step) override {
    const struct {
      DeviceMemory* buffer;
      int64_t bytes;
      const char* what;
    } buffers[] = {
        {&pool_, step.weight_buffer_bytes, "the step's weights"},
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

  std::vector<Record> run(const DecodeStep& step, Dtype dtype, const Options& options) override {
    if (pool_.bytes != step.weight_buffer_bytes || y_.bytes != step.y_buffer_bytes)
      throw std::logic_error("run() of a step that reserve() did not allocate");
    if (dtype == Dtype::fp16) return run_step<__half>(step, options);
    if (dtype == Dtype::bf16) return run_step<__nv_bfloat16>(step, options);
    throw std::invalid_argument("the decode suite runs bf16 and fp16");
  }

 private:
  // --- shape cases -----------------------------------------------------------------------------

  template <class T>
  std::vector<Record> run_case(const Case& c, const Options& options,
                               std::vector<double>& y_ref) {
    const RotationLayout layout = rotation_layout(c.a_bytes());
    fill(pool_.as<T>(), layout.pool_bytes() / int64_t{sizeof(T)}, kSeedA);
    fill(x_.as<T>(), c.x_elements(), kSeedX);
    fill(y_initial_.as<T>(), c.y_elements(), kSeedY);
    y_ref = reference<T>({c.transposed(), c.m, c.n, c.lda(), c.incx, c.incy, c.alpha, c.beta,
                          pool_.as<T>(), x_.as<T>(), y_initial_.as<T>(), y_ref_.as<double>(),
                          c.nrhs, c.ldx(), c.ldy()});

    const std::string mode = options.graph ? "graph" : "stream";
    std::vector<Record> records = {case_record(c, kCeiling, "stream_read", mode)};
    time_calls(records.back(), c, layout, options, [&](int64_t copy) {
      return enqueue_stream_read(pool_.as<char>() + copy * layout.copy_stride_bytes,
                                 ceiling_bytes(c) / 16);
    });

    const int64_t copy_stride = layout.copy_stride_bytes / int64_t{sizeof(T)};
    using S = Scalar<T>;
    Problem<T> problem{c.op, c.m, c.n, c.lda(), static_cast<S>(c.alpha), pool_.as<T>(),
                       x_.as<T>(), c.incx, static_cast<S>(c.beta), y_.as<T>(), c.incy, c.nrhs,
                       c.ldx(), c.ldy()};
    for (const DeviceLibrary<T>& library : device_libraries<T>()) {
      if (!options.runs_row(library.name, c.nrhs)) continue;
      Record& r = records.emplace_back(case_record(c, library.name, library.function, mode));
      if (const std::string why = library.restriction(c); !why.empty()) {
        r.status = "skipped: " + why;
        continue;
      }
      problem.a = pool_.as<T>();
      reset_y<T>(c);
      if (const std::string error = library.call(handles_, problem); !error.empty()) {
        r.status = "error: " + error;
        continue;
      }
      // Which kernel variant served the case: "xgemv_hgemv/t_rowblock_32".
      if (library.name.rfind("xgemv", 0) == 0)
        if (const char* variant = xgemv_get_last_kernel_variant(handles_.xgemv))
          r.function += std::string("/") + variant;
      r.add_check("", compare_to_reference(c, read_y<T>(c), y_ref));
      if (r.failed()) continue;
      time_calls(r, c, layout, options, [&](int64_t copy) {
        problem.a = pool_.as<T>() + copy * copy_stride;
        return library.call(handles_, problem);
      });
    }
    return records;
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

  // Y after a call, logical order, column after column (a fault in the call surfaces here and
  // ends the run).
  template <class T>
  std::vector<double> read_y(const Case& c) {
    const std::vector<T> stored = copy_to_host<T>(y_.pointer, c.y_elements(), "the checked call");
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

  // Medians of batches of back-to-back calls after warm-up, each call on the next copy of A;
  // in graph mode each batch is one replay of a captured batch.
  void time_calls(Record& r, const Case& c, const RotationLayout& layout, const Options& options,
                  const std::function<std::string(int64_t)>& enqueue) {
    TimingPlan plan = plan_timing(c.bytes(), options.quick);
    if (options.graph) plan.calls_per_batch = static_cast<int>(graph_calls(plan, layout.copies));
    // A graph replays the same calls, so it cycles through only as many copies as it calls.
    r.copies = options.graph ? std::min<int64_t>(layout.copies, plan.calls_per_batch)
                             : layout.copies;
    r.calls_per_batch = plan.calls_per_batch;
    int64_t next_copy = 0;
    const auto enqueue_batch = [&]() -> std::string {
      for (int call = 0; call < plan.calls_per_batch; ++call) {
        if (std::string error = enqueue(next_copy); !error.empty()) return error;
        next_copy = (next_copy + 1) % layout.copies;
      }
      return "";
    };
    const Graph graph = options.graph ? capture(enqueue_batch) : Graph();
    std::vector<double> us;
    std::string error = graph.error;
    if (error.empty())
      error = time_repetitions(plan.warmup_batches, plan.batches, plan.calls_per_batch, no_error,
                               [&] { return graph.exec ? launch(graph) : enqueue_batch(); }, us);
    if (error.empty()) r.set_times(us);
    else r.status = "error: " + error;
  }

  // --- decode steps ----------------------------------------------------------------------------

  template <class T>
  std::vector<Record> run_step(const DecodeStep& step, const Options& options) {
    constexpr Dtype dtype = std::is_same_v<T, __half> ? Dtype::fp16 : Dtype::bf16;
    fill(pool_.as<T>(), pool_.bytes / int64_t{sizeof(T)}, kSeedA);
    fill(x_.as<T>(), x_.bytes / int64_t{sizeof(T)}, kSeedX);
    std::vector<std::vector<double>> references;  // of every GEMV, in step order
    for (const DecodeGemv& gemv : step.gemvs) {
      const Problem<T> p = gemv_problem<T>(gemv);
      references.push_back(reference<T>({true, p.m, p.n, p.lda, p.incx, p.incy, p.alpha, p.beta,
                                         p.a, p.x, p.y, y_ref_.as<double>(), p.nrhs, p.ldx,
                                         p.ldy}));
    }
    const DecodeTimingPlan plan = plan_decode_timing(options.quick);

    // The reads write nothing to check (the weights they read are random).
    std::vector<Record> records;
    const auto read = [&](const char* name, const std::function<std::string()>& enqueue) {
      time_graph(records.emplace_back(step_record(step, dtype, name, "stream_read")),
                 capture(enqueue), plan);
    };
    read(kOneRead, [&] { return enqueue_stream_read(pool_.pointer, pool_.bytes / 16); });
    read(kPerGemvReads, [&] {
      for (const DecodeGemv& gemv : step.gemvs)
        if (std::string error = enqueue_stream_read(pool_.as<char>() + gemv.weight_offset,
                                                    (gemv.weight_bytes() + 15) / 16);
            !error.empty())
          return error;
      return std::string();
    });
    for (const DeviceLibrary<T>& library : device_libraries<T>()) {
      if (!options.runs_row(library.name, step.nrhs)) continue;
      records.push_back(measure_library(step, library, library.name, false, references, plan));
      if (library.name == "xgemv")
        records.push_back(measure_library(step, library, kXgemvEarlyStart, true, references, plan));
    }
    return records;
  }

  template <class T>
  Problem<T> gemv_problem(const DecodeGemv& gemv) const {
    return {'T',
            gemv.in,
            gemv.out,
            gemv.in,
            1.0f,
            reinterpret_cast<const T*>(pool_.as<char>() + gemv.weight_offset),
            reinterpret_cast<const T*>(x_.as<char>() + gemv.x_offset),
            1,
            0.0f,
            reinterpret_cast<T*>(y_.as<char>() + gemv.y_offset),
            1,
            gemv.nrhs,
            gemv.in,
            gemv.out};
  }

  // Median of timed replays after warm-up ones, each between two events.
  void time_graph(Record& r, const Graph& graph, const DecodeTimingPlan& plan) {
    r.kernels = graph.kernels;
    if (!graph.error.empty()) {
      r.status = "error: " + graph.error;
      return;
    }
    std::vector<double> us;
    time_repetitions(plan.warmup, plan.replays, 1, no_error, [&] { return launch(graph); }, us);
    r.set_times(us);
  }

  template <class T>
  Record measure_library(const DecodeStep& step, const DeviceLibrary<T>& library,
                         const std::string& name, bool early_start,
                         const std::vector<std::vector<double>>& references,
                         const DecodeTimingPlan& plan) {
    Record r = step_record(step, std::is_same_v<T, __half> ? Dtype::fp16 : Dtype::bf16, name,
                           library.function);
    for (const DecodeGemv& gemv : step.gemvs)
      if (const std::string why = library.restriction(decode_gemv_case(step, gemv, r.dtype));
          !why.empty()) {
        r.status = "skipped: " + why;
        return r;
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
    Graph graph;
    if (is_xgemv) {
      // The flag is read as each call launches, so it is set for the capture and restored after.
      int previous = 0;
      check_xgemv(xgemv_get_early_start(handles_.xgemv, &previous), "xgemv_get_early_start");
      check_xgemv(xgemv_set_early_start(handles_.xgemv, early_start ? 1 : 0),
                  "xgemv_set_early_start");
      graph = capture(enqueue_step);
      check_xgemv(xgemv_set_early_start(handles_.xgemv, previous), "xgemv_set_early_start");
      for (size_t i = 0; i < variants.size(); ++i)
        r.function += (i == 0 ? "/" : "+") + variants[i];
    } else {
      graph = capture(enqueue_step);
    }
    r.kernels = graph.kernels;
    if (!graph.error.empty()) {
      r.status = "error: " + graph.error;
      return r;
    }
    check_replay<T>(r, step, graph, references);
    if (r.status == "ok") time_graph(r, graph, plan);
    return r;
  }

  // Every GEMV's Y after one replay, against its reference; Y is NaN before the replay, so a
  // GEMV that writes nothing fails.
  template <class T>
  void check_replay(Record& r, const DecodeStep& step, const Graph& graph,
                    const std::vector<std::vector<double>>& references) {
    check_cuda(cudaMemsetAsync(y_.pointer, 0xFF, static_cast<size_t>(y_.bytes), handles_.stream),
               "poison y");
    launch(graph);
    const std::vector<T> y =
        copy_to_host<T>(y_.pointer, y_.bytes / int64_t{sizeof(T)}, "the checked replay");
    for (size_t i = 0; i < step.gemvs.size(); ++i) {
      const DecodeGemv& gemv = step.gemvs[i];
      const T* first = y.data() + gemv.y_offset / int64_t{sizeof(T)};
      std::vector<double> values(static_cast<size_t>(gemv.out * gemv.nrhs));
      std::transform(first, first + values.size(), values.begin(), to_double<T>);
      r.add_check(gemv.tag, compare_to_reference(decode_gemv_case(step, gemv, r.dtype), values,
                                                 references[i]));
    }
  }

  // Shape cases: the rotated copies of A, X, Y, the initial Y; decode steps: the step's weights,
  // X and Y vectors. Both: the reference's Y.
  DeviceMemory pool_, x_, y_, y_initial_, y_ref_;
};

}  // namespace

std::unique_ptr<DeviceBench> DeviceBench::open(int ordinal, std::string* why_not) {
  *why_not = device_unavailable(ordinal);
  return why_not->empty() ? std::make_unique<CudaDeviceBench>(ordinal) : nullptr;
}

}  // namespace xgemv::bench
