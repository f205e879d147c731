// What the drop-in test programs share (cublas_dropin_test.cpp, cublaslt_dropin_test.cpp): the
// run's expectation of who serves the calls (the mode the program was started in), failure
// bookkeeping and the verdict line, the log check around one call (ServedBy) and around the
// handle's destruction, exact comparisons, small-integer data (every product and sum exact, so
// a served call's result is compared by value) and device arrays.
#pragma once

#include <cublas_api.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "interface_test_support.h"
#include "support/element_types.hpp"

namespace dropin_test {

using xgemv_test::from_double;
using xgemv_test::to_double;

// --- bookkeeping --------------------------------------------------------------------------------

enum class Expect { xgemv, cublas, forwarded };
inline Expect expected_server = Expect::xgemv;
inline int failures = 0;
inline int calls_checked = 0;

inline void fail(const std::string &what) {
  if (++failures <= 40) std::printf("FAIL %s\n", what.c_str());
}

inline void check_cuda(cudaError_t error, const char *what) {
  if (error != cudaSuccess) fail(std::string(what) + ": " + cudaGetErrorString(error));
}

// Streams are destroyed at exit, not when done with: a new stream may take a destroyed one's
// address, which the drop-in would take for the stream it knows (interface/README.md).
inline std::vector<cudaStream_t> used_streams;
inline void retire(cudaStream_t stream) { used_streams.push_back(stream); }

// The real cuBLAS (cuBLASLt) entry point `name`, past any drop-in.
template <class Function>
Function real_cublas(const char *name) {
  static void *const library = dlopen("libcublas.so.13", RTLD_LAZY | RTLD_NOLOAD);
  return reinterpret_cast<Function>(library != nullptr ? dlsym(library, name) : nullptr);
}
template <class Function>
Function real_cublas_lt(const char *name) {
  static void *const library = dlopen("libcublasLt.so.13", RTLD_LAZY | RTLD_NOLOAD);
  return reinterpret_cast<Function>(library != nullptr ? dlsym(library, name) : nullptr);
}

// Captures stderr around one call and checks who served it, by the run's expectation; with the
// drop-in on, its log line must hold `detail` too when given (e.g. " nrhs=4 " for a call xgemv
// serves, the reason for one it forwards).
class ServedBy {
 public:
  ServedBy(std::string entry, bool valid_blas, std::string context, std::string detail = "",
           std::string forwarded_to = "cublas")
      : entry_(std::move(entry)),
        valid_blas_(valid_blas),
        context_(std::move(context)),
        detail_(std::move(detail)),
        forwarded_to_(std::move(forwarded_to)) {
    test_capture_begin(2);
  }
  ServedBy(const ServedBy &) = delete;
  ServedBy &operator=(const ServedBy &) = delete;
  ~ServedBy() {
    const std::string log = test_capture_end();
    ++calls_checked;
    const std::string prefix = std::string("xgemv_cublas: ") + entry_ + " -> ";
    std::string wanted;
    switch (expected_server) {
      case Expect::cublas:
        if (log.find("xgemv_cublas:") != std::string::npos)
          fail(context_ + ": drop-in log line without the drop-in: " + log);
        return;
      case Expect::forwarded: wanted = prefix + forwarded_to_ + " (XGEMV_CUBLAS_DISABLE"; break;
      case Expect::xgemv: wanted = prefix + (valid_blas_ ? "xgemv (" : forwarded_to_ + " ("); break;
    }
    const size_t line = log.find(wanted);
    if (line == std::string::npos) {
      fail(context_ + ": expected \"" + wanted + "\" in the log, got \"" + log + "\"");
    } else if (expected_server == Expect::xgemv && !detail_.empty() &&
               log.substr(line, log.find('\n', line) - line).find(detail_) == std::string::npos) {
      fail(context_ + ": expected \"" + detail_ + "\" in the log line, got \"" + log + "\"");
    }
  }

 private:
  std::string entry_;  // owned: callers pass names built on the fly (e.g. the _64 forms)
  bool valid_blas_;
  std::string context_;
  std::string detail_;
  std::string forwarded_to_;  // the log's name of the real library: cublas, cublasLt
};

// --- element types ------------------------------------------------------------------------------

template <class T>
bool same_value(T a, T b) {  // exact; NaN equals NaN (both untouched)
  const double x = to_double(a), y = to_double(b);
  return x == y || (std::isnan(x) && std::isnan(y));
}

// Exact by value (zeros of either sign): a served call against the host loop.
template <class T>
bool same_values(const std::vector<T> &a, const std::vector<T> &b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!same_value(a[i], b[i])) return false;
  return true;
}

// Bit for bit: a forwarded call against the real cuBLAS.
template <class T>
bool same_bits(const std::vector<T> &a, const std::vector<T> &b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

inline uint32_t random_state = 2024;
inline int small_integer() {  // in [-2, 2]
  random_state = random_state * 1664525u + 1013904223u;
  return int((random_state >> 16) % 5) - 2;
}

template <class T>
std::vector<T> random_values(size_t count) {
  std::vector<T> values(count);
  for (T &value : values) value = from_double<T>(small_integer());
  return values;
}

template <class T>
class DeviceArray {
 public:
  explicit DeviceArray(const std::vector<T> &host) : size_(host.size()) {
    check_cuda(cudaMalloc(&data_, std::max<size_t>(size_, 1) * sizeof(T)), "cudaMalloc");
    check_cuda(cudaMemcpy(data_, host.data(), size_ * sizeof(T), cudaMemcpyHostToDevice),
               "cudaMemcpy to device");
    // A pageable copy may return before the device has written; work on a non-blocking stream
    // is not ordered after the default stream.
    check_cuda(cudaStreamSynchronize(nullptr), "cudaMemcpy to device: sync");
  }
  DeviceArray(const DeviceArray &) = delete;
  DeviceArray &operator=(const DeviceArray &) = delete;
  ~DeviceArray() { cudaFree(data_); }

  T *get() const { return data_; }
  std::vector<T> read() const {
    std::vector<T> host(size_);
    check_cuda(cudaMemcpy(host.data(), data_, size_ * sizeof(T), cudaMemcpyDeviceToHost),
               "cudaMemcpy to host");
    return host;
  }

 private:
  T *data_ = nullptr;
  size_t size_;
};

// Runs `destroy` (the program's cublasDestroy_v2 or cublasLtDestroy call, which the drop-in logs
// as `entry -> server`) and checks that, with the drop-in on, it released the xgemv handles
// behind the handle.
template <class Destroy>
void check_destroy_releases(const char *entry, const char *server, Destroy destroy) {
  test_capture_begin(2);
  const cublasStatus_t destroyed = destroy();
  const std::string log = test_capture_end();
  if (destroyed != CUBLAS_STATUS_SUCCESS) fail(entry);
  const std::string released =
      std::string("xgemv_cublas: ") + entry + " -> " + server + " (released ";
  if (expected_server == Expect::xgemv &&
      (log.find(released) == std::string::npos || log.find("released 0 ") != std::string::npos))
    fail(std::string(entry) + " did not release the xgemv handles: " + log);
}

// Destroys the retired streams and prints the run's verdict line; the program's exit status.
inline int finish() {
  for (cudaStream_t stream : used_streams) cudaStreamDestroy(stream);
  std::printf("%s: %d call(s) checked, %d failure(s)\n", failures ? "FAILED" : "PASSED",
              calls_checked, failures);
  return failures ? 1 : 0;
}

// The mode the program was started in (xgemv, cublas, forwarded), into expected_server; false
// for anything else.
inline bool parse_mode(const std::string &mode) {
  if (mode == "xgemv") expected_server = Expect::xgemv;
  else if (mode == "cublas") expected_server = Expect::cublas;
  else if (mode == "forwarded") expected_server = Expect::forwarded;
  else return false;
  return true;
}

// The start of a program: its mode from argv[1], and a GPU. The exit status to stop with (2 for
// a usage error, TEST_SKIPPED without a CUDA device), or 0 to go on.
inline int start(int argc, char **argv) {
  if (!parse_mode(argc > 1 ? argv[1] : "")) {
    std::printf("usage: %s xgemv|cublas|forwarded\n", argv[0]);
    return 2;
  }
  if (test_gpu_count() == 0) {
    std::printf("SKIPPED: no CUDA device\n");
    return TEST_SKIPPED;
  }
  return 0;
}

// Whether the real library's entry point was found by soname (past any drop-in); says so if not.
inline bool found_real(const void *entry, const char *library) {
  if (entry == nullptr) std::printf("FAIL: the real %s is not found by soname\n", library);
  return entry != nullptr;
}

// Whether a handle was created; says which call failed if not.
inline bool created(cublasStatus_t status, const char *create) {
  if (status != CUBLAS_STATUS_SUCCESS) std::printf("FAIL: %s\n", create);
  return status == CUBLAS_STATUS_SUCCESS;
}

}  // namespace dropin_test
