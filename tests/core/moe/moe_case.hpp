// One mixture-of-experts test case, end to end: random experts (dense values of the activation
// type, or quantized weights written by the host packer, one storage each), the routing, the
// tokens' x (up) or the pairs' h (down) with gaps of guard values, the call on the GPU and its
// result with the bound of its fp64 reference (support/moe_reference) and the guards intact.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <xgemv/xgemv_moe.h>

#include "support/device_buffer.hpp"
#include "support/moe_reference.hpp"
#include "support/quant_formats.hpp"
#include "support/quant_reference.hpp"
#include "support/random_data.hpp"

namespace xgemv_test::moe {

using quant::datatype_bytes;
using quant::FormatOptions;

// How the tokens choose: k distinct experts each at random; one expert by every token (the
// most pairs one expert can have) and the rest at random; with repeats inside a token and
// expert-parallel sentinels (ids E and -1), one token choosing none.
enum class Choice { distinct, shared_expert, repeats_and_sentinels };

struct MoeCase {
  bool down = false;
  std::optional<FormatOptions> format;  // quantized experts; dense without
  xgemv_datatype activation_type = XGEMV_R_16BF, scale_type = XGEMV_R_16F;
  int64_t experts = 8, outputs = 64, inputs = 128, tokens = 4, top_k = 2;
  xgemv_moe_activation activation = XGEMV_MOE_SWIGLU;
  float alpha = 1.702f, limit = 7.0f;
  bool bias = false, accumulate = false, caller_workspace = true;
  xgemv_datatype weight_type = XGEMV_R_32F, id_type = XGEMV_R_32I;
  int64_t ldx_padding = 0, ldy_padding = 0;
  Choice choice = Choice::distinct;
  uint64_t seed = 1;

  int64_t x_length() const { return inputs; }
  int64_t y_length() const { return down ? outputs : up_outputs(activation, outputs); }
  int64_t ldx() const { return x_length() + ldx_padding; }
  int64_t ldy() const { return y_length() + ldy_padding; }
  int64_t pairs() const { return tokens * top_k; }
  int64_t x_rows() const { return down ? pairs() : tokens; }
  int64_t y_rows() const { return down ? tokens : pairs(); }
};

inline std::string describe(const MoeCase &c) {
  std::ostringstream text;
  text << (c.down ? "down" : "up") << " "
       << (c.format ? quant::test_name(*c.format) : "dense") << " "
       << quant::datatype_name(c.activation_type) << " E=" << c.experts << " " << c.outputs
       << "x" << c.inputs << " T=" << c.tokens << " k=" << c.top_k;
  if (!c.down) text << " activation=" << int(c.activation);
  text << (c.bias ? " bias" : "") << (c.accumulate ? " accumulate" : "")
       << " choice=" << int(c.choice) << (c.id_type == XGEMV_R_64I ? " int64 ids" : "")
       << (c.weight_type == XGEMV_R_32F ? "" : " 16-bit weights")
       << " ldx+" << c.ldx_padding << " ldy+" << c.ldy_padding;
  return text.str();
}

// The routing of a case: ids and weights (the weights of sentinels kept: they must not count).
inline Routing make_routing(const MoeCase &c, RandomSource &random) {
  Routing r{c.tokens, c.top_k, std::vector<int64_t>(size_t(c.pairs())),
            std::vector<double>(size_t(c.pairs()))};
  const int64_t shared = c.experts / 2;
  for (int64_t t = 0; t < c.tokens; ++t) {
    // The experts in random order (the shared one first where every token takes it).
    std::vector<int64_t> order;
    for (int64_t e = 0; e < c.experts; ++e)
      if (c.choice != Choice::shared_expert || e != shared) order.push_back(e);
    for (size_t e = order.size() - 1; e > 0; --e)
      std::swap(order[e], order[size_t(random.next() % uint64_t(e + 1))]);
    if (c.choice == Choice::shared_expert) order.insert(order.begin(), shared);
    for (int64_t j = 0; j < c.top_k; ++j) {
      int64_t id = order[size_t(j) % order.size()];
      if (c.choice == Choice::repeats_and_sentinels) {
        if (t == 1) id = j % 2 ? -1 : c.experts;            // a token choosing none
        else if (j == 1) id = r.ids[size_t(t * c.top_k)];  // a repeat
        else if (j == 2) id = c.experts;                   // the expert-parallel sentinel
      }
      r.ids[size_t(t * c.top_k + j)] = id;
      r.weights[size_t(t * c.top_k + j)] =
          quant::round_to(c.weight_type, float(random.uniform(0.05, 1.0)));
    }
  }
  return r;
}

// Values rounded to `type`, uniform in [-1, 1).
inline std::vector<double> random_values(RandomSource &random, size_t count, xgemv_datatype type) {
  std::vector<double> values(count);
  for (double &v : values) v = quant::round_to(type, float(random.uniform(-1, 1)));
  return values;
}

// The bytes of `values` as `type`, rows of `length` every `ld` elements, the gaps guard bytes.
inline std::vector<uint8_t> row_bytes(const std::vector<double> &values, int64_t rows,
                                      int64_t length, int64_t ld, xgemv_datatype type) {
  const size_t bytes = datatype_bytes(type);
  std::vector<uint8_t> out(size_t(rows * ld) * bytes, kGuardByte);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < length; ++i)
      quant::store(type, float(values[size_t(r * ld + i)]), &out[size_t(r * ld + i) * bytes]);
  return out;
}

// A case's experts and routing on the device, kept for its calls.
class MoeSetup {
 public:
  explicit MoeSetup(const MoeCase &c) : case_(c), random_(c.seed) {
    values_ = {c.experts, c.outputs, c.inputs, {}};
    if (c.format) {
      const xgemv_qweight_info info =
          quant::make_info(*c.format, c.activation_type, c.scale_type, c.outputs, c.inputs);
      xgemv_qweight_layout layout;
      EXPECT_EQ(xgemv_qweight_get_layout(&info, &layout), XGEMV_STATUS_SUCCESS);
      std::vector<uint8_t> storage;
      for (int64_t e = 0; e < c.experts; ++e) {
        const quant::PlainWeight weight = quant::random_plain_weight(info, random_);
        const std::vector<uint8_t> packed = quant::pack_storage(weight, layout);
        storage.insert(storage.end(), packed.begin(), packed.end());
        const std::vector<double> w = quant::weight_values(weight);
        values_.values.insert(values_.values.end(), w.begin(), w.end());
      }
      weights_.emplace(storage.size());
      weights_->upload(storage);
      status_ = xgemv_experts_create_quantized(&experts_, &info, c.experts, weights_->data());
    } else {
      values_.values = random_values(random_, size_t(c.experts * c.outputs * c.inputs),
                                     c.activation_type);
      const std::vector<uint8_t> bytes =
          row_bytes(values_.values, c.experts * c.outputs, c.inputs, c.inputs, c.activation_type);
      weights_.emplace(bytes.size());
      weights_->upload(bytes);
      status_ = xgemv_experts_create(&experts_, c.activation_type, c.experts, c.outputs, c.inputs,
                                     weights_->data(), c.inputs, c.outputs * c.inputs);
    }
    if (c.bias) {
      bias_values_ = random_values(random_, size_t(c.experts * c.outputs), c.activation_type);
      const std::vector<uint8_t> bytes =
          row_bytes(bias_values_, c.experts, c.outputs, c.outputs, c.activation_type);
      bias_.emplace(bytes.size());
      bias_->upload(bytes);
    }
  }
  ~MoeSetup() { xgemv_experts_destroy(experts_); }
  MoeSetup(const MoeSetup &) = delete;
  MoeSetup &operator=(const MoeSetup &) = delete;

  const MoeCase &spec() const { return case_; }
  xgemv_status status() const { return status_; }
  xgemv_experts experts() const { return experts_; }
  const ExpertValues &values() const { return values_; }
  const std::vector<double> &bias_values() const { return bias_values_; }
  const void *bias() const { return bias_ ? bias_->data() : nullptr; }
  RandomSource &random() { return random_; }

 private:
  MoeCase case_;
  RandomSource random_;
  ExpertValues values_;
  std::optional<GuardedDeviceBuffer<uint8_t>> weights_, bias_;
  std::vector<double> bias_values_;
  xgemv_experts experts_ = nullptr;
  xgemv_status status_ = XGEMV_STATUS_INTERNAL_ERROR;
};

// One call of a case on the device: its routing, x (up: the tokens; down: the pairs' h) and y
// before it (up: every h row guard bytes, so that rows of no valid pair must come back as they
// were; down: random values with accumulate, else guard bytes), in guarded buffers.
class MoeCall {
 public:
  MoeCall(MoeSetup &setup, const MoeCase &c, Routing routing, std::vector<double> x = {})
      : setup_(setup), case_(c), routing_(std::move(routing)), x_(std::move(x)) {
    if (x_.empty())
      x_ = random_values(setup.random(), size_t(c.x_rows() * c.ldx()), c.activation_type);
    const size_t act_bytes = datatype_bytes(c.activation_type);
    y_in_ = c.accumulate
                ? random_values(setup.random(), size_t(c.y_rows() * c.ldy()), c.activation_type)
                : std::vector<double>(size_t(c.y_rows() * c.ldy()));
    y_before_ = c.accumulate
                    ? row_bytes(y_in_, c.y_rows(), c.y_length(), c.ldy(), c.activation_type)
                    : std::vector<uint8_t>(size_t(c.y_rows() * c.ldy()) * act_bytes, kGuardByte);
    std::vector<uint8_t> id_bytes(size_t(c.pairs()) * (c.id_type == XGEMV_R_64I ? 8 : 4));
    for (int64_t p = 0; p < c.pairs(); ++p) {
      const int64_t id = routing_.ids[size_t(p)];
      const int32_t id32 = int32_t(id);
      if (c.id_type == XGEMV_R_64I) std::memcpy(&id_bytes[size_t(p) * 8], &id, 8);
      else std::memcpy(&id_bytes[size_t(p) * 4], &id32, 4);
    }
    const size_t weight_bytes = datatype_bytes(c.weight_type);
    std::vector<uint8_t> weights(size_t(c.pairs()) * weight_bytes);
    for (int64_t p = 0; p < c.pairs(); ++p)
      quant::store(c.weight_type, float(routing_.weights[size_t(p)]), &weights[size_t(p) * weight_bytes]);
    const std::vector<uint8_t> x_bytes =
        row_bytes(x_, c.x_rows(), c.x_length(), c.ldx(), c.activation_type);
    workspace_bytes_ = xgemv_moe_down_workspace_bytes(c.tokens, c.top_k, c.outputs);
    x_buffer_.emplace(std::max<size_t>(x_bytes.size(), 1));
    y_buffer_.emplace(std::max<size_t>(y_before_.size(), 1));
    ids_.emplace(std::max<size_t>(id_bytes.size(), 1));
    weights_.emplace(std::max<size_t>(weights.size(), 1));
    workspace_.emplace(std::max<size_t>(workspace_bytes_, 1));
    if (!x_bytes.empty()) x_buffer_->upload(x_bytes);
    if (!id_bytes.empty()) ids_->upload(id_bytes);
    if (!weights.empty()) weights_->upload(weights);
    reset_y();
  }

  // y as it was before the call.
  void reset_y() {
    if (!y_before_.empty()) y_buffer_->upload(y_before_);
  }

  // Enqueues the call on the handle's stream; its status.
  xgemv_status launch(xgemv_handle handle) const {
    const MoeCase &c = case_;
    const xgemv_moe_routing routing{c.tokens, c.top_k, ids_->data(), c.id_type, weights_->data(),
                                    c.weight_type};
    if (c.down)
      return xgemv_moe_down(handle, setup_.experts(), &routing, setup_.bias(), x_buffer_->data(),
                            c.ldx(), c.accumulate ? 1 : 0, y_buffer_->data(), c.ldy(),
                            c.caller_workspace ? workspace_->data() : nullptr,
                            c.caller_workspace ? workspace_bytes_ : 0);
    return xgemv_moe_up(handle, setup_.experts(), &routing, c.activation, c.alpha, c.limit,
                        setup_.bias(), x_buffer_->data(), c.ldx(), y_buffer_->data(), c.ldy());
  }

  // y's bytes after the work on the device has finished.
  std::vector<uint8_t> y_after() const {
    check_cuda(cudaDeviceSynchronize(), "the MoE call");
    return y_before_.empty() ? std::vector<uint8_t>{} : y_buffer_->download();
  }

  bool guards_intact() const {
    return x_buffer_->guards_intact("x") && y_buffer_->guards_intact("y") &&
           ids_->guards_intact("ids") && weights_->guards_intact("weights") &&
           workspace_->guards_intact("workspace");
  }

  const MoeCase &spec() const { return case_; }
  const Routing &routing() const { return routing_; }
  const std::vector<double> &x() const { return x_; }
  const std::vector<double> &y_in() const { return y_in_; }
  const std::vector<uint8_t> &y_before() const { return y_before_; }

 private:
  MoeSetup &setup_;
  MoeCase case_;
  Routing routing_;
  std::vector<double> x_, y_in_;
  std::vector<uint8_t> y_before_;
  size_t workspace_bytes_ = 0;
  std::optional<GuardedDeviceBuffer<uint8_t>> x_buffer_, y_buffer_, ids_, weights_, workspace_;
};

// The result of `call` (y's bytes after it) against the reference: every defined output within
// its bound (NaN where the reference is NaN, the same infinity), every other byte of y as it was.
inline ::testing::AssertionResult matches_reference(const MoeSetup &setup, const MoeCall &call,
                                                    const std::vector<uint8_t> &y_after) {
  const MoeCase &c = call.spec();
  const Reference ref =
      c.down ? reference_down(setup.values(), setup.bias_values(), call.x(), c.ldx(),
                              call.routing(), c.accumulate, call.y_in(), c.ldy(),
                              c.activation_type)
             : reference_up(setup.values(), setup.bias_values(), call.x(), c.ldx(),
                            call.routing(), c.activation, c.alpha, c.limit, c.activation_type);
  const size_t bytes = datatype_bytes(c.activation_type);
  int failures = 0;
  std::ostringstream text;
  for (int64_t r = 0; r < c.y_rows(); ++r)
    for (int64_t i = 0; i < c.ldy(); ++i) {
      const size_t at = size_t(r * c.ldy() + i) * bytes;
      const size_t ref_at = size_t(r * c.y_length() + i);
      if (i >= c.y_length() || !ref.defined[ref_at]) {
        if (std::memcmp(&y_after[at], &call.y_before()[at], bytes) != 0 && failures++ < 5)
          text << "\n  row " << r << " element " << i << " written, outside the outputs";
        continue;
      }
      const double got = quant::load(c.activation_type, &y_after[at]);
      const double want = ref.values[ref_at];
      const bool ok = std::isnan(want)   ? std::isnan(got)
                      : std::isinf(want) ? got == want
                                         : std::fabs(got - want) <= ref.bounds[ref_at];
      if (!ok && failures++ < 5)
        text << "\n  row " << r << " output " << i << ": " << got << ", reference " << want
             << " (bound " << ref.bounds[ref_at] << ")";
    }
  if (failures > 0)
    return ::testing::AssertionFailure() << failures << " outputs off:" << text.str();
  return ::testing::AssertionSuccess();
}

// Runs the case once on the handle (its routing and x random) and checks it.
inline ::testing::AssertionResult runs_correctly(const MoeCase &c, xgemv_handle handle) {
  MoeSetup setup(c);
  if (setup.status() != XGEMV_STATUS_SUCCESS)
    return ::testing::AssertionFailure() << "experts: " << xgemv_status_string(setup.status());
  const MoeCall call(setup, c, make_routing(c, setup.random()));
  if (const xgemv_status status = call.launch(handle); status != XGEMV_STATUS_SUCCESS)
    return ::testing::AssertionFailure() << xgemv_status_string(status);
  const std::vector<uint8_t> y = call.y_after();
  if (!call.guards_intact()) return ::testing::AssertionFailure() << "a guard was overwritten";
  return matches_reference(setup, call, y);
}

}  // namespace xgemv_test::moe
