// The mixture-of-experts suite without a GPU: the models, the routings, the experts a routing
// touches and the bytes of a call, the cases of a command line, what a check compares (the
// device's steps replayed on the host against the full reference), and its records through the
// verdict and the one writer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <sstream>
#include <tuple>

#include "lib/moe.hpp"
#include "lib/options.hpp"
#include "lib/report.hpp"
#include "samples.hpp"
#include "support/random_data.hpp"

namespace xgemv::bench {
namespace {

constexpr int64_t kGib = int64_t{1} << 30;

const MoeModel& moe_model(const std::string& name) {
  const MoeModel* found = find_moe_model(name);
  EXPECT_NE(found, nullptr) << name;
  return *found;
}

Options parse(std::vector<const char*> arguments) {
  arguments.insert(arguments.begin(), "xgemv-bench");
  return CommandLine<Options>([] { return std::string("xgemv-bench"); }, "out")
      .parse(static_cast<int>(arguments.size()), arguments.data());
}

// How many tokens chose each expert.
std::map<int32_t, int64_t> choices(const MoeRouting& routing) {
  std::map<int32_t, int64_t> count;
  for (int32_t id : routing.ids) ++count[id];
  return count;
}

int64_t hottest(const MoeRouting& routing) {
  int64_t most = 0;
  for (const auto& [id, count] : choices(routing)) most = std::max(most, count);
  return most;
}

TEST(MoeModels, PublishedLayers) {
  // Each model as "name: experts x hidden/intermediate, top-k".
  std::vector<std::string> published;
  for (const MoeModel& m : moe_models())
    published.push_back(m.name + ": " + std::to_string(m.experts) + " x " +
                        std::to_string(m.hidden) + "/" + std::to_string(m.intermediate) + ", " +
                        std::to_string(m.top_k));
  EXPECT_EQ(published, (std::vector<std::string>{
                           "qwen3-30b-a3b: 128 x 2048/768, 8",
                           "qwen3-235b-a22b: 128 x 4096/1536, 8",
                           "deepseek-v3: 256 x 7168/2048, 8",
                           "gpt-oss-120b: 128 x 2880/2880, 4",
                           "mixtral-8x7b: 8 x 4096/14336, 2",
                           "olmoe-1b-7b: 64 x 2048/1024, 8",
                       }));
  EXPECT_EQ(find_moe_model("llama3-8b"), nullptr);
}

TEST(MoeRouting, EachTokenChoosesTopKDistinctExpertsWithWeightsSummingToOne) {
  for (RoutingKind kind : kRoutingKinds)
    for (const auto& [experts, top_k] :
         std::vector<std::pair<int64_t, int64_t>>{{128, 8}, {8, 2}, {8, 8}, {1, 1}}) {
      const MoeRouting routing = make_routing(kind, experts, 64, top_k, 7);
      ASSERT_EQ(routing.ids.size(), size_t(64 * top_k));
      ASSERT_EQ(routing.weights.size(), routing.ids.size());
      for (int64_t t = 0; t < 64; ++t) {
        const auto first = routing.ids.begin() + t * top_k;
        const std::set<int32_t> chosen(first, first + top_k);
        EXPECT_EQ(chosen.size(), size_t(top_k)) << routing_name(kind) << " token " << t;
        EXPECT_GE(*chosen.begin(), 0);
        EXPECT_LT(*chosen.rbegin(), experts);
        double sum = 0;
        for (int64_t j = 0; j < top_k; ++j) {
          EXPECT_GT(routing.weights[size_t(t * top_k + j)], 0);
          sum += routing.weights[size_t(t * top_k + j)];
        }
        EXPECT_NEAR(sum, 1.0, 1e-6);
      }
    }
  EXPECT_THROW(make_routing(RoutingKind::uniform, 4, 1, 5, 1), std::invalid_argument);
}

TEST(MoeRouting, TheSameSeedGivesTheSameRouting) {
  for (RoutingKind kind : kRoutingKinds) {
    const MoeRouting a = make_routing(kind, 128, 16, 8, 42);
    const MoeRouting b = make_routing(kind, 128, 16, 8, 42);
    EXPECT_EQ(a.ids, b.ids);
    EXPECT_EQ(a.weights, b.weights);
    EXPECT_NE(a.ids, make_routing(kind, 128, 16, 8, 43).ids);
  }
  EXPECT_NE(make_routing(RoutingKind::uniform, 128, 16, 8, 42).ids,
            make_routing(RoutingKind::skewed, 128, 16, 8, 42).ids);
}

TEST(MoeRouting, UniformSpreadsOverEveryExpertAndSkewedHasAFewHotOnes) {
  // 1024 tokens choosing 8 of 64: 128 choices per expert on average.
  const std::map<int32_t, int64_t> uniform =
      choices(make_routing(RoutingKind::uniform, 64, 1024, 8, 5));
  EXPECT_EQ(uniform.size(), 64u);
  for (const auto& [id, count] : uniform) {
    EXPECT_GT(count, 64) << id;
    EXPECT_LT(count, 192) << id;
  }
  // 64 tokens choosing 8 of 128: the hottest uniform expert has a dozen; a skewed one most tokens,
  // and a skewed routing touches fewer experts.
  std::set<int32_t> hottest_experts;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    const MoeRouting uniform_routing = make_routing(RoutingKind::uniform, 128, 64, 8, seed);
    const MoeRouting skewed = make_routing(RoutingKind::skewed, 128, 64, 8, seed);
    EXPECT_LT(hottest(uniform_routing), 16) << seed;
    EXPECT_GT(hottest(skewed), 32) << seed;
    EXPECT_LT(group_by_expert(skewed, 128).groups.size(),
              group_by_expert(uniform_routing, 128).groups.size())
        << seed;
    for (const auto& [id, count] : choices(skewed))
      if (count == hottest(skewed)) hottest_experts.insert(id);
  }
  // Each routing has a permutation of its own: its hot experts are others.
  EXPECT_GT(hottest_experts.size(), 1u);
}

TEST(MoeRouting, GroupsThePairsOfEachValidExpertInOrderOfFirstChoice) {
  MoeRouting routing{3, 2, {3, 1, 1, 5, 9, 3}, std::vector<float>(6, 0.5f)};
  const ExpertGroups grouped = group_by_expert(routing, 8);  // id 9 chooses nothing
  ASSERT_EQ(grouped.groups.size(), 3u);
  const std::vector<std::tuple<int32_t, int64_t, int64_t>> expected = {
      {3, 0, 2}, {1, 2, 2}, {5, 4, 1}};
  for (size_t g = 0; g < expected.size(); ++g)
    EXPECT_EQ(std::tuple(grouped.groups[g].expert, grouped.groups[g].first, grouped.groups[g].rows),
              expected[g])
        << g;
  EXPECT_EQ(grouped.pairs, (std::vector<int64_t>{0, 5, 1, 2, 3}));
  EXPECT_EQ(gathered_rows(grouped, {5, 3})[0].first, 1);
  EXPECT_EQ(gathered_rows(grouped, {5, 3})[1].first, 4);
  EXPECT_THROW(gathered_rows(grouped, {4}), std::logic_error);
}

TEST(MoeExperts, UpIsGateAndUpRowsOverHiddenDownIsHiddenRowsOverIntermediate) {
  const MoeModel& qwen = moe_model("qwen3-30b-a3b");
  const MoeExperts up = moe_experts(qwen, Projection::up, std::nullopt);
  EXPECT_EQ(up.outputs, 1536);
  EXPECT_EQ(up.inputs, 2048);
  EXPECT_EQ(up.expert_bytes, 1536 * 2048 * 2);
  EXPECT_EQ(up.bytes(), 128 * up.expert_bytes);
  const MoeExperts down = moe_experts(qwen, Projection::down, std::nullopt);
  EXPECT_EQ(down.outputs, 2048);
  EXPECT_EQ(down.inputs, 768);
  // x [4][2048] and h [4][8][768]; h and y [4][2048].
  EXPECT_EQ(up.call_io_bytes(4, 8), (4 * 2048 + 4 * 8 * 768) * 2);
  EXPECT_EQ(down.call_io_bytes(4, 8), (4 * 8 * 768 + 4 * 2048) * 2);

  // Quantized: one expert is a weight's storage.
  const MoeExperts int4 = moe_experts(qwen, Projection::up, parse_weight_format("int4-g128"));
  xgemv_qweight_layout layout;
  ASSERT_EQ(xgemv_qweight_get_layout(&int4.info, &layout), XGEMV_STATUS_SUCCESS);
  EXPECT_EQ(int4.expert_bytes, static_cast<int64_t>(layout.bytes));
  EXPECT_EQ(int4.info.outputs, 1536);
  EXPECT_EQ(int4.info.activation_type, XGEMV_R_16BF);
  EXPECT_TRUE(int4.unavailable.empty());
  EXPECT_LT(int4.expert_bytes, up.expert_bytes / 3);
  // gpt-oss's 2880 inputs are no multiple of 128.
  const MoeExperts odd =
      moe_experts(moe_model("gpt-oss-120b"), Projection::down, parse_weight_format("int4-g128"));
  EXPECT_FALSE(odd.unavailable.empty());
  EXPECT_TRUE(moe_experts(moe_model("gpt-oss-120b"), Projection::down, parse_weight_format("int8"))
                  .unavailable.empty());
}

TEST(MoeExperts, CopiesMakeAGibibyteAndTheStorageHoldsThemAndACeilingRead) {
  // 403 MB of down experts: three copies; DeepSeek-V3's 15 GB of up experts: one.
  const MoeExperts down = moe_experts(moe_model("qwen3-30b-a3b"), Projection::down, std::nullopt);
  EXPECT_EQ(down.copies(), 3);
  EXPECT_EQ(down.copy_stride_bytes() % kCopyAlignment, 0);
  EXPECT_GE(down.copy_stride_bytes(), down.bytes());
  EXPECT_GE(down.storage_bytes(64, 8),
            3 * down.copy_stride_bytes() + down.call_io_bytes(64, 8) + 16);
  EXPECT_EQ(moe_experts(moe_model("deepseek-v3"), Projection::up, std::nullopt).copies(), 1);
  const MoeExperts small =
      moe_experts(moe_model("olmoe-1b-7b"), Projection::down, parse_weight_format("int4-g128"));
  EXPECT_LT(small.bytes(), 100'000'000);
  EXPECT_GE(small.copies() * small.bytes(), kGib);
  EXPECT_LT((small.copies() - 1) * small.bytes(), kGib);
}

TEST(MoeCall, RoutingsUntilTheirTouchedExpertsReachAGibibyteAtMost64) {
  const MoeCase one{moe_model("qwen3-30b-a3b"), std::nullopt, 1, RoutingKind::uniform};
  const MoeCall up = plan_moe_call(one, Projection::up);
  // One token touches its 8 experts: 8 x 6 MiB a call, 22 routings to pass 1 GiB.
  EXPECT_EQ(up.mean_experts, 8.0);
  EXPECT_EQ(up.touched_bytes(), 8 * 1536 * 2048 * 2);
  EXPECT_EQ(up.bytes(), up.touched_bytes() + up.experts.call_io_bytes(1, 8));
  EXPECT_EQ(up.routings.size(), 22u);
  EXPECT_EQ(up.groups.size(), up.routings.size());
  EXPECT_EQ(up.experts.copies(), 2);   // of 805 MB
  EXPECT_EQ(up.rotation_calls(), 22);  // lcm(22, 2)
  // The down experts are half as large: more routings, the same first ones.
  const MoeCall down = plan_moe_call(one, Projection::down);
  EXPECT_EQ(down.routings.size(), 43u);
  EXPECT_EQ(down.experts.copies(), 3);
  EXPECT_EQ(down.rotation_calls(), 129);  // lcm(43, 3)
  for (size_t r = 0; r < up.routings.size(); ++r)
    EXPECT_EQ(down.routings[r].ids, up.routings[r].ids) << r;
  // Quantized: the same routings, capped at 64.
  MoeCase quantized = one;
  quantized.quantized = parse_weight_format("int4-g128");
  const MoeCall int4 = plan_moe_call(quantized, Projection::up);
  EXPECT_EQ(int4.routings.size(), size_t(kMaxMoeRoutings));
  EXPECT_EQ(int4.routings[5].ids, up.routings[5].ids);
  // Many tokens: a few routings over most experts (uniform: E (1 - (1 - k/E)^T) on average).
  const MoeCase many{moe_model("deepseek-v3"), std::nullopt, 64, RoutingKind::uniform};
  const MoeCall wide = plan_moe_call(many, Projection::up);
  EXPECT_EQ(wide.routings.size(), 1u);
  EXPECT_NEAR(wide.mean_experts, 256 * (1 - std::pow(1 - 8.0 / 256, 64)), 12);
  EXPECT_EQ(wide.touched_bytes(), std::llround(wide.mean_experts * 4096 * 7168 * 2));
  // Routings of a kind of their own.
  MoeCase skewed = one;
  skewed.routing = RoutingKind::skewed;
  EXPECT_NE(plan_moe_call(skewed, Projection::up).routings[0].ids, up.routings[0].ids);
  // An unavailable format plans no routing.
  MoeCase odd{moe_model("gpt-oss-120b"), parse_weight_format("int4-g128"), 4, RoutingKind::uniform};
  EXPECT_TRUE(plan_moe_call(odd, Projection::up).routings.empty());
}

TEST(MoeCall, TheCeilingReadsStayInTheStorageOfTheLargestCall) {
  const std::vector<MoeCase> cases = plan_moe_cases(parse({"--suite", "moe"}));
  for (const MoeCase& c : cases)
    for (Projection projection : {Projection::up, Projection::down}) {
      const MoeCall call = plan_moe_call(c, projection);
      if (!call.experts.unavailable.empty()) continue;
      const RotationLayout rotation = call.ceiling_rotation();
      ASSERT_GE(rotation.copies, 1);
      EXPECT_EQ(rotation.copy_stride_bytes % kCopyAlignment, 0);
      EXPECT_GE(rotation.copy_stride_bytes, call.bytes());
      const int64_t last_read_end =
          (rotation.copies - 1) * rotation.copy_stride_bytes + (call.bytes() + 15) / 16 * 16;
      EXPECT_LE(last_read_end, call.experts.storage_bytes(64, c.model.top_k))
          << describe_moe_case(c);
      // Several reads where the copies hold several calls' bytes.
      if (call.bytes() * 2 <= call.experts.copies() * call.experts.copy_stride_bytes()) {
        EXPECT_GE(rotation.copies, 2) << describe_moe_case(c);
      }
    }
}

TEST(MoeCases, EveryModelFormatTokensAndRoutingByDefaultExpertsOfOneFormatTogether) {
  const std::vector<MoeCase> cases = plan_moe_cases(parse({"--suite", "moe"}));
  ASSERT_EQ(cases.size(), 6u * 2u * 7u * 2u);
  EXPECT_EQ(cases[0].model.name, "qwen3-30b-a3b");
  EXPECT_EQ(cases[0].format_name(), "bf16");
  EXPECT_EQ(cases[0].tokens, 1);
  EXPECT_EQ(cases[0].routing, RoutingKind::uniform);
  EXPECT_EQ(cases[1].routing, RoutingKind::skewed);
  EXPECT_EQ(cases[2].tokens, 2);
  EXPECT_EQ(cases[14].format_name(), "int4-g128");
  EXPECT_EQ(cases.back().model.name, "olmoe-1b-7b");
  EXPECT_EQ(cases.back().tokens, 64);
  // Each model's experts of a format are made once: their cases follow each other.
  int64_t groups = 1;
  for (size_t i = 1; i < cases.size(); ++i) groups += !cases[i].same_experts(cases[i - 1]);
  EXPECT_EQ(groups, 6 * 2);
}

TEST(MoeCases, FiltersChooseModelsFormatsTokensAndRoutings) {
  const std::vector<MoeCase> cases =
      plan_moe_cases(parse({"--suite", "moe", "--model", "olmoe-1b-7b,mixtral-8x7b", "--tokens",
                            "16,1,16", "--routing", "skewed", "--weights", "int8,bf16"}));
  std::vector<std::string> names;
  for (const MoeCase& c : cases)
    names.push_back(c.model.name + " " + c.format_name() + " " + std::to_string(c.tokens) + " " +
                    std::string(routing_name(c.routing)));
  EXPECT_EQ(names,
            (std::vector<std::string>{"mixtral-8x7b int8 1 skewed", "mixtral-8x7b int8 16 skewed",
                                      "mixtral-8x7b bf16 1 skewed", "mixtral-8x7b bf16 16 skewed",
                                      "olmoe-1b-7b int8 1 skewed", "olmoe-1b-7b int8 16 skewed",
                                      "olmoe-1b-7b bf16 1 skewed", "olmoe-1b-7b bf16 16 skewed"}));
  Options decode_model;
  decode_model.models = {"llama3-8b"};
  EXPECT_THROW(plan_moe_cases(decode_model), std::invalid_argument);
  Options zero_tokens;
  zero_tokens.tokens = {0};
  EXPECT_THROW(plan_moe_cases(zero_tokens), std::invalid_argument);
}

TEST(MoeCases, TheListLineSaysTheExpertsRoutingsAndBytesOfBothProjections) {
  const MoeCase c{moe_model("qwen3-30b-a3b"), std::nullopt, 1, RoutingKind::uniform};
  EXPECT_EQ(describe_moe_case(c),
            "qwen3-30b-a3b bf16, T 1, uniform: up 1536x2048, 8.0 of 128 experts, 0.05 GB, 22 "
            "routings, 2 copies; down 2048x768, 8.0 of 128 experts, 0.03 GB, 43 routings, 3 "
            "copies");
  const MoeCase odd{moe_model("gpt-oss-120b"), parse_weight_format("int4-g128"), 4,
                    RoutingKind::skewed};
  EXPECT_TRUE(
      contains(describe_moe_case(odd), "gpt-oss-120b int4-g128, T 4, skewed: up 5760x2880 ("));
}

TEST(CommandLine, MoeSuiteWithItsOwnOptions) {
  const Options defaults = parse({"--suite", "moe"});
  EXPECT_TRUE(defaults.moe());
  EXPECT_FALSE(defaults.decode());
  EXPECT_TRUE(defaults.tokens.empty());
  EXPECT_TRUE(defaults.routings.empty());
  EXPECT_FALSE(parse({"--suite", "decode"}).moe());
  const Options options =
      parse({"--suite", "moe", "--model", "deepseek-v3", "--tokens", "1,64", "--routing", "skewed",
             "--weights", "bf16,fp8", "--lib", "xgemv", "--graph", "--quick", "--list"});
  EXPECT_EQ(options.models, (std::vector<std::string>{"deepseek-v3"}));
  EXPECT_EQ(options.tokens, (std::vector<int64_t>{1, 64}));
  EXPECT_EQ(options.routings, (std::vector<std::string>{"skewed"}));
  EXPECT_EQ(options.weights, (std::vector<std::string>{"bf16", "fp8"}));
  EXPECT_TRUE(options.graph);
  EXPECT_FALSE(options.wants_library(kCublasGemmEx));
}

TEST(CommandLine, MoeRejectsOtherSuitesOptionsAndOthersRejectMoeOptions) {
  for (const std::vector<const char*>& arguments : std::vector<std::vector<const char*>>{
           {"--suite", "moe,llm"},
           {"--suite", "moe", "--nrhs", "4"},
           {"--suite", "moe", "--shape", "8x8"},
           {"--suite", "moe", "--op", "T"},
           {"--suite", "moe", "--step-gib", "8"},
           {"--suite", "moe", "--dtype", "fp16"},
           {"--suite", "moe", "--lib", "cublas"},
           {"--suite", "moe", "--lib", "openblas"},
           {"--suite", "moe", "--model", "llama3-8b"},
           {"--suite", "moe", "--routing", "zipf"},
           {"--suite", "moe", "--tokens", "0"},
           {"--suite", "moe", "--weights", "int3"},
           {"--suite", "llm", "--tokens", "4"},
           {"--suite", "llm", "--routing", "skewed"},
           {"--suite", "llm", "--weights", "bf16"},
           {"--suite", "llm", "--model", "deepseek-v3"},
           {"--suite", "decode", "--model", "deepseek-v3"},
       })
    EXPECT_THROW(parse(arguments), CLI::ParseError) << arguments[1] << " " << arguments.back();
}

// --- the check --------------------------------------------------------------------------------

TEST(MoeCheck, SampledRowsSpreadOverAllAnOddStrideApart) {
  EXPECT_EQ(sample_rows(100).stride, 1);
  EXPECT_EQ(sample_rows(100).count, 100);
  for (int64_t rows : {768, 2048, 2880, 7168, 14336}) {
    const RowSample sample = sample_rows(rows);
    EXPECT_EQ(sample.stride % 2, 1) << rows;
    EXPECT_LE(sample.count, kCheckedRows) << rows;
    EXPECT_LT(sample.row(sample.count - 1), rows) << rows;
    EXPECT_GE(sample.row(sample.count - 1) + sample.stride, rows) << rows;  // to the last rows
    std::set<int64_t> tile_positions;
    for (int64_t i = 0; i < sample.count; ++i) tile_positions.insert(sample.row(i) % 16);
    EXPECT_EQ(tile_positions.size(), 16u) << rows;
  }
}

MoeCall toy_call(Projection projection, int64_t tokens) {
  MoeCall call;
  call.experts.projection = projection;
  call.experts.count = 6;
  call.experts.outputs = projection == Projection::up ? 2 * 40 : 300;
  call.experts.inputs = projection == Projection::up ? 300 : 40;
  call.tokens = tokens;
  call.top_k = 3;
  call.routings = {make_routing(RoutingKind::uniform, 6, tokens, 3, 11)};
  call.groups = {group_by_expert(call.routings[0], 6)};
  return call;
}

TEST(MoeCheck, TheFirstAndLastTokensTheirPairsAndExpertsAndTheRowsTheyRead) {
  const MoeCall up = toy_call(Projection::up, 5);
  const MoeCheck check = plan_check(up);
  EXPECT_EQ(check.tokens, (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(check.pairs, (std::vector<int64_t>{0, 1, 2, 12, 13, 14}));
  ASSERT_EQ(check.routing.ids.size(), 6u);
  for (size_t i = 0; i < check.pairs.size(); ++i) {
    const size_t pair = size_t(check.pairs[i]);
    EXPECT_EQ(check.experts[size_t(check.routing.ids[i])], up.routings[0].ids[pair]) << i;
    EXPECT_EQ(check.routing.weights[i], up.routings[0].weights[pair]) << i;
  }
  EXPECT_EQ(std::set<int32_t>(check.experts.begin(), check.experts.end()).size(),
            check.experts.size());
  EXPECT_EQ(check.routing.tokens, 2);
  EXPECT_EQ(check.routing.top_k, 3);
  // Up: every one of the 40 outputs, from the gate rows and the up rows 40 further.
  EXPECT_EQ(check.outputs.count, 40);
  ASSERT_EQ(check.expert_rows.size(), 2u);
  EXPECT_EQ(check.expert_rows[1].first, 40);
  EXPECT_EQ(check.reference_rows(), 80);
  EXPECT_EQ(check.token_rows(3)[1].first, 12);
  EXPECT_EQ(check.token_rows(3)[1].count, 3);
  const xgemv_test::moe::Routing pairs = check.pair_routing();
  EXPECT_EQ(pairs.tokens, 6);
  EXPECT_EQ(pairs.top_k, 1);
  EXPECT_EQ(pairs.weights, std::vector<double>(6, 1.0));
  // One token: only it.
  EXPECT_EQ(plan_check(toy_call(Projection::down, 1)).tokens, (std::vector<int64_t>{0}));
  // Down: a sample of the 300 outputs, the same rows of each expert.
  const MoeCheck down = plan_check(toy_call(Projection::down, 2));
  EXPECT_EQ(down.outputs.stride, 3);
  EXPECT_EQ(down.outputs.count, 100);
  EXPECT_EQ(down.expert_rows.size(), 1u);
}

// The host's copy of what the device would hold: every expert's values, every token's input.
struct ToyOperands {
  xgemv_test::moe::ExpertValues experts;
  std::vector<double> inputs;  // [rows][inputs]

  ToyOperands(const MoeCall& call, int64_t input_rows) {
    xgemv_test::RandomSource random(3);
    experts = {call.experts.count, call.experts.outputs, call.experts.inputs, {}};
    for (int64_t i = 0; i < call.experts.count * call.experts.outputs * call.experts.inputs; ++i)
      experts.values.push_back(random.uniform(-1, 1));
    for (int64_t i = 0; i < input_rows * call.experts.inputs; ++i)
      inputs.push_back(random.uniform(-1, 1));
  }

  // Rows of a [rows][length] matrix, as the device copies them to the host.
  static std::vector<double> rows_of(const std::vector<double>& matrix, int64_t length,
                                     const std::vector<RowSample>& rows) {
    std::vector<double> values;
    for (const RowSample& sample : rows)
      for (int64_t i = 0; i < sample.count; ++i)
        values.insert(values.end(), matrix.begin() + sample.row(i) * length,
                      matrix.begin() + (sample.row(i) + 1) * length);
    return values;
  }

  // The check's experts: their rows the reference reads.
  xgemv_test::moe::ExpertValues checked_experts(const MoeCheck& check) const {
    xgemv_test::moe::ExpertValues values{
        int64_t(check.experts.size()), check.reference_rows(), experts.inputs, {}};
    for (int32_t e : check.experts) {
      const std::vector<double> expert(
          experts.values.begin() + e * experts.outputs * experts.inputs,
          experts.values.begin() + (e + 1) * experts.outputs * experts.inputs);
      const std::vector<double> rows = rows_of(expert, experts.inputs, check.expert_rows);
      values.values.insert(values.values.end(), rows.begin(), rows.end());
    }
    return values;
  }
};

xgemv_test::moe::Routing full_routing(const MoeRouting& routing) {
  return {routing.tokens, routing.top_k,
          std::vector<int64_t>(routing.ids.begin(), routing.ids.end()),
          std::vector<double>(routing.weights.begin(), routing.weights.end())};
}

// The check's reference on the sampled rows of the chosen experts equals the full reference's
// values at the sampled outputs of the checked tokens: what the device compares is the call's.
TEST(MoeCheck, TheSampledReferenceIsTheFullReferenceAtTheComparedOutputs) {
  using namespace xgemv_test::moe;
  const MoeCall up = toy_call(Projection::up, 5);
  const MoeCheck up_check = plan_check(up);
  const ToyOperands up_operands(up, 5);
  const std::vector<double> x =
      ToyOperands::rows_of(up_operands.inputs, 300, up_check.token_rows(1));
  const ExpertValues up_rows = up_operands.checked_experts(up_check);
  const Reference full_up =
      reference_up(up_operands.experts, {}, up_operands.inputs, 300, full_routing(up.routings[0]),
                   XGEMV_MOE_SWIGLU, 0, 0, XGEMV_R_16BF);
  const Reference checked_up =
      reference_up(up_rows, {}, x, 300, up_check.routing, XGEMV_MOE_SWIGLU, 0, 0, XGEMV_R_16BF);
  const std::vector<double> h = sample_columns(
      ToyOperands::rows_of(full_up.values, 40, up_check.token_rows(3)), 40, {up_check.outputs});
  EXPECT_EQ(checked_up.values, h);
  EXPECT_TRUE(compare_to_bounds(h, checked_up).passed);

  // A per-expert GEMM's products (before the activation) at the gathered rows of the pairs.
  const Reference products =
      reference_up(up_rows, {}, x, 300, up_check.routing, XGEMV_MOE_IDENTITY, 0, 0, XGEMV_R_16BF);
  const Reference full_products =
      reference_up(up_operands.experts, {}, up_operands.inputs, 300, full_routing(up.routings[0]),
                   XGEMV_MOE_IDENTITY, 0, 0, XGEMV_R_16BF);
  std::vector<double> gathered(up.groups[0].pairs.size() * 80);  // [gathered row][80]
  for (size_t row = 0; row < up.groups[0].pairs.size(); ++row)
    std::copy_n(full_products.values.begin() + up.groups[0].pairs[row] * 80, 80,
                gathered.begin() + row * 80);
  EXPECT_EQ(products.values,
            sample_columns(
                ToyOperands::rows_of(gathered, 80, gathered_rows(up.groups[0], up_check.pairs)), 80,
                up_check.expert_rows));

  const MoeCall down = toy_call(Projection::down, 4);
  const MoeCheck down_check = plan_check(down);
  const ToyOperands down_operands(down, 12);
  const std::vector<double> h_rows =
      ToyOperands::rows_of(down_operands.inputs, 40, down_check.token_rows(3));
  const ExpertValues down_rows = down_operands.checked_experts(down_check);
  const Reference full_down =
      reference_down(down_operands.experts, {}, down_operands.inputs, 40,
                     full_routing(down.routings[0]), false, {}, 300, XGEMV_R_16BF);
  const Reference checked_down =
      reference_down(down_rows, {}, h_rows, 40, down_check.routing, false, {}, 300, XGEMV_R_16BF);
  EXPECT_EQ(checked_down.values,
            sample_columns(ToyOperands::rows_of(full_down.values, 300, down_check.token_rows(1)),
                           300, {down_check.outputs}));
  // Each pair's product alone sums to the token's output with the routing's weights.
  const Reference pair_products = reference_down(
      down_rows, {}, h_rows, 40, down_check.pair_routing(), false, {}, 300, XGEMV_R_16BF);
  const int64_t sampled = down_check.outputs.count;
  for (int64_t o = 0; o < sampled; ++o) {
    double sum = 0;
    for (int64_t j = 0; j < 3; ++j)
      sum += down_check.routing.weights[size_t(j)] * pair_products.values[size_t(j * sampled + o)];
    EXPECT_NEAR(sum, checked_down.values[size_t(o)], 1e-12) << o;
  }
}

TEST(MoeCheck, OutputsPassWithinTheirBoundsAndTheWorstNamesTheFailure) {
  xgemv_test::moe::Reference reference{{4.0, -2.0, 1.0, 100.0}, {0.1, 0.1, 0.1, 0.0}, {1, 1, 1, 0}};
  const CheckResult ok = compare_to_bounds({4.05, -2.0, 1.08, -7.0}, reference);
  EXPECT_TRUE(ok.passed);  // the undefined fourth is not compared, nor counted in the scale
  EXPECT_NEAR(ok.max_error, 0.08 / 4, 1e-15);  // the third, furthest towards its bound
  EXPECT_DOUBLE_EQ(ok.tolerance, 0.1 / 4);
  const CheckResult off = compare_to_bounds({4.05, -2.3, 1.0, 100.0}, reference);
  EXPECT_FALSE(off.passed);
  EXPECT_NEAR(off.max_error, 0.3 / 4, 1e-15);
  const CheckResult nan = compare_to_bounds({NAN, -2.3, 1.0, 100.0}, reference);
  EXPECT_FALSE(nan.passed);
  EXPECT_TRUE(std::isinf(nan.max_error));
  EXPECT_FALSE(compare_to_bounds({4.0}, reference).passed);
  EXPECT_EQ(sample_columns({0, 1, 2, 3, 4, 5, 6, 7}, 4, {{1, 2, 2}, {0, 1, 1}}),
            (std::vector<double>{1, 3, 0, 5, 7, 4}));
}

// --- records, verdict and tables ---------------------------------------------------------------

Record moe_row(const std::string& model, const std::string& format, int64_t tokens,
               const std::string& lib, double us, int64_t matrix_bytes = int64_t{64} << 20) {
  MoeCase c{moe_model(model), format == "bf16" ? std::nullopt : parse_weight_format(format), tokens,
            RoutingKind::uniform};
  MoeCall call;
  call.experts = moe_experts(c.model, Projection::up, c.quantized);
  call.tokens = tokens;
  call.top_k = c.model.top_k;
  call.mean_experts = static_cast<double>(matrix_bytes) / call.experts.expert_bytes;
  Record r = moe_record(c, call, lib, lib + "_function", "stream");
  r.us = us;
  r.add_check("", check(1e-3, 1e-2));
  return r;
}

TEST(MoeRecords, OneProjectionOfACaseWithTheTouchedExpertsBytes) {
  const MoeCase c{moe_model("qwen3-30b-a3b"), parse_weight_format("int4-g128"), 4,
                  RoutingKind::skewed};
  const MoeCall call = plan_moe_call(c, Projection::down);
  const Record r = moe_record(c, call, "xgemv", "xgemv_moe_down", "graph");
  EXPECT_EQ(r.suite, "moe");
  EXPECT_EQ(r.tag, "qwen3-30b-a3b.down.skewed");
  EXPECT_EQ(r.label(), "qwen3-30b-a3b.down.skewed bf16 int4-g128 nrhs 4");
  EXPECT_EQ(r.weight_format(), "int4-g128");
  EXPECT_EQ(r.nrhs, 4);
  EXPECT_EQ(r.gemvs, std::llround(call.mean_experts));
  EXPECT_EQ(r.matrix_bytes, call.touched_bytes());
  EXPECT_EQ(r.bytes, call.bytes());
  EXPECT_EQ(r.mode, "graph");
  const MoeCase bf16{moe_model("olmoe-1b-7b"), std::nullopt, 1, RoutingKind::uniform};
  EXPECT_EQ(moe_record(bf16, plan_moe_call(bf16, Projection::up), "ceiling", "", "stream").label(),
            "olmoe-1b-7b.up.uniform bf16");
}

std::vector<Record> moe_rows() {
  std::vector<Record> rows = {
      // bf16: 90% and 80% of the ceiling at T = 1 and 4, 78% at T = 64; 2x and 0.8x cuBLAS.
      moe_row("qwen3-30b-a3b", "bf16", 1, kCeiling, 9.0),
      moe_row("qwen3-30b-a3b", "bf16", 1, "xgemv", 10.0),
      moe_row("qwen3-30b-a3b", "bf16", 1, kCublasGemmEx, 20.0),
      moe_row("qwen3-30b-a3b", "bf16", 4, kCeiling, 8.0),
      moe_row("qwen3-30b-a3b", "bf16", 4, "xgemv", 10.0),
      moe_row("qwen3-30b-a3b", "bf16", 4, kCublasGemmEx, 8.0),
      moe_row("qwen3-30b-a3b", "bf16", 64, kCeiling, 7.8),
      moe_row("qwen3-30b-a3b", "bf16", 64, "xgemv", 10.0),
      // Too small for the share targets.
      moe_row("olmoe-1b-7b", "bf16", 1, kCeiling, 1.0, 4 << 20),
      moe_row("olmoe-1b-7b", "bf16", 1, "xgemv", 2.0, 4 << 20),
      // int4-g128: 95% at T = 1, over the bf16 case's cuBLAS (4x).
      moe_row("qwen3-30b-a3b", "int4-g128", 1, kCeiling, 4.75, 16 << 20),
      moe_row("qwen3-30b-a3b", "int4-g128", 1, "xgemv", 5.0, 16 << 20),
  };
  derive_metrics(rows);
  return rows;
}

TEST(MoeRecords, TheShareOfTheCeilingAndTheSpeedUpOverCublasPerExpert) {
  const std::vector<Record> rows = moe_rows();
  EXPECT_DOUBLE_EQ(*rows[1].pct_bound, 90.0);
  EXPECT_DOUBLE_EQ(*rows[1].speedup, 2.0);
  EXPECT_DOUBLE_EQ(*rows[4].speedup, 0.8);
  EXPECT_DOUBLE_EQ(*rows[11].pct_bound, 95.0);
  EXPECT_DOUBLE_EQ(*rows[11].speedup, 4.0);  // the bf16 experts' cuBLAS
  EXPECT_FALSE(rows[7].speedup);             // no cuBLAS row at T = 64
}

TEST(MoeRecords, TheVerdictPerFormatOnTheShareAndTheSpeedUp) {
  EXPECT_EQ(verdict_starting(moe_rows(), "moe verdict: "),
            "moe verdict: bf16 xgemv at >= 85% of the stream read of the touched experts' bytes "
            "for T = 1..16 on cases >= 8 MiB: NO (1/2, worst 80%: qwen3-30b-a3b.up.uniform bf16 "
            "nrhs 4); >= 75% at T = 32, 64: yes (1/1, worst 78%: qwen3-30b-a3b.up.uniform bf16 "
            "nrhs 64); speed-up vs cuBLAS GemmEx per expert (bf16) 1.26x geo-mean, worst 0.80x "
            "(qwen3-30b-a3b.up.uniform bf16 nrhs 4); int4-g128 xgemv at >= 85% of the stream read "
            "of the touched experts' bytes for T = 1..16 on cases >= 8 MiB: yes (1/1, worst 95%: "
            "qwen3-30b-a3b.up.uniform bf16 int4-g128); >= 75% at T = 32, 64: none in this run; "
            "speed-up vs cuBLAS GemmEx per expert (bf16) 4.00x geo-mean, worst 4.00x "
            "(qwen3-30b-a3b.up.uniform bf16 int4-g128)");
  std::vector<Record> failed = moe_rows();
  failed[4].status = "check failed";
  EXPECT_TRUE(contains(verdict_starting(failed, "moe verdict: "),
                       "; FAILED 1 row(s): qwen3-30b-a3b.up.uniform bf16 nrhs 4 xgemv "
                       "(check failed)"));
  EXPECT_EQ(verdict_starting(moe_rows(), "verdict: "), "");  // the shape suites' line
}

TEST(MoeRecords, TheTableHasARowPerCaseWithTheCeilingAndCublas) {
  std::ostringstream out;
  write_tables(out, moe_rows(), false);
  const std::string text = out.str();
  EXPECT_TRUE(contains(text, "\nMixture of experts: xgemv_moe_up (SwiGLU) and xgemv_moe_down"));
  EXPECT_TRUE(contains(text, "GEMVs"));
  EXPECT_TRUE(contains(text, "qwen3-30b-a3b.up.uniform bf16 nrhs 4"));
  EXPECT_TRUE(contains(text, "qwen3-30b-a3b.up.uniform bf16 int4-g128"));
  EXPECT_TRUE(contains(text, "xgemv_function"));
}

}  // namespace
}  // namespace xgemv::bench
