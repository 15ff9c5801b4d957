/* ph_tools.c: tools/list and tools/call (mcp-wire §12.1-12.3), including
 * the ladder steps that need the tool: the client capabilities it requires
 * (step 9, -32021) and its Mcp-Param-* headers (step 10, -32020). */
#include "first.h"
#include "ph_call.h"
#include "ph_features.h"
#include "ph_util.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Validation problems listed in one isError result. */
#define MAX_ARG_ERRORS 10

static struct ph_registry *
reg_of(const struct ph_req *r)
{
	return r->srv->conf->registry;
}

bool
ph_tools_available(const struct ph_server *s)
{
	return s->conf->registry && s->conf->registry->ntools > 0;
}

void
ph_tools_capabilities(struct ph_req *r, struct json_object *caps)
{
	struct ph_registry *reg = reg_of(r);
	for (size_t i = 0; reg && i < reg->ntools; i++) {
		if (ph_access_allowed(r, PH_KIND_TOOL, reg->tools[i]->name)) {
			ph_jset(caps, "tools", json_object_new_object());
			return;
		}
	}
}

static struct json_object *
tool_json(const struct ph_tool *t)
{
	struct json_object *o = json_object_new_object();
	ph_jset(o, "name", json_object_new_string(t->name));
	if (t->title)
		ph_jset(o, "title", json_object_new_string(t->title));
	if (t->description)
		ph_jset(o, "description", json_object_new_string(t->description));
	ph_jset(o, "inputSchema", json_object_get(t->input_schema));
	if (t->output_schema)
		ph_jset(o, "outputSchema", json_object_get(t->output_schema));
	if (t->annotations)
		ph_jset(o, "annotations", json_object_get(t->annotations));
	if (t->icons)
		ph_jset(o, "icons", json_object_get(t->icons));
	if (t->ui_meta)
		ph_jset(o, "_meta", json_object_get(t->ui_meta));
	else if (t->meta)
		ph_jset(o, "_meta", json_object_get(t->meta));
	return o;
}

/* A client that is not to get the apps' metadata (server.app_meta:
 * declared) sees the tools of an app with their own _meta only. The list
 * entries are built without the request, so they are mended here. */
static void
hide_ui(struct ph_req *r, struct json_object *result)
{
	struct json_object *tools = ph_jget(result, "tools");
	for (size_t i = 0; tools && i < json_object_array_length(tools); i++) {
		struct json_object *e = json_object_array_get_idx(tools, i);
		const struct ph_tool *t = ph_registry_tool(reg_of(r), ph_jstr(e, "name"));
		if (t == NULL || t->ui_meta == NULL)
			continue;
		if (t->meta)
			ph_jset(e, "_meta", json_object_get(t->meta));
		else
			json_object_object_del(e, "_meta");
	}
}

static const char *
tool_name(const void *t)
{
	return ((const struct ph_tool *)t)->name;
}

static struct json_object *
tool_entry(const void *t)
{
	return tool_json(t);
}

void
ph_tools_list(struct ph_req *r, struct ph_outcome *o)
{
	static const struct ph_list_spec spec = {"tools", PH_KIND_TOOL, PH_LIST_TOOLS, tool_name,
						 tool_entry};
	struct ph_registry *reg = reg_of(r);
	ph_list_page(r, o, &spec, (void *const *)reg->tools, reg->ntools);
	if (o->result != NULL && reg->napps > 0 && !ph_apps_meta_shown(r))
		hide_ui(r, o->result);
}

/* ---- step 9: client capabilities ------------------------------------------------ */

static bool
check_capabilities(struct ph_req *r, const struct ph_tool *t, struct ph_outcome *o)
{
	struct json_object *missing = NULL;
	struct ph_buf names;
	if (r->legacy || t->nrequires == 0)
		return true; /* a legacy client declared its capabilities at initialize, out of our sight */
	ph_buf_init(&names);
	for (size_t i = 0; i < t->nrequires; i++) {
		if (ph_jget(r->client_caps, t->requires[i]) != NULL)
			continue;
		if (missing == NULL)
			missing = json_object_new_object();
		ph_jset(missing, t->requires[i], json_object_new_object());
		ph_buf_printf(&names, "%s%s", names.len ? ", " : "", t->requires[i]);
	}
	if (missing == NULL)
		return true;
	{
		struct json_object *d = json_object_new_object();
		ph_jset(d, "requiredCapabilities", missing);
		ph_outcome_error(o, PH_E_CAPABILITY, d, "Missing required client capability: tool %s needs %s",
				 t->name, names.data);
	}
	ph_buf_free(&names);
	return false;
}

/* ---- step 10: Mcp-Param-* headers ----------------------------------------------- */

static struct json_object *
arg_at(struct json_object *args, const struct ph_param_header *h)
{
	struct json_object *cur = args;
	for (size_t i = 0; i < h->depth; i++) {
		cur = ph_jget(cur, h->path[i]);
		if (cur == NULL)
			return NULL;
	}
	return cur;
}

/* True when hv is a number as JSON writes one without an exponent: an
 * optional '-', 0 or digits not starting with 0, then optionally '.' and
 * digits. Hex, '+', leading zeros and exponents are not what a client
 * converting the argument "as decimal" sends (mcp-wire §6.3). */
static bool
decimal_form(const char *hv)
{
	const char *p = hv + (hv[0] == '-');
	size_t d = strspn(p, "0123456789");
	if (d == 0 || (p[0] == '0' && d > 1))
		return false;
	p += d;
	if (*p == '.') {
		d = strspn(p + 1, "0123456789");
		if (d == 0)
			return false;
		p += d + 1;
	}
	return *p == '\0';
}

/* Compares a decoded header value with the argument. Returns true when they
 * agree: strings byte for byte (never one holding U+0000), numbers
 * numerically in decimal form ("42.0" is 42, "042" and "0x2A" are not),
 * booleans as "true"/"false". */
static bool
header_matches(const char *hv, struct json_object *v)
{
	switch (json_object_get_type(v)) {
	case json_type_string: {
		size_t n = (size_t)json_object_get_string_len(v);
		return strlen(hv) == n && memcmp(hv, json_object_get_string(v), n) == 0;
	}
	case json_type_boolean:
		return strcmp(hv, json_object_get_boolean(v) ? "true" : "false") == 0;
	case json_type_int:
	case json_type_double: {
		char *end;
		double d, a = json_object_get_double(v);
		const double lim = 9007199254740991.0; /* 2^53 - 1 */
		if (!decimal_form(hv))
			return false;
		errno = 0;
		d = strtod(hv, &end);
		if (*end != '\0' || errno != 0 || !isfinite(d) || fabs(d) > lim || fabs(a) > lim)
			return false;
		return d == a;
	}
	default:
		return false;
	}
}

static bool
check_param_headers(struct ph_req *r, const struct ph_tool *t, struct json_object *args, struct ph_outcome *o)
{
	if (!r->ex->http || r->legacy)
		return true;
	for (size_t i = 0; i < t->nheaders; i++) {
		const struct ph_param_header *h = &t->headers[i];
		struct json_object *v = arg_at(args, h);
		const char *raw = r->ex->ops->param(r->ex, h->cgi);
		const char *val;
		size_t n;
		char *dec = NULL, *lit;
		int rc;
		bool same;
		if (v == NULL) { /* absent or null: no header may claim a value */
			if (raw != NULL) {
				ph_outcome_error(o, PH_E_HEADER, NULL, "Header mismatch: Mcp-Param-%s header is "
						 "present but argument %s is absent", h->name, h->dotted);
				return false;
			}
			continue;
		}
		if (ph_jstr_nul(v)) { /* no header can carry it (ph_header_decode) */
			ph_outcome_error(o, PH_E_PARAMS, NULL, "Invalid params: argument %s, mirrored in "
					 "Mcp-Param-%s, contains U+0000", h->dotted, h->name);
			return false;
		}
		if (raw == NULL) {
			ph_outcome_error(o, PH_E_HEADER, NULL, "Header mismatch: required Mcp-Param-%s header "
					 "is missing (argument %s)", h->name, h->dotted);
			return false;
		}
		val = ph_trim(raw, &n);
		rc = ph_header_decode(val, n, &dec);
		if (rc < 0) {
			ph_outcome_error(o, PH_E_HEADER, NULL, "Header mismatch: Mcp-Param-%s header has "
					 "invalid base64 encoding", h->name);
			return false;
		}
		lit = rc == 0 ? dec : ph_xstrndup(val, n);
		same = header_matches(lit, v);
		free(lit);
		if (!same) {
			size_t rn;
			const char *shown = ph_trim(raw, &rn);
			ph_outcome_error(o, PH_E_HEADER, NULL, "Header mismatch: Mcp-Param-%s header value "
					 "'%.*s' does not match body argument %s", h->name,
					 (int)(rn > 200 ? 200 : rn), shown, h->dotted);
			return false;
		}
	}
	return true;
}

/* ---- the result ------------------------------------------------------------------ */

static const char generic_failure[] = "Tool execution failed";

/* The members of a handler's answer res that a CallToolResult has, found in
 * one walk: content, structuredContent (has_sc: there, maybe null),
 * isError and _meta; built says res already is the result ph_tool_result
 * builds: only those members, in that order, _meta an object, with isError
 * there or addable at the end. */
struct answer {
	struct json_object *content, *sc, *ie, *meta;
	bool has_sc, has_ie, built;
};

static void
read_answer(struct json_object *res, struct answer *a)
{
	static const char *const order[] = {"content", "structuredContent", "isError", "_meta"};
	struct json_object **slot[] = {&a->content, &a->sc, &a->ie, &a->meta};
	size_t next = 0;
	bool in_order = true;
	memset(a, 0, sizeof *a);
	if (!json_object_is_type(res, json_type_object))
		return;
	json_object_object_foreach(res, k, v) {
		size_t i = 0;
		while (i < PH_ARRAY_LEN(order) && strcmp(k, order[i]) != 0)
			i++;
		if (i < PH_ARRAY_LEN(order))
			*slot[i] = v;
		a->has_sc |= i == 1;
		a->has_ie |= i == 2;
		if (i == PH_ARRAY_LEN(order) || i < next || (i == 3 && !json_object_is_type(v, json_type_object)))
			in_order = false;
		else
			next = i + 1;
	}
	a->built = in_order && (a->has_ie || next <= 2);
}

/* The error result answer a (of tool t; label names it in the log) gets
 * instead of itself: isError not a boolean, bad content, or output its
 * schema refuses; NULL when it is good, with *is_error its isError. */
static struct json_object *
answer_refused(const struct ph_tool *t, const struct answer *a, const char *label, bool *is_error)
{
	struct json_object *content = a->content, *sc = a->sc, *ie = a->ie, *out;
	bool has_sc = a->has_sc;
	char why[200];
	*is_error = false;
	if (ie != NULL) {
		if (!json_object_is_type(ie, json_type_boolean)) {
			ph_log("warning", "%s: isError must be a boolean", label);
			return ph_tool_error_result(generic_failure);
		}
		*is_error = json_object_get_boolean(ie);
	}
	if (content != NULL) {
		if (!json_object_is_type(content, json_type_array)) {
			ph_log("warning", "%s: content must be an array", label);
			return ph_tool_error_result(generic_failure);
		}
		for (size_t i = 0; i < json_object_array_length(content); i++) {
			if (!ph_content_valid(json_object_array_get_idx(content, i), why, sizeof why)) {
				ph_log("warning", "%s: content[%zu]: %s", label, i, why);
				return ph_tool_error_result(generic_failure);
			}
		}
	} else if (!has_sc) {
		ph_log("warning", "%s: the result has neither content nor structuredContent", label);
		return ph_tool_error_result(generic_failure);
	}
	if (!*is_error && t->out != NULL) {
		struct ph_buf e;
		int n;
		char *msg;
		if (!has_sc) {
			ph_log("warning", "%s: invalid tool output: structuredContent is missing", label);
			return ph_tool_error_result("Invalid tool output: structuredContent is required by the "
						    "tool's output schema");
		}
		ph_buf_init(&e);
		n = ph_schema_validate(t->out, sc, &e, MAX_ARG_ERRORS);
		if (n > 0) {
			msg = ph_xasprintf("Invalid tool output: %s", e.data);
			ph_log("warning", "%s: %s", label, msg);
			out = ph_tool_error_result(msg);
			free(msg);
			ph_buf_free(&e);
			return out;
		}
		ph_buf_free(&e);
	}
	return NULL;
}

/* Turns a handler's answer into a CallToolResult. Returns the result
 * (caller owns): res itself, one more reference, when it already is one
 * (isError added when missing; res is the caller's own), else a copy of
 * what it may hold; problems with the answer are logged and give the
 * generic failure. */
struct json_object *
ph_tool_result(const struct ph_tool *t, struct json_object *res, const char *label)
{
	struct answer a;
	struct json_object *content, *sc, *meta, *out;
	bool is_error, has_sc, sc_text;
	read_answer(res, &a);
	if ((out = answer_refused(t, &a, label, &is_error)) != NULL)
		return out;
	content = a.content;
	sc = a.sc;
	meta = a.meta;
	has_sc = a.has_sc;
	sc_text = has_sc && (content == NULL || json_object_array_length(content) == 0);
	/* A fast path (docs/internals.md): the answer is the result, not a
	 * copy. It saves 1,104 to 1,437 of some 34,000 instructions a module
	 * tools/call (tests/bench/ab.sh). It relies on res being the caller's
	 * own, nobody else's (every handler kind's answer is built anew for
	 * this call, in handler/ph_call.c), since isError is added to it and
	 * the caller changes the result, and on read_answer's order being the
	 * one the copy below writes, so that the bytes sent are the same. A
	 * handler whose answer is kept from call to call, or a member written
	 * below but not in read_answer's order, would break it. ph_fast_paths
	 * off (PHANTOM_FAST_PATHS=off): every answer is copied. */
	if (!sc_text && a.built && ph_fast_paths) {
		if (!a.has_ie)
			ph_jset(res, "isError", json_object_new_boolean(false));
		return json_object_get(res);
	}
	out = json_object_new_object();
	if (sc_text) {
		/* a text copy of structuredContent for clients that only read content */
		struct json_object *arr = json_object_new_array(), *b = json_object_new_object();
		ph_jset(b, "type", json_object_new_string("text"));
		ph_jset(b, "text", json_object_new_string(
						 json_object_to_json_string_ext(sc, JSON_C_TO_STRING_PLAIN |
										    JSON_C_TO_STRING_NOSLASHESCAPE)));
		json_object_array_add(arr, b);
		ph_jset(out, "content", arr);
	} else {
		ph_jset(out, "content", json_object_get(content));
	}
	if (has_sc)
		ph_jset(out, "structuredContent", sc ? json_object_get(sc) : NULL);
	ph_jset(out, "isError", json_object_new_boolean(is_error));
	if (meta && json_object_is_type(meta, json_type_object))
		ph_jset(out, "_meta", json_object_get(meta));
	return out;
}

void
ph_tools_call(struct ph_req *r, struct ph_outcome *o)
{
	struct ph_registry *reg = reg_of(r);
	const char *name = ph_jstr(r->params, "name");
	struct json_object *given = ph_jget(r->params, "arguments"), *args = NULL, *res;
	struct ph_tool *t;
	struct ph_invocation inv;
	struct ph_buf errs;
	char label[200];
	if (name == NULL) {
		ph_outcome_error(o, PH_E_PARAMS, NULL, "Invalid params: name must be a string");
		return;
	}
	r->target = name;
	t = ph_registry_tool(reg, name);
	if (t == NULL || !ph_access_allowed(r, PH_KIND_TOOL, name)) {
		ph_outcome_error(o, PH_E_PARAMS, NULL, "Unknown tool: %s", name);
		return;
	}
	if (ph_jget_ex(r->params, "arguments", NULL) && given != NULL &&
	    !json_object_is_type(given, json_type_object)) {
		ph_outcome_error(o, PH_E_PARAMS, NULL, "Invalid params: arguments must be an object");
		return;
	}
	if (!check_capabilities(r, t, o) || ph_tasks_refuse(r, t, o))
		return;
	if (!check_param_headers(r, t, given, o))
		return;
	ph_label(label, sizeof label, "tool", t->name);

	/* defaults first, then validation; a failure is for the model to read.
	 * The defaults go into a copy: the request keeps what the client sent
	 * (without defaults the handler reads the request's own arguments). */
	if (given != NULL && !ph_schema_has_defaults(t->in))
		args = json_object_get(given);
	else if (given == NULL || json_object_deep_copy(given, &args, NULL) != 0)
		args = json_object_new_object();
	ph_schema_defaults(t->in, args);
	ph_buf_init(&errs);
	if (ph_schema_validate(t->in, args, &errs, MAX_ARG_ERRORS) > 0) {
		char *msg = ph_xasprintf("Invalid tool arguments: %s", errs.data);
		o->result = ph_tool_error_result(msg);
		free(msg);
		ph_buf_free(&errs);
		json_object_put(args);
		return;
	}
	ph_buf_free(&errs);

	if (ph_tasks_call(r, t, args, label, o)) {
		json_object_put(args);
		return;
	}
	memset(&inv, 0, sizeof inv);
	inv.kind = PHANTOM_KIND_TOOL;
	inv.label = label;
	inv.name = t->name;
	inv.arguments = args;
	res = ph_call_handler(r, &t->h, &inv);
	json_object_put(args);
	if (r->ex->cancelled) {
		json_object_put(res);
		return; /* nothing more may be sent */
	}
	if (res == NULL) {
		o->result = ph_tool_error_result(generic_failure);
		return;
	}
	if (ph_call_input_required(r, res, label, o)) {
		json_object_put(res);
		return;
	}
	o->result = ph_tool_result(t, res, label);
	/* the handler's cache hints, capped by the server's (an error has none) */
	if (!json_object_get_boolean(ph_jget(o->result, "isError")))
		ph_cache_cap(r, res, r->srv->conf->server.ttl_ms, r->srv->conf->server.scope, o->result, label);
	json_object_put(res);
}
