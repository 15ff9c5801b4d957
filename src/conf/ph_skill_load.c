/* ph_skill_load.c: the `skills:` section of phantom.yaml and the manifest it
 * names. Everything a request needs is built here, at start or reload:
 * the routes (path grammar, parameters and their patterns, nesting), every
 * skill's file list (who owns which file), templates and their
 * placeholders, SKILL.md frontmatter, the limits and the default listing
 * (the directories are walked and their files checked by ph_skill_scan.c).
 * Every problem is reported as MANIFEST:LINE: message, and any problem
 * fails the load (phantom-fcgi -t lists them all). */
#include "first.h"
#include "ph_skill_scan.h"
#include "ph_skills.h"
#include "ph_conf.h"
#include "ph_fs.h"
#include "ph_exec_conf.h"
#include "ph_sections.h"
#include "ph_yaml.h"
#include "ph_yread.h"
#include <errno.h>
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define DEFAULT_PATTERN "[A-Za-z0-9._~-]+"

/* ---- freeing ------------------------------------------------------------- */

static void
fcache_clear(struct ph_fcache *c)
{
	free(c->src);
	json_object_put(c->fm);
	memset(c, 0, sizeof *c);
}

static void
skill_free(struct ph_skill *k)
{
	free(k->path);
	ph_skill_segs_free(k->segs, k->nsegs);
	for (size_t i = 0; i < k->nparams; i++) {
		free(k->params[i].name);
		free(k->params[i].pattern);
		if (k->params[i].re_ok)
			regfree(&k->params[i].re);
	}
	free(k->params);
	free(k->dir);
	if (k->h.exec.argv) {
		for (size_t i = 0; k->h.exec.argv[i]; i++)
			free(k->h.exec.argv[i]);
		free(k->h.exec.argv);
	}
	free(k->h.exec.env);
	free(k->h.exec.cwd);
	ph_exec_spec_clear(&k->list_h.exec);
	json_object_put(k->fm);
	for (size_t i = 0; i < k->nfiles; i++) {
		free(k->files[i].rel);
		free(k->files[i].disk);
		free(k->files[i].disk_rel);
		fcache_clear(&k->files[i].c);
	}
	free(k->files);
	for (size_t i = 0; i < k->ntree; i++)
		free(k->tree[i].rel);
	free(k->tree);
	free(k->anc);
	free(k->desc);
	ph_yread_strv_free(k->auth_scopes.v); /* NULL-terminated */
	ph_yread_strv_free(k->need.v);
	for (size_t i = 0; i < k->nlist; i++) {
		for (size_t j = 0; j < k->nparams; j++)
			free(k->list[i][j]);
		free(k->list[i]);
	}
	free(k->list);
}

void
ph_skills_conf_free(struct ph_config *c)
{
	struct ph_skills_conf *sc = c->skills;
	if (sc == NULL)
		return;
	for (size_t i = 0; i < sc->n; i++)
		skill_free(&sc->skills[i]);
	free(sc->skills);
	free(sc->match_order);
	for (size_t i = 0; i < sc->nlisting; i++)
		free(sc->listing[i].key);
	free(sc->listing);
	free(sc->manifest);
	free(sc);
	c->skills = NULL;
}

/* ---- small parsers ---------------------------------------------------------- */

static bool
lit_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_' || c == '~';
}

static bool
param_name_valid(const char *s)
{
	if (!((*s >= 'a' && *s <= 'z') || *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

/* Splits and checks a manifest path (phantom-behaviour §1.2). Returns 0, or
 * -1 after reporting. */
static int
parse_path(struct lctx *L, struct ph_skill *k, const char *path, int line)
{
	const char *p = path;
	if (*path == '\0') {
		PROB(L, line, "skill path is empty");
		return -1;
	}
	for (;;) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);
		char *seg = ph_xstrndup(p, n);
		bool first = k->nsegs == 0, last = slash == NULL;
		k->segs = ph_xrealloc(k->segs, (k->nsegs + 1) * sizeof *k->segs);
		k->segs[k->nsegs++] = seg;
		if (n == 0) {
			PROB(L, line, "skill path '%s' has an empty segment", path);
			return -1;
		}
		if (k->nsegs >= PH_SKILL_MAX_SEGS) {
			PROB(L, line, "skill path '%s' has too many segments", path);
			return -1;
		}
		if (seg[0] == ':') {
			if (first) {
				PROB(L, line, "skill path '%s': the first segment cannot be a parameter",
				     path);
				return -1;
			}
			if (last) {
				PROB(L, line, "skill path '%s': the last segment is the skill name and "
				     "cannot be a parameter", path);
				return -1;
			}
			if (!param_name_valid(seg + 1)) {
				PROB(L, line, "skill path '%s': invalid parameter name '%s'", path, seg);
				return -1;
			}
		} else {
			for (size_t i = 0; i < n; i++) {
				if (!lit_char(seg[i]) || (first && seg[i] >= 'A' && seg[i] <= 'Z')) {
					PROB(L, line, "invalid skill path '%s': segments are letters, digits, "
					     "- . _ ~ or :parameters, and the first segment is lowercase",
					     path);
					return -1;
				}
			}
			if (strcmp(seg, ".") == 0 || strcmp(seg, "..") == 0) {
				PROB(L, line, "skill path '%s' has a '%s' segment", path, seg);
				return -1;
			}
		}
		if (last)
			break;
		p = slash + 1;
	}
	if (!ph_skill_name_valid(k->segs[k->nsegs - 1])) {
		PROB(L, line, "skill path '%s': the last segment '%s' is the skill name and must be "
		     "1-64 lowercase letters, digits and single hyphens", path, k->segs[k->nsegs - 1]);
		return -1;
	}
	return 0;
}

static struct ph_skill_param *
find_param(struct ph_skill *k, const char *name)
{
	for (size_t i = 0; i < k->nparams; i++)
		if (strcmp(k->params[i].name, name) == 0)
			return &k->params[i];
	return NULL;
}

static bool
value_matches(const struct ph_skill_param *p, const char *v)
{
	return *v != '\0' && strchr(v, '/') == NULL && strcmp(v, ".") != 0 && strcmp(v, "..") != 0 &&
	       ph_utf8_valid(v, strlen(v)) && regexec(&p->re, v, 0, NULL, 0) == 0;
}

/* One parameter for every :name segment of k's path, without a pattern
 * yet. Returns 0, or -1 after reporting a name used twice. */
static int
path_params(struct lctx *L, struct ph_skill *k)
{
	for (size_t i = 0; i < k->nsegs; i++) {
		if (k->segs[i][0] != ':')
			continue;
		if (find_param(k, k->segs[i] + 1) != NULL) {
			PROB(L, k->line, "skill path '%s' uses parameter '%s' twice", k->path, k->segs[i]);
			return -1;
		}
		k->params = ph_xrealloc(k->params, (k->nparams + 1) * sizeof *k->params);
		memset(&k->params[k->nparams], 0, sizeof *k->params);
		k->params[k->nparams].name = ph_xstrdup(k->segs[i] + 1);
		k->params[k->nparams].seg = i;
		k->nparams++;
	}
	return 0;
}

/* The patterns the params mapping n gives, copied into k's parameters.
 * Returns 0, or -1 after reporting (the other entries are still read). */
static int
given_patterns(struct lctx *L, struct ph_skill *k, const struct ph_ynode *n)
{
	int rc = 0;
	for (size_t i = 0; i < n->n; i++) {
		struct ph_skill_param *p = find_param(k, n->keys[i]);
		const struct ph_ynode *v = n->vals[i], *pat;
		if (p == NULL) {
			PROB(L, n->key_lines[i], "params: '%s' is not a parameter of '%s'",
			     n->keys[i], k->path);
			rc = -1;
			continue;
		}
		if (v->kind != PH_Y_MAP) {
			PROB(L, v->line, "params.%s: expected a mapping with 'pattern'", n->keys[i]);
			rc = -1;
			continue;
		}
		for (size_t j = 0; j < v->n; j++)
			if (strcmp(v->keys[j], "pattern") != 0) {
				PROB(L, v->key_lines[j], "params.%s: unknown key '%s'", n->keys[i],
				     v->keys[j]);
				rc = -1;
			}
		pat = ph_yaml_get(v, "pattern");
		if (pat == NULL || pat->kind != PH_Y_SCALAR || pat->len == 0 ||
		    strlen(pat->str) != pat->len) {
			PROB(L, v->line, "params.%s.pattern: expected a regular expression",
			     n->keys[i]);
			rc = -1;
			continue;
		}
		free(p->pattern);
		p->pattern = ph_xstrdup(pat->str);
	}
	return rc;
}

/* Compiles every parameter's pattern (the default when none is given),
 * anchored to the whole segment. Returns 0, or -1 after reporting. */
static int
compile_patterns(struct lctx *L, struct ph_skill *k)
{
	int rc = 0;
	for (size_t i = 0; i < k->nparams; i++) {
		struct ph_skill_param *p = &k->params[i];
		char *anchored;
		int e;
		if (p->pattern == NULL)
			p->pattern = ph_xstrdup(DEFAULT_PATTERN);
		/* the whole segment must match */
		anchored = ph_xasprintf("^(%s)$", p->pattern);
		e = regcomp(&p->re, anchored, REG_EXTENDED | REG_NOSUB);
		free(anchored);
		if (e != 0) {
			char msg[256];
			regerror(e, &p->re, msg, sizeof msg);
			PROB(L, k->line, "params.%s.pattern '%s': %s", p->name, p->pattern, msg);
			rc = -1;
		} else {
			p->re_ok = true;
		}
	}
	return rc;
}

/* The parameters of k: every :name of the path, with the pattern params
 * (n, may be NULL) gives or the default. Returns 0, or -1 after reporting. */
static int
parse_params(struct lctx *L, struct ph_skill *k, const struct ph_ynode *n)
{
	int rc = 0;
	if (path_params(L, k) != 0)
		return -1;
	if (n != NULL && !ph_yaml_is_null(n)) {
		if (n->kind != PH_Y_MAP) {
			PROB(L, n->line, "params: expected a mapping of parameter names");
			return -1;
		}
		rc = given_patterns(L, k, n);
	}
	if (compile_patterns(L, k) != 0)
		rc = -1;
	return rc;
}

static const struct ph_exec_bounds skill_exec_bounds;

/* list: concrete parameter values for skills/list. Items are mappings of
 * parameter -> value, or plain values when the path has one parameter; or
 * a handler ({exec: [...], timeout_ms, max_output}) that gives them per
 * request. */
static int
parse_list(struct lctx *L, struct ph_skill *k, const struct ph_ynode *n, const char *mdir)
{
	int rc = 0;
	if (n == NULL || ph_yaml_is_null(n))
		return 0;
	if (k->nparams == 0) {
		PROB(L, n->line, "list: '%s' has no parameters to list", k->path);
		return -1;
	}
	if (n->kind == PH_Y_MAP) {
		for (size_t i = 0; i < n->n; i++)
			if (strcmp(n->keys[i], "exec") != 0 && strcmp(n->keys[i], "timeout_ms") != 0 &&
			    strcmp(n->keys[i], "max_output") != 0) {
				PROB(L, n->key_lines[i], "list: unknown key '%s' (a handler has exec, "
				     "timeout_ms, max_output)", n->keys[i]);
				return -1;
			}
		if (ph_yaml_get(n, "exec") == NULL) {
			PROB(L, n->line, "list: a handler needs exec: [program, args...]");
			return -1;
		}
		if (ph_exec_spec_parse(&L->s, n, &skill_exec_bounds, mdir, &k->list_h.exec) != 0)
			return -1;
		k->list_h.kind = PH_HANDLER_EXEC;
		return 0;
	}
	if (n->kind != PH_Y_SEQ) {
		PROB(L, n->line, "list: expected a list of parameter values, or a handler {exec: [...]}");
		return -1;
	}
	for (size_t i = 0; i < n->n; i++) {
		const struct ph_ynode *it = n->vals[i];
		char **vals = ph_xcalloc(k->nparams, sizeof *vals);
		bool ok = true;
		if (it->kind == PH_Y_SCALAR && k->nparams == 1 && strlen(it->str) == it->len) {
			vals[0] = ph_xstrdup(it->str);
		} else if (it->kind == PH_Y_MAP) {
			for (size_t j = 0; j < it->n; j++) {
				struct ph_skill_param *p = find_param(k, it->keys[j]);
				const struct ph_ynode *v = it->vals[j];
				if (p == NULL || v->kind != PH_Y_SCALAR || strlen(v->str) != v->len) {
					PROB(L, it->key_lines[j], "list[%zu]: '%s' is not a parameter of '%s'"
					     " with a plain value", i, it->keys[j], k->path);
					ok = false;
					continue;
				}
				free(vals[p - k->params]);
				vals[p - k->params] = ph_xstrdup(v->str);
			}
		} else {
			PROB(L, it->line, "list[%zu]: expected a mapping of parameter values", i);
			ok = false;
		}
		for (size_t j = 0; ok && j < k->nparams; j++) {
			struct ph_skill_param *p = &k->params[j];
			if (vals[j] == NULL) {
				PROB(L, it->line, "list[%zu]: no value for parameter '%s'", i, p->name);
				ok = false;
			} else if (p->re_ok && !value_matches(p, vals[j])) {
				PROB(L, it->line, "list[%zu]: '%s' does not match the pattern of '%s'", i,
				     vals[j], p->name);
				ok = false;
			}
		}
		if (!ok) {
			for (size_t j = 0; j < k->nparams; j++)
				free(vals[j]);
			free(vals);
			rc = -1;
			continue;
		}
		k->list = ph_xrealloc(k->list, (k->nlist + 1) * sizeof *k->list);
		k->list[k->nlist++] = vals;
	}
	return rc;
}

static int
parse_cache(struct lctx *L, struct ph_skill *k, const struct ph_ynode *n)
{
	const struct ph_ynode *t = ph_yaml_get(n, "ttl_ms"), *s = ph_yaml_get(n, "scope");
	long long v;
	if (n->kind != PH_Y_MAP || t == NULL || s == NULL) {
		PROB(L, n->line, "cache: requires ttl_ms (a non-negative integer) and scope "
		     "(public or private)");
		return -1;
	}
	for (size_t i = 0; i < n->n; i++)
		if (strcmp(n->keys[i], "ttl_ms") != 0 && strcmp(n->keys[i], "scope") != 0) {
			PROB(L, n->key_lines[i], "cache: unknown key '%s'", n->keys[i]);
			return -1;
		}
	if (ph_yread_int(&L->s, t, "cache.ttl_ms", 0, INT32_MAX, &v) != 0 ||
	    ph_yread_enum(&L->s, s, "cache.scope", "public|private") < 0)
		return -1;
	k->has_cache = true;
	k->ttl_ms = v;
	k->pub = strcmp(s->str, "public") == 0;
	return 0;
}

/* A dynamic skill: exec (argv, the program relative to the manifest or on
 * the default PATH), timeout_ms, max_output; no dir. The bounds are those of
 * every exec handler (phantom.yaml(5), EXEC HANDLERS); the command runs in
 * the manifest's directory. */
static const struct ph_exec_bounds skill_exec_bounds = {
	.argv_key = "exec",
	.max_args = SIZE_MAX,
	.timeout_min = 1,
	.timeout_max = PH_EXEC_TIMEOUT_MAX_MS,
	.output_min = 1,
	.output_max = PH_EXEC_OUTPUT_MAX,
	.cwd_dir = true,
	.persistent = true,
};

static int
parse_exec(struct lctx *L, struct ph_skill *k, const struct ph_ynode *n, const char *mdir)
{
	char prefix[512];
	const char *saved = L->s.prefix;
	int rc;
	if (!k->dynamic) {
		PROB(L, n->line, "skill '%s': exec is only for dynamic skills (dynamic: true)", k->path);
		return -1;
	}
	if (ph_yaml_get(n, "dir") != NULL) {
		PROB(L, n->line, "skill '%s': a dynamic skill has no dir; its exec handler makes the "
		     "files", k->path);
		return -1;
	}
	if (ph_yaml_get(n, "exec") == NULL) {
		PROB(L, n->line, "skill '%s': a dynamic skill needs exec: [program, args...]", k->path);
		return -1;
	}
	snprintf(prefix, sizeof prefix, "skill '%s'", k->path);
	L->s.prefix = prefix;
	rc = ph_exec_spec_parse(&L->s, n, &skill_exec_bounds, mdir, &k->h.exec);
	L->s.prefix = saved;
	if (rc != 0)
		return -1;
	k->h.kind = PH_HANDLER_EXEC;
	k->dir = ph_xstrdup("");
	return 0;
}

static int
parse_entry(struct lctx *L, struct ph_skill *k, const struct ph_ynode *n, const char *mdir)
{
	static const char *const known[] = {"path", "dir", "cache", "params", "list", "dynamic", "exec",
					    "timeout_ms", "max_output", "persistent", "auth_scopes"};
	const struct ph_ynode *v;
	int rc = 0;
	k->line = n->line;
	if (n->kind != PH_Y_MAP) {
		PROB(L, n->line, "skills: each entry must be a mapping with 'path' and 'dir'");
		return -1;
	}
	for (size_t i = 0; i < n->n; i++) {
		bool found = false;
		for (size_t j = 0; j < PH_ARRAY_LEN(known); j++)
			found = found || strcmp(n->keys[i], known[j]) == 0;
		if (!found) {
			PROB(L, n->key_lines[i], "unknown key '%s' in a skill entry", n->keys[i]);
			rc = -1;
		}
	}
	v = ph_yaml_get(n, "path");
	if (v == NULL || v->kind != PH_Y_SCALAR || strlen(v->str) != v->len) {
		PROB(L, n->line, "skill entry needs a 'path' string");
		return -1;
	}
	k->path = ph_xstrdup(v->str);
	if (parse_path(L, k, k->path, v->line) != 0)
		return -1;
	if (parse_params(L, k, ph_yaml_get(n, "params")) != 0)
		rc = -1;
	if (rc == 0 && parse_list(L, k, ph_yaml_get(n, "list"), mdir) != 0)
		rc = -1;
	if ((v = ph_yaml_get(n, "cache")) != NULL && !ph_yaml_is_null(v) && parse_cache(L, k, v) != 0)
		rc = -1;
	if ((v = ph_yaml_get(n, "dynamic")) != NULL && ph_yread_bool(&L->s, v, "dynamic", &k->dynamic) != 0)
		rc = -1;
	ph_auth_scopes_parse(&L->s, n, &k->auth_scopes);
	if (ph_yaml_get(n, "exec") != NULL || ph_yaml_get(n, "timeout_ms") != NULL ||
	    ph_yaml_get(n, "max_output") != NULL || ph_yaml_get(n, "persistent") != NULL || k->dynamic) {
		if (parse_exec(L, k, n, mdir) != 0)
			rc = -1;
		return rc;
	}
	v = ph_yaml_get(n, "dir");
	if (v == NULL || v->kind != PH_Y_SCALAR || v->len == 0 || strlen(v->str) != v->len) {
		PROB(L, n->line, "skill '%s' needs a 'dir' (relative to the manifest)", k->path);
		return -1;
	} else {
		char *joined = ph_path_join(mdir, v->str);
		char *real = realpath(joined, NULL);
		struct stat st;
		if (real == NULL || stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
			PROB(L, v->line, "skill '%s': dir '%s' is not a directory (%s)", k->path, joined,
			     real ? "not a directory" : strerror(errno));
			free(real);
			rc = -1;
		} else {
			k->dir = real;
		}
		free(joined);
	}
	return rc;
}

/* ---- routes: duplicates, nesting, precedence ---------------------------------- */

static bool
is_param(const char *seg)
{
	return seg[0] == ':';
}

enum rel { R_NONE, R_SAME, R_NESTED, R_MIXED_SAME, R_MIXED_NESTED };

/* How route b relates to route a (a no deeper than b). */
static enum rel
relate(const struct ph_skill *a, const struct ph_skill *b)
{
	bool mixed = false;
	if (a->nsegs > b->nsegs)
		return R_NONE;
	for (size_t i = 0; i < a->nsegs; i++) {
		bool pa = is_param(a->segs[i]), pb = is_param(b->segs[i]);
		if (!pa && !pb && strcmp(a->segs[i], b->segs[i]) != 0)
			return R_NONE;
		if (pa != pb)
			mixed = true;
	}
	if (a->nsegs == b->nsegs)
		return mixed ? R_MIXED_SAME : R_SAME;
	return mixed ? R_MIXED_NESTED : R_NESTED;
}

static void
push_idx(size_t **v, size_t *n, size_t x)
{
	*v = ph_xrealloc(*v, (*n + 1) * sizeof **v);
	(*v)[(*n)++] = x;
}


/* A nested skill is read through the skills it is nested in: it needs
 * their auth_scopes as well as its own. */
static void
scopes_add(struct ph_auth_scopes *as, char *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		bool have = false;
		for (size_t j = 0; j < as->n && !have; j++)
			have = strcmp(as->v[j], v[i]) == 0;
		if (have)
			continue;
		as->v = ph_xrealloc(as->v, (as->n + 2) * sizeof *as->v);
		as->v[as->n++] = ph_xstrdup(v[i]);
		as->v[as->n] = NULL;
	}
}

static void
scopes_needed(const struct ph_skills_conf *sc, struct ph_skill *k)
{
	scopes_add(&k->need, k->auth_scopes.v, k->auth_scopes.n);
	for (size_t i = 0; i < k->nanc; i++)
		scopes_add(&k->need, sc->skills[k->anc[i]].auth_scopes.v, sc->skills[k->anc[i]].auth_scopes.n);
}
/* Match order: deeper routes first, then a literal segment before a
 * parameter (segment by segment), then by path. */
static int
match_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct ph_skills_conf *sc = ctx;
	const struct ph_skill *a = &sc->skills[*(const size_t *)pa];
	const struct ph_skill *b = &sc->skills[*(const size_t *)pb];
	if (a->nsegs != b->nsegs)
		return a->nsegs > b->nsegs ? -1 : 1;
	for (size_t i = 0; i < a->nsegs; i++) {
		bool x = is_param(a->segs[i]), y = is_param(b->segs[i]);
		if (x != y)
			return x ? 1 : -1;
	}
	return strcmp(a->path, b->path);
}

static int
routes(struct lctx *L)
{
	struct ph_skills_conf *sc = L->sc;
	int rc = 0;
	for (size_t i = 0; i < sc->n; i++) {
		for (size_t j = 0; j < sc->n; j++) {
			struct ph_skill *a = &sc->skills[i], *b = &sc->skills[j];
			enum rel r;
			if (i == j || a->nsegs > b->nsegs || (a->nsegs == b->nsegs && i > j))
				continue;
			r = relate(a, b);
			if (r == R_SAME) {
				PROB(L, b->line, "skill path '%s' is the same route as '%s' (line %d)",
				     b->path, a->path, a->line);
				rc = -1;
			} else if (r == R_MIXED_NESTED) {
				PROB(L, b->line, "skill '%s' is nested in '%s' (line %d) but does not use "
				     "the same parameters at the same places", b->path, a->path, a->line);
				rc = -1;
			} else if (r == R_NESTED) {
				bool bad = false;
				for (size_t s = a->nsegs; s < b->nsegs; s++)
					bad = bad || is_param(b->segs[s]);
				if (bad) {
					PROB(L, b->line, "nested skill '%s' cannot have parameters below '%s' "
					     "(line %d)", b->path, a->path, a->line);
					rc = -1;
					continue;
				}
				push_idx(&b->anc, &b->nanc, i);
				push_idx(&a->desc, &a->ndesc, j);
			}
		}
	}
	for (size_t i = 0; i < sc->n; i++) {
		struct ph_skill *k = &sc->skills[i];
		if (k->dynamic && k->ndesc > 0) {
			PROB(L, sc->skills[k->desc[0]].line, "skill '%s' cannot be nested in the dynamic "
			     "skill '%s' (line %d)", sc->skills[k->desc[0]].path, k->path, k->line);
			rc = -1;
		}
	}
	/* ancestors deepest first */
	for (size_t i = 0; i < sc->n; i++) {
		struct ph_skill *k = &sc->skills[i];
		for (size_t x = 1; x < k->nanc; x++)
			for (size_t y = x; y > 0 && sc->skills[k->anc[y]].nsegs >
					       sc->skills[k->anc[y - 1]].nsegs; y--) {
				size_t t = k->anc[y];
				k->anc[y] = k->anc[y - 1];
				k->anc[y - 1] = t;
			}
	}
	for (size_t i = 0; i < sc->n; i++)
		scopes_needed(sc, &sc->skills[i]);
	sc->match_order = ph_xcalloc(sc->n, sizeof *sc->match_order);
	for (size_t i = 0; i < sc->n; i++)
		sc->match_order[i] = i;
	if (sc->n > 1)
		qsort_r(sc->match_order, sc->n, sizeof *sc->match_order, match_cmp, sc);
	return rc;
}

/* ---- the default listing, the manifest ------------------------------------------ */

static int
listing_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ph_listing *)a)->key, ((const struct ph_listing *)b)->key);
}

static void
build_listing(struct ph_skills_conf *sc)
{
	for (size_t i = 0; i < sc->n; i++) {
		struct ph_skill *k = &sc->skills[i];
		size_t rows = k->nparams ? k->nlist : 1;
		for (size_t r = 0; r < rows; r++) {
			struct ph_listing *l;
			struct ph_buf key;
			ph_buf_init(&key);
			for (size_t s = 0; s < k->nsegs; s++) {
				const char *seg = k->segs[s];
				if (s)
					ph_buf_addc(&key, '/');
				if (is_param(seg)) {
					for (size_t p = 0; p < k->nparams; p++)
						if (k->params[p].seg == s)
							seg = k->list[r][p];
				}
				ph_buf_adds(&key, seg);
			}
			sc->listing = ph_xrealloc(sc->listing, (sc->nlisting + 1) * sizeof *sc->listing);
			l = &sc->listing[sc->nlisting++];
			l->skill = i;
			l->vals = k->nparams ? k->list[r] : NULL;
			l->key = ph_buf_steal(&key);
		}
	}
	if (sc->nlisting > 1)
		qsort(sc->listing, sc->nlisting, sizeof *sc->listing, listing_cmp);
}

static int
skill_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ph_skill *)a)->path, ((const struct ph_skill *)b)->path);
}

/* Reads and builds everything the manifest describes into L->sc. */
static void
load_manifest(struct lctx *L)
{
	struct ph_skills_conf *sc = L->sc;
	char *buf = NULL, *err = NULL, *mdir;
	size_t len = 0;
	struct ph_ynode *root, *list;
	bool bad = false;
	if (ph_read_file(sc->manifest, 16 << 20, &buf, &len) != 0) {
		/* blamed on the line that names it: the manifest has no line yet */
		ph_conf_problem(L->probs, L->cfile, L->cline, "skills.manifest: cannot read %s: %s",
				sc->manifest, ph_strerror(errno));
		return;
	}
	root = ph_yaml_parse(buf, len, L->yaml_depth, &err);
	free(buf);
	if (root == NULL) {
		const char *sp = strchr(err, ' ');
		PROB(L, atoi(err), "%s", sp ? sp + 1 : err);
		free(err);
		return;
	}
	if (root->kind != PH_Y_MAP) {
		PROB(L, root->line, "the manifest must be a mapping with a 'skills' list");
		ph_yaml_free(root);
		return;
	}
	for (size_t i = 0; i < root->n; i++)
		if (strcmp(root->keys[i], "skills") != 0)
			PROB(L, root->key_lines[i], "unknown key '%s' in the manifest", root->keys[i]);
	list = ph_yaml_get(root, "skills");
	if (list != NULL && !ph_yaml_is_null(list) && list->kind != PH_Y_SEQ) {
		PROB(L, list->line, "skills: expected a list of skill entries");
		ph_yaml_free(root);
		return;
	}
	mdir = ph_dirname(sc->manifest);
	if (list != NULL && list->kind == PH_Y_SEQ) {
		sc->skills = ph_xcalloc(list->n ? list->n : 1, sizeof *sc->skills);
		for (size_t i = 0; i < list->n; i++) {
			struct ph_skill *k = &sc->skills[sc->n++];
			if (parse_entry(L, k, list->vals[i], mdir) != 0)
				bad = true;
		}
	}
	free(mdir);
	ph_yaml_free(root);
	if (bad)
		return;
	if (sc->n > 1)
		qsort(sc->skills, sc->n, sizeof *sc->skills, skill_cmp);
	if (routes(L) != 0)
		return;
	for (size_t i = 0; i < sc->n; i++)
		if (!sc->skills[i].dynamic)
			ph_skill_scan(L, i);
	if ((int)L->probs->n != L->before)
		return;
	for (size_t i = 0; i < sc->n; i++)
		ph_skill_build_tree(L, i);
	build_listing(sc);
}

/* ---- the phantom.yaml section ------------------------------------------------- */

/* Returns the line of the section's 'manifest:' value, or of the section. */
static int
manifest_line(const struct ph_ynode *n)
{
	const struct ph_ynode *m = ph_yaml_get(n, "manifest");
	return m != NULL ? m->line : n->line;
}

int
ph_skills_conf_parse(struct ph_conf_ctx *x, const char *key, const struct ph_ynode *n)
{
	const struct ph_skills_opts *o = x->opts;
	struct ph_skills_conf *sc;
	struct lctx L;
	(void)key;
	if (ph_yaml_is_null(n))
		return 0;
	if (o == NULL) {
		ph_conf_problem(x->probs, x->file, n->line, "skills: expected a mapping with 'manifest'");
		return -1;
	}
	if (sodium_init() < 0) {
		ph_conf_problem(x->probs, x->file, n->line, "skills: libsodium failed to initialise");
		return -1;
	}
	if (o->manifest == NULL) {
		if (x->probs->n == x->before)
			ph_conf_problem(x->probs, x->file, n->line, "skills: 'manifest' is required");
		return -1;
	}
	if (x->probs->n != x->before)
		return -1; /* a key did not fit its row */
	if (x->c->skills != NULL)
		ph_skills_conf_free(x->c);
	sc = ph_xcalloc(1, sizeof *sc);
	x->c->skills = sc;
	sc->max_files = o->max_files;
	sc->max_bytes = o->max_bytes;
	sc->max_depth = o->max_depth;
	sc->digest_cache = o->digest_cache;
	sc->manifest = ph_path_join(x->c->dir, o->manifest);
	memset(&L, 0, sizeof L);
	L.probs = x->probs;
	L.mfile = sc->manifest;
	L.s = (struct ph_ysink){x->probs, sc->manifest, NULL, false};
	L.sc = sc;
	L.yaml_depth = (int)x->c->limits.yaml_depth;
	sc->yaml_depth = L.yaml_depth;
	L.before = (int)x->probs->n;
	L.cfile = x->file;
	L.cline = manifest_line(n);
	load_manifest(&L);
	return (int)x->probs->n == L.before ? 0 : -1;
}
