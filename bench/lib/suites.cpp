#include "suites.hpp"

#include <algorithm>
#include <initializer_list>
#include <regex>
#include <stdexcept>

#include "decode.hpp"
#include "options.hpp"

namespace xgemv::bench {
namespace {

constexpr int64_t kMi = 1 << 20;

// Frameworks store a linear layer's weight row-major (out_features x in_features), which is
// column-major in_features x out_features: y = W x is BLAS op T with m = in, n = out.
std::vector<SuiteShape> model_shapes(std::initializer_list<const char*> names) {
  std::vector<SuiteShape> shapes;
  for (const char* name : names) {
    const DecodeModel& model = *find_decode_model(name);
    std::vector<DecodeGemv> gemvs = layer_gemvs(model, model.name + ".");
    gemvs.push_back({model.name + ".lm_head", model.hidden, model.vocabulary});
    for (const DecodeGemv& gemv : gemvs) shapes.push_back({gemv.tag, gemv.in, gemv.out});
  }
  return shapes;
}

std::vector<SuiteShape> square_shapes() {
  std::vector<SuiteShape> shapes;
  for (int64_t size = 256; size <= 16384; size *= 2)
    shapes.push_back({"sq" + std::to_string(size), size, size});
  return shapes;
}

std::vector<Suite> make_suites() {
  const std::vector<Dtype> every_dtype(std::begin(kAllDtypes), std::end(kAllDtypes));
  return {
      // Batch-1 decode GEMVs (qkv, o, gate_up, down, lm_head), op T: of 7B-70B models, then of
      // 0.5B-3B ones (few blocks a kernel, a matrix streamed in a few memory latencies).
      {"llm",
       model_shapes({"llama2-7b", "llama3-8b", "llama3-70b", "mistral-7b", "qwen2.5-7b"}),
       {Dtype::fp16, Dtype::bf16, Dtype::fp32},
       {'T'}},
      {"llm-small",
       model_shapes({"qwen2.5-0.5b", "qwen2.5-1.5b", "llama3.2-1b", "gemma2-2b", "llama3.2-3b"}),
       {Dtype::fp16, Dtype::bf16, Dtype::fp32},
       {'T'}},
      {"square", square_shapes(), every_dtype, {'N', 'T'}},
      // Tall and wide extremes and odd sizes.
      {"skinny",
       {{"tall", kMi, 64},
        {"wide", 64, kMi},
        {"tall-8", 2 * kMi, 8},
        {"wide-8", 8, 2 * kMi},
        // 1 to 16 columns or rows; lda = m, so odd m leaves columns misaligned
        {"tall-1", 1000000, 1},
        {"wide-1", 1, 1000000},
        {"tall-3", 1000003, 3},
        {"wide-3", 3, 1000003},
        {"tall-16", 500000, 16},
        {"wide-16", 16, 500000},
        {"odd", 100003, 777},
        {"odd-wide", 777, 100003},
        {"primes", 10007, 10009}},
       every_dtype,
       {'N', 'T'}},
      // Launch-bound calls.
      {"small",
       {{"scalar", 1, 1},
        {"sq32", 32, 32},
        {"sq64", 64, 64},
        {"sq128", 128, 128},
        {"sq256", 256, 256},
        {"sq512", 512, 512},
        {"sq1000", 1000, 1000},
        {"row", 1, 4096},
        {"column", 4096, 1}},
       every_dtype,
       {'N', 'T'}},
      // Exactly the shapes, dtypes and ops of bench/anchors/h200-cublas.csv (cuBLAS on the H200;
      // the unit tests compare it against this table).
      {"anchors",
       {{"tiny", 256, 256},
        {"small", 1024, 1024},
        {"sq4k", 4096, 4096},
        {"sq8k", 8192, 8192},
        {"sq16k", 16384, 16384},
        {"l3-8b.qkv", 4096, 6144},
        {"l3-8b.gateup", 4096, 28672},
        {"l3-8b.down", 14336, 4096},
        {"l3-8b.lmhead", 4096, 128256},
        {"l3-70b.qkv", 8192, 10240},
        {"l3-70b.gateup", 8192, 57344},
        {"l3-70b.down", 28672, 8192},
        {"tall", 1048576, 64},
        {"wide", 64, 1048576},
        {"odd", 100003, 777}},
       {Dtype::fp32, Dtype::fp16, Dtype::bf16},
       {'N', 'T'}},
  };
}

}  // namespace

const std::vector<Suite>& all_suites() {
  static const std::vector<Suite> suites = make_suites();
  return suites;
}

std::vector<std::string> shape_suite_names() {
  std::vector<std::string> names;
  for (const Suite& suite : all_suites()) names.push_back(suite.name);
  names.push_back("adhoc");
  return names;
}

const Suite* find_suite(const std::string& name) {
  for (const Suite& suite : all_suites())
    if (suite.name == name) return &suite;
  return nullptr;
}

std::vector<Case> build_cases(const Options& options) {
  std::vector<const Suite*> suites;
  for (const std::string& name : options.suites) {
    if (name == "all") {
      for (const Suite& suite : all_suites()) suites.push_back(&suite);
    } else if (const Suite* suite = find_suite(name)) {
      suites.push_back(suite);
    }
  }
  if (suites.empty() && options.shapes.empty()) suites.push_back(find_suite("llm"));

  Suite adhoc{
      "adhoc", {}, std::vector<Dtype>(std::begin(kAllDtypes), std::end(kAllDtypes)), {'N', 'T'}};
  for (const std::string& text : options.shapes) {
    const auto shape = parse_shape(text);
    if (!shape) throw std::invalid_argument("bad --shape " + text);
    adhoc.shapes.push_back({text, shape->first, shape->second});
  }
  if (!adhoc.shapes.empty()) suites.push_back(&adhoc);

  std::vector<Dtype> dtypes;
  for (const std::string& name : options.dtypes) {
    const auto dtype = parse_dtype(name);
    if (!dtype) throw std::invalid_argument("bad --dtype " + name);
    dtypes.push_back(*dtype);
  }
  std::vector<char> ops;
  for (const std::string& op : options.ops) ops.push_back(op.at(0));

  std::regex filter;
  try {
    filter = std::regex(options.shape_filter);
  } catch (const std::regex_error& error) {
    throw std::invalid_argument("bad --shape-filter '" + options.shape_filter +
                                "': " + error.what());
  }

  std::vector<Case> cases;
  std::vector<const Suite*> seen;
  for (const Suite* suite : suites) {
    if (std::find(seen.begin(), seen.end(), suite) != seen.end()) continue;  // --suite llm,all
    seen.push_back(suite);
    for (const SuiteShape& shape : suite->shapes) {
      const std::string searched =
          shape.tag + " " + std::to_string(shape.m) + "x" + std::to_string(shape.n);
      if (!std::regex_search(searched, filter)) continue;
      for (Dtype dtype : dtypes.empty() ? suite->dtypes : dtypes)
        for (char op : ops.empty() ? suite->ops : ops)
          for (int64_t nrhs : options.nrhs_values())
            cases.push_back({suite->name, shape.tag, dtype, op, shape.m, shape.n, options.incx,
                             options.incy, options.alpha, options.beta, nrhs});
    }
  }
  return cases;
}

}  // namespace xgemv::bench
