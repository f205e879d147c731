// xgemv-nccl-bench: one GEMV split over several GPUs through NCCL (xgemv_nccl.h), one thread per
// GPU, at P = 1, 2, 4, ... GPUs: the bandwidth of large matrices against P one-GPU stream reads,
// tensor-parallel decode steps of Llama-3-70B and Llama-3.1-405B layers, and the small exchanges
// beside a decode-size split GEMV. Every rank holds its device session (a stream, an xgemv handle
// on it, CUDA events). See bench/README.md (Several GPUs).
#include <nccl.h>
#include <xgemv/xgemv_nccl.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "device_parts.cuh"
#include "lib/check.hpp"
#include "lib/measure.hpp"
#include "lib/nccl_plan.hpp"
#include "lib/options.hpp"
#include "lib/report.hpp"
#include "system_info.hpp"

namespace xgemv::bench {
namespace {

void check_nccl(ncclResult_t result, const char* what) {
  if (result != ncclSuccess)
    throw std::runtime_error(std::string(what) + ": " + ncclGetErrorString(result));
}

std::string nccl_error_text(ncclResult_t result) {
  return result == ncclSuccess ? std::string() : std::string(ncclGetErrorString(result));
}

xgemv_split api_split(Split split) {
  return split == Split::outputs ? XGEMV_SPLIT_OUTPUTS : XGEMV_SPLIT_REDUCTION;
}

xgemv_result api_result(Result result) {
  return result == Result::own_block ? XGEMV_RESULT_OWN_BLOCK : XGEMV_RESULT_ALL;
}

std::string nccl_status_text(xgemv_status status) {
  if (status == XGEMV_STATUS_SUCCESS) return "";
  if (status == XGEMV_STATUS_NCCL_ERROR)
    return std::string("XGEMV_STATUS_NCCL_ERROR: ") + ncclGetErrorString(xgemv_nccl_last_error());
  if (status == XGEMV_STATUS_INVALID_SPLIT) return "XGEMV_STATUS_INVALID_SPLIT";
  return xgemv_status_string(status);
}

// xgemv_nccl_?gemv by element type, unit increments.
struct SplitCall {
  xgemv_handle handle;
  ncclComm_t comm;
  xgemv_split split;
  xgemv_result result;
  const int64_t* starts;
  char op;
  int64_t m, n, lda;
  void* workspace;
  size_t workspace_bytes;
};

template <class T>
xgemv_status nccl_gemv(const SplitCall& c, const Scalar<T>* alpha, const T* a, const T* x,
                       const Scalar<T>* beta, T* y) {
  const auto call = [&](auto entry_point) {
    return entry_point(c.handle, c.comm, c.split, c.result, c.starts, c.op, c.m, c.n, alpha, a,
                       c.lda, x, 1, beta, y, 1, c.workspace, c.workspace_bytes);
  };
  if constexpr (std::is_same_v<T, float>)
    return call(xgemv_nccl_sgemv);
  else if constexpr (std::is_same_v<T, double>)
    return call(xgemv_nccl_dgemv);
  else if constexpr (std::is_same_v<T, __half>)
    return call(xgemv_nccl_hgemv);
  else
    return call(xgemv_nccl_bf16gemv);
}

ncclDataType_t nccl_type(Dtype dtype) {
  const ncclDataType_t types[] = {ncclFloat32, ncclFloat64, ncclFloat16, ncclBfloat16};
  return types[static_cast<int>(dtype)];  // kAllDtypes order
}

// The seed of a rank's own operands: blocks of A and of x differ from rank to rank, so that a
// block taken from the wrong rank shows; the whole x is the same everywhere.
uint64_t rank_seed(uint64_t seed, int rank) { return seed + 16 * static_cast<uint64_t>(rank + 1); }

// What one rank's timed repetitions gave: microseconds per call, or why they stopped.
struct RankTimes {
  std::vector<double> us;
  std::string error;
};

// One GPU of the run: its session (stream, xgemv handle, events), the communicator of the current
// GPU count, the buffers of the unit being measured and its graph. Every method but the
// constructor runs in the rank's own thread, its device current.
class Rank : private DeviceSession {
 public:
  explicit Rank(int ordinal) : DeviceSession(ordinal) {
    int l2_bytes = 0;
    check_cuda(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, ordinal),
               "cudaDeviceGetAttribute");
    // Writing twice the L2's size leaves none of the previous repetition's lines in it.
    flush_.allocate(std::max<int64_t>(int64_t{2} * l2_bytes, int64_t{64} << 20), "L2 flush");
    barrier_.allocate(sizeof(float), "barrier value");
    check_cuda(cudaMemsetAsync(barrier_.pointer, 0, sizeof(float), handles_.stream),
               "cudaMemsetAsync");
    check_cuda(cudaStreamSynchronize(handles_.stream), "rank setup");
  }

  void describe(RunInfo& info) const { describe_device(info); }
  std::string name() const { return properties_.name; }
  int sm_clock_mhz() const { return nvml_->sm_clock_mhz(); }
  int ordinal() const { return ordinal_; }

  void set_communicator(ncclComm_t comm) { comm_ = comm; }

  // --- a unit of split GEMVs ---------------------------------------------------------------------

  // Plans and allocates the rank's operands of `gemvs` (one dtype) and fills them.
  void prepare(const std::vector<SplitGemv>& gemvs, int ranks, int rank) {
    release();
    gemvs_ = gemvs;
    plan_ = plan_rank(gemvs, ranks, rank);
    dtype_ = gemvs.front().dtype;
    const int64_t element = element_size(dtype_);
    size_t workspace = 0;
    for (const SplitGemv& gemv : gemvs)
      workspace = std::max(workspace, xgemv_nccl_workspace_bytes(
                                          api_split(gemv.split), api_result(gemv.result), gemv.op,
                                          gemv.m, gemv.n, ranks, static_cast<int>(element)));
    weights_.allocate(plan_.weight_buffer_bytes, "the rank's matrices");
    x_.allocate(plan_.x_buffer_bytes, "the rank's x");
    y_.allocate(plan_.y_buffer_bytes, "the rank's y");
    y_ref_.allocate(std::max<int64_t>(1, plan_.largest_partial) * int64_t{sizeof(double)},
                    "the rank's reference");
    if (workspace > 0) workspace_.allocate(static_cast<int64_t>(workspace), "xgemv_nccl workspace");
    with_element_type(dtype_, [&](auto value) {
      using T = decltype(value);
      fill(weights_.as<T>(), weights_.bytes / element, rank_seed(kSeedA, rank));
      for (size_t g = 0; g < gemvs.size(); ++g) {
        const RankGemv& local = plan_.gemvs[g];
        const uint64_t seed = gemvs[g].split == Split::outputs ? kSeedX : rank_seed(kSeedX, rank);
        if (local.block.x_length > 0)
          fill(reinterpret_cast<T*>(x_.as<char>() + local.x_offset), local.block.x_length, seed);
      }
    });
    check_cuda(cudaStreamSynchronize(handles_.stream), "filling the operands");
  }

  // Every GEMV's local fp64 reference: op(A_r) x_r over the rank's block (combine_partials makes
  // the whole y of them).
  std::vector<std::vector<double>> references() {
    std::vector<std::vector<double>> partials;
    with_element_type(dtype_, [&](auto value) {
      using T = decltype(value);
      for (size_t g = 0; g < gemvs_.size(); ++g) {
        const RankGemv& local = plan_.gemvs[g];
        const RankBlock& block = local.block;
        partials.push_back(
            reference<T>({gemvs_[g].op == 'T', block.rows, block.columns, block.lda, 1, 1, 1.0, 0.0,
                          weight_pointer<T>(g), x_pointer<T>(g), y_pointer<T>(g),
                          y_ref_.as<double>(), 1, block.x_length, block.partial_length}));
      }
    });
    return partials;
  }

  // Enqueues the unit's calls on the rank's stream; the first refusal's text.
  std::string enqueue_unit() {
    return with_element_type(dtype_, [&](auto value) -> std::string {
      using T = decltype(value);
      const Scalar<T> alpha = 1, beta = 0;
      for (size_t g = 0; g < gemvs_.size(); ++g) {
        const SplitGemv& gemv = gemvs_[g];
        const RankGemv& local = plan_.gemvs[g];
        const SplitCall call{handles_.xgemv,
                             comm_,
                             api_split(gemv.split),
                             api_result(gemv.result),
                             local.starts.data(),
                             gemv.op,
                             gemv.m,
                             gemv.n,
                             local.block.lda,
                             workspace_.bytes ? workspace_.pointer : nullptr,
                             static_cast<size_t>(workspace_.bytes)};
        if (const std::string error = nccl_status_text(nccl_gemv(
                call, &alpha, weight_pointer<T>(g), x_pointer<T>(g), &beta, y_pointer<T>(g)));
            !error.empty())
          return (gemv.tag.empty() ? "" : gemv.tag + ": ") + nccl_gemv_function(gemv.dtype) + ": " +
                 error;
      }
      return std::string();
    });
  }

  // y set to NaN, one run of the unit (its graph when there is one), every GEMV's y back in
  // logical order; or the refusal's text.
  std::string run_once(std::vector<std::vector<double>>& outputs) {
    check_cuda(cudaMemsetAsync(y_.pointer, 0xFF, static_cast<size_t>(y_.bytes), handles_.stream),
               "poison y");
    if (graph_.exec) {
      launch(graph_);
    } else if (std::string error = enqueue_unit(); !error.empty()) {
      check_cuda(cudaStreamSynchronize(handles_.stream), "the refused run");
      return error;
    }
    with_element_type(dtype_, [&](auto value) {
      using T = decltype(value);
      const std::vector<T> stored =
          copy_to_host<T>(y_.pointer, y_.bytes / int64_t{sizeof(T)}, "the checked run");
      outputs.clear();
      for (const RankGemv& local : plan_.gemvs) {
        const T* first = stored.data() + local.y_offset / int64_t{sizeof(T)};
        std::vector<double>& y = outputs.emplace_back(static_cast<size_t>(local.block.y_length));
        std::transform(first, first + y.size(), y.begin(), to_double<T>);
      }
    });
    return "";
  }

  // The stream read of the unit's whole weight buffer: the one-GPU ceiling.
  std::string enqueue_read() { return enqueue_stream_read(weights_.pointer, weights_.bytes / 16); }
  int64_t weight_buffer_bytes() const { return weights_.bytes; }

  // --- collectives ---------------------------------------------------------------------------

  void prepare_exchange(const ExchangeCase& exchange, int ranks) {
    release();
    exchange_ = exchange;
    send_.allocate(exchange.bytes, "exchange input");
    receive_.allocate(exchange.bytes * ranks, "exchange output");
    check_cuda(cudaMemsetAsync(send_.pointer, 0, static_cast<size_t>(send_.bytes), handles_.stream),
               "cudaMemsetAsync");
    check_cuda(cudaStreamSynchronize(handles_.stream), "exchange setup");
  }

  std::string enqueue_exchanges(int count) {
    for (int i = 0; i < count; ++i) {
      const size_t elements = static_cast<size_t>(exchange_.count());
      const ncclResult_t result =
          exchange_.collective == kAllReduce
              ? ncclAllReduce(send_.pointer, receive_.pointer, elements, nccl_type(exchange_.dtype),
                              ncclSum, comm_, handles_.stream)
              : ncclAllGather(send_.pointer, receive_.pointer, elements, nccl_type(exchange_.dtype),
                              comm_, handles_.stream);
      if (result != ncclSuccess) return exchange_.collective + ": " + nccl_error_text(result);
    }
    return "";
  }

  // --- capture and timing --------------------------------------------------------------------

  // Captures enqueue() into the rank's graph; why it could not be ("" when it was).
  std::string capture_graph(const std::function<std::string()>& enqueue) {
    drop_graph();
    graph_ = capture(enqueue);
    return graph_.error;
  }

  void drop_graph() { graph_ = Graph(); }

  // Warm-up, then timed repetitions: the L2 flushed (if asked), an all-reduce of one value so
  // that every rank starts together, then the unit (its graph, or enqueue()) between two events.
  // Microseconds per call (calls per repetition); stops at the first refusal or when another
  // rank has failed (`stop`).
  RankTimes time(const TimingPlan& plan, bool flush_l2, int calls,
                 const std::function<std::string()>& enqueue, const std::atomic<bool>& stop) {
    RankTimes times;
    const auto prepare = [&](int repetition) -> std::string {
      if (stop) return "stopped: another rank failed";
      if (flush_l2)
        check_cuda(cudaMemsetAsync(flush_.pointer, repetition & 0xFF,
                                   static_cast<size_t>(flush_.bytes), handles_.stream),
                   "L2 flush");
      check_nccl(ncclAllReduce(barrier_.pointer, barrier_.pointer, 1, ncclFloat32, ncclSum, comm_,
                               handles_.stream),
                 "the starting all-reduce");
      return "";
    };
    const auto body = [&]() -> std::string {
      if (graph_.exec) return launch(graph_);
      std::string error = enqueue();
      if (!error.empty())
        check_cuda(cudaStreamSynchronize(handles_.stream), "a refused repetition");
      return error;
    };
    times.error =
        time_repetitions(plan.warmup_batches, plan.batches, calls, prepare, body, times.us);
    return times;
  }

  // Frees the unit's buffers and graph.
  void release() {
    drop_graph();
    for (DeviceMemory* buffer : {&weights_, &x_, &y_, &y_ref_, &workspace_, &send_, &receive_})
      if (buffer->pointer) buffer->release("freeing a rank's buffers");
  }

 private:
  template <class T>
  T* weight_pointer(size_t g) const {
    return reinterpret_cast<T*>(weights_.as<char>() + plan_.gemvs[g].weight_offset);
  }
  template <class T>
  T* x_pointer(size_t g) const {
    return reinterpret_cast<T*>(x_.as<char>() + plan_.gemvs[g].x_offset);
  }
  template <class T>
  T* y_pointer(size_t g) const {
    return reinterpret_cast<T*>(y_.as<char>() + plan_.gemvs[g].y_offset);
  }

  ncclComm_t comm_ = nullptr;
  DeviceMemory flush_, barrier_;
  std::vector<SplitGemv> gemvs_;
  RankPlan plan_;
  Dtype dtype_ = Dtype::bf16;
  DeviceMemory weights_, x_, y_, y_ref_, workspace_;
  ExchangeCase exchange_;
  DeviceMemory send_, receive_;
  Graph graph_;
};

// CUDA devices visible, 0 with the reason when there is none.
int visible_gpus(std::string* why_none) {
  if (nvidia_driver_or_gpu_missing()) {
    *why_none = xgemv_status_string(XGEMV_STATUS_NO_DEVICE);
    return 0;
  }
  int count = 0;
  if (const cudaError_t error = cudaGetDeviceCount(&count); error != cudaSuccess) {
    *why_none = cudaGetErrorString(error);
    return 0;
  }
  if (count == 0) *why_none = "no CUDA device visible";
  return count;
}

// The version of the NCCL library loaded, "2.28.9".
std::string nccl_version() {
  int code = 0;
  if (ncclGetVersion(&code) != ncclSuccess) return "unknown";
  // NCCL_VERSION(X, Y, Z): X * 10000 + Y * 100 + Z since 2.9, X * 1000 + Y * 100 + Z before.
  const int major = code >= 10000 ? code / 10000 : code / 1000;
  const int minor = code >= 10000 ? code / 100 % 100 : code / 100 % 10;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(code % 100);
}

// A rank on each of the first `gpus` CUDA devices, one thread per rank for every phase of a
// measurement, NCCL communicators over the first P of them, and the measurements: split GEMVs
// (checked, then timed) and collectives.
class NcclBench {
 public:
  struct SplitTiming {
    bool flush_l2 = false;  // before every repetition
    bool graph = false;     // one CUDA graph per rank, replayed (stream launches if capture fails)
    bool ceiling = false;   // first the one-GPU read of the weights (on one GPU only)
  };
  // Every rank built in its own thread; throws when one cannot be set up.
  explicit NcclBench(int gpus) : ranks_(static_cast<size_t>(gpus)) {
    ranks_in_use_ = gpus;  // every rank is built in its own thread
    on_ranks([&](std::unique_ptr<Rank>& rank, int r) { rank = std::make_unique<Rank>(r); });
    ranks_in_use_ = 0;
  }

  // A destructor cannot report: what failed was reported when it was used.
  ~NcclBench() {
    try {
      destroy_communicators();
      ranks_in_use_ = static_cast<int>(ranks_.size());
      on_ranks([](std::unique_ptr<Rank>& rank, int) { rank.reset(); });
    } catch (const std::exception&) {
    }
  }

  // GPU 0's device, clocks and driver and NCCL's version into `info`; every GPU's name.
  std::vector<std::string> describe(RunInfo& info) const {
    check_cuda(cudaSetDevice(0), "cudaSetDevice");
    ranks_.front()->describe(info);
    info.nccl = nccl_version();
    std::vector<std::string> devices;
    for (const auto& rank : ranks_) devices.push_back(rank->name());
    return devices;
  }

  // GPU 0's free memory now.
  int64_t free_bytes() const {
    check_cuda(cudaSetDevice(0), "cudaSetDevice");
    size_t free = 0, total = 0;
    check_cuda(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
    return static_cast<int64_t>(free);
  }

  int sm_clock_mhz() const { return ranks_.front()->sm_clock_mhz(); }

  // Communicators over the first `ranks` GPUs (those of the previous count destroyed first).
  void use_gpus(int ranks) {
    if (ranks < 1 || ranks > static_cast<int>(ranks_.size()))
      throw std::invalid_argument("use_gpus: " + std::to_string(ranks) + " of " +
                                  std::to_string(ranks_.size()) + " GPUs");
    destroy_communicators();
    std::vector<int> ordinals(static_cast<size_t>(ranks));
    for (int r = 0; r < ranks; ++r) ordinals[r] = ranks_[r]->ordinal();
    communicators_.assign(static_cast<size_t>(ranks), nullptr);
    check_nccl(ncclCommInitAll(communicators_.data(), ranks, ordinals.data()), "ncclCommInitAll");
    for (int r = 0; r < ranks; ++r) ranks_[r]->set_communicator(communicators_[r]);
    ranks_in_use_ = ranks;
  }

  // A list of split GEMVs run as one unit on every rank (a bandwidth case, a decode step): the
  // ranks' operands filled and their fp64 references computed, every rank's output checked after
  // one run (and after one replay of its graph), then timed; `prototype` filled in (P, mode,
  // check, time), after the ceiling's record where there is one. Throws when a device fails.
  std::vector<Record> run_split(const Record& prototype, const std::vector<SplitGemv>& gemvs,
                                const SplitTiming& timing, const TimingPlan& plan) {
    const int ranks = ranks_in_use_;
    std::vector<Record> rows;
    Record row = prototype;
    row.gpus = ranks;
    on_ranks([&](std::unique_ptr<Rank>& rank, int r) { rank->prepare(gemvs, ranks, r); });

    if (timing.ceiling && ranks == 1) {
      Record read = ceiling_record(row, ranks_.front()->weight_buffer_bytes());
      time_on_ranks(read, plan, timing.flush_l2, 1, [](Rank& rank) { return rank.enqueue_read(); });
      rows.push_back(read);
    }

    // References: every rank's partials, then the whole y of every GEMV and what each rank
    // must end with.
    std::vector<std::vector<std::vector<double>>> partials(static_cast<size_t>(ranks));
    on_ranks([&](std::unique_ptr<Rank>& rank, int r) { partials[r] = rank->references(); });
    std::vector<std::vector<std::vector<double>>> expected(static_cast<size_t>(ranks));
    for (size_t g = 0; g < gemvs.size(); ++g) {
      const std::vector<int64_t> starts = even_starts(gemvs[g].split_length(), ranks);
      std::vector<std::vector<double>> of_gemv;
      for (int r = 0; r < ranks; ++r) of_gemv.push_back(std::move(partials[r][g]));
      const std::vector<double> whole = combine_partials(gemvs[g], starts, of_gemv);
      for (int r = 0; r < ranks; ++r)
        expected[r].push_back(expected_output(gemvs[g], starts, r, whole));
    }
    partials.clear();

    // A checked run with stream launches; then, for a graph, the capture and a checked replay.
    check_unit(row, gemvs, expected, "");
    row.mode = "stream";
    if (row.status == "ok" && timing.graph) {
      if (capture_all(row, [](Rank& rank) { return rank.enqueue_unit(); })) {
        row.mode = "graph";
        check_unit(row, gemvs, expected, " (graph)");
      }
    }
    if (row.status == "ok")
      time_on_ranks(row, plan, timing.flush_l2, 1, [](Rank& rank) { return rank.enqueue_unit(); });
    on_ranks([](std::unique_ptr<Rank>& rank, int) { rank->release(); });
    rows.push_back(row);
    return rows;
  }

  // A collective on every rank, `calls` back to back in one graph per rank (stream launches if
  // capture fails).
  Record run_exchange(const Record& prototype, const ExchangeCase& exchange, const TimingPlan& plan,
                      int calls) {
    const int ranks = ranks_in_use_;
    Record row = prototype;
    row.gpus = ranks;
    on_ranks([&](std::unique_ptr<Rank>& rank, int) { rank->prepare_exchange(exchange, ranks); });
    // One collective on every rank first: the connections it needs are made outside the capture.
    std::vector<std::string> errors(static_cast<size_t>(ranks));
    on_ranks([&](std::unique_ptr<Rank>& rank, int r) {
      errors[r] = rank->enqueue_exchanges(1);
      check_cuda(cudaDeviceSynchronize(), "the first exchange");
    });
    fail_on_error(row, errors);
    row.mode = "stream";
    const auto enqueue = [calls](Rank& rank) { return rank.enqueue_exchanges(calls); };
    if (row.status == "ok" && capture_all(row, enqueue)) row.mode = "graph";
    if (row.status == "ok") time_on_ranks(row, plan, false, calls, enqueue);
    on_ranks([](std::unique_ptr<Rank>& rank, int) { rank->release(); });
    return row;
  }

 private:
  // Runs work(rank, r) for every rank in use, each in a thread of its own with the rank's GPU
  // current, and waits for all of them. When one fails, the communicators are aborted so that
  // the ranks waiting for it in a collective return; the first failure is rethrown.
  template <class F>
  void on_ranks(F&& work) {
    const int ranks = ranks_in_use_;
    std::vector<std::exception_ptr> errors(static_cast<size_t>(ranks));
    std::vector<std::thread> threads;
    for (int r = 0; r < ranks; ++r)
      threads.emplace_back([&, r] {
        try {
          check_cuda(cudaSetDevice(r), "cudaSetDevice");
          work(ranks_[r], r);
        } catch (...) {
          errors[r] = std::current_exception();
          abort_communicators();
        }
      });
    for (std::thread& thread : threads) thread.join();
    for (const std::exception_ptr& error : errors)
      if (error) std::rethrow_exception(error);
  }

  void abort_communicators() {
    std::lock_guard<std::mutex> lock(abort_mutex_);
    if (stopping_.exchange(true)) return;
    for (ncclComm_t& comm : communicators_)
      if (comm) ncclCommAbort(comm);
    communicators_.clear();  // aborted: nothing left to destroy
  }

  // ncclCommDestroy on every rank at once, each in its thread.
  void destroy_communicators() {
    if (communicators_.empty()) return;
    ranks_in_use_ = static_cast<int>(communicators_.size());
    on_ranks([&](std::unique_ptr<Rank>& rank, int r) {
      rank->set_communicator(nullptr);
      check_nccl(ncclCommDestroy(communicators_[r]), "ncclCommDestroy");
    });
    communicators_.clear();
    ranks_in_use_ = 0;
  }

  // Captures every rank's graph; when any rank's capture fails, none keeps one (the ranks must
  // run the same collectives the same way) and the reason is printed: stream launches then.
  bool capture_all(const Record& row, const std::function<std::string(Rank&)>& enqueue) {
    const int ranks = ranks_in_use_;
    std::vector<std::string> errors(static_cast<size_t>(ranks));
    on_ranks([&](std::unique_ptr<Rank>& rank, int r) {
      errors[r] = rank->capture_graph([&] { return enqueue(*rank); });
    });
    for (int r = 0; r < ranks; ++r)
      if (!errors[r].empty()) {
        std::cout << "xgemv-nccl-bench: " << row.label() << " on " << ranks
                  << " GPU(s): capture failed on rank " << r << " (" << errors[r]
                  << "): timed with stream launches" << std::endl;
        on_ranks([](std::unique_ptr<Rank>& rank, int) { rank->drop_graph(); });
        return false;
      }
    return true;
  }

  // The timed repetitions of enqueue() on every rank at once into `row` (calls per repetition):
  // per repetition the slowest rank and the fastest, then the medians; GPU 0's clock after them.
  void time_on_ranks(Record& row, const TimingPlan& plan, bool flush_l2, int calls,
                     const std::function<std::string(Rank&)>& enqueue) {
    std::vector<RankTimes> times(static_cast<size_t>(ranks_in_use_));
    on_ranks([&](std::unique_ptr<Rank>& rank, int r) {
      times[r] = rank->time(
          plan, flush_l2, calls, [&] { return enqueue(*rank); }, stopping_);
    });
    row.calls_per_batch = calls;
    row.sm_clock_mhz = sm_clock_mhz();
    std::vector<std::string> errors;
    for (const RankTimes& rank : times) errors.push_back(rank.error);
    if (fail_on_error(row, errors)) return;
    std::vector<double> slowest, fastest;
    for (size_t repetition = 0; repetition < times.front().us.size(); ++repetition) {
      double high = 0, low = times.front().us[repetition];
      for (const RankTimes& rank : times) {
        high = std::max(high, rank.us[repetition]);
        low = std::min(low, rank.us[repetition]);
      }
      slowest.push_back(high);
      fastest.push_back(low);
    }
    row.set_times(slowest);
    row.fastest_rank_us = median(fastest);
  }

  // The first rank's error, if any, as the row's status.
  static bool fail_on_error(Record& row, const std::vector<std::string>& errors) {
    for (size_t r = 0; r < errors.size(); ++r)
      if (!errors[r].empty()) {
        row.status = "error: rank " + std::to_string(r) + ": " + errors[r];
        return true;
      }
    return false;
  }

  // One run of the unit on every rank at once, each rank's y against what it must end with.
  void check_unit(Record& row, const std::vector<SplitGemv>& gemvs,
                  const std::vector<std::vector<std::vector<double>>>& expected,
                  const std::string& how) {
    const int ranks = ranks_in_use_;
    std::vector<std::vector<std::vector<double>>> outputs(static_cast<size_t>(ranks));
    std::vector<std::string> errors(static_cast<size_t>(ranks));
    on_ranks([&](std::unique_ptr<Rank>& rank, int r) { errors[r] = rank->run_once(outputs[r]); });
    if (fail_on_error(row, errors)) return;
    for (int r = 0; r < ranks; ++r)
      for (size_t g = 0; g < gemvs.size(); ++g)
        row.add_check(
            "rank " + std::to_string(r) + (gemvs[g].tag.empty() ? "" : " " + gemvs[g].tag) + how,
            compare_to_reference(gemvs[g].whole_case(), outputs[r][g], expected[r][g]));
  }

  std::vector<std::unique_ptr<Rank>> ranks_;
  int ranks_in_use_ = 0;
  std::vector<ncclComm_t> communicators_;
  std::atomic<bool> stopping_{false};
  std::mutex abort_mutex_;
};

std::string version_text() {
  return "xgemv-nccl-bench " XGEMV_PROJECT_VERSION ", libxgemv " +
         std::string(xgemv_version_string()) + ", NCCL " + nccl_version() + ", commit " +
         project_commit("");
}

std::string gib(int64_t bytes) { return fixed(double(bytes) / double(int64_t{1} << 30), 2); }

std::string counts_text(const std::vector<int>& counts) {
  std::string text;
  for (int count : counts) text += (text.empty() ? "" : ", ") + std::to_string(count);
  return text;
}

// The models of the decode part with the layers `budget_bytes` holds.
std::vector<TensorParallelStep> plan_steps(int64_t budget_bytes) {
  std::vector<TensorParallelStep> steps;
  for (const std::string& name : kTensorParallelModels)
    steps.push_back(plan_tensor_parallel_step(*find_decode_model(name), budget_bytes));
  return steps;
}

std::string describe_step(const TensorParallelStep& step) {
  return step.model.name + ": " + std::to_string(step.layers) + " of " +
         std::to_string(step.model.layers) + " layers (" + gib(step.layer_bytes) +
         " GiB each on one GPU), " + std::to_string(step.gemvs.size()) + " split GEMVs, " +
         fixed(double(step.bytes()) / 1e9, 2) + " GB per step";
}

void list_plan(const NcclOptions& options) {
  const std::vector<SplitGemv> cases =
      options.wants_part(kPartBandwidth)
          ? bandwidth_cases(options.bandwidth_dtypes(), options.quick)
          : std::vector<SplitGemv>{};
  if (options.gpus)
    std::cout << "P = " << counts_text(gpu_counts(options.gpus)) << " (the first " << options.gpus
              << " GPU(s))\n";
  else
    std::cout << "P = 1, 2, 4, ... up to every visible GPU\n";
  for (const SplitGemv& gemv : cases)
    std::cout << kPartBandwidth << ' ' << gemv.label() << "  (" << gib(gemv.whole_case().a_bytes())
              << " GiB)\n";
  if (options.wants_part(kPartDecode)) {
    if (options.decode_gib > 0) {
      for (const TensorParallelStep& step : plan_steps(options.decode_budget(0)))
        std::cout << kPartDecode << ' ' << describe_step(step) << '\n';
    } else {
      for (const TensorParallelStep& step : plan_steps(0))
        std::cout << kPartDecode << ' ' << step.model.name << ": as many of its "
                  << step.model.layers << " layers (" << gib(step.layer_bytes)
                  << " GiB each on one GPU) as GPU 0 holds less " << gib(kDecodeMemoryMargin)
                  << " GiB"
                  << (options.quick ? " (at most " + gib(kQuickDecodeBudget) + " GiB)" : "")
                  << '\n';
    }
  }
  if (options.wants_part(kPartExchange)) {
    for (const ExchangeCase& exchange : exchange_cases())
      std::cout << kPartExchange << ' ' << exchange.label() << '\n';
    for (int64_t bytes : kExchangeBytes)
      std::cout << kPartExchange << ' ' << exchange_share_gemv(bytes).label() << "  ("
                << (bytes >> 10) << " KB partials)\n";
  }
  std::cout << cases.size() << " bandwidth cases\n";
}

// Adds the rows measured and prints them.
void add_rows(std::vector<Record>& rows, std::vector<Record> measured) {
  const size_t first = rows.size();
  rows.insert(rows.end(), measured.begin(), measured.end());
  derive_metrics(rows);
  for (size_t i = first; i < rows.size(); ++i) std::cout << progress_line(rows[i]) << std::endl;
}

int run(int argc, char** argv) {
  const auto parsed =
      CommandLine<NcclOptions>(version_text, XGEMV_BENCH_DEFAULT_OUT_DIR).parse_or_exit(argc, argv);
  if (const int* exit_code = std::get_if<int>(&parsed)) return *exit_code;
  const NcclOptions& options = std::get<NcclOptions>(parsed);
  if (options.list) {
    list_plan(options);
    return 0;
  }

  std::string why_no_gpu;
  const int visible = visible_gpus(&why_no_gpu);
  if (visible == 0) {
    std::cout << "xgemv-nccl-bench: no GPU (" << why_no_gpu << "): nothing to measure\n";
    return options.skip_exit_code;
  }
  if (options.gpus > visible) {
    std::cerr << "xgemv-nccl-bench: --gpus " << options.gpus << ": only " << visible
              << " CUDA device(s) visible\n";
    return 2;
  }
  const int gpus = options.gpus ? options.gpus : visible;

  RunInfo info = describe_run(argc, argv, options, "no host library",
                              "stream (bandwidth) and graph (decode, exchanges)");
  const TimingPlan plan = plan_batches(options.quick);
  info.method = "one thread per GPU; median over " + std::to_string(plan.batches) +
                " repetitions (after " + std::to_string(plan.warmup_batches) +
                ") of the slowest rank's time between CUDA events on its stream, every "
                "repetition started by an all-reduce of one value; every rank's output checked "
                "against an fp64 reference before it is timed";
  const std::vector<int> counts = gpu_counts(gpus);
  std::unique_ptr<NcclBench> bench;
  std::vector<TensorParallelStep> steps;
  int64_t decode_budget = 0;
  try {
    bench = std::make_unique<NcclBench>(gpus);
    info.facts = {{"GPUs visible", visible}, {"P", counts}, {"GPUs used", bench->describe(info)}};
    if (options.wants_part(kPartDecode)) {
      decode_budget = options.decode_budget(bench->free_bytes());
      info.facts["decode budget (GiB of weights on one GPU)"] = gib(decode_budget);
      steps = plan_steps(decode_budget);
    }
  } catch (const std::exception& error) {
    // GPUs that are there but fail to set up are a failure, not a machine without them.
    std::cerr << "xgemv-nccl-bench: stopped: " << error.what() << '\n';
    return 2;
  }
  const std::vector<SplitGemv> cases =
      options.wants_part(kPartBandwidth)
          ? bandwidth_cases(options.bandwidth_dtypes(), options.quick)
          : std::vector<SplitGemv>{};
  const std::vector<ExchangeCase> exchanges =
      options.wants_part(kPartExchange) ? exchange_cases() : std::vector<ExchangeCase>{};
  std::cout << "device " << info.device << " (SM clock max " << info.sm_clock_max_mhz
            << " MHz), driver " << info.driver << ", CUDA " << info.cuda << ", NCCL " << info.nccl
            << "\ncommit " << info.commit << "; " << visible
            << " GPU(s) visible, P = " << counts_text(counts) << "; " << cases.size()
            << " bandwidth cases, " << steps.size() << " decode models, " << exchanges.size()
            << " exchanges; median of " << plan.batches << " repetitions"
            << (options.quick ? " (quick)" : "") << "\n";
  if (gpus == 1)
    std::cout << "xgemv-nccl-bench: 1 GPU: P = 1 only; the targets on several GPUs are not "
                 "measured\n";
  for (const TensorParallelStep& step : steps)
    std::cout << "decode " << describe_step(step)
              << (step.layers == 0
                      ? ": not run (one layer exceeds the budget of " + gib(decode_budget) + " GiB)"
                      : "")
              << '\n';
  std::cout << progress_header() << std::endl;

  std::vector<Record> rows;
  int exit_code = 0;
  try {
    for (int ranks : counts) {
      bench->use_gpus(ranks);
      const bool one = ranks == 1;
      for (const SplitGemv& gemv : cases)
        add_rows(rows, bench->run_split(split_record(kPartBandwidth, gemv), {gemv},
                                        {true, false, one}, plan));
      for (const TensorParallelStep& step : steps)
        if (step.layers > 0)
          add_rows(rows, bench->run_split(tensor_parallel_record(step), step.gemvs,
                                          {false, true, one}, plan));
      for (const ExchangeCase& exchange : exchanges)
        add_rows(rows, {bench->run_exchange(exchange_record(exchange), exchange, plan,
                                            exchanges_per_repetition(options.quick))});
      if (!exchanges.empty())
        for (int64_t bytes : kExchangeBytes) {
          const SplitGemv gemv = exchange_share_gemv(bytes);
          Record share = split_record(kPartExchange, gemv);
          share.exchange_bytes = bytes;
          add_rows(rows, bench->run_split(share, {gemv}, {true, true, false}, plan));
        }
    }
  } catch (const std::exception& error) {
    // A fault poisons a context, and the communicators are aborted: report what was measured.
    std::cerr << "xgemv-nccl-bench: stopped: " << error.what() << '\n';
    exit_code = 2;
  }

  return finish_run(options.out_dir, info, rows, exit_code);
}

}  // namespace
}  // namespace xgemv::bench

int main(int argc, char** argv) { return xgemv::bench::run(argc, argv); }
