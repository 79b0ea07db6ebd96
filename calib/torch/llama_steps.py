#!/usr/bin/env python3
"""llama_steps.py - Llama-3.1-8B-shaped prefill and decode steps in plain
PyTorch, for llmsim's trace-driven mode (calib/trace/, `llmsim trace`).

A few decoder layers at the real 8B dimensions (hidden 4096, 32 heads, 8 KV
heads, head_dim 128, SwiGLU 14336, vocab 128256, RMSNorm, RoPE), bf16, random
weights (nothing is downloaded), a static KV cache, attention through
torch.nn.functional.scaled_dot_product_attention (flash backend). Each phase
runs embedding -> layers -> final norm -> LM head (last position only).

Every phase instance is an NVTX range ("prefill b=1 s=2048",
"decode b=8 ctx=2048"), and every op inside it too, with the names
calib/trace/trace_recipe.c knows ("attn_norm", "qkv_proj", "rope", "kv_write",
"kv_expand", "attention", "o_proj", "residual", "mlp_norm", "gate_up_proj",
"silu_mul", "down_proj", "embedding", "final_norm", "lm_head") and a
"layer N" range around each layer, and an empty range "model llama-3.1-8b"
naming the model the shapes come from. Projections are fused (QKV in one GEMM,
gate and up in one GEMM), as inference engines do.

Each phase is timed with CUDA events: warm-up, then the median of repeats,
whole (time_s) and for the decoder layers alone (layers_time_s).

  --role base|traced --out FILE  run and write the phase times (JSON)
  --merge --base B --traced T --final FILE
                                 write torch_steps.json: times from the run
                                 without injection, overhead_pct from both

Decode packs the 4 query heads that share a KV head into the query-length
axis (q [b, 8, 4, 128] against K/V [b, 8, ctx, 128]): exact for one new
token, and it needs no GQA support from the flash backend. Prefill uses
enable_gqa=True when the flash backend takes it, else expands K/V to 32 heads
in a separate "kv_expand" range (recorded in the JSON as "prefill_gqa").
"""
import argparse
import json
import math
import statistics
import sys
import time

HIDDEN, HEADS, KV_HEADS, HEAD_DIM = 4096, 32, 8, 128
INTER, VOCAB = 14336, 128256
EPS, ROPE_THETA = 1e-5, 500000.0

PREFILL = [(1, 512), (1, 2048), (4, 512), (4, 2048)]   # (batch, prompt)
DECODE = [(1, 2048), (8, 2048), (32, 2048)]            # (batch, context)


def log(*a):
    print("llama_steps:", *a, file=sys.stderr, flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--role", choices=["base", "traced"])
    ap.add_argument("--out")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--merge", action="store_true")
    ap.add_argument("--base")
    ap.add_argument("--traced")
    ap.add_argument("--traced-plain")
    ap.add_argument("--final")
    a = ap.parse_args()
    if a.merge:
        return merge(a.base, a.traced, a.final, a.traced_plain)
    if not a.role or not a.out:
        ap.error("--role and --out are required (or --merge)")
    return run(a)


# ---------------------------------------------------------------- the model

def run(a):
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    if not torch.cuda.is_available():
        log("no CUDA device")
        return 1
    dev = torch.device("cuda")
    dt = torch.bfloat16
    torch.manual_seed(0)
    nvtx = torch.cuda.nvtx
    L = a.layers
    qkv_n = (HEADS + 2 * KV_HEADS) * HEAD_DIM  # 6144

    def w(*shape):
        # Scaled so activations stay O(1) through the layers.
        return (torch.randn(*shape, device=dev, dtype=torch.float32) /
                math.sqrt(shape[-1])).to(dt)

    layers = []
    for _ in range(L):
        layers.append(dict(
            attn_norm=torch.ones(HIDDEN, device=dev, dtype=dt),
            wqkv=w(qkv_n, HIDDEN),
            wo=w(HIDDEN, HIDDEN),
            mlp_norm=torch.ones(HIDDEN, device=dev, dtype=dt),
            wgu=w(2 * INTER, HIDDEN),
            wd=w(HIDDEN, INTER)))
    emb = w(VOCAB, HIDDEN)
    final_norm = torch.ones(HIDDEN, device=dev, dtype=dt)
    lm_head = w(VOCAB, HIDDEN)

    max_ctx = max(max(s for _, s in PREFILL), max(c for _, c in DECODE) + 1)
    inv = 1.0 / (ROPE_THETA ** (torch.arange(0, HEAD_DIM, 2, device=dev,
                                             dtype=torch.float32) / HEAD_DIM))
    ang = torch.outer(torch.arange(max_ctx, device=dev, dtype=torch.float32), inv)
    cos_t, sin_t = ang.cos().to(dt), ang.sin().to(dt)   # [max_ctx, 64]

    # Static KV cache per layer: [batch, kv_heads, max_ctx, head_dim], sized
    # for the largest batch; contents are random (decode timing does not
    # depend on them).
    max_b = max(max(b for b, _ in PREFILL), max(b for b, _ in DECODE))
    kcache = [torch.randn(max_b, KV_HEADS, max_ctx, HEAD_DIM, device=dev, dtype=dt)
              for _ in range(L)]
    vcache = [torch.randn(max_b, KV_HEADS, max_ctx, HEAD_DIM, device=dev, dtype=dt)
              for _ in range(L)]

    def rng(name):
        class R:
            def __enter__(self):
                nvtx.range_push(name)

            def __exit__(self, *e):
                nvtx.range_pop()
        return R()

    def rope(qk, pos, s):
        # qk: [b, s, 40, 128] (q and k heads side by side in the fused layout)
        c = cos_t[pos:pos + s].view(1, s, 1, HEAD_DIM // 2)
        sn = sin_t[pos:pos + s].view(1, s, 1, HEAD_DIM // 2)
        x1, x2 = qk[..., :HEAD_DIM // 2], qk[..., HEAD_DIM // 2:]
        return torch.cat([x1 * c - x2 * sn, x2 * c + x1 * sn], dim=-1)

    # Does the flash backend take GQA directly?
    gqa_native = True
    try:
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
            qt = torch.randn(1, HEADS, 64, HEAD_DIM, device=dev, dtype=dt)
            kt = torch.randn(1, KV_HEADS, 64, HEAD_DIM, device=dev, dtype=dt)
            F.scaled_dot_product_attention(qt, kt, kt, is_causal=True, enable_gqa=True)
        torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001 - any refusal means "expand"
        log("flash SDPA refused enable_gqa (%s): expanding K/V for prefill" % e)
        gqa_native = False

    def forward(tokens, pos, decode, marks):
        """One step: tokens [b, s] new tokens per sequence at position pos;
        marks: two CUDA events recorded around the decoder layers."""
        b, s = tokens.shape
        with rng("embedding"):
            x = F.embedding(tokens, emb)                        # [b, s, H]
        marks[0].record()
        for li, p in enumerate(layers):
            with rng("layer %d" % li):
                with rng("attn_norm"):
                    h = F.rms_norm(x, (HIDDEN,), p["attn_norm"], EPS)
                with rng("qkv_proj"):
                    qkv = F.linear(h, p["wqkv"])                # [b, s, 6144]
                with rng("rope"):
                    qk = rope(qkv[..., :(HEADS + KV_HEADS) * HEAD_DIM]
                              .view(b, s, HEADS + KV_HEADS, HEAD_DIM), pos, s)
                q = qk[:, :, :HEADS]                            # [b, s, 32, 128]
                k = qk[:, :, HEADS:]                            # [b, s, 8, 128]
                v = qkv[..., (HEADS + KV_HEADS) * HEAD_DIM:].view(b, s, KV_HEADS, HEAD_DIM)
                with rng("kv_write"):
                    kcache[li][:b, :, pos:pos + s] = k.transpose(1, 2)
                    vcache[li][:b, :, pos:pos + s] = v.transpose(1, 2)
                if decode:
                    # q [b, 1, 32, 128] -> [b, 8, 4, 128]: heads sharing a KV
                    # head become 4 query rows (exact for one new token).
                    qg = q.reshape(b, KV_HEADS, HEADS // KV_HEADS, HEAD_DIM)
                    kc = kcache[li][:b, :, :pos + s]
                    vc = vcache[li][:b, :, :pos + s]
                    with rng("attention"), sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                        o = F.scaled_dot_product_attention(qg, kc, vc)
                        o = o.reshape(b, s, HIDDEN)  # may copy: keep it in the range
                else:
                    qt = q.transpose(1, 2)
                    kt, vt = k.transpose(1, 2), v.transpose(1, 2)
                    if not gqa_native:
                        with rng("kv_expand"):
                            kt = kt.repeat_interleave(HEADS // KV_HEADS, dim=1)
                            vt = vt.repeat_interleave(HEADS // KV_HEADS, dim=1)
                    with rng("attention"), sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                        if gqa_native:
                            o = F.scaled_dot_product_attention(qt, kt, vt, is_causal=True,
                                                               enable_gqa=True)
                        else:
                            o = F.scaled_dot_product_attention(qt, kt, vt, is_causal=True)
                        o = o.transpose(1, 2).reshape(b, s, HIDDEN)
                with rng("o_proj"):
                    o = F.linear(o, p["wo"])
                with rng("residual"):
                    x = x + o
                with rng("mlp_norm"):
                    h = F.rms_norm(x, (HIDDEN,), p["mlp_norm"], EPS)
                with rng("gate_up_proj"):
                    gu = F.linear(h, p["wgu"])                  # [b, s, 2I]
                with rng("silu_mul"):
                    m = F.silu(gu[..., :INTER]) * gu[..., INTER:]
                with rng("down_proj"):
                    m = F.linear(m, p["wd"])
                with rng("residual"):
                    x = x + m
        marks[1].record()
        with rng("final_norm"):
            h = F.rms_norm(x[:, -1:, :], (HIDDEN,), final_norm, EPS)  # last position
        with rng("lm_head"):
            logits = F.linear(h, lm_head)                       # [b, 1, vocab]
        return logits

    # Name the model the op ranges refer to, for `llmsim trace compare`
    # (it reads "model NAME" when no --model is given).
    nvtx.range_push("model llama-3.1-8b")
    nvtx.range_pop()
    phases = [("prefill", b, s) for b, s in PREFILL] + [("decode", b, c) for b, c in DECODE]
    results = []
    t_all = time.time()
    with torch.inference_mode():
        for kind, b, n in phases:
            name = ("prefill b=%d s=%d" % (b, n) if kind == "prefill"
                    else "decode b=%d ctx=%d" % (b, n))
            times, ltimes = [], []
            tokens = torch.randint(0, VOCAB, (b, n if kind == "prefill" else 1), device=dev)
            for i in range(a.warmup + a.repeats):
                ev0, ev1, el0, el1 = (torch.cuda.Event(enable_timing=True) for _ in range(4))
                nvtx.range_push(name)
                ev0.record()
                if kind == "prefill":
                    forward(tokens, 0, False, (el0, el1))
                else:
                    forward(tokens, n, True, (el0, el1))
                ev1.record()
                nvtx.range_pop()
                ev1.synchronize()
                if i >= a.warmup:
                    times.append(ev0.elapsed_time(ev1) / 1e3)
                    ltimes.append(el0.elapsed_time(el1) / 1e3)
            rec = {"phase": kind, "batch": b, "time_s": statistics.median(times),
                   "time_min_s": min(times), "repeats": len(times),
                   "layers_time_s": statistics.median(ltimes)}
            rec["prompt" if kind == "prefill" else "context"] = n
            results.append(rec)
            log("%-22s median %.3f ms (min %.3f ms, %d repeats)"
                % (name, rec["time_s"] * 1e3, rec["time_min_s"] * 1e3, len(times)))
    torch.cuda.synchronize()
    out = {"role": a.role, "layers": L, "device": torch.cuda.get_device_name(0),
           "torch": torch.__version__, "cuda": torch.version.cuda,
           "prefill_gqa": "native" if gqa_native else "expanded",
           "warmup": a.warmup, "wall_s": time.time() - t_all, "phases": results}
    with open(a.out, "w") as f:
        json.dump(out, f, indent=1)
    return 0


# ---------------------------------------------------------------- merging

def load_json(path):
    if not path:
        return None
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        log("cannot read %s (%s)" % (path, e))
        return None


def overhead(base, traced):
    """Percent by which the traced run's phases took longer, summed."""
    if not base or not traced:
        return None
    key = lambda p: (p["phase"], p["batch"], p.get("prompt", p.get("context")))  # noqa: E731
    tmap = {key(p): p["time_s"] for p in traced["phases"]}
    sb = sum(p["time_s"] for p in base["phases"] if key(p) in tmap)
    st = sum(tmap[key(p)] for p in base["phases"] if key(p) in tmap)
    return 100.0 * (st - sb) / sb if sb > 0 else None


def merge(base_path, traced_path, final_path, plain_path=None):
    with open(base_path) as f:
        base = json.load(f)
    traced = None
    if traced_path:
        try:
            with open(traced_path) as f:
                traced = json.load(f)
        except (OSError, ValueError) as e:
            log("no traced timings (%s): overhead_pct is null" % e)
    key = lambda p: (p["phase"], p["batch"], p.get("prompt", p.get("context")))  # noqa: E731
    tmap = {key(p): p for p in traced["phases"]} if traced else {}
    phases, traced_times, sum_b, sum_t = [], [], 0.0, 0.0
    for p in base["phases"]:
        q = {"phase": p["phase"], "batch": p["batch"]}
        if p["phase"] == "prefill":
            q["prompt"] = p["prompt"]
        else:
            q["context"] = p["context"]
        q["time_s"] = p["time_s"]
        if "layers_time_s" in p:
            q["layers_time_s"] = p["layers_time_s"]
        t = tmap.get(key(p))
        traced_times.append(t["time_s"] if t else None)
        if t:
            sum_b += p["time_s"]
            sum_t += t["time_s"]
        phases.append(q)
    out = {
        "gpu": "h200" if "H200" in base.get("device", "") else base.get("device", ""),
        "device_name": base.get("device", ""),
        "model": {"hidden": HIDDEN, "heads": HEADS, "kv_heads": KV_HEADS,
                  "head_dim": HEAD_DIM, "intermediate": INTER, "vocab": VOCAB},
        "layers": base["layers"],
        "dtype": "bf16",
        "includes_lm_head": True,
        "lm_head_positions": "last",
        "fused_qkv": True,
        "fused_gate_up": True,
        "prefill_gqa": base.get("prefill_gqa"),
        "torch": base.get("torch"),
        "cuda": base.get("cuda"),
        "timing": "time_s: the run without injection, embedding + layers + final norm + "
                  "LM head; layers_time_s: the decoder layers alone (events around them); "
                  "time_traced_s: the same phases "
                  "under libllmsim_inject (same order); CUDA events around each phase, median of %d repeats after %d warm-up"
                  % (base["phases"][0]["repeats"], base.get("warmup", 0)),
        "phases": phases,
        "time_traced_s": traced_times,
        "overhead_pct": (100.0 * (sum_t - sum_b) / sum_b) if sum_b > 0 else None,
        "overhead_pct_kernels_only": overhead(base, load_json(plain_path)),
        "traced_with_nvtx": bool(traced_path and "nvtx" in traced_path),
    }
    with open(final_path, "w") as f:
        json.dump(out, f, indent=1)
    log("wrote %s (overhead %s)" % (final_path, "n/a" if out["overhead_pct"] is None
                                     else "%.2f%%" % out["overhead_pct"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
