/*
 * test_enum.c - names of enum values over their tables (base/enum.h): the
 * bounds, a value without a name, a NULL terminator, case, and that the
 * modules' name and parse functions read back what they print.
 */
#include "base/enum.h"
#include "sim/sim.h"
#include "sim/train/train.h"
#include "support.h"

enum fruit { APPLE, PEAR, PLUM, FRUIT_COUNT };
static const char *const fruits[] = {[APPLE] = "apple", [PLUM] = "plum", [FRUIT_COUNT] = NULL};

Test(enum, names_within_bounds)
{
	cr_expect_str_eq(llmsim_enum_name(fruits, FRUIT_COUNT, APPLE), "apple");
	cr_expect_null(llmsim_enum_name(fruits, FRUIT_COUNT, PEAR)); /* no name */
	cr_expect_null(llmsim_enum_name(fruits, FRUIT_COUNT, FRUIT_COUNT));
	cr_expect_null(llmsim_enum_name(fruits, FRUIT_COUNT, -1));
	cr_expect_str_eq(llmsim_enum_label(fruits, FRUIT_COUNT, PEAR), "?");
	cr_expect_str_eq(llmsim_enum_label(fruits, FRUIT_COUNT, 7), "?");
	cr_expect_str_eq(llmsim_enum_label(fruits, FRUIT_COUNT, PLUM), "plum");
}

Test(enum, parse_skips_holes_and_the_terminator)
{
	int n = LLMSIM_ENUM_N(fruits);
	cr_expect_eq(n, FRUIT_COUNT + 1);
	cr_expect_eq(llmsim_enum_parse(fruits, n, "plum"), PLUM); /* past the hole */
	cr_expect_eq(llmsim_enum_parse(fruits, n, "pear"), -1);
	cr_expect_eq(llmsim_enum_parse(fruits, n, NULL), -1);
	cr_expect_eq(llmsim_enum_parse(fruits, n, "PLUM"), -1);
	cr_expect_eq(llmsim_enum_parse_nocase(fruits, n, "PLUM"), PLUM);
	cr_expect_eq(llmsim_enum_parse_nocase(fruits, n, NULL), -1);
}

/* Every name a module prints parses back to its value. */
Test(enum, modules_read_back_their_names)
{
	for (int k = 0; k < LLMSIM_EW_COUNT; k++)
		cr_expect_eq(llmsim_ew_kind_parse(llmsim_ew_kind_name(k)), k);
	for (int k = 0; k < LLMSIM_ATTN_IMPL_COUNT; k++)
		cr_expect_eq(llmsim_attn_impl_parse(llmsim_attn_impl_name(k)), k);
	for (int k = 0; k < LLMSIM_COLL_COUNT; k++)
		cr_expect_eq(llmsim_coll_kind_parse(llmsim_coll_kind_name(k)), k);
	for (int k = 0; k < LLMSIM_RECIPE_COUNT; k++)
		cr_expect_eq(llmsim_enum_parse(llmsim_recipe_names, LLMSIM_RECIPE_COUNT + 1,
					       llmsim_recipe_name(k)), k);
	cr_expect_str_eq(llmsim_recipe_name(LLMSIM_RECIPE_COUNT), "?");
	cr_expect_null(llmsim_ew_kind_name(LLMSIM_EW_COUNT));
}
