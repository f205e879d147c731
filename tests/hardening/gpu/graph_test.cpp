// CUDA graphs: xgemv calls of every element type captured on a user stream in global capture
// mode (where any hidden synchronisation, allocation or copy on the legacy stream makes the
// capture fail), then replayed many times with new data written into the same buffers between
// replays; every replay's y is checked.
//  - Device scalars are read by the kernels at replay time: new alpha and beta values each
//    replay, the special ones included (alpha = 0 with NaN in A and x, beta = 0 with NaN in y,
//    alpha = 0 and beta = 1 leaving y as it is).
//  - Host scalars are read during the call, so the values at capture time hold for every replay.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "host_problem.hpp"
#include "support/graph_capture.hpp"
#include "support/test_profile.hpp"

namespace xgemv_test {
namespace {

// The scalars of replay r: every special combination in turn, then random ones.
template <class S>
std::pair<S, S> scalars_for_replay(int replay, RandomSource &random) {
  const S a = static_cast<S>(random.nontrivial_scalar()),
          b = static_cast<S>(random.nontrivial_scalar());
  switch (replay % 6) {
    case 0: return {S(0), S(1)};
    case 1: return {S(0), b};
    case 2: return {a, S(0)};
    case 3: return {S(0), S(0)};
    case 4: return {a, S(1)};
    default: return {a, b};
  }
}

// One captured call: fixed device buffers (and device scalars), new contents every replay.
class GraphedCall {
 public:
  virtual ~GraphedCall() = default;
  // Records the call on the handle's stream (capturing); returns its status.
  virtual xgemv_status record(xgemv_handle handle) = 0;
  // Writes new A, x, y (and, with device scalars, alpha and beta) for the next replay.
  virtual void refill(int replay, RandomSource &random) = 0;
  // After the replay: what is wrong with y, or "".
  virtual std::string check() = 0;
};

template <class T>
class TypedGraphedCall final : public GraphedCall {
 public:
  using S = ScalarOf<T>;

  TypedGraphedCall(const GemvShape &shape, bool device_scalars, S host_alpha, S host_beta)
      : shape_(shape),
        device_scalars_(device_scalars),
        captured_alpha_(host_alpha),
        captured_beta_(host_beta),
        host_alpha_(host_alpha),
        host_beta_(host_beta),
        a_(shape.matrix_extent()),
        x_(shape.x_extent()),
        y_(shape.y_extent()),
        scalars_(2) {}

  xgemv_status record(xgemv_handle handle) override {
    const GemvOperands<T> operands{device_scalars_ ? scalars_.data() : &host_alpha_, a_.data(),
                                   x_.data(), device_scalars_ ? scalars_.data() + 1 : &host_beta_,
                                   y_.data()};
    return xgemv_gemv<T>(handle, shape_, nullptr, operands);
  }

  void refill(int replay, RandomSource &random) override {
    // Host scalars changed after the capture must not matter: the replay uses the captured ones.
    const auto [alpha, beta] = device_scalars_ ? scalars_for_replay<S>(replay, random)
                                               : std::pair{captured_alpha_, captured_beta_};
    host_alpha_ = static_cast<S>(random.nontrivial_scalar());
    host_beta_ = static_cast<S>(random.nontrivial_scalar());
    problem_ = std::make_unique<HostProblem<T>>(shape_, alpha, beta, random);
    a_.upload(problem_->a);
    x_.upload(problem_->x);
    y_.upload(problem_->y);
    scalars_.upload({alpha, beta});
  }

  std::string check() override {
    std::string failure = problem_->check(y_.download());
    for (const ::testing::AssertionResult &guards :
         {a_.guards_intact("A"), x_.guards_intact("x"), y_.guards_intact("y")})
      if (!guards) failure += std::string(" ") + guards.message();
    return failure.empty() ? ""
                           : (device_scalars_ ? "device scalars: " : "host scalars: ") + failure;
  }

 private:
  GemvShape shape_;
  bool device_scalars_;
  S captured_alpha_, captured_beta_;
  S host_alpha_, host_beta_;  // what host-scalar calls point at
  GuardedDeviceBuffer<T> a_, x_, y_;
  GuardedDeviceBuffer<S> scalars_;
  std::unique_ptr<HostProblem<T>> problem_;
};

// Every element type and op, split reductions in both ops, strided vectors.
std::vector<std::unique_ptr<GraphedCall>> graphed_calls(bool device_scalars) {
  const int64_t long_side = by_profile<int64_t>(20000, 2000);
  std::vector<std::unique_ptr<GraphedCall>> calls;
  calls.push_back(std::make_unique<TypedGraphedCall<float>>(
      GemvShape{'T', long_side, 3, long_side + 1, 1, 1}, device_scalars, 1.5f, -0.5f));
  calls.push_back(std::make_unique<TypedGraphedCall<double>>(GemvShape{'N', 3, long_side, 3, -2, 1},
                                                             device_scalars, -0.75, 2.0));
  calls.push_back(std::make_unique<TypedGraphedCall<__half>>(GemvShape{'N', 1031, 67, 1033, 1, -3},
                                                             device_scalars, 0.5f, 0.0f));
  calls.push_back(std::make_unique<TypedGraphedCall<__nv_bfloat16>>(
      GemvShape{'C', 257, 129, 257, 2, 1}, device_scalars, 0.0f, 1.0f));
  return calls;
}

class GraphReplay : public ::testing::TestWithParam<bool> {};

TEST_P(GraphReplay, ReplaysWithNewDataGiveTheReferenceResult) {
  const bool device_scalars = GetParam();
  const int replays = by_profile(60, 6);
  xgemv_handle handle = nullptr;
  ASSERT_EQ(xgemv_create(&handle), XGEMV_STATUS_SUCCESS);
  cudaStream_t stream = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  ASSERT_EQ(xgemv_set_stream(handle, stream), XGEMV_STATUS_SUCCESS);
  ASSERT_EQ(xgemv_set_pointer_mode(
                handle, device_scalars ? XGEMV_POINTER_MODE_DEVICE : XGEMV_POINTER_MODE_HOST),
            XGEMV_STATUS_SUCCESS);
  const std::vector<std::unique_ptr<GraphedCall>> calls = graphed_calls(device_scalars);

  std::optional<GraphCapture> capture(std::in_place, stream, cudaStreamCaptureModeGlobal);
  std::vector<xgemv_status> statuses;
  for (const auto &call : calls) statuses.push_back(call->record(handle));
  const cudaError_t captured = capture->end();
  ASSERT_EQ(captured, cudaSuccess) << "the capture failed: " << cudaGetErrorString(captured);
  for (size_t i = 0; i < statuses.size(); ++i)
    EXPECT_EQ(statuses[i], XGEMV_STATUS_SUCCESS) << "call " << i << " during capture";

  RandomSource random(case_seed("GraphReplay", device_scalars));
  int failures = 0;
  for (int replay = 0; replay < replays && failures < 5; ++replay) {
    for (const auto &call : calls) call->refill(replay, random);
    capture->replay();
    for (size_t i = 0; i < calls.size(); ++i)
      if (const std::string failure = calls[i]->check(); !failure.empty()) {
        ADD_FAILURE() << "replay " << replay << ", call " << i << ": " << failure;
        ++failures;
      }
  }

  capture.reset();  // the graph before the handle whose workspace its kernels use
  EXPECT_EQ(xgemv_destroy(handle), XGEMV_STATUS_SUCCESS);
  cudaStreamDestroy(stream);
}

INSTANTIATE_TEST_SUITE_P(Scalars, GraphReplay, ::testing::Values(false, true),
                         [](const auto &info) { return info.param ? "Device" : "Host"; });

}  // namespace
}  // namespace xgemv_test
