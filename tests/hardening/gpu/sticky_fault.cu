#include "sticky_fault.hpp"

#include <cstdint>

namespace xgemv_test {
namespace {

__global__ void write_to_unmapped_address(int *address) { *address = 1; }

}  // namespace

cudaError_t provoke_sticky_fault() {
  // The first page is never mapped on the device.
  write_to_unmapped_address<<<1, 1>>>(reinterpret_cast<int *>(uintptr_t{16}));
  return cudaDeviceSynchronize();
}

}  // namespace xgemv_test
