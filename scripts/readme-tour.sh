#!/usr/bin/env bash
# readme-tour.sh [--update | --check] [LLMSIM] - the README's generated
# blocks: every subcommand of the tour run for real, as markdown, and the
# accuracy section's figures (held-out kernels, whole steps, the eager
# PyTorch steps, the captured run, the published training and serving
# suites), each the tool's own output.
#
#   (no option)  print the tour (the "tour" block)
#   --update     rewrite every generated block of README.md in place
#   --check      regenerate README.md into a temporary copy and compare:
#                exit 1 naming the first block (and tour entry) that
#                differs, with the first differing lines (CTest's
#                readme_current)
#
# A generated block sits between "<!-- generated: NAME -->" and
# "<!-- end generated: NAME -->" in README.md; everything between is this
# script's output for NAME. A command's output cut at a line limit ends
# with "... (N more lines)".
#
# Each command runs as written in the README, in an empty folder outside
# the source tree, reading only the data the binary finds (an installed
# `llmsim` on PATH by default; a build-tree binary given as LLMSIM reads
# the source tree through LLMSIM_SOURCE_DATA=1). tests/install_readme.sh
# runs the same lines against a `cmake --install` prefix.
set -u
mode=print
case ${1:-} in --update | --check) mode=${1#--}; shift ;; esac
src=$(cd "$(dirname "$0")/.." && pwd)
L=${1:-$(command -v llmsim || echo "$src/build/cli/llmsim")}
case $L in /*) ;; *) L=$src/$L ;; esac
if [ -z "${LLMSIM_DATA_DIR:-}" ] && ! "$L" --version | sed -n 2p | grep -q '^data: /'; then
	export LLMSIM_SOURCE_DATA=1 # a build-tree binary before cmake --install
fi
tmp=$(mktemp -d /tmp/llmsim-tour-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/run"
cd "$tmp/run" || exit 1
# block: command lines (llmsim ...; more lines run in turn) as one console
# block, each output cut at the optional line limit with a visible mark
block() {
	local cmds=$1 lines=${2:-400} c out n
	printf '```console\n'
	while IFS= read -r c; do
		printf '$ %s\n' "$c"
		# paths into this checkout print relative to it, whatever its folder;
		# a trace's recorded command is data, printed as it was captured
		out=$(eval "${c//llmsim /$L }" 2>&1 | sed -e "/^command: /!s|$src/||g" -e "s|$tmp/run/||g")
		n=$(printf '%s\n' "$out" | wc -l)
		if [ -z "$out" ]; then
			: # a command that prints nothing (mkdir, a redirection)
		elif [ "$n" -gt "$lines" ]; then
			printf '%s\n' "$out" | head -n "$lines"
			printf '... (%d more lines)\n' $((n - lines))
		else
			printf '%s\n' "$out"
		fi
	done <<<"$cmds"
	printf '```\n'
}
run() { # title, command lines, optional line limit: one tour entry
	printf '\n#### %s\n\n' "$1"
	block "$2" "${3:-400}"
}
tour() {
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
run "Meta's Llama 3 405B layout on 16,384 H100s: a token budget and its launch" "llmsim plan --model 405b --gpu h100 --gpus 16384 --seq 8192 --global-batch 2048 --tp 8 --pp 16 --cp 1 --stack llama3 --tokens 15.6e12 --top 3 --emit stack"
run "One configuration" "llmsim train --model 8b --gpu h200 --gpus 8 --tp 2 --pp 1 --dp 4 --zero 1 --micro-batch 2 --global-batch 256 --seq 8192 --recompute selective"
run "A plain PyTorch training step, its memory as the caching allocator sees it" "llmsim train --model 8b --layers 4 --engine torch --micro-batch 2 --recompute full"
run "Against published training runs" "llmsim validate --no-fail"
echo
echo "### Inference"
run "One request shape" "llmsim infer --model 70b --gpu h200 --gpus 4 --tp 4 --batch 32 --prompt 2048 --output 256"
run "The same in a serving engine's kernels, and one step's ops" "llmsim infer --model 8b --gpu h200 --batch 4 --prompt 2048 --output 128 --engine fused --ops" 40
run "A serving engine under load" "llmsim serve --model 8b --gpu h200 --requests 2000 --rate 30 --prompt-dist lognormal:6.5:0.8 --output-dist lognormal:5.5:0.7 --seed 1"
run "Speculative decoding" "llmsim spec --model 70b --draft llama-3.2-1b --gamma 4 --alpha 0.8 --gpu h200 --gpus 2"
run "Capacity planning for serving" "llmsim plan --model 70b --gpus 8 --workload serve --prompt 2048 --output 256 --rate 4 --ttft-slo 2 --tpot-slo 0.05 --top 5"
run "The fewest GPUs for a load, and what they cost" "llmsim plan --workload serve --model 70b --gpu h200 --rate 200 --ttft-slo 2 --tpot-slo 0.05 --top 5"
run "Serving engines as they run today: SGLang, a prefix cache, MTP speculation" "llmsim serve --model 8b --gpu h200 --requests 1000 --rate 30 --server sglang --prefix-share 0.5 --mtp 1 --alpha 0.8"
echo
echo "### Reports"
run "An HTML report with its pictures" "llmsim report --model 8b --gpu h200 --out report"
echo
echo "### Calibration and traces"
run "What the shipped H200 measurements hold" "llmsim calib show" 30
run "Predicted against measured, held-out kernels" "llmsim calib validate --gpu h200"
run "Whole steps of real programs, predicted through infer" "llmsim calib validate --gpu h200 --steps" 30
run "A captured PyTorch run compared with the model" "llmsim trace compare --db calib/data/trace_llama.txt.gz --gpu h200 --phases-only" 31
run "The same program on a B200" "llmsim trace replay --db calib/data/trace_llama.txt.gz --gpu b200 --phases-only" 36
echo
echo "### Models from Hugging Face"
run "A config.json, as --model takes it and as llmsim YAML" "mkdir Mistral-7B-v0.1
printf '{\"architectures\": [\"MistralForCausalLM\"], \"model_type\": \"mistral\", \"hidden_size\": 4096, \"intermediate_size\": 14336, \"num_hidden_layers\": 32, \"num_attention_heads\": 32, \"num_key_value_heads\": 8, \"vocab_size\": 32000, \"max_position_embeddings\": 32768, \"hidden_act\": \"silu\", \"rms_norm_eps\": 1e-05, \"rope_theta\": 10000.0, \"sliding_window\": 4096, \"tie_word_embeddings\": false}' > Mistral-7B-v0.1/config.json
llmsim infer --model Mistral-7B-v0.1/config.json --gpu h200 --batch 8 --prompt 1024 --output 128 | head -n 6
llmsim model import Mistral-7B-v0.1/config.json --name mistral-7b > mistral-7b.yaml
llmsim model show mistral-7b.yaml | head -n 22"
echo
echo "### Errors"
run "A broken model file" "printf 'model: x\\nlayers: 0\\n' > bad.yaml
llmsim model show bad.yaml"
run "An unknown flag" "llmsim op gemm --m 1 --n 2 --kk 3"
run "An impossible configuration" "llmsim train --model 405b --gpu h200 --gpus 1 --tp 1 --pp 1 --dp 1"
}

# The accuracy section's blocks: NAME -> its console block
accuracy() {
	case $1 in
	heldout) block "llmsim calib validate --gpu h200" ;;
	steps) block "llmsim calib validate --gpu h200 --steps" 38 ;;
	torch-steps) block "llmsim infer --model llama-3.1-8b --torch-steps calib/data/torch_steps.json" ;;
	captured) block "llmsim trace compare --db calib/data/trace_llama.txt.gz --gpu h200 --phases-only" 31 ;;
	validate) block "llmsim validate --no-fail --wide | sed -n '/^suite /,\$p'" ;;
	serve-published) block "llmsim serve --published" ;;
	*) return 1 ;;
	esac
}
generate() { # NAME: the block's contents
	if [ "$1" = tour ]; then tour; else accuracy "$1"; fi
}

if [ "$mode" = print ]; then
	tour
	exit 0
fi
readme=$src/README.md new=$tmp/README.md
# splice: each generated block's contents replaced by this run's output
skip= n=0
while IFS= read -r line || [ -n "$line" ]; do
	n=$((n + 1))
	if [ -n "$skip" ]; then
		[ "$line" = "<!-- end generated: $skip -->" ] || continue
		skip=
	fi
	printf '%s\n' "$line"
	case $line in "<!-- generated: "*" -->")
		skip=${line#<!-- generated: }
		skip=${skip% -->}
		generate "$skip" || { echo "readme-tour.sh: README.md:$n: no block named '$skip'" >&2; exit 2; } ;;
	esac
done <"$readme" >"$new"
[ -z "$skip" ] || { echo "readme-tour.sh: README.md: no '<!-- end generated: $skip -->'" >&2; exit 2; }
grep -q '^<!-- generated: ' "$new" || { echo "readme-tour.sh: README.md holds no generated block" >&2; exit 2; }
if [ "$mode" = update ]; then
	cp "$new" "$readme"
	exit 0
fi
# --check: the first differing line, its block and tour entry
first=$(cmp "$readme" "$new" 2>/dev/null | sed -n 's/.* line \([0-9]*\).*/\1/p')
if [ -z "$first" ] && cmp -s "$readme" "$new"; then
	echo "readme-tour.sh: README.md's generated blocks are what $L prints"
	exit 0
fi
[ -n "$first" ] || first=$(($(wc -l <"$new") + 1)) # one file ends first
where=$(head -n "$first" "$new" | awk '/^<!-- generated: /{b=$3; h=""} /^<!-- end generated: /{b=""} /^#### /{h=substr($0, 6)} END{printf "%s", b ? "block \"" b "\"" (h ? ", entry \"" h "\"" : "") : "outside the generated blocks"}')
echo "readme-tour.sh: README.md differs from what the code prints, from line $first ($where);" \
	"regenerate with scripts/readme-tour.sh --update:" >&2
diff -U2 --label README.md --label regenerated <(tail -n +"$((first > 3 ? first - 3 : 1))" "$readme") \
	<(tail -n +"$((first > 3 ? first - 3 : 1))" "$new") | head -n 24 >&2
exit 1
