/*
 * gpu.h - a GPU as data: compute units, per-SM limits, memory hierarchy,
 * peak rates per data type, interconnect, and the model's efficiencies.
 *
 * Loaded from hw/NAME.yaml by llmsim_gpu_load. When hw/profiles/NAME.yaml
 * exists (written by `llmsim calib fit`), its efficiencies replace the
 * hardware file's and its per-class expected errors are attached, unless
 * the environment sets LLMSIM_NO_PROFILE=1. All values are SI base units.
 */
#ifndef LLMSIM_GPU_H
#define LLMSIM_GPU_H

#include "base/dtype.h"
#include "base/err.h"

enum llmsim_param {
#define LLMSIM_PARAM(e, key, def, doc) LLMSIM_PARAM_##e,
#include "gpu_params.h"
#undef LLMSIM_PARAM
	LLMSIM_PARAM_COUNT
};

/* Table of the parameters above: yaml key, default, description. */
struct llmsim_param_info {
	const char *key;
	double def;
	const char *doc;
};
extern const struct llmsim_param_info llmsim_param_info[LLMSIM_PARAM_COUNT];

/* The values an op's operands hold. Tensor-core power follows how many
 * bits toggle, so under the power limit (and in a lone kernel's burst) the
 * clock depends on the data: trained weights and activations (bell-shaped
 * values with full mantissas, the default) and random normal data toggle
 * alike; few-bit grids and zeros toggle less and run faster. */
enum llmsim_operand_data {
	LLMSIM_OPD_TRAINED,  /* trained weights and activations (the default) */
	LLMSIM_OPD_RANDOM,   /* torch.randn-style random normal data */
	LLMSIM_OPD_GRID,     /* k/128, |k| <= 127: 8-bit grids */
	LLMSIM_OPD_COARSE,   /* k/8, |k| <= 7: few-bit grids */
	LLMSIM_OPD_ZEROS,
	LLMSIM_OPD_COUNT
};
/* "trained", "random", "grid", "coarse", "zeros"; NULL if out of range. */
const char *llmsim_operand_data_name(enum llmsim_operand_data d);
/* The enum of a name, or -1. */
int llmsim_operand_data_parse(const char *s);
/* "trained, random, grid, coarse or zeros": the choices, for messages. */
const char *llmsim_operand_data_choices(void);

#define LLMSIM_GPU_MAX_ALIASES 8
#define LLMSIM_GPU_MAX_ERR_CLASSES 16

/* Expected prediction error of one op class, from held-out calibration:
 * |predicted - measured| / measured over kernels the fit never saw. The
 * error printed beside a prediction is p80, so that it covers the observed
 * error of at least 80% of the class's held-out kernels. */
struct llmsim_err_class {
	char name[32];          /* "gemm", "elementwise", "attention", ... */
	double median_abs_pct;  /* median absolute % error */
	double p80_abs_pct;     /* 80th-percentile absolute % error: the error bar */
	double p90_abs_pct;     /* 90th-percentile absolute % error */
	double bias_pct;        /* median signed % error: > 0 when predictions run slow */
	int n;                  /* held-out kernels behind the figures */
};

/* Expected error of a whole step, from the `steps` validation class of a
 * measured program (calib/validate/steps.h), for one engine and phase:
 * the calibration profile's `steps_errors:` block. */
#define LLMSIM_GPU_MAX_STEP_CLASSES 8
struct llmsim_step_err_class {
	char name[32];          /* "torch/prefill": engine/phase */
	double p80_abs_pct;     /* 80th-percentile absolute % error: covers 80% of the class */
	double median_abs_pct;
	double bias_pct;        /* median signed % error (predicted - measured) */
	int n;                  /* measured steps behind the figures */
	char program[32];       /* the measured program ("lean_graph") */
};

/* Whether a class's errors lean one way: its median signed error is at
 * least 1% and at least half its median |error| (then most of its errors
 * share that sign, and the error bar says which). */
int llmsim_err_class_biased(const struct llmsim_err_class *c);

/* How a GPU's description stands to the calibrated GPU it is priced from
 * (the hardware file's `calibration_basis:`): what a prediction for it
 * inherits and how far it may miss. */
enum llmsim_gpu_relation {
	LLMSIM_REL_NONE,             /* no basis: the file stands alone */
	LLMSIM_REL_SAME_DIE,         /* the basis's die, clocks and memory */
	LLMSIM_REL_NEW_MEMORY,       /* the basis's die on other memory (H100 beside the H200) */
	LLMSIM_REL_NEW_ARCHITECTURE, /* another architecture of the same vendor */
	LLMSIM_REL_OTHER_VENDOR,     /* another vendor's GPU */
	LLMSIM_REL_COUNT
};
/* "same_die", "new_memory", ...; NULL if out of range. */
const char *llmsim_gpu_relation_name(enum llmsim_gpu_relation r);
/* Whether a GPU of this relation takes its basis's per-SM efficiencies
 * (same die: the die's pipelines, caches and front end are the basis's). */
static inline int llmsim_gpu_relation_shares_die(enum llmsim_gpu_relation r)
{
	return r == LLMSIM_REL_SAME_DIE || r == LLMSIM_REL_NEW_MEMORY;
}

struct llmsim_gpu {
	char name[64];          /* short name: "h200" */
	char full_name[128];    /* "NVIDIA H200 SXM 141GB" */
	char vendor[16];        /* "nvidia", "amd" */
	char arch[32];          /* "hopper", "cdna3", ... */
	char path[512];         /* file it was loaded from */
	char aliases[LLMSIM_GPU_MAX_ALIASES][32];
	int naliases;

	/* compute */
	int sms;                        /* SMs (NVIDIA) or CUs (AMD) */
	int warp_size;                  /* 32, or 64 on AMD */
	double boost_clock_hz;          /* max SM clock */
	double base_clock_hz;

	/* per-SM limits (occupancy) */
	int registers_per_sm;           /* 32-bit registers */
	int registers_per_block_max;
	int registers_per_thread_max;
	int register_alloc_unit;        /* registers allocated per warp in units of this */
	double smem_bytes_per_sm;       /* configurable shared memory per SM */
	double smem_bytes_per_block_max;
	double smem_reserved_bytes_per_block; /* system use per block (1 KB on sm_80+) */
	double smem_alloc_unit_bytes;   /* allocation granularity */
	int threads_per_sm_max;
	int threads_per_block_max;
	int warps_per_sm_max;
	int blocks_per_sm_max;

	/* memory hierarchy */
	double hbm_bytes;               /* capacity */
	double hbm_bytes_per_s;         /* peak */
	double hbm_latency_s;           /* load-to-use from DRAM */
	double l2_bytes;
	double l2_bytes_per_s;
	double smem_bytes_per_s_per_sm; /* shared-memory bandwidth of one SM */

	/* dense peak rates, 0 where the chip lacks the type */
	double tensor_flops_per_s[LLMSIM_DT_COUNT]; /* matrix units */
	double vector_flops_per_s[LLMSIM_DT_COUNT]; /* CUDA cores / vector ALUs */

	/* interconnect: two levels. The first is one NVLink domain, GPUs
	 * joined by NVLink at intra_node_* (a node, or several nodes of a
	 * rack-scale NVLink fabric: GB200 NVL72 joins 72 GPUs of 18 nodes);
	 * the second is the network between domains at inter_node_*. A
	 * collective's `nodes` counts the NVLink domains it spans. */
	int gpus_per_node;              /* GPUs of one node (its host: host memory, CPU) */
	int nvlink_domain_gpus;         /* GPUs of one NVLink domain: gpus_per_node unless the
					 * file sets interconnect.nvlink_domain_gpus */
	double intra_node_bytes_per_s;  /* per GPU, per direction (NVLink) */
	double intra_node_latency_s;
	double inter_node_bytes_per_s;  /* per GPU, per direction (network) */
	double inter_node_latency_s;
	double pcie_bytes_per_s;        /* per direction */
	double tdp_w;
	double price_usd_per_gpu_hour;  /* a public on-demand list price, its source and date in
					 * the file's comment (0: none stated) */
	double uncalibrated_step_error_fraction; /* what the file's unmeasured values (assumptions,
					 * figures taken from another GPU) add to a whole
					 * step's expected |error|, in quadrature with the
					 * default (sim/expected_error.c); 0: nothing stated */

	/* the calibrated GPU this one is priced from (calibration_basis:):
	 * basis "" and relation NONE when the file names none */
	char basis[64];
	enum llmsim_gpu_relation relation;

	/* model parameters: efficiencies and overheads */
	double param[LLMSIM_PARAM_COUNT];
	unsigned char param_stated[LLMSIM_PARAM_COUNT]; /* 1: the hardware file's efficiency:
					 * section states it; 0: the default, or the basis's
					 * value where the die is shared (param_from_basis) */
	unsigned char param_from_basis[LLMSIM_PARAM_COUNT];
	char profile_path[512];         /* "" when no calibration profile applied */
	char transfer_path[512];        /* the transfer experiment whose errors stand as this
					 * uncalibrated GPU's expected errors (hw/transfer/), or "" */
	char transfer_measured_on[64];  /* the GPU that experiment measured ("h100") */
	struct llmsim_err_class err_classes[LLMSIM_GPU_MAX_ERR_CLASSES];
	int nerr_classes;
	struct llmsim_step_err_class step_errors[LLMSIM_GPU_MAX_STEP_CLASSES];
	int nstep_errors;

	/* the host of one node (the optional `host:` section; all 0 when the
	 * file has none, and then nothing can be offloaded to it) */
	int has_host;
	double host_memory_bytes;          /* DRAM of one node */
	double host_memory_bytes_per_s;    /* peak DRAM bandwidth of one node */
	int cpu_cores;                     /* physical cores of one node */
	double cpu_adam_params_per_s_per_core; /* DeepSpeed CPU Adam, one core */
	int gpus_per_host_link;            /* GPUs sharing one PCIe uplink to the CPU */

	/* clocks of the tensor cores (compute: section, optional, 0 when
	 * absent): the clock the tensor peaks of peak_flops_per_s are quoted
	 * at, and the burst clock, the SM clock one tensor-bound kernel holds
	 * at the power limit; tensor math runs at peak * burst / quoted when
	 * the burst clock is lower */
	double tensor_clock_hz;
	double burst_clock_hz;
	/* how long the power controller averages over: a load from idle has
	 * slowed fully once it has run this long (0: unknown) */
	double power_window_s;
	/* tensor-core switching activity of each kind of operand data,
	 * relative to trained data (1): the dynamic power of tensor work scales
	 * with it, so a power-limited clock goes as activity^(-1/3)
	 * (compute.operand_activity; every entry 1 when absent) */
	double operand_activity[LLMSIM_OPD_COUNT];
	/* how a lone kernel's burst clock follows that activity, as
	 * activity^(-exponent) (compute.burst_activity_exponent; 0: not at all) */
	double burst_activity_exponent;
};

/* The power-capped clock of the model (efficiency parameter
 * power_capped_clock_hz, fitted by calibration), or 0 when the file models
 * no power limit. */
static inline double llmsim_gpu_power_cap_hz(const struct llmsim_gpu *gpu)
{
	double f = gpu->param[LLMSIM_PARAM_POWER_CAPPED_CLOCK_HZ];
	return f > 0 && f < 1e11 ? f : 0;
}

/* Load a GPU by short name, alias (case-insensitive) or path to a YAML
 * file. Names are looked up in <data>/hw/. On error, err names the file,
 * line and column. */
int llmsim_gpu_load(const char *name_or_path, struct llmsim_gpu *gpu,
		    struct llmsim_err *err);

/* Load exactly one file, without applying any profile. */
int llmsim_gpu_load_file(const char *path, struct llmsim_gpu *gpu,
			 struct llmsim_err *err);

/* Take the basis GPU's values where the file names one (calibration_basis:):
 * a shared die's efficiencies the file does not state itself, and, for a
 * GPU without its own profile, the expected errors the transfer experiment
 * measured from that basis (hw/transfer/BASIS.yaml), widened in quadrature
 * by the file's uncalibrated_step_error_fraction for what its relation adds
 * beyond the measured one. llmsim_gpu_load calls it before the profile;
 * without a basis it does nothing. */
int llmsim_gpu_apply_basis(struct llmsim_gpu *gpu, struct llmsim_err *err);

/* Whether the device name a measurement recorded ("NVIDIA H100 80GB HBM3")
 * is this GPU: its name or an alias stands in it as a word, case aside. */
int llmsim_gpu_device_is(const struct llmsim_gpu *gpu, const char *device);

/* Apply a calibration profile file to a loaded GPU. A profile replaces the
 * expected errors a transfer attached; its calibration.device must be this
 * GPU (llmsim_gpu_device_is), else LLMSIM_EINVAL naming both. */
int llmsim_gpu_apply_profile(struct llmsim_gpu *gpu, const char *path,
			     struct llmsim_err *err);

/* List the shipped hardware files: calls fn(path, ctx) for each, sorted. */
int llmsim_gpu_list(void (*fn)(const char *path, void *ctx), void *ctx,
		    struct llmsim_err *err);

/* Expected error for an op class, or NULL when not calibrated. */
const struct llmsim_err_class *llmsim_gpu_err_class(const struct llmsim_gpu *gpu,
						    const char *op_class);
/* The whole-step expected error of engine/phase ("torch", "prefill"), or
 * NULL when the profile states none. */
const struct llmsim_step_err_class *llmsim_gpu_step_err(const struct llmsim_gpu *gpu,
							const char *engine, const char *phase);

/* GPUs of one NVLink domain: nvlink_domain_gpus, or gpus_per_node for a
 * struct filled without it (0). */
static inline int llmsim_gpu_nvlink_domain(const struct llmsim_gpu *g)
{
	return g->nvlink_domain_gpus > 0 ? g->nvlink_domain_gpus : g->gpus_per_node;
}

/* Best dense rate for a data type: tensor if present, else vector (0 if
 * the chip has neither). */
double llmsim_gpu_peak_flops(const struct llmsim_gpu *gpu, enum llmsim_dtype dt);

#endif
