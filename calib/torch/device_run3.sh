#!/usr/bin/env bash
# device_run3.sh - the measurements behind llmsim's realistic calibration and
# its whole-program validation (run from the repository root on the GPU
# machine, $OUT set). Two parts, each one device call of under 10 minutes:
#
#   calib/torch/device_run3.sh fit    smoke test of every script at toy sizes;
#        the calibration runner on normal operand data (calib/device_run.sh);
#        library_cases.py (PyTorch FA2/cuDNN/decode/FP8/element-wise/norm);
#        gemm_probe.py (operand data x single/sustained, clocks)
#   calib/torch/device_run3.sh extra  the runner with the timed clock (NVML), on
#        normal, grid and zeros data; the steps the first steps call missed
#   calib/torch/device_run3.sh final  torch_ops.py (MoE routing and experts, HF norm
#        and RoPE, packed decode, HF eager decode), the MoE and wide steps again
#   calib/torch/device_run3.sh steps  steps_lean.py, steps_hf.py,
#        steps_train.py (whole programs), heldout_ops.py (held-out calls)
#
# Everything lands in $OUT/<part>.tar.gz (and the logs in $OUT/<part>.log),
# with nvidia-smi -q before and after. Never touches clocks or settings.
set -u
PART=${1:?fit or steps}
. "$(dirname "$0")/device_common.sh"
case $PART in
fit)
	step smoke_lean 45 $PY calib/torch/steps_lean.py --out "$W/smoke" --quick --models llama-3.2-1b:2,mixtral-8x7b:2,qwen3-30b-a3b:2 --load-s 0.05 --time-s 0.02
	step smoke_hf 40 $PY calib/torch/steps_hf.py --out "$W/smoke" --quick --models llama-3.2-1b:2 --load-s 0.05
	step smoke_train 40 $PY calib/torch/steps_train.py --out "$W/smoke" --quick --reps 2
	step smoke_heldout 30 $PY calib/torch/heldout_ops.py --out "$W/smoke" --quick --sets attn,decode,fp8 --reps 3 --load-s 0.01
	step runner 200 env OUT="$W/runner" LLMSIM_DEVICE_BUDGET_S=185 bash calib/device_run.sh
	step library 130 $PY calib/torch/library_cases.py --out "$W/h200_library.tsv" --sets attention,decode,fp8,ew,norm,attn_small
	step probe 90 $PY calib/torch/gemm_probe.py --out "$W/probe"
	;;
steps)
	step lean 300 $PY calib/torch/steps_lean.py --out "$W" --budget-s 270 --models llama-3.1-8b,mixtral-8x7b,llama-3.2-1b,llama-2-13b,qwen3-30b-a3b,qwen2.5-72b:8
	step hf 90 $PY calib/torch/steps_hf.py --out "$W" --budget-s 80
	step train 100 $PY calib/torch/steps_train.py --out "$W" --budget-s 90
	step heldout 95 $PY calib/torch/heldout_ops.py --out "$W"
	;;
extra)
	R=./build-kern/calib/runner/llmsim-calib-runner
	step runner_normal 120 $R --db "$W/runner_normal.db" --no-counters --verbose
	step runner_grid 50 $R --db "$W/runner_grid.db" --no-counters --verbose --only gemm --operand-data grid
	step runner_zeros 50 $R --db "$W/runner_zeros.db" --no-counters --verbose --only gemm --operand-data zeros
	step lean 110 $PY calib/torch/steps_lean.py --out "$W/lean_a" --budget-s 100 --models qwen3-30b-a3b,qwen2.5-72b:8
	step lean_b 80 $PY calib/torch/steps_lean.py --out "$W/lean_b" --budget-s 70 --models llama-2-13b,llama-3.1-8b,mixtral-8x7b \
		--prefill 1x2048,4x2048 --decode 1x2048,32x2048,64x4096,256x512
	;;
final)
	step ops 130 $PY calib/torch/torch_ops.py --out "$W"
	step lean_moe 125 $PY calib/torch/steps_lean.py --out "$W/lean_moe" --budget-s 115 --models qwen3-30b-a3b
	step lean_wide 90 $PY calib/torch/steps_lean.py --out "$W/lean_wide" --budget-s 80 --models qwen2.5-72b:8 \
		--prefill 4x2048,16x512,1x8192 --decode 1x512,8x2048,32x2048,64x4096,256x512
	;;
*) echo "device_run3.sh: unknown part '$PART' (fit or steps)" >&2; exit 2 ;;
esac
device_finish
