// The C API with a real handle: handle state (batch invariance included, set by call and by
// the environment), argument errors and quick returns that touch nothing (poisoned pointers
// would fault the device), NULL operands, through the single, strided-batched,
// few-right-hand-side and bias entry points, a call captured into a CUDA graph on a user stream
// with device scalars, and a handle created during a capture, whose captured call still splits
// its long reduction.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "argument_cases.hpp"
#include "support/gemv_case.hpp"
#include "support/graph_capture.hpp"
#include "support/graph_kernels.hpp"
#include "support/typed_tests.hpp"

namespace xgemv_test {
namespace {

// An odd device-side address that no allocation covers: a kernel that touches it faults.
template <class P>
P *poisoned() {
  return reinterpret_cast<P *>(uintptr_t{1});
}

TEST(Handle, KeepsStreamAndPointerMode) {
  GpuHandles gpu;
  const xgemv_handle handle = gpu.xgemv();
  cudaStream_t stream = reinterpret_cast<cudaStream_t>(uintptr_t{1});
  xgemv_pointer_mode mode = XGEMV_POINTER_MODE_DEVICE;
  ASSERT_EQ(xgemv_get_stream(handle, &stream), XGEMV_STATUS_SUCCESS);
  EXPECT_EQ(stream, nullptr) << "a new handle uses stream 0";
  ASSERT_EQ(xgemv_get_pointer_mode(handle, &mode), XGEMV_STATUS_SUCCESS);
  EXPECT_EQ(mode, XGEMV_POINTER_MODE_HOST) << "a new handle takes host scalars";

  cudaStream_t own_stream = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&own_stream, cudaStreamNonBlocking), "cudaStreamCreate");
  EXPECT_EQ(xgemv_set_stream(handle, own_stream), XGEMV_STATUS_SUCCESS);
  EXPECT_EQ(xgemv_get_stream(handle, &stream), XGEMV_STATUS_SUCCESS);
  EXPECT_EQ(stream, own_stream);
  EXPECT_EQ(xgemv_set_stream(handle, nullptr), XGEMV_STATUS_SUCCESS);
  check_cuda(cudaStreamDestroy(own_stream), "cudaStreamDestroy");

  EXPECT_EQ(xgemv_set_pointer_mode(handle, XGEMV_POINTER_MODE_DEVICE), XGEMV_STATUS_SUCCESS);
  EXPECT_EQ(xgemv_get_pointer_mode(handle, &mode), XGEMV_STATUS_SUCCESS);
  EXPECT_EQ(mode, XGEMV_POINTER_MODE_DEVICE);
  EXPECT_EQ(xgemv_set_pointer_mode(handle, static_cast<xgemv_pointer_mode>(7)),
            XGEMV_STATUS_INVALID_POINTER_MODE);
  EXPECT_EQ(xgemv_get_pointer_mode(handle, &mode), XGEMV_STATUS_SUCCESS);
  EXPECT_EQ(mode, XGEMV_POINTER_MODE_DEVICE) << "a rejected mode leaves the mode as it was";

  EXPECT_EQ(xgemv_get_stream(handle, nullptr), XGEMV_STATUS_NULL_POINTER);
  EXPECT_EQ(xgemv_get_pointer_mode(handle, nullptr), XGEMV_STATUS_NULL_POINTER);
}

// Sets (value) or unsets (nullopt) an environment variable for a scope, then restores it.
class ScopedEnvironment {
 public:
  ScopedEnvironment(const char *name, std::optional<std::string> value) : name_(name) {
    if (const char *old = std::getenv(name)) old_ = old;
    set(value);
  }
  ~ScopedEnvironment() { set(old_); }
  ScopedEnvironment(const ScopedEnvironment &) = delete;
  ScopedEnvironment &operator=(const ScopedEnvironment &) = delete;

 private:
  void set(const std::optional<std::string> &value) {
    if (value)
      setenv(name_, value->c_str(), 1);
    else
      unsetenv(name_);
  }
  const char *name_;
  std::optional<std::string> old_;
};

int batch_invariant(xgemv_handle handle) {
  int enabled = -1;
  EXPECT_EQ(xgemv_get_batch_invariant(handle, &enabled), XGEMV_STATUS_SUCCESS);
  return enabled;
}

TEST(Handle, BatchInvarianceIsOffByDefaultAndSettable) {
  const ScopedEnvironment unset("XGEMV_BATCH_INVARIANT", std::nullopt);
  GpuHandles gpu;
  const xgemv_handle handle = gpu.xgemv();
  EXPECT_EQ(batch_invariant(handle), 0) << "a new handle is not batch-invariant";
  EXPECT_EQ(xgemv_set_batch_invariant(handle, 1), XGEMV_STATUS_SUCCESS);
  EXPECT_EQ(batch_invariant(handle), 1);
  EXPECT_EQ(xgemv_set_batch_invariant(handle, 0), XGEMV_STATUS_SUCCESS);
  EXPECT_EQ(batch_invariant(handle), 0);
  EXPECT_EQ(xgemv_set_batch_invariant(handle, 7), XGEMV_STATUS_SUCCESS);
  EXPECT_EQ(batch_invariant(handle), 1) << "any non-zero value enables it";
  EXPECT_EQ(xgemv_get_batch_invariant(handle, nullptr), XGEMV_STATUS_NULL_POINTER);
}

// XGEMV_BATCH_INVARIANT is read by xgemv_create: "1" enables the mode on the handles it creates
// after it is set, "0" or no variable leaves it off; handles made before keep their mode.
TEST(Handle, EnvironmentEnablesBatchInvarianceAtCreation) {
  std::optional<GpuHandles> before;
  {
    const ScopedEnvironment unset("XGEMV_BATCH_INVARIANT", std::nullopt);
    before.emplace();
  }
  const std::pair<std::optional<std::string>, int> settings[] = {
      {"1", 1}, {"0", 0}, {std::nullopt, 0}};
  for (const auto &[value, expected] : settings) {
    SCOPED_TRACE("XGEMV_BATCH_INVARIANT=" + value.value_or("(unset)"));
    const ScopedEnvironment environment("XGEMV_BATCH_INVARIANT", value);
    GpuHandles gpu;
    EXPECT_EQ(batch_invariant(gpu.xgemv()), expected);
    EXPECT_EQ(batch_invariant(before->xgemv()), 0);
    // Still settable either way.
    const int flipped = expected == 0 ? 1 : 0;
    EXPECT_EQ(xgemv_set_batch_invariant(gpu.xgemv(), flipped), XGEMV_STATUS_SUCCESS);
    EXPECT_EQ(batch_invariant(gpu.xgemv()), flipped);
  }
}

// The entry points a table case may go through (the bias call with a NULL bias: the rules of the
// nrhs call).
enum class EntryPoint { single, strided_batched, several_rhs, bias };
constexpr EntryPoint kEntryPoints[] = {EntryPoint::single, EntryPoint::strided_batched,
                                       EntryPoint::several_rhs, EntryPoint::bias};

const char *entry_point_name(EntryPoint entry) {
  switch (entry) {
    case EntryPoint::single: return ", single";
    case EntryPoint::strided_batched: return ", strided batched";
    case EntryPoint::several_rhs: return ", nrhs";
    case EntryPoint::bias: return ", bias call with a NULL bias";
  }
  return "";
}

// One call of `shape` through `entry`: a batch of batch_count, or nrhs columns of X and Y with
// the smallest leading dimensions; incx = incy = 1.
template <class T>
xgemv_status call_entry_point(xgemv_handle handle, EntryPoint entry, const GemvShape &shape,
                              int64_t batch_count, int64_t nrhs, const GemvOperands<T> &operands) {
  switch (entry) {
    case EntryPoint::single: return xgemv_gemv<T>(handle, shape, nullptr, operands);
    case EntryPoint::strided_batched: {
      const BatchLayout batch{batch_count, 100, 100, 100};
      return xgemv_gemv<T>(handle, shape, &batch, operands);
    }
    case EntryPoint::several_rhs:
    case EntryPoint::bias: {
      const RhsLayout rhs{nrhs, std::max<int64_t>(1, shape.x_length()),
                          std::max<int64_t>(1, shape.y_length())};
      return entry == EntryPoint::bias ? call_gemv_bias<T>(handle, shape, rhs, operands, nullptr)
                                       : xgemv_gemv_nrhs<T>(handle, shape, rhs, operands);
    }
  }
  return XGEMV_STATUS_INTERNAL_ERROR;
}

template <class T>
class ApiWithHandle : public GpuHandlesTest {
 protected:
  using S = ScalarOf<T>;
  static xgemv_handle handle() { return gpu().xgemv(); }

  // A quick return: success, and nothing launched.
  static void expect_quick_return(xgemv_status status) {
    EXPECT_EQ(status, XGEMV_STATUS_SUCCESS);
    EXPECT_EQ(xgemv_get_last_kernel_variant(handle()), nullptr);
  }

  // After every test: nothing may have been launched that touched a poisoned pointer.
  void TearDown() override {
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  }
};
TYPED_TEST_SUITE(ApiWithHandle, ElementTypes);

TYPED_TEST(ApiWithHandle, ArgumentErrorsTouchNothing) {
  using T = TypeParam;
  using S = typename TestFixture::S;
  const S one = 1;
  const GemvOperands<T> operands{&one, poisoned<const T>(), poisoned<const T>(), &one,
                                 poisoned<T>()};
  ASSERT_EQ(xgemv_set_pointer_mode(this->handle(), XGEMV_POINTER_MODE_HOST), XGEMV_STATUS_SUCCESS);
  for (const bool batched : {false, true})
    for (const ArgumentCase &c : kArgumentCases) {
      if (!is_argument_error(c) || (!batched && c.batch_count != 1)) continue;
      SCOPED_TRACE(std::string(c.what) + (batched ? ", strided batched" : ", single"));
      const GemvShape shape{c.trans, c.m, c.n, c.lda, c.incx, c.incy};
      const BatchLayout batch{c.batch_count, 1, 1, 1};
      EXPECT_EQ(xgemv_gemv<T>(this->handle(), shape, batched ? &batch : nullptr, operands),
                c.expected_with_null_handle);
    }
  for (const NrhsArgumentCase &c : kNrhsArgumentCases) {
    if (!is_argument_error(c)) continue;
    SCOPED_TRACE(std::string(c.what) + ", nrhs");
    const GemvShape shape{c.trans, c.m, c.n, c.lda, 1, 1};
    EXPECT_EQ(xgemv_gemv_nrhs<T>(this->handle(), shape, RhsLayout{c.nrhs, c.ldx, c.ldy}, operands),
              c.expected_with_null_handle);
  }
  // The bias call: its element type first, then the nrhs call's checks; the bias poisoned too.
  for (const NrhsArgumentCase &c : kNrhsArgumentCases) {
    SCOPED_TRACE(std::string(c.what) + ", bias");
    const GemvShape shape{c.trans, c.m, c.n, c.lda, 1, 1};
    const RhsLayout rhs{c.nrhs, c.ldx, c.ldy};
    if (is_argument_error(c)) {
      EXPECT_EQ(call_gemv_bias<T>(this->handle(), shape, rhs, operands, poisoned<const T>()),
                c.expected_with_null_handle);
    }
    EXPECT_EQ(call_gemv_bias<T>(this->handle(), shape, rhs, operands, poisoned<const T>(),
                                static_cast<xgemv_datatype>(3)),
              XGEMV_STATUS_INVALID_VALUE);
  }
}

// A call that must return at once, for every entry point that takes it.
struct QuickReturn {
  const char *what;
  char trans;
  int64_t m, n, batch_count, nrhs;
  double alpha = 1.5, beta = 0.5;

  GemvShape shape() const { return {trans, m, n, std::max<int64_t>(1, m), 1, 1}; }
  // No output: no rows of y (m for op N, n otherwise), or no columns.
  bool no_output() const { return shape().y_length() == 0 || nrhs == 0; }
};

constexpr QuickReturn kQuickReturns[] = {
    {"m = 0, op N", 'N', 0, 5, 1, 1},
    {"m = 0, op T (y has n elements)", 'T', 0, 5, 1, 1},
    {"n = 0, op N (y has m elements)", 'N', 5, 0, 1, 1},
    {"n = 0, op T", 'T', 5, 0, 1, 1},
    {"m = 0 with nrhs = 3", 'N', 0, 5, 1, 3},
    {"n = 0, op T with nrhs = 3", 'T', 5, 0, 1, 3},
    {"m = n = 0 with nrhs = 17", 'T', 0, 0, 1, 17},
    {"batch_count = 0", 'N', 5, 5, 0, 1},
    {"nrhs = 0, op N", 'N', 5, 5, 1, 0},
    {"nrhs = 0, op T", 'T', 5, 5, 1, 0},
    {"alpha = 0, beta = 1", 'T', 5, 5, 1, 1, 0, 1},
    {"alpha = 0, beta = 1 with nrhs = 17", 'N', 5, 5, 1, 17, 0, 1},
};

// Quick returns with poisoned or NULL data pointers: SUCCESS, nothing read or written, nothing
// launched. The ones the shape alone decides (m, n, batch_count or nrhs = 0) need no scalars
// either: NULL alpha and beta are accepted there too.
TYPED_TEST(ApiWithHandle, QuickReturnsTouchNothing) {
  using T = TypeParam;
  using S = typename TestFixture::S;
  ASSERT_EQ(xgemv_set_pointer_mode(this->handle(), XGEMV_POINTER_MODE_HOST), XGEMV_STATUS_SUCCESS);
  for (const QuickReturn &q : kQuickReturns) {
    const S alpha = static_cast<S>(q.alpha), beta = static_cast<S>(q.beta);
    const GemvOperands<T> poisoned_data{&alpha, poisoned<const T>(), poisoned<const T>(), &beta,
                                        poisoned<T>()};
    const GemvOperands<T> null_data{&alpha, nullptr, nullptr, &beta, nullptr};
    const GemvOperands<T> null_everything{};
    const bool decided_by_shape = q.m == 0 || q.n == 0 || q.batch_count == 0 || q.nrhs == 0;
    const GemvShape shape = q.shape();
    for (const EntryPoint entry : kEntryPoints) {
      const bool takes_nrhs = entry == EntryPoint::several_rhs || entry == EntryPoint::bias;
      if (entry != EntryPoint::strided_batched && q.batch_count != 1) continue;
      if (!takes_nrhs && q.nrhs != 1) continue;
      for (const GemvOperands<T> &operands : {poisoned_data, null_data, null_everything}) {
        if (operands.alpha == nullptr && !decided_by_shape) continue;
        SCOPED_TRACE(std::string(q.what) + entry_point_name(entry) +
                     (operands.a              ? ", poisoned pointers"
                      : operands.alpha != nullptr ? ", NULL data pointers"
                                                  : ", NULL data and scalar pointers"));
        this->expect_quick_return(
            call_entry_point<T>(this->handle(), entry, shape, q.batch_count, q.nrhs, operands));
      }
    }
  }
}

// The bias call's quick returns, a poisoned bias included: only no output (no rows of Y, or
// nrhs = 0). They need no scalars either.
TYPED_TEST(ApiWithHandle, BiasQuickReturnsTouchNothing) {
  using T = TypeParam;
  using S = typename TestFixture::S;
  ASSERT_EQ(xgemv_set_pointer_mode(this->handle(), XGEMV_POINTER_MODE_HOST), XGEMV_STATUS_SUCCESS);
  for (const QuickReturn &q : kQuickReturns) {
    if (!q.no_output() || q.batch_count != 1) continue;  // with a bias the others compute
    const S alpha = static_cast<S>(q.alpha), beta = static_cast<S>(q.beta);
    const GemvOperands<T> poisoned_data{&alpha, poisoned<const T>(), poisoned<const T>(), &beta,
                                        poisoned<T>()};
    const GemvShape shape = q.shape();
    const RhsLayout rhs{q.nrhs, std::max<int64_t>(1, shape.x_length()),
                        std::max<int64_t>(1, shape.y_length())};
    for (const GemvOperands<T> &operands : {poisoned_data, GemvOperands<T>{}}) {
      SCOPED_TRACE(std::string(q.what) + (operands.a ? ", poisoned pointers" : ", NULL pointers"));
      this->expect_quick_return(
          call_gemv_bias<T>(this->handle(), shape, rhs, operands, poisoned<const T>()));
    }
  }
}

// Each operand NULL in turn, with the others real, in both pointer modes: NULL_POINTER and y
// left as it was; the bias call also with a real bias.
TYPED_TEST(ApiWithHandle, NullOperandsAreReported) {
  using T = TypeParam;
  using S = typename TestFixture::S;
  const GemvShape shape{'N', 4, 3, 4, 1, 1};
  constexpr int64_t kNrhs = 2;  // X and Y hold kNrhs columns; the single-vector calls use one
  GuardedDeviceBuffer<T> a(shape.matrix_extent()), x(kNrhs * shape.x_extent()),
      y(kNrhs * shape.y_extent()), bias(shape.y_extent());
  RandomSource random(case_seed("NullOperandsAreReported", 0));
  std::vector<T> y_initial(y.size());
  for (T &value : y_initial) value = random.element<T>();
  y.upload(y_initial);
  const S host_scalars[2] = {S(1), S(0.5)};
  GuardedDeviceBuffer<S> device_scalars(2);
  device_scalars.upload({S(1), S(0.5)});

  for (const xgemv_pointer_mode mode : {XGEMV_POINTER_MODE_HOST, XGEMV_POINTER_MODE_DEVICE}) {
    ASSERT_EQ(xgemv_set_pointer_mode(this->handle(), mode), XGEMV_STATUS_SUCCESS);
    const S *scalars = mode == XGEMV_POINTER_MODE_HOST ? host_scalars : device_scalars.data();
    const GemvOperands<T> real{scalars, a.data(), x.data(), scalars + 1, y.data()};
    const auto without = [&](auto member) {
      GemvOperands<T> operands = real;
      operands.*member = nullptr;
      return operands;
    };
    const std::pair<const char *, GemvOperands<T>> cases[] = {
        {"alpha", without(&GemvOperands<T>::alpha)}, {"A", without(&GemvOperands<T>::a)},
        {"x", without(&GemvOperands<T>::x)},         {"beta", without(&GemvOperands<T>::beta)},
        {"y", without(&GemvOperands<T>::y)},
    };
    for (const auto &[name, operands] : cases)
      for (const EntryPoint entry : kEntryPoints) {
        SCOPED_TRACE(std::string("NULL ") + name + entry_point_name(entry) +
                     (mode == XGEMV_POINTER_MODE_HOST ? ", host scalars" : ", device scalars"));
        EXPECT_EQ(call_entry_point<T>(this->handle(), entry, shape, 1, kNrhs, operands),
                  XGEMV_STATUS_NULL_POINTER);
      }
    for (const auto &[name, operands] : cases) {
      SCOPED_TRACE(std::string("NULL ") + name + ", bias call with a bias" +
                   (mode == XGEMV_POINTER_MODE_HOST ? ", host scalars" : ", device scalars"));
      EXPECT_EQ(call_gemv_bias<T>(this->handle(), shape, RhsLayout{kNrhs, shape.x_extent(),
                                                                   shape.y_extent()},
                                  operands, bias.data()),
                XGEMV_STATUS_NULL_POINTER);
    }
  }
  EXPECT_TRUE(bitwise_equal("y", y.download(), y_initial));
  EXPECT_EQ(xgemv_set_pointer_mode(this->handle(), XGEMV_POINTER_MODE_HOST), XGEMV_STATUS_SUCCESS);
}

// An fp32 problem of `shape` for the graph tests: random A, x and y on the host and on the
// device, and alpha, beta as device scalars (as graphs need).
class DeviceScalarProblem {
 public:
  DeviceScalarProblem(const GemvShape &shape, uint64_t seed)
      : shape_(shape),
        a_(shape.matrix_extent()),
        x_(shape.x_extent()),
        y_(shape.y_extent()),
        a_device_(a_.size()),
        x_device_(x_.size()),
        scalars_(2) {
    RandomSource random(seed);
    for (std::vector<float> *v : {&a_, &x_, &y_})
      for (float &value : *v) value = random.element<float>();
    a_device_.upload(a_);
    x_device_.upload(x_);
    scalars_.upload({kAlpha, kBeta});
  }

  // A device copy of the initial y, for a call to write.
  std::unique_ptr<GuardedDeviceBuffer<float>> initial_y() const {
    auto y = std::make_unique<GuardedDeviceBuffer<float>>(y_.size());
    y->upload(y_);
    return y;
  }
  // The call on `handle` (in device pointer mode) into y.
  xgemv_status call(xgemv_handle handle, float *y) const {
    return xgemv_sgemv(handle, shape_.trans, shape_.m, shape_.n, scalars_.data(), a_device_.data(),
                       shape_.lda, x_device_.data(), shape_.incx, scalars_.data() + 1, y,
                       shape_.incy);
  }
  // Whether a result is within the error bound of OpenBLAS on the same problem.
  ::testing::AssertionResult within_bound_of_openblas(const std::vector<float> &result) const {
    const std::vector<float> reference =
        openblas_gemv<float>(shape_, kAlpha, a_.data(), x_.data(), kBeta, y_.data());
    const std::vector<double> want(reference.begin(), reference.end());
    const std::vector<double> magnitude = reference_gemv(
        shape_, std::fabs(kAlpha), a_.data(), x_.data(), std::fabs(kBeta), y_.data(), Magnitude{});
    return within_error_bound("OpenBLAS", shape_, BatchLayout{}, 1, result, want, magnitude);
  }

 private:
  static constexpr float kAlpha = 0.75f, kBeta = -1.25f;
  GemvShape shape_;
  std::vector<float> a_, x_, y_;
  GuardedDeviceBuffer<float> a_device_, x_device_, scalars_;
};

// The call is stream-ordered with no hidden synchronisation, allocation or copy: it can be
// captured into a CUDA graph on the handle's stream (device scalars, as graphs need), and the
// graph computes the same y as OpenBLAS.
TEST(GraphCapture, CapturedCallComputesTheReferenceResult) {
  GpuHandles gpu;
  const DeviceScalarProblem problem({'T', 1031, 67, 1031, 1, 1}, case_seed("GraphCapture", 0));
  const auto y = problem.initial_y();
  cudaStream_t stream = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  ASSERT_EQ(xgemv_set_stream(gpu.xgemv(), stream), XGEMV_STATUS_SUCCESS);
  ASSERT_EQ(xgemv_set_pointer_mode(gpu.xgemv(), XGEMV_POINTER_MODE_DEVICE), XGEMV_STATUS_SUCCESS);
  GraphCapture capture(stream, cudaStreamCaptureModeThreadLocal);
  const xgemv_status status = problem.call(gpu.xgemv(), y->data());
  const cudaError_t captured = capture.end();
  EXPECT_EQ(status, XGEMV_STATUS_SUCCESS);
  ASSERT_EQ(captured, cudaSuccess) << cudaGetErrorString(captured);
  capture.replay();

  EXPECT_TRUE(problem.within_bound_of_openblas(y->download()));
  EXPECT_EQ(xgemv_set_stream(gpu.xgemv(), nullptr), XGEMV_STATUS_SUCCESS);
  cudaStreamDestroy(stream);
}

// A handle created inside a capture (as torch.cuda.graph's first call may do; global mode, the
// strictest) gets its workspace without breaking the capture, so its captured call splits a
// long reduction (grid.y of the graph's kernel > 1): the same variant and the same bits as a
// handle made outside any capture, within the OpenBLAS bound. The handle outlives the replay.
TEST(GraphCapture, HandleCreatedDuringCaptureSplitsLongReductions) {
  // A reduction of 20011 over 16 outputs: split into several blocks on any GPU.
  const DeviceScalarProblem problem({'T', 20011, 16, 20011, 1, 1},
                                    case_seed("GraphCaptureCreate", 0));
  const auto y = problem.initial_y(), y_outside = problem.initial_y();

  // The bits and variant of a handle made outside any capture.
  GpuHandles outside;
  ASSERT_EQ(xgemv_set_pointer_mode(outside.xgemv(), XGEMV_POINTER_MODE_DEVICE),
            XGEMV_STATUS_SUCCESS);
  ASSERT_EQ(problem.call(outside.xgemv(), y_outside->data()), XGEMV_STATUS_SUCCESS);
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  const char *const outside_variant = xgemv_get_last_kernel_variant(outside.xgemv());
  ASSERT_NE(outside_variant, nullptr);

  cudaStream_t stream = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  xgemv_handle inside = nullptr;
  std::optional<GraphCapture> capture(std::in_place, stream, cudaStreamCaptureModeGlobal);
  const xgemv_status created = xgemv_create(&inside);
  xgemv_status status = created;
  if (created == XGEMV_STATUS_SUCCESS) {
    xgemv_set_stream(inside, stream);
    xgemv_set_pointer_mode(inside, XGEMV_POINTER_MODE_DEVICE);
    status = problem.call(inside, y->data());
  }
  const cudaError_t captured = capture->end();
  ASSERT_EQ(created, XGEMV_STATUS_SUCCESS) << xgemv_cuda_error_string();
  EXPECT_EQ(status, XGEMV_STATUS_SUCCESS);
  ASSERT_EQ(captured, cudaSuccess) << cudaGetErrorString(captured);
  ASSERT_NE(capture->graph(), nullptr);
  const char *const inside_variant = xgemv_get_last_kernel_variant(inside);
  ASSERT_NE(inside_variant, nullptr);
  EXPECT_STREQ(inside_variant, outside_variant);
  EXPECT_GT(xgemv_test::largest_grid_y(capture->graph()), 1u)
      << "the captured " << inside_variant << " call did not split its reduction";
  capture->replay();

  const std::vector<float> result = y->download();
  EXPECT_TRUE(bitwise_equal("y of the captured call", result, y_outside->download()));
  EXPECT_TRUE(problem.within_bound_of_openblas(result));
  capture.reset();  // the graph before the handle whose workspace its kernels use
  EXPECT_EQ(xgemv_destroy(inside), XGEMV_STATUS_SUCCESS);
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace xgemv_test
