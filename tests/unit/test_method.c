/* test_method.c: the methods named once (request/ph_method.c) and the
 * core's table indexed by them (core/ph_methods.c) agree: every enum
 * ph_method has a name that finds it again and a row the core serves, so
 * a method added to the enum without its row fails here rather than being
 * silently "not found". */
#include "first.h"
#include "ph_core_int.h"
#include "ph_method.h"
#include "tap.h"
#include <string.h>

int
main(void)
{
	bool named = true, found = true, rows = true, resources = true;
	for (int i = 0; i < PH_METHOD__COUNT; i++) {
		enum ph_method m = (enum ph_method)i;
		const char *name = ph_method_name(m);
		if (name == NULL) {
			named = false;
			printf("# method %d has no name\n", i);
			continue;
		}
		if (ph_method_find(name) != m) {
			found = false;
			printf("# %s does not find itself\n", name);
		}
		if (!ph_method_has_row(m)) {
			rows = false;
			printf("# %s has no row in the core's table\n", name);
		}
		if (ph_method_on_resources(m) != (strncmp(name, "resources/", 10) == 0)) {
			resources = false;
			printf("# %s: on_resources disagrees with its name\n", name);
		}
	}
	ok(named, "every method has a name");
	ok(found, "each name finds its method");
	ok(rows, "every method has a row in the core's table");
	ok(resources, "the resources/ methods are those named so");
	ok(ph_method_find("tools/calls") == PH_METHOD__COUNT && ph_method_find("") == PH_METHOD__COUNT,
	   "an unknown name is no method");
	ok(!ph_method_has_row(PH_METHOD__COUNT) && ph_method_name(PH_METHOD__COUNT) == NULL,
	   "past the last method: no row, no name");
	return tap_done();
}
