/*
 * test_sim_operand.c - operand data as an input of the clock model: the
 * hardware file's operand_activity table, the power-limited clock of a
 * busy program (f ~ activity^(-1/3)), a lone kernel's burst clock
 * (activity^(-burst_activity_exponent), never past the boost clock), and
 * the op spec's operand_data key.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hw/gpu_load.h"
#include "sim/sim.h"
#include "support.h"
#include "test_sim_gpus.h"

/* The H200 by hand, with the power figures of hw/h200-sxm-141gb.yaml and
 * its operand-activity table (values typed here, not read). */
static void gpu_h200_power(struct llmsim_gpu *g)
{
	test_gpu_h200(g);
	g->tensor_clock_hz = 1.83e9;
	g->burst_clock_hz = 1.67e9;
	g->param[LLMSIM_PARAM_POWER_CAPPED_CLOCK_HZ] = 1.41e9;
	g->power_window_s = 0.05;
	g->operand_activity[LLMSIM_OPD_TRAINED] = 1;
	g->operand_activity[LLMSIM_OPD_RANDOM] = 1;
	g->operand_activity[LLMSIM_OPD_GRID] = 0.80;
	g->operand_activity[LLMSIM_OPD_COARSE] = 0.62;
	g->operand_activity[LLMSIM_OPD_ZEROS] = 0.56;
	g->burst_activity_exponent = 0.16;
}

static struct llmsim_op big_gemm(enum llmsim_operand_data d)
{
	struct llmsim_op op = {.kind = LLMSIM_OP_GEMM, .dtype = LLMSIM_DT_BF16};
	op.u.gemm.m = op.u.gemm.n = op.u.gemm.k = 8192;
	op.u.gemm.batch = 1;
	op.u.gemm.b_dtype = LLMSIM_DT_BF16;
	op.operand_data = d;
	return op;
}

/* Busy at rho = duty = 1: f = 1.41 GHz x activity^(-1/3):
 * trained 1.41; grid 1.41 / 0.80^(1/3) = 1.41 / 0.92832 = 1.5189 GHz;
 * zeros 1.41 / 0.56^(1/3) = 1.41 / 0.82426 = 1.7106 GHz (below the 1.67
 * GHz x 0.56^-0.16 = 1.8323 GHz burst, so the power limit still binds). */
Test(sim_operand, busy_clock_follows_activity_to_the_minus_third)
{
	struct llmsim_gpu g;
	gpu_h200_power(&g);
	static const struct {
		enum llmsim_operand_data d;
		double f_hz;
	} want[] = {{LLMSIM_OPD_TRAINED, 1.41e9}, {LLMSIM_OPD_GRID, 1.5189e9},
		    {LLMSIM_OPD_ZEROS, 1.7106e9}};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		struct llmsim_op op = big_gemm(want[i].d);
		op.load_duty = 1;
		op.load_rho = 1;
		struct llmsim_pred p = predict_ok(&g, op);
		expect_close(p.sm_clock_hz, want[i].f_hz, 2e-4);
	}
}

/* Lone: trained data at the file's burst clock 1.67 GHz; zeros at
 * 1.67 x 0.56^(-0.16) = 1.67 x 1.09721 = 1.8323 GHz; with an exponent of
 * 1, zeros would reach 1.67 / 0.56 = 2.98 GHz: capped at the 1.98 GHz boost. */
Test(sim_operand, lone_burst_clock_and_its_cap)
{
	struct llmsim_gpu g;
	gpu_h200_power(&g);
	struct llmsim_op op = big_gemm(LLMSIM_OPD_TRAINED);
	expect_close(predict_ok(&g, op).sm_clock_hz, 1.67e9, 1e-12);
	op.operand_data = LLMSIM_OPD_ZEROS;
	struct llmsim_pred z = predict_ok(&g, op);
	expect_close(z.sm_clock_hz, 1.8323e9, 2e-4);
	g.burst_activity_exponent = 1;
	expect_close(predict_ok(&g, op).sm_clock_hz, g.boost_clock_hz, 1e-12);
}

/* A tensor-bound GEMM's time scales as the inverse clock: zeros busy vs
 * trained busy at rho = 1 are 1.7106 / 1.41 = 1.2132x apart in clock, so
 * the trained time is within a few percent of 1.21x the zeros time (the
 * memory and launch parts do not scale). Random data prices as trained. */
Test(sim_operand, data_moves_time_through_the_clock)
{
	struct llmsim_gpu g;
	gpu_h200_power(&g);
	struct llmsim_op t = big_gemm(LLMSIM_OPD_TRAINED), z = big_gemm(LLMSIM_OPD_ZEROS),
			 r = big_gemm(LLMSIM_OPD_RANDOM);
	t.load_duty = z.load_duty = r.load_duty = 1;
	t.load_rho = z.load_rho = r.load_rho = 1;
	double tt = predict_ok(&g, t).time_s, tz = predict_ok(&g, z).time_s,
	       tr = predict_ok(&g, r).time_s;
	cr_expect_gt(tt / tz, 1.15, "trained %g zeros %g", tt, tz);
	cr_expect_lt(tt / tz, 1.2132 + 1e-9, "trained %g zeros %g", tt, tz);
	expect_close(tr, tt, 1e-12);
}

/* Memory-bound work draws no tensor power: its data does not matter
 * under load (rho ~ 0), and element-wise ops carry no operand_data key. */
Test(sim_operand, spec_key_round_trips_and_defaults_to_trained)
{
	struct llmsim_op op;
	struct llmsim_err err = {0};
	char buf[256];
	cr_assert_eq(llmsim_op_parse("gemm m=64 n=64 k=64 operand_data=zeros", &op, &err), 0,
		     "%s", err.msg);
	cr_expect_eq(op.operand_data, LLMSIM_OPD_ZEROS);
	llmsim_op_format(&op, buf, sizeof buf);
	cr_expect(strstr(buf, " operand_data=zeros") != NULL, "%s", buf);
	cr_assert_eq(llmsim_op_parse("gemm m=64 n=64 k=64", &op, &err), 0, "%s", err.msg);
	cr_expect_eq(op.operand_data, LLMSIM_OPD_TRAINED);
	llmsim_op_format(&op, buf, sizeof buf);
	cr_expect(strstr(buf, "operand_data") == NULL, "%s", buf);
	cr_expect_neq(llmsim_op_parse("gemm m=64 n=64 k=64 operand_data=noise", &op, &err), 0);
	cr_expect(strstr(err.msg, "operand_data") != NULL, "%s", err.msg);
	cr_expect_neq(llmsim_op_parse("ew kind=add tokens=1 hidden=8 operand_data=zeros", &op, &err),
		      0);
}

/* The hardware file's table: trained is the reference and must be 1; an
 * unknown data name is refused with its line and column. */
Test(sim_operand, hardware_file_table_is_checked)
{
	struct llmsim_gpu g;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_gpu_load("h200", &g, &err), 0, "%s", err.msg);
	expect_close(g.operand_activity[LLMSIM_OPD_GRID], 0.80, 1e-12);
	expect_close(g.operand_activity[LLMSIM_OPD_TRAINED], 1, 0);
	cr_assert_eq(llmsim_gpu_load("a100", &g, &err), 0, "%s", err.msg);
	expect_close(g.operand_activity[LLMSIM_OPD_ZEROS], 1, 0); /* absent: no effect */
	static const char *bad[][2] = {
		{"operand_activity:\n    trained: 0.9\n", "must be 1"},
		{"operand_activity:\n    trained: 1\n    noise: 0.5\n", "unknown key 'noise'"},
		{"operand_activity: 3\n", "must be a mapping"},
	};
	FILE *f = fopen(LLMSIM_SOURCE_DIR "/hw/h200-sxm-141gb.yaml", "r");
	cr_assert(f);
	static char text[1 << 16];
	size_t n = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	text[n] = 0;
	char *at = strstr(text, "  operand_activity:");
	char *end = strstr(text, "  burst_activity_exponent:");
	cr_assert(at && end && end > at);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		static char edited[1 << 16];
		snprintf(edited, sizeof edited, "%.*s  %s%s", (int)(at - text), text, bad[i][0], end);
		int rc = llmsim_gpu_load_buf(edited, strlen(edited), "x.yaml", &g, &err);
		cr_expect_neq(rc, 0, "%s", bad[i][0]);
		cr_expect(strstr(err.msg, bad[i][1]) != NULL, "%s: %s", bad[i][0], err.msg);
		cr_expect(strstr(err.msg, "x.yaml:") == err.msg, "%s", err.msg);
	}
}
