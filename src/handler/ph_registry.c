/* ph_registry.c: the registry's data, module loading, and the phantom.h
 * calls that build a registry from C. */
#include "first.h"
#include "ph_registry.h"
#include "ph_json.h"
#include "ph_log.h"
#include "ph_util.h"
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PH_MODULE_DIR
#define PH_MODULE_DIR "/usr/local/lib/phantom"
#endif

void *
ph_registry_fail(struct ph_registry *reg, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(reg->err, sizeof reg->err, fmt, ap);
	va_end(ap);
	return NULL;
}

struct ph_registry *
ph_registry_new(void)
{
	struct ph_registry *r = ph_xcalloc(1, sizeof *r);
	for (int i = 0; i < PH_LIST__N; i++)
		r->lists[i].ttl_ms = -1;
	return r;
}

static void
strv_free(char **v, size_t n)
{
	if (v == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void
strv_free0(char **v)
{
	if (v == NULL)
		return;
	for (size_t i = 0; v[i]; i++)
		free(v[i]);
	free(v);
}

void
ph_handler_clear(struct ph_handler *h)
{
	strv_free0(h->exec.argv);
	strv_free0(h->exec.env);
	free(h->exec.cwd);
	free(h->symbol);
	memset(h, 0, sizeof *h);
}

void
ph_completion_clear(struct ph_completion *c)
{
	free(c->name);
	strv_free(c->values, c->nvalues);
	ph_handler_clear(&c->h);
	memset(c, 0, sizeof *c);
}

void
ph_tool_free(struct ph_tool *t)
{
	if (t == NULL)
		return;
	free(t->name);
	free(t->title);
	free(t->description);
	json_object_put(t->input_schema);
	json_object_put(t->output_schema);
	json_object_put(t->annotations);
	json_object_put(t->icons);
	json_object_put(t->meta);
	json_object_put(t->ui_meta);
	free(t->app);
	ph_schema_free(t->in);
	ph_schema_free(t->out);
	ph_param_headers_free(t->headers, t->nheaders);
	strv_free(t->requires, t->nrequires);
	strv_free(t->auth_scopes.v, t->auth_scopes.n);
	ph_handler_clear(&t->h);
	free(t);
}

void
ph_prompt_free(struct ph_prompt *p)
{
	if (p == NULL)
		return;
	free(p->name);
	free(p->title);
	free(p->description);
	json_object_put(p->icons);
	for (size_t i = 0; i < p->nargs; i++) {
		free(p->args[i].name);
		free(p->args[i].title);
		free(p->args[i].description);
		ph_completion_clear(&p->args[i].comp);
	}
	free(p->args);
	for (size_t i = 0; i < p->nmsgs; i++) {
		free(p->msgs[i].role);
		free(p->msgs[i].text);
		free(p->msgs[i].data);
		free(p->msgs[i].mime);
		free(p->msgs[i].file);
	}
	free(p->msgs);
	strv_free(p->auth_scopes.v, p->auth_scopes.n);
	ph_handler_clear(&p->h);
	free(p);
}

void
ph_resource_free(struct ph_resource *r)
{
	if (r == NULL)
		return;
	free(r->uri);
	free(r->name);
	free(r->title);
	free(r->description);
	free(r->mime);
	json_object_put(r->annotations);
	json_object_put(r->icons);
	free(r->data);
	free(r->file);
	strv_free(r->auth_scopes.v, r->auth_scopes.n);
	ph_handler_clear(&r->h);
	free(r->cache.scope);
	json_object_put(r->meta);
	free(r->app_base);
	free(r);
}

void
ph_template_free(struct ph_template *t)
{
	if (t == NULL)
		return;
	free(t->uri_template);
	free(t->name);
	free(t->title);
	free(t->description);
	free(t->mime);
	json_object_put(t->annotations);
	json_object_put(t->icons);
	ph_uritemplate_free(t->ut);
	free(t->dir);
	ph_handler_clear(&t->h);
	for (size_t i = 0; i < t->ncomps; i++)
		ph_completion_clear(&t->comps[i]);
	free(t->comps);
	strv_free(t->auth_scopes.v, t->auth_scopes.n);
	free(t->cache.scope);
	free(t);
}

void
ph_registry_free(struct ph_registry *reg)
{
	if (reg == NULL)
		return;
	for (size_t i = 0; i < reg->ntools; i++)
		ph_tool_free(reg->tools[i]);
	free(reg->tools);
	for (size_t i = 0; i < reg->nprompts; i++)
		ph_prompt_free(reg->prompts[i]);
	free(reg->prompts);
	for (size_t i = 0; i < reg->nresources; i++)
		ph_resource_free(reg->resources[i]);
	free(reg->resources);
	for (size_t i = 0; i < reg->ntemplates; i++)
		ph_template_free(reg->templates[i]);
	free(reg->templates);
	for (size_t i = 0; i < reg->ncatalogs; i++)
		ph_catalog_free(reg->catalogs[i]);
	free(reg->catalogs);
	for (size_t i = 0; i < reg->napps; i++)
		ph_app_free(reg->apps[i]);
	free(reg->apps);
	ph_catalog_free(reg->session_end);
	ph_catalog_free(reg->sub_authorize);
	for (int i = 0; i < PH_LIST__N; i++)
		free(reg->lists[i].scope);
	/* after the items: their handlers point into these */
	for (size_t i = 0; i < reg->ndl; i++)
		dlclose(reg->dl[i]);
	free(reg->dl);
	free(reg);
}

void
ph_registry_add_catalog(struct ph_registry *reg, struct ph_catalog *c)
{
	reg->catalogs = ph_xrealloc(reg->catalogs, (reg->ncatalogs + 1) * sizeof *reg->catalogs);
	reg->catalogs[reg->ncatalogs++] = c;
}

void
ph_catalog_free(struct ph_catalog *c)
{
	if (c == NULL)
		return;
	free(c->name);
	ph_handler_clear(&c->h);
	free(c);
}

bool
ph_registry_name_ok(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n > 128)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
		      c == '-' || c == '.'))
			return false;
	}
	return true;
}

struct ph_tool *
ph_registry_tool(const struct ph_registry *reg, const char *name)
{
	for (size_t i = 0; reg && i < reg->ntools; i++)
		if (strcmp(reg->tools[i]->name, name) == 0)
			return reg->tools[i];
	return NULL;
}

struct ph_prompt *
ph_registry_prompt(const struct ph_registry *reg, const char *name)
{
	for (size_t i = 0; reg && i < reg->nprompts; i++)
		if (strcmp(reg->prompts[i]->name, name) == 0)
			return reg->prompts[i];
	return NULL;
}

struct ph_resource *
ph_registry_resource(const struct ph_registry *reg, const char *uri)
{
	for (size_t i = 0; reg && i < reg->nresources; i++)
		if (strcmp(reg->resources[i]->uri, uri) == 0)
			return reg->resources[i];
	return NULL;
}

struct ph_resource *
ph_registry_app_version(const struct ph_registry *reg, const char *uri)
{
	for (size_t i = 0; reg && i < reg->nresources; i++) {
		const char *base = reg->resources[i]->app_base, *v;
		size_t n = base ? strlen(base) : 0;
		if (base == NULL || strncmp(uri, base, n) != 0)
			continue;
		v = uri + n;
		/* the separator app_uri put there: '&' after a query, else '?' */
		if (v[0] == (strchr(base, '?') ? '&' : '?') && strncmp(v + 1, "v=", 2) == 0 &&
		    strspn(v + 3, "0123456789abcdef") == 16 && v[19] == '\0')
			return reg->resources[i];
	}
	return NULL;
}

struct ph_app *
ph_registry_app(const struct ph_registry *reg, const char *name)
{
	for (size_t i = 0; reg && i < reg->napps; i++)
		if (strcmp(reg->apps[i]->name, name) == 0)
			return reg->apps[i];
	return NULL;
}

void
ph_app_free(struct ph_app *a)
{
	if (a == NULL)
		return;
	free(a->name);
	free(a->file);
	free(a->uri);
	for (int i = 0; i < PH_CSP__N; i++)
		strv_free0(a->csp[i]);
	strv_free0(a->permissions);
	free(a->domain);
	free(a);
}

bool
ph_resource_stamp(const char *path, bool follow, long long stamp[3])
{
	struct stat st;
	memset(stamp, 0, 3 * sizeof *stamp);
	if ((follow ? stat(path, &st) : lstat(path, &st)) != 0)
		return false;
	stamp[0] = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
	stamp[1] = (long long)st.st_size;
	stamp[2] = (long long)st.st_ino;
	return true;
}

void
ph_resource_refresh(struct ph_resource *r, size_t max)
{
	long long now[3];
	char *data;
	size_t len;
	if (r->file == NULL || !ph_resource_stamp(r->file, r->file_link, now) ||
	    memcmp(now, r->file_stamp, sizeof now) == 0)
		return;
	/* the stamp moves on either way: one warning per change, not per read */
	memcpy(r->file_stamp, now, sizeof now);
	/* never through a link planted since the start (fs_beneath.sh) */
	if (ph_read_file_flags(r->file, r->file_link ? 0 : O_NOFOLLOW, max, &data, &len) != 0) {
		ph_log("warning", "resource %s: cannot read '%s' again (%s); the old bytes are served",
		       r->uri, r->file, errno == ELOOP ? "it is now a symbolic link" : ph_strerror(errno));
		return;
	}
	free(r->data);
	r->data = data;
	r->len = len;
}

struct ph_template *
ph_registry_template(const struct ph_registry *reg, const char *uri_template)
{
	for (size_t i = 0; reg && i < reg->ntemplates; i++)
		if (strcmp(reg->templates[i]->uri_template, uri_template) == 0)
			return reg->templates[i];
	return NULL;
}

#define APPEND(arr, n, item)                                             \
	do {                                                             \
		(arr) = ph_xrealloc((arr), ((n) + 1) * sizeof *(arr));   \
		(arr)[(n)++] = (item);                                   \
	} while (0)

struct ph_tool *
ph_registry_add_tool(struct ph_registry *reg, struct ph_tool *t)
{
	if (ph_registry_tool(reg, t->name)) {
		ph_registry_fail(reg, "tool '%s' is defined twice", t->name);
		ph_tool_free(t);
		return NULL;
	}
	t->reg = reg;
	APPEND(reg->tools, reg->ntools, t);
	return t;
}

struct ph_prompt *
ph_registry_add_prompt(struct ph_registry *reg, struct ph_prompt *p)
{
	if (ph_registry_prompt(reg, p->name)) {
		ph_registry_fail(reg, "prompt '%s' is defined twice", p->name);
		ph_prompt_free(p);
		return NULL;
	}
	p->reg = reg;
	APPEND(reg->prompts, reg->nprompts, p);
	return p;
}

struct ph_resource *
ph_registry_add_resource(struct ph_registry *reg, struct ph_resource *r)
{
	if (ph_registry_resource(reg, r->uri)) {
		ph_registry_fail(reg, "resource '%s' is defined twice", r->uri);
		ph_resource_free(r);
		return NULL;
	}
	r->reg = reg;
	APPEND(reg->resources, reg->nresources, r);
	return r;
}

struct ph_template *
ph_registry_add_template(struct ph_registry *reg, struct ph_template *t)
{
	if (ph_registry_template(reg, t->uri_template)) {
		ph_registry_fail(reg, "resource template '%s' is defined twice", t->uri_template);
		ph_template_free(t);
		return NULL;
	}
	t->reg = reg;
	APPEND(reg->templates, reg->ntemplates, t);
	return t;
}

struct ph_app *
ph_registry_add_app(struct ph_registry *reg, struct ph_app *a)
{
	if (ph_registry_app(reg, a->name)) {
		ph_registry_fail(reg, "app '%s' is defined twice", a->name);
		ph_app_free(a);
		return NULL;
	}
	APPEND(reg->apps, reg->napps, a);
	return a;
}

int
ph_registry_merge(struct ph_registry *dst, struct ph_registry *src)
{
	for (size_t i = 0; i < src->ntools; i++)
		if (ph_registry_tool(dst, src->tools[i]->name))
			return ph_registry_fail(dst, "tool '%s' is defined twice", src->tools[i]->name), -1;
	for (size_t i = 0; i < src->nprompts; i++)
		if (ph_registry_prompt(dst, src->prompts[i]->name))
			return ph_registry_fail(dst, "prompt '%s' is defined twice", src->prompts[i]->name), -1;
	for (size_t i = 0; i < src->nresources; i++)
		if (ph_registry_resource(dst, src->resources[i]->uri))
			return ph_registry_fail(dst, "resource '%s' is defined twice", src->resources[i]->uri), -1;
	for (size_t i = 0; i < src->ntemplates; i++)
		if (ph_registry_template(dst, src->templates[i]->uri_template))
			return ph_registry_fail(dst, "resource template '%s' is defined twice",
						src->templates[i]->uri_template), -1;
	for (size_t i = 0; i < src->ntools; i++) {
		src->tools[i]->reg = dst;
		APPEND(dst->tools, dst->ntools, src->tools[i]);
	}
	for (size_t i = 0; i < src->nprompts; i++) {
		src->prompts[i]->reg = dst;
		APPEND(dst->prompts, dst->nprompts, src->prompts[i]);
	}
	for (size_t i = 0; i < src->nresources; i++) {
		src->resources[i]->reg = dst;
		APPEND(dst->resources, dst->nresources, src->resources[i]);
	}
	for (size_t i = 0; i < src->ntemplates; i++) {
		src->templates[i]->reg = dst;
		APPEND(dst->templates, dst->ntemplates, src->templates[i]);
	}
	for (size_t i = 0; i < src->ndl; i++)
		APPEND(dst->dl, dst->ndl, src->dl[i]);
	for (int i = 0; i < PH_LIST__N; i++) {
		if (dst->lists[i].ttl_ms < 0)
			dst->lists[i].ttl_ms = src->lists[i].ttl_ms;
		if (dst->lists[i].scope == NULL) {
			dst->lists[i].scope = src->lists[i].scope;
			src->lists[i].scope = NULL;
		}
	}
	src->ntools = src->nprompts = src->nresources = src->ntemplates = src->ndl = 0;
	ph_registry_free(src);
	return 0;
}

bool
ph_registry_has_completions(const struct ph_registry *reg)
{
	if (reg == NULL)
		return false;
	for (size_t i = 0; i < reg->nprompts; i++)
		for (size_t j = 0; j < reg->prompts[i]->nargs; j++)
			if (reg->prompts[i]->args[j].comp.nvalues || reg->prompts[i]->args[j].comp.h.kind)
				return true;
	for (size_t i = 0; i < reg->ntemplates; i++)
		if (reg->templates[i]->ncomps)
			return true;
	return false;
}

int
ph_tool_set_input(struct ph_registry *reg, struct ph_tool *t, struct json_object *schema)
{
	char err[400];
	struct json_object *type;
	struct ph_schema *s;
	if (!json_object_is_type(schema, json_type_object) ||
	    !json_object_object_get_ex(schema, "type", &type) || !json_object_is_type(type, json_type_string) ||
	    strcmp(json_object_get_string(type), "object") != 0) {
		ph_registry_fail(reg, "tool '%s': the input schema must be an object schema with "
				 "\"type\": \"object\" at its root", t->name);
		return -1;
	}
	s = ph_schema_compile(schema, err, sizeof err);
	if (s == NULL) {
		ph_registry_fail(reg, "tool '%s': input schema: %s", t->name, err);
		return -1;
	}
	ph_param_headers_free(t->headers, t->nheaders);
	t->headers = NULL;
	t->nheaders = 0;
	if (ph_schema_headers(schema, &t->headers, &t->nheaders, err, sizeof err) != 0) {
		ph_schema_free(s);
		ph_registry_fail(reg, "tool '%s': input schema: %s", t->name, err);
		return -1;
	}
	ph_schema_free(t->in);
	t->in = s;
	json_object_put(t->input_schema);
	t->input_schema = json_object_get(schema);
	return 0;
}

int
ph_tool_set_output(struct ph_registry *reg, struct ph_tool *t, struct json_object *schema)
{
	char err[400];
	struct ph_schema *s = ph_schema_compile(schema, err, sizeof err);
	if (s == NULL) {
		ph_registry_fail(reg, "tool '%s': output schema: %s", t->name, err);
		return -1;
	}
	ph_schema_free(t->out);
	t->out = s;
	json_object_put(t->output_schema);
	t->output_schema = json_object_get(schema);
	return 0;
}

/* ---- modules ------------------------------------------------------------------- */

#ifndef PH_STATIC_BUILD
#ifdef PH_BUILD_DIR
/* The example module of the build tree, for a bare module name, when the
 * running program is the uninstalled phantom-fcgi of the very build tree
 * that compiled it (PH_BUILD_DIR, set by Makefile.am): then the bundled
 * conf/phantom.yaml checks and runs before `make install`. An installed or
 * copied program never looks there. Returns a path (caller frees) or NULL. */
static char *
build_tree_module(const char *module)
{
	char exe[4096];
	struct stat st;
	char *p;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	if (strcmp(exe, PH_BUILD_DIR "/phantom-fcgi") != 0)
		return NULL;
	p = ph_xasprintf("%s/examples/module/.libs/%s", PH_BUILD_DIR, module);
	if (stat(p, &st) == 0 && S_ISREG(st.st_mode))
		return p;
	free(p);
	return NULL;
}
#endif

/* Where a module is loaded from: a name with '/' relative to dir; a bare
 * name from $PHANTOM_MODULE_PATH, then the build tree (only for its own
 * uninstalled program), then PH_MODULE_DIR. Returns a path (caller frees). */
static char *
module_path(const char *module, const char *dir)
{
	struct stat st;
	const char *env;
	if (strchr(module, '/') != NULL)
		return ph_path_join(dir, module);
	env = getenv("PHANTOM_MODULE_PATH");
	while (env && *env) {
		size_t l = strcspn(env, ":");
		if (l > 0) {
			char *p = ph_xasprintf("%.*s/%s", (int)l, env, module);
			if (stat(p, &st) == 0)
				return p;
			free(p);
		}
		env += l + (env[l] == ':');
	}
#ifdef PH_BUILD_DIR
	{
		char *p = build_tree_module(module);
		if (p != NULL)
			return p;
	}
#endif
	return ph_xasprintf("%s/%s", PH_MODULE_DIR, module);
}

phantom_handler_fn
ph_registry_module(struct ph_registry *reg, const char *module, const char *symbol, const char *dir)
{
	char *path = module_path(module, dir);
	struct stat st;
	void *h;
	const unsigned *abi;
	void *fn;
	/* dlopen(3) would block on a FIFO, in -t or in a reload */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		ph_registry_fail(reg, "module '%s': %s", path, S_ISDIR(st.st_mode) ? strerror(EISDIR)
										 : ph_strerror(PH_ENOTREG));
		free(path);
		return NULL;
	}
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		ph_registry_fail(reg, "module '%s': %s", path, dlerror());
		free(path);
		return NULL;
	}
	abi = dlsym(h, "phantom_module_abi");
	if (abi == NULL) {
		ph_registry_fail(reg, "module '%s' does not declare PHANTOM_MODULE() (no phantom_module_abi)",
				 path);
		goto fail;
	}
	if (*abi != PHANTOM_ABI) {
		ph_registry_fail(reg, "module '%s' was built for ABI %u; this server has ABI %u", path, *abi,
				 (unsigned)PHANTOM_ABI);
		goto fail;
	}
	fn = dlsym(h, symbol);
	if (fn == NULL) {
		ph_registry_fail(reg, "module '%s' has no symbol '%s'", path, symbol);
		goto fail;
	}
	APPEND(reg->dl, reg->ndl, h);
	free(path);
	{
		phantom_handler_fn f;
		memcpy(&f, &fn, sizeof f); /* object pointer to function pointer, as dlsym requires */
		return f;
	}
fail:
	dlclose(h);
	free(path);
	return NULL;
}
#else
/* The static build (configure --enable-static-binary): a static program
 * has no dynamic linker to load a module with, nor exported phantom_*
 * symbols for a module to call, so every module is refused where the
 * configuration is built: at -t and at start, never at a call. */
phantom_handler_fn
ph_registry_module(struct ph_registry *reg, const char *module, const char *symbol, const char *dir)
{
	(void)symbol;
	(void)dir;
	ph_registry_fail(reg, "module '%s': this phantom-fcgi is the static build, which cannot load "
			 "C modules; use exec: (persistent: true keeps a program running between calls) "
			 "or the dynamically linked phantom-fcgi", module);
	return NULL;
}
#endif

/* ---- the public building API (phantom.h) -------------------------------------- */

phantom_registry *
phantom_registry_new(void)
{
	return ph_registry_new();
}

void
phantom_registry_free(phantom_registry *reg)
{
	ph_registry_free(reg);
}

const char *
phantom_registry_error(const phantom_registry *reg)
{
	return reg->err;
}

/* Parses a JSON text strictly. Returns the value (caller puts) or NULL. */
static struct json_object *
parse_text(const char *s)
{
	struct json_object *o;
	return ph_json_parse(s, strlen(s), PH_JSON_DEPTH_DOCUMENT, &o) ? o : NULL;
}

static void
set_c_handler(struct ph_handler *h, phantom_handler_fn fn, void *udata)
{
	h->kind = fn ? PH_HANDLER_C : PH_HANDLER_NONE;
	h->fn = fn;
	h->udata = udata;
}

phantom_tool *
phantom_tool_add(phantom_registry *reg, const char *name, const char *description,
		 const char *input_schema, phantom_handler_fn fn, void *udata)
{
	struct ph_tool *t;
	struct json_object *schema;
	if (name == NULL || !ph_registry_name_ok(name))
		return ph_registry_fail(reg, "tool name '%s' must be 1-128 of A-Z a-z 0-9 _ - .",
					name ? name : "(null)");
	if (fn == NULL)
		return ph_registry_fail(reg, "tool '%s' needs a handler", name);
	if (input_schema == NULL) {
		schema = json_object_new_object();
		json_object_object_add(schema, "type", json_object_new_string("object"));
		json_object_object_add(schema, "additionalProperties", json_object_new_boolean(0));
	} else if ((schema = parse_text(input_schema)) == NULL) {
		return ph_registry_fail(reg, "tool '%s': the input schema is not valid JSON", name);
	}
	t = ph_xcalloc(1, sizeof *t);
	t->name = ph_xstrdup(name);
	t->description = description ? ph_xstrdup(description) : NULL;
	set_c_handler(&t->h, fn, udata);
	if (ph_tool_set_input(reg, t, schema) != 0) {
		json_object_put(schema);
		ph_tool_free(t);
		return NULL;
	}
	json_object_put(schema);
	return ph_registry_add_tool(reg, t);
}

int
phantom_tool_set_title(phantom_tool *t, const char *title)
{
	free(t->title);
	t->title = title ? ph_xstrdup(title) : NULL;
	return 0;
}

int
phantom_tool_set_output_schema(phantom_tool *t, const char *schema)
{
	struct json_object *j = parse_text(schema);
	int rc;
	if (j == NULL) {
		ph_registry_fail(t->reg, "tool '%s': the output schema is not valid JSON", t->name);
		return -1;
	}
	rc = ph_tool_set_output(t->reg, t, j);
	json_object_put(j);
	return rc;
}

int
phantom_tool_set_annotations(phantom_tool *t, const char *annotations)
{
	struct json_object *j = parse_text(annotations);
	if (j == NULL || !json_object_is_type(j, json_type_object)) {
		json_object_put(j);
		ph_registry_fail(t->reg, "tool '%s': annotations must be a JSON object", t->name);
		return -1;
	}
	json_object_put(t->annotations);
	t->annotations = j;
	return 0;
}

int
phantom_tool_require_capability(phantom_tool *t, const char *capability)
{
	if (capability == NULL || !ph_registry_name_ok(capability)) {
		ph_registry_fail(t->reg, "tool '%s': bad capability name", t->name);
		return -1;
	}
	APPEND(t->requires, t->nrequires, ph_xstrdup(capability));
	return 0;
}

phantom_prompt *
phantom_prompt_add(phantom_registry *reg, const char *name, const char *description,
		   phantom_handler_fn fn, void *udata)
{
	struct ph_prompt *p;
	if (name == NULL || !ph_registry_name_ok(name))
		return ph_registry_fail(reg, "prompt name '%s' must be 1-128 of A-Z a-z 0-9 _ - .",
					name ? name : "(null)");
	if (fn == NULL)
		return ph_registry_fail(reg, "prompt '%s' needs a handler", name);
	p = ph_xcalloc(1, sizeof *p);
	p->name = ph_xstrdup(name);
	p->description = description ? ph_xstrdup(description) : NULL;
	set_c_handler(&p->h, fn, udata);
	return ph_registry_add_prompt(reg, p);
}

int
phantom_prompt_add_argument(phantom_prompt *p, const char *name, const char *description, int required)
{
	struct ph_prompt_arg *a;
	if (name == NULL || name[0] == '\0') {
		ph_registry_fail(p->reg, "prompt '%s': an argument needs a name", p->name);
		return -1;
	}
	for (size_t i = 0; i < p->nargs; i++) {
		if (strcmp(p->args[i].name, name) == 0) {
			ph_registry_fail(p->reg, "prompt '%s': argument '%s' is defined twice", p->name, name);
			return -1;
		}
	}
	p->args = ph_xrealloc(p->args, (p->nargs + 1) * sizeof *p->args);
	a = &p->args[p->nargs++];
	memset(a, 0, sizeof *a);
	a->name = ph_xstrdup(name);
	a->description = description ? ph_xstrdup(description) : NULL;
	a->required = required != 0;
	return 0;
}

int
phantom_prompt_complete(phantom_prompt *p, const char *argument, phantom_handler_fn fn, void *udata)
{
	for (size_t i = 0; i < p->nargs; i++) {
		if (strcmp(p->args[i].name, argument) == 0 && fn != NULL) {
			ph_completion_clear(&p->args[i].comp);
			p->args[i].comp.name = ph_xstrdup(argument);
			set_c_handler(&p->args[i].comp.h, fn, udata);
			return 0;
		}
	}
	ph_registry_fail(p->reg, "prompt '%s' has no argument '%s'", p->name, argument);
	return -1;
}


phantom_resource *
phantom_resource_add(phantom_registry *reg, const char *uri, const char *name, const char *mime_type,
		     const char *text, phantom_handler_fn fn, void *udata)
{
	struct ph_resource *r;
	if (!ph_uri_ok(uri))
		return ph_registry_fail(reg, "resource uri '%s' is not a URI (scheme:rest, no spaces)",
					uri ? uri : "(null)");
	if (text == NULL && fn == NULL)
		return ph_registry_fail(reg, "resource '%s' needs text or a handler", uri);
	r = ph_xcalloc(1, sizeof *r);
	r->uri = ph_xstrdup(uri);
	r->name = ph_xstrdup(name ? name : uri);
	r->mime = mime_type ? ph_xstrdup(mime_type) : NULL;
	r->cache.ttl_ms = -1;
	if (text) {
		r->data = ph_xstrdup(text);
		r->len = strlen(text);
		r->has_data = true;
		if (r->mime == NULL)
			r->mime = ph_xstrdup("text/plain");
	} else {
		set_c_handler(&r->h, fn, udata);
	}
	return ph_registry_add_resource(reg, r);
}

int
phantom_resource_set_description(phantom_resource *r, const char *description)
{
	free(r->description);
	r->description = description ? ph_xstrdup(description) : NULL;
	return 0;
}

int
phantom_resource_set_cache(phantom_resource *r, long long ttl_ms, const char *scope)
{
	if (ttl_ms < 0 || (scope && strcmp(scope, "public") != 0 && strcmp(scope, "private") != 0)) {
		ph_registry_fail(r->reg, "resource '%s': ttl_ms must be >= 0 and scope public or private",
				 r->uri);
		return -1;
	}
	r->cache.ttl_ms = ttl_ms;
	free(r->cache.scope);
	r->cache.scope = scope ? ph_xstrdup(scope) : NULL;
	return 0;
}

phantom_template *
phantom_template_add(phantom_registry *reg, const char *uri_template, const char *name,
		     const char *mime_type, phantom_handler_fn fn, void *udata)
{
	struct ph_template *t;
	char err[300];
	struct ph_uritemplate *ut;
	if (uri_template == NULL || fn == NULL)
		return ph_registry_fail(reg, "a resource template needs a uri template and a handler");
	ut = ph_uritemplate_parse(uri_template, err, sizeof err);
	if (ut == NULL)
		return ph_registry_fail(reg, "resource template: %s", err);
	t = ph_xcalloc(1, sizeof *t);
	t->uri_template = ph_xstrdup(uri_template);
	t->ut = ut;
	t->name = ph_xstrdup(name ? name : uri_template);
	t->mime = mime_type ? ph_xstrdup(mime_type) : NULL;
	t->cache.ttl_ms = -1;
	set_c_handler(&t->h, fn, udata);
	return ph_registry_add_template(reg, t);
}

int
phantom_template_set_description(phantom_template *t, const char *description)
{
	free(t->description);
	t->description = description ? ph_xstrdup(description) : NULL;
	return 0;
}

int
phantom_template_complete(phantom_template *t, const char *variable, phantom_handler_fn fn, void *udata)
{
	struct ph_completion *c;
	if (variable == NULL || fn == NULL || ph_uritemplate_find(t->ut, variable) < 0) {
		ph_registry_fail(t->reg, "resource template '%s' has no variable '%s'", t->uri_template,
				 variable ? variable : "(null)");
		return -1;
	}
	for (size_t i = 0; i < t->ncomps; i++) {
		if (strcmp(t->comps[i].name, variable) == 0) {
			ph_completion_clear(&t->comps[i]);
			t->comps[i].name = ph_xstrdup(variable);
			set_c_handler(&t->comps[i].h, fn, udata);
			return 0;
		}
	}
	t->comps = ph_xrealloc(t->comps, (t->ncomps + 1) * sizeof *t->comps);
	c = &t->comps[t->ncomps++];
	memset(c, 0, sizeof *c);
	c->name = ph_xstrdup(variable);
	set_c_handler(&c->h, fn, udata);
	return 0;
}

/* fn for h under "kind name" (and ", completion of arg" when arg is set). */
static void
each_one(void (*fn)(void *, const struct ph_handler *, const char *), void *ctx, const struct ph_handler *h,
	 const char *kind, const char *name, const char *arg)
{
	char label[300];
	if (h->kind == PH_HANDLER_NONE)
		return;
	if (arg)
		snprintf(label, sizeof label, "%s %s, completion of %s", kind, name, arg);
	else
		snprintf(label, sizeof label, "%s %s", kind, name);
	fn(ctx, h, label);
}

void
ph_registry_each_handler(const struct ph_registry *reg,
			 void (*fn)(void *ctx, const struct ph_handler *h, const char *label), void *ctx)
{
	for (size_t i = 0; reg && i < reg->ntools; i++)
		each_one(fn, ctx, &reg->tools[i]->h, "tool", reg->tools[i]->name, NULL);
	for (size_t i = 0; reg && i < reg->nprompts; i++) {
		const struct ph_prompt *p = reg->prompts[i];
		each_one(fn, ctx, &p->h, "prompt", p->name, NULL);
		for (size_t j = 0; j < p->nargs; j++)
			each_one(fn, ctx, &p->args[j].comp.h, "prompt", p->name, p->args[j].name);
	}
	for (size_t i = 0; reg && i < reg->nresources; i++)
		each_one(fn, ctx, &reg->resources[i]->h, "resource", reg->resources[i]->uri, NULL);
	for (size_t i = 0; reg && i < reg->ntemplates; i++) {
		const struct ph_template *t = reg->templates[i];
		each_one(fn, ctx, &t->h, "resource template", t->uri_template, NULL);
		for (size_t j = 0; j < t->ncomps; j++)
			each_one(fn, ctx, &t->comps[j].h, "resource template", t->uri_template, t->comps[j].name);
	}
	for (size_t i = 0; reg && i < reg->ncatalogs; i++)
		each_one(fn, ctx, &reg->catalogs[i]->h, "resource list", reg->catalogs[i]->name, NULL);
}
