/* fake_front.c: the in-memory front of the tests (see fake_front.h). */
#include "fake_front.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* nesting fake_json accepts in a response */
#define FAKE_JSON_DEPTH 128

static struct fake_front *
of(struct ph_exchange *ex)
{
	return ex->front;
}

static const char *
op_param(struct ph_exchange *ex, const char *name)
{
	return fake_get(of(ex), name);
}

/* Hands out the rest of the body, at most f->chunk bytes at a time. Returns
 * the count, 0 at the end, -1 or PH_READ_TIMEOUT when the test asked reads
 * to fail. */
static long
op_read(struct ph_exchange *ex, char *buf, size_t len)
{
	struct fake_front *f = of(ex);
	size_t n = f->len - f->pos;
	f->reads++;
	if (f->read_fail)
		return -1;
	if (f->read_late)
		return PH_READ_TIMEOUT;
	if (n > len)
		n = len;
	if (f->chunk && n > f->chunk)
		n = f->chunk;
	if (n)
		memcpy(buf, f->body + f->pos, n);
	f->pos += n;
	return (long)n;
}

/* Appends the headers to f->hdrs and notes the ones the core must never send. */
static void
record_headers(struct fake_front *f, const struct ph_header *h)
{
	for (; h && h->name; h++) {
		if (h->value == NULL) {
			f->null_header = true;
			continue;
		}
		ph_buf_printf(&f->hdrs, "%s: %s\n", h->name, h->value);
		if (ph_strcaseeq(h->name, "Mcp-Session-Id"))
			f->session_id = true;
	}
}

static int
op_respond(struct ph_exchange *ex, int status, const char *ctype, const struct ph_header *hdrs,
	   const char *body, size_t len)
{
	struct fake_front *f = of(ex);
	f->responds++;
	f->status = status;
	free(f->ctype);
	f->ctype = ctype ? ph_xstrdup(ctype) : NULL;
	record_headers(f, hdrs);
	if (body)
		ph_buf_add(&f->out, body, len);
	return f->gone ? -1 : 0;
}

static int
op_stream_start(struct ph_exchange *ex, const struct ph_header *hdrs)
{
	struct fake_front *f = of(ex);
	f->stream_starts++;
	f->status = 200;
	free(f->ctype);
	f->ctype = ph_xstrdup("text/event-stream");
	record_headers(f, hdrs);
	return f->gone ? -1 : 0;
}

static int
op_stream_send(struct ph_exchange *ex, const char *json, size_t len)
{
	struct fake_front *f = of(ex);
	f->stream_sends++;
	ph_buf_add(&f->out, json, len);
	ph_buf_addc(&f->out, '\n');
	return f->gone ? -1 : 0;
}

static int
op_stream_ping(struct ph_exchange *ex)
{
	struct fake_front *f = of(ex);
	f->pings++;
	return f->gone ? -1 : 0;
}

static bool
op_closed(struct ph_exchange *ex)
{
	return of(ex)->gone;
}

static const struct ph_front_ops fake_ops = {
	.param = op_param,
	.read = op_read,
	.respond = op_respond,
	.stream_start = op_stream_start,
	.stream_send = op_stream_send,
	.stream_ping = op_stream_ping,
	.closed = op_closed,
};

void
fake_init(struct fake_front *f, bool http)
{
	memset(f, 0, sizeof *f);
	ph_buf_init(&f->hdrs);
	ph_buf_init(&f->out);
	f->ex.ops = &fake_ops;
	f->ex.front = f;
	f->ex.http = http;
}

void
fake_free(struct fake_front *f)
{
	for (size_t i = 0; i < f->np; i++) {
		free(f->pn[i]);
		free(f->pv[i]);
	}
	free(f->body);
	free(f->ctype);
	ph_buf_free(&f->hdrs);
	ph_buf_free(&f->out);
	json_object_put(f->json);
	fake_init(f, false);
}

void
fake_param_n(struct fake_front *f, const char *name, size_t nl, const char *value, size_t vl)
{
	for (size_t i = 0; i < f->np; i++) {
		if (strlen(f->pn[i]) != nl || memcmp(f->pn[i], name, nl) != 0)
			continue;
		free(f->pv[i]);
		if (value == NULL) {
			free(f->pn[i]);
			f->np--;
			f->pn[i] = f->pn[f->np];
			f->pv[i] = f->pv[f->np];
		} else {
			f->pv[i] = ph_xstrndup(value, vl);
		}
		return;
	}
	if (value != NULL && f->np < FAKE_MAX_PARAMS) {
		f->pn[f->np] = ph_xstrndup(name, nl);
		f->pv[f->np++] = ph_xstrndup(value, vl);
	}
}

void
fake_param(struct fake_front *f, const char *name, const char *value)
{
	fake_param_n(f, name, strlen(name), value, value ? strlen(value) : 0);
}

const char *
fake_get(const struct fake_front *f, const char *name)
{
	for (size_t i = 0; i < f->np; i++)
		if (strcmp(f->pn[i], name) == 0)
			return f->pv[i];
	return NULL;
}

void
fake_body(struct fake_front *f, const char *body, size_t len)
{
	free(f->body);
	/* a NUL after the copy: a stdio line may be printed or searched */
	f->body = ph_xmalloc(len + 1);
	if (len)
		memcpy(f->body, body, len);
	f->body[len] = '\0';
	f->len = len;
	f->pos = 0;
	f->ex.body = f->ex.http ? NULL : f->body;
	f->ex.body_len = f->ex.http ? 0 : len;
}

void
fake_post(struct fake_front *f, const char *body, size_t len)
{
	char cl[32];
	snprintf(cl, sizeof cl, "%zu", len);
	fake_param(f, "REQUEST_METHOD", "POST");
	fake_param(f, "CONTENT_TYPE", "application/json");
	fake_param(f, "HTTP_HOST", "localhost:8080");
	fake_param(f, "CONTENT_LENGTH", cl);
	fake_body(f, body, len);
}

void
fake_serve(struct fake_front *f, struct ph_server *srv)
{
	if (!f->ex.http)
		f->ex.too_large = (long long)f->ex.body_len > srv->conf->http.max_body;
	ph_serve(srv, &f->ex);
}

struct json_object *
fake_json(struct fake_front *f)
{
	struct json_tokener *tok;
	struct json_object *o;
	size_t end;
	if (f->json != NULL)
		return f->json;
	if (f->out.len == 0 || f->stream_sends > 0 || memchr(f->out.data, '\0', f->out.len))
		return NULL;
	tok = json_tokener_new_ex(FAKE_JSON_DEPTH);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	/* the terminating NUL too, so that a document at the very end is complete */
	o = json_tokener_parse_ex(tok, f->out.data, (int)f->out.len + 1);
	end = json_tokener_get_error(tok) == json_tokener_success ? json_tokener_get_parse_end(tok) : 0;
	json_tokener_free(tok);
	if (o == NULL)
		return NULL;
	/* exactly one document: nothing but blanks after it */
	end += strspn(f->out.data + end, " \t\r\n");
	if (end != f->out.len) {
		json_object_put(o);
		return NULL;
	}
	return f->json = o;
}

bool
fake_has_header(const struct fake_front *f, const char *text)
{
	return f->hdrs.data != NULL && strstr(f->hdrs.data, text) != NULL;
}
