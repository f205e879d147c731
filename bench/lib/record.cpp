#include "record.hpp"

#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "decode.hpp"
#include "measure.hpp"

namespace xgemv::bench {
namespace {

// The case of a record, whichever library ran it and on how many GPUs.
std::string case_key(const Record& r) {
  return r.suite + '|' + r.weight_format() + '|' + r.label();
}

}  // namespace

std::string Record::label() const {
  std::string text;
  const auto add = [&](const std::string& part) {
    if (!part.empty()) text += (text.empty() ? "" : " ") + part;
  };
  // One matrix is named by its shape first, a step or an exchange by its tag.
  if (m > 0) {
    add(std::string(dtype_name(dtype)));
    add(format);
    add(std::string(1, op));
    add(std::to_string(m) + "x" + std::to_string(n));
  }
  add(tag);
  add(layout);
  if (m == 0) {
    add(std::string(dtype_name(dtype)));
    add(format);
  }
  if (nrhs != 1) add("nrhs " + std::to_string(nrhs));
  return text;
}

std::string Record::name() const {
  return label() + (gpus > 1 ? " on " + std::to_string(gpus) + " GPUs" : "");
}

std::string Record::weight_format() const {
  return format.empty() ? std::string(dtype_name(dtype)) : format;
}

void Record::add_check(const std::string& where, const CheckResult& check) {
  ++checked;
  if (!check.passed) {
    ++failed_checks;
    status = "check failed";
  }
  // NaN and Inf compare as infinitely far: the first of them stays the worst.
  if (!max_error || check.max_error / check.tolerance > *max_error / *tolerance) {
    max_error = check.max_error;
    tolerance = check.tolerance;
    worst = where;
  }
}

void Record::set_times(const std::vector<double>& us_per_call) {
  batches = static_cast<int>(us_per_call.size());
  us = median(us_per_call);
  spread_pct = bench::spread_pct(us_per_call);
}

Record run_record(std::string lib, std::string function, std::string mode) {
  Record r;
  r.lib = std::move(lib);
  r.function = std::move(function);
  r.mode = std::move(mode);
  return r;
}

Record case_record(const Case& c, std::string lib, std::string function, std::string mode) {
  Record r = run_record(std::move(lib), std::move(function), std::move(mode));
  r.suite = c.suite;
  r.tag = c.tag;
  r.dtype = c.dtype;
  r.format = c.format;
  r.op = c.op;
  r.m = c.m;
  r.n = c.n;
  r.nrhs = c.nrhs;
  r.lda = c.lda();
  r.incx = c.incx;
  r.incy = c.incy;
  r.alpha = c.alpha;
  r.beta = c.beta;
  r.matrix_bytes = c.a_bytes();
  r.bytes = c.bytes();
  return r;
}

void derive_metrics(std::vector<Record>& records) {
  std::map<std::string, const Record*> bound;                             // case, one GPU
  std::map<std::pair<std::string, int>, double> cublas_us;                // case, P: fastest
  std::map<std::tuple<std::string, std::string, int>, const Record*> of;  // case, lib, P
  std::set<std::string> several_gpus;                                     // cases
  std::set<std::pair<std::string, std::string>> several_vectors;          // nrhs 1 case, lib
  std::map<std::tuple<std::string, int, int64_t>, const Record*> split;   // suite, P, exchange
  for (Record& r : records) {
    r.gbps = r.bound_gbps = r.pct_bound = r.speedup = r.nrhs_ratio = r.share_pct = r.reads_ratio =
        std::nullopt;
    r.share_of.clear();
    if (!r.us || !(*r.us > 0)) continue;
    r.gbps = static_cast<double>(r.bytes) / *r.us / 1e3;
    const std::string key = case_key(r);
    if (r.is_bound() && r.gpus == 1) bound[key] = &r;
    if (r.lib.rfind("cublas", 0) == 0) {
      const auto [fastest, added] = cublas_us.emplace(std::pair{key, r.gpus}, *r.us);
      if (!added) fastest->second = std::min(fastest->second, *r.us);
    }
    of[{key, r.lib, r.gpus}] = &r;
    if (r.gpus > 1) several_gpus.insert(key);
    Record one = r;
    one.nrhs = 1;
    if (r.nrhs > 1) several_vectors.emplace(case_key(one), r.lib);
    if (r.lib == "xgemv-nccl") split[{r.suite, r.gpus, r.exchange_bytes}] = &r;
  }
  for (Record& r : records) {
    if (!r.gbps || r.is_bound()) continue;
    const std::string key = case_key(r);
    if (const auto b = bound.find(key); b != bound.end() && r.mode != "host") {
      r.bound_gbps = r.gpus * *b->second->gbps;
      r.pct_bound = 100.0 * *r.gbps / *r.bound_gbps;
    }
    // Quantized weights have no cuBLAS call: theirs is the dense case's.
    Record dense = r;
    dense.format.clear();
    if (const auto cublas = cublas_us.find({case_key(dense), r.gpus}); cublas != cublas_us.end())
      r.speedup = cublas->second / *r.us;
    else if (const auto one = of.find({key, r.lib, 1}); one != of.end() && several_gpus.count(key))
      r.speedup = *one->second->us / *r.us;
    Record one = r;
    one.nrhs = 1;
    const std::string one_key = case_key(one);
    if (const auto base = of.find({one_key, r.lib, r.gpus});
        base != of.end() && several_vectors.count({one_key, r.lib}))
      r.nrhs_ratio = *r.us / *base->second->us;
    if (const auto reads = of.find({key, kPerGemvReads, r.gpus});
        reads != of.end() && reads->second != &r)
      r.reads_ratio = *r.us / *reads->second->us;
    if (const auto gemv = split.find({r.suite, r.gpus, r.exchange_bytes});
        r.lib == "nccl" && gemv != split.end()) {
      r.share_pct = 100.0 * *r.us / *gemv->second->us;
      r.share_of = gemv->second->label();
    }
  }
}

}  // namespace xgemv::bench
