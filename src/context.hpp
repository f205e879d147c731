// The handle behind xgemv_handle. Internal; the ABI layers see only the opaque pointer.
#pragma once

#include <xgemv/xgemv.h>

#include "launch/launch_plan.hpp"

struct xgemv_context {
  int device = 0;  // the device current at creation; calls must run with it current
  xgemv::DeviceLimits limits{};  // read once: plans size grids from it
  cudaStream_t stream = nullptr;
  xgemv_pointer_mode pointer_mode = XGEMV_POINTER_MODE_HOST;
  xgemv::SplitWorkspace workspace{};
  bool programmatic_launch = false;  // the device supports programmatic dependent launch
  bool early_start = false;          // kernels stream A before waiting for the previous kernel
  // Single-vector calls run on the several-right-hand-side kernels (their bits for nrhs == 1).
  bool batch_invariant = false;
  int forced_variant = -1;  // index into the variant table, or -1 for the automatic choice
  int last_variant = -1;    // the variant of the last launched call
};
