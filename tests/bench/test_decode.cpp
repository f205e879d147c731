// The decode suite without a GPU: models, the GEMVs of a step, layer truncation to the memory
// budget, the buffer layout, the check of a step, derived metrics and the writers.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

#include "lib/decode.hpp"
#include "lib/decode_report.hpp"
#include "lib/options.hpp"

namespace xgemv::bench {
namespace {

constexpr int64_t kGib = int64_t{1} << 30;
constexpr int64_t kDefaultBudget = static_cast<int64_t>(kDefaultStepGib) * kGib;

const DecodeModel& model(const std::string& name) {
  const DecodeModel* found = find_decode_model(name);
  EXPECT_NE(found, nullptr) << name;
  return *found;
}

TEST(DecodeModels, PublishedConfigurationsFrom2048To16384Hidden) {
  const struct {
    const char* name;
    int64_t hidden, layers, heads, kv_heads, head_dim, intermediate, vocabulary;
  } expected[] = {
      {"llama3.2-1b", 2048, 16, 32, 8, 64, 8192, 128256},
      {"qwen2.5-7b", 3584, 28, 28, 4, 128, 18944, 152064},
      {"llama3-8b", 4096, 32, 32, 8, 128, 14336, 128256},
      {"llama2-13b", 5120, 40, 40, 40, 128, 13824, 32000},
      {"llama3-70b", 8192, 80, 64, 8, 128, 28672, 128256},
      {"llama3.1-405b", 16384, 126, 128, 8, 128, 53248, 128256},
  };
  ASSERT_EQ(decode_models().size(), std::size(expected));
  for (size_t i = 0; i < std::size(expected); ++i) {
    const DecodeModel& m = decode_models()[i];
    EXPECT_EQ(m.name, expected[i].name);
    EXPECT_EQ(m.hidden, expected[i].hidden) << m.name;
    EXPECT_EQ(m.layers, expected[i].layers) << m.name;
    EXPECT_EQ(m.query_heads, expected[i].heads) << m.name;
    EXPECT_EQ(m.kv_heads, expected[i].kv_heads) << m.name;
    EXPECT_EQ(m.head_dim, expected[i].head_dim) << m.name;
    EXPECT_EQ(m.intermediate, expected[i].intermediate) << m.name;
    EXPECT_EQ(m.vocabulary, expected[i].vocabulary) << m.name;
  }
  EXPECT_EQ(find_decode_model("gpt-2"), nullptr);
}

TEST(DecodeStep, FourGemvsPerLayerThenTheLmHeadAsOpTWithMInAndNOut) {
  const DecodeStep step = plan_decode_step(model("llama3-8b"), kDefaultBudget);
  EXPECT_EQ(step.layers, 32);
  ASSERT_EQ(step.gemvs.size(), 4u * 32u + 1u);
  const struct { const char* tag; int64_t in, out; } first_layer[] = {
      {"L0.qkv", 4096, 6144},  // 32 query heads and 2 x 8 kv heads of 128
      {"L0.o", 4096, 4096},
      {"L0.gate_up", 4096, 2 * 14336},
      {"L0.down", 14336, 4096},
  };
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(step.gemvs[i].tag, first_layer[i].tag);
    EXPECT_EQ(step.gemvs[i].in, first_layer[i].in) << first_layer[i].tag;
    EXPECT_EQ(step.gemvs[i].out, first_layer[i].out) << first_layer[i].tag;
  }
  EXPECT_EQ(step.gemvs[4].tag, "L1.qkv");
  EXPECT_EQ(step.gemvs[127].tag, "L31.down");
  EXPECT_EQ(step.gemvs.back().tag, "lm_head");
  EXPECT_EQ(step.gemvs.back().in, 4096);
  EXPECT_EQ(step.gemvs.back().out, 128256);

  const Case c = decode_gemv_case(step, step.gemvs[2], Dtype::fp16);
  EXPECT_EQ(c.suite, "decode");
  EXPECT_EQ(c.tag, "llama3-8b.L0.gate_up");
  EXPECT_EQ(c.op, 'T');
  EXPECT_EQ(c.m, 4096);
  EXPECT_EQ(c.n, 28672);
  EXPECT_EQ(c.lda(), 4096);
  EXPECT_EQ(c.alpha, 1.0);
  EXPECT_EQ(c.beta, 0.0);
  EXPECT_EQ(c.bytes(), step.gemvs[2].bytes());
}

TEST(DecodeStep, QkvFollowsTheHeadsWithAndWithoutGqa) {
  // Multi-head attention: q, k and v all 40 heads of 128.
  EXPECT_EQ(layer_gemvs(model("llama2-13b"), 0)[0].out, 3 * 5120);
  // GQA 28/4 heads of 128; 32/8 heads of 64.
  EXPECT_EQ(layer_gemvs(model("qwen2.5-7b"), 0)[0].out, 3584 + 2 * 4 * 128);
  EXPECT_EQ(layer_gemvs(model("llama3.2-1b"), 0)[0].out, 2048 + 2 * 8 * 64);
  EXPECT_EQ(layer_gemvs(model("llama3.1-405b"), 0)[3].in, 53248);
  EXPECT_EQ(layer_gemvs(model("llama3-70b"), 5)[1].tag, "L5.o");
}

TEST(DecodeStep, LargeModelsRunTheirFirstLayersThatFitTheBudget) {
  const struct { const char* name; int64_t layers; } expected[] = {
      {"llama3.2-1b", 16}, {"qwen2.5-7b", 28}, {"llama3-8b", 32},
      {"llama2-13b", 40},  {"llama3-70b", 13}, {"llama3.1-405b", 3},
  };
  for (const auto& e : expected) {
    const DecodeModel& m = model(e.name);
    const DecodeStep step = plan_decode_step(m, kDefaultBudget);
    EXPECT_EQ(step.layers, e.layers) << e.name;
    EXPECT_EQ(step.gemvs.size(), static_cast<size_t>(4 * e.layers + 1)) << e.name;
    EXPECT_LE(step.weight_buffer_bytes, kDefaultBudget) << e.name;
    EXPECT_LE(step.weight_bytes(), step.weight_buffer_bytes) << e.name;
    if (step.layers < m.layers) {
      // One more layer would not fit.
      const DecodeStep bigger = plan_decode_step(m, 2 * kDefaultBudget);
      const int64_t layer_bytes =
          bigger.gemvs[4].weight_offset - bigger.gemvs[0].weight_offset;
      EXPECT_GT(step.weight_buffer_bytes + layer_bytes, kDefaultBudget) << e.name;
    }
  }
  // 405B: three layers of 6.4 GB and a 4.2 GB LM head.
  const DecodeStep step = plan_decode_step(model("llama3.1-405b"), kDefaultBudget);
  EXPECT_EQ(step.weight_bytes(), 3 * int64_t{6375342080} + int64_t{4202692608});
  EXPECT_EQ(plan_decode_step(model("llama3-70b"), 1000 * kGib).layers, 80);
}

TEST(DecodeStep, ABudgetBelowOneLayerAndTheLmHeadIsAnError) {
  // 405B: 6.38 GB per layer and a 4.20 GB LM head.
  EXPECT_THROW(plan_decode_step(model("llama3.1-405b"), int64_t{10'000'000'000}),
               std::invalid_argument);
  EXPECT_EQ(plan_decode_step(model("llama3.1-405b"), 11 * kGib).layers, 1);
}

TEST(DecodeStep, EveryMatrixAndYIsItsOwnAlignedBufferAndXIsSharedPerInputWidth) {
  const DecodeStep step = plan_decode_step(model("qwen2.5-7b"), kDefaultBudget);
  int64_t weight_end = 0, y_end = 0;
  std::set<int64_t> x_offsets, widths;
  for (const DecodeGemv& gemv : step.gemvs) {
    EXPECT_EQ(gemv.weight_offset % kDecodeAlignment, 0) << gemv.tag;
    EXPECT_EQ(gemv.x_offset % kDecodeAlignment, 0) << gemv.tag;
    EXPECT_EQ(gemv.y_offset % kDecodeAlignment, 0) << gemv.tag;
    EXPECT_GE(gemv.weight_offset, weight_end) << gemv.tag;  // in order, no overlap
    EXPECT_GE(gemv.y_offset, y_end) << gemv.tag;
    weight_end = gemv.weight_offset + gemv.weight_bytes();
    y_end = gemv.y_offset + gemv.out * kDecodeElementBytes;
    EXPECT_LE(gemv.x_offset + gemv.in * kDecodeElementBytes, step.x_buffer_bytes) << gemv.tag;
    x_offsets.insert(gemv.x_offset);
    widths.insert(gemv.in);
  }
  EXPECT_LE(weight_end, step.weight_buffer_bytes);
  EXPECT_EQ(step.weight_buffer_bytes % kDecodeAlignment, 0);
  EXPECT_LE(y_end, step.y_buffer_bytes);
  EXPECT_EQ(widths, (std::set<int64_t>{3584, 18944}));
  EXPECT_EQ(x_offsets.size(), widths.size());
  // Gemvs of one width read one x.
  EXPECT_EQ(step.gemvs[0].x_offset, step.gemvs.back().x_offset);
  EXPECT_NE(step.gemvs[0].x_offset, step.gemvs[3].x_offset);
  EXPECT_EQ(step.largest_output(), 152064);
  int64_t bytes = 0;
  for (const DecodeGemv& gemv : step.gemvs) bytes += (gemv.in * gemv.out + gemv.in + gemv.out) * 2;
  EXPECT_EQ(step.bytes(), bytes);
}

TEST(DecodeStep, SeveralVectorsAreColumnsOfEachXAndYAndTheLayersStayTheSame) {
  const DecodeStep one = plan_decode_step(model("llama3-8b"), kDefaultBudget);
  const DecodeStep four = plan_decode_step(model("llama3-8b"), kDefaultBudget, 4);
  EXPECT_EQ(four.nrhs, 4);
  EXPECT_EQ(four.layers, one.layers);
  EXPECT_EQ(four.weight_buffer_bytes, one.weight_buffer_bytes);
  ASSERT_EQ(four.gemvs.size(), one.gemvs.size());
  // Two input widths (4096 and 14336), each X of four packed columns.
  EXPECT_EQ(four.x_buffer_bytes, 4 * (4096 + 14336) * kDecodeElementBytes);
  int64_t y_bytes = 0, bytes = 0;
  for (size_t i = 0; i < four.gemvs.size(); ++i) {
    const DecodeGemv& gemv = four.gemvs[i];
    EXPECT_EQ(gemv.nrhs, 4);
    EXPECT_EQ(gemv.weight_offset, one.gemvs[i].weight_offset) << gemv.tag;
    EXPECT_EQ(gemv.y_offset, y_bytes) << gemv.tag;
    EXPECT_EQ(gemv.y_offset % kDecodeAlignment, 0) << gemv.tag;
    y_bytes += (4 * gemv.out * kDecodeElementBytes + kDecodeAlignment - 1) / kDecodeAlignment *
               kDecodeAlignment;
    bytes += (gemv.in * gemv.out + 4 * (gemv.in + gemv.out)) * kDecodeElementBytes;
  }
  EXPECT_EQ(four.y_buffer_bytes, y_bytes);
  EXPECT_EQ(four.bytes(), bytes);  // W once, X and Y once each
  EXPECT_EQ(four.weight_bytes(), one.weight_bytes());
  const Case c = decode_gemv_case(four, four.gemvs[3], Dtype::bf16);
  EXPECT_EQ(c.nrhs, 4);
  EXPECT_EQ(c.bytes(), four.gemvs[3].bytes());
  EXPECT_EQ(describe_step(four),
            "llama3-8b, nrhs 4: 32 of 32 layers + LM head, 129 GEMVs, 15.03 GB per step");
}

TEST(DecodeSteps, ModelsAndDtypesFromTheCommandLine) {
  Options options;
  EXPECT_EQ(plan_decode_steps(options).size(), decode_models().size());
  EXPECT_EQ(decode_dtypes(options), (std::vector<Dtype>{Dtype::bf16, Dtype::fp16}));

  options.models = {"llama3-70b", "llama3.2-1b"};
  options.step_gib = 8;
  options.dtypes = {"fp16"};
  const std::vector<DecodeStep> steps = plan_decode_steps(options);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].model.name, "llama3.2-1b");  // the table's order
  EXPECT_EQ(steps[1].model.name, "llama3-70b");
  EXPECT_EQ(steps[1].layers, 3);  // (8 GiB - 2.1 GB) / 1.71 GB
  EXPECT_EQ(decode_dtypes(options), (std::vector<Dtype>{Dtype::fp16}));

  // --nrhs: each model at every nrhs, model by model.
  options.nrhs = {1, 2, 8};
  const std::vector<DecodeStep> swept = plan_decode_steps(options);
  ASSERT_EQ(swept.size(), 6u);
  const struct { const char* model; int64_t nrhs; } order[] = {
      {"llama3.2-1b", 1}, {"llama3.2-1b", 2}, {"llama3.2-1b", 8},
      {"llama3-70b", 1},  {"llama3-70b", 2},  {"llama3-70b", 8}};
  for (size_t i = 0; i < swept.size(); ++i) {
    EXPECT_EQ(swept[i].model.name, order[i].model) << i;
    EXPECT_EQ(swept[i].nrhs, order[i].nrhs) << i;
  }
  EXPECT_EQ(swept[5].layers, 3);
  options.nrhs.clear();

  options.dtypes = {"fp32"};
  EXPECT_THROW(decode_dtypes(options), std::invalid_argument);
  options.models = {"gpt-2"};
  EXPECT_THROW(plan_decode_steps(options), std::invalid_argument);
  options.models.clear();
  options.step_gib = 0;
  EXPECT_THROW(plan_decode_steps(options), std::invalid_argument);
}

TEST(DecodeTiming, AtLeastFifteenReplaysAfterWarmUp) {
  EXPECT_EQ(plan_decode_timing(false).replays, 31);
  EXPECT_EQ(plan_decode_timing(true).replays, 15);
  EXPECT_GE(plan_decode_timing(true).warmup_replays, 1);
}

CheckResult check(double max_error, double tolerance) {
  CheckResult result;
  result.max_error = max_error;
  result.tolerance = tolerance;
  result.passed = max_error <= tolerance;
  return result;
}

TEST(DecodeCheck, TheWorstGemvIsTheLargestShareOfItsToleranceAndOneFailureFailsTheRow) {
  const DecodeStep step = plan_decode_step(model("llama3.2-1b"), kDefaultBudget);
  DecodeRow row(step, Dtype::bf16, "xgemv", "xgemv_bf16gemv");
  add_gemv_check(row, "L0.qkv", check(1e-3, 1e-2));
  add_gemv_check(row, "L0.o", check(4e-4, 1e-3));  // 40% of its tolerance: the worst so far
  add_gemv_check(row, "L0.down", check(2e-3, 1e-2));
  EXPECT_EQ(row.status, "ok");
  EXPECT_EQ(row.checked_gemvs, 3);
  EXPECT_EQ(row.worst_gemv, "L0.o");
  EXPECT_DOUBLE_EQ(*row.max_error, 4e-4);
  EXPECT_DOUBLE_EQ(*row.tolerance, 1e-3);

  add_gemv_check(row, "lm_head", check(std::numeric_limits<double>::infinity(), 1e-2));  // NaN
  add_gemv_check(row, "L1.qkv", check(1.0, 1e-2));
  EXPECT_EQ(row.status, "check failed");
  EXPECT_TRUE(row.failed());
  EXPECT_EQ(row.failed_gemvs, 2);
  EXPECT_EQ(row.worst_gemv, "lm_head");
}

// Two steps: llama3-8b in bf16 with every row, llama3.2-1b in fp16 where cuBLAS gemv failed.
std::vector<DecodeRow> sample_rows() {
  const DecodeStep big = plan_decode_step(model("llama3-8b"), kDefaultBudget);
  const DecodeStep small = plan_decode_step(model("llama3.2-1b"), kDefaultBudget);
  std::vector<DecodeRow> rows;
  auto add = [&](const DecodeStep& step, Dtype dtype, const std::string& library,
                 std::optional<double> ms) {
    DecodeRow& row = rows.emplace_back(step, dtype, library, library + "_function");
    row.ms = ms;
    row.replays = ms ? 31 : 0;
    row.kernels = static_cast<int>(step.gemvs.size());
    if (!row.is_read()) add_gemv_check(row, "L0.qkv", check(1e-4, 2e-3));
  };
  add(big, Dtype::bf16, kOneRead, 3.2);
  add(big, Dtype::bf16, kPerGemvReads, 3.4);
  add(big, Dtype::bf16, "xgemv", 3.6);
  add(big, Dtype::bf16, kXgemvEarlyStart, 3.5);
  add(big, Dtype::bf16, "cublas", 4.5);
  add(big, Dtype::bf16, "cublas-gemmex", 4.0);
  add(small, Dtype::fp16, kOneRead, 0.6);
  add(small, Dtype::fp16, kPerGemvReads, 0.7);
  add(small, Dtype::fp16, "xgemv", 0.8);
  add(small, Dtype::fp16, kXgemvEarlyStart, 0.75);
  add(small, Dtype::fp16, "cublas", std::nullopt);
  rows.back().status = "check failed";
  add(small, Dtype::fp16, "cublas-gemmex", 1.0);
  derive_decode_metrics(rows);
  return rows;
}

TEST(DecodeMetrics, ShareOfTheOneReadAndSpeedupOverTheFasterCublasPerStep) {
  const std::vector<DecodeRow> rows = sample_rows();
  const DecodeRow& one_read = rows[0];
  EXPECT_DOUBLE_EQ(*one_read.gbps, 15014038016.0 / 3.2 / 1e6);
  EXPECT_FALSE(one_read.pct_one_read);
  EXPECT_FALSE(one_read.speedup_vs_cublas);
  EXPECT_DOUBLE_EQ(*rows[1].pct_one_read, 100.0 * 3.2 / 3.4);
  EXPECT_FALSE(rows[1].speedup_vs_cublas);  // a read, not a library
  const DecodeRow& xgemv = rows[2];
  EXPECT_DOUBLE_EQ(*xgemv.pct_one_read, 100.0 * 3.2 / 3.6);
  EXPECT_DOUBLE_EQ(*xgemv.speedup_vs_cublas, 4.0 / 3.6);  // GemmEx was the faster cuBLAS
  EXPECT_DOUBLE_EQ(*rows[3].speedup_vs_cublas, 4.0 / 3.5);
  EXPECT_DOUBLE_EQ(*rows[4].speedup_vs_cublas, 4.0 / 4.5);
  // The second step has its own one-read; its failed cuBLAS gemv has no time.
  EXPECT_DOUBLE_EQ(*rows[8].pct_one_read, 75.0);
  EXPECT_DOUBLE_EQ(*rows[8].speedup_vs_cublas, 1.0 / 0.8);
  EXPECT_FALSE(rows[10].gbps);
}

RunInfo sample_info() {
  RunInfo info;
  info.device = "NVIDIA H200";
  info.sm_clock_max_mhz = 1980;
  info.driver = "580.65, CUDA 13.0";  // a comma: the CSV must quote it
  info.cuda = "13.0";
  info.commit = "abc123";
  info.date = "2026-12-01T12:00:00Z";
  info.command = "xgemv-bench --suite decode";
  info.mode = "graph";
  return info;
}

TEST(DecodeSummary, GeometricMeansPerDtypeAndLibraryWithoutTheReads) {
  const std::vector<DecodeSummary> summary = summarize_decode(sample_rows());
  ASSERT_EQ(summary.size(), 7u);  // bf16: 4 libraries; fp16: xgemv, early start, GemmEx
  EXPECT_EQ(summary[0].library, "xgemv");
  EXPECT_EQ(summary[0].dtype, Dtype::bf16);
  EXPECT_EQ(summary[0].steps, 1);
  EXPECT_DOUBLE_EQ(*summary[0].geomean_speedup, 4.0 / 3.6);
  EXPECT_EQ(summary[0].worst_step, "llama3-8b");
  EXPECT_EQ(summary[4].library, "xgemv");
  EXPECT_EQ(summary[4].dtype, Dtype::fp16);
  EXPECT_DOUBLE_EQ(*summary[4].lowest_pct_one_read, 75.0);

  const std::string verdict = format_decode_verdict(sample_rows());
  EXPECT_EQ(verdict,
            "verdict: speed-up per step over the faster cuBLAS (gemv or GemmEx): xgemv bf16 "
            "1.11x geo-mean, worst 1.11x (llama3-8b), fp16 1.25x geo-mean, worst 1.25x "
            "(llama3.2-1b); xgemv-early-start bf16 1.14x geo-mean, worst 1.14x (llama3-8b), "
            "fp16 1.33x geo-mean, worst 1.33x (llama3.2-1b); FAILED 1 row(s): llama3.2-1b fp16 "
            "cublas (check failed)");
}

TEST(DecodeCsv, HeaderThenOneLinePerRow) {
  std::ostringstream out;
  write_decode_csv(out, sample_info(), sample_rows());
  std::istringstream lines(out.str());
  std::string header, line;
  std::getline(lines, header);
  std::string joined;
  for (const std::string& column : decode_csv_columns())
    joined += (joined.empty() ? "" : ",") + column;
  EXPECT_EQ(header, joined);
  EXPECT_EQ(header.rfind("model,dtype,nrhs,layers,model_layers,gemvs,weight_bytes,bytes,lib,", 0),
            0u);
  std::vector<std::string> body;
  while (std::getline(lines, line)) body.push_back(line);
  ASSERT_EQ(body.size(), 12u);
  EXPECT_EQ(body[2].rfind("llama3-8b,bf16,1,32,32,129,15009316864,15014038016,xgemv,"
                          "xgemv_function,ok,129,31,3.6000,4170.6,88.9,1.111,1,0,0.0001,0.002,"
                          "L0.qkv,NVIDIA H200,0,1980,0,\"580.65, CUDA 13.0\",13.0,abc123,",
                          0),
            0u)
      << body[2];
  EXPECT_NE(body[10].find(",cublas,cublas_function,check failed,65,0,,,,,1,0,"),
            std::string::npos)
      << body[10];
}

TEST(DecodeJson, RunSummaryAndRecords) {
  const nlohmann::ordered_json json = decode_to_json(sample_info(), sample_rows());
  EXPECT_EQ(json["run"]["device"], "NVIDIA H200");
  EXPECT_EQ(json["run"]["mode"], "graph");
  ASSERT_EQ(json["records"].size(), 12u);
  const nlohmann::ordered_json& xgemv = json["records"][2];
  EXPECT_EQ(xgemv["model"], "llama3-8b");
  EXPECT_EQ(xgemv["lib"], "xgemv");
  EXPECT_EQ(xgemv["layers"], 32);
  EXPECT_DOUBLE_EQ(xgemv["ms"].get<double>(), 3.6);
  EXPECT_DOUBLE_EQ(xgemv["speedup_vs_cublas"].get<double>(), 4.0 / 3.6);
  EXPECT_TRUE(json["records"][0]["speedup_vs_cublas"].is_null());
  EXPECT_TRUE(json["records"][10]["ms"].is_null());
  EXPECT_EQ(json["summary"][0]["lib"], "xgemv");
  EXPECT_EQ(json["summary"][0]["steps"], 1);
  EXPECT_EQ(xgemv["nrhs"], 1);
  EXPECT_FALSE(json.contains("nrhs"));  // no --nrhs rows
}

TEST(DecodeMarkdown, RunTableSummaryStepTableVerdictAndFailures) {
  std::ostringstream out;
  write_decode_markdown(out, sample_info(), sample_rows());
  const std::string text = out.str();
  EXPECT_NE(text.find("| device | NVIDIA H200 (SM clock max 1980 MHz"), std::string::npos);
  EXPECT_NE(text.find("median of 31 replays after 3 warm-up replays"), std::string::npos) << text;
  EXPECT_NE(text.find("| bf16 | xgemv | 1 | 1.11x | 1.11x (llama3-8b) | 88.9 | 88.9 |"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("| llama3-8b | bf16 | 32/32 | 129 | 15.01 | 3.200 | 3.400 | 3.600 | "
                      "3.500 | 4.500 | 4.000 | 88.9 | 91.4 | 1.11x | 1.14x |"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("| llama3.2-1b | fp16 | 16/16 | 65 | 2.47 | 0.600 | 0.700 | 0.800 | "
                      "0.750 | - | 1.000 | 75.0 | 80.0 | 1.25x | 1.33x |"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\nverdict: "), std::string::npos);
  EXPECT_NE(text.find("## Failures\n\n- llama3.2-1b fp16 cublas: check failed (1 GEMVs"),
            std::string::npos)
      << text;
}

TEST(DecodeTable, OneLinePerStepThenTheVerdictLast) {
  std::ostringstream out;
  write_decode_table(out, sample_rows());
  std::istringstream lines(out.str());
  std::vector<std::string> text;
  for (std::string line; std::getline(lines, line);) text.push_back(line);
  ASSERT_EQ(text.size(), 4u);
  EXPECT_NE(text[0].find("one-read"), std::string::npos);
  EXPECT_EQ(text[1].rfind("llama3-8b", 0), 0u);
  EXPECT_NE(text[1].find("32/32"), std::string::npos);
  EXPECT_NE(text[1].find("3.600"), std::string::npos);
  EXPECT_NE(text[1].find("88.9"), std::string::npos);
  EXPECT_NE(text[1].find("1.14x"), std::string::npos);
  // Columns line up with the header.
  EXPECT_EQ(text[0].find("xgemv-es") + 8, text[1].find("3.500") + 5);
  EXPECT_EQ(text[3].rfind("verdict: ", 0), 0u);
}

// A --nrhs run of llama3-8b in bf16 at nrhs 1, 2 and 16: every row at nrhs 1, then the reads,
// xgemv-nrhs and GemmEx with the step's columns.
std::vector<DecodeRow> sweep_rows() {
  std::vector<DecodeRow> rows;
  auto add = [&](int64_t nrhs, const std::string& library, double ms) {
    const DecodeStep step = plan_decode_step(model("llama3-8b"), kDefaultBudget, nrhs);
    DecodeRow& row = rows.emplace_back(step, Dtype::bf16, library, library + "_function");
    row.ms = ms;
    row.replays = 31;
    if (!row.is_read()) add_gemv_check(row, "L0.qkv", check(1e-4, 2e-3));
  };
  for (const auto& [library, ms] : std::vector<std::pair<std::string, double>>{
           {kOneRead, 3.2}, {kPerGemvReads, 3.4}, {"xgemv", 3.6}, {kXgemvEarlyStart, 3.5},
           {kXgemvNrhs, 3.7}, {"cublas", 4.5}, {"cublas-gemmex", 4.0}})
    add(1, library, ms);
  for (const auto& [nrhs, xgemv, gemmex] :
       std::vector<std::tuple<int64_t, double, double>>{{2, 3.8, 7.0}, {16, 4.5, 8.0}}) {
    add(nrhs, kOneRead, 3.2);
    add(nrhs, kPerGemvReads, 3.4);
    add(nrhs, kXgemvNrhs, xgemv);
    add(nrhs, "cublas-gemmex", gemmex);
  }
  derive_decode_metrics(rows);
  return rows;
}

TEST(DecodeNrhs, EachStepAtEveryNrhsBesideGemmExWithTheSameColumns) {
  const std::vector<DecodeRow> rows = sweep_rows();
  // Metrics are per step and nrhs: nrhs 16's xgemv-nrhs over its own GemmEx and one-read.
  EXPECT_DOUBLE_EQ(*rows.back().speedup_vs_cublas, 1.0);  // GemmEx beside itself
  EXPECT_DOUBLE_EQ(*rows[rows.size() - 2].speedup_vs_cublas, 8.0 / 4.5);
  EXPECT_DOUBLE_EQ(*rows[rows.size() - 2].pct_one_read, 100.0 * 3.2 / 4.5);
  EXPECT_DOUBLE_EQ(*rows[4].speedup_vs_cublas, 4.0 / 3.7);  // nrhs 1: the faster of the two

  const std::vector<NrhsFamily> families = decode_nrhs_families(rows);
  ASSERT_EQ(families.size(), 1u);
  EXPECT_EQ(families[0].family, "llama3-8b bf16");
  EXPECT_EQ(families[0].group, "decode bf16");
  EXPECT_TRUE(families[0].targeted);
  ASSERT_EQ(families[0].rows.size(), 3u);
  EXPECT_DOUBLE_EQ(*families[0].rows[1].xgemv_ratio, 3.8 / 3.7);
  EXPECT_DOUBLE_EQ(*families[0].rows[2].cublas_ratio, 2.0);
  EXPECT_DOUBLE_EQ(*families[0].rows[2].speedup, 8.0 / 4.5);
  EXPECT_EQ(format_nrhs_verdict(make_nrhs_verdict(families, kDecodeNrhsScope)),
            "nrhs verdict (xgemv, bf16/fp16 decode steps): time(nrhs)/time(1) <= 1.10x for nrhs "
            "2..8: yes (1/1, worst 1.03x: llama3-8b bf16 nrhs 2); <= 1.25x for nrhs 9..16: yes "
            "(1/1, worst 1.22x: llama3-8b bf16 nrhs 16); speed-up vs cuBLAS GemmEx over nrhs "
            "2..16: 1.81x geo-mean, worst 1.78x (llama3-8b bf16 nrhs 16)");
  // Without an xgemv-nrhs row or a step of several vectors: no family.
  EXPECT_TRUE(decode_nrhs_families(sample_rows()).empty());
}

TEST(DecodeNrhs, StepTablesAndSummaryStayOfOneVectorAndTheWritersAddTheSweep) {
  const std::vector<DecodeRow> rows = sweep_rows();
  for (const DecodeSummary& summary : summarize_decode(rows)) EXPECT_EQ(summary.steps, 1);
  std::ostringstream table;
  write_decode_table(table, rows);
  std::istringstream lines(table.str());
  std::vector<std::string> text;
  for (std::string line; std::getline(lines, line);) text.push_back(line);
  ASSERT_EQ(text.size(), 3u);  // header, the nrhs 1 step, verdict

  std::ostringstream markdown;
  write_decode_markdown(markdown, sample_info(), rows);
  const std::string md = markdown.str();
  EXPECT_NE(md.find("\n## Few right-hand sides\n"), std::string::npos);
  EXPECT_NE(md.find("| decode bf16 | 16 | 1 | 1.22x | 1.22x | 2.00x | 1.78x | 1.78x |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("### llama3-8b bf16\n\n| nrhs | xgemv ms | xgemv time/time(1) | xgemv % "
                    "of one-read | cuBLAS ms (cublas-gemmex_function) |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| 2 | 3.800 | 1.03x | 84.2 | 7.000 | 1.75x | 1.84x |"), std::string::npos)
      << md;

  std::ostringstream csv;
  write_decode_csv(csv, sample_info(), rows);
  EXPECT_NE(csv.str().find("\nllama3-8b,bf16,16,32,32,129,"), std::string::npos);
  const nlohmann::ordered_json json = decode_to_json(sample_info(), rows);
  ASSERT_TRUE(json.contains("nrhs"));
  EXPECT_EQ(json["nrhs"]["time_unit"], "ms");
  EXPECT_EQ(json["nrhs"]["bound"], "one-read");
  EXPECT_EQ(json["records"].back()["nrhs"], 16);
}

TEST(DecodeProgress, LinesLineUpWithTheHeaderAndSayWhatWasChecked) {
  const std::vector<DecodeRow> rows = sample_rows();
  const std::string header = decode_progress_header();
  const std::string line = decode_progress_line(rows[2]);
  EXPECT_EQ(header.find("library"), line.find("xgemv"));
  EXPECT_EQ(header.find(" check"), line.find(" ok"));
  EXPECT_NE(line.find("1.11x"), std::string::npos);
  EXPECT_NE(line.find("ok (1 GEMVs; worst L0.qkv err 0.0001 / tol 0.002)"), std::string::npos)
      << line;
  EXPECT_EQ(describe_step(plan_decode_step(model("llama3-70b"), kDefaultBudget)),
            "llama3-70b: 13 of 80 layers + LM head, 53 GEMVs, 24.35 GB per step");
}

}  // namespace
}  // namespace xgemv::bench
