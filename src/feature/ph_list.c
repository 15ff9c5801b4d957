/* ph_list.c: one page of a configured list (tools, prompts, resources,
 * templates): what the principal may see, in configuration order, with
 * nextCursor and the list's cache hints. */
#include "first.h"
#include "ph_features.h"
#include "ph_registry.h"
#include "ph_util.h"
#include <stdlib.h>
#include <string.h>

/* ttlMs/cacheScope of a list: its own hints, else the server's. */
void
ph_list_cache_hints(struct ph_req *r, int which, struct json_object *result)
{
	const struct ph_registry *reg = r->srv->conf->registry;
	const struct ph_config *c = r->srv->conf;
	long long ttl = reg && reg->lists[which].ttl_ms >= 0 ? reg->lists[which].ttl_ms : c->server.ttl_ms;
	const char *scope = reg && reg->lists[which].scope ? reg->lists[which].scope : c->server.scope;
	if (r->legacy)
		return;
	json_object_object_add(result, "ttlMs", json_object_new_int64(ttl));
	json_object_object_add(result, "cacheScope", json_object_new_string(scope));
}

/* The items a principal sees, and how each is named (a cursor's keys). */
struct visible {
	const struct ph_list_spec *spec;
	const void **vis;
};

static void
visible_key(const void *ctx, size_t i, struct ph_buf *b)
{
	const struct visible *v = ctx;
	ph_buf_adds(b, v->spec->name_of(v->vis[i]));
}

void
ph_cache_cap(struct ph_req *r, struct json_object *res, long long ttl, const char *scope,
	     struct json_object *result, const char *label)
{
	struct json_object *ht = ph_jget(res, "ttlMs");
	const char *hs = ph_jstr(res, "cacheScope");
	bool bad_ttl = ht != NULL && (!json_object_is_type(ht, json_type_int) || json_object_get_int64(ht) < 0 ||
				      json_object_get_int64(ht) > PH_CACHE_TTL_MAX);
	bool bad_scope = ph_jget(res, "cacheScope") != NULL && (hs == NULL || (strcmp(hs, "public") != 0 &&
									    strcmp(hs, "private") != 0));
	if (bad_ttl)
		ph_log("warning", "%s: ttlMs must be an integer from 0 to %lld; ignored", label, PH_CACHE_TTL_MAX);
	if (bad_scope)
		ph_log("warning", "%s: cacheScope must be \"public\" or \"private\"; ignored", label);
	if ((ht == NULL || bad_ttl) && (hs == NULL || bad_scope))
		return;
	/* 2025-11-25 results carry no hints, nor do retries (never cached) */
	if (r->legacy || ph_jget(r->params, "requestState") || ph_jget(r->params, "inputResponses"))
		return;
	if (ht != NULL && !bad_ttl && json_object_get_int64(ht) < ttl)
		ttl = json_object_get_int64(ht);
	if (!bad_scope && hs != NULL && strcmp(hs, "private") == 0)
		scope = "private";
	if (ph_access_restricted(r))
		scope = "private";
	json_object_object_add(result, "ttlMs", json_object_new_int64(ttl));
	json_object_object_add(result, "cacheScope", json_object_new_string(scope));
}

void
ph_list_page(struct ph_req *r, struct ph_outcome *o, const struct ph_list_spec *spec,
	     void *const *items, size_t n)
{
	size_t total = 0, offset, count;
	const void **vis = ph_xcalloc(n + 1, sizeof *vis);
	struct visible v = {spec, vis};
	struct ph_page_keys keys = {visible_key, &v};
	struct json_object *arr;
	for (size_t i = 0; i < n; i++)
		if (ph_access_allowed(r, spec->kind, spec->name_of(items[i])))
			vis[total++] = items[i];
	if (ph_page_resume(r, total, &keys, &offset, o) != 0) {
		free(vis);
		return;
	}
	count = ph_page_count(r, total, offset);
	arr = json_object_new_array();
	for (size_t i = offset; i < offset + count; i++)
		json_object_array_add(arr, spec->to_json(vis[i]));
	o->result = json_object_new_object();
	json_object_object_add(o->result, spec->key, arr);
	ph_page_mark(r, o->result, offset, count, total, &keys);
	ph_list_cache_hints(r, spec->which, o->result);
	free(vis);
}
