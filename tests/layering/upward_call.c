/* upward_call.c - an object that calls a part above the sim layer
 * (llmsim_train_ctx_new, in llmsim_train), declared by hand as a wrong-way
 * call would be: linked with only llmsim_sim's link line it must fail
 * (tests/layering/CMakeLists.txt). */
struct llmsim_model;
struct llmsim_gpu;
struct llmsim_train_ctx;
struct llmsim_err;
int llmsim_train_ctx_new(const struct llmsim_model *m, const struct llmsim_gpu *gpu,
			 struct llmsim_train_ctx **out, struct llmsim_err *err);

int main(void)
{
	struct llmsim_train_ctx *ctx;
	return llmsim_train_ctx_new(0, 0, &ctx, 0);
}
