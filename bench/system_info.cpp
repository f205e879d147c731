#include "system_info.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <array>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <utility>

namespace xgemv::bench {
namespace {

// stdout of a shell command with trailing newlines removed; empty on failure.
std::string command_output(const std::string& command) {
  std::string output;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    std::array<char, 256> buffer;
    while (fgets(buffer.data(), buffer.size(), pipe)) output += buffer.data();
    if (pclose(pipe) != 0) output.clear();
  }
  while (!output.empty() && (output.back() == '\n' || output.back() == '\r')) output.pop_back();
  return output;
}

}  // namespace

std::string project_commit(const std::string& override_commit) {
  if (!override_commit.empty()) return override_commit;
  const std::string git = "git -C '" XGEMV_BENCH_SOURCE_DIR "' ";
  std::string commit = command_output(git + "rev-parse --short=12 HEAD 2>/dev/null");
  if (!commit.empty() &&
      !command_output(git + "status --porcelain --untracked-files=no 2>/dev/null").empty()) {
    commit += "+dirty";
  }
  return commit.empty() ? "unknown" : commit;
}

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::string host_cpu_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
  }
  return "unknown CPU";
}

RunInfo describe_run(int argc, char** argv, const RunOptions& options, std::string host_blas,
                     std::string mode) {
  RunInfo info;
  info.commit = project_commit(options.commit);
  info.date = utc_now_iso8601();
  info.host_cpu = host_cpu_name();
  info.host_blas = std::move(host_blas);
  for (int i = 0; i < argc; ++i) info.command += (i ? " " : "") + std::string(argv[i]);
  info.mode = std::move(mode);
  info.quick = options.quick;
  return info;
}

bool nvidia_driver_or_gpu_missing() {
  int devices = 0;
  const cudaError_t error = cudaGetDeviceCount(&devices);
  // With no driver at all the runtime says cudaErrorInsufficientDriver, as for one too old;
  // cudaDriverGetVersion gives 0 only when none is installed.
  int driver = 0;
  const bool no_driver = cudaDriverGetVersion(&driver) == cudaSuccess && driver == 0;
  return no_driver || error == cudaErrorNoDevice || (error == cudaSuccess && devices == 0);
}

// The few NVML entry points used, declared here (the toolkit may not ship nvml.h); their
// signatures are part of NVML's stable C ABI.
struct Nvml::Api {
  using Device = struct NvmlDevice*;
  enum ClockType : int { kSm = 1, kMemory = 2 };
  void* library = nullptr;
  Device device = nullptr;
  int (*shutdown)() = nullptr;
  int (*clock_info)(Device, ClockType, unsigned*) = nullptr;
  int (*max_clock_info)(Device, ClockType, unsigned*) = nullptr;
  int (*driver_version)(char*, unsigned) = nullptr;

  template <class F>
  bool load(F*& function, const char* name) {
    function = reinterpret_cast<F*>(dlsym(library, name));
    return function != nullptr;
  }
};

Nvml::Nvml(const std::string& pci_bus_id) : api_(std::make_unique<Api>()) {
  api_->library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!api_->library) return;
  int (*init)() = nullptr;
  int (*device_by_bus_id)(const char*, Api::Device*) = nullptr;
  const bool loaded = api_->load(init, "nvmlInit_v2") &&
                      api_->load(device_by_bus_id, "nvmlDeviceGetHandleByPciBusId_v2") &&
                      api_->load(api_->shutdown, "nvmlShutdown") &&
                      api_->load(api_->clock_info, "nvmlDeviceGetClockInfo") &&
                      api_->load(api_->max_clock_info, "nvmlDeviceGetMaxClockInfo") &&
                      api_->load(api_->driver_version, "nvmlSystemGetDriverVersion");
  if (!loaded || init() != 0) {
    dlclose(api_->library);
    api_->library = nullptr;
    return;
  }
  if (device_by_bus_id(pci_bus_id.c_str(), &api_->device) != 0) api_->device = nullptr;
}

Nvml::~Nvml() {
  if (!api_->library) return;
  api_->shutdown();
  dlclose(api_->library);
}

int Nvml::sm_clock_mhz() const {
  unsigned mhz = 0;
  return api_->device && api_->clock_info(api_->device, Api::kSm, &mhz) == 0 ? int(mhz) : 0;
}

int Nvml::max_sm_clock_mhz() const {
  unsigned mhz = 0;
  return api_->device && api_->max_clock_info(api_->device, Api::kSm, &mhz) == 0 ? int(mhz) : 0;
}

int Nvml::max_memory_clock_mhz() const {
  unsigned mhz = 0;
  return api_->device && api_->max_clock_info(api_->device, Api::kMemory, &mhz) == 0 ? int(mhz) : 0;
}

std::string Nvml::driver_version() const {
  char version[96] = {};
  return api_->library && api_->driver_version(version, sizeof version) == 0 ? version : "";
}

}  // namespace xgemv::bench
