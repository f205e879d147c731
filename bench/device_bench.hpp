// The GPU side of xgemv-bench: operands on one device, the fp64 reference, the stream-read
// ceiling and the device libraries (xgemv, cuBLAS) on the same buffers; for a shape case back to
// back over rotated copies of A, for a decode step as one CUDA graph per library. No CUDA types
// here, so main.cpp stays plain C++.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lib/case.hpp"
#include "lib/decode.hpp"
#include "lib/options.hpp"
#include "lib/record.hpp"

namespace xgemv::bench {

class DeviceBench {
 public:
  // The bench on CUDA device `ordinal`, or nullptr with the reason when there is none.
  static std::unique_ptr<DeviceBench> open(int ordinal, std::string* why_not);
  virtual ~DeviceBench() = default;

  // Device name, clocks, driver and CUDA runtime into `info`.
  virtual void describe(RunInfo& info) const = 0;
  // Current SM clock (NVML), 0 if unknown.
  virtual int sm_clock_mhz() const = 0;

  // Shape cases: the buffers once, for the largest of `cases`; throws if they do not fit.
  virtual void reserve(const std::vector<Case>& cases) = 0;
  // Fills fresh random operands and computes the reference (`reference`: y_ref, fp64, logical
  // order), then gives the ceiling's record and one per library options wants for the case, each
  // checked against the reference and timed if correct.
  virtual std::vector<Record> run(const Case& c, const Options& options,
                                  std::vector<double>& reference) = 0;

  // Decode steps: frees the previous step's buffers, then allocates this step's; throws if they
  // do not fit.
  virtual void reserve(const DecodeStep& step) = 0;
  // On the reserved step: fills fresh random operands of `dtype`, computes every GEMV's
  // reference, then gives the records of the reads and of every library options wants, each
  // step captured as one graph, checked after one replay, then timed by replays.
  virtual std::vector<Record> run(const DecodeStep& step, Dtype dtype, const Options& options) = 0;
};

}  // namespace xgemv::bench
