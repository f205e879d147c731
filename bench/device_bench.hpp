// The GPU side of the bench: operands on one device, the fp64 reference, the stream-read
// ceiling and the device libraries (xgemv, cuBLAS) on the same buffers. No CUDA types here, so
// main.cpp stays plain C++.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lib/case.hpp"
#include "lib/options.hpp"
#include "lib/report.hpp"

namespace xgemv::bench {

struct DeviceCaseResult {
  std::vector<double> reference;  // y_ref of the case, fp64, logical order
  std::vector<Measurement> rows;  // the ceiling first, then each wanted library
};

class DeviceBench {
 public:
  // The bench on CUDA device `ordinal`, or nullptr with the reason when there is none.
  static std::unique_ptr<DeviceBench> open(int ordinal, std::string* why_not);
  virtual ~DeviceBench() = default;

  // Device name, clocks, driver and CUDA runtime into `info`.
  virtual void describe(RunInfo& info) const = 0;
  // Allocates the buffers once, for the largest of `cases`; throws if they do not fit.
  virtual void reserve(const std::vector<Case>& cases) = 0;
  // Fills fresh random operands, computes the reference, then for the ceiling and every
  // library that options wants: checks it against the reference, and times it if correct.
  virtual DeviceCaseResult run(const Case& c, const Options& options) = 0;
  // Current SM clock (NVML), 0 if unknown.
  virtual int sm_clock_mhz() const = 0;
};

}  // namespace xgemv::bench
