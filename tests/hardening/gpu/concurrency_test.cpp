// Many host threads at once against one process, each with its own xgemv handle and
// non-blocking stream (on device t % device_count), each keeping several calls in flight: mixed
// element types, ops, shapes (split reductions included, which use the handle's workspace and
// tile counters), increments and pointer modes. Every result is checked against the host
// definition of GEMV within the rounding bound, and y outside its elements must keep its bits.
#include <gtest/gtest.h>

#include <barrier>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "host_problem.hpp"
#include "support/test_profile.hpp"

namespace xgemv_test {
namespace {

// One call in flight on a stream; owns its host images and stream-ordered device buffers.
class InFlightCall {
 public:
  virtual ~InFlightCall() = default;
  // After the stream is synchronised: what is wrong with y, or "" when it is right.
  virtual std::string check() = 0;
};

template <class T>
class TypedCall final : public InFlightCall {
 public:
  using S = ScalarOf<T>;

  TypedCall(const GemvShape &shape, RandomSource &random, xgemv_handle handle, cudaStream_t stream)
      : problem_(shape, static_cast<S>(random.nontrivial_scalar()),
                 random.integer(0, 3) == 0 ? S(0) : static_cast<S>(random.nontrivial_scalar()),
                 random),
        stream_(stream) {
    const bool device_scalars = random.integer(0, 1) == 1;
    a_device_ = upload(problem_.a);
    x_device_ = upload(problem_.x);
    y_device_ = upload(problem_.y);
    scalars_device_ = upload(std::vector<S>{problem_.alpha, problem_.beta});
    check_status(xgemv_set_pointer_mode(
        handle, device_scalars ? XGEMV_POINTER_MODE_DEVICE : XGEMV_POINTER_MODE_HOST));
    const GemvOperands<T> operands{device_scalars ? scalars_device_ : &problem_.alpha, a_device_,
                                   x_device_, device_scalars ? scalars_device_ + 1 : &problem_.beta,
                                   y_device_};
    check_status(xgemv_gemv<T>(handle, shape, nullptr, operands));
  }

  ~TypedCall() override {
    for (void *p : {static_cast<void *>(a_device_), static_cast<void *>(x_device_),
                    static_cast<void *>(y_device_), static_cast<void *>(scalars_device_)})
      if (p != nullptr) cudaFreeAsync(p, stream_);
  }

  std::string check() override {
    std::vector<T> result(problem_.y.size());
    check_cuda(
        cudaMemcpy(result.data(), y_device_, result.size() * sizeof(T), cudaMemcpyDeviceToHost),
        "download y");
    return problem_.check(result);
  }

 private:
  static void check_status(xgemv_status status) {
    if (status != XGEMV_STATUS_SUCCESS)
      throw std::runtime_error(std::string("xgemv: ") + xgemv_status_string(status));
  }

  // A stream-ordered device copy (pageable source: staged before cudaMemcpyAsync returns).
  template <class E>
  E *upload(const std::vector<E> &host) {
    void *device = nullptr;
    check_cuda(cudaMallocAsync(&device, std::max<size_t>(1, host.size()) * sizeof(E), stream_),
               "cudaMallocAsync");
    check_cuda(cudaMemcpyAsync(device, host.data(), host.size() * sizeof(E), cudaMemcpyHostToDevice,
                               stream_),
               "upload");
    return static_cast<E *>(device);
  }

  HostProblem<T> problem_;
  cudaStream_t stream_;
  T *a_device_ = nullptr, *x_device_ = nullptr, *y_device_ = nullptr;
  S *scalars_device_ = nullptr;
};

// Shapes around the dispatch boundaries: tiny, odd, split reductions in both ops (long m for
// op T, long n for op N, with few outputs), and square.
constexpr int64_t kShapes[][2] = {{1, 1},       {7, 5},     {33, 17},   {257, 129},
                                  {20000, 3},   {3, 20000}, {4096, 64}, {64, 4096},
                                  {1031, 1031}, {65, 8000}, {8000, 65}};

std::unique_ptr<InFlightCall> issue_random_call(RandomSource &random, xgemv_handle handle,
                                                cudaStream_t stream) {
  static constexpr char kOps[] = {'N', 'T', 'C'};
  static constexpr int64_t kIncrements[] = {1, 1, -1, 2, -3};
  const auto &dims = kShapes[random.integer(0, std::size(kShapes) - 1)];
  GemvShape shape;
  shape.trans = kOps[random.integer(0, 2)];
  shape.m = dims[0];
  shape.n = dims[1];
  shape.lda = shape.m + random.integer(0, 3);
  shape.incx = kIncrements[random.integer(0, std::size(kIncrements) - 1)];
  shape.incy = kIncrements[random.integer(0, std::size(kIncrements) - 1)];
  switch (random.integer(0, 3)) {
    case 0: return std::make_unique<TypedCall<float>>(shape, random, handle, stream);
    case 1: return std::make_unique<TypedCall<double>>(shape, random, handle, stream);
    case 2: return std::make_unique<TypedCall<__half>>(shape, random, handle, stream);
    default: return std::make_unique<TypedCall<__nv_bfloat16>>(shape, random, handle, stream);
  }
}

struct ThreadReport {
  int checked = 0;
  std::vector<std::string> failures;
};

// One host thread: its own handle and stream; rounds of `in_flight` calls, then one
// synchronisation and the checks. All threads start issuing together.
ThreadReport run_thread(int index, int device, int rounds, int in_flight, std::barrier<> &start) {
  ThreadReport report;
  xgemv_handle handle = nullptr;
  cudaStream_t stream = nullptr;
  bool waited = false;
  try {
    check_cuda(cudaSetDevice(device), "cudaSetDevice");
    if (xgemv_create(&handle) != XGEMV_STATUS_SUCCESS) throw std::runtime_error("xgemv_create");
    check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    if (xgemv_set_stream(handle, stream) != XGEMV_STATUS_SUCCESS)
      throw std::runtime_error("xgemv_set_stream");
    RandomSource random(case_seed("Concurrency", index));
    start.arrive_and_wait();
    waited = true;
    for (int round = 0; round < rounds; ++round) {
      std::vector<std::unique_ptr<InFlightCall>> calls;
      for (int i = 0; i < in_flight; ++i)
        calls.push_back(issue_random_call(random, handle, stream));
      check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
      for (const auto &call : calls) {
        ++report.checked;
        if (std::string failure = call->check(); !failure.empty() && report.failures.size() < 3)
          report.failures.push_back(std::move(failure));
      }
    }
  } catch (const std::exception &error) {
    report.failures.push_back(std::string("thread stopped: ") + error.what());
  }
  if (!waited) start.arrive_and_drop();
  if (stream != nullptr) cudaStreamSynchronize(stream);
  xgemv_destroy(handle);
  if (stream != nullptr) cudaStreamDestroy(stream);
  return report;
}

TEST(Concurrency, ThreadsWithOwnHandlesAndStreamsGetCorrectResults) {
  const int threads = by_profile(16, 4), rounds = by_profile(12, 2), in_flight = by_profile(6, 2);
  int devices = 0;
  check_cuda(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  std::barrier<> start(threads);
  std::vector<ThreadReport> reports(threads);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back(
        [&, t] { reports[t] = run_thread(t, t % devices, rounds, in_flight, start); });
  for (std::thread &worker : workers) worker.join();

  int checked = 0;
  for (int t = 0; t < threads; ++t) {
    checked += reports[t].checked;
    for (const std::string &failure : reports[t].failures)
      ADD_FAILURE() << "thread " << t << " (device " << t % devices << "): " << failure;
  }
  EXPECT_EQ(checked, threads * rounds * in_flight);
  std::printf("concurrency: %d threads on %d device(s), %d calls checked\n", threads,
              std::min(devices, threads), checked);
}

}  // namespace
}  // namespace xgemv_test
