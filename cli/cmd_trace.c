/*
 * cmd_trace.c - `llmsim trace capture|show|compare|replay|import|export|
 * to-calib`: trace-driven mode. capture runs an unmodified CUDA program
 * under libllmsim_inject.so; the other verbs need no GPU: they read the
 * trace (SQLite, or the text form, gzip-compressed or not), classify its
 * kernels, recover their shapes, compare them with the GPU model, and price
 * the same program on another GPU. One file per verb (cmd_trace_*.c).
 */
#include <string.h>

#include "commands.h"
#include "trace_common.h"

static const char trace_about[] =
	"Trace-driven mode: capture any CUDA program's kernels, compare them with\n"
	"the GPU model, replay the program on another GPU.\n\n"
	"verbs:\n"
	"  capture   run a program under the injection library into --db (needs a GPU)\n"
	"  show      kernels by class, the heaviest kernels, NVTX ranges\n"
	"  compare   each kernel's op recovered and predicted, against its measured time\n"
	"  replay    the same program predicted on another GPU (--gpu)\n"
	"  import    load a text trace (the injection library's fallback) into --db\n"
	"  export    write a trace run as text\n"
	"  to-calib  add the recovered GEMM/attention kernels to a calibration store";

int cmd_trace(int argc, char **argv, const struct cli_setup *s)
{
	(void)s; /* no model or GPU of its own: its verbs load theirs */
	static const struct {
		const char *name;
		int (*fn)(int argc, char **argv);
	} verbs[] = {
		{"capture", trace_capture}, {"show", trace_show},     {"compare", trace_compare},
		{"replay", trace_replay},   {"import", trace_import}, {"export", trace_export},
		{"to-calib", trace_to_calib},
	};
	if (argc < 2) /* one line, as every usage error */
		return llmsim_args_error("llmsim trace", "a verb is required (%s)",
					 "capture|show|compare|replay|import|export|to-calib");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		llmsim_args_usage(stdout, "llmsim trace",
				  "capture|show|compare|replay|import|export|to-calib [options]",
				  trace_about,
				  NULL, 0);
		return 0;
	}
	for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
		if (!strcmp(argv[1], verbs[i].name))
			return verbs[i].fn(argc - 1, argv + 1);
	return llmsim_args_error("llmsim trace",
				 "unknown verb '%s' (expected capture, show, compare, replay, import,"
				 " export or to-calib)", argv[1]);
}
