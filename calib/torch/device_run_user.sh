#!/usr/bin/env bash
# device_run_user.sh - a GPU's calibration as a user runs it, then the whole
# programs that validate it. Run from the repository root on the GPU machine,
# $OUT set. Two parts, each one device call of under 10 minutes:
#
#   calib/torch/device_run_user.sh user   the README's "Calibrating your own
#        GPU" section, command by command: the build (cmake, as written; a
#        carried build-kern/ when this machine lacks the -dev packages),
#        `llmsim calib run`, library_cases.py, `calib import`,
#        power_cases.py, `calib fit`, `calib validate`, `calib export`; then
#        gemm_probe.py (operand data x single/sustained)
#   calib/torch/device_run_user.sh steps  whole programs: steps_lean.py (CUDA
#        graphs), steps_hf.py (HF SDPA prefill), steps_train.py (one-GPU
#        training, recompute none/full), heldout_ops.py (held-out calls; then
#        its naive-attention and wide-row sets)
#
# Everything lands in $OUT/<part>.tar.gz (logs in $OUT/<part>.log), with
# nvidia-smi -q before and after and an NVML trace of clock and power.
# Never touches clocks or settings. Nothing here names a GPU model: the
# runner and the fit read the device.
set -u
PART=${1:?user, steps or one}
. "$(dirname "$0")/device_common.sh"
case $PART in
user)
	# The README's build line, as a user on this machine would try it.
	{
		echo "cmake: $(command -v cmake) $(cmake --version 2>&1 | head -1)"
		echo "pkg-config yaml-0.1: $(pkg-config --modversion yaml-0.1 2>&1)"
		echo "pkg-config sqlite3: $(pkg-config --modversion sqlite3 2>&1)"
		echo "gcc: $(gcc --version 2>&1 | head -1)"
		echo "os: $(grep PRETTY /etc/os-release 2>&1)"
	} >"$W/build_env.txt" 2>&1
	# configure as written; build only the two programs the section runs, so the
	# GPU steps keep their time (the carried build is the same source)
	step readme_configure 60 cmake -S . -B build -DLLMSIM_TESTS=OFF
	if timeout 150 cmake --build build -j"$(nproc)" --target llmsim llmsim-calib-runner \
		>"$W/readme_build.log" 2>&1 && [ -x build/cli/llmsim ]; then
		log "README build: ok"
	else
		log "README build failed here (see readme_configure.log, readme_build.log): using the carried build-kern/"
		rm -rf build && cp -a build-kern build
	fi
	L=build/cli/llmsim
	[ -d .libs ] && export LD_LIBRARY_PATH="$PWD/.libs:$LD_LIBRARY_PATH"
	step version 10 $L --version
	DB="$W/mygpu.db"
	step calib_run 200 $L calib run --db "$DB"
	step library 150 $PY calib/torch/library_cases.py --out "$W/lib.tsv" \
		--sets attention,decode,fp8,ew,norm,attn_small --decode-grid large
	step import 30 $L calib import --db "$DB" --in "$W/lib.tsv"
	step power 75 $PY calib/torch/power_cases.py --out "$W/power.json"
	# as written first; where the build-tree binary finds no data folder (no
	# `cmake --install` on this machine), again with the source tree's
	if ! step fit 30 $L calib fit --db "$DB" --out "$W/profile.yaml"; then
		export LLMSIM_DATA_DIR="$PWD"
		step fit_srcdata 30 $L calib fit --db "$DB" --out "$W/profile.yaml"
	fi
	step validate 30 $L calib validate --db "$DB"
	step export 30 $L calib export --db "$DB" --out "$W/mygpu.tsv"
	rm -f "$DB" "$DB"-*
	step probe 80 $PY calib/torch/gemm_probe.py --out "$W/probe"
	;;
steps)
	step lean 220 $PY calib/torch/steps_lean.py --out "$W" --budget-s 200 --max-kv-gb 24 \
		--models llama-3.2-3b,llama-2-7b,llama-3.1-8b
	step hf 70 $PY calib/torch/steps_hf.py --out "$W" --budget-s 60 --models llama-3.2-3b,llama-2-7b
	step train 110 $PY calib/torch/steps_train.py --out "$W" --budget-s 100 \
		--runs llama-3.2-3b:8:2048:1/4,llama-2-7b:4:4096:1/2,llama-3.1-8b:4:4096:1/2
	step heldout 95 $PY calib/torch/heldout_ops.py --out "$W"
	step heldout_naive 50 $PY calib/torch/heldout_ops.py --out "$W/naive" --sets naive,wide
	;;
one)
	# both parts cut to one call, for a lease too short for two: the steps
	# and held-out calls first (what a transfer check needs most), then the
	# runner's cases (as `calib run`)
	rm -rf build && cp -a build-kern build
	export LLMSIM_DATA_DIR="$PWD"
	L=build/cli/llmsim
	[ -d .libs ] && export LD_LIBRARY_PATH="$PWD/.libs:$LD_LIBRARY_PATH"
	DB="$W/mygpu.db"
	step lean 95 $PY calib/torch/steps_lean.py --out "$W" --budget-s 85 --max-kv-gb 24 \
		--models llama-3.2-3b,llama-2-7b --prefill 1x512,1x2048,4x2048,1x8192 \
		--decode 1x512,1x8192,8x2048,32x2048,64x4096,128x1024
	step heldout 95 $PY calib/torch/heldout_ops.py --out "$W"
	step heldout_naive 45 $PY calib/torch/heldout_ops.py --out "$W/naive" --sets naive,wide
	step train 55 $PY calib/torch/steps_train.py --out "$W" --budget-s 45 \
		--runs llama-3.2-3b:8:2048:1/4,llama-2-7b:4:4096:1
	step calib_run 140 $L calib run --db "$DB"
	step export 20 $L calib export --db "$DB" --out "$W/mygpu.tsv"
	;;
*)
	echo "device_run_user.sh: unknown part '$PART' (user, steps or one)" >&2
	exit 2
	;;
esac
device_finish
