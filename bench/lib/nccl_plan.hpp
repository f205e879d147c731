// xgemv-nccl-bench's plan, without a GPU: the GPU counts it runs, the GEMVs split over ranks
// (xgemv_nccl.h: the whole problem, its layout, what each rank holds and passes), where a rank's
// operands lie in its buffers, the expected output of every rank from the ranks' local fp64
// references, the bandwidth cases, the tensor-parallel decode steps and the small exchanges.
// See bench/README.md (Several GPUs).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "case.hpp"
#include "decode.hpp"
#include "record.hpp"

namespace xgemv::bench {

// P = 1, 2, 4, ... while <= gpus, and gpus itself when it is not a power of two.
std::vector<int> gpu_counts(int gpus);

// The two layouts of xgemv_nccl.h and what every rank ends with.
enum class Split { outputs, reduction };
enum class Result { own_block, all };
// "outputs/own-block", "reduction/all".
std::string layout_name(Split split, Result result);

// One GEMV split over the ranks: y = op(A) x (alpha 1, beta 0) with A the whole BLAS m x n
// matrix, column-major. Decode GEMVs are op T with m = in_features, n = out_features.
struct SplitGemv {
  std::string tag;  // "L0.qkv", "llama3-70b.down"; empty for a bandwidth case
  Dtype dtype = Dtype::bf16;
  char op = 'T';
  int64_t m = 0, n = 0;
  Split split = Split::outputs;
  Result result = Result::own_block;

  int64_t outputs() const { return op == 'T' ? n : m; }
  int64_t reduction() const { return op == 'T' ? m : n; }
  // The axis the starts cut: outputs (rows of op(A)) or the reduction (its columns).
  int64_t split_length() const { return split == Split::outputs ? outputs() : reduction(); }
  // The whole problem as a bench case: its bytes and tolerance.
  Case whole_case() const;
  // "bf16 T 32768x16384 outputs/own-block", with the tag after it when there is one.
  std::string label() const;
};

// starts[0..ranks]: the split axis cut into `ranks` blocks whose sizes differ by at most one.
std::vector<int64_t> even_starts(int64_t length, int ranks);

// What one rank holds and passes to xgemv_nccl_?gemv for a split GEMV (xgemv_nccl.h).
struct RankBlock {
  int64_t rows = 0, columns = 0, lda = 1;  // its A, column-major
  int64_t x_length = 0;        // the whole x (outputs split) or its block of x (reduction split)
  int64_t partial_length = 0;  // outputs it computes itself: its block, or all (reduction split)
  int64_t y_first = 0, y_length = 0;  // the part of the whole y it ends with (its y argument)

  int64_t a_elements() const { return rows * columns; }
};
RankBlock rank_block(const SplitGemv& gemv, const std::vector<int64_t>& starts, int rank);

// The whole y from the ranks' local fp64 references (partials[r]: rank r's op(A_r) x_r, of its
// partial_length): the blocks side by side for the outputs split, their sum in rank order for the
// reduction split.
std::vector<double> combine_partials(const SplitGemv& gemv, const std::vector<int64_t>& starts,
                                     const std::vector<std::vector<double>>& partials);
// What rank `rank` must end with: its y_first .. y_first + y_length of the whole y.
std::vector<double> expected_output(const SplitGemv& gemv, const std::vector<int64_t>& starts,
                                    int rank, const std::vector<double>& whole_y);

// Where a rank's operands of a list of split GEMVs lie in its three buffers (weights, x, y), each
// 256-byte aligned: a matrix per GEMV, one x per input (the whole x of a width is shared by the
// GEMVs split along their outputs; a block of x by those split along the reduction), a y per GEMV.
struct RankGemv {
  std::vector<int64_t> starts;  // the same on every rank
  RankBlock block;
  int64_t weight_offset = 0, x_offset = 0, y_offset = 0;  // bytes
};
struct RankPlan {
  std::vector<RankGemv> gemvs;
  int64_t weight_buffer_bytes = 0, x_buffer_bytes = 0, y_buffer_bytes = 0;
  int64_t largest_partial = 0;  // elements: the fp64 reference buffer
};
RankPlan plan_rank(const std::vector<SplitGemv>& gemvs, int ranks, int rank);

// --- the three parts -------------------------------------------------------------------------

inline constexpr const char* kPartBandwidth = "bandwidth";
inline constexpr const char* kPartDecode = "decode";
inline constexpr const char* kPartExchange = "exchange";
inline const std::vector<std::string> kNcclParts = {kPartBandwidth, kPartDecode, kPartExchange};

// 1. Bandwidth: matrices of 1, 2, 4 and 8 GiB (quick: 1 GiB) of each dtype, op N and T, every
// layout (quick: outputs/own-block and reduction/all); m x n both powers of two, m >= n.
inline constexpr int64_t kLargeSplitBytes = int64_t{1} << 30;
std::vector<SplitGemv> bandwidth_cases(const std::vector<Dtype>& dtypes, bool quick);

// 2. Tensor-parallel decode: every layer's GEMVs split Megatron-style, bf16 op T: qkv and gate_up
// along their outputs (each rank keeps its block of heads / of the intermediate), o and down along
// the reduction with the whole result on every rank (the all-reduce of a tensor-parallel layer).
inline const std::vector<std::string> kTensorParallelModels = {"llama3-70b", "llama3.1-405b"};
struct TensorParallelStep {
  DecodeModel model;
  int64_t layers = 0;       // the model's first layers: as many as the budget holds (0: not one)
  int64_t layer_bytes = 0;  // one layer's weights on one GPU, each matrix aligned
  std::vector<SplitGemv> gemvs;  // layer by layer: qkv, o, gate_up, down

  int64_t weight_bytes() const;  // the matrices
  int64_t bytes() const;         // what the step moves: every GEMV's A, x and y once
};
std::vector<SplitGemv> tensor_parallel_layer(const DecodeModel& model, int64_t layer);
// The layers of `model` whose weights fit `budget_bytes` on one GPU.
TensorParallelStep plan_tensor_parallel_step(const DecodeModel& model, int64_t budget_bytes);
// Decode budget: GPU 0's free memory less this, unless --decode-gib says; --quick caps it.
inline constexpr int64_t kDecodeMemoryMargin = int64_t{4} << 30;
inline constexpr int64_t kQuickDecodeBudget = int64_t{8} << 30;

// 3. Small exchanges: ncclAllReduce (sum) and ncclAllGather of fp32 and bf16 at 16, 32 and 64 KB
// (bytes: each rank's input; an all-gather's output is P times that), and beside them the
// decode-size split GEMV whose exchange has that size: the down projection of the model whose
// hidden size in fp32 partial sums is those bytes (llama3-8b, llama3-70b, llama3.1-405b), bf16,
// reduction split, whole result.
inline constexpr int64_t kExchangeBytes[] = {16 << 10, 32 << 10, 64 << 10};
inline constexpr const char* kAllReduce = "ncclAllReduce";
inline constexpr const char* kAllGather = "ncclAllGather";
struct ExchangeCase {
  std::string collective;  // kAllReduce or kAllGather
  Dtype dtype = Dtype::fp32;
  int64_t bytes = 0;
  int64_t count() const { return bytes / element_size(dtype); }  // each rank's input elements
  std::string label() const;                                     // "ncclAllGather 32 KB fp32"
};
std::vector<ExchangeCase> exchange_cases();
SplitGemv exchange_share_gemv(int64_t exchange_bytes);

// Back-to-back collectives timed together in one repetition (plan_batches(): the repetitions).
inline int exchanges_per_repetition(bool quick) { return quick ? 10 : 20; }

// The records of the parts (suite "nccl-" + the part) as the ranks fill them, nothing measured:
// xgemv-nccl (xgemv_nccl_?gemv on every rank) for a split GEMV or a tensor-parallel step, nccl
// for a collective, and the one-GPU stream read of `bytes_read` beside a split GEMV's record.
inline constexpr const char* kXgemvNccl = "xgemv-nccl";
inline constexpr const char* kNcclLibrary = "nccl";
std::string nccl_gemv_function(Dtype dtype);  // xgemv_nccl_sgemv, _dgemv, _hgemv, _bf16gemv
Record split_record(const std::string& part, const SplitGemv& gemv);
Record tensor_parallel_record(const TensorParallelStep& step);
Record exchange_record(const ExchangeCase& exchange);
Record ceiling_record(const Record& of, int64_t bytes_read);

}  // namespace xgemv::bench
