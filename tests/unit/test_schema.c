/* test_schema.c: the JSON Schema validator (every keyword, nested paths in
 * messages), defaults, the field DSL and x-mcp-header extraction. */
#include "first.h"
#include "ph_schema.h"
#include "ph_fields.h"
#include "ph_param_header.h"
#include "tap.h"
#include <json-c/json.h>
#include <stdlib.h>

/* Validates inst (JSON text) against schema (JSON text); returns the
 * messages ("" when valid), caller frees. */
static char *
check(const char *schema, const char *inst)
{
	char err[300];
	struct json_object *sj = json_tokener_parse(schema), *ij = json_tokener_parse(inst);
	struct ph_schema *s = ph_schema_compile(sj, err, sizeof err);
	struct ph_buf b;
	ph_buf_init(&b);
	ph_buf_adds(&b, "");
	if (s == NULL) {
		ph_buf_printf(&b, "COMPILE: %s", err);
	} else {
		ph_schema_defaults(s, ij);
		ph_schema_validate(s, ij, &b, 10);
		ph_schema_free(s);
	}
	json_object_put(sj);
	json_object_put(ij);
	return ph_buf_steal(&b);
}

static void
expect(const char *schema, const char *inst, const char *want, const char *what)
{
	char *got = check(schema, inst);
	is_str(got, want, "%s", what);
	free(got);
}

static char *
compile_err(const char *schema)
{
	char err[300];
	struct json_object *sj = json_tokener_parse(schema);
	struct ph_schema *s = ph_schema_compile(sj, err, sizeof err);
	json_object_put(sj);
	if (s) {
		ph_schema_free(s);
		return NULL;
	}
	return strdup(err);
}

static void
test_keywords(void)
{
	const char *obj = "{\"type\":\"object\",\"properties\":{\"study_id\":{\"type\":\"integer\"}},"
			  "\"required\":[\"study_id\"]}";
	expect(obj, "{\"study_id\":3}", "", "required field present");
	expect(obj, "{}", "Missing required field: study_id", "required field missing");
	expect(obj, "{\"study_id\":\"abc\"}", "Field study_id: expected integer, got \"abc\"", "type integer vs string");
	expect(obj, "{\"study_id\":1.5}", "Field study_id: expected integer, got 1.5", "type integer vs fraction");
	expect(obj, "{\"study_id\":2.0}", "", "2.0 is an integer");
	expect(obj, "[1]", "Arguments: expected object, got [1]", "root type");
	expect("{\"type\":[\"string\",\"null\"]}", "3", "Arguments: expected null or string, got 3", "type list");
	expect("{\"type\":\"number\"}", "3", "", "integer is a number");
	expect("{\"type\":\"boolean\"}", "\"true\"", "Arguments: expected boolean, got \"true\"", "boolean");

	expect("{\"properties\":{\"limit\":{\"maximum\":100}}}", "{\"limit\":101}", "Field limit: must be <= 100", "maximum");
	expect("{\"properties\":{\"limit\":{\"minimum\":1}}}", "{\"limit\":0}", "Field limit: must be >= 1", "minimum");
	expect("{\"properties\":{\"x\":{\"exclusiveMinimum\":0}}}", "{\"x\":0}", "Field x: must be > 0", "exclusiveMinimum");
	expect("{\"properties\":{\"x\":{\"exclusiveMaximum\":10}}}", "{\"x\":10}", "Field x: must be < 10", "exclusiveMaximum");
	expect("{\"properties\":{\"x\":{\"minimum\":0.5}}}", "{\"x\":0.25}", "Field x: must be >= 0.5", "fractional bounds");
	expect("{\"properties\":{\"x\":{\"multipleOf\":5}}}", "{\"x\":12}", "Field x: must be a multiple of 5", "multipleOf");
	expect("{\"properties\":{\"x\":{\"multipleOf\":0.1}}}", "{\"x\":0.3}", "", "multipleOf 0.1 and 0.3");

	expect("{\"properties\":{\"n\":{\"minLength\":2}}}", "{\"n\":\"a\"}", "Field n: must be at least 2 characters long", "minLength");
	expect("{\"properties\":{\"n\":{\"maxLength\":2}}}", "{\"n\":\"\\u00e9\\u00e9\"}", "", "maxLength counts characters, not bytes");
	expect("{\"properties\":{\"n\":{\"maxLength\":2}}}", "{\"n\":\"abc\"}", "Field n: must be at most 2 characters long", "maxLength");
	expect("{\"properties\":{\"c\":{\"pattern\":\"^[A-Z]{3}$\"}}}", "{\"c\":\"ABC\"}", "", "pattern match");
	expect("{\"properties\":{\"c\":{\"pattern\":\"^[A-Z]{3}$\"}}}", "{\"c\":\"AB1\"}", "Field c: must match the pattern ^[A-Z]{3}$", "pattern mismatch");
	expect("{\"pattern\":\"\\\\d+\"}", "\"x12\"", "", "pattern \\d is unanchored");
	expect("{\"pattern\":\"^\\\\w+@\\\\w+\\\\.com$\"}", "\"a_b@c.com\"", "", "pattern with \\w and escaped dot");
	expect("{\"pattern\":\"^[\\\\w.-]+$\"}", "\"a-b.c\"", "", "pattern \\w inside brackets");
	expect("{\"pattern\":\"^[\\\\w.-]+$\"}", "\"a b\"", "Arguments: must match the pattern ^[\\w.-]+$", "bracket rejects space");

	expect("{\"properties\":{\"s\":{\"enum\":[\"active\",\"inactive\"]}}}", "{\"s\":\"x\"}",
	       "Field s: must be one of [\"active\",\"inactive\"], got \"x\"", "enum");
	expect("{\"enum\":[1,2]}", "2.0", "", "enum compares numbers as numbers");
	expect("{\"const\":{\"a\":[1]}}", "{\"a\":[1]}", "", "const object");
	expect("{\"const\":\"v\"}", "\"w\"", "Arguments: must be \"v\"", "const");

	expect("{\"properties\":{\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}}}",
	       "{\"tags\":[\"a\",42]}", "Field tags[1]: expected string, got 42", "items with index in the path");
	expect("{\"minItems\":2}", "[1]", "Arguments: must have at least 2 items", "minItems");
	expect("{\"maxItems\":1}", "[1,2]", "Arguments: must have at most 1 item", "maxItems");
	expect("{\"uniqueItems\":true}", "[1,2,1]", "Arguments: items must be unique (items 0 and 2 are equal)", "uniqueItems");
	expect("{\"prefixItems\":[{\"type\":\"string\"},{\"type\":\"integer\"}],\"items\":false}", "[\"a\",1,2]",
	       "Field [2]: is not allowed", "prefixItems and items false");
	expect("{\"contains\":{\"const\":3}}", "[1,2]", "Arguments: must contain an item matching the given schema", "contains");

	expect("{\"properties\":{\"a\":{\"type\":\"object\",\"properties\":{\"b\":{\"type\":\"object\","
	       "\"required\":[\"c\"]}}}}}", "{\"a\":{\"b\":{}}}", "Missing required field: a.b.c", "nested required path");
	expect("{\"properties\":{\"a\":{\"properties\":{\"b\":{\"type\":\"integer\"}}}}}", "{\"a\":{\"b\":\"x\"}}",
	       "Field a.b: expected integer, got \"x\"", "nested type path");
	expect("{\"properties\":{\"l\":{\"items\":{\"properties\":{\"n\":{\"type\":\"string\"}}}}}}",
	       "{\"l\":[{\"n\":\"x\"},{\"n\":1}]}", "Field l[1].n: expected string, got 1", "array of objects path");
	expect("{\"properties\":{\"a\":{}},\"additionalProperties\":false}", "{\"a\":1,\"zz\":2}", "Unknown field: zz",
	       "additionalProperties false");
	expect("{\"additionalProperties\":{\"type\":\"integer\"}}", "{\"k\":\"v\"}", "Field k: expected integer, got \"v\"",
	       "additionalProperties schema");
	expect("{\"patternProperties\":{\"^x_\":{\"type\":\"integer\"}},\"additionalProperties\":false}",
	       "{\"x_a\":1,\"y\":2}", "Unknown field: y", "patternProperties");
	expect("{\"minProperties\":1}", "{}", "Arguments: must have at least 1 properties", "minProperties");
	expect("{\"maxProperties\":1}", "{\"a\":1,\"b\":2}", "Arguments: must have at most 1 properties", "maxProperties");

	expect("{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"integer\"}]}", "true",
	       "Arguments: must match at least one of the allowed schemas (anyOf)", "anyOf none");
	expect("{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"integer\"}]}", "1", "", "anyOf one");
	expect("{\"oneOf\":[{\"type\":\"number\"},{\"type\":\"integer\"}]}", "1",
	       "Arguments: must match exactly one of the allowed schemas (oneOf), matched 2", "oneOf two");
	expect("{\"oneOf\":[{\"type\":\"number\"},{\"type\":\"string\"}]}", "1", "", "oneOf exactly one");
	expect("{\"allOf\":[{\"minimum\":1},{\"maximum\":3}]}", "5", "Arguments: must be <= 3", "allOf");
	expect("{\"not\":{\"type\":\"string\"}}", "\"s\"", "Arguments: must not match the excluded schema (not)", "not");
	expect("{\"if\":{\"properties\":{\"k\":{\"const\":\"a\"}}},\"then\":{\"required\":[\"x\"]},"
	       "\"else\":{\"required\":[\"y\"]}}", "{\"k\":\"a\"}", "Missing required field: x", "if/then");
	expect("{\"if\":{\"properties\":{\"k\":{\"const\":\"a\"}}},\"then\":{\"required\":[\"x\"]},"
	       "\"else\":{\"required\":[\"y\"]}}", "{\"k\":\"b\"}", "Missing required field: y", "if/else");
	expect("{\"$defs\":{\"id\":{\"type\":\"string\",\"pattern\":\"^[a-z]+$\"}},\"properties\":"
	       "{\"id\":{\"$ref\":\"#/$defs/id\"}}}", "{\"id\":\"A\"}", "Field id: must match the pattern ^[a-z]+$", "$ref to $defs");
	expect("{\"$defs\":{\"a\":{\"$anchor\":\"addr\",\"required\":[\"city\"]}},\"properties\":"
	       "{\"home\":{\"$ref\":\"#addr\"}}}", "{\"home\":{}}", "Missing required field: home.city", "$ref to $anchor");
	expect("{\"properties\":{\"next\":{\"$ref\":\"#\"}},\"type\":\"object\"}", "{\"next\":{\"next\":{\"next\":3}}}",
	       "Field next.next.next: expected object, got 3", "recursive $ref");
	expect("{\"properties\":{\"p\":{\"$ref\":\"https://example.com/schema.json\"}}}", "{\"p\":1}", "",
	       "a network $ref is not dereferenced");
	expect("false", "1", "Arguments: is not allowed", "schema false");
	expect("true", "1", "", "schema true");
	expect("{\"format\":\"email\",\"x-whatever\":1}", "\"not an email\"", "", "annotations are ignored");
	{
		char *got = check("{\"properties\":{\"a\":{\"type\":\"string\"},\"b\":{\"type\":\"string\"}},\"required\":[\"c\"]}",
				  "{\"a\":1,\"b\":2}");
		ok(strstr(got, "Missing required field: c") && strstr(got, "Field a: expected string") &&
		   strstr(got, "Field b: expected string") && strstr(got, "; "), "all problems are reported, joined by '; '");
		free(got);
	}
	{
		char *got = check("{\"type\":\"integer\"}",
			    "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"");
		ok(strstr(got, "...") != NULL && strlen(got) < 120, "long values are cut in messages");
		free(got);
	}
}

static void
test_defaults(void)
{
	expect("{\"properties\":{\"mode\":{\"type\":\"string\",\"default\":\"a\",\"enum\":[\"a\",\"b\"]}},"
	       "\"required\":[\"mode\"]}", "{}", "", "defaults are applied before validation");
	{
		char err[100];
		struct json_object *sj = json_tokener_parse(
			"{\"properties\":{\"n\":{\"default\":5},\"o\":{\"type\":\"object\",\"properties\":"
			"{\"deep\":{\"default\":true}}},\"keep\":{\"default\":1},"
			"\"l\":{\"items\":{\"properties\":{\"z\":{\"default\":0}}}}}}");
		struct json_object *ij = json_tokener_parse("{\"o\":{},\"keep\":2,\"l\":[{},{\"z\":9}]}");
		struct ph_schema *s = ph_schema_compile(sj, err, sizeof err);
		ph_schema_defaults(s, ij);
		is_str(json_object_to_json_string_ext(ij, JSON_C_TO_STRING_PLAIN),
		       "{\"o\":{\"deep\":true},\"keep\":2,\"l\":[{\"z\":0},{\"z\":9}],\"n\":5}",
		       "defaults fill absent members, nested ones and array items; given values stay");
		ph_schema_free(s);
		json_object_put(sj);
		json_object_put(ij);
	}
}

static void
test_compile_errors(void)
{
	struct {
		const char *schema, *want;
	} cases[] = {
		{"{\"type\":\"strin\"}", "unknown type"},
		{"{\"pattern\":\"(?=x)\"}", "group construct"},
		{"{\"pattern\":\"a*?\"}", "lazy quantifier"},
		{"{\"pattern\":\"\\\\1\"}", "escape"},
		{"{\"pattern\":\"[a-\"}", "bracket"},
		{"{\"$ref\":\"#/$defs/missing\"}", "does not resolve"},
		{"{\"minLength\":-1}", "non-negative"},
		{"{\"multipleOf\":0}", "greater than 0"},
		{"{\"anyOf\":[]}", "non-empty"},
		{"{\"properties\":[]}", "properties must be an object"},
		{"3", "object or a boolean"},
	};
	for (size_t i = 0; i < PH_ARRAY_LEN(cases); i++) {
		char *e = compile_err(cases[i].schema);
		ok(e && strstr(e, cases[i].want), "compile refuses %s (%s)", cases[i].schema, e ? e : "accepted");
		free(e);
	}
	{
		/* a schema with too many branches is refused */
		struct ph_buf b;
		char *e;
		ph_buf_init(&b);
		ph_buf_adds(&b, "{\"anyOf\":[");
		for (int i = 0; i < PH_SCHEMA_MAX_BRANCHES + 1; i++)
			ph_buf_printf(&b, "%s{}", i ? "," : "");
		ph_buf_adds(&b, "]}");
		e = compile_err(b.data);
		ok(e && strstr(e, "more than"), "anyOf is bounded");
		free(e);
		ph_buf_free(&b);
	}
}

static struct ph_ynode *
yaml(const char *s)
{
	char *err = NULL;
	struct ph_ynode *n = ph_yaml_parse(s, strlen(s), 16, &err);
	free(err);
	return n;
}

static char *
dsl(const char *y, int *line)
{
	char err[300];
	struct ph_ynode *n = yaml(y);
	struct json_object *j = ph_schema_from_fields(n, err, sizeof err, line);
	char *out = j ? strdup(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN)) : NULL;
	if (out == NULL)
		out = strdup(err);
	json_object_put(j);
	ph_yaml_free(n);
	return out;
}

static void
test_dsl(void)
{
	int line = 0;
	char *s = dsl("study_id: {type: integer, required: true, description: The study, minimum: 1, maximum: 100}\n"
		      "tags: {type: array, items: string, min_length: 1}\n"
		      "name: {min_length: 2, max_length: 5, pattern: '^[a-z]+$', default: abc}\n"
		      "status: {in: [active, inactive]}\n"
		      "code: {type: string, default: 007}\n"
		      "address: {type: object, fields: {city: {required: true}}}\n"
		      "flag: boolean\n", &line);
	is_str(s, "{\"type\":\"object\",\"properties\":{"
		  "\"study_id\":{\"type\":\"integer\",\"description\":\"The study\",\"minimum\":1,\"maximum\":100},"
		  "\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"minItems\":1},"
		  "\"name\":{\"type\":\"string\",\"minLength\":2,\"maxLength\":5,\"pattern\":\"^[a-z]+$\",\"default\":\"abc\"},"
		  "\"status\":{\"type\":\"string\",\"enum\":[\"active\",\"inactive\"]},"
		  "\"code\":{\"type\":\"string\",\"default\":\"007\"},"
		  "\"address\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}},\"required\":[\"city\"]},"
		  "\"flag\":{\"type\":\"boolean\"}},\"required\":[\"study_id\"]}",
	       "the field DSL becomes a JSON Schema");
	free(s);
	s = dsl("a: {type: strng}\n", &line);
	ok(strstr(s, "field 'a'") && strstr(s, "type must be"), "unknown DSL type refused: %s", s);
	free(s);
	s = dsl("a: {type: integer}\nb: {type: integer, min_length: 3}\n", &line);
	ok(strstr(s, "field 'b'") && line == 2, "a keyword on the wrong type names field and line: %s (line %d)", s, line);
	free(s);
	s = dsl("a: {type: integer, default: x}\n", &line);
	ok(strstr(s, "default does not fit"), "a default must fit its field: %s", s);
	free(s);
	s = dsl("a: {type: object, fields: {b: {colour: red}}}\n", &line);
	ok(strstr(s, "field 'a.b'") && strstr(s, "unknown key 'colour'"), "unknown keys in nested fields: %s", s);
	free(s);
	s = dsl("a: {type: string, pattern: '(?=x)'}\n", &line);
	ok(strstr(s, "field 'a'") != NULL, "invalid pattern caught in the field: %s", s);
	free(s);
}

static char *
headers(const char *schema, size_t *n, struct ph_param_header **out)
{
	char err[300];
	struct json_object *sj = json_tokener_parse(schema);
	int rc = ph_schema_headers(sj, out, n, err, sizeof err);
	json_object_put(sj);
	return rc == 0 ? NULL : strdup(err);
}

static void
test_headers(void)
{
	struct ph_param_header *h = NULL;
	size_t n = 0;
	char *e = headers("{\"type\":\"object\",\"properties\":{\"region\":{\"type\":\"string\",\"x-mcp-header\":\"Region\"},"
			  "\"loc\":{\"type\":\"object\",\"properties\":{\"zone-id\":{\"type\":\"integer\",\"x-mcp-header\":\"Zone-Id\"}}},"
			  "\"dry\":{\"type\":\"boolean\",\"x-mcp-header\":\"Dry\"}}}", &n, &h);
	ok(e == NULL && n == 3, "three x-mcp-header declarations found");
	if (n == 3) {
		is_str(h[0].cgi, "HTTP_MCP_PARAM_REGION", "CGI name of Region");
		is_str(h[1].cgi, "HTTP_MCP_PARAM_ZONE_ID", "CGI name of Zone-Id");
		is_str(h[1].dotted, "loc.zone-id", "dotted path of a nested property");
		ok(h[1].depth == 2 && h[1].type == PH_HT_INTEGER && h[2].type == PH_HT_BOOLEAN, "path depth and types");
	}
	ph_param_headers_free(h, n);
	free(e);
	{
		struct {
			const char *schema, *want;
		} bad[] = {
			{"{\"properties\":{\"a\":{\"type\":\"string\",\"x-mcp-header\":\"\"}}}", "non-empty"},
			{"{\"properties\":{\"a\":{\"type\":\"string\",\"x-mcp-header\":\"My Region\"}}}", "letters, digits"},
			{"{\"properties\":{\"a\":{\"type\":\"string\",\"x-mcp-header\":\"R\\u00e9gion\"}}}", "letters, digits"},
			{"{\"properties\":{\"a\":{\"type\":\"string\",\"x-mcp-header\":\"A:B\"}}}", "letters, digits"},
			{"{\"properties\":{\"a\":{\"type\":\"number\",\"x-mcp-header\":\"N\"}}}", "string, integer or boolean"},
			{"{\"properties\":{\"a\":{\"type\":\"object\",\"x-mcp-header\":\"N\"}}}", "string, integer or boolean"},
			{"{\"properties\":{\"a\":{\"x-mcp-header\":\"N\"}}}", "missing type"},
			{"{\"properties\":{\"a\":{\"type\":\"string\",\"x-mcp-header\":\"MyField\"},"
			 "\"b\":{\"type\":\"string\",\"x-mcp-header\":\"myfield\"}}}", "ignoring case"},
			{"{\"properties\":{\"a\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"x-mcp-header\":\"I\"}}}}",
			 "through \"properties\""},
			{"{\"anyOf\":[{\"properties\":{\"a\":{\"type\":\"string\",\"x-mcp-header\":\"A\"}}}]}", "through \"properties\""},
			{"{\"$defs\":{\"d\":{\"type\":\"string\",\"x-mcp-header\":\"D\"}},\"properties\":{\"a\":{\"$ref\":\"#/$defs/d\"}}}",
			 "through \"properties\""},
			{"{\"type\":\"string\",\"x-mcp-header\":\"Root\"}", "through \"properties\""},
		};
		for (size_t i = 0; i < PH_ARRAY_LEN(bad); i++) {
			h = NULL;
			e = headers(bad[i].schema, &n, &h);
			ok(e && strstr(e, bad[i].want), "invalid x-mcp-header refused: %s", e ? e : "accepted");
			free(e);
			ph_param_headers_free(h, n);
		}
	}
}

int
main(void)
{
	test_keywords();
	test_defaults();
	test_compile_errors();
	test_dsl();
	test_headers();
	{
		struct json_object *a = json_tokener_parse("{\"x\":[1,{\"y\":2}],\"z\":null}");
		struct json_object *b = json_tokener_parse("{\"z\":null,\"x\":[1.0,{\"y\":2}]}");
		ok(ph_json_equal(a, b), "JSON equality ignores member order and 1 vs 1.0");
		json_object_put(a);
		json_object_put(b);
	}
	return tap_done();
}
