/* fuzz_stdio_line.c: libFuzzer harness for the sorting of stdio lines by
 * the concurrent stdio front (core/ph_line.c): ph_line_kind on the input as
 * a line the client sent, ph_line_pushed on it as a line a call wrote.
 *
 * Invariants checked: an id is given exactly for the kinds that name one,
 * and it is JSON text that parses back to a string or an integer; a line
 * that is not UTF-8 or not JSON is never anything but INLINE; a pushed
 * request's id is a string.
 *
 *   make -C build fuzz && build/tests/fuzz/fuzz_stdio_line tests/fuzz/corpus/stdio_line
 */
#include "first.h"
#include "ph_build.h"
#include "ph_json.h"
#include "ph_line.h"
#include "ph_mime.h"
#include "ph_server.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static struct ph_server *srv;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char conf[] = "limits:\n  json_depth: 16\n";
	struct ph_conf_problems p = {0};
	struct ph_config *c = ph_conf_load_buf("fuzz.yaml", ".", conf, sizeof conf - 1, &p);
	(void)argc;
	(void)argv;
	if (c == NULL || (srv = ph_server_new(c, &p)) == NULL)
		abort();
	ph_conf_problems_free(&p);
	return 0;
}

/* Aborts unless text is JSON for a string (or, unless strings_only, an integer). */
static void
check_id(const char *text, bool strings_only)
{
	struct json_object *o = NULL;
	if (!ph_json_parse(text, strlen(text), 4, &o))
		abort();
	if (!json_object_is_type(o, json_type_string) && (strings_only || !json_object_is_type(o, json_type_int)))
		abort();
	json_object_put(o);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *line = (const char *)data;
	char *id = NULL;
	enum ph_line_kind k = ph_line_kind(srv, line, size, &id);
	if ((k == PH_LINE_INLINE) != (id == NULL))
		abort();
	if (k != PH_LINE_INLINE && !ph_utf8_valid(line, size))
		abort();
	if (id != NULL)
		check_id(id, false);
	free(id);
	if ((id = ph_line_pushed(line, size)) != NULL)
		check_id(id, true);
	free(id);
	return 0;
}
