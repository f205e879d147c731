#include "moe/experts.hpp"

#include <cstdint>

#include "launch/routed_launch.hpp"

namespace xgemv::moe {
namespace {

constexpr int64_t kMaxDimension = (int64_t(1) << 31) - 1;

bool is_activation(int a) {
  return a == XGEMV_MOE_IDENTITY || a == XGEMV_MOE_SWIGLU || a == XGEMV_MOE_SWIGLU_INTERLEAVED ||
         a == XGEMV_MOE_SWIGLU_CLAMPED;
}

MoeActivation activation_of(int a) {
  switch (a) {
    case XGEMV_MOE_SWIGLU: return MoeActivation::kSwiglu;
    case XGEMV_MOE_SWIGLU_INTERLEAVED: return MoeActivation::kSwigluInterleaved;
    case XGEMV_MOE_SWIGLU_CLAMPED: return MoeActivation::kSwigluClamped;
    default: return MoeActivation::kIdentity;
  }
}

// The scalars every routed call runs with: its sums are stored as they are.
constexpr float kOne = 1.0f, kZero = 0.0f;

}  // namespace

xgemv_status make_dense(xgemv_datatype type, int64_t count, int64_t outputs, int64_t inputs,
                        const void *weights, int64_t ld, int64_t expert_stride,
                        xgemv_experts_st &experts) noexcept {
  if (weights == nullptr) return XGEMV_STATUS_NULL_POINTER;
  if (type != XGEMV_R_16F && type != XGEMV_R_16BF) return XGEMV_STATUS_INVALID_VALUE;
  if (count < 1 || count > kMaxExperts || outputs < 1 || outputs > kMaxDimension || inputs < 1 ||
      inputs > kMaxDimension)
    return XGEMV_STATUS_INVALID_QSHAPE;
  // expert_stride >= outputs * ld, without forming a product that can overflow.
  if (ld < inputs || expert_stride / outputs < ld) return XGEMV_STATUS_INVALID_LDA;
  experts = {count, outputs, inputs, type, weights, ld, expert_stride, std::nullopt};
  return XGEMV_STATUS_SUCCESS;
}

xgemv_status make_quantized(const xgemv_qweight_info &info, int64_t count, const void *storage,
                            xgemv_experts_st &experts) noexcept {
  xgemv_qweight_layout layout;
  if (const xgemv_status status = quant::plan_layout(info, layout); status != XGEMV_STATUS_SUCCESS)
    return status;
  if (storage == nullptr) return XGEMV_STATUS_NULL_POINTER;
  if (reinterpret_cast<uintptr_t>(storage) % quant::kStorageAlignment != 0)
    return XGEMV_STATUS_MISALIGNED;
  if (count < 1 || count > kMaxExperts) return XGEMV_STATUS_INVALID_QSHAPE;
  if (info.permuted) return XGEMV_STATUS_INVALID_QFORMAT;
  experts = {count, info.outputs, info.inputs, info.activation_type, nullptr, 0, 0,
             xgemv_qweight_st{info, layout, const_cast<void *>(storage)}};
  return XGEMV_STATUS_SUCCESS;
}

std::optional<GemvProblem> routed_problem(const xgemv_experts_st &experts,
                                          const xgemv_moe_routing &routing,
                                          const RoutedCall &call, xgemv_status *status) noexcept {
  const bool swiglu = call.activation != XGEMV_MOE_IDENTITY;
  const MoeActivation activation = activation_of(call.activation);
  const int64_t x_length = experts.inputs;
  const int64_t y_length = call.down ? experts.outputs : up_outputs(activation, experts.outputs);
  // A SwiGLU of quantized experts in halves takes a tile of each half: whole tiles of 16.
  const bool halves_of_tiles = call.activation != XGEMV_MOE_SWIGLU || !experts.quantized ||
                               experts.outputs % 32 == 0;
  *status = XGEMV_STATUS_SUCCESS;
  if (!call.down && (!is_activation(call.activation) ||
                     (swiglu && (experts.outputs % 2 != 0 || !halves_of_tiles))))
    *status = XGEMV_STATUS_INVALID_VALUE;
  else if (routing.id_type != XGEMV_R_32I && routing.id_type != XGEMV_R_64I)
    *status = XGEMV_STATUS_INVALID_VALUE;
  else if (routing.tokens < 0 || routing.top_k < 1 || routing.top_k > kMaxTopK)
    *status = XGEMV_STATUS_INVALID_NRHS;
  else if (call.ldx < x_length)
    *status = XGEMV_STATUS_INVALID_LDX;
  else if (call.ldy < y_length)
    *status = XGEMV_STATUS_INVALID_LDY;
  else if (call.down && routing.weight_type != XGEMV_R_32F &&
           routing.weight_type != experts.activation_type)
    *status = XGEMV_STATUS_INVALID_VALUE;
  else if (call.down && call.workspace != nullptr &&
           (call.workspace_bytes <
                routed_partial_bytes(routing.tokens, routing.top_k, experts.outputs) ||
            reinterpret_cast<uintptr_t>(call.workspace) % quant::kStorageAlignment != 0))
    *status = XGEMV_STATUS_MISALIGNED;
  if (*status != XGEMV_STATUS_SUCCESS) return std::nullopt;

  const ElementType activation_type = quant::element_type(experts.activation_type);
  GemvProblem p{};
  p.trans = 'T';
  p.m = experts.inputs;
  p.n = experts.outputs;
  p.x = {call.x, 1, 0, nullptr, call.ldx};
  p.y = {call.y, 1, 0, nullptr, call.ldy};
  p.batch_count = 1;
  p.alpha = &kOne;
  p.beta = &kZero;
  p.rhs_count = routing.tokens;
  p.invariant_columns = true;
  if (experts.quantized) {
    const xgemv_qweight_st &weight = *experts.quantized;
    std::optional<GemvProblem> expert0 = quant::qgemv_problem(
        weight, &kOne, call.x, weight.info.inputs, &kZero, call.y, weight.info.outputs,
        weight.info.activation_type, 1, status);
    if (!expert0) return std::nullopt;
    p.types = expert0->types;
    p.a = expert0->a;
    p.a.stride = int64_t(weight.layout.bytes);
    p.quant = expert0->quant;
  } else {
    p.types = {activation_type, activation_type, activation_type, ElementType::kF32};
    p.a = {experts.weights, experts.ld, experts.expert_stride, nullptr};
  }
  RoutedOperand &r = p.routing;
  r.down = call.down;
  r.top_k = int(routing.top_k);
  r.tokens = routing.tokens;
  r.experts = experts.count;
  r.ids = routing.expert_ids;
  r.ids_64 = routing.id_type == XGEMV_R_64I;
  r.weights = call.down ? routing.weights : nullptr;
  r.weight_type = routing.weight_type == XGEMV_R_32F ? ElementType::kF32 : activation_type;
  r.activation = call.down ? MoeActivation::kIdentity : activation;
  r.alpha = call.alpha;
  r.limit = call.limit;
  r.expert_bias = call.bias;
  r.accumulate = call.down && call.accumulate;
  r.partials = call.down ? call.workspace : nullptr;
  r.partial_bytes = call.down ? call.workspace_bytes : 0;
  return p;
}

}  // namespace xgemv::moe
