/* ph_access.c: what the request's principal may see (docs/auth.md): the
 * allow-lists authentication attached to the request, checked by every
 * feature that lists or serves an item. */
#include "first.h"
#include "ph_access.h"
#include "ph_server.h"
#include <string.h>

/* An entry "*" grants every item of its kind, as "*" means anything in
 * every other list of phantom.yaml(5); the list still counts as
 * restricting (cacheScope stays private). */
static bool
is_star(const char *entry)
{
	return entry[0] == '*' && entry[1] == '\0';
}

static bool
list_has(const struct ph_allow_list *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (is_star(l->v[i]) || strcmp(l->v[i], name) == 0)
			return true;
	return false;
}

/* A skill is granted by an entry naming it or any skill path above it,
 * compared segment by segment, or by "*". */
static bool
skill_granted(const struct ph_allow_list *l, const char *path)
{
	for (size_t i = 0; i < l->n; i++) {
		size_t el = strlen(l->v[i]);
		if (is_star(l->v[i]))
			return true;
		if (strncmp(l->v[i], path, el) == 0 && (path[el] == '\0' || path[el] == '/'))
			return true;
	}
	return false;
}

bool
ph_access_allowed(const struct ph_req *r, enum ph_kind kind, const char *name)
{
	const struct ph_allow_list *l;
	if (r->access == NULL)
		return true;
	if ((unsigned)kind >= PH_ACCESS_KINDS)
		return false;
	l = &r->access->kind[kind];
	if (!l->set)
		return true;
	if (name == NULL)
		return false;
	return kind == PH_KIND_SKILL ? skill_granted(l, name) : list_has(l, name);
}

bool
ph_access_restricted(const struct ph_req *r)
{
	return r->access != NULL || r->restricted;
}

