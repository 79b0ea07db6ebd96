#!/usr/bin/env python3
"""steps_train.py - one-GPU training steps of a few-layer Llama-shaped model,
written the way people write PyTorch training: nn.Module with nn.Linear,
fp32 parameters (the master weights), bf16 autocast, SDPA (flash) causal
attention, RMSNorm, SwiGLU, cross-entropy over the vocabulary,
loss.backward(), fused AdamW (torch.optim.AdamW(fused=True)) and
zero_grad(set_to_none=True). Recompute "none" or "full" (every decoder
layer under torch.utils.checkpoint, non-reentrant).

Per (model, micro-batch, sequence, recompute): warm-up steps (the optimizer
state exists from the first), then timed steps with CUDA events, the SM clock
and power from NVML, and the memory the allocator reports over the timed
steps: torch.cuda.max_memory_allocated (the peak of live tensors),
max_memory_reserved (what the caching allocator held) and the device total.
One step runs under the profiler for the kernels that ran.

Writes the calibration store's text form (schema 3, `steps` program
"torch_train", phase "train").

  python3 calib/torch/steps_train.py --out DIR [--quick] [--dry]
"""
import argparse
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

sys.path.insert(0, __import__("os").path.dirname(__file__))
import llmsim_torch as lt  # noqa: E402

PROG = "steps_train"

MODELS = {
    "llama-3.1-8b": dict(hidden=4096, heads=32, kv_heads=8, head_dim=128, inter=14336, vocab=128256,
                         tied=False),
    "llama-3.2-1b": dict(hidden=2048, heads=32, kv_heads=8, head_dim=64, inter=8192, vocab=128256,
                         tied=True),
    "llama-2-13b": dict(hidden=5120, heads=40, kv_heads=40, head_dim=128, inter=13824, vocab=32000,
                        tied=False),
    "llama-3.2-3b": dict(hidden=3072, heads=24, kv_heads=8, head_dim=128, inter=8192, vocab=128256,
                         tied=True),
    "llama-2-7b": dict(hidden=4096, heads=32, kv_heads=32, head_dim=128, inter=11008, vocab=32000,
                       tied=False),
}
# (model, layers, seq, micro-batches)
RUNS = [("llama-3.1-8b", 4, 4096, (1, 2, 4)), ("llama-3.1-8b", 4, 2048, (8,)),
        ("llama-3.2-1b", 16, 2048, (1, 4, 8)), ("llama-2-13b", 2, 4096, (1, 2))]
QUICK_RUNS = [("llama-3.1-8b", 2, 2048, (1, 4))]


class Rope(nn.Module):
    def __init__(self, head_dim, max_seq, theta=500000.0):
        super().__init__()
        inv = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
        ang = torch.outer(torch.arange(max_seq, dtype=torch.float32), inv)
        self.register_buffer("cos", ang.cos(), persistent=False)
        self.register_buffer("sin", ang.sin(), persistent=False)

    def forward(self, x):  # x [b, s, h, d]
        s, d = x.shape[1], x.shape[-1]
        c = self.cos[:s].view(1, s, 1, d // 2).to(x.dtype)
        sn = self.sin[:s].view(1, s, 1, d // 2).to(x.dtype)
        x1, x2 = x[..., :d // 2], x[..., d // 2:]
        return torch.cat([x1 * c - x2 * sn, x2 * c + x1 * sn], dim=-1)


class Block(nn.Module):
    def __init__(self, c, rope):
        super().__init__()
        H, nh, nkv, hd = c["hidden"], c["heads"], c["kv_heads"], c["head_dim"]
        self.nh, self.nkv, self.hd = nh, nkv, hd
        self.attn_norm = nn.RMSNorm(H, eps=1e-5)
        self.q = nn.Linear(H, nh * hd, bias=False)
        self.k = nn.Linear(H, nkv * hd, bias=False)
        self.v = nn.Linear(H, nkv * hd, bias=False)
        self.o = nn.Linear(nh * hd, H, bias=False)
        self.mlp_norm = nn.RMSNorm(H, eps=1e-5)
        self.gate = nn.Linear(H, c["inter"], bias=False)
        self.up = nn.Linear(H, c["inter"], bias=False)
        self.down = nn.Linear(c["inter"], H, bias=False)
        self.rope = rope

    def forward(self, x):
        b, s, _ = x.shape
        h = self.attn_norm(x)
        q = self.rope(self.q(h).view(b, s, self.nh, self.hd)).transpose(1, 2)
        k = self.rope(self.k(h).view(b, s, self.nkv, self.hd)).transpose(1, 2)
        v = self.v(h).view(b, s, self.nkv, self.hd).transpose(1, 2)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=self.nkv != self.nh)
        x = x + self.o(o.transpose(1, 2).reshape(b, s, -1))
        h = self.mlp_norm(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Model(nn.Module):
    def __init__(self, c, layers, max_seq, recompute):
        super().__init__()
        self.emb = nn.Embedding(c["vocab"], c["hidden"])
        self.rope = Rope(c["head_dim"], max_seq)
        self.blocks = nn.ModuleList(Block(c, self.rope) for _ in range(layers))
        self.norm = nn.RMSNorm(c["hidden"], eps=1e-5)
        self.head = nn.Linear(c["hidden"], c["vocab"], bias=False)
        if c["tied"]:
            self.head.weight = self.emb.weight
        self.recompute = recompute
        for m in self.modules():  # realistic weights: N(0, 0.02), as HF's init
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, 0.0, 0.02)

    def forward(self, ids, labels):
        x = self.emb(ids)
        for blk in self.blocks:
            x = checkpoint(blk, x, use_reentrant=False) if self.recompute == "full" else blk(x)
        logits = self.head(self.norm(x))
        return F.cross_entropy(logits.view(-1, logits.shape[-1]).float(), labels.view(-1))


def run_one(a, st, sampler, name, layers, seq, mb, recompute, dev):
    c = dict(MODELS[name])
    if a.dry:
        c.update(hidden=64, heads=4, kv_heads=2 if c["kv_heads"] != c["heads"] else 4, head_dim=16,
                 inter=128, vocab=512)
        layers, seq, mb = 2, 64, min(mb, 2)
    torch.manual_seed(0)
    if lt.is_cuda():
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    with torch.device(dev):  # built and initialized on the GPU
        model = Model(c, layers, seq, recompute)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.1, fused=lt.is_cuda())
    ids = torch.randint(0, c["vocab"], (mb, seq), device=dev)
    labels = torch.randint(0, c["vocab"], (mb, seq), device=dev)
    dtype = torch.bfloat16

    def train_step():
        with torch.autocast(device_type=dev.type, dtype=dtype):
            loss = model(ids, labels)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    for _ in range(2):
        train_step()
    lt.sync()
    if lt.is_cuda():
        torch.cuda.reset_peak_memory_stats()
    reps = 3 if a.dry else a.reps
    res = lt.time_calls(train_step, reps, warmup=1, load_s=0.0)
    w1 = time.perf_counter()
    win = sampler.window(w1 - res["median_s"] * reps * 1.1, w1) if sampler else {}
    peak = torch.cuda.max_memory_allocated() if lt.is_cuda() else None
    reserved = torch.cuda.max_memory_reserved() if lt.is_cuda() else None
    total = torch.cuda.mem_get_info()[1] if lt.is_cuda() else None
    ktime, kn, names = lt.profile_device_time(train_step)
    nparams = sum(p.numel() for p in model.parameters())
    spec = "model=%s layers=%d" % (name, layers)
    sid = st.add_step(program="torch_train", model_spec=spec, phase="train", batch=mb, tokens=seq,
                      context=0, recompute=recompute, graph=0, time_median_s=res["median_s"],
                      time_p10_s=res["p10_s"], time_p90_s=res["p90_s"], kernel_time_s=ktime,
                      sm_clock_hz=win.get("sm_clock_hz"), power_w=win.get("power_w"),
                      mem_peak_allocated_bytes=peak, mem_peak_reserved_bytes=reserved,
                      mem_device_total_bytes=total, reps=res["reps"],
                      notes="fp32 params %d, bf16 autocast, fused AdamW, SDPA, %d kernel launches" % (
                          nparams, kn))
    for i, (nm, t) in enumerate(names):
        st.add_step_kernel(sid, i, "", nm, None, t)
    lt.log(PROG, "%-13s L=%-2d s=%-5d mb=%-2d %-4s %9.2f ms (kernels %9.2f ms) peak %s GB reserved %s GB %s MHz" % (
        name, layers, seq, mb, recompute, res["median_s"] * 1e3, ktime * 1e3,
        "%.2f" % (peak / 1e9) if peak else "-", "%.2f" % (reserved / 1e9) if reserved else "-",
        "%.0f" % (win["sm_clock_hz"] / 1e6) if win.get("sm_clock_hz") else "-"))
    del model, opt


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--dry", action="store_true")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--budget-s", type=float, default=200)
    ap.add_argument("--runs", help="MODEL:LAYERS:SEQ:MB[/MB...],... (default: the built-in list)")
    a = ap.parse_args()
    t_start = time.time()
    if not lt.is_cuda() and not a.dry:
        lt.log(PROG, "no CUDA device (use --dry on the CPU)")
        return 1
    dev = torch.device("cuda" if lt.is_cuda() else "cpu")
    env = lt.environment()
    nv = lt.Nvml()
    sampler = lt.Sampler(nv) if nv.ok else None
    if sampler:
        sampler.start()
    st = lt.StoreText(env, "steps_train.py (torch %s)" % torch.__version__,
                      "one-GPU training step: fp32 master weights, bf16 autocast, fused AdamW, "
                      "SDPA flash, recompute none/full (torch.utils.checkpoint per layer)",
                      "normal", a.quick)
    runs = QUICK_RUNS if a.quick or a.dry else RUNS
    if a.runs:
        runs = []
        for item in a.runs.split(","):
            name, layers, seq, mbs = item.split(":")
            if name not in MODELS:
                lt.log(PROG, "unknown model '%s' (known: %s)" % (name, ", ".join(MODELS)))
                return 2
            runs.append((name, int(layers), int(seq), tuple(int(m) for m in mbs.split("/"))))
    for name, layers, seq, mbs in runs:
        for mb in mbs:
            for rc in ("none", "full"):
                if time.time() > t_start + a.budget_s:
                    lt.log(PROG, "budget reached")
                    break
                try:
                    run_one(a, st, sampler, name, layers, seq, mb, rc, dev)
                except torch.cuda.OutOfMemoryError as e:
                    lt.log(PROG, "%s mb=%d %s: out of memory (%s)" % (name, mb, rc, str(e)[:120]))
                except Exception as e:  # noqa: BLE001
                    lt.log(PROG, "%s mb=%d %s: failed: %s" % (name, mb, rc, str(e)[:300]))
                if lt.is_cuda():
                    torch.cuda.empty_cache()
    if sampler:
        sampler.stop()
    path = lt.out_path(a.out, "steps_train.tsv")
    st.write(path)
    lt.log(PROG, "%d steps -> %s (%.0f s)" % (len(st.steps), path, time.time() - t_start))
    return 0


if __name__ == "__main__":
    sys.exit(main())
