/* ph_resources.c: static resources and resource templates: resources/list,
 * resources/templates/list and resources/read of every uri that is not
 * skill:// (mcp-wire §12.5). Directory-backed templates map their variables
 * to one file below the directory and never anywhere else. */
#include "first.h"
#include "ph_call.h"
#include "ph_features.h"
#include "ph_fs.h"
#include "ph_mime.h"
#include "ph_state.h"
#include "ph_util.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct ph_registry *
reg_of(const struct ph_req *r)
{
	return r->srv->conf->registry;
}

bool
ph_resources_configured(const struct ph_server *s)
{
	const struct ph_registry *reg = s->conf->registry;
	return reg && (reg->nresources > 0 || reg->ntemplates > 0);
}

bool
ph_templates_available(const struct ph_server *s)
{
	return ph_resources_configured(s);
}

void
ph_resources_capabilities(struct ph_req *r, struct json_object *caps)
{
	struct ph_registry *reg = reg_of(r);
	bool any = false;
	for (size_t i = 0; reg && i < reg->nresources && !any; i++)
		any = ph_access_allowed(r, PH_KIND_RESOURCE, reg->resources[i]->uri);
	for (size_t i = 0; reg && i < reg->ntemplates && !any; i++)
		any = ph_access_allowed(r, PH_KIND_RESOURCE, reg->templates[i]->uri_template);
	/* a resource list may show this principal entries by uri: announce it */
	any = any || (reg && reg->ncatalogs > 0);
	if (any && ph_jget(caps, "resources") == NULL)
		json_object_object_add(caps, "resources", json_object_new_object());
}

/* ---- lists -------------------------------------------------------------------------- */

static const char *
resource_name(const void *p)
{
	return ((const struct ph_resource *)p)->uri;
}

/* One resources/list entry; an app's carries its _meta.ui when ui. */
static struct json_object *
resource_entry(const struct ph_resource *res, bool ui)
{
	struct json_object *e = json_object_new_object();
	json_object_object_add(e, "uri", json_object_new_string(res->uri));
	json_object_object_add(e, "name", json_object_new_string(res->name));
	if (res->title)
		json_object_object_add(e, "title", json_object_new_string(res->title));
	if (res->description)
		json_object_object_add(e, "description", json_object_new_string(res->description));
	if (res->mime)
		json_object_object_add(e, "mimeType", json_object_new_string(res->mime));
	if (res->has_data)
		json_object_object_add(e, "size", json_object_new_int64((int64_t)res->len));
	if (res->annotations)
		json_object_object_add(e, "annotations", json_object_get(res->annotations));
	if (res->icons)
		json_object_object_add(e, "icons", json_object_get(res->icons));
	if (res->meta && ui)
		json_object_object_add(e, "_meta", json_object_get(res->meta));
	return e;
}

/* ---- resources/list from handlers (resource_lists:) ------------------------------- */

/* A cursor of the catalogue part: the handler's index, its own cursor
 * (NULL: its first page) and how many entries of that page were served
 * already (a handler that gave more than the limit: the rest is the next
 * page), sealed like a requestState (ph_state.c) and bound to the
 * principal, so a client can neither read nor forge the handler's cursor
 * nor use another principal's. */
#define CATALOG_TARGET "resource_lists"

static char *
catalog_cursor(struct ph_req *r, size_t idx, const char *hcursor, size_t skip)
{
	struct json_object *st = json_object_new_object();
	char *tok, *who;
	json_object_object_add(st, "i", json_object_new_int64((int64_t)idx));
	json_object_object_add(st, "c", hcursor ? json_object_new_string(hcursor) : NULL);
	if (skip > 0)
		json_object_object_add(st, "s", json_object_new_int64((int64_t)skip));
	who = ph_req_binding(r);
	tok = ph_state_seal(r->srv->conf->request_state, who, "resources/list", CATALOG_TARGET,
			    NULL, st, ph_now_us() / 1000000);
	free(who);
	json_object_put(st);
	return tok;
}

/* Opens a catalogue cursor. Returns true with the handler index, its
 * cursor (*hcursor, caller frees; NULL for its first page) and the entries
 * of that page already served (*skip). */
static bool
catalog_open(struct ph_req *r, const char *cursor, size_t *idx, char **hcursor, size_t *skip)
{
	struct json_object *st = NULL, *i, *c, *sk;
	const struct ph_registry *reg = reg_of(r);
	bool ok = false;
	char *who;
	enum ph_state_err e;
	if (reg == NULL || reg->ncatalogs == 0)
		return false;
	who = ph_req_binding(r);
	e = ph_state_open(r->srv->conf->request_state, cursor, who, "resources/list", CATALOG_TARGET,
			  NULL, &st, ph_now_us() / 1000000);
	free(who);
	if (e != PH_STATE_OK)
		return false;
	i = ph_jget(st, "i");
	c = ph_jget(st, "c");
	sk = ph_jget(st, "s");
	if (json_object_is_type(i, json_type_int) && json_object_get_int64(i) >= 0 &&
	    (size_t)json_object_get_int64(i) < reg->ncatalogs &&
	    (c == NULL || json_object_is_type(c, json_type_string)) &&
	    (sk == NULL || (json_object_is_type(sk, json_type_int) && json_object_get_int64(sk) >= 0))) {
		*idx = (size_t)json_object_get_int64(i);
		*hcursor = c ? ph_xstrdup(json_object_get_string(c)) : NULL;
		*skip = sk ? (size_t)json_object_get_int64(sk) : 0;
		ok = true;
	}
	json_object_put(st);
	return ok;
}

static bool
scheme_ok(const char *uri)
{
	const char *p = uri;
	if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
		return false;
	while (*p && *p != ':') {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      *p == '+' || *p == '-' || *p == '.'))
			return false;
		p++;
	}
	return *p == ':' && p[1] != '\0';
}

/* An optional string member: absent, or a string without NUL of 1 to max bytes. */
static bool
opt_str(struct json_object *e, const char *key, size_t max, char *why, size_t wsz)
{
	struct json_object *v;
	if (!json_object_object_get_ex(e, key, &v))
		return true;
	if (!json_object_is_type(v, json_type_string) || json_object_get_string_len(v) == 0 ||
	    (size_t)json_object_get_string_len(v) > max ||
	    strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v)) {
		snprintf(why, wsz, "'%s' must be a non-empty string of at most %zu bytes", key, max);
		return false;
	}
	return true;
}

struct json_object *
ph_catalog_entry(struct json_object *e, char *why, size_t wsz)
{
	static const char *const strs[] = {"title", "description"};
	struct json_object *out, *v;
	const char *uri, *mime;
	if (!json_object_is_type(e, json_type_object)) {
		snprintf(why, wsz, "an entry must be an object");
		return NULL;
	}
	if (!opt_str(e, "uri", PH_URI_MAX, why, wsz) || !opt_str(e, "name", 1024, why, wsz) ||
	    !opt_str(e, "title", 1024, why, wsz) || !opt_str(e, "description", 65536, why, wsz) ||
	    !opt_str(e, "mimeType", 255, why, wsz))
		return NULL;
	uri = ph_jstr(e, "uri");
	if (uri == NULL || ph_jstr(e, "name") == NULL) {
		snprintf(why, wsz, "'uri' and 'name' are required");
		return NULL;
	}
	for (const char *p = uri; *p; p++) {
		if ((unsigned char)*p <= 0x20 || *p == 0x7f) {
			snprintf(why, wsz, "'uri' holds a space or a control character");
			return NULL;
		}
	}
	if (!scheme_ok(uri) || strncmp(uri, "skill://", 8) == 0) {
		snprintf(why, wsz, "'uri' is not a URI (scheme:rest), or is a skill:// URI");
		return NULL;
	}
	mime = ph_jstr(e, "mimeType");
	if (mime && (strchr(mime, '/') == NULL || strpbrk(mime, " \t\r\n") != NULL)) {
		snprintf(why, wsz, "'mimeType' is not a media type (type/subtype)");
		return NULL;
	}
	if (json_object_object_get_ex(e, "size", &v) &&
	    (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)) {
		snprintf(why, wsz, "'size' must be a non-negative integer");
		return NULL;
	}
	if (json_object_object_get_ex(e, "annotations", &v) && !json_object_is_type(v, json_type_object)) {
		snprintf(why, wsz, "'annotations' must be an object");
		return NULL;
	}
	if (json_object_object_get_ex(e, "icons", &v) && !json_object_is_type(v, json_type_array)) {
		snprintf(why, wsz, "'icons' must be an array");
		return NULL;
	}
	/* only the members of a Resource, in a fixed order */
	out = json_object_new_object();
	json_object_object_add(out, "uri", json_object_new_string(uri));
	json_object_object_add(out, "name", json_object_new_string(ph_jstr(e, "name")));
	for (size_t i = 0; i < PH_ARRAY_LEN(strs); i++)
		if (ph_jstr(e, strs[i]))
			json_object_object_add(out, strs[i], json_object_new_string(ph_jstr(e, strs[i])));
	if (mime)
		json_object_object_add(out, "mimeType", json_object_new_string(mime));
	if (json_object_object_get_ex(e, "size", &v))
		json_object_object_add(out, "size", json_object_new_int64(json_object_get_int64(v)));
	if (json_object_object_get_ex(e, "annotations", &v))
		json_object_object_add(out, "annotations", json_object_get(v));
	if (json_object_object_get_ex(e, "icons", &v))
		json_object_object_add(out, "icons", json_object_get(v));
	return out;
}

/* Cache hints of a catalogue page: the list's, narrowed by the handler's
 * own ttlMs (the smaller wins) and cacheScope ("private" wins). */
static void
catalog_hints(struct ph_req *r, struct json_object *res, struct json_object *page)
{
	struct json_object *t = ph_jget(res, "ttlMs");
	const char *scope = ph_jstr(res, "cacheScope");
	ph_list_cache_hints(r, PH_LIST_RESOURCES, page);
	if (r->legacy)
		return;
	if (json_object_is_type(t, json_type_int) && json_object_get_int64(t) >= 0 &&
	    json_object_get_int64(t) < json_object_get_int64(ph_jget(page, "ttlMs")))
		json_object_object_add(page, "ttlMs", json_object_new_int64(json_object_get_int64(t)));
	if (scope && strcmp(scope, "private") == 0)
		json_object_object_add(page, "cacheScope", json_object_new_string("private"));
}

/* Appends the entries of the handler's answer arr from position from on
 * to out, checked (ph_catalog_entry; a bad one is logged and skipped) and
 * filtered by the allow-lists (an entry is visible when its uri or the
 * list's name is allowed), up to limit of them. Returns the position after
 * the last one looked at: below the length of arr when some are left. */
static size_t
catalog_entries(struct ph_req *r, struct json_object *arr, size_t from, size_t limit, const char *label,
		bool name_ok, struct json_object *out)
{
	size_t n = json_object_array_length(arr), kept = 0, i;
	char why[160];
	for (i = from; i < n && kept < limit; i++) {
		struct json_object *e = ph_catalog_entry(json_object_array_get_idx(arr, i), why, sizeof why);
		if (e == NULL) {
			ph_log("warning", "%s: entry %zu skipped: %s", label, i, why);
			continue;
		}
		if (!name_ok && !ph_access_allowed(r, PH_KIND_RESOURCE, ph_jstr(e, "uri"))) {
			json_object_put(e);
			continue;
		}
		json_object_array_add(out, e);
		kept++;
	}
	return i;
}

/* One page of resource list idx from its handler, at its cursor hcursor
 * (NULL: the first), from its entry skip on (catalog_entries). A handler
 * that gave more than the limit has the rest served as the next page,
 * from the same handler cursor; a failing handler or a malformed answer is
 * -32603. */
static void
catalog_page(struct ph_req *r, struct ph_outcome *o, size_t idx, const char *hcursor, size_t skip)
{
	const struct ph_registry *reg = reg_of(r);
	const struct ph_catalog *c = reg->catalogs[idx];
	size_t limit = (size_t)r->srv->conf->server.page_size, upto;
	struct json_object *extra = json_object_new_object(), *args = json_object_new_object();
	struct json_object *res, *arr, *next, *out;
	struct ph_invocation inv;
	char label[200];
	bool name_ok = ph_access_allowed(r, PH_KIND_RESOURCE, c->name);
	snprintf(label, sizeof label, "resource list %s", c->name);
	json_object_object_add(extra, "cursor", hcursor ? json_object_new_string(hcursor) : NULL);
	json_object_object_add(extra, "limit", json_object_new_int64((int64_t)limit));
	memset(&inv, 0, sizeof inv);
	inv.kind = PHANTOM_KIND_RESOURCE_LIST;
	inv.label = label;
	inv.arguments = args;
	inv.extra = extra;
	res = ph_call_handler(r, &c->h, &inv);
	json_object_put(extra);
	json_object_put(args);
	if (res == NULL) {
		ph_outcome_error(o, PH_E_HANDLER, NULL, "resources/list: the resource list '%s' failed", c->name);
		return;
	}
	arr = ph_jget(res, "resources");
	next = ph_jget(res, "nextCursor");
	if (!json_object_is_type(arr, json_type_array) ||
	    (next != NULL && (!json_object_is_type(next, json_type_string) ||
			      json_object_get_string_len(next) > PH_CATALOG_CURSOR_MAX))) {
		ph_log("warning", "%s: the answer needs 'resources' (an array) and at most a string "
		       "'nextCursor' of up to %d bytes", label, PH_CATALOG_CURSOR_MAX);
		json_object_put(res);
		ph_outcome_error(o, PH_E_HANDLER, NULL, "resources/list: the resource list '%s' failed", c->name);
		return;
	}
	out = json_object_new_array();
	upto = catalog_entries(r, arr, skip, limit, label, name_ok, out);
	o->result = json_object_new_object();
	json_object_object_add(o->result, "resources", out);
	if (upto < json_object_array_length(arr) || next != NULL || idx + 1 < reg->ncatalogs) {
		char *tok;
		if (upto < json_object_array_length(arr)) {
			/* the handler is asked for this page again and the rest served */
			if (skip == 0)
				ph_log("notice", "%s: more than the %zu entries asked for; the rest are "
				       "the next page (the handler is called again with the same cursor)",
				       label, limit);
			tok = catalog_cursor(r, idx, hcursor, upto);
		} else if (next != NULL) {
			tok = catalog_cursor(r, idx, json_object_get_string(next), 0);
		} else {
			tok = catalog_cursor(r, idx + 1, NULL, 0);
		}
		json_object_object_add(o->result, "nextCursor", json_object_new_string(tok));
		free(tok);
	}
	catalog_hints(r, res, o->result);
	json_object_put(res);
}

/* The configured part of resources/list as a principal sees it: the
 * resources, then the skills' SKILL.md files; each is keyed by its URI. */
struct configured {
	const struct ph_resource **vis;
	size_t nres;
	const struct ph_skill_files *sk;
};

static void
configured_key(const void *ctx, size_t i, struct ph_buf *b)
{
	const struct configured *c = ctx;
	if (i < c->nres)
		ph_buf_adds(b, c->vis[i]->uri);
	else
		ph_skills_files_key(c->sk, i - c->nres, b);
}

/* resources/list: the configured resources the principal may see, then the
 * SKILL.md of each listed skill (ph_skills_resources), paged as one list;
 * then the pages of each resource list handler in turn. */
void
ph_resources_list(struct ph_req *r, struct ph_outcome *o)
{
	struct ph_registry *reg = reg_of(r);
	size_t n = reg ? reg->nresources : 0, nres = 0, nsk, total, off, cnt, idx, skip;
	size_t ncat = reg ? reg->ncatalogs : 0;
	const struct ph_resource **vis;
	struct ph_skill_files *sk;
	struct json_object *arr;
	const char *cursor = ph_jstr(r->params, "cursor");
	char *hcursor = NULL;
	bool per_principal, ui;
	struct configured part;
	struct ph_page_keys keys = {configured_key, &part};
	if (cursor != NULL && catalog_open(r, cursor, &idx, &hcursor, &skip)) {
		catalog_page(r, o, idx, hcursor, skip);
		free(hcursor);
		return;
	}
	if (ph_skills_files(r, &sk, &nsk, &per_principal, o) != 0)
		return;
	vis = ph_xcalloc(n + 1, sizeof *vis);
	for (size_t i = 0; i < n; i++)
		if (ph_access_allowed(r, PH_KIND_RESOURCE, resource_name(reg->resources[i])))
			vis[nres++] = reg->resources[i];
	total = nres + nsk;
	if (total == 0 && ncat > 0 && cursor == NULL) {
		free(vis);
		ph_skills_files_free(sk);
		catalog_page(r, o, 0, NULL, 0);
		return;
	}
	part = (struct configured){vis, nres, sk};
	if (ph_page_resume(r, total, &keys, &off, o) != 0) {
		free(vis);
		ph_skills_files_free(sk);
		return;
	}
	cnt = ph_page_count(r, total, off);
	arr = json_object_new_array();
	ui = ph_apps_meta_shown(r);
	for (size_t i = off; i < off + cnt && i < nres; i++)
		json_object_array_add(arr, resource_entry(vis[i], ui));
	if (off + cnt > nres) {
		size_t from = off > nres ? off - nres : 0;
		ph_skills_files_page(sk, from, off + cnt - nres - from, arr);
	}
	o->result = json_object_new_object();
	json_object_object_add(o->result, "resources", arr);
	ph_page_mark(r, o->result, off, cnt, total, &keys);
	if (off + cnt >= total && ncat > 0) {
		/* the configured part is done: the handlers' pages come next */
		char *tok = catalog_cursor(r, 0, NULL, 0);
		json_object_object_add(o->result, "nextCursor", json_object_new_string(tok));
		free(tok);
	}
	ph_list_cache_hints(r, PH_LIST_RESOURCES, o->result);
	if (per_principal && !r->legacy) {
		/* a list handler's parameter sets were made for this principal */
		json_object_object_add(o->result, "ttlMs", json_object_new_int64(0));
		json_object_object_add(o->result, "cacheScope", json_object_new_string("private"));
	}
	ph_skills_files_free(sk);
	free(vis);
}

/* Templates are named by their uri_template for access control. */
static const char *
template_name(const void *p)
{
	return ((const struct ph_template *)p)->uri_template;
}

static struct json_object *
template_entry(const void *p)
{
	const struct ph_template *t = p;
	struct json_object *e = json_object_new_object();
	json_object_object_add(e, "uriTemplate", json_object_new_string(t->uri_template));
	json_object_object_add(e, "name", json_object_new_string(t->name));
	if (t->title)
		json_object_object_add(e, "title", json_object_new_string(t->title));
	if (t->description)
		json_object_object_add(e, "description", json_object_new_string(t->description));
	if (t->mime)
		json_object_object_add(e, "mimeType", json_object_new_string(t->mime));
	if (t->annotations)
		json_object_object_add(e, "annotations", json_object_get(t->annotations));
	if (t->icons)
		json_object_object_add(e, "icons", json_object_get(t->icons));
	return e;
}

void
ph_templates_list(struct ph_req *r, struct ph_outcome *o)
{
	static const struct ph_list_spec spec = {"resourceTemplates", PH_KIND_RESOURCE,
						 PH_LIST_TEMPLATES, template_name, template_entry};
	struct ph_registry *reg = reg_of(r);
	ph_list_page(r, o, &spec, reg ? (void *const *)reg->templates : NULL, reg ? reg->ntemplates : 0);
}

/* ---- reading ------------------------------------------------------------------------- */

/* One contents entry: text when the type is textual and the bytes are UTF-8,
 * else base64 blob. */
static struct json_object *
content_entry(const char *uri, const char *mime, const char *data, size_t len)
{
	struct json_object *c = json_object_new_object();
	json_object_object_add(c, "uri", json_object_new_string(uri));
	json_object_object_add(c, "mimeType", json_object_new_string(mime));
	if (ph_mime_textual(mime) && ph_utf8_valid(data, len)) {
		json_object_object_add(c, "text", json_object_new_string_len(data, (int)len));
	} else {
		char *b = ph_base64(data, len);
		json_object_object_add(c, "blob", json_object_new_string(b));
		free(b);
	}
	return c;
}

enum read_rc { READ_OK, READ_NOT_FOUND, READ_FAILED, READ_DONE };

/* Reads the file that the template variables name. */
static enum read_rc
read_dir_file(struct ph_req *r, const struct ph_template *t, char **vals, const char *uri,
	      struct json_object **contents)
{
	struct ph_buf rel;
	struct stat st;
	size_t max = (size_t)r->srv->conf->limits.resource_bytes;
	char *data = NULL;
	size_t len = 0;
	int fd;
	ph_buf_init(&rel);
	for (size_t i = 0; i < ph_uritemplate_nvars(t->ut); i++) {
		if (!ph_uritemplate_safe_segment(vals[i])) {
			ph_buf_free(&rel);
			return READ_NOT_FOUND;
		}
		ph_buf_printf(&rel, "%s%s", i ? "/" : "", vals[i]);
	}
	fd = ph_fs_open_beneath(t->dir, rel.data);
	if (fd < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			ph_log("info", "resource %s: '%s' below %s refused: %s", uri, rel.data, t->dir,
			       ph_fs_strerror(errno));
		ph_buf_free(&rel);
		return READ_NOT_FOUND;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		ph_buf_free(&rel);
		return READ_NOT_FOUND;
	}
	if ((size_t)st.st_size > max) {
		ph_log("warning", "resource %s: %s/%s is larger than limits.resource_bytes", uri, t->dir, rel.data);
		close(fd);
		ph_buf_free(&rel);
		return READ_FAILED;
	}
	{
		struct ph_buf b;
		char chunk[16384];
		ph_buf_init(&b);
		for (;;) {
			ssize_t n = read(fd, chunk, sizeof chunk);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			if (b.len + (size_t)n > max)
				break;
			ph_buf_add(&b, chunk, (size_t)n);
		}
		len = b.len;
		data = ph_buf_steal(&b);
	}
	close(fd);
	*contents = json_object_new_array();
	json_object_array_add(*contents,
			      content_entry(uri, t->mime ? t->mime : ph_mime_guess(rel.data), data, len));
	free(data);
	ph_buf_free(&rel);
	return READ_OK;
}

/* Checks a handler's {contents: [...]}. Returns READ_OK with the array
 * (caller puts), READ_NOT_FOUND for an empty one, READ_FAILED otherwise. */
static enum read_rc
handler_contents(struct json_object *res, const char *label, struct json_object **contents)
{
	struct json_object *c = ph_jget(res, "contents");
	if (c == NULL || !json_object_is_type(c, json_type_array)) {
		ph_log("warning", "%s: the result has no 'contents' array", label);
		return READ_FAILED;
	}
	if (json_object_array_length(c) == 0)
		return READ_NOT_FOUND;
	for (size_t i = 0; i < json_object_array_length(c); i++) {
		struct json_object *e = json_object_array_get_idx(c, i);
		if (ph_jstr(e, "uri") == NULL || (ph_jstr(e, "text") == NULL && ph_jstr(e, "blob") == NULL)) {
			ph_log("warning", "%s: contents[%zu] needs 'uri' and 'text' or 'blob'", label, i);
			return READ_FAILED;
		}
	}
	*contents = json_object_get(c);
	return READ_OK;
}

static enum read_rc
read_by_handler(struct ph_req *r, const struct ph_handler *h, const char *uri, struct json_object *args,
		const char *mime, struct json_object **contents, struct json_object **hints, struct ph_outcome *o)
{
	struct ph_invocation inv;
	struct json_object *res;
	char label[300];
	enum read_rc rc;
	ph_label(label, sizeof label, "resource", uri);
	memset(&inv, 0, sizeof inv);
	inv.kind = PHANTOM_KIND_RESOURCE;
	inv.label = label;
	inv.uri = uri;
	inv.arguments = args;
	inv.default_mime = mime;
	inv.embedded = o == NULL;
	res = ph_call_handler(r, h, &inv);
	if (r->ex->cancelled) {
		json_object_put(res);
		return READ_FAILED;
	}
	if (res == NULL)
		return READ_FAILED;
	if (o && ph_call_input_required(r, res, label, o)) {
		json_object_put(res);
		return READ_DONE;
	}
	rc = handler_contents(res, label, contents);
	if (rc == READ_OK && (ph_jget(res, "ttlMs") != NULL || ph_jget(res, "cacheScope") != NULL)) {
		/* the handler's own cache hints, capped by the caller */
		*hints = json_object_new_object();
		if (ph_jget(res, "ttlMs"))
			json_object_object_add(*hints, "ttlMs", json_object_get(ph_jget(res, "ttlMs")));
		if (ph_jget(res, "cacheScope"))
			json_object_object_add(*hints, "cacheScope", json_object_get(ph_jget(res, "cacheScope")));
	}
	json_object_put(res);
	return rc;
}

/* Finds what serves uri and reads it. On READ_OK *contents is the array
 * (caller puts), *cache the configured hints that apply and *hints those
 * a handler gave (an object; caller puts; NULL when none). */
static enum read_rc
read_uri(struct ph_req *r, const char *uri, struct json_object **contents, const struct ph_cache **cache,
	 int *list, struct json_object **hints, struct ph_outcome *o)
{
	struct ph_registry *reg = reg_of(r);
	struct ph_resource *res = ph_registry_resource(reg, uri);
	if (res == NULL) /* an earlier version of a versioned app: its file as it is now */
		res = ph_registry_app_version(reg, uri);
	if (res != NULL && ph_access_allowed(r, PH_KIND_RESOURCE, res->uri)) {
		*cache = &res->cache;
		*list = PH_LIST_RESOURCES;
		if (res->has_data) {
			struct json_object *item;
			ph_resource_refresh(res, (size_t)r->srv->conf->limits.resource_bytes);
			item = content_entry(uri, res->mime ? res->mime : "text/plain", res->data, res->len);
			if (res->meta && ph_apps_meta_shown(r))
				json_object_object_add(item, "_meta", json_object_get(res->meta));
			*contents = json_object_new_array();
			json_object_array_add(*contents, item);
			return READ_OK;
		}
		{
			struct json_object *args = json_object_new_object();
			enum read_rc rc = read_by_handler(r, &res->h, uri, args, res->mime, contents, hints, o);
			json_object_put(args);
			return rc;
		}
	}
	for (size_t i = 0; reg && i < reg->ntemplates; i++) {
		struct ph_template *t = reg->templates[i];
		char *vals[PH_URITEMPLATE_MAX_VARS];
		enum read_rc rc;
		if (!ph_uritemplate_match(t->ut, uri, vals))
			continue;
		if (!ph_access_allowed(r, PH_KIND_RESOURCE, t->uri_template)) {
			ph_uritemplate_vals_free(t->ut, vals);
			continue;
		}
		*cache = &t->cache;
		*list = PH_LIST_TEMPLATES;
		if (t->dir) {
			rc = read_dir_file(r, t, vals, uri, contents);
		} else {
			struct json_object *args = json_object_new_object();
			for (size_t k = 0; k < ph_uritemplate_nvars(t->ut); k++)
				json_object_object_add(args, ph_uritemplate_var(t->ut, k), json_object_new_string(vals[k]));
			rc = read_by_handler(r, &t->h, uri, args, t->mime, contents, hints, o);
			json_object_put(args);
		}
		ph_uritemplate_vals_free(t->ut, vals);
		return rc;
	}
	return READ_NOT_FOUND;
}

void
ph_resources_read(struct ph_req *r, const char *uri, struct ph_outcome *o)
{
	struct json_object *contents = NULL, *hints = NULL;
	const struct ph_cache *cache = NULL;
	int list = PH_LIST_RESOURCES;
	enum read_rc rc = read_uri(r, uri, &contents, &cache, &list, &hints, o);
	char label[300];
	const struct ph_registry *reg = reg_of(r);
	const struct ph_config *c = r->srv->conf;
	long long ttl;
	const char *scope;
	switch (rc) {
	case READ_DONE:
		return;
	case READ_NOT_FOUND:
		ph_outcome_not_found(r, o, uri);
		return;
	case READ_FAILED:
		ph_outcome_error(o, PH_E_HANDLER, NULL, "Internal error: the resource could not be read");
		return;
	case READ_OK:
		break;
	}
	o->result = json_object_new_object();
	json_object_object_add(o->result, "contents", contents);
	if (r->legacy) {
		json_object_put(hints);
		return;
	}
	/* the resource's hints, else its section's, else the server's */
	ttl = cache && cache->ttl_ms >= 0 ? cache->ttl_ms
	      : reg && reg->lists[list].ttl_ms >= 0 ? reg->lists[list].ttl_ms : c->server.ttl_ms;
	scope = cache && cache->scope ? cache->scope
		: reg && reg->lists[list].scope ? reg->lists[list].scope : c->server.scope;
	json_object_object_add(o->result, "ttlMs", json_object_new_int64(ttl));
	json_object_object_add(o->result, "cacheScope", json_object_new_string(scope));
	if (hints != NULL) { /* the handler's, within those */
		ph_label(label, sizeof label, "resource", uri);
		ph_cache_cap(r, hints, ttl, scope, o->result, label);
		json_object_put(hints);
	}
}

int
ph_resources_fetch(struct ph_req *r, const char *uri, struct json_object **contents)
{
	const struct ph_cache *cache;
	struct json_object *hints = NULL;
	int list;
	enum read_rc rc = read_uri(r, uri, contents, &cache, &list, &hints, NULL);
	json_object_put(hints); /* an embedded read: the caller's result has its own */
	switch (rc) {
	case READ_OK:
		return 0;
	case READ_NOT_FOUND:
		return 1;
	default:
		return -1;
	}
}

/* The file below template t's directory that uri names, when it is a
 * regular file there. Returns its path (caller frees) or NULL. */
static char *
template_file(const struct ph_template *t, char **vals)
{
	struct ph_buf rel;
	struct stat st;
	char *path = NULL;
	int fd;
	ph_buf_init(&rel);
	for (size_t i = 0; i < ph_uritemplate_nvars(t->ut); i++) {
		if (!ph_uritemplate_safe_segment(vals[i])) {
			ph_buf_free(&rel);
			return NULL;
		}
		ph_buf_printf(&rel, "%s%s", i ? "/" : "", vals[i]);
	}
	fd = ph_fs_open_beneath(t->dir, rel.data);
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		path = ph_path_join(t->dir, rel.data);
	if (fd >= 0)
		close(fd);
	ph_buf_free(&rel);
	return path;
}

/* A template this request may read that matches uri: its file or, served
 * by a handler, PH_SUB_OTHER. */
static enum ph_sub_kind
template_watch(struct ph_req *r, const char *uri, char **path)
{
	const struct ph_registry *reg = reg_of(r);
	for (size_t i = 0; reg && i < reg->ntemplates; i++) {
		struct ph_template *t = reg->templates[i];
		char *vals[PH_URITEMPLATE_MAX_VARS];
		enum ph_sub_kind w = PH_SUB_OTHER;
		if (!ph_uritemplate_match(t->ut, uri, vals))
			continue;
		if (!ph_access_allowed(r, PH_KIND_RESOURCE, t->uri_template)) {
			ph_uritemplate_vals_free(t->ut, vals);
			continue;
		}
		if (t->dir)
			w = (*path = template_file(t, vals)) != NULL ? PH_SUB_FILE : PH_SUB_NONE;
		ph_uritemplate_vals_free(t->ut, vals);
		return w;
	}
	return PH_SUB_NONE;
}

struct json_object *
ph_resources_params(struct ph_server *srv, const char *uri)
{
	struct ph_registry *reg = srv->conf->registry;
	struct json_object *p = json_object_new_object();
	if (ph_registry_resource(reg, uri) != NULL)
		return p;
	for (size_t i = 0; reg && i < reg->ntemplates; i++) {
		struct ph_template *t = reg->templates[i];
		char *vals[PH_URITEMPLATE_MAX_VARS];
		if (!ph_uritemplate_match(t->ut, uri, vals))
			continue;
		for (size_t k = 0; k < ph_uritemplate_nvars(t->ut); k++)
			json_object_object_add(p, ph_uritemplate_var(t->ut, k), json_object_new_string(vals[k]));
		ph_uritemplate_vals_free(t->ut, vals);
		break;
	}
	return p;
}

enum ph_sub_kind
ph_resources_watch(struct ph_req *r, const char *uri, char **path)
{
	struct ph_resource *res;
	*path = NULL;
	if (strncmp(uri, "skill://", 8) == 0)
		return ph_skills_watch(r, uri, path);
	res = ph_registry_resource(reg_of(r), uri);
	if (res != NULL && ph_access_allowed(r, PH_KIND_RESOURCE, res->uri)) {
		if (res->file == NULL)
			return PH_SUB_OTHER;
		*path = ph_xstrdup(res->file);
		return PH_SUB_FILE;
	}
	return template_watch(r, uri, path);
}
