#!/usr/bin/env python3
"""heldout_ops.py - PyTorch calls as users make them, at shapes the fit never
saw, with realistic operands: llmsim's held-out per-kernel cases.

The fit's cases come from llmsim's runner (kernels/) and library_cases.py at
the Llama 3.1 8B and 70B/TP8 shapes. These come from another program, at the
projection shapes of other model families (Qwen2.5-7B, Mistral-Nemo-12B,
Phi-3-medium, Gemma-2-9B with head_dim 256, Llama-3.2-1B, Llama-2-13B MHA)
and token counts from decode to long prefill:
  - F.linear in bf16 (activations N(0, 1), weights N(0, 0.02));
  - FP8 GEMMs through torch._scaled_mm, per-tensor scaled to the e4m3 range;
  - F.scaled_dot_product_attention with PyTorch's own backend choice
    (prefill, causal; forward, and forward+backward for training shapes) and
    decode (one token against a cache, the query heads of a KV head packed
    into the query axis, as an engine does);
  - F.rms_norm, SiLU-and-multiply on a fused gate-up output, residual add.

Every case runs inside a sustained load: captured in a CUDA graph over
rotating input sets (beyond the L2, as inside a model step), replayed back to
back for --load-s before timing, while NVML samples the clock. The kernels
each call launched are recorded from the profiler (their names pick the op
spec's implementation: FlashAttention-2 -> flash2, cuDNN -> flash3).

Writes the calibration store's text form (schema 3), split "holdout".

  python3 calib/torch/heldout_ops.py --out DIR [--quick] [--dry]
      [--sets gemm,fp8,attn,decode,ew,naive,wide]   (naive, wide: not in the default)
"""
import argparse
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, __import__("os").path.dirname(__file__))
import llmsim_torch as lt  # noqa: E402

PROG = "heldout_ops"

# (family, [(name, n, k)]): projection shapes, weights [n, k]
FAMILIES = [
    ("qwen2.5-7b", [("qkv", 4608, 3584), ("o", 3584, 3584), ("gate_up", 37888, 3584),
                    ("down", 3584, 18944), ("lm_head", 152064, 3584)]),
    ("mistral-nemo-12b", [("qkv", 6144, 5120), ("o", 5120, 4096), ("gate_up", 28672, 5120),
                          ("down", 5120, 14336)]),
    ("phi-3-medium", [("qkv", 7680, 5120), ("gate_up", 35840, 5120), ("down", 5120, 17920)]),
    ("gemma-2-9b", [("qkv", 8192, 3584), ("o", 3584, 4096), ("down", 3584, 14336)]),
    ("llama-3.2-1b", [("qkv", 3072, 2048), ("o", 2048, 2048), ("gate_up", 16384, 2048),
                      ("down", 2048, 8192)]),
]
TOKENS = [1, 16, 64, 256, 1024, 4096, 16384]
FP8_FAMILIES = ("qwen2.5-7b", "mistral-nemo-12b")
FP8_TOKENS = [16, 256, 4096, 16384]
# prefill attention: (batch, heads, kv_heads, seq, head_dim, backward too)
ATTN = [(1, 28, 4, 4096, 128, True), (2, 28, 4, 2048, 128, False), (1, 16, 8, 4096, 256, False),
        (2, 32, 8, 2048, 64, True), (1, 40, 10, 8192, 128, False), (4, 40, 40, 1024, 128, True),
        (8, 28, 4, 1024, 128, False), (1, 32, 8, 16384, 128, False)]
# decode: (batch, heads, kv_heads, kv_len, head_dim)
DECODE = [(4, 28, 4, 8192, 128), (32, 28, 4, 2048, 128), (16, 16, 8, 4096, 256),
          (64, 32, 8, 2048, 64), (2, 40, 40, 16384, 128), (128, 28, 4, 1024, 128),
          (1, 40, 10, 32768, 128), (256, 32, 8, 512, 64)]
# naive attention as users run it: (batch, heads, kv_heads, seq, head_dim)
NAIVE = [(1, 32, 8, 1024, 128), (4, 16, 16, 512, 64), (1, 28, 4, 2048, 128), (2, 24, 8, 1024, 128)]
# rows read by PyTorch's softmax / norm kernels: (tokens, row width)
WIDE = [(256, 32000), (64, 128256), (4096, 4096), (1024, 16384), (32, 151936), (8192, 2048)]
EW_HIDDEN = [3584, 5120]
EW_TOKENS = [1, 64, 1024, 8192]


def kernel_impl(names):
    s = " ".join(names).lower()
    if "cudnn" in s or "fmha" in s and "sm90" in s:
        return "flash3"
    if "flash" in s:
        return "flash2"
    if "efficient" in s or "cutlass" in s and "attention" in s:
        return "mem_efficient"
    return "math"


class Cases:
    def __init__(self, a, st, sampler, dev):
        self.a, self.st, self.sampler, self.dev = a, st, sampler, dev
        self.n = 0
        self.split = "holdout"

    def sets_for(self, nbytes):
        return max(1, min(8, int(256e6 // max(nbytes, 1)) + 1))

    def run(self, spec, op_class, impl, flops, nbytes, make, fn, impl_from_kernels=False):
        """make() -> tuple of inputs; fn(*inputs) the call. Rotates over
        enough input sets to exceed the L2."""
        a = self.a
        nset = 1 if a.dry else self.sets_for(nbytes)
        try:
            data = [make() for _ in range(nset)]
            it = [0]

            def call():
                i = it[0] = (it[0] + 1) % nset
                fn(*data[i])
            call()
            lt.sync()
            _, _, names = lt.profile_device_time(call)
            knames = [nm for nm, _ in names]
            if impl_from_kernels:
                spec = spec.replace("impl=?", "impl=" + kernel_impl(knames))
            graph = lt.is_cuda() and not a.no_graph
            if graph:
                res = lt.time_graph(call, reps=a.reps, inner=max(nset, 10), load_s=a.load_s)
            else:
                res = lt.time_calls(call, a.reps, warmup=2, load_s=a.load_s)
            w1 = time.perf_counter()
            win = self.sampler.window(w1 - 0.05, w1) if self.sampler else {}
        except Exception as e:  # noqa: BLE001
            lt.log(PROG, "%s: skipped (%s)" % (spec, str(e)[:200]))
            return
        kern = [(i, nm, 0, 0, 0, 0, 0, 0, 0, 0, 0, t, 1) for i, (nm, t) in enumerate(names[:8])]
        self.st.add_case(spec, op_class, impl, self.split, flops, nbytes, res,
                         clock_hz=win.get("sm_clock_hz"), kernels=kern, load_s=a.load_s)
        self.n += 1
        lt.log(PROG, "%-18s %-100s %10.2f us %s MHz  %s" % (
            impl, spec, res["median_s"] * 1e6,
            "%.0f" % (win["sm_clock_hz"] / 1e6) if win.get("sm_clock_hz") else "-",
            knames[0][:60] if knames else ""))
        del data


def gemm_cases(c, dev, dry):
    dt = torch.bfloat16
    for fam, projs in FAMILIES:
        for pname, n, k in projs:
            for m in (TOKENS if not dry else [1, 16]):
                if dry:
                    n, k = 64, 32
                if pname == "lm_head" and m > 4096:
                    continue
                spec = "gemm m=%d n=%d k=%d dtype=bf16" % (m, n, k)
                c.run(spec, "gemm", "torch_linear", 2.0 * m * n * k, 2.0 * (m * k + n * k + m * n),
                      lambda m=m, n=n, k=k: (lt.randn(m, k, device=dev, dtype=dt),
                                             lt.randn(n, k, device=dev, dtype=dt, sd=0.02)),
                      lambda x, w: F.linear(x, w))


def fp8_cases(c, dev, dry):
    if not hasattr(torch, "_scaled_mm") or not lt.is_cuda():
        return
    for fam, projs in FAMILIES:
        if fam not in FP8_FAMILIES:
            continue
        for pname, n, k in projs:
            if pname == "lm_head":
                continue
            for m in FP8_TOKENS:
                def make(m=m, n=n, k=k):
                    xa, sa = lt.fp8_scaled(torch.randn(m, k, device=dev))
                    wb, sb = lt.fp8_scaled(torch.randn(n, k, device=dev) * 0.02)
                    return xa, wb.t(), sa, sb
                spec = "gemm m=%d n=%d k=%d dtype=fp8" % (m, n, k)
                c.run(spec, "gemm", "torch_scaled_mm", 2.0 * m * n * k, float(m * k + n * k + 2 * m * n),
                      make, lambda x, w, sa, sb: torch._scaled_mm(x, w, scale_a=sa, scale_b=sb,
                                                                  out_dtype=torch.bfloat16))


def attn_cases(c, dev, dry):
    dt = torch.bfloat16
    for b, h, hk, s, d, bwd in ATTN:
        if dry:
            b, h, hk, s, d = 1, 4, 2, 64, 16
        gqa = hk != h
        fl = 4.0 * b * h * s * s * d * 0.5
        io = 2.0 * b * s * d * (2 * h + 2 * hk)
        base = ("attention impl=? batch=%d heads=%d kv_heads=%d seq=%d kv_seq=%d head_dim=%d causal=1"
                % (b, h, hk, s, s, d))

        def make(b=b, h=h, hk=hk, s=s, d=d):
            return (lt.randn(b, h, s, d, device=dev, dtype=dt), lt.randn(b, hk, s, d, device=dev, dtype=dt),
                    lt.randn(b, hk, s, d, device=dev, dtype=dt))
        c.run(base + " pass=fwd dtype=bf16", "attention", "torch_sdpa_default", fl, io, make,
              lambda q, k, v, gqa=gqa: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa),
              impl_from_kernels=True)
        if bwd:
            def make_b(b=b, h=h, hk=hk, s=s, d=d):
                q, k, v = (t.requires_grad_() for t in make(b, h, hk, s, d))
                return q, k, v, lt.randn(b, h, s, d, device=dev, dtype=dt)

            def fb(q, k, v, do, gqa=gqa):
                o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa)
                torch.autograd.grad(o, (q, k, v), do)
            c.a.no_graph_saved, c.a.no_graph = c.a.no_graph, True  # autograd: eager
            c.run(base + " pass=fwdbwd dtype=bf16", "attention", "torch_sdpa_default_fb", 3.5 * fl,
                  3 * io, make_b, fb, impl_from_kernels=True)
            c.a.no_graph = c.a.no_graph_saved


def decode_cases(c, dev, dry):
    dt = torch.bfloat16
    for b, h, hk, kv, d in DECODE:
        if dry:
            b, h, hk, kv, d = 2, 4, 2, 64, 16

        def make(b=b, h=h, hk=hk, kv=kv, d=d):
            return (lt.randn(b, hk, h // hk, d, device=dev, dtype=dt),
                    lt.randn(b, hk, kv, d, device=dev, dtype=dt), lt.randn(b, hk, kv, d, device=dev, dtype=dt))
        spec = ("decode impl=flashdecoding batch=%d heads=%d kv_heads=%d kv_len=%d head_dim=%d dtype=bf16"
                % (b, h, hk, kv, d))
        from torch.nn.attention import SDPBackend, sdpa_kernel

        def dec(q, k, v):
            with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                F.scaled_dot_product_attention(q, k, v)
        c.run(spec, "decode", "torch_sdpa_flash_decode", 4.0 * b * h * kv * d, 2.0 * b * hk * kv * d * 2 + 4.0 * b * h * d,
              make, dec)


def ew_cases(c, dev, dry):
    dt = torch.bfloat16
    for H in EW_HIDDEN:
        for T in EW_TOKENS:
            if dry:
                H, T = 64, 8
            w = torch.ones(H, device=dev, dtype=dt)
            c.run("ew kind=rmsnorm tokens=%d hidden=%d dtype=bf16" % (T, H), "elementwise", "torch_rms_norm",
                  4.0 * T * H, 4.0 * T * H + 2 * H, lambda T=T, H=H: (lt.randn(T, H, device=dev, dtype=dt),),
                  lambda x, w=w, H=H: F.rms_norm(x, (H,), w, 1e-6))
            c.run("ew kind=add tokens=%d hidden=%d dtype=bf16" % (T, H), "elementwise", "torch_ew_contig",
                  1.0 * T * H, 6.0 * T * H,
                  lambda T=T, H=H: (lt.randn(T, H, device=dev, dtype=dt), lt.randn(T, H, device=dev, dtype=dt)),
                  lambda x, y: x + y)
    for I in (18944, 17920):
        for T in (64, 1024, 8192):
            if dry:
                I, T = 64, 8
            c.run("ew kind=silu tokens=%d hidden=%d strided=1 dtype=bf16" % (T, I), "elementwise",
                  "torch_ew_2d_silu_slice", 4.0 * T * I, 4.0 * T * I,
                  lambda T=T, I=I: (lt.randn(T, 2 * I, device=dev, dtype=dt),),
                  lambda g, I=I: F.silu(g[:, :I]))


def naive_cases(c, dev, dry):
    """The attention programs users call "naive": PyTorch's math SDPA (its
    default upcasts BF16 to FP32 and materializes the causal mask), the same
    with BF16 reductions allowed, and HF transformers' eager attention (BF16
    matmuls, an FP32 softmax, a dropout-free output cast). Spec names
    impl=sdpa_math, sdpa_math_bf16, hf_eager."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    dt = torch.bfloat16
    for b, h, hk, s, d in NAIVE:
        if dry:
            b, h, hk, s, d = 1, 4, 2, 64, 16
        fl = 4.0 * b * h * s * s * d  # the whole s x s, as these programs compute it
        io = 2.0 * b * s * d * (2 * h + 2 * hk)
        base = "attention batch=%d heads=%d kv_heads=%d seq=%d kv_seq=%d head_dim=%d causal=1 pass=fwd dtype=bf16" % (
            b, h, hk, s, s, d)

        def make(b=b, h=h, hk=hk, s=s, d=d):
            return (lt.randn(b, h, s, d, device=dev, dtype=dt), lt.randn(b, hk, s, d, device=dev, dtype=dt),
                    lt.randn(b, hk, s, d, device=dev, dtype=dt))

        def math_sdpa(q, k, v, gqa=hk != h):
            with sdpa_kernel([SDPBackend.MATH]):
                F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa)
        c.run(base.replace("attention ", "attention impl=sdpa_math "), "attention", "torch_sdpa_math",
              fl, io, make, math_sdpa)
        allow = getattr(torch.backends.cuda, "allow_fp16_bf16_reduction_math_sdp", None)
        if allow is not None:
            allow(True)
            c.run(base.replace("attention ", "attention impl=sdpa_math_bf16 "), "attention",
                  "torch_sdpa_math_bf16", fl, io, make, math_sdpa)
            allow(False)
        mask = torch.full((s, s), float("-inf"), device=dev, dtype=dt).triu(1)

        def hf_eager(q, k, v, rep=h // hk, mask=mask, d=d):
            # transformers' eager_attention_forward: repeat_kv, matmul, + mask,
            # softmax in fp32, cast back, matmul
            if rep > 1:
                k = k[:, :, None].expand(-1, -1, rep, -1, -1).reshape(k.shape[0], -1, k.shape[2], d)
                v = v[:, :, None].expand(-1, -1, rep, -1, -1).reshape(v.shape[0], -1, v.shape[2], d)
            w = torch.matmul(q, k.transpose(2, 3)) * (d ** -0.5) + mask
            w = torch.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype)
            torch.matmul(w, v).transpose(1, 2).contiguous()
        c.run(base.replace("attention ", "attention impl=hf_eager "), "attention", "hf_eager_attention",
              fl, io, make, hf_eager)


def wide_cases(c, dev, dry):
    """PyTorch's softmax, layer_norm and rms_norm on wide rows (vocabularies,
    wide MLPs), where their kernels read a row more than once."""
    dt = torch.bfloat16
    for T, H in WIDE:
        if dry:
            T, H = 8, 64
        mk = (lambda T=T, H=H: (lt.randn(T, H, device=dev, dtype=dt),))
        c.run("ew kind=softmax tokens=%d hidden=%d dtype=bf16" % (T, H), "elementwise", "torch_softmax",
              5.0 * T * H, 4.0 * T * H, mk, lambda x: torch.softmax(x, dim=-1))
        c.run("ew kind=softmax tokens=%d hidden=%d dtype=bf16 out=fp32" % (T, H), "elementwise",
              "torch_softmax_fp32", 5.0 * T * H, 6.0 * T * H, mk, lambda x: torch.softmax(x, dim=-1, dtype=torch.float32))
        w = torch.ones(H, device=dev, dtype=dt)
        c.run("ew kind=layernorm tokens=%d hidden=%d dtype=bf16" % (T, H), "elementwise", "torch_layer_norm",
              8.0 * T * H, 4.0 * T * H + 4 * H, mk, lambda x, w=w, H=H: F.layer_norm(x, (H,), w, w))
        c.run("ew kind=rmsnorm tokens=%d hidden=%d dtype=bf16" % (T, H), "elementwise", "torch_rms_norm",
              4.0 * T * H, 4.0 * T * H + 2 * H, mk, lambda x, w=w, H=H: F.rms_norm(x, (H,), w, 1e-6))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--sets", default="gemm,fp8,attn,decode,ew")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--dry", action="store_true")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--load-s", type=float, default=0.08)
    ap.add_argument("--no-graph", action="store_true")
    a = ap.parse_args()
    t0 = time.time()
    if not lt.is_cuda() and not a.dry:
        lt.log(PROG, "no CUDA device (use --dry on the CPU)")
        return 1
    if a.dry:
        a.reps, a.load_s = 3, 0.0
    dev = torch.device("cuda" if lt.is_cuda() else "cpu")
    torch.manual_seed(1)
    env = lt.environment()
    nv = lt.Nvml()
    sampler = lt.Sampler(nv) if nv.ok else None
    if sampler:
        sampler.start()
    st = lt.StoreText(env, "heldout_ops.py (torch %s)" % torch.__version__,
                      "held-out PyTorch calls at other models' shapes, realistic operands, "
                      "CUDA-graph timed inside a %.2f s sustained load" % a.load_s, "normal", a.quick)
    c = Cases(a, st, sampler, dev)
    sets = set(a.sets.split(","))
    global TOKENS
    if a.quick:
        TOKENS = [16, 4096]
    for name, fn in (("gemm", gemm_cases), ("fp8", fp8_cases), ("attn", attn_cases),
                     ("decode", decode_cases), ("ew", ew_cases), ("naive", naive_cases),
                     ("wide", wide_cases)):
        if name in sets:
            fn(c, dev, a.dry)
    if sampler:
        sampler.stop()
    path = lt.out_path(a.out, "heldout_ops.tsv")
    st.write(path)
    lt.log(PROG, "%d cases -> %s (%.0f s)" % (c.n, path, time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
