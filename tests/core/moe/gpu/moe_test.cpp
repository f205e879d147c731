// xgemv_moe_up and xgemv_moe_down on the GPU against the fp64 reference (moe_case.hpp): dense fp16
// and bf16 experts and every quantized format, every activation, expert biases, routing
// weights in fp32 and the activation type, int32 and int64 ids, accumulate, padded leading
// dimensions, odd shapes; k = 1..8 and T = 1..64; repeated ids, expert-parallel sentinels and
// tokens choosing none; one expert chosen by every token (passes of 8 pairs); blocks taking runs
// of output tiles; more pairs than one launch takes; then the bits: a token's outputs the same alone, in any batch and in any order,
// the same call twice the same, a CUDA graph the same as the eager call; NaN in one token's x
// only in its outputs.
#include <cstdint>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "moe_case.hpp"
#include "support/test_profile.hpp"

namespace xgemv_test::moe {
namespace {

using quant::kEveryFormat;

class Moe : public GpuHandlesTest {};

constexpr xgemv_moe_activation kActivations[] = {XGEMV_MOE_IDENTITY, XGEMV_MOE_SWIGLU,
                                                 XGEMV_MOE_SWIGLU_INTERLEAVED,
                                                 XGEMV_MOE_SWIGLU_CLAMPED};

MoeCase dense_case(bool down, xgemv_datatype type, int64_t outputs, int64_t inputs,
                   int64_t tokens, int64_t top_k) {
  MoeCase c;
  c.down = down;
  c.activation_type = type;
  c.outputs = outputs;
  c.inputs = inputs;
  c.tokens = tokens;
  c.top_k = top_k;
  return c;
}

TEST_F(Moe, UpOfDenseExpertsMatchesTheReference) {
  uint64_t seed = 1;
  for (const xgemv_datatype type : {XGEMV_R_16F, XGEMV_R_16BF})
    for (const xgemv_moe_activation activation : kActivations)
      // Rows of whole and partial tiles, inputs of whole and masked chunks.
      for (const auto &[outputs, inputs] : {std::pair<int64_t, int64_t>{64, 128}, {18, 72},
                                           {96, 520}, {2, 8}})
        for (const auto &[tokens, top_k] : {std::pair<int64_t, int64_t>{1, 1}, {1, 8}, {5, 2},
                                           {13, 4}}) {
          MoeCase c = dense_case(false, type, outputs, inputs, tokens, top_k);
          c.activation = activation;
          c.bias = seed % 2 == 0;
          c.ldx_padding = seed % 3 == 0 ? 5 : 0;
          c.ldy_padding = seed % 4 == 1 ? 3 : 0;
          c.id_type = seed % 5 == 0 ? XGEMV_R_64I : XGEMV_R_32I;
          c.seed = seed++;
          EXPECT_TRUE(runs_correctly(c, gpu().xgemv())) << describe(c);
        }
}

TEST_F(Moe, DownOfDenseExpertsMatchesTheReference) {
  uint64_t seed = 100;
  for (const xgemv_datatype type : {XGEMV_R_16F, XGEMV_R_16BF})
    for (const auto &[outputs, inputs] : {std::pair<int64_t, int64_t>{64, 64}, {40, 136},
                                         {3, 8}})
      for (const auto &[tokens, top_k] : {std::pair<int64_t, int64_t>{1, 1}, {1, 8}, {7, 3},
                                         {17, 8}})
        for (const bool accumulate : {false, true}) {
          MoeCase c = dense_case(true, type, outputs, inputs, tokens, top_k);
          c.accumulate = accumulate;
          c.bias = seed % 2 == 1;
          c.weight_type = seed % 3 == 0 ? type : XGEMV_R_32F;
          c.caller_workspace = seed % 4 != 0;
          c.ldx_padding = seed % 5 == 0 ? 9 : 0;
          c.ldy_padding = seed % 3 == 1 ? 4 : 0;
          c.seed = seed++;
          EXPECT_TRUE(runs_correctly(c, gpu().xgemv())) << describe(c);
        }
}

TEST_F(Moe, QuantizedExpertsMatchTheReference) {
  uint64_t seed = 200;
  for (const quant::FormatOptions &format : kEveryFormat) {
    if (format.permuted) continue;  // act-order experts are refused (moe_arguments_test)
    for (const bool down : {false, true})
      for (const auto &[tokens, top_k] : {std::pair<int64_t, int64_t>{1, 4}, {12, 2}}) {
        // Inputs every format takes; outputs in whole tiles of each half for a SwiGLU.
        MoeCase c = dense_case(down, seed % 2 ? XGEMV_R_16F : XGEMV_R_16BF, down ? 48 : 64,
                               format.format == XGEMV_QFORMAT_INT4 ? 256 : 200, tokens, top_k);
        c.format = format;
        c.scale_type = quant::kScaleTypes[seed % 3];
        c.activation = kActivations[seed % 4];
        c.bias = seed % 3 == 1;
        c.accumulate = down && seed % 2 == 0;
        c.seed = seed++;
        EXPECT_TRUE(runs_correctly(c, gpu().xgemv())) << describe(c);
      }
  }
}

TEST_F(Moe, RepeatsSentinelsAndTokensWithoutExperts) {
  uint64_t seed = 300;
  for (const bool down : {false, true})
    for (const bool accumulate : {false, true}) {
      if (accumulate && !down) continue;
      MoeCase c = dense_case(down, XGEMV_R_16BF, 32, 64, 6, 4);
      c.choice = Choice::repeats_and_sentinels;
      c.accumulate = accumulate;
      c.seed = seed++;
      EXPECT_TRUE(runs_correctly(c, gpu().xgemv())) << describe(c);
    }
}

TEST_F(Moe, OneExpertChosenByEveryToken) {
  // Up to 64 pairs on one expert: passes of 8 over its rows.
  uint64_t seed = 400;
  for (const int64_t tokens : {9, 17, 40, 64})
    for (const bool down : {false, true}) {
      MoeCase c = dense_case(down, XGEMV_R_16F, 48, 96, tokens, 2);
      c.choice = Choice::shared_expert;
      c.seed = seed++;
      EXPECT_TRUE(runs_correctly(c, gpu().xgemv())) << describe(c);
      c.format = quant::FormatOptions{XGEMV_QFORMAT_INT4, 64, 1, 0};
      c.inputs = 128;
      c.outputs = 64;
      EXPECT_TRUE(runs_correctly(c, gpu().xgemv())) << describe(c);
    }
}

TEST_F(Moe, BlocksTakeRunsOfOutputTiles) {
  // 250 dense tiles (125 quantized) on 64 chosen experts: several rounds of any device's
  // resident blocks, so each block takes a run of tiles, the last run shorter.
  uint64_t seed = 450;
  for (const bool down : {false, true})
    for (const bool quantized : {false, true}) {
      MoeCase c = dense_case(down, XGEMV_R_16BF, down ? 4000 : 8000, quantized ? 128 : 64, 16, 8);
      c.experts = 64;
      c.activation = down ? XGEMV_MOE_IDENTITY : XGEMV_MOE_SWIGLU;
      c.accumulate = down && quantized;
      if (quantized) c.format = quant::FormatOptions{XGEMV_QFORMAT_INT4, 64, 1, 0};
      c.seed = seed++;
      EXPECT_TRUE(runs_correctly(c, gpu().xgemv())) << describe(c);
    }
}

TEST_F(Moe, MoreTokensThanOneLaunchTakes) {
  // 1600 pairs (a launch decodes 1024); down in the handle's workspace, 64 tokens a launch.
  MoeCase up = dense_case(false, XGEMV_R_16BF, 32, 64, by_profile<int64_t>(200, 140), 8);
  up.experts = 64;
  EXPECT_TRUE(runs_correctly(up, gpu().xgemv())) << describe(up);
  MoeCase down = dense_case(true, XGEMV_R_16BF, 4096, 16, 100, 8);
  down.caller_workspace = false;
  EXPECT_TRUE(runs_correctly(down, gpu().xgemv())) << describe(down);
}

// The bytes of row `row` of y after `call`.
std::vector<uint8_t> row_of(const std::vector<uint8_t> &y, const MoeCase &c, int64_t row) {
  const size_t bytes = c.y_length() * quant::datatype_bytes(c.activation_type);
  const size_t at = size_t(row * c.ldy()) * quant::datatype_bytes(c.activation_type);
  return {y.begin() + long(at), y.begin() + long(at + bytes)};
}

TEST_F(Moe, TokensBitsDoNotDependOnTheBatch) {
  uint64_t seed = 500;
  for (const bool quantized : {false, true})
    for (const bool down : {false, true}) {
      MoeCase c = dense_case(down, XGEMV_R_16BF, 64, 256, 24, 4);
      if (quantized) c.format = quant::FormatOptions{XGEMV_QFORMAT_INT4, 128, 0, 0};
      c.seed = seed++;
      MoeSetup setup(c);
      ASSERT_EQ(setup.status(), XGEMV_STATUS_SUCCESS);
      const MoeCall batch(setup, c, make_routing(c, setup.random()));
      ASSERT_EQ(batch.launch(gpu().xgemv()), XGEMV_STATUS_SUCCESS);
      const std::vector<uint8_t> batch_y = batch.y_after();
      // The batch reversed, and each of a few tokens alone (T = 1: other kernel instances).
      MoeCase reversed_case = c;
      Routing reversed = batch.routing();
      std::vector<double> reversed_x(batch.x().size());
      const int64_t rows_per_token = down ? c.top_k : 1;
      for (int64_t t = 0; t < c.tokens; ++t) {
        const int64_t from = c.tokens - 1 - t;
        for (int64_t j = 0; j < c.top_k; ++j) {
          reversed.ids[size_t(t * c.top_k + j)] = batch.routing().ids[size_t(from * c.top_k + j)];
          reversed.weights[size_t(t * c.top_k + j)] =
              batch.routing().weights[size_t(from * c.top_k + j)];
        }
        std::copy_n(batch.x().begin() + long(from * rows_per_token * c.ldx()),
                    rows_per_token * c.ldx(), reversed_x.begin() + long(t * rows_per_token * c.ldx()));
      }
      const MoeCall reversed_call(setup, reversed_case, reversed, reversed_x);
      ASSERT_EQ(reversed_call.launch(gpu().xgemv()), XGEMV_STATUS_SUCCESS);
      const std::vector<uint8_t> reversed_y = reversed_call.y_after();
      const int64_t out_rows_per_token = down ? 1 : c.top_k;
      for (int64_t t = 0; t < c.tokens; ++t)
        for (int64_t r = 0; r < out_rows_per_token; ++r)
          EXPECT_EQ(row_of(batch_y, c, t * out_rows_per_token + r),
                    row_of(reversed_y, c, (c.tokens - 1 - t) * out_rows_per_token + r))
              << describe(c) << ": token " << t << " reversed";
      for (const int64_t t : {int64_t(0), int64_t(7), c.tokens - 1}) {
        MoeCase alone_case = c;
        alone_case.tokens = 1;
        Routing alone{1, c.top_k,
                      {batch.routing().ids.begin() + long(t * c.top_k),
                       batch.routing().ids.begin() + long((t + 1) * c.top_k)},
                      {batch.routing().weights.begin() + long(t * c.top_k),
                       batch.routing().weights.begin() + long((t + 1) * c.top_k)}};
        const std::vector<double> alone_x(
            batch.x().begin() + long(t * rows_per_token * c.ldx()),
            batch.x().begin() + long((t + 1) * rows_per_token * c.ldx()));
        const MoeCall alone_call(setup, alone_case, alone, alone_x);
        ASSERT_EQ(alone_call.launch(gpu().xgemv()), XGEMV_STATUS_SUCCESS);
        const std::vector<uint8_t> alone_y = alone_call.y_after();
        for (int64_t r = 0; r < out_rows_per_token; ++r)
          EXPECT_EQ(row_of(batch_y, c, t * out_rows_per_token + r), row_of(alone_y, alone_case, r))
              << describe(c) << ": token " << t << " alone";
      }
    }
}

TEST_F(Moe, RepeatedCallsAndCudaGraphsGiveTheSameBits) {
  uint64_t seed = 600;
  for (const bool down : {false, true}) {
    MoeCase c = dense_case(down, XGEMV_R_16F, 128, 384, 6, 8);
    c.seed = seed++;
    MoeSetup setup(c);
    ASSERT_EQ(setup.status(), XGEMV_STATUS_SUCCESS);
    MoeCall call(setup, c, make_routing(c, setup.random()));
    ASSERT_EQ(call.launch(gpu().xgemv()), XGEMV_STATUS_SUCCESS);
    const std::vector<uint8_t> first = call.y_after();
    EXPECT_TRUE(matches_reference(setup, call, first)) << describe(c);
    call.reset_y();
    ASSERT_EQ(call.launch(gpu().xgemv()), XGEMV_STATUS_SUCCESS);
    EXPECT_EQ(call.y_after(), first) << describe(c) << ": a second call";

    cudaStream_t stream = nullptr;
    check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
    ASSERT_EQ(xgemv_set_stream(gpu().xgemv(), stream), XGEMV_STATUS_SUCCESS);
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    check_cuda(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "capture");
    const xgemv_status captured = call.launch(gpu().xgemv());
    check_cuda(cudaStreamEndCapture(stream, &graph), "end capture");
    ASSERT_EQ(captured, XGEMV_STATUS_SUCCESS);
    check_cuda(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
    call.reset_y();
    for (int replay = 0; replay < 3; ++replay) check_cuda(cudaGraphLaunch(exec, stream), "replay");
    check_cuda(cudaStreamSynchronize(stream), "replays");
    EXPECT_EQ(call.y_after(), first) << describe(c) << ": graph replays";
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    xgemv_set_stream(gpu().xgemv(), nullptr);
    cudaStreamDestroy(stream);
  }
}

TEST_F(Moe, NanInOneTokenStaysInItsOutputs) {
  for (const bool down : {false, true}) {
    MoeCase c = dense_case(down, XGEMV_R_16BF, 32, 64, 5, 2);
    c.activation = XGEMV_MOE_IDENTITY;
    MoeSetup setup(c);
    ASSERT_EQ(setup.status(), XGEMV_STATUS_SUCCESS);
    std::vector<double> x =
        random_values(setup.random(), size_t(c.x_rows() * c.ldx()), c.activation_type);
    x[size_t(2 * (down ? c.top_k : 1) * c.ldx() + 3)] = std::nan("");  // token 2
    const MoeCall call(setup, c, make_routing(c, setup.random()), x);
    ASSERT_EQ(call.launch(gpu().xgemv()), XGEMV_STATUS_SUCCESS);
    const std::vector<uint8_t> y = call.y_after();
    EXPECT_TRUE(matches_reference(setup, call, y)) << describe(c);
  }
}

TEST_F(Moe, TheHandlesChecksComeAfterTheArguments) {
  MoeCase c = dense_case(false, XGEMV_R_16BF, 16, 32, 2, 2);
  MoeSetup setup(c);
  ASSERT_EQ(setup.status(), XGEMV_STATUS_SUCCESS);
  GuardedDeviceBuffer<uint8_t> x(256), h(256);
  const xgemv_moe_routing no_ids{2, 2, nullptr, XGEMV_R_32I, nullptr, XGEMV_R_32F};
  EXPECT_EQ(xgemv_moe_up(gpu().xgemv(), setup.experts(), &no_ids, XGEMV_MOE_SWIGLU, 0, 0,
                         nullptr, x.data(), 32, h.data(), 8),
            XGEMV_STATUS_NULL_POINTER);
  EXPECT_EQ(xgemv_moe_up(nullptr, setup.experts(), &no_ids, XGEMV_MOE_SWIGLU, 0, 0, nullptr,
                         x.data(), 32, h.data(), 8),
            XGEMV_STATUS_INVALID_HANDLE);
  const xgemv_moe_routing none{0, 2, nullptr, XGEMV_R_32I, nullptr, XGEMV_R_32F};
  EXPECT_EQ(xgemv_moe_up(gpu().xgemv(), setup.experts(), &none, XGEMV_MOE_SWIGLU, 0, 0, nullptr,
                         x.data(), 32, h.data(), 8),
            XGEMV_STATUS_SUCCESS);  // no tokens: a quick return
  EXPECT_TRUE(h.guards_intact("h"));
  EXPECT_EQ(h.download(), std::vector<uint8_t>(256, kGuardByte)) << "nothing written";
}

}  // namespace
}  // namespace xgemv_test::moe
