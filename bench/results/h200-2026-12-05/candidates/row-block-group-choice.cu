// Which row-block group the dispatch takes for op T shapes (the table tries 32 lanes first, then
// 16, 8, 4, 2; GemvTShort before them takes columns shorter than 128 bytes), on a device of 132
// SMs, bf16 and fp32: the plans and suits() are host code, so this runs without a GPU. From the
// repository root, on main and on a tree with a group candidate applied (thin-wave-groups,
// grid-fill, chained-loads, thin-chained-loads):
//   nvcc -I include -I src -std=c++17 --expt-relaxed-constexpr -x cu \
//     bench/results/h200-2026-12-05/candidates/row-block-group-choice.cu -o choice && ./choice
#include <cstdio>
#include "variants/gemv_t_rowblock.cuh"
using namespace xgemv;
struct Pick { int group; long long blocks; };  // group 0: none suits
template <int G> Pick pick(const GemvProblem &p, const DeviceLimits &d) {
  LaunchPlan plan;
  if (GemvTRowBlock<G>::suits(p, d, plan))
    return {G, (long long)plan.grid.x * plan.grid.y};
  if constexpr (G > 2) return pick<G / 2>(p, d); else return {0, 0};
}
int main() {
  const DeviceLimits device{132};
  const struct { const char *tag; long long m, n; } shapes[] = {
      {"qwen2.5-0.5b.qkv", 896, 1152}, {"qwen2.5-0.5b.o", 896, 896}, {"qwen2.5-0.5b.gate_up", 896, 9728},
      {"qwen2.5-0.5b.down", 4864, 896}, {"qwen2.5-0.5b.lm_head", 896, 151936},
      {"qwen2.5-1.5b.qkv", 1536, 2048}, {"qwen2.5-1.5b.o", 1536, 1536}, {"qwen2.5-1.5b.gate_up", 1536, 17920},
      {"qwen2.5-1.5b.down", 8960, 1536}, {"llama3.2-1b.qkv", 2048, 3072}, {"llama3.2-1b.o", 2048, 2048},
      {"gemma2-2b.o", 2048, 2304}, {"llama3.2-3b.qkv", 3072, 5120}, {"llama3.2-3b.o", 3072, 3072},
      {"smollm-135m.qkv", 576, 960}, {"smollm-135m.o", 576, 576}, {"smollm-135m.gate_up", 576, 3072},
      {"smollm-135m.down", 1536, 576}, {"smollm-360m.qkv", 960, 1600}, {"smollm-360m.o", 960, 960},
      {"smollm-360m.gate_up", 960, 5120}, {"tinyllama.qkv", 2048, 2560},
      {"qwen2.5-7b.qkv", 3584, 4608}, {"qwen2.5-7b.o", 3584, 3584}, {"qwen2.5-7b.gate_up", 3584, 37888},
      {"qwen2.5-7b.down", 18944, 3584}, {"llama3-8b.qkv", 4096, 6144}, {"llama3-8b.o", 4096, 4096},
      {"llama3-8b.gate_up", 4096, 28672}, {"llama3-8b.down", 14336, 4096},
      {"llama2-7b.gate_up", 4096, 22016}, {"llama2-13b.o", 5120, 5120}, {"llama3-70b.qkv", 8192, 10240},
      {"llama3-70b.o", 8192, 8192}, {"llama3-70b.down", 28672, 8192}, {"sq256", 256, 256},
      {"sq512", 512, 512}, {"sq1k", 1024, 1024}, {"wide-16", 16, 500000}, {"wide", 64, 1048576},
      {"odd-wide", 777, 100003}, {"primes", 10007, 10009}, {"tall", 1048576, 64},
      // held out: in no suite and not used to fit any group rule
      {"qwen3-0.6b.qkv", 1024, 4096}, {"qwen3-0.6b.o", 2048, 1024}, {"qwen3-0.6b.gate_up", 1024, 6144},
      {"qwen3-0.6b.down", 3072, 1024}, {"gemma3-270m.qkv", 640, 1536}, {"gemma3-270m.o", 1024, 640},
      {"gemma3-270m.gate_up", 640, 4096}, {"gemma3-270m.down", 2048, 640},
      {"gemma3-1b.qkv", 1152, 1536}, {"gemma3-1b.o", 1024, 1152}, {"gemma3-1b.gate_up", 1152, 13824},
      {"gemma3-1b.down", 6912, 1152}, {"gpt2.qkv", 768, 2304}, {"gpt2.o", 768, 768},
      {"gpt2.fc1", 768, 3072}, {"gpt2.fc2", 3072, 768}, {"pythia-410m.qkv", 1024, 3072},
      {"pythia-410m.o", 1024, 1024}, {"pythia-410m.fc1", 1024, 4096}, {"tinyllama.o", 2048, 2048},
      {"tinyllama.gate_up", 2048, 11264}, {"tinyllama.down", 5632, 2048}};
  static __nv_bfloat16 a[16], x[16], y[16];
  static float fa[16], fx[16], fy[16];
  const float one = 1, zero = 0;
  for (const auto &s : shapes) {
    const GemvProblem p = single_problem('T', s.m, s.n, &one, a, s.m, x, 1, &zero, y, 1);
    const GemvProblem q = single_problem('T', s.m, s.n, &one, fa, s.m, fx, 1, &zero, fy, 1);
    const Pick b = pick<32>(p, device), f = pick<32>(q, device);
    std::printf("%-22s %8lldx%-8lld bf16 t_rowblock_%-2d (%4lld blocks) fp32 t_rowblock_%-2d (%4lld blocks)\n",
                s.tag, s.m, s.n, b.group, b.blocks, f.group, f.blocks);
  }
}
