/* ph_prompts.c: prompts/list and prompts/get (mcp-wire §12.4). Static
 * prompts substitute {{argument}} in their texts and embedded resource
 * uris; handler prompts return their messages. */
#include "first.h"
#include "ph_call.h"
#include "ph_features.h"
#include "ph_util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct ph_registry *
reg_of(const struct ph_req *r)
{
	return r->srv->conf->registry;
}

bool
ph_prompts_available(const struct ph_server *s)
{
	return s->conf->registry && s->conf->registry->nprompts > 0;
}

void
ph_prompts_capabilities(struct ph_req *r, struct json_object *caps)
{
	struct ph_registry *reg = reg_of(r);
	for (size_t i = 0; reg && i < reg->nprompts; i++) {
		if (ph_access_allowed(r, PH_KIND_PROMPT, reg->prompts[i]->name)) {
			json_object_object_add(caps, "prompts", json_object_new_object());
			return;
		}
	}
}

static struct json_object *
prompt_json(const struct ph_prompt *p)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "name", json_object_new_string(p->name));
	if (p->title)
		json_object_object_add(o, "title", json_object_new_string(p->title));
	if (p->description)
		json_object_object_add(o, "description", json_object_new_string(p->description));
	if (p->nargs) {
		struct json_object *args = json_object_new_array();
		for (size_t i = 0; i < p->nargs; i++) {
			struct json_object *a = json_object_new_object();
			json_object_object_add(a, "name", json_object_new_string(p->args[i].name));
			if (p->args[i].title)
				json_object_object_add(a, "title", json_object_new_string(p->args[i].title));
			if (p->args[i].description)
				json_object_object_add(a, "description",
						       json_object_new_string(p->args[i].description));
			json_object_object_add(a, "required", json_object_new_boolean(p->args[i].required));
			json_object_array_add(args, a);
		}
		json_object_object_add(o, "arguments", args);
	}
	if (p->icons)
		json_object_object_add(o, "icons", json_object_get(p->icons));
	return o;
}

static const char *
prompt_name(const void *p)
{
	return ((const struct ph_prompt *)p)->name;
}

static struct json_object *
prompt_entry(const void *p)
{
	return prompt_json(p);
}

void
ph_prompts_list(struct ph_req *r, struct ph_outcome *o)
{
	static const struct ph_list_spec spec = {"prompts", PH_KIND_PROMPT, PH_LIST_PROMPTS,
						 prompt_name, prompt_entry};
	struct ph_registry *reg = reg_of(r);
	ph_list_page(r, o, &spec, (void *const *)reg->prompts, reg->nprompts);
}

/* Replaces {{name}} (spaces inside the braces allowed) with the argument's
 * value, and {{assigns.NAME}} with that attribute of the principal (""
 * when it has none); a name that is not an argument of the prompt stays as
 * written and an optional argument not given becomes "". Caller frees. */
static char *
substitute(const struct ph_prompt *p, const char *text, struct json_object *args,
	   struct json_object *assigns)
{
	struct ph_buf b;
	const char *s = text;
	ph_buf_init(&b);
	ph_buf_adds(&b, "");
	while (*s) {
		const char *open = strstr(s, "{{"), *close, *ns, *ne;
		bool known = false;
		if (open == NULL) {
			ph_buf_adds(&b, s);
			break;
		}
		ph_buf_add(&b, s, (size_t)(open - s));
		close = strstr(open + 2, "}}");
		if (close == NULL) {
			ph_buf_adds(&b, open);
			break;
		}
		ns = open + 2;
		ne = close;
		while (ns < ne && (*ns == ' ' || *ns == '\t'))
			ns++;
		while (ne > ns && (ne[-1] == ' ' || ne[-1] == '\t'))
			ne--;
		for (size_t i = 0; i < p->nargs && !known; i++) {
			if (strlen(p->args[i].name) == (size_t)(ne - ns) &&
			    strncmp(p->args[i].name, ns, (size_t)(ne - ns)) == 0) {
				const char *v = ph_jstr(args, p->args[i].name);
				ph_buf_adds(&b, v ? v : "");
				known = true;
			}
		}
		if (!known && ne - ns > 8 && strncmp(ns, "assigns.", 8) == 0) {
			const char *v = ph_assign_text(assigns, ns + 8, (size_t)(ne - ns - 8));
			ph_buf_adds(&b, v ? v : "");
			known = true;
		}
		if (!known)
			ph_buf_add(&b, open, (size_t)(close + 2 - open));
		s = close + 2;
	}
	return ph_buf_steal(&b);
}

static struct json_object *
message(const char *role, struct json_object *content)
{
	struct json_object *m = json_object_new_object();
	json_object_object_add(m, "role", json_object_new_string(role));
	json_object_object_add(m, "content", content);
	return m;
}

/* The messages of a static prompt; NULL after setting o. */
static struct json_object *
static_messages(struct ph_req *r, const struct ph_prompt *p, struct json_object *args, struct ph_outcome *o)
{
	struct json_object *msgs = json_object_new_array();
	for (size_t i = 0; i < p->nmsgs; i++) {
		const struct ph_prompt_msg *m = &p->msgs[i];
		struct json_object *c = json_object_new_object();
		switch (m->kind) {
		case PH_MSG_TEXT: {
			char *t = substitute(p, m->text, args, r->who.assigns);
			json_object_object_add(c, "type", json_object_new_string("text"));
			json_object_object_add(c, "text", json_object_new_string(t));
			free(t);
			break;
		}
		case PH_MSG_IMAGE:
		case PH_MSG_AUDIO:
			json_object_object_add(c, "type",
					       json_object_new_string(m->kind == PH_MSG_IMAGE ? "image" : "audio"));
			json_object_object_add(c, "data", json_object_new_string(m->data ? m->data : ""));
			json_object_object_add(c, "mimeType", json_object_new_string(m->mime));
			break;
		case PH_MSG_RESOURCE: {
			char *uri = substitute(p, m->text, args, r->who.assigns);
			struct json_object *contents = NULL;
			int rc = ph_resources_fetch(r, uri, &contents);
			if (rc != 0) {
				if (rc > 0) {
					struct json_object *d = json_object_new_object();
					json_object_object_add(d, "uri", json_object_new_string(uri));
					ph_outcome_error(o, PH_E_PARAMS, d, "Invalid params: prompt %s embeds %s, "
							 "which is not a resource", p->name, uri);
				} else {
					ph_outcome_error(o, PH_E_HANDLER, NULL, "Internal error: the embedded "
							 "resource could not be read");
				}
				free(uri);
				json_object_put(c);
				json_object_put(msgs);
				return NULL;
			}
			json_object_object_add(c, "type", json_object_new_string("resource"));
			json_object_object_add(c, "resource", json_object_get(json_object_array_get_idx(contents, 0)));
			json_object_put(contents);
			free(uri);
			break;
		}
		}
		json_object_array_add(msgs, message(m->role, c));
	}
	return msgs;
}

/* Checks a handler's {messages: [{role, content}], description?}. */
static bool
valid_messages(struct json_object *res, const char *label)
{
	struct json_object *msgs = ph_jget(res, "messages"), *d = ph_jget(res, "description");
	char why[200];
	if (msgs == NULL || !json_object_is_type(msgs, json_type_array)) {
		ph_log("warning", "%s: the result has no 'messages' array", label);
		return false;
	}
	if (d != NULL && !json_object_is_type(d, json_type_string)) {
		ph_log("warning", "%s: description must be a string", label);
		return false;
	}
	for (size_t i = 0; i < json_object_array_length(msgs); i++) {
		struct json_object *m = json_object_array_get_idx(msgs, i);
		const char *role = ph_jstr(m, "role");
		if (role == NULL || (strcmp(role, "user") != 0 && strcmp(role, "assistant") != 0)) {
			ph_log("warning", "%s: messages[%zu].role must be user or assistant", label, i);
			return false;
		}
		if (!ph_content_valid(ph_jget(m, "content"), why, sizeof why)) {
			ph_log("warning", "%s: messages[%zu].content: %s", label, i, why);
			return false;
		}
	}
	return true;
}

/* The arguments of a prompts/get for p (args borrowed, may be NULL): an
 * object of strings holding every required argument. Returns false after
 * setting the error in o. */
static bool
arguments_ok(const struct ph_prompt *p, struct json_object *args, struct ph_outcome *o)
{
	if (args != NULL && !json_object_is_type(args, json_type_object)) {
		ph_outcome_error(o, PH_E_PARAMS, NULL, "Invalid params: arguments must be an object");
		return false;
	}
	if (args != NULL) {
		json_object_object_foreach(args, k, v) {
			if (!json_object_is_type(v, json_type_string)) {
				ph_outcome_error(o, PH_E_PARAMS, NULL, "Invalid params: argument %s must be a string", k);
				return false;
			}
		}
	}
	for (size_t i = 0; i < p->nargs; i++) {
		if (p->args[i].required && ph_jstr(args, p->args[i].name) == NULL) {
			ph_outcome_error(o, PH_E_PARAMS, NULL, "Missing required argument: %s", p->args[i].name);
			return false;
		}
	}
	return true;
}

/* The result of a static prompt: its messages with args (borrowed, may be
 * NULL) substituted, and its description. */
static void
static_result(struct ph_req *r, const struct ph_prompt *p, struct json_object *args, struct ph_outcome *o)
{
	struct json_object *empty = args ? NULL : json_object_new_object(), *msgs;
	msgs = static_messages(r, p, args ? args : empty, o);
	json_object_put(empty);
	if (msgs == NULL)
		return;
	o->result = json_object_new_object();
	if (p->description)
		json_object_object_add(o->result, "description", json_object_new_string(p->description));
	json_object_object_add(o->result, "messages", msgs);
}

/* The result of a handler prompt: what the handler answers for args
 * (borrowed, may be NULL), checked, with the prompt's description when the
 * handler gives none; or its input request, or an error. */
static void
handler_result(struct ph_req *r, const struct ph_prompt *p, struct json_object *args, struct ph_outcome *o)
{
	struct json_object *empty = args ? NULL : json_object_new_object(), *res;
	struct ph_invocation inv;
	char label[200];
	ph_label(label, sizeof label, "prompt", p->name);
	memset(&inv, 0, sizeof inv);
	inv.kind = PHANTOM_KIND_PROMPT;
	inv.label = label;
	inv.name = p->name;
	inv.arguments = args ? args : empty;
	res = ph_call_handler(r, &p->h, &inv);
	json_object_put(empty);
	if (r->ex->cancelled) {
		json_object_put(res);
		return;
	}
	if (res != NULL && ph_call_input_required(r, res, label, o)) {
		json_object_put(res);
		return;
	}
	if (res == NULL || !valid_messages(res, label)) {
		json_object_put(res);
		ph_outcome_error(o, PH_E_HANDLER, NULL, "Internal error: the prompt handler failed");
		return;
	}
	o->result = json_object_new_object();
	if (ph_jget(res, "description"))
		json_object_object_add(o->result, "description", json_object_get(ph_jget(res, "description")));
	else if (p->description)
		json_object_object_add(o->result, "description", json_object_new_string(p->description));
	json_object_object_add(o->result, "messages", json_object_get(ph_jget(res, "messages")));
	json_object_put(res);
}

void
ph_prompts_get(struct ph_req *r, struct ph_outcome *o)
{
	struct ph_registry *reg = reg_of(r);
	const char *name = ph_jstr(r->params, "name");
	struct json_object *args = ph_jget(r->params, "arguments");
	struct ph_prompt *p;
	if (name == NULL) {
		ph_outcome_error(o, PH_E_PARAMS, NULL, "Invalid params: name must be a string");
		return;
	}
	r->target = name;
	p = ph_registry_prompt(reg, name);
	if (p == NULL || !ph_access_allowed(r, PH_KIND_PROMPT, name)) {
		ph_outcome_error(o, PH_E_PARAMS, NULL, "Unknown prompt: %s", name);
		return;
	}
	if (!arguments_ok(p, args, o))
		return;
	if (p->h.kind == PH_HANDLER_NONE)
		static_result(r, p, args, o);
	else
		handler_result(r, p, args, o);
}
