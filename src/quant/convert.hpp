// The conversions into and out of a weight's storage (xgemv_quant.h): their launchers on a
// stream (convert.cu), called by the C entry points (convert_api.cpp) once every argument has
// been checked. Each launches a few kernels, asynchronously, allocating nothing, and returns the
// first launch error (cudaGetLastError after every launch). Nothing throws.
#pragma once

#include <cuda_runtime_api.h>

#include "quant/qweight.hpp"

namespace xgemv::quant {

// xgemv_qweight_pack's tensors (zeros, permutation: nullptr where the weight has none).
struct PlainTensors {
  const void *codes;
  int64_t ldc;
  const void *scales;
  int64_t lds;
  const uint8_t *zeros;
  int64_t ldz;
  const int32_t *permutation;
};

// A GPTQ or AWQ checkpoint's tensors (qzeros: nullptr for a symmetric GPTQ weight; g_idx:
// GPTQ act-order only).
struct CheckpointTensors {
  const int32_t *qweight;
  const int32_t *qzeros;
  const void *scales;
  const int32_t *g_idx;
  bool zeros_minus_one;
};

cudaError_t launch_pack(const xgemv_qweight_st &weight, const PlainTensors &tensors,
                        cudaStream_t stream) noexcept;
cudaError_t launch_pack_gptq(const xgemv_qweight_st &weight, const CheckpointTensors &tensors,
                             cudaStream_t stream) noexcept;
cudaError_t launch_pack_awq(const xgemv_qweight_st &weight, const CheckpointTensors &tensors,
                            cudaStream_t stream) noexcept;
cudaError_t launch_quantize(const xgemv_qweight_st &weight, const void *weights, int64_t ldw,
                            cudaStream_t stream) noexcept;
cudaError_t launch_dequantize(const xgemv_qweight_st &weight, void *out, int64_t ldw,
                              xgemv_datatype out_type, cudaStream_t stream) noexcept;

}  // namespace xgemv::quant
