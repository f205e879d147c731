// Deterministic pseudo-random operands, the same on host and device (constexpr, called from
// CUDA code with --expt-relaxed-constexpr), so host copies equal device copies bit for bit.
#pragma once

#include <cstdint>

namespace xgemv::bench {

// Seeds of the operands of a case.
inline constexpr uint64_t kSeedA = 1, kSeedX = 2, kSeedY = 3;

// splitmix64 of (seed, index), mapped to [-1, 1) on a 2^-11 grid: random signs (never timing
// zeros) and exact in fp16, fp32 and fp64 (bf16 rounds them).
constexpr float random_value(uint64_t seed, uint64_t index) {
  uint64_t z = index + seed * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<float>(static_cast<int>(z >> 52) - 2048) * (1.0f / 2048.0f);
}

}  // namespace xgemv::bench
