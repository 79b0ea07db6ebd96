"""power_cases.py - how a GPU's clock follows its power limit under load.

A kernel timed alone, after idle, runs at the burst clock; the same kernel
inside a long run of work (a training step, a prefill batch) runs at the
clock the board's power limit allows. This script measures both, for the
model's power law:

  1. ramp: from idle, one kernel back to back for RUN_S seconds, every
     launch timed with CUDA events, the SM clock, board power and clock
     event reasons sampled through NVML every ~5 ms in a thread;
  2. duty: a GEMM alternated with an idle gap (torch.cuda._sleep, one
     spinning thread) at several duty cycles; steady-state GEMM time,
     clock and power per duty cycle.

Writes JSON (--out). Needs torch and libnvidia-ml.so.1. Nothing here is
specific to one GPU model: shapes scale with its memory.

Run:  python3 calib/torch/power_cases.py --out FILE.json [--run-s 1.5]
"""
import argparse
import ctypes
import json
import statistics
import subprocess
import threading
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


class Nvml:
    def __init__(self):
        self.lib = ctypes.CDLL("libnvidia-ml.so.1")
        assert self.lib.nvmlInit_v2() == 0
        self.h = ctypes.c_void_p()
        assert self.lib.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(self.h)) == 0

    def sample(self):
        clk = ctypes.c_uint()
        mw = ctypes.c_uint()
        rs = ctypes.c_ulonglong()
        self.lib.nvmlDeviceGetClockInfo(self.h, 1, ctypes.byref(clk))  # NVML_CLOCK_SM
        self.lib.nvmlDeviceGetPowerUsage(self.h, ctypes.byref(mw))
        self.lib.nvmlDeviceGetCurrentClocksEventReasons(self.h, ctypes.byref(rs))
        return clk.value, mw.value / 1000.0, rs.value

    def limit_w(self):
        mw = ctypes.c_uint()
        self.lib.nvmlDeviceGetEnforcedPowerLimit(self.h, ctypes.byref(mw))
        return mw.value / 1000.0


class Sampler(threading.Thread):
    def __init__(self, nvml, period_s=0.005):
        super().__init__(daemon=True)
        self.nvml, self.period, self.rows, self.stop_ = nvml, period_s, [], False

    def run(self):
        t0 = time.perf_counter()
        while not self.stop_:
            c, p, r = self.nvml.sample()
            self.rows.append((time.perf_counter() - t0, c, p, r))
            time.sleep(self.period)


def idle(s):
    torch.cuda.synchronize()
    time.sleep(s)


def ramp(name, fn, run_s, nvml, idle_s):
    """fn back to back for run_s from idle; per-launch event times."""
    idle(idle_s)
    smp = Sampler(nvml)
    evs = []
    smp.start()
    t0 = time.perf_counter()
    start = torch.cuda.Event(enable_timing=True)
    start.record()
    while time.perf_counter() - t0 < run_s:
        for _ in range(8):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            evs.append((a, b))
        # keep the queue short so host time tracks GPU time
        evs[-8][1].synchronize()
    torch.cuda.synchronize()
    smp.stop_ = True
    smp.join()
    ks = [(start.elapsed_time(a) * 1e-3, a.elapsed_time(b) * 1e-3) for a, b in evs]
    d = [x[1] for x in ks]
    first = [x[1] for x in ks if x[0] < 0.02] or d[:3]
    last = [x[1] for x in ks if x[0] > ks[-1][0] - 0.5]
    busy = sum(d) / (ks[-1][0] + ks[-1][1] - ks[0][0])
    steady = [r for r in smp.rows if r[0] > run_s - 0.5]
    out = {
        "name": name, "launches": len(ks), "busy_fraction": busy,
        "first_20ms_median_s": statistics.median(first),
        "last_500ms_median_s": statistics.median(last),
        "steady_sm_clock_mhz": statistics.median([r[1] for r in steady]) if steady else None,
        "steady_power_w": statistics.median([r[2] for r in steady]) if steady else None,
        "kernels": [[round(t, 6), round(x, 9)] for t, x in ks],
        "nvml": [[round(r[0], 4), r[1], r[2], r[3]] for r in smp.rows],
    }
    print(f"{name:28s} first {out['first_20ms_median_s']*1e6:9.1f} us  last {out['last_500ms_median_s']*1e6:9.1f} us"
          f"  ratio {out['last_500ms_median_s']/out['first_20ms_median_s']:.3f}  clock {out['steady_sm_clock_mhz']} MHz"
          f"  power {out['steady_power_w']} W  busy {busy:.2f}", flush=True)
    return out


def duty(fn, t_kernel_s, frac, run_s, nvml, idle_s, clock_hz):
    """fn then an idle gap so that fn's share of the time is frac."""
    idle(idle_s)
    gap_s = t_kernel_s * (1 - frac) / frac
    cycles = int(gap_s * clock_hz)
    smp = Sampler(nvml)
    smp.start()
    evs = []
    t0 = time.perf_counter()
    start = torch.cuda.Event(enable_timing=True)
    start.record()
    while time.perf_counter() - t0 < run_s:
        for _ in range(4):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            if cycles > 0:
                torch.cuda._sleep(cycles)
            evs.append((a, b))
        evs[-4][1].synchronize()
    torch.cuda.synchronize()
    smp.stop_ = True
    smp.join()
    ks = [(start.elapsed_time(a) * 1e-3, a.elapsed_time(b) * 1e-3) for a, b in evs]
    span = ks[-1][0] + ks[-1][1] - ks[0][0]
    busy = sum(x[1] for x in ks) / span
    last = [x[1] for x in ks if x[0] > ks[-1][0] - 0.5]
    steady = [r for r in smp.rows if r[0] > run_s - 0.5]
    out = {"target_duty": frac, "measured_duty": busy, "gap_cycles": cycles,
           "last_500ms_median_s": statistics.median(last),
           "steady_sm_clock_mhz": statistics.median([r[1] for r in steady]) if steady else None,
           "steady_power_w": statistics.median([r[2] for r in steady]) if steady else None}
    print(f"duty {frac:4.2f} (measured {busy:.2f}): kernel {out['last_500ms_median_s']*1e6:9.1f} us"
          f"  clock {out['steady_sm_clock_mhz']} MHz  power {out['steady_power_w']} W", flush=True)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--run-s", type=float, default=1.5)
    ap.add_argument("--idle-s", type=float, default=4.0)
    ap.add_argument("--check", action="store_true",
                    help="only the held-out check: other shapes, FP8, other duty cycles")
    a = ap.parse_args()
    dev = torch.device("cuda")
    dt = torch.bfloat16
    torch.manual_seed(0)
    nvml = Nvml()
    res = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "cuda": torch.version.cuda,
           "power_limit_w": nvml.limit_w(), "idle_sample": nvml.sample(), "ramp": [], "duty": []}
    q = subprocess.run(["nvidia-smi", "--query-gpu=driver_version,clocks.max.sm,power.limit,power.max_limit",
                        "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    res["nvidia_smi"] = q
    print(res["gpu"], q, flush=True)

    A = torch.randn(8192, 8192, device=dev, dtype=dt)
    B = torch.randn(8192, 8192, device=dev, dtype=dt)
    X = torch.randn(8192, 4096, device=dev, dtype=dt)
    W = torch.randn(28672, 4096, device=dev, dtype=dt)
    A8 = (torch.randn(8192, 8192, device=dev) * 0.5).to(torch.float8_e4m3fn)
    B8 = (torch.randn(8192, 8192, device=dev) * 0.5).to(torch.float8_e4m3fn).t()
    one = torch.ones((), device=dev, dtype=torch.float32)
    q_ = torch.randn(8, 32, 4096, 128, device=dev, dtype=dt)
    k_ = torch.randn(8, 8, 4096, 128, device=dev, dtype=dt)
    src = torch.randn(1 << 30, device=dev, dtype=dt)   # 2 GiB
    dst = torch.empty_like(src)
    gu = torch.randn(8192, 2 * 14336, device=dev, dtype=dt)

    def fa():
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
            F.scaled_dot_product_attention(q_, k_, k_, is_causal=True, enable_gqa=True)

    work = [
        ("gemm_bf16_8192x8192x8192", lambda: A @ B),
        ("gemm_bf16_8192x28672x4096", lambda: X @ W.t()),
        ("gemm_fp8_8192x8192x8192", lambda: torch._scaled_mm(A8, B8, scale_a=one, scale_b=one,
                                                              out_dtype=torch.bfloat16)),
        ("fa2_fwd_b8_h32_kv8_s4096_causal", fa),
        ("hbm_copy_2GiB", lambda: dst.copy_(src)),
        ("silu_strided_8192x14336", lambda: F.silu(gu[:, :14336])),
    ]
    if a.check:
        # shapes and duty cycles the model was not built on
        Xc = torch.randn(4096, 4096, device=dev, dtype=dt)
        Wc = torch.randn(14336, 4096, device=dev, dtype=dt)
        A8c = (torch.randn(4096, 8192, device=dev) * 0.5).to(torch.float8_e4m3fn)
        B8c = (torch.randn(14336, 8192, device=dev) * 0.5).to(torch.float8_e4m3fn).t()
        checks = [("gemm_bf16_4096x14336x4096", lambda: Xc @ Wc.t(), (1.0, 0.9, 0.7)),
                  ("gemm_fp8_4096x14336x8192", lambda: torch._scaled_mm(A8c, B8c, scale_a=one, scale_b=one,
                                                                         out_dtype=torch.bfloat16), (1.0, 0.85, 0.6))]
        res["check"] = []
        for name, fn, duties in checks:
            for _ in range(5):
                fn()
            r = ramp(name, fn, a.run_s, nvml, a.idle_s)
            r.pop("kernels"); r.pop("nvml")
            r["duty"] = [duty(fn, r["first_20ms_median_s"], f, a.run_s + 0.5, nvml, a.idle_s, 1.98e9)
                         for f in duties if f < 1.0]
            res["check"].append(r)
        with open(a.out, "w") as f:
            json.dump(res, f)
        print("->", a.out)
        return
    for name, fn in work:
        for _ in range(3):
            fn()
        res["ramp"].append(ramp(name, fn, a.run_s, nvml, a.idle_s))

    # duty cycles of the in-situ GEMM shape
    g = lambda: X @ W.t()
    t1 = res["ramp"][1]["first_20ms_median_s"]
    clk = 1.98e9
    for frac in (1.0, 0.8, 0.6, 0.4, 0.25):
        res["duty"].append(duty(g, t1, frac, a.run_s + 0.5, nvml, a.idle_s, clk))
    with open(a.out, "w") as f:
        json.dump(res, f)
    print("->", a.out)


if __name__ == "__main__":
    main()
