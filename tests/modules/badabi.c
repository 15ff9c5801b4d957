/* badabi.c: a module built for another ABI; the loader must refuse it. */
#include <phantom.h>
const unsigned phantom_module_abi = PHANTOM_ABI + 1000;
phantom_result *handler(phantom_call *c, void *u);
phantom_result *
handler(phantom_call *c, void *u)
{
	(void)c;
	(void)u;
	return phantom_text("never");
}
