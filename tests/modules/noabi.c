/* noabi.c: a module that does not declare PHANTOM_MODULE(). */
#include <phantom.h>
phantom_result *handler(phantom_call *c, void *u);
phantom_result *
handler(phantom_call *c, void *u)
{
	(void)c;
	(void)u;
	return phantom_text("never");
}
