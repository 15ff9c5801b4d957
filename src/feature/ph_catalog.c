/* ph_catalog.c: a kind's whole catalogue as one text, every page, as a
 * client without restrictions would list it, so that two configurations can
 * be compared: a reload announces list_changed only for the kinds whose
 * catalogue really changed. */
#include "first.h"
#include "ph_features.h"
#include "ph_call.h"
#include "ph_shared.h"
#include "ph_util.h"
#include <stdlib.h>
#include <string.h>

/* Pages read at most per list: a bound against a handler that never ends. */
#define CATALOG_MAX_PAGES 100000

static const char *
quiet_param(struct ph_exchange *ex, const char *name)
{
	(void)ex;
	(void)name;
	return NULL;
}

static long
quiet_read(struct ph_exchange *ex, char *buf, size_t len)
{
	(void)ex;
	(void)buf;
	(void)len;
	return 0;
}

static int
quiet_respond(struct ph_exchange *ex, int status, const char *ctype, const struct ph_header *hdrs,
	      const char *body, size_t len)
{
	(void)ex;
	(void)status;
	(void)ctype;
	(void)hdrs;
	(void)body;
	(void)len;
	return 0;
}

static int
quiet_start(struct ph_exchange *ex, const struct ph_header *hdrs)
{
	(void)ex;
	(void)hdrs;
	return 0;
}

static int
quiet_send(struct ph_exchange *ex, const char *json, size_t len)
{
	(void)ex;
	(void)json;
	(void)len;
	return 0;
}

static int
quiet_ping(struct ph_exchange *ex)
{
	(void)ex;
	return 0;
}

/* A front that answers nothing: the lists are called for their result. */
static const struct ph_front_ops quiet_ops = {
	.param = quiet_param,
	.read = quiet_read,
	.respond = quiet_respond,
	.stream_start = quiet_start,
	.stream_send = quiet_send,
	.stream_ping = quiet_ping,
};

typedef void (*list_fn)(struct ph_req *r, struct ph_outcome *o);

/* Makes r a request of method (borrowed, as who and params) on the quiet
 * front ex, out of any client's request: no log level, no progress. who:
 * its viewer (NULL principal and access: everyone). */
static void
quiet_req(struct ph_req *r, struct ph_exchange *ex, struct ph_server *srv, const char *method,
	  const struct ph_viewer *who, struct json_object *params)
{
	memset(ex, 0, sizeof *ex);
	ex->ops = &quiet_ops;
	ph_req_init(r, srv, ex);
	ph_req_set_method(r, method);
	r->who = *who;
	r->params = params;
}

/* Calls one page of list with cursor (NULL: the first). Returns the result
 * (caller puts) or NULL when the list failed. */
static struct json_object *
one_page(struct ph_server *srv, const struct ph_viewer *who, list_fn list, const char *cursor)
{
	struct ph_exchange ex;
	struct ph_req r;
	struct ph_outcome o = {NULL, PH_OK, NULL, NULL};
	struct json_object *params = json_object_new_object();
	if (cursor)
		json_object_object_add(params, "cursor", json_object_new_string(cursor));
	quiet_req(&r, &ex, srv, "catalog", who, params);
	r.legacy = true; /* no cache hints: they are not part of what changed */
	list(&r, &o);
	free(o.message);
	json_object_put(o.data);
	json_object_put(params);
	return o.result;
}

/* Makes r (on ex, with params) and inv the invocation of hook kind for
 * principal and assigns with args, out of any client's request. */
static void
hook_call(struct ph_req *r, struct ph_exchange *ex, struct ph_invocation *inv, struct ph_server *srv,
	  enum phantom_kind kind, const char *label, const char *principal, struct json_object *assigns,
	  struct json_object *args, struct json_object *params)
{
	struct ph_viewer who = {principal, assigns, NULL, false, false};
	quiet_req(r, ex, srv, ph_call_kind_name(kind), &who, params);
	r->legacy = true;
	memset(inv, 0, sizeof *inv);
	inv->kind = kind;
	inv->label = label;
	inv->arguments = args;
	inv->embedded = true; /* no state, no inputResponses: nobody to ask */
}

struct json_object *
ph_catalog_hook(struct ph_server *srv, const struct ph_handler *h, enum phantom_kind kind, const char *label,
		const char *principal, struct json_object *assigns, struct json_object *args)
{
	struct ph_exchange ex;
	struct ph_req r;
	struct ph_invocation inv;
	struct json_object *params = json_object_new_object(), *res;
	hook_call(&r, &ex, &inv, srv, kind, label, principal, assigns, args, params);
	res = ph_call_handler(&r, h, &inv);
	json_object_put(params);
	return res;
}

struct json_object *
ph_catalog_hook_input(struct ph_server *srv, enum phantom_kind kind, const char *label, const char *principal,
		      struct json_object *assigns, struct json_object *args)
{
	struct ph_exchange ex;
	struct ph_req r;
	struct ph_invocation inv;
	struct json_object *params = json_object_new_object(), *in;
	hook_call(&r, &ex, &inv, srv, kind, label, principal, assigns, args, params);
	in = ph_call_exec_input(&r, &inv);
	json_object_put(params);
	return in;
}

enum ph_sub_kind
ph_catalog_watch(struct ph_server *srv, const char *principal, const struct ph_access *access,
		 const char *uri, char **path)
{
	struct ph_viewer who = {principal, NULL, access, false, false};
	struct ph_exchange ex;
	struct ph_req r;
	struct json_object *params = json_object_new_object();
	enum ph_sub_kind w;
	quiet_req(&r, &ex, srv, "subscriptions/listen", &who, params);
	w = ph_resources_watch(&r, uri, path);
	json_object_put(params);
	return w;
}

/* Appends every page's key array of list to b. */
static void
add_pages(struct ph_server *srv, const struct ph_viewer *who, list_fn list, const char *key, struct ph_buf *b)
{
	char *cursor = NULL;
	for (int page = 0; page < CATALOG_MAX_PAGES; page++) {
		struct json_object *res = one_page(srv, who, list, cursor);
		const char *next;
		size_t len;
		free(cursor);
		cursor = NULL;
		if (res == NULL) {
			ph_buf_adds(b, "(failed)");
			return;
		}
		ph_buf_adds(b, ph_json_text(ph_jget(res, key), &len));
		next = ph_jstr(res, "nextCursor");
		if (next)
			cursor = ph_xstrdup(next);
		json_object_put(res);
		if (cursor == NULL)
			return;
	}
	free(cursor);
}

/* The catalogue of kind as who sees it. Caller frees. */
static char *
text_for(struct ph_server *srv, const struct ph_viewer *who, enum ph_kind kind)
{
	struct ph_buf b;
	ph_buf_init(&b);
	ph_buf_addc(&b, '[');
	switch (kind) {
	case PH_KIND_TOOL:
		if (ph_tools_available(srv))
			add_pages(srv, who, ph_tools_list, "tools", &b);
		break;
	case PH_KIND_PROMPT:
		if (ph_prompts_available(srv))
			add_pages(srv, who, ph_prompts_list, "prompts", &b);
		break;
	case PH_KIND_RESOURCE:
		/* skills are resources too: their files are read as resources */
		add_pages(srv, who, ph_resources_list, "resources", &b);
		add_pages(srv, who, ph_templates_list, "resourceTemplates", &b);
		if (ph_skills_configured(srv))
			add_pages(srv, who, ph_skills_list, "skills", &b);
		break;
	case PH_KIND_SKILL:
		if (ph_skills_configured(srv))
			add_pages(srv, who, ph_skills_list, "skills", &b);
		break;
	}
	ph_buf_addc(&b, ']');
	return ph_buf_steal(&b);
}

char *
ph_catalog_text(struct ph_server *srv, enum ph_kind kind)
{
	static const struct ph_viewer everyone = {NULL, NULL, NULL, false, false};
	return text_for(srv, &everyone, kind);
}

bool
ph_catalog_changed_for(struct ph_server *old, const struct ph_access *old_access, struct ph_server *now,
		       const struct ph_access *now_access, const char *principal, enum ph_kind kind)
{
	struct ph_viewer a = {principal, NULL, old_access, false, false};
	struct ph_viewer b = {principal, NULL, now_access, false, false};
	char *ta = text_for(old, &a, kind), *tb = text_for(now, &b, kind);
	bool changed = strcmp(ta, tb) != 0;
	free(ta);
	free(tb);
	return changed;
}

bool
ph_catalog_changed_seen(struct ph_server *old, struct ph_server *now, ph_access_of_fn access_of,
			const char *principal, const struct ph_access *own, struct json_object *assigns,
			enum ph_kind kind)
{
	bool was_denied = false, is_denied = false, changed;
	struct ph_viewer a = {principal, assigns, own, false, false}, b = a;
	char *ta, *tb;
	if (own == NULL && principal != NULL) {
		a.access = access_of(old, principal, &was_denied);
		b.access = access_of(now, principal, &is_denied);
		if (was_denied || is_denied)
			return was_denied != is_denied;
	}
	ta = text_for(old, &a, kind);
	tb = text_for(now, &b, kind);
	changed = strcmp(ta, tb) != 0;
	free(ta);
	free(tb);
	return changed;
}

bool
ph_catalog_changed(struct ph_server *old, struct ph_server *now, enum ph_kind kind)
{
	char *a = ph_catalog_text(old, kind), *b = ph_catalog_text(now, kind);
	bool changed = strcmp(a, b) != 0;
	free(a);
	free(b);
	return changed;
}

void
ph_catalog_announce(struct ph_server *old, struct ph_server *now)
{
	static const enum ph_kind listed[] = {PH_KIND_TOOL, PH_KIND_PROMPT, PH_KIND_RESOURCE};
	if (old == NULL || now == NULL)
		return; /* a process that had no configuration has no streams */
	for (size_t i = 0; i < PH_ARRAY_LEN(listed); i++)
		if (ph_catalog_changed(old, now, listed[i]))
			ph_shared_changed(listed[i]);
}
