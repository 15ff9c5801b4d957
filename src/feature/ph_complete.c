/* ph_complete.c: completion/complete (mcp-wire §12.6) for prompt arguments
 * and resource template variables: a static list filtered by prefix, or a
 * handler; never more than limits.completion_values values. */
#include "first.h"
#include "ph_call.h"
#include "ph_features.h"
#include "ph_util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

bool
ph_complete_available(const struct ph_server *s)
{
	return ph_registry_has_completions(s->conf->registry);
}

void
ph_complete_capabilities(struct ph_req *r, struct json_object *caps)
{
	if (ph_complete_available(r->srv))
		json_object_object_add(caps, "completions", json_object_new_object());
}

static struct json_object *
completion(struct json_object *values, long long total, bool more)
{
	struct json_object *res = json_object_new_object(), *c = json_object_new_object();
	json_object_object_add(c, "values", values);
	if (total >= 0)
		json_object_object_add(c, "total", json_object_new_int64(total));
	json_object_object_add(c, "hasMore", json_object_new_boolean(more));
	json_object_object_add(res, "completion", c);
	return res;
}

static struct json_object *
from_list(const struct ph_completion *comp, const char *prefix, size_t max)
{
	struct json_object *values = json_object_new_array();
	size_t pl = strlen(prefix), matches = 0;
	for (size_t i = 0; i < comp->nvalues; i++) {
		if (strncasecmp(comp->values[i], prefix, pl) != 0)
			continue;
		if (matches < max)
			json_object_array_add(values, json_object_new_string(comp->values[i]));
		matches++;
	}
	return completion(values, (long long)matches, matches > max);
}

/* Runs a completion handler; NULL after setting o. */
static struct json_object *
from_handler(struct ph_req *r, const struct ph_completion *comp, const char *name, const char *uri,
	     const char *value, size_t max, struct ph_outcome *o)
{
	struct ph_invocation inv;
	struct json_object *ctx = ph_jget(ph_jget(r->params, "context"), "arguments");
	struct json_object *extra = json_object_new_object(), *arg = json_object_new_object();
	struct json_object *empty = NULL, *res, *c, *vals, *out, *tot, *more;
	char label[300];
	long long total = -1;
	bool has_more;
	snprintf(label, sizeof label, "completion %s.%s", name ? name : uri, comp->name);
	json_object_object_add(arg, "name", json_object_new_string(comp->name));
	json_object_object_add(arg, "value", json_object_new_string(value));
	json_object_object_add(extra, "ref", json_object_get(ph_jget(r->params, "ref")));
	json_object_object_add(extra, "argument", arg);
	if (ctx == NULL || !json_object_is_type(ctx, json_type_object))
		ctx = empty = json_object_new_object();
	memset(&inv, 0, sizeof inv);
	inv.kind = PHANTOM_KIND_COMPLETION;
	inv.label = label;
	inv.name = name;
	inv.uri = uri;
	inv.arguments = ctx;
	inv.extra = extra;
	inv.comp_arg = comp->name;
	inv.comp_value = value;
	res = ph_call_handler(r, &comp->h, &inv);
	json_object_put(extra);
	json_object_put(empty);
	if (r->ex->cancelled || res == NULL) {
		json_object_put(res);
		ph_outcome_error(o, PH_E_HANDLER, NULL, "Internal error: the completion handler failed");
		return NULL;
	}
	c = ph_jget(res, "completion") ? ph_jget(res, "completion") : res;
	vals = ph_jget(c, "values");
	if (vals == NULL || !json_object_is_type(vals, json_type_array))
		goto bad;
	for (size_t i = 0; i < json_object_array_length(vals); i++)
		if (!json_object_is_type(json_object_array_get_idx(vals, i), json_type_string))
			goto bad;
	tot = ph_jget(c, "total");
	more = ph_jget(c, "hasMore");
	if (tot && json_object_is_type(tot, json_type_int) && json_object_get_int64(tot) >= 0)
		total = json_object_get_int64(tot);
	has_more = (more && json_object_get_boolean(more)) || json_object_array_length(vals) > max;
	out = json_object_new_array();
	for (size_t i = 0; i < json_object_array_length(vals) && i < max; i++)
		json_object_array_add(out, json_object_get(json_object_array_get_idx(vals, i)));
	json_object_put(res);
	return completion(out, total, has_more);
bad:
	ph_log("warning", "%s: the result needs 'values', a list of strings", label);
	json_object_put(res);
	ph_outcome_error(o, PH_E_HANDLER, NULL, "Internal error: the completion handler failed");
	return NULL;
}

void
ph_complete(struct ph_req *r, struct ph_outcome *o)
{
	struct ph_registry *reg = r->srv->conf->registry;
	struct json_object *ref = ph_jget(r->params, "ref"), *arg = ph_jget(r->params, "argument");
	const char *type = ph_jstr(ref, "type"), *aname = ph_jstr(arg, "name"), *value = ph_jstr(arg, "value");
	const struct ph_completion *comp = NULL;
	const char *pname = NULL, *uri = NULL;
	size_t max = (size_t)r->srv->conf->limits.completion_values;
	if (type == NULL || aname == NULL || value == NULL) {
		ph_outcome_error(o, PH_E_PARAMS, NULL, "Invalid params: ref.type, argument.name and "
				 "argument.value are required strings");
		return;
	}
	if (strcmp(type, "ref/prompt") == 0) {
		const struct ph_prompt *p;
		const struct ph_prompt_arg *pa = NULL;
		pname = ph_jstr(ref, "name");
		p = pname ? ph_registry_prompt(reg, pname) : NULL;
		if (p == NULL || !ph_access_allowed(r, PH_KIND_PROMPT, pname)) {
			ph_outcome_error(o, PH_E_PARAMS, NULL, "Unknown prompt: %s", pname ? pname : "(none)");
			return;
		}
		r->target = pname;
		for (size_t i = 0; i < p->nargs && pa == NULL; i++)
			if (strcmp(p->args[i].name, aname) == 0)
				pa = &p->args[i];
		if (pa == NULL) {
			ph_outcome_error(o, PH_E_PARAMS, NULL, "Prompt %s has no argument %s", pname, aname);
			return;
		}
		comp = &pa->comp;
	} else if (strcmp(type, "ref/resource") == 0) {
		const struct ph_template *t;
		uri = ph_jstr(ref, "uri");
		t = uri ? ph_registry_template(reg, uri) : NULL;
		if (uri)
			r->target = uri;
		if (t == NULL || !ph_access_allowed(r, PH_KIND_RESOURCE, uri)) {
			if (uri && ph_registry_resource(reg, uri) && ph_access_allowed(r, PH_KIND_RESOURCE, uri)) {
				/* a fixed uri has nothing to complete */
				o->result = completion(json_object_new_array(), -1, false);
				return;
			}
			ph_outcome_error(o, PH_E_PARAMS, NULL, "Unknown resource template: %s", uri ? uri : "(none)");
			return;
		}
		if (ph_uritemplate_find(t->ut, aname) < 0) {
			ph_outcome_error(o, PH_E_PARAMS, NULL, "Resource template %s has no variable %s", uri, aname);
			return;
		}
		for (size_t i = 0; i < t->ncomps && comp == NULL; i++)
			if (strcmp(t->comps[i].name, aname) == 0)
				comp = &t->comps[i];
	} else {
		ph_outcome_error(o, PH_E_PARAMS, NULL, "Invalid params: ref.type must be ref/prompt or ref/resource");
		return;
	}
	if (comp == NULL || (comp->nvalues == 0 && comp->h.kind == PH_HANDLER_NONE)) {
		o->result = completion(json_object_new_array(), -1, false);
		return;
	}
	if (comp->h.kind != PH_HANDLER_NONE)
		o->result = from_handler(r, comp, pname, uri, value, max, o);
	else
		o->result = from_list(comp, value, max);
}
