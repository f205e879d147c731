// The quantized weights of the bench (--weights) without a GPU: the format names, the weight of a
// bench matrix and the bytes a call reads, the speed-up of a quantized row over cuBLAS on the
// dense matrix, and the quantized verdict lines.
#include <gtest/gtest.h>

#include <vector>

#include "lib/options.hpp"
#include "lib/weights.hpp"
#include "samples.hpp"

namespace xgemv::bench {
namespace {

TEST(Weights, FormatNamesParse) {
  const auto int4 = parse_weight_format("int4-g128-zp");
  ASSERT_TRUE(int4);
  EXPECT_EQ(int4->format, XGEMV_QFORMAT_INT4);
  EXPECT_EQ(int4->group, 128);
  EXPECT_TRUE(int4->zero_points);
  const auto symmetric = parse_weight_format("int4-g32");
  ASSERT_TRUE(symmetric);
  EXPECT_EQ(symmetric->group, 32);
  EXPECT_FALSE(symmetric->zero_points);
  EXPECT_EQ(parse_weight_format("fp8-block")->format, XGEMV_QFORMAT_FP8_E4M3_BLOCK);
  EXPECT_EQ(parse_weight_format("int8")->format, XGEMV_QFORMAT_INT8);
  for (const char* bad : {"int4", "int4-g96", "int4-g128zp", "int4-g128-zp-zp", "fp4", ""})
    EXPECT_FALSE(parse_weight_format(bad)) << bad;
  for (const std::string& name : weight_format_examples())
    EXPECT_TRUE(parse_weight_format(name)) << name;
}

TEST(Weights, TheCommandLineTakesFormatsAndRefusesOthers) {
  CommandLine<Options> command_line([] { return std::string("v"); }, "out");
  const char* good[] = {"xgemv-bench", "--weights", "int4-g128,int8"};
  EXPECT_EQ(command_line.parse(3, good).weights, (std::vector<std::string>{"int4-g128", "int8"}));
  const char* bad[] = {"xgemv-bench", "--weights", "int3"};
  EXPECT_THROW(command_line.parse(3, bad), CLI::ParseError);
}

TEST(Weights, AWeightOfABenchMatrixAndTheBytesACallReads) {
  // BLAS op T m = 4096 inputs, n = 1024 outputs, bf16 activations.
  const xgemv_qweight_info info =
      weight_info(*parse_weight_format("int4-g128"), Dtype::bf16, 1024, 4096);
  EXPECT_EQ(info.outputs, 1024);
  EXPECT_EQ(info.inputs, 4096);
  EXPECT_EQ(info.activation_type, XGEMV_R_16BF);
  EXPECT_EQ(info.scale_type, XGEMV_R_16BF);
  xgemv_qweight_layout layout;
  ASSERT_EQ(xgemv_qweight_get_layout(&info, &layout), XGEMV_STATUS_SUCCESS);
  EXPECT_EQ(layout.codes_bytes, size_t{1024} * 4096 / 2);
  EXPECT_EQ(layout.scales_bytes, size_t{1024} * 4096 / 128 * 2);
  EXPECT_EQ(quantized_call_bytes(layout, Dtype::bf16, 1024, 4096, 4),
            int64_t(layout.codes_bytes + layout.scales_bytes) + 4 * (4096 + 1024) * 2);
}

Record quantized_record(const char* lib, const char* format, double us, int64_t nrhs = 1) {
  Record r;
  r.suite = "llm";
  r.tag = "llama3-8b.gateup";
  r.dtype = Dtype::bf16;
  r.format = format;
  r.m = 4096;
  r.n = 28672;
  r.nrhs = nrhs;
  r.lib = lib;
  r.us = us;
  r.bytes = int64_t{60} << 20;
  r.matrix_bytes = int64_t{56} << 20;
  return r;
}

TEST(Weights, AQuantizedRowIsComparedWithCublasOnTheDenseMatrixAndItsOwnBound) {
  std::vector<Record> records = {quantized_record("cublas-gemmex", "", 60),
                                 quantized_record(kCeiling, "int4-g128", 18),
                                 quantized_record(kXgemvQuantized, "int4-g128", 20),
                                 quantized_record(kXgemvQuantized, "int4-g128", 22, 16)};
  records[1].us = 18.4;  // the bound: 92% at 20 us
  records[0].bytes = int64_t{224} << 20;
  derive_metrics(records);
  ASSERT_TRUE(records[2].speedup);
  EXPECT_DOUBLE_EQ(*records[2].speedup, 3.0);
  ASSERT_TRUE(records[2].pct_bound);
  EXPECT_NEAR(*records[2].pct_bound, 92.0, 1e-9);
  ASSERT_TRUE(records[3].nrhs_ratio);
  EXPECT_DOUBLE_EQ(*records[3].nrhs_ratio, 1.1);
  const std::string line = verdict_starting(records, "quant verdict");
  EXPECT_TRUE(contains(line, "int4-g128 >= 16 MiB at >= 90% of the bound, one vector: yes (1/1"));
  EXPECT_TRUE(contains(line, "time(nrhs)/time(1) <= 1.15x for nrhs 2..16: yes (1/1"));
  EXPECT_TRUE(contains(line, "int4-g128 speed-up vs cuBLAS bf16/fp16, one vector: 3.00x"));
}

}  // namespace
}  // namespace xgemv::bench
