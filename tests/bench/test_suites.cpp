// The shape suites and the expansion of a command line into cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#include "lib/options.hpp"
#include "lib/record.hpp"
#include "lib/suites.hpp"

namespace xgemv::bench {
namespace {

const Case* find_case(const std::vector<Case>& cases, const std::string& tag, Dtype dtype) {
  for (const Case& c : cases)
    if (c.tag == tag && c.dtype == dtype) return &c;
  return nullptr;
}

Options suite_options(const std::string& suite) {
  Options options;
  options.suites = {suite};
  return options;
}

struct ModelShape {
  const char* tag;
  int64_t m, n;
};

// A suite of five models' decode GEMVs: op T only, in fp16, bf16 and fp32, with these shapes
// among them. Row-major weights (out x in) are BLAS op T with m = in_features, n = out_features.
void expect_model_suite(const std::string& suite, const std::vector<ModelShape>& expected) {
  const std::vector<Case> cases = build_cases(suite_options(suite));
  EXPECT_EQ(cases.size(), 5u * 5u * 3u);  // models x layers x (fp16, bf16, fp32)
  for (const Case& c : cases) EXPECT_EQ(c.op, 'T') << c.tag;
  for (const ModelShape& shape : expected) {
    for (Dtype dtype : {Dtype::fp16, Dtype::bf16, Dtype::fp32}) {
      const Case* c = find_case(cases, shape.tag, dtype);
      ASSERT_NE(c, nullptr) << shape.tag;
      EXPECT_EQ(c->m, shape.m) << shape.tag;
      EXPECT_EQ(c->n, shape.n) << shape.tag;
    }
  }
}

TEST(Suites, LlmIsTheDecodeGemvsOfFiveModelsInOpT) {
  expect_model_suite("llm", {
      {"llama2-7b.qkv", 4096, 12288},      {"llama2-7b.gate_up", 4096, 22016},
      {"llama2-7b.down", 11008, 4096},     {"llama3-8b.qkv", 4096, 6144},
      {"llama3-8b.o", 4096, 4096},         {"llama3-8b.down", 14336, 4096},
      {"llama3-8b.lm_head", 4096, 128256}, {"llama3-70b.qkv", 8192, 10240},
      {"llama3-70b.gate_up", 8192, 57344}, {"llama3-70b.lm_head", 8192, 128256},
      {"mistral-7b.lm_head", 4096, 32000}, {"qwen2.5-7b.qkv", 3584, 4608},
      {"qwen2.5-7b.down", 18944, 3584},    {"qwen2.5-7b.lm_head", 3584, 152064},
  });
}

TEST(Suites, LlmSmallIsTheDecodeGemvsOfFiveSmallModelsInOpT) {
  expect_model_suite("llm-small", {
      {"qwen2.5-0.5b.qkv", 896, 1152},      // 14 query heads and 2 x 2 kv heads of 64
      {"qwen2.5-0.5b.down", 4864, 896},     {"qwen2.5-0.5b.lm_head", 896, 151936},
      {"qwen2.5-1.5b.down", 8960, 1536},    {"llama3.2-1b.qkv", 2048, 3072},
      {"gemma2-2b.qkv", 2304, 4096},        // 8 query heads and 2 x 4 kv heads of 256
      {"gemma2-2b.o", 2048, 2304},          {"gemma2-2b.down", 9216, 2304},
      {"gemma2-2b.lm_head", 2304, 256000},  {"llama3.2-3b.gate_up", 3072, 2 * 8192},
  });
}

TEST(Suites, SquareRunsPowersOfTwoFrom256To16384InEveryDtypeAndOp) {
  const std::vector<Case> cases = build_cases(suite_options("square"));
  EXPECT_EQ(cases.size(), 7u * 4u * 2u);
  std::set<int64_t> sizes;
  for (const Case& c : cases) {
    EXPECT_EQ(c.m, c.n);
    sizes.insert(c.m);
  }
  EXPECT_EQ(sizes, (std::set<int64_t>{256, 512, 1024, 2048, 4096, 8192, 16384}));
}

TEST(Suites, SkinnyHasTheExtremesAndSmallHasLaunchBoundShapes) {
  const std::vector<Case> skinny = build_cases(suite_options("skinny"));
  EXPECT_NE(find_case(skinny, "tall", Dtype::fp32), nullptr);
  EXPECT_EQ(find_case(skinny, "tall", Dtype::fp32)->m, 1 << 20);
  EXPECT_EQ(find_case(skinny, "wide", Dtype::fp32)->n, 1 << 20);
  EXPECT_EQ(find_case(skinny, "odd", Dtype::fp64)->m, 100003);
  EXPECT_EQ(skinny.size(), 13u * 4u * 2u);  // shapes x dtypes x ops
  // 1 to 16 columns or rows.
  const struct {
    const char* tag;
    int64_t m, n;
  } few[] = {
      {"tall-1", 1000000, 1}, {"wide-1", 1, 1000000},  {"tall-3", 1000003, 3},
      {"wide-3", 3, 1000003}, {"tall-16", 500000, 16}, {"wide-16", 16, 500000},
  };
  for (const auto& shape : few) {
    const Case* c = find_case(skinny, shape.tag, Dtype::bf16);
    ASSERT_NE(c, nullptr) << shape.tag;
    EXPECT_EQ(c->m, shape.m) << shape.tag;
    EXPECT_EQ(c->n, shape.n) << shape.tag;
  }
  for (const Case& c : build_cases(suite_options("small")))
    EXPECT_LE(c.a_bytes(), 8 << 20) << c.tag;
}

// Every (tag, m, n, dtype, op) of bench/anchors/h200-cublas.csv, the H200 cuBLAS anchors.
std::set<std::tuple<std::string, int64_t, int64_t, std::string, char>> anchor_cases() {
  std::ifstream csv(XGEMV_BENCH_DIR "/anchors/h200-cublas.csv");
  EXPECT_TRUE(csv) << "missing bench/anchors/h200-cublas.csv";
  std::set<std::tuple<std::string, int64_t, int64_t, std::string, char>> cases;
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line, "lib,dtype,op,m,n,tag,us,GBps");
  while (std::getline(csv, line)) {
    std::stringstream fields(line);
    std::string lib, dtype, op, m, n, tag;
    std::getline(fields, lib, ',');
    std::getline(fields, dtype, ',');
    std::getline(fields, op, ',');
    std::getline(fields, m, ',');
    std::getline(fields, n, ',');
    std::getline(fields, tag, ',');
    cases.emplace(tag, std::stoll(m), std::stoll(n), dtype, op.at(0));
  }
  return cases;
}

TEST(Suites, AnchorsAreExactlyTheCasesOfTheCublasAnchorTable) {
  std::set<std::tuple<std::string, int64_t, int64_t, std::string, char>> built;
  for (const Case& c : build_cases(suite_options("anchors")))
    EXPECT_TRUE(built.emplace(c.tag, c.m, c.n, std::string(dtype_name(c.dtype)), c.op).second)
        << "duplicate " << c.tag;
  EXPECT_EQ(built, anchor_cases());
}

TEST(BuildCases, DefaultsToTheLlmSuite) {
  const std::vector<Case> cases = build_cases(Options{});
  ASSERT_FALSE(cases.empty());
  for (const Case& c : cases) EXPECT_EQ(c.suite, "llm");
}

TEST(BuildCases, DtypeAndOpReplaceTheSuitesOwnLists) {
  Options options = suite_options("llm");
  options.dtypes = {"fp64"};
  options.ops = {"N", "T"};
  const std::vector<Case> cases = build_cases(options);
  EXPECT_EQ(cases.size(), 25u * 2u);
  for (const Case& c : cases) EXPECT_EQ(c.dtype, Dtype::fp64);
}

TEST(BuildCases, ShapeFilterSearchesTagAndShape) {
  Options options = suite_options("llm");
  options.shape_filter = "lm_head|^llama3-8b\\.qkv";
  options.dtypes = {"fp16"};
  std::set<std::string> tags;
  for (const Case& c : build_cases(options)) tags.insert(c.tag);
  EXPECT_EQ(tags.size(), 6u);
  EXPECT_TRUE(tags.count("llama3-8b.qkv"));
  EXPECT_TRUE(tags.count("qwen2.5-7b.lm_head"));

  options.shape_filter = "^[^ ]+ 14336x4096$";
  const std::vector<Case> down = build_cases(options);
  ASSERT_EQ(down.size(), 2u);  // llama3-8b.down, mistral-7b.down
  EXPECT_EQ(down[0].m, 14336);
}

TEST(BuildCases, AdHocShapesCarryStridesAndScalars) {
  Options options;
  options.shapes = {"4096x14336"};
  options.ops = {"T"};
  options.dtypes = {"bf16"};
  options.incx = -2;
  options.incy = 3;
  options.alpha = 0.5;
  options.beta = 2;
  const std::vector<Case> cases = build_cases(options);
  ASSERT_EQ(cases.size(), 1u);
  const Case& c = cases[0];
  EXPECT_EQ(c.suite, "adhoc");
  EXPECT_EQ(c.m, 4096);
  EXPECT_EQ(c.n, 14336);
  EXPECT_EQ(c.incx, -2);
  EXPECT_EQ(c.incy, 3);
  EXPECT_EQ(c.alpha, 0.5);
  EXPECT_EQ(c.beta, 2);
}

TEST(BuildCases, AllRunsEverySuiteOnce) {
  Options options;
  options.suites = {"llm", "all"};
  const std::vector<Case> cases = build_cases(options);
  std::set<std::string> suites;
  for (const Case& c : cases) suites.insert(c.suite);
  EXPECT_EQ(suites,
            (std::set<std::string>{"llm", "llm-small", "square", "skinny", "small", "anchors"}));
  EXPECT_EQ(
      std::count_if(cases.begin(), cases.end(), [](const Case& c) { return c.suite == "llm"; }),
      75);
}

TEST(BuildCases, EveryProblemRunsAtEachNrhsBackToBack) {
  Options options = suite_options("llm");
  options.dtypes = {"bf16"};
  options.shape_filter = "^llama3-8b\\.(qkv|o) ";
  options.nrhs = {1, 2, 16};
  const std::vector<Case> cases = build_cases(options);
  ASSERT_EQ(cases.size(), 2u * 3u);
  const int64_t expected_nrhs[] = {1, 2, 16, 1, 2, 16};
  for (size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(cases[i].nrhs, expected_nrhs[i]) << i;
    EXPECT_EQ(cases[i].tag, i < 3 ? "llama3-8b.qkv" : "llama3-8b.o") << i;
  }
  EXPECT_EQ(case_record(cases[0], "xgemv", "", "").label(), "bf16 T 4096x6144 llama3-8b.qkv");
  EXPECT_EQ(case_record(cases[2], "xgemv", "", "").label(),
            "bf16 T 4096x6144 llama3-8b.qkv nrhs 16");
  // Without --nrhs: one vector.
  for (const Case& c : build_cases(suite_options("llm"))) EXPECT_EQ(c.nrhs, 1) << c.tag;
}

TEST(Case, SeveralVectorsAreColumnsOfXAndYAndAIsReadOnce) {
  Case c;
  c.dtype = Dtype::bf16;
  c.op = 'T';
  c.m = 4096;  // x length
  c.n = 6144;  // y length
  c.nrhs = 8;
  EXPECT_EQ(c.ldx(), 4096);
  EXPECT_EQ(c.ldy(), 6144);
  EXPECT_EQ(c.x_elements(), 8 * 4096);
  EXPECT_EQ(c.y_elements(), 8 * 6144);
  EXPECT_EQ(c.a_bytes(), 4096 * 6144 * 2);
  EXPECT_EQ(c.bytes(), (4096 * 6144 + 8 * (4096 + 6144)) * 2);
  // One strided vector: as a GEMV.
  c.op = 'N';
  c.nrhs = 1;
  c.incx = -3;
  EXPECT_EQ(c.x_elements(), 1 + (6144 - 1) * 3);
  EXPECT_EQ(c.y_elements(), 4096);
  EXPECT_EQ(c.bytes(), (4096 * 6144 + 6144 + 4096) * 2);
}

TEST(Suites, ShapeSuitesAreTheSuitesAndAdhoc) {
  EXPECT_EQ(shape_suite_names(), (std::vector<std::string>{"llm", "llm-small", "square", "skinny",
                                                           "small", "anchors", "adhoc"}));
}

TEST(BuildCases, RejectsABadRegex) {
  Options options;
  options.shape_filter = "(";
  EXPECT_THROW(build_cases(options), std::invalid_argument);
}

}  // namespace
}  // namespace xgemv::bench
