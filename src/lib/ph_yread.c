/* ph_yread.c: typed reads of YAML values with bounds and line-numbered
 * problems, shared by every configuration parser. */
#include "first.h"
#include "ph_yread.h"
#include "ph_util.h"
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void
ph_yread_problem(struct ph_ysink *s, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ph_conf_vproblem(s->probs, s->file, line, s->prefix, fmt, ap);
	va_end(ap);
	s->bad = true;
}

const char *
ph_yread_str(struct ph_ysink *s, const struct ph_ynode *n, const char *name, size_t min, size_t max)
{
	bool open = max == SIZE_MAX;
	if (n->kind != PH_Y_SCALAR || (open && min == 1 && n->len == 0)) {
		ph_yread_problem(s, n->line, "%s: expected a %sstring", name,
				 open && min == 1 ? "non-empty " : "");
		return NULL;
	}
	if (n->len < min || n->len > max) {
		if (open)
			ph_yread_problem(s, n->line, "%s: length must be at least %zu", name, min);
		else
			ph_yread_problem(s, n->line, "%s: length must be between %zu and %zu", name, min,
					 max);
		return NULL;
	}
	if (strlen(n->str) != n->len) {
		ph_yread_problem(s, n->line, "%s: contains a NUL byte", name);
		return NULL;
	}
	return n->str;
}

char *
ph_yread_strdup(struct ph_ysink *s, const struct ph_ynode *n, const char *name, size_t min, size_t max)
{
	const char *t = ph_yread_str(s, n, name, min, max);
	return t ? ph_xstrdup(t) : NULL;
}

int
ph_yread_num(const struct ph_ynode *n, long long min, long long max, long long *out)
{
	const char *err;
	if (n->kind != PH_Y_SCALAR || n->quoted)
		return -1;
	return ph_strtonum(n->str, min, max, out, &err);
}

int
ph_yread_int(struct ph_ysink *s, const struct ph_ynode *n, const char *name, long long min,
	     long long max, long long *out)
{
	const char *err;
	long long v;
	if (n->kind != PH_Y_SCALAR || n->quoted) {
		ph_yread_problem(s, n->line, "%s: expected an integer", name);
		return -1;
	}
	if (ph_strtonum(n->str, min, max, &v, &err) != 0) {
		ph_yread_problem(s, n->line, "%s: '%s' %s (allowed %lld..%lld)", name, n->str, err, min,
				 max);
		return -1;
	}
	*out = v;
	return 0;
}

int
ph_yread_bool(struct ph_ysink *s, const struct ph_ynode *n, const char *name, bool *out)
{
	if (ph_yaml_bool(n, out) != 0) {
		ph_yread_problem(s, n->line, "%s: expected true or false", name);
		return -1;
	}
	return 0;
}

int
ph_yread_enum(struct ph_ysink *s, const struct ph_ynode *n, const char *name, const char *enums)
{
	const char *p = enums;
	int idx = 0;
	while (n->kind == PH_Y_SCALAR && *p) {
		const char *bar = strchr(p, '|');
		size_t l = bar ? (size_t)(bar - p) : strlen(p);
		if (l == n->len && strncmp(p, n->str, l) == 0)
			return idx;
		if (!bar)
			break;
		p = bar + 1;
		idx++;
	}
	ph_yread_problem(s, n->line, "%s: expected one of %s", name, enums);
	return -1;
}

void
ph_yread_strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

char **
ph_yread_strlist(struct ph_ysink *s, const struct ph_ynode *n, const char *name, size_t min, size_t max,
		 size_t item_max, size_t *count)
{
	char **out;
	if (count)
		*count = 0;
	if (n->kind != PH_Y_SEQ || n->n < min || n->n > max) {
		if (max == SIZE_MAX && min == 0)
			ph_yread_problem(s, n->line, "%s: expected a list of strings", name);
		else if (max == SIZE_MAX)
			ph_yread_problem(s, n->line, "%s: expected a list of at least %zu strings", name, min);
		else
			ph_yread_problem(s, n->line, "%s: expected a list of %zu to %zu strings", name, min,
					 max);
		return NULL;
	}
	out = ph_xcalloc(n->n + 1, sizeof *out);
	for (size_t i = 0; i < n->n; i++) {
		char *what = ph_xasprintf("%s[%zu]", name, i);
		out[i] = ph_yread_strdup(s, n->vals[i], what, 1, item_max);
		free(what);
		if (out[i] == NULL) {
			ph_yread_strv_free(out);
			return NULL;
		}
	}
	if (count)
		*count = n->n;
	return out;
}

bool
ph_yread_keys(struct ph_ysink *s, const struct ph_ynode *map, const char *name,
	      const char *const *allowed)
{
	bool ok = true;
	for (size_t i = 0; i < map->n; i++) {
		bool found = false;
		for (size_t j = 0; allowed[j] && !found; j++)
			found = strcmp(map->keys[i], allowed[j]) == 0;
		if (found)
			continue;
		if (name)
			ph_yread_problem(s, map->key_lines[i], "unknown key '%s.%s'", name, map->keys[i]);
		else
			ph_yread_problem(s, map->key_lines[i], "unknown key '%s'", map->keys[i]);
		ok = false;
	}
	return ok;
}

int
ph_yread_key_line(const struct ph_ynode *map, const char *key)
{
	for (size_t i = 0; map->kind == PH_Y_MAP && i < map->n; i++)
		if (strcmp(map->keys[i], key) == 0)
			return map->key_lines[i];
	return map->line;
}
