/* ph_skill_tmpl.c: skill templates (.tmpl files). A placeholder is
 * {{name}}: a path parameter, the principal (principal or user) or one of
 * its attributes (assigns.NAME). Templates are checked once at load
 * (ph_skill_load.c) and rendered per request when a file is read; anything
 * that is not a known placeholder is served as it is. */
#include "first.h"
#include "ph_server.h"
#include "ph_skills.h"
#include <stdlib.h>
#include <string.h>

/* Parses a placeholder at s ("{{ name }}"). Returns its length and the
 * name's place, or 0 when s does not start one. */
static size_t
placeholder(const char *s, size_t n, size_t *noff, size_t *nlen)
{
	size_t i = 2;
	if (n < 4 || s[0] != '{' || s[1] != '{')
		return 0;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	*noff = i;
	if (i >= n || !((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || s[i] == '_'))
		return 0;
	while (i < n && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
			 (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
		i++;
	if (i - *noff == 7 && memcmp(s + *noff, "assigns", 7) == 0 && i + 1 < n && s[i] == '.') {
		/* {{assigns.NAME}}: one attribute of the principal */
		size_t at = ++i;
		while (i < n && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
				 (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-'))
			i++;
		if (i == at)
			return 0;
	}
	*nlen = i - *noff;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i + 1 >= n || s[i] != '}' || s[i + 1] != '}')
		return 0;
	return i + 2;
}

/* Which value a placeholder name stands for: a parameter index, -1 for the
 * principal, -3 for an attribute (assigns.NAME), -2 when unknown. */
static long
placeholder_value(const char *name, size_t len, char *const *pnames, size_t np)
{
	if (len > 8 && memcmp(name, "assigns.", 8) == 0)
		return -3;
	if ((len == 9 && memcmp(name, "principal", 9) == 0) || (len == 4 && memcmp(name, "user", 4) == 0))
		return -1;
	for (size_t i = 0; i < np; i++)
		if (strlen(pnames[i]) == len && memcmp(pnames[i], name, len) == 0)
			return (long)i;
	return -2;
}

char *
ph_skill_tmpl_check(const char *src, size_t len, char *const *pnames, size_t np, int *line,
		    bool *principal)
{
	int ln = 1;
	*principal = false;
	for (size_t i = 0; i < len; i++) {
		size_t noff, nlen, pl;
		if (src[i] == '\n')
			ln++;
		if (src[i] != '{' || i + 1 >= len || src[i + 1] != '{')
			continue;
		*line = ln;
		pl = placeholder(src + i, len - i, &noff, &nlen);
		if (pl == 0)
			return ph_xstrdup("'{{' does not start a {{name}} placeholder");
		switch (placeholder_value(src + i + noff, nlen, pnames, np)) {
		case -2:
			return ph_xasprintf("unknown placeholder {{%.*s}} (known: principal, user, "
					    "assigns.NAME and the path parameters)", (int)nlen, src + i + noff);
		case -1:
		case -3:
			*principal = true; /* rendered per principal */
			break;
		default:
			break;
		}
		i += pl - 1;
	}
	return NULL;
}

void
ph_skill_tmpl_render(struct ph_buf *out, const char *src, size_t len, char *const *pnames,
		     char *const *vals, size_t np, const char *principal, struct json_object *assigns)
{
	size_t lit = 0;
	for (size_t i = 0; i < len; i++) {
		size_t noff, nlen, pl;
		long v;
		if (src[i] != '{' || (pl = placeholder(src + i, len - i, &noff, &nlen)) == 0)
			continue;
		v = placeholder_value(src + i + noff, nlen, pnames, np);
		if (v == -2)
			continue;
		ph_buf_add(out, src + lit, i - lit);
		if (v == -1) {
			if (principal)
				ph_buf_adds(out, principal);
		} else if (v == -3) {
			const char *a = ph_assign_text(assigns, src + i + noff + 8, nlen - 8);
			if (a)
				ph_buf_adds(out, a);
		} else if (vals && vals[v]) {
			ph_buf_adds(out, vals[v]);
		}
		i += pl - 1;
		lit = i + 1;
	}
	ph_buf_add(out, src + lit, len - lit);
}
