"""kernel_list.py - which kernels a PyTorch call launches, with their grid,
block and GPU time (torch.profiler, CUPTI underneath): the structure the
model needs for library ops it prices (how many kernels, how many
blocks). Writes JSON lines to --out and a table on stdout.

Run:  python3 calib/torch/kernel_list.py --out FILE.jsonl
"""
import argparse
import json

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.profiler import ProfilerActivity, profile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    dev, dt = torch.device("cuda"), torch.bfloat16
    cases = []

    def dec(b, h, hk, kv, d):
        q = torch.randn(b, h, 1, d, device=dev, dtype=dt)
        k = torch.randn(b, hk, kv, d, device=dev, dtype=dt)
        v = torch.randn(b, hk, kv, d, device=dev, dtype=dt)

        def f():
            with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        return f
    for b, h, hk, kv, d in ((1, 32, 8, 1024, 128), (2, 16, 1, 1024, 128), (8, 32, 8, 16384, 128),
                            (2, 32, 8, 1024, 64), (32, 32, 8, 4096, 128)):
        cases.append((f"decode impl=flashdecoding batch={b} heads={h} kv_heads={hk} kv_len={kv} "
                      f"head_dim={d} dtype=bf16", dec(b, h, hk, kv, d)))
    for T in (1, 128, 2048, 8192):
        x = torch.randn(T, 4096, device=dev, dtype=dt)
        w = torch.randn(4096, device=dev, dtype=dt)
        cases.append((f"ew kind=rmsnorm tokens={T} hidden=4096 dtype=bf16",
                      (lambda x=x, w=w: F.rms_norm(x, (4096,), w, 1e-5))))
    for b, s, be, impl in ((1, 512, SDPBackend.FLASH_ATTENTION, "flash2"), (4, 512, SDPBackend.FLASH_ATTENTION, "flash2"),
                           (1, 2048, SDPBackend.FLASH_ATTENTION, "flash2"),
                           (1, 512, SDPBackend.CUDNN_ATTENTION, "flash3"), (1, 2048, SDPBackend.CUDNN_ATTENTION, "flash3")):
        q = torch.randn(b, 32, s, 128, device=dev, dtype=dt)
        k = torch.randn(b, 8, s, 128, device=dev, dtype=dt)

        def f(q=q, k=k, be=be):
            with sdpa_kernel([be]):
                F.scaled_dot_product_attention(q, k, k, is_causal=True, enable_gqa=True)
        cases.append((f"attention impl={impl} batch={b} heads=32 kv_heads=8 seq={s} head_dim=128 causal=1", f))
    for T, I in ((2048, 14336),):
        g = torch.randn(T, 2 * I, device=dev, dtype=dt)
        cases.append((f"ew kind=silu tokens={T} hidden={I} strided=1", lambda g=g, I=I: F.silu(g[:, :I])))
    with open(a.out, "w") as out:
        for spec, f in cases:
            for _ in range(5):
                f()
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for _ in range(5):
                    f()
                torch.cuda.synchronize()
            prof.export_chrome_trace("/tmp/kl_trace.json")
            tr = json.load(open("/tmp/kl_trace.json"))
            kinds = {}
            for e in tr.get("traceEvents", []):
                if e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset"):
                    continue
                ar = e.get("args", {})
                key = (e.get("name", "")[:160], str(ar.get("grid")), str(ar.get("block")),
                       ar.get("registers per thread"), ar.get("shared memory"))
                kinds.setdefault(key, []).append(e.get("dur", 0))
            rec = {"op": spec, "kernels": [{"name": n, "grid": g, "block": bl, "regs": r, "smem": sm,
                                            "per_call": len(v) / 5, "median_us": sorted(v)[len(v) // 2]}
                                           for (n, g, bl, r, sm), v in kinds.items()]}
            out.write(json.dumps(rec) + "\n")
            print(spec)
            for k in rec["kernels"]:
                print(f"    {k['per_call']:4.1f} x {k['median_us']:8.2f} us  grid {k['grid']} block {k['block']} "
                      f"regs {k['regs']} smem {k['smem']}  {k['name'][:90]}")


if __name__ == "__main__":
    main()
