#!/usr/bin/env bash
# The measurements of this folder's candidates (../NOTES.md says what each is, its prediction
# and its rule), in phases that each fit one call of the GPU machine, from the repository root
# after `bash tests/gpu-suite.sh` has built build-gpu:
#
#   bash bench/results/h200-2026-12-05/candidates/measure.sh PHASE [CANDIDATE...]
#
#   build   builds each candidate's libxgemv alone (the tree with its patch applied), all at once
#   test    runs the core GPU tests of build-gpu against each candidate's library (the dense
#           kernels, several vectors, bias, early start and graphs, quantized weights: every
#           user of the split combine)
#   single  A/B, one vector: anchors and llm suites, ops N and T, the op N, combine, group
#           and ring candidates
#   fp32    A/B, several fp32 vectors, op T (op N's half of fma-x-stage is merged): fma-x-stage,
#           fma-ring, fma-ring-16
#   groups  A/B of a group candidate (thin-chained-loads, chained-loads; grid-fill,
#           thin-wave-groups) on llm, llm-small, ad-hoc shapes of SmolLM-135M and -360M, held-out
#           shapes of small models no group rule was fitted on (Qwen3-0.6B, Gemma-3-270M and -1B,
#           GPT-2, Pythia-410M, TinyLlama) and the small models' decode steps, and the forced
#           row-block groups on main's library
#   probe-n main's library only: each op N design for long columns forced (n_rowtile_32,
#           n_rowtile_8, n_mma_16) beside the automatic choice and cuBLAS, 16-bit
#           op N of the anchors and llm suites, where 32-48 MiB matrices read at 76-88% of the
#           stream (op T: 96-101%); no candidate needed
#   probe-split main's library only: n_rowtile_8 forced on 16-bit op N shapes of 32 and 128 MiB
#           whose plans differ in splits (8, 4, 2, 1) and blocks (256-528) at the same bytes;
#           4096 x 4096 and 32768 x 512 both run 512 blocks of 512 columns, split 8 ways and
#           unsplit: what a split's combine costs, apart from the blocks' length and count
#   probe-alias main's library only: n_rowtile_8 forced on bf16 op N shapes split 8, 4, 2 and 1
#           ways (504-512 blocks of 512 columns), each with lda a power of two and one 64-row
#           tile less (lda 8064-65408 bytes): whether a split call's loss (15 points of the
#           stream read at 8 splits, 2 at 2, probe-split) follows the splits or the columns'
#           power-of-two spacing
#   probe-ring the ring-sweep candidate's n_ring_8 forced, and main's n_rowtile_8 forced, on
#           the probe-split shapes and the llm suite's 16-bit op N: the design apart from the
#           dispatch rule that gives it calls
#   profile-n main's library only: Nsight Compute on one launch each of xgemv's and cuBLAS's
#           16-bit op N 4096 x 4096 (xgemv at 84-85% of the stream read, cuBLAS 89-90%, every
#           forced design of xgemv 82-85%) and, to contrast, xgemv's op T of the same shape
#           (101%): grid, occupancy, DRAM throughput, L2 traffic, warp stalls
#
# Every candidate of this folder is decided (../../h100-2026-12-05/NOTES.md): deep-combine,
# shifted-columns and release-combine met their rules and are merged; thin-wave-groups,
# cluster-combine, grid-fill and fma-x-stage's op T half were refuted; chained-loads and
# thin-chained-loads each missed by one case; ring-sweep and fma-ring (which contains
# ring-sweep) were refuted; fma-ring-16 missed its 12-vector clause, was merged all the same
# (../NOTES.md, last section). Name the candidates to measure again (each patch applies to the tree
# it was written against). Builds go to build-candidates/<candidate>/ (ignored by git, so they
# stay between calls on a warm machine), results to $OUT/candidates/ when OUT is set (else
# build-candidates/results/). Exit status: that of the last step that failed, else 0.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
here=bench/results/h200-2026-12-05/candidates
phase=${1:-}
shift || true
candidates=("$@")
[[ -z $phase || $phase == probe-* || $phase == profile-* ]] || ((${#candidates[@]})) || {
  echo "measure.sh: name the candidates (patches of this folder) for phase '$phase'" >&2
  exit 2
}
base=build-gpu
bench=$base/bench/xgemv-bench
results=${OUT:+$OUT/candidates}
results=${results:-build-candidates/results}
mkdir -p "$results"
status=0
note() { echo "measure.sh: $*" | tee -a "$results/measure.log"; }
fail() { note "$*"; status=1; }
lib_of() { echo "build-candidates/$1/tree/build/src"; }

build_one() {
  local c=$1 jobs=$2 dir=build-candidates/$1
  rm -rf "$dir" && mkdir -p "$dir/tree" &&
    cp -r CMakeLists.txt cmake include src docs README.md tests "$dir/tree/" &&
    patch -d "$dir/tree" -p1 -s < "$here/$c.patch" &&
    cmake -S "$dir/tree" -B "$dir/tree/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DBUILD_TESTING=OFF -DXGEMV_BUILD_INTERFACES=OFF -DXGEMV_BUILD_BENCH=OFF &&
    cmake --build "$dir/tree/build" --target xgemv -j "$jobs"
}

case $phase in
  build)
    jobs=$(( $(nproc) / ${#candidates[@]} ))
    ((jobs > 0)) || jobs=1
    for c in "${candidates[@]}"; do
      build_one "$c" "$jobs" > "$results/build-$c.log" 2>&1 &
    done
    for c in "${candidates[@]}"; do
      wait -n || true
    done
    for c in "${candidates[@]}"; do
      if [[ -e $(lib_of "$c")/libxgemv.so.0 ]]; then note "built $c"; else
        fail "$c did not build ($results/build-$c.log)"; fi
    done
    ;;
  test)
    for c in "${candidates[@]}"; do
      [[ -e $(lib_of "$c")/libxgemv.so.0 ]] || { fail "$c: not built"; continue; }
      for path in gpu_correctness gpu_variants gpu_bias gpu_nrhs gpu_launch_order \
        quant/gpu_qgemv quant/gpu_qgemv_variants; do
        t=${path#*/}
        LD_LIBRARY_PATH=$(lib_of "$c") "$base/tests/core/$path" --gtest_brief=1 \
          > "$results/test-$c-$t.log" 2>&1
        case $? in
          0) note "$c $t: passed ($(grep -m1 -E '^\[  PASSED  \]' "$results/test-$c-$t.log"))" ;;
          77) note "$c $t: skipped (no GPU)" ;;
          *) fail "$c $t: FAILED ($results/test-$c-$t.log)" ;;
        esac
      done
      LD_LIBRARY_PATH=$(lib_of "$c") ldd "$base/tests/core/gpu_correctness" | grep libxgemv \
        >> "$results/test-$c-ldd.txt"
    done
    ;;
  single | fp32 | groups)
    libs=()
    for c in "${candidates[@]}"; do
      case $phase:$c in
        single:deep-combine | single:shifted-columns | single:cluster-combine | \
          single:thin-wave-groups | single:grid-fill | single:chained-loads | \
          single:thin-chained-loads | single:release-combine | single:ring-sweep | \
          fp32:fma-x-stage | fp32:fma-ring | fp32:fma-ring-16 | \
          groups:thin-wave-groups | groups:grid-fill | groups:chained-loads | \
          groups:thin-chained-loads)
          [[ -e $(lib_of "$c")/libxgemv.so.0 ]] && libs+=("$(lib_of "$c")") ||
            fail "$c: not built"
          ;;
      esac
    done
    ((${#libs[@]})) || note "$phase: none of the candidates given is measured in this phase"
    ab() { bash bench/ab.sh --bench "$bench" --out "$results/$1" "$base/src" "${libs[@]}" -- \
      "${@:2}" || fail "ab.sh $1 exited $?"; }
    case $phase in
      single)
        ((${#libs[@]})) && ab single --suite anchors,llm --op N,T --lib xgemv --quick ;;
      fp32)
        ((${#libs[@]})) && ab fp32 --suite llm --op T --dtype fp32 --nrhs 1,2,4,8,12,16 \
          --lib xgemv,cublas-gemm --quick ;;
      groups)
        if ((${#libs[@]})); then
          ab groups --suite llm,llm-small --dtype bf16,fp32 --lib xgemv --quick
          # shapes in no suite: SmolLM-135M's and -360M's q/k/v, o, gate/up and down
          ab groups-adhoc --shape 576x960,576x576,576x3072,1536x576,960x1600,960x960,960x5120,2560x960 \
            --op T --dtype bf16,fp32 --lib xgemv --quick
          # held out: Qwen3-0.6B, Gemma-3-270M, Gemma-3-1B, GPT-2, Pythia-410M, TinyLlama
          ab groups-heldout --shape 1024x4096,2048x1024,1024x6144,640x1536,1024x640,640x4096,2048x640,1152x1536,1024x1152,6912x1152,768x2304,768x768,768x3072,3072x768,1024x3072,1024x1024,2048x2048,2048x11264,3072x1024,1152x13824,5632x2048 \
            --op T --dtype bf16,fp32 --lib xgemv --quick
          ab groups-decode --suite decode --model qwen2.5-0.5b,qwen2.5-1.5b,qwen2.5-7b,llama3-8b \
            --dtype bf16 --lib xgemv --quick
        fi
        for group in 32 16 8; do
          XGEMV_KERNEL_VARIANT=t_rowblock_$group "$bench" --suite llm,llm-small --dtype bf16,fp32 \
            --lib xgemv,cublas --quick --out-dir "$results/forced-t_rowblock_$group" \
            > "$results/forced-t_rowblock_$group.log" 2>&1 ||
            fail "forced t_rowblock_$group exited $? ($results/forced-t_rowblock_$group.log)"
        done
        ;;
    esac
    ;;
  probe-n)
    for variant in auto n_rowtile_32 n_rowtile_8 n_mma_16; do
      forced=$variant
      [[ $variant == auto ]] && forced=
      XGEMV_KERNEL_VARIANT=$forced "$bench" --suite anchors,llm --op N --dtype bf16,fp16 \
        --lib xgemv,cublas --quick --out-dir "$results/probe-n-$variant" \
        > "$results/probe-n-$variant.log" 2>&1 || fail "probe-n $variant exited $?"
    done
    ;;
  probe-split)
    XGEMV_KERNEL_VARIANT=n_rowtile_8 "$bench" --op N --dtype bf16 --lib xgemv,cublas --quick \
      --shape 4096x4096,8192x2048,12288x1365,16384x1024,19008x882,32768x512,33792x496,4096x16384,8192x8192,16384x4096,19008x3530,32768x2048,33792x1986 \
      --out-dir "$results/probe-split" > "$results/probe-split.log" 2>&1 ||
      fail "probe-split exited $? ($results/probe-split.log)"
    ;;
  probe-alias)
    # each split count twice, lda a power of two (m = 4096..32768) and not (one 64-row tile
    # fewer): the same splits, blocks (504-512) and columns a block (512)
    XGEMV_KERNEL_VARIANT=n_rowtile_8 "$bench" --op N --dtype bf16 --lib xgemv,cublas --quick \
      --shape 4096x4096,4032x4096,8192x2048,8128x2048,16384x1024,16320x1024,32768x512,32704x512 \
      --out-dir "$results/probe-alias" > "$results/probe-alias.log" 2>&1 ||
      fail "probe-alias exited $? ($results/probe-alias.log)"
    ;;
  probe-ring)
    # the ring's design on its own, forced, beside the register sweep's row tiles forced on
    # main's library: the probe-split shapes and the llm suite's 16-bit op N
    [[ -e $(lib_of ring-sweep)/libxgemv.so.0 ]] || { fail "ring-sweep: not built"; exit 1; }
    shapes=4096x4096,8192x2048,16384x1024,32768x512,4096x16384,8192x8192,32768x2048
    for run in "n_ring_8 $(lib_of ring-sweep)" "n_rowtile_8 $base/src"; do
      set -- $run
      LD_LIBRARY_PATH=$2 XGEMV_KERNEL_VARIANT=$1 "$bench" --op N --dtype bf16 \
        --lib xgemv,cublas --quick --shape "$shapes" --out-dir "$results/probe-ring-$1-adhoc" \
        > "$results/probe-ring-$1-adhoc.log" 2>&1 || fail "probe-ring $1 exited $?"
      LD_LIBRARY_PATH=$2 XGEMV_KERNEL_VARIANT=$1 "$bench" --suite llm --op N --dtype bf16,fp16 \
        --lib xgemv,cublas --quick --out-dir "$results/probe-ring-$1-llm" \
        > "$results/probe-ring-$1-llm.log" 2>&1 || fail "probe-ring $1 (llm) exited $?"
    done
    ;;
  profile-n)
    command -v ncu > /dev/null || PATH=$PATH:/usr/local/cuda/bin
    for run in "N xgemv" "N cublas" "T xgemv"; do
      set -- $run
      # past the warm-up: two timed launches (cuBLAS's kernel may be a gemv or a GEMM's, under
      # any of its names; the bench's reference_gemv, which checks the output, left out),
      # caches flushed by ncu
      ncu --clock-control none --launch-skip 10 --launch-count 2 \
        -k 'regex:^(?!.*reference_gemv).*(gemv|gemm|xmma|nvjet|cutlass)' \
        --section SpeedOfLight --section LaunchStats --section Occupancy \
        --section MemoryWorkloadAnalysis --section WarpStateStats \
        "$bench" --shape 4096x4096 --op "$1" --dtype bf16 --lib "$2" --quick \
        --out-dir "$results/profile-$1-$2" > "$results/profile-$1-$2.txt" 2>&1 ||
        fail "ncu op $1 $2 exited $? ($results/profile-$1-$2.txt)"
    done
    ;;
  *)
    sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" >&2
    exit 2
    ;;
esac
exit "$status"
