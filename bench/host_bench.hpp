// The host side: OpenBLAS on host copies of the same operands (fp32 and fp64: OpenBLAS has no
// fp16 GEMV), all cores, and the fp64 host reference for runs without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lib/case.hpp"
#include "lib/options.hpp"
#include "lib/record.hpp"

namespace xgemv::bench {

class HostBench {
 public:
  // fp32 and fp64 GEMVs of one vector.
  static bool supports(const Case& c) {
    return (c.dtype == Dtype::fp32 || c.dtype == Dtype::fp64) && c.nrhs == 1;
  }
  // "OpenBLAS <version and build>, <n> threads".
  static std::string describe();

  // Allocates host buffers once, for the largest supported case.
  void reserve(const std::vector<Case>& cases);
  // Fills the operands of c with the device's values (same generator, same seeds). Call first.
  void prepare(const Case& c);
  // y_ref of the prepared case, fp64 (for runs without a GPU).
  std::vector<double> reference(const Case& c) const;
  // cblas_?gemv checked against y_ref, then timed if correct.
  Record run_openblas(const Case& c, const std::vector<double>& y_ref, const Options& options);

 private:
  template <class T>
  Record run_typed(const Case& c, const std::vector<double>& y_ref, const Options& options);

  struct Buffer {
    std::unique_ptr<std::byte[]> data;
    int64_t bytes = 0;
    void allocate(int64_t size);
    template <class T>
    T* as() const {
      return reinterpret_cast<T*>(data.get());
    }
  };
  Buffer pool_, x_, y_, y_initial_;
};

}  // namespace xgemv::bench
