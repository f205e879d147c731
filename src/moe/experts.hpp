// The experts of a mixture-of-experts projection as the core sees them (xgemv_moe.h): checked
// once at creation, and the routed problem of a call on them (problem.hpp, RoutedOperand), after
// the call's argument checks. Plain C++, no CUDA call, so that the CPU tests check through the
// very code the library runs.
#pragma once

#include <xgemv/xgemv_moe.h>

#include <optional>

#include "problem.hpp"
#include "quant/qweight.hpp"

struct xgemv_experts_st {
  int64_t count, outputs, inputs;
  xgemv_datatype activation_type;  // of x, h and y (dense: of the weights too)
  // Dense: expert e's row o at weights + e * expert_stride + o * ld elements.
  const void *weights;
  int64_t ld, expert_stride;
  // Quantized: count weights of one info, expert e's storage at storage + e * layout.bytes.
  std::optional<xgemv_qweight_st> quantized;
};

namespace xgemv::moe {

// The checks of xgemv_experts_create (then of xgemv_experts_create_quantized), in the order
// their documentation gives; on success, the experts.
xgemv_status make_dense(xgemv_datatype type, int64_t count, int64_t outputs, int64_t inputs,
                        const void *weights, int64_t ld, int64_t expert_stride,
                        xgemv_experts_st &experts) noexcept;
xgemv_status make_quantized(const xgemv_qweight_info &info, int64_t count, const void *storage,
                            xgemv_experts_st &experts) noexcept;

// The routed problem of xgemv_moe_up (down == false) or xgemv_moe_down on the experts, after
// the argument checks of that call (xgemv_moe.h), or nullopt with *status saying which failed.
// x (ldx): the tokens (up) or the pairs' h (down); y (ldy): the pairs' h (up) or the tokens.
struct RoutedCall {
  bool down;
  // The caller's xgemv_moe_activation as its integer: a C caller may pass any int there, and C++
  // may not hold a value outside the enumerators' range in the enum type (checked before use).
  int activation;
  float alpha, limit;
  const void *bias;
  const void *x;
  int64_t ldx;
  void *y;
  int64_t ldy;
  bool accumulate;
  void *workspace;
  size_t workspace_bytes;
};
std::optional<GemvProblem> routed_problem(const xgemv_experts_st &experts,
                                          const xgemv_moe_routing &routing,
                                          const RoutedCall &call, xgemv_status *status) noexcept;

}  // namespace xgemv::moe
