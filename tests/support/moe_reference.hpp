// The host reference of the mixture-of-experts calls (xgemv_moe.h), in fp64 from the header's
// definitions, with the bound of each output's rounding error: the experts' values (dense, or a
// quantized weight's w = v * s each), the routing, and h or y with a bound per element.
#pragma once

#include <cstdint>
#include <vector>

#include <xgemv/xgemv_moe.h>

namespace xgemv_test::moe {

// `count` experts of `outputs` x `inputs` values each, row-major: expert e's w[o][k] at
// values[(e * outputs + o) * inputs + k].
struct ExpertValues {
  int64_t count = 0, outputs = 0, inputs = 0;
  std::vector<double> values;
  double at(int64_t e, int64_t o, int64_t k) const {
    return values[size_t((e * outputs + o) * inputs + k)];
  }
};

// The routing of `tokens` tokens to `top_k` experts each (ids outside [0, count) choose none).
struct Routing {
  int64_t tokens = 0, top_k = 0;
  std::vector<int64_t> ids;
  std::vector<double> weights;  // [tokens][top_k] (down only)
};

// A reference result: values, the bound of |computed - value| of each, and whether the call
// defines it (up: the pairs of valid ids; down: every token).
struct Reference {
  std::vector<double> values, bounds;
  std::vector<char> defined;
};

// Outputs of the up projection of `rows` rows with `activation`.
int64_t up_outputs(xgemv_moe_activation activation, int64_t rows);

// h[(t * top_k + j) * up_outputs + o] = act(W[e] x[t] + b[e]) of xgemv_moe_up, x[t] at
// x[t * ldx], bias [count][outputs] or empty, h rounded to out_type (the activation type).
Reference reference_up(const ExpertValues &experts, const std::vector<double> &bias,
                       const std::vector<double> &x, int64_t ldx, const Routing &routing,
                       xgemv_moe_activation activation, double alpha, double limit,
                       xgemv_datatype out_type);

// y[t * outputs + o] of xgemv_moe_down: h of pair p at h[p * ldh], y_in[t * ldy + o] the y
// before the call (read with accumulate), y rounded to out_type.
Reference reference_down(const ExpertValues &experts, const std::vector<double> &bias,
                         const std::vector<double> &h, int64_t ldh, const Routing &routing,
                         bool accumulate, const std::vector<double> &y_in, int64_t ldy,
                         xgemv_datatype out_type);

}  // namespace xgemv_test::moe
