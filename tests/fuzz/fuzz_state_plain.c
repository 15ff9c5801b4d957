/* fuzz_state_plain.c: libFuzzer harness for what happens to a requestState
 * after the AEAD has opened it. Random tokens never pass the MAC (that is
 * fuzz_state), so here the input is the plaintext itself: it is sealed with
 * the server's key (ph_state_seal_bytes, the last step of ph_state_seal) and
 * handed to ph_serve() through the fake front, as a client's retry would:
 *   - params.requestState of a tools/call of "t" (ph_mrtr_begin opens it,
 *     the tool reads phantom_call_state and answers with it),
 *   - params.cursor of a resources/list with one resource list handler (the
 *     catalogue cursor's index and handler cursor are read from it).
 * Seeds are well-formed plaintexts bound to those requests (no principal,
 * arguments {} and null), so mutations reach the binding checks and the
 * state. Aborts when the core breaks its promises: exactly one response, a
 * JSON-RPC object with exactly one of result and error. */
#include "first.h"
#include "ph_build.h"
#include "ph_conf.h"
#include "ph_core.h"
#include "ph_registry.h"
#include "ph_server.h"
#include "ph_state.h"
#include "ph_util.h"
#include "phantom.h"
#include "../unit/fake_front.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static struct ph_server *srv;

#define META "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"" PH_MODERN_VERSION \
	"\",\"io.modelcontextprotocol/clientCapabilities\":{}}"

/* The tool: answers with the state it was resumed with, as JSON text. */
static phantom_result *
echo_state(phantom_call *call, void *udata)
{
	phantom_result *res = phantom_result_new();
	struct json_object *st = phantom_call_state(call);
	(void)udata;
	(void)phantom_result_text(res, st ? json_object_to_json_string(st) : "none");
	return res;
}

/* The resource list: one page, continued by its own cursor once. */
static phantom_result *
one_page(phantom_call *call, void *udata)
{
	phantom_result *res = phantom_result_new();
	const char *cur = phantom_call_cursor(call);
	(void)udata;
	(void)phantom_result_structured_json(res, cur ? "{\"resources\":[]}" :
					     "{\"resources\":[],\"nextCursor\":\"p2\"}");
	return res;
}

static struct ph_registry *
registry(void)
{
	struct ph_registry *reg = phantom_registry_new();
	struct ph_catalog *cat = ph_xcalloc(1, sizeof *cat);
	if (phantom_tool_add(reg, "t", "echoes its state", NULL, echo_state, NULL) == NULL)
		abort();
	cat->name = ph_xstrdup("fuzz");
	cat->h.kind = PH_HANDLER_C;
	cat->h.fn = one_page;
	ph_registry_add_catalog(reg, cat);
	return reg;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char conf[] = "server:\n  page_size: 2\n";
	struct ph_conf_problems p = {0};
	struct ph_config *c = ph_conf_load_buf("fuzz.yaml", ".", conf, sizeof conf - 1, &p);
	(void)argc;
	(void)argv;
	if (c == NULL)
		abort();
	c->registry = registry();
	if ((srv = ph_server_new(c, &p)) == NULL)
		abort();
	ph_conf_problems_free(&p);
	return 0;
}

/* Serves one stdio line and checks its one answer. */
static void
serve(const char *line)
{
	struct fake_front f;
	struct json_object *o, *v;
	fake_init(&f, false);
	fake_body(&f, line, strlen(line));
	fake_serve(&f, srv);
	if (f.responds + f.stream_sends != 1)
		abort();
	if (getenv("FUZZ_SHOW") != NULL)
		fprintf(stderr, "%.*s\n", (int)f.out.len, f.out.data);
	o = fake_json(&f);
	if (o == NULL || !json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, "id", &v) ||
	    (ph_jget(o, "result") != NULL) == (ph_jget(o, "error") != NULL))
		abort();
	fake_free(&f);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *tok = ph_state_seal_bytes(srv->conf->request_state, data, size);
	char *call = ph_xasprintf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
				  "{\"name\":\"t\",\"arguments\":{},\"requestState\":\"%s\"," META "}}", tok);
	char *list = ph_xasprintf("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/list\",\"params\":"
				  "{\"cursor\":\"%s\"," META "}}", tok);
	serve(call);
	serve(list);
	free(call);
	free(list);
	free(tok);
	return 0;
}
