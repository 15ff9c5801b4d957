/* fuzz_catalog.c: libFuzzer harness for the check of a resource list
 * handler's answer: the JSON parse of its stdout as the exec runner does it
 * (ph_json_parse) and ph_catalog_entry on every element of "resources", as
 * resources/list calls them.
 *
 * Invariants checked: an entry is either accepted (an object with a string
 * uri and name that serialises) or refused with a reason, never both.
 *
 *   make -C build fuzz && build/tests/fuzz/fuzz_catalog tests/fuzz/corpus/catalog
 */
#include "first.h"
#include "ph_features.h"
#include "ph_json.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_object *o = NULL, *arr;
	if (!ph_json_parse((const char *)data, size, 64, &o))
		return 0;
	arr = ph_jget(o, "resources");
	for (size_t i = 0; json_object_is_type(arr, json_type_array) && i < json_object_array_length(arr); i++) {
		char why[160] = "";
		struct json_object *e = ph_catalog_entry(json_object_array_get_idx(arr, i), why, sizeof why);
		if ((e == NULL) == (why[0] == '\0'))
			abort();
		if (e != NULL) {
			if (ph_jstr(e, "uri") == NULL || ph_jstr(e, "name") == NULL ||
			    json_object_to_json_string(e) == NULL)
				abort();
			json_object_put(e);
		}
	}
	json_object_put(o);
	return 0;
}
