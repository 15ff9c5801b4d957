/* ph_access.c: what the request's principal may see (docs/auth.md): the
 * allow-lists authentication attached to the request, checked by every
 * feature that lists or serves an item. */
#include "first.h"
#include "ph_access.h"
#include "ph_server.h"
#include "ph_util.h"
#include <stdlib.h>
#include <string.h>

/* The names of the allow-lists in "access", in enum ph_kind order. */
static const char *const kind_names[PH_ACCESS_KINDS] = {"tools", "prompts", "resources", "skills"};

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
ph_viewer_allowed(const struct ph_viewer *v, enum ph_kind kind, const char *name)
{
	const struct ph_allow_list *l;
	if (v->access == NULL)
		return true;
	if ((unsigned)kind >= PH_ACCESS_KINDS)
		return false;
	l = &v->access->kind[kind];
	if (!l->set)
		return true;
	if (name == NULL)
		return false;
	return kind == PH_KIND_SKILL ? skill_granted(l, name) : list_has(l, name);
}

bool
ph_access_restricted(const struct ph_req *r)
{
	return r->who.access != NULL || r->who.restricted;
}


void
ph_viewer_describe(const struct ph_viewer *v, struct json_object *d)
{
	if (v->access != NULL && v->access_own) {
		struct json_object *a = json_object_new_object();
		for (int k = 0; k < PH_ACCESS_KINDS; k++) {
			struct json_object *l;
			if (!v->access->kind[k].set)
				continue;
			l = json_object_new_array();
			for (size_t i = 0; i < v->access->kind[k].n; i++)
				json_object_array_add(l, json_object_new_string(v->access->kind[k].v[i]));
			json_object_object_add(a, kind_names[k], l);
		}
		json_object_object_add(d, "access", a);
	}
	if (v->assigns != NULL)
		json_object_object_add(d, "assigns", json_object_get(v->assigns));
}

struct ph_access *
ph_access_read(struct json_object *o)
{
	struct ph_access *a;
	if (!json_object_is_type(o, json_type_object))
		return NULL;
	a = ph_xcalloc(1, sizeof *a);
	for (int k = 0; k < PH_ACCESS_KINDS; k++) {
		struct json_object *l = ph_jget(o, kind_names[k]);
		struct ph_allow_list *al = &a->kind[k];
		if (l == NULL)
			continue;
		if (!json_object_is_type(l, json_type_array))
			goto bad;
		al->set = true;
		al->v = ph_xcalloc(json_object_array_length(l) + 1, sizeof *al->v);
		for (size_t i = 0; i < json_object_array_length(l); i++) {
			struct json_object *e = json_object_array_get_idx(l, i);
			if (!json_object_is_type(e, json_type_string))
				goto bad;
			al->v[al->n++] = ph_xstrdup(json_object_get_string(e));
		}
	}
	return a;
bad:
	ph_access_free(a);
	return NULL;
}

void
ph_access_free(struct ph_access *a)
{
	if (a == NULL)
		return;
	for (int k = 0; k < PH_ACCESS_KINDS; k++) {
		for (size_t i = 0; i < a->kind[k].n; i++)
			free(a->kind[k].v[i]);
		free(a->kind[k].v);
	}
	free(a);
}
