# device_common.sh - what every measurement script on the GPU machine does
# around its steps (sourced by device_run3.sh and device_run_user.sh, after
# they set PART): the part's folder $W and log $LOG, the device and library
# versions, an NVML trace of clock and power while it runs, `step` (one
# program under a timeout, packed after it so a kill at the call's limit
# keeps what was measured) and `device_finish`. Never touches clocks or
# settings.
: "${OUT:?set OUT}"
: "${PART:?set PART}"
PY=${PYTHON:-python3}
W="$OUT/$PART"
mkdir -p "$W"
LOG="$OUT/$PART.log"
T0=$(date +%s)
DEVICE_PROG=$(basename "$0" .sh)
log() { echo "[$DEVICE_PROG +$(($(date +%s) - T0))s] $*" | tee -a "$LOG" >&2; }
export PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH="/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="/usr/local/cuda/bin:$PATH"
nvidia-smi -q >"$W/nvidia_smi_before.txt" 2>&1
log "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv,noheader 2>&1)"
$PY -c 'import torch, transformers; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(), "transformers", transformers.__version__)' >>"$LOG" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
	--format=csv -lms 100 >"$W/smi_trace.csv" 2>&1 &
SMI=$!
pack() { tar -czf "$OUT/$PART.tar.gz" -C "$OUT" "$PART"; }
step() { # name timeout cmd...; returns the program's status
	local name=$1 to=$2
	shift 2
	log "$name: start (timeout ${to}s): $*"
	timeout -k 5 "$to" "$@" >"$W/$name.log" 2>&1
	local rc=$?
	log "$name: rc $rc $(tail -1 "$W/$name.log")"
	pack
	return $rc
}
device_finish() {
	kill $SMI 2>/dev/null
	nvidia-smi -q -d CLOCK,POWER,PERFORMANCE,TEMPERATURE >"$W/nvidia_smi_after.txt" 2>&1
	log "done in $(($(date +%s) - T0)) s"
	pack && rm -rf "$W"
	ls -la "$OUT"
}
