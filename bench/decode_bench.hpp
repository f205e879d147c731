// The GPU side of the decode suite: a step's weights and vectors on one device, the fp64
// reference of every GEMV, and for the reads and each library the whole step captured as one
// CUDA graph, checked after one replay, then timed by replays. No CUDA types here, so the
// driver (decode_suite.cpp) stays plain C++.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lib/decode.hpp"
#include "lib/options.hpp"
#include "lib/report.hpp"

namespace xgemv::bench {

class DecodeBench {
 public:
  // The bench on CUDA device `ordinal`, or nullptr with the reason when there is none.
  static std::unique_ptr<DecodeBench> open(int ordinal, std::string* why_not);
  virtual ~DecodeBench() = default;

  // Device name, clocks, driver and CUDA runtime into `info`.
  virtual void describe(RunInfo& info) const = 0;
  // Frees the previous step's buffers, then allocates this step's; throws if they do not fit.
  virtual void reserve(const DecodeStep& step) = 0;
  // On the reserved step: fills fresh random operands of `dtype`, computes every GEMV's
  // reference, then gives the rows of the reads and of every library options wants (in
  // kDecodeLibraries order), each checked before it is timed. Throws when the device fails.
  virtual std::vector<DecodeRow> run(const DecodeStep& step, Dtype dtype,
                                     const Options& options) = 0;
  // Current SM clock (NVML), 0 if unknown.
  virtual int sm_clock_mhz() const = 0;
};

}  // namespace xgemv::bench
