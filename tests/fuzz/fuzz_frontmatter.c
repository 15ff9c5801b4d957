/* fuzz_frontmatter.c: libFuzzer harness for the SKILL.md frontmatter reader
 * (ph_skill_frontmatter: split, YAML 1.2 typing to JSON) and the Agent
 * Skills checks (ph_skill_fm_check), as the loader and every refresh of a
 * changed SKILL.md call them.
 *
 * Invariants checked: either a JSON object or an error "LINE: message",
 * never both or neither; the object serialises.
 *
 * Build (from the source tree, after ./configure in build/):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -DHAVE_CONFIG_H -Ibuild -Isrc \
 *     $(pkg-config --cflags json-c yaml-0.1 libsodium) tests/fuzz/fuzz_frontmatter.c \
 *     src/ph_skill_fm.c src/ph_skill_uri.c src/ph_util.c \
 *     $(pkg-config --libs json-c yaml-0.1 libsodium) -o fuzz_frontmatter
 *   ./fuzz_frontmatter tests/fuzz/corpus/frontmatter
 */
#include "first.h"
#include "ph_skills.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *err = NULL;
	struct json_object *fm = ph_skill_frontmatter((const char *)data, size, 32, &err);
	if ((fm == NULL) == (err == NULL))
		abort();
	if (fm != NULL) {
		if (!json_object_is_type(fm, json_type_object))
			abort();
		(void)ph_skill_fm_check(fm);
		if (json_object_to_json_string(fm) == NULL)
			abort();
		json_object_put(fm);
	} else {
		if (err[0] < '0' || err[0] > '9' || strchr(err, ':') == NULL)
			abort();
		free(err);
	}
	return 0;
}
