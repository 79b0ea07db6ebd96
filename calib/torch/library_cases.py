"""library_cases.py - time production attention kernels through PyTorch, as
calibration cases for llmsim's flash2/flash3 attention and decode models.

Our own kernels in kernels/ are correct-first microbenchmarks; what users run
is the FlashAttention-2 kernel in PyTorch's SDPA (FLASH_ATTENTION backend)
and, on Hopper, cuDNN's fused attention (CUDNN_ATTENTION backend, the
warp-specialized design FlashAttention-3 also uses). This script times both,
forward and backward, causal and not, MHA and GQA, and decode (one query
token against a KV cache), with CUDA events (warm-up, median of repeats) on
random bf16 inputs, and writes the results in llmsim's calibration text form
(`llmsim calib import --db DB --in FILE`, schema 3): impl "torch_sdpa_flash"
cases price as `impl=flash2`, "torch_sdpa_cudnn" as `impl=flash3`. Every case
is a fit case: held-out cases come from other programs (heldout_ops.py and
the whole-model steps).

Operands are realistic: activations and attention inputs N(0, 1); FP8 GEMM
operands per-tensor scaled to the e4m3 range (weights N(0, 0.02) before
scaling), with those scales passed to torch._scaled_mm, as a quantized model
runs.

It also times PyTorch's own element-wise kernels on the layouts a model
step hands them: contiguous tensors (the vectorized path) and strided views
(a slice of a fused projection, a broadcast over heads, a transposed copy
into a KV cache: the non-vectorized path), as `ew ...` cases.

Run:  python3 calib/torch/library_cases.py --out FILE.tsv [--quick]
          [--sets attention,decode,fp8,ew] [--decode-grid small|large]
"""
import argparse
import os
import statistics

import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.dirname(__file__))
import llmsim_torch as lt  # noqa: E402


def timed(fn, reps):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for s, e in ev:
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    t = sorted(s.elapsed_time(e) * 1e-3 for s, e in ev)
    n = len(t)
    return statistics.median(t), t[0], t[int(0.1 * (n - 1) + 0.5)], t[int(0.9 * (n - 1) + 0.5)]


def timed_graph(fn, reps, inner=10):
    """Kernel time without host gaps: `inner` calls captured in one CUDA
    graph, replayed `reps` times between events; per-call time = replay /
    inner. Eager timing of a ~10 us kernel measures PyTorch's host overhead."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(inner):
            fn()
    med, mn, p10, p90 = timed(g.replay, reps)
    return med / inner, mn / inner, p10 / inner, p90 / inner


def esc(v):
    if v is None:
        return "\\N"
    if isinstance(v, float):
        return repr(v)
    return str(v).replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def elementwise_cases(dev, dt, add, reps, quick):
    """PyTorch element-wise kernels on the layouts of a Llama step. Inputs
    rotate over enough copies to exceed the L2 (60 MiB on an H200), so
    every case streams from HBM as it does inside a real step."""
    e = 2

    def sets_for(nbytes):
        return max(1, min(8, int(256e6 // max(nbytes, 1)) + 1))

    def case(spec, impl, make, fn, nbytes):
        n = sets_for(nbytes)
        data = [make() for _ in range(n)]
        it = [0]

        def step():
            i = it[0] = (it[0] + 1) % n
            fn(*data[i])
        try:
            st = timed_graph(step, reps, inner=max(n, 10))
        except Exception as ex:  # noqa: BLE001
            print(f"{spec}: skipped ({str(ex)[:80]})")
            return
        add(spec, impl, 0.0, float(nbytes), st, reps)
        del data

    toks = [2048, 8192] if quick else [512, 2048, 8192, 32768]
    for T in toks:
        H = 4096
        # contiguous: the vectorized path (residual add, mul, activation, copy)
        case(f"ew kind=add tokens={T} hidden={H} dtype=bf16", "torch_ew_contig",
             lambda: (torch.randn(T, H, device=dev, dtype=dt), torch.randn(T, H, device=dev, dtype=dt)),
             lambda x, y: x + y, 3 * T * H * e)
        case(f"ew kind=silu tokens={T} hidden={H} dtype=bf16", "torch_ew_contig_silu",
             lambda: (torch.randn(T, H, device=dev, dtype=dt),), lambda x: F.silu(x), 2 * T * H * e)
        case(f"ew kind=copy tokens={T} hidden={H} dtype=bf16", "torch_ew_contig_copy",
             lambda: (torch.randn(T, H, device=dev, dtype=dt), torch.empty(T, H, device=dev, dtype=dt)),
             lambda x, y: y.copy_(x), 2 * T * H * e)
    for T in ([2048] if quick else [512, 2048, 8192]):
        for I in (3584, 14336):
            # slices of a fused gate/up projection [T, 2I]: rows 2I apart
            case(f"ew kind=silu tokens={T} hidden={I} strided=1 dtype=bf16", "torch_ew_2d_silu_slice",
                 lambda: (torch.randn(T, 2 * I, device=dev, dtype=dt),),
                 lambda g: F.silu(g[:, :I]), 2 * T * I * e)
            case(f"ew kind=mul tokens={T} hidden={I} strided=1 dtype=bf16", "torch_ew_2d_mul_slice",
                 lambda: (torch.randn(T, I, device=dev, dtype=dt), torch.randn(T, 2 * I, device=dev, dtype=dt)),
                 lambda a_, g: a_ * g[:, I:], 3 * T * I * e)
        # rotary halves: [T, 40 heads, 64] views of a [T, 6144] projection,
        # times a cos table broadcast over heads (4-d indexing, 3 operands)
        case(f"ew kind=mul tokens={T} hidden=2560 strided=1 dtype=bf16", "torch_ew_4d_rope_half",
             lambda: (torch.randn(1, T, 6144, device=dev, dtype=dt), torch.randn(T, 64, device=dev, dtype=dt)),
             lambda q, c: q[..., :5120].view(1, T, 40, 128)[..., :64] * c.view(1, T, 1, 64), 2 * T * 2560 * e)
        # a KV-cache write: k [b, s, 8, 128] (a view) into cache [b, 8, S, 128]
        case(f"ew kind=copy tokens={T} hidden=1024 strided=1 dtype=bf16", "torch_ew_4d_kv_write",
             lambda: (torch.randn(1, T, 6144, device=dev, dtype=dt),
                      torch.empty(1, 8, T + 128, 128, device=dev, dtype=dt)),
             lambda q, kc: kc[:, :, 64:64 + T].copy_(q[..., 5120:].view(1, T, 8, 128).transpose(1, 2)),
             2 * T * 1024 * e)


def norm_cases(dev, dt, add, reps):
    """F.rms_norm over [T, 4096] bf16 rows (PyTorch's own kernel), from a
    decode step's handful of rows to a prefill's thousands; inputs rotate
    beyond the L2."""
    H = 4096
    for T in (1, 8, 32, 128, 512, 2048, 8192, 32768):
        n = max(1, min(8, int(256e6 // (2 * T * H * 2)) + 1))
        xs = [torch.randn(T, H, device=dev, dtype=dt) for _ in range(n)]
        w = torch.randn(H, device=dev, dtype=dt)
        it = [0]

        def step():
            i = it[0] = (it[0] + 1) % n
            F.rms_norm(xs[i], (H,), w, 1e-5)
        st = timed_graph(step, reps, inner=max(10, n))
        add(f"ew kind=rmsnorm tokens={T} hidden={H} dtype=bf16", "torch_rms_norm", 0.0,
            float(2 * T * H * 2 + H * 2), st, reps)
        del xs


def attention_small_cases(dev, dt, add, reps, backends):
    """Prefill attention at the small grids of one or a few sequences (the
    shapes of a serving prefill), forward, CUDA-graph timed."""
    for impl, be, simimpl in backends:
        for b, s in ((1, 512), (1, 1024), (1, 2048), (2, 512), (4, 512), (2, 2048), (4, 1024)):
            for causal in (1, 0):
                h, hk, d = 32, 8, 128
                q = torch.randn(b, h, s, d, device=dev, dtype=dt)
                k = torch.randn(b, hk, s, d, device=dev, dtype=dt)
                v = torch.randn(b, hk, s, d, device=dev, dtype=dt)
                try:
                    with sdpa_kernel([be]):
                        def fwd():
                            F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal), enable_gqa=True)
                        st = timed_graph(fwd, reps)
                except Exception as e:  # noqa: BLE001
                    print(f"{impl} b={b} s={s}: skipped ({str(e)[:80]})")
                    continue
                spec = (f"attention impl={simimpl} batch={b} heads={h} kv_heads={hk} seq={s} kv_seq={s} "
                        f"head_dim={d} causal={causal} pass=fwd dtype=bf16")
                add(spec, impl, 4.0 * b * h * s * s * d * (0.5 if causal else 1.0),
                    2.0 * b * s * d * (2 * h + 2 * hk), st, reps)
                del q, k, v


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--sets", default="attention,decode,fp8",
                    help="comma-separated: attention, decode, fp8, ew")
    ap.add_argument("--decode-grid", default="small", choices=("small", "large"))
    a = ap.parse_args()
    sets = set(a.sets.split(","))
    dev = torch.device("cuda")
    dt = torch.bfloat16
    torch.manual_seed(0)
    props = torch.cuda.get_device_properties(0)
    # warm the clocks with a second of matmuls
    x = torch.randn(8192, 8192, device=dev, dtype=dt)
    t_end = torch.cuda.Event(enable_timing=True)
    for _ in range(60):
        x @ x
    torch.cuda.synchronize()
    del x, t_end

    cases = []

    def add(spec, impl, flops, byts, stats, reps):
        med, mn, p10, p90 = stats
        split = "fit"
        cls = spec.split(" ", 1)[0]
        cls = {"ew": "elementwise"}.get(cls, cls)
        cases.append((spec, cls, impl, split,
                      float(flops), float(byts), reps, med, mn, p10, p90))
        print(f"{impl:18s} {spec}: {med*1e6:10.1f} us  {flops/med/1e12 if flops else 0:7.1f} TFLOP/s", flush=True)

    backends = [("torch_sdpa_flash", SDPBackend.FLASH_ATTENTION, "flash2"),
                ("torch_sdpa_cudnn", SDPBackend.CUDNN_ATTENTION, "flash3")]
    seqs = [1024, 4096] if a.quick else [512, 1024, 2048, 4096, 8192, 16384]
    reps = 10 if a.quick else 25
    for impl, be, simimpl in (backends if "attention" in sets else []):
        for d in (64, 128):
            for s in seqs:
                for causal in (1, 0):
                    for h, hk in ((32, 32), (32, 8)):
                        b = max(1, 16384 // s)  # keep tokens per case near 16K
                        if d == 64 and hk != h:
                            continue
                        q = torch.randn(b, h, s, d, device=dev, dtype=dt, requires_grad=True)
                        k = torch.randn(b, hk, s, d, device=dev, dtype=dt, requires_grad=True)
                        v = torch.randn(b, hk, s, d, device=dev, dtype=dt, requires_grad=True)
                        do = torch.randn(b, h, s, d, device=dev, dtype=dt)
                        gqa = hk != h
                        try:
                            with sdpa_kernel([be]):
                                def fwd():
                                    with torch.no_grad():
                                        F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal), enable_gqa=gqa)
                                fwd()
                                st_f = timed_graph(fwd, reps)
                                o = F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal), enable_gqa=gqa)

                                def bwd():
                                    torch.autograd.grad(o, (q, k, v), do, retain_graph=True)
                                st_b = timed(bwd, reps)
                        except Exception as e:  # backend refuses this shape
                            print(f"{impl} b={b} h={h}/{hk} s={s} d={d} causal={causal}: skipped ({str(e)[:80]})")
                            continue
                        base = (f"attention impl={simimpl} batch={b} heads={h} kv_heads={hk} seq={s} "
                                f"kv_seq={s} head_dim={d} causal={causal}")
                        fl = 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)
                        io = 2.0 * b * s * d * (2 * h + 2 * hk)
                        add(base + " pass=fwd dtype=bf16", impl, fl, io, st_f, reps)
                        add(base + " pass=bwd dtype=bf16", impl, 2.5 * fl, 2 * io, st_b, reps)
                        del q, k, v, do, o
    # decode: one query token per sequence against a KV cache
    lens = [1024, 8192] if a.quick else [512, 2048, 8192, 32768]
    batches = [1, 32] if a.quick else [1, 4, 16, 64]
    heads = [(32, 8, 128)]
    if a.decode_grid == "large":
        lens, batches = [1024, 4096, 16384, 65536], [1, 2, 8, 32, 128]
        heads = [(32, 8, 128), (64, 8, 128), (16, 1, 128), (32, 8, 64)]
    grid = [(kv, b, hh) for hh in heads for kv in lens for b in batches]
    for impl, be, simimpl in (backends[:1] if "decode" in sets else []):
        for kv, b, (h, hk, d) in grid:
                if b * kv * hk * d * 2 * 2 > 8e9:
                    continue
                # small caches rotate over copies beyond the L2, as a real
                # step finds them (in HBM, evicted by the weights)
                nset = max(1, min(8, int(256e6 // (b * kv * hk * d * 2 * 2)) + 1)) \
                    if a.decode_grid == "large" else 1
                qkv = [(torch.randn(b, h, 1, d, device=dev, dtype=dt),
                        torch.randn(b, hk, kv, d, device=dev, dtype=dt),
                        torch.randn(b, hk, kv, d, device=dev, dtype=dt)) for _ in range(nset)]
                it = [0]
                try:
                    with sdpa_kernel([be]):
                        def dec():
                            i = it[0] = (it[0] + 1) % nset
                            q, k, v = qkv[i]
                            F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
                        st = timed_graph(dec, reps, inner=max(10, nset))
                except Exception as e:
                    print(f"decode b={b} kv={kv}: skipped ({str(e)[:80]})")
                    continue
                # PyTorch's FlashAttention-2 runs one query token as split-KV
                # (flash_fwd_splitkv_kernel + its combine kernel, seen in
                # calib/data/trace_llama.txt.gz): that is FlashDecoding.
                spec = (f"decode impl=flashdecoding batch={b} heads={h} kv_heads={hk} kv_len={kv} "
                        f"head_dim={d} dtype=bf16")
                add(spec, impl, 4.0 * b * h * kv * d, 2.0 * b * hk * kv * d * 2, st, reps)
                del qkv

    # fp8 GEMMs: C(bf16) = A(M x K, e4m3, row-major) * B(K x N, e4m3, column-major)
    shapes = [(4096, 4096, 4096), (8192, 8192, 8192)] if a.quick else [
        (1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192),
        (16, 6144, 4096), (128, 6144, 4096), (2048, 6144, 4096), (8192, 6144, 4096),
        (16, 4096, 14336), (512, 4096, 14336), (4096, 4096, 14336), (64, 8192, 28672 // 8),
        (4096, 8192, 28672 // 8), (2048, 28672 // 8 * 2, 8192), (32, 128256, 8192), (4096, 128256, 8192)]
    if "fp8small" in sets:
        shapes = [(1024, 1024, 1024), (2048, 2048, 2048), (16, 6144, 4096), (128, 6144, 4096),
                  (2048, 6144, 4096), (16, 4096, 14336), (512, 4096, 14336), (64, 8192, 28672 // 8)]
    for m, n, k in (shapes if "fp8" in sets or "fp8small" in sets else []):
        try:
            nsets = max(1, int(200e6 // (m * k + n * k)) + 1)
            nsets = min(nsets, 8)
            A = [lt.fp8_scaled(torch.randn(m, k, device=dev)) for _ in range(nsets)]
            B = [lt.fp8_scaled(torch.randn(n, k, device=dev) * 0.02) for _ in range(nsets)]
            B = [(b.t(), sb) for b, sb in B]
            ref = (A[0][0].float() * A[0][1]) @ (B[0][0].float() * B[0][1])
            out = torch._scaled_mm(A[0][0], B[0][0], scale_a=A[0][1], scale_b=B[0][1],
                                   out_dtype=torch.bfloat16)
            err = ((out.float() - ref).norm() / ref.norm()).item()
            it = [0]

            def mm():
                i = it[0] = (it[0] + 1) % nsets
                torch._scaled_mm(A[i][0], B[i][0], scale_a=A[i][1], scale_b=B[i][1],
                                 out_dtype=torch.bfloat16)
            # eager events only where the kernel outlasts PyTorch's host
            # time per call by far (2048^3 = 2^33 once timed the host)
            st = timed(mm, reps) if m * n * k > 2**34 else timed_graph(mm, reps, inner=max(nsets, 10))
        except Exception as e:
            print(f"fp8 gemm {m}x{n}x{k}: skipped ({str(e)[:80]})")
            continue
        spec = f"gemm m={m} n={n} k={k} dtype=fp8"
        med, mn, p10, p90 = st
        split = "fit"
        cases.append((spec, "gemm", "torch_scaled_mm", split, 2.0 * m * n * k,
                      float(m * k + n * k + 2 * m * n), reps, med, mn, p10, p90))
        print(f"torch_scaled_mm    {spec}: {med*1e6:10.1f} us  {2.0*m*n*k/med/1e12:7.1f} TFLOP/s  err {err:.2e}", flush=True)
        del A, B

    if "ew" in sets:
        elementwise_cases(dev, dt, add, reps, a.quick)
    if "norm" in sets:
        norm_cases(dev, dt, add, reps)
    if "attn_small" in sets:
        attention_small_cases(dev, dt, add, reps, backends)

    st = lt.StoreText(lt.environment(), f"library_cases.py (torch {torch.__version__})",
                      "PyTorch SDPA flash (FA2) and cuDNN attention, FP8 _scaled_mm, element-wise; "
                      "CUDA events", "normal", a.quick)
    for c in cases:
        spec, cls, impl, split, fl, by, r, med, mn, p10, p90 = c
        st.add_case(spec, cls, impl, split, fl, by,
                    {"median_s": med, "min_s": mn, "p10_s": p10, "p90_s": p90, "reps": r})
    st.write(a.out)
    print(f"{len(cases)} cases -> {a.out}")


if __name__ == "__main__":
    main()
