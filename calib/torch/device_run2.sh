#!/usr/bin/env bash
# device_run2.sh - one batch of GPU measurements (run from the repository
# root on the GPU machine with $OUT set):
#   power.json / power.log      clock and power under load (power_cases.py)
#   library2.tsv / library2.log decode (large grid) and PyTorch element-wise
#                               cases, in the calibration text form
#   steps_smi.csv, steps.json   the Llama-shaped steps (no capture) with
#                               nvidia-smi sampling clock, power, reasons
set -u
: "${OUT:?set OUT}"
PY=${PYTHON:-python3}
nvidia-smi -q -d CLOCK,POWER,PERFORMANCE > "$OUT/nvidia_smi_q.txt" 2>&1
timeout 240 $PY calib/torch/power_cases.py --out "$OUT/power.json" > "$OUT/power.log" 2>&1
echo "power rc=$?"
timeout 240 $PY calib/torch/library_cases.py --out "$OUT/library2.tsv" --sets decode,ew \
	--decode-grid large > "$OUT/library2.log" 2>&1
echo "library rc=$?"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_event_reasons.active \
	--format=csv -lms 20 > "$OUT/steps_smi.csv" 2>&1 &
SMI=$!
timeout 100 $PY calib/torch/llama_steps.py --role base --out "$OUT/steps.json" > "$OUT/steps.log" 2>&1
echo "steps rc=$?"
kill $SMI
tail -3 "$OUT/power.log" "$OUT/library2.log" "$OUT/steps.log"
