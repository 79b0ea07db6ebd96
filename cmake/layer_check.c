/* layer_check.c - the main of each layer's link check (CMakeLists.txt,
 * llmsim_library): a library linked whole with only the layers below it
 * must leave no symbol undefined. */
int main(void)
{
	return 0;
}
