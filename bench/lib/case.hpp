// One benchmark case: a GEMV problem (dtype, weight format, op, shape, strides, scalars, number of
// vectors) and the facts derived from it that every part of the bench agrees on (vector lengths,
// bytes moved, rounding units). Plain C++: shared by the host code, the CUDA code and the tests.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "support/gemv_layout.hpp"

namespace xgemv::bench {

enum class Dtype { fp32, fp64, fp16, bf16 };

inline constexpr Dtype kAllDtypes[] = {Dtype::fp32, Dtype::fp64, Dtype::fp16, Dtype::bf16};

std::string_view dtype_name(Dtype dtype);
std::optional<Dtype> parse_dtype(std::string_view name);
int element_size(Dtype dtype);
// Unit roundoff of the stored element type (the rounding of each output element).
double storage_roundoff(Dtype dtype);
// Unit roundoff of the accumulation: fp32 for fp32 and the 16-bit types, fp64 for fp64.
double accumulation_roundoff(Dtype dtype);

// The BLAS vector rules (storage a strided vector spans, where its logical elements lie), as the
// tests have them.
using xgemv_test::vector_extent;
using xgemv_test::vector_offset;

struct Case {
  std::string suite;  // llm, square, skinny, small, anchors or adhoc
  std::string tag;    // e.g. llama3-8b.qkv
  Dtype dtype = Dtype::fp32;
  char op = 'N';  // 'N' or 'T'; BLAS column-major m x n
  int64_t m = 0, n = 0;
  int64_t incx = 1, incy = 1;
  double alpha = 1.0, beta = 0.0;
  // Right-hand sides: X and Y are column-major with nrhs columns, each column packed after the
  // previous one (ldx = x_length(), ldy = y_length()); incx and incy are 1 when nrhs > 1.
  int64_t nrhs = 1;
  // How A is stored: empty for elements of the dtype (a quantized suite would say int4-g128).
  std::string format;

  bool transposed() const { return op == 'T'; }
  int64_t lda() const { return std::max<int64_t>(1, m); }
  // The BLAS call of the case, for the host reference GEMV.
  xgemv_test::GemvShape gemv_shape() const { return {op, m, n, lda(), incx, incy}; }
  int64_t x_length() const { return transposed() ? m : n; }
  int64_t y_length() const { return transposed() ? n : m; }
  int64_t reduction_length() const { return x_length(); }
  int64_t ldx() const { return x_length(); }
  int64_t ldy() const { return y_length(); }
  // Elements X and Y span: nrhs columns ld apart, each a BLAS vector with its increment.
  int64_t x_elements() const { return (nrhs - 1) * ldx() + vector_extent(x_length(), incx); }
  int64_t y_elements() const { return (nrhs - 1) * ldy() + vector_extent(y_length(), incy); }
  int64_t a_bytes() const { return m * n * element_size(dtype); }
  // What the call must move: A once (for all the vectors), every column of X and Y once
  // (bench/README.md, Method).
  int64_t bytes() const { return (m * n + nrhs * (x_length() + y_length())) * element_size(dtype); }
  std::string shape() const;  // "4096x14336" (m x n)
};

// Parses "4096x14336" (m x n, both >= 1).
std::optional<std::pair<int64_t, int64_t>> parse_shape(std::string_view text);

}  // namespace xgemv::bench
