/* ph_line.c: sorting stdio lines for the concurrent stdio front
 * (ph_line.h). Only requests that may run a handler leave the main
 * process: everything that reads or changes what the process holds for the
 * client (the negotiated version, the log level, subscriptions and listens)
 * stays in it, so a call started later sees it. */
#include "first.h"
#include "ph_line.h"
#include "ph_json.h"
#include "ph_method.h"
#include "ph_mime.h"
#include "ph_registry.h"
#include "ph_util.h"
#include <string.h>

static const char cancelled[] = "notifications/cancelled";

/* m: the method (a string, U+0000 in it never matches). */
static bool
is_call(const struct ph_server *srv, struct json_object *m)
{
	const char *s = json_object_get_string(m);
	if (strlen(s) != (size_t)json_object_get_string_len(m))
		return false;
	if (ph_method_may_wait(ph_method_find(s)))
		return true;
	/* resources/list pages through handlers when resource_lists has any */
	return strcmp(s, "resources/list") == 0 && srv->conf->registry != NULL &&
	       srv->conf->registry->ncatalogs > 0;
}

/* An id the core accepts (a string or an integer), or NULL. */
static struct json_object *
usable_id(struct json_object *id)
{
	if (json_object_is_type(id, json_type_string) || json_object_is_type(id, json_type_int))
		return id;
	return NULL;
}

static char *
id_text(struct json_object *id)
{
	return ph_xstrdup(json_object_to_json_string_ext(id, JSON_C_TO_STRING_PLAIN));
}

enum ph_line_kind
ph_line_kind(const struct ph_server *srv, const char *line, size_t len, char **id)
{
	struct json_object *o, *m, *rid;
	enum ph_line_kind k = PH_LINE_INLINE;
	*id = NULL;
	if (!ph_utf8_valid(line, len) || ph_json_key_nul(line, len) ||
	    !ph_json_parse(line, len, (int)srv->conf->limits.json_depth, &o) || o == NULL)
		return PH_LINE_INLINE;
	if (!json_object_is_type(o, json_type_object))
		goto out;
	m = ph_jget(o, "method");
	rid = usable_id(ph_jget(o, "id"));
	if (m == NULL && rid != NULL && (ph_jget(o, "result") != NULL || ph_jget(o, "error") != NULL)) {
		k = PH_LINE_ANSWER;
		*id = id_text(rid);
	} else if (!json_object_is_type(m, json_type_string)) {
		goto out;
	} else if (ph_jget(o, "id") == NULL && json_object_get_string_len(m) == sizeof cancelled - 1 &&
		   memcmp(json_object_get_string(m), cancelled, sizeof cancelled - 1) == 0) {
		struct json_object *named = usable_id(ph_jget(ph_jget(o, "params"), "requestId"));
		if (named != NULL) {
			k = PH_LINE_CANCEL;
			*id = id_text(named);
		}
	} else if (rid != NULL && is_call(srv, m)) {
		k = PH_LINE_CALL;
		*id = id_text(rid);
	}
out:
	json_object_put(o);
	return k;
}

char *
ph_line_pushed(const char *line, size_t len)
{
	static const char head[] = "{\"jsonrpc\":\"2.0\",\"id\":\"ph-";
	struct json_object *o, *id;
	char *text = NULL;
	/* the core writes the id first, and its ids start so: most lines are
	 * told apart unparsed */
	if (len < sizeof head || memcmp(line, head, sizeof head - 1) != 0)
		return NULL;
	if (!ph_json_parse(line, len, PH_JSON_DEPTH_DOCUMENT, &o) || o == NULL)
		return NULL;
	id = ph_jget(o, "id");
	if (json_object_is_type(o, json_type_object) && json_object_is_type(id, json_type_string) &&
	    json_object_is_type(ph_jget(o, "method"), json_type_string))
		text = id_text(id);
	json_object_put(o);
	return text;
}
