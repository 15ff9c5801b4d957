/* elicitmod.c: module handlers for tests/integration/elicit.sh, asking the
 * client for input through the C API of phantom.h: a form elicitation with
 * a state, a sampling request from JSON text, a URL elicitation, and a
 * state-only answer. */
#include <phantom.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

PHANTOM_MODULE();

phantom_result *module_confirm(phantom_call *c, void *u);
phantom_result *module_sample(phantom_call *c, void *u);
phantom_result *module_url(phantom_call *c, void *u);
phantom_result *module_shed(phantom_call *c, void *u);

/* Asks "Proceed?" (a boolean) and remembers what it asked in the state. */
phantom_result *
module_confirm(phantom_call *c, void *u)
{
	struct json_object *ok = phantom_call_accepted(c, "ok"), *st = phantom_call_state(c), *v = NULL;
	phantom_result *res;
	char buf[256];
	(void)u;
	if (phantom_call_resumed(c) && ok && json_object_object_get_ex(ok, "ok", &v) &&
	    json_object_object_get_ex(st, "asked", NULL)) {
		snprintf(buf, sizeof buf, "module: ok=%s for %s (principal %s)",
			 json_object_get_boolean(v) ? "true" : "false",
			 json_object_get_string(json_object_object_get(st, "asked")),
			 phantom_call_principal(c) ? phantom_call_principal(c) : "-");
		return phantom_text(buf);
	}
	if (phantom_call_legacy(c) || !phantom_call_has_capability(c, "elicitation"))
		return phantom_error("module_confirm needs a client that can answer an elicitation");
	res = phantom_result_new();
	if (phantom_result_elicit(res, "ok", "Proceed?",
				  "{\"type\":\"object\",\"properties\":{\"ok\":{\"type\":\"boolean\"}},"
				  "\"required\":[\"ok\"]}") != 0 ||
	    phantom_result_state_json(res, "{\"asked\":\"proceed\"}") != 0) {
		phantom_result_free(res);
		return NULL;
	}
	return res;
}

/* A sampling request written as JSON text; the answer's text comes back. */
phantom_result *
module_sample(phantom_call *c, void *u)
{
	struct json_object *r = phantom_call_input_response(c, "s"), *content = NULL, *t = NULL;
	phantom_result *res;
	char buf[256];
	(void)u;
	if (json_object_object_get_ex(r, "content", &content) && json_object_object_get_ex(content, "text", &t)) {
		snprintf(buf, sizeof buf, "module sampled: %s", json_object_get_string(t));
		return phantom_text(buf);
	}
	res = phantom_result_new();
	if (phantom_result_input_request_json(res, "s", "{\"method\":\"sampling/createMessage\",\"params\":"
					      "{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"text\","
					      "\"text\":\"hi\"}}],\"maxTokens\":5}}") != 0 ||
	    phantom_result_input_request_json(res, "bad", "not json") != -1) {
		phantom_result_free(res);
		return NULL;
	}
	return res;
}

/* A URL elicitation (-32042 on a 2025-11-25 request). */
phantom_result *
module_url(phantom_call *c, void *u)
{
	struct json_object *r = phantom_call_input_response(c, "open"), *a = NULL;
	phantom_result *res;
	(void)u;
	if (phantom_call_resumed(c) && json_object_object_get_ex(r, "action", &a))
		return phantom_text(strcmp(json_object_get_string(a), "accept") == 0 ? "module: opened"
										     : "module: not opened");
	res = phantom_result_new();
	phantom_result_text(res, "never sent: an input_required answer has no content");
	if (phantom_result_elicit_url(res, "open", "Open the page", "https://auth.example.com/m") != 0) {
		phantom_result_free(res);
		return NULL;
	}
	return res;
}

/* A state without requests: "call again". */
phantom_result *
module_shed(phantom_call *c, void *u)
{
	phantom_result *res;
	(void)u;
	if (phantom_call_resumed(c) && phantom_call_state(c) == NULL)
		return phantom_text("module: served after a retry");
	res = phantom_result_new();
	phantom_result_state_take(res, NULL);
	return res;
}
