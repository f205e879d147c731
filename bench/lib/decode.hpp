// The decode suite: one decode step of a published decoder configuration at batch 1, captured
// as one CUDA graph of every layer's GEMVs (qkv, o, gate_up, down) and the LM head, each GEMV
// with weights of its own. This part needs no GPU: the models, the plan of a step (its GEMVs,
// the layers that fit the memory budget, where every operand lies in the step's buffers), the
// timing plan, the rows a step gives and the metrics derived from them. See bench/README.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "case.hpp"
#include "check.hpp"

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
  int64_t hidden = 0, layers = 0, query_heads = 0, kv_heads = 0, head_dim = 0,
          intermediate = 0, vocabulary = 0;
};
// Published configurations, by hidden size.
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

// The four GEMVs of layer `layer` of `model`, offsets unset.
std::vector<DecodeGemv> layer_gemvs(const DecodeModel& model, int64_t layer);

// The step of `model` on `nrhs` vectors with as many of its layers as fit `budget_bytes` of
// weight buffer together with the LM head (the vectors are not counted: the layers are the same
// for every nrhs). Throws std::invalid_argument when not even one layer fits.
DecodeStep plan_decode_step(const DecodeModel& model, int64_t budget_bytes, int64_t nrhs = 1);

// The steps --model (default: every model), --step-gib and --nrhs ask for (model by model, each
// at every nrhs), and the dtypes --dtype asks for (default bf16, fp16). Throw
// std::invalid_argument.
std::vector<DecodeStep> plan_decode_steps(const Options& options);
std::vector<Dtype> decode_dtypes(const Options& options);

// One GEMV as a bench case (suite decode, tag "<model>.<gemv tag>", op T, alpha 1, beta 0, the
// step's nrhs): its tolerance and reference follow the bench's checks.
Case decode_gemv_case(const DecodeStep& step, const DecodeGemv& gemv, Dtype dtype);

struct DecodeTimingPlan {
  int warmup_replays = 0;
  int replays = 0;  // the median is over these, >= 15
};
DecodeTimingPlan plan_decode_timing(bool quick);

// The rows of a step, in the order they run. The two reads bound the step from below: one read
// kernel over all its weights, and one read kernel per GEMV matrix in one graph (the step's
// launches without its arithmetic). The one-vector rows run at nrhs 1; with --nrhs, xgemv-nrhs
// (xgemv_?gemv_nrhs) runs at every nrhs after the two xgemv rows, and cublas-gemmex with the
// step's nrhs columns (Options::runs_row).
inline constexpr const char* kOneRead = "one-read";
inline constexpr const char* kPerGemvReads = "per-gemv-reads";
inline constexpr const char* kXgemvEarlyStart = "xgemv-early-start";
inline const std::vector<std::string> kDecodeLibraries = {
    kOneRead, kPerGemvReads, "xgemv", kXgemvEarlyStart, "cublas", "cublas-gemmex"};

struct DecodeRow {
  DecodeRow() = default;
  DecodeRow(const DecodeStep& step, Dtype step_dtype, std::string library_name,
            std::string entry_point);

  std::string model;
  Dtype dtype = Dtype::bf16;
  int64_t nrhs = 1;
  int64_t layers = 0, model_layers = 0, gemvs = 0, weight_bytes = 0, bytes = 0;
  std::string library;   // one of kDecodeLibraries, or xgemv-nrhs
  std::string function;  // what the graph calls, e.g. cublasGemmEx, xgemv_bf16gemv/<variants>
  std::string status = "ok";  // ok | check failed | error: ... | skipped: ...
  int kernels = 0;  // kernel nodes of the captured graph
  int replays = 0;  // timed
  std::optional<double> ms;  // median per replay: one decode step
  // The check of every GEMV after one replay: how many failed, and the GEMV whose error is the
  // largest share of its tolerance.
  int checked_gemvs = 0, failed_gemvs = 0;
  std::optional<double> max_error, tolerance;
  std::string worst_gemv;
  int sm_clock_mhz = 0;  // sampled after the step's rows
  // Filled by derive_decode_metrics().
  std::optional<double> gbps, pct_one_read, speedup_vs_cublas;

  bool is_read() const { return library == kOneRead || library == kPerGemvReads; }
  bool is_cublas() const { return library.rfind("cublas", 0) == 0; }
  bool is_xgemv() const { return library.rfind("xgemv", 0) == 0; }
  bool failed() const { return status == "check failed" || status.rfind("error", 0) == 0; }
};

// Folds the check of one GEMV into its library's row; a failed GEMV fails the row.
void add_gemv_check(DecodeRow& row, const std::string& gemv_tag, const CheckResult& check);

// Per step (model, dtype and nrhs): GB/s of every timed row (the step's bytes over its time); the
// one-read time as a share of every other row's (one-read ms / row ms * 100); for the libraries
// the speed-up over the faster of cuBLAS gemv and GemmEx (its ms / the row's ms).
void derive_decode_metrics(std::vector<DecodeRow>& rows);

}  // namespace xgemv::bench
