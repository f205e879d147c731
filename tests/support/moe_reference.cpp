#include "support/moe_reference.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

namespace xgemv_test::moe {
namespace {

constexpr double kFp32Unit = 0x1p-24;

// The rounding unit of a stored output type.
double unit_of(xgemv_datatype type) {
  return type == XGEMV_R_16F ? 0x1p-11 : type == XGEMV_R_16BF ? 0x1p-8 : kFp32Unit;
}

// A dot of `inputs` products summed in fp32 (on the tensor cores, whose sums truncate: twice
// the units of a rounded sum): its error per unit of its magnitude.
double dot_factor(int64_t inputs) { return 2 * double(inputs + 4) * kFp32Unit; }

struct Dot {
  double value, magnitude;
};
Dot dot(const ExpertValues &experts, int64_t e, int64_t o, const double *x) {
  Dot d{0, 0};
  for (int64_t k = 0; k < experts.inputs; ++k) {
    d.value += experts.at(e, o, k) * x[k];
    d.magnitude += std::fabs(experts.at(e, o, k) * x[k]);
  }
  return d;
}

bool valid(const Routing &r, int64_t count, int64_t pair) {
  return r.ids[size_t(pair)] >= 0 && r.ids[size_t(pair)] < count;
}

double sigmoid(double z) { return 1 / (1 + std::exp(-z)); }

// The Lipschitz constant of g * sigmoid(a g), over every g (a > 0): 1.0998 at its peak.
constexpr double kGatedSlope = 1.1;

}  // namespace

int64_t up_outputs(xgemv_moe_activation activation, int64_t rows) {
  return activation == XGEMV_MOE_IDENTITY ? rows : rows / 2;
}

Reference reference_up(const ExpertValues &experts, const std::vector<double> &bias,
                       const std::vector<double> &x, int64_t ldx, const Routing &routing,
                       xgemv_moe_activation activation, double alpha, double limit,
                       xgemv_datatype out_type) {
  const int64_t outputs = up_outputs(activation, experts.outputs);
  const int64_t pairs = routing.tokens * routing.top_k;
  Reference ref{std::vector<double>(size_t(pairs * outputs)),
                std::vector<double>(size_t(pairs * outputs)),
                std::vector<char>(size_t(pairs * outputs))};
  const double factor = dot_factor(experts.inputs), u_out = unit_of(out_type);
  for (int64_t p = 0; p < pairs; ++p) {
    if (!valid(routing, experts.count, p)) continue;
    const int64_t e = routing.ids[size_t(p)], t = p / routing.top_k;
    const double *xt = x.data() + t * ldx;
    const auto row = [&](int64_t r) {
      Dot d = dot(experts, e, r, xt);
      if (!bias.empty()) d.value += bias[size_t(e * experts.outputs + r)];
      // The dot's error, and the fp32 rounding of the bias added.
      return std::pair<double, double>(d.value, factor * d.magnitude + kFp32Unit * std::fabs(d.value));
    };
    for (int64_t o = 0; o < outputs; ++o) {
      double value, error;
      if (activation == XGEMV_MOE_IDENTITY) {
        std::tie(value, error) = row(o);
      } else {
        const bool halves = activation == XGEMV_MOE_SWIGLU;
        auto [g, eg] = row(halves ? o : 2 * o);
        auto [u, eu] = row(halves ? experts.outputs / 2 + o : 2 * o + 1);
        if (activation == XGEMV_MOE_SWIGLU_CLAMPED) {
          g = std::min(g, limit);
          u = std::clamp(u, -limit, limit);
          const double gated = g * sigmoid(alpha * g);
          value = (u + 1) * gated;
          error = (std::fabs(u + 1) + eu) * kGatedSlope * eg + std::fabs(gated) * eu;
        } else {
          const double gated = g * sigmoid(g);
          value = gated * u;
          error = (std::fabs(u) + eu) * kGatedSlope * eg + std::fabs(gated) * eu;
        }
        error += 8 * kFp32Unit * std::fabs(value);  // expf and the products in fp32
      }
      const size_t i = size_t(p * outputs + o);
      ref.values[i] = value;
      ref.bounds[i] = error + u_out * (std::fabs(value) + error);
      ref.defined[i] = 1;
    }
  }
  return ref;
}

Reference reference_down(const ExpertValues &experts, const std::vector<double> &bias,
                         const std::vector<double> &h, int64_t ldh, const Routing &routing,
                         bool accumulate, const std::vector<double> &y_in, int64_t ldy,
                         xgemv_datatype out_type) {
  const int64_t outputs = experts.outputs;
  Reference ref{std::vector<double>(size_t(routing.tokens * outputs)),
                std::vector<double>(size_t(routing.tokens * outputs)),
                std::vector<char>(size_t(routing.tokens * outputs), 1)};
  const double factor = dot_factor(experts.inputs), u_out = unit_of(out_type);
  for (int64_t t = 0; t < routing.tokens; ++t)
    for (int64_t o = 0; o < outputs; ++o) {
      double value = 0, error = 0, terms = 0;
      for (int64_t j = 0; j < routing.top_k; ++j) {
        const int64_t p = t * routing.top_k + j;
        if (!valid(routing, experts.count, p)) continue;
        const int64_t e = routing.ids[size_t(p)];
        Dot d = dot(experts, e, o, h.data() + p * ldh);
        double partial_error = factor * d.magnitude;
        if (!bias.empty()) {
          d.value += bias[size_t(e * outputs + o)];
          partial_error += kFp32Unit * std::fabs(d.value);
        }
        const double w = routing.weights[size_t(p)];
        value += w * d.value;
        error += std::fabs(w) * partial_error;
        terms += std::fabs(w * d.value);
      }
      // The terms' products and sums in fp32: one rounding each, top_k + 1 deep.
      error += double(routing.top_k + 2) * kFp32Unit * (terms + std::fabs(value));
      if (accumulate) {
        const double before = y_in[size_t(t * ldy + o)];
        value += before;
        error += kFp32Unit * (std::fabs(value) + std::fabs(before));
      }
      const size_t i = size_t(t * outputs + o);
      ref.values[i] = value;
      ref.bounds[i] = error + u_out * (std::fabs(value) + error);
    }
  return ref;
}

}  // namespace xgemv_test::moe
