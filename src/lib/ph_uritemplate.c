/* ph_uritemplate.c: level-1 URI template parsing and matching. */
#include "first.h"
#include "ph_uritemplate.h"
#include "ph_util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct part {
	char *lit;  /* literal text, or NULL for a variable */
	size_t len;
	int var;    /* index into vars */
};

struct ph_uritemplate {
	struct part *parts;
	size_t nparts;
	char **vars;
	size_t nvars;
};

static bool
varname_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

void
ph_uritemplate_free(struct ph_uritemplate *t)
{
	if (t == NULL)
		return;
	for (size_t i = 0; i < t->nparts; i++)
		free(t->parts[i].lit);
	free(t->parts);
	for (size_t i = 0; i < t->nvars; i++)
		free(t->vars[i]);
	free(t->vars);
	free(t);
}

static void
add_part(struct ph_uritemplate *t, const char *lit, size_t len, int var)
{
	t->parts = ph_xrealloc(t->parts, (t->nparts + 1) * sizeof *t->parts);
	t->parts[t->nparts].lit = lit ? ph_xstrndup(lit, len) : NULL;
	t->parts[t->nparts].len = len;
	t->parts[t->nparts].var = var;
	t->nparts++;
}

struct ph_uritemplate *
ph_uritemplate_parse(const char *tmpl, char *err, size_t errsz)
{
	struct ph_uritemplate *t = ph_xcalloc(1, sizeof *t);
	const char *p = tmpl;
	if (strlen(tmpl) == 0 || strlen(tmpl) > PH_URI_MAX) {
		snprintf(err, errsz, "a URI template must have 1 to %d characters", PH_URI_MAX);
		goto fail;
	}
	while (*p) {
		if (*p == '{') {
			const char *end = strchr(p, '}');
			size_t n;
			if (end == NULL) {
				snprintf(err, errsz, "unterminated '{' in '%s'", tmpl);
				goto fail;
			}
			n = (size_t)(end - p - 1);
			if (n == 0) {
				snprintf(err, errsz, "empty expression '{}' in '%s'", tmpl);
				goto fail;
			}
			for (size_t i = 0; i < n; i++) {
				if (!varname_char(p[1 + i])) {
					snprintf(err, errsz, "expression '%.*s' in '%s': only level-1 {name} "
						 "expressions are supported", (int)(n + 2), p, tmpl);
					goto fail;
				}
			}
			if (t->nparts > 0 && t->parts[t->nparts - 1].lit == NULL) {
				snprintf(err, errsz, "two variables with nothing between them in '%s'", tmpl);
				goto fail;
			}
			if (t->nvars >= PH_URITEMPLATE_MAX_VARS) {
				snprintf(err, errsz, "more than %d variables in '%s'", PH_URITEMPLATE_MAX_VARS, tmpl);
				goto fail;
			}
			for (size_t i = 0; i < t->nvars; i++) {
				if (strlen(t->vars[i]) == n && strncmp(t->vars[i], p + 1, n) == 0) {
					snprintf(err, errsz, "variable '%.*s' appears twice in '%s'", (int)n, p + 1, tmpl);
					goto fail;
				}
			}
			t->vars = ph_xrealloc(t->vars, (t->nvars + 1) * sizeof *t->vars);
			t->vars[t->nvars] = ph_xstrndup(p + 1, n);
			add_part(t, NULL, 0, (int)t->nvars);
			t->nvars++;
			p = end + 1;
		} else if (*p == '}') {
			snprintf(err, errsz, "unmatched '}' in '%s'", tmpl);
			goto fail;
		} else {
			size_t n = strcspn(p, "{}");
			add_part(t, p, n, -1);
			p += n;
		}
	}
	return t;
fail:
	ph_uritemplate_free(t);
	return NULL;
}

size_t
ph_uritemplate_nvars(const struct ph_uritemplate *t)
{
	return t->nvars;
}

const char *
ph_uritemplate_var(const struct ph_uritemplate *t, size_t i)
{
	return i < t->nvars ? t->vars[i] : NULL;
}

int
ph_uritemplate_find(const struct ph_uritemplate *t, const char *name)
{
	for (size_t i = 0; i < t->nvars; i++)
		if (strcmp(t->vars[i], name) == 0)
			return (int)i;
	return -1;
}

static bool
hexdig(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return c - 'A' + 10;
}

/* Length of the run of characters a level-1 variable can expand to, from
 * s (unreserved and whole %XX escapes). */
static size_t
value_run(const char *s, size_t max)
{
	size_t i = 0;
	while (i < max) {
		char c = s[i];
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
		    c == '.' || c == '_' || c == '~')
			i++;
		else if (c == '%' && i + 2 < max && hexdig(s[i + 1]) && hexdig(s[i + 2]))
			i += 3;
		else
			break;
	}
	return i;
}

/* Decodes %XX; returns NULL when the result would hold a NUL byte. */
static char *
decode(const char *s, size_t n)
{
	char *o = ph_xmalloc(n + 1);
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n && hexdig(s[i + 1]) && hexdig(s[i + 2])) {
			o[j] = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
			i += 2;
		} else {
			o[j] = s[i];
		}
		if (o[j] == '\0') {
			free(o);
			return NULL;
		}
		j++;
	}
	o[j] = '\0';
	return o;
}

/* Matching with memoisation: (part, position) pairs already known to fail
 * are not tried again, so the cost is bounded by parts x length^2 whatever
 * the template. */
struct mstate {
	const struct ph_uritemplate *t;
	const char *uri;
	size_t len;
	unsigned char *dead; /* (nparts+1) x (len+1) bits, as bytes */
	size_t *starts, *ends;
};

static bool
match_from(struct mstate *m, size_t pi, size_t pos)
{
	const struct part *p;
	unsigned char *d;
	if (pi == m->t->nparts)
		return pos == m->len;
	d = &m->dead[pi * (m->len + 1) + pos];
	if (*d)
		return false;
	p = &m->t->parts[pi];
	if (p->lit != NULL) {
		if (m->len - pos >= p->len && memcmp(m->uri + pos, p->lit, p->len) == 0 &&
		    match_from(m, pi + 1, pos + p->len))
			return true;
	} else {
		size_t run = value_run(m->uri + pos, m->len - pos);
		/* longest first: "{name}.json" against "a.b.json" gives name=a.b */
		for (size_t n = run; n > 0; n--) {
			/* never cut through an escape */
			if (m->uri[pos + n - 1] == '%' || (n >= 2 && m->uri[pos + n - 2] == '%'))
				continue;
			m->starts[p->var] = pos;
			m->ends[p->var] = pos + n;
			if (match_from(m, pi + 1, pos + n))
				return true;
		}
	}
	*d = 1;
	return false;
}

bool
ph_uritemplate_match(const struct ph_uritemplate *t, const char *uri, char **vals)
{
	struct mstate m;
	size_t starts[PH_URITEMPLATE_MAX_VARS], ends[PH_URITEMPLATE_MAX_VARS];
	bool ok;
	m.t = t;
	m.uri = uri;
	m.len = strlen(uri);
	if (m.len > PH_URI_MAX)
		return false;
	m.dead = ph_xcalloc((t->nparts + 1) * (m.len + 1), 1);
	m.starts = starts;
	m.ends = ends;
	ok = match_from(&m, 0, 0);
	free(m.dead);
	if (!ok)
		return false;
	for (size_t i = 0; i < t->nvars; i++) {
		vals[i] = decode(uri + starts[i], ends[i] - starts[i]);
		if (vals[i] == NULL) {
			for (size_t j = 0; j < i; j++)
				free(vals[j]);
			return false;
		}
	}
	return true;
}

void
ph_uritemplate_vals_free(const struct ph_uritemplate *t, char **vals)
{
	for (size_t i = 0; i < t->nvars; i++)
		free(vals[i]);
}

bool
ph_uritemplate_safe_segment(const char *v)
{
	if (v[0] == '\0' || v[0] == '.')
		return false; /* also "." and ".." and hidden files */
	return strpbrk(v, "/\\") == NULL;
}

bool
ph_uri_ok(const char *uri)
{
	const char *colon = uri ? strchr(uri, ':') : NULL;
	if (colon == NULL || colon == uri || strlen(uri) > PH_URI_MAX)
		return false;
	for (const char *p = uri; *p; p++)
		if ((unsigned char)*p <= 0x20 || *p == 0x7f)
			return false;
	return true;
}
