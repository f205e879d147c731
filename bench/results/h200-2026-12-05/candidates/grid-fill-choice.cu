// Which row-block group the dispatch takes for op T shapes (the table tries 32 lanes first, then
// 16, 8, 4, 2; GemvTShort before them takes columns shorter than 128 bytes), on a device of 132
// SMs, bf16 and fp32: the plans and suits() are host code, so this runs without a GPU. From the
// repository root, on main and on a tree with grid-fill.patch applied:
//   nvcc -I include -I src -std=c++17 --expt-relaxed-constexpr -x cu \
//     bench/results/h200-2026-12-05/candidates/grid-fill-choice.cu -o choice && ./choice
#include <cstdio>
#include "variants/gemv_t_rowblock.cuh"
using namespace xgemv;
template <int G> int pick(const GemvProblem &p, const DeviceLimits &d) {
  LaunchPlan plan;
  if (GemvTRowBlock<G>::suits(p, d, plan)) return G;
  if constexpr (G > 2) return pick<G / 2>(p, d); else return 0;  // 0: none suits
}
int main() {
  const DeviceLimits device{132};
  const struct { const char *tag; long long m, n; } shapes[] = {
      {"qwen2.5-0.5b.qkv", 896, 1152}, {"qwen2.5-0.5b.o", 896, 896}, {"qwen2.5-0.5b.gate_up", 896, 9728},
      {"qwen2.5-0.5b.down", 4864, 896}, {"qwen2.5-0.5b.lm_head", 896, 151936},
      {"qwen2.5-1.5b.qkv", 1536, 2048}, {"qwen2.5-1.5b.o", 1536, 1536}, {"qwen2.5-1.5b.gate_up", 1536, 17920},
      {"qwen2.5-1.5b.down", 8960, 1536}, {"llama3.2-1b.qkv", 2048, 3072}, {"llama3.2-1b.o", 2048, 2048},
      {"gemma2-2b.o", 2048, 2304}, {"llama3.2-3b.o", 3072, 3072}, {"qwen2.5-7b.qkv", 3584, 4608},
      {"llama3-8b.qkv", 4096, 6144}, {"llama3-8b.gate_up", 4096, 28672}, {"sq256", 256, 256},
      {"sq512", 512, 512}, {"sq1k", 1024, 1024}, {"wide-16", 16, 500000}, {"wide", 64, 1048576},
      {"odd-wide", 777, 100003}, {"primes", 10007, 10009}, {"tall", 1048576, 64}};
  static __nv_bfloat16 a[16], x[16], y[16];
  static float fa[16], fx[16], fy[16];
  const float one = 1, zero = 0;
  for (const auto &s : shapes) {
    const GemvProblem p = single_problem('T', s.m, s.n, &one, a, s.m, x, 1, &zero, y, 1);
    const GemvProblem q = single_problem('T', s.m, s.n, &one, fa, s.m, fx, 1, &zero, fy, 1);
    std::printf("%-22s %8lldx%-8lld bf16 t_rowblock_%-2d fp32 t_rowblock_%d\n", s.tag, s.m, s.n,
                pick<32>(p, device), pick<32>(q, device));
  }
}
