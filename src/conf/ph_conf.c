/* ph_conf.c: the configuration key table and the loader that walks it. */
#include "first.h"
#include "ph_conf.h"
#include "ph_auth.h"
#include "ph_registry.h"
#include "ph_skills.h"
#include "ph_util.h"
#include "ph_state.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum ktype {
	K_SECTION, /* a map whose keys are further table entries */
	K_STR,
	K_INT,
	K_BOOL,
	K_ENUM,    /* one of the words in .enums, separated by '|' */
	K_LIST,    /* "*" or a list of strings */
	K_CUSTOM,  /* parsed by a feature module's parser */
};

struct key {
	const char *name; /* dotted path */
	enum ktype type;
	long long min, max;
	const char *def; /* default, as YAML text; NULL = unset */
	bool reloadable;
	size_t off;
	const char *enums;
	const char *doc;
	ph_conf_parse_fn parse; /* K_CUSTOM */
	ph_conf_free_fn free;   /* K_CUSTOM, may be NULL */
};

#define OFF(f) offsetof(struct ph_config, f)
#define MAXLL 9223372036854775807LL

/* The one table. Order here is the order of conf/phantom.yaml and phantom.yaml(5). */
static const struct key keys[] = {
	{"server", K_SECTION, 0, 0, NULL, true, 0, NULL, "What the server says about itself."},
	{"server.name", K_STR, 1, 128, "phantom", true, OFF(server.name), NULL,
	 "serverInfo.name reported to clients"},
	{"server.version", K_STR, 1, 64, PACKAGE_VERSION, true, OFF(server.version), NULL,
	 "serverInfo.version"},
	{"server.title", K_STR, 0, 256, NULL, true, OFF(server.title), NULL, "serverInfo.title"},
	{"server.instructions", K_STR, 0, 65536, NULL, true, OFF(server.instructions), NULL,
	 "instructions returned by server/discover and initialize"},
	{"server.page_size", K_INT, 1, 1000, "100", true, OFF(server.page_size), NULL,
	 "items per page of every list method"},
	{"server.ttl_ms", K_INT, 0, 86400000, "0", true, OFF(server.ttl_ms), NULL,
	 "ttlMs cache hint of server/discover and of lists without their own"},
	{"server.scope", K_ENUM, 0, 0, "private", true, OFF(server.scope), "public|private",
	 "cacheScope of those results"},
	{"workers", K_INT, 0, 256, "4", true, OFF(workers), NULL,
	 "worker processes; 0 or 1 serves from a single process without a master"},
	{"max_requests", K_INT, 0, MAXLL, "10000", true, OFF(max_requests), NULL,
	 "a worker is replaced after this many requests (0: never)"},
	{"shutdown_timeout", K_INT, 0, 3600, "30", false, OFF(shutdown_timeout), NULL,
	 "seconds in-flight requests get to finish on SIGTERM or reload"},
	{"listen", K_STR, 1, 4096, NULL, false, OFF(listen), NULL,
	 "HOST:PORT or unix:PATH to bind; unset: the socket inherited on fd 0"},
	{"http", K_SECTION, 0, 0, NULL, true, 0, NULL, "Rules every HTTP request passes."},
	{"http.origins", K_LIST, 0, 0, "[]", true, OFF(http.origins), NULL,
	 "allowed Origin values (scheme://host[:port]) or \"*\"; a request without Origin is allowed"},
	{"http.hosts", K_LIST, 0, 0, "[localhost, 127.0.0.1, \"[::1]\"]", true, OFF(http.hosts), NULL,
	 "allowed Host names (any port) or \"*\""},
	{"http.max_body", K_INT, 64, 1073741824, "4194304", true, OFF(http.max_body), NULL,
	 "largest request body in bytes (413 above)"},
	{"limits", K_SECTION, 0, 0, NULL, true, 0, NULL, "Parser limits."},
	{"limits.json_depth", K_INT, 2, 1000, "64", true, OFF(limits.json_depth), NULL,
	 "deepest JSON nesting accepted in a request"},
	{"limits.yaml_depth", K_INT, 2, 1000, "32", true, OFF(limits.yaml_depth), NULL,
	 "deepest YAML nesting accepted in configuration, manifests and frontmatter"},
	{"limits.exec_timeout_ms", K_INT, 1, 86400000, "30000", true, OFF(limits.exec_timeout_ms), NULL,
	 "wall-clock time an exec handler may run before SIGTERM (per handler: timeout_ms)"},
	{"limits.exec_grace_ms", K_INT, 0, 60000, "1000", true, OFF(limits.exec_grace_ms), NULL,
	 "time between SIGTERM and SIGKILL to the handler's process group"},
	{"limits.exec_max_output", K_INT, 1024, 1073741824, "4194304", true, OFF(limits.exec_max_output),
	 NULL, "bytes an exec handler may write on stdout (per handler: max_output)"},
	{"limits.exec_cpu_s", K_INT, 0, 86400, "60", true, OFF(limits.exec_cpu_s), NULL,
	 "RLIMIT_CPU seconds of an exec handler (0: inherited)"},
	{"limits.exec_memory", K_INT, 0, 1099511627776LL, "2147483648", true, OFF(limits.exec_memory),
	 NULL, "RLIMIT_AS bytes of an exec handler (0: inherited)"},
	{"limits.exec_files", K_INT, 0, 1048576, "64", true, OFF(limits.exec_files), NULL,
	 "RLIMIT_NOFILE of an exec handler (0: inherited)"},
	{"limits.exec_procs", K_INT, 0, 1048576, "256", true, OFF(limits.exec_procs), NULL,
	 "RLIMIT_NPROC of an exec handler, counted per user (0: inherited)"},
	{"limits.resource_bytes", K_INT, 1, 1073741824, "16777216", true, OFF(limits.resource_bytes), NULL,
	 "largest file served by a resource, resource template or prompt image"},
	{"limits.completion_values", K_INT, 1, 100, "100", true, OFF(limits.completion_values), NULL,
	 "most values in one completion/complete answer"},
	{"subscriptions", K_SECTION, 0, 0, NULL, true, 0, NULL,
	 "subscriptions/listen streams (each holds a worker while open)."},
	{"subscriptions.max_ms", K_INT, 1000, 86400000, "300000", true, OFF(subscriptions.max_ms), NULL,
	 "a listen stream ends with a result after this long; the client listens again"},
	{"subscriptions.keepalive_ms", K_INT, 100, 3600000, "15000", true,
	 OFF(subscriptions.keepalive_ms), NULL, "keep-alive comment interval on listen streams"},
	{"subscriptions.max_streams", K_INT, 0, 4096, "0", true, OFF(subscriptions.max_streams), NULL,
	 "listen streams open at once across all workers (0: half the workers, at least 1)"},
	{"request_state", K_CUSTOM, 0, 0, NULL, true, 0, NULL,
	 "sealing of requestState for multi-round requests: secret_file or secret_env (at least 32 "
	 "bytes), salt, max_age (seconds, default 300), max_size (bytes, default 65536), "
	 "previous_secret_files (accepted for opening only); without a secret a random key is made "
	 "at each start", ph_state_conf_parse, ph_state_conf_free},
	{"log", K_SECTION, 0, 0, NULL, true, 0, NULL, "Request log on stderr."},
	{"log.json", K_BOOL, 0, 0, "false", true, OFF(log.json), NULL,
	 "write each request log line as a JSON object"},
	{"auth", K_CUSTOM, 0, 0, NULL, true, 0, NULL,
	 "authentication (mode: none|bearer|remote_user|exec), tokens, WWW-Authenticate "
	 "parameters, OAuth metadata and per-principal allow-lists; see docs/auth.md",
	 ph_auth_conf_parse, ph_auth_conf_free},
	{"tools", K_CUSTOM, 0, 0, NULL, true, 0, NULL,
	 "tools: a list, or {ttl_ms, scope, items: [...]} (see phantom.yaml(5))", ph_conf_tools,
	 ph_conf_registry_free},
	{"prompts", K_CUSTOM, 0, 0, NULL, true, 0, NULL, "prompts: a list, or {ttl_ms, scope, items}",
	 ph_conf_prompts, ph_conf_registry_free},
	{"resources", K_CUSTOM, 0, 0, NULL, true, 0, NULL, "static resources: a list, or {ttl_ms, scope, items}",
	 ph_conf_resources, ph_conf_registry_free},
	{"resource_templates", K_CUSTOM, 0, 0, NULL, true, 0, NULL,
	 "resource templates: a list, or {ttl_ms, scope, items}", ph_conf_templates, ph_conf_registry_free},
	{"skills", K_CUSTOM, 0, 0, NULL, true, 0, NULL,
	 "skills manifest and limits: manifest, max_files, max_bytes, max_depth, digest_cache",
	 ph_skills_conf_parse, ph_skills_conf_free},
};

void
ph_conf_vproblem(struct ph_conf_problems *p, const char *file, int line, const char *prefix,
		 const char *fmt, va_list ap)
{
	struct ph_buf b;
	char tmp[1024];
	ph_buf_init(&b);
	ph_buf_printf(&b, "%s:%d: ", file ? file : "(defaults)", line);
	if (prefix)
		ph_buf_printf(&b, "%s: ", prefix);
	vsnprintf(tmp, sizeof tmp, fmt, ap);
	ph_buf_adds(&b, tmp);
	p->v = ph_xrealloc(p->v, (p->n + 1) * sizeof *p->v);
	p->v[p->n++] = ph_buf_steal(&b);
}

void
ph_conf_problem(struct ph_conf_problems *p, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ph_conf_vproblem(p, file, line, NULL, fmt, ap);
	va_end(ap);
}

void
ph_conf_problems_free(struct ph_conf_problems *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i]);
	free(p->v);
	p->v = NULL;
	p->n = 0;
}

static const struct key *
find_key(const char *name)
{
	for (size_t i = 0; i < PH_ARRAY_LEN(keys); i++)
		if (strcmp(keys[i].name, name) == 0)
			return &keys[i];
	return NULL;
}

static void
strlist_free(struct ph_strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof *l);
}

struct ctx {
	struct ph_config *c;
	struct ph_conf_problems *probs;
	const char *file;
};

static bool
enum_has(const char *enums, const char *w)
{
	size_t wl = strlen(w);
	const char *p = enums;
	while (*p) {
		const char *bar = strchr(p, '|');
		size_t l = bar ? (size_t)(bar - p) : strlen(p);
		if (l == wl && strncmp(p, w, l) == 0)
			return true;
		if (!bar)
			break;
		p = bar + 1;
	}
	return false;
}

/* Stores one value for key k from node n. Reports a problem and returns -1 when it does not fit. */
static int
set_value(struct ctx *x, const struct key *k, const struct ph_ynode *n)
{
	char *base = (char *)x->c;
	switch (k->type) {
	case K_STR: {
		char **dst = (char **)(base + k->off);
		if (n->kind != PH_Y_SCALAR) {
			ph_conf_problem(x->probs, x->file, n->line, "%s: expected a string", k->name);
			return -1;
		}
		if ((long long)n->len < k->min || (long long)n->len > k->max) {
			ph_conf_problem(x->probs, x->file, n->line,
					"%s: length must be between %lld and %lld", k->name, k->min, k->max);
			return -1;
		}
		if (strlen(n->str) != n->len) {
			ph_conf_problem(x->probs, x->file, n->line, "%s: contains a NUL byte", k->name);
			return -1;
		}
		free(*dst);
		*dst = ph_xstrdup(n->str);
		return 0;
	}
	case K_INT: {
		long long *dst = (long long *)(base + k->off), v;
		const char *err;
		if (n->kind != PH_Y_SCALAR || n->quoted) {
			ph_conf_problem(x->probs, x->file, n->line, "%s: expected an integer", k->name);
			return -1;
		}
		if (ph_strtonum(n->str, k->min, k->max, &v, &err) != 0) {
			ph_conf_problem(x->probs, x->file, n->line, "%s: '%s' %s (allowed %lld..%lld)",
					k->name, n->str, err, k->min, k->max);
			return -1;
		}
		*dst = v;
		return 0;
	}
	case K_BOOL: {
		bool *dst = (bool *)(base + k->off);
		if (ph_yaml_bool(n, dst) != 0) {
			ph_conf_problem(x->probs, x->file, n->line, "%s: expected true or false", k->name);
			return -1;
		}
		return 0;
	}
	case K_ENUM: {
		char **dst = (char **)(base + k->off);
		if (n->kind != PH_Y_SCALAR || !enum_has(k->enums, n->str)) {
			ph_conf_problem(x->probs, x->file, n->line, "%s: expected one of %s", k->name,
					k->enums);
			return -1;
		}
		free(*dst);
		*dst = ph_xstrdup(n->str);
		return 0;
	}
	case K_LIST: {
		struct ph_strlist *dst = (struct ph_strlist *)(base + k->off);
		strlist_free(dst);
		if (n->kind == PH_Y_SCALAR && strcmp(n->str, "*") == 0) {
			dst->any = true;
			return 0;
		}
		if (n->kind != PH_Y_SEQ) {
			ph_conf_problem(x->probs, x->file, n->line,
					"%s: expected a list of strings or \"*\"", k->name);
			return -1;
		}
		for (size_t i = 0; i < n->n; i++) {
			const struct ph_ynode *it = n->vals[i];
			if (it->kind != PH_Y_SCALAR || it->len == 0 || strlen(it->str) != it->len) {
				ph_conf_problem(x->probs, x->file, it->line,
						"%s[%zu]: expected a non-empty string", k->name, i);
				return -1;
			}
			if (strcmp(it->str, "*") == 0)
				dst->any = true;
			dst->v = ph_xrealloc(dst->v, (dst->n + 1) * sizeof *dst->v);
			dst->v[dst->n++] = ph_xstrdup(it->str);
		}
		return 0;
	}
	case K_CUSTOM: {
		struct ph_conf_ctx cx = {x->c, x->probs, x->file};
		return k->parse(&cx, k->name, n);
	}
	case K_SECTION:
		break;
	}
	return -1;
}

static void set_default(struct ph_config *c, const struct key *k);

/* Walks a map node whose keys are prefix.KEY entries of the table. */
static void
walk(struct ctx *x, const struct ph_ynode *map, const char *prefix)
{
	if (map->kind != PH_Y_MAP) {
		ph_conf_problem(x->probs, x->file, map->line, "%s: expected a mapping",
				prefix[0] ? prefix : "top level");
		return;
	}
	for (size_t i = 0; i < map->n; i++) {
		char *name = prefix[0] ? ph_xasprintf("%s.%s", prefix, map->keys[i])
				       : ph_xstrdup(map->keys[i]);
		const struct key *k = find_key(name);
		const struct ph_ynode *v = map->vals[i];
		if (k == NULL) {
			ph_conf_problem(x->probs, x->file, map->key_lines[i], "unknown key '%s'", name);
		} else if (k->type == K_SECTION) {
			if (!ph_yaml_is_null(v))
				walk(x, v, name);
		} else if (ph_yaml_is_null(v) && k->type != K_CUSTOM) {
			/* "key:" or "key: ~" means the default, as if it were absent */
			set_default(x->c, k);
		} else {
			set_value(x, k, v);
		}
		free(name);
	}
}

/* Stores the default of key k in c; a key without a default is unset (NULL,
 * empty list, 0, false). Aborts on a default the key itself refuses: that is
 * a programming error in the table. */
static void
set_default(struct ph_config *c, const struct key *k)
{
	struct ph_conf_problems dummy = {0};
	struct ctx x = {c, &dummy, "(defaults)"};
	char *base = (char *)c, *err = NULL;
	struct ph_ynode *n;
	if (k->type == K_SECTION || k->type == K_CUSTOM)
		return;
	if (k->def == NULL) {
		if (k->type == K_STR || k->type == K_ENUM) {
			free(*(char **)(base + k->off));
			*(char **)(base + k->off) = NULL;
		} else if (k->type == K_LIST) {
			strlist_free((struct ph_strlist *)(base + k->off));
		} else if (k->type == K_INT) {
			*(long long *)(base + k->off) = 0;
		} else if (k->type == K_BOOL) {
			*(bool *)(base + k->off) = false;
		}
		return;
	}
	n = ph_yaml_parse(k->def, strlen(k->def), 4, &err);
	if (n == NULL) {
		free(err);
		abort();
	}
	set_value(&x, k, n);
	ph_yaml_free(n);
	if (dummy.n != 0)
		abort();
}

static void
apply_defaults(struct ph_config *c)
{
	for (size_t i = 0; i < PH_ARRAY_LEN(keys); i++)
		set_default(c, &keys[i]);
}

struct ph_config *
ph_conf_load_buf(const char *name, const char *dir, const char *buf, size_t len,
		 struct ph_conf_problems *probs)
{
	struct ph_config *c = ph_xcalloc(1, sizeof *c);
	size_t before = probs->n;
	char *err = NULL;
	apply_defaults(c);
	c->file = name ? ph_xstrdup(name) : NULL;
	c->dir = ph_xstrdup(dir ? dir : ".");
	if (buf != NULL) {
		struct ctx x = {c, probs, name};
		struct ph_ynode *root = ph_yaml_parse(buf, len, (int)c->limits.yaml_depth, &err);
		if (root == NULL) {
			/* err is "LINE: message" */
			ph_conf_problem(probs, name, atoi(err), "%s", strchr(err, ' ') ? strchr(err, ' ') + 1 : err);
			free(err);
		} else {
			walk(&x, root, "");
			ph_yaml_free(root);
		}
	}
	if (probs->n != before) {
		ph_conf_free(c);
		return NULL;
	}
	return c;
}

struct ph_config *
ph_conf_load(const char *path, struct ph_conf_problems *probs)
{
	char *buf = NULL, *dir;
	size_t len = 0;
	struct ph_config *c;
	if (path == NULL)
		return ph_conf_load_buf(NULL, ".", NULL, 0, probs);
	if (ph_read_file(path, 16 << 20, &buf, &len) != 0) {
		ph_conf_problem(probs, path, 0, "cannot read configuration: %s", strerror(errno));
		return NULL;
	}
	dir = ph_dirname(path);
	c = ph_conf_load_buf(path, dir, buf, len, probs);
	free(dir);
	free(buf);
	return c;
}

void
ph_conf_free(struct ph_config *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < PH_ARRAY_LEN(keys); i++) {
		const struct key *k = &keys[i];
		char *base = (char *)c;
		if (k->type == K_STR || k->type == K_ENUM)
			free(*(char **)(base + k->off));
		else if (k->type == K_LIST)
			strlist_free((struct ph_strlist *)(base + k->off));
		else if (k->type == K_CUSTOM && k->free)
			k->free(c);
	}
	free(c->file);
	free(c->dir);
	free(c);
}

static bool
value_equal(const struct key *k, const struct ph_config *a, const struct ph_config *b)
{
	const char *pa = (const char *)a + k->off, *pb = (const char *)b + k->off;
	switch (k->type) {
	case K_STR:
	case K_ENUM: {
		const char *sa = *(char *const *)pa, *sb = *(char *const *)pb;
		return (sa == NULL && sb == NULL) || (sa && sb && strcmp(sa, sb) == 0);
	}
	case K_INT:
		return *(const long long *)pa == *(const long long *)pb;
	case K_BOOL:
		return *(const bool *)pa == *(const bool *)pb;
	case K_LIST: {
		const struct ph_strlist *la = (const void *)pa, *lb = (const void *)pb;
		if (la->n != lb->n || la->any != lb->any)
			return false;
		for (size_t i = 0; i < la->n; i++)
			if (strcmp(la->v[i], lb->v[i]) != 0)
				return false;
		return true;
	}
	case K_SECTION:
	case K_CUSTOM:
		return true;
	}
	return true;
}

size_t
ph_conf_unreloadable_changes(const struct ph_config *a, const struct ph_config *b, char ***names)
{
	size_t n = 0;
	*names = NULL;
	for (size_t i = 0; i < PH_ARRAY_LEN(keys); i++) {
		if (keys[i].reloadable || keys[i].type == K_SECTION)
			continue;
		if (!value_equal(&keys[i], a, b)) {
			*names = ph_xrealloc(*names, (n + 1) * sizeof **names);
			(*names)[n++] = ph_xstrdup(keys[i].name);
		}
	}
	return n;
}

void
ph_conf_dump_keys(void *fp)
{
	static const char *const tn[] = {"section", "string", "integer", "boolean", "enum", "list",
					 "custom"};
	for (size_t i = 0; i < PH_ARRAY_LEN(keys); i++) {
		const struct key *k = &keys[i];
		fprintf(fp, "%s\t%s", k->name, tn[k->type]);
		if (k->type == K_INT)
			fprintf(fp, "\t%lld..%lld", k->min, k->max);
		else if (k->type == K_ENUM)
			fprintf(fp, "\t%s", k->enums);
		else
			fprintf(fp, "\t-");
		fprintf(fp, "\t%s\t%s\t%s\n", k->def ? k->def : "-",
			k->reloadable ? "reloadable" : "restart", k->doc);
	}
}
