#!/usr/bin/env python3
"""gemm_probe.py - how operand data and load move a GEMM's time and clock.

For a few GEMM shapes (F.linear in bf16, and FP8 through torch._scaled_mm),
the same shape is run on each kind of operand data:
  normal  activations N(0, 1), weights N(0, 0.02) (what trained models have)
  randn   both N(0, 1)
  grid    k/128, |k| <= 127 (kernels/kcommon.h's old KG_B7 grid)
  coarse  k/8, |k| <= 7
  zeros
and timed three ways: a single call after an idle gap (--idle-s, median of
several), a single call after a short gap (20 ms), and a sustained loop (a
CUDA graph replayed back to back for --loop-s; the last replays timed) with
NVML's SM clock, board power and clock event reasons sampled through the
loop. The kernels each call launches are recorded (profiler names).

Writes JSON (--out DIR/gemm_probe.json) with every measurement, and the
store's text form (DIR/gemm_probe.tsv, split "probe": not used by the fit;
llmsim reads the operand-data effect from it).

  python3 calib/torch/gemm_probe.py --out DIR [--dry]
"""
import argparse
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, __import__("os").path.dirname(__file__))
import llmsim_torch as lt  # noqa: E402

PROG = "gemm_probe"
SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 28672, 4096), (2048, 6144, 4096),
          (16384, 3584, 18944)]
DATA = ("normal", "randn", "grid", "coarse", "zeros")
FP8_SHAPES = [(8192, 8192, 8192), (4096, 14336, 4096)]


def operands(m, n, k, data, dev, fp8):
    if data == "randn":
        x = torch.randn(m, k, device=dev)
        w = torch.randn(n, k, device=dev)
    else:
        x = lt.fill_(torch.empty(m, k, device=dev), "normal" if data == "normal" else data, 1.0)
        w = lt.fill_(torch.empty(n, k, device=dev), "normal" if data == "normal" else data, 0.02)
    if fp8:
        if data in ("grid", "coarse", "zeros"):  # exact in e4m3 as they are, unit scales
            one = torch.ones((), device=dev)
            return (x.to(torch.float8_e4m3fn), w.to(torch.float8_e4m3fn).t(), one, one)
        xa, sa = lt.fp8_scaled(x)
        wb, sb = lt.fp8_scaled(w)
        return xa, wb.t(), sa, sb
    return x.to(torch.bfloat16), w.to(torch.bfloat16)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--dry", action="store_true")
    ap.add_argument("--idle-s", type=float, default=0.25)
    ap.add_argument("--loop-s", type=float, default=0.4)
    ap.add_argument("--singles", type=int, default=4)
    a = ap.parse_args()
    t0 = time.time()
    if not lt.is_cuda() and not a.dry:
        lt.log(PROG, "no CUDA device (use --dry on the CPU)")
        return 1
    dev = torch.device("cuda" if lt.is_cuda() else "cpu")
    torch.manual_seed(2)
    env = lt.environment()
    nv = lt.Nvml()
    sampler = lt.Sampler(nv, 0.002) if nv.ok else None
    if sampler:
        sampler.start()
    env["power_limit_w"] = nv.limit_w()
    st = lt.StoreText(env, "gemm_probe.py (torch %s)" % torch.__version__,
                      "operand-data probe: single calls after idle and sustained loops", "mixed")
    rows = []
    shapes = [(False, s) for s in SHAPES] + [(True, s) for s in FP8_SHAPES]
    if a.dry:
        shapes = [(False, (64, 64, 64)), (True, (64, 64, 64))]
        a.idle_s, a.loop_s, a.singles = 0.01, 0.02, 2
    tm = lt.Timer()
    for fp8, (m, n, k) in shapes:
        if fp8 and (not lt.is_cuda() or not hasattr(torch, "_scaled_mm")):
            continue
        for data in DATA:
            ops = operands(m, n, k, data, dev, fp8)
            if fp8:
                fn = lambda: torch._scaled_mm(ops[0], ops[1], scale_a=ops[2], scale_b=ops[3],  # noqa: E731
                                              out_dtype=torch.bfloat16)
            else:
                fn = lambda: F.linear(ops[0], ops[1])  # noqa: E731
            fn()
            lt.sync()
            _, _, names = lt.profile_device_time(fn)
            rec = {"m": m, "n": n, "k": k, "dtype": "fp8" if fp8 else "bf16", "data": data,
                   "kernels": [nm for nm, _ in names]}
            for gap, key in ((a.idle_s, "single_idle"), (0.02, "single_20ms")):
                ts, clk = [], []
                for _ in range(a.singles):
                    time.sleep(gap)
                    p = tm.pair()
                    tm.start(p)
                    fn()
                    tm.stop(p)
                    lt.sync()
                    ts.append(tm.seconds(p))
                    s = nv.sample() if nv.ok else None
                    if s:
                        clk.append(s[1])
                rec[key + "_s"] = statistics.median(ts)
                rec[key + "_clock_after_hz"] = statistics.median(clk) if clk else None
            # sustained: a graph of several calls replayed for loop_s; the
            # last quarter's replays timed one by one
            inner = max(1, int(2e-3 / max(rec["single_20ms_s"], 1e-6)))
            rep = lt.capture_graph(fn, inner=inner)
            times = []
            t_end = time.perf_counter() + a.loop_s
            t_meas = time.perf_counter() + 0.75 * a.loop_s
            pend = []
            w_start = None
            while time.perf_counter() < t_end:
                if time.perf_counter() >= t_meas:
                    if w_start is None:
                        w_start = time.perf_counter()
                    p = tm.pair()
                    tm.start(p)
                    rep()
                    tm.stop(p)
                    pend.append(p)
                else:
                    rep()
                if len(pend) >= 8 or not lt.is_cuda():
                    lt.sync()
                    times += [tm.seconds(q) / inner for q in pend]
                    pend = []
                elif lt.is_cuda() and not pend:
                    torch.cuda.current_stream().synchronize()
            lt.sync()
            times += [tm.seconds(q) / inner for q in pend]
            w_end = time.perf_counter()
            win = sampler.window(w_start or w_end - 0.1, w_end) if sampler else {}
            rec["loop_s"] = statistics.median(times) if times else None
            rec["loop_clock_hz"] = win.get("sm_clock_hz")
            rec["loop_power_w"] = win.get("power_w")
            rec["loop_reasons"] = win.get("reasons")
            rec["loop_ramp"] = ([(round(r[0] - (t_end - a.loop_s), 4), r[1], r[2]) for r in sampler.rows
                                 if t_end - a.loop_s <= r[0] <= t_end][::5] if sampler else [])
            rows.append(rec)
            fl = 2.0 * m * n * k
            lt.log(PROG, "%s %5dx%5dx%5d %-6s single %8.1f us (after %.0f ms idle) %8.1f us (20 ms)  "
                   "loop %8.1f us %s MHz %s W  %s" % (
                       rec["dtype"], m, n, k, data, rec["single_idle_s"] * 1e6, a.idle_s * 1e3,
                       rec["single_20ms_s"] * 1e6, (rec["loop_s"] or 0) * 1e6,
                       "%.0f" % (rec["loop_clock_hz"] / 1e6) if rec["loop_clock_hz"] else "-",
                       "%.0f" % rec["loop_power_w"] if rec["loop_power_w"] else "-",
                       rec["kernels"][0][:50] if rec["kernels"] else ""))
            spec = "gemm m=%d n=%d k=%d dtype=%s" % (m, n, k, rec["dtype"])
            for key in ("single_idle", "loop"):
                t = rec[key + "_s"]
                if t:
                    st.add_case(spec, "gemm", "torch_probe_%s_%s" % (data, key), "probe", fl,
                                float(m * k + n * k + m * n) * (1 if fp8 else 2),
                                {"median_s": t, "min_s": t, "p10_s": t, "p90_s": t, "reps": 1},
                                clock_hz=rec.get("loop_clock_hz") if key == "loop" else None)
            del ops, rep
            if lt.is_cuda():
                torch.cuda.empty_cache()
    if sampler:
        sampler.stop()
    lt.dump_json(lt.out_path(a.out, "gemm_probe.json"), {"env": env, "rows": rows})
    st.write(lt.out_path(a.out, "gemm_probe.tsv"))
    lt.log(PROG, "%d rows (%.0f s)" % (len(rows), time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
