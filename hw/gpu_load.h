/*
 * gpu_load.h - internal entry points of the hardware loader, for the fuzz
 * targets, the tests and `llmsim hw show`. Not part of the public contract
 * (that is gpu.h).
 */
#ifndef LLMSIM_GPU_LOAD_H
#define LLMSIM_GPU_LOAD_H

#include <stddef.h>
#include "gpu.h"

/* Parse a hardware description held in memory, exactly as
 * llmsim_gpu_load_file does with a file's bytes; `name` stands in for the
 * path in messages and in gpu->path. No profile is applied. */
int llmsim_gpu_load_buf(const char *buf, size_t len, const char *name,
			struct llmsim_gpu *gpu, struct llmsim_err *err);

/* Apply a calibration profile held in memory (see
 * llmsim_gpu_apply_profile); on error gpu is left unchanged. */
int llmsim_gpu_apply_profile_buf(struct llmsim_gpu *gpu, const char *buf,
				 size_t len, const char *name,
				 struct llmsim_err *err);

/* Call fn(key, value, ctx) for each scalar of the `calibration:` section
 * of a profile file (its provenance: date, device, driver, ...), in file
 * order. A profile without that section calls nothing. */
int llmsim_gpu_profile_calibration(const char *path,
				   void (*fn)(const char *key, const char *value,
					      void *ctx),
				   void *ctx, struct llmsim_err *err);

/* Extract an `efficiency:` mapping into param[LLMSIM_PARAM_COUNT]: keys left
 * out keep their value; unknown keys and values out of range fail. Shared
 * by the hardware-file and profile loaders. */
struct llmsim_ynode;
int llmsim_gpu_extract_params(const struct llmsim_ynode *map, double *param, const char *path,
			      struct llmsim_err *err);

/* Hardware files as a kind of data-folder description (hw/, "GPU"), for
 * the name lookup in gpu_find.c (see base/datafind.h). */
struct llmsim_data_kind;
extern const struct llmsim_data_kind llmsim_gpu_kind;

#endif
