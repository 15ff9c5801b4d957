/* ph_app_conf.c: phantom.yaml's apps section (MCP Apps, the
 * io.modelcontextprotocol/ui extension). Each app is one self-contained
 * HTML file that becomes a ui:// resource with the extension's MIME type
 * and _meta.ui; a tool naming it gets _meta.ui.resourceUri, its visibility
 * and the older flat ui/resourceUri key. Everything is checked here, at
 * load: nothing about an app is decided per request except whether a
 * client gets the metadata (server.app_meta, ph_apps.c). */
#include "first.h"
#include "ph_conf.h"
#include "ph_json.h"
#include "ph_log.h"
#include "ph_registry.h"
#include "ph_sections.h"
#include "ph_util.h"
#include "ph_yread.h"
#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define APP_MIME "text/html;profile=mcp-app"
#define APP_NAME_MAX 64
#define LDH "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-"

static const char *const app_keys[] = {"file", "uri", "csp", "permissions", "domain", "prefers_border",
				       "versioned", NULL};
/* csp keys in enum ph_csp order, and the names _meta.ui.csp gives them */
static const char *const csp_keys[] = {"connect", "resource", "frame", "base_uri", NULL};
static const char *const csp_json[] = {"connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"};
static const char *const permission_names[] = {"camera", "microphone", "geolocation", "clipboardWrite"};

/* True for an app name: 1-64 of A-Z a-z 0-9 _ - . (it ends the default uri). */
static bool
app_name_ok(const char *s)
{
	size_t n = strlen(s);
	return n >= 1 && n <= APP_NAME_MAX &&
	       strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.") == n;
}

/* Why the host h (up to end) is not one a CSP source names: LDH labels
 * (letters, digits, '-', 1-63 each, not starting or ending with '-')
 * joined by dots, at most 253 bytes; NULL when it is one. */
static const char *
host_problem(const char *h, const char *end)
{
	const char *label = h;
	if (h == end)
		return "an origin names a host";
	if (end - h > 253)
		return "a host name is at most 253 characters";
	for (const char *p = h; p <= end; p++) {
		if (p < end && *p != '.') {
			if (*p == '*')
				return "a wildcard is only allowed as the first label (*.example.com)";
			if (strchr(LDH, *p) == NULL)
				return "a host is labels of letters, digits and '-' joined by dots";
			continue;
		}
		if (p == label)
			return "a host has no empty label (a..b, a leading or trailing dot)";
		if (p - label > 63)
			return "a label of a host is at most 63 characters";
		if (*label == '-' || p[-1] == '-')
			return "a label of a host does not start or end with '-'";
		label = p + 1;
	}
	return NULL;
}

/* Why o is not an origin as the extension's CSP lists take them
 * (scheme://host[:port], scheme http, https, ws or wss, host optionally
 * starting with "*.", port 1-65535), or NULL when it is one. The host
 * ends up in a Content-Security-Policy header the host builds, where a
 * path, a quote, a space or a ';' would change the policy's meaning, and
 * where a source holds no user name and no host but an ASCII one. */
static const char *
origin_problem(const char *o)
{
	static const char *const schemes[] = {"https://", "http://", "wss://", "ws://"};
	const char *h = NULL, *colon, *why;
	for (size_t i = 0; i < PH_ARRAY_LEN(schemes) && h == NULL; i++)
		if (strncasecmp(o, schemes[i], strlen(schemes[i])) == 0)
			h = o + strlen(schemes[i]);
	if (h == NULL)
		return "an origin starts with https://, http://, wss:// or ws://";
	for (const char *p = h; *p; p++) {
		if (*p == '/' || *p == '?' || *p == '#')
			return "an origin has no path, query or fragment (scheme://host[:port])";
		if (*p == '\'' || *p == '"')
			return "an origin holds no quote";
		if ((unsigned char)*p < ' ' || *p == 0x7f)
			return "an origin holds no control character";
		if (*p == ' ' || *p == ';' || *p == ',')
			return "an origin holds no space, ';' or ',' (one origin per list item)";
		if ((unsigned char)*p >= 0x80)
			return "an origin is ASCII: write a host name in its punycode A-label form (xn--...)";
		if (*p == '@')
			return "an origin has no user name or password (user@, user:password@)";
	}
	if (strncmp(h, "*.", 2) == 0)
		h += 2;
	colon = strchr(h, ':');
	if ((why = host_problem(h, colon ? colon : h + strlen(h))) != NULL)
		return why;
	if (colon != NULL) {
		long long port;
		const char *err;
		if (strspn(colon + 1, "0123456789") != strlen(colon + 1) ||
		    ph_strtonum(colon + 1, 1, 65535, &port, &err) != 0)
			return "a port is a number from 1 to 65535, digits only";
	}
	return NULL;
}

/* csp: {connect, resource, frame, base_uri}, each a list of origins. */
static void
parse_csp(struct ph_ysink *s, const struct ph_ynode *v, struct ph_app *a)
{
	if (v->kind != PH_Y_MAP) {
		ph_yread_problem(s, v->line, "'csp' is a mapping: {connect, resource, frame, base_uri}");
		return;
	}
	if (!ph_yread_keys(s, v, "csp", csp_keys))
		return;
	for (int k = 0; k < PH_CSP__N; k++) {
		const struct ph_ynode *l = ph_yaml_get(v, csp_keys[k]);
		char name[32];
		if (l == NULL || ph_yaml_is_null(l))
			continue;
		snprintf(name, sizeof name, "csp.%s", csp_keys[k]);
		a->csp[k] = ph_yread_strlist(s, l, name, 0, 256, 2048, NULL);
		for (size_t i = 0; a->csp[k] && a->csp[k][i]; i++) {
			const char *why = origin_problem(a->csp[k][i]);
			if (why != NULL)
				ph_yread_problem(s, l->kind == PH_Y_SEQ ? l->vals[i]->line : l->line,
						 "%s: '%s' is not an origin: %s", name, a->csp[k][i], why);
		}
	}
}

static void
parse_permissions(struct ph_ysink *s, const struct ph_ynode *v, struct ph_app *a)
{
	a->permissions = ph_yread_strlist(s, v, "permissions", 0, PH_ARRAY_LEN(permission_names), 64, NULL);
	for (size_t i = 0; a->permissions && a->permissions[i]; i++) {
		bool known = false;
		for (size_t k = 0; k < PH_ARRAY_LEN(permission_names); k++)
			known |= strcmp(a->permissions[i], permission_names[k]) == 0;
		if (!known)
			ph_yread_problem(s, v->line, "permissions: '%s' is not one of camera, microphone, "
					 "geolocation, clipboardWrite", a->permissions[i]);
	}
}

/* One app's mapping into a (its name already set). */
static void
parse_app(struct ph_ysink *s, const struct ph_ynode *m, const char *dir, struct ph_app *a)
{
	const struct ph_ynode *v;
	bool b;
	if (!ph_yread_keys(s, m, NULL, app_keys))
		return;
	if ((v = ph_yaml_get(m, "file")) == NULL || ph_yaml_is_null(v)) {
		ph_yread_problem(s, m->line, "'file' is required (the app's HTML file)");
	} else {
		const char *f = ph_yread_str(s, v, "file", 1, 4096);
		a->file = f ? ph_path_join(dir, f) : NULL;
		a->file_line = v->line;
	}
	if ((v = ph_yaml_get(m, "uri")) != NULL && !ph_yaml_is_null(v)) {
		a->uri = ph_yread_strdup(s, v, "uri", 1, PH_URI_MAX);
		a->uri_line = v->line;
		if (a->uri && (strncmp(a->uri, "ui://", 5) != 0 || a->uri[5] == '\0' || !ph_uri_ok(a->uri)))
			ph_yread_problem(s, v->line, "uri: '%s' is not a ui:// URI (ui://host/path, no spaces)", a->uri);
	}
	if ((v = ph_yaml_get(m, "csp")) != NULL && !ph_yaml_is_null(v))
		parse_csp(s, v, a);
	if ((v = ph_yaml_get(m, "permissions")) != NULL && !ph_yaml_is_null(v))
		parse_permissions(s, v, a);
	if ((v = ph_yaml_get(m, "domain")) != NULL && !ph_yaml_is_null(v)) {
		a->domain = ph_yread_strdup(s, v, "domain", 1, 253);
		if (a->domain && strpbrk(a->domain, " \t\r\n;'\"/") != NULL)
			ph_yread_problem(s, v->line, "domain: '%s' is a host name (no space, quote, ';' or '/')",
					 a->domain);
	}
	a->prefers_border = -1;
	if ((v = ph_yaml_get(m, "prefers_border")) != NULL && ph_yread_bool(s, v, "prefers_border", &b) == 0)
		a->prefers_border = b;
	if ((v = ph_yaml_get(m, "versioned")) != NULL && ph_yread_bool(s, v, "versioned", &b) == 0)
		a->versioned = b;
}

int
ph_conf_apps(struct ph_conf_ctx *x, const char *key, const struct ph_ynode *n)
{
	struct ph_registry *reg = ph_conf_registry(x);
	char where[APP_NAME_MAX + 16];
	bool bad = false;
	if (ph_yaml_is_null(n))
		return 0;
	if (n->kind != PH_Y_MAP) {
		struct ph_ysink s = {x->probs, x->file, key, false};
		ph_yread_problem(&s, n->line, "expected a mapping of app names: {<name>: {file, uri, csp, ...}}");
		return -1;
	}
	for (size_t i = 0; i < n->n; i++) {
		struct ph_ysink s = {x->probs, x->file, where, false};
		struct ph_app *a;
		snprintf(where, sizeof where, "%s.%.*s", key, APP_NAME_MAX, n->keys[i]);
		if (!app_name_ok(n->keys[i])) {
			ph_yread_problem(&s, n->key_lines[i], "an app name is 1-64 of A-Z a-z 0-9 _ - .");
			bad = true;
			continue;
		}
		if (n->vals[i]->kind != PH_Y_MAP) {
			ph_yread_problem(&s, n->vals[i]->line, "an app is a mapping: {file, uri, csp, ...}");
			bad = true;
			continue;
		}
		a = ph_xcalloc(1, sizeof *a);
		a->name = ph_xstrdup(n->keys[i]);
		a->line = n->key_lines[i];
		parse_app(&s, n->vals[i], x->c->dir, a);
		if (s.bad)
			ph_app_free(a);
		else if (ph_registry_add_app(reg, a) == NULL)
			ph_yread_problem(&s, n->key_lines[i], "%s", reg->err);
		bad |= s.bad;
	}
	return bad ? -1 : 0;
}

/* ---- the HTML file ------------------------------------------------------------------ */

/* True when ref names something with a scheme (https:, data:, ...): all
 * else (a path, //host/path) resolves against the view's document, which
 * a host loads from srcdoc or a blob, where it never loads. */
static bool
absolute_ref(const char *ref, size_t n)
{
	size_t i = 0;
	if (n == 0 || !((ref[0] >= 'a' && ref[0] <= 'z') || (ref[0] >= 'A' && ref[0] <= 'Z')))
		return false;
	while (i < n && (strchr("+-.", ref[i]) != NULL || (ref[i] >= 'a' && ref[i] <= 'z') ||
			 (ref[i] >= 'A' && ref[i] <= 'Z') || (ref[i] >= '0' && ref[i] <= '9')))
		i++;
	return i < n && ref[i] == ':';
}

/* The value of attribute attr inside the tag text [p, end) (after the tag
 * name): *val and *vlen set, true when present. */
static bool
tag_attr(const char *p, const char *end, const char *attr, const char **val, size_t *vlen)
{
	size_t an = strlen(attr);
	while (p < end) {
		const char *name;
		size_t nl;
		while (p < end && (strchr(" \t\r\n/", *p) != NULL))
			p++;
		name = p;
		while (p < end && strchr(" \t\r\n/=>", *p) == NULL)
			p++;
		nl = (size_t)(p - name);
		while (p < end && strchr(" \t\r\n", *p) != NULL)
			p++;
		if (p < end && *p == '=') {
			const char *v;
			p++;
			while (p < end && strchr(" \t\r\n", *p) != NULL)
				p++;
			if (p < end && (*p == '"' || *p == '\'')) {
				char q = *p++;
				v = p;
				while (p < end && *p != q)
					p++;
				*vlen = (size_t)(p - v);
				p += p < end;
			} else {
				v = p;
				while (p < end && strchr(" \t\r\n>", *p) == NULL)
					p++;
				*vlen = (size_t)(p - v);
			}
			if (nl == an && strncasecmp(name, attr, an) == 0) {
				*val = v;
				return true;
			}
		} else if (nl == 0) {
			p++;
		}
	}
	return false;
}

int
ph_app_relative_ref(const char *data, size_t len, char *what, size_t wsz)
{
	static const struct { const char *tag, *attr; } tags[] = {{"<script", "src"}, {"<link", "href"}};
	const char *end = data + len;
	int line = 1;
	for (const char *p = data; p < end; p++) {
		if (*p == '\n')
			line++;
		if (*p != '<')
			continue;
		if ((size_t)(end - p) >= 4 && memcmp(p, "<!--", 4) == 0) {
			const char *c = memmem(p + 4, (size_t)(end - p - 4), "-->", 3);
			for (const char *q = p; q < (c ? c : end); q++)
				line += *q == '\n';
			if (c == NULL)
				return 0;
			p = c + 2;
			continue;
		}
		for (size_t t = 0; t < PH_ARRAY_LEN(tags); t++) {
			size_t tl = strlen(tags[t].tag);
			const char *close, *val;
			size_t vlen;
			if ((size_t)(end - p) <= tl || strncasecmp(p, tags[t].tag, tl) != 0 ||
			    strchr(" \t\r\n>/", p[tl]) == NULL)
				continue;
			close = memchr(p, '>', (size_t)(end - p));
			if (close == NULL)
				close = end;
			if (tag_attr(p + tl, close, tags[t].attr, &val, &vlen) && !absolute_ref(val, vlen)) {
				snprintf(what, wsz, "%s %s=\"%.*s\">", tags[t].tag, tags[t].attr,
					 (int)(vlen > 200 ? 200 : vlen), val);
				return line;
			}
		}
	}
	return 0;
}

/* ---- turning apps into resources ------------------------------------------------------- */

static struct json_object *
strv_json(char **v)
{
	struct json_object *a = json_object_new_array();
	for (size_t i = 0; v && v[i]; i++)
		json_object_array_add(a, json_object_new_string(v[i]));
	return a;
}

/* _meta.ui of the app's resource, as the extension names its members. */
static struct json_object *
ui_meta(const struct ph_app *a)
{
	struct json_object *ui = json_object_new_object(), *csp = json_object_new_object();
	for (int k = 0; k < PH_CSP__N; k++)
		if (a->csp[k] != NULL)
			json_object_object_add(csp, csp_json[k], strv_json(a->csp[k]));
	json_object_object_add(ui, "csp", csp);
	if (a->permissions != NULL) {
		struct json_object *p = json_object_new_object();
		for (size_t i = 0; a->permissions[i]; i++)
			json_object_object_add(p, a->permissions[i], json_object_new_object());
		json_object_object_add(ui, "permissions", p);
	}
	if (a->domain)
		json_object_object_add(ui, "domain", json_object_new_string(a->domain));
	if (a->prefers_border >= 0)
		json_object_object_add(ui, "prefersBorder", json_object_new_boolean(a->prefers_border));
	return ui;
}

/* The app's uri: the configured one, or ui://<server.name>/<app name> with
 * what a URI host cannot hold in the server name turned into '-'; with
 * ?v=<16 hex digits of the file's SHA-256> (&v= after a query) when
 * versioned. *base gets the uri before that (caller frees) or NULL. */
static char *
app_uri(const struct ph_config *c, const struct ph_app *a, const char *data, size_t len, char **base)
{
	char *u;
	*base = NULL;
	if (a->uri) {
		u = ph_xstrdup(a->uri);
	} else {
		char *host = ph_xstrdup(c->server.name);
		for (char *p = host; *p; p++)
			if (strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._", *p) == NULL)
				*p = '-';
		u = ph_xasprintf("ui://%s/%s", host, a->name);
		free(host);
	}
	if (a->versioned) {
		unsigned char d[crypto_hash_sha256_BYTES];
		char hex[17];
		crypto_hash_sha256(d, (const unsigned char *)data, len);
		sodium_bin2hex(hex, sizeof hex, d, 8);
		*base = u;
		u = ph_xasprintf("%s%cv=%s", u, strchr(u, '?') ? '&' : '?', hex);
	}
	return u;
}

/* Reads and checks app a's file and adds its resource. Returns 0, or -1
 * after a report. */
static int
app_resource(struct ph_config *c, struct ph_conf_problems *probs, struct ph_app *a)
{
	struct ph_registry *reg = c->registry;
	struct ph_resource *res;
	char *data, what[300];
	size_t len;
	int at;
	if (ph_read_file(a->file, (size_t)c->limits.resource_bytes, &data, &len) != 0) {
		ph_conf_problem(probs, c->file, a->file_line, "apps.%s: file: cannot read '%s': %s", a->name, a->file,
				errno == EFBIG ? "larger than limits.resource_bytes" : ph_strerror(errno));
		return -1;
	}
	if ((at = ph_app_relative_ref(data, len, what, sizeof what)) != 0) {
		ph_conf_problem(probs, c->file, a->file_line, "apps.%s: file: %s line %d: %s is a relative "
				"reference, which never loads in the sandboxed frame of a view: inline it, or use "
				"an https:// URL listed in csp.resource", a->name, a->file, at, what);
		free(data);
		return -1;
	}
	if (len > (size_t)c->limits.app_bytes)
		ph_log("warning", "%s:%d: apps.%s: file: '%s' is %zu bytes, more than limits.app_bytes (%lld): "
		       "some hosts refuse a view that large", c->file ? c->file : "-", a->file_line, a->name,
		       a->file, len, c->limits.app_bytes);
	res = ph_xcalloc(1, sizeof *res);
	res->uri = app_uri(c, a, data, len, &res->app_base);
	res->name = ph_xstrdup(a->name);
	res->mime = ph_xstrdup(APP_MIME);
	res->data = data;
	res->len = len;
	res->has_data = true;
	res->line = a->file_line;
	res->cache.ttl_ms = -1;
	res->meta = json_object_new_object();
	json_object_object_add(res->meta, "ui", ui_meta(a));
	if (ph_registry_add_resource(reg, res) == NULL) {
		ph_conf_problem(probs, c->file, a->uri_line ? a->uri_line : a->line, "apps.%s: %s", a->name, reg->err);
		return -1;
	}
	a->res = res;
	return 0;
}

/* Gives tool t (naming an app) its ui_meta: its own _meta with ui
 * {resourceUri, visibility} and the flat ui/resourceUri. Returns 0, or -1
 * after a report. */
static int
tool_ui(struct ph_config *c, struct ph_conf_problems *probs, struct ph_tool *t)
{
	static const char *const generated[] = {"ui", "ui/resourceUri"};
	struct ph_registry *reg = c->registry;
	const struct ph_app *a = ph_registry_app(reg, t->app);
	struct json_object *ui, *vis;
	const char *uri;
	if (a == NULL) {
		ph_conf_problem(probs, c->file, t->app_line, "tool %s: app: '%s' is not defined in apps", t->name,
				t->app);
		return -1;
	}
	for (size_t i = 0; t->meta && i < PH_ARRAY_LEN(generated); i++) {
		if (ph_jget(t->meta, generated[i]) != NULL) {
			ph_conf_problem(probs, c->file, t->meta_line, "tool %s: _meta: '%s' is what app: %s generates; "
					"remove it from _meta", t->name, generated[i], t->app);
			return -1;
		}
	}
	if (a->res == NULL)
		return -1; /* its file was not read: reported already */
	uri = a->res->uri;
	vis = json_object_new_array();
	if (t->visibility == 0 || (t->visibility & PH_VISIBLE_MODEL))
		json_object_array_add(vis, json_object_new_string("model"));
	if (t->visibility == 0 || (t->visibility & PH_VISIBLE_APP))
		json_object_array_add(vis, json_object_new_string("app"));
	ui = json_object_new_object();
	json_object_object_add(ui, "resourceUri", json_object_new_string(uri));
	json_object_object_add(ui, "visibility", vis);
	t->ui_meta = json_object_new_object();
	if (t->meta) {
		json_object_object_foreach(t->meta, k, v) json_object_object_add(t->ui_meta, k, json_object_get(v));
	}
	json_object_object_add(t->ui_meta, "ui", ui);
	json_object_object_add(t->ui_meta, "ui/resourceUri", json_object_new_string(uri));
	return 0;
}

int
ph_apps_prepare(struct ph_config *c, struct ph_conf_problems *probs)
{
	struct ph_registry *reg = c->registry;
	int rc = 0;
	if (reg == NULL)
		return 0;
	for (size_t i = 0; i < reg->napps; i++)
		if (app_resource(c, probs, reg->apps[i]) != 0)
			rc = -1;
	for (size_t i = 0; i < reg->ntools; i++)
		if (reg->tools[i]->app != NULL && reg->tools[i]->ui_meta == NULL && tool_ui(c, probs, reg->tools[i]) != 0)
			rc = -1;
	return rc;
}
