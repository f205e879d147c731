// Derived metrics, summaries and the writers.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <sstream>

#include "lib/report.hpp"

namespace xgemv::bench {
namespace {

Case make_case(const std::string& suite, const std::string& tag, Dtype dtype, int64_t m,
               int64_t n) {
  Case c;
  c.suite = suite;
  c.tag = tag;
  c.dtype = dtype;
  c.op = 'T';
  c.m = m;
  c.n = n;
  return c;
}

Measurement row(int case_index, const Case& c, const std::string& library, double us,
                const std::string& mode = "stream") {
  Measurement measurement;
  measurement.case_index = case_index;
  measurement.c = c;
  measurement.library = library;
  measurement.function = library + "_function";
  measurement.mode = mode;
  measurement.us = us;
  measurement.max_error = 1e-4;
  measurement.tolerance = 2e-3;
  return measurement;
}

// Two fp16 cases: a 4096 x 4096 (32 MiB) and a 16384 x 16384 (512 MiB) matrix.
std::vector<Measurement> sample_rows() {
  const Case small = make_case("anchors", "sq4k", Dtype::fp16, 4096, 4096);
  const Case large = make_case("anchors", "sq16k", Dtype::fp16, 16384, 16384);
  std::vector<Measurement> rows = {
      row(0, small, kCeiling, 10.0),      row(0, small, "xgemv", 12.5),
      row(0, small, "cublas", 20.0),      row(0, small, "cublas-gemmex", 16.0),
      row(1, large, kCeiling, 120.0),     row(1, large, "xgemv", 160.0),
      row(1, large, "cublas", 140.0),     row(1, large, "cublas-gemmex", 150.0),
  };
  Measurement host = row(1, large, "openblas", 14000.0, "host");
  rows.push_back(host);
  Measurement skipped = row(1, large, "cublas-gemmex", 0, "stream");
  skipped.us.reset();
  skipped.status = "skipped: reason";
  rows.push_back(skipped);
  derive_metrics(rows);
  return rows;
}

TEST(DeriveMetrics, BandwidthCeilingShareAndSpeedupOverTheFastestCublas) {
  const std::vector<Measurement> rows = sample_rows();
  const double small_bytes = (4096.0 * 4096 + 2 * 4096) * 2;
  const Measurement& ceiling = rows[0];
  const Measurement& xgemv = rows[1];
  EXPECT_DOUBLE_EQ(*ceiling.gbps, small_bytes / 10.0 / 1e3);
  EXPECT_FALSE(ceiling.pct_ceiling);
  EXPECT_FALSE(ceiling.speedup_vs_cublas);
  EXPECT_DOUBLE_EQ(*xgemv.gbps, small_bytes / 12.5 / 1e3);
  EXPECT_DOUBLE_EQ(*xgemv.ceiling_gbps, *ceiling.gbps);
  EXPECT_DOUBLE_EQ(*xgemv.pct_ceiling, 80.0);
  EXPECT_DOUBLE_EQ(*xgemv.speedup_vs_cublas, 16.0 / 12.5);  // GemmEx was the faster cuBLAS
  EXPECT_DOUBLE_EQ(*rows[2].speedup_vs_cublas, 16.0 / 20.0);
  EXPECT_DOUBLE_EQ(*rows[5].speedup_vs_cublas, 140.0 / 160.0);

  const Measurement& host = rows[8];
  EXPECT_TRUE(host.gbps);
  EXPECT_FALSE(host.pct_ceiling);  // the device's ceiling says nothing about host memory
  EXPECT_DOUBLE_EQ(*host.speedup_vs_cublas, 140.0 / 14000.0);
  EXPECT_FALSE(rows[9].gbps);  // not timed
}

TEST(Comparisons, XgemvBesideTheFastestCublasFunction) {
  const std::vector<Comparison> comparisons = compare_xgemv_to_cublas(sample_rows());
  ASSERT_EQ(comparisons.size(), 2u);
  EXPECT_EQ(comparisons[0].c.tag, "sq4k");
  EXPECT_EQ(comparisons[0].cublas_function, "cublas-gemmex_function");
  EXPECT_DOUBLE_EQ(*comparisons[0].pct_ceiling, 80.0);
  EXPECT_EQ(comparisons[1].cublas_function, "cublas_function");
  EXPECT_DOUBLE_EQ(*comparisons[1].speedup, 140.0 / 160.0);
  EXPECT_DOUBLE_EQ(*comparisons[1].pct_ceiling, 75.0);
}

TEST(Verdict, WorstSpeedupAndLargeMatricesOnTarget) {
  const Verdict verdict = make_verdict(compare_xgemv_to_cublas(sample_rows()));
  EXPECT_DOUBLE_EQ(*verdict.worst_speedup, 140.0 / 160.0);
  EXPECT_EQ(verdict.worst_case, "fp16 T 16384x16384 sq16k");
  EXPECT_EQ(verdict.large_matrices, 1);  // 512 MiB; 32 MiB is not large
  EXPECT_EQ(verdict.large_on_target, 0);
  const std::string line = format_verdict(verdict);
  EXPECT_EQ(line,
            "verdict: worst speed-up vs cuBLAS 0.88x (fp16 T 16384x16384 sq16k); matrices >= "
            "256 MiB at >= 80% of ceiling: NO (0/1) below: fp16 T 16384x16384 sq16k 75%");
}

TEST(Verdict, SaysYesWhenEveryLargeMatrixReachesTheTarget) {
  std::vector<Measurement> rows = sample_rows();
  rows[5].us = 140.0;  // 120/140 = 85.7% of the ceiling
  derive_metrics(rows);
  const std::string line = format_verdict(make_verdict(compare_xgemv_to_cublas(rows)));
  EXPECT_NE(line.find("worst speed-up vs cuBLAS 1.00x"), std::string::npos) << line;
  EXPECT_NE(line.find(": yes (1/1)"), std::string::npos) << line;
}

TEST(Verdict, NamesTheCasesWhereXgemvFailed) {
  std::vector<Measurement> rows = sample_rows();
  rows[1].status = "check failed";
  rows[1].us.reset();
  derive_metrics(rows);
  const std::vector<Comparison> comparisons = compare_xgemv_to_cublas(rows);
  ASSERT_EQ(comparisons.size(), 2u);
  EXPECT_FALSE(comparisons[0].xgemv_gbps);
  const std::string line = format_verdict(make_verdict(comparisons));
  EXPECT_NE(line.find("; xgemv FAILED on 1 case(s): fp16 T 4096x4096 sq4k (check failed)"),
            std::string::npos)
      << line;
}

TEST(Summary, GeometricMeansPerSuiteDtypeAndLibrary) {
  const std::vector<SummaryRow> summary = summarize(sample_rows());
  ASSERT_EQ(summary.size(), 4u);  // xgemv, cublas, cublas-gemmex, openblas
  const SummaryRow& xgemv = summary[0];
  EXPECT_EQ(xgemv.library, "xgemv");
  EXPECT_EQ(xgemv.cases, 2);
  EXPECT_NEAR(*xgemv.geomean_speedup, std::sqrt(16.0 / 12.5 * 140.0 / 160.0), 1e-12);
  EXPECT_DOUBLE_EQ(*xgemv.worst_speedup, 140.0 / 160.0);
  EXPECT_NEAR(*xgemv.geomean_pct_ceiling, std::sqrt(80.0 * 75.0), 1e-9);
  EXPECT_DOUBLE_EQ(*xgemv.lowest_pct_ceiling, 75.0);
  EXPECT_EQ(summary[3].library, "openblas");
  EXPECT_FALSE(summary[3].geomean_pct_ceiling);
}

RunInfo sample_info() {
  RunInfo info;
  info.device = "NVIDIA H200";
  info.sm_clock_max_mhz = 1980;
  info.driver = "580.65, CUDA 13.0";  // a comma: the CSV must quote it
  info.cuda = "13.0";
  info.commit = "abc123";
  info.date = "2026-11-29T12:00:00Z";
  info.command = "xgemv-bench --suite anchors --quick";
  return info;
}

TEST(Csv, HeaderThenOneLinePerRowWithMissingValuesEmpty) {
  std::ostringstream out;
  write_csv(out, sample_info(), sample_rows());
  std::istringstream lines(out.str());
  std::string header, line;
  std::getline(lines, header);
  EXPECT_EQ(header.rfind("suite,tag,dtype,op,m,n,lda,incx,incy,alpha,beta,bytes,lib,", 0), 0u);
  std::vector<std::string> body;
  while (std::getline(lines, line)) body.push_back(line);
  ASSERT_EQ(body.size(), 10u);
  EXPECT_EQ(body[1].rfind("anchors,sq4k,fp16,T,4096,4096,4096,1,1,1,0,33570816,xgemv,"
                          "xgemv_function,stream,ok,",
                          0),
            0u)
      << body[1];
  EXPECT_NE(body[1].find(",12.500,"), std::string::npos);
  EXPECT_NE(body[1].find(",80.0,1.280,NVIDIA H200,0,1980,0,\"580.65, CUDA 13.0\",13.0,abc123,"),
            std::string::npos)
      << body[1];
  EXPECT_NE(body[9].find(",skipped: reason,"), std::string::npos);
  EXPECT_NE(body[9].find(",,,,,,NVIDIA H200"), std::string::npos) << body[9];
}

TEST(Csv, TheTritonScriptWritesTheSameColumns) {
  std::string joined;
  for (const std::string& column : csv_columns()) joined += (joined.empty() ? "" : ",") + column;
  std::ifstream script(XGEMV_BENCH_DIR "/triton/seed_gemv.py");
  ASSERT_TRUE(script);
  const std::string text((std::istreambuf_iterator<char>(script)),
                         std::istreambuf_iterator<char>());
  EXPECT_NE(text.find('"' + joined + '"'), std::string::npos)
      << "seed_gemv.py must declare COLUMNS = \"" << joined << "\".split(\",\")";
}

TEST(Json, RunSummaryAndRecords) {
  const nlohmann::ordered_json json = to_json(sample_info(), sample_rows());
  EXPECT_EQ(json["run"]["device"], "NVIDIA H200");
  EXPECT_EQ(json["run"]["commit"], "abc123");
  ASSERT_EQ(json["records"].size(), 10u);
  const nlohmann::ordered_json& xgemv = json["records"][1];
  EXPECT_EQ(xgemv["lib"], "xgemv");
  EXPECT_EQ(xgemv["m"], 4096);
  EXPECT_DOUBLE_EQ(xgemv["us"].get<double>(), 12.5);
  EXPECT_DOUBLE_EQ(xgemv["pct_ceiling"].get<double>(), 80.0);
  EXPECT_EQ(xgemv["driver"], "580.65, CUDA 13.0");
  EXPECT_TRUE(json["records"][9]["us"].is_null());
  EXPECT_TRUE(json["records"][0]["speedup_vs_cublas"].is_null());
  EXPECT_EQ(json["summary"][0]["lib"], "xgemv");
  EXPECT_EQ(json["summary"][0]["cases"], 2);
}

TEST(Markdown, RunTableSummaryPerSuiteTablesAndVerdict) {
  std::vector<Measurement> rows = sample_rows();
  rows[2].status = "check failed";
  std::ostringstream out;
  write_markdown(out, sample_info(), rows);
  const std::string text = out.str();
  EXPECT_NE(text.find("| device | NVIDIA H200 (SM clock max 1980 MHz"), std::string::npos);
  EXPECT_NE(text.find("| commit | abc123 |"), std::string::npos);
  EXPECT_NE(text.find("## Summary"), std::string::npos);
  EXPECT_NE(text.find("| anchors | fp16 | xgemv | 2 | 1.06x | 0.88x | 77.5 | 75.0 |"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("## anchors"), std::string::npos);
  EXPECT_NE(text.find("| fp16 | T | 4096x4096 | sq4k | 12.50 | 2686 | xgemv_function | 2098 | "
                      "cublas-gemmex_function | 3357 | 80.0 | 1.28x |"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("verdict: "), std::string::npos);
  EXPECT_NE(text.find("## Failures"), std::string::npos);
  EXPECT_NE(text.find("cublas: check failed"), std::string::npos);
  EXPECT_EQ(text.find("skipped: reason"), std::string::npos);  // skips are not failures
}

TEST(CompactTable, OneLinePerCaseThenTheVerdictLast) {
  std::ostringstream out;
  write_comparison_table(out, compare_xgemv_to_cublas(sample_rows()));
  std::istringstream lines(out.str());
  std::vector<std::string> text;
  for (std::string line; std::getline(lines, line);) text.push_back(line);
  ASSERT_EQ(text.size(), 4u);
  EXPECT_NE(text[0].find("xgemv GB/s"), std::string::npos);
  EXPECT_NE(text[1].find("sq4k"), std::string::npos);
  EXPECT_NE(text[1].find("80.0"), std::string::npos);
  EXPECT_NE(text[1].find("1.28x"), std::string::npos);
  EXPECT_EQ(text[3].rfind("verdict: ", 0), 0u);
}

TEST(Progress, LinesLineUpWithTheHeader) {
  const std::vector<Measurement> rows = sample_rows();
  const std::string header = progress_header();
  const std::string line = progress_line(1, 2, rows[1]);
  EXPECT_EQ(line.rfind("[1/2]", 0), 0u);
  EXPECT_NE(line.find("xgemv"), std::string::npos);
  EXPECT_NE(line.find("1.28x"), std::string::npos);
  EXPECT_NE(line.find("ok (err 0.0001)"), std::string::npos) << line;
  EXPECT_EQ(header.find("library"), line.find("xgemv"));
  EXPECT_EQ(header.find(" check"), line.find(" ok"));
}

}  // namespace
}  // namespace xgemv::bench
