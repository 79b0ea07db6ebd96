/*
 * test_infer_spec.c - speculative decoding's acceptance math at points
 * computed by hand from Leviathan et al. (2023): E = (1 - a^(k+1)) / (1 - a).
 */
#include <criterion/criterion.h>

#include "sim/infer/spec.h"
#include "support.h"

Test(infer_spec, expected_tokens_closed_form)
{
	/* a = 0: only the target's own token */
	expect_close(llmsim_spec_expected_tokens_const(0.0, 4), 1.0, 1e-12);
	/* a = 1: every draft token and the bonus token: k + 1 */
	expect_close(llmsim_spec_expected_tokens_const(1.0, 4), 5.0, 1e-12);
	expect_close(llmsim_spec_expected_tokens_const(1.0, 7), 8.0, 1e-12);
	/* a = 0.8, k = 4: (1 - 0.8^5) / 0.2 = (1 - 0.32768) / 0.2 = 3.3616 */
	expect_close(llmsim_spec_expected_tokens_const(0.8, 4), 3.3616, 1e-12);
	/* a = 0.5, k = 1: 1 + 0.5 */
	expect_close(llmsim_spec_expected_tokens_const(0.5, 1), 1.5, 1e-12);
}

Test(infer_spec, product_form_matches_and_generalizes)
{
	double a[4] = {0.8, 0.8, 0.8, 0.8};
	expect_close(llmsim_spec_expected_tokens(a, 4), 3.3616, 1e-12);
	/* per position 0.9, 0.5: 1 + 0.9 + 0.9 * 0.5 = 2.35 */
	double b[2] = {0.9, 0.5};
	expect_close(llmsim_spec_expected_tokens(b, 2), 2.35, 1e-12);
	/* a zero stops the chain: 1 + 0.7 */
	double c[3] = {0.7, 0.0, 0.9};
	expect_close(llmsim_spec_expected_tokens(c, 3), 1.7, 1e-12);
}
