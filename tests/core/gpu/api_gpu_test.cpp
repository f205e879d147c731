// The C API with a real handle: handle state, argument errors and quick returns that touch
// nothing (poisoned pointers would fault the device), NULL operands, and a call captured into a
// CUDA graph on a user stream with device scalars.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "argument_cases.hpp"
#include "gemv_case.hpp"
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

template <class T>
class ApiWithHandle : public GpuHandlesTest {
 protected:
  using S = ScalarOf<T>;
  static xgemv_handle handle() { return gpu().xgemv(); }

  // Nothing may have been launched that touched a poisoned pointer.
  static void expect_device_healthy() {
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
  this->expect_device_healthy();
}

// Quick returns with poisoned or NULL data pointers: SUCCESS, nothing read or written.
TYPED_TEST(ApiWithHandle, QuickReturnsTouchNothing) {
  using T = TypeParam;
  using S = typename TestFixture::S;
  struct QuickReturn {
    const char *what;
    char trans;
    int64_t m, n, batch_count;
    double alpha, beta;
  };
  constexpr QuickReturn kQuickReturns[] = {
      {"m = 0, op N", 'N', 0, 5, 1, 1.5, 0.5},
      {"m = 0, op T (y has n elements)", 'T', 0, 5, 1, 1.5, 0.5},
      {"n = 0, op N (y has m elements)", 'N', 5, 0, 1, 1.5, 0.5},
      {"n = 0, op T", 'T', 5, 0, 1, 1.5, 0.5},
      {"batch_count = 0", 'N', 5, 5, 0, 1.5, 0.5},
      {"alpha = 0, beta = 1", 'T', 5, 5, 1, 0, 1},
  };
  ASSERT_EQ(xgemv_set_pointer_mode(this->handle(), XGEMV_POINTER_MODE_HOST), XGEMV_STATUS_SUCCESS);
  for (const QuickReturn &q : kQuickReturns) {
    const S alpha = static_cast<S>(q.alpha), beta = static_cast<S>(q.beta);
    const GemvOperands<T> poisoned_data{&alpha, poisoned<const T>(), poisoned<const T>(), &beta,
                                        poisoned<T>()};
    const GemvOperands<T> null_data{&alpha, nullptr, nullptr, &beta, nullptr};
    const GemvShape shape{q.trans, q.m, q.n, std::max<int64_t>(1, q.m), 1, 1};
    const BatchLayout batch{q.batch_count, 100, 100, 100};
    for (const bool batched : {false, true}) {
      if (!batched && q.batch_count != 1) continue;
      for (const GemvOperands<T> &operands : {poisoned_data, null_data}) {
        SCOPED_TRACE(std::string(q.what) + (batched ? ", strided batched" : ", single") +
                     (operands.a ? ", poisoned pointers" : ", NULL pointers"));
        EXPECT_EQ(xgemv_gemv<T>(this->handle(), shape, batched ? &batch : nullptr, operands),
                  XGEMV_STATUS_SUCCESS);
      }
    }
  }
  this->expect_device_healthy();
}

// Each operand NULL in turn, with the others real, in both pointer modes: NULL_POINTER and y
// left as it was.
TYPED_TEST(ApiWithHandle, NullOperandsAreReported) {
  using T = TypeParam;
  using S = typename TestFixture::S;
  const GemvShape shape{'N', 4, 3, 4, 1, 1};
  GuardedDeviceBuffer<T> a(shape.matrix_extent()), x(shape.x_extent()), y(shape.y_extent());
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
      for (const bool batched : {false, true}) {
        SCOPED_TRACE(std::string("NULL ") + name + (batched ? ", strided batched" : ", single") +
                     (mode == XGEMV_POINTER_MODE_HOST ? ", host scalars" : ", device scalars"));
        const BatchLayout batch{1, 0, 0, 0};
        EXPECT_EQ(xgemv_gemv<T>(this->handle(), shape, batched ? &batch : nullptr, operands),
                  XGEMV_STATUS_NULL_POINTER);
      }
  }
  this->expect_device_healthy();
  EXPECT_TRUE(bitwise_equal("y", y.download(), y_initial));
  EXPECT_EQ(xgemv_set_pointer_mode(this->handle(), XGEMV_POINTER_MODE_HOST), XGEMV_STATUS_SUCCESS);
}

// The call is stream-ordered with no hidden synchronisation, allocation or copy: it can be
// captured into a CUDA graph on the handle's stream (device scalars, as graphs need), and the
// graph computes the same y as OpenBLAS.
TEST(GraphCapture, CapturedCallComputesTheReferenceResult) {
  GpuHandles gpu;
  const GemvShape shape{'T', 1031, 67, 1031, 1, 1};
  RandomSource random(case_seed("GraphCapture", 0));
  std::vector<float> a(shape.matrix_extent()), x(shape.x_extent()), y(shape.y_extent());
  for (std::vector<float> *v : {&a, &x, &y})
    for (float &value : *v) value = random.element<float>();
  const float alpha = 0.75f, beta = -1.25f;
  GuardedDeviceBuffer<float> a_device(a.size()), x_device(x.size()), y_device(y.size()), scalars(2);
  a_device.upload(a);
  x_device.upload(x);
  y_device.upload(y);
  scalars.upload({alpha, beta});

  cudaStream_t stream = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  ASSERT_EQ(xgemv_set_stream(gpu.xgemv(), stream), XGEMV_STATUS_SUCCESS);
  ASSERT_EQ(xgemv_set_pointer_mode(gpu.xgemv(), XGEMV_POINTER_MODE_DEVICE), XGEMV_STATUS_SUCCESS);
  cudaGraph_t graph = nullptr;
  check_cuda(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "begin capture");
  const xgemv_status status = xgemv_sgemv(
      gpu.xgemv(), shape.trans, shape.m, shape.n, scalars.data(), a_device.data(), shape.lda,
      x_device.data(), shape.incx, scalars.data() + 1, y_device.data(), shape.incy);
  const cudaError_t capture = cudaStreamEndCapture(stream, &graph);
  EXPECT_EQ(status, XGEMV_STATUS_SUCCESS);
  ASSERT_EQ(capture, cudaSuccess) << cudaGetErrorString(capture);
  cudaGraphExec_t executable = nullptr;
  check_cuda(cudaGraphInstantiate(&executable, graph, 0), "cudaGraphInstantiate");
  check_cuda(cudaGraphLaunch(executable, stream), "cudaGraphLaunch");
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");

  const std::vector<float> result = y_device.download();
  const std::vector<float> reference =
      openblas_gemv<float>(shape, alpha, a.data(), x.data(), beta, y.data());
  std::vector<double> want(reference.begin(), reference.end());
  const std::vector<double> magnitude = reference_gemv(shape, std::fabs(alpha), a.data(), x.data(),
                                                      std::fabs(beta), y.data(), Magnitude{});
  EXPECT_TRUE(within_error_bound("OpenBLAS", shape, BatchLayout{}, 1, result, want, magnitude));

  cudaGraphExecDestroy(executable);
  cudaGraphDestroy(graph);
  EXPECT_EQ(xgemv_set_stream(gpu.xgemv(), nullptr), XGEMV_STATUS_SUCCESS);
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace xgemv_test
