/* embed_demo.c: a program that embeds libphantom. It builds its registry
 * in C (no phantom.yaml needed) and serves it on stdio or FastCGI:
 *
 *   embed_demo --stdio
 *   embed_demo --listen 127.0.0.1:9000 [-c extra.yaml]
 */
#include <phantom.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct counter {
	long calls;
};

static phantom_result *
add(phantom_call *c, void *udata)
{
	struct counter *n = udata;
	char buf[96];
	long long a = phantom_arg_int(c, "a", 0), b = phantom_arg_int(c, "b", 0);
	struct json_object *sc = json_object_new_object();
	phantom_result *r = phantom_result_new();
	n->calls++;
	snprintf(buf, sizeof buf, "%lld", a + b);
	json_object_object_add(sc, "sum", json_object_new_int64(a + b));
	phantom_result_text(r, buf);
	phantom_result_structured_take(r, sc);
	return r;
}

static phantom_result *
calls(phantom_call *c, void *udata)
{
	struct counter *n = udata;
	char buf[64];
	(void)c;
	snprintf(buf, sizeof buf, "add was called %ld times in this process", n->calls);
	return phantom_text(buf);
}

static phantom_result *
haiku(phantom_call *c, void *udata)
{
	phantom_result *r = phantom_result_new();
	char buf[200];
	(void)udata;
	snprintf(buf, sizeof buf, "Write a haiku about %s.", phantom_arg_string(c, "subject", "C"));
	phantom_result_text(r, buf);
	return r;
}

static phantom_result *
square(phantom_call *c, void *udata)
{
	const char *n = phantom_arg_string(c, "n", "0");
	char buf[64];
	phantom_result *r = phantom_result_new();
	(void)udata;
	snprintf(buf, sizeof buf, "%lld", atoll(n) * atoll(n));
	phantom_result_text(r, buf);
	return r;
}

static phantom_result *
subjects(phantom_call *c, void *udata)
{
	static const char *const all[] = {"autumn", "autotools", "mountains", "moon"};
	const char *v = phantom_complete_value(c);
	phantom_result *r = phantom_result_new();
	(void)udata;
	for (size_t i = 0; i < 4; i++)
		if (strncmp(all[i], v, strlen(v)) == 0)
			phantom_result_value(r, all[i]);
	return r;
}

int
main(int argc, char **argv)
{
	static struct counter counter;
	const char *listen = NULL, *conf = NULL;
	int stdio = 0, rc;
	char err[512];
	phantom_registry *reg;
	phantom_server *srv;
	phantom_tool *t;
	phantom_prompt *p;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--stdio") == 0)
			stdio = 1;
		else if (strcmp(argv[i], "--listen") == 0 && i + 1 < argc)
			listen = argv[++i];
		else if (strcmp(argv[i], "-c") == 0 && i + 1 < argc)
			conf = argv[++i];
	}
	reg = phantom_registry_new();
	t = phantom_tool_add(reg, "add", "Adds two integers",
			     "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"},"
			     "\"b\":{\"type\":\"integer\",\"default\":0}},\"required\":[\"a\"]}",
			     add, &counter);
	if (t == NULL || phantom_tool_set_output_schema(t, "{\"type\":\"object\",\"properties\":"
						       "{\"sum\":{\"type\":\"integer\"}},\"required\":[\"sum\"]}") != 0 ||
	    phantom_tool_set_annotations(t, "{\"readOnlyHint\":true}") != 0 ||
	    phantom_tool_add(reg, "calls", "How often add ran in this process", NULL, calls, &counter) == NULL) {
		fprintf(stderr, "embed_demo: %s\n", phantom_registry_error(reg));
		return 1;
	}
	p = phantom_prompt_add(reg, "haiku", "A haiku prompt", haiku, NULL);
	if (p == NULL || phantom_prompt_add_argument(p, "subject", "What about", 1) != 0 ||
	    phantom_prompt_complete(p, "subject", subjects, NULL) != 0 ||
	    phantom_resource_add(reg, "embed://about", "about", NULL, "Served by a program embedding libphantom.",
				 NULL, NULL) == NULL ||
	    phantom_template_add(reg, "embed://square/{n}", "square", "text/plain", square, NULL) == NULL) {
		fprintf(stderr, "embed_demo: %s\n", phantom_registry_error(reg));
		return 1;
	}
	srv = phantom_server_new(conf, reg, err, sizeof err);
	if (srv == NULL) {
		fprintf(stderr, "embed_demo: %s\n", err);
		return 1;
	}
	fprintf(stderr, "embed_demo: libphantom %s, ABI %u\n", phantom_version(), phantom_abi());
	rc = stdio || listen == NULL ? phantom_serve_stdio(srv) : phantom_serve_fcgi(srv, listen);
	phantom_server_free(srv);
	return rc;
}
