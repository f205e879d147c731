// Status strings (the quantized-weight ones too) and argument positions (the few-right-hand-side
// ones too), version, handle
// functions given NULL, the text of the last CUDA error, and xgemv_create on a machine without a
// CUDA device.
#include <cstring>
#include <set>
#include <string>
#include <thread>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <xgemv/xgemv.h>

namespace {

// Every distinct value (INVALID_LDX and INVALID_LDY share INVALID_INCX's and INVALID_INCY's).
constexpr xgemv_status kAllStatuses[] = {
    XGEMV_STATUS_SUCCESS,          XGEMV_STATUS_INVALID_TRANS,        XGEMV_STATUS_INVALID_M,
    XGEMV_STATUS_INVALID_N,        XGEMV_STATUS_INVALID_LDA,          XGEMV_STATUS_INVALID_INCX,
    XGEMV_STATUS_INVALID_INCY,     XGEMV_STATUS_INVALID_NRHS,         XGEMV_STATUS_INVALID_HANDLE,
    XGEMV_STATUS_INVALID_BATCH,    XGEMV_STATUS_INVALID_POINTER_MODE, XGEMV_STATUS_NULL_POINTER,
    XGEMV_STATUS_INVALID_POINTER,  XGEMV_STATUS_WRONG_DEVICE,         XGEMV_STATUS_NOT_SUPPORTED,
    XGEMV_STATUS_INVALID_VALUE,    XGEMV_STATUS_CUDA_ERROR,           XGEMV_STATUS_INTERNAL_ERROR,
    XGEMV_STATUS_NO_DEVICE,        XGEMV_STATUS_INVALID_SPLIT,        XGEMV_STATUS_NCCL_ERROR,
    XGEMV_STATUS_INVALID_QFORMAT,  XGEMV_STATUS_INVALID_QSHAPE,       XGEMV_STATUS_INVALID_GROUP_SIZE,
    XGEMV_STATUS_MISALIGNED,
};

TEST(Status, EveryStatusHasItsOwnDescription) {
  std::set<std::string> seen;
  for (xgemv_status status : kAllStatuses) {
    const char *text = xgemv_status_string(status);
    ASSERT_NE(text, nullptr) << status;
    EXPECT_GT(std::strlen(text), 0u) << status;
    EXPECT_TRUE(seen.insert(text).second) << "duplicate description: " << text;
  }
  // Values a C caller can hold that name no status (within the enum's range: no UB in C++).
  EXPECT_NE(xgemv_status_string(static_cast<xgemv_status>(28)), nullptr);
  EXPECT_NE(xgemv_status_string(static_cast<xgemv_status>(29)), nullptr);
}

TEST(Status, ArgumentErrorsNameTheirReferenceBlasPosition) {
  EXPECT_EQ(xgemv_status_argument(XGEMV_STATUS_INVALID_TRANS), 1);
  EXPECT_EQ(xgemv_status_argument(XGEMV_STATUS_INVALID_M), 2);
  EXPECT_EQ(xgemv_status_argument(XGEMV_STATUS_INVALID_N), 3);
  EXPECT_EQ(xgemv_status_argument(XGEMV_STATUS_INVALID_LDA), 6);
  EXPECT_EQ(xgemv_status_argument(XGEMV_STATUS_INVALID_INCX), 8);
  EXPECT_EQ(xgemv_status_argument(XGEMV_STATUS_INVALID_INCY), 11);
  for (xgemv_status status :
       {XGEMV_STATUS_SUCCESS, XGEMV_STATUS_INVALID_HANDLE, XGEMV_STATUS_INVALID_BATCH,
        XGEMV_STATUS_NULL_POINTER, XGEMV_STATUS_CUDA_ERROR, XGEMV_STATUS_NO_DEVICE,
        XGEMV_STATUS_NOT_SUPPORTED, XGEMV_STATUS_INVALID_QFORMAT, XGEMV_STATUS_INVALID_QSHAPE,
        XGEMV_STATUS_INVALID_GROUP_SIZE, XGEMV_STATUS_MISALIGNED, static_cast<xgemv_status>(28)})
    EXPECT_EQ(xgemv_status_argument(status), 0) << status;
}

// xgemv_?gemv_nrhs put X, ldx and Y, ldy where gemv has x, incx and y, incy, and nrhs last.
TEST(Status, NrhsArgumentErrorsNameTheirPositions) {
  EXPECT_EQ(XGEMV_STATUS_INVALID_LDX, XGEMV_STATUS_INVALID_INCX);
  EXPECT_EQ(XGEMV_STATUS_INVALID_LDY, XGEMV_STATUS_INVALID_INCY);
  EXPECT_EQ(xgemv_status_argument(XGEMV_STATUS_INVALID_LDX), 8);
  EXPECT_EQ(xgemv_status_argument(XGEMV_STATUS_INVALID_LDY), 11);
  EXPECT_EQ(xgemv_status_argument(XGEMV_STATUS_INVALID_NRHS), 12);
  const std::string ldx = xgemv_status_string(XGEMV_STATUS_INVALID_LDX);
  const std::string ldy = xgemv_status_string(XGEMV_STATUS_INVALID_LDY);
  const std::string nrhs = xgemv_status_string(XGEMV_STATUS_INVALID_NRHS);
  EXPECT_NE(ldx.find("ldx"), std::string::npos) << ldx;
  EXPECT_NE(ldx.find("incx"), std::string::npos) << ldx;
  EXPECT_NE(ldy.find("ldy"), std::string::npos) << ldy;
  EXPECT_NE(ldy.find("incy"), std::string::npos) << ldy;
  EXPECT_NE(nrhs.find("12"), std::string::npos) << nrhs;
  EXPECT_NE(nrhs.find("nrhs"), std::string::npos) << nrhs;
}

TEST(Status, NoDeviceSaysSoInWords) {
  EXPECT_STREQ(xgemv_status_string(XGEMV_STATUS_NO_DEVICE), "no NVIDIA driver or GPU found");
}

TEST(Version, LibraryHeaderAndProjectAgree) {
  int major = -1, minor = -1, patch = -1;
  xgemv_version(&major, &minor, &patch);
  EXPECT_EQ(major, XGEMV_VERSION_MAJOR);
  EXPECT_EQ(minor, XGEMV_VERSION_MINOR);
  EXPECT_EQ(patch, XGEMV_VERSION_PATCH);
  const std::string from_macros = std::to_string(XGEMV_VERSION_MAJOR) + "." +
                                  std::to_string(XGEMV_VERSION_MINOR) + "." +
                                  std::to_string(XGEMV_VERSION_PATCH);
  EXPECT_EQ(xgemv_version_string(), from_macros);
  EXPECT_EQ(from_macros, XGEMV_PROJECT_VERSION) << "include/xgemv/xgemv.h vs CMake project()";
}

TEST(Handle, FunctionsGivenNullReportAnInvalidHandle) {
  EXPECT_EQ(xgemv_destroy(nullptr), XGEMV_STATUS_SUCCESS);  // like free(NULL)
  cudaStream_t stream = nullptr;
  xgemv_pointer_mode mode = XGEMV_POINTER_MODE_HOST;
  EXPECT_EQ(xgemv_set_stream(nullptr, nullptr), XGEMV_STATUS_INVALID_HANDLE);
  EXPECT_EQ(xgemv_get_stream(nullptr, &stream), XGEMV_STATUS_INVALID_HANDLE);
  EXPECT_EQ(xgemv_set_pointer_mode(nullptr, XGEMV_POINTER_MODE_DEVICE),
            XGEMV_STATUS_INVALID_HANDLE);
  EXPECT_EQ(xgemv_get_pointer_mode(nullptr, &mode), XGEMV_STATUS_INVALID_HANDLE);
  int enabled = 7;
  EXPECT_EQ(xgemv_set_early_start(nullptr, 1), XGEMV_STATUS_INVALID_HANDLE);
  EXPECT_EQ(xgemv_get_early_start(nullptr, &enabled), XGEMV_STATUS_INVALID_HANDLE);
  EXPECT_EQ(xgemv_set_batch_invariant(nullptr, 1), XGEMV_STATUS_INVALID_HANDLE);
  EXPECT_EQ(xgemv_get_batch_invariant(nullptr, &enabled), XGEMV_STATUS_INVALID_HANDLE);
  EXPECT_EQ(xgemv_get_batch_invariant(nullptr, nullptr), XGEMV_STATUS_INVALID_HANDLE);
  EXPECT_EQ(enabled, 7) << "a refused getter leaves its output alone";
  EXPECT_EQ(xgemv_create(nullptr), XGEMV_STATUS_NULL_POINTER);
}

bool cuda_device_visible() {
  int devices = 0;
  return cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
}

// The last CUDA error is per thread: each check runs on a fresh thread.
template <class F>
void on_fresh_thread(F &&f) {
  std::thread(std::forward<F>(f)).join();
}

TEST(CudaErrorString, DescribesTheLastCudaErrorOfTheThread) {
  on_fresh_thread([] {
    EXPECT_EQ(xgemv_last_cuda_error(), cudaSuccess);
    EXPECT_STREQ(xgemv_cuda_error_string(), cudaGetErrorString(cudaSuccess));
  });
}

// Without a driver (this CPU machine) or a device: XGEMV_STATUS_NO_DEVICE, no handle, and the
// runtime's error recorded for this thread only, with its text.
TEST(Handle, CreateWithoutADeviceReportsNoDevice) {
  if (cuda_device_visible()) GTEST_SKIP() << "a CUDA device is visible";
  on_fresh_thread([] {
    xgemv_handle handle = nullptr;
    EXPECT_EQ(xgemv_create(&handle), XGEMV_STATUS_NO_DEVICE);
    EXPECT_EQ(handle, nullptr);
    const cudaError_t error = xgemv_last_cuda_error();
    EXPECT_TRUE(error == cudaErrorNoDevice || error == cudaErrorInsufficientDriver)
        << cudaGetErrorName(error);
    EXPECT_STREQ(xgemv_cuda_error_string(), cudaGetErrorString(error));
  });
  on_fresh_thread([] { EXPECT_EQ(xgemv_last_cuda_error(), cudaSuccess); });
}

}  // namespace
