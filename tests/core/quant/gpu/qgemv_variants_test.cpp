// Every quantized kernel variant, forced, on the edge cases of every format and activation type
// it computes; a forced variant that does not compute a quantized problem refuses it
// (NOT_SUPPORTED, nothing launched, Y untouched), dense variants included; the automatic choice
// runs a quantized variant. The table is probed through the C ABI (a variant that refuses a
// 1-output quantized call is not quantized for that format and type), so a new variant is tested
// without touching this file.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "qgemv_case.hpp"
#include "support/kernel_variants.hpp"
#include "support/test_profile.hpp"

namespace xgemv_test::quant {
namespace {

// A format and an activation type: what a quantized variant may or may not compute.
struct QuantKind {
  FormatOptions format;
  xgemv_datatype activation;
};

std::vector<QuantKind> every_kind() {
  std::vector<QuantKind> kinds;
  for (const FormatOptions &f : kEveryFormat)
    for (const xgemv_datatype activation : kActivationTypes) kinds.push_back({f, activation});
  return kinds;
}

std::string kind_name(const QuantKind &kind) {
  return test_name(kind.format) + " " + datatype_name(kind.activation);
}

// The smallest weight of a kind: one output, one group of inputs (one input for the per-output
// formats), its storage all v = 0 with scales 0.
class ProbeWeight {
 public:
  explicit ProbeWeight(const QuantKind &kind)
      : info_(make_info(kind.format, kind.activation, XGEMV_R_16F, 1,
                        kind.format.format == XGEMV_QFORMAT_INT4 ? kind.format.group_size : 1)) {
    if (xgemv_qweight_get_layout(&info_, &layout_) != XGEMV_STATUS_SUCCESS)
      throw std::invalid_argument("probe weight: " + describe(info_));
    storage_ = std::make_unique<GuardedDeviceBuffer<uint8_t>>(layout_.bytes);
    storage_->upload(pack_storage(make_plain_weight(info_), layout_));
    weight_ = std::make_unique<OwnedQweight>(info_, storage_->data());
  }
  xgemv_qweight get() const { return weight_->get(); }
  int64_t inputs() const { return info_.inputs; }

 private:
  xgemv_qweight_info info_;
  xgemv_qweight_layout layout_{};
  std::unique_ptr<GuardedDeviceBuffer<uint8_t>> storage_;
  std::unique_ptr<OwnedQweight> weight_;
};

// Whether the handle's forced variant `name` computes quantized weights of `kind`: a 1-output call
// runs and reports that variant, or is refused as not supported.
bool computes_kind(xgemv_handle h, const std::string &name, const QuantKind &kind) {
  const ProbeWeight weight(kind);
  GuardedDeviceBuffer<uint16_t> x(size_t(weight.inputs())), y(1);
  const float alpha = 1, beta = 0;
  EXPECT_EQ(xgemv_set_pointer_mode(h, XGEMV_POINTER_MODE_HOST), XGEMV_STATUS_SUCCESS);
  const xgemv_status status = xgemv_qgemv_nrhs(h, &alpha, weight.get(), x.data(), weight.inputs(),
                                               &beta, y.data(), 1, kind.activation, 1);
  check_cuda(cudaDeviceSynchronize(), "probe call");
  if (status == XGEMV_STATUS_NOT_SUPPORTED) return false;
  EXPECT_EQ(status, XGEMV_STATUS_SUCCESS) << name << " " << kind_name(kind);
  EXPECT_STREQ(xgemv_get_last_kernel_variant(h), name.c_str()) << kind_name(kind);
  return status == XGEMV_STATUS_SUCCESS;
}

// The kinds each variant computes, forced (the handle is left on the automatic choice).
std::vector<std::pair<std::string, std::vector<QuantKind>>> kinds_by_variant(xgemv_handle h) {
  std::vector<std::pair<std::string, std::vector<QuantKind>>> table;
  for (const std::string &name : variant_names()) {
    const ForcedVariant forced(h, name);
    EXPECT_EQ(forced.status(), XGEMV_STATUS_SUCCESS) << name;
    std::vector<QuantKind> kinds;
    for (const QuantKind &kind : every_kind())
      if (computes_kind(h, name, kind)) kinds.push_back(kind);
    table.emplace_back(name, kinds);
  }
  return table;
}

// The edge set of a kind for a forced variant: outputs around the tiles of 16, inputs around the
// k-blocks and groups, nrhs around a group of 16, the single-vector entry point, padded leading
// dimensions, misalignment, scalar specials in both pointer modes, long reductions (one exact on
// integer data), a long share of the reduction per warp, nrhs = 0.
std::vector<QuantCase> variant_edge_cases(const QuantKind &kind) {
  const FormatOptions &f = kind.format;
  const std::vector<int64_t> inputs = edge_inputs(f);
  std::vector<QuantCase> cases;
  cases.reserve(32);  // the references add returns stay valid
  const auto add = [&](int64_t outputs, int64_t in, int64_t nrhs) -> QuantCase & {
    QuantCase c;
    c.format = f;
    c.activation = kind.activation;
    c.y_type = cases.size() % 2 ? XGEMV_R_32F : kind.activation;
    c.scale_type = kScaleTypes[cases.size() % 3];
    c.outputs = outputs;
    c.inputs = in;
    c.nrhs = nrhs;
    cases.push_back(c);
    return cases.back();
  };
  for (const int64_t outputs : {1, 15, 17, 33})
    for (const int64_t in : {inputs[0], inputs[1]}) add(outputs, in, 1 + int64_t(cases.size() % 3));
  for (const int64_t nrhs : {16, 17}) add(129, inputs[2], nrhs);
  add(67, inputs[1], 1).single_vector = true;
  QuantCase &padded = add(33, inputs[1], 5);
  padded.ldx_padding = 1;
  padded.ldy_padding = 3;
  QuantCase &misaligned = add(131, inputs[2], 3);
  misaligned.x_misalignment = misaligned.y_misalignment = 1;
  QuantCase &beta_zero = add(67, inputs[1], 9);
  beta_zero.beta = ScalarChoice::zero;
  beta_zero.pointer_mode = XGEMV_POINTER_MODE_DEVICE;
  add(67, inputs[1], 4).alpha = ScalarChoice::zero;
  QuantCase &minus_one = add(33, inputs[1], 2);
  minus_one.alpha = ScalarChoice::minus_one;
  minus_one.beta = ScalarChoice::half;
  add(33, by_profile<int64_t>(14336, 2048), 2);
  add(17, by_profile<int64_t>(14336, 2048), 3).integer_data = true;
  // Outputs for a wave of blocks, so that the reduction is not split: each warp streams a long
  // share, through its pipeline several times over and into a rest (up to 8 vectors and more).
  for (const int64_t nrhs : {3, 9}) add(8448, 2560, nrhs);
  add(33, inputs[1], 0);
  return cases;
}

class QgemvKernelVariants : public GpuHandlesTest {};

TEST_F(QgemvKernelVariants, EveryQuantizedVariantOnTheEdgeCasesOfItsKinds) {
  const xgemv_handle h = gpu().xgemv();
  std::set<std::string> computed;  // the kinds some variant computes
  for (const auto &[name, kinds] : kinds_by_variant(h)) {
    SCOPED_TRACE("variant " + name);
    const ForcedVariant forced(h, name);
    for (const QuantKind &kind : kinds) {
      computed.insert(kind_name(kind));
      run_quant_cases(variant_edge_cases(kind), gpu(), "variant " + name + " " + kind_name(kind));
    }
  }
  for (const QuantKind &kind : every_kind())
    EXPECT_EQ(computed.count(kind_name(kind)), 1u) << "no variant computes " << kind_name(kind);
}

// Every variant that, forced, refuses a kind refuses real calls of it, through both entry points
// and at several nrhs: NOT_SUPPORTED, nothing launched, Y untouched. Dense variants refuse every
// kind, and there is at least one (a variant that computes a dense GEMV).
TEST_F(QgemvKernelVariants, ForcedVariantRefusesQuantizedCallsItDoesNotCompute) {
  const xgemv_handle h = gpu().xgemv();
  int dense_variants = 0;
  for (const auto &[name, kinds] : kinds_by_variant(h)) {
    const ForcedVariant forced(h, name);
    if (kinds.empty() &&
        (implements_op<__half>(gpu(), 'T', name) || implements_op<float>(gpu(), 'N', name) ||
         implements_op<double>(gpu(), 'N', name)))
      ++dense_variants;
    for (const QuantKind &kind : every_kind()) {
      if (std::any_of(kinds.begin(), kinds.end(),
                      [&](const QuantKind &k) { return kind_name(k) == kind_name(kind); }))
        continue;
      SCOPED_TRACE(name + " " + kind_name(kind));
      QuantCase c;
      c.format = kind.format;
      c.activation = c.y_type = kind.activation;
      c.outputs = 33;
      c.inputs = edge_inputs(kind.format)[1];
      c.nrhs = 17;
      const auto check = [&]<class A, class Y>(QuantProblem<A, Y> &p,
                                               QuantDeviceProblem<A, Y> &device, RandomSource &) {
        GuardedDeviceBuffer<Y> &y = device.y();
        y.upload(p.y);
        ASSERT_EQ(xgemv_set_pointer_mode(h, XGEMV_POINTER_MODE_HOST), XGEMV_STATUS_SUCCESS);
        for (const int64_t nrhs : {int64_t{1}, int64_t{2}, int64_t{17}}) {
          EXPECT_EQ(xgemv_qgemv_nrhs(h, &p.alpha, device.weight(), device.x().data(), c.ldx(),
                                     &p.beta, y.data(), c.ldy(), c.y_type, nrhs),
                    XGEMV_STATUS_NOT_SUPPORTED)
              << "nrhs " << nrhs;
          EXPECT_EQ(xgemv_get_last_kernel_variant(h), nullptr);
        }
        EXPECT_EQ(xgemv_qgemv(h, &p.alpha, device.weight(), device.x().data(), &p.beta, y.data(),
                              c.y_type),
                  XGEMV_STATUS_NOT_SUPPORTED);
        EXPECT_EQ(xgemv_get_last_kernel_variant(h), nullptr);
        check_cuda(cudaDeviceSynchronize(), "refused calls");
        EXPECT_TRUE(bitwise_equal("Y after refused calls", y.download(), p.y));
      };
      with_device_problem(c, case_seed("ForcedVariantRefuses", 0), check);
    }
  }
  EXPECT_GT(dense_variants, 0) << "no variant computes dense GEMVs only";
}

TEST_F(QgemvKernelVariants, AutomaticChoiceRunsAQuantizedVariant) {
  const xgemv_handle h = gpu().xgemv();
  const auto table = kinds_by_variant(h);
  for (const QuantKind &kind : every_kind()) {
    SCOPED_TRACE(kind_name(kind));
    const ProbeWeight weight(kind);
    GuardedDeviceBuffer<uint16_t> x(size_t(weight.inputs())), y(1);
    const float alpha = 1, beta = 0;
    ASSERT_EQ(xgemv_qgemv_nrhs(h, &alpha, weight.get(), x.data(), weight.inputs(), &beta, y.data(),
                               1, kind.activation, 1),
              XGEMV_STATUS_SUCCESS);
    const char *ran = xgemv_get_last_kernel_variant(h);
    ASSERT_NE(ran, nullptr);
    const auto entry =
        std::find_if(table.begin(), table.end(), [&](const auto &row) { return row.first == ran; });
    ASSERT_NE(entry, table.end()) << ran;
    EXPECT_TRUE(std::any_of(entry->second.begin(), entry->second.end(),
                            [&](const QuantKind &k) { return kind_name(k) == kind_name(kind); }))
        << ran << " is not a variant of this kind";
  }
  check_cuda(cudaDeviceSynchronize(), "calls");
}

}  // namespace
}  // namespace xgemv_test::quant
