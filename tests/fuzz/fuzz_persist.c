/* fuzz_persist.c: libFuzzer harness for the answer line of a persistent
 * exec handler, through its production entry point ph_persist_answer, as
 * ph_persist_call gives it what a program wrote (call id 7). Whatever the
 * input, it must not crash or leak, and an accepted answer is an object
 * from which the id has been removed. */
#include "first.h"
#include "ph_log.h"
#include "ph_persist.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = malloc(size + 1);
	struct json_object *o;
	memcpy(line, data, size);
	line[size] = '\0';
	o = ph_persist_answer("tool fuzz", line, size, 7, 64);
	if (o != NULL && (!json_object_is_type(o, json_type_object) || json_object_object_get_ex(o, "id", NULL)))
		abort();
	json_object_put(o);
	free(line);
	return 0;
}
