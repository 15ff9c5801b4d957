/* fuzz_rpc.c: libFuzzer harness for the MCP core: ph_serve(), the function
 * every front calls, with a fake front in HTTP mode and then in stdio mode.
 *
 * Input: the request body. When it starts with '@', its first line sets the
 * request variables instead: "@NAME=VALUE;NAME=VALUE;NAME\n" (a NAME without
 * '=' removes that variable), and the body is what follows. The defaults are
 * a POST from localhost with Content-Type application/json and
 * MCP-Protocol-Version 2026-07-28.
 *
 * Aborts when the core breaks its promises: exactly one response per
 * exchange, 202 without a body for notifications, otherwise one JSON-RPC
 * response object, never an Mcp-Session-Id header. */
#include "first.h"
#include "ph_build.h"
#include "ph_core.h"
#include "ph_server.h"
#include "ph_util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define MAXP 24

struct fake {
	char *pn[MAXP], *pv[MAXP];
	size_t np;
	const char *body;
	size_t len, pos;
	int responds, stream_starts, stream_sends, status;
	struct ph_buf out;
};

static struct ph_server *srv;

static const char *
f_param(struct ph_exchange *ex, const char *name)
{
	struct fake *f = ex->front;
	for (size_t i = 0; i < f->np; i++)
		if (strcmp(f->pn[i], name) == 0)
			return f->pv[i];
	return NULL;
}

static long
f_read(struct ph_exchange *ex, char *buf, size_t len)
{
	struct fake *f = ex->front;
	size_t n = f->len - f->pos;
	if (n > len)
		n = len;
	/* hand the body out in odd pieces, as a socket may */
	if (n > 1000)
		n = 1000;
	memcpy(buf, f->body + f->pos, n);
	f->pos += n;
	return (long)n;
}

static void
check_headers(const struct ph_header *h)
{
	for (; h && h->name; h++)
		if (ph_strcaseeq(h->name, "Mcp-Session-Id") || h->value == NULL)
			abort();
}

static int
f_respond(struct ph_exchange *ex, int status, const char *ctype, const struct ph_header *hdrs,
	  const char *body, size_t len)
{
	struct fake *f = ex->front;
	(void)ctype;
	check_headers(hdrs);
	f->responds++;
	f->status = status;
	if (body)
		ph_buf_add(&f->out, body, len);
	return 0;
}

static int
f_stream_start(struct ph_exchange *ex, const struct ph_header *hdrs)
{
	struct fake *f = ex->front;
	check_headers(hdrs);
	f->stream_starts++;
	f->status = 200;
	return 0;
}

static int
f_stream_send(struct ph_exchange *ex, const char *json, size_t len)
{
	struct fake *f = ex->front;
	f->stream_sends++;
	ph_buf_add(&f->out, json, len);
	ph_buf_addc(&f->out, '\n');
	return 0;
}

static const struct ph_front_ops ops = {
	.param = f_param,
	.read = f_read,
	.respond = f_respond,
	.stream_start = f_stream_start,
	.stream_send = f_stream_send,
};

static void
set_param(struct fake *f, const char *name, size_t nl, const char *value, size_t vl)
{
	for (size_t i = 0; i < f->np; i++) {
		if (strlen(f->pn[i]) == nl && memcmp(f->pn[i], name, nl) == 0) {
			free(f->pv[i]);
			if (value == NULL) {
				free(f->pn[i]);
				f->pn[i] = f->pn[f->np - 1];
				f->pv[i] = f->pv[f->np - 1];
				f->np--;
			} else {
				f->pv[i] = ph_xstrndup(value, vl);
			}
			return;
		}
	}
	if (value != NULL && f->np < MAXP) {
		f->pn[f->np] = ph_xstrndup(name, nl);
		f->pv[f->np++] = ph_xstrndup(value, vl);
	}
}

/* A response body must be one JSON-RPC response object. */
static void
check_response(const char *s, size_t len)
{
	struct json_object *o = json_tokener_parse(s), *v;
	if (o == NULL || strlen(s) != len || !json_object_is_type(o, json_type_object))
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
	json_object_put(o);
}

static void
fake_free(struct fake *f)
{
	for (size_t i = 0; i < f->np; i++) {
		free(f->pn[i]);
		free(f->pv[i]);
	}
	ph_buf_free(&f->out);
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
	struct fake f;
	struct ph_exchange ex;
	char cl[32];

	/* HTTP */
	memset(&f, 0, sizeof f);
	set_param(&f, "REQUEST_METHOD", 14, "POST", 4);
	set_param(&f, "CONTENT_TYPE", 12, "application/json", 16);
	set_param(&f, "HTTP_HOST", 9, "localhost", 9);
	set_param(&f, "HTTP_MCP_PROTOCOL_VERSION", 25, PH_MODERN_VERSION, strlen(PH_MODERN_VERSION));
	if (size > 0 && in[0] == '@') {
		const char *nl = memchr(in, '\n', size), *p = in + 1;
		const char *end = nl ? nl : in + size;
		while (p < end) {
			const char *semi = memchr(p, ';', (size_t)(end - p));
			const char *item_end = semi ? semi : end;
			const char *eq = memchr(p, '=', (size_t)(item_end - p));
			if (eq)
				set_param(&f, p, (size_t)(eq - p), eq + 1, (size_t)(item_end - eq - 1));
			else
				set_param(&f, p, (size_t)(item_end - p), NULL, 0);
			p = item_end + 1;
		}
		body = nl ? nl + 1 : in + size;
		blen = size - (size_t)(body - in);
	}
	snprintf(cl, sizeof cl, "%zu", blen);
	if (f_param(&(struct ph_exchange){.front = &f}, "CONTENT_LENGTH") == NULL)
		set_param(&f, "CONTENT_LENGTH", 14, cl, strlen(cl));
	f.body = body;
	f.len = blen;
	memset(&ex, 0, sizeof ex);
	ex.ops = &ops;
	ex.front = &f;
	ex.http = true;
	ph_serve(srv, &ex);
	if (f.responds + f.stream_starts != 1)
		abort();
	if (f.stream_starts == 0) {
		if (f.status == 202) {
			if (f.out.len != 0)
				abort();
		} else {
			check_response(f.out.data ? f.out.data : "", f.out.len);
		}
	}
	fake_free(&f);

	/* stdio: the whole input is the line */
	memset(&f, 0, sizeof f);
	memset(&ex, 0, sizeof ex);
	ex.ops = &ops;
	ex.front = &f;
	ex.http = false;
	ex.body = in;
	ex.body_len = size;
	ex.too_large = (long long)size > srv->conf->http.max_body;
	ph_serve(srv, &ex);
	if (f.responds > 1 || f.stream_starts != 0)
		abort();
	if (f.responds == 1 && f.stream_sends == 0)
		check_response(f.out.data ? f.out.data : "", f.out.len);
	fake_free(&f);
	return 0;
}
