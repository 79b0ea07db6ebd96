#!/bin/sh
# compare-outputs.sh - the same commands through two llmsim binaries, their
# outputs compared byte for byte: a change that should print nothing new
# (a faster search, a mechanical cleanup) shows here that it did not.
#
#   scripts/compare-outputs.sh OLD_BIN NEW_BIN [OUT_DIR]
#
# Runs the README's plan, train, infer and serve commands, the published
# suites (validate, serve --published), a few planner searches of
# bench/bench_plan.c's cases and a few under each software stack (MoE
# recomputation by module, activation offload, DeepSpeed's offload,
# LoRA) and precision recipes (every one also with --json), each through
# both binaries with the data of this checkout (LLMSIM_DATA_DIR, unless
# set), stdout and stderr kept apart, the exit status kept. The lines that
# state a wall time (plan's "searched in", serve's "simulated in", the
# JSON's elapsed_s) are dropped first: they differ from run to run.
# Prints one line per command (same / DIFFERS) and exits 1 when any
# differs; OUT_DIR (default: a temporary folder, kept) holds every output.
set -u
old=${1:?usage: compare-outputs.sh OLD_BIN NEW_BIN [OUT_DIR]}
new=${2:?usage: compare-outputs.sh OLD_BIN NEW_BIN [OUT_DIR]}
out=${3:-$(mktemp -d /tmp/llmsim-compare.XXXXXX)}
root=$(cd "$(dirname "$0")/.." && pwd)
export LLMSIM_DATA_DIR=${LLMSIM_DATA_DIR:-$root}
mkdir -p "$out/old" "$out/new"
rm -f "$out/differs" # a reused folder's verdict is not this run's

cmds='plan --model 70b --gpus 8
plan --model 405b --gpu h100 --gpus 16384 --seq 8192 --global-batch 2048 --tp 8 --pp 16 --cp 1 --recipe llama3 --tokens 15.6e12 --top 3 --emit megatron
plan --model 70b --gpus 8 --workload serve --prompt 2048 --output 256 --rate 4 --ttft-slo 2 --tpot-slo 0.05 --top 5
plan --model 70b --gpu h200 --gpus 512
plan --model 8b --gpu h200 --gpus 1024
plan --model 405b --gpu h200 --gpus 16384
plan --model 405b --gpu h100-sxm5-80gb --gpus 8192 --tp 8 --pp 16
plan --model 405b --gpu h100-sxm5-80gb --gpus 8192 --tp 8 --pp 16 --recipe llama3
plan --model 8b --gpu a100 --gpus 16 --lora-rank 16 --top 8
plan --model 405b --gpu h200 --gpus 8
plan --model 70b --gpus 64 --even-pp --no-offload --wide
plan --model mixtral-8x7b --gpu h200 --gpus 64 --stack mcore-te --top 12
plan --model deepseek-v3 --gpu h800 --gpus 256 --stack mcore-te --top 8
plan --model 70b --gpu h100 --gpus 64 --stack deepspeed --top 8
plan --model 8b --gpu h200 --gpus 64 --stack torchtitan --top 8
plan --model 8b --gpu a100 --gpus 16 --stack deepspeed --lora-rank 16 --top 8
plan --model 70b --gpu h100 --gpus 64 --precision fp8-current --top 8
plan --model mixtral-8x7b --gpu b200 --gpus 64 --precision mxfp8 --top 8
train --model 8b --gpu h100 --gpus 8 --tp 2 --zero 1 --precision fp8-delayed --global-batch 64
train --model 8b --gpu h200 --gpus 8 --tp 2 --pp 1 --dp 4 --zero 1 --micro-batch 2 --global-batch 256 --seq 8192 --recompute selective
train --model 8b --layers 4 --engine torch --micro-batch 2 --recompute full
train --model 70b --gpus 64 --tp 8 --pp 4 --schedule interleaved --chunks 4 --global-batch 128
infer --model 70b --gpu h200 --gpus 4 --tp 4 --batch 32 --prompt 2048 --output 256
infer --model 8b --gpu h200 --batch 4 --prompt 2048 --output 128 --engine fused --ops
serve --model 8b --gpu h200 --requests 2000 --rate 30 --prompt-dist lognormal:6.5:0.8 --output-dist lognormal:5.5:0.7 --seed 1
serve --model 70b --gpu h200 --gpus 4 --tp 4 --requests 3000 --rate 10 --prompt-dist lognormal:6.5:0.8 --output-dist uniform:16:512 --chunked-prefill
serve --model 8b --gpu h200 --gpus 2 --requests 600 --rate 40 --kv-alloc contiguous --scheduler no-evict --load lone
serve --model 8b --gpu h200 --requests 800
serve --published
validate --no-fail
spec --model 70b --draft llama-3.2-1b --gamma 4 --alpha 0.8 --gpu h200 --gpus 2'

n=0 bad=0
printf '%s\n' "$cmds" | while IFS= read -r c; do
	for json in "" " --json"; do
		n=$((n + 1))
		for side in old new; do
			bin=$old
			[ $side = new ] && bin=$new
			# shellcheck disable=SC2086 # the command line is split on purpose
			"$bin" $c$json >"$out/$side/$n.out" 2>"$out/$side/$n.err"
			echo "exit $?" >>"$out/$side/$n.err"
			sed -i -e '/searched in\|simulated in\|elapsed\|"elapsed_s"/d' \
				"$out/$side/$n.out" "$out/$side/$n.err"
		done
		if cmp -s "$out/old/$n.out" "$out/new/$n.out" &&
			cmp -s "$out/old/$n.err" "$out/new/$n.err"; then
			echo "same     $n: llmsim $c$json"
		else
			echo "DIFFERS  $n: llmsim $c$json"
			echo x >>"$out/differs"
		fi
	done
done
echo "outputs in $out"
[ ! -e "$out/differs" ]
