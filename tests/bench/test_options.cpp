// The command line.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "lib/options.hpp"

namespace xgemv::bench {
namespace {

constexpr const char* kDefaultOutDir = "/build/bench/results";

CommandLine<Options> command_line() {
  return CommandLine<Options>([] { return std::string("xgemv-bench 1.2.3"); }, kDefaultOutDir);
}

Options parse(std::vector<const char*> arguments) {
  arguments.insert(arguments.begin(), "xgemv-bench");
  return command_line().parse(static_cast<int>(arguments.size()), arguments.data());
}

TEST(CommandLine, Defaults) {
  const Options options = parse({});
  EXPECT_TRUE(options.suites.empty());
  EXPECT_TRUE(options.libraries.empty());
  EXPECT_EQ(options.incx, 1);
  EXPECT_EQ(options.incy, 1);
  EXPECT_EQ(options.alpha, 1.0);
  EXPECT_EQ(options.beta, 0.0);
  EXPECT_FALSE(options.quick);
  EXPECT_FALSE(options.graph);
  EXPECT_EQ(options.out_dir, kDefaultOutDir);
  EXPECT_TRUE(options.wants_library("xgemv"));
  EXPECT_TRUE(options.wants_library("openblas"));
  EXPECT_TRUE(options.device_libraries_named().empty());
  EXPECT_TRUE(options.nrhs.empty());
  EXPECT_FALSE(options.nrhs_sweep());
  EXPECT_EQ(options.nrhs_values(), (std::vector<int64_t>{1}));
}

TEST(CommandLine, EveryParseStartsFromTheDefaults) {
  CommandLine<Options> reused = command_line();
  const char* with_dir[] = {"xgemv-bench", "--out-dir", "elsewhere"};
  EXPECT_EQ(reused.parse(3, with_dir).out_dir, "elsewhere");
  const char* without[] = {"xgemv-bench"};
  EXPECT_EQ(reused.parse(1, without).out_dir, kDefaultOutDir);
}

TEST(CommandLine, NamesTheGpuLibrariesAskedFor) {
  EXPECT_EQ(parse({"--lib", "openblas,cublas,xgemv"}).device_libraries_named(),
            (std::vector<std::string>{"cublas", "xgemv"}));
  EXPECT_EQ(parse({"--lib", "cublas-gemmex"}).device_libraries_named(),
            (std::vector<std::string>{"cublas-gemmex"}));
  EXPECT_TRUE(parse({"--lib", "openblas"}).device_libraries_named().empty());
  for (const std::string& name : kLibraryNames)
    EXPECT_EQ(is_device_library(name), name != "openblas") << name;
}

TEST(CommandLine, ParsesEveryOption) {
  const Options options = parse({"--suite",        "anchors,square",
                                 "--shape",        "4096x14336",
                                 "--shape",        "7x9",
                                 "--dtype",        "fp16,bf16",
                                 "--op",           "T",
                                 "--lib",          "xgemv,cublas",
                                 "--shape-filter", "sq",
                                 "--incx",         "-2",
                                 "--incy",         "3",
                                 "--alpha",        "0.5",
                                 "--beta",         "-1",
                                 "--quick",        "--graph",
                                 "--out-dir",      "out",
                                 "--device",       "1",
                                 "--commit",       "abc123"});
  EXPECT_EQ(options.suites, (std::vector<std::string>{"anchors", "square"}));
  EXPECT_EQ(options.shapes, (std::vector<std::string>{"4096x14336", "7x9"}));
  EXPECT_EQ(options.dtypes, (std::vector<std::string>{"fp16", "bf16"}));
  EXPECT_EQ(options.ops, (std::vector<std::string>{"T"}));
  EXPECT_EQ(options.libraries, (std::vector<std::string>{"xgemv", "cublas"}));
  EXPECT_EQ(options.shape_filter, "sq");
  EXPECT_EQ(options.incx, -2);
  EXPECT_EQ(options.incy, 3);
  EXPECT_EQ(options.alpha, 0.5);
  EXPECT_EQ(options.beta, -1.0);
  EXPECT_TRUE(options.quick);
  EXPECT_TRUE(options.graph);
  EXPECT_EQ(options.out_dir, "out");
  EXPECT_EQ(options.device, 1);
  EXPECT_EQ(options.commit, "abc123");
  EXPECT_TRUE(options.wants_library("cublas"));
  EXPECT_FALSE(options.wants_library("openblas"));
}

TEST(CommandLine, NrhsListIsAscendingWithoutRepeatsAndAlwaysHoldsOne) {
  const Options options = parse({"--nrhs", "16,2,4,2", "--nrhs", "8"});
  EXPECT_TRUE(options.nrhs_sweep());
  EXPECT_EQ(options.nrhs, (std::vector<int64_t>{1, 2, 4, 8, 16}));
  EXPECT_EQ(options.nrhs_values(), options.nrhs);
  EXPECT_EQ(parse({"--nrhs", "1"}).nrhs, (std::vector<int64_t>{1}));
  EXPECT_TRUE(parse({"--nrhs", "1"}).nrhs_sweep());  // the nrhs rows, at nrhs 1 only
  // Decode steps take it too; strides of 1 given explicitly are no strides.
  EXPECT_EQ(parse({"--suite", "decode", "--nrhs", "3"}).nrhs, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(parse({"--nrhs", "2", "--incx", "1", "--incy", "1"}).nrhs,
            (std::vector<int64_t>{1, 2}));
}

TEST(CommandLine, NrhsRefusesNonPositiveCountsAndStridedVectors) {
  for (const char* value : {"0", "-2", "two", "1.5", "4,0"})
    EXPECT_THROW(parse({"--nrhs", value}), CLI::ParseError) << value;
  EXPECT_THROW(parse({"--nrhs", "2", "--incx", "2"}), CLI::ParseError);
  EXPECT_THROW(parse({"--nrhs", "1,4", "--incy", "-1"}), CLI::ParseError);
  EXPECT_NO_THROW(parse({"--incx", "2"}));  // strides without --nrhs: one vector, as before
}

TEST(CommandLine, EachRowRunsAtTheNrhsItCallsWith) {
  const Options plain = parse({});
  // Without --nrhs: the one-vector rows and the one-column GemmEx, as before the option.
  for (const char* row : {"xgemv", "cublas", "cublas-gemmex", "openblas"})
    EXPECT_TRUE(plain.runs_row(row, 1)) << row;
  for (const char* row : {kXgemvNrhs, kCublasGemm}) EXPECT_FALSE(plain.runs_row(row, 1)) << row;

  const Options sweep = parse({"--nrhs", "4"});
  for (const char* row : {"xgemv", "cublas", "openblas", kXgemvNrhs, kCublasGemmEx, kCublasGemm})
    EXPECT_TRUE(sweep.runs_row(row, 1)) << row;
  // Several vectors: the calls that take them.
  for (const char* row : {kXgemvNrhs, kCublasGemmEx, kCublasGemm})
    EXPECT_TRUE(sweep.runs_row(row, 4)) << row;
  for (const char* row : {"xgemv", "cublas", "openblas"})
    EXPECT_FALSE(sweep.runs_row(row, 4)) << row;

  // --lib xgemv gives both xgemv rows; the GEMMs are libraries of their own.
  const Options chosen = parse({"--nrhs", "4", "--lib", "xgemv,cublas-gemm"});
  EXPECT_TRUE(chosen.runs_row("xgemv", 1));
  EXPECT_TRUE(chosen.runs_row(kXgemvNrhs, 4));
  EXPECT_TRUE(chosen.runs_row(kCublasGemm, 4));
  EXPECT_FALSE(chosen.runs_row(kCublasGemmEx, 4));
  EXPECT_FALSE(chosen.runs_row("cublas", 1));
  EXPECT_FALSE(parse({"--nrhs", "4", "--lib", "cublas"}).runs_row(kXgemvNrhs, 4));
  EXPECT_EQ(parse({"--lib", "cublas-gemm"}).device_libraries_named(),
            (std::vector<std::string>{"cublas-gemm"}));
}

TEST(CommandLine, TransIsAnotherNameForOp) {
  EXPECT_EQ(parse({"--trans", "N"}).ops, (std::vector<std::string>{"N"}));
}

TEST(CommandLine, RejectsBadValues) {
  for (const std::vector<const char*>& arguments :
       std::vector<std::vector<const char*>>{{"--suite", "huge"},
                                             {"--dtype", "fp8"},
                                             {"--op", "C"},
                                             {"--lib", "mkl"},
                                             {"--shape", "4096"},
                                             {"--shape", "0x5"},
                                             {"--incx", "0"},
                                             {"--device", "-1"},
                                             {"--no-such-option"}})
    EXPECT_THROW(parse(arguments), CLI::ParseError) << arguments.front();
}

TEST(CommandLine, DecodeSuiteWithItsOwnOptions) {
  const Options defaults = parse({"--suite", "decode"});
  EXPECT_TRUE(defaults.decode());
  EXPECT_TRUE(defaults.models.empty());
  EXPECT_EQ(defaults.step_gib, kDefaultStepGib);
  EXPECT_FALSE(parse({"--suite", "llm"}).decode());

  const Options options =
      parse({"--suite", "decode", "--model", "llama3-8b,llama3-70b", "--step-gib", "12.5",
             "--dtype", "fp16", "--lib", "xgemv,cublas-gemmex", "--quick", "--list"});
  EXPECT_EQ(options.models, (std::vector<std::string>{"llama3-8b", "llama3-70b"}));
  EXPECT_EQ(options.step_gib, 12.5);
  EXPECT_EQ(options.dtypes, (std::vector<std::string>{"fp16"}));
  EXPECT_TRUE(options.wants_library("xgemv"));
  EXPECT_FALSE(options.wants_library("cublas"));
}

TEST(CommandLine, DecodeRejectsShapeOptionsAndShapeSuitesRejectDecodeOptions) {
  EXPECT_THROW(parse({"--suite", "decode,llm"}), CLI::ParseError);
  for (const char* option :
       {"--op", "--shape", "--shape-filter", "--incx", "--incy", "--alpha", "--beta"}) {
    const char* value = std::string(option) == "--op"      ? "T"
                        : std::string(option) == "--shape" ? "8x8"
                                                           : "2";
    EXPECT_THROW(parse({"--suite", "decode", option, value}), CLI::ParseError) << option;
  }
  EXPECT_THROW(parse({"--suite", "decode", "--graph"}), CLI::ParseError);
  EXPECT_THROW(parse({"--suite", "decode", "--dtype", "fp32"}), CLI::ParseError);
  EXPECT_THROW(parse({"--suite", "decode", "--lib", "openblas"}), CLI::ParseError);
  EXPECT_THROW(parse({"--suite", "decode", "--model", "gpt-2"}), CLI::ParseError);
  EXPECT_THROW(parse({"--suite", "decode", "--step-gib", "0"}), CLI::ParseError);
  EXPECT_THROW(parse({"--model", "llama3-8b"}), CLI::ParseError);
  EXPECT_THROW(parse({"--suite", "llm", "--step-gib", "8"}), CLI::ParseError);
}

// The exit status and what the command line prints for an option that ends the parse.
std::pair<int, std::string> stopping(const char* option) {
  const char* arguments[] = {"xgemv-bench", option};
  testing::internal::CaptureStdout();
  const auto parsed = command_line().parse_or_exit(2, arguments);
  const std::string text = testing::internal::GetCapturedStdout();
  return {std::holds_alternative<int>(parsed) ? std::get<int>(parsed) : -1, text};
}

TEST(CommandLine, HelpAndVersionPrintAndExitZero) {
  const auto [help_status, help] = stopping("--help");
  EXPECT_EQ(help_status, 0);
  for (const char* option : {"--shape-filter", "--graph", "--version", "decode", "--step-gib",
                             "--nrhs", kDefaultOutDir})  // --out-dir shows its default
    EXPECT_NE(help.find(option), std::string::npos) << option;
  EXPECT_EQ(stopping("--version"), (std::pair<int, std::string>{0, "xgemv-bench 1.2.3\n"}));
  EXPECT_EQ(stopping("--no-such-option").first, 109);  // CLI11's code for an unknown option
}

}  // namespace
}  // namespace xgemv::bench
