/* test_yaml.c: ph_yaml_parse (tree shape, line numbers, scalar styles, every
 * refusal with its line), ph_yaml_get/is_null/bool and ph_yaml_to_json. */
#include "first.h"
#include "ph_yaml.h"
#include "ph_util.h"
#include "tap.h"
#include <json-c/json.h>
#include <stdlib.h>

/* Parses s; on failure stores the error (caller frees) in *err. */
static struct ph_ynode *
parse(const char *s, int depth, char **err)
{
	return ph_yaml_parse(s, strlen(s), depth, err);
}

/* Expects s to be refused with an error starting "LINE: " and containing what. */
static void
refused(const char *s, int depth, int line, const char *what, const char *desc)
{
	char *err = NULL, want[32];
	struct ph_ynode *n = parse(s, depth, &err);
	snprintf(want, sizeof want, "%d: ", line);
	ok(n == NULL && err != NULL && strncmp(err, want, strlen(want)) == 0 && strstr(err, what),
	   "%s (got: %s)", desc, err ? err : "(no error)");
	ph_yaml_free(n);
	free(err);
}

/* Converts the YAML text to JSON and compares it with the expected JSON text. */
static void
json_is(const char *yaml, const char *want_json, const char *desc)
{
	char *err = NULL;
	struct ph_ynode *n = parse(yaml, 16, &err);
	struct json_object *got = n ? ph_yaml_to_json(n) : NULL;
	struct json_object *want = json_tokener_parse(want_json);
	int same = n != NULL && json_object_equal(got, want);
	ok(same, "%s", desc);
	if (!same)
		printf("#   got %s, expected %s\n",
		       got ? json_object_to_json_string(got) : (err ? err : "null"), want_json);
	json_object_put(got);
	json_object_put(want);
	ph_yaml_free(n);
	free(err);
}

static void
test_tree(void)
{
	char *err = NULL;
	struct ph_ynode *n, *v;
	const char *doc =
		"# a comment\n"
		"name: phantom\n"
		"list:\n"
		"  - one\n"
		"  - 'two'\n"
		"  - {k: v}\n"
		"nested:\n"
		"  inner:\n"
		"    deep: \"quoted\"\n"
		"block: |\n"
		"  text\n"
		"empty:\n";

	n = parse(doc, 16, &err);
	ok(n != NULL && err == NULL, "a document with maps, sequences and scalars parses");
	if (n == NULL) {
		free(err);
		return;
	}
	is_int(n->kind, PH_Y_MAP, "root is a map");
	is_int(n->n, 5, "root has 5 keys");
	is_int(n->line, 2, "root map starts on its first key's line");
	is_str(n->keys[0], "name", "keys keep their order");
	is_int(n->key_lines[0], 2, "key line of 'name'");
	is_int(n->key_lines[1], 3, "key line of 'list'");
	is_int(n->key_lines[4], 12, "key line of 'empty'");

	v = ph_yaml_get(n, "name");
	ok(v && v->kind == PH_Y_SCALAR && strcmp(v->str, "phantom") == 0 && v->len == 7,
	   "plain scalar value");
	ok(v && !v->quoted, "plain scalar is not quoted");
	is_int(v ? v->line : 0, 2, "scalar line");

	v = ph_yaml_get(n, "list");
	ok(v && v->kind == PH_Y_SEQ && v->n == 3, "sequence with 3 items");
	if (v && v->n == 3) {
		is_int(v->vals[0]->line, 4, "first item line");
		is_int(v->vals[2]->line, 6, "third item line");
		ok(!v->vals[0]->quoted && v->vals[1]->quoted, "single-quoted item is quoted");
		is_str(v->vals[1]->str, "two", "quotes are not part of the value");
		ok(v->vals[2]->kind == PH_Y_MAP && strcmp(ph_yaml_get(v->vals[2], "k")->str, "v") == 0,
		   "flow mapping inside a sequence");
		ok(v->keys == NULL, "a sequence has no keys");
	}

	v = ph_yaml_get(ph_yaml_get(ph_yaml_get(n, "nested"), "inner"), "deep");
	ok(v && v->quoted && strcmp(v->str, "quoted") == 0, "double-quoted nested scalar");
	is_int(v ? v->line : 0, 9, "nested scalar line");

	v = ph_yaml_get(n, "block");
	ok(v && v->quoted && strcmp(v->str, "text\n") == 0, "block scalar counts as quoted");

	v = ph_yaml_get(n, "empty");
	ok(v && v->kind == PH_Y_SCALAR && ph_yaml_is_null(v), "a key without value is null");

	ok(ph_yaml_get(n, "missing") == NULL, "get of a missing key is NULL");
	ok(ph_yaml_get(ph_yaml_get(n, "name"), "x") == NULL, "get on a scalar is NULL");
	ok(ph_yaml_get(ph_yaml_get(n, "list"), "x") == NULL, "get on a sequence is NULL");
	ok(ph_yaml_get(NULL, "x") == NULL, "get on NULL is NULL");
	ph_yaml_free(n);

	n = parse("a: \"x\\0y\"\n", 4, &err);
	v = ph_yaml_get(n, "a");
	ok(v && v->len == 3 && v->str[1] == '\0', "an escaped NUL is kept with its length");
	ph_yaml_free(n);

	n = parse("[1, 2]\n", 4, &err);
	ok(n && n->kind == PH_Y_SEQ && n->n == 2, "a sequence may be the root");
	ph_yaml_free(n);

	n = parse("\"a\": 1\n", 4, &err);
	ok(n && ph_yaml_get(n, "a") != NULL, "a quoted key is a string key");
	ph_yaml_free(n);

	ph_yaml_free(NULL);
	ok(1, "ph_yaml_free(NULL) is harmless");
}

static void
test_empty(void)
{
	static const char *const empties[] = {"", "\n\n", "# only a comment\n", "---\n", "--- \n...\n",
					      "---\n# comment\n"};
	for (size_t i = 0; i < PH_ARRAY_LEN(empties); i++) {
		char *err = NULL;
		struct ph_ynode *n = parse(empties[i], 4, &err);
		ok(n && n->kind == PH_Y_MAP && n->n == 0 && err == NULL,
		   "empty document %zu gives an empty map (%s)", i, err ? err : "ok");
		ph_yaml_free(n);
		free(err);
	}
}

static void
test_refusals(void)
{
	refused("a: 1\nb: 2\na: 3\n", 8, 3, "duplicate key 'a'", "duplicate keys are refused with the line");
	refused("outer:\n  x: 1\n  x: 2\n", 8, 3, "duplicate key 'x'", "nested duplicate keys too");
	refused("a: &anchor 1\nb: *anchor\n", 8, 2, "aliases are not supported", "aliases are refused");
	refused("list:\n  - &x {a: 1}\n  - *x\n", 8, 3, "aliases", "aliases in sequences are refused");
	refused("a: 1\n---\nb: 2\n", 8, 2, "only one YAML document", "a second document is refused at its line");
	refused("? [a, b]\n: 1\n", 8, 1, "mapping keys must be plain strings", "a sequence as key is refused");
	refused("? {a: 1}\n: 1\n", 8, 1, "mapping keys must be plain strings", "a map as key is refused");
	refused("a: 1\nb: c: d\n", 8, 2, "mapping values", "syntax error reports its line");
	refused("a: 1\nb:\n\t- x\n", 8, 3, "", "a tab indent is a syntax error on its line");
	refused("a: [1, 2\nb: 3\n", 8, 2, "", "an unclosed flow sequence is a syntax error");
	refused("a: \"open\n", 8, 2, "", "an unclosed quote is a syntax error");
	refused("a: \xff\xfe\n", 8, 1, "", "invalid UTF-8 is refused");
}

/* Builds n nested flow sequences: [[[...]]]. Caller frees. */
static char *
nested(int n)
{
	struct ph_buf b;
	ph_buf_init(&b);
	for (int i = 0; i < n; i++)
		ph_buf_addc(&b, '[');
	for (int i = 0; i < n; i++)
		ph_buf_addc(&b, ']');
	return ph_buf_steal(&b);
}

static void
test_depth(void)
{
	char *err = NULL, *s;
	struct ph_ynode *n;

	/* the root is depth 1: a: {b: {c: 1}} reaches depth 4 at the scalar */
	n = parse("a: {b: {c: 1}}\n", 4, &err);
	ok(n != NULL, "nesting equal to the limit is accepted");
	ph_yaml_free(n);
	free(err);
	refused("a: {b: {c: 1}}\n", 3, 1, "nesting too deep", "one level over the limit is refused");

	s = nested(32);
	n = parse(s, 32, &err);
	ok(n != NULL, "32 nested sequences with limit 32");
	ph_yaml_free(n);
	free(err);
	n = parse(s, 31, &err);
	ok(n == NULL && err && strstr(err, "nesting too deep"), "32 nested sequences with limit 31");
	ph_yaml_free(n);
	free(err);
	free(s);

	/* far deeper than any limit: refused without recursing through it all */
	s = nested(100000);
	n = parse(s, 32, &err);
	ok(n == NULL && err != NULL, "100000 nested sequences are refused");
	ph_yaml_free(n);
	free(err);
	free(s);
}

static void
test_scalars(void)
{
	static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"};
	static const char *const no[] = {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"};
	static const char *const nulls[] = {"~", "null", "Null", "NULL", ""};
	struct ph_ynode sc;
	bool b;

	memset(&sc, 0, sizeof sc);
	sc.kind = PH_Y_SCALAR;
	for (size_t i = 0; i < PH_ARRAY_LEN(yes); i++) {
		sc.str = (char *)yes[i];
		sc.len = strlen(yes[i]);
		b = false;
		ok(ph_yaml_bool(&sc, &b) == 0 && b, "'%s' is true", yes[i]);
		sc.str = (char *)no[i];
		sc.len = strlen(no[i]);
		b = true;
		ok(ph_yaml_bool(&sc, &b) == 0 && !b, "'%s' is false", no[i]);
	}
	sc.str = (char *)"true";
	sc.len = 4;
	sc.quoted = true;
	ok(ph_yaml_bool(&sc, &b) != 0, "a quoted 'true' is not a boolean");
	sc.quoted = false;
	sc.str = (char *)"maybe";
	sc.len = 5;
	ok(ph_yaml_bool(&sc, &b) != 0, "'maybe' is not a boolean");
	sc.str = (char *)"1";
	sc.len = 1;
	ok(ph_yaml_bool(&sc, &b) != 0, "'1' is not a boolean");
	ok(ph_yaml_bool(NULL, &b) != 0, "NULL is not a boolean");
	sc.kind = PH_Y_SEQ;
	ok(ph_yaml_bool(&sc, &b) != 0, "a sequence is not a boolean");
	sc.kind = PH_Y_SCALAR;

	for (size_t i = 0; i < PH_ARRAY_LEN(nulls); i++) {
		sc.str = (char *)nulls[i];
		sc.len = strlen(nulls[i]);
		ok(ph_yaml_is_null(&sc), "'%s' is null", nulls[i]);
	}
	sc.str = (char *)"null";
	sc.len = 4;
	sc.quoted = true;
	ok(!ph_yaml_is_null(&sc), "a quoted 'null' is a string");
	sc.quoted = false;
	sc.str = (char *)"nil";
	sc.len = 3;
	ok(!ph_yaml_is_null(&sc), "'nil' is not null");
	ok(ph_yaml_is_null(NULL), "an absent node is null");
	sc.kind = PH_Y_MAP;
	ok(!ph_yaml_is_null(&sc), "a map is not null");
}

static void
test_to_json(void)
{
	json_is("a: 1\nb: -42\nc: 9223372036854775807\n", "{\"a\":1,\"b\":-42,\"c\":9223372036854775807}",
		"plain integers become numbers");
	json_is("a: 1.5\nb: 2e3\nc: -0.25\n", "{\"a\":1.5,\"b\":2000.0,\"c\":-0.25}",
		"plain decimals become numbers");
	json_is("a: '1'\nb: \"true\"\nc: 'null'\n", "{\"a\":\"1\",\"b\":\"true\",\"c\":\"null\"}",
		"quoted scalars stay strings");
	json_is("a: true\nb: off\nc: ~\nd:\n", "{\"a\":true,\"b\":false,\"c\":null,\"d\":null}",
		"booleans and nulls");
	json_is("a: 0x10\nb: 1e\nc: .inf\nd: 1_000\ne: '+'\nf: 12abc\n",
		"{\"a\":\"0x10\",\"b\":\"1e\",\"c\":\".inf\",\"d\":\"1_000\",\"e\":\"+\",\"f\":\"12abc\"}",
		"things that only look numeric stay strings");
	json_is("big: 99999999999999999999\n", "{\"big\":1e20}", "an integer beyond int64 becomes a double");
	json_is("l: [1, x, {k: [true]}]\n", "{\"l\":[1,\"x\",{\"k\":[true]}]}", "nested sequences and maps");
	json_is("text: |\n  line 1\n  line 2\n", "{\"text\":\"line 1\\nline 2\\n\"}", "block scalars");
	json_is("", "{}", "an empty document is an empty object");
	json_is("[]\n", "[]", "an empty sequence");
	json_is("s: héllo\n", "{\"s\":\"héllo\"}", "UTF-8 passes through");
	ok(ph_yaml_to_json(NULL) == NULL, "to_json(NULL) is NULL");
	{
		char *err = NULL;
		struct ph_ynode *n = parse("a: \"x\\0y\"\n", 4, &err);
		struct json_object *j = ph_yaml_to_json(n);
		struct json_object *a = NULL;
		ok(json_object_object_get_ex(j, "a", &a) && json_object_get_string_len(a) == 3,
		   "a string with NUL keeps its length in JSON");
		json_object_put(j);
		ph_yaml_free(n);
	}
}

int
main(void)
{
	test_tree();
	test_empty();
	test_refusals();
	test_depth();
	test_scalars();
	test_to_json();
	return tap_done();
}
