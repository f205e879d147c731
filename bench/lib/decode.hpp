// The published decoder configurations (the llm suite's shapes, the decode suite's steps, the
// tensor-parallel steps of xgemv-nccl-bench) and the decode suite's plan, without a GPU: one
// decode step of a model at batch 1 as one CUDA graph of every layer's GEMVs (qkv, o, gate_up,
// down) and the LM head, each GEMV with weights of its own; the layers that fit the memory budget
// and where every operand lies in the step's buffers. See bench/README.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "case.hpp"
#include "record.hpp"

namespace xgemv::bench {

struct Options;

// The suite runs fp16 and bf16, so a plan's bytes hold for both.
inline constexpr int64_t kDecodeElementBytes = 2;
inline constexpr Dtype kDecodeDtypes[] = {Dtype::bf16, Dtype::fp16};
// Default budget for a step's weights: an H200 (~139 GiB) keeps most of its memory free and the
// run stays short; larger models run their first layers.
inline constexpr double kDefaultStepGib = 24;
// Every matrix and vector starts on this boundary in the step's buffers, as a framework's
// allocator places them.
inline constexpr int64_t kDecodeAlignment = 256;

struct DecodeModel {
  std::string name;  // used in --model and in tags: llama3-8b
  int64_t hidden = 0, layers = 0, query_heads = 0, kv_heads = 0, head_dim = 0, intermediate = 0,
          vocabulary = 0;
};
// Every model, by hidden size (the shape suites' and --model's); the decode suite's six, one of
// each size from 1B to 405B, in the same order.
const std::vector<DecodeModel>& models();
const std::vector<DecodeModel>& decode_models();
const DecodeModel* find_decode_model(const std::string& name);

// One GEMV of a step: y = W x with W row-major out x in, which is BLAS op T with m = in,
// n = out, lda = in. With nrhs vectors (--nrhs), X and Y are column-major with nrhs columns,
// ldx = in, ldy = out.
struct DecodeGemv {
  std::string tag;  // "L0.qkv" ... "L31.down", "lm_head"
  int64_t in = 0, out = 0;
  // Byte offsets: W in the weight buffer, X in the x buffer (one X per input width, shared by
  // the GEMVs of that width), Y in the y buffer (one Y per GEMV, so one replay leaves every
  // output to check).
  int64_t weight_offset = 0, x_offset = 0, y_offset = 0;
  int64_t nrhs = 1;  // the step's

  int64_t weight_bytes() const { return in * out * kDecodeElementBytes; }
  // What the GEMV moves: W once, X and Y once each, as Case::bytes().
  int64_t bytes() const { return (in * out + nrhs * (in + out)) * kDecodeElementBytes; }
};

// The four GEMVs of one layer of `model`, tagged `prefix` + qkv, o, gate_up, down; offsets unset.
std::vector<DecodeGemv> layer_gemvs(const DecodeModel& model, const std::string& prefix);

// A decode step as run: the model's first `layers` layers, then the LM head, on nrhs vectors.
struct DecodeStep {
  DecodeModel model;
  int64_t layers = 0;
  int64_t nrhs = 1;
  std::vector<DecodeGemv> gemvs;  // layer by layer (qkv, o, gate_up, down), then lm_head
  int64_t weight_buffer_bytes = 0, x_buffer_bytes = 0, y_buffer_bytes = 0;

  int64_t weight_bytes() const;  // the matrices, without alignment gaps
  int64_t bytes() const;         // what the step's GEMVs move, the sum of DecodeGemv::bytes()
  int64_t largest_output() const;
};

// The step of `model` on `nrhs` vectors with as many of its layers as fit `budget_bytes` of
// weight buffer together with the LM head (the vectors are not counted: the layers are the same
// for every nrhs). Throws std::invalid_argument when not even one layer fits.
DecodeStep plan_decode_step(const DecodeModel& model, int64_t budget_bytes, int64_t nrhs = 1);

// The steps --model (default: every model), --step-gib and --nrhs ask for (model by model, each
// at every nrhs), and the dtypes --dtype asks for (default bf16, fp16). Throw
// std::invalid_argument.
std::vector<DecodeStep> plan_decode_steps(const Options& options);
std::vector<Dtype> decode_dtypes(const Options& options);
// "llama3-70b: 13 of 80 layers + LM head, 53 GEMVs, 24.35 GB per step" ("llama3-70b, nrhs 4: ...").
std::string describe_step(const DecodeStep& step);

// One GEMV as a bench case (suite decode, tag "<model>.<gemv tag>", op T, alpha 1, beta 0, the
// step's nrhs): its tolerance and reference follow the bench's checks.
Case decode_gemv_case(const DecodeStep& step, const DecodeGemv& gemv, Dtype dtype);
// The record of a step (suite decode, its model as the tag), nothing measured yet.
Record step_record(const DecodeStep& step, Dtype dtype, std::string lib, std::string function);

// The rows of a step besides the libraries' (Options::runs_row): the two reads bound the step
// from below, one read kernel over all its weights (kOneRead) and one read kernel per GEMV matrix
// in one graph, the step's launches without its arithmetic.
inline constexpr const char* kPerGemvReads = "per-gemv-reads";
inline constexpr const char* kXgemvEarlyStart = "xgemv-early-start";

}  // namespace xgemv::bench
