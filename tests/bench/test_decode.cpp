// The decode suite without a GPU: models, the GEMVs of a step, layer truncation to the memory
// budget, the buffer layout, the check of a step, and its records through the one writer.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

#include "lib/decode.hpp"
#include "lib/options.hpp"
#include "lib/report.hpp"
#include "samples.hpp"

namespace xgemv::bench {
namespace {

constexpr int64_t kGib = int64_t{1} << 30;
constexpr int64_t kDefaultBudget = static_cast<int64_t>(kDefaultStepGib) * kGib;

const DecodeModel& model(const std::string& name) {
  const DecodeModel* found = find_decode_model(name);
  EXPECT_NE(found, nullptr) << name;
  return *found;
}

TEST(DecodeModels, PublishedConfigurationsFrom896To16384Hidden) {
  // Each model as "name hidden/layers: heads x head dim, kv heads; intermediate; vocabulary".
  const std::vector<std::string> expected = {
      "qwen2.5-0.5b 896/24: 14x64, 2; 4864; 151936",
      "qwen2.5-1.5b 1536/28: 12x128, 2; 8960; 151936",
      "llama3.2-1b 2048/16: 32x64, 8; 8192; 128256",
      "gemma2-2b 2304/26: 8x256, 4; 9216; 256000",
      "llama3.2-3b 3072/28: 24x128, 8; 8192; 128256",
      "qwen2.5-7b 3584/28: 28x128, 4; 18944; 152064",
      "llama2-7b 4096/32: 32x128, 32; 11008; 32000",
      "llama3-8b 4096/32: 32x128, 8; 14336; 128256",
      "mistral-7b 4096/32: 32x128, 8; 14336; 32000",
      "llama2-13b 5120/40: 40x128, 40; 13824; 32000",
      "llama3-70b 8192/80: 64x128, 8; 28672; 128256",
      "llama3.1-405b 16384/126: 128x128, 8; 53248; 128256",
  };
  std::vector<std::string> published;
  for (const DecodeModel& m : models())
    published.push_back(m.name + " " + std::to_string(m.hidden) + "/" + std::to_string(m.layers) +
                        ": " + std::to_string(m.query_heads) + "x" + std::to_string(m.head_dim) +
                        ", " + std::to_string(m.kv_heads) + "; " + std::to_string(m.intermediate) +
                        "; " + std::to_string(m.vocabulary));
  EXPECT_EQ(published, expected);
  // The decode suite: one model of each size from 1B to 405B.
  std::vector<std::string> suite;
  for (const DecodeModel& m : decode_models()) suite.push_back(m.name);
  EXPECT_EQ(suite, (std::vector<std::string>{"llama3.2-1b", "qwen2.5-7b", "llama3-8b",
                                             "llama2-13b", "llama3-70b", "llama3.1-405b"}));
  EXPECT_EQ(find_decode_model("gpt-2"), nullptr);
}

TEST(DecodeStep, FourGemvsPerLayerThenTheLmHeadAsOpTWithMInAndNOut) {
  const DecodeStep step = plan_decode_step(model("llama3-8b"), kDefaultBudget);
  EXPECT_EQ(step.layers, 32);
  ASSERT_EQ(step.gemvs.size(), 4u * 32u + 1u);
  const struct {
    const char* tag;
    int64_t in, out;
  } first_layer[] = {
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
  EXPECT_EQ(layer_gemvs(model("llama2-13b"), "")[0].out, 3 * 5120);
  // GQA 28/4 heads of 128; 32/8 heads of 64.
  EXPECT_EQ(layer_gemvs(model("qwen2.5-7b"), "")[0].out, 3584 + 2 * 4 * 128);
  EXPECT_EQ(layer_gemvs(model("llama3.2-1b"), "")[0].out, 2048 + 2 * 8 * 64);
  EXPECT_EQ(layer_gemvs(model("llama3.1-405b"), "")[3].in, 53248);
  EXPECT_EQ(layer_gemvs(model("llama3-70b"), "L5.")[1].tag, "L5.o");
}

TEST(DecodeStep, LargeModelsRunTheirFirstLayersThatFitTheBudget) {
  const struct {
    const char* name;
    int64_t layers;
  } expected[] = {
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
      const int64_t layer_bytes = bigger.gemvs[4].weight_offset - bigger.gemvs[0].weight_offset;
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

  // Any model of the bench on request, beside the decode suite's: Gemma-2-2B's attention is
  // 2048 wide (8 heads of 256) on a hidden size of 2304, and its LM head 2304 x 256000.
  options.models = {"gemma2-2b", "qwen2.5-0.5b"};
  const std::vector<DecodeStep> small = plan_decode_steps(options);
  ASSERT_EQ(small.size(), 2u);
  EXPECT_EQ(small[0].model.name, "qwen2.5-0.5b");
  EXPECT_EQ(small[0].layers, 24);
  EXPECT_EQ(small[1].model.name, "gemma2-2b");
  EXPECT_EQ(small[1].layers, 26);
  EXPECT_EQ(small[1].gemvs[1].in, 2048);
  EXPECT_EQ(small[1].gemvs[1].out, 2304);
  EXPECT_EQ(small[1].gemvs.back().out, 256000);
  options.models = {"llama3-70b", "llama3.2-1b"};

  // --nrhs: each model at every nrhs, model by model.
  options.nrhs = {1, 2, 8};
  const std::vector<DecodeStep> swept = plan_decode_steps(options);
  ASSERT_EQ(swept.size(), 6u);
  const struct {
    const char* model;
    int64_t nrhs;
  } order[] = {{"llama3.2-1b", 1}, {"llama3.2-1b", 2}, {"llama3.2-1b", 8},
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

TEST(DecodeCheck, TheWorstGemvIsTheLargestShareOfItsToleranceAndOneFailureFailsTheRecord) {
  const DecodeStep step = plan_decode_step(model("llama3.2-1b"), kDefaultBudget);
  Record row = step_record(step, Dtype::bf16, "xgemv", "xgemv_bf16gemv");
  row.add_check("L0.qkv", check(1e-3, 1e-2));
  row.add_check("L0.o", check(4e-4, 1e-3));  // 40% of its tolerance: the worst so far
  row.add_check("L0.down", check(2e-3, 1e-2));
  EXPECT_EQ(row.status, "ok");
  EXPECT_EQ(row.checked, 3);
  EXPECT_EQ(row.worst, "L0.o");
  EXPECT_DOUBLE_EQ(*row.max_error, 4e-4);
  EXPECT_DOUBLE_EQ(*row.tolerance, 1e-3);

  row.add_check("lm_head", check(std::numeric_limits<double>::infinity(), 1e-2));  // NaN
  row.add_check("L1.qkv", check(1.0, 1e-2));
  EXPECT_EQ(row.status, "check failed");
  EXPECT_TRUE(row.failed());
  EXPECT_EQ(row.failed_checks, 2);
  EXPECT_EQ(row.worst, "lm_head");
}

// Two steps: llama3-8b in bf16 with every row, llama3.2-1b in fp16 where cuBLAS gemv failed.
std::vector<Record> sample_rows() {
  const DecodeStep big = plan_decode_step(model("llama3-8b"), kDefaultBudget);
  const DecodeStep small = plan_decode_step(model("llama3.2-1b"), kDefaultBudget);
  std::vector<Record> rows;
  auto add = [&](const DecodeStep& step, Dtype dtype, const std::string& library,
                 std::optional<double> ms) {
    Record& row = rows.emplace_back(step_record(step, dtype, library, library + "_function"));
    if (ms) row.set_times(std::vector<double>(31, *ms * 1e3));
    row.kernels = static_cast<int>(step.gemvs.size());
    if (!row.is_bound() && library != kPerGemvReads) row.add_check("L0.qkv", check(1e-4, 2e-3));
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
  derive_metrics(rows);
  return rows;
}

TEST(DecodeMetrics, ShareOfTheOneReadAndSpeedupOverTheFasterCublasPerStep) {
  const std::vector<Record> rows = sample_rows();
  const Record& one_read = rows[0];
  EXPECT_EQ(one_read.label(), "llama3-8b bf16");
  EXPECT_DOUBLE_EQ(*one_read.gbps, 15014038016.0 / 3.2 / 1e6);
  EXPECT_FALSE(one_read.pct_bound);
  EXPECT_FALSE(one_read.speedup);
  EXPECT_DOUBLE_EQ(*rows[1].pct_bound, 100.0 * 3.2 / 3.4);
  const Record& xgemv = rows[2];
  EXPECT_DOUBLE_EQ(*xgemv.pct_bound, 100.0 * 3.2 / 3.6);
  EXPECT_DOUBLE_EQ(*xgemv.speedup, 4.0 / 3.6);  // GemmEx was the faster cuBLAS
  EXPECT_DOUBLE_EQ(*rows[3].speedup, 4.0 / 3.5);
  EXPECT_DOUBLE_EQ(*rows[4].speedup, 4.0 / 4.5);
  // Each library row's time over the step's per-GEMV reads; none for the reads themselves.
  EXPECT_DOUBLE_EQ(*xgemv.reads_ratio, 3.6 / 3.4);
  EXPECT_DOUBLE_EQ(*rows[3].reads_ratio, 3.5 / 3.4);
  EXPECT_FALSE(rows[0].reads_ratio);
  EXPECT_FALSE(rows[1].reads_ratio);
  // The second step has its own one-read; its failed cuBLAS gemv has no time.
  EXPECT_DOUBLE_EQ(*rows[8].pct_bound, 75.0);
  EXPECT_DOUBLE_EQ(*rows[8].speedup, 1.0 / 0.8);
  EXPECT_FALSE(rows[10].gbps);
}

TEST(DecodeVerdict, SpeedUpPerDtypeOfBothXgemvRowsAndEveryFailure) {
  EXPECT_EQ(verdict_starting(sample_rows(), "verdict: "),
            "verdict: speed-up per step over the faster cuBLAS (gemv or GemmEx): xgemv bf16 "
            "1.11x geo-mean, worst 1.11x (llama3-8b), fp16 1.25x geo-mean, worst 1.25x "
            "(llama3.2-1b); xgemv-early-start bf16 1.14x geo-mean, worst 1.14x (llama3-8b), "
            "fp16 1.33x geo-mean, worst 1.33x (llama3.2-1b); FAILED 1 row(s): llama3.2-1b fp16 "
            "cublas (check failed)");
  // No xgemv timed: n/a, then the failures.
  std::vector<Record> rows = sample_rows();
  rows.erase(rows.begin(), rows.begin() + 6);
  for (Record& r : rows)
    if (r.lib.rfind("xgemv", 0) == 0) r.us.reset();
  derive_metrics(rows);
  EXPECT_EQ(verdict_starting(rows, "verdict: "),
            "verdict: speed-up per step over the faster cuBLAS (gemv or GemmEx): n/a; FAILED 1 "
            "row(s): llama3.2-1b fp16 cublas (check failed)");
}

TEST(DecodeVerdict, EarlyStartAgainstThePerGemvReadsOfEachStep) {
  EXPECT_EQ(verdict_starting(sample_rows(), "decode reads verdict: "),
            "decode reads verdict: time per step over the graph of per-GEMV reads: "
            "xgemv-early-start <= 1.04x: NO (1/2, worst 1.07x: llama3.2-1b fp16) below: "
            "llama3.2-1b fp16 1.07x");
}

RunInfo sample_info() {
  RunInfo info = bench::sample_info("xgemv-bench --suite decode");
  info.mode = "graph";
  info.method =
      "one CUDA graph per step and library, median of 31 replays after 3 warm-up "
      "replays";
  return info;
}

TEST(DecodeReport, SummaryStepTableCsvJsonAndFailures) {
  const std::vector<Record> rows = sample_rows();
  const nlohmann::ordered_json summary = summary_json(rows);
  EXPECT_EQ(summary[0]["lib"], kPerGemvReads);  // the reads but the one-read are summarized too
  EXPECT_EQ(summary[1]["lib"], "xgemv");
  EXPECT_EQ(summary[1]["cases"], 1);
  EXPECT_DOUBLE_EQ(summary[1]["geomean_speedup"].get<double>(), 4.0 / 3.6);
  EXPECT_EQ(summary[1]["worst_speedup_case"], "llama3-8b bf16");

  const std::string text = markdown_of(sample_info(), rows);
  EXPECT_TRUE(contains(text, "median of 31 replays after 3 warm-up replays"));
  EXPECT_TRUE(contains(text,
                       "| llama3-8b bf16 | 32/32 | 129 | 15.01 | 3.200 | 3.400 | 3.600 | 3.500 | "
                       "4.500 | 4.000 | 88.9 | 91.4 | 1.11x | 1.14x |"));
  EXPECT_TRUE(contains(text,
                       "| llama3.2-1b fp16 | 16/16 | 65 | 2.47 | 0.600 | 0.700 | 0.800 | 0.750 | "
                       "FAILED | 1.000 | 75.0 | 80.0 | 1.25x | 1.33x |"));
  EXPECT_TRUE(contains(text,
                       "## Failures\n\n- decode llama3.2-1b fp16 cublas: check failed (1 checked; "
                       "worst L0.qkv err 0.0001 / tol 0.002) [65 kernels]"));

  std::ostringstream csv;
  write_csv(csv, sample_info(), rows);
  EXPECT_TRUE(contains(csv.str(),
                       "\ndecode,llama3-8b bf16,llama3-8b,bf16,bf16,T,0,0,1,0,1,1,1,0,,32,32,"
                       "129,1,15009316864,15014038016,0,xgemv,xgemv_function,graph,ok,1,0,"
                       "0.0001,0.002,L0.qkv,0,1,31,129,3600.000,0.0,,0,4170.6,4691.9,88.9,"
                       "1.111,,1.059,,,NVIDIA H200,"));
  const nlohmann::ordered_json json = to_json(sample_info(), rows);
  EXPECT_EQ(json["run"]["mode"], "graph");
  ASSERT_EQ(json["records"].size(), 12u);
  EXPECT_EQ(json["records"][2]["tag"], "llama3-8b");
  EXPECT_EQ(json["records"][2]["layers"], 32);
  EXPECT_DOUBLE_EQ(json["records"][2]["us"].get<double>(), 3600.0);
  EXPECT_TRUE(json["records"][10]["us"].is_null());
}

// A --nrhs run of llama3-8b in bf16 at nrhs 1, 2 and 16: every row at nrhs 1, then the reads,
// xgemv-nrhs and GemmEx with the step's columns.
std::vector<Record> sweep_rows() {
  std::vector<Record> rows;
  auto add = [&](int64_t nrhs, const std::string& library, double ms) {
    const DecodeStep step = plan_decode_step(model("llama3-8b"), kDefaultBudget, nrhs);
    Record& row = rows.emplace_back(step_record(step, Dtype::bf16, library, library + "_function"));
    row.set_times({ms * 1e3});
    if (!row.is_bound()) row.add_check("L0.qkv", check(1e-4, 2e-3));
  };
  for (const auto& [library, ms] :
       std::vector<std::pair<std::string, double>>{{kOneRead, 3.2},
                                                   {kPerGemvReads, 3.4},
                                                   {"xgemv", 3.6},
                                                   {kXgemvEarlyStart, 3.5},
                                                   {kXgemvNrhs, 3.7},
                                                   {"cublas", 4.5},
                                                   {"cublas-gemmex", 4.0}})
    add(1, library, ms);
  for (const auto& [nrhs, xgemv, gemmex] :
       std::vector<std::tuple<int64_t, double, double>>{{2, 3.8, 7.0}, {16, 4.5, 8.0}}) {
    add(nrhs, kOneRead, 3.2);
    add(nrhs, kPerGemvReads, 3.4);
    add(nrhs, kXgemvNrhs, xgemv);
    add(nrhs, "cublas-gemmex", gemmex);
  }
  derive_metrics(rows);
  return rows;
}

TEST(DecodeNrhs, EachStepAtEveryNrhsBesideGemmExWithTheSameColumns) {
  const std::vector<Record> rows = sweep_rows();
  // Metrics are per step and nrhs: nrhs 16's xgemv-nrhs over its own GemmEx and one-read.
  EXPECT_DOUBLE_EQ(*rows.back().speedup, 1.0);  // GemmEx beside itself
  EXPECT_DOUBLE_EQ(*rows[rows.size() - 2].speedup, 8.0 / 4.5);
  EXPECT_DOUBLE_EQ(*rows[rows.size() - 2].pct_bound, 100.0 * 3.2 / 4.5);
  EXPECT_DOUBLE_EQ(*rows[rows.size() - 2].nrhs_ratio, 4.5 / 3.7);
  EXPECT_DOUBLE_EQ(*rows.back().nrhs_ratio, 2.0);
  EXPECT_DOUBLE_EQ(*rows[4].speedup, 4.0 / 3.7);  // nrhs 1: the faster of the two
  EXPECT_EQ(verdict_starting(rows, "nrhs verdict"),
            "nrhs verdict (xgemv, bf16/fp16 decode steps): time(nrhs)/time(1) <= 1.10x for nrhs "
            "2..8: yes (1/1, worst 1.03x: llama3-8b bf16 nrhs 2); <= 1.25x for nrhs 9..16: yes "
            "(1/1, worst 1.22x: llama3-8b bf16 nrhs 16); speed-up vs cuBLAS GemmEx over nrhs "
            "2..16: 1.81x geo-mean, worst 1.78x (llama3-8b bf16 nrhs 16); at >= 1.00x GemmEx "
            "for nrhs 2..16: yes (2/2, worst 1.78x: llama3-8b bf16 nrhs 16)");
  // Without an xgemv-nrhs record there is no nrhs verdict.
  EXPECT_EQ(verdict_starting(sample_rows(), "nrhs verdict"), "");
}

TEST(DecodeNrhs, TheStepTableStaysOfOneVectorAndTheSweepHasItsOwn) {
  std::ostringstream table;
  write_tables(table, sweep_rows(), false);
  const std::string text = table.str();
  EXPECT_EQ(text.find("llama3-8b bf16 nrhs 2 "), text.rfind("llama3-8b bf16 nrhs 2 ")) << text;
  EXPECT_TRUE(contains(text, "\nDecode steps on several vectors"));
  const size_t line = text.find("\nllama3-8b bf16 nrhs 16 ");
  ASSERT_NE(line, std::string::npos) << text;
  const std::string row = text.substr(line + 1, text.find('\n', line + 1) - line - 1);
  EXPECT_TRUE(contains(row, " 4.500 "));
  EXPECT_TRUE(contains(row, " 1.22x "));
}

TEST(DecodeProgress, LinesSayWhatWasChecked) {
  const std::vector<Record> rows = sample_rows();
  const std::string line = progress_line(rows[2]);
  EXPECT_EQ(progress_header().find("library"), line.find("xgemv"));
  EXPECT_TRUE(contains(line, "1.11x"));
  EXPECT_TRUE(contains(line, "ok (1 checked; worst L0.qkv err 0.0001 / tol 0.002) [129 kernels]"));
  EXPECT_EQ(describe_step(plan_decode_step(model("llama3-70b"), kDefaultBudget)),
            "llama3-70b: 13 of 80 layers + LM head, 53 GEMVs, 24.35 GB per step");
}

}  // namespace
}  // namespace xgemv::bench
