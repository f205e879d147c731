// Which row-block group the dispatch takes for op T shapes (the table tries 32 lanes first, then
// 16, 8, 4, 2), on a device of 132 SMs, bf16 and fp32: the plans and suits() are host code, so
// this runs without a GPU. From the repository root, on main and on a tree with
// thin-wave-groups.patch applied:
//   nvcc -I include -I src -std=c++17 --expt-relaxed-constexpr -x cu \
//     bench/results/h200-2026-12-05/candidates/thin-wave-groups-choice.cu -o choice && ./choice
#include <cstdio>
#include "variants/gemv_t_rowblock.cuh"
using namespace xgemv;
template <int G> int pick(const GemvProblem &p, const DeviceLimits &d) {
  LaunchPlan plan;
  if (GemvTRowBlock<G>::suits(p, d, plan)) return G;
  if constexpr (G > 2) return pick<G / 2>(p, d); else return 0;
}
int main() {
  const DeviceLimits device{132};
  const struct { const char *tag; int64_t m, n; } shapes[] = {
      {"qwen2.5-7b.qkv", 3584, 4608}, {"qwen2.5-7b.o", 3584, 3584}, {"qwen2.5-7b.gate_up", 3584, 37888},
      {"qwen2.5-7b.down", 18944, 3584}, {"llama3-8b.qkv", 4096, 6144}, {"llama3-8b.o", 4096, 4096},
      {"llama3-8b.gate_up", 4096, 28672}, {"llama3-8b.down", 14336, 4096}, {"llama2-7b.gate_up", 4096, 22016},
      {"llama3-70b.qkv", 8192, 10240}, {"llama3-70b.o", 8192, 8192}, {"llama3-70b.down", 28672, 8192},
      {"llama2-13b.o", 5120, 5120}, {"llama3.2-3b.qkv", 3072, 5120}, {"qwen2.5-0.5b.gate_up", 896, 9728}};
  static __nv_bfloat16 a[16], x[16], y[16];
  static float fa[16], fx[16], fy[16];
  const float one = 1, zero = 0;
  for (const auto &s : shapes) {
    GemvProblem p = single_problem('T', s.m, s.n, &one, a, s.m, x, 1, &zero, y, 1);
    GemvProblem q = single_problem('T', s.m, s.n, &one, fa, s.m, fx, 1, &zero, fy, 1);
    std::printf("%-22s %6lldx%-6lld bf16 t_rowblock_%d  fp32 t_rowblock_%d\n", s.tag, (long long)s.m,
                (long long)s.n, pick<32>(p, device), pick<32>(q, device));
  }
}
