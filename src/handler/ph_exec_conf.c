/* ph_exec_conf.c: the exec handler's keys (ph_exec_conf.h), read the same
 * way for handlers, dynamic skills and the authenticator. */
#include "first.h"
#include "ph_exec_conf.h"
#include "ph_config.h"
#include "ph_util.h"
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const struct ph_exec_bounds ph_exec_handler_bounds = {
	.argv_key = "exec",
	.section = NULL,
	.max_args = SIZE_MAX,
	.timeout_min = 1,
	.timeout_max = PH_EXEC_TIMEOUT_MAX_MS,
	.timeout_def = 0,
	.output_min = 1,
	.output_max = PH_EXEC_OUTPUT_MAX,
	.output_def = 0,
	.env_cwd = true,
	.cwd_dir = true,
	.persistent = true,
};

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

/* The key's name in messages: SECTION.KEY or KEY (static buffer of the call). */
static const char *
qual(const struct ph_exec_bounds *b, const char *key, char *buf, size_t sz)
{
	if (b->section == NULL)
		return key;
	snprintf(buf, sz, "%s.%s", b->section, key);
	return buf;
}

/* An optional bounded integer key; def when absent. Returns 0 or -1 after a report. */
static int
bounded(struct ph_ysink *s, const struct ph_ynode *map, const struct ph_exec_bounds *b, const char *key,
	long long min, long long max, long long def, long long *out)
{
	const struct ph_ynode *v = ph_yaml_get(map, key);
	char nb[64];
	*out = def;
	if (v == NULL)
		return 0;
	if (ph_yread_num(v, min, max, out) != 0) {
		ph_yread_problem(s, v->line, "%s: expected an integer from %lld to %lld",
				 qual(b, key, nb, sizeof nb), min, max);
		*out = def;
		return -1;
	}
	return 0;
}

/* The program argv0 as an absolute path (caller frees), or NULL after a
 * report. path is the PATH the command will get. */
static char *
resolve(struct ph_ysink *s, const struct ph_exec_bounds *b, const struct ph_ynode *v, const char *argv0,
	const char *dir, const char *path)
{
	char nb[64], *full;
	const char *name = qual(b, b->argv_key, nb, sizeof nb);
	full = ph_exec_resolve(argv0, dir, path);
	if (full != NULL)
		return full;
	if (strchr(argv0, '/') != NULL) {
		char *tried = ph_path_join(dir, argv0);
		ph_yread_problem(s, v->line, "%s: cannot run '%s': %s is not executable (%s)", name, argv0,
				 tried, strerror(errno));
		free(tried);
	} else {
		/* a program beside the file, named as a shell would not find it */
		char *here = ph_path_join(dir, argv0);
		bool beside = access(here, X_OK) == 0;
		free(here);
		ph_yread_problem(s, v->line, "%s: cannot run '%s': not found in PATH (%s)%s%s", name, argv0,
				 path, beside ? "; for the one beside this file write ./" : "", beside ? argv0 : "");
	}
	return NULL;
}

void
ph_exec_spec_clear(struct ph_exec_spec *spec)
{
	ph_yread_strv_free(spec->argv);
	ph_yread_strv_free(spec->env);
	free(spec->cwd);
	memset(spec, 0, sizeof *spec);
}

/* The timeout_ms and max_output keys into spec, each within the bounds of
 * b. Returns 0, or -1 after reporting either. */
static int
parse_limits(struct ph_ysink *s, const struct ph_ynode *map, const struct ph_exec_bounds *b,
	     struct ph_exec_spec *spec)
{
	int rc = 0;
	rc |= bounded(s, map, b, "timeout_ms", b->timeout_min, b->timeout_max, b->timeout_def,
		      &spec->timeout_ms);
	rc |= bounded(s, map, b, "max_output", b->output_min, b->output_max, b->output_def,
		      &spec->max_output);
	return rc;
}

/* persistent: true | false | {max_calls, idle_ms, max_rss, start} into
 * spec->persist, the defaults filling what the mapping leaves out. Returns
 * 0, or -1 after a report. */
static int
parse_persistent(struct ph_ysink *s, const struct ph_ynode *map, const struct ph_exec_bounds *b,
		 struct ph_exec_spec *spec)
{
	static const char *const keys[] = {"max_calls", "idle_ms", "max_rss", "start", NULL};
	const struct ph_ynode *st;
	const struct ph_ynode *v = ph_yaml_get(map, "persistent");
	struct ph_exec_persist *p = &spec->persist;
	char nb[64];
	const char *name = qual(b, "persistent", nb, sizeof nb);
	int rc = 0;
	p->max_calls = PH_PERSIST_MAX_CALLS;
	p->idle_ms = PH_PERSIST_IDLE_MS;
	p->max_rss = 0;
	if (!b->persistent || v == NULL || ph_yaml_is_null(v))
		return 0;
	if (v->kind == PH_Y_SCALAR)
		return ph_yread_bool(s, v, name, &p->on);
	if (v->kind != PH_Y_MAP) {
		ph_yread_problem(s, v->line, "%s: expected true, false or a mapping {max_calls, idle_ms, max_rss, start}",
				 name);
		return -1;
	}
	if (!ph_yread_keys(s, v, name, keys))
		return -1;
	p->on = true;
	rc |= bounded(s, v, b, "max_calls", 1, 1000000000, PH_PERSIST_MAX_CALLS, &p->max_calls);
	rc |= bounded(s, v, b, "idle_ms", 1, 86400000, PH_PERSIST_IDLE_MS, &p->idle_ms);
	rc |= bounded(s, v, b, "max_rss", 0, 1LL << 40, 0, &p->max_rss);
	if ((st = ph_yaml_get(v, "start")) != NULL)
		rc |= ph_yread_bool(s, st, "start", &p->start);
	return rc;
}

/* True when v, the command key named name, is a list of 1 to b->max_args
 * items; false after a report. */
static bool
argv_shape_ok(struct ph_ysink *s, const struct ph_exec_bounds *b, const struct ph_ynode *v,
	      const char *name)
{
	if (v->kind == PH_Y_SEQ && v->n > 0 && v->n <= b->max_args)
		return true;
	if (b->max_args == SIZE_MAX)
		ph_yread_problem(s, v->line, "%s: expected a non-empty list: [program, args...]", name);
	else
		ph_yread_problem(s, v->line, "%s: expected a list of 1 to %zu strings: [program, args...]",
				 name, b->max_args);
	return false;
}

/* The env allow-list into spec->env (where b has one), each entry NAME or
 * NAME=value; *path becomes the PATH the command will get when the list
 * sets or passes one (borrowed from spec->env or the environment). Returns
 * 0, or -1 after a report. */
static int
parse_env(struct ph_ysink *s, const struct ph_ynode *map, const struct ph_exec_bounds *b,
	  struct ph_exec_spec *spec, const char **path)
{
	const struct ph_ynode *e;
	char nb[64];
	if (!b->env_cwd || (e = ph_yaml_get(map, "env")) == NULL)
		return 0;
	spec->env = ph_yread_strlist(s, e, qual(b, "env", nb, sizeof nb), 0, SIZE_MAX, SIZE_MAX, NULL);
	if (spec->env == NULL)
		return -1;
	for (size_t i = 0; spec->env[i]; i++) {
		const char *ev = spec->env[i], *eq = strchr(ev, '=');
		if (!env_name_ok(ev, eq ? (size_t)(eq - ev) : strlen(ev))) {
			ph_yread_problem(s, e->vals[i]->line, "env entry '%s' must be NAME or NAME=value", ev);
			return -1;
		}
		if (strncmp(ev, "PATH=", 5) == 0)
			*path = ev + 5;
		else if (strcmp(ev, "PATH") == 0 && getenv("PATH"))
			*path = getenv("PATH");
	}
	return 0;
}

/* The working directory into spec->cwd (caller's spec owns it) as a real
 * path: the cwd key relative to dir, else dir itself where b says so.
 * Returns 0, or -1 after a report. */
static int
parse_cwd(struct ph_ysink *s, const struct ph_ynode *map, const struct ph_exec_bounds *b,
	  const char *dir, struct ph_exec_spec *spec)
{
	const struct ph_ynode *e;
	char nb[64], real[PATH_MAX];
	struct stat st;
	if (b->env_cwd && (e = ph_yaml_get(map, "cwd")) != NULL) {
		const char *c = ph_yread_str(s, e, qual(b, "cwd", nb, sizeof nb), 1, SIZE_MAX);
		char *full;
		if (c == NULL)
			return -1;
		full = ph_path_join(dir, c);
		if (realpath(full, real) == NULL || stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
			ph_yread_problem(s, e->line, "cwd '%s' is not a directory", full);
			free(full);
			return -1;
		}
		free(full);
		spec->cwd = ph_xstrdup(real);
	} else if (b->cwd_dir) {
		if (realpath(dir, real) == NULL || stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
			ph_yread_problem(s, map->line, "cwd '%s' is not a directory", dir);
			return -1;
		}
		spec->cwd = ph_xstrdup(real);
	}
	return 0;
}

int
ph_exec_spec_parse(struct ph_ysink *s, const struct ph_ynode *map, const struct ph_exec_bounds *b,
		   const char *dir, struct ph_exec_spec *spec)
{
	const struct ph_ynode *v = ph_yaml_get(map, b->argv_key);
	const char *path = PH_EXEC_DEFAULT_PATH;
	char nb[64], *resolved;
	const char *name = qual(b, b->argv_key, nb, sizeof nb);
	size_t argc = 0;
	memset(spec, 0, sizeof *spec);
	if (v == NULL) /* no command: only the limits, so that a bad one is still reported */
		return parse_limits(s, map, b, spec) | parse_persistent(s, map, b, spec);
	if (!argv_shape_ok(s, b, v, name))
		return -1;
	spec->argv = ph_yread_strlist(s, v, name, 1, b->max_args, b->max_args == SIZE_MAX ? SIZE_MAX : 4096,
				      &argc);
	if (spec->argv == NULL || parse_env(s, map, b, spec, &path) != 0)
		goto fail;
	resolved = resolve(s, b, v, spec->argv[0], dir, path);
	if (resolved == NULL)
		goto fail;
	free(spec->argv[0]);
	spec->argv[0] = resolved;
	if (parse_cwd(s, map, b, dir, spec) != 0 || parse_limits(s, map, b, spec) != 0 ||
	    parse_persistent(s, map, b, spec) != 0)
		goto fail;
	return 0;
fail:
	ph_exec_spec_clear(spec);
	return -1;
}

void
ph_exec_limits_of(const struct ph_config *c, struct ph_exec_limits *lim)
{
	lim->timeout_ms = c->limits.exec_timeout_ms;
	lim->grace_ms = c->limits.exec_grace_ms;
	lim->max_output = c->limits.exec_max_output;
	lim->cpu_s = c->limits.exec_cpu_s;
	lim->memory = c->limits.exec_memory;
	lim->files = c->limits.exec_files;
	lim->procs = c->limits.exec_procs;
	lim->exit_grace_ms = c->limits.exec_exit_grace_ms;
	lim->log_max = c->limits.exec_log_max;
}
