// The C ABI of xgemv_quant.h: weights (info checked once, the layout of their storage) and the
// GEMV calls on them, thin over the core's one path (core.hpp). The conversions into a weight's
// storage are convert_api.cpp. Nothing here can throw.
#include <new>

#include "core.hpp"
#include "quant/qweight.hpp"

extern "C" {

xgemv_status xgemv_qweight_get_layout(const xgemv_qweight_info *info,
                                      xgemv_qweight_layout *layout) {
  if (info == nullptr || layout == nullptr) return XGEMV_STATUS_NULL_POINTER;
  return xgemv::quant::plan_layout(*info, *layout);
}

xgemv_status xgemv_qweight_create(xgemv_qweight *weight, const xgemv_qweight_info *info,
                                  void *storage) {
  if (weight == nullptr || info == nullptr) return XGEMV_STATUS_NULL_POINTER;
  *weight = nullptr;
  xgemv_qweight_layout layout;
  if (const xgemv_status status = xgemv::quant::plan_layout(*info, layout);
      status != XGEMV_STATUS_SUCCESS)
    return status;
  if (storage == nullptr) return XGEMV_STATUS_NULL_POINTER;
  if (reinterpret_cast<uintptr_t>(storage) % xgemv::quant::kStorageAlignment != 0)
    return XGEMV_STATUS_MISALIGNED;
  auto *made = new (std::nothrow) xgemv_qweight_st{*info, layout, storage};
  if (made == nullptr) return XGEMV_STATUS_INTERNAL_ERROR;
  *weight = made;
  return XGEMV_STATUS_SUCCESS;
}

xgemv_status xgemv_qweight_destroy(xgemv_qweight weight) {
  delete weight;
  return XGEMV_STATUS_SUCCESS;
}

xgemv_status xgemv_qweight_get_info(xgemv_qweight weight, xgemv_qweight_info *info) {
  if (weight == nullptr || info == nullptr) return XGEMV_STATUS_NULL_POINTER;
  *info = weight->info;
  return XGEMV_STATUS_SUCCESS;
}

xgemv_status xgemv_qgemv_bias(xgemv_handle handle, const float *alpha, xgemv_qweight weight,
                              const void *X, int64_t ldx, const float *beta, void *Y,
                              int64_t ldy, xgemv_datatype y_type, int64_t nrhs,
                              const void *bias) {
  if (weight == nullptr) return XGEMV_STATUS_NULL_POINTER;
  xgemv_status status = XGEMV_STATUS_SUCCESS;
  std::optional<xgemv::GemvProblem> problem = xgemv::quant::qgemv_problem(
      *weight, alpha, X, ldx, beta, Y, ldy, y_type, nrhs, &status);
  if (!problem) return status;
  problem->bias = bias;
  return xgemv::check_and_run(handle, *problem);
}

xgemv_status xgemv_qgemv_nrhs(xgemv_handle handle, const float *alpha, xgemv_qweight weight,
                              const void *X, int64_t ldx, const float *beta, void *Y,
                              int64_t ldy, xgemv_datatype y_type, int64_t nrhs) {
  return xgemv_qgemv_bias(handle, alpha, weight, X, ldx, beta, Y, ldy, y_type, nrhs,
                          /*bias=*/nullptr);
}

xgemv_status xgemv_qgemv(xgemv_handle handle, const float *alpha, xgemv_qweight weight,
                         const void *x, const float *beta, void *y, xgemv_datatype y_type) {
  if (weight == nullptr) return XGEMV_STATUS_NULL_POINTER;
  return xgemv_qgemv_nrhs(handle, alpha, weight, x, weight->info.inputs, beta, y,
                          weight->info.outputs, y_type, 1);
}

}  // extern "C"
