// The one dispatch place: argument checks, quick return, the choice of kernel and split, and
// the launch. Every ABI layer comes through xgemv::gemv.
#include <cstdlib>
#include <algorithm>

#include "context.hpp"
#include "core.hpp"
#include "kernels/gemv_n_rowtile.cuh"
#include "kernels/gemv_t_rowblock.cuh"

namespace xgemv {
namespace {

using kernels::GemvParams;

// Resident blocks of 256 threads per SM (the kernels are bounded to 64 registers): a grid below
// one wave leaves bandwidth unused, so the reduction axis is split to reach it.
constexpr int64_t kResidentBlocksPerSm = 4;
constexpr int64_t kMaxGridZ = 65535;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

struct LaunchShape {
  dim3 grid;
  int ksplit = 1;
  int64_t split_len = 0;
};

// Splits a reduction of `length` elements (in units of `granule`) so that tiles * ksplit
// reaches the resident-block target, within the workspace.
template <class S>
LaunchShape plan_split(const xgemv_context &ctx, int64_t tiles, int64_t batch, int64_t length,
                       int64_t granule, int tile_outputs, int64_t waves = 1) {
  LaunchShape shape;
  const int64_t target = int64_t(ctx.sm_count) * kResidentBlocksPerSm * waves;
  const int64_t tiles_total = tiles * batch;
  int64_t ksplit = 1;
  if (tiles_total < target) {
    // Whole waves only: a split count that overshoots the target leaves a second, mostly empty
    // wave (98 tiles x 6 splits = 588 blocks for 528 slots ran the tail at 11% occupancy).
    ksplit = target / tiles_total;
    ksplit = std::min(ksplit, std::max<int64_t>(1, length / (2 * granule)));
    const int64_t partial_capacity = int64_t(ctx.partial_bytes / sizeof(S)) / (tiles_total * tile_outputs);
    ksplit = std::min(ksplit, partial_capacity);
    if (tiles_total > ctx.tile_counter_count) ksplit = 1;
    ksplit = std::max<int64_t>(ksplit, 1);
  }
  shape.split_len = ceil_div(ceil_div(length, ksplit), granule) * granule;
  shape.ksplit = int(ceil_div(length, shape.split_len));
  shape.grid = dim3(unsigned(tiles), unsigned(shape.ksplit), unsigned(std::min(batch, kMaxGridZ)));
  return shape;
}

template <class TA, class TY, class S, int kGroup>
cudaError_t launch_t(const xgemv_context &ctx, cudaLaunchConfig_t &config,
                     GemvParams<TA, TY, S> &params) {
  constexpr int kOutputs = kernels::kRowBlockThreads / kGroup;
  const LaunchShape shape = plan_split<S>(
      ctx, ceil_div(params.n, kOutputs), params.batch_count, params.m,
      int64_t(kernels::kRowBlockUnroll) * kGroup * kernels::kElemsPer16B<TA>, kOutputs);
  params.ksplit = shape.ksplit;
  params.split_len = shape.split_len;
  config.gridDim = shape.grid;
  config.blockDim = dim3(kernels::kRowBlockThreads);
  return cudaLaunchKernelEx(&config, kernels::gemv_t_rowblock<TA, TY, S, kGroup>, params);
}

template <class TA, class TY, class S, int kRowThreads>
LaunchShape plan_n(const xgemv_context &ctx, const GemvParams<TA, TY, S> &params, int64_t waves) {
  constexpr int kSlots = kernels::kRowTileThreads / kRowThreads;
  return plan_split<S>(ctx, ceil_div(params.m, kernels::kRowTileRows<TA, kRowThreads>),
                       params.batch_count, params.n, int64_t(kernels::kRowTileUnroll) * kSlots,
                       kernels::kRowTileRows<TA, kRowThreads>, waves);
}

template <class TA, class TY, class S, int kRowThreads>
cudaError_t launch_n(cudaLaunchConfig_t &config, GemvParams<TA, TY, S> &params,
                     const LaunchShape &shape) {
  params.ksplit = shape.ksplit;
  params.split_len = shape.split_len;
  config.gridDim = shape.grid;
  config.blockDim = dim3(kernels::kRowTileThreads);
  return cudaLaunchKernelEx(&config, kernels::gemv_n_rowtile<TA, TY, S, kRowThreads>, params);
}

// A split block that walks fewer columns than this spends a visible share of its time on the
// partial sums (measured on the H200: 4096 x 4096 fp16 op N, 62 columns per split, 40% slower).
constexpr int64_t kMinSplitColumns = 256;

template <class TA, class TY, class S>
cudaError_t launch(const xgemv_context &ctx, bool transposed, GemvParams<TA, TY, S> params) {
  constexpr int kElems = kernels::kElemsPer16B<TA>;
  cudaLaunchConfig_t config = {};
  config.stream = ctx.stream;
  if (transposed) {
    // Lanes per output: as many as still give each lane kRowBlockUnroll 16-byte loads, so short
    // reductions (wide op T) pack several outputs into a warp.
    const int64_t lanes = params.m / (int64_t(kElems) * kernels::kRowBlockUnroll);
    if (lanes >= 32) return launch_t<TA, TY, S, 32>(ctx, config, params);
    if (lanes >= 16) return launch_t<TA, TY, S, 16>(ctx, config, params);
    if (lanes >= 8) return launch_t<TA, TY, S, 8>(ctx, config, params);
    if (lanes >= 4) return launch_t<TA, TY, S, 4>(ctx, config, params);
    return launch_t<TA, TY, S, 2>(ctx, config, params);
  }
  // op N, from an H200 sweep of row tile (8/32/128 threads) x grid size (1/2/4 waves) over the
  // anchor shapes: the 32-thread tile with two waves of blocks, else one wave, as long as each
  // split block walks >= kMinSplitColumns; otherwise (short m, or short n) the 8-thread tile,
  // whose 4x shorter rows give each split 4x more columns. The 128-thread tile never won by
  // more than 5% and lost up to 5x, so it is not built.
  if (params.m >= kernels::kRowTileRows<TA, 32>) {
    for (const int64_t waves : {2, 1}) {
      const LaunchShape shape = plan_n<TA, TY, S, 32>(ctx, params, waves);
      if (shape.ksplit == 1 || shape.split_len >= kMinSplitColumns)
        return launch_n<TA, TY, S, 32>(config, params, shape);
    }
  }
  return launch_n<TA, TY, S, 8>(config, params, plan_n<TA, TY, S, 8>(ctx, params, 1));
}

// XGEMV_CHECK_POINTERS=1: read once; each call then asks the driver about every pointer.
bool pointer_checks_enabled() {
  static const bool enabled = [] {
    const char *value = std::getenv("XGEMV_CHECK_POINTERS");
    return value != nullptr && value[0] != '\0' && value[0] != '0';
  }();
  return enabled;
}

// Whether `device` can read p (device memory of that device, or managed memory), or the driver's
// error when it cannot say: a sticky error from an earlier fault is not a verdict on p.
cudaError_t query_device_access(const void *p, int device, bool &accessible) {
  accessible = false;
  cudaPointerAttributes attributes;
  if (const cudaError_t error = cudaPointerGetAttributes(&attributes, p); error != cudaSuccess) {
    if (error != cudaErrorInvalidValue) return error;
    cudaGetLastError();  // "not a pointer the driver knows": the query's error, not the caller's
    return cudaSuccess;
  }
  accessible = attributes.type == cudaMemoryTypeManaged ||
               (attributes.type == cudaMemoryTypeDevice && attributes.device == device);
  return cudaSuccess;
}

xgemv_status cuda_failure(cudaError_t error) {
  set_last_cuda_error(error);
  return XGEMV_STATUS_CUDA_ERROR;
}

}  // namespace

template <class TA, class TY, class S>
xgemv_status gemv(xgemv_handle handle, const GemvCall<TA, TY, S> &call) noexcept {
  const xgemv_status argument_status =
      check_gemv_arguments(call.trans, call.m, call.n, call.lda, call.incx, call.incy);
  if (argument_status != XGEMV_STATUS_SUCCESS) return argument_status;
  if (call.batch_count < 0) return XGEMV_STATUS_INVALID_BATCH;
  if (handle == nullptr) return XGEMV_STATUS_INVALID_HANDLE;
  if (call.m == 0 || call.n == 0 || call.batch_count == 0) return XGEMV_STATUS_SUCCESS;
  if (call.alpha == nullptr || call.beta == nullptr) return XGEMV_STATUS_NULL_POINTER;

  const bool device_scalars = handle->pointer_mode == XGEMV_POINTER_MODE_DEVICE;
  S alpha = S(0), beta = S(0);
  if (!device_scalars) {
    alpha = *call.alpha;
    beta = *call.beta;
    if (alpha == S(0) && beta == S(1)) return XGEMV_STATUS_SUCCESS;
  }
  // A and x are not read when alpha == 0 (known only with host scalars).
  const bool reads_a_x = device_scalars || alpha != S(0);
  const bool pointer_arrays = call.a_array != nullptr || call.x_array != nullptr ||
                              call.y_array != nullptr;
  if (pointer_arrays) {
    if (call.a_array == nullptr || call.x_array == nullptr || call.y_array == nullptr)
      return XGEMV_STATUS_NULL_POINTER;
  } else if (call.y == nullptr || (reads_a_x && (call.a == nullptr || call.x == nullptr))) {
    return XGEMV_STATUS_NULL_POINTER;
  }

  int device = -1;
  if (const cudaError_t error = cudaGetDevice(&device); error != cudaSuccess)
    return cuda_failure(error);
  if (device != handle->device) return XGEMV_STATUS_WRONG_DEVICE;

  if (pointer_checks_enabled()) {
    const void *needed[] = {
        pointer_arrays ? static_cast<const void *>(call.a_array) : reads_a_x ? call.a : nullptr,
        pointer_arrays ? static_cast<const void *>(call.x_array) : reads_a_x ? call.x : nullptr,
        pointer_arrays ? static_cast<const void *>(call.y_array) : call.y,
        device_scalars ? call.alpha : nullptr, device_scalars ? call.beta : nullptr};
    for (const void *p : needed) {
      if (p == nullptr) continue;
      bool accessible = false;
      if (const cudaError_t error = query_device_access(p, device, accessible); error != cudaSuccess)
        return cuda_failure(error);
      if (!accessible) return XGEMV_STATUS_INVALID_POINTER;
    }
  }

  GemvParams<TA, TY, S> params{};
  params.m = call.m;
  params.n = call.n;
  params.a = call.a;
  params.lda = call.lda;
  params.stride_a = call.stride_a;
  params.x = call.x;
  params.incx = call.incx;
  params.stride_x = call.stride_x;
  params.y = call.y;
  params.incy = call.incy;
  params.stride_y = call.stride_y;
  params.a_array = call.a_array;
  params.x_array = call.x_array;
  params.y_array = call.y_array;
  params.batch_count = call.batch_count;
  params.alpha_value = alpha;
  params.beta_value = beta;
  params.alpha_ptr = device_scalars ? call.alpha : nullptr;
  params.beta_ptr = device_scalars ? call.beta : nullptr;
  params.partials = static_cast<S *>(handle->partials);
  params.tile_counters = handle->tile_counters;

  if (const cudaError_t error = launch(*handle, is_transposed(call.trans), params);
      error != cudaSuccess)
    return cuda_failure(error);
  return XGEMV_STATUS_SUCCESS;
}

template xgemv_status gemv(xgemv_handle, const GemvCall<float, float, float> &) noexcept;
template xgemv_status gemv(xgemv_handle, const GemvCall<double, double, double> &) noexcept;
template xgemv_status gemv(xgemv_handle, const GemvCall<__half, __half, float> &) noexcept;
template xgemv_status gemv(xgemv_handle,
                           const GemvCall<__nv_bfloat16, __nv_bfloat16, float> &) noexcept;
template xgemv_status gemv(xgemv_handle, const GemvCall<__half, float, float> &) noexcept;
template xgemv_status gemv(xgemv_handle, const GemvCall<__nv_bfloat16, float, float> &) noexcept;

}  // namespace xgemv
