// Derived metrics, summaries and the writers.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <sstream>

#include "lib/options.hpp"
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
  EXPECT_EQ(header.rfind("suite,tag,dtype,op,m,n,nrhs,lda,incx,incy,alpha,beta,bytes,lib,", 0),
            0u);
  std::vector<std::string> body;
  while (std::getline(lines, line)) body.push_back(line);
  ASSERT_EQ(body.size(), 10u);
  EXPECT_EQ(body[1].rfind("anchors,sq4k,fp16,T,4096,4096,1,4096,1,1,1,0,33570816,xgemv,"
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
  EXPECT_EQ(xgemv["nrhs"], 1);
  EXPECT_DOUBLE_EQ(xgemv["us"].get<double>(), 12.5);
  EXPECT_DOUBLE_EQ(xgemv["pct_ceiling"].get<double>(), 80.0);
  EXPECT_EQ(xgemv["driver"], "580.65, CUDA 13.0");
  EXPECT_TRUE(json["records"][9]["us"].is_null());
  EXPECT_TRUE(json["records"][0]["speedup_vs_cublas"].is_null());
  EXPECT_EQ(json["summary"][0]["lib"], "xgemv");
  EXPECT_EQ(json["summary"][0]["cases"], 2);
  EXPECT_FALSE(json.contains("nrhs"));  // a run without --nrhs has no nrhs report
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
  EXPECT_EQ(header.find("nrhs") + 3, line.find("1 sq4k"));
}

// An --nrhs run: llama3-8b.qkv and .lm_head in bf16 (llm: the targets count them) at nrhs 1, 2,
// 8 and 16, and an fp32 square at nrhs 1 and 4 (not counted). Times in µs.
struct SweepTimes {
  int64_t nrhs;
  double ceiling, xgemv_nrhs, gemm;
};

std::vector<Measurement> sweep_rows() {
  std::vector<Measurement> rows;
  int index = 0;
  auto add_family = [&](Case c, const std::vector<SweepTimes>& times) {
    for (const SweepTimes& t : times) {
      c.nrhs = t.nrhs;
      const bool sixteen_bit = c.dtype == Dtype::bf16;
      rows.push_back(row(index, c, kCeiling, t.ceiling));
      if (t.nrhs == 1) rows.push_back(row(index, c, "xgemv", t.xgemv_nrhs - 1));
      rows.push_back(row(index, c, kXgemvNrhs, t.xgemv_nrhs));
      if (t.nrhs == 1) rows.push_back(row(index, c, "cublas", t.gemm + 2));
      rows.push_back(row(index, c, sixteen_bit ? kCublasGemmEx : kCublasGemm, t.gemm));
      ++index;
    }
  };
  add_family(make_case("llm", "llama3-8b.qkv", Dtype::bf16, 4096, 6144),
             {{1, 16.0, 20.0, 25.0}, {2, 16.1, 20.4, 40.0}, {8, 16.3, 21.0, 42.0},
              {16, 16.6, 26.0, 52.0}});
  add_family(make_case("llm", "llama3-8b.lm_head", Dtype::bf16, 4096, 128256),
             {{1, 300.0, 320.0, 330.0}, {2, 300.0, 330.0, 660.0}, {8, 301.0, 360.0, 700.0},
              {16, 302.0, 380.0, 350.0}});
  add_family(make_case("square", "sq4k", Dtype::fp32, 4096, 4096),
             {{1, 40.0, 50.0, 60.0}, {4, 41.0, 100.0, 65.0}});
  derive_metrics(rows);
  return rows;
}

TEST(Nrhs, AFamilyPerProblemWithEachLibrarysTimeOverItsOwnTimeAtOneVector) {
  const std::vector<NrhsFamily> families = shape_nrhs_families(sweep_rows());
  ASSERT_EQ(families.size(), 3u);
  const NrhsFamily& qkv = families[0];
  EXPECT_EQ(qkv.family, "llm bf16 T 4096x6144 llama3-8b.qkv");
  EXPECT_EQ(qkv.group, "llm bf16");
  EXPECT_TRUE(qkv.targeted);
  EXPECT_EQ(qkv.cublas_function, "cublas-gemmex_function");  // the GEMM, not the gemv
  ASSERT_EQ(qkv.rows.size(), 4u);
  EXPECT_EQ(qkv.rows[3].point.nrhs, 16);
  EXPECT_DOUBLE_EQ(*qkv.rows[0].xgemv_ratio, 1.0);
  EXPECT_DOUBLE_EQ(*qkv.rows[1].xgemv_ratio, 20.4 / 20.0);
  EXPECT_DOUBLE_EQ(*qkv.rows[1].cublas_ratio, 40.0 / 25.0);
  EXPECT_DOUBLE_EQ(*qkv.rows[1].speedup, 40.0 / 20.4);
  EXPECT_DOUBLE_EQ(*qkv.rows[0].speedup, 25.0 / 20.0);  // GemmEx with one column
  // The share of the same run's ceiling, which reads A + X + Y.
  EXPECT_DOUBLE_EQ(*qkv.rows[2].point.xgemv_pct_bound, 100.0 * 16.3 / 21.0);
  const NrhsFamily& square = families[2];
  EXPECT_FALSE(square.targeted);  // fp32, and not the llm suite
  EXPECT_EQ(square.cublas_function, "cublas-gemm_function");
  EXPECT_DOUBLE_EQ(*square.rows[1].xgemv_ratio, 2.0);
}

TEST(Nrhs, ComparisonsAndSummaryStayOfOneVector) {
  const std::vector<Measurement> rows = sweep_rows();
  const std::vector<Comparison> comparisons = compare_xgemv_to_cublas(rows);
  ASSERT_EQ(comparisons.size(), 3u);  // the three problems at nrhs 1
  for (const Comparison& comparison : comparisons) EXPECT_EQ(comparison.c.nrhs, 1);
  EXPECT_DOUBLE_EQ(*comparisons[0].speedup, 25.0 / 19.0);  // xgemv beside the fastest cuBLAS
  for (const SummaryRow& summary : summarize(rows)) EXPECT_LE(summary.cases, 2) << summary.library;
  // Without an --nrhs row or a case of several vectors there is no family.
  EXPECT_TRUE(shape_nrhs_families(
                  {row(0, make_case("llm", "x", Dtype::bf16, 64, 64), "xgemv", 1.0)})
                  .empty());
}

TEST(Nrhs, SummaryPerGroupAndNrhs) {
  const std::vector<NrhsSummary> summary = summarize_nrhs(shape_nrhs_families(sweep_rows()));
  ASSERT_EQ(summary.size(), 6u);  // llm bf16 at 1, 2, 8, 16; square fp32 at 1, 4
  EXPECT_EQ(summary[1].group, "llm bf16");
  EXPECT_EQ(summary[1].nrhs, 2);
  EXPECT_EQ(summary[1].families, 2);
  EXPECT_NEAR(*summary[1].geomean_xgemv_ratio, std::sqrt(20.4 / 20.0 * 330.0 / 320.0), 1e-12);
  EXPECT_DOUBLE_EQ(*summary[1].worst_xgemv_ratio, 330.0 / 320.0);
  EXPECT_NEAR(*summary[1].geomean_speedup, std::sqrt(40.0 / 20.4 * 660.0 / 330.0), 1e-12);
  EXPECT_EQ(summary[4].group, "square fp32");
  EXPECT_EQ(summary[5].nrhs, 4);
}

TEST(Nrhs, TheVerdictHoldsTheTargetedRatiosToTheirBoundsAndTheSpeedupsOverGemmEx) {
  EXPECT_FALSE(nrhs_ratio_target(1));
  EXPECT_DOUBLE_EQ(*nrhs_ratio_target(2), 1.10);
  EXPECT_DOUBLE_EQ(*nrhs_ratio_target(8), 1.10);
  EXPECT_DOUBLE_EQ(*nrhs_ratio_target(9), 1.25);
  EXPECT_DOUBLE_EQ(*nrhs_ratio_target(16), 1.25);
  EXPECT_FALSE(nrhs_ratio_target(17));

  const NrhsVerdict verdict = make_nrhs_verdict(shape_nrhs_families(sweep_rows()), "scope");
  // nrhs 2 and 8 of both bf16 families; lm_head at 8 is 360/320 = 1.125 > 1.10.
  EXPECT_EQ(verdict.tight.checked, 4);
  EXPECT_EQ(verdict.tight.met, 3);
  EXPECT_DOUBLE_EQ(*verdict.tight.worst, 360.0 / 320.0);
  // nrhs 16: qkv 26/20 = 1.30 > 1.25; lm_head 380/320 = 1.19.
  EXPECT_EQ(verdict.loose.checked, 2);
  EXPECT_EQ(verdict.loose.met, 1);
  // The fp32 square (2.00x at nrhs 4) is not counted; its speed-ups are not either.
  const double speedups[] = {40.0 / 20.4, 42.0 / 21.0, 52.0 / 26.0,
                             660.0 / 330.0, 700.0 / 360.0, 350.0 / 380.0};
  double log_sum = 0;
  for (double speedup : speedups) log_sum += std::log(speedup);
  EXPECT_NEAR(*verdict.geomean_speedup, std::exp(log_sum / 6), 1e-12);
  EXPECT_DOUBLE_EQ(*verdict.worst_speedup, 350.0 / 380.0);
  EXPECT_EQ(format_nrhs_verdict(verdict),
            "nrhs verdict (scope): time(nrhs)/time(1) <= 1.10x for nrhs 2..8: NO (3/4, worst "
            "1.12x: llm bf16 T 4096x128256 llama3-8b.lm_head nrhs 8); <= 1.25x for nrhs 9..16: "
            "NO (1/2, worst 1.30x: llm bf16 T 4096x6144 llama3-8b.qkv nrhs 16); speed-up vs "
            "cuBLAS GemmEx over nrhs 2..16: 1.74x geo-mean, worst 0.92x (llm bf16 T 4096x128256 "
            "llama3-8b.lm_head nrhs 16)");
}

TEST(Nrhs, TheVerdictSaysYesNoneAndNamesFailures) {
  std::vector<Measurement> rows = sweep_rows();
  for (Measurement& r : rows)
    if (r.library == kXgemvNrhs && r.c.nrhs > 1) r.us = r.c.n == 6144 ? 20.5 : 330.0;
  derive_metrics(rows);
  std::string line = format_nrhs_verdict(make_nrhs_verdict(shape_nrhs_families(rows), "s"));
  EXPECT_NE(line.find("<= 1.10x for nrhs 2..8: yes (4/4, worst 1.03x: "), std::string::npos)
      << line;
  EXPECT_NE(line.find("<= 1.25x for nrhs 9..16: yes (2/2, "), std::string::npos) << line;

  // An untimed point is checked and missed; a failure is named whether counted or not.
  for (Measurement& r : rows)
    if (r.library == kXgemvNrhs && r.c.nrhs == 8 && r.c.n == 6144) {
      r.us.reset();
      r.status = "check failed";
    }
  derive_metrics(rows);
  line = format_nrhs_verdict(make_nrhs_verdict(shape_nrhs_families(rows), "s"));
  EXPECT_NE(line.find("for nrhs 2..8: NO (3/4, "), std::string::npos) << line;
  EXPECT_NE(line.find("; xgemv-nrhs FAILED on 1 case(s): llm bf16 T 4096x6144 llama3-8b.qkv "
                      "nrhs 8 (check failed)"),
            std::string::npos)
      << line;

  // Only untargeted families: nothing to count.
  std::vector<Measurement> square;
  for (const Measurement& r : sweep_rows())
    if (r.c.suite == "square") square.push_back(r);
  EXPECT_EQ(format_nrhs_verdict(make_nrhs_verdict(shape_nrhs_families(square), "s")),
            "nrhs verdict (s): time(nrhs)/time(1) <= 1.10x for nrhs 2..8: none in this run; <= "
            "1.25x for nrhs 9..16: none in this run; speed-up vs cuBLAS GemmEx over nrhs 2..16: "
            "n/a");
}

TEST(Nrhs, MarkdownCsvJsonAndConsoleCarryTheSweep) {
  const std::vector<Measurement> rows = sweep_rows();
  std::ostringstream markdown;
  write_markdown(markdown, sample_info(), rows);
  const std::string text = markdown.str();
  EXPECT_NE(text.find("\n## Few right-hand sides\n"), std::string::npos) << text;
  EXPECT_NE(text.find("| llm bf16 | 2 | 2 | 1.03x | 1.03x | 1.79x | 1.98x | 1.96x |"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("### llm bf16 T 4096x6144 llama3-8b.qkv\n\n| nrhs | xgemv µs | "
                      "xgemv time/time(1) | xgemv % of ceiling | cuBLAS µs "
                      "(cublas-gemmex_function) |"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("| 16 | 26.00 | 1.30x | 63.8 | 52.00 | 2.08x | 2.00x |"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\nnrhs verdict (xgemv, bf16/fp16 llm shapes): "), std::string::npos);
  // The one-vector tables hold the nrhs 1 cases only.
  EXPECT_EQ(text.find("| bf16 | T | 4096x6144 | llama3-8b.qkv |"),
            text.rfind("| bf16 | T | 4096x6144 | llama3-8b.qkv |"));

  std::ostringstream csv;
  write_csv(csv, sample_info(), rows);
  EXPECT_NE(csv.str().find("\nllm,llama3-8b.qkv,bf16,T,4096,6144,16,4096,1,1,1,0,"),
            std::string::npos);

  const nlohmann::ordered_json json = to_json(sample_info(), rows);
  ASSERT_TRUE(json.contains("nrhs"));
  EXPECT_EQ(json["nrhs"]["families"].size(), 3u);
  EXPECT_EQ(json["nrhs"]["families"][0]["rows"][3]["nrhs"], 16);
  EXPECT_DOUBLE_EQ(json["nrhs"]["families"][0]["rows"][3]["xgemv_ratio"].get<double>(), 1.3);
  EXPECT_EQ(json["nrhs"]["verdict"].get<std::string>().rfind("nrhs verdict (", 0), 0u);
  EXPECT_EQ(json["records"][2]["lib"], kXgemvNrhs);
  EXPECT_EQ(json["records"][5]["nrhs"], 2);

  std::ostringstream console;
  write_nrhs_table(console, shape_nrhs_families(rows), kShapeNrhsUnits, kShapeNrhsScope);
  std::istringstream lines(console.str());
  std::vector<std::string> table;
  for (std::string line; std::getline(lines, line);) table.push_back(line);
  ASSERT_EQ(table.size(), 1u + 10u + 1u);  // header, a line per family and nrhs, verdict
  EXPECT_EQ(table[0].rfind("family ", 0), 0u);
  EXPECT_EQ(table[4].rfind("llm bf16 T 4096x6144 llama3-8b.qkv ", 0), 0u);
  EXPECT_NE(table[4].find(" 16 "), std::string::npos);
  EXPECT_NE(table[4].find("1.30x"), std::string::npos);
  EXPECT_EQ(table[0].find("speed-up") + 8, table[4].find("2.00x") + 5);  // aligned
  EXPECT_EQ(table.back().rfind("nrhs verdict (xgemv, bf16/fp16 llm shapes): ", 0), 0u);
}

}  // namespace
}  // namespace xgemv::bench
