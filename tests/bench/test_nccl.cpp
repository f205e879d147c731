// xgemv-nccl-bench without a GPU: the GPU counts, the split layouts of xgemv_nccl.h (what each
// rank holds, what it ends with, the whole y from the ranks' partials), the buffer plan of a rank,
// the three parts' cases, the command line, and their records through the one writer: derived
// metrics, the verdict and the tables, from synthetic records.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "lib/nccl_plan.hpp"
#include "lib/options.hpp"
#include "lib/report.hpp"
#include "samples.hpp"

namespace xgemv::bench {
namespace {

constexpr int64_t kGib = int64_t{1} << 30;

TEST(NcclPlan, GpuCountsArePowersOfTwoThenTheCountItself) {
  EXPECT_EQ(gpu_counts(1), (std::vector<int>{1}));
  EXPECT_EQ(gpu_counts(2), (std::vector<int>{1, 2}));
  EXPECT_EQ(gpu_counts(3), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(gpu_counts(6), (std::vector<int>{1, 2, 4, 6}));
  EXPECT_EQ(gpu_counts(8), (std::vector<int>{1, 2, 4, 8}));
}

TEST(NcclPlan, EvenStartsCoverTheAxisWithBlocksWithinOneOfEachOther) {
  EXPECT_EQ(even_starts(10, 4), (std::vector<int64_t>{0, 2, 5, 7, 10}));
  EXPECT_EQ(even_starts(8192, 8).back(), 8192);
  EXPECT_EQ(even_starts(3, 4), (std::vector<int64_t>{0, 0, 1, 2, 3}));  // an empty block
  EXPECT_THROW(even_starts(8, 0), std::invalid_argument);
}

SplitGemv gemv_of(char op, int64_t m, int64_t n, Split split, Result result) {
  return {"", Dtype::fp32, op, m, n, split, result};
}

TEST(NcclPlan, RankBlocksFollowTheHeader) {
  const struct {
    SplitGemv gemv;
    int rank;
    std::vector<int64_t>
        expected;  // rows, columns, lda, x_length, partial_length, y_first, y_length
  } blocks[] = {
      // Outputs split, op N: rows of A, the whole x, its block of y.
      {gemv_of('N', 5, 7, Split::outputs, Result::own_block), 1, {3, 7, 3, 7, 3, 2, 3}},
      // Outputs split, op T: columns of A (m x n_r, lda m); with the whole result, all of y.
      {gemv_of('T', 7, 5, Split::outputs, Result::all), 1, {7, 3, 7, 7, 3, 0, 5}},
      // Reduction split, op N: columns of A, its block of x, every output partially.
      {gemv_of('N', 4, 5, Split::reduction, Result::all), 0, {4, 2, 4, 2, 4, 0, 4}},
      // Reduction split, op T: rows of A (m_r x n, lda m_r).
      {gemv_of('T', 5, 4, Split::reduction, Result::all), 1, {3, 4, 3, 3, 4, 0, 4}},
  };
  for (const auto& [gemv, rank, expected] : blocks) {
    const RankBlock b = rank_block(gemv, {0, 2, 5}, rank);
    EXPECT_EQ((std::vector<int64_t>{b.rows, b.columns, b.lda, b.x_length, b.partial_length,
                                    b.y_first, b.y_length}),
              expected)
        << gemv.label() << " rank " << rank;
  }
  // Reduction split, own block: outputs [r q, min((r + 1) q, outputs)), q = ceil(outputs / ranks).
  const SplitGemv own = gemv_of('T', 8, 10, Split::reduction, Result::own_block);
  const std::vector<int64_t> four = even_starts(8, 4);
  const int64_t expected[][2] = {{0, 3}, {3, 3}, {6, 3}, {9, 1}};
  for (int r = 0; r < 4; ++r) {
    const RankBlock b = rank_block(own, four, r);
    EXPECT_EQ(b.y_first, expected[r][0]) << r;
    EXPECT_EQ(b.y_length, expected[r][1]) << r;
  }
  EXPECT_THROW(rank_block(own, four, 4), std::invalid_argument);
}

// The whole problem in integers (exact in double), each rank's block cut from it as
// xgemv_nccl.h describes, the local products combined: the whole y again, for every layout, op
// and rank count, an empty block included.
TEST(NcclPlan, PartialsOfTheBlocksCombineToTheWholeProduct) {
  const int64_t m = 7, n = 5;
  std::vector<double> a(m * n), x_n(n), x_t(m);
  for (int64_t i = 0; i < m * n; ++i) a[i] = double((i * 37) % 11) - 5;
  for (int64_t k = 0; k < n; ++k) x_n[k] = double(k % 3) - 1 + 0.5 * k;
  for (int64_t k = 0; k < m; ++k) x_t[k] = double(k % 4) - 2;
  for (char op : {'N', 'T'})
    for (Split split : {Split::outputs, Split::reduction})
      for (Result result : {Result::own_block, Result::all})
        for (int ranks : {1, 2, 3, 8}) {
          const SplitGemv gemv = gemv_of(op, m, n, split, result);
          const std::vector<double>& x = op == 'N' ? x_n : x_t;
          std::vector<double> whole(gemv.outputs(), 0.0);
          for (int64_t i = 0; i < gemv.outputs(); ++i)
            for (int64_t k = 0; k < gemv.reduction(); ++k)
              whole[i] += (op == 'N' ? a[i + k * m] : a[k + i * m]) * x[k];
          const std::vector<int64_t> starts = even_starts(gemv.split_length(), ranks);
          std::vector<std::vector<double>> partials;
          for (int r = 0; r < ranks; ++r) {
            const RankBlock block = rank_block(gemv, starts, r);
            const int64_t first = starts[r];
            // Element (i, j) of the rank's A and its x, from the whole ones.
            auto local_a = [&](int64_t i, int64_t j) {
              const bool rows_cut = (split == Split::outputs) == (op == 'N');
              return rows_cut ? a[(first + i) + j * m] : a[i + (first + j) * m];
            };
            std::vector<double> local_x(block.x_length);
            for (int64_t k = 0; k < block.x_length; ++k)
              local_x[k] = x[split == Split::outputs ? k : first + k];
            std::vector<double>& partial = partials.emplace_back(block.partial_length, 0.0);
            for (int64_t i = 0; i < block.partial_length; ++i)
              for (int64_t k = 0; k < block.x_length; ++k)
                partial[i] += (op == 'N' ? local_a(i, k) : local_a(k, i)) * local_x[k];
          }
          const std::vector<double> combined = combine_partials(gemv, starts, partials);
          EXPECT_EQ(combined, whole) << gemv.label() << " ranks " << ranks;
          for (int r = 0; r < ranks; ++r) {
            const RankBlock block = rank_block(gemv, starts, r);
            const std::vector<double> mine = expected_output(gemv, starts, r, combined);
            ASSERT_EQ(static_cast<int64_t>(mine.size()), block.y_length);
            if (!mine.empty()) {
              EXPECT_EQ(mine.front(), whole[block.y_first]);
              EXPECT_EQ(mine.back(), whole[block.y_first + block.y_length - 1]);
            }
          }
        }
}

TEST(NcclPlan, ARankPlanSharesTheWholeXOfAWidthAndAlignsEveryOperand) {
  const DecodeModel& model = *find_decode_model("llama3-70b");
  const std::vector<SplitGemv> layer = tensor_parallel_layer(model, 0);
  const RankPlan plan = plan_rank(layer, 2, 1);
  ASSERT_EQ(plan.gemvs.size(), 4u);
  // qkv and gate_up read the whole hidden x; o reads its block of the attention output, down its
  // block of the intermediate.
  EXPECT_EQ(plan.gemvs[0].x_offset, plan.gemvs[2].x_offset);
  EXPECT_NE(plan.gemvs[1].x_offset, plan.gemvs[0].x_offset);
  EXPECT_NE(plan.gemvs[3].x_offset, plan.gemvs[1].x_offset);
  EXPECT_EQ(plan.gemvs[1].block.x_length, 4096);
  EXPECT_EQ(plan.gemvs[3].block.x_length, 14336);
  for (const RankGemv& gemv : plan.gemvs) {
    EXPECT_EQ(gemv.weight_offset % 256, 0);
    EXPECT_EQ(gemv.x_offset % 256, 0);
    EXPECT_EQ(gemv.y_offset % 256, 0);
  }
  EXPECT_EQ(plan.gemvs[0].block.y_length, 5120);  // half of q, k and v heads
  EXPECT_EQ(plan.gemvs[1].block.y_length, 8192);  // o: the whole hidden on every rank
  EXPECT_EQ(plan.largest_partial, 28672);         // gate_up: half of 2 x 28672
  EXPECT_EQ(plan.weight_buffer_bytes,
            (8192LL * 5120 + 4096LL * 8192 + 8192LL * 28672 + 14336LL * 8192) * 2);
}

TEST(NcclPlan, BandwidthCasesAreWholeGibMatricesOfEveryLayout) {
  const std::vector<SplitGemv> full = bandwidth_cases({Dtype::bf16, Dtype::fp32}, false);
  EXPECT_EQ(full.size(), 2u * 4u * 2u * 4u);
  for (const SplitGemv& gemv : full) {
    const int64_t bytes = gemv.whole_case().a_bytes();
    EXPECT_GE(bytes, kLargeSplitBytes) << gemv.label();
    EXPECT_EQ(bytes & (bytes - 1), 0) << gemv.label();  // 1, 2, 4 or 8 GiB
    EXPECT_LE(bytes, 8 * kGib) << gemv.label();
    EXPECT_GE(gemv.m, gemv.n) << gemv.label();
  }
  const std::vector<SplitGemv> quick = bandwidth_cases({Dtype::bf16}, true);
  ASSERT_EQ(quick.size(), 4u);
  EXPECT_EQ(quick[0].label(), "bf16 N 32768x16384 outputs/own-block");
  EXPECT_EQ(quick[1].label(), "bf16 N 32768x16384 reduction/all");
  EXPECT_EQ(quick[3].label(), "bf16 T 32768x16384 reduction/all");
}

TEST(NcclPlan, TensorParallelLayersSplitMegatronStyle) {
  const DecodeModel& model = *find_decode_model("llama3-70b");
  const std::vector<SplitGemv> layer = tensor_parallel_layer(model, 3);
  ASSERT_EQ(layer.size(), 4u);
  const struct {
    const char* tag;
    int64_t m, n;
    Split split;
    Result result;
  } expected[] = {
      {"L3.qkv", 8192, 10240, Split::outputs, Result::own_block},
      {"L3.o", 8192, 8192, Split::reduction, Result::all},
      {"L3.gate_up", 8192, 57344, Split::outputs, Result::own_block},
      {"L3.down", 28672, 8192, Split::reduction, Result::all},
  };
  for (size_t i = 0; i < layer.size(); ++i) {
    EXPECT_EQ(layer[i].tag, expected[i].tag);
    EXPECT_EQ(layer[i].op, 'T');
    EXPECT_EQ(layer[i].dtype, Dtype::bf16);
    EXPECT_EQ(layer[i].m, expected[i].m) << expected[i].tag;
    EXPECT_EQ(layer[i].n, expected[i].n) << expected[i].tag;
    EXPECT_EQ(layer[i].split, expected[i].split) << expected[i].tag;
    EXPECT_EQ(layer[i].result, expected[i].result) << expected[i].tag;
  }
  const TensorParallelStep step = plan_tensor_parallel_step(model, 100 * kGib);
  const int64_t layer_bytes =
      (8192LL * 10240 + 8192LL * 8192 + 8192LL * 57344 + 28672LL * 8192) * 2;
  EXPECT_EQ(step.layer_bytes, layer_bytes);
  EXPECT_EQ(step.layers, 100 * kGib / layer_bytes);
  EXPECT_EQ(step.gemvs.size(), static_cast<size_t>(4 * step.layers));
  EXPECT_EQ(step.weight_bytes(), step.layers * layer_bytes);
  EXPECT_EQ(plan_tensor_parallel_step(model, 1000 * kGib).layers, 80);  // no more than published
  const DecodeModel& big = *find_decode_model("llama3.1-405b");
  EXPECT_EQ(plan_tensor_parallel_step(big, 5 * kGib).layers, 0);  // one layer is 5.9 GiB
  EXPECT_EQ(plan_tensor_parallel_step(big, 8 * kGib).layers, 1);
}

TEST(NcclPlan, ExchangesAndTheDecodeSizeGemvOfTheirSize) {
  const std::vector<ExchangeCase> cases = exchange_cases();
  EXPECT_EQ(cases.size(), 12u);
  EXPECT_EQ(cases.front().label(), "ncclAllReduce 16 KB fp32");
  EXPECT_EQ(cases.back().label(), "ncclAllGather 64 KB bf16");
  EXPECT_EQ(cases.back().count(), 32768);
  const struct {
    int64_t bytes;
    const char* tag;
    int64_t m, n;
  } expected[] = {{16 << 10, "llama3-8b.down", 14336, 4096},
                  {32 << 10, "llama3-70b.down", 28672, 8192},
                  {64 << 10, "llama3.1-405b.down", 53248, 16384}};
  for (const auto& e : expected) {
    const SplitGemv gemv = exchange_share_gemv(e.bytes);
    EXPECT_EQ(gemv.tag, e.tag);
    EXPECT_EQ(gemv.m, e.m);
    EXPECT_EQ(gemv.n, e.n);
    EXPECT_EQ(gemv.outputs() * 4, e.bytes);  // its fp32 partial sums
    EXPECT_EQ(gemv.split, Split::reduction);
    EXPECT_EQ(gemv.result, Result::all);
  }
  EXPECT_THROW(exchange_share_gemv(12 << 10), std::invalid_argument);  // no 3072 hidden
}

// --- the command line ----------------------------------------------------------------------

NcclOptions parse(std::vector<const char*> arguments) {
  CommandLine<NcclOptions> command_line([] { return std::string("xgemv-nccl-bench 1.2.3"); },
                                        "/out");
  arguments.insert(arguments.begin(), "xgemv-nccl-bench");
  return command_line.parse(static_cast<int>(arguments.size()), arguments.data());
}

TEST(NcclCommandLine, DefaultsAndTheDecodeBudget) {
  const NcclOptions options = parse({});
  EXPECT_EQ(options.gpus, 0);
  EXPECT_FALSE(options.quick);
  EXPECT_EQ(options.out_dir, "/out");
  EXPECT_EQ(options.skip_exit_code, 2);
  EXPECT_EQ(options.bandwidth_dtypes(), (std::vector<Dtype>{Dtype::bf16, Dtype::fp32}));
  for (const std::string& part : kNcclParts) EXPECT_TRUE(options.wants_part(part));
  EXPECT_EQ(options.decode_budget(100 * kGib), 96 * kGib);
  EXPECT_EQ(options.decode_budget(kGib), 0);

  const NcclOptions quick = parse({"--quick", "--gpus", "2", "--dtype", "fp16,fp16,fp64", "--part",
                                   "decode", "--skip-exit-code", "77"});
  EXPECT_EQ(quick.gpus, 2);
  EXPECT_EQ(quick.skip_exit_code, 77);
  EXPECT_EQ(quick.bandwidth_dtypes(), (std::vector<Dtype>{Dtype::fp16, Dtype::fp64}));
  EXPECT_TRUE(quick.wants_part(kPartDecode));
  EXPECT_FALSE(quick.wants_part(kPartBandwidth));
  EXPECT_EQ(quick.decode_budget(100 * kGib), kQuickDecodeBudget);
  EXPECT_EQ(parse({"--quick", "--decode-gib", "20"}).decode_budget(100 * kGib), 20 * kGib);
}

TEST(NcclCommandLine, RefusesBadValues) {
  for (const auto& [option, value] :
       std::vector<std::pair<const char*, const char*>>{{"--gpus", "0"},
                                                        {"--part", "decode,lmhead"},
                                                        {"--dtype", "int8"},
                                                        {"--decode-gib", "0"},
                                                        {"--suite", "llm"}})
    EXPECT_THROW(parse({option, value}), CLI::ParseError) << option << ' ' << value;
}

// --- records, metrics, verdict, tables ------------------------------------------------------

Record timed(Record row, int gpus, double us) {
  row.gpus = gpus;
  row.set_times(std::vector<double>(31, us));
  return row;
}

const SplitGemv& large_case() {
  static const SplitGemv gemv = bandwidth_cases({Dtype::bf16}, true)[0];  // 1 GiB
  return gemv;
}

Record share_record(int64_t bytes) {
  Record r = split_record(kPartExchange, exchange_share_gemv(bytes));
  r.exchange_bytes = bytes;
  return r;
}

// A 1 GiB case on 1, 2 and 4 GPUs, its one-GPU read, a decode step of llama3-70b on 1 and 2, and
// an all-gather beside its split GEMV on 1 and 2.
std::vector<Record> sample_rows(double two_gpu_us, double four_gpu_us, double decode_two_ms) {
  const Record bandwidth = split_record(kPartBandwidth, large_case());
  const TensorParallelStep step =
      plan_tensor_parallel_step(*find_decode_model("llama3-70b"), 16 * kGib);
  const Record decode = tensor_parallel_record(step);
  const Record gather = exchange_record({kAllGather, Dtype::fp32, 32 << 10});
  std::vector<Record> rows = {
      timed(ceiling_record(bandwidth, large_case().whole_case().a_bytes()), 1, 250.0),
      timed(bandwidth, 1, 280.0),
      timed(bandwidth, 2, two_gpu_us),
      timed(bandwidth, 4, four_gpu_us),
      timed(ceiling_record(decode, step.weight_bytes()), 1, 3000.0),
      timed(decode, 1, 3500.0),
      timed(decode, 2, decode_two_ms * 1e3),
      timed(gather, 1, 5.0),
      timed(gather, 2, 20.0),
      timed(share_record(32 << 10), 1, 110.0),
      timed(share_record(32 << 10), 2, 60.0),
  };
  derive_metrics(rows);
  return rows;
}

std::vector<Record> one_gpu(std::vector<Record> rows) {
  rows.erase(std::remove_if(rows.begin(), rows.end(), [](const Record& r) { return r.gpus > 1; }),
             rows.end());
  derive_metrics(rows);
  return rows;
}

TEST(NcclReport, CeilingOfPGpusSpeedUpOverOneAndShareOfTheSplitGemv) {
  const std::vector<Record> rows = sample_rows(150.0, 80.0, 2.0);
  const Record& ceiling = rows[0];
  EXPECT_EQ(ceiling.suite, "nccl-bandwidth");
  EXPECT_EQ(rows[2].name(), "bf16 N 32768x16384 outputs/own-block on 2 GPUs");
  const double read_gbps = double(large_case().whole_case().a_bytes()) / 250.0 / 1e3;
  EXPECT_DOUBLE_EQ(*ceiling.gbps, read_gbps);
  EXPECT_FALSE(ceiling.speedup);
  EXPECT_FALSE(ceiling.bound_gbps);
  const Record& two = rows[2];
  EXPECT_DOUBLE_EQ(*two.gbps, double(large_case().whole_case().bytes()) / 150.0 / 1e3);
  EXPECT_DOUBLE_EQ(*two.bound_gbps, 2 * read_gbps);
  EXPECT_DOUBLE_EQ(*two.pct_bound, 100.0 * *two.gbps / (2 * read_gbps));
  EXPECT_DOUBLE_EQ(*two.speedup, 280.0 / 150.0);
  EXPECT_DOUBLE_EQ(*rows[1].speedup, 1.0);
  EXPECT_DOUBLE_EQ(*rows[3].bound_gbps, 4 * read_gbps);
  EXPECT_DOUBLE_EQ(*rows[6].speedup, 3.5 / 2.0);
  EXPECT_TRUE(rows[6].pct_bound);
  // The all-gather on 2 GPUs: 20 us of the split GEMV's 60.
  EXPECT_DOUBLE_EQ(*rows[8].share_pct, 100.0 * 20.0 / 60.0);
  EXPECT_EQ(rows[8].share_of, exchange_share_gemv(32 << 10).label());
  EXPECT_DOUBLE_EQ(*rows[7].share_pct, 100.0 * 5.0 / 110.0);
  EXPECT_FALSE(rows[10].share_pct);  // the GEMV itself
  EXPECT_FALSE(rows[10].pct_bound);
  // One GPU only: no speed-up over one GPU to give.
  EXPECT_FALSE(one_gpu(rows)[1].speedup);
}

TEST(NcclReport, VerdictOnFourGpus) {
  // 280 / 150 = 1.87x on 2 (met), 280 / 90 = 3.11x on 4 (missed); decode 3.5 / 2.0 = 1.75x.
  const std::vector<std::string> lines = verdict_lines(sample_rows(150.0, 90.0, 2.0));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0],
            "verdict: matrices >= 1 GiB, 2 GPUs >= 1.80x over one GPU: yes (1/1, worst 1.87x: "
            "bf16 N 32768x16384 outputs/own-block on 2 GPUs); matrices >= 1 GiB, 4 GPUs >= 3.40x "
            "over one GPU: NO (0/1, worst 3.11x: bf16 N 32768x16384 outputs/own-block on 4 GPUs) "
            "below: bf16 N 32768x16384 outputs/own-block on 4 GPUs 3.11x; llama3-70b "
            "tensor-parallel layers, 2 GPUs >= 1.60x over one GPU: yes (1/1, worst 1.75x: "
            "llama3-70b tensor-parallel bf16 on 2 GPUs)");
  EXPECT_EQ(lines[1],
            "exchanges: a collective at most 50% of the decode-size split GEMV of its size: yes "
            "(1/1, worst 33.3%: ncclAllGather 32 KB fp32 on 2 GPUs)");
}

TEST(NcclReport, VerdictSaysWhatTooFewGpusCannotMeasure) {
  const std::vector<std::string> one = verdict_lines(one_gpu(sample_rows(150.0, 80.0, 2.0)));
  ASSERT_EQ(one.size(), 2u);
  EXPECT_EQ(one[0],
            "verdict: matrices >= 1 GiB, 2 GPUs >= 1.80x over one GPU: not measured (only 1 "
            "GPU(s)); matrices >= 1 GiB, 4 GPUs >= 3.40x over one GPU: not measured (only 1 "
            "GPU(s)); llama3-70b tensor-parallel layers, 2 GPUs >= 1.60x over one GPU: not "
            "measured (only 1 GPU(s))");
  EXPECT_EQ(one[1],
            "exchanges: a collective at most 50% of the decode-size split GEMV of its size: not "
            "measured (only 1 GPU(s))");
  std::vector<Record> two = sample_rows(150.0, 80.0, 2.0);
  two.erase(two.begin() + 3);  // the 4-GPU row
  derive_metrics(two);
  EXPECT_NE(
      verdict_lines(two)[0].find("4 GPUs >= 3.40x over one GPU: not measured (only 2 GPU(s))"),
      std::string::npos);
}

TEST(NcclReport, FailedAndSlowCasesMissTheTargetByName) {
  std::vector<Record> rows = sample_rows(150.0, 80.0, 2.5);  // decode 3.5 / 2.5 = 1.40x
  Record failed = split_record(kPartBandwidth, bandwidth_cases({Dtype::fp32}, true)[0]);
  failed.gpus = 2;
  failed.status = "check failed";
  rows.push_back(failed);
  derive_metrics(rows);
  const std::string text = verdict_lines(rows)[0];
  EXPECT_TRUE(contains(text,
                       "2 GPUs >= 1.80x over one GPU: NO (1/2, worst 1.87x: bf16 N 32768x16384 "
                       "outputs/own-block on 2 GPUs) below: fp32 N 16384x16384 outputs/own-block "
                       "on 2 GPUs untimed"));
  EXPECT_TRUE(contains(text,
                       "llama3-70b tensor-parallel layers, 2 GPUs >= 1.60x over one GPU: NO (0/1, "
                       "worst 1.40x: llama3-70b tensor-parallel bf16 on 2 GPUs) below: llama3-70b "
                       "tensor-parallel bf16 on 2 GPUs 1.40x"));
  EXPECT_TRUE(contains(text,
                       "; FAILED 1 row(s): fp32 N 16384x16384 outputs/own-block on 2 GPUs "
                       "xgemv-nccl (check failed)"));
}

TEST(NcclReport, ExchangesDominateFromHalfTheGemvsTime) {
  std::vector<Record> rows = sample_rows(150.0, 80.0, 2.0);
  rows[8].us = 45.0;  // 75% of the split GEMV's 60 us
  derive_metrics(rows);
  EXPECT_NE(verdict_lines(rows)[1].find(": NO (0/1, worst 75.0%: "), std::string::npos);
}

RunInfo sample_info() {
  RunInfo info = bench::sample_info("build/bench/xgemv-nccl-bench --quick");
  info.nccl = "2.28.9";
  info.facts = {{"GPUs visible", 4}, {"P", {1, 2, 4}}};
  return info;
}

TEST(NcclReport, CsvJsonMarkdownAndTheTables) {
  const std::vector<Record> rows = sample_rows(150.0, 80.0, 2.0);
  std::ostringstream csv;
  write_csv(csv, sample_info(), rows);
  std::istringstream lines(csv.str());
  std::string header;
  std::getline(lines, header);
  int records = 0;
  for (std::string line; std::getline(lines, line);) {
    ++records;
    EXPECT_TRUE(contains(line, ",NVIDIA H200,"));
    EXPECT_TRUE(contains(line, ",2.28.9,abc123,"));
  }
  EXPECT_EQ(records, static_cast<int>(rows.size()));

  const nlohmann::ordered_json json = to_json(sample_info(), rows);
  EXPECT_EQ(json["run"]["P"].get<std::vector<int>>(), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(json["run"]["nccl"], "2.28.9");
  ASSERT_EQ(json["records"].size(), rows.size());
  const auto& two = json["records"][2];
  EXPECT_EQ(two["P"], 2);
  EXPECT_EQ(two["case"], "bf16 N 32768x16384 outputs/own-block");
  EXPECT_EQ(two["lib"], kXgemvNccl);
  EXPECT_DOUBLE_EQ(two["us"].get<double>(), 150.0);
  EXPECT_TRUE(two["bound_GBps"].is_number());
  EXPECT_EQ(json["verdicts"][0].get<std::string>().rfind("verdict: matrices >= 1 GiB", 0), 0u);

  const std::string text = markdown_of(sample_info(), rows);
  EXPECT_EQ(text.rfind("# xgemv-nccl-bench results\n", 0), 0u);
  for (const char* heading :
       {"## Bandwidth over P GPUs", "## Tensor-parallel decode steps", "## Small exchanges",
        "\nverdict: ", "\nexchanges: ", "| NCCL | 2.28.9 |", "| P | [1,2,4] |"})
    EXPECT_TRUE(contains(text, heading));
  // The rows of a case at every P, one after the other.
  const size_t one = text.find("| bf16 N 32768x16384 outputs/own-block | 1 | ");
  const size_t two_gpus = text.find("| bf16 N 32768x16384 outputs/own-block | 2 | ");
  const size_t four = text.find("| bf16 N 32768x16384 outputs/own-block | 4 | ");
  ASSERT_NE(one, std::string::npos) << text;
  EXPECT_LT(one, two_gpus);
  EXPECT_LT(two_gpus, four);
  EXPECT_TRUE(contains(text, "| llama3-70b tensor-parallel bf16 | 10/80 | "));
  EXPECT_TRUE(contains(text, "| ncclAllGather 32 KB fp32 | 2 | 20.00 | graph | 33.3 | 0.25x |"));
  EXPECT_EQ(text.find("## Failures"), std::string::npos);
}

TEST(NcclReport, FailedRowsShowInTheTablesAndAreListed) {
  std::vector<Record> rows = one_gpu(sample_rows(150.0, 80.0, 2.0));
  rows[1].status = "error: rank 0: xgemv_nccl_bf16gemv: XGEMV_STATUS_INVALID_SPLIT";
  rows[1].us.reset();
  derive_metrics(rows);
  const std::string text = markdown_of(sample_info(), rows);
  EXPECT_TRUE(contains(text, "| bf16 N 32768x16384 outputs/own-block | 1 | FAILED | "));
  EXPECT_TRUE(contains(text,
                       "## Failures\n\n- nccl-bandwidth bf16 N 32768x16384 outputs/own-block "
                       "xgemv-nccl: error: rank 0"));
  EXPECT_TRUE(contains(text, "not measured (only 1 GPU(s))"));
}

}  // namespace
}  // namespace xgemv::bench
