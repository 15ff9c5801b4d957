/* ph_api.c: the public entry points of libphantom declared in phantom.h. */
#include "first.h"
#include "phantom.h"

const char *
phantom_version(void)
{
	return PACKAGE_VERSION;
}
