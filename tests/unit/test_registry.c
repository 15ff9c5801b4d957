/* test_registry.c: building a registry through the public API (phantom.h)
 * and the checks it makes: names, duplicates, schemas, x-mcp-header, URI
 * templates, merging. */
#include "first.h"
#include "phantom.h"
#include "ph_registry.h"
#include "tap.h"
#include <string.h>

static phantom_result *
hello(phantom_call *c, void *udata)
{
	(void)c;
	(void)udata;
	return phantom_text("hello");
}

int
main(void)
{
	phantom_registry *reg = phantom_registry_new();
	phantom_registry *other;
	phantom_tool *t;
	phantom_prompt *p;
	phantom_resource *r;
	phantom_template *tp;

	ok(phantom_abi() == PHANTOM_ABI, "library ABI matches the header");
	t = phantom_tool_add(reg, "hello", "Says hello", NULL, hello, NULL);
	ok(t != NULL, "a tool without arguments");
	is_str(json_object_to_json_string_ext(reg->tools[0]->input_schema, JSON_C_TO_STRING_PLAIN),
	       "{\"type\":\"object\",\"additionalProperties\":false}", "no arguments: a closed object schema");
	ok(phantom_tool_add(reg, "hello", NULL, NULL, hello, NULL) == NULL, "duplicate tool refused");
	ok(strstr(phantom_registry_error(reg), "twice") != NULL, "error says why: %s", phantom_registry_error(reg));
	ok(phantom_tool_add(reg, "bad name", NULL, NULL, hello, NULL) == NULL, "a name with a space is refused");
	ok(phantom_tool_add(reg, "x", NULL, NULL, NULL, NULL) == NULL, "a tool without handler is refused");
	ok(phantom_tool_add(reg, "s1", NULL, "{\"type\":\"array\"}", hello, NULL) == NULL, "root type must be object");
	ok(phantom_tool_add(reg, "s2", NULL, "{not json", hello, NULL) == NULL, "bad JSON refused");
	ok(phantom_tool_add(reg, "s3", NULL, "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"number\","
			    "\"x-mcp-header\":\"A\"}}}", hello, NULL) == NULL, "x-mcp-header on a number refused");
	ok(strstr(phantom_registry_error(reg), "x-mcp-header") != NULL, "... and the error names it");
	t = phantom_tool_add(reg, "search", "Search", "{\"type\":\"object\",\"properties\":{\"region\":"
			     "{\"type\":\"string\",\"x-mcp-header\":\"Region\"}},\"required\":[\"region\"]}", hello, NULL);
	ok(t && t->nheaders == 1, "a tool with an Mcp-Param header");
	ok(phantom_tool_set_output_schema(t, "{\"type\":\"object\"}") == 0, "output schema set");
	ok(phantom_tool_set_output_schema(t, "{\"type\":\"nope\"}") != 0, "bad output schema refused");
	ok(phantom_tool_set_annotations(t, "{\"readOnlyHint\":true}") == 0, "annotations set");
	ok(phantom_tool_set_annotations(t, "[1]") != 0, "annotations must be an object");
	ok(phantom_tool_require_capability(t, "sampling") == 0 && t->nrequires == 1, "required capability");

	p = phantom_prompt_add(reg, "greet", "Greeting", hello, NULL);
	ok(p && phantom_prompt_add_argument(p, "name", "Who", 1) == 0, "prompt with an argument");
	ok(phantom_prompt_add_argument(p, "name", NULL, 0) != 0, "duplicate argument refused");
	ok(phantom_prompt_complete(p, "name", hello, NULL) == 0, "completion for an argument");
	ok(phantom_prompt_complete(p, "nope", hello, NULL) != 0, "completion for a missing argument refused");
	ok(ph_registry_has_completions(reg), "the registry knows it has completions");

	r = phantom_resource_add(reg, "info://hello", "hello", NULL, "Hello.", NULL, NULL);
	ok(r && r->has_data && strcmp(r->mime, "text/plain") == 0, "text resource, text/plain by default");
	ok(phantom_resource_set_cache(r, 60000, "public") == 0, "cache hints");
	ok(phantom_resource_set_cache(r, -1, "public") != 0, "negative ttl refused");
	ok(phantom_resource_set_cache(r, 1, "everyone") != 0, "bad scope refused");
	ok(phantom_resource_add(reg, "no scheme", NULL, NULL, "x", NULL, NULL) == NULL, "a uri needs a scheme");
	ok(phantom_resource_add(reg, "info://hello", NULL, NULL, "x", NULL, NULL) == NULL, "duplicate uri refused");
	ok(phantom_resource_add(reg, "info://none", NULL, NULL, NULL, NULL, NULL) == NULL, "a resource needs text or handler");

	tp = phantom_template_add(reg, "users://{id}/profile", "profile", "application/json", hello, NULL);
	ok(tp != NULL, "template");
	ok(phantom_template_complete(tp, "id", hello, NULL) == 0, "template variable completion");
	ok(phantom_template_complete(tp, "nope", hello, NULL) != 0, "unknown variable refused");
	ok(phantom_template_add(reg, "users://{+id}", NULL, NULL, hello, NULL) == NULL, "level 2 refused");

	other = phantom_registry_new();
	phantom_tool_add(other, "second", NULL, NULL, hello, NULL);
	phantom_resource_add(other, "info://two", NULL, NULL, "2", NULL, NULL);
	ok(ph_registry_merge(reg, other) == 0 && reg->ntools == 3 && reg->nresources == 2,
	   "merge appends after the existing items");
	is_str(reg->tools[2]->name, "second", "merged items keep order");
	ok(reg->tools[2]->reg == reg, "merged items point to their new registry");
	other = phantom_registry_new();
	phantom_tool_add(other, "hello", NULL, NULL, hello, NULL);
	ok(ph_registry_merge(reg, other) != 0, "merge refuses duplicates");
	phantom_registry_free(other);

	{
		phantom_result *res = phantom_result_new();
		ok(phantom_result_text(res, "\xff\xfe") != 0, "text must be UTF-8");
		ok(phantom_result_role(res, "system") != 0, "role is user or assistant");
		ok(phantom_result_structured_json(res, "{\"a\":1}") == 0, "structured content from JSON text");
		ok(phantom_result_structured_json(res, "{") != 0, "bad structured JSON refused");
		phantom_result_free(res);
	}
	phantom_registry_free(reg);
	return tap_done();
}
