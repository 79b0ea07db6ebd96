"""tp_layer.py - one Megatron-style tensor-parallel Llama layer, forward and
backward, timed on the GPUs of one host, so that llmsim's training model
(compute + exposed TP communication) can be checked against a real step.

Run:  NCCL_NVLS_ENABLE=0 torchrun --nproc_per_node=N calib/nccl/tp_layer.py --out FILE.json
      (N = 1 runs the same layer without communication.)

The layer: RMSNorm, QKV (column parallel), RoPE-free causal flash attention
(PyTorch SDPA), O (row parallel) + all-reduce, RMSNorm, gate/up (column
parallel), SiLU*mul, down (row parallel) + all-reduce: Megatron-LM's f/g
operators without sequence parallelism. Random bf16 weights; nothing is
downloaded. Timing: CUDA events around whole steps after warm-up, median of
repeats; the same step with the all-reduces skipped gives the compute part.
"""
import argparse
import json
import os
import statistics

import torch
import torch.distributed as dist
import torch.nn.functional as F

os.environ["NCCL_NVLS_ENABLE"] = "0"


class _AllReduceFwd(torch.autograd.Function):
    """g: all-reduce forward, identity backward (after row-parallel)."""

    @staticmethod
    def forward(ctx, x, on):
        if on:
            dist.all_reduce(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g, None


class _AllReduceBwd(torch.autograd.Function):
    """f: identity forward, all-reduce backward (before column-parallel)."""

    @staticmethod
    def forward(ctx, x, on):
        ctx.on = on
        return x

    @staticmethod
    def backward(ctx, g):
        if ctx.on:
            g = g.contiguous()
            dist.all_reduce(g)
        return g, None


def rmsnorm(x, w):
    return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-5).to(x.dtype) * w


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hidden", type=int, default=8192)
    ap.add_argument("--heads", type=int, default=64)
    ap.add_argument("--kv-heads", type=int, default=8)
    ap.add_argument("--intermediate", type=int, default=28672)
    ap.add_argument("--seq", type=int, default=4096)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--out", default=None)
    ap.add_argument("--compile", action="store_true",
                    help="torch.compile the layer: norms and activations fused as a training framework runs them")
    a = ap.parse_args()

    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    torch.cuda.set_device(rank)
    if world > 1:
        dist.init_process_group("nccl")
    t = world
    h, nh, nkv, ffn = a.hidden, a.heads, a.kv_heads, a.intermediate
    hd = h // nh
    assert nh % t == 0 and nkv % t == 0 and ffn % t == 0
    dev, dt = "cuda", torch.bfloat16
    g = torch.Generator(device=dev).manual_seed(1234 + rank)

    def w(*shape):
        return (torch.randn(*shape, device=dev, dtype=dt, generator=g) * 0.02).requires_grad_()

    wqkv = w((nh // t + 2 * nkv // t) * hd, h)
    wo = w(h, nh // t * hd)
    wgu = w(2 * ffn // t, h)
    wdown = w(h, ffn // t)
    n1 = torch.ones(h, device=dev, dtype=dt, requires_grad=True)
    n2 = torch.ones(h, device=dev, dtype=dt, requires_grad=True)
    x0 = torch.randn(a.batch, a.seq, h, device=dev, dtype=dt, generator=g, requires_grad=True)
    comm = world > 1

    def layer(x, on):
        y = _AllReduceBwd.apply(rmsnorm(x, n1), on)
        qkv = y @ wqkv.t()
        q, k, v = qkv.split([nh // t * hd, nkv // t * hd, nkv // t * hd], dim=-1)
        b, s = x.shape[0], x.shape[1]
        q = q.view(b, s, nh // t, hd).transpose(1, 2)
        k = k.view(b, s, nkv // t, hd).transpose(1, 2)
        v = v.view(b, s, nkv // t, hd).transpose(1, 2)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        o = o.transpose(1, 2).reshape(b, s, nh // t * hd) @ wo.t()
        x = x + _AllReduceFwd.apply(o, on)
        y = _AllReduceBwd.apply(rmsnorm(x, n2), on)
        gu = y @ wgu.t()
        gate, up = gu.chunk(2, dim=-1)
        d = (F.silu(gate) * up) @ wdown.t()
        return x + _AllReduceFwd.apply(d, on)

    def timed(fn):
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        ts = []
        for _ in range(a.iters):
            if comm:
                dist.barrier()
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            torch.cuda.synchronize()
            ts.append(s.elapsed_time(e) * 1e-3)
        return statistics.median(ts)

    dy = torch.randn(a.batch, a.seq, h, device=dev, dtype=dt, generator=g)
    if a.compile:
        layer = torch.compile(layer)

    def fwd(on):
        with torch.no_grad():
            layer(x0, on)

    def fwdbwd(on):
        out = layer(x0, on)
        out.backward(dy)

    res = {
        "gpu": torch.cuda.get_device_name(0), "tp": t, "batch": a.batch, "seq": a.seq,
        "compiled": a.compile,
        "model": {"hidden": h, "heads": nh, "kv_heads": nkv, "head_dim": hd, "intermediate": ffn},
        "torch": torch.__version__, "cuda": torch.version.cuda,
        "nccl": ".".join(map(str, torch.cuda.nccl.version())) if comm else None,
        "fwd_s": timed(lambda: fwd(comm)),
        "fwdbwd_s": timed(lambda: fwdbwd(comm)),
        "fwd_nocomm_s": timed(lambda: fwd(False)),
        "fwdbwd_nocomm_s": timed(lambda: fwdbwd(False)),
    }
    if rank == 0:
        print(json.dumps(res, indent=1))
        if a.out:
            with open(a.out, "w") as f:
                json.dump(res, f, indent=1)
    if comm:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
