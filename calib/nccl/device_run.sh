#!/usr/bin/env bash
# device_run.sh - the multi-GPU measurement plan in one call (issue 9):
# NCCL collectives on 1..N GPUs of this host and the tensor-parallel layer.
# Run from the repository root with $OUT set and the build folder carried
# (BUILD, default build-lead). Writes $OUT/nccl_gN.tsv, $OUT/nccl.db,
# $OUT/tp_layer_tpN.json, $OUT/nccl_tuning.txt and $OUT/nccl_run.log.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
OUT=${OUT:?set OUT}
BUILD=${BUILD:-build-lead}
bench=$BUILD/calib/nccl/llmsim-nccl-bench
log=$OUT/nccl_run.log
exec > >(tee -a "$log") 2>&1
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,clocks.sm,memory.total --format=csv
nvidia-smi topo -m || true
ngpu=$(nvidia-smi -L | wc -l)
echo "gpus: $ngpu"
ldd "$bench" | grep -E "not found|nccl|sqlite" || true
"$bench" --self-test || echo "self-test failed: $?"
for n in 2 4 8; do
	[ "$n" -le "$ngpu" ] || continue
	NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING NCCL_DEBUG_FILE=$OUT/nccl_debug.%h.%p \
		timeout 300 "$bench" --gpus "$n" --factor 2 --min-bytes 4096 --max-bytes 4e9 \
		--tsv "$OUT/nccl_g$n.tsv" --db "$OUT/nccl.db" || echo "bench on $n GPUs failed: $?"
done
# what NCCL chose (algorithm/protocol per size), compacted
cat "$OUT"/nccl_debug.* 2>/dev/null | grep -E "Algo|algorithm|protocol" | sort | uniq -c | sort -rn | head -200 > "$OUT/nccl_tuning.txt"
rm -f "$OUT"/nccl_debug.*
for n in 1 2 4 8; do
	[ "$n" -le "$ngpu" ] || continue
	timeout 240 torchrun --standalone --nproc_per_node="$n" calib/nccl/tp_layer.py \
		--out "$OUT/tp_layer_tp$n.json" || echo "tp layer on $n GPUs failed: $?"
done
echo "done"
