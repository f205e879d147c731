// xgemv-bench: xgemv beside cuBLAS (same buffers, same run) and OpenBLAS (host copies), each
// shape with its stream-read ceiling; or whole decode steps as CUDA graphs (--suite decode); or
// the routed GEMVs of mixture-of-experts layers (--suite moe). See bench/README.md.
#include <algorithm>
#include <functional>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <xgemv/xgemv_moe.h>
#include <xgemv/xgemv_quant.h>

#include "device_parts.cuh"
#include "host_bench.hpp"
#include "lib/check.hpp"
#include "lib/decode.hpp"
#include "lib/measure.hpp"
#include "lib/moe.hpp"
#include "lib/options.hpp"
#include "lib/report.hpp"
#include "lib/suites.hpp"
#include "lib/weights.hpp"
#include "system_info.hpp"

namespace xgemv::bench {
namespace {

// Bytes the ceiling reads for a case: the case's bytes, rounded up to whole 16-byte words.
int64_t ceiling_bytes(const Case& c) { return (c.bytes() + 15) / 16 * 16; }

std::string no_error(int) { return ""; }

// One xgemv_qweight per rotated copy of a quantized storage, destroyed with the holder.
struct QuantizedCopies {
  std::vector<xgemv_qweight> weights;
  QuantizedCopies() = default;
  QuantizedCopies(const QuantizedCopies&) = delete;
  QuantizedCopies& operator=(const QuantizedCopies&) = delete;
  ~QuantizedCopies() {
    for (xgemv_qweight w : weights) xgemv_qweight_destroy(w);
  }
  void add(const xgemv_qweight_info& info, void* storage) {
    xgemv_qweight w = nullptr;
    check_xgemv(xgemv_qweight_create(&w, &info, storage), "xgemv_qweight_create");
    weights.push_back(w);
  }
};

// One projection's experts on the device: their storage (MoeExperts::copies() copies) and an
// xgemv_experts over each copy.
struct DeviceExperts {
  MoeExperts plan;
  DeviceMemory storage;
  std::vector<xgemv_experts> copies;
  ~DeviceExperts() {
    for (xgemv_experts experts : copies) xgemv_experts_destroy(experts);
  }
  const char* copy(int64_t index) const {
    return storage.as<const char>() + index * plan.copy_stride_bytes();
  }
};

// Allocates `bytes` unless the GPU's memory cannot hold them: then false, the error cleared.
// Other failures throw.
bool allocate_if_fits(DeviceMemory& memory, int64_t bytes, const char* what) {
  const cudaError_t error = cudaMalloc(&memory.pointer, static_cast<size_t>(bytes));
  if (error == cudaErrorMemoryAllocation) {
    static_cast<void>(cudaGetLastError());
    memory.pointer = nullptr;
    return false;
  }
  check_cuda(error, what);
  memory.bytes = bytes;
  return true;
}

template <class T>
constexpr xgemv_datatype datatype_of() {
  return std::is_same_v<T, __half> ? XGEMV_R_16F : XGEMV_R_16BF;
}

// The GPU side: operands on one device, the fp64 reference, the stream-read ceiling and the
// device libraries (xgemv, cuBLAS) on the same buffers; for a shape case back to back over
// rotated copies of A, for a decode step as one CUDA graph per library, for a mixture-of-experts
// case back to back over its routings (and copies of the experts).
class DeviceBench : private DeviceSession {
 public:
  explicit DeviceBench(int ordinal) : DeviceSession(ordinal) {}

  // Device name, clocks, driver and CUDA runtime into `info`, and a line saying them.
  void describe(RunInfo& info) const {
    describe_device(info);
    std::cout << "device " << info.device << " (SM clock max " << info.sm_clock_max_mhz
              << " MHz), driver " << info.driver << ", CUDA " << info.cuda << "\n";
  }

  int sm_clock_mhz() const { return nvml_->sm_clock_mhz(); }

  // Shape cases: the buffers once, for the largest of `cases`; throws if they do not fit.
  void reserve(const std::vector<Case>& cases) {
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

  // Fills fresh random operands and computes the reference (y_ref, fp64, logical order), then
  // gives the ceiling's record and one per library options wants for the case, each checked
  // against the reference and timed if correct.
  std::vector<Record> run(const Case& c, const Options& options, std::vector<double>& reference) {
    return with_element_type(
        c.dtype, [&](auto value) { return run_case<decltype(value)>(c, options, reference); });
  }

  // Decode steps: frees the previous step's buffers, then allocates this step's.
  void reserve(const DecodeStep& step) {
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

  // On the reserved step: fills fresh random operands of `dtype`, computes every GEMV's
  // reference, then gives the records of the reads and of every library options wants, the step
  // captured as one graph, checked after one replay, then timed by replays.
  std::vector<Record> run(const DecodeStep& step, Dtype dtype, const Options& options) {
    if (pool_.bytes != step.weight_buffer_bytes || y_.bytes != step.y_buffer_bytes)
      throw std::logic_error("run() of a step that reserve() did not allocate");
    if (dtype == Dtype::fp16) return run_step<__half>(step, options);
    if (dtype == Dtype::bf16) return run_step<__nv_bfloat16>(step, options);
    throw std::invalid_argument("the decode suite runs bf16 and fp16");
  }

  // Mixture of experts: the experts of `c`'s model in its format, both projections (the previous
  // ones freed first), each storage with room for the ceiling's reads of calls of up to
  // `max_tokens` tokens: random bf16 values, or each expert quantized from random values of its
  // own; then the xgemv_experts over them. False, all freed, where they do not fit in the GPU's
  // memory.
  bool load_experts(const MoeCase& c, int64_t max_tokens) {
    for (std::unique_ptr<DeviceExperts>& loaded : moe_loaded_) loaded.reset();
    if (moe_scratch_.pointer) moe_scratch_.release("freeing the previous model's experts");
    std::unique_ptr<DeviceExperts> loaded[2];  // freed on the way out where they do not fit
    const auto fits = [&](DeviceMemory& memory, int64_t bytes, const char* what) {
      if (allocate_if_fits(memory, bytes, what)) return true;
      if (moe_scratch_.pointer) moe_scratch_.release("freeing the experts' scratch");
      return false;
    };
    for (const Projection projection : {Projection::up, Projection::down}) {
      const MoeExperts plan = moe_experts(c.model, projection, c.quantized);
      if (!plan.unavailable.empty()) continue;  // the projection's record says why
      auto& experts = loaded[static_cast<size_t>(projection)] = std::make_unique<DeviceExperts>();
      experts->plan = plan;
      if (!fits(experts->storage, plan.storage_bytes(max_tokens, c.model.top_k), "the experts"))
        return false;
      // Quantized: one expert's random bf16 values to quantize, then its fp32 values to check.
      const int64_t scratch_bytes = plan.outputs * plan.inputs * int64_t{sizeof(float)};
      if (plan.quantized && moe_scratch_.bytes < scratch_bytes) {
        if (moe_scratch_.pointer) moe_scratch_.release("a smaller scratch");
        if (!fits(moe_scratch_, scratch_bytes, "the experts' scratch")) return false;
      }
      fill_experts(*experts, projection);
    }
    std::swap(moe_loaded_, loaded);
    return true;
  }

  // Both projections of a case on the loaded experts (load_experts), each: the stream read of the
  // bytes a call moves, then xgemv's call and cuBLAS's per-expert GEMMs, each checked on its first
  // routing and timed over all of them.
  std::vector<Record> run(const MoeCase& c, const Options& options) {
    std::vector<Record> records;
    for (const Projection projection : {Projection::up, Projection::down}) {
      std::vector<Record> call_records = run_moe_call(c, plan_moe_call(c, projection), options);
      records.insert(records.end(), call_records.begin(), call_records.end());
    }
    return records;
  }

 private:
  // --- shape cases -----------------------------------------------------------------------------

  template <class T>
  std::vector<Record> run_case(const Case& c, const Options& options, std::vector<double>& y_ref) {
    const RotationLayout layout = rotation_layout(c.a_bytes());
    fill(pool_.as<T>(), layout.pool_bytes() / int64_t{sizeof(T)}, kSeedA);
    fill(x_.as<T>(), c.x_elements(), kSeedX);
    fill(y_initial_.as<T>(), c.y_elements(), kSeedY);
    y_ref = reference<T>({c.transposed(), c.m, c.n, c.lda(), c.incx, c.incy, c.alpha, c.beta,
                          pool_.as<T>(), x_.as<T>(), y_initial_.as<T>(), y_ref_.as<double>(),
                          c.nrhs, c.ldx(), c.ldy()});

    const std::string mode = options.graph ? "graph" : "stream";
    std::vector<Record> records = {case_record(c, kCeiling, "stream_read", mode)};
    time_calls(records.back(), c.bytes(), layout, options, [&](int64_t copy) {
      return enqueue_stream_read(pool_.as<char>() + copy * layout.copy_stride_bytes,
                                 ceiling_bytes(c) / 16);
    });

    const int64_t copy_stride = layout.copy_stride_bytes / int64_t{sizeof(T)};
    using S = Scalar<T>;
    Problem<T> problem{c.op,
                       c.m,
                       c.n,
                       c.lda(),
                       static_cast<S>(c.alpha),
                       pool_.as<T>(),
                       x_.as<T>(),
                       c.incx,
                       static_cast<S>(c.beta),
                       y_.as<T>(),
                       c.incy,
                       c.nrhs,
                       c.ldx(),
                       c.ldy()};
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
      time_calls(r, c.bytes(), layout, options, [&](int64_t copy) {
        problem.a = pool_.as<T>() + copy * copy_stride;
        return library.call(handles_, problem);
      });
    }
    if constexpr (kIs16Bit<T>)
      if (c.transposed() && c.incx == 1 && c.incy == 1)
        for (const std::string& name : options.weights) {
          std::vector<Record> quantized =
              run_quantized<T>(c, *parse_weight_format(name), mode, options);
          records.insert(records.end(), quantized.begin(), quantized.end());
        }
    return records;
  }

  // The case's A (copy 0) quantized to `format` (xgemv_qweight_quantize) in rotated copies of its
  // storage: the stream read of the bytes a call reads, then xgemv_qgemv_nrhs checked against
  // the reference of the weight's own dequantized values and timed over the copies.
  template <class T>
  std::vector<Record> run_quantized(const Case& c, const WeightFormat& format,
                                    const std::string& mode, const Options& options) {
    Case quantized_case = c;
    quantized_case.format = format.name;
    Record ceiling = case_record(quantized_case, kCeiling, "stream_read", mode);
    Record row = case_record(quantized_case, kXgemvQuantized, "xgemv_qgemv_nrhs", mode);
    const xgemv_qweight_info info = weight_info(format, c.dtype, c.n, c.m);
    xgemv_qweight_layout layout;
    if (const xgemv_status status = xgemv_qweight_get_layout(&info, &layout);
        status != XGEMV_STATUS_SUCCESS) {
      row.status = std::string("skipped: ") + xgemv_status_string(status);
      return {row};
    }
    const int64_t bytes = quantized_call_bytes(layout, c.dtype, c.n, c.m, c.nrhs);
    for (Record* r : {&ceiling, &row}) {
      r->matrix_bytes = static_cast<int64_t>(layout.codes_bytes);
      r->bytes = bytes;
    }
    const RotationLayout rotation = rotation_layout(static_cast<int64_t>(layout.bytes));
    // Room for the ceiling's read from the last copy, which runs past the storage by X + Y.
    DeviceMemory storage, dequantized;
    storage.allocate(rotation.pool_bytes() + bytes + 256, "the quantized copies");
    dequantized.allocate(c.a_bytes(), "the dequantized A");
    QuantizedCopies copies;
    for (int64_t copy = 0; copy < rotation.copies; ++copy)
      copies.add(info, storage.as<char>() + copy * rotation.copy_stride_bytes);
    check_xgemv(xgemv_qweight_quantize(handles_.xgemv, copies.weights[0], pool_.pointer, c.m),
                "xgemv_qweight_quantize");
    for (int64_t copy = 1; copy < rotation.copies; ++copy)
      check_cuda(cudaMemcpyAsync(storage.as<char>() + copy * rotation.copy_stride_bytes,
                                 storage.pointer, layout.bytes, cudaMemcpyDeviceToDevice,
                                 handles_.stream),
                 "copy the quantized storage");
    check_xgemv(xgemv_qweight_dequantize(handles_.xgemv, copies.weights[0], dequantized.pointer,
                                         c.m, datatype_of<T>()),
                "xgemv_qweight_dequantize");
    const std::vector<double> y_ref =
        reference<T>({true, c.m, c.n, c.m, 1, 1, c.alpha, c.beta, dequantized.as<T>(), x_.as<T>(),
                      y_initial_.as<T>(), y_ref_.as<double>(), c.nrhs, c.ldx(), c.ldy()});

    time_calls(ceiling, bytes, rotation, options, [&](int64_t copy) {
      return enqueue_stream_read(storage.as<char>() + copy * rotation.copy_stride_bytes,
                                 (bytes + 15) / 16);
    });
    const float alpha = static_cast<float>(c.alpha), beta = static_cast<float>(c.beta);
    const auto call = [&](int64_t copy) {
      return xgemv_status_text(xgemv_qgemv_nrhs(handles_.xgemv, &alpha, copies.weights[copy],
                                                x_.pointer, c.ldx(), &beta, y_.pointer, c.ldy(),
                                                datatype_of<T>(), c.nrhs));
    };
    reset_y<T>(c);
    if (const std::string error = call(0); !error.empty()) {
      row.status = "error: " + error;
      return {ceiling, row};
    }
    if (const char* variant = xgemv_get_last_kernel_variant(handles_.xgemv))
      row.function += std::string("/") + variant;
    row.add_check("", compare_to_reference(c, read_y<T>(c), y_ref));
    if (!row.failed()) time_calls(row, bytes, rotation, options, call);
    return {ceiling, row};
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
  void time_calls(Record& r, int64_t bytes, const RotationLayout& layout, const Options& options,
                  const std::function<std::string(int64_t)>& enqueue) {
    TimingPlan plan = plan_timing(bytes, options.quick);
    if (options.graph) plan.calls_per_batch = static_cast<int>(graph_calls(plan, layout.copies));
    // A graph replays the same calls, so it cycles through only as many copies as it calls.
    r.copies =
        options.graph ? std::min<int64_t>(layout.copies, plan.calls_per_batch) : layout.copies;
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
      error = time_repetitions(
          plan.warmup_batches, plan.batches, plan.calls_per_batch, no_error,
          [&] { return graph.exec ? launch(graph) : enqueue_batch(); }, us);
    if (error.empty())
      r.set_times(us);
    else
      r.status = "error: " + error;
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
      references.push_back(
          reference<T>({true, p.m, p.n, p.lda, p.incx, p.incy, p.alpha, p.beta, p.a, p.x, p.y,
                        y_ref_.as<double>(), p.nrhs, p.ldx, p.ldy}));
    }
    const TimingPlan plan = plan_batches(options.quick);

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
    // Last: each quantized format replaces the dense weights by its dequantized values.
    for (const std::string& name : options.weights) {
      std::vector<Record> quantized = run_quantized_step<T>(step, *parse_weight_format(name), plan);
      records.insert(records.end(), quantized.begin(), quantized.end());
    }
    return records;
  }

  // The step with every matrix quantized to `format` (one storage after the other): its reads,
  // and xgemv_qgemv_nrhs plain and with early start, each as one graph, checked against the
  // references of the dequantized weights (written over the dense ones) and timed by replays.
  template <class T>
  std::vector<Record> run_quantized_step(const DecodeStep& step, const WeightFormat& format,
                                         const TimingPlan& plan) {
    constexpr Dtype dtype = std::is_same_v<T, __half> ? Dtype::fp16 : Dtype::bf16;
    std::vector<xgemv_qweight_info> infos;
    std::vector<xgemv_qweight_layout> layouts(step.gemvs.size());
    std::vector<int64_t> offsets;
    int64_t storage_bytes = 0, call_bytes = 0, codes_bytes = 0;
    for (size_t i = 0; i < step.gemvs.size(); ++i) {
      const DecodeGemv& gemv = step.gemvs[i];
      infos.push_back(weight_info(format, dtype, gemv.out, gemv.in));
      if (const xgemv_status status = xgemv_qweight_get_layout(&infos[i], &layouts[i]);
          status != XGEMV_STATUS_SUCCESS) {
        Record r = step_record(step, dtype, kXgemvQuantized, "xgemv_qgemv_nrhs");
        r.format = format.name;
        r.status = std::string("skipped: ") + gemv.tag + ": " + xgemv_status_string(status);
        return {r};
      }
      offsets.push_back(storage_bytes);
      storage_bytes += static_cast<int64_t>(layouts[i].bytes);
      call_bytes += quantized_call_bytes(layouts[i], dtype, gemv.out, gemv.in, step.nrhs);
      codes_bytes += static_cast<int64_t>(layouts[i].codes_bytes);
    }
    DeviceMemory storage;
    storage.allocate(storage_bytes, "the step's quantized weights");
    QuantizedCopies weights;
    std::vector<std::vector<double>> references;
    for (size_t i = 0; i < step.gemvs.size(); ++i) {
      const DecodeGemv& gemv = step.gemvs[i];
      weights.add(infos[i], storage.as<char>() + offsets[i]);
      char* dense = pool_.as<char>() + gemv.weight_offset;
      check_xgemv(xgemv_qweight_quantize(handles_.xgemv, weights.weights[i], dense, gemv.in),
                  "xgemv_qweight_quantize");
      check_xgemv(xgemv_qweight_dequantize(handles_.xgemv, weights.weights[i], dense, gemv.in,
                                           datatype_of<T>()),
                  "xgemv_qweight_dequantize");
      const Problem<T> p = gemv_problem<T>(gemv);
      references.push_back(
          reference<T>({true, p.m, p.n, p.lda, p.incx, p.incy, p.alpha, p.beta, p.a, p.x, p.y,
                        y_ref_.as<double>(), p.nrhs, p.ldx, p.ldy}));
    }
    const auto step_of = [&](const char* lib, const char* function) {
      Record r = step_record(step, dtype, lib, function);
      r.format = format.name;
      r.matrix_bytes = codes_bytes;
      r.bytes = call_bytes;
      return r;
    };
    std::vector<Record> records;
    const auto read = [&](const char* name, const std::function<std::string()>& enqueue) {
      time_graph(records.emplace_back(step_of(name, "stream_read")), capture(enqueue), plan);
    };
    read(kOneRead, [&] { return enqueue_stream_read(storage.pointer, storage_bytes / 16); });
    read(kPerGemvReads, [&] {
      for (size_t i = 0; i < step.gemvs.size(); ++i)
        if (std::string error = enqueue_stream_read(storage.as<char>() + offsets[i],
                                                    static_cast<int64_t>(layouts[i].bytes) / 16);
            !error.empty())
          return error;
      return std::string();
    });
    const float one = 1, zero = 0;
    for (const bool early_start : {false, true}) {
      Record& r = records.emplace_back(
          step_of(early_start ? kXgemvQuantizedEarlyStart : kXgemvQuantized, "xgemv_qgemv_nrhs"));
      const char* variant = nullptr;
      const auto enqueue_step = [&]() -> std::string {
        for (size_t i = 0; i < step.gemvs.size(); ++i) {
          const DecodeGemv& gemv = step.gemvs[i];
          if (const std::string error = xgemv_status_text(xgemv_qgemv_nrhs(
                  handles_.xgemv, &one, weights.weights[i], x_.as<char>() + gemv.x_offset, gemv.in,
                  &zero, y_.as<char>() + gemv.y_offset, gemv.out, datatype_of<T>(), gemv.nrhs));
              !error.empty())
            return gemv.tag + ": " + error;
          if (!variant) variant = xgemv_get_last_kernel_variant(handles_.xgemv);
        }
        return "";
      };
      check_xgemv(xgemv_set_early_start(handles_.xgemv, early_start ? 1 : 0),
                  "xgemv_set_early_start");
      const Graph graph = capture(enqueue_step);
      check_xgemv(xgemv_set_early_start(handles_.xgemv, 0), "xgemv_set_early_start");
      if (variant) r.function += std::string("/") + variant;
      r.kernels = graph.kernels;
      if (!graph.error.empty()) {
        r.status = "error: " + graph.error;
        continue;
      }
      check_replay<T>(r, step, graph, references);
      if (r.status == "ok") time_graph(r, graph, plan);
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
  void time_graph(Record& r, const Graph& graph, const TimingPlan& plan) {
    r.kernels = graph.kernels;
    if (!graph.error.empty()) {
      r.status = "error: " + graph.error;
      return;
    }
    std::vector<double> us;
    time_repetitions(
        plan.warmup_batches, plan.batches, 1, no_error, [&] { return launch(graph); }, us);
    r.set_times(us);
  }

  template <class T>
  Record measure_library(const DecodeStep& step, const DeviceLibrary<T>& library,
                         const std::string& name, bool early_start,
                         const std::vector<std::vector<double>>& references,
                         const TimingPlan& plan) {
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
        if (const std::string error = library.call(handles_, gemv_problem<T>(gemv)); !error.empty())
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
      for (size_t i = 0; i < variants.size(); ++i) r.function += (i == 0 ? "/" : "+") + variants[i];
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

  // --- mixture of experts -----------------------------------------------------------------------

  // Random values into the experts' first copy (bf16 at once; quantized one expert at a time,
  // each quantized from the scratch), that copy into the others, and the xgemv_experts over each.
  void fill_experts(DeviceExperts& experts, Projection projection) {
    const MoeExperts& plan = experts.plan;
    const int64_t elements = plan.outputs * plan.inputs;
    if (plan.quantized) {
      QuantizedCopies weights;
      for (int64_t expert = 0; expert < plan.count; ++expert) {
        fill(moe_scratch_.as<__nv_bfloat16>(), elements, expert_seed(projection, expert));
        weights.add(plan.info, experts.storage.as<char>() + expert * plan.expert_bytes);
        check_xgemv(xgemv_qweight_quantize(handles_.xgemv, weights.weights.back(),
                                           moe_scratch_.pointer, plan.inputs),
                    "xgemv_qweight_quantize");
      }
    } else {
      fill(experts.storage.as<__nv_bfloat16>(), plan.count * elements, expert_seed(projection, 0));
    }
    for (int64_t copy = 0; copy < plan.copies(); ++copy) {
      void* storage = experts.storage.as<char>() + copy * plan.copy_stride_bytes();
      if (copy > 0)
        check_cuda(
            cudaMemcpyAsync(storage, experts.storage.pointer, static_cast<size_t>(plan.bytes()),
                            cudaMemcpyDeviceToDevice, handles_.stream),
            "copy the experts");
      xgemv_experts& made = experts.copies.emplace_back();
      check_xgemv(plan.quantized
                      ? xgemv_experts_create_quantized(&made, &plan.info, plan.count, storage)
                      : xgemv_experts_create(&made, XGEMV_R_16BF, plan.count, plan.outputs,
                                             plan.inputs, storage, plan.inputs, elements),
                  "xgemv_experts_create");
    }
  }

  // One projection of a case: its input random, its routings uploaded one after the other, the
  // ceiling's record, then xgemv's and (bf16 experts) cuBLAS's, each checked on the first routing
  // (the outputs of MoeCheck against support/moe_reference) and timed over every routing.
  std::vector<Record> run_moe_call(const MoeCase& c, const MoeCall& call, const Options& options) {
    const std::string mode = options.graph ? "graph" : "stream";
    const MoeExperts& shape = call.experts;
    const bool up = shape.projection == Projection::up;
    const auto record = [&](const char* lib, const char* function) {
      return moe_record(c, call, lib, function, mode);
    };
    if (!shape.unavailable.empty()) {
      Record r = record("xgemv", up ? "xgemv_moe_up" : "xgemv_moe_down");
      r.status = "skipped: " + shape.unavailable;
      return {r};
    }
    const DeviceExperts& experts = *moe_loaded_[static_cast<size_t>(shape.projection)];
    // Up: x [T][H] into h [T][k][I]; down: h [T][k][I] into y [T][H].
    const int64_t pairs = call.tokens * call.top_k;
    const int64_t output_length = up ? shape.outputs / 2 : shape.outputs;
    const int64_t input_rows = up ? call.tokens : pairs, output_rows = up ? pairs : call.tokens;
    DeviceMemory input, output, ids, weights, workspace;
    input.allocate(input_rows * shape.inputs * int64_t{sizeof(__nv_bfloat16)}, "the calls' input");
    output.allocate(output_rows * output_length * int64_t{sizeof(__nv_bfloat16)},
                    "the calls' output");
    fill(input.as<__nv_bfloat16>(), input_rows * shape.inputs, kSeedX);
    std::vector<int32_t> all_ids;
    std::vector<float> all_weights;
    for (const MoeRouting& routing : call.routings) {
      all_ids.insert(all_ids.end(), routing.ids.begin(), routing.ids.end());
      all_weights.insert(all_weights.end(), routing.weights.begin(), routing.weights.end());
    }
    upload(ids, all_ids, "the routings' ids");
    upload(weights, all_weights, "the routings' weights");
    if (!up)
      workspace.allocate(static_cast<int64_t>(xgemv_moe_down_workspace_bytes(
                             call.tokens, call.top_k, shape.outputs)),
                         "the down call's workspace");

    const MoeCheck check = plan_check(call);
    const std::vector<double> checked_input = rows_to_host<__nv_bfloat16>(
        input.pointer, shape.inputs, shape.inputs, check.token_rows(up ? 1 : call.top_k));
    const xgemv_test::moe::ExpertValues values = reference_experts(experts, check);
    std::string tokens_checked;
    for (int64_t t : check.tokens)
      tokens_checked += (tokens_checked.empty() ? "" : ", ") + std::to_string(t);

    std::vector<Record> records;
    const RotationLayout rotation = call.ceiling_rotation();
    time_calls(records.emplace_back(record(kCeiling, "stream_read")), call.bytes(), rotation,
               options, [&](int64_t copy) {
                 return enqueue_stream_read(
                     experts.storage.as<char>() + copy * rotation.copy_stride_bytes,
                     (call.bytes() + 15) / 16);
               });
    if (options.wants_library("xgemv")) {
      Record& r = records.emplace_back(record("xgemv", up ? "xgemv_moe_up" : "xgemv_moe_down"));
      // Call i: routing i % R on copy i % C (MoeCall::rotation_calls).
      const auto enqueue = [&](int64_t call_index) {
        const int64_t index = call_index % static_cast<int64_t>(call.routings.size());
        const xgemv_moe_routing routing = {call.tokens,
                                           call.top_k,
                                           ids.as<int32_t>() + index * pairs,
                                           XGEMV_R_32I,
                                           weights.as<float>() + index * pairs,
                                           XGEMV_R_32F};
        const xgemv_experts copy = experts.copies[static_cast<size_t>(call_index % shape.copies())];
        return xgemv_status_text(
            up ? xgemv_moe_up(handles_.xgemv, copy, &routing, XGEMV_MOE_SWIGLU, 0, 0, nullptr,
                              input.pointer, shape.inputs, output.pointer, output_length)
               : xgemv_moe_down(handles_.xgemv, copy, &routing, nullptr, input.pointer,
                                shape.inputs, 0, output.pointer, shape.outputs, workspace.pointer,
                                static_cast<size_t>(workspace.bytes)));
      };
      poison(output);
      if (const std::string error = enqueue(0); !error.empty()) {
        r.status = "error: " + error;
      } else {
        if (const char* variant = xgemv_get_last_kernel_variant(handles_.xgemv))
          r.function += std::string("/") + variant;
        const std::vector<double> computed =
            sample_columns(rows_to_host<__nv_bfloat16>(output.pointer, output_length, output_length,
                                                       check.token_rows(up ? call.top_k : 1)),
                           output_length, {check.outputs});
        const xgemv_test::moe::Reference reference =
            up ? xgemv_test::moe::reference_up(values, {}, checked_input, shape.inputs,
                                               check.routing, XGEMV_MOE_SWIGLU, 0, 0, XGEMV_R_16BF)
               : xgemv_test::moe::reference_down(values, {}, checked_input, shape.inputs,
                                                 check.routing, false, {}, shape.outputs,
                                                 XGEMV_R_16BF);
        r.add_check((up ? "h of tokens " : "y of tokens ") + tokens_checked,
                    compare_to_bounds(computed, reference));
        if (!r.failed())
          time_calls(r, call.bytes(), RotationLayout{0, call.rotation_calls()}, options, enqueue);
      }
    }
    if (!shape.quantized && options.wants_library(kCublasGemmEx)) {
      run_gemms_per_expert(records.emplace_back(record(kCublasGemmEx, "cublasGemmEx per expert")),
                           call, experts, input, check, values, checked_input,
                           "products of tokens " + tokens_checked, options);
    }
    return records;
  }

  // cuBLAS's MoE on bf16 experts: per routing, one cublasGemmEx per expert it touches, on the
  // rows of the expert's pairs gathered contiguously before timing (up: their tokens' x; down:
  // their h), into rows of its products (up: the gate and up values before the activation; down:
  // before the weighted sum). Checked on the first routing against the reference of each checked
  // pair's product alone, then timed over the routings.
  void run_gemms_per_expert(Record& r, const MoeCall& call, const DeviceExperts& experts,
                            const DeviceMemory& input, const MoeCheck& check,
                            const xgemv_test::moe::ExpertValues& values,
                            const std::vector<double>& checked_input, const std::string& where,
                            const Options& options) {
    using T = __nv_bfloat16;
    const MoeExperts& shape = call.experts;
    const bool up = shape.projection == Projection::up;
    const int64_t rows_per_routing = call.tokens * call.top_k;
    const auto row_bytes = static_cast<size_t>(shape.inputs) * sizeof(T);
    DeviceMemory gathered, products;
    gathered.allocate(static_cast<int64_t>(call.routings.size()) * rows_per_routing *
                          static_cast<int64_t>(row_bytes),
                      "the gathered rows");
    products.allocate(rows_per_routing * shape.outputs * int64_t{sizeof(T)},
                      "the per-expert products");
    for (size_t index = 0; index < call.groups.size(); ++index) {
      const std::vector<int64_t>& pairs = call.groups[index].pairs;
      for (size_t row = 0; row < pairs.size(); ++row) {
        const int64_t source = up ? pairs[row] / call.top_k : pairs[row];
        check_cuda(
            cudaMemcpyAsync(gathered.as<char>() + (index * rows_per_routing + row) * row_bytes,
                            input.as<char>() + source * row_bytes, row_bytes,
                            cudaMemcpyDeviceToDevice, handles_.stream),
            "gather the rows");
      }
    }
    // Call i: routing i % R on copy i % C (MoeCall::rotation_calls).
    const auto enqueue = [&](int64_t call_index) -> std::string {
      const int64_t index = call_index % static_cast<int64_t>(call.routings.size());
      const auto* weights = reinterpret_cast<const T*>(experts.copy(call_index % shape.copies()));
      for (const ExpertGroup& group : call.groups[static_cast<size_t>(index)].groups) {
        const Problem<T> p{
            'T',
            shape.inputs,
            shape.outputs,
            shape.inputs,
            1.0f,
            weights + group.expert * shape.outputs * shape.inputs,
            gathered.as<T>() + (index * rows_per_routing + group.first) * shape.inputs,
            1,
            0.0f,
            products.as<T>() + group.first * shape.outputs,
            1,
            group.rows,
            shape.inputs,
            shape.outputs};
        if (std::string error = call_cublas_gemmex(handles_, p); !error.empty()) return error;
      }
      return "";
    };
    poison(products);
    if (const std::string error = enqueue(0); !error.empty()) {
      r.status = "error: " + error;
      return;
    }
    const std::vector<double> computed =
        sample_columns(rows_to_host<T>(products.pointer, shape.outputs, shape.outputs,
                                       gathered_rows(call.groups.front(), check.pairs)),
                       shape.outputs, check.expert_rows);
    const xgemv_test::moe::Reference reference =
        up ? xgemv_test::moe::reference_up(values, {}, checked_input, shape.inputs, check.routing,
                                           XGEMV_MOE_IDENTITY, 0, 0, XGEMV_R_16BF)
           : xgemv_test::moe::reference_down(values, {}, checked_input, shape.inputs,
                                             check.pair_routing(), false, {}, shape.outputs,
                                             XGEMV_R_16BF);
    r.add_check(where, compare_to_bounds(computed, reference));
    if (!r.failed())
      time_calls(r, call.bytes(), RotationLayout{0, call.rotation_calls()}, options, enqueue);
  }

  // The experts' rows the check's reference reads (MoeCheck::expert_rows) as its experts: bf16
  // values as stored; a quantized expert's own values w = v s, dequantized to fp32 (exact).
  xgemv_test::moe::ExpertValues reference_experts(const DeviceExperts& experts,
                                                  const MoeCheck& check) {
    const MoeExperts& plan = experts.plan;
    xgemv_test::moe::ExpertValues values{
        static_cast<int64_t>(check.experts.size()), check.reference_rows(), plan.inputs, {}};
    for (const int32_t expert : check.experts) {
      std::vector<double> rows;
      if (plan.quantized) {
        QuantizedCopies weight;
        weight.add(plan.info, experts.storage.as<char>() + expert * plan.expert_bytes);  // copy 0
        check_xgemv(xgemv_qweight_dequantize(handles_.xgemv, weight.weights[0],
                                             moe_scratch_.pointer, plan.inputs, XGEMV_R_32F),
                    "xgemv_qweight_dequantize");
        rows =
            rows_to_host<float>(moe_scratch_.pointer, plan.inputs, plan.inputs, check.expert_rows);
      } else {
        rows = rows_to_host<__nv_bfloat16>(
            experts.storage.as<__nv_bfloat16>() + expert * plan.outputs * plan.inputs, plan.inputs,
            plan.inputs, check.expert_rows);
      }
      values.values.insert(values.values.end(), rows.begin(), rows.end());
    }
    return values;
  }

  // Rows of a row-major device matrix of `ld` elements a row, the first `length` of each, as
  // doubles, row after row (a fault in the work before surfaces here).
  template <class T>
  std::vector<double> rows_to_host(const void* matrix, int64_t length, int64_t ld,
                                   const std::vector<RowSample>& rows) {
    int64_t count = 0;
    for (const RowSample& sample : rows) count += sample.count;
    std::vector<T> stored(static_cast<size_t>(count * length));
    T* next = stored.data();
    for (const RowSample& sample : rows) {
      check_cuda(cudaMemcpy2DAsync(
                     next, length * sizeof(T), static_cast<const T*>(matrix) + sample.first * ld,
                     sample.stride * ld * sizeof(T), length * sizeof(T),
                     static_cast<size_t>(sample.count), cudaMemcpyDeviceToHost, handles_.stream),
                 "copy rows to the host");
      next += sample.count * length;
    }
    check_cuda(cudaStreamSynchronize(handles_.stream), "the checked call");
    std::vector<double> values(stored.size());
    std::transform(stored.begin(), stored.end(), values.begin(), to_double<T>);
    return values;
  }

  // `values` into new device memory.
  template <class T>
  void upload(DeviceMemory& memory, const std::vector<T>& values, const char* what) {
    memory.allocate(static_cast<int64_t>(values.size() * sizeof(T)), what);
    check_cuda(cudaMemcpyAsync(memory.pointer, values.data(), values.size() * sizeof(T),
                               cudaMemcpyHostToDevice, handles_.stream),
               what);
    check_cuda(cudaStreamSynchronize(handles_.stream), what);
  }

  // NaN in every element of a checked call's output (all-ones bytes are NaN in bf16), so that an
  // output the call does not write fails.
  void poison(const DeviceMemory& output) {
    check_cuda(
        cudaMemsetAsync(output.pointer, 0xFF, static_cast<size_t>(output.bytes), handles_.stream),
        "poison the output");
  }

  // Shape cases: the rotated copies of A, X, Y, the initial Y; decode steps: the step's weights,
  // X and Y vectors. Both: the reference's Y. Mixture of experts: each projection's experts, the
  // scratch of one expert's values.
  DeviceMemory pool_, x_, y_, y_initial_, y_ref_;
  std::unique_ptr<DeviceExperts> moe_loaded_[2];  // up, down
  DeviceMemory moe_scratch_;
};

std::string version_text() {
  return "xgemv-bench " XGEMV_PROJECT_VERSION ", libxgemv " + std::string(xgemv_version_string()) +
         ", commit " + project_commit("");
}

std::string comma_separated(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ",") + name;
  return text;
}

// The GPU, or nullptr with the reason there is none.
std::unique_ptr<DeviceBench> open_device(int ordinal, std::string& why_not) {
  if (nvidia_driver_or_gpu_missing()) {
    why_not = xgemv_status_string(XGEMV_STATUS_NO_DEVICE);
    return nullptr;
  }
  try {
    why_not = device_unavailable(ordinal);
    return why_not.empty() ? std::make_unique<DeviceBench>(ordinal) : nullptr;
  } catch (const std::exception& error) {
    why_not = error.what();
    return nullptr;
  }
}

// The GPU of a suite that needs one, or nullptr after saying why there is none.
std::unique_ptr<DeviceBench> open_device_for(const Options& options, const char* suite) {
  std::string why_no_gpu;
  std::unique_ptr<DeviceBench> device = open_device(options.device, why_no_gpu);
  if (!device)
    std::cout << "xgemv-bench: no GPU (" << why_no_gpu << "): the " << suite
              << " suite needs one\n";
  return device;
}

// Plans a suite's cases with plan(), or says why it cannot (exit code 2).
template <class Plan>
bool planned(Plan&& plan) {
  try {
    plan();
    return true;
  } catch (const std::invalid_argument& error) {
    std::cerr << "xgemv-bench: " << error.what() << '\n';
    return false;
  }
}

// Runs a suite's cases with run(); a fault (e.g. a kernel's illegal address) poisons the
// context, so it stops there, and the records so far are reported (exit code 2).
template <class Run>
int measured(Run&& run) {
  try {
    run();
    return 0;
  } catch (const std::exception& error) {
    std::cerr << "xgemv-bench: stopped: " << error.what() << '\n';
    return 2;
  }
}

// One step's or case's records, with the SM clock sampled after them, their metrics, a progress
// line each, added to the run's.
void add_records(std::vector<Record> added, int sm_clock_mhz, const std::string& prefix,
                 std::vector<Record>& records) {
  for (Record& r : added) r.sm_clock_mhz = sm_clock_mhz;
  derive_metrics(added);
  for (const Record& r : added) std::cout << progress_line(r, prefix) << std::endl;
  records.insert(records.end(), added.begin(), added.end());
}

// "[i/n] ", the progress lines' prefix of case i of n.
std::string case_prefix(size_t i, size_t n) {
  return "[" + std::to_string(i + 1) + "/" + std::to_string(n) + "] ";
}

// Whole decode steps. The exit code: 0, 1 when a record failed, 2 when the run could not start
// or had to stop (the records so far are written).
int run_decode(const Options& options, RunInfo info) {
  std::vector<DecodeStep> steps;
  std::vector<Dtype> dtypes;
  if (!planned([&] {
        steps = plan_decode_steps(options);
        dtypes = decode_dtypes(options);
      }))
    return 2;
  std::string nrhs_text;
  for (int64_t nrhs : options.nrhs_values())
    nrhs_text += (nrhs_text.empty() ? "" : ",") + std::to_string(nrhs);
  const size_t models = steps.size() / options.nrhs_values().size();
  if (options.list) {
    for (const DecodeStep& step : steps) std::cout << "decode " << describe_step(step) << '\n';
    std::cout << models << " models, " << dtypes.size() << " dtypes"
              << (options.nrhs_sweep() ? ", nrhs " + nrhs_text : "") << "\n";
    return 0;
  }
  const std::unique_ptr<DeviceBench> device = open_device_for(options, "decode");
  if (!device) return 2;
  info.mode = "graph";
  const TimingPlan plan = plan_batches(options.quick);
  info.method = "one CUDA graph per step and library, median of " + std::to_string(plan.batches) +
                " replays after " + std::to_string(plan.warmup_batches) +
                " warm-up replays; every GEMV's output checked after one replay";
  device->describe(info);
  std::cout << "commit " << info.commit << ", decode: " << models << " models x " << dtypes.size()
            << " dtypes" << (options.nrhs_sweep() ? " x nrhs " + nrhs_text : "") << ", "
            << info.method << (info.quick ? " (quick)" : "") << "\n"
            << progress_header() << std::endl;

  std::vector<Record> records;
  const int exit_code = measured([&] {
    for (size_t i = 0; i < steps.size(); ++i) {
      std::cout << "[" << i + 1 << "/" << steps.size() << "] " << describe_step(steps[i])
                << std::endl;
      device->reserve(steps[i]);
      for (Dtype dtype : dtypes) {
        std::vector<Record> step_records = device->run(steps[i], dtype, options);
        add_records(std::move(step_records), device->sm_clock_mhz(), "", records);
      }
    }
  });
  return finish_run(options.out_dir, info, records, exit_code);
}

// The mixture-of-experts suite, model by model and format by format on the experts made once for
// their cases. The exit code as run_decode's.
int run_moe(const Options& options, RunInfo info) {
  std::vector<MoeCase> cases;
  if (!planned([&] { cases = plan_moe_cases(options); })) return 2;
  if (options.list) {
    for (const MoeCase& c : cases) std::cout << "moe " << describe_moe_case(c) << '\n';
    std::cout << cases.size() << " cases\n";
    return 0;
  }
  const std::unique_ptr<DeviceBench> device = open_device_for(options, "moe");
  if (!device) return 2;
  info.method =
      "medians of batches of back-to-back calls, each call on the next of its routings (their "
      "touched experts >= 1 GiB, at most 64); tokens 0 and T-1 of every call checked first";
  device->describe(info);
  std::cout << "commit " << info.commit << ", moe: " << cases.size() << " cases, " << info.mode
            << (info.quick ? ", quick" : "") << "\n"
            << progress_header() << std::endl;

  int64_t max_tokens = 1;
  for (const MoeCase& c : cases) max_tokens = std::max(max_tokens, c.tokens);
  std::vector<Record> records;
  const int exit_code = measured([&] {
    bool loaded = false;
    for (size_t i = 0; i < cases.size(); ++i) {
      const MoeCase& c = cases[i];
      if (i == 0 || !c.same_experts(cases[i - 1])) {
        loaded = device->load_experts(c, max_tokens);
        if (!loaded)
          std::cout << "moe " << c.model.name << " " << c.format_name()
                    << ": the experts do not fit in the GPU's memory: skipped" << std::endl;
      }
      if (!loaded) continue;
      std::vector<Record> case_records = device->run(c, options);
      add_records(std::move(case_records), device->sm_clock_mhz(), case_prefix(i, cases.size()),
                  records);
    }
  });
  return finish_run(options.out_dir, info, records, exit_code);
}

// The shape cases: on the GPU when there is one, OpenBLAS on the host.
int run_shapes(const Options& options, RunInfo info) {
  std::vector<Case> cases;
  if (!planned([&] { cases = build_cases(options); })) return 2;
  if (options.list) {
    for (const Case& c : cases)
      std::cout << c.suite << ' ' << case_record(c, "", "", "").label() << "  (" << c.bytes()
                << " bytes)\n";
    std::cout << cases.size() << " cases\n";
    return 0;
  }
  if (cases.empty()) {
    std::cerr << "xgemv-bench: no case matches the filters\n";
    return 2;
  }
  info.method = "medians of batches of back-to-back calls, A rotated over >= 1 GiB of copies";
  std::string why_no_gpu;
  const std::unique_ptr<DeviceBench> device = open_device(options.device, why_no_gpu);
  if (device) {
    device->describe(info);
  } else {
    if (const std::vector<std::string> named = options.device_libraries_named(); !named.empty()) {
      std::cerr << "xgemv-bench: --lib " << comma_separated(named) << " needs a GPU: " << why_no_gpu
                << '\n';
      return 2;
    }
    // Only the OpenBLAS rows can run: the cases they cannot (fp16, bf16; several vectors) are
    // not counted.
    const size_t case_count = cases.size();
    cases.erase(std::remove_if(cases.begin(), cases.end(),
                               [](const Case& c) { return !HostBench::supports(c); }),
                cases.end());
    std::cout << "xgemv-bench: no GPU (" << why_no_gpu << "): OpenBLAS only, on the "
              << cases.size() << " fp32/fp64 " << (options.nrhs_sweep() ? "one-vector " : "")
              << "cases of " << case_count << "\n";
    if (cases.empty()) {
      std::cerr << "xgemv-bench: no case left to run without a GPU\n";
      return 2;
    }
  }
  std::cout << "host " << info.host_cpu << "; " << info.host_blas << "\ncommit " << info.commit
            << ", " << cases.size() << " cases, " << info.mode << (info.quick ? ", quick" : "")
            << "\n"
            << progress_header() << std::endl;

  HostBench host;
  std::vector<Record> records;
  const int exit_code = measured([&] {
    if (device) device->reserve(cases);
    if (options.wants_library("openblas")) host.reserve(cases);
    for (size_t i = 0; i < cases.size(); ++i) {
      const Case& c = cases[i];
      std::vector<double> reference;
      std::vector<Record> case_records;
      if (device) case_records = device->run(c, options, reference);
      if (options.runs_row("openblas", c.nrhs) && HostBench::supports(c)) {
        host.prepare(c);
        if (!device) reference = host.reference(c);
        case_records.push_back(host.run_openblas(c, reference, options));
      }
      add_records(std::move(case_records), device ? device->sm_clock_mhz() : 0,
                  case_prefix(i, cases.size()), records);
    }
  });
  return finish_run(options.out_dir, info, records, exit_code);
}

int run(int argc, char** argv) {
  const auto parsed =
      CommandLine<Options>(version_text, XGEMV_BENCH_DEFAULT_OUT_DIR).parse_or_exit(argc, argv);
  if (const int* exit_code = std::get_if<int>(&parsed)) return *exit_code;
  const Options& options = std::get<Options>(parsed);
  const RunInfo info =
      describe_run(argc, argv, options, HostBench::describe(), options.graph ? "graph" : "stream");
  if (options.decode()) return run_decode(options, info);
  return options.moe() ? run_moe(options, info) : run_shapes(options, info);
}

}  // namespace
}  // namespace xgemv::bench

int main(int argc, char** argv) { return xgemv::bench::run(argc, argv); }
