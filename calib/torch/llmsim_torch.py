"""llmsim_torch.py - what the PyTorch measurement scripts of calib/torch/ share.

- realistic operands: activations N(0, 1), weights N(0, 0.02) (or
  1/sqrt(fan-in)), FP8 tensors scaled to their range with a per-tensor
  scale, as a quantized model carries; `operand_data` names the choice
  ("normal", the default; "grid" k/128 values; "coarse" k/8; "zeros") so a
  script can also measure how data moves the clock under the power limit;
- timing: CUDA events around eager calls or CUDA-graph replays, warm-up,
  median and percentiles, a sustained mode that first loads the GPU for a
  set time (the clock a kernel inside a running program sees);
- an NVML sampler thread (SM clock, board power, clock event reasons) read
  through ctypes, so nothing beyond torch is needed;
- the environment record (GPU, driver, torch, CUDA, cuBLAS, cuDNN, clocks);
- the calibration store's text form, schema 3 (calib/store.h): devices,
  runs (with operand_data), cases, kernels, and the whole-program steps and
  their kernels. `llmsim calib import --in FILE` loads it into SQLite.

Every script runs on a CUDA GPU; `--dry` on the CPU runs the same code at
toy sizes (no graphs, host timers), to check a script before device time.
"""
import ctypes
import datetime
import json
import math
import os
import socket
import statistics
import subprocess
import sys
import threading
import time

import torch

SCHEMA_VERSION = 3
OPERAND_DATA = ("normal", "grid", "coarse", "zeros")


def log(prog, *a):
    print(prog + ":", *a, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- operands

def fill_(t, data="normal", sd=1.0):
    """Fill tensor t in place with operand data; sd is the realistic
    standard deviation (1 for activations, 0.02 for weights)."""
    with torch.no_grad():
        if data == "zeros":
            return t.zero_()
        if data == "normal":
            return t.normal_(0.0, sd)
        # few-bit grids: k / 128 with |k| <= 127, or k / 8 with |k| <= 7
        q = 127 if data == "grid" else 7
        r = torch.randint(-q, q + 1, t.shape, device=t.device, dtype=torch.int32)
        return t.copy_(r.to(torch.float32) / (q + 1))


def randn(*shape, device, dtype, data="normal", sd=1.0):
    t = torch.empty(*shape, device=device, dtype=dtype)
    return fill_(t, data, sd)


def fp8_scaled(x, fmt=None):
    """x (float) as an e4m3 tensor scaled to the format's range, and the
    float32 dequantization scale (amax / 448), as per-tensor FP8 quantization
    does. Zeros stay zeros with scale 1."""
    fmt = fmt or torch.float8_e4m3fn
    amax = x.abs().max().float()
    fmax = torch.finfo(fmt).max
    scale = torch.where(amax > 0, amax / fmax, torch.ones_like(amax))
    q = (x.float() / scale).clamp(-fmax, fmax).to(fmt)
    return q, scale.reshape(()).to(torch.float32)


# ---------------------------------------------------------------- timing

def is_cuda():
    return torch.cuda.is_available()


class Timer:
    """CUDA events on a GPU, host clock on the CPU (--dry)."""

    def __init__(self):
        self.cuda = is_cuda()

    def pair(self):
        if self.cuda:
            return (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
        return [0.0, 0.0]

    def start(self, p):
        if self.cuda:
            p[0].record()
        else:
            p[0] = time.perf_counter()

    def stop(self, p):
        if self.cuda:
            p[1].record()
        else:
            p[1] = time.perf_counter()

    def seconds(self, p):
        if self.cuda:
            return p[0].elapsed_time(p[1]) * 1e-3
        return p[1] - p[0]


def sync():
    if is_cuda():
        torch.cuda.synchronize()


def stats(ts):
    t = sorted(ts)
    n = len(t)
    pick = lambda q: t[min(n - 1, max(0, int(round(q * (n - 1)))))]  # noqa: E731
    return {"median_s": statistics.median(t), "min_s": t[0], "p10_s": pick(0.1),
            "p90_s": pick(0.9), "reps": n}


def time_calls(fn, reps, warmup=3, load_s=0.0, inner=1):
    """Median etc. of fn() (each call timed alone with events, `inner`
    calls per timed region). load_s > 0: first call fn back to back for that
    long, so the clock has settled under the power limit the way a kernel
    inside a running program finds it."""
    tm = Timer()
    for _ in range(warmup):
        fn()
    sync()
    if load_s > 0:
        t_end = time.perf_counter() + load_s
        while time.perf_counter() < t_end:
            for _ in range(8):
                fn()
            if is_cuda():
                torch.cuda.current_stream().synchronize()
    ev = [tm.pair() for _ in range(reps)]
    for p in ev:
        tm.start(p)
        for _ in range(inner):
            fn()
        tm.stop(p)
    sync()
    return stats([tm.seconds(p) / inner for p in ev])


def capture_graph(fn, inner=1, warmup=3):
    """A CUDA graph of `inner` calls of fn (warmed on a side stream first);
    on the CPU, a function calling fn `inner` times."""
    if not is_cuda():
        for _ in range(warmup):
            fn()
        return lambda: [fn() for _ in range(inner)]
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(warmup):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(inner):
            fn()
    sync()
    return g.replay


def time_graph(fn, reps, inner=10, load_s=0.0):
    """Per-call time of fn captured `inner` times in one CUDA graph."""
    rep = capture_graph(fn, inner)
    st = time_calls(rep, reps, warmup=2, load_s=load_s)
    for k in ("median_s", "min_s", "p10_s", "p90_s"):
        st[k] /= inner
    return st


# ---------------------------------------------------------------- NVML

class Nvml:
    """SM clock (Hz), board power (W) and clock event reasons of GPU 0."""

    def __init__(self):
        self.ok = False
        try:
            self.lib = ctypes.CDLL("libnvidia-ml.so.1")
            if self.lib.nvmlInit_v2() != 0:
                return
            self.h = ctypes.c_void_p()
            self.ok = self.lib.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(self.h)) == 0
        except OSError:
            self.ok = False

    def sample(self):
        if not self.ok:
            return None
        clk, mw, rs = ctypes.c_uint(), ctypes.c_uint(), ctypes.c_ulonglong()
        self.lib.nvmlDeviceGetClockInfo(self.h, 1, ctypes.byref(clk))  # NVML_CLOCK_SM
        self.lib.nvmlDeviceGetPowerUsage(self.h, ctypes.byref(mw))
        self.lib.nvmlDeviceGetCurrentClocksEventReasons(self.h, ctypes.byref(rs))
        return (time.perf_counter(), clk.value * 1e6, mw.value * 1e-3, rs.value)

    def limit_w(self):
        if not self.ok:
            return None
        mw = ctypes.c_uint()
        self.lib.nvmlDeviceGetEnforcedPowerLimit(self.h, ctypes.byref(mw))
        return mw.value * 1e-3


class Sampler(threading.Thread):
    """Samples NVML every period_s; window() summarizes a time span."""

    def __init__(self, nvml, period_s=0.005):
        super().__init__(daemon=True)
        self.nvml, self.period, self.rows, self.halt = nvml, period_s, [], False

    def run(self):
        while not self.halt and self.nvml.ok:
            r = self.nvml.sample()
            if r:
                self.rows.append(r)
            time.sleep(self.period)

    def stop(self):
        self.halt = True

    def window(self, t0, t1):
        rows = [r for r in self.rows if t0 <= r[0] <= t1]
        if not rows:
            return {"sm_clock_hz": None, "power_w": None, "samples": 0, "reasons": 0}
        reasons = 0
        for r in rows:
            reasons |= r[3]
        return {"sm_clock_hz": statistics.mean(r[1] for r in rows),
                "power_w": statistics.mean(r[2] for r in rows),
                "samples": len(rows), "reasons": reasons}


# ---------------------------------------------------------------- environment

def environment():
    env = {"host": socket.gethostname(), "torch": torch.__version__,
           "cuda": torch.version.cuda or "", "python": sys.version.split()[0],
           "when": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
    if is_cuda():
        p = torch.cuda.get_device_properties(0)
        env.update(device=torch.cuda.get_device_name(0), sms=p.multi_processor_count,
                   hbm_bytes=float(p.total_memory), l2_bytes=float(getattr(p, "L2_cache_size", 0)),
                   uuid=str(getattr(p, "uuid", "")))
        try:
            env["cudnn"] = str(torch.backends.cudnn.version())
        except Exception:  # noqa: BLE001
            env["cudnn"] = ""
        try:
            q = subprocess.run(["nvidia-smi", "--query-gpu=driver_version,clocks.max.sm,"
                                "power.limit,clocks.sm,temperature.gpu", "--format=csv,noheader,nounits"],
                               capture_output=True, text=True, timeout=20).stdout.strip().split(", ")
            env.update(driver=q[0], sm_clock_max_hz=float(q[1]) * 1e6, power_limit_w=float(q[2]),
                       sm_clock_idle_hz=float(q[3]) * 1e6, temperature_c=float(q[4]))
        except Exception:  # noqa: BLE001
            pass
        try:
            import nvidia.cublas  # noqa: F401
            env["cublas_pkg"] = _pkg_version("nvidia-cublas")
        except Exception:  # noqa: BLE001
            env["cublas_pkg"] = ""
    else:
        env.update(device="cpu (dry run)", sms=0, hbm_bytes=0.0, l2_bytes=0.0, uuid="")
    return env


def _pkg_version(name):
    try:
        from importlib.metadata import version
        return version(name)
    except Exception:  # noqa: BLE001
        return ""


def hw_name(device):
    for key, hw in (("H200", "h200"), ("H100", "h100"), ("A100", "a100"), ("B200", "b200"),
                    ("H800", "h800"), ("H20", "h20"), ("L40S", "l40s")):
        if key in device:
            return hw
    return ""


# ---------------------------------------------------------------- store text

def esc(v):
    if v is None:
        return "\\N"
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, float):
        if v == math.floor(v) and abs(v) < 1e15:
            return "%.0f" % v
        return repr(v)
    return str(v).replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


CASE_COLS = ("id", "run_id", "op_spec", "op_class", "impl", "split", "flops_declared",
             "bytes_declared", "reps", "time_median_s", "time_min_s", "time_p10_s", "time_p90_s",
             "sm_clock_hz", "check_rel_err", "load_s")
KERNEL_COLS = ("id", "case_id", "seq", "name", "grid_x", "grid_y", "grid_z", "block_x", "block_y",
               "block_z", "regs_per_thread", "static_smem_bytes", "dynamic_smem_bytes",
               "duration_median_s", "launches_per_rep")
STEP_COLS = ("id", "run_id", "program", "model_spec", "phase", "batch", "tokens", "context",
             "recompute", "graph", "time_median_s", "time_p10_s", "time_p90_s", "kernel_time_s",
             "sm_clock_hz", "power_w", "mem_peak_allocated_bytes", "mem_peak_reserved_bytes",
             "mem_device_total_bytes", "reps", "notes")
STEP_KERNEL_COLS = ("step_id", "seq", "op", "name", "calls", "time_s")


class StoreText:
    """Collects one run (one program, one operand-data choice) and writes it
    in the store's text form."""

    def __init__(self, env, tool, notes, operand_data="normal", quick=False):
        self.env, self.tool, self.notes = env, tool, notes
        self.operand_data, self.quick = operand_data, quick
        self.cases, self.kernels, self.steps, self.step_kernels = [], [], [], []

    def add_case(self, spec, op_class, impl, split, flops, nbytes, st, clock_hz=None, check=-1.0,
                 kernels=None, load_s=0.0):
        cid = len(self.cases) + 1
        self.cases.append((cid, 1, spec, op_class, impl, split, float(flops), float(nbytes),
                           st["reps"], st["median_s"], st["min_s"], st["p10_s"], st["p90_s"],
                           clock_hz, float(check), float(load_s)))
        for k in kernels or ():
            self.kernels.append((len(self.kernels) + 1, cid) + tuple(k))
        return cid

    def add_step(self, **kw):
        sid = len(self.steps) + 1
        row = [sid, 1] + [kw.get(c) for c in STEP_COLS[2:]]
        self.steps.append(tuple(row))
        return sid

    def add_step_kernel(self, step_id, seq, op, name, calls, time_s):
        self.step_kernels.append((step_id, seq, op, name, calls, time_s))

    def write(self, path):
        e = self.env
        with open(path, "w") as f:
            w = lambda *cols: f.write("\t".join(esc(c) for c in cols) + "\n")  # noqa: E731
            w("llmsim-calib", "schema_version", SCHEMA_VERSION)
            w("columns", "devices", "id", "name", "hw_name", "uuid", "sms", "device_count",
              "hbm_bytes", "l2_bytes", "sm_clock_max_hz", "mem_clock_hz", "driver",
              "cuda_runtime", "cupti", "cublas", "nccl")
            w("devices", 1, e.get("device", ""), hw_name(e.get("device", "")), e.get("uuid", ""),
              e.get("sms", 0), 1, e.get("hbm_bytes"), e.get("l2_bytes"), e.get("sm_clock_max_hz"),
              None, e.get("driver", ""), e.get("cuda", ""), "", e.get("cublas_pkg", ""), "")
            w("columns", "runs", "id", "device_id", "started_at", "host", "tool", "quick",
              "operand_data", "notes", "status")
            w("runs", 1, 1, e.get("when", ""), e.get("host", ""), self.tool, int(self.quick),
              self.operand_data,
              "%s; torch %s, CUDA %s, cuDNN %s, driver %s" % (
                  self.notes, e.get("torch", ""), e.get("cuda", ""), e.get("cudnn", ""),
                  e.get("driver", "")), "complete")
            w("columns", "cases", *CASE_COLS)
            for c in self.cases:
                w("cases", *c)
            w("columns", "kernels", *KERNEL_COLS)
            for k in self.kernels:
                w("kernels", *k)
            w("columns", "counters", "case_id", "name", "value")
            w("columns", "steps", *STEP_COLS)
            for s in self.steps:
                w("steps", *s)
            w("columns", "step_kernels", *STEP_KERNEL_COLS)
            for k in self.step_kernels:
                w("step_kernels", *k)


# ---------------------------------------------------------------- profiler

def profile_kernels(fn, label_prefix="llmsim:"):
    """Run fn once under torch.profiler; return (kernels, by_label):
    kernels: [(name, duration_s)] in launch order; by_label: {label: [(name,
    duration_s)]} for the kernels launched inside record_function ranges
    whose name starts with label_prefix (innermost range wins)."""
    from torch.profiler import ProfilerActivity, profile
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if is_cuda() else [])
    with profile(activities=acts) as prof:
        fn()
        sync()
    kernels, by_label = [], {}

    def walk(ev, label):
        name = ev.name
        if name.startswith(label_prefix):
            label = name[len(label_prefix):]
        for k in getattr(ev, "kernels", []) or []:
            d = k.duration * 1e-6  # us
            kernels.append((k.name, d, label))
            if label is not None:
                by_label.setdefault(label, []).append((k.name, d))
        for c in ev.cpu_children:
            walk(c, label)

    for ev in prof.events():
        if ev.cpu_parent is None:
            walk(ev, None)
    return kernels, by_label


def profile_device_time(fn):
    """Sum of device kernel durations (s) of one fn() and their count, from
    the profiler (graph replays included)."""
    from torch.profiler import ProfilerActivity, profile
    if not is_cuda():
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0, 0, []
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        sync()
    names = {}
    tot, n = 0.0, 0
    for ev in prof.events():
        if getattr(ev, "device_type", None) is not None and str(ev.device_type).endswith("CUDA"):
            d = ev.device_time_total if hasattr(ev, "device_time_total") else ev.cuda_time_total
            tot += d * 1e-6
            n += 1
            names[ev.name] = names.get(ev.name, 0.0) + d * 1e-6
    return tot, n, sorted(names.items(), key=lambda x: -x[1])


def dump_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1, default=str)


def out_path(out_dir, name):
    os.makedirs(out_dir, exist_ok=True)
    return os.path.join(out_dir, name)
