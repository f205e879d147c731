// What every xgemv fuzz target shares: the Reference BLAS answer (written out here from
// BLAS/SRC/sgemv.f, independently of xgemv's checker), argument values drawn where the
// boundaries are, memory that faults when touched, and the check that stops the fuzzer.
#pragma once

#include <fuzzer/FuzzedDataProvider.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace xgemv_fuzz {

// A failed expectation: print it and abort, which libFuzzer reports as a crash and saves the
// input for replay (`<fuzzer> <crash file>`).
[[gnu::format(printf, 2, 3)]] inline void require(bool condition, const char *format, ...) {
  if (condition) return;
  std::fprintf(stderr, "xgemv fuzz: expectation failed: ");
  va_list values;
  va_start(values, format);
  std::vfprintf(stderr, format, values);
  va_end(values);
  std::fprintf(stderr, "\n");
  std::abort();
}

// LSAME of Reference BLAS: the same letter, either case (ASCII letters only).
constexpr bool lsame(char c, char upper) {
  return c == upper || (c >= 'a' && c <= 'z' && c - ('a' - 'A') == upper);
}

// INFO as sgemv.f / dgemv.f compute it: 0, or the position of the first invalid argument.
constexpr int reference_gemv_info(char trans, int64_t m, int64_t n, int64_t lda, int64_t incx,
                                  int64_t incy) {
  if (!lsame(trans, 'N') && !lsame(trans, 'T') && !lsame(trans, 'C')) return 1;
  if (m < 0) return 2;
  if (n < 0) return 3;
  if (lda < std::max<int64_t>(1, m)) return 6;
  if (incx == 0) return 8;
  if (incy == 0) return 11;
  return 0;
}

// An integer argument: mostly near the boundaries the checks test (0, 1, small negatives), else
// anywhere in Int's range (the extremes included, where 32/64-bit conversions break).
template <class Int>
Int consume_argument(FuzzedDataProvider &data) {
  switch (data.ConsumeIntegralInRange(0, 3)) {
    case 0: return data.ConsumeIntegralInRange<Int>(-2, 4);
    case 1: return data.ConsumeIntegralInRange<Int>(-(1 << 20), 1 << 20);
    case 2:
      return data.ConsumeBool()
                 ? std::numeric_limits<Int>::max() - data.ConsumeIntegralInRange<Int>(0, 2)
                 : std::numeric_limits<Int>::min() + data.ConsumeIntegralInRange<Int>(0, 2);
    default: return data.ConsumeIntegral<Int>();
  }
}

// A leading dimension: usually m plus a small offset (lda = m - 1, m, m + 1 are the interesting
// ones), else any argument value.
template <class Int>
Int consume_leading_dimension(FuzzedDataProvider &data, Int rows) {
  if (data.ConsumeBool()) return consume_argument<Int>(data);
  const Int offset = data.ConsumeIntegralInRange<Int>(-2, 2);
  const bool overflows = (offset > 0 && rows > std::numeric_limits<Int>::max() - offset) ||
                         (offset < 0 && rows < std::numeric_limits<Int>::min() - offset);
  return overflows ? rows : Int(rows + offset);
}

// A BLAS trans character: one of the valid six, a near miss, or any byte.
inline char consume_trans(FuzzedDataProvider &data) {
  static constexpr char kCandidates[] = {'N', 'n', 'T', 't', 'C', 'c', 'H', 'R', ' ', '\0'};
  return data.ConsumeBool() ? data.PickValueInArray(kCandidates) : data.ConsumeIntegral<char>();
}

// The input of a target for the float and double entry points (sgemv and dgemv of one ABI): its
// first bit picks the element type, the rest goes to fuzz(T{}, data).
template <class Fuzz>
int fuzz_float_or_double(const uint8_t *bytes, std::size_t size, Fuzz fuzz) {
  FuzzedDataProvider data(bytes, size);
  if (data.ConsumeBool()) {
    fuzz(float{}, data);
  } else {
    fuzz(double{}, data);
  }
  return 0;
}

// Address space that faults on any access (PROT_NONE). Pointers into it stand for arrays and
// scalars that a call must not touch: a read or write there crashes the fuzzer.
class PoisonedMemory {
 public:
  static constexpr std::size_t kBytes = std::size_t(1) << 24;

  static const PoisonedMemory &instance() {
    static const PoisonedMemory memory;
    return memory;
  }

  // `offset` bytes into the region, as a T*.
  template <class T>
  T *at(std::size_t offset) const {
    return reinterpret_cast<T *>(base_ + offset % kBytes);
  }
  bool contains(const void *p) const {
    const auto *byte = static_cast<const unsigned char *>(p);
    return byte >= base_ && byte < base_ + kBytes;
  }

 private:
  PoisonedMemory() {
    void *mapping = mmap(nullptr, kBytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    require(mapping != MAP_FAILED, "mmap of the poisoned region failed");
    base_ = static_cast<unsigned char *>(mapping);
  }
  unsigned char *base_ = nullptr;
};

}  // namespace xgemv_fuzz
