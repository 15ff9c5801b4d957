/* test_conf.c: the configuration loader. Defaults, each key type, every kind
 * of problem with its FILE:LINE and key, several problems at once, files,
 * relative-path base directory and the reload comparison. */
#include "first.h"
#include "ph_conf.h"
#include "ph_util.h"
#include "tap.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static struct ph_conf_problems probs;

/* Loads YAML text as "t.yaml" (problems in the global probs, cleared first). */
static struct ph_config *
load(const char *yaml)
{
	ph_conf_problems_free(&probs);
	return ph_conf_load_buf("t.yaml", "/etc/phantom", yaml, strlen(yaml), &probs);
}

/* Expects yaml to be refused with exactly one problem equal to want. */
static void
problem_is(const char *yaml, const char *want, const char *desc)
{
	struct ph_config *c = load(yaml);
	ok(c == NULL, "%s: refused", desc);
	is_int(probs.n, 1, "%s: one problem", desc);
	is_str(probs.n ? probs.v[0] : NULL, want, "%s: message", desc);
	ph_conf_free(c);
}

/* workers: the integer (static) and the mapping (a pool by demand), and
 * what a mapping may not say. */
static void
test_pool(void)
{
	struct ph_config *c = load("workers: 6\n");
	ok(c && c->workers == 6 && c->pool.mode == PH_POOL_STATIC && c->pool.max == 6 && c->pool.start == 6,
	   "workers: 6 is a static pool of 6");
	ph_conf_free(c);
	c = load("workers: {}\n");
	ok(c && c->pool.mode == PH_POOL_DYNAMIC && c->pool.max == 32 && c->pool.start == 4 &&
	   c->pool.min_idle == 2 && c->pool.max_idle == 4 && c->pool.idle_timeout_ms == 10000 &&
	   c->pool.spawn_rate == 16 && c->pool.max_spawn_rate == 64 && c->pool.memory_percent == 50 &&
	   c->pool.full_log_s == 60 && c->workers == 32, "workers: {} is a dynamic pool with the defaults");
	ph_conf_free(c);
	c = load("workers:\n  mode: ondemand\n  max: 8\n  start: 3\n  min_idle: 1\n  idle_timeout_ms: 500\n");
	ok(c && c->pool.mode == PH_POOL_ONDEMAND && c->pool.max == 8 && c->pool.start == 0 &&
	   c->pool.min_idle == 0 && c->pool.idle_timeout_ms == 500,
	   "ondemand: no worker at start, none kept idle, whatever start and min_idle say");
	ph_conf_free(c);
	c = load("workers: {mode: static, max: 5}\n");
	ok(c && c->pool.mode == PH_POOL_STATIC && c->pool.start == 5 && c->workers == 5,
	   "mode static: max workers always");
	ph_conf_free(c);
	/* defaults fit what is given; only the settings a mode uses are checked */
	c = load("workers: {mode: ondemand, max: 3}\n");
	ok(c && c->pool.mode == PH_POOL_ONDEMAND && c->pool.max == 3 && c->pool.max_idle == 3,
	   "ondemand with max 3: max_idle's default 4 becomes 3 (%s)", probs.n ? probs.v[0] : "");
	ph_conf_free(c);
	c = load("workers: {mode: static, max: 2}\n");
	ok(c && c->pool.mode == PH_POOL_STATIC && c->pool.max == 2 && c->pool.start == 2,
	   "static with max 2 loads (%s)", probs.n ? probs.v[0] : "");
	ph_conf_free(c);
	c = load("workers: {mode: static, max: 2, max_idle: 9, min_idle: 7, spawn_rate: 9, max_spawn_rate: 8}\n");
	ok(c != NULL, "static: settings it does not use are not checked (%s)", probs.n ? probs.v[0] : "");
	ph_conf_free(c);
	c = load("workers: {max: 3, max_idle: 2}\n");
	ok(c && c->pool.start == 3 && c->pool.min_idle == 2 && c->pool.max_idle == 2,
	   "dynamic with max 3: start's default 4 becomes 3 (%s)", probs.n ? probs.v[0] : "");
	ph_conf_free(c);
	c = load("workers: {max: 1}\n");
	ok(c && c->pool.start == 1 && c->pool.min_idle == 1 && c->pool.max_idle == 1,
	   "dynamic with max 1: start, min_idle and max_idle become 1 (%s)", probs.n ? probs.v[0] : "");
	ph_conf_free(c);
	c = load("workers: {min_idle: 6, spawn_rate: 100}\n");
	ok(c && c->pool.max_idle == 6 && c->pool.max_spawn_rate == 100,
	   "a default under a value given is raised to it (%s)", probs.n ? probs.v[0] : "");
	ph_conf_free(c);
	c = load("workers: {mode: ondemand, max_spawn_rate: 8}\n");
	ok(c && c->pool.spawn_rate == 8, "a default over a value given is lowered to it (%s)",
	   probs.n ? probs.v[0] : "");
	ph_conf_free(c);
	problem_is("workers: {max: 3, start: 4}\n", "t.yaml:1: workers.start (4) may not exceed workers.max (3)",
		   "start above max");
	problem_is("workers: {mode: ondemand, max: 3, max_idle: 4}\n",
		   "t.yaml:1: workers.max_idle (4) may not exceed workers.max (3)", "ondemand: max_idle above max");
	problem_is("workers: {max: 3, min_idle: 5}\n",
		   "t.yaml:1: workers.min_idle (5) may not exceed workers.max (3)", "min_idle above max");
	problem_is("workers: {min_idle: 5, max_idle: 4}\n",
		   "t.yaml:1: workers.min_idle (5) may not exceed workers.max_idle (4)", "min_idle above max_idle");
	problem_is("workers: {spawn_rate: 100, max_spawn_rate: 50}\n",
		   "t.yaml:1: workers.spawn_rate (100) may not exceed workers.max_spawn_rate (50)",
		   "spawn_rate above max_spawn_rate");
	problem_is("workers:\n  mode: lazy\n", "t.yaml:2: workers.mode: expected one of static|dynamic|ondemand",
		   "an unknown mode");
	problem_is("workers:\n  max: 0\n", "t.yaml:2: workers.max: '0' is too small (allowed 1..256)",
		   "max 0");
	problem_is("workers:\n  maxx: 2\n", "t.yaml:2: unknown key 'workers.maxx'", "an unknown key of workers");
}

static void
test_defaults(void)
{
	struct ph_config *c = ph_conf_load(NULL, &probs);
	ok(c != NULL && probs.n == 0, "built-in defaults load");
	if (c == NULL)
		return;
	ok(c->file == NULL, "no file for the defaults");
	is_str(c->dir, ".", "defaults resolve relative paths against .");
	is_str(c->server.name, "phantom", "server.name default");
	is_str(c->server.version, PACKAGE_VERSION, "server.version default is the package version");
	ok(c->server.title == NULL && c->server.instructions == NULL, "title and instructions unset");
	is_int(c->server.page_size, 100, "server.page_size default");
	is_int(c->server.ttl_ms, 0, "server.ttl_ms default");
	is_str(c->server.scope, "private", "server.scope default");
	is_int(c->workers, 4, "workers default");
	ok(c->pool.mode == PH_POOL_STATIC && c->pool.max == 4 && c->pool.start == 4,
	   "workers default: a static pool of 4");
	is_int(c->max_requests, 10000, "max_requests default");
	is_int(c->shutdown_timeout, 30, "shutdown_timeout default");
	ok(c->listen == NULL, "listen unset");
	ok(c->http.origins.n == 0 && !c->http.origins.any, "http.origins default is empty");
	ok(c->http.hosts.n == 3 && !c->http.hosts.any && strcmp(c->http.hosts.v[0], "localhost") == 0 &&
	   strcmp(c->http.hosts.v[1], "127.0.0.1") == 0 && strcmp(c->http.hosts.v[2], "[::1]") == 0,
	   "http.hosts default is localhost, 127.0.0.1, [::1]");
	is_int(c->http.max_body, 4194304, "http.max_body default");
	is_int(c->limits.json_depth, 64, "limits.json_depth default");
	is_int(c->limits.yaml_depth, 32, "limits.yaml_depth default");
	ok(!c->log.json, "log.json default");
	ph_conf_free(c);

	c = load("");
	ok(c && c->workers == 4 && strcmp(c->server.name, "phantom") == 0, "an empty file gives the defaults");
	is_str(c ? c->file : NULL, "t.yaml", "the file name is kept");
	ph_conf_free(c);
	c = load("---\n# nothing here\n");
	ok(c != NULL, "a file with only '---' and comments gives the defaults");
	ph_conf_free(c);
	c = load("server:\nhttp: ~\n");
	ok(c && c->http.hosts.n == 3, "an empty section keeps its defaults");
	ph_conf_free(c);
}

static void
test_types(void)
{
	struct ph_config *c = load(
		"server:\n"
		"  name: demo\n"
		"  version: \"2.0\"\n"
		"  title: Demo server\n"
		"  instructions: |\n"
		"    Use the tools.\n"
		"  page_size: 7\n"
		"  ttl_ms: 60000\n"
		"  scope: public\n"
		"workers: 0\n"
		"max_requests: 9223372036854775807\n"
		"shutdown_timeout: 3600\n"
		"listen: unix:/run/phantom.sock\n"
		"http:\n"
		"  origins: [\"https://app.example.com\"]\n"
		"  hosts:\n"
		"    - api.example.com\n"
		"    - localhost\n"
		"  max_body: 64\n"
		"limits:\n"
		"  json_depth: 2\n"
		"  yaml_depth: 1000\n"
		"log:\n"
		"  json: yes\n");
	ok(c != NULL && probs.n == 0, "a file setting every key loads");
	if (c == NULL) {
		for (size_t i = 0; i < probs.n; i++)
			printf("# %s\n", probs.v[i]);
		return;
	}
	is_str(c->server.name, "demo", "string");
	is_str(c->server.version, "2.0", "quoted string");
	is_str(c->server.title, "Demo server", "string with a space");
	is_str(c->server.instructions, "Use the tools.\n", "block string");
	is_int(c->server.page_size, 7, "integer");
	is_int(c->server.ttl_ms, 60000, "integer");
	is_str(c->server.scope, "public", "enum");
	is_int(c->workers, 0, "integer at its minimum");
	is_int(c->max_requests, INT64_MAX, "integer at its maximum");
	is_int(c->shutdown_timeout, 3600, "integer at its maximum");
	is_str(c->listen, "unix:/run/phantom.sock", "listen");
	ok(c->http.origins.n == 1 && !c->http.origins.any &&
	   strcmp(c->http.origins.v[0], "https://app.example.com") == 0, "flow list");
	ok(c->http.hosts.n == 2 && strcmp(c->http.hosts.v[0], "api.example.com") == 0 &&
	   strcmp(c->http.hosts.v[1], "localhost") == 0, "block list replaces the default");
	is_int(c->http.max_body, 64, "max_body at its minimum");
	is_int(c->limits.json_depth, 2, "json_depth");
	is_int(c->limits.yaml_depth, 1000, "yaml_depth");
	ok(c->log.json, "boolean 'yes'");
	is_str(c->dir, "/etc/phantom", "the directory given is kept");
	ph_conf_free(c);

	c = load("log:\n  json: false\n");
	ok(c && !c->log.json, "boolean 'false'");
	ph_conf_free(c);
	c = load("log:\n  json: On\n");
	ok(c && c->log.json, "boolean 'On'");
	ph_conf_free(c);

	/* a key without a value takes its default */
	c = load("server:\n  name: ~\n  version:\n  title: ~\nworkers:\nhttp:\n  hosts: ~\n  max_body:\n");
	ok(c != NULL, "null values load");
	if (c) {
		is_str(c->server.name, "phantom", "null server.name is the default");
		is_str(c->server.version, PACKAGE_VERSION, "empty server.version is the default");
		ok(c->server.title == NULL, "null title stays unset");
		is_int(c->workers, 4, "empty workers is the default");
		is_int(c->http.hosts.n, 3, "null hosts is the default list");
		is_int(c->http.max_body, 4194304, "empty max_body is the default");
	}
	ph_conf_free(c);
}

static void
test_lists(void)
{
	struct ph_config *c = load("http:\n  origins: \"*\"\n  hosts: '*'\n");
	ok(c && c->http.origins.any && c->http.origins.n == 0, "origins \"*\" allows any");
	ok(c && c->http.hosts.any, "hosts '*' allows any");
	ph_conf_free(c);
	c = load("http:\n  hosts: [example.com, \"*\"]\n");
	ok(c && c->http.hosts.any && c->http.hosts.n == 2, "\"*\" inside a list allows any");
	ph_conf_free(c);
	c = load("http:\n  origins: []\n  hosts: []\n");
	ok(c && c->http.origins.n == 0 && c->http.hosts.n == 0 && !c->http.hosts.any,
	   "empty lists are empty");
	ph_conf_free(c);
	problem_is("http:\n  hosts: localhost\n",
		   "t.yaml:2: http.hosts: expected a list of strings or \"*\"", "a plain word is not a list");
	problem_is("http:\n  hosts:\n    - a\n    - [b]\n",
		   "t.yaml:4: http.hosts[1]: expected a non-empty string", "a list item that is a list");
	problem_is("http:\n  origins: ['']\n",
		   "t.yaml:2: http.origins[0]: expected a non-empty string", "an empty list item");
	problem_is("http:\n  hosts: {a: 1}\n",
		   "t.yaml:2: http.hosts: expected a list of strings or \"*\"", "a map is not a list");
}

static void
test_problems(void)
{
	struct ph_config *c;

	problem_is("bogus: 1\n", "t.yaml:1: unknown key 'bogus'", "unknown top-level key");
	/* keys of feature sections are rows of the table too */
	problem_is("tools: {ttl_ms: 5, colour: red}\n", "t.yaml:1: unknown key 'tools.colour'",
		   "unknown key in a feature section");
	problem_is("skills:\n  manifest: m.yaml\n  max_files: 0\n",
		   "t.yaml:3: skills.max_files: '0' is too small (allowed 1..65536)",
		   "a feature section's key is bounded by its row");
	problem_is("request_state:\n  salt: [a]\n", "t.yaml:2: request_state.salt: expected a string",
		   "a feature section's key is typed by its row");
	problem_is("server:\n  name: x\n  nmae: y\n", "t.yaml:3: unknown key 'server.nmae'",
		   "unknown key names its dotted path and line");
	problem_is("log:\n  json: true\n  level:\n    x: 1\n", "t.yaml:3: unknown key 'log.level'",
		   "unknown key with a map value");
	problem_is("workers: 1\nworkers: 2\n", "t.yaml:2: duplicate key 'workers'", "duplicate key");

	/* wrong types */
	problem_is("server:\n  name: [a, b]\n", "t.yaml:2: server.name: expected a string", "list for a string");
	problem_is("server:\n  name: {a: b}\n", "t.yaml:2: server.name: expected a string", "map for a string");
	problem_is("workers: many\n", "t.yaml:1: workers: 'many' is not an integer (allowed 0..256)",
		   "word for an integer");
	problem_is("workers: \"4\"\n", "t.yaml:1: workers: expected an integer", "quoted integer");
	problem_is("workers: [4]\n", "t.yaml:1: workers: expected an integer or a mapping",
		   "list for an integer or a mapping");
	problem_is("workers: 4.5\n", "t.yaml:1: workers: '4.5' is not an integer (allowed 0..256)",
		   "decimal for an integer");
	problem_is("log:\n  json: 1\n", "t.yaml:2: log.json: expected true or false", "1 for a boolean");
	problem_is("log:\n  json: 'true'\n", "t.yaml:2: log.json: expected true or false",
		   "quoted true for a boolean");
	problem_is("http: 5\n", "t.yaml:1: http: expected a mapping", "scalar for a section");
	problem_is("server: [a]\n", "t.yaml:1: server: expected a mapping", "list for a section");
	problem_is("- a\n- b\n", "t.yaml:1: top level: expected a mapping", "a list as the document");
	problem_is("server:\n  name: \"a\\0b\"\n", "t.yaml:2: server.name: contains a NUL byte", "NUL in a string");

	/* bounds */
	problem_is("workers: 257\n", "t.yaml:1: workers: '257' is too large (allowed 0..256)",
		   "integer over its maximum names the bounds");
	problem_is("workers: -1\n", "t.yaml:1: workers: '-1' is too small (allowed 0..256)",
		   "integer under its minimum names the bounds");
	problem_is("server:\n  page_size: 0\n",
		   "t.yaml:2: server.page_size: '0' is too small (allowed 1..1000)", "page_size 0");
	problem_is("http:\n  max_body: 63\n",
		   "t.yaml:2: http.max_body: '63' is too small (allowed 64..1073741824)", "max_body 63");
	problem_is("max_requests: 9223372036854775808\n",
		   "t.yaml:1: max_requests: '9223372036854775808' is out of range "
		   "(allowed 0..9223372036854775807)", "integer beyond 64 bits");
	problem_is("server:\n  name: ''\n", "t.yaml:2: server.name: length must be between 1 and 128",
		   "empty string under its minimum length");
	{
		char big[300];
		memset(big, 'x', sizeof big);
		memcpy(big, "server:\n  name: ", 16);
		big[16 + 129] = '\n';
		big[16 + 130] = '\0';
		problem_is(big, "t.yaml:2: server.name: length must be between 1 and 128",
			   "string over its maximum length");
	}

	/* enum */
	problem_is("server:\n  scope: shared\n", "t.yaml:2: server.scope: expected one of public|private",
		   "enum outside its words");
	problem_is("server:\n  scope: [public]\n", "t.yaml:2: server.scope: expected one of public|private",
		   "list for an enum");
	problem_is("server:\n  scope: Public\n", "t.yaml:2: server.scope: expected one of public|private",
		   "enum words are case-sensitive");
	problem_is("server:\n  scope: publ\n", "t.yaml:2: server.scope: expected one of public|private",
		   "a prefix of an enum word");

	/* YAML errors are problems with a line too */
	problem_is("a: 1\nb: c: d\n", "t.yaml:2: mapping values are not allowed in this context",
		   "syntax error names file and line");
	problem_is("workers: &w 2\nmax_requests: *w\n", "t.yaml:2: YAML aliases are not supported",
		   "alias");

	/* several problems in one go, in file order */
	c = load("workers: 1000\n"
		 "server:\n"
		 "  scope: nobody\n"
		 "  what: 1\n"
		 "http:\n"
		 "  max_body: 1\n"
		 "log:\n"
		 "  json: maybe\n");
	ok(c == NULL, "a file with five problems is refused");
	is_int(probs.n, 5, "all five problems are reported");
	if (probs.n == 5) {
		ok(strncmp(probs.v[0], "t.yaml:1: workers:", 18) == 0, "first: workers on line 1");
		ok(strncmp(probs.v[1], "t.yaml:3: server.scope:", 23) == 0, "second: scope on line 3");
		is_str(probs.v[2], "t.yaml:4: unknown key 'server.what'", "third: unknown key on line 4");
		ok(strncmp(probs.v[3], "t.yaml:6: http.max_body:", 24) == 0, "fourth: max_body on line 6");
		ok(strncmp(probs.v[4], "t.yaml:8: log.json:", 19) == 0, "fifth: log.json on line 8");
	}

	/* listen: what a start would refuse before binding, at the key's line */
	problem_is("server: {name: x}\n\nlisten: nonsense\n",
		   "t.yaml:3: listen: bad listen address 'nonsense': expected HOST:PORT or unix:PATH",
		   "listen without a port");
	problem_is("listen:\n  \"[::1]:0\"\n", "t.yaml:1: listen: bad port '0' in '[::1]:0': is too small",
		   "listen with port 0, named at the key's line");
	c = load("listen: \"[::1]:9000\"\n");
	ok(c != NULL, "listen: [::1]:9000 loads");
	ph_conf_free(c);

	/* a quoted value stays on the problem's line, whatever it holds */
	problem_is("\"a\\nb\\r\\tc\\x7f\\x85\\u2028\\u2029\\u00e9\": 1\n",
		   "t.yaml:1: unknown key 'a\\x0ab\\x0d\\x09c\\x7f\\u0085\\u2028\\u2029\xc3\xa9'",
		   "control characters, NEL, U+2028 and U+2029 are escaped, other UTF-8 kept");
	ph_conf_problems_free(&probs);
	ph_conf_problem(&probs, "x\ny.yaml", 3, "v: '%s'", "1\n2");
	is_str(probs.v[0], "x\\x0ay.yaml:3: v: '1\\x0a2'", "the file name is escaped too");

	/* problems accumulate after those already in the list */
	ph_conf_problems_free(&probs);
	ph_conf_problem(&probs, NULL, 0, "earlier %s", "problem");
	c = ph_conf_load_buf("u.yaml", NULL, "workers: x\n", 11, &probs);
	ok(c == NULL && probs.n == 2, "a load appends to the existing problems");
	is_str(probs.v[0], "(defaults):0: earlier problem", "ph_conf_problem without a file");
	ok(probs.n == 2 && strncmp(probs.v[1], "u.yaml:1:", 9) == 0, "the new problem follows");
	ph_conf_problems_free(&probs);
	ok(probs.n == 0 && probs.v == NULL, "problems_free empties the list");
	ph_conf_problems_free(&probs);

	/* the YAML depth limit applies to the configuration */
	{
		struct ph_buf b;
		ph_buf_init(&b);
		ph_buf_adds(&b, "server:\n  instructions: ");
		for (int i = 0; i < 40; i++)
			ph_buf_addc(&b, '[');
		for (int i = 0; i < 40; i++)
			ph_buf_addc(&b, ']');
		ph_buf_addc(&b, '\n');
		c = load(b.data);
		ok(c == NULL && probs.n == 1 && strstr(probs.v[0], "nesting too deep"),
		   "nesting over limits.yaml_depth is refused");
		ph_conf_free(c);
		ph_buf_free(&b);
	}
}

static void
test_files(void)
{
	char dir[] = "/tmp/phantom-conf.XXXXXX", *path, *sub;
	struct ph_config *c;
	FILE *f;

	ph_conf_problems_free(&probs);
	c = ph_conf_load("/nonexistent/phantom.yaml", &probs);
	ok(c == NULL, "a missing file is refused");
	is_str(probs.n ? probs.v[0] : NULL,
	       "/nonexistent/phantom.yaml:0: cannot read configuration: No such file or directory",
	       "the problem names the file and the reason");

	if (mkdtemp(dir) == NULL) {
		ok(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	ph_conf_problems_free(&probs);
	c = ph_conf_load(dir, &probs);
	ok(c == NULL && probs.n == 1 && strstr(probs.v[0], "cannot read configuration"),
	   "a directory is refused (%s)", probs.n ? probs.v[0] : "");
	ph_conf_free(c);

	sub = ph_xasprintf("%s/etc", dir);
	mkdir(sub, 0700);
	path = ph_xasprintf("%s/phantom.yaml", sub);
	f = fopen(path, "w");
	fputs("workers: 2\nserver:\n  bad: 1\n", f);
	fclose(f);
	ph_conf_problems_free(&probs);
	c = ph_conf_load(path, &probs);
	{
		char *want = ph_xasprintf("%s:3: unknown key 'server.bad'", path);
		ok(c == NULL, "a file with a problem is refused");
		is_str(probs.n ? probs.v[0] : NULL, want, "problems in files carry the path");
		free(want);
	}
	f = fopen(path, "w");
	fputs("workers: 2\n", f);
	fclose(f);
	ph_conf_problems_free(&probs);
	c = ph_conf_load(path, &probs);
	ok(c != NULL && c->workers == 2, "a file loads");
	is_str(c ? c->file : NULL, path, "file is the path as given");
	is_str(c ? c->dir : NULL, sub, "relative paths resolve against the file's directory");
	ph_conf_free(c);
	if (chdir(sub) == 0) {
		ph_conf_problems_free(&probs);
		c = ph_conf_load("phantom.yaml", &probs);
		is_str(c ? c->dir : NULL, ".", "a file named without a directory resolves against .");
		ph_conf_free(c);
		if (chdir("/") != 0)
			ok(0, "chdir /");
	}
	c = ph_conf_load_buf("x", NULL, "", 0, &probs);
	is_str(c ? c->dir : NULL, ".", "load_buf without a directory uses .");
	ph_conf_free(c);

	unlink(path);
	rmdir(sub);
	rmdir(dir);
	free(path);
	free(sub);
}

static void
test_reload(void)
{
	struct ph_config *a = load("shutdown_timeout: 30\nworkers: 2\n");
	struct ph_config *b = load("shutdown_timeout: 5\nworkers: 8\nlisten: 127.0.0.1:9000\n"
				   "server:\n  name: other\nhttp:\n  hosts: ['*']\n");
	struct ph_config *a2 = load("shutdown_timeout: 30\nworkers: 2\n");
	struct ph_config *c = load("listen: 127.0.0.1:9001\n");
	struct ph_config *d = load("listen: 127.0.0.1:9000\n");
	char **names = NULL;
	size_t n;

	if (!a || !b || !a2 || !c || !d) {
		ok(0, "reload configurations load");
		goto out;
	}
	n = ph_conf_unreloadable_changes(a, b, &names);
	is_int(n, 2, "two non-reloadable keys changed");
	if (n == 2) {
		is_str(names[0], "shutdown_timeout", "shutdown_timeout is named");
		is_str(names[1], "listen", "listen is named (unset to set)");
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);

	n = ph_conf_unreloadable_changes(a, a2, &names);
	ok(n == 0 && names == NULL, "equal configurations: nothing changed");
	n = ph_conf_unreloadable_changes(c, d, &names);
	ok(n == 1 && strcmp(names[0], "listen") == 0, "a different listen address is a change");
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	n = ph_conf_unreloadable_changes(b, b, &names);
	is_int(n, 0, "a configuration equals itself");
out:
	ph_conf_free(a);
	ph_conf_free(b);
	ph_conf_free(a2);
	ph_conf_free(c);
	ph_conf_free(d);
	ph_conf_free(NULL);
}

static void
test_dump(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	ph_conf_dump_keys(f);
	fclose(f);
	ok(strstr(text, "server.page_size\tinteger\t1..1000\t100\treloadable\t") != NULL,
	   "dump shows an integer key with bounds, default and reloadability");
	ok(strstr(text, "listen\tstring\t-\t-\trestart\t") != NULL, "dump shows a restart-only key");
	ok(strstr(text, "server.scope\tenum\tpublic|private\tprivate\t") != NULL, "dump shows an enum");
	ok(strstr(text, "\nhttp\tsection\t") != NULL, "dump shows sections");
	free(text);
}

int
main(void)
{
	test_defaults();
	test_pool();
	test_types();
	test_lists();
	test_problems();
	test_files();
	test_reload();
	test_dump();
	ph_conf_problems_free(&probs);
	return tap_done();
}
