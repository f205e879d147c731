// The one record, its derived metrics, the verdicts of the shape suites and of several vectors,
// and the one writer (CSV, JSON, markdown, console).
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "lib/options.hpp"
#include "lib/report.hpp"
#include "samples.hpp"

namespace xgemv::bench {
namespace {

Case make_case(const std::string& suite, const std::string& tag, Dtype dtype, int64_t m,
               int64_t n) {
  return {suite, tag, dtype, 'T', m, n};
}

Record row(const Case& c, const std::string& library, double us,
           const std::string& mode = "stream") {
  Record r = case_record(c, library, library + "_function", mode);
  r.us = us;
  r.add_check("", check(1e-4, 2e-3));
  return r;
}

// Two fp16 cases: a 4096 x 4096 (32 MiB) and a 16384 x 16384 (512 MiB) matrix.
std::vector<Record> sample_rows() {
  const Case small = make_case("anchors", "sq4k", Dtype::fp16, 4096, 4096);
  const Case large = make_case("anchors", "sq16k", Dtype::fp16, 16384, 16384);
  std::vector<Record> rows = {row(small, kCeiling, 10.0),
                              row(small, "xgemv", 12.5),
                              row(small, "cublas", 20.0),
                              row(small, "cublas-gemmex", 16.0),
                              row(large, kCeiling, 120.0),
                              row(large, "xgemv", 160.0),
                              row(large, "cublas", 140.0),
                              row(large, "cublas-gemmex", 150.0),
                              row(large, "openblas", 14000.0, "host")};
  Record skipped = case_record(large, "cublas-gemmex", "cublas-gemmex_function", "stream");
  skipped.status = "skipped: reason";
  rows.push_back(skipped);
  derive_metrics(rows);
  return rows;
}

std::string shape_verdict(const std::vector<Record>& rows) {
  return verdict_starting(rows, "verdict: ");
}

TEST(DeriveMetrics, BandwidthCeilingShareAndSpeedupOverTheFastestCublas) {
  const std::vector<Record> rows = sample_rows();
  const double small_bytes = (4096.0 * 4096 + 2 * 4096) * 2;
  const Record& ceiling = rows[0];
  const Record& xgemv = rows[1];
  EXPECT_DOUBLE_EQ(*ceiling.gbps, small_bytes / 10.0 / 1e3);
  EXPECT_FALSE(ceiling.pct_bound);
  EXPECT_FALSE(ceiling.speedup);
  EXPECT_DOUBLE_EQ(*xgemv.gbps, small_bytes / 12.5 / 1e3);
  EXPECT_DOUBLE_EQ(*xgemv.bound_gbps, *ceiling.gbps);
  EXPECT_DOUBLE_EQ(*xgemv.pct_bound, 80.0);
  EXPECT_DOUBLE_EQ(*xgemv.speedup, 16.0 / 12.5);  // GemmEx was the faster cuBLAS
  EXPECT_DOUBLE_EQ(*rows[2].speedup, 16.0 / 20.0);
  EXPECT_DOUBLE_EQ(*rows[5].speedup, 140.0 / 160.0);
  EXPECT_FALSE(xgemv.nrhs_ratio);  // one vector only

  const Record& host = rows[8];
  EXPECT_TRUE(host.gbps);
  EXPECT_FALSE(host.pct_bound);  // the device's ceiling says nothing about host memory
  EXPECT_DOUBLE_EQ(*host.speedup, 140.0 / 14000.0);
  EXPECT_FALSE(rows[9].gbps);  // not timed
}

TEST(Record, LabelsNameTheCaseAndTimesHaveAMedianAndASpread) {
  Record r = sample_rows()[1];
  EXPECT_EQ(r.label(), "fp16 T 4096x4096 sq4k");
  r.nrhs = 4;
  r.gpus = 2;
  EXPECT_EQ(r.label(), "fp16 T 4096x4096 sq4k nrhs 4");
  EXPECT_EQ(r.name(), "fp16 T 4096x4096 sq4k nrhs 4 on 2 GPUs");
  EXPECT_EQ(r.weight_format(), "fp16");
  r.format = "int4-g128";
  EXPECT_EQ(r.label(), "fp16 int4-g128 T 4096x4096 sq4k nrhs 4");
  r.set_times({3.0, 1.0, 2.0, 2.0});
  EXPECT_EQ(r.batches, 4);
  EXPECT_DOUBLE_EQ(*r.us, 2.0);
  EXPECT_DOUBLE_EQ(*r.spread_pct, 100.0 * (3.0 - 2.0) / 2.0);
}

TEST(Record, ChecksFoldIntoTheRecord) {
  Record r;
  r.add_check("rank 0", check(1e-4, 1e-2));
  r.add_check("rank 1", check(5e-3, 1e-2));
  EXPECT_EQ(r.status, "ok");
  EXPECT_EQ(r.worst, "rank 1");
  r.add_check("rank 2 (graph)", check(INFINITY, 1e-2));
  EXPECT_EQ(r.status, "check failed");
  EXPECT_EQ(r.checked, 3);
  EXPECT_EQ(r.failed_checks, 1);
  EXPECT_EQ(r.worst, "rank 2 (graph)");
  EXPECT_TRUE(r.failed());
  EXPECT_TRUE(contains(progress_line(r),
                       "check failed (3 checked, 1 failed; worst rank 2 (graph) err "
                       "inf / tol 0.01)"));
}

TEST(Verdict, WorstSpeedupAndLargeMatricesOnTarget) {
  EXPECT_EQ(shape_verdict(sample_rows()),
            "verdict: worst speed-up vs cuBLAS 0.88x (fp16 T 16384x16384 sq16k); every case at "
            ">= 1.00x cuBLAS: NO (1/2) below: fp16 T 16384x16384 sq16k 0.88x; matrices >= 32 "
            "MiB at >= 93% of ceiling: NO (0/2, worst 75%: fp16 T 16384x16384 sq16k); matrices "
            ">= 256 MiB at >= 80% of ceiling: NO (0/1) below: fp16 T 16384x16384 sq16k 75%");
}

TEST(Verdict, SaysYesWhenEveryLargeMatrixReachesTheTarget) {
  std::vector<Record> rows = sample_rows();
  rows[5].us = 140.0;  // 120/140 = 85.7% of the ceiling
  derive_metrics(rows);
  const std::string line = shape_verdict(rows);
  EXPECT_TRUE(contains(line, "worst speed-up vs cuBLAS 1.00x"));
  EXPECT_TRUE(contains(line, ": yes (1/1)"));
}

TEST(Verdict, NamesTheCasesWhereXgemvFailedAndSaysWhatItCouldNotMeasure) {
  std::vector<Record> rows = sample_rows();
  rows[1].status = "check failed";
  rows[1].us.reset();
  rows[5].us.reset();
  derive_metrics(rows);
  const std::string line = shape_verdict(rows);
  EXPECT_TRUE(contains(line,
                       "NO (0/1) below: fp16 T 16384x16384 sq16k untimed; xgemv FAILED on 1 "
                       "case(s): fp16 T 4096x4096 sq4k (check failed)"));
  EXPECT_TRUE(contains(line, "worst speed-up vs cuBLAS n/a"));
  rows.erase(rows.begin() + 4, rows.end());  // no large matrix
  EXPECT_TRUE(contains(shape_verdict(rows), "80% of ceiling: none in this run"));
  // Without an xgemv record (OpenBLAS only) there is no verdict.
  EXPECT_TRUE(verdict_lines({sample_rows()[8]}).empty());
}

TEST(Summary, GeometricMeansPerSuiteDtypeLibraryAndNrhs) {
  const nlohmann::ordered_json summary = summary_json(sample_rows());
  ASSERT_EQ(summary.size(), 4u);  // xgemv, cublas, cublas-gemmex, openblas
  const nlohmann::ordered_json& xgemv = summary[0];
  EXPECT_EQ(xgemv["lib"], "xgemv");
  EXPECT_EQ(xgemv["cases"], 2);
  EXPECT_NEAR(xgemv["geomean_speedup"].get<double>(), std::sqrt(16.0 / 12.5 * 140.0 / 160.0),
              1e-12);
  EXPECT_DOUBLE_EQ(xgemv["worst_speedup"].get<double>(), 140.0 / 160.0);
  EXPECT_EQ(xgemv["worst_speedup_case"], "fp16 T 16384x16384 sq16k");
  EXPECT_NEAR(xgemv["geomean_pct_bound"].get<double>(), std::sqrt(80.0 * 75.0), 1e-9);
  EXPECT_DOUBLE_EQ(xgemv["worst_pct_bound"].get<double>(), 75.0);
  EXPECT_EQ(summary[3]["lib"], "openblas");
  EXPECT_TRUE(summary[3]["geomean_pct_bound"].is_null());
}

RunInfo sample_info() { return bench::sample_info("build/bench/xgemv-bench --suite anchors"); }

TEST(Csv, OneSupersetHeaderThenOneLinePerRecordWithMissingValuesEmpty) {
  std::ostringstream out;
  write_csv(out, sample_info(), sample_rows());
  std::istringstream lines(out.str());
  std::string header, line;
  std::getline(lines, header);
  EXPECT_EQ(header.rfind("suite,case,tag,dtype,format,op,m,n,nrhs,lda,incx,incy,alpha,beta,"
                         "layout,layers,model_layers,gemvs,P,matrix_bytes,bytes,exchange_bytes,"
                         "lib,function,mode,status,",
                         0),
            0u)
      << header;
  std::vector<std::string> body;
  while (std::getline(lines, line)) body.push_back(line);
  ASSERT_EQ(body.size(), 10u);
  EXPECT_EQ(body[1].rfind("anchors,fp16 T 4096x4096 sq4k,sq4k,fp16,fp16,T,4096,4096,1,4096,1,1,1,"
                          "0,,0,0,1,1,33554432,33570816,0,xgemv,xgemv_function,stream,ok,1,0,"
                          "0.0001,0.002,",
                          0),
            0u)
      << body[1];
  EXPECT_TRUE(contains(body[1], ",12.500,"));
  EXPECT_TRUE(
      contains(body[1], ",80.0,1.280,,,,,NVIDIA H200,1980,0,\"580.65, CUDA 13.0\",13.0,,abc123,"));
  EXPECT_TRUE(contains(body[9], ",skipped: reason,"));
}

TEST(Json, RunSummaryVerdictsTargetsAndRecords) {
  const nlohmann::ordered_json json = to_json(sample_info(), sample_rows());
  EXPECT_EQ(json["run"]["device"], "NVIDIA H200");
  EXPECT_EQ(json["run"]["commit"], "abc123");
  ASSERT_EQ(json["records"].size(), 10u);
  const nlohmann::ordered_json& xgemv = json["records"][1];
  EXPECT_EQ(xgemv["lib"], "xgemv");
  EXPECT_EQ(xgemv["case"], "fp16 T 4096x4096 sq4k");
  EXPECT_EQ(xgemv["m"], 4096);
  EXPECT_EQ(xgemv["nrhs"], 1);
  EXPECT_EQ(xgemv["format"], "fp16");
  EXPECT_DOUBLE_EQ(xgemv["us"].get<double>(), 12.5);
  EXPECT_DOUBLE_EQ(xgemv["pct_bound"].get<double>(), 80.0);
  EXPECT_TRUE(json["records"][9]["us"].is_null());
  EXPECT_TRUE(json["records"][0]["speedup"].is_null());
  EXPECT_EQ(json["summary"][0]["lib"], "xgemv");
  ASSERT_EQ(json["verdicts"].size(), 1u);
  EXPECT_EQ(json["verdicts"][0], shape_verdict(sample_rows()));
  EXPECT_EQ(json["targets"].size(), targets().size());
  EXPECT_EQ(json["targets"][1]["metric"], "speedup");
  EXPECT_DOUBLE_EQ(json["targets"][1]["threshold"].get<double>(), 1.0);
  EXPECT_EQ(json["targets"][2]["metric"], "pct_bound");
  EXPECT_DOUBLE_EQ(json["targets"][2]["threshold"].get<double>(), 93.0);
}

TEST(Markdown, RunTableSummaryTablesVerdictAndFailures) {
  std::vector<Record> rows = sample_rows();
  rows[2].status = "check failed";
  std::ostringstream out;
  write_markdown(out, sample_info(), rows);
  const std::string text = out.str();
  EXPECT_EQ(text.rfind("# xgemv-bench results\n", 0), 0u);
  EXPECT_TRUE(contains(text, "| device | NVIDIA H200 (SM clock max 1980 MHz"));
  EXPECT_TRUE(contains(text, "| commit | abc123 |"));
  EXPECT_TRUE(contains(text, "## Summary"));
  EXPECT_TRUE(contains(text,
                       "| anchors | fp16 | xgemv | 1 | 1 | 2 | 1.06x | 0.88x | 77.5 | 75.0 | - "
                       "| - |"));
  EXPECT_TRUE(contains(text, "## xgemv vs cuBLAS"));
  EXPECT_TRUE(contains(text,
                       "| fp16 T 4096x4096 sq4k | 12.50 | 2686 | 1679 | 2098 | 3357 | 80.0 | "
                       "1.28x | xgemv_function |"));
  EXPECT_TRUE(contains(text, "\nverdict: "));
  EXPECT_TRUE(contains(text, "## Failures"));
  EXPECT_TRUE(contains(text, "cublas: check failed"));
  EXPECT_EQ(text.find("skipped: reason"), std::string::npos);  // skips are not failures
}

TEST(ConsoleTables, OneLinePerCaseThenTheVerdictLast) {
  std::ostringstream out;
  write_tables(out, sample_rows(), false);
  std::istringstream lines(out.str());
  std::vector<std::string> text;
  for (std::string line; std::getline(lines, line);) text.push_back(line);
  ASSERT_EQ(text.size(), 7u);  // blank, title, header, two cases, blank, verdict
  EXPECT_TRUE(contains(text[2], "xgemv GB/s"));
  EXPECT_EQ(text[3].rfind("fp16 T 4096x4096 sq4k ", 0), 0u);
  EXPECT_TRUE(contains(text[3], "80.0"));
  EXPECT_TRUE(contains(text[3], "1.28x"));
  EXPECT_EQ(text[2].find("speed-up") + 8, text[3].find("1.28x") + 5);  // aligned
  EXPECT_EQ(text.back().rfind("verdict: ", 0), 0u);
}

TEST(Progress, LinesLineUpWithTheHeader) {
  const std::vector<Record> rows = sample_rows();
  const std::string header = progress_header();
  const std::string line = progress_line(rows[1], "[1/2] ");
  EXPECT_EQ(line.rfind("[1/2] fp16 T 4096x4096 sq4k", 0), 0u);
  EXPECT_TRUE(contains(line, "1.28x"));
  EXPECT_TRUE(contains(line, "ok (err 0.0001)"));
  EXPECT_EQ(header.find("library"), line.find("xgemv"));
  EXPECT_EQ(header.find(" check"), line.find(" ok"));
}

// An --nrhs run: llama3-8b.qkv and .lm_head in bf16 (llm: the targets count them) at nrhs 1, 2,
// 8 and 16, and an fp32 square at nrhs 1 and 4 (not counted). Times in µs.
struct SweepTimes {
  int64_t nrhs;
  double ceiling, xgemv_nrhs, gemm;
};

std::vector<Record> sweep_rows() {
  std::vector<Record> rows;
  auto add_family = [&](Case c, const std::vector<SweepTimes>& times) {
    for (const SweepTimes& t : times) {
      c.nrhs = t.nrhs;
      const bool sixteen_bit = c.dtype == Dtype::bf16;
      rows.push_back(row(c, kCeiling, t.ceiling));
      if (t.nrhs == 1) rows.push_back(row(c, "xgemv", t.xgemv_nrhs - 1));
      rows.push_back(row(c, kXgemvNrhs, t.xgemv_nrhs));
      if (t.nrhs == 1) rows.push_back(row(c, "cublas", t.gemm + 2));
      rows.push_back(row(c, sixteen_bit ? kCublasGemmEx : kCublasGemm, t.gemm));
    }
  };
  add_family(make_case("llm", "llama3-8b.qkv", Dtype::bf16, 4096, 6144), {{1, 16.0, 20.0, 25.0},
                                                                          {2, 16.1, 20.4, 40.0},
                                                                          {8, 16.3, 21.0, 42.0},
                                                                          {16, 16.6, 26.0, 52.0}});
  add_family(make_case("llm", "llama3-8b.lm_head", Dtype::bf16, 4096, 128256),
             {{1, 300.0, 320.0, 330.0},
              {2, 300.0, 330.0, 660.0},
              {8, 301.0, 360.0, 700.0},
              {16, 302.0, 380.0, 350.0}});
  add_family(make_case("square", "sq4k", Dtype::fp32, 4096, 4096),
             {{1, 40.0, 50.0, 60.0}, {4, 41.0, 100.0, 65.0}});
  derive_metrics(rows);
  return rows;
}

const Record& find(const std::vector<Record>& rows, const std::string& label,
                   const std::string& lib) {
  for (const Record& r : rows)
    if (r.label() == label && r.lib == lib) return r;
  throw std::out_of_range(label + " " + lib);
}

std::string nrhs_verdict(const std::vector<Record>& rows) {
  return verdict_starting(rows, "nrhs verdict");
}

TEST(Nrhs, EachLibrarysTimeOverItsOwnTimeAtOneVectorAndTheSpeedUpOverTheGemm) {
  const std::vector<Record> rows = sweep_rows();
  const std::string qkv = "bf16 T 4096x6144 llama3-8b.qkv";
  EXPECT_DOUBLE_EQ(*find(rows, qkv, kXgemvNrhs).nrhs_ratio, 1.0);
  EXPECT_DOUBLE_EQ(*find(rows, qkv + " nrhs 2", kXgemvNrhs).nrhs_ratio, 20.4 / 20.0);
  EXPECT_DOUBLE_EQ(*find(rows, qkv + " nrhs 2", kCublasGemmEx).nrhs_ratio, 40.0 / 25.0);
  EXPECT_DOUBLE_EQ(*find(rows, qkv + " nrhs 2", kXgemvNrhs).speedup, 40.0 / 20.4);
  EXPECT_DOUBLE_EQ(*find(rows, qkv, kXgemvNrhs).speedup, 25.0 / 20.0);  // GemmEx, one column
  // The share of the same run's ceiling, which reads A + X + Y.
  EXPECT_DOUBLE_EQ(*find(rows, qkv + " nrhs 8", kXgemvNrhs).pct_bound, 100.0 * 16.3 / 21.0);
  EXPECT_DOUBLE_EQ(*find(rows, "fp32 T 4096x4096 sq4k nrhs 4", kXgemvNrhs).nrhs_ratio, 2.0);
  EXPECT_DOUBLE_EQ(*find(rows, "fp32 T 4096x4096 sq4k nrhs 4", kCublasGemm).nrhs_ratio,
                   65.0 / 60.0);
  // The one-vector libraries have no ratio: they ran at nrhs 1 only.
  EXPECT_FALSE(find(rows, qkv, "xgemv").nrhs_ratio);
  EXPECT_FALSE(find(rows, qkv, "cublas").nrhs_ratio);
  // The one-vector verdict and summary stay of the one-vector cases.
  EXPECT_EQ(
      shape_verdict(rows).rfind(
          "verdict: worst speed-up vs cuBLAS 1.03x (bf16 T 4096x128256 llama3-8b.lm_head)", 0),
      0u)
      << shape_verdict(rows);
}

TEST(Nrhs, TheVerdictHoldsTheTargetedRatiosToTheirBoundsAndTheSpeedupsOverGemmEx) {
  // nrhs 2 and 8 of both bf16 families; lm_head at 8 is 360/320 = 1.125 > 1.10. nrhs 16: qkv
  // 26/20 = 1.30 > 1.25; lm_head 380/320 = 1.19. The fp32 square (2.00x at nrhs 4) is not
  // counted; its speed-ups are not either. qkv at nrhs 8 reads at 16.3/21 = 78% of the ceiling.
  EXPECT_EQ(nrhs_verdict(sweep_rows()),
            "nrhs verdict (xgemv, bf16/fp16 llm shapes): time(nrhs)/time(1) <= 1.10x for nrhs "
            "2..8: NO (3/4, worst 1.12x: llm bf16 T 4096x128256 llama3-8b.lm_head nrhs 8); <= "
            "1.25x for nrhs 9..16: NO (1/2, worst 1.30x: llm bf16 T 4096x6144 llama3-8b.qkv "
            "nrhs 16); speed-up vs cuBLAS GemmEx over nrhs 2..16: 1.74x geo-mean, worst 0.92x "
            "(llm bf16 T 4096x128256 llama3-8b.lm_head nrhs 16); at >= 1.00x GemmEx for nrhs "
            "2..16: NO (5/6, worst 0.92x: llm bf16 T 4096x128256 llama3-8b.lm_head nrhs 16); at "
            ">= 90% of ceiling for nrhs 2..8: NO (1/4, worst 78%: llm bf16 T 4096x6144 "
            "llama3-8b.qkv nrhs 8)");
}

TEST(Nrhs, Fp32AndFp64HaveTheirOwnLineOfSpeedUpsOverTheGemm) {
  std::vector<Record> rows = sweep_rows();
  EXPECT_EQ(verdict_starting(rows, "nrhs verdict (xgemv, fp32/fp64"), "");  // no llm fp32 rows
  for (const Dtype dtype : {Dtype::fp32, Dtype::fp64}) {
    Case c = make_case("llm", "llama3-8b.o", dtype, 4096, 4096);
    for (const auto &[nrhs, xgemv_us, gemm_us] :
         {std::tuple{int64_t{1}, 10.0, 10.0}, {2, 10.0, 15.0}, {8, 10.0, 12.0}, {16, 20.0, 16.0}}) {
      c.nrhs = nrhs;
      rows.push_back(row(c, kCeiling, 9.0));
      rows.push_back(row(c, kXgemvNrhs, xgemv_us));
      rows.push_back(row(c, kCublasGemm, gemm_us));
    }
  }
  derive_metrics(rows);
  // 2..8: 1.5x and 1.2x, geo-mean sqrt(1.8); 9..16: 0.8x. The bf16 line is unchanged.
  EXPECT_EQ(verdict_starting(rows, "nrhs verdict (xgemv, fp32/fp64"),
            "nrhs verdict (xgemv, fp32/fp64 llm shapes): speed-up vs cuBLAS GEMM over nrhs 2..8: "
            "fp32 1.34x geo-mean, worst 1.20x (fp32 T 4096x4096 llama3-8b.o nrhs 8), fp64 "
            "1.34x geo-mean, worst 1.20x (fp64 T 4096x4096 llama3-8b.o nrhs 8); over nrhs "
            "9..16: fp32 0.80x geo-mean, worst 0.80x (fp32 T 4096x4096 llama3-8b.o nrhs 16), "
            "fp64 0.80x geo-mean, worst 0.80x (fp64 T 4096x4096 llama3-8b.o nrhs 16); at >= "
            "1.00x the GEMM for nrhs 2..16: NO (4/6, worst 0.80x: fp32 T 4096x4096 llama3-8b.o "
            "nrhs 16)");
  EXPECT_EQ(nrhs_verdict(rows), nrhs_verdict(sweep_rows()));
}

TEST(Nrhs, TheVerdictSaysYesNoneAndNamesFailures) {
  std::vector<Record> rows = sweep_rows();
  for (Record& r : rows)
    if (r.lib == kXgemvNrhs && r.nrhs > 1) r.us = r.n == 6144 ? 20.5 : 330.0;
  derive_metrics(rows);
  std::string line = nrhs_verdict(rows);
  EXPECT_TRUE(contains(line, "<= 1.10x for nrhs 2..8: yes (4/4, worst 1.03x: "));
  EXPECT_TRUE(contains(line, "<= 1.25x for nrhs 9..16: yes (2/2, "));

  // An untimed point is checked and missed; a failure is named whether counted or not.
  for (Record& r : rows)
    if (r.lib == kXgemvNrhs && r.nrhs == 8 && r.n == 6144) {
      r.us.reset();
      r.status = "check failed";
    }
  derive_metrics(rows);
  line = nrhs_verdict(rows);
  EXPECT_TRUE(contains(line, "for nrhs 2..8: NO (3/4, "));
  EXPECT_TRUE(contains(line,
                       "; xgemv-nrhs FAILED on 1 case(s): llm bf16 T 4096x6144 llama3-8b.qkv "
                       "nrhs 8 (check failed)"));

  // Only untargeted families: nothing to count.
  std::vector<Record> square;
  for (const Record& r : sweep_rows())
    if (r.suite == "square") square.push_back(r);
  EXPECT_EQ(nrhs_verdict(square),
            "nrhs verdict (xgemv, bf16/fp16 llm shapes): time(nrhs)/time(1) <= 1.10x for nrhs "
            "2..8: none in this run; <= 1.25x for nrhs 9..16: none in this run; speed-up vs "
            "cuBLAS GemmEx over nrhs 2..16: n/a; at >= 1.00x GemmEx for nrhs 2..16: none in "
            "this run; at >= 90% of ceiling for nrhs 2..8: none in this run");
  // Without xgemv-nrhs records there is no nrhs verdict.
  EXPECT_EQ(nrhs_verdict(sample_rows()), "");
}

TEST(Nrhs, MarkdownCsvJsonAndConsoleCarryTheSweep) {
  const std::vector<Record> rows = sweep_rows();
  const std::string text = markdown_of(sample_info(), rows);
  EXPECT_TRUE(contains(text, "\n## Several vectors"));
  EXPECT_TRUE(contains(text, "| llm | bf16 | xgemv-nrhs | 2 | 1 | 2 | 1.98x | 1.96x | "));
  EXPECT_TRUE(contains(text,
                       "| bf16 T 4096x6144 llama3-8b.qkv nrhs 16 | 26.00 | 1.30x | 52.00 | 2.08x "
                       "| 2.00x | 63.8 |"));
  EXPECT_TRUE(contains(text, "\nnrhs verdict (xgemv, bf16/fp16 llm shapes): "));
  // The one-vector table holds the nrhs 1 cases only: nrhs 2 is in the several-vector table.
  EXPECT_TRUE(contains(text, "| bf16 T 4096x6144 llama3-8b.qkv nrhs 2 | 20.40 | 1.02x"));
  EXPECT_EQ(text.find("| bf16 T 4096x6144 llama3-8b.qkv nrhs 2 |"),
            text.rfind("| bf16 T 4096x6144 llama3-8b.qkv nrhs 2 |"));

  std::ostringstream csv;
  write_csv(csv, sample_info(), rows);
  EXPECT_TRUE(contains(csv.str(),
                       "\nllm,bf16 T 4096x6144 llama3-8b.qkv nrhs 16,llama3-8b.qkv,bf16,bf16,"
                       "T,4096,6144,16,4096,1,1,1,0,"));

  const nlohmann::ordered_json json = to_json(sample_info(), rows);
  ASSERT_EQ(json["verdicts"].size(), 2u);
  EXPECT_EQ(json["verdicts"][1], nrhs_verdict(rows));
  EXPECT_EQ(json["records"][2]["lib"], kXgemvNrhs);
  EXPECT_DOUBLE_EQ(json["records"][2]["t_over_t1"].get<double>(), 1.0);

  std::ostringstream console;
  write_tables(console, rows, false);
  EXPECT_TRUE(contains(console.str(), "\nbf16 T 4096x6144 llama3-8b.qkv nrhs 16 "));
  EXPECT_EQ(console.str().rfind("nrhs verdict (xgemv, bf16/fp16 llm shapes): "),
            console.str().size() - nrhs_verdict(rows).size() - 1);
}

TEST(NewSuites, AreDataTheWriterNeedsNoCodeFor) {
  // A quantized suite: bf16 activations, int4 weights in groups of 128.
  Case c = make_case("quant", "llama3-8b.qkv", Dtype::bf16, 4096, 6144);
  c.format = "int4-g128";
  std::vector<Record> rows = {row(c, kCeiling, 10.0), row(c, "xgemv", 12.0)};
  derive_metrics(rows);
  EXPECT_DOUBLE_EQ(*rows[1].pct_bound, 100.0 * 10.0 / 12.0);
  const nlohmann::ordered_json json = to_json(sample_info(), rows);
  EXPECT_EQ(json["records"][1]["format"], "int4-g128");
  EXPECT_EQ(json["records"][1]["case"], "bf16 int4-g128 T 4096x6144 llama3-8b.qkv");
  EXPECT_EQ(json["summary"][0]["format"], "int4-g128");
  std::ostringstream markdown;
  write_markdown(markdown, sample_info(), rows);
  EXPECT_TRUE(contains(markdown.str(), "| quant | bf16 int4-g128 | xgemv |"));
}

}  // namespace
}  // namespace xgemv::bench
