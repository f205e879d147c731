// The C ABI of xgemv_moe.h: experts (checked once) and the routed calls on them, thin over the
// core's one path (core.hpp) with host scalars 1 and 0. Nothing here can throw.
#include <cstring>
#include <new>

#include "core.hpp"
#include "launch/routed_launch.hpp"
#include "moe/experts.hpp"

namespace {

xgemv_status keep(xgemv_experts *experts, const xgemv_experts_st &made) {
  auto *kept = new (std::nothrow) xgemv_experts_st(made);
  if (kept == nullptr) return XGEMV_STATUS_INTERNAL_ERROR;
  *experts = kept;
  return XGEMV_STATUS_SUCCESS;
}

// The integer a C caller passed as an enum, read without loading it as the enum type (which is
// undefined for a value outside the enumerators' range).
int enum_bits(const xgemv_moe_activation &value) {
  int bits = 0;
  static_assert(sizeof bits == sizeof value);
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

xgemv_status run_routed(xgemv_handle handle, xgemv_experts experts,
                        const xgemv_moe_routing *routing,
                        const xgemv::moe::RoutedCall &call) {
  if (experts == nullptr || routing == nullptr) return XGEMV_STATUS_NULL_POINTER;
  xgemv_status status = XGEMV_STATUS_SUCCESS;
  const std::optional<xgemv::GemvProblem> problem =
      xgemv::moe::routed_problem(*experts, *routing, call, &status);
  if (!problem) return status;
  return xgemv::check_and_run(handle, *problem,
                              xgemv::RunOptions{std::nullopt, XGEMV_POINTER_MODE_HOST});
}

}  // namespace

extern "C" {

xgemv_status xgemv_experts_create(xgemv_experts *experts, xgemv_datatype type, int64_t count,
                                  int64_t outputs, int64_t inputs, const void *weights,
                                  int64_t ld, int64_t expert_stride) {
  if (experts == nullptr) return XGEMV_STATUS_NULL_POINTER;
  *experts = nullptr;
  xgemv_experts_st made{};
  if (const xgemv_status status = xgemv::moe::make_dense(type, count, outputs, inputs, weights,
                                                         ld, expert_stride, made);
      status != XGEMV_STATUS_SUCCESS)
    return status;
  return keep(experts, made);
}

xgemv_status xgemv_experts_create_quantized(xgemv_experts *experts,
                                            const xgemv_qweight_info *info, int64_t count,
                                            const void *storage) {
  if (experts == nullptr || info == nullptr) return XGEMV_STATUS_NULL_POINTER;
  *experts = nullptr;
  xgemv_experts_st made{};
  if (const xgemv_status status = xgemv::moe::make_quantized(*info, count, storage, made);
      status != XGEMV_STATUS_SUCCESS)
    return status;
  return keep(experts, made);
}

xgemv_status xgemv_experts_destroy(xgemv_experts experts) {
  delete experts;
  return XGEMV_STATUS_SUCCESS;
}

xgemv_status xgemv_moe_up(xgemv_handle handle, xgemv_experts experts,
                          const xgemv_moe_routing *routing, xgemv_moe_activation activation,
                          float alpha, float limit, const void *bias, const void *x, int64_t ldx,
                          void *h, int64_t ldh) {
  return run_routed(handle, experts, routing,
                    {false, enum_bits(activation), alpha, limit, bias, x, ldx, h, ldh, false, nullptr, 0});
}

xgemv_status xgemv_moe_down(xgemv_handle handle, xgemv_experts experts,
                            const xgemv_moe_routing *routing, const void *bias, const void *h,
                            int64_t ldh, int accumulate, void *y, int64_t ldy, void *workspace,
                            size_t workspace_bytes) {
  return run_routed(handle, experts, routing,
                    {true, XGEMV_MOE_IDENTITY, 0.0f, 0.0f, bias, h, ldh, y, ldy, accumulate != 0,
                     workspace, workspace_bytes});
}

size_t xgemv_moe_down_workspace_bytes(int64_t tokens, int64_t top_k, int64_t outputs) {
  if (tokens < 0 || top_k < 0 || outputs < 0) return 0;
  return xgemv::routed_partial_bytes(tokens, top_k, outputs);
}

}  // extern "C"
