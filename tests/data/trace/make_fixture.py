#!/usr/bin/env python3
"""make_fixture.py - writes llama_tiny.trace, the hand-made trace fixture of
tests/test_trace.c: one prefill step (b=1 s=512) and one decode step (b=8
ctx=2048) of one Llama-3.1-8B layer each, NVTX ranges named as
calib/torch/llama_steps.py names them, kernel names as PyTorch/cuBLAS
launch them. Every kernel in an op range lasts 10 us; outside them: an
all-reduce (5 us, communication), a fill kernel (4 us, elementwise), a
memcpy HtoD (3 us) and a memset (2 us). The test derives its expected sums
from these figures. Run: python3 make_fixture.py > llama_tiny.trace
"""
ADD = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIN3c108BFloat16EEESt5arrayIPcLm3EEEEviT0_T1_"
MUL = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13BinaryFunctorIN3c108BFloat16ES4_S4_NS0_15binary_internal10MulFunctorIfEEEESt5arrayIPcLm3EEEEviT0_T1_"
SILU = "_ZN2at6native29vectorized_elementwise_kernelILi4EZZZNS0_12_GLOBAL__N_111silu_kernelERNS_18TensorIteratorBaseEENKUlvE_clEvENKUlvE2_clEvEUlN3c108BFloat16EE_St5arrayIPcLm2EEEEviT0_T1_"
COPY = "_ZN2at6native18elementwise_kernelILi128ELi4EZNS0_22gpu_kernel_impl_nocastIZZZNS0_23direct_copy_kernel_cudaERNS_18TensorIteratorBaseEENKUlvE1_clEvENKUlvE8_clEvEUlN3c108BFloat16EE_EEvS4_RKT_EUliE_EEviT1_"
CAT = "_ZN2at6native19CatArrayBatchedCopyIN3c108BFloat16EjLi4ELi64ELi64EEEvPT_"
NORM = "_ZN2at6native28vectorized_layer_norm_kernelIN3c108BFloat16EfEEviT0_PKT_"
EMB = "_ZN2at6native12_GLOBAL__N_121indexSelectLargeIndexIN3c108BFloat16EljLi2ELi2ELin2ELb1EEEvNS_4cuda6detail10TensorInfoIT_T1_EESA_NS7_IKT0_S9_EEiiS9_S9_l"
FLASH = "_ZN13pytorch_flash16flash_fwd_kernelILi128ELb1EEEvNS_16Flash_fwd_paramsE"
SPLITKV = "_ZN13pytorch_flash24flash_fwd_splitkv_kernelILi128EEEvNS_16Flash_fwd_paramsE"
COMBINE = "_ZN13pytorch_flash32flash_fwd_splitkv_combine_kernelILi128EEEvNS_16Flash_fwd_paramsE"
GEMM = "nvjet_sm90_tst_128x256_64x4_1x2_h_bz_coopA_NNT"
GEMV = "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_splitK_TNT"
SPLITK = "_Z19splitKreduce_kernelILi32ELi16EiffEvPKfPf"
FILL = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_"
NCCL = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL"

lines, ranges = [], []
t = [1_000_000]      # GPU clock, ns
corr = [1]
rid = [0]


def kernel(name, rng, dur=10_000, grid=(132, 1, 1), block=(384, 1, 1)):
    lines.append("kernel\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t1\t1\t1\t128\t0\t65536\t%d\t%d\t7\t0\t%d\t%d"
                 % (name, *grid, *block, t[0], t[0] + dur, corr[0], rng))
    t[0] += dur + 1000
    corr[0] += 1


def push(name, parent, depth):
    rid[0] += 1
    ranges.append([rid[0], parent, name, t[0], 0, depth])
    return rid[0]


def pop(r):
    ranges[r - 1][4] = t[0]


def op(name, parent, kernels):
    r = push(name, parent, 2)
    for k in kernels:
        kernel(k, r)
    pop(r)


def step(phase, decode):
    p = push(phase, 0, 0)
    op("embedding", p, [EMB])
    lay = push("layer 0", p, 1)
    op("attn_norm", lay, [NORM])
    op("qkv_proj", lay, [GEMV, SPLITK] if decode else [GEMM])
    op("rope", lay, [MUL, MUL, ADD, MUL, MUL, ADD, CAT])
    op("kv_write", lay, [COPY, COPY])
    op("attention", lay, [SPLITKV, COMBINE] if decode else [FLASH])
    op("o_proj", lay, [GEMV if decode else GEMM])
    op("residual", lay, [ADD])
    op("mlp_norm", lay, [NORM])
    op("gate_up_proj", lay, [GEMV if decode else GEMM])
    op("silu_mul", lay, [SILU, MUL])
    op("down_proj", lay, [GEMV if decode else GEMM])
    op("residual", lay, [ADD])
    pop(lay)
    op("final_norm", p, [NORM])
    op("lm_head", p, [GEMV if decode else GEMM])
    pop(p)


kernel(FILL, 0, dur=4_000)
step("prefill b=1 s=512", False)
step("decode b=8 ctx=2048", True)
kernel(NCCL, 0, dur=5_000)
nk = len(lines)
print("# hand-made trace fixture: see make_fixture.py")
print("llmsim-trace\t1")
print("run\t2026-11-29T12:00:00Z\tfixture\tpython3 llama_steps.py\tNVIDIA H200\t132\t1\t130001\t1\t0\tmake_fixture.py")
for l in lines:
    print(l)
print("memcpy\tHtoD\t1048576\t%d\t%d\t7\t0\t%d\t0" % (t[0], t[0] + 3000, corr[0]))
print("memset\t\t4096\t%d\t%d\t7\t0\t%d\t0" % (t[0] + 4000, t[0] + 6000, corr[0] + 1))
for r in ranges:
    print("range\t%d\t%d\t%s\t%d\t%d\t4242\t%d" % tuple(r))
print("end\t%d\t2\t%d" % (nk, len(ranges)))
