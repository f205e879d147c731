// A stand-in for libcublas.so.13 (same soname) that records each call instead of computing: the
// CPU tests of the drop-in's interposition and forwarding. Only the entry points the tests call
// are defined; each returns kFakeStatus, a status the drop-in never produces by itself.
#pragma once

#include <cublas_v2.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

constexpr cublasStatus_t kFakeStatus = CUBLAS_STATUS_LICENSE_ERROR;

// The last call the fake received: its name and every argument as 64 bits.
struct FakeCublasCall {
  char name[64];
  int argument_count;
  std::uint64_t arguments[20];
  int total_calls;
};

extern "C" const FakeCublasCall *fake_cublas_last_call(void);

// An argument as 64 bits: pointers by address, integers and enums sign-extended.
template <class T>
std::uint64_t argument_bits(T value) {
  if constexpr (std::is_pointer_v<T>) {
    return reinterpret_cast<std::uintptr_t>(value);
  } else {
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(value));
  }
}

// Whether `call` is `name` with exactly `args`.
template <class... Args>
bool is_call(const FakeCublasCall &call, const char *name, Args... args) {
  const std::uint64_t expected[] = {argument_bits(args)...};
  return std::strcmp(call.name, name) == 0 && call.argument_count == int(sizeof...(Args)) &&
         std::memcmp(call.arguments, expected, sizeof expected) == 0;
}
