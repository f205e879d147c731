// The GPU side of xgemv-nccl-bench: one rank per GPU (its device session: a stream, an xgemv
// handle on it, timing events), one thread per rank for every phase of a measurement (each thread
// sets its GPU), NCCL communicators over the first P GPUs (ncclCommInitAll), and the
// measurements: split GEMVs (checked, then timed) and collectives. No CUDA or NCCL types here, so
// main.cpp stays plain C++.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lib/nccl_plan.hpp"
#include "lib/record.hpp"

namespace xgemv::bench {

class NcclBench {
 public:
  // CUDA devices visible, 0 with the reason when there is none.
  static int visible_gpus(std::string* why_none);
  // The version of the NCCL library loaded, "2.28.9".
  static std::string nccl_version();
  // A rank on each of the first `gpus` CUDA devices (1 <= gpus <= visible_gpus()); throws when
  // one cannot be set up.
  static std::unique_ptr<NcclBench> open(int gpus);
  virtual ~NcclBench() = default;

  // GPU 0's device, clocks and driver and NCCL's version into `info`; every GPU's name.
  virtual std::vector<std::string> describe(RunInfo& info) const = 0;
  // GPU 0's free memory now.
  virtual int64_t free_bytes() const = 0;
  // GPU 0's SM clock now (NVML), 0 if unknown.
  virtual int sm_clock_mhz() const = 0;
  // Communicators over the first `ranks` GPUs (those of the previous count destroyed first).
  virtual void use_gpus(int ranks) = 0;

  struct SplitTiming {
    bool flush_l2 = false;  // before every repetition
    bool graph = false;     // one CUDA graph per rank, replayed (stream launches if capture fails)
    bool ceiling = false;   // first the one-GPU read of the weights (on one GPU only)
  };
  // A list of split GEMVs run as one unit on every rank (a bandwidth case, a decode step): the
  // ranks' operands filled and their fp64 references computed, every rank's output checked after
  // one run (and after one replay of its graph), then timed; `prototype` filled in (P, mode,
  // check, time), after the ceiling's record where there is one. Throws when a device fails.
  virtual std::vector<Record> run_split(const Record& prototype,
                                        const std::vector<SplitGemv>& gemvs,
                                        const SplitTiming& timing, const NcclTimingPlan& plan) = 0;
  // A collective on every rank, back-to-back in one graph per rank (stream launches if capture
  // fails).
  virtual Record run_exchange(const Record& prototype, const ExchangeCase& exchange,
                              const NcclTimingPlan& plan) = 0;
};

}  // namespace xgemv::bench
