/* ph_reg_conf.c: phantom.yaml's tools, prompts, resources and
 * resource_templates sections, turned into registry items. Every problem
 * names the file, the line and the item; nothing unknown passes silently.
 * Paths are relative to the configuration file; commands are resolved and
 * modules loaded here, files are read by ph_registry_prepare once the whole
 * configuration (and so limits.resource_bytes) is known. */
#include "first.h"
#include "ph_conf.h"
#include "ph_mime.h"
#include "ph_registry.h"
#include "ph_util.h"
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct rc {
	struct ph_conf_ctx *x;
	struct ph_registry *reg;
	char where[160]; /* "tools[2] (deploy)" */
	bool bad;
};

static void PH_PRINTF(3, 4)
prob(struct rc *r, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ph_conf_vproblem(r->x->probs, r->x->file, line, r->where, fmt, ap);
	va_end(ap);
	r->bad = true;
}

static struct ph_registry *
registry(struct ph_conf_ctx *x)
{
	if (x->c->registry == NULL)
		x->c->registry = ph_registry_new();
	return x->c->registry;
}

void
ph_conf_registry_free(struct ph_config *c)
{
	/* four keys share the registry: the first call frees it */
	ph_registry_free(c->registry);
	c->registry = NULL;
}

static bool
keys_ok(struct rc *r, const struct ph_ynode *item, const char *const *allowed)
{
	bool ok = true;
	for (size_t i = 0; i < item->n; i++) {
		bool found = false;
		for (size_t j = 0; allowed[j] && !found; j++)
			found = strcmp(item->keys[i], allowed[j]) == 0;
		if (!found) {
			prob(r, item->key_lines[i], "unknown key '%s'", item->keys[i]);
			ok = false;
		}
	}
	return ok;
}

static int
key_line(const struct ph_ynode *item, const char *key)
{
	for (size_t i = 0; i < item->n; i++)
		if (strcmp(item->keys[i], key) == 0)
			return item->key_lines[i];
	return item->line;
}

/* A string value of key, copied; NULL when absent (a problem when required
 * or when it is not a non-empty string without NUL). */
static char *
str_key(struct rc *r, const struct ph_ynode *item, const char *key, bool required)
{
	const struct ph_ynode *v = ph_yaml_get(item, key);
	if (v == NULL || ph_yaml_is_null(v)) {
		if (required)
			prob(r, item->line, "'%s' is required", key);
		return NULL;
	}
	if (v->kind != PH_Y_SCALAR || v->len == 0 || strlen(v->str) != v->len) {
		prob(r, v->line, "'%s' must be a non-empty string", key);
		return NULL;
	}
	return ph_xstrdup(v->str);
}

/* An integer value of key within bounds; def when absent. */
static long long
int_key(struct rc *r, const struct ph_ynode *item, const char *key, long long min, long long max,
	long long def)
{
	const struct ph_ynode *v = ph_yaml_get(item, key);
	long long out;
	const char *e;
	if (v == NULL)
		return def;
	if (v->kind != PH_Y_SCALAR || v->quoted || ph_strtonum(v->str, min, max, &out, &e) != 0) {
		prob(r, v->line, "'%s' must be an integer from %lld to %lld", key, min, max);
		return def;
	}
	return out;
}

static bool
bool_key(struct rc *r, const struct ph_ynode *item, const char *key, bool def)
{
	const struct ph_ynode *v = ph_yaml_get(item, key);
	bool b;
	if (v == NULL)
		return def;
	if (ph_yaml_bool(v, &b) != 0) {
		prob(r, v->line, "'%s' must be true or false", key);
		return def;
	}
	return b;
}

/* A list of non-empty strings, NULL-terminated (caller frees). */
static char **
strlist_key(struct rc *r, const struct ph_ynode *item, const char *key, size_t *count)
{
	const struct ph_ynode *v = ph_yaml_get(item, key);
	char **out;
	if (count)
		*count = 0;
	if (v == NULL)
		return NULL;
	if (v->kind != PH_Y_SEQ) {
		prob(r, v->line, "'%s' must be a list of strings", key);
		return NULL;
	}
	out = ph_xcalloc(v->n + 1, sizeof *out);
	for (size_t i = 0; i < v->n; i++) {
		const struct ph_ynode *s = v->vals[i];
		if (s->kind != PH_Y_SCALAR || s->len == 0 || strlen(s->str) != s->len) {
			prob(r, s->line, "'%s'[%zu] must be a non-empty string", key, i);
			for (size_t j = 0; j < i; j++)
				free(out[j]);
			free(out);
			return NULL;
		}
		out[i] = ph_xstrdup(s->str);
	}
	if (count)
		*count = v->n;
	return out;
}

/* A map or list value passed to clients as JSON (annotations, icons). */
static struct json_object *
json_key(struct rc *r, const struct ph_ynode *item, const char *key, enum ph_ynode_kind want)
{
	const struct ph_ynode *v = ph_yaml_get(item, key);
	if (v == NULL)
		return NULL;
	if (v->kind != want) {
		prob(r, v->line, "'%s' must be a %s", key, want == PH_Y_MAP ? "mapping" : "list");
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
		enum json_tokener_error e;
		j = json_tokener_parse_verbose(v->str, &e);
		if (j == NULL || !json_object_is_type(j, json_type_object)) {
			json_object_put(j);
			prob(r, v->line, "'%s' must be a mapping or a JSON object text", key);
			return NULL;
		}
		return j;
	}
	if (v->kind != PH_Y_MAP) {
		prob(r, v->line, "'%s' must be a mapping (a JSON Schema)", key);
		return NULL;
	}
	return ph_yaml_to_json(v);
}

static bool
env_name_ok(const char *s, size_t n)
{
	if (n == 0 || !((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

static const char *const handler_keys[] = {"exec", "timeout_ms", "max_output", "env", "cwd", "module",
					   "symbol"};

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
		prob(r, key_line(item, "module"), "'exec' and 'module' exclude each other");
		return -1;
	}
	if (module) {
		char *mod = str_key(r, item, "module", true), *sym = str_key(r, item, "symbol", true);
		int rc = -1;
		for (size_t i = 0; i < PH_ARRAY_LEN(handler_keys); i++) {
			const char *k = handler_keys[i];
			if (strcmp(k, "module") != 0 && strcmp(k, "symbol") != 0 && ph_yaml_get(item, k))
				prob(r, key_line(item, k), "'%s' applies to exec handlers, not modules", k);
		}
		if (mod && sym && !r->bad) {
			h->fn = ph_registry_module(r->reg, mod, sym, dir);
			if (h->fn == NULL) {
				prob(r, key_line(item, "module"), "%s", r->reg->err);
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
			prob(r, key_line(item, "symbol"), "'symbol' needs 'module'");
		for (size_t i = 1; i < 5; i++)
			if (ph_yaml_get(item, handler_keys[i]))
				prob(r, key_line(item, handler_keys[i]), "'%s' needs 'exec'", handler_keys[i]);
		return r->bad ? -1 : 0;
	}
	{
		size_t argc = 0, nenv = 0;
		char **argv = strlist_key(r, item, "exec", &argc);
		char **env = strlist_key(r, item, "env", &nenv);
		const char *path = PH_EXEC_DEFAULT_PATH;
		char *resolved, *cwd = NULL;
		if (argv == NULL || argc == 0) {
			if (argv != NULL || ph_yaml_get(item, "exec")->kind == PH_Y_SEQ)
				prob(r, key_line(item, "exec"), "'exec' must be a non-empty list: [program, args...]");
			free(argv);
			goto bad_env;
		}
		for (size_t i = 0; i < nenv; i++) {
			const char *eq = strchr(env[i], '=');
			size_t nl = eq ? (size_t)(eq - env[i]) : strlen(env[i]);
			if (!env_name_ok(env[i], nl)) {
				prob(r, key_line(item, "env"), "env entry '%s' must be NAME or NAME=value", env[i]);
				goto bad;
			}
			if (strncmp(env[i], "PATH=", 5) == 0)
				path = env[i] + 5;
			else if (strcmp(env[i], "PATH") == 0 && getenv("PATH"))
				path = getenv("PATH");
		}
		resolved = ph_exec_resolve(argv[0], dir, path);
		if (resolved == NULL) {
			prob(r, key_line(item, "exec"), "cannot run '%s': %s", argv[0], strerror(errno));
			goto bad;
		}
		free(argv[0]);
		argv[0] = resolved;
		{
			char *c = str_key(r, item, "cwd", false);
			char real[PATH_MAX];
			struct stat st;
			cwd = c ? ph_path_join(dir, c) : ph_xstrdup(dir);
			free(c);
			if (realpath(cwd, real) == NULL || stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
				prob(r, key_line(item, "cwd"), "cwd '%s' is not a directory", cwd);
				free(cwd);
				goto bad;
			}
			free(cwd);
			cwd = ph_xstrdup(real);
		}
		h->kind = PH_HANDLER_EXEC;
		h->exec.argv = argv;
		h->exec.env = env;
		h->exec.cwd = cwd;
		h->exec.timeout_ms = int_key(r, item, "timeout_ms", 1, 86400000, 0);
		h->exec.max_output = int_key(r, item, "max_output", 1, 1073741824, 0);
		return r->bad ? -1 : 0;
bad:
		for (size_t i = 0; argv[i]; i++)
			free(argv[i]);
		free(argv);
bad_env:
		for (size_t i = 0; env && env[i]; i++)
			free(env[i]);
		free(env);
		return -1;
	}
}

/* complete: [values...] or {exec: [...], ...} or {module, symbol}. */
static int
parse_completion(struct rc *r, const struct ph_ynode *v, const char *name, struct ph_completion *c)
{
	static const char *const allowed[] = {"exec", "timeout_ms", "max_output", "env", "cwd", "module",
					      "symbol", NULL};
	memset(c, 0, sizeof *c);
	c->name = ph_xstrdup(name);
	if (v->kind == PH_Y_SEQ) {
		c->values = ph_xcalloc(v->n + 1, sizeof *c->values);
		for (size_t i = 0; i < v->n; i++) {
			if (v->vals[i]->kind != PH_Y_SCALAR || strlen(v->vals[i]->str) != v->vals[i]->len) {
				prob(r, v->vals[i]->line, "completion values must be strings");
				return -1;
			}
			c->values[c->nvalues++] = ph_xstrdup(v->vals[i]->str);
		}
		return 0;
	}
	if (v->kind != PH_Y_MAP || !keys_ok(r, v, allowed)) {
		if (v->kind != PH_Y_MAP)
			prob(r, v->line, "'complete' must be a list of values or a handler (exec or module)");
		return -1;
	}
	if (parse_handler(r, v, &c->h) != 0)
		return -1;
	if (c->h.kind == PH_HANDLER_NONE) {
		prob(r, v->line, "'complete' needs exec or module");
		return -1;
	}
	return 0;
}

static char *
scope_key(struct rc *r, const struct ph_ynode *item)
{
	char *s = str_key(r, item, "scope", false);
	if (s && strcmp(s, "public") != 0 && strcmp(s, "private") != 0) {
		prob(r, key_line(item, "scope"), "'scope' must be public or private");
		free(s);
		return NULL;
	}
	return s;
}

/* The items of a section written as a list or as {ttl_ms, scope, items}. */
static const struct ph_ynode *
section_items(struct ph_conf_ctx *x, const char *key, const struct ph_ynode *n, enum ph_list which)
{
	static const char *const allowed[] = {"ttl_ms", "scope", "items", NULL};
	struct rc r = {x, registry(x), "", false};
	const struct ph_ynode *items;
	snprintf(r.where, sizeof r.where, "%s", key);
	if (ph_yaml_is_null(n))
		return NULL;
	if (n->kind == PH_Y_SEQ)
		return n;
	if (n->kind != PH_Y_MAP) {
		prob(&r, n->line, "expected a list, or a mapping with ttl_ms, scope and items");
		return NULL;
	}
	if (!keys_ok(&r, n, allowed))
		return NULL;
	r.reg->lists[which].ttl_ms = int_key(&r, n, "ttl_ms", 0, 86400000, -1);
	free(r.reg->lists[which].scope);
	r.reg->lists[which].scope = scope_key(&r, n);
	items = ph_yaml_get(n, "items");
	if (items == NULL || ph_yaml_is_null(items))
		return NULL;
	if (items->kind != PH_Y_SEQ) {
		prob(&r, items->line, "'items' must be a list");
		return NULL;
	}
	return r.bad ? NULL : items;
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

/* ---- tools ------------------------------------------------------------------- */

static const char *const tool_keys[] = {
	"name", "title", "description", "annotations", "icons", "input", "input_schema",
	"output_schema", "requires", "_meta", "exec", "timeout_ms", "max_output", "env", "cwd",
	"module", "symbol", NULL};

static void
parse_tool(struct rc *r, const struct ph_ynode *item)
{
	struct ph_tool *t = ph_xcalloc(1, sizeof *t);
	struct json_object *schema = NULL, *out = NULL;
	const struct ph_ynode *input = ph_yaml_get(item, "input");
	if (!keys_ok(r, item, tool_keys))
		goto fail;
	t->name = str_key(r, item, "name", true);
	if (t->name == NULL)
		goto fail;
	if (!ph_registry_name_ok(t->name)) {
		prob(r, key_line(item, "name"), "a tool name is 1-128 of A-Z a-z 0-9 _ - .");
		goto fail;
	}
	t->title = str_key(r, item, "title", false);
	t->description = str_key(r, item, "description", false);
	t->annotations = json_key(r, item, "annotations", PH_Y_MAP);
	t->icons = json_key(r, item, "icons", PH_Y_SEQ);
	t->meta = json_key(r, item, "_meta", PH_Y_MAP);
	t->requires = strlist_key(r, item, "requires", &t->nrequires);
	for (size_t i = 0; i < t->nrequires; i++)
		if (!ph_registry_name_ok(t->requires[i]))
			prob(r, key_line(item, "requires"), "'%s' is not a capability name", t->requires[i]);
	if (input && ph_yaml_get(item, "input_schema")) {
		prob(r, key_line(item, "input_schema"), "give either 'input' (fields) or 'input_schema', not both");
		goto fail;
	}
	if (input) {
		char err[400];
		int line = input->line;
		if (ph_yaml_is_null(input)) {
			schema = json_object_new_object();
			json_object_object_add(schema, "type", json_object_new_string("object"));
			json_object_object_add(schema, "properties", json_object_new_object());
		} else if ((schema = ph_schema_from_fields(input, err, sizeof err, &line)) == NULL) {
			prob(r, line, "input: %s", err);
			goto fail;
		}
	} else if (ph_yaml_get(item, "input_schema")) {
		if ((schema = schema_key(r, item, "input_schema")) == NULL)
			goto fail;
	} else {
		schema = json_object_new_object();
		json_object_object_add(schema, "type", json_object_new_string("object"));
		json_object_object_add(schema, "additionalProperties", json_object_new_boolean(0));
	}
	if (ph_tool_set_input(r->reg, t, schema) != 0) {
		prob(r, key_line(item, input ? "input" : "input_schema"), "%s", r->reg->err);
		goto fail;
	}
	if (ph_yaml_get(item, "output_schema")) {
		if ((out = schema_key(r, item, "output_schema")) == NULL)
			goto fail;
		if (ph_tool_set_output(r->reg, t, out) != 0) {
			prob(r, key_line(item, "output_schema"), "%s", r->reg->err);
			goto fail;
		}
	}
	if (parse_handler(r, item, &t->h) != 0)
		goto fail;
	if (t->h.kind == PH_HANDLER_NONE) {
		prob(r, item->line, "a tool needs a handler: 'exec' (a command) or 'module' and 'symbol'");
		goto fail;
	}
	if (r->bad)
		goto fail;
	json_object_put(schema);
	json_object_put(out);
	if (ph_registry_add_tool(r->reg, t) == NULL)
		prob(r, item->line, "%s", r->reg->err);
	return;
fail:
	json_object_put(schema);
	json_object_put(out);
	ph_tool_free(t);
}

int
ph_conf_tools(struct ph_conf_ctx *x, const char *key, const struct ph_ynode *n)
{
	const struct ph_ynode *items = section_items(x, key, n, PH_LIST_TOOLS);
	bool bad = false;
	for (size_t i = 0; items && i < items->n; i++) {
		struct rc r = {x, registry(x), "", false};
		set_where(&r, key, i, items->vals[i], "name");
		if (items->vals[i]->kind != PH_Y_MAP) {
			prob(&r, items->vals[i]->line, "a tool is a mapping");
		} else {
			parse_tool(&r, items->vals[i]);
		}
		bad |= r.bad;
	}
	return bad ? -1 : 0;
}

/* ---- prompts ------------------------------------------------------------------ */

static const char *const prompt_keys[] = {
	"name", "title", "description", "icons", "arguments", "messages", "exec", "timeout_ms",
	"max_output", "env", "cwd", "module", "symbol", NULL};

static void
parse_prompt_args(struct rc *r, struct ph_prompt *p, const struct ph_ynode *args)
{
	static const char *const allowed[] = {"name", "title", "description", "required", "complete", NULL};
	if (args->kind != PH_Y_SEQ) {
		prob(r, args->line, "'arguments' must be a list");
		return;
	}
	p->args = ph_xcalloc(args->n + 1, sizeof *p->args);
	for (size_t i = 0; i < args->n && !r->bad; i++) {
		const struct ph_ynode *a = args->vals[i];
		struct ph_prompt_arg *pa = &p->args[p->nargs];
		const struct ph_ynode *comp;
		if (a->kind != PH_Y_MAP) {
			prob(r, a->line, "an argument is a mapping with name, description, required");
			return;
		}
		if (!keys_ok(r, a, allowed))
			return;
		pa->name = str_key(r, a, "name", true);
		if (pa->name == NULL)
			return;
		p->nargs++;
		for (size_t j = 0; j + 1 < p->nargs; j++)
			if (strcmp(p->args[j].name, pa->name) == 0)
				prob(r, a->line, "argument '%s' is defined twice", pa->name);
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
		prob(r, msgs->line, "'messages' must be a non-empty list");
		return;
	}
	p->msgs = ph_xcalloc(msgs->n, sizeof *p->msgs);
	for (size_t i = 0; i < msgs->n && !r->bad; i++) {
		const struct ph_ynode *m = msgs->vals[i];
		struct ph_prompt_msg *pm = &p->msgs[p->nmsgs];
		int found = -1;
		if (m->kind != PH_Y_MAP) {
			prob(r, m->line, "a message is a mapping: {role, text | image | audio | resource}");
			return;
		}
		if (!keys_ok(r, m, allowed))
			return;
		for (int k = 0; k < 4; k++) {
			if (ph_yaml_get(m, kinds[k]) == NULL)
				continue;
			if (found >= 0) {
				prob(r, m->line, "a message has one of text, image, audio or resource");
				return;
			}
			found = k;
		}
		if (found < 0) {
			prob(r, m->line, "a message needs text, image, audio or resource");
			return;
		}
		pm->role = str_key(r, m, "role", false);
		if (pm->role == NULL && !r->bad)
			pm->role = ph_xstrdup("user");
		if (pm->role && strcmp(pm->role, "user") != 0 && strcmp(pm->role, "assistant") != 0)
			prob(r, key_line(m, "role"), "'role' must be user or assistant");
		pm->kind = (enum ph_msg_kind)found;
		pm->line = key_line(m, kinds[found]);
		pm->mime = str_key(r, m, "mime_type", false);
		if (pm->kind == PH_MSG_TEXT) {
			const struct ph_ynode *t = ph_yaml_get(m, "text");
			if (t->kind != PH_Y_SCALAR || strlen(t->str) != t->len)
				prob(r, t->line, "'text' must be a string");
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
	if (!keys_ok(r, item, prompt_keys))
		goto fail;
	p->name = str_key(r, item, "name", true);
	if (p->name == NULL)
		goto fail;
	if (!ph_registry_name_ok(p->name)) {
		prob(r, key_line(item, "name"), "a prompt name is 1-128 of A-Z a-z 0-9 _ - .");
		goto fail;
	}
	p->title = str_key(r, item, "title", false);
	p->description = str_key(r, item, "description", false);
	p->icons = json_key(r, item, "icons", PH_Y_SEQ);
	if ((v = ph_yaml_get(item, "arguments")) != NULL && !ph_yaml_is_null(v))
		parse_prompt_args(r, p, v);
	if ((v = ph_yaml_get(item, "messages")) != NULL) {
		if (has_handler_keys(item)) {
			prob(r, key_line(item, "messages"), "give either 'messages' or a handler, not both");
			goto fail;
		}
		parse_prompt_msgs(r, p, v);
	} else {
		if (parse_handler(r, item, &p->h) != 0)
			goto fail;
		if (p->h.kind == PH_HANDLER_NONE) {
			prob(r, item->line, "a prompt needs 'messages' or a handler (exec or module)");
			goto fail;
		}
	}
	if (r->bad)
		goto fail;
	if (ph_registry_add_prompt(r->reg, p) == NULL)
		prob(r, item->line, "%s", r->reg->err);
	return;
fail:
	ph_prompt_free(p);
}

int
ph_conf_prompts(struct ph_conf_ctx *x, const char *key, const struct ph_ynode *n)
{
	const struct ph_ynode *items = section_items(x, key, n, PH_LIST_PROMPTS);
	bool bad = false;
	for (size_t i = 0; items && i < items->n; i++) {
		struct rc r = {x, registry(x), "", false};
		set_where(&r, key, i, items->vals[i], "name");
		if (items->vals[i]->kind != PH_Y_MAP)
			prob(&r, items->vals[i]->line, "a prompt is a mapping");
		else
			parse_prompt(&r, items->vals[i]);
		bad |= r.bad;
	}
	return bad ? -1 : 0;
}

/* ---- resources ------------------------------------------------------------------ */

static const char *const resource_keys[] = {
	"uri", "name", "title", "description", "mime_type", "annotations", "icons", "file", "text",
	"ttl_ms", "scope", "exec", "timeout_ms", "max_output", "env", "cwd", "module", "symbol", NULL};

static bool
uri_ok(const char *uri)
{
	const char *colon = strchr(uri, ':');
	if (colon == NULL || colon == uri || strlen(uri) > PH_URI_MAX)
		return false;
	for (const char *p = uri; *p; p++)
		if ((unsigned char)*p <= 0x20 || *p == 0x7f)
			return false;
	return true;
}

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
	if (!keys_ok(r, item, resource_keys))
		goto fail;
	res->uri = str_key(r, item, "uri", true);
	if (res->uri == NULL)
		goto fail;
	if (!uri_ok(res->uri)) {
		prob(r, key_line(item, "uri"), "'%s' is not a URI (scheme:rest, no spaces)", res->uri);
		goto fail;
	}
	if (strncmp(res->uri, "skill://", 8) == 0) {
		prob(r, key_line(item, "uri"), "skill:// URIs belong to the skills extension");
		goto fail;
	}
	res->name = str_key(r, item, "name", false);
	if (res->name == NULL && !r->bad)
		res->name = ph_xstrdup(res->uri);
	res->title = str_key(r, item, "title", false);
	res->description = str_key(r, item, "description", false);
	res->mime = str_key(r, item, "mime_type", false);
	res->annotations = json_key(r, item, "annotations", PH_Y_MAP);
	res->icons = json_key(r, item, "icons", PH_Y_SEQ);
	parse_cache(r, item, &res->cache);
	sources += ph_yaml_get(item, "file") != NULL;
	sources += ph_yaml_get(item, "text") != NULL;
	sources += has_handler_keys(item);
	if (sources != 1) {
		prob(r, item->line, "a resource needs exactly one of 'file', 'text' or a handler");
		goto fail;
	}
	if (ph_yaml_get(item, "text")) {
		const struct ph_ynode *t = ph_yaml_get(item, "text");
		if (t->kind != PH_Y_SCALAR) {
			prob(r, t->line, "'text' must be a string");
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
		res->line = key_line(item, "file");
		free(f);
		if (res->mime == NULL)
			res->mime = ph_xstrdup(ph_mime_guess(res->file));
	} else if (parse_handler(r, item, &res->h) != 0) {
		goto fail;
	}
	if (r->bad)
		goto fail;
	if (ph_registry_add_resource(r->reg, res) == NULL)
		prob(r, item->line, "%s", r->reg->err);
	return;
fail:
	ph_resource_free(res);
}

int
ph_conf_resources(struct ph_conf_ctx *x, const char *key, const struct ph_ynode *n)
{
	const struct ph_ynode *items = section_items(x, key, n, PH_LIST_RESOURCES);
	bool bad = false;
	for (size_t i = 0; items && i < items->n; i++) {
		struct rc r = {x, registry(x), "", false};
		set_where(&r, key, i, items->vals[i], "uri");
		if (items->vals[i]->kind != PH_Y_MAP)
			prob(&r, items->vals[i]->line, "a resource is a mapping");
		else
			parse_resource(&r, items->vals[i]);
		bad |= r.bad;
	}
	return bad ? -1 : 0;
}

/* ---- resource templates ------------------------------------------------------------ */

static const char *const template_keys[] = {
	"uri_template", "name", "title", "description", "mime_type", "annotations", "icons", "dir",
	"complete", "ttl_ms", "scope", "exec", "timeout_ms", "max_output", "env", "cwd", "module",
	"symbol", NULL};

static void
parse_template(struct rc *r, const struct ph_ynode *item)
{
	struct ph_template *t = ph_xcalloc(1, sizeof *t);
	const struct ph_ynode *comp;
	char err[300];
	if (!keys_ok(r, item, template_keys))
		goto fail;
	t->uri_template = str_key(r, item, "uri_template", true);
	if (t->uri_template == NULL)
		goto fail;
	if (strncmp(t->uri_template, "skill://", 8) == 0) {
		prob(r, key_line(item, "uri_template"), "skill:// URIs belong to the skills extension");
		goto fail;
	}
	t->ut = ph_uritemplate_parse(t->uri_template, err, sizeof err);
	if (t->ut == NULL) {
		prob(r, key_line(item, "uri_template"), "%s", err);
		goto fail;
	}
	if (ph_uritemplate_nvars(t->ut) == 0) {
		prob(r, key_line(item, "uri_template"), "a template needs at least one {variable} "
		     "(a fixed uri is a resource)");
		goto fail;
	}
	t->name = str_key(r, item, "name", false);
	if (t->name == NULL && !r->bad)
		t->name = ph_xstrdup(t->uri_template);
	t->title = str_key(r, item, "title", false);
	t->description = str_key(r, item, "description", false);
	t->mime = str_key(r, item, "mime_type", false);
	t->annotations = json_key(r, item, "annotations", PH_Y_MAP);
	t->icons = json_key(r, item, "icons", PH_Y_SEQ);
	parse_cache(r, item, &t->cache);
	if ((ph_yaml_get(item, "dir") != NULL) == has_handler_keys(item)) {
		prob(r, item->line, "a resource template needs exactly one of 'dir' or a handler");
		goto fail;
	}
	if (ph_yaml_get(item, "dir")) {
		char *d = str_key(r, item, "dir", true), *full, real[PATH_MAX];
		struct stat st;
		if (d == NULL)
			goto fail;
		full = ph_path_join(r->x->c->dir, d);
		free(d);
		if (realpath(full, real) == NULL || stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
			prob(r, key_line(item, "dir"), "'%s' is not a directory", full);
			free(full);
			goto fail;
		}
		free(full);
		t->dir = ph_xstrdup(real);
	} else if (parse_handler(r, item, &t->h) != 0) {
		goto fail;
	}
	if ((comp = ph_yaml_get(item, "complete")) != NULL) {
		if (comp->kind != PH_Y_MAP) {
			prob(r, comp->line, "'complete' maps each variable to values or a handler");
			goto fail;
		}
		t->comps = ph_xcalloc(comp->n + 1, sizeof *t->comps);
		for (size_t i = 0; i < comp->n && !r->bad; i++) {
			if (ph_uritemplate_find(t->ut, comp->keys[i]) < 0) {
				prob(r, comp->key_lines[i], "'%s' is not a variable of %s", comp->keys[i],
				     t->uri_template);
				break;
			}
			if (parse_completion(r, comp->vals[i], comp->keys[i], &t->comps[t->ncomps]) == 0)
				t->ncomps++;
			else
				ph_completion_clear(&t->comps[t->ncomps]);
		}
	}
	if (r->bad)
		goto fail;
	if (ph_registry_add_template(r->reg, t) == NULL)
		prob(r, item->line, "%s", r->reg->err);
	return;
fail:
	ph_template_free(t);
}

int
ph_conf_templates(struct ph_conf_ctx *x, const char *key, const struct ph_ynode *n)
{
	const struct ph_ynode *items = section_items(x, key, n, PH_LIST_TEMPLATES);
	bool bad = false;
	for (size_t i = 0; items && i < items->n; i++) {
		struct rc r = {x, registry(x), "", false};
		set_where(&r, key, i, items->vals[i], "uri_template");
		if (items->vals[i]->kind != PH_Y_MAP)
			prob(&r, items->vals[i]->line, "a resource template is a mapping");
		else
			parse_template(&r, items->vals[i]);
		bad |= r.bad;
	}
	return bad ? -1 : 0;
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
					r->file, errno == EFBIG ? "larger than limits.resource_bytes" : strerror(errno));
			rc = -1;
			continue;
		}
		r->has_data = true;
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
								       : strerror(errno));
				rc = -1;
				continue;
			}
			m->data = ph_base64(buf, len);
			free(buf);
		}
	}
	return rc;
}
