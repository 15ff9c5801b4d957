/* ph_reg_conf.c: phantom.yaml's tools, prompts, resources and
 * resource_templates sections, turned into registry items. Every problem
 * names the file, the line and the item; nothing unknown passes silently.
 * Paths are relative to the configuration file; commands are resolved and
 * modules loaded here, files are read by ph_registry_prepare once the whole
 * configuration (and so limits.resource_bytes) is known. */
#include "first.h"
#include "ph_conf.h"
#include "ph_fields.h"
#include "ph_json.h"
#include "ph_exec_conf.h"
#include "ph_mime.h"
#include "ph_registry.h"
#include "ph_sections.h"
#include "ph_util.h"
#include "ph_yread.h"
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* One item being read: its problems are "FILE:LINE: WHERE: ..." and set s.bad. */
struct rc {
	struct ph_conf_ctx *x;
	struct ph_registry *reg;
	char where[160]; /* "tools[2] (deploy)" */
	struct ph_ysink s;
};

struct ph_registry *
ph_conf_registry(struct ph_conf_ctx *x)
{
	if (x->c->registry == NULL)
		x->c->registry = ph_registry_new();
	return x->c->registry;
}

static void
rc_init(struct rc *r, struct ph_conf_ctx *x)
{
	r->x = x;
	r->reg = ph_conf_registry(x);
	r->where[0] = '\0';
	r->s = (struct ph_ysink){x->probs, x->file, r->where, false};
}

void
ph_conf_registry_free(struct ph_config *c)
{
	/* four keys share the registry: the first call frees it */
	ph_registry_free(c->registry);
	c->registry = NULL;
}

/* A string value of key, copied; NULL when absent (a problem when required
 * or when it is not a non-empty string without NUL). */
static char *
str_key(struct rc *r, const struct ph_ynode *item, const char *key, bool required)
{
	const struct ph_ynode *v = ph_yaml_get(item, key);
	if (v == NULL || ph_yaml_is_null(v)) {
		if (required)
			ph_yread_problem(&r->s, item->line, "'%s' is required", key);
		return NULL;
	}
	return ph_yread_strdup(&r->s, v, key, 1, SIZE_MAX);
}

/* An integer value of key within bounds; def when absent. */
static long long
int_key(struct rc *r, const struct ph_ynode *item, const char *key, long long min, long long max,
	long long def)
{
	const struct ph_ynode *v = ph_yaml_get(item, key);
	long long out;
	if (v == NULL || ph_yread_int(&r->s, v, key, min, max, &out) != 0)
		return def;
	return out;
}

static bool
bool_key(struct rc *r, const struct ph_ynode *item, const char *key, bool def)
{
	const struct ph_ynode *v = ph_yaml_get(item, key);
	bool b;
	if (v == NULL || ph_yread_bool(&r->s, v, key, &b) != 0)
		return def;
	return b;
}

/* A list of non-empty strings, NULL-terminated (caller frees); NULL when absent. */
static char **
strlist_key(struct rc *r, const struct ph_ynode *item, const char *key, size_t *count)
{
	const struct ph_ynode *v = ph_yaml_get(item, key);
	if (count)
		*count = 0;
	if (v == NULL)
		return NULL;
	return ph_yread_strlist(&r->s, v, key, 0, SIZE_MAX, SIZE_MAX, count);
}

/* auth_scopes: the OAuth scopes the item needs (RFC 6749 scope-tokens:
 * printable ASCII without space, '"' or '\\', so they can stand in a
 * WWW-Authenticate challenge). Not the cache "scope". */
void
ph_auth_scopes_parse(struct ph_ysink *s, const struct ph_ynode *item, struct ph_auth_scopes *as)
{
	const struct ph_ynode *v = ph_yaml_get(item, "auth_scopes");
	if (v == NULL)
		return;
	as->v = ph_yread_strlist(s, v, "auth_scopes", 0, 64, 256, &as->n);
	for (size_t i = 0; i < as->n; i++) {
		if (strcmp(as->v[i], "offline_access") == 0)
			ph_yread_problem(s, v->vals[i]->line, "auth_scopes[%zu]: offline_access asks for refresh "
					 "tokens; no operation needs it", i);
		for (const char *c = as->v[i]; *c; c++)
			if (*c <= 0x20 || *c >= 0x7f || *c == '"' || *c == '\\') {
				ph_yread_problem(s, v->vals[i]->line, "auth_scopes[%zu]: '%s' is not a scope "
						 "(printable ASCII without spaces, '\"' or '\\')", i, as->v[i]);
				break;
			}
	}
}

/* A map or list value passed to clients as JSON (annotations, icons). */
static struct json_object *
json_key(struct rc *r, const struct ph_ynode *item, const char *key, enum ph_ynode_kind want)
{
	const struct ph_ynode *v = ph_yaml_get(item, key);
	if (v == NULL)
		return NULL;
	if (v->kind != want) {
		ph_yread_problem(&r->s, v->line, "'%s' must be a %s", key, want == PH_Y_MAP ? "mapping" : "list");
		return NULL;
	}
	return ph_yaml_to_json(v);
}

/* A JSON Schema written as YAML, or as a JSON text in a string. */
static struct json_object *
schema_key(struct rc *r, const struct ph_ynode *item, const char *key)
{
	const struct ph_ynode *v = ph_yaml_get(item, key);
	struct json_object *j;
	if (v == NULL)
		return NULL;
	if (v->kind == PH_Y_SCALAR) {
		if (!ph_json_parse(v->str, strlen(v->str), PH_JSON_DEPTH_DOCUMENT, &j))
			j = NULL;
		if (j == NULL || !json_object_is_type(j, json_type_object)) {
			json_object_put(j);
			ph_yread_problem(&r->s, v->line, "'%s' must be a mapping or a JSON object text", key);
			return NULL;
		}
		return j;
	}
	if (v->kind != PH_Y_MAP) {
		ph_yread_problem(&r->s, v->line, "'%s' must be a mapping (a JSON Schema)", key);
		return NULL;
	}
	return ph_yaml_to_json(v);
}

static const char *const handler_keys[] = {"exec", "timeout_ms", "max_output", "env", "cwd", "persistent",
					   "module", "symbol"};

static bool
has_handler_keys(const struct ph_ynode *item)
{
	for (size_t i = 0; i < PH_ARRAY_LEN(handler_keys); i++)
		if (ph_yaml_get(item, handler_keys[i]))
			return true;
	return false;
}

/* Reads exec/module keys of item into h. Returns 0 (h may stay NONE when
 * nothing is configured) or -1 after reporting. */
static int
parse_handler(struct rc *r, const struct ph_ynode *item, struct ph_handler *h)
{
	const char *dir = r->x->c->dir;
	bool exec = ph_yaml_get(item, "exec") != NULL, module = ph_yaml_get(item, "module") != NULL;
	memset(h, 0, sizeof *h);
	if (exec && module) {
		ph_yread_problem(&r->s, ph_yread_key_line(item, "module"), "'exec' and 'module' exclude each other");
		return -1;
	}
	if (module) {
		char *mod = str_key(r, item, "module", true), *sym = str_key(r, item, "symbol", true);
		int rc = -1;
		for (size_t i = 0; i < PH_ARRAY_LEN(handler_keys); i++) {
			const char *k = handler_keys[i];
			if (strcmp(k, "module") != 0 && strcmp(k, "symbol") != 0 && ph_yaml_get(item, k))
				ph_yread_problem(&r->s, ph_yread_key_line(item, k), "'%s' applies to exec handlers, not modules", k);
		}
		if (mod && sym && !r->s.bad) {
			h->fn = ph_registry_module(r->reg, mod, sym, dir);
			if (h->fn == NULL) {
				ph_yread_problem(&r->s, ph_yread_key_line(item, "module"), "%s", r->reg->err);
			} else {
				h->kind = PH_HANDLER_C;
				h->symbol = ph_xasprintf("%s:%s", mod, sym);
				rc = 0;
			}
		}
		free(mod);
		free(sym);
		return rc;
	}
	if (!exec) {
		if (ph_yaml_get(item, "symbol"))
			ph_yread_problem(&r->s, ph_yread_key_line(item, "symbol"), "'symbol' needs 'module'");
		for (size_t i = 1; i < 6; i++)
			if (ph_yaml_get(item, handler_keys[i]))
				ph_yread_problem(&r->s, ph_yread_key_line(item, handler_keys[i]), "'%s' needs 'exec'", handler_keys[i]);
		return r->s.bad ? -1 : 0;
	}
	if (ph_exec_spec_parse(&r->s, item, &ph_exec_handler_bounds, dir, &h->exec) != 0)
		return -1;
	h->kind = PH_HANDLER_EXEC;
	return r->s.bad ? -1 : 0;
}

/* complete: [values...] or {exec: [...], ...} or {module, symbol}. */
static int
parse_completion(struct rc *r, const struct ph_ynode *v, const char *name, struct ph_completion *c)
{
	static const char *const allowed[] = {"exec", "timeout_ms", "max_output", "env", "cwd", "persistent", "module",
					      "symbol", NULL};
	memset(c, 0, sizeof *c);
	c->name = ph_xstrdup(name);
	if (v->kind == PH_Y_SEQ) {
		c->values = ph_xcalloc(v->n + 1, sizeof *c->values);
		for (size_t i = 0; i < v->n; i++) {
			if (v->vals[i]->kind != PH_Y_SCALAR || strlen(v->vals[i]->str) != v->vals[i]->len) {
				ph_yread_problem(&r->s, v->vals[i]->line, "completion values must be strings");
				return -1;
			}
			c->values[c->nvalues++] = ph_xstrdup(v->vals[i]->str);
		}
		return 0;
	}
	if (v->kind != PH_Y_MAP || !ph_yread_keys(&r->s, v, NULL, allowed)) {
		if (v->kind != PH_Y_MAP)
			ph_yread_problem(&r->s, v->line, "'complete' must be a list of values or a handler (exec or module)");
		return -1;
	}
	if (parse_handler(r, v, &c->h) != 0)
		return -1;
	if (c->h.kind == PH_HANDLER_NONE) {
		ph_yread_problem(&r->s, v->line, "'complete' needs exec or module");
		return -1;
	}
	return 0;
}

/* scope: public or private, copied; NULL when absent or after a report. */
static char *
scope_key(struct rc *r, const struct ph_ynode *item)
{
	const struct ph_ynode *v = ph_yaml_get(item, "scope");
	if (v == NULL || ph_yaml_is_null(v))
		return NULL;
	return ph_yread_enum(&r->s, v, "scope", "public|private") < 0 ? NULL : ph_xstrdup(v->str);
}

/* The items of a section written as a list or as {ttl_ms, scope, items}
 * (whose keys the key table has read into x->opts). */
static const struct ph_ynode *
section_items(struct ph_conf_ctx *x, const char *key, const struct ph_ynode *n, enum ph_list which)
{
	const struct ph_list_opts *o = x->opts;
	const struct ph_ynode *t;
	struct rc r;
	rc_init(&r, x);
	snprintf(r.where, sizeof r.where, "%s", key);
	if (ph_yaml_is_null(n))
		return NULL;
	if (n->kind == PH_Y_SEQ)
		return n;
	if (o == NULL) {
		ph_yread_problem(&r.s, n->line, "expected a list, or a mapping with ttl_ms, scope and items");
		return NULL;
	}
	if (x->probs->n != x->before)
		return NULL; /* a key did not fit its row */
	t = ph_yaml_get(n, "ttl_ms");
	r.reg->lists[which].ttl_ms = t && !ph_yaml_is_null(t) ? o->ttl_ms : -1;
	free(r.reg->lists[which].scope);
	r.reg->lists[which].scope = o->scope ? ph_xstrdup(o->scope) : NULL;
	if (o->items == NULL)
		return NULL;
	if (o->items->kind != PH_Y_SEQ) {
		ph_yread_problem(&r.s, o->items->line, "items: expected a list");
		return NULL;
	}
	return o->items;
}

static void
set_where(struct rc *r, const char *section, size_t i, const struct ph_ynode *item, const char *namekey)
{
	const struct ph_ynode *nm = item->kind == PH_Y_MAP ? ph_yaml_get(item, namekey) : NULL;
	if (nm && nm->kind == PH_Y_SCALAR)
		snprintf(r->where, sizeof r->where, "%s[%zu] (%s)", section, i, nm->str);
	else
		snprintf(r->where, sizeof r->where, "%s[%zu]", section, i);
}

/* Reads each item of a section (tools, prompts, resources, resource
 * templates) with parse, after checking it is a mapping (else the problem
 * what); problems name the item by its idkey. Returns 0, or -1 when any
 * item had a problem. */
static int
section_each(struct ph_conf_ctx *x, const char *key, const struct ph_ynode *n, enum ph_list which,
	     const char *idkey, const char *what, void (*parse)(struct rc *, const struct ph_ynode *))
{
	const struct ph_ynode *items = section_items(x, key, n, which);
	bool bad = false;
	for (size_t i = 0; items && i < items->n; i++) {
		struct rc r;
		rc_init(&r, x);
		set_where(&r, key, i, items->vals[i], idkey);
		if (items->vals[i]->kind != PH_Y_MAP)
			ph_yread_problem(&r.s, items->vals[i]->line, "%s", what);
		else
			parse(&r, items->vals[i]);
		bad |= r.s.bad;
	}
	return bad ? -1 : 0;
}

/* ---- tools ------------------------------------------------------------------- */

static const char *const tool_keys[] = {
	"name", "title", "description", "annotations", "icons", "input", "input_schema",
	"output_schema", "requires", "_meta", "exec", "timeout_ms", "max_output", "env", "cwd", "persistent",
	"module", "symbol", "task", "task_ttl_ms", "task_inline_ms", "await", "app", "visibility",
	"auth_scopes", NULL};

/* task, task_ttl_ms, task_inline_ms. A task runs an exec handler in a
 * process the hub starts; a module's function runs inside a worker, so it
 * cannot be one. Returns 0, or -1 after a report. */
static int
tool_task(struct rc *r, const struct ph_ynode *item, struct ph_tool *t)
{
	const struct ph_ynode *v = ph_yaml_get(item, "task");
	int mode = 0;
	t->task_ttl_ms = int_key(r, item, "task_ttl_ms", 1000, 2592000000LL, -1);
	t->task_inline_ms = int_key(r, item, "task_inline_ms", 0, 60000, -1);
	t->task_await = bool_key(r, item, "await", false);
	if (v == NULL || ph_yaml_is_null(v)) {
		if (t->task_await)
			ph_yread_problem(&r->s, ph_yread_key_line(item, "await"),
					 "await is for tools that run as tasks (set task: optional or required)");
		return t->task_await ? -1 : 0;
	}
	if ((mode = ph_yread_enum(&r->s, v, "task", "off|optional|required")) < 0)
		return -1;
	t->task = (enum ph_task_mode)mode;
	if (t->task == PH_TASK_OFF && t->task_await) {
		ph_yread_problem(&r->s, ph_yread_key_line(item, "await"),
				 "await is for tools that run as tasks (set task: optional or required)");
		return -1;
	}
	if (t->task != PH_TASK_OFF && t->h.kind == PH_HANDLER_C) {
		ph_yread_problem(&r->s, ph_yread_key_line(item, "task"),
				 "a module handler cannot run as a task (it runs inside a worker); give the "
				 "tool an exec handler or set task: off");
		return -1;
	}
	if (t->task != PH_TASK_OFF && t->h.exec.persist.on) {
		ph_yread_problem(&r->s, ph_yread_key_line(item, "task"),
				 "a persistent handler cannot run as a task (a task gets a process of its own)");
		return -1;
	}
	return 0;
}

/* app and visibility. The app itself is looked up once every section is
 * read (ph_apps_prepare), so apps: may come after tools:. Returns 0, or -1
 * after a report. */
static int
tool_app(struct rc *r, const struct ph_ynode *item, struct ph_tool *t)
{
	const struct ph_ynode *v = ph_yaml_get(item, "visibility");
	size_t n;
	t->app = str_key(r, item, "app", false);
	t->app_line = ph_yread_key_line(item, "app");
	t->meta_line = ph_yread_key_line(item, "_meta");
	if (v == NULL || ph_yaml_is_null(v))
		return r->s.bad ? -1 : 0;
	if (t->app == NULL) {
		ph_yread_problem(&r->s, v->line, "'visibility' needs 'app' (it says who may call a tool of an app)");
		return -1;
	}
	if (v->kind != PH_Y_SCALAR && v->kind != PH_Y_SEQ) {
		ph_yread_problem(&r->s, v->line, "'visibility' is model, app or a list of both");
		return -1;
	}
	n = v->kind == PH_Y_SCALAR ? 1 : v->n;
	if (n == 0) {
		ph_yread_problem(&r->s, v->line, "'visibility' lists model, app or both");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		int k = ph_yread_enum(&r->s, v->kind == PH_Y_SCALAR ? v : v->vals[i], "visibility", "model|app");
		if (k < 0)
			return -1;
		t->visibility |= k == 0 ? PH_VISIBLE_MODEL : PH_VISIBLE_APP;
	}
	return 0;
}

/* A tool's input schema: built from the 'input' fields, given as
 * 'input_schema', or an object without properties when neither is set.
 * NULL after a report. Caller puts. */
static struct json_object *
tool_input(struct rc *r, const struct ph_ynode *item)
{
	const struct ph_ynode *input = ph_yaml_get(item, "input");
	struct json_object *schema;
	if (input && ph_yaml_get(item, "input_schema")) {
		ph_yread_problem(&r->s, ph_yread_key_line(item, "input_schema"), "give either 'input' (fields) or 'input_schema', not both");
		return NULL;
	}
	if (input) {
		char err[400];
		int line = input->line;
		if (ph_yaml_is_null(input)) {
			schema = json_object_new_object();
			json_object_object_add(schema, "type", json_object_new_string("object"));
			json_object_object_add(schema, "properties", json_object_new_object());
		} else if ((schema = ph_schema_from_fields(input, err, sizeof err, &line)) == NULL) {
			ph_yread_problem(&r->s, line, "input: %s", err);
		}
		return schema;
	}
	if (ph_yaml_get(item, "input_schema"))
		return schema_key(r, item, "input_schema");
	schema = json_object_new_object();
	json_object_object_add(schema, "type", json_object_new_string("object"));
	json_object_object_add(schema, "additionalProperties", json_object_new_boolean(0));
	return schema;
}

/* Sets the input schema and, when given, the output schema of t. Returns 0,
 * or -1 after a report. */
static int
tool_schemas(struct rc *r, const struct ph_ynode *item, struct ph_tool *t)
{
	struct json_object *schema = tool_input(r, item), *out = NULL;
	const char *in_key = ph_yaml_get(item, "input") ? "input" : "input_schema";
	int rc = -1;
	if (schema == NULL)
		return -1;
	if (ph_tool_set_input(r->reg, t, schema) != 0) {
		ph_yread_problem(&r->s, ph_yread_key_line(item, in_key), "%s", r->reg->err);
		goto done;
	}
	if (ph_yaml_get(item, "output_schema")) {
		if ((out = schema_key(r, item, "output_schema")) == NULL)
			goto done;
		if (ph_tool_set_output(r->reg, t, out) != 0) {
			ph_yread_problem(&r->s, ph_yread_key_line(item, "output_schema"), "%s", r->reg->err);
			goto done;
		}
	}
	rc = 0;
done:
	json_object_put(schema);
	json_object_put(out);
	return rc;
}

static void
parse_tool(struct rc *r, const struct ph_ynode *item)
{
	struct ph_tool *t = ph_xcalloc(1, sizeof *t);
	if (!ph_yread_keys(&r->s, item, NULL, tool_keys))
		goto fail;
	t->name = str_key(r, item, "name", true);
	if (t->name == NULL)
		goto fail;
	if (!ph_registry_name_ok(t->name)) {
		ph_yread_problem(&r->s, ph_yread_key_line(item, "name"), "a tool name is 1-128 of A-Z a-z 0-9 _ - .");
		goto fail;
	}
	t->title = str_key(r, item, "title", false);
	t->description = str_key(r, item, "description", false);
	t->annotations = json_key(r, item, "annotations", PH_Y_MAP);
	t->icons = json_key(r, item, "icons", PH_Y_SEQ);
	t->meta = json_key(r, item, "_meta", PH_Y_MAP);
	t->requires = strlist_key(r, item, "requires", &t->nrequires);
	ph_auth_scopes_parse(&r->s, item, &t->auth_scopes);
	for (size_t i = 0; i < t->nrequires; i++)
		if (!ph_registry_name_ok(t->requires[i]))
			ph_yread_problem(&r->s, ph_yread_key_line(item, "requires"), "'%s' is not a capability name", t->requires[i]);
	if (tool_schemas(r, item, t) != 0)
		goto fail;
	if (parse_handler(r, item, &t->h) != 0)
		goto fail;
	if (t->h.kind == PH_HANDLER_NONE) {
		ph_yread_problem(&r->s, item->line, "a tool needs a handler: 'exec' (a command) or 'module' and 'symbol'");
		goto fail;
	}
	if (tool_task(r, item, t) != 0)
		goto fail;
	if (tool_app(r, item, t) != 0)
		goto fail;
	if (r->s.bad)
		goto fail;
	if (ph_registry_add_tool(r->reg, t) == NULL)
		ph_yread_problem(&r->s, item->line, "%s", r->reg->err);
	return;
fail:
	ph_tool_free(t);
}

int
ph_conf_tools(struct ph_conf_ctx *x, const char *key, const struct ph_ynode *n)
{
	return section_each(x, key, n, PH_LIST_TOOLS, "name", "a tool is a mapping", parse_tool);
}

/* ---- prompts ------------------------------------------------------------------ */

static const char *const prompt_keys[] = {
	"name", "title", "description", "icons", "arguments", "messages", "exec", "timeout_ms",
	"max_output", "env", "cwd", "persistent", "module", "symbol", "auth_scopes", NULL};

static void
parse_prompt_args(struct rc *r, struct ph_prompt *p, const struct ph_ynode *args)
{
	static const char *const allowed[] = {"name", "title", "description", "required", "complete", NULL};
	if (args->kind != PH_Y_SEQ) {
		ph_yread_problem(&r->s, args->line, "'arguments' must be a list");
		return;
	}
	p->args = ph_xcalloc(args->n + 1, sizeof *p->args);
	for (size_t i = 0; i < args->n && !r->s.bad; i++) {
		const struct ph_ynode *a = args->vals[i];
		struct ph_prompt_arg *pa = &p->args[p->nargs];
		const struct ph_ynode *comp;
		if (a->kind != PH_Y_MAP) {
			ph_yread_problem(&r->s, a->line, "an argument is a mapping with name, description, required");
			return;
		}
		if (!ph_yread_keys(&r->s, a, NULL, allowed))
			return;
		pa->name = str_key(r, a, "name", true);
		if (pa->name == NULL)
			return;
		p->nargs++;
		for (size_t j = 0; j + 1 < p->nargs; j++)
			if (strcmp(p->args[j].name, pa->name) == 0)
				ph_yread_problem(&r->s, a->line, "argument '%s' is defined twice", pa->name);
		pa->title = str_key(r, a, "title", false);
		pa->description = str_key(r, a, "description", false);
		pa->required = bool_key(r, a, "required", false);
		if ((comp = ph_yaml_get(a, "complete")) != NULL)
			parse_completion(r, comp, pa->name, &pa->comp);
	}
}

static void
parse_prompt_msgs(struct rc *r, struct ph_prompt *p, const struct ph_ynode *msgs)
{
	static const char *const allowed[] = {"role", "text", "image", "audio", "resource", "mime_type", NULL};
	static const char *const kinds[] = {"text", "image", "audio", "resource"};
	if (msgs->kind != PH_Y_SEQ || msgs->n == 0) {
		ph_yread_problem(&r->s, msgs->line, "'messages' must be a non-empty list");
		return;
	}
	p->msgs = ph_xcalloc(msgs->n, sizeof *p->msgs);
	for (size_t i = 0; i < msgs->n && !r->s.bad; i++) {
		const struct ph_ynode *m = msgs->vals[i];
		struct ph_prompt_msg *pm = &p->msgs[p->nmsgs];
		int found = -1;
		if (m->kind != PH_Y_MAP) {
			ph_yread_problem(&r->s, m->line, "a message is a mapping: {role, text | image | audio | resource}");
			return;
		}
		if (!ph_yread_keys(&r->s, m, NULL, allowed))
			return;
		for (int k = 0; k < 4; k++) {
			if (ph_yaml_get(m, kinds[k]) == NULL)
				continue;
			if (found >= 0) {
				ph_yread_problem(&r->s, m->line, "a message has one of text, image, audio or resource");
				return;
			}
			found = k;
		}
		if (found < 0) {
			ph_yread_problem(&r->s, m->line, "a message needs text, image, audio or resource");
			return;
		}
		pm->role = str_key(r, m, "role", false);
		if (pm->role == NULL && !r->s.bad)
			pm->role = ph_xstrdup("user");
		if (pm->role && strcmp(pm->role, "user") != 0 && strcmp(pm->role, "assistant") != 0)
			ph_yread_problem(&r->s, ph_yread_key_line(m, "role"), "'role' must be user or assistant");
		pm->kind = (enum ph_msg_kind)found;
		pm->line = ph_yread_key_line(m, kinds[found]);
		pm->mime = str_key(r, m, "mime_type", false);
		if (pm->kind == PH_MSG_TEXT) {
			const struct ph_ynode *t = ph_yaml_get(m, "text");
			if (t->kind != PH_Y_SCALAR || strlen(t->str) != t->len)
				ph_yread_problem(&r->s, t->line, "'text' must be a string");
			else
				pm->text = ph_xstrdup(t->str);
		} else if (pm->kind == PH_MSG_RESOURCE) {
			pm->text = str_key(r, m, "resource", true);
		} else {
			char *f = str_key(r, m, kinds[found], true);
			if (f) {
				pm->file = ph_path_join(r->x->c->dir, f);
				free(f);
				if (pm->mime == NULL)
					pm->mime = ph_xstrdup(ph_mime_guess(pm->file));
			}
		}
		p->nmsgs++;
	}
}

static void
parse_prompt(struct rc *r, const struct ph_ynode *item)
{
	struct ph_prompt *p = ph_xcalloc(1, sizeof *p);
	const struct ph_ynode *v;
	if (!ph_yread_keys(&r->s, item, NULL, prompt_keys))
		goto fail;
	p->name = str_key(r, item, "name", true);
	if (p->name == NULL)
		goto fail;
	if (!ph_registry_name_ok(p->name)) {
		ph_yread_problem(&r->s, ph_yread_key_line(item, "name"), "a prompt name is 1-128 of A-Z a-z 0-9 _ - .");
		goto fail;
	}
	p->title = str_key(r, item, "title", false);
	p->description = str_key(r, item, "description", false);
	p->icons = json_key(r, item, "icons", PH_Y_SEQ);
	ph_auth_scopes_parse(&r->s, item, &p->auth_scopes);
	if ((v = ph_yaml_get(item, "arguments")) != NULL && !ph_yaml_is_null(v))
		parse_prompt_args(r, p, v);
	if ((v = ph_yaml_get(item, "messages")) != NULL) {
		if (has_handler_keys(item)) {
			ph_yread_problem(&r->s, ph_yread_key_line(item, "messages"), "give either 'messages' or a handler, not both");
			goto fail;
		}
		parse_prompt_msgs(r, p, v);
	} else {
		if (parse_handler(r, item, &p->h) != 0)
			goto fail;
		if (p->h.kind == PH_HANDLER_NONE) {
			ph_yread_problem(&r->s, item->line, "a prompt needs 'messages' or a handler (exec or module)");
			goto fail;
		}
	}
	if (r->s.bad)
		goto fail;
	if (ph_registry_add_prompt(r->reg, p) == NULL)
		ph_yread_problem(&r->s, item->line, "%s", r->reg->err);
	return;
fail:
	ph_prompt_free(p);
}

int
ph_conf_prompts(struct ph_conf_ctx *x, const char *key, const struct ph_ynode *n)
{
	return section_each(x, key, n, PH_LIST_PROMPTS, "name", "a prompt is a mapping", parse_prompt);
}

/* ---- resources ------------------------------------------------------------------ */

static const char *const resource_keys[] = {
	"uri", "name", "title", "description", "mime_type", "annotations", "icons", "file", "text",
	"ttl_ms", "scope", "exec", "timeout_ms", "max_output", "env", "cwd", "persistent", "module", "symbol",
	"auth_scopes", NULL};


static void
parse_cache(struct rc *r, const struct ph_ynode *item, struct ph_cache *c)
{
	c->ttl_ms = int_key(r, item, "ttl_ms", 0, 86400000, -1);
	c->scope = scope_key(r, item);
}

static void
parse_resource(struct rc *r, const struct ph_ynode *item)
{
	struct ph_resource *res = ph_xcalloc(1, sizeof *res);
	int sources = 0;
	if (!ph_yread_keys(&r->s, item, NULL, resource_keys))
		goto fail;
	res->uri = str_key(r, item, "uri", true);
	if (res->uri == NULL)
		goto fail;
	if (!ph_uri_ok(res->uri)) {
		ph_yread_problem(&r->s, ph_yread_key_line(item, "uri"), "'%s' is not a URI (scheme:rest, no spaces)", res->uri);
		goto fail;
	}
	if (strncmp(res->uri, "skill://", 8) == 0) {
		ph_yread_problem(&r->s, ph_yread_key_line(item, "uri"), "skill:// URIs belong to the skills extension");
		goto fail;
	}
	res->name = str_key(r, item, "name", false);
	if (res->name == NULL && !r->s.bad)
		res->name = ph_xstrdup(res->uri);
	res->title = str_key(r, item, "title", false);
	res->description = str_key(r, item, "description", false);
	res->mime = str_key(r, item, "mime_type", false);
	res->annotations = json_key(r, item, "annotations", PH_Y_MAP);
	res->icons = json_key(r, item, "icons", PH_Y_SEQ);
	ph_auth_scopes_parse(&r->s, item, &res->auth_scopes);
	parse_cache(r, item, &res->cache);
	sources += ph_yaml_get(item, "file") != NULL;
	sources += ph_yaml_get(item, "text") != NULL;
	sources += has_handler_keys(item);
	if (sources != 1) {
		ph_yread_problem(&r->s, item->line, "a resource needs exactly one of 'file', 'text' or a handler");
		goto fail;
	}
	if (ph_yaml_get(item, "text")) {
		const struct ph_ynode *t = ph_yaml_get(item, "text");
		if (t->kind != PH_Y_SCALAR) {
			ph_yread_problem(&r->s, t->line, "'text' must be a string");
			goto fail;
		}
		res->data = ph_xstrndup(t->str, t->len);
		res->len = t->len;
		res->has_data = true;
		if (res->mime == NULL)
			res->mime = ph_xstrdup("text/plain");
	} else if (ph_yaml_get(item, "file")) {
		char *f = str_key(r, item, "file", true);
		if (f == NULL)
			goto fail;
		res->file = ph_path_join(r->x->c->dir, f);
		res->line = ph_yread_key_line(item, "file");
		free(f);
		if (res->mime == NULL)
			res->mime = ph_xstrdup(ph_mime_guess(res->file));
	} else if (parse_handler(r, item, &res->h) != 0) {
		goto fail;
	}
	if (r->s.bad)
		goto fail;
	if (ph_registry_add_resource(r->reg, res) == NULL)
		ph_yread_problem(&r->s, item->line, "%s", r->reg->err);
	return;
fail:
	ph_resource_free(res);
}

int
ph_conf_resources(struct ph_conf_ctx *x, const char *key, const struct ph_ynode *n)
{
	return section_each(x, key, n, PH_LIST_RESOURCES, "uri", "a resource is a mapping", parse_resource);
}

/* ---- resource lists -------------------------------------------------------------------- */

static const char *const catalog_keys[] = {
	"name", "exec", "timeout_ms", "max_output", "env", "cwd", "persistent", "module", "symbol", NULL};

static void
parse_catalog(struct rc *r, const struct ph_ynode *item, size_t i)
{
	struct ph_catalog *c = ph_xcalloc(1, sizeof *c);
	c->line = item->line;
	if (!ph_yread_keys(&r->s, item, NULL, catalog_keys))
		goto fail;
	c->name = str_key(r, item, "name", false);
	if (c->name == NULL && !r->s.bad)
		c->name = ph_xasprintf("resource_lists[%zu]", i);
	if (parse_handler(r, item, &c->h) != 0)
		goto fail;
	if (c->h.kind == PH_HANDLER_NONE) {
		ph_yread_problem(&r->s, item->line, "a resource list needs a handler: exec or module");
		goto fail;
	}
	if (r->s.bad)
		goto fail;
	ph_registry_add_catalog(r->reg, c);
	return;
fail:
	ph_catalog_free(c);
}

int
ph_conf_resource_lists(struct ph_conf_ctx *x, const char *key, const struct ph_ynode *n)
{
	bool bad = false;
	if (ph_yaml_is_null(n))
		return 0;
	if (n->kind != PH_Y_SEQ) {
		struct rc r;
		rc_init(&r, x);
		snprintf(r.where, sizeof r.where, "%s", key);
		ph_yread_problem(&r.s, n->line, "expected a list of handlers ({name, exec | module, ...})");
		return -1;
	}
	for (size_t i = 0; i < n->n; i++) {
		struct rc r;
		rc_init(&r, x);
		set_where(&r, key, i, n->vals[i], "name");
		if (n->vals[i]->kind != PH_Y_MAP)
			ph_yread_problem(&r.s, n->vals[i]->line, "a resource list is a mapping");
		else
			parse_catalog(&r, n->vals[i], i);
		bad |= r.s.bad;
	}
	return bad ? -1 : 0;
}

/* A hook (sessions.on_end, subscriptions.authorize): {exec | module, ...},
 * kept in *slot as a catalog named by its key (a handler with a name for
 * its log lines). */
static int
parse_hook(struct ph_conf_ctx *x, const char *key, const struct ph_ynode *n, struct ph_catalog **slot,
	   struct rc *r)
{
	struct ph_catalog *c;
	if (n->kind != PH_Y_MAP) {
		ph_yread_problem(&r->s, n->line, "expected a handler ({exec | module, ...})");
		return -1;
	}
	(void)x;
	c = ph_xcalloc(1, sizeof *c);
	c->line = n->line;
	c->name = ph_xstrdup(key);
	if (!ph_yread_keys(&r->s, n, NULL, catalog_keys + 1) || parse_handler(r, n, &c->h) != 0 || r->s.bad ||
	    c->h.kind == PH_HANDLER_NONE) {
		if (!r->s.bad)
			ph_yread_problem(&r->s, n->line, "%s needs a handler: exec or module", key);
		ph_catalog_free(c);
		return -1;
	}
	ph_catalog_free(*slot);
	*slot = c;
	return 0;
}

/* A hook key: the handler parsed into the registry member at off. */
static int
conf_hook(struct ph_conf_ctx *x, const char *key, const struct ph_ynode *n, size_t off)
{
	struct rc r;
	if (ph_yaml_is_null(n))
		return 0;
	rc_init(&r, x);
	snprintf(r.where, sizeof r.where, "%s", key);
	return parse_hook(x, key, n, (struct ph_catalog **)(void *)((char *)r.reg + off), &r);
}

int
ph_conf_session_end(struct ph_conf_ctx *x, const char *key, const struct ph_ynode *n)
{
	return conf_hook(x, key, n, offsetof(struct ph_registry, session_end));
}

int
ph_conf_sub_authorize(struct ph_conf_ctx *x, const char *key, const struct ph_ynode *n)
{
	return conf_hook(x, key, n, offsetof(struct ph_registry, sub_authorize));
}

/* ---- resource templates ------------------------------------------------------------ */

static const char *const template_keys[] = {
	"uri_template", "name", "title", "description", "mime_type", "annotations", "icons", "dir",
	"complete", "ttl_ms", "scope", "exec", "timeout_ms", "max_output", "env", "cwd", "persistent", "module",
	"symbol", "auth_scopes", NULL};

/* uri_template of t, copied and parsed into t->ut: not skill://, with at
 * least one variable. Returns 0, or -1 after a report. */
static int
template_uri(struct rc *r, const struct ph_ynode *item, struct ph_template *t)
{
	char err[300];
	t->uri_template = str_key(r, item, "uri_template", true);
	if (t->uri_template == NULL)
		return -1;
	if (strncmp(t->uri_template, "skill://", 8) == 0) {
		ph_yread_problem(&r->s, ph_yread_key_line(item, "uri_template"), "skill:// URIs belong to the skills extension");
		return -1;
	}
	t->ut = ph_uritemplate_parse(t->uri_template, err, sizeof err);
	if (t->ut == NULL) {
		ph_yread_problem(&r->s, ph_yread_key_line(item, "uri_template"), "%s", err);
		return -1;
	}
	if (ph_uritemplate_nvars(t->ut) == 0) {
		ph_yread_problem(&r->s, ph_yread_key_line(item, "uri_template"), "a template needs at least one {variable} "
		     "(a fixed uri is a resource)");
		return -1;
	}
	return 0;
}

/* dir of t: relative to the configuration file, resolved (t->dir is the
 * real path) and a directory. Returns 0, or -1 after a report. */
static int
template_dir(struct rc *r, const struct ph_ynode *item, struct ph_template *t)
{
	char *d = str_key(r, item, "dir", true), *full, real[PATH_MAX];
	struct stat st;
	if (d == NULL)
		return -1;
	full = ph_path_join(r->x->c->dir, d);
	free(d);
	if (realpath(full, real) == NULL || stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
		ph_yread_problem(&r->s, ph_yread_key_line(item, "dir"), "'%s' is not a directory", full);
		free(full);
		return -1;
	}
	free(full);
	t->dir = ph_xstrdup(real);
	return 0;
}

/* complete of t (comp): a mapping from each variable to values or a
 * handler, into t->comps. Returns 0 (problems in an entry only set
 * r->s.bad), or -1 after reporting that comp is not a mapping. */
static int
template_completions(struct rc *r, const struct ph_ynode *comp, struct ph_template *t)
{
	if (comp->kind != PH_Y_MAP) {
		ph_yread_problem(&r->s, comp->line, "'complete' maps each variable to values or a handler");
		return -1;
	}
	t->comps = ph_xcalloc(comp->n + 1, sizeof *t->comps);
	for (size_t i = 0; i < comp->n && !r->s.bad; i++) {
		if (ph_uritemplate_find(t->ut, comp->keys[i]) < 0) {
			ph_yread_problem(&r->s, comp->key_lines[i], "'%s' is not a variable of %s", comp->keys[i],
			     t->uri_template);
			break;
		}
		if (parse_completion(r, comp->vals[i], comp->keys[i], &t->comps[t->ncomps]) == 0)
			t->ncomps++;
		else
			ph_completion_clear(&t->comps[t->ncomps]);
	}
	return 0;
}

static void
parse_template(struct rc *r, const struct ph_ynode *item)
{
	struct ph_template *t = ph_xcalloc(1, sizeof *t);
	const struct ph_ynode *comp;
	if (!ph_yread_keys(&r->s, item, NULL, template_keys))
		goto fail;
	if (template_uri(r, item, t) != 0)
		goto fail;
	t->name = str_key(r, item, "name", false);
	if (t->name == NULL && !r->s.bad)
		t->name = ph_xstrdup(t->uri_template);
	t->title = str_key(r, item, "title", false);
	t->description = str_key(r, item, "description", false);
	t->mime = str_key(r, item, "mime_type", false);
	t->annotations = json_key(r, item, "annotations", PH_Y_MAP);
	t->icons = json_key(r, item, "icons", PH_Y_SEQ);
	ph_auth_scopes_parse(&r->s, item, &t->auth_scopes);
	parse_cache(r, item, &t->cache);
	if ((ph_yaml_get(item, "dir") != NULL) == has_handler_keys(item)) {
		ph_yread_problem(&r->s, item->line, "a resource template needs exactly one of 'dir' or a handler");
		goto fail;
	}
	if (ph_yaml_get(item, "dir")) {
		if (template_dir(r, item, t) != 0)
			goto fail;
	} else if (parse_handler(r, item, &t->h) != 0) {
		goto fail;
	}
	if ((comp = ph_yaml_get(item, "complete")) != NULL && template_completions(r, comp, t) != 0)
		goto fail;
	if (r->s.bad)
		goto fail;
	if (ph_registry_add_template(r->reg, t) == NULL)
		ph_yread_problem(&r->s, item->line, "%s", r->reg->err);
	return;
fail:
	ph_template_free(t);
}

int
ph_conf_templates(struct ph_conf_ctx *x, const char *key, const struct ph_ynode *n)
{
	return section_each(x, key, n, PH_LIST_TEMPLATES, "uri_template", "a resource template is a mapping",
			    parse_template);
}

/* ---- after loading ------------------------------------------------------------------ */

int
ph_registry_prepare(struct ph_config *c, struct ph_conf_problems *probs)
{
	struct ph_registry *reg = c->registry;
	size_t max = (size_t)c->limits.resource_bytes;
	int rc = 0;
	if (reg == NULL)
		return 0;
	for (size_t i = 0; i < reg->nresources; i++) {
		struct ph_resource *r = reg->resources[i];
		if (r->file == NULL || r->has_data)
			continue;
		if (ph_read_file(r->file, max, &r->data, &r->len) != 0) {
			ph_conf_problem(probs, c->file, r->line, "resource %s: cannot read '%s': %s", r->uri,
					r->file, errno == EFBIG ? "larger than limits.resource_bytes" : ph_strerror(errno));
			rc = -1;
			continue;
		}
		r->has_data = true;
		{
			struct stat st;
			r->file_link = lstat(r->file, &st) == 0 && S_ISLNK(st.st_mode);
		}
		ph_resource_stamp(r->file, r->file_link, r->file_stamp);
	}
	for (size_t i = 0; i < reg->nprompts; i++) {
		struct ph_prompt *p = reg->prompts[i];
		for (size_t j = 0; j < p->nmsgs; j++) {
			struct ph_prompt_msg *m = &p->msgs[j];
			char *buf;
			size_t len;
			if (m->file == NULL || m->data)
				continue;
			if (ph_read_file(m->file, max, &buf, &len) != 0) {
				ph_conf_problem(probs, c->file, m->line, "prompt %s: cannot read '%s': %s", p->name,
						m->file, errno == EFBIG ? "larger than limits.resource_bytes"
								       : ph_strerror(errno));
				rc = -1;
				continue;
			}
			m->data = ph_base64(buf, len);
			free(buf);
		}
	}
	return rc;
}
