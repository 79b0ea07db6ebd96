#!/usr/bin/env python3
"""steps_lean.py - whole-model prefill and decode steps of a lean PyTorch
inference engine, each step one CUDA graph, for llmsim's `steps` validation
class (`llmsim calib validate`) and `llmsim infer`.

The engine is what a lean serving stack written in PyTorch does: weights in
bf16 with realistic values (N(0, 0.02), norms 1), a preallocated KV cache
per layer ([batch, kv_heads, context, head_dim]), fused QKV and gate-up
projections, RoPE, SDPA through the FlashAttention backend (prefill causal
with native GQA; decode packs the query heads of one KV head into the query
axis, exact for one new token, which PyTorch runs as split-KV FlashAttention),
RMSNorm, SwiGLU, and the LM head on the last position of each sequence. MoE
models (Mixtral-style and fine-grained) route each token with a gate GEMM,
top-k and a softmax over the chosen logits, permute the tokens by expert
(a stable sort), run the experts as two grouped GEMMs (torch._grouped_mm)
and combine with the routing weights (index_add).

Each step shape is captured once as a CUDA graph, replayed back to back for
--load-s seconds (a serving GPU is busy, and its clock has settled under the
power limit), then timed over repeats with CUDA events while NVML samples the
SM clock and board power. One more replay runs under the profiler for the
kernels that ran (names and device time, summed per name).

Writes the calibration store's text form (schema 3: `steps` and
`step_kernels`), loadable with `llmsim calib import`.

  python3 calib/torch/steps_lean.py --out DIR [--models a,b] [--quick] [--dry]
"""
import argparse
import math
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, __import__("os").path.dirname(__file__))
import llmsim_torch as lt  # noqa: E402

PROG = "steps_lean"

# Shapes of models llmsim ships (models/*.yaml); layers may be cut with
# "name:layers" on the command line.
MODELS = {
    "llama-3.1-8b": dict(hidden=4096, heads=32, kv_heads=8, head_dim=128, inter=14336, layers=32,
                         vocab=128256),
    "llama-3.2-1b": dict(hidden=2048, heads=32, kv_heads=8, head_dim=64, inter=8192, layers=16,
                         vocab=128256),
    "llama-3.2-3b": dict(hidden=3072, heads=24, kv_heads=8, head_dim=128, inter=8192, layers=28,
                         vocab=128256),
    "llama-2-13b": dict(hidden=5120, heads=40, kv_heads=40, head_dim=128, inter=13824, layers=40,
                        vocab=32000),
    "llama-2-7b": dict(hidden=4096, heads=32, kv_heads=32, head_dim=128, inter=11008, layers=32,
                       vocab=32000),
    "qwen2.5-72b": dict(hidden=8192, heads=64, kv_heads=8, head_dim=128, inter=29568, layers=80,
                        vocab=152064, qkv_bias=True),
    "mixtral-8x7b": dict(hidden=4096, heads=32, kv_heads=8, head_dim=128, inter=14336, layers=32,
                         vocab=32000, experts=8, top_k=2),
    "qwen3-30b-a3b": dict(hidden=2048, heads=32, kv_heads=4, head_dim=128, inter=768, layers=48,
                          vocab=151936, experts=128, top_k=8, qk_norm=True, norm_topk=True),
}

PREFILL = [(1, 512), (1, 2048), (4, 2048), (16, 512), (1, 8192), (2, 16384), (1, 32768)]
DECODE = [(1, 512), (1, 8192), (8, 2048), (32, 2048), (64, 4096), (128, 1024), (256, 512),
          (8, 32768), (1, 32768)]
QUICK_PREFILL = [(1, 2048), (4, 2048)]
QUICK_DECODE = [(1, 2048), (32, 2048)]
EPS, THETA = 1e-5, 500000.0


class Engine:
    def __init__(self, name, cfg, dev, dt, data):
        self.name, self.c, self.dev, self.dt = name, cfg, dev, dt
        c = cfg
        H, hd, nh, nkv = c["hidden"], c["head_dim"], c["heads"], c["kv_heads"]
        self.qkv_n = (nh + 2 * nkv) * hd
        E = c.get("experts", 0)
        rnd = lambda *s: lt.randn(*s, device=dev, dtype=dt, data=data, sd=0.02)  # noqa: E731
        one = lambda n: torch.ones(n, device=dev, dtype=dt)  # noqa: E731
        self.layers = []
        for _ in range(c["layers"]):
            p = dict(attn_norm=one(H), wqkv=rnd(self.qkv_n, H), wo=rnd(H, nh * hd), mlp_norm=one(H))
            if c.get("qkv_bias"):
                p["bqkv"] = rnd(self.qkv_n)
            if c.get("qk_norm"):
                p["q_norm"], p["k_norm"] = one(hd), one(hd)
            if E:
                I = c["inter"]
                p["wr"] = rnd(E, H)
                # experts stored [E, out, in] (nn.Linear layout), used transposed
                p["w13"] = rnd(E, 2 * I, H)
                p["w2"] = rnd(E, H, I)
            else:
                p["wgu"] = rnd(2 * c["inter"], H)
                p["wd"] = rnd(H, c["inter"])
            self.layers.append(p)
        # embeddings N(0, 1): the residual stream at unit scale, as in trained
        # models; at N(0, 0.02) the random-weight attention output (a running
        # mean of values, alike across neighbouring tokens) would dominate it
        # and route most tokens to the same experts
        self.emb = lt.randn(c["vocab"], H, device=dev, dtype=dt, data=data, sd=1.0)
        # MoE: a token-keyed bias on the gate logits stands in for what
        # training does to a router: it keeps routing balanced, as a trained
        # router's (with its load-balancing loss) is. The random-weight
        # residual stream grows a component common to all tokens with depth,
        # and the random gate alone would then send most tokens to one
        # expert. It costs one [tokens, experts] add per layer.
        self.route_bias = (lt.randn(c["vocab"], E, device=dev, dtype=dt, sd=4.0) if E else None)
        self.final_norm = one(H)
        self.lm_head = rnd(c["vocab"], H)
        self.kc = self.vc = None
        self.grouped = "grouped_mm"
        self.imbalance = []

    def params(self):
        n = self.emb.numel() + self.lm_head.numel() + self.final_norm.numel()
        for p in self.layers:
            n += sum(t.numel() for t in p.values())
        return n

    def alloc_cache(self, b, ctx):
        c = self.c
        self.kc = self.vc = None
        torch.cuda.empty_cache() if lt.is_cuda() else None
        shape = (b, c["kv_heads"], ctx, c["head_dim"])
        # realistic cache contents: keys and values of N(0, 1) activations
        self.kc = [lt.randn(*shape, device=self.dev, dtype=self.dt) for _ in range(c["layers"])]
        self.vc = [lt.randn(*shape, device=self.dev, dtype=self.dt) for _ in range(c["layers"])]
        inv = 1.0 / (THETA ** (torch.arange(0, c["head_dim"], 2, device=self.dev,
                                            dtype=torch.float32) / c["head_dim"]))
        ang = torch.outer(torch.arange(ctx, device=self.dev, dtype=torch.float32), inv)
        self.cos, self.sin = ang.cos().to(self.dt), ang.sin().to(self.dt)

    def rope(self, x, pos, s):
        hd = self.c["head_dim"]
        cs = self.cos[pos:pos + s].view(1, s, 1, hd // 2)
        sn = self.sin[pos:pos + s].view(1, s, 1, hd // 2)
        x1, x2 = x[..., :hd // 2], x[..., hd // 2:]
        return torch.cat([x1 * cs - x2 * sn, x2 * cs + x1 * sn], dim=-1)

    def moe(self, p, h, bias):
        c = self.c
        E, k, I = c["experts"], c["top_k"], c["inter"]
        T = h.shape[0]
        logits = F.linear(h, p["wr"]) + bias                        # [T, E]
        topv, topi = torch.topk(logits, k, dim=-1)                  # [T, k]
        if c.get("norm_topk", True):
            w = torch.softmax(topv.float(), dim=-1)
        else:
            w = torch.softmax(logits.float(), dim=-1).gather(1, topi)
        flat = topi.reshape(-1)                                     # [T*k]
        order = torch.argsort(flat, stable=True)
        tok = order // k
        xs = h.index_select(0, tok)                                 # [T*k, H] permuted
        counts = torch.zeros(E, device=h.device, dtype=torch.int32).scatter_add_(
            0, flat, torch.ones_like(flat, dtype=torch.int32))
        offs = torch.cumsum(counts, 0, dtype=torch.int32)
        self._counts = counts
        gu = torch._grouped_mm(xs, p["w13"].transpose(-2, -1), offs=offs)     # [T*k, 2I]
        a = F.silu(gu[:, :I]) * gu[:, I:]
        y = torch._grouped_mm(a, p["w2"].transpose(-2, -1), offs=offs)       # [T*k, H]
        y = y * w.reshape(-1)[order].to(y.dtype).unsqueeze(-1)
        return torch.zeros_like(h).index_add_(0, tok, y)

    def forward(self, tokens, pos, decode):
        c = self.c
        b, s = tokens.shape
        nh, nkv, hd, H = c["heads"], c["kv_heads"], c["head_dim"], c["hidden"]
        x = F.embedding(tokens, self.emb)                               # [b, s, H]
        bias = (F.embedding(tokens.reshape(-1), self.route_bias)
                if self.route_bias is not None else None)               # [b*s, E]
        for li, p in enumerate(self.layers):
            h = F.rms_norm(x, (H,), p["attn_norm"], EPS)
            qkv = F.linear(h, p["wqkv"], p.get("bqkv"))                 # [b, s, qkv_n]
            q = qkv[..., :nh * hd].view(b, s, nh, hd)
            k = qkv[..., nh * hd:(nh + nkv) * hd].view(b, s, nkv, hd)
            v = qkv[..., (nh + nkv) * hd:].view(b, s, nkv, hd)
            if c.get("qk_norm"):
                q = F.rms_norm(q, (hd,), p["q_norm"], EPS)
                k = F.rms_norm(k, (hd,), p["k_norm"], EPS)
            q, k = self.rope(q, pos, s), self.rope(k, pos, s)
            self.kc[li][:b, :, pos:pos + s] = k.transpose(1, 2)
            self.vc[li][:b, :, pos:pos + s] = v.transpose(1, 2)
            with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                if decode:
                    qg = q.reshape(b, nkv, nh // nkv, hd)                # one token: heads -> rows
                    o = F.scaled_dot_product_attention(qg, self.kc[li][:b, :, :pos + s],
                                                       self.vc[li][:b, :, :pos + s])
                    o = o.reshape(b, s, nh * hd)
                else:
                    o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),
                                                       v.transpose(1, 2), is_causal=True,
                                                       enable_gqa=nkv != nh)
                    o = o.transpose(1, 2).reshape(b, s, nh * hd)
            x = x + F.linear(o, p["wo"])
            h = F.rms_norm(x, (H,), p["mlp_norm"], EPS)
            if c.get("experts"):
                x = x + self.moe(p, h.view(b * s, H), bias).view(b, s, H)
            else:
                gu = F.linear(h, p["wgu"])
                I = c["inter"]
                x = x + F.linear(F.silu(gu[..., :I]) * gu[..., I:], p["wd"])
        h = F.rms_norm(x[:, -1:, :], (H,), self.final_norm, EPS)
        return F.linear(h, self.lm_head)                                 # [b, 1, vocab]


def parse_shapes(text):
    """"1x2048,4x512" -> [(1, 2048), (4, 512)]; "" -> []."""
    out = []
    for item in filter(None, text.split(",")):
        b, _, n = item.partition("x")
        out.append((int(b), int(n)))
    return out


def kv_bytes(cfg, tokens):
    return 2 * cfg["layers"] * cfg["kv_heads"] * cfg["head_dim"] * 2 * tokens


def run_model(a, st, name, cfg, dev, dt, sampler, budget_end):
    t0 = time.time()
    eng = Engine(name, cfg, dev, dt, a.operand_data)
    lt.log(PROG, "%s: %d layers, %.2f G params, built in %.1f s" % (
        name, cfg["layers"], eng.params() / 1e9, time.time() - t0))
    free_b = (torch.cuda.mem_get_info()[0] if lt.is_cuda() else 8e9)
    pre = QUICK_PREFILL if a.quick else PREFILL
    dec = QUICK_DECODE if a.quick else DECODE
    if a.prefill is not None:
        pre = parse_shapes(a.prefill)
    if a.decode is not None:
        dec = parse_shapes(a.decode)
    if a.dry:
        pre, dec = [(1, 64), (2, 32)], [(1, 64), (4, 32)]
    spec = "model=%s layers=%d" % (name, cfg["layers"])
    for kind, shapes in (("prefill", pre), ("decode", dec)):
        for b, n in shapes:
            if time.time() > budget_end:
                lt.log(PROG, "budget reached: skipping the rest of %s" % name)
                return
            ctx = n + (1 if kind == "decode" else 0)
            need = kv_bytes(cfg, b * ctx) * 1.1 + (b * n * cfg["hidden"] * 2 * 24 if kind == "prefill" else 0)
            if need > 0.8 * free_b or (a.max_kv_gb and kv_bytes(cfg, b * ctx) > a.max_kv_gb * 1e9):
                lt.log(PROG, "%s %s b=%d n=%d: skipped (needs %.1f GB)" % (name, kind, b, n, need / 1e9))
                continue
            try:
                step(a, st, eng, spec, kind, b, n, sampler)
                st.write(lt.out_path(a.out, "steps_lean.tsv"))
            except Exception as e:  # noqa: BLE001 - one shape's failure costs that shape
                lt.log(PROG, "%s %s b=%d n=%d: failed: %s" % (name, kind, b, n, str(e)[:300]))
            eng.kc = eng.vc = None
            if lt.is_cuda():
                torch.cuda.empty_cache()
    del eng
    if lt.is_cuda():
        torch.cuda.empty_cache()


def step(a, st, eng, spec, kind, b, n, sampler):
    cfg = eng.c
    ctx = n + 1 if kind == "decode" else n
    eng.alloc_cache(b, ctx)
    if kind == "prefill":
        tokens = torch.randint(0, cfg["vocab"], (b, n), device=eng.dev)
        fn = lambda: eng.forward(tokens, 0, False)  # noqa: E731
    else:
        tokens = torch.randint(0, cfg["vocab"], (b, 1), device=eng.dev)
        fn = lambda: eng.forward(tokens, n, True)  # noqa: E731
    with torch.inference_mode():
        rep = lt.capture_graph(fn, inner=1)
        # rough time of one replay, to size the load and the repeats
        tm = lt.Timer()
        p = tm.pair()
        tm.start(p)
        rep()
        tm.stop(p)
        lt.sync()
        est = max(tm.seconds(p), 1e-5)
        reps = int(min(50, max(5, a.time_s / est)))
        w0 = time.perf_counter()
        st_t = lt.time_calls(rep, reps, warmup=1, load_s=a.load_s)
        w1 = time.perf_counter()
        win = sampler.window(w1 - st_t["median_s"] * reps * 1.2, w1) if sampler else {}
        ktime, kn, names = lt.profile_device_time(rep)
    imb = None
    notes = ""
    if cfg.get("experts") and hasattr(eng, "_counts"):
        cnt = eng._counts.float()
        imb = (cnt.max() / cnt.mean()).item() if cnt.mean() > 0 else None
        notes = ("grouped experts %s; gate logits + token-keyed bias (balanced routing); "
                 "last layer: tokens per expert max %d, mean %.2f, "
                 "experts with tokens %d of %d" % (eng.grouped, int(cnt.max().item()),
                                                   cnt.mean().item(), int((cnt > 0).sum().item()),
                                                   cnt.numel()))
    sid = st.add_step(program="lean_graph", model_spec=spec, phase=kind, batch=b,
                      tokens=n if kind == "prefill" else 1, context=0 if kind == "prefill" else n,
                      recompute="", graph=1, time_median_s=st_t["median_s"], time_p10_s=st_t["p10_s"],
                      time_p90_s=st_t["p90_s"], kernel_time_s=ktime,
                      sm_clock_hz=win.get("sm_clock_hz"), power_w=win.get("power_w"),
                      mem_peak_allocated_bytes=None, mem_peak_reserved_bytes=None,
                      mem_device_total_bytes=None, reps=st_t["reps"], notes=notes)
    for i, (nm, t) in enumerate(names):
        st.add_step_kernel(sid, i, "", nm, None, t)
    lt.log(PROG, "%-14s %-7s b=%-3d n=%-6d %9.3f ms (kernels %9.3f ms, %d launches) %s MHz %s W%s" % (
        eng.name, kind, b, n, st_t["median_s"] * 1e3, ktime * 1e3, kn,
        "%.0f" % (win["sm_clock_hz"] / 1e6) if win.get("sm_clock_hz") else "-",
        "%.0f" % win["power_w"] if win.get("power_w") else "-",
        " imbalance %.2f" % imb if imb else ""))
    _ = w0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="output folder")
    ap.add_argument("--models", default="llama-3.1-8b,llama-3.2-1b,llama-2-13b,mixtral-8x7b")
    ap.add_argument("--operand-data", default="normal", choices=lt.OPERAND_DATA)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--dry", action="store_true", help="CPU, toy sizes: check the script")
    ap.add_argument("--load-s", type=float, default=0.3, help="busy time before timing each step")
    ap.add_argument("--time-s", type=float, default=0.15, help="timed span per step")
    ap.add_argument("--budget-s", type=float, default=400)
    ap.add_argument("--max-kv-gb", type=float, default=40)
    ap.add_argument("--prefill", help="prefill shapes BATCHxPROMPT,... (default: the built-in list)")
    ap.add_argument("--decode", help="decode shapes BATCHxCONTEXT,... (default: the built-in list)")
    a = ap.parse_args()
    t_start = time.time()
    if not lt.is_cuda() and not a.dry:
        lt.log(PROG, "no CUDA device (use --dry to check the script on the CPU)")
        return 1
    dev = torch.device("cuda" if lt.is_cuda() else "cpu")
    dt = torch.bfloat16
    torch.manual_seed(0)
    env = lt.environment()
    nv = lt.Nvml()
    sampler = lt.Sampler(nv) if nv.ok else None
    if sampler:
        sampler.start()
    st = lt.StoreText(env, "steps_lean.py (torch %s)" % torch.__version__,
                      "lean engine: one CUDA graph per step, SDPA flash, fused QKV and gate-up, "
                      "preallocated KV cache; %.2f s busy before timing" % a.load_s,
                      a.operand_data, a.quick)
    for item in a.models.split(","):
        name, _, layers = item.partition(":")
        if name not in MODELS:
            lt.log(PROG, "unknown model '%s' (known: %s)" % (name, ", ".join(MODELS)))
            return 2
        cfg = dict(MODELS[name])
        if layers:
            cfg["layers"] = int(layers)
        if a.dry:
            gqa = cfg["kv_heads"] != cfg["heads"]
            cfg.update(layers=2, hidden=64, inter=32 if cfg.get("experts") else 128, vocab=512,
                       heads=4, kv_heads=2 if gqa else 4, head_dim=16)
            if cfg.get("experts"):
                cfg.update(experts=4, top_k=min(cfg["top_k"], 2))
        run_model(a, st, name, cfg, dev, dt, sampler, t_start + a.budget_s)
        st.write(lt.out_path(a.out, "steps_lean.tsv"))  # after each model: a kill keeps them
    if sampler:
        sampler.stop()
    path = lt.out_path(a.out, "steps_lean.tsv")
    st.write(path)
    lt.log(PROG, "%d steps -> %s (%.0f s)" % (len(st.steps), path, time.time() - t_start))
    return 0


if __name__ == "__main__":
    sys.exit(main())
