// Device memory for GPU tests: guard zones around every buffer, deliberate misalignment, and
// the handles a test needs. CUDA runtime errors become exceptions (check_cuda).
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <xgemv/xgemv.h>

#include "check_cuda.hpp"

namespace xgemv_test {

// All-ones bytes: a NaN in fp64, fp32, fp16 and bf16 alike, so a kernel that uses a guard or gap
// value shows it in its result, and one that writes there changes the bits.
inline constexpr unsigned char kGuardByte = 0xFF;

template <class T>
T guard_value() {
  std::array<unsigned char, sizeof(T)> bytes;
  bytes.fill(kGuardByte);
  return std::bit_cast<T>(bytes);
}

// `size` elements of T placed `misalignment` elements past a 256-byte boundary, between two
// 256-byte guard zones filled with kGuardByte.
template <class T>
class GuardedDeviceBuffer {
 public:
  static constexpr size_t kGuardBytes = 256;

  explicit GuardedDeviceBuffer(size_t size, size_t misalignment = 0)
      : size_(size), data_offset_(kGuardBytes + misalignment * sizeof(T)) {
    total_bytes_ = data_offset_ + size_ * sizeof(T) + kGuardBytes;
    void *allocation = nullptr;
    check_cuda(cudaMalloc(&allocation, total_bytes_), "cudaMalloc");
    allocation_ = static_cast<unsigned char *>(allocation);
    check_cuda(cudaMemset(allocation_, kGuardByte, total_bytes_), "cudaMemset");
    wait_for_default_stream();
  }
  ~GuardedDeviceBuffer() { cudaFree(allocation_); }
  GuardedDeviceBuffer(const GuardedDeviceBuffer &) = delete;
  GuardedDeviceBuffer &operator=(const GuardedDeviceBuffer &) = delete;

  T *data() const { return reinterpret_cast<T *>(allocation_ + data_offset_); }
  size_t size() const { return size_; }

  void upload(const std::vector<T> &contents) {
    if (contents.size() != size_) throw std::invalid_argument("upload: size mismatch");
    check_cuda(cudaMemcpy(data(), contents.data(), size_ * sizeof(T), cudaMemcpyHostToDevice),
               "cudaMemcpy to device");
    wait_for_default_stream();
  }
  std::vector<T> download() const {
    std::vector<T> contents(size_);
    check_cuda(cudaMemcpy(contents.data(), data(), size_ * sizeof(T), cudaMemcpyDeviceToHost),
               "cudaMemcpy to host");
    return contents;
  }

  // Whether every byte outside the data (guards, and the misalignment gap) still holds
  // kGuardByte. Reads only those bytes, so it is cheap for any buffer size.
  ::testing::AssertionResult guards_intact(const char *name) const {
    const size_t tail_offset = data_offset_ + size_ * sizeof(T);
    std::vector<unsigned char> head(data_offset_), tail(total_bytes_ - tail_offset);
    check_cuda(cudaMemcpy(head.data(), allocation_, head.size(), cudaMemcpyDeviceToHost),
               "cudaMemcpy guard");
    check_cuda(
        cudaMemcpy(tail.data(), allocation_ + tail_offset, tail.size(), cudaMemcpyDeviceToHost),
        "cudaMemcpy guard");
    for (size_t i = 0; i < head.size(); ++i)
      if (head[i] != kGuardByte)
        return ::testing::AssertionFailure()
               << name << ": guard byte " << (data_offset_ - i) << " before the data overwritten";
    for (size_t i = 0; i < tail.size(); ++i)
      if (tail[i] != kGuardByte)
        return ::testing::AssertionFailure()
               << name << ": guard byte " << i << " after the data overwritten";
    return ::testing::AssertionSuccess();
  }

 private:
  // cudaMemset, and cudaMemcpy from pageable memory, may return before the device has written;
  // work on a non-blocking stream is not ordered after the default stream, so wait here.
  static void wait_for_default_stream() {
    check_cuda(cudaStreamSynchronize(nullptr), "sync after a default-stream write");
  }

  unsigned char *allocation_ = nullptr;
  size_t size_, data_offset_, total_bytes_ = 0;
};

// An xgemv handle and a cuBLAS handle on the current device, for the lifetime of a test suite.
class GpuHandles {
 public:
  GpuHandles() {
    const xgemv_status status = xgemv_create(&xgemv_);
    if (status != XGEMV_STATUS_SUCCESS)
      throw std::runtime_error(std::string("xgemv_create: ") + xgemv_status_string(status));
    if (cublasCreate_v2(&cublas_) != CUBLAS_STATUS_SUCCESS) {
      xgemv_destroy(xgemv_);
      throw std::runtime_error("cublasCreate_v2 failed");
    }
  }
  ~GpuHandles() {
    cublasDestroy_v2(cublas_);
    xgemv_destroy(xgemv_);
  }
  GpuHandles(const GpuHandles &) = delete;
  GpuHandles &operator=(const GpuHandles &) = delete;

  xgemv_handle xgemv() const { return xgemv_; }
  cublasHandle_t cublas() const { return cublas_; }

 private:
  xgemv_handle xgemv_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
};

// Base of test fixtures whose tests share one GpuHandles per test suite.
class GpuHandlesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { handles_ = std::make_unique<GpuHandles>(); }
  static void TearDownTestSuite() { handles_.reset(); }
  void SetUp() override { ASSERT_NE(handles_, nullptr) << "creating the handles failed"; }
  static const GpuHandles &gpu() { return *handles_; }

 private:
  static inline std::unique_ptr<GpuHandles> handles_;
};

}  // namespace xgemv_test
