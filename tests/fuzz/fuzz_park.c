/* fuzz_park.c: libFuzzer harness for what a worker checks in a legacy
 * client's answer before the hub sees it (ph_park_check: the JSON-RPC
 * response's form and the shape of the pushed id). The input is parsed as
 * the core parses a body; an answer accepted must have jsonrpc "2.0",
 * exactly one of an object result and an error with an integer code and a
 * string message, and an id "ph-" + 8 hex + "-" + 12 hex + "-" + digits,
 * with *host at its 8 hex digits.
 *
 *   make -C build fuzz && build/tests/fuzz/fuzz_park tests/fuzz/corpus/park
 */
#include "first.h"
#include "ph_json.h"
#include "ph_park.h"
#include "ph_util.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool
hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_object *m = NULL, *res, *err;
	const char *host = NULL, *id;
	if (!ph_json_parse((const char *)data, size, PH_JSON_DEPTH_DOCUMENT, &m))
		return 0;
	if (json_object_is_type(m, json_type_object) && ph_park_check(m, &host) == NULL) {
		bool r = json_object_object_get_ex(m, "result", &res);
		bool e = json_object_object_get_ex(m, "error", &err);
		id = json_object_get_string(ph_jget(m, "id"));
		if (r == e || (r && !json_object_is_type(res, json_type_object)))
			abort();
		if (e && (!json_object_is_type(ph_jget(err, "code"), json_type_int) ||
			  !json_object_is_type(ph_jget(err, "message"), json_type_string)))
			abort();
		if (!json_object_is_type(ph_jget(m, "id"), json_type_string) || strncmp(id, "ph-", 3) != 0 ||
		    host != id + 3 || strlen(id) < 26 || !hex(host, 8) || host[8] != '-' || !hex(host + 9, 12) ||
		    host[21] != '-' || strspn(host + 22, "0123456789") != strlen(host + 22) || host[22] == '\0')
			abort();
		if (strcmp(json_object_get_string(ph_jget(m, "jsonrpc")), "2.0") != 0)
			abort();
	}
	json_object_put(m);
	return 0;
}
