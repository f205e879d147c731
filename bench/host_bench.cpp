#include "host_bench.hpp"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>

#include "lib/check.hpp"
#include "lib/measure.hpp"
#include "lib/random_values.hpp"
#include "support/reference_gemv.hpp"

namespace xgemv::bench {
namespace {

// Runs body(begin, end) over [0, count) on every core (filling GiBs on one core takes seconds).
template <class Body>
void parallel_for(int64_t count, const Body& body) {
  const int64_t workers =
      std::clamp<int64_t>(std::thread::hardware_concurrency(), 1, std::max<int64_t>(1, count));
  std::vector<std::thread> threads;
  for (int64_t w = 0; w < workers; ++w)
    threads.emplace_back(body, count * w / workers, count * (w + 1) / workers);
  for (std::thread& thread : threads) thread.join();
}

template <class T>
void fill_random(T* data, int64_t count, uint64_t seed) {
  parallel_for(count, [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) data[i] = static_cast<T>(random_value(seed, i));
  });
}

template <class T>
void call_openblas(const Case& c, const T* a, const T* x, T* y) {
  const CBLAS_TRANSPOSE trans = c.transposed() ? CblasTrans : CblasNoTrans;
  const auto m = static_cast<blasint>(c.m), n = static_cast<blasint>(c.n);
  const auto lda = static_cast<blasint>(c.lda());
  const auto incx = static_cast<blasint>(c.incx), incy = static_cast<blasint>(c.incy);
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemv(CblasColMajor, trans, m, n, static_cast<float>(c.alpha), a, lda, x, incx,
                static_cast<float>(c.beta), y, incy);
  else
    cblas_dgemv(CblasColMajor, trans, m, n, c.alpha, a, lda, x, incx, c.beta, y, incy);
}

template <class T>
const char* openblas_function() {
  return std::is_same_v<T, float> ? "cblas_sgemv" : "cblas_dgemv";
}

}  // namespace

std::string HostBench::describe() {
  return std::string(openblas_get_config()) + ", " + std::to_string(openblas_get_num_threads()) +
         " threads";
}

void HostBench::Buffer::allocate(int64_t size) {
  if (size <= bytes) return;
  data.reset(new std::byte[static_cast<size_t>(size)]);  // uninitialised: filled per case
  bytes = size;
}

void HostBench::reserve(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    if (!supports(c)) continue;
    const int64_t size = element_size(c.dtype);
    pool_.allocate(rotation_layout(c.a_bytes()).pool_bytes());
    x_.allocate(vector_extent(c.x_length(), c.incx) * size);
    y_.allocate(vector_extent(c.y_length(), c.incy) * size);
    y_initial_.allocate(vector_extent(c.y_length(), c.incy) * size);
  }
}

void HostBench::prepare(const Case& c) {
  const RotationLayout layout = rotation_layout(c.a_bytes());
  const auto fill_all = [&](auto element) {
    using T = decltype(element);
    fill_random(pool_.as<T>(), layout.pool_bytes() / int64_t{sizeof(T)}, kSeedA);
    fill_random(x_.as<T>(), vector_extent(c.x_length(), c.incx), kSeedX);
    fill_random(y_initial_.as<T>(), vector_extent(c.y_length(), c.incy), kSeedY);
  };
  if (c.dtype == Dtype::fp32) fill_all(float{});
  if (c.dtype == Dtype::fp64) fill_all(double{});
}

std::vector<double> HostBench::reference(const Case& c) const {
  if (c.dtype == Dtype::fp32)
    return xgemv_test::reference_gemv(c.gemv_shape(), c.alpha, pool_.as<float>(), x_.as<float>(),
                                      c.beta, y_initial_.as<float>());
  return xgemv_test::reference_gemv(c.gemv_shape(), c.alpha, pool_.as<double>(), x_.as<double>(),
                                    c.beta, y_initial_.as<double>());
}

Record HostBench::run_openblas(const Case& c, const std::vector<double>& y_ref,
                               const Options& options) {
  return c.dtype == Dtype::fp32 ? run_typed<float>(c, y_ref, options)
                                : run_typed<double>(c, y_ref, options);
}

template <class T>
Record HostBench::run_typed(const Case& c, const std::vector<double>& y_ref,
                            const Options& options) {
  Record row = case_record(c, "openblas", openblas_function<T>(), "host");
  if (std::max({c.m, c.n, std::abs(c.incx), std::abs(c.incy)}) >
      std::numeric_limits<blasint>::max()) {
    row.status = "skipped: a size or increment exceeds OpenBLAS's integer";
    return row;
  }
  const RotationLayout layout = rotation_layout(c.a_bytes());
  const int64_t copy_stride = layout.copy_stride_bytes / int64_t{sizeof(T)};
  const int64_t y_span = vector_extent(c.y_length(), c.incy);
  T* y = y_.as<T>();
  if (c.beta == 0)
    std::fill(y, y + y_span, std::numeric_limits<T>::quiet_NaN());
  else
    std::copy(y_initial_.as<T>(), y_initial_.as<T>() + y_span, y);

  call_openblas(c, pool_.as<T>(), x_.as<T>(), y);
  row.add_check("", compare_to_reference(c, gather_vector(y, c.y_length(), c.incy), y_ref));
  if (row.failed()) return row;

  const TimingPlan plan = plan_timing(c.bytes(), options.quick);
  std::vector<double> per_call_us;
  int64_t next_copy = 0;
  for (int batch = 0; batch < plan.warmup_batches + plan.batches; ++batch) {
    const auto start = std::chrono::steady_clock::now();
    for (int call = 0; call < plan.calls_per_batch; ++call) {
      call_openblas(c, pool_.as<T>() + next_copy * copy_stride, x_.as<T>(), y);
      next_copy = (next_copy + 1) % layout.copies;
    }
    const std::chrono::duration<double, std::micro> elapsed =
        std::chrono::steady_clock::now() - start;
    if (batch >= plan.warmup_batches) per_call_us.push_back(elapsed.count() / plan.calls_per_batch);
  }
  row.copies = layout.copies;
  row.calls_per_batch = plan.calls_per_batch;
  row.set_times(per_call_us);
  return row;
}

}  // namespace xgemv::bench
