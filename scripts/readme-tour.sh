#!/usr/bin/env bash
# readme-tour.sh [LLMSIM] - print the README's tour: every subcommand run for
# real, as markdown. The README's tour section is this script's output.
set -u
L=${1:-build/cli/llmsim}
tmp=/tmp/llmsim-tour
rm -rf "$tmp" && mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
src=$(pwd)
run() { # title, command line (llmsim ...), optional line limit
	local title=$1 cmd=$2 lines=${3:-400}
	printf '\n#### %s\n\n```console\n$ %s\n' "$title" "$cmd"
	eval "${cmd/#llmsim/$L}" 2>&1 | head -n "$lines" | sed "s|$src/||g"
	printf '```\n'
}
for f in calib/data/h200*.tsv; do
	"$L" calib import --db "$tmp/h200.db" --in "$f" >/dev/null
done
"$L" calib import --db "$tmp/h200.db" --in calib/data/multi_gpu/nccl_h200x2.tsv >/dev/null
echo "### GPUs and models"
run "The GPUs llmsim knows (hw/*.yaml)" "llmsim hw list"
run "A model, and what its weights need" "llmsim model show 70b --gpu h200"
echo
echo "### One kernel: the GPU model"
run "A GEMM" "llmsim op gemm --m 4096 --n 4096 --k 4096 --dtype bf16"
run "FlashAttention-2 prefill with GQA" "llmsim op attention --impl flash2 --batch 1 --heads 64 --kv-heads 8 --seq 8192 --head-dim 128 --causal" 
run "PagedAttention decode" "llmsim op decode --impl paged --batch 32 --heads 64 --kv-heads 8 --kv-len 4096 --head-dim 128 --block-size 16"
run "An all-reduce over NVLink" "llmsim op collective --kind allreduce --bytes 64e6 --gpus 8"
run "The roofline, with one layer's ops on it" "llmsim roofline --gpu h200 --model 8b --seq 4096" 60
echo
echo "### Training"
run "The main job: every way to train 70B on 8 H200s" "llmsim plan --model 70b --gpus 8"
run "One configuration" "llmsim train --model 8b --gpu h200 --gpus 8 --tp 2 --pp 1 --dp 4 --zero 1 --micro-batch 2 --global-batch 256 --seq 8192 --recompute selective"
run "Against published training runs" "llmsim validate"
echo
echo "### Inference"
run "One request shape" "llmsim infer --model 70b --gpu h200 --gpus 4 --tp 4 --batch 32 --prompt 2048 --output 256"
run "A serving engine under load" "llmsim serve --model 8b --gpu h200 --requests 2000 --rate 30 --prompt-dist lognormal:6.5:0.8 --output-dist lognormal:5.5:0.7 --seed 1"
run "Speculative decoding" "llmsim spec --model 70b --draft llama-3.2-1b --gamma 4 --alpha 0.8 --gpu h200"
run "Capacity planning for serving" "llmsim plan --model 70b --gpus 8 --workload serve --prompt 2048 --output 256 --tpot-slo 0.05 --top 5" 40
echo
echo "### Reports"
run "An HTML report with its pictures" "llmsim report --model 8b --gpu h200 --out $tmp/report"
echo
echo "### Calibration and traces"
run "What the H200 measurements hold" "llmsim calib show --db $tmp/h200.db" 30
run "Predicted against measured, held-out kernels" "llmsim calib validate --db $tmp/h200.db" 40
run "A captured PyTorch run compared with the model" "llmsim trace compare --db calib/data/trace_llama.txt.gz --gpu h200 --phases-only" 26
run "The same program on a B200" "llmsim trace replay --db calib/data/trace_llama.txt.gz --gpu b200 --phases-only" 25
echo
echo "### Errors"
printf 'model: x\nlayers: 0\n' >"$tmp/bad.yaml"
run "A broken model file" "llmsim model show $tmp/bad.yaml"
run "An unknown flag" "llmsim op gemm --m 1 --n 2 --kk 3"
run "An impossible configuration" "llmsim train --model 405b --gpu h200 --gpus 1 --tp 1 --pp 1 --dp 1"
