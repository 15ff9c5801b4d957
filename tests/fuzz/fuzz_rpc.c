/* fuzz_rpc.c: libFuzzer harness for the MCP core: ph_serve(), the function
 * every front calls, with a fake front in HTTP mode and then in stdio mode.
 *
 * Input: the request body. When it starts with '@', its first line sets the
 * request variables instead: "@NAME=VALUE;NAME=VALUE;NAME\n" (a NAME without
 * '=' removes that variable), and the body is what follows. The defaults are
 * a POST from localhost with Content-Type application/json and
 * MCP-Protocol-Version 2026-07-28.
 *
 * The fake front is the unit tests' (tests/unit/fake_front.c), handing the
 * body out 1000 bytes at a time. Aborts when the core breaks its promises:
 * exactly one response per exchange, 202 without a body for notifications,
 * otherwise one JSON-RPC response object, never an Mcp-Session-Id header. */
#include "first.h"
#include "ph_build.h"
#include "ph_core.h"
#include "../unit/fake_front.h"
#include "ph_server.h"
#include "ph_util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static struct ph_server *srv;

/* Aborts when a response carried a header the core must never send, or
 * Mcp-Session-Id on anything but the result of a legacy initialize. */
static void
check_headers(struct fake_front *f)
{
	struct json_object *o, *res = NULL;
	if (f->null_header)
		abort();
	if (!f->session_id)
		return;
	o = fake_json(f);
	if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "result", &res) ||
	    !json_object_object_get_ex(res, "protocolVersion", NULL) ||
	    !json_object_object_get_ex(res, "serverInfo", NULL))
		abort();
}

/* o must be one JSON-RPC response object. */
static void
check_message(struct json_object *o)
{
	struct json_object *v;
	if (o == NULL || !json_object_is_type(o, json_type_object))
		abort();
	v = ph_jget(o, "jsonrpc");
	if (v == NULL || strcmp(json_object_get_string(v), "2.0") != 0)
		abort();
	if (!json_object_object_get_ex(o, "id", NULL))
		abort();
	if ((ph_jget(o, "result") != NULL) == (ph_jget(o, "error") != NULL))
		abort();
	v = ph_jget(ph_jget(o, "error"), "code");
	if (ph_jget(o, "error") != NULL && (v == NULL || !json_object_is_type(v, json_type_int)))
		abort();
}

/* The response must be one JSON-RPC response object, or the non-empty
 * array of them that answers a legacy batch. */
static void
check_response(struct fake_front *f)
{
	struct json_object *o = fake_json(f);
	if (json_object_is_type(o, json_type_array)) {
		size_t n = json_object_array_length(o);
		if (n == 0)
			abort();
		for (size_t i = 0; i < n; i++)
			check_message(json_object_array_get_idx(o, i));
		return;
	}
	check_message(o);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char conf[] = "http:\n  max_body: 65536\n"
				   "server:\n  instructions: fuzz\n  page_size: 2\n";
	struct ph_conf_problems p = {0};
	struct ph_config *c = ph_conf_load_buf("fuzz.yaml", ".", conf, sizeof conf - 1, &p);
	(void)argc;
	(void)argv;
	if (c == NULL || (srv = ph_server_new(c, &p)) == NULL)
		abort();
	ph_conf_problems_free(&p);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = (const char *)data, *body = in;
	size_t blen = size;
	struct fake_front f;
	char cl[32];

	/* HTTP */
	fake_init(&f, true);
	/* hand the body out in odd pieces, as a socket may */
	f.chunk = 1000;
	fake_param(&f, "REQUEST_METHOD", "POST");
	fake_param(&f, "CONTENT_TYPE", "application/json");
	fake_param(&f, "HTTP_HOST", "localhost");
	fake_param(&f, "HTTP_MCP_PROTOCOL_VERSION", PH_MODERN_VERSION);
	if (size > 0 && in[0] == '@') {
		const char *nl = memchr(in, '\n', size), *p = in + 1;
		const char *end = nl ? nl : in + size;
		while (p < end) {
			const char *semi = memchr(p, ';', (size_t)(end - p));
			const char *item_end = semi ? semi : end;
			const char *eq = memchr(p, '=', (size_t)(item_end - p));
			if (eq)
				fake_param_n(&f, p, (size_t)(eq - p), eq + 1, (size_t)(item_end - eq - 1));
			else
				fake_param_n(&f, p, (size_t)(item_end - p), NULL, 0);
			p = item_end + 1;
		}
		body = nl ? nl + 1 : in + size;
		blen = size - (size_t)(body - in);
	}
	snprintf(cl, sizeof cl, "%zu", blen);
	if (fake_get(&f, "CONTENT_LENGTH") == NULL)
		fake_param(&f, "CONTENT_LENGTH", cl);
	fake_body(&f, body, blen);
	fake_serve(&f, srv);
	check_headers(&f);
	if (f.responds + f.stream_starts != 1)
		abort();
	if (f.stream_starts == 0) {
		if (f.status == 202) {
			if (f.out.len != 0)
				abort();
		} else {
			check_response(&f);
		}
	}
	fake_free(&f);

	/* stdio: the whole input is the line */
	fake_init(&f, false);
	fake_body(&f, in, size);
	fake_serve(&f, srv);
	check_headers(&f);
	if (f.responds > 1 || f.stream_starts != 0)
		abort();
	if (f.responds == 1 && f.stream_sends == 0)
		check_response(&f);
	fake_free(&f);
	return 0;
}
