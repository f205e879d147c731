// One GEMV split over the ranks of a communicator (xgemv_nccl.h), end to end: random data for
// the whole problem, with guard values (NaN) in every gap; each rank's part of it (its block of A
// with an lda of its own, its x, its y); the call on every rank at once, twice; and every check
// the contract implies: the status, guards and gaps, A and x untouched, y within the rounding
// bound of OpenBLAS on the whole problem, the outputs split bit for bit the single-GPU xgemv call
// on each rank's block, the same bits on every rank and from call to call, alpha == 0 exactly
// beta*y, quick returns untouched. One rank per GPU, one thread per rank: a rank's collectives
// complete only when every rank has issued them.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nccl.h>
#include <xgemv/xgemv_nccl.h>

#include "nccl_calls.hpp"
#include "support/gemv_case.hpp"

namespace xgemv_test {

inline int cuda_device_count() {
  int devices = 0;
  check_cuda(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  return devices;
}

inline void check_nccl(ncclResult_t result, const char *what) {
  if (result != ncclSuccess)
    throw std::runtime_error(std::string(what) + ": " + ncclGetErrorString(result));
}

// One rank: its GPU, its communicator and its xgemv handle on a non-blocking stream of its own,
// so that work left on any other stream is not waited for by the checks.
struct Rank {
  int device = 0;
  ncclComm_t comm = nullptr;
  xgemv_handle handle = nullptr;
  cudaStream_t stream = nullptr;
};

// The ranks of one communicator (ncclCommInitAll), rank r on devices[r].
class Ranks {
 public:
  explicit Ranks(std::vector<int> devices) : ranks_(devices.size()) {
    const int count = static_cast<int>(devices.size());
    std::vector<ncclComm_t> comms(count);
    check_nccl(ncclCommInitAll(comms.data(), count, devices.data()), "ncclCommInitAll");
    for (int r = 0; r < count; ++r) {
      Rank &rank = ranks_[r];
      rank.device = devices[r];
      rank.comm = comms[r];
      check_cuda(cudaSetDevice(rank.device), "cudaSetDevice");
      check_cuda(cudaStreamCreateWithFlags(&rank.stream, cudaStreamNonBlocking),
                 "cudaStreamCreateWithFlags");
      if (xgemv_create(&rank.handle) != XGEMV_STATUS_SUCCESS)
        throw std::runtime_error("xgemv_create failed");
      xgemv_set_stream(rank.handle, rank.stream);
    }
    check_cuda(cudaSetDevice(devices[0]), "cudaSetDevice");
  }
  // Devices 0 .. count - 1.
  static std::vector<int> first_devices(int count) {
    std::vector<int> devices(count);
    for (int r = 0; r < count; ++r) devices[r] = r;
    return devices;
  }
  ~Ranks() {
    for (Rank &rank : ranks_) {
      cudaSetDevice(rank.device);
      xgemv_destroy(rank.handle);
      if (rank.stream) cudaStreamDestroy(rank.stream);
      if (rank.comm) ncclCommDestroy(rank.comm);
    }
    if (!ranks_.empty()) cudaSetDevice(ranks_[0].device);
  }
  Ranks(const Ranks &) = delete;
  Ranks &operator=(const Ranks &) = delete;

  int count() const { return static_cast<int>(ranks_.size()); }
  const Rank &operator[](int r) const { return ranks_[r]; }

  // f(r) for every rank at once, on a thread each with the rank's device current. An exception
  // on a thread becomes a test failure (another rank may then wait for it forever: the test's
  // timeout ends that).
  void run_all(const std::function<void(int)> &f) const {
    std::vector<std::thread> threads;
    std::mutex mutex;
    std::vector<std::string> errors;
    for (int r = 0; r < count(); ++r)
      threads.emplace_back([&, r] {
        try {
          check_cuda(cudaSetDevice(ranks_[r].device), "cudaSetDevice");
          f(r);
        } catch (const std::exception &e) {
          const std::lock_guard<std::mutex> lock(mutex);
          errors.push_back("rank " + std::to_string(r) + ": " + e.what());
        }
      });
    for (std::thread &thread : threads) thread.join();
    for (const std::string &error : errors) ADD_FAILURE() << error;
  }

 private:
  std::vector<Rank> ranks_;
};

struct SplitCase {
  xgemv_split split = XGEMV_SPLIT_OUTPUTS;
  xgemv_result result = XGEMV_RESULT_ALL;
  char trans = 'N';
  int64_t m = 1, n = 1;
  int64_t lda_padding = 0;  // each rank's lda = max(1, rows of its A) + lda_padding
  int64_t incx = 1;
  int64_t incy = 1;  // any only for the outputs split keeping own blocks, else 1
  ScalarChoice alpha = ScalarChoice::random, beta = ScalarChoice::random;
  xgemv_pointer_mode pointer_mode = XGEMV_POINTER_MODE_HOST;
  // ranks + 1 offsets along the split axis; empty: as even as can be.
  std::vector<int64_t> starts = {};

  bool transposed() const { return trans != 'N' && trans != 'n'; }
  int64_t outputs() const { return transposed() ? n : m; }
  int64_t reduction() const { return transposed() ? m : n; }
  int64_t axis() const { return split == XGEMV_SPLIT_OUTPUTS ? outputs() : reduction(); }
  std::vector<int64_t> starts_for(int ranks) const {
    if (!starts.empty()) return starts;
    std::vector<int64_t> even(ranks + 1);
    for (int r = 0; r <= ranks; ++r) even[r] = axis() * r / ranks;
    return even;
  }
};

// Calls f(c) with a case of each layout (outputs or reduction split, whole y or own blocks) and
// op (N, T), in that order: split, result and trans set, the rest at their defaults.
template <class F>
void for_each_layout(F &&f) {
  for (const xgemv_split split : {XGEMV_SPLIT_OUTPUTS, XGEMV_SPLIT_REDUCTION})
    for (const xgemv_result result : {XGEMV_RESULT_ALL, XGEMV_RESULT_OWN_BLOCK})
      for (const char trans : {'N', 'T'})
        f(SplitCase{.split = split, .result = result, .trans = trans});
}

inline std::string describe(const SplitCase &c, int ranks) {
  static constexpr const char *kScalarNames[] = {"0", "1", "-1.5", "random", "-1", "0.5"};
  std::ostringstream text;
  text << split_name(c.split) << ", " << result_name(c.result) << ", " << ranks
       << " rank(s), op " << c.trans << " m=" << c.m << " n=" << c.n
       << " lda padding=" << c.lda_padding << " incx=" << c.incx << " incy=" << c.incy
       << " alpha=" << kScalarNames[static_cast<int>(c.alpha)]
       << " beta=" << kScalarNames[static_cast<int>(c.beta)]
       << (c.pointer_mode == XGEMV_POINTER_MODE_DEVICE ? " device scalars" : " host scalars")
       << " starts";
  for (const int64_t s : c.starts_for(ranks)) text << ' ' << s;
  return text.str();
}

// Rank r's part of the whole problem, written out from xgemv_nccl.h independently of the
// library's own layout code.
struct RankPart {
  int64_t block_begin = 0, block_length = 0;
  int64_t local_m = 0, local_n = 0, lda = 1;
  int64_t row_offset = 0, column_offset = 0;  // where the rank's A starts in A
  int64_t x_begin = 0, x_length = 0;          // the logical elements of x it is given
  int64_t kept_begin = 0, kept_length = 0;    // the outputs its y holds
  int64_t incy = 1;

  GemvShape local_shape(char trans, int64_t incx) const {
    return {trans, local_m, local_n, lda, incx, incy};
  }
};

inline RankPart part_of(const SplitCase &c, const std::vector<int64_t> &starts, int ranks,
                        int r) {
  RankPart p;
  p.block_begin = starts[r];
  p.block_length = starts[r + 1] - starts[r];
  const bool outputs_split = c.split == XGEMV_SPLIT_OUTPUTS;
  // The outputs of op N and the reduction of op T are rows of A.
  const bool rows = outputs_split != c.transposed();
  p.local_m = rows ? p.block_length : c.m;
  p.local_n = rows ? c.n : p.block_length;
  p.lda = std::max<int64_t>(1, p.local_m) + c.lda_padding;
  p.row_offset = rows ? p.block_begin : 0;
  p.column_offset = rows ? 0 : p.block_begin;
  p.x_begin = outputs_split ? 0 : p.block_begin;
  p.x_length = outputs_split ? c.reduction() : p.block_length;
  if (outputs_split && c.result == XGEMV_RESULT_OWN_BLOCK) {
    p.kept_begin = p.block_begin;
    p.kept_length = p.block_length;
    p.incy = c.incy;
  } else if (c.result == XGEMV_RESULT_OWN_BLOCK) {
    const int64_t q = (c.outputs() + ranks - 1) / ranks;
    p.kept_begin = std::min<int64_t>(r * q, c.outputs());
    p.kept_length = std::min<int64_t>(q, c.outputs() - p.kept_begin);
  } else {
    p.kept_length = c.outputs();
  }
  return p;
}

// Host images of one rank's operands (gaps hold the guard value) and what its calls gave.
template <class T>
struct RankData {
  RankPart part;
  std::vector<T> a, x, y;        // as given to the call
  std::vector<bool> is_logical_y;
  xgemv_status first = XGEMV_STATUS_INTERNAL_ERROR, second = XGEMV_STATUS_INTERNAL_ERROR;
  std::vector<T> y_first, y_second, a_after, x_after;
  std::vector<std::string> guard_failures;

  // Logical y elements of an image of the rank's y.
  std::vector<T> logical(const std::vector<T> &image) const {
    std::vector<T> values(part.kept_length);
    for (int64_t i = 0; i < part.kept_length; ++i)
      values[i] = image[vector_offset(i, part.kept_length, part.incy)];
    return values;
  }
};

// What a case gave: every rank's logical y after the first call.
template <class T>
struct SplitOutcome {
  std::vector<std::vector<T>> kept;
};

// Whether every element of `got` (outputs first .. first + size - 1) is within the rounding
// bound of the reference: that of gemv_case.hpp with the (ranks - 1) additions of the partial
// sums on top: 2 * ((k + ranks + 2) * u_accumulate + u_y) * magnitude.
template <class T>
::testing::AssertionResult within_split_bound(const std::vector<T> &got, int64_t first,
                                              const std::vector<double> &want,
                                              const std::vector<double> &magnitude, int64_t k,
                                              int ranks) {
  const double u_accumulate = Element<ScalarOf<T>>::unit_roundoff;
  const double factor = 2 * ((k + ranks + 2) * u_accumulate + Element<T>::unit_roundoff);
  int64_t bad = 0;
  std::ostringstream first_bad;
  for (size_t i = 0; i < got.size(); ++i) {
    const int64_t o = first + static_cast<int64_t>(i);
    const double value = to_double(got[i]), bound = factor * magnitude[o];
    if (std::fabs(value - want[o]) <= bound) continue;  // false for NaN
    if (bad++ < 5)
      first_bad << "\n  y[" << o << "] = " << value << ", OpenBLAS " << want[o] << ", bound "
                << bound;
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " outputs beyond the error bound:"
                                       << first_bad.str();
}

template <class T>
SplitOutcome<T> run_split_case(const SplitCase &c, const Ranks &ranks, uint64_t seed) {
  using S = ScalarOf<T>;
  const int count = ranks.count();
  const std::string what = describe(c, count) + ", " + Element<T>::name + ", seed " +
                           std::to_string(seed);
  SCOPED_TRACE(what);
  RandomSource random(seed);
  const std::vector<int64_t> starts = c.starts_for(count);
  const S alpha = choose_scalar<S>(c.alpha, false, random);
  const S beta = choose_scalar<S>(c.beta, false, random);
  const bool quick_return = c.m == 0 || c.n == 0 || (alpha == 0 && beta == 1);
  const bool computes = !quick_return && alpha != 0;

  // The whole problem: A (lda = max(1, m)), logical x and y; then the references on it.
  const GemvShape whole{c.trans, c.m, c.n, std::max<int64_t>(1, c.m), 1, 1};
  std::vector<T> a(whole.matrix_extent()), x(whole.x_length()), y(whole.y_length());
  for (T &v : a) v = random.element<T>();
  for (T &v : x) v = random.element<T>();
  for (T &v : y) v = random.element<T>();
  std::vector<double> openblas_y, magnitude;
  if (computes) {
    const std::vector<S> reference = openblas_gemv<T>(whole, alpha, a.data(), x.data(), beta,
                                                      y.data());
    openblas_y.assign(reference.begin(), reference.end());
    magnitude = reference_gemv(whole, std::fabs(alpha), a.data(), x.data(), std::fabs(beta),
                               y.data(), Magnitude{});
  }
  // What the ranks get: beta == 0 must not read y, alpha == 0 must not read A and x.
  const std::vector<T> y_clean = y;
  if (beta == 0) std::fill(y.begin(), y.end(), quiet_nan<T>());
  if (alpha == 0) {
    std::fill(a.begin(), a.end(), quiet_nan<T>());
    std::fill(x.begin(), x.end(), quiet_nan<T>());
  }

  std::vector<RankData<T>> data(count);
  for (int r = 0; r < count; ++r) {
    RankData<T> &d = data[r];
    const RankPart &p = d.part = part_of(c, starts, count, r);
    const GemvShape local = p.local_shape(c.trans, c.incx);
    d.a.assign(local.matrix_extent(), guard_value<T>());
    for (int64_t j = 0; j < p.local_n; ++j)
      for (int64_t i = 0; i < p.local_m; ++i)
        d.a[j * p.lda + i] = a[(j + p.column_offset) * whole.lda + i + p.row_offset];
    d.x.assign(vector_extent(p.x_length, c.incx), guard_value<T>());
    for (int64_t i = 0; i < p.x_length; ++i)
      d.x[vector_offset(i, p.x_length, c.incx)] = x[p.x_begin + i];
    d.y.assign(vector_extent(p.kept_length, p.incy), guard_value<T>());
    d.is_logical_y.assign(d.y.size(), false);
    for (int64_t i = 0; i < p.kept_length; ++i) {
      const int64_t o = vector_offset(i, p.kept_length, p.incy);
      d.y[o] = y[p.kept_begin + i];
      d.is_logical_y[o] = true;
    }
  }

  const bool device_mode = c.pointer_mode == XGEMV_POINTER_MODE_DEVICE;
  ranks.run_all([&](int r) {
    const Rank &rank = ranks[r];
    RankData<T> &d = data[r];
    const RankPart &p = d.part;
    GuardedDeviceBuffer<T> a_device(d.a.size()), x_device(d.x.size()), y_device(d.y.size());
    a_device.upload(d.a);
    x_device.upload(d.x);
    GuardedDeviceBuffer<S> scalars(2);
    scalars.upload({alpha, beta});
    const size_t workspace_bytes = xgemv_nccl_workspace_bytes(
        c.split, c.result, c.trans, c.m, c.n, count, static_cast<int>(sizeof(T)));
    // All-ones bytes (NaN) at first: partial sums read before they are written would show.
    GuardedDeviceBuffer<unsigned char> workspace(workspace_bytes);
    const S *alpha_pointer = device_mode ? scalars.data() : &alpha;
    const S *beta_pointer = device_mode ? scalars.data() + 1 : &beta;
    const auto call = [&](xgemv_status &status) {
      y_device.upload(d.y);
      xgemv_set_pointer_mode(rank.handle, c.pointer_mode);
      status = xgemv_nccl_gemv<T>(rank.handle, rank.comm, c.split, c.result, starts.data(),
                                  c.trans, c.m, c.n, alpha_pointer, a_device.data(), p.lda,
                                  x_device.data(), c.incx, beta_pointer, y_device.data(), p.incy,
                                  workspace_bytes ? workspace.data() : nullptr, workspace_bytes);
      check_cuda(cudaStreamSynchronize(rank.stream), "synchronize the rank's stream");
      return y_device.download();
    };
    d.y_first = call(d.first);
    d.y_second = call(d.second);
    d.a_after = a_device.download();
    d.x_after = x_device.download();
    for (const auto &guard : {a_device.guards_intact("A"), x_device.guards_intact("x"),
                              y_device.guards_intact("y"), scalars.guards_intact("scalars"),
                              workspace.guards_intact("workspace")})
      if (!guard) d.guard_failures.push_back(guard.message());
  });

  SplitOutcome<T> outcome;
  for (int r = 0; r < count; ++r) {
    const RankData<T> &d = data[r];
    const RankPart &p = d.part;
    SCOPED_TRACE("rank " + std::to_string(r));
    EXPECT_EQ(d.first, XGEMV_STATUS_SUCCESS) << xgemv_status_string(d.first);
    EXPECT_EQ(d.second, XGEMV_STATUS_SUCCESS) << xgemv_status_string(d.second);
    for (const std::string &failure : d.guard_failures) ADD_FAILURE() << failure;
    if (d.y_first.size() != d.y.size()) continue;  // the rank failed before its calls
    EXPECT_TRUE(bitwise_equal("A", d.a_after, d.a));
    EXPECT_TRUE(bitwise_equal("x", d.x_after, d.x));
    EXPECT_TRUE(bitwise_equal("y of the same call repeated", d.y_second, d.y_first));
    if (quick_return) {
      EXPECT_TRUE(bitwise_equal("y after a quick return", d.y_first, d.y));
    } else {
      EXPECT_TRUE(bitwise_equal("y outside its elements", d.y_first, d.y, &d.is_logical_y));
    }
    const std::vector<T> kept = d.logical(d.y_first);
    if (!quick_return && alpha == 0) {
      // y := beta*y exactly: one product in the scalar type, one rounding to T.
      for (int64_t i = 0; i < p.kept_length; ++i) {
        const S scaled = beta * static_cast<S>(to_double(y_clean[p.kept_begin + i]));
        EXPECT_EQ(to_double(kept[i]), to_double(from_double<T>(scaled)))
            << "alpha = 0: y[" << p.kept_begin + i << "]";
      }
    }
    if (computes) {
      EXPECT_TRUE(within_split_bound(kept, p.kept_begin, openblas_y, magnitude, c.reduction(),
                                     count));
    }
    if (c.result == XGEMV_RESULT_ALL && r > 0) {
      EXPECT_TRUE(bitwise_equal("y against rank 0's", d.y_first, data[0].y_first));
    }
    outcome.kept.push_back(kept);
  }

  // The outputs split: bit for bit the single-GPU xgemv call on each rank's block, with the
  // same operands at the same alignments (on device 0, with rank 0's handle).
  const bool every_rank_ran = std::all_of(data.begin(), data.end(), [](const RankData<T> &d) {
    return d.first == XGEMV_STATUS_SUCCESS && d.y_first.size() == d.y.size();
  });
  if (c.split == XGEMV_SPLIT_OUTPUTS && every_rank_ran) {
    check_cuda(cudaSetDevice(ranks[0].device), "cudaSetDevice");
    const xgemv_handle handle = ranks[0].handle;
    GuardedDeviceBuffer<S> scalars(2);
    scalars.upload({alpha, beta});
    const S *alpha_pointer = device_mode ? scalars.data() : &alpha;
    const S *beta_pointer = device_mode ? scalars.data() + 1 : &beta;
    xgemv_set_pointer_mode(handle, c.pointer_mode);
    const bool whole_y = c.result == XGEMV_RESULT_ALL;
    GuardedDeviceBuffer<T> whole_y_device(whole_y ? data[0].y.size() : 0);
    if (whole_y) whole_y_device.upload(data[0].y);
    for (int r = 0; r < count; ++r) {
      const RankData<T> &d = data[r];
      const RankPart &p = d.part;
      GuardedDeviceBuffer<T> a_device(d.a.size()), x_device(d.x.size()),
          y_device(whole_y ? 0 : d.y.size());
      a_device.upload(d.a);
      x_device.upload(d.x);
      if (!whole_y) y_device.upload(d.y);
      T *block = whole_y ? whole_y_device.data() + p.block_begin : y_device.data();
      const GemvOperands<T> operands{alpha_pointer, a_device.data(), x_device.data(),
                                     beta_pointer, block};
      EXPECT_EQ(xgemv_gemv<T>(handle, p.local_shape(c.trans, c.incx), nullptr, operands),
                XGEMV_STATUS_SUCCESS);
      check_cuda(cudaStreamSynchronize(ranks[0].stream), "synchronize rank 0's stream");
      if (!whole_y) {
        EXPECT_TRUE(bitwise_equal("y against the single-GPU call on the block", d.y_first,
                                  y_device.download()))
            << "rank " << r;
      }
    }
    if (whole_y) {
      EXPECT_TRUE(bitwise_equal("y against the single-GPU calls on every block",
                                data[0].y_first, whole_y_device.download()));
    }
  }
  return outcome;
}

}  // namespace xgemv_test
