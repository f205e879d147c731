// The quantized GEMV calls with a real handle: the bits (the same call twice, column j whatever
// nrhs is and whatever the other columns hold, whatever the entry point, the alignment of the
// column and the pointer mode: the order of every sum depends on the weight's shape and format
// only); a call captured in a CUDA graph gives the direct call's bits; argument errors, NULL
// operands and quick returns with poisoned or NULL pointers touch nothing.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "qgemv_argument_cases.hpp"
#include "qgemv_case.hpp"
#include "support/graph_capture.hpp"

namespace xgemv_test::quant {
namespace {

// An odd device-side address that no allocation covers: a kernel that touches it faults.
template <class P>
P *poisoned() {
  return reinterpret_cast<P *>(uintptr_t{1});
}

void expect_device_healthy() {
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

// The widest call of the invariance checks: one column past a group of 16.
constexpr int64_t kWideNrhs = 17;

// A weight of each family of formats, both activation types, both kinds of y; odd ldx and ldy so
// that the columns lie at every alignment.
std::vector<QuantCase> invariance_cases() {
  const FormatOptions kFormats[] = {{XGEMV_QFORMAT_INT4, 128, 1, 1},
                                    {XGEMV_QFORMAT_INT4, 32, 0, 0},
                                    {XGEMV_QFORMAT_INT8, 0, 0, 0},
                                    {XGEMV_QFORMAT_FP8_E4M3, 0, 0, 0},
                                    {XGEMV_QFORMAT_FP8_E4M3_BLOCK, 0, 0, 0}};
  std::vector<QuantCase> cases;
  for (const FormatOptions &f : kFormats)
    for (const xgemv_datatype activation : kActivationTypes)
      for (const bool fp32_y : {false, true}) {
        QuantCase c;
        c.format = f;
        c.activation = activation;
        c.y_type = fp32_y ? XGEMV_R_32F : activation;
        c.scale_type = kScaleTypes[cases.size() % 3];
        c.outputs = 67;
        c.inputs = f.format == XGEMV_QFORMAT_INT4 ? 2048 : 2049;
        c.nrhs = kWideNrhs;
        c.ldx_padding = 1;
        c.ldy_padding = 3;
        cases.push_back(c);
      }
  return cases;
}

uint64_t test_seed(size_t index) {
  return case_seed(::testing::UnitTest::GetInstance()->current_test_info()->name(), index);
}

// Fresh random values in columns [first, last) of images of X and Y.
template <class A, class Y>
void refill_columns(const QuantProblem<A, Y> &p, std::vector<A> &x, std::vector<Y> &y,
                    int64_t first, int64_t last, RandomSource &random) {
  for (int64_t column = first; column < last; ++column) {
    for (int64_t k = 0; k < p.c.inputs; ++k) x[p.x_index(column, k)] = random.element<A>();
    for (int64_t o = 0; o < p.c.outputs; ++o) y[p.y_index(column, o)] = random.element<Y>();
  }
}

// A skip mask for bitwise_equal over Y: true everywhere but in columns [first, last).
template <class A, class Y>
std::vector<bool> all_but_columns(const QuantProblem<A, Y> &p, int64_t first, int64_t last) {
  std::vector<bool> skip(p.y.size(), true);
  for (int64_t column = first; column < last; ++column)
    for (int64_t o = 0; o < p.c.outputs; ++o) skip[p.y_index(column, o)] = false;
  return skip;
}

class QgemvBits : public GpuHandlesTest {};

// Column j of the nrhs = 17 call against, for every nrhs in 1..16: the nrhs call with fresh data
// in the columns past nrhs (columns < nrhs equal bit for bit, Y past them untouched), and the
// nrhs = 17 call with fresh data in every column but nrhs - 1 (that column equal).
TEST_F(QgemvBits, ColumnsDoNotDependOnNrhsOrOnTheOtherColumns) {
  const xgemv_handle h = gpu().xgemv();
  const std::vector<QuantCase> cases = invariance_cases();
  const auto check = [&]<class A, class Y>(QuantProblem<A, Y> &p, QuantDeviceProblem<A, Y> &device,
                                           RandomSource &random) {
    const auto run = [&](const std::vector<A> &x, const std::vector<Y> &y, int64_t nrhs) {
      return device.run(h, x, y, nrhs, false, XGEMV_POINTER_MODE_HOST);
    };
    const std::vector<Y> wide = run(p.x, p.y, kWideNrhs);
    for (int64_t nrhs = 1; nrhs < kWideNrhs; ++nrhs) {
      SCOPED_TRACE("nrhs " + std::to_string(nrhs));
      std::vector<A> x = p.x;
      std::vector<Y> y = p.y;
      refill_columns(p, x, y, nrhs, kWideNrhs, random);
      const std::vector<Y> narrow = run(x, y, nrhs);
      const std::vector<bool> outside_first = all_but_columns(p, 0, nrhs);
      EXPECT_TRUE(bitwise_equal("columns < nrhs against nrhs = 17", narrow, wide, &outside_first));
      std::vector<bool> first(outside_first.size());
      for (size_t i = 0; i < first.size(); ++i) first[i] = !outside_first[i];
      EXPECT_TRUE(bitwise_equal("Y past nrhs columns (untouched)", narrow, y, &first));

      std::vector<A> x_one = p.x;
      std::vector<Y> y_one = p.y;
      refill_columns(p, x_one, y_one, 0, nrhs - 1, random);
      refill_columns(p, x_one, y_one, nrhs, kWideNrhs, random);
      const std::vector<bool> outside_one = all_but_columns(p, nrhs - 1, nrhs);
      EXPECT_TRUE(bitwise_equal("column nrhs - 1 with other data in every other column",
                                run(x_one, y_one, kWideNrhs), wide, &outside_one));
    }
  };
  for (size_t index = 0; index < cases.size(); ++index)
    with_device_problem(cases[index], test_seed(index), check);
}

// Column j of the nrhs = 17 call (host scalars) against xgemv_qgemv on that column alone (odd
// ldx and ldy: every column at another alignment) and against the nrhs = 17 call with device
// scalars.
TEST_F(QgemvBits, ColumnsDoNotDependOnEntryPointAlignmentOrPointerMode) {
  const xgemv_handle h = gpu().xgemv();
  const std::vector<QuantCase> cases = invariance_cases();
  const auto check = [&]<class A, class Y>(QuantProblem<A, Y> &p, QuantDeviceProblem<A, Y> &device,
                                           RandomSource &) {
    const std::vector<Y> wide = device.run(h, p.x, p.y, kWideNrhs, false, XGEMV_POINTER_MODE_HOST);
    EXPECT_TRUE(bitwise_equal("nrhs = 17 with device scalars",
                              device.run(h, p.x, p.y, kWideNrhs, false, XGEMV_POINTER_MODE_DEVICE),
                              wide));
    for (int64_t column = 0; column < kWideNrhs; ++column) {
      SCOPED_TRACE("xgemv_qgemv on column " + std::to_string(column));
      const std::vector<Y> single =
          device.run(h, p.x, p.y, 1, true, XGEMV_POINTER_MODE_HOST, column);
      const std::vector<bool> outside = all_but_columns(p, column, column + 1);
      EXPECT_TRUE(bitwise_equal("the column", single, wide, &outside));
      std::vector<bool> inside(outside.size());
      for (size_t i = 0; i < inside.size(); ++i) inside[i] = !outside[i];
      EXPECT_TRUE(bitwise_equal("the other columns (untouched)", single, p.y, &inside));
    }
  };
  for (size_t index = 0; index < cases.size(); ++index)
    with_device_problem(cases[index], test_seed(index), check);
}

// A call captured on a user stream with device scalars, then replayed twice: the bits of the
// direct call.
TEST(QgemvGraph, CapturedCallGivesTheDirectCallsBits) {
  GpuHandles gpu;
  QuantCase c;
  c.format = {XGEMV_QFORMAT_INT4, 128, 1, 1};
  c.activation = XGEMV_R_16BF;
  c.y_type = XGEMV_R_16BF;
  c.outputs = 1031;
  c.inputs = 4096;
  c.nrhs = 4;
  RandomSource random(case_seed("QgemvGraph", 0));
  using A = __nv_bfloat16;
  QuantProblem<A, A> p = make_problem<A, A>(c, random);
  p.storage = pack_storage(p.weight, p.layout);
  QuantDeviceProblem<A, A> device(p, p.storage);
  ASSERT_EQ(device.weight_status(), XGEMV_STATUS_SUCCESS);
  const std::vector<A> direct =
      device.run(gpu.xgemv(), p.x, p.y, c.nrhs, false, XGEMV_POINTER_MODE_DEVICE);

  cudaStream_t stream = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  ASSERT_EQ(xgemv_set_stream(gpu.xgemv(), stream), XGEMV_STATUS_SUCCESS);
  ASSERT_EQ(xgemv_set_pointer_mode(gpu.xgemv(), XGEMV_POINTER_MODE_DEVICE), XGEMV_STATUS_SUCCESS);
  GuardedDeviceBuffer<A> y(p.y.size());
  GraphCapture capture(stream, cudaStreamCaptureModeThreadLocal);
  const xgemv_status status =
      xgemv_qgemv_nrhs(gpu.xgemv(), device.scalars().data(), device.weight(), device.x().data(),
                       c.ldx(), device.scalars().data() + 1, y.data(), c.ldy(), c.y_type, c.nrhs);
  const cudaError_t captured = capture.end();
  EXPECT_EQ(status, XGEMV_STATUS_SUCCESS);
  ASSERT_EQ(captured, cudaSuccess) << cudaGetErrorString(captured);
  for (int replay = 0; replay < 2; ++replay) {
    y.upload(p.y);
    capture.replay();
    EXPECT_TRUE(bitwise_equal("Y of the replayed graph", y.download(), direct)) << replay;
  }
  EXPECT_EQ(xgemv_set_stream(gpu.xgemv(), nullptr), XGEMV_STATUS_SUCCESS);
  cudaStreamDestroy(stream);
}

// A 48 x 256 INT4 weight on real storage, with Y of known contents.
class QgemvWithHandle : public GpuHandlesTest {
 protected:
  void SetUp() override {
    GpuHandlesTest::SetUp();
    info_ = make_info({XGEMV_QFORMAT_INT4, 128, 0, 0}, XGEMV_R_16F, XGEMV_R_16F,
                      kArgumentCaseOutputs, kArgumentCaseInputs);
    ASSERT_EQ(xgemv_qweight_get_layout(&info_, &layout_), XGEMV_STATUS_SUCCESS);
    storage_ = std::make_unique<GuardedDeviceBuffer<uint8_t>>(layout_.bytes);
    RandomSource random(case_seed("QgemvWithHandle", 0));
    storage_->upload(pack_storage(random_plain_weight(info_, random), layout_));
    weight_ = std::make_unique<OwnedQweight>(info_, storage_->data());
    ASSERT_EQ(weight_->status(), XGEMV_STATUS_SUCCESS);
    constexpr int64_t kColumns = 2;
    x_ = std::make_unique<GuardedDeviceBuffer<__half>>(kArgumentCaseInputs * kColumns);
    y_ = std::make_unique<GuardedDeviceBuffer<__half>>(kArgumentCaseOutputs * kColumns);
    y_initial_.resize(y_->size());
    for (__half &value : y_initial_) value = random.element<__half>();
    y_->upload(y_initial_);
  }
  void TearDown() override {
    expect_device_healthy();
    EXPECT_TRUE(bitwise_equal("Y", y_->download(), y_initial_));
    EXPECT_TRUE(y_->guards_intact("Y"));
    EXPECT_EQ(xgemv_set_pointer_mode(gpu().xgemv(), XGEMV_POINTER_MODE_HOST), XGEMV_STATUS_SUCCESS);
  }
  static xgemv_handle handle() { return gpu().xgemv(); }

  xgemv_qweight_info info_{};
  xgemv_qweight_layout layout_{};
  std::unique_ptr<GuardedDeviceBuffer<uint8_t>> storage_;
  std::unique_ptr<OwnedQweight> weight_;
  std::unique_ptr<GuardedDeviceBuffer<__half>> x_, y_;
  std::vector<__half> y_initial_;
};

// The argument errors of the NULL-handle tables, with the handle real and the data poisoned: the
// same statuses, nothing launched.
TEST_F(QgemvWithHandle, ArgumentErrorsTouchNothing) {
  const float one = 1;
  ASSERT_EQ(xgemv_set_pointer_mode(handle(), XGEMV_POINTER_MODE_HOST), XGEMV_STATUS_SUCCESS);
  for (const NrhsCase &c : kNrhsCases) {
    if (!is_argument_error(c)) continue;
    SCOPED_TRACE(c.what);
    EXPECT_EQ(xgemv_qgemv_nrhs(handle(), &one, c.null_weight ? nullptr : weight_->get(),
                               poisoned<const void>(), c.ldx, &one, poisoned<void>(), c.ldy,
                               static_cast<xgemv_datatype>(c.y_type), c.nrhs),
              c.expected_with_null_handle);
    EXPECT_EQ(xgemv_get_last_kernel_variant(handle()), nullptr);
  }
  for (const SingleVectorCase &c : single_vector_cases(XGEMV_R_16F)) {
    if (!is_argument_error(c)) continue;
    SCOPED_TRACE(c.what);
    EXPECT_EQ(xgemv_qgemv(handle(), &one, c.null_weight ? nullptr : weight_->get(),
                          poisoned<const void>(), &one, poisoned<void>(),
                          static_cast<xgemv_datatype>(c.y_type)),
              c.expected_with_null_handle);
  }
}

// Each of alpha, beta, x and y NULL in turn, the others real, in both pointer modes and through
// both entry points: NULL_POINTER, Y untouched.
TEST_F(QgemvWithHandle, NullOperandsAreReported) {
  const float host_scalars[2] = {1.0f, 0.5f};
  GuardedDeviceBuffer<float> device_scalars(2);
  device_scalars.upload({1.0f, 0.5f});
  struct Operands {
    const float *alpha, *beta;
    const void *x;
    void *y;
  };
  for (const xgemv_pointer_mode mode : {XGEMV_POINTER_MODE_HOST, XGEMV_POINTER_MODE_DEVICE}) {
    ASSERT_EQ(xgemv_set_pointer_mode(handle(), mode), XGEMV_STATUS_SUCCESS);
    const float *scalars = mode == XGEMV_POINTER_MODE_HOST ? host_scalars : device_scalars.data();
    const Operands real{scalars, scalars + 1, x_->data(), y_->data()};
    const std::pair<const char *, Operands> cases[] = {
        {"alpha", {nullptr, real.beta, real.x, real.y}},
        {"beta", {real.alpha, nullptr, real.x, real.y}},
        {"x", {real.alpha, real.beta, nullptr, real.y}},
        {"y", {real.alpha, real.beta, real.x, nullptr}},
    };
    for (const auto &[name, p] : cases) {
      SCOPED_TRACE(std::string("NULL ") + name +
                   (mode == XGEMV_POINTER_MODE_HOST ? ", host scalars" : ", device scalars"));
      EXPECT_EQ(xgemv_qgemv_nrhs(handle(), p.alpha, weight_->get(), p.x, kArgumentCaseInputs,
                                 p.beta, p.y, kArgumentCaseOutputs, XGEMV_R_16F, 2),
                XGEMV_STATUS_NULL_POINTER);
      EXPECT_EQ(xgemv_qgemv(handle(), p.alpha, weight_->get(), p.x, p.beta, p.y, XGEMV_R_32F),
                XGEMV_STATUS_NULL_POINTER);
    }
  }
}

// nrhs = 0 reads nothing, not even the scalars; alpha = 0 with beta = 1 reads neither x nor y:
// SUCCESS with NULL or poisoned pointers, nothing launched.
TEST_F(QgemvWithHandle, QuickReturnsTouchNothing) {
  ASSERT_EQ(xgemv_set_pointer_mode(handle(), XGEMV_POINTER_MODE_HOST), XGEMV_STATUS_SUCCESS);
  for (const bool null_data : {true, false}) {
    SCOPED_TRACE(null_data ? "NULL pointers" : "poisoned pointers");
    const void *x = null_data ? nullptr : poisoned<const void>();
    void *y = null_data ? nullptr : poisoned<void>();
    EXPECT_EQ(xgemv_qgemv_nrhs(handle(), nullptr, weight_->get(), x, kArgumentCaseInputs, nullptr,
                               y, kArgumentCaseOutputs, XGEMV_R_16F, 0),
              XGEMV_STATUS_SUCCESS);
    EXPECT_EQ(xgemv_get_last_kernel_variant(handle()), nullptr);
    const float zero = 0, one = 1;
    EXPECT_EQ(xgemv_qgemv_nrhs(handle(), &zero, weight_->get(), x, kArgumentCaseInputs, &one, y,
                               kArgumentCaseOutputs, XGEMV_R_16F, 17),
              XGEMV_STATUS_SUCCESS);
    EXPECT_EQ(xgemv_get_last_kernel_variant(handle()), nullptr);
    EXPECT_EQ(xgemv_qgemv(handle(), &zero, weight_->get(), x, &one, y, XGEMV_R_32F),
              XGEMV_STATUS_SUCCESS);
    EXPECT_EQ(xgemv_get_last_kernel_variant(handle()), nullptr);
  }
}

}  // namespace
}  // namespace xgemv_test::quant
