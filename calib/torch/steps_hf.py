#!/usr/bin/env python3
"""steps_hf.py - Hugging Face transformers prefill, the way people write it:
`AutoModelForCausalLM.from_config(...)` with attn_implementation="sdpa" in
bf16, initialized by transformers itself (normal, std = initializer_range,
0.02), and `model(input_ids, logits_to_keep=1)` under inference_mode, as
generate() does for the prompt. Eager PyTorch: the GPU idles between small
kernels, so the script records both the step's wall time (CUDA events) and
its kernel time (the profiler's sum of device kernel durations), which is
what llmsim's kernel-level prediction is compared with.

Writes the calibration store's text form (schema 3, `steps` with program
"hf_sdpa", and the kernels that ran in `step_kernels`).

  python3 calib/torch/steps_hf.py --out DIR [--models a,b] [--quick] [--dry]
"""
import argparse
import sys
import time

import torch

sys.path.insert(0, __import__("os").path.dirname(__file__))
import llmsim_torch as lt  # noqa: E402

PROG = "steps_hf"

# llmsim model name -> (transformers config class, its fields)
MODELS = {
    "llama-3.1-8b": ("LlamaConfig", dict(hidden_size=4096, intermediate_size=14336,
                                         num_hidden_layers=32, num_attention_heads=32,
                                         num_key_value_heads=8, vocab_size=128256,
                                         max_position_embeddings=131072, rope_theta=500000.0,
                                         rms_norm_eps=1e-5)),
    "llama-3.2-1b": ("LlamaConfig", dict(hidden_size=2048, intermediate_size=8192,
                                         num_hidden_layers=16, num_attention_heads=32,
                                         num_key_value_heads=8, head_dim=64, vocab_size=128256,
                                         tie_word_embeddings=True, rope_theta=500000.0,
                                         max_position_embeddings=131072, rms_norm_eps=1e-5)),
    "llama-3.2-3b": ("LlamaConfig", dict(hidden_size=3072, intermediate_size=8192,
                                         num_hidden_layers=28, num_attention_heads=24,
                                         num_key_value_heads=8, head_dim=128, vocab_size=128256,
                                         tie_word_embeddings=True, rope_theta=500000.0,
                                         max_position_embeddings=131072, rms_norm_eps=1e-5)),
    "llama-2-7b": ("LlamaConfig", dict(hidden_size=4096, intermediate_size=11008,
                                       num_hidden_layers=32, num_attention_heads=32,
                                       num_key_value_heads=32, vocab_size=32000,
                                       max_position_embeddings=4096, rms_norm_eps=1e-5)),
    "llama-2-13b": ("LlamaConfig", dict(hidden_size=5120, intermediate_size=13824,
                                        num_hidden_layers=40, num_attention_heads=40,
                                        num_key_value_heads=40, vocab_size=32000,
                                        max_position_embeddings=4096, rms_norm_eps=1e-5)),
    "qwen2.5-72b": ("Qwen2Config", dict(hidden_size=8192, intermediate_size=29568,
                                        num_hidden_layers=80, num_attention_heads=64,
                                        num_key_value_heads=8, vocab_size=152064,
                                        max_position_embeddings=32768, rms_norm_eps=1e-6)),
}
PREFILL = [(1, 512), (1, 2048), (4, 2048), (1, 8192), (8, 1024)]


def build(name, layers, dev, dry):
    import transformers
    cls_name, fields = MODELS[name]
    fields = dict(fields)
    if layers:
        fields["num_hidden_layers"] = layers
    if dry:
        fields.update(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2 if fields["num_key_value_heads"] !=
                      fields["num_attention_heads"] else 4, vocab_size=512, head_dim=16)
    cfg = getattr(transformers, cls_name)(**fields)
    cfg._attn_implementation = "sdpa"
    prev = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    try:
        with torch.device(dev):
            model = transformers.AutoModelForCausalLM.from_config(cfg, attn_implementation="sdpa")
    finally:
        torch.set_default_dtype(prev)
    model.eval()
    return model, fields


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default="llama-3.1-8b,llama-3.2-1b,llama-2-13b")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--dry", action="store_true")
    ap.add_argument("--load-s", type=float, default=0.2)
    ap.add_argument("--budget-s", type=float, default=200)
    a = ap.parse_args()
    t_start = time.time()
    if not lt.is_cuda() and not a.dry:
        lt.log(PROG, "no CUDA device (use --dry on the CPU)")
        return 1
    import transformers
    dev = torch.device("cuda" if lt.is_cuda() else "cpu")
    torch.manual_seed(0)
    env = lt.environment()
    env["transformers"] = transformers.__version__
    nv = lt.Nvml()
    sampler = lt.Sampler(nv) if nv.ok else None
    if sampler:
        sampler.start()
    st = lt.StoreText(env, "steps_hf.py (transformers %s, torch %s)" % (transformers.__version__,
                                                                        torch.__version__),
                      "HF transformers prefill, eager, attn_implementation=sdpa, logits_to_keep=1; "
                      "kernel_time_s from the profiler", "normal", a.quick)
    shapes = [(1, 2048)] if a.quick else PREFILL
    if a.dry:
        shapes = [(1, 64), (2, 32)]
    for item in a.models.split(","):
        name, _, layers = item.partition(":")
        if name not in MODELS:
            lt.log(PROG, "unknown model '%s'" % name)
            return 2
        t0 = time.time()
        model, fields = build(name, int(layers) if layers else 0, dev, a.dry)
        nl = fields["num_hidden_layers"]
        lt.log(PROG, "%s: %d layers built in %.1f s" % (name, nl, time.time() - t0))
        spec = "model=%s layers=%d" % (name, nl)
        for b, s in shapes:
            if time.time() > t_start + a.budget_s:
                lt.log(PROG, "budget reached")
                break
            ids = torch.randint(0, fields["vocab_size"], (b, s), device=dev)
            with torch.inference_mode():
                fn = lambda: model(input_ids=ids, use_cache=True, logits_to_keep=1)  # noqa: E731
                try:
                    fn()
                    lt.sync()
                    tm = lt.Timer()
                    p = tm.pair()
                    tm.start(p)
                    fn()
                    tm.stop(p)
                    lt.sync()
                    est = max(tm.seconds(p), 1e-4)
                    reps = int(min(20, max(3, 0.3 / est)))
                    w1 = None
                    res = lt.time_calls(fn, reps, warmup=1, load_s=a.load_s)
                    w1 = time.perf_counter()
                    win = sampler.window(w1 - res["median_s"] * reps * 1.2, w1) if sampler else {}
                    ktime, kn, names = lt.profile_device_time(fn)
                except Exception as e:  # noqa: BLE001
                    lt.log(PROG, "%s b=%d s=%d: failed: %s" % (name, b, s, str(e)[:300]))
                    continue
            sid = st.add_step(program="hf_sdpa", model_spec=spec, phase="prefill", batch=b, tokens=s,
                              context=0, recompute="", graph=0, time_median_s=res["median_s"],
                              time_p10_s=res["p10_s"], time_p90_s=res["p90_s"], kernel_time_s=ktime,
                              sm_clock_hz=win.get("sm_clock_hz"), power_w=win.get("power_w"),
                              reps=res["reps"], notes="%d kernel launches" % kn)
            for i, (nm, t) in enumerate(names):
                st.add_step_kernel(sid, i, "", nm, None, t)
            lt.log(PROG, "%-13s b=%-2d s=%-5d wall %9.3f ms  kernels %9.3f ms (%d) %s MHz" % (
                name, b, s, res["median_s"] * 1e3, ktime * 1e3, kn,
                "%.0f" % (win["sm_clock_hz"] / 1e6) if win.get("sm_clock_hz") else "-"))
        del model
        if lt.is_cuda():
            torch.cuda.empty_cache()
    if sampler:
        sampler.stop()
    path = lt.out_path(a.out, "steps_hf.tsv")
    st.write(path)
    lt.log(PROG, "%d steps -> %s (%.0f s)" % (len(st.steps), path, time.time() - t_start))
    return 0


if __name__ == "__main__":
    sys.exit(main())
