#!/usr/bin/env python3
"""torch_ops.py - the PyTorch ops a model step launches besides dense GEMMs
and attention, timed alone for llmsim's op costs (fit cases):

  moe      the routing and expert ops of an MoE layer as a PyTorch engine
           writes them: torch.topk over the gate logits, a stable argsort of
           the chosen experts, index_select (the permute), torch._grouped_mm
           over the experts (gate-up and down shapes of Mixtral 8x7B,
           Qwen3-30B-A3B, DeepSeek-V2-Lite), and index_add_ (the weighted
           combine); tokens routed uniformly at random, as a balanced router
  hf       Hugging Face's LlamaRMSNorm (fp32 upcast, pow, mean, rsqrt,
           multiply, downcast, weight) and apply_rotary_pos_emb (rotate_half:
           neg, cat, multiplies on transposed [b, h, s, d] views), whole and
           kernel by kernel from the profiler
  decode   FlashAttention-2 decode with the query heads of a KV head packed
           into the query axis at large batch (the shapes of a decode step
           at batch 32-256, where PyTorch picks the non-split kernel)
  eager    HF transformers decode steps (eager, DynamicCache) of a few-layer
           Llama-3.1-8B: launch-bound steps, wall and kernel time

Every case runs inside a sustained load (CUDA graph over rotating inputs,
--load-s busy before timing), realistic operands (activations N(0, 1),
weights N(0, 0.02)); the profiler records the kernels each launched.
Writes the store's text form (schema 3) and, for `eager`, steps rows.

  python3 calib/torch/torch_ops.py --out DIR [--sets moe,hf,decode,eager] [--dry]
"""
import argparse
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, __import__("os").path.dirname(__file__))
import llmsim_torch as lt  # noqa: E402
from heldout_ops import Cases  # noqa: E402

PROG = "torch_ops"

# (model, experts, top_k, hidden, expert intermediate)
MOE = [("mixtral-8x7b", 8, 2, 4096, 14336), ("qwen3-30b-a3b", 128, 8, 2048, 768),
       ("deepseek-v2-lite", 64, 6, 2048, 1408)]
MOE_TOKENS = [1, 8, 32, 128, 512, 2048, 8192]


def routing(T, E, k, dev, gen):
    """Uniform random top-k routing of T tokens: expert ids [T, k] (distinct
    per token), the stable order, the offsets for _grouped_mm."""
    scores = torch.rand(T, E, device=dev, generator=gen)
    topi = scores.topk(k, dim=-1).indices
    flat = topi.reshape(-1)
    order = torch.argsort(flat, stable=True)
    counts = torch.bincount(flat, minlength=E)
    offs = torch.cumsum(counts, 0).to(torch.int32)
    return topi, order, offs, counts


def moe_cases(c, dev, dry):
    dt = torch.bfloat16
    gen = torch.Generator(device=dev)
    gen.manual_seed(5)
    for name, E, k, H, I in MOE:
        if dry:
            E, k, H, I = 4, 2, 64, 32
        for T in (MOE_TOKENS if not dry else [1, 8]):
            topi, order, offs, counts = routing(T, E, k, dev, gen)
            m = T * k
            active = int((counts > 0).sum().item())
            mx = int(counts.max().item())
            lt.log(PROG, "%s T=%d: %d rows over %d experts, %d active, at most %d rows" % (
                name, T, m, E, active, mx))
            # grouped GEMMs: gate-up [m, H] x [E, H, 2I] and down [m, I] x [E, I, H]
            for pname, n, kk in (("gate_up", 2 * I, H), ("down", H, I)):
                spec = "gemm m=%d n=%d k=%d groups=%d dtype=bf16" % (m, n, kk, E)
                c.run(spec, "gemm", "torch_grouped_mm", 2.0 * m * n * kk,
                      2.0 * (m * kk + active * n * kk + m * n),
                      lambda m=m, n=n, kk=kk, offs=offs: (
                          lt.randn(m, kk, device=dev, dtype=dt),
                          lt.randn(E, n, kk, device=dev, dtype=dt, sd=0.02).transpose(-2, -1), offs),
                      lambda x, w, o: torch._grouped_mm(x, w, offs=o))
            # routing ops
            c.run("ew kind=topk tokens=%d hidden=%d k=%d dtype=bf16" % (T, E, k), "routing",
                  "torch_topk", 0.0, 2.0 * T * E + 10.0 * T * k,
                  lambda T=T: (lt.randn(T, E, device=dev, dtype=dt),), lambda x, k=k: torch.topk(x, k, dim=-1))
            c.run("ew kind=sort tokens=%d hidden=1 dtype=int64" % m, "routing", "torch_argsort",
                  0.0, 16.0 * m,
                  lambda m=m: (torch.randint(0, E, (m,), device=dev),),
                  lambda x: torch.argsort(x, stable=True))
            c.run("ew kind=gather tokens=%d hidden=%d dtype=bf16" % (m, H), "routing",
                  "torch_index_select", 0.0, 4.0 * m * H,
                  lambda T=T, m=m, order=order: (lt.randn(T, H, device=dev, dtype=dt), order // k),
                  lambda x, idx: x.index_select(0, idx))
            c.run("ew kind=scatter_add tokens=%d hidden=%d dtype=bf16" % (m, H), "routing",
                  "torch_index_add", float(m * H), 2.0 * m * H + 4.0 * T * H,
                  lambda T=T, m=m, order=order: (torch.zeros(T, H, device=dev, dtype=dt),
                                                 lt.randn(m, H, device=dev, dtype=dt), order // k),
                  lambda dst, src, idx: dst.index_add_(0, idx, src))


def hf_cases(c, dev, dry):
    try:
        from transformers.models.llama.modeling_llama import LlamaRMSNorm, apply_rotary_pos_emb
    except Exception as e:  # noqa: BLE001
        lt.log(PROG, "transformers unavailable (%s): hf set skipped" % e)
        return
    dt = torch.bfloat16
    for T in ((1, 512, 8192) if not dry else (8,)):
        H = 4096 if not dry else 64
        with torch.device(dev):
            norm = LlamaRMSNorm(H, eps=1e-5).to(dt)
        c.run("hf_rmsnorm tokens=%d hidden=%d dtype=bf16" % (T, H), "composite", "hf_llama_rmsnorm",
              0.0, 4.0 * T * H, lambda T=T, H=H: (lt.randn(1, T, H, device=dev, dtype=dt),),
              lambda x, norm=norm: norm(x))
    for b, s in (((1, 512), (4, 2048), (1, 8192)) if not dry else ((1, 16),)):
        h, hk, d = (32, 8, 128) if not dry else (4, 2, 16)

        def make(b=b, s=s, h=h, hk=hk, d=d):
            q = lt.randn(b, s, h, d, device=dev, dtype=dt).transpose(1, 2)    # HF's view+transpose
            k = lt.randn(b, s, hk, d, device=dev, dtype=dt).transpose(1, 2)
            ang = torch.rand(b, s, d, device=dev) * 3.14
            return q, k, ang.cos().to(dt), ang.sin().to(dt)
        c.run("hf_rope batch=%d seq=%d heads=%d kv_heads=%d head_dim=%d dtype=bf16" % (b, s, h, hk, d),
              "composite", "hf_apply_rotary_pos_emb", 0.0, 4.0 * b * s * (h + hk) * d, make,
              lambda q, k, cs, sn: apply_rotary_pos_emb(q, k, cs, sn))


def decode_cases(c, dev, dry):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    dt = torch.bfloat16
    for b, h, hk, kv, d in ((256, 32, 8, 512, 128), (128, 32, 8, 1024, 128), (64, 32, 8, 4096, 128),
                            (32, 32, 8, 2048, 128), (256, 32, 8, 512, 64), (64, 40, 40, 1024, 128)):
        if dry:
            b, h, hk, kv, d = 2, 4, 2, 64, 16

        def make(b=b, h=h, hk=hk, kv=kv, d=d):
            return (lt.randn(b, hk, h // hk, d, device=dev, dtype=dt),
                    lt.randn(b, hk, kv, d, device=dev, dtype=dt), lt.randn(b, hk, kv, d, device=dev, dtype=dt))

        def dec(q, k, v):
            with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                F.scaled_dot_product_attention(q, k, v)
        c.run("decode impl=flashdecoding batch=%d heads=%d kv_heads=%d kv_len=%d head_dim=%d dtype=bf16"
              % (b, h, hk, kv, d), "decode", "torch_sdpa_flash_decode", 4.0 * b * h * kv * d,
              2.0 * b * hk * kv * d * 2, make, dec)


def eager_steps(a, st, sampler, dev, dry):
    try:
        import transformers
    except Exception as e:  # noqa: BLE001
        lt.log(PROG, "transformers unavailable (%s): eager set skipped" % e)
        return
    cfg = transformers.LlamaConfig(hidden_size=4096 if not dry else 64, intermediate_size=14336 if not dry else 128,
                                   num_hidden_layers=4 if not dry else 2, num_attention_heads=32 if not dry else 4,
                                   num_key_value_heads=8 if not dry else 2, vocab_size=128256 if not dry else 512,
                                   max_position_embeddings=131072, rope_theta=500000.0, rms_norm_eps=1e-5)
    prev = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    try:
        with torch.device(dev):
            model = transformers.AutoModelForCausalLM.from_config(cfg, attn_implementation="sdpa")
    finally:
        torch.set_default_dtype(prev)
    model.eval()
    spec = "model=llama-3.1-8b layers=%d" % cfg.num_hidden_layers
    for b, ctx in (((1, 2048), (8, 2048), (32, 2048)) if not dry else ((1, 16),)):
        ids = torch.randint(0, cfg.vocab_size, (b, ctx), device=dev)
        nxt = torch.randint(0, cfg.vocab_size, (b, 1), device=dev)
        with torch.inference_mode():
            out = model(input_ids=ids, use_cache=True, logits_to_keep=1)
            cache = out.past_key_values
            L = ctx

            def one():
                # the same position each time: the cache is cropped back, so
                # every timed step sees a context of ctx tokens
                r = model(input_ids=nxt, past_key_values=cache, use_cache=True, logits_to_keep=1)
                cache.crop(-1)
                return r
            res = lt.time_calls(one, 10 if not dry else 3, warmup=3, load_s=0.0)
            w1 = time.perf_counter()
            win = sampler.window(w1 - res["median_s"] * 12, w1) if sampler else {}
            ktime, kn, names = lt.profile_device_time(one)
        sid = st.add_step(program="hf_sdpa_eager", model_spec=spec, phase="decode", batch=b, tokens=1,
                          context=ctx, recompute="", graph=0, time_median_s=res["median_s"],
                          time_p10_s=res["p10_s"], time_p90_s=res["p90_s"], kernel_time_s=ktime,
                          sm_clock_hz=win.get("sm_clock_hz"), power_w=win.get("power_w"), reps=res["reps"],
                          notes="HF DynamicCache decode, eager; %d kernel launches" % kn)
        for i, (nm, t) in enumerate(names):
            st.add_step_kernel(sid, i, "", nm, None, t)
        lt.log(PROG, "hf eager decode b=%d ctx=%d: wall %.3f ms, kernels %.3f ms (%d)" % (
            b, ctx, res["median_s"] * 1e3, ktime * 1e3, kn))
    del model


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--sets", default="moe,hf,decode,eager")
    ap.add_argument("--dry", action="store_true")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--load-s", type=float, default=0.05)
    ap.add_argument("--no-graph", action="store_true")
    a = ap.parse_args()
    t0 = time.time()
    if not lt.is_cuda() and not a.dry:
        lt.log(PROG, "no CUDA device (use --dry on the CPU)")
        return 1
    if a.dry:
        a.reps, a.load_s = 3, 0.0
    dev = torch.device("cuda" if lt.is_cuda() else "cpu")
    torch.manual_seed(3)
    env = lt.environment()
    nv = lt.Nvml()
    sampler = lt.Sampler(nv) if nv.ok else None
    if sampler:
        sampler.start()
    st = lt.StoreText(env, "torch_ops.py (torch %s)" % torch.__version__,
                      "PyTorch MoE routing/expert ops, HF norm and RoPE, packed FA2 decode, HF eager "
                      "decode steps; CUDA-graph timed inside a %.2f s sustained load" % a.load_s, "normal")
    c = Cases(a, st, sampler, dev)
    c.split = "fit"
    sets = set(a.sets.split(","))
    for name, fn in (("moe", moe_cases), ("hf", hf_cases), ("decode", decode_cases)):
        if name in sets:
            fn(c, dev, a.dry)
        st.write(lt.out_path(a.out, "torch_ops.tsv"))
    if "eager" in sets:
        eager_steps(a, st, sampler, dev, a.dry)
    if sampler:
        sampler.stop()
    st.write(lt.out_path(a.out, "torch_ops.tsv"))
    lt.log(PROG, "%d cases, %d steps (%.0f s)" % (c.n, len(st.steps), time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
