/* ph_resources.c: static resources and resource templates: resources/list,
 * resources/templates/list and resources/read of every uri that is not
 * skill:// (mcp-wire §12.5). Directory-backed templates map their variables
 * to one file below the directory and never anywhere else. */
#include "first.h"
#include "ph_call.h"
#include "ph_features.h"
#include "ph_fs.h"
#include "ph_mime.h"
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
	if (any && ph_jget(caps, "resources") == NULL)
		json_object_object_add(caps, "resources", json_object_new_object());
}

/* ---- lists -------------------------------------------------------------------------- */

static const char *
resource_name(const void *p)
{
	return ((const struct ph_resource *)p)->uri;
}

static struct json_object *
resource_entry(const void *p)
{
	const struct ph_resource *res = p;
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
	return e;
}

/* resources/list: the configured resources the principal may see, then the
 * SKILL.md of each listed skill (ph_skills_resources), paged as one list. */
void
ph_resources_list(struct ph_req *r, struct ph_outcome *o)
{
	struct ph_registry *reg = reg_of(r);
	size_t n = reg ? reg->nresources : 0, nres = 0, nsk, total, off, cnt;
	const struct ph_resource **vis = ph_xcalloc(n + 1, sizeof *vis);
	struct json_object *arr;
	for (size_t i = 0; i < n; i++)
		if (ph_access_allowed(r, PH_KIND_RESOURCE, resource_name(reg->resources[i])))
			vis[nres++] = reg->resources[i];
	nsk = ph_skills_resources(r, 0, 0, NULL);
	total = nres + nsk;
	if (ph_page_begin(r, total, &off, o) != 0) {
		free(vis);
		return;
	}
	cnt = ph_page_count(r, total, off);
	arr = json_object_new_array();
	for (size_t i = off; i < off + cnt && i < nres; i++)
		json_object_array_add(arr, resource_entry(vis[i]));
	if (off + cnt > nres) {
		size_t from = off > nres ? off - nres : 0;
		ph_skills_resources(r, from, off + cnt - nres - from, arr);
	}
	o->result = json_object_new_object();
	json_object_object_add(o->result, "resources", arr);
	ph_page_end(r, o->result, off, cnt, total);
	ph_list_cache_hints(r, PH_LIST_RESOURCES, o->result);
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
		const char *mime, struct json_object **contents, struct ph_outcome *o)
{
	struct ph_invocation inv;
	struct json_object *res;
	char label[300];
	enum read_rc rc;
	snprintf(label, sizeof label, "resource %s", uri);
	memset(&inv, 0, sizeof inv);
	inv.kind = "resource";
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
	json_object_put(res);
	return rc;
}

/* Finds what serves uri and reads it. On READ_OK *contents is the array
 * (caller puts) and *cache the hints that apply. */
static enum read_rc
read_uri(struct ph_req *r, const char *uri, struct json_object **contents, const struct ph_cache **cache,
	 int *list, struct ph_outcome *o)
{
	struct ph_registry *reg = reg_of(r);
	struct ph_resource *res = ph_registry_resource(reg, uri);
	if (res != NULL && ph_access_allowed(r, PH_KIND_RESOURCE, res->uri)) {
		*cache = &res->cache;
		*list = PH_LIST_RESOURCES;
		if (res->has_data) {
			*contents = json_object_new_array();
			json_object_array_add(*contents, content_entry(uri, res->mime ? res->mime : "text/plain",
								       res->data, res->len));
			return READ_OK;
		}
		{
			struct json_object *args = json_object_new_object();
			enum read_rc rc = read_by_handler(r, &res->h, uri, args, res->mime, contents, o);
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
			rc = read_by_handler(r, &t->h, uri, args, t->mime, contents, o);
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
	struct json_object *contents = NULL;
	const struct ph_cache *cache = NULL;
	int list = PH_LIST_RESOURCES;
	enum read_rc rc = read_uri(r, uri, &contents, &cache, &list, o);
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
	if (r->legacy)
		return;
	/* the resource's hints, else its section's, else the server's */
	ttl = cache && cache->ttl_ms >= 0 ? cache->ttl_ms
	      : reg && reg->lists[list].ttl_ms >= 0 ? reg->lists[list].ttl_ms : c->server.ttl_ms;
	scope = cache && cache->scope ? cache->scope
		: reg && reg->lists[list].scope ? reg->lists[list].scope : c->server.scope;
	json_object_object_add(o->result, "ttlMs", json_object_new_int64(ttl));
	json_object_object_add(o->result, "cacheScope", json_object_new_string(scope));
}

int
ph_resources_fetch(struct ph_req *r, const char *uri, struct json_object **contents)
{
	const struct ph_cache *cache;
	int list;
	switch (read_uri(r, uri, contents, &cache, &list, NULL)) {
	case READ_OK:
		return 0;
	case READ_NOT_FOUND:
		return 1;
	default:
		return -1;
	}
}
