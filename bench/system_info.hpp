// Facts about the run recorded with every result: commit, date, host CPU, whether there is an
// NVIDIA driver and GPU at all, and the GPU's clocks and driver through NVML when the driver
// provides it.
#pragma once

#include <memory>
#include <string>

#include "lib/options.hpp"
#include "lib/record.hpp"

namespace xgemv::bench {

// --commit if given, else `git rev-parse` of the source tree at run time (with "+dirty" for
// uncommitted changes to tracked files), else "unknown" (e.g. a copy of the tree without .git).
std::string project_commit(const std::string& override_commit);
std::string utc_now_iso8601();
std::string host_cpu_name();
// The facts of a run that need no GPU: the commit, the date, the host CPU, the command line,
// --quick; `host_blas` and the timing `mode` as the bench says them.
RunInfo describe_run(int argc, char** argv, const RunOptions& options, std::string host_blas,
                     std::string mode);

// True when the machine has no NVIDIA driver or no CUDA device: "no NVIDIA driver or GPU found".
// Other CUDA failures (a driver too old, a broken device) are DeviceBench::open's to report.
bool nvidia_driver_or_gpu_missing();

// NVML, loaded at run time (libnvidia-ml comes with the driver, not the toolkit); every query
// answers 0 or "" when NVML or the device is not there.
class Nvml {
 public:
  explicit Nvml(const std::string& pci_bus_id);
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  int sm_clock_mhz() const;  // now
  int max_sm_clock_mhz() const;
  int max_memory_clock_mhz() const;
  std::string driver_version() const;

 private:
  struct Api;
  std::unique_ptr<Api> api_;
};

}  // namespace xgemv::bench
