/*
 * test_infer_kv.c - the KV-cache allocator: paged blocks waste less than a
 * block per sequence; contiguous reservations waste the gap between the
 * reserved and the used length; admission fails cleanly when full.
 */
#include <criterion/criterion.h>

#include "sim/infer/kv.h"
#include "support.h"

Test(infer_kv, paged_waste_below_one_block_per_sequence)
{
	struct llmsim_kv kv;
	cr_assert_eq(llmsim_kv_init(&kv, LLMSIM_KV_PAGED, 100000, 16, NULL), 0);
	struct llmsim_kv_seq s[10] = {{0}};
	/* sequence i caches 100 + 7 i tokens, then grows by 13 tokens */
	for (int i = 0; i < 10; i++) {
		cr_assert_eq(llmsim_kv_admit(&kv, &s[i], 100 + 7 * i, 2000), 0);
		cr_assert_eq(llmsim_kv_grow(&kv, &s[i], 113 + 7 * i), 0);
		/* whole blocks: ceil(len / 16) * 16 reserved */
		int64_t len = 113 + 7 * i;
		cr_expect_eq(s[i].reserved_tokens, (len + 15) / 16 * 16);
		cr_expect_lt(s[i].reserved_tokens - s[i].used_tokens, 16);
	}
	cr_expect_lt(llmsim_kv_waste_tokens(&kv), 10 * 16);
	/* hand-computed: lengths 113..176 step 7; the waste of each is
	 * (16 - len % 16) % 16: 15,8,1,10,3,12,5,14,7,0 = 75 */
	cr_expect_eq(llmsim_kv_waste_tokens(&kv), 75);
	for (int i = 0; i < 10; i++)
		llmsim_kv_release(&kv, &s[i]);
	cr_expect_eq(kv.allocated_tokens, 0);
	cr_expect_eq(kv.used_tokens, 0);
}

Test(infer_kv, contiguous_waste_is_the_reservation_gap)
{
	struct llmsim_kv kv;
	cr_assert_eq(llmsim_kv_init(&kv, LLMSIM_KV_CONTIGUOUS, 100000, 16, NULL), 0);
	struct llmsim_kv_seq a = {0}, b = {0};
	/* reserve prompt 100 + max output 900 = 1000, 101 used: waste 899 */
	cr_assert_eq(llmsim_kv_admit(&kv, &a, 101, 1000), 0);
	cr_expect_eq(llmsim_kv_waste_tokens(&kv), 899);
	/* a larger gap wastes more: 100 used of 4000 -> 3900 more */
	cr_assert_eq(llmsim_kv_admit(&kv, &b, 100, 4000), 0);
	cr_expect_eq(llmsim_kv_waste_tokens(&kv), 899 + 3900);
	/* growing inside the reservation shrinks the waste, never allocates */
	cr_assert_eq(llmsim_kv_grow(&kv, &a, 600), 0);
	cr_expect_eq(kv.allocated_tokens, 5000);
	cr_expect_eq(llmsim_kv_waste_tokens(&kv), 400 + 3900);
	/* beyond the reservation is refused */
	cr_expect_eq(llmsim_kv_grow(&kv, &a, 1001), LLMSIM_ENOFIT);
}

Test(infer_kv, full_pool_refuses_and_stays_unchanged)
{
	struct llmsim_kv kv;
	cr_assert_eq(llmsim_kv_init(&kv, LLMSIM_KV_PAGED, 64, 16, NULL), 0);
	struct llmsim_kv_seq a = {0}, b = {0};
	cr_assert_eq(llmsim_kv_admit(&kv, &a, 40, 100), 0); /* 3 blocks */
	cr_expect_eq(llmsim_kv_admit(&kv, &b, 20, 100), LLMSIM_ENOFIT); /* needs 2, 1 free */
	cr_expect_eq(kv.allocated_tokens, 48);
	cr_expect_eq(b.reserved_tokens, 0);
	cr_expect_eq(llmsim_kv_grow(&kv, &a, 64), 0);  /* the 4th block */
	cr_expect_eq(llmsim_kv_grow(&kv, &a, 65), LLMSIM_ENOFIT);
	cr_expect_eq(a.used_tokens, 64);
}

Test(infer_kv, bad_sizes)
{
	struct llmsim_kv kv;
	struct llmsim_err e = {0};
	cr_expect_eq(llmsim_kv_init(&kv, LLMSIM_KV_PAGED, 8, 16, &e), LLMSIM_EINVAL);
	cr_expect(strstr(e.msg, "block") != NULL);
	cr_expect_eq(llmsim_kv_init(&kv, LLMSIM_KV_PAGED, 100, 0, NULL), LLMSIM_EINVAL);
	cr_expect_eq(llmsim_kv_alloc_parse("paged"), LLMSIM_KV_PAGED);
	cr_expect_eq(llmsim_kv_alloc_parse("contiguous"), LLMSIM_KV_CONTIGUOUS);
	cr_expect_eq(llmsim_kv_alloc_parse("buddy"), -1);
}
