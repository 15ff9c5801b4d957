/* fuzz_yaml.c: libFuzzer harness for ph_yaml_parse, the YAML loader used for
 * the configuration, skills manifests and SKILL.md frontmatter, and for the
 * tree helpers and ph_yaml_to_json. Input: a YAML document. Aborts when an
 * error is not "LINE: message" or a success carries an error. */
#include "first.h"
#include "ph_yaml.h"
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Walks the tree the way the loaders do, checking what ph_yaml.h promises. */
static void
walk(const struct ph_ynode *n)
{
	bool b;
	if (n->line < 1)
		abort();
	(void)ph_yaml_is_null(n);
	if (ph_yaml_bool(n, &b) == 0 && n->kind != PH_Y_SCALAR)
		abort();
	if (n->kind == PH_Y_SCALAR && (n->str == NULL || n->str[n->len] != '\0'))
		abort();
	for (size_t i = 0; i < n->n; i++) {
		if (n->kind == PH_Y_MAP && ph_yaml_get(n, n->keys[i]) == NULL)
			abort();
		walk(n->vals[i]);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *err = NULL;
	struct ph_ynode *n = ph_yaml_parse((const char *)data, size, 32, &err);
	if (n != NULL) {
		struct json_object *j;
		if (err != NULL)
			abort();
		walk(n);
		j = ph_yaml_to_json(n);
		(void)json_object_to_json_string(j);
		json_object_put(j);
		ph_yaml_free(n);
	} else {
		size_t digits;
		if (err == NULL)
			abort();
		digits = strspn(err, "0123456789");
		if (digits == 0 || strncmp(err + digits, ": ", 2) != 0)
			abort();
		free(err);
	}
	return 0;
}
