#!/usr/bin/env bash
# The one command for the GPU machine, run from the repository root there:
#   bash tests/gpu-suite.sh [--sanitize] [--part tests|bench|python]
# Builds everything for sm_90 in build-gpu, runs every test (CPU and GPU), then the short
# benchmark against cuBLAS (the anchors suite, whole decode steps with --suite decode --quick, and
# the few-right-hand-side calls on the bf16, fp32 and fp64 llm shapes at nrhs 1, 2, 4, 8, 16
# beside cuBLAS's GEMM with as many columns, op T and op N, quantized weights on the llm shapes
# and in decode steps beside cuBLAS and PyTorch's int4 kernel, the routed calls of
# mixture-of-experts layers beside cuBLAS per expert), the
# Python package's demo (python -m xgemv.demo), and prints a compact SUMMARY block last. Logs go
# to $OUT when set.
# --sanitize also runs every GPU test program under the four compute-sanitizer tools
# (tests/hardening/gpu-sanitize.sh, reduced sizes, each GoogleTest program in 4 shards, 3/4 as
# many processes at once as cores); the suite takes about 8 minutes on one H100 or H200, the
# build included, the sanitizer more than 10 more (tests/hardening/README.md says how to run it
# one tool at a time). The last run on each GPU kind is kept in bench/results/<gpu>/
# (bench/results/README.md says how).
# --part runs one part after the build: tests (and the sanitizer with --sanitize), bench
# (xgemv-bench's suites) or python (bench/moe_peers.py and the demos): the suite in three
# commands where one may run for at most 10 minutes (on the same machine one after the other,
# the later ones find the build done). Each prints the SUMMARY of its part, the other parts'
# lines "not run".
# Exits non-zero when the build or any test failed. Where the copy has no .git, pass the commit
# in XGEMV_COMMIT (e.g. XGEMV_COMMIT=$(git rev-parse --short HEAD) from the machine that has it).
set -uo pipefail
cd "$(dirname "$0")/.."
sanitize=0 run_tests=1 run_bench=1 run_python=1
usage="usage: gpu-suite.sh [--sanitize] [--part tests|bench|python]"
while (($#)); do
  case $1 in
    --sanitize) sanitize=1 ;;
    --part)
      case ${2:-} in
        tests) run_bench=0 run_python=0 ;;
        bench) run_tests=0 run_python=0 ;;
        python) run_tests=0 run_bench=0 ;;
        *) echo "$usage" >&2; exit 1 ;;
      esac
      shift ;;
    *) echo "$usage" >&2; exit 1 ;;
  esac
  shift
done

# On a machine without a package registry the build's packages may be carried along, prebuilt,
# in .kit/ (ignored by git, not part of the repository): its install.sh prints their environment.
if [[ -f .kit/install.sh ]]; then
  eval "$(bash .kit/install.sh)"
fi

log_dir=${OUT:-build-gpu}
mkdir -p "$log_dir"
generator=() keep_going=(-- -k)
if command -v ninja >/dev/null; then generator=(-G Ninja) keep_going=(-- -k 0); fi

build_ok=1
cmake -S . -B build-gpu "${generator[@]}" -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_BUILD_TYPE=Release 2>&1 | tee "$log_dir/configure.log" &&
  cmake --build build-gpu -j "$(nproc)" "${keep_going[@]}" 2>&1 | tee "$log_dir/build.log" || build_ok=0

# Tests run even after a failed build: what did build is still worth knowing, and the targets
# that did not show up as failed tests. Four at a time: each test is its own process and the GPU
# ones share the GPU as any programs do (those that need it alone are RUN_SERIAL); one at a time
# they took most of the suite's time, close to the 10 minutes one command may run on the
# machines it is verified on.
ctest_ok=0
((run_tests)) || ctest_ok=1
if ((run_tests)) && [[ -f build-gpu/CTestTestfile.cmake ]]; then
  ctest --test-dir build-gpu -j 4 --output-on-failure 2>&1 | tee "$log_dir/ctest.log" && ctest_ok=1
fi

bench=build-gpu/bench/xgemv-bench
bench_line="not built" decode_line="not built" nrhs_line="not built" quant_line="not built" peers_line="not built"
moe_line="not built" moe_peers_line="not run (no python3 with torch and transformers)"
if ((!run_bench)); then
  bench_line="not run (--part)" decode_line=$bench_line nrhs_line=$bench_line
  quant_line=$bench_line peers_line=$bench_line moe_line=$bench_line
elif [[ -x $bench ]]; then
  if "$bench" --suite anchors --quick --out-dir "$log_dir/bench" ${XGEMV_COMMIT:+--commit "$XGEMV_COMMIT"} 2>&1 | tee "$log_dir/bench.log"; then
    bench_line="ran (log: $log_dir/bench.log)"
  else
    bench_line="FAILED (log: $log_dir/bench.log)"
  fi
  # Whole decode steps in CUDA graphs, quick: the verdict line goes into the summary.
  if "$bench" --suite decode --quick --out-dir "$log_dir/decode" ${XGEMV_COMMIT:+--commit "$XGEMV_COMMIT"} 2>&1 | tee "$log_dir/decode.log"; then
    decode_line="ran (log: $log_dir/decode.log)"
  else
    decode_line="FAILED (log: $log_dir/decode.log)"
  fi
  # Quantized weights, quick: the bf16 llm shapes in int4-g128, int8 and fp8 at nrhs 1 and 16
  # beside xgemv and cuBLAS GemmEx on the dense matrix, then PyTorch's int4 kernel on the same
  # int4 cases, and Llama-3-8B and Qwen2.5-7B decode steps with quantized weights; their verdict
  # lines go into the summary.
  if "$bench" --suite llm --dtype bf16 --weights int4-g128,int8,fp8 --nrhs 1,16 \
      --lib xgemv,cublas-gemmex --quick --out-dir "$log_dir/quant" \
      ${XGEMV_COMMIT:+--commit "$XGEMV_COMMIT"} 2>&1 | tee "$log_dir/quant.log" &&
    "$bench" --suite decode --model llama3-8b,qwen2.5-7b --dtype bf16 \
      --weights int4-g128,int8,fp8 --quick --out-dir "$log_dir/quant-decode" \
      ${XGEMV_COMMIT:+--commit "$XGEMV_COMMIT"} 2>&1 | tee "$log_dir/quant-decode.log"; then
    quant_line="ran (logs: $log_dir/quant.log, quant-decode.log)"
  else
    quant_line="FAILED (logs: $log_dir/quant.log, quant-decode.log)"
  fi
  if python3 bench/quant_peers.py "$log_dir/quant" 2>&1 | tee "$log_dir/quant-peers.log"; then
    peers_line="ran (log: $log_dir/quant-peers.log)"
  else
    peers_line="FAILED (log: $log_dir/quant-peers.log)"
  fi
  # Mixture of experts, quick: the six models' up and down calls at 1, 4, 16 and 64 tokens, bf16
  # and int4-g128 experts, uniform and skewed routings, beside the stream read of the experts
  # they touch and cuBLAS per expert; its verdict line goes into the summary.
  if "$bench" --suite moe --quick --tokens 1,4,16,64 --out-dir "$log_dir/moe" \
      ${XGEMV_COMMIT:+--commit "$XGEMV_COMMIT"} 2>&1 | tee "$log_dir/moe.log"; then
    moe_line="ran (log: $log_dir/moe.log)"
  else
    moe_line="FAILED (log: $log_dir/moe.log)"
  fi
  # Few right-hand sides, quick: the 25 llm shapes in bf16, fp32 and fp64 at 5 nrhs (375 cases,
  # well under a minute); its nrhs verdicts go into the summary.
  if "$bench" --suite llm --dtype bf16,fp32,fp64 --nrhs 1,2,4,8,16 --quick --out-dir "$log_dir/nrhs" ${XGEMV_COMMIT:+--commit "$XGEMV_COMMIT"} 2>&1 | tee "$log_dir/nrhs.log"; then
    nrhs_line="ran (log: $log_dir/nrhs.log)"
  else
    nrhs_line="FAILED (log: $log_dir/nrhs.log)"
  fi
  # The same for op N (A read along its outputs; 375 cases).
  if "$bench" --suite llm --op N --dtype bf16,fp32,fp64 --nrhs 1,2,4,8,16 --quick --out-dir "$log_dir/nrhs-op-n" ${XGEMV_COMMIT:+--commit "$XGEMV_COMMIT"} 2>&1 | tee "$log_dir/nrhs-op-n.log"; then
    nrhs_line+="; op N ran (log: $log_dir/nrhs-op-n.log)"
  else
    nrhs_line+="; op N FAILED (log: $log_dir/nrhs-op-n.log)"
  fi
fi

# The Python package on this build's library: the MoE experts beside transformers' own
# implementations (bench/moe_peers.py, quick: every model's experts at T = 1..64, and whole
# Qwen3-MoE blocks), and its demo: Hugging Face decoders of Llama-3-8B shape (batch 1 and 4),
# Qwen2.5-7B shape (q/k/v with bias), after 16 layers of Qwen3-30B-A3B shape (MoE; where an
# eager step's GPU time goes; no fp32 copy, which would not fit beside it: the MoE tests check
# the logits of small models), random weights, in a CUDA graph and eager, plain PyTorch bf16
# against quantize_(.., "bf16") and quantized formats (about 30 s each); their verdict lines go
# into the summary.
demo_line="not run (no python3 with torch and transformers)"
if ((!run_python)); then
  demo_line="not run (--part)" moe_peers_line=$demo_line
elif python3 -c "import torch, transformers" 2>/dev/null; then
  export XGEMV_LIBRARY=$PWD/build-gpu/src/libxgemv.so PYTHONPATH=$PWD/interface/python/src
  if python3 bench/moe_peers.py --quick --json "$log_dir/moe-peers.json" 2>&1 |
      tee "$log_dir/moe-peers.log"; then
    moe_peers_line="ran (log: $log_dir/moe-peers.log)"
  else
    moe_peers_line="FAILED (log: $log_dir/moe-peers.log)"
  fi
  demo_line="ran (log: $log_dir/demo.log)"
  : > "$log_dir/demo.log"
  for demo in "qwen3-30b-a3b 1 bf16,int4-g128 --layers 16 --profile --no-reference" \
      "llama3-8b 1 bf16,int4-g128,int8,fp8" "qwen2.5-7b 1 bf16,int4-g128,int8" \
      "llama3-8b 4 bf16,int4-g128,int8"; do
    read -r model batch formats options <<< "$demo"
    # shellcheck disable=SC2086  # the options are words
    python3 -m xgemv.demo --model "$model" --batch "$batch" --formats "$formats" $options \
      --json "$log_dir/demo-$model-batch$batch.json" 2>&1 | tee -a "$log_dir/demo.log" ||
      demo_line="FAILED (log: $log_dir/demo.log)"
  done
fi

sanitize_ok=1
if ((sanitize)); then
  bash tests/hardening/gpu-sanitize.sh -j $(($(nproc) * 3 / 4)) --shards 4 --timeout 240 build-gpu 2>&1 | tee "$log_dir/sanitize.log"
  ((PIPESTATUS[0] == 0)) || sanitize_ok=0
fi

# From CTest's own output: the skipped tests with the reason each gave, then "tests: P passed,
# F failed, S skipped, T total" (tests/summary/ctest_summary.py, as tests/run.sh prints them), and
# the failed ones, listed under "The following tests FAILED:".
ctest_log=$log_dir/ctest.log
ctest_summary="tests: did not run" failed_names=""
if [[ -f $ctest_log ]]; then
  ctest_summary=$(python3 tests/summary/ctest_summary.py "$ctest_log" \
    build-gpu/Testing/Temporary/LastTest.log)
  failed_names=$(sed -n '/The following tests FAILED:/,$p' "$ctest_log" |
    sed -nE 's/^[[:space:]]+[0-9]+ - ([^ ]+) \(.*/\1/p' |
    paste -sd ' ' -)
fi

if [[ -n ${XGEMV_COMMIT:-} ]]; then
  commit=$XGEMV_COMMIT
elif commit=$(git rev-parse --short HEAD 2>/dev/null); then
  git diff --quiet HEAD 2>/dev/null || commit+=" with uncommitted changes"
else
  commit="unknown (no .git here; set XGEMV_COMMIT)"
fi

{
  echo
  echo "==================== SUMMARY ===================="
  echo "commit : $commit"
  echo "gpu    : $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1 || echo 'nvidia-smi unavailable')"
  ((build_ok)) || echo "build  : FAILED (log: $log_dir/build.log)"
  if ((run_tests)); then
    echo "ctest  : $(tail -n 1 <<<"$ctest_summary" | sed 's/^tests: //')"
  else
    echo "ctest  : not run (--part)"
  fi
  [[ -n $failed_names ]] && echo "failed : $failed_names"
  ((run_tests)) && sed '$d' <<<"$ctest_summary"
  echo "bench  : $bench_line"
  echo "decode : $decode_line"
  echo "nrhs   : $nrhs_line"
  echo "quant  : $quant_line"
  echo "peers  : $peers_line"
  echo "moe    : $moe_line"
  echo "moe peers: $moe_peers_line"
  echo "demo   : $demo_line"
  if ((sanitize)); then
    sed -nE 's/^(memcheck|racecheck|initcheck|synccheck): /\1: /p' "$log_dir/sanitize.log" |
      sed 's/^/sanitizer /'
  fi
  [[ -f $log_dir/bench.log ]] && grep -E '^verdict' "$log_dir/bench.log" | tail -n 1
  [[ -f $log_dir/decode.log ]] && grep -E '^verdict' "$log_dir/decode.log" | tail -n 1 | sed 's/^verdict/decode verdict/'
  [[ -f $log_dir/decode.log ]] && grep -E '^decode reads verdict' "$log_dir/decode.log" | tail -n 1
  # The llm shapes' one-vector cases, op T (bf16, fp32, fp64) and op N (bf16, fp32, fp64).
  [[ -f $log_dir/nrhs.log ]] && grep -E '^verdict' "$log_dir/nrhs.log" | tail -n 1 | sed 's/^verdict/llm op T verdict/'
  [[ -f $log_dir/nrhs-op-n.log ]] && grep -E '^verdict' "$log_dir/nrhs-op-n.log" | tail -n 1 | sed 's/^verdict/llm op N verdict/'
  [[ -f $log_dir/nrhs.log ]] && grep -E '^nrhs verdict' "$log_dir/nrhs.log" | tail -n 2
  [[ -f $log_dir/nrhs-op-n.log ]] && grep -E '^nrhs verdict' "$log_dir/nrhs-op-n.log" | tail -n 2 | sed 's/^nrhs verdict/op N nrhs verdict/'
  [[ -f $log_dir/quant.log ]] && grep -E '^quant verdict' "$log_dir/quant.log" | tail -n 1
  [[ -f $log_dir/quant-peers.log ]] && grep -E '^quant peers' "$log_dir/quant-peers.log" | tail -n 1
  [[ -f $log_dir/quant-decode.log ]] && grep -E '^quant decode verdict' "$log_dir/quant-decode.log" | tail -n 1
  [[ -f $log_dir/moe.log ]] && grep -E '^moe verdict' "$log_dir/moe.log" | tail -n 1
  [[ -f $log_dir/moe-peers.log ]] && grep -E '^moe peers verdict' "$log_dir/moe-peers.log"
  [[ -f $log_dir/demo.log ]] && grep -E '^(demo verdict|profile:)' "$log_dir/demo.log"
  echo "logs   : $log_dir"
  echo "================================================="
} | tee "$log_dir/summary.txt"

((build_ok && ctest_ok && sanitize_ok))
