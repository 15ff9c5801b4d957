/* test_skills.c: the skill:// resolver, SKILL.md frontmatter, templates,
 * manifest loading (every problem with its file and line), route matching,
 * the seed evidence (refunds renders "Hello Ada." for principal Ada) and
 * the digest cache. */
#include "first.h"
#include "ph_conf.h"
#include "ph_skills.h"
#include "ph_util.h"
#include "tap.h"
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[256];

/* ---- skill:// URIs ---- */

static int
split(const char *uri, char ***segs)
{
	return ph_skill_uri_split(uri, strlen(uri), segs);
}

static void
test_uri(void)
{
	char **s = NULL;
	int n;
	struct ph_buf b;
	static const char *const bad[] = {
		"skill://git-workflow/SKILL.md/",    /* trailing slash */
		"skill://git-workflow//SKILL.md",    /* empty segment */
		"skill://git-workflow/SKILL.md?x=1", /* query */
		"skill://git-workflow/SKILL.md#top", /* fragment */
		"skill://git-workflow/%53KILL.md",   /* needless escape of 'S' */
		"skill://a/my%2ffile.md",            /* lowercase hex */
		"skill://a/x%2Fy.md",                /* encoded separator */
		"skill://a/x%00.md",                 /* encoded NUL */
		"skill://a/../b/SKILL.md",           /* dot-dot */
		"skill://a/./SKILL.md",              /* dot */
		"skill://a/%2E%2E/SKILL.md",         /* dot-dot, needlessly encoded */
		"skill://a/b c.md",                  /* a raw space */
		"skill://a/b%2",                     /* truncated escape */
		"skill://a/b%G0",                    /* bad hex */
		"SKILL://git-workflow/SKILL.md",     /* scheme case */
		"skill:/git-workflow/SKILL.md",
		"https://example.com/SKILL.md",
		"skill://",
		"skill:///SKILL.md",
		"skill://a/b\\c.md",
		"skill://user@host/SKILL.md",
		"skill://host:80/SKILL.md",
	};
	n = split("skill://acme/billing/refunds/SKILL.md", &s);
	ok(n == 4 && strcmp(s[0], "acme") == 0 && strcmp(s[3], "SKILL.md") == 0,
	   "a canonical skill URI splits into its segments");
	ph_skill_segs_free(s, (size_t)n);
	n = split("skill://files/spaced-files/my%20file.md", &s);
	ok(n == 3 && strcmp(s[2], "my file.md") == 0, "an encoded space decodes");
	ph_skill_segs_free(s, (size_t)n);
	n = split("skill://a/caf%C3%A9.md", &s);
	ok(n == 2 && strcmp(s[1], "caf\xC3\xA9.md") == 0, "UTF-8 escapes decode byte by byte");
	ph_skill_segs_free(s, (size_t)n);
	n = split("skill://a/~x_y-z.1", &s);
	ok(n == 2, "unreserved characters stay as they are");
	ph_skill_segs_free(s, (size_t)n);
	for (size_t i = 0; i < PH_ARRAY_LEN(bad); i++) {
		n = split(bad[i], &s);
		ok(n == -1 && s == NULL, "not canonical, refused: %s", bad[i]);
	}
	ok(ph_skill_uri_split("skill://a/SKILL.md\0.png", 24, &s) == -1, "an embedded NUL is refused");
	{
		struct ph_buf deep;
		ph_buf_init(&deep);
		ph_buf_adds(&deep, "skill://a");
		for (int i = 0; i < PH_SKILL_MAX_SEGS + 1; i++)
			ph_buf_adds(&deep, "/x");
		ok(split(deep.data, &s) == -1, "more than %d segments are refused", PH_SKILL_MAX_SEGS);
		ph_buf_free(&deep);
	}
	ph_buf_init(&b);
	ph_skill_uri_encode(&b, "my file.md", 10);
	is_str(b.data, "my%20file.md", "a space is encoded as %%20");
	ph_buf_reset(&b);
	ph_skill_uri_encode_path(&b, "a b/caf\xC3\xA9/Q&A.md");
	is_str(b.data, "a%20b/caf%C3%A9/Q%26A.md", "paths encode each segment, uppercase hex");
	ph_buf_free(&b);
	is_str(ph_mime_guess("SKILL.md"), "text/markdown", "SKILL.md is text/markdown");
	is_str(ph_mime_guess("assets/LOGO.PNG"), "image/png", "extensions are case-insensitive");
	is_str(ph_mime_guess("bin/.bashrc"), "application/octet-stream", "dotfiles have no extension");
	ok(ph_utf8_valid("caf\xC3\xA9", 5), "valid UTF-8");
	ok(!ph_utf8_valid("\xC0\xAF", 2), "overlong UTF-8 refused");
	ok(!ph_utf8_valid("\xED\xA0\x80", 3), "surrogate refused");
	ok(!ph_utf8_valid("\xF4\x90\x80\x80", 4), "above U+10FFFF refused");
	ok(!ph_utf8_valid("\xE2\x82", 2), "truncated sequence refused");
}

/* ---- frontmatter ---- */

static struct json_object *
fm(const char *text, char **err)
{
	return ph_skill_frontmatter(text, strlen(text), 32, err);
}

static const char *
fmj(const char *text)
{
	static char out[1024];
	char *err = NULL;
	struct json_object *o = fm(text, &err);
	if (o == NULL) {
		snprintf(out, sizeof out, "ERR %s", err);
		free(err);
		return out;
	}
	snprintf(out, sizeof out, "%s", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return out;
}

static void
test_frontmatter(void)
{
	static const char *const badnames[] = {"Refunds", "-refunds", "refunds-", "re--funds",
					       "re_funds", ""};
	char *err = NULL;
	char big[1100];
	is_str(fmj("---\nname: x\ndescription: d\n---\n# Body\n"), "{\"name\":\"x\",\"description\":\"d\"}",
	       "frontmatter between --- lines becomes JSON");
	is_str(fmj("---\na: yes\nb: on\nc: No\nd: True\ne: FALSE\n---\n"),
	       "{\"a\":\"yes\",\"b\":\"on\",\"c\":\"No\",\"d\":true,\"e\":false}",
	       "YAML 1.2 core booleans: yes/on/No stay strings");
	is_str(fmj("---\na: 0o17\nb: 0x1F\nc: 007\nd: -12\ne: +5\n---\n"),
	       "{\"a\":15,\"b\":31,\"c\":7,\"d\":-12,\"e\":5}", "integers: octal, hex, leading zeros, signs");
	is_str(fmj("---\na: 1.5\nb: .5\nc: 1e3\nd: \"1.0\"\ne: '2'\n---\n"),
	       "{\"a\":1.5,\"b\":0.5,\"c\":1000.0,\"d\":\"1.0\",\"e\":\"2\"}",
	       "floats, and quoted numbers stay strings");
	is_str(fmj("---\na: ~\nb: null\nc:\nd: NULL\ne: nil\n---\n"),
	       "{\"a\":null,\"b\":null,\"c\":null,\"d\":null,\"e\":\"nil\"}", "nulls");
	is_str(fmj("---\n1: x\ntrue: y\n---\n"), "{\"1\":\"x\",\"true\":\"y\"}",
	       "keys 1 and true become the strings \"1\" and \"true\"");
	is_str(fmj("---\nmetadata: {\"team\":\"billing\"}\nallowed-tools: [a, \"b: c\"]\n---\n"),
	       "{\"metadata\":{\"team\":\"billing\"},\"allowed-tools\":[\"a\",\"b: c\"]}",
	       "flow collections, JSON-style keys");
	is_str(fmj("---\nd: |\n  line one\n  line two\ne: >\n  folded\n  text\n---\n"),
	       "{\"d\":\"line one\\nline two\\n\",\"e\":\"folded text\\n\"}", "block scalars");
	is_str(fmj("\xEF\xBB\xBF---\r\nname: x\r\ndescription: d\r\n---\r\nbody"),
	       "{\"name\":\"x\",\"description\":\"d\"}", "a byte order mark and CRLF are accepted");
	is_str(fmj("---\n---\n# empty\n"), "{}", "empty frontmatter is an empty mapping");
	is_str(fmj("---\nname: x\n---  \t\nbody"), "{\"name\":\"x\"}", "blanks after the closing ---");
	is_str(fmj("---\ndescription: \"quotes \\\" and: colon\\nnewline é ✓\"\n---\n"),
	       "{\"description\":\"quotes \\\" and: colon\\nnewline é ✓\"}",
	       "escapes, colons and non-ASCII survive");
	ok(strncmp(fmj("# no frontmatter\n"), "ERR 1: SKILL.md must begin", 26) == 0,
	   "a file without frontmatter is refused");
	ok(strncmp(fmj("--- \nname: x\n---\n"), "ERR 1:", 6) == 0, "the first line must be exactly ---");
	ok(strncmp(fmj("---\nname: x\n"), "ERR 1: SKILL.md frontmatter has no closing", 40) == 0,
	   "an unclosed frontmatter is refused");
	is_str(fmj("---\nname: x\nbad: [\n---\n"), "ERR 4: did not find expected node content",
	       "YAML errors carry the line in the file");
	ok(strstr(fmj("---\n- a\n- b\n---\n"), "must be a YAML mapping") != NULL,
	   "a list is not a frontmatter");
	ok(strstr(fmj("---\na: &x 1\nb: *x\n---\n"), "anchors, aliases and tags") != NULL,
	   "anchors and aliases are refused");
	ok(strstr(fmj("---\na: !!str 1\n---\n"), "anchors, aliases and tags") != NULL, "tags are refused");
	ok(strstr(fmj("---\na: .inf\n---\n"), "cannot be represented in JSON") != NULL, ".inf is refused");
	ok(strstr(fmj("---\na: 1e999\n---\n"), "cannot be represented in JSON") != NULL,
	   "an overflowing float is refused");
	is_str(fmj("---\na: 1\na: 2\n---\n"), "ERR 3: duplicate frontmatter key 'a'", "duplicate keys");
	ok(strstr(fmj("---\na: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n---\n"),
		  "too deep") != NULL, "nesting is bounded");
	ok(fm("---\nname: x\n", &err) == NULL && err != NULL, "errors are returned to the caller");
	free(err);

	for (size_t i = 0; i < PH_ARRAY_LEN(badnames); i++)
		ok(!ph_skill_name_valid(badnames[i]), "invalid skill name '%s'", badnames[i]);
	memset(big, 'a', 65);
	big[65] = '\0';
	ok(!ph_skill_name_valid(big), "a 65-character name is invalid");
	big[64] = '\0';
	ok(ph_skill_name_valid(big), "a 64-character name is valid");
	ok(ph_skill_name_valid("git-workflow") && ph_skill_name_valid("a1"), "valid names");
	{
		struct json_object *o = fm("---\nname: x\ndescription: d\nmetadata: {version: 1.0}\n---\n", &err);
		is_str(ph_skill_fm_check(o), "frontmatter 'metadata' values must be strings (quote them)",
		       "metadata values must be strings");
		json_object_put(o);
		o = fm("---\nname: x\ndescription: d\nmetadata: {\"io.modelcontextprotocol/x\": y}\n---\n", &err);
		ok(ph_skill_fm_check(o) != NULL, "reserved metadata keys are refused");
		json_object_put(o);
		o = fm("---\nname: x\n---\n", &err);
		is_str(ph_skill_fm_check(o), "frontmatter needs a string 'description'", "description is required");
		json_object_put(o);
		o = fm("---\ndescription: d\n---\n", &err);
		is_str(ph_skill_fm_check(o), "frontmatter needs a string 'name'", "name is required");
		json_object_put(o);
		o = fm("---\nname: x\ndescription: d\ncompatibility: 5\n---\n", &err);
		ok(ph_skill_fm_check(o) != NULL, "compatibility must be a string");
		json_object_put(o);
		o = fm("---\nname: x\ndescription: d\nallowed-tools: [1]\n---\n", &err);
		ok(ph_skill_fm_check(o) != NULL, "allowed-tools items must be strings");
		json_object_put(o);
		o = json_object_new_object();
		json_object_object_add(o, "name", json_object_new_string("x"));
		memset(big, 'd', 1025);
		json_object_object_add(o, "description", json_object_new_string_len(big, 1024));
		ok(ph_skill_fm_check(o) == NULL, "a 1024-character description is fine");
		json_object_object_add(o, "description", json_object_new_string_len(big, 1025));
		ok(ph_skill_fm_check(o) != NULL, "a 1025-character description is not");
		/* characters, not bytes: 1000 two-byte characters */
		{
			struct ph_buf u;
			ph_buf_init(&u);
			for (int i = 0; i < 1000; i++)
				ph_buf_adds(&u, "\xC3\xA9");
			json_object_object_add(o, "description", json_object_new_string(u.data));
			ok(ph_skill_fm_check(o) == NULL, "description length counts characters");
			ph_buf_free(&u);
		}
		json_object_put(o);
	}
}

/* ---- templates ---- */

static void
test_templates(void)
{
	char *pn[] = {"study_id"}, *vals[] = {"42"};
	struct ph_buf b;
	char *msg;
	int line = 0;
	bool principal = false;
	const char *src = "Hello {{principal}}, {{ user }}: study {{study_id}} {{x";
	ph_buf_init(&b);
	ph_skill_tmpl_render(&b, src, strlen(src), pn, vals, 1, "Ada", NULL);
	is_str(b.data, "Hello Ada, Ada: study 42 {{x", "principal, its alias user, and parameters");
	ph_buf_reset(&b);
	ph_skill_tmpl_render(&b, src, strlen(src), pn, vals, 1, NULL, NULL);
	is_str(b.data, "Hello , : study 42 {{x", "no principal renders as empty");
	ph_buf_reset(&b);
	ph_skill_tmpl_render(&b, "{{nope}} {", 10, pn, vals, 1, "Ada", NULL);
	is_str(b.data, "{{nope}} {", "unknown placeholders stay as they are");
	ph_buf_free(&b);
	msg = ph_skill_tmpl_check("a\nb {{study_id}}\n{{principal}}", 30, pn, 1, &line, &principal);
	ok(msg == NULL && principal, "known placeholders pass the check, principal noticed");
	msg = ph_skill_tmpl_check("a\nb\n {{ other }}", 16, pn, 1, &line, &principal);
	ok(msg != NULL && line == 3 && strstr(msg, "unknown placeholder {{other}}") != NULL,
	   "an unknown placeholder is reported with its line");
	free(msg);
	msg = ph_skill_tmpl_check("{{ 1 }}", 7, pn, 1, &line, &principal);
	ok(msg != NULL && line == 1, "a malformed placeholder is reported");
	free(msg);
	msg = ph_skill_tmpl_check("{{study_id}}", 12, pn, 1, &line, &principal);
	ok(msg == NULL && !principal, "a parameter alone does not use the principal");
}

/* ---- loading ---- */

static void
write_file(const char *rel, const char *content)
{
	char *p = ph_xasprintf("%s/%s", tmpdir, rel), *d = ph_dirname(p);
	char *cmd = ph_xasprintf("mkdir -p '%s'", d);
	FILE *f;
	if (system(cmd) != 0)
		abort();
	f = fopen(p, "w");
	if (f == NULL)
		abort();
	fputs(content, f);
	fclose(f);
	free(cmd);
	free(d);
	free(p);
}

/* Loads phantom.yaml text (skills section) against tmpdir; returns the
 * config or NULL, with the problems joined by newlines in *probs_out. */
static struct ph_config *
load(const char *yaml, char **probs_out)
{
	struct ph_conf_problems probs = {0};
	struct ph_config *c = ph_conf_load_buf("phantom.yaml", tmpdir, yaml, strlen(yaml), &probs);
	struct ph_buf b;
	ph_buf_init(&b);
	for (size_t i = 0; i < probs.n; i++) {
		ph_buf_adds(&b, probs.v[i]);
		ph_buf_addc(&b, '\n');
	}
	*probs_out = ph_buf_steal(&b);
	ph_conf_problems_free(&probs);
	return c;
}

#define GOOD_MD(n) "---\nname: " n "\ndescription: d\n---\n# " n "\n"

/* Expects the manifest text m to fail with a problem containing want at
 * manifest line `line` (0: any line). */
static void
manifest_problem(const char *m, int line, const char *want, const char *what)
{
	char *probs, prefix[512];
	struct ph_config *c;
	write_file("m/manifest.yaml", m);
	c = load("skills: {manifest: m/manifest.yaml}\n", &probs);
	snprintf(prefix, sizeof prefix, "%s/m/manifest.yaml:%d: ", tmpdir, line);
	ok(c == NULL && strstr(probs, want) != NULL && (line == 0 || strstr(probs, prefix) != NULL),
	   "manifest problem: %s", what);
	if (c != NULL || strstr(probs, want) == NULL)
		printf("#   problems: %s", probs);
	ph_conf_free(c);
	free(probs);
}

static void
test_load_problems(void)
{
	char *probs;
	struct ph_config *c;
	write_file("m/a/SKILL.md", GOOD_MD("a"));
	write_file("m/b/SKILL.md", GOOD_MD("b"));
	write_file("m/wrong/SKILL.md", GOOD_MD("other"));
	write_file("m/empty/README.md", "no skill here\n");
	write_file("m/both/SKILL.md", GOOD_MD("both"));
	write_file("m/both/x.md", "x\n");
	write_file("m/both/x.md.tmpl", "x\n");
	write_file("m/tpl/SKILL.md", GOOD_MD("tpl"));
	write_file("m/tpl/t.md.tmpl", "line\n{{nobody}}\n");
	write_file("m/fmt/SKILL.md.tmpl", "---\nname: fmt\ndescription: {{principal}}\n---\n");
	write_file("m/many/SKILL.md", GOOD_MD("many"));
	write_file("m/many/1.md", "1");
	write_file("m/many/2.md", "2");
	write_file("m/many/3.md", "3");
	write_file("m/bad-fm/SKILL.md", "---\nname: bad-fm\n---\n");

	manifest_problem("skills:\n  - path: a\n    dir: a\n  - path: a\n    dir: b\n", 4,
			 "is the same route as", "a duplicate path");
	manifest_problem("skills:\n  - path: x/:id/a\n    dir: a\n  - path: x/:other/a\n    dir: a\n", 0,
			 "is the same route as", "the same route with other parameter names");
	manifest_problem("skills:\n  - path: n/a\n    dir: a\n  - path: n/a/:x/b\n    dir: b\n", 4,
			 "cannot have parameters below", "a nested skill with its own parameters");
	manifest_problem("skills:\n  - path: n/:id/a\n    dir: a\n  - path: n/fixed/a/b\n    dir: b\n", 4,
			 "does not use the same parameters", "nesting across a parameter and a literal");
	manifest_problem("skills:\n  - path: :tenant/a\n    dir: a\n", 2, "first segment",
			 "a parameter as first segment");
	manifest_problem("skills:\n  - path: acme/:name\n    dir: a\n", 2, "skill name",
			 "a parameter as last segment");
	manifest_problem("skills:\n  - path: acme/Bad_Name\n    dir: a\n", 2, "skill name",
			 "an invalid skill name");
	manifest_problem("skills:\n  - path: Acme/a\n    dir: a\n", 2, "first segment is lowercase",
			 "an uppercase first segment");
	manifest_problem("skills:\n  - path: acme/../a\n    dir: a\n", 2, "'..' segment", "a .. segment");
	manifest_problem("skills:\n  - path: acme//a\n    dir: a\n", 2, "empty segment", "an empty segment");
	manifest_problem("skills:\n  - path: a\n    dir: nowhere\n", 3, "is not a directory",
			 "a missing directory");
	manifest_problem("skills:\n  - path: a\n", 2, "needs a 'dir'", "no dir");
	manifest_problem("skills:\n  - path: x/wrong\n    dir: wrong\n", 2,
			 "frontmatter name 'other' must equal the last path segment 'wrong'",
			 "frontmatter name and path differ");
	manifest_problem("skills:\n  - path: empty\n    dir: empty\n", 2, "has no SKILL.md", "no SKILL.md");
	manifest_problem("skills:\n  - path: both\n    dir: both\n", 2, "both x.md and x.md.tmpl exist",
			 "a file and its template");
	manifest_problem("skills:\n  - path: tpl\n    dir: tpl\n", 2, "t.md.tmpl:2: unknown placeholder",
			 "an unknown placeholder, with the template's line");
	manifest_problem("skills:\n  - path: fmt\n    dir: fmt\n", 2, "placeholders are only allowed below",
			 "a placeholder in the frontmatter");
	manifest_problem("skills:\n  - path: bad-fm\n    dir: bad-fm\n", 2,
			 "frontmatter needs a string 'description'", "invalid frontmatter");
	manifest_problem("skills:\n  - path: a\n    dir: a\n    colour: red\n", 4, "unknown key 'colour'",
			 "an unknown key in an entry");
	manifest_problem("extra: 1\nskills: []\n", 1, "unknown key 'extra'", "an unknown top-level key");
	manifest_problem("skills:\n  - path: s/:id/a\n    dir: a\n    params: {id: {pattern: \"[0-9]+\"}}\n"
			 "    list: [42, abc]\n", 5, "'abc' does not match the pattern of 'id'",
			 "a listed value that does not match its pattern");
	manifest_problem("skills:\n  - path: s/:id/a\n    dir: a\n    params: {nope: {pattern: x}}\n", 4,
			 "'nope' is not a parameter", "a pattern for an unknown parameter");
	manifest_problem("skills:\n  - path: s/:id/a\n    dir: a\n    params: {id: {pattern: \"[\"}}\n", 2,
			 "params.id.pattern '['", "an invalid regular expression");
	manifest_problem("skills:\n  - path: a\n    dir: a\n    list: [1]\n", 4, "has no parameters",
			 "a list on a path without parameters");
	manifest_problem("skills:\n  - path: a\n    dir: a\n    cache: {ttl_ms: 5}\n", 4, "requires ttl_ms",
			 "cache without scope");
	manifest_problem("skills:\n  - path: a\n    dir: a\n    cache: {ttl_ms: -1, scope: public}\n", 4,
			 "cache.ttl_ms", "a negative ttl");
	manifest_problem("skills:\n  - path: a\n    dir: a\n    cache: {ttl_ms: 1, scope: shared}\n", 4,
			 "cache.scope", "an unknown scope");
	manifest_problem("skills:\n  - path: r/a\n    dynamic: true\n    dir: a\n    exec: [/bin/true]\n", 2,
			 "a dynamic skill has no dir", "a dynamic skill with a dir");
	manifest_problem("skills:\n  - path: r/a\n    dynamic: true\n", 2,
			 "a dynamic skill needs exec", "a dynamic skill without exec");
	manifest_problem("skills:\n  - path: r/a\n    dynamic: true\n    exec: [./nonexistent.sh]\n", 4,
			 "cannot run './nonexistent.sh'", "a dynamic skill whose program does not exist");
	manifest_problem("skills:\n  - path: a\n    dir: a\n    exec: [/bin/true]\n", 2,
			 "exec is only for dynamic skills", "exec without dynamic");
	manifest_problem("skills:\n  - path: r/a\n    dynamic: true\n    exec: [/bin/true]\n"
			 "  - path: r/a/b\n    dir: b\n", 5, "cannot be nested in the dynamic skill",
			 "a skill nested in a dynamic one");
	manifest_problem("skills:\n  - path: r/a\n    dynamic: true\n    exec: [/bin/true]\n"
			 "    timeout_ms: 0\n", 5, "timeout_ms", "a dynamic skill's timeout is bounded");
	manifest_problem("skills: {path: a}\n", 1, "expected a list", "skills is not a list");
	manifest_problem("skills:\n  - path: a\n    dir: a\n  bad\n", 0, "", "a YAML syntax error");

	/* limits from phantom.yaml */
	write_file("m/manifest.yaml", "skills:\n  - path: many\n    dir: many\n");
	c = load("skills: {manifest: m/manifest.yaml, max_files: 3}\n", &probs);
	ok(c == NULL && strstr(probs, "manifest.yaml:2: skill 'many' has more than 3 files") != NULL,
	   "skills.max_files is enforced at load");
	free(probs);
	c = load("skills: {manifest: m/manifest.yaml, max_bytes: 20}\n", &probs);
	ok(c == NULL && strstr(probs, "more than 20 bytes") != NULL, "skills.max_bytes is enforced at load");
	free(probs);
	c = load("skills: {manifest: m/manifest.yaml, max_files: 0}\n", &probs);
	ok(c == NULL && strstr(probs, "phantom.yaml:1: skills.max_files") != NULL,
	   "limits are bounded, with the phantom.yaml line");
	free(probs);
	c = load("skills: {manifest: m/manifest.yaml, colour: red}\n", &probs);
	ok(c == NULL && strstr(probs, "unknown key 'skills.colour'") != NULL, "unknown skills keys");
	free(probs);
	c = load("skills: {max_files: 3}\n", &probs);
	ok(c == NULL && strstr(probs, "'manifest' is required") != NULL, "the manifest is required");
	free(probs);
	c = load("# the skills\nskills:\n  max_files: 3\n  manifest: m/none.yaml\n", &probs);
	ok(c == NULL && strstr(probs, "phantom.yaml:4: skills.manifest: cannot read ") != NULL &&
	   strstr(probs, "m/none.yaml: No such file") != NULL && strstr(probs, "none.yaml:0") == NULL,
	   "a missing manifest is blamed on the phantom.yaml line naming it, with its path");
	free(probs);

	/* symbolic links: inside is served, outside is refused */
	write_file("m/manifest.yaml", "skills:\n  - path: a\n    dir: a\n");
	{
		char *in = ph_xasprintf("%s/m/a/inside.md", tmpdir), *out = ph_xasprintf("%s/m/a/outside.md", tmpdir);
		char *target = ph_xasprintf("%s/m/b/SKILL.md", tmpdir), *fifo = ph_xasprintf("%s/m/a/pipe", tmpdir);
		ok(symlink("SKILL.md", in) == 0, "make a link inside the skill");
		c = load("skills: {manifest: m/manifest.yaml}\n", &probs);
		ok(c != NULL && c->skills->skills[0].nfiles == 2, "a link to a file inside is served");
		ph_conf_free(c);
		free(probs);
		ok(symlink(target, out) == 0, "make a link that points outside");
		c = load("skills: {manifest: m/manifest.yaml}\n", &probs);
		ok(c == NULL && strstr(probs, "symbolic link pointing outside the skill directory") != NULL,
		   "a link pointing outside the skill is a load problem");
		free(probs);
		unlink(out);
		ok(mkfifo(fifo, 0600) == 0, "make a FIFO in the skill");
		c = load("skills: {manifest: m/manifest.yaml}\n", &probs);
		ok(c == NULL && strstr(probs, "is not a regular file or directory") != NULL,
		   "a FIFO is a load problem (it would block a read)");
		free(probs);
		unlink(fifo);
		unlink(in);
		free(in);
		free(out);
		free(target);
		free(fifo);
	}
	/* hidden files are not served */
	write_file("m/a/.hidden", "secret\n");
	c = load("skills: {manifest: m/manifest.yaml}\n", &probs);
	ok(c != NULL && c->skills->skills[0].nfiles == 1, "dotfiles are not served");
	ph_conf_free(c);
	free(probs);
	c = load("skills:\n", &probs);
	ok(c != NULL && c->skills == NULL, "an empty skills section serves no skills");
	ph_conf_free(c);
	free(probs);
}

/* ---- the fixture tree: matching, seed evidence, digests ---- */

static struct ph_skill *
find_skill(struct ph_skills_conf *sc, const char *path)
{
	for (size_t i = 0; i < sc->n; i++)
		if (strcmp(sc->skills[i].path, path) == 0)
			return &sc->skills[i];
	return NULL;
}

static void
hexof(const unsigned char d[32], char out[65])
{
	for (int i = 0; i < 32; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

static void
test_fixture(const char *srcdir)
{
	char *yaml = ph_xasprintf("skills: {manifest: %s/tests/fixtures/skills/manifest.yaml}\n", srcdir);
	char *probs, hex[65];
	struct ph_config *c = load(yaml, &probs);
	struct ph_skills_conf *sc;
	struct ph_skill *k;
	char **segs;
	size_t used;
	long m;
	int n;
	ok(c != NULL, "the fixture manifest loads");
	if (c == NULL) {
		printf("# %s", probs);
		free(probs);
		free(yaml);
		return;
	}
	sc = c->skills;
	n = split("skill://acme/billing/refunds/partial-refunds/SKILL.md", &segs);
	m = ph_skills_match(sc, segs, (size_t)n, &used);
	ok(m >= 0 && strcmp(sc->skills[m].path, "acme/billing/refunds/partial-refunds") == 0 && used == 4,
	   "the deepest route matches");
	ph_skill_segs_free(segs, (size_t)n);
	n = split("skill://studies/42/study-review/SKILL.md", &segs);
	m = ph_skills_match(sc, segs, (size_t)n, &used);
	ok(m >= 0 && strcmp(sc->skills[m].path, "studies/:study_id/study-review") == 0,
	   "a parameter matches its pattern");
	ph_skill_segs_free(segs, (size_t)n);
	n = split("skill://studies/abc/study-review/SKILL.md", &segs);
	ok(ph_skills_match(sc, segs, (size_t)n, &used) < 0, "a value outside the pattern matches nothing");
	ph_skill_segs_free(segs, (size_t)n);
	n = split("skill://acme/billing/SKILL.md", &segs);
	ok(ph_skills_match(sc, segs, (size_t)n, &used) < 0, "a prefix is not a skill");
	ph_skill_segs_free(segs, (size_t)n);

	k = find_skill(sc, "acme/billing/refunds");
	ok(k != NULL && k->ntree == 4, "refunds' tree holds its files and the nested skill's");
	if (k != NULL && k->ntree == 4) {
		const char *want[] = {"SKILL.md", "assets/logo.png", "examples/email.md",
				      "partial-refunds/SKILL.md"};
		struct ph_buf b;
		const struct ph_tree_ent *t;
		unsigned char d[32], dd[32];
		size_t size;
		for (int i = 0; i < 4; i++)
			is_str(k->tree[i].rel, want[i], "tree entry %d sorted by path", i);
		/* the seed evidence: SKILL.md renders "Hello Ada." for principal Ada */
		t = ph_skills_tree_find(k, "SKILL.md");
		ph_buf_init(&b);
		ok(t && ph_skills_file_bytes(sc, &sc->skills[t->owner], t->f, NULL, "Ada", NULL, &b) == 0,
		   "refunds SKILL.md renders");
		ok(b.data && strstr(b.data, "# Refunds\n\nHello Ada. Draft the reply") != NULL,
		   "it says Hello Ada. for principal Ada");
		ok(ph_skills_file_digest(sc, &sc->skills[t->owner], t->f, NULL, "Ada", NULL, d, &size) == 0,
		   "its digest is computed");
		crypto_hash_sha256(dd, (const unsigned char *)b.data, b.len);
		ok(memcmp(d, dd, 32) == 0 && size == b.len, "the digest and size are of the served bytes");
		hexof(d, hex);
		is_str(hex, "0bcfa5f8db69a809b9e7a286171a21dae026e89ad9e4a844fb154d0bb1c14cac",
		       "and equal the Elixir implementation's digest for Ada (phantom-behaviour §3.2)");
		is_int(size, 226, "226 bytes, as there");
		ph_buf_free(&b);
		ok(t->f->uses_principal, "the template is known to use the principal");
	}
	k = find_skill(sc, "nest/outer");
	if (k != NULL) {
		ok(ph_skills_tree_find(k, "inner/notes.md") != NULL &&
		   strcmp(sc->skills[ph_skills_tree_find(k, "inner/notes.md")->owner].path, "nest/outer/inner") == 0,
		   "inner/notes.md in outer's tree belongs to the nested skill");
		ok(ph_skills_tree_find(k, "gone/notes.md") == NULL, "outer's own gone/notes.md is shadowed");
	}
	/* the digest cache */
	k = find_skill(sc, "git-workflow");
	if (k != NULL) {
		unsigned char d1[32], d2[32];
		size_t s1, s2;
		unsigned long before = ph_skills_hash_count;
		ok(ph_skills_file_digest(sc, k, &k->files[0], NULL, NULL, NULL, d1, &s1) == 0 &&
		   ph_skills_file_digest(sc, k, &k->files[0], NULL, NULL, NULL, d2, &s2) == 0 &&
		   ph_skills_hash_count == before + 1, "a static file is hashed once, then served from cache");
		hexof(d1, hex);
		is_str(hex, "5e14afb41c8e149b9f2c78f7c252218fa7599b1ca8c2495ffa4bdbc356fde755",
		       "git-workflow SKILL.md has the digest phantom-behaviour §3.2 gives");
		sc->digest_cache = false;
		ok(ph_skills_file_digest(sc, k, &k->files[0], NULL, NULL, NULL, d2, &s2) == 0 &&
		   ph_skills_hash_count == before + 2, "with digest_cache off it is hashed every time");
		sc->digest_cache = true;
	}
	ph_conf_free(c);
	free(probs);
	free(yaml);
}

/* A file that changes is hashed again. */
static void
test_cache_invalidation(void)
{
	char *probs;
	struct ph_config *c;
	write_file("m/manifest.yaml", "skills:\n  - path: a\n    dir: a\n");
	write_file("m/a/data.txt", "one\n");
	c = load("skills: {manifest: m/manifest.yaml}\n", &probs);
	ok(c != NULL, "a small manifest loads");
	if (c != NULL) {
		struct ph_skill *k = &c->skills->skills[0];
		struct ph_skill_file *f = strcmp(k->files[0].rel, "data.txt") == 0 ? &k->files[0] : &k->files[1];
		unsigned char d1[32], d2[32], d3[32];
		size_t s;
		unsigned long before = ph_skills_hash_count;
		ok(ph_skills_file_digest(c->skills, k, f, NULL, NULL, NULL, d1, &s) == 0, "digest of data.txt");
		write_file("m/a/data.txt", "two\n"); /* same size, new content */
		ok(ph_skills_file_digest(c->skills, k, f, NULL, NULL, NULL, d2, &s) == 0 && memcmp(d1, d2, 32) != 0 &&
		   ph_skills_hash_count == before + 2, "a rewritten file is hashed again");
		ok(ph_skills_file_digest(c->skills, k, f, NULL, NULL, NULL, d3, &s) == 0 && memcmp(d2, d3, 32) == 0 &&
		   ph_skills_hash_count == before + 2, "and cached again");
		{
			char *p = ph_xasprintf("%s/m/a/data.txt", tmpdir);
			unlink(p);
			ok(ph_skills_file_digest(c->skills, k, f, NULL, NULL, NULL, d3, &s) != 0,
			   "a removed file has no digest");
			free(p);
		}
	}
	ph_conf_free(c);
	free(probs);
}

int
main(void)
{
	const char *srcdir = getenv("top_srcdir");
	char *cmd;
	static char abs_src[4096];
	if (srcdir == NULL)
		srcdir = ".";
	if (realpath(srcdir, abs_src) != NULL)
		srcdir = abs_src;
	snprintf(tmpdir, sizeof tmpdir, "%s/phantom-skills-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(tmpdir) == NULL)
		return 1;
	if (sodium_init() < 0)
		return 1;
	test_uri();
	test_frontmatter();
	test_templates();
	test_load_problems();
	test_fixture(srcdir);
	test_cache_invalidation();
	cmd = ph_xasprintf("rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", tmpdir);
	free(cmd);
	return tap_done();
}
