/* ph_req.c: the handler-facing request API: outcomes, notifications on the
 * request's stream (progress, log messages), liveness and cancellation,
 * paging cursors and MCP header decoding. Features and handlers call these;
 * the core sends what they produce. */
#include "first.h"
#include "ph_server.h"
#include "ph_json.h"
#include "ph_mime.h"
#include "ph_state.h"
#include "ph_util.h"
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void
ph_outcome_error(struct ph_outcome *o, enum ph_err e, struct json_object *data, const char *fmt, ...)
{
	char tmp[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	json_object_put(o->result);
	o->result = NULL;
	free(o->message);
	json_object_put(o->data);
	o->err = e;
	o->message = ph_xstrdup(tmp);
	o->data = data;
}

int ph_hub_fd = -1;

void
ph_req_init(struct ph_req *r, struct ph_server *srv, struct ph_exchange *ex)
{
	memset(r, 0, sizeof *r);
	r->srv = srv;
	r->ex = ex;
	r->mid = PH_METHOD__COUNT;
	r->log_level = PH_LOG_NONE;
	r->resp.last_progress = -1;
	r->t0 = ph_now_us();
}

void
ph_req_set_method(struct ph_req *r, const char *name)
{
	r->method = name;
	r->mid = name ? ph_method_find(name) : PH_METHOD__COUNT;
}

struct json_object *
ph_req_assigns(const struct ph_req *r)
{
	return r->who.assigns ? json_object_get(r->who.assigns) : json_object_new_object();
}

char *
ph_req_binding(const struct ph_req *r)
{
	unsigned char d[crypto_hash_sha256_BYTES];
	char hex[2 * sizeof d + 1], *canon, *out;
	if (r->who.assigns == NULL)
		return r->who.principal ? ph_xstrdup(r->who.principal) : NULL;
	canon = ph_json_canonical(r->who.assigns);
	crypto_hash_sha256(d, (const unsigned char *)canon, strlen(canon));
	free(canon);
	sodium_bin2hex(hex, sizeof hex, d, sizeof d);
	/* a principal holds no control character: the separator cannot be forged */
	out = ph_xasprintf("%s\x1f%s", r->who.principal ? r->who.principal : "", hex);
	return out;
}

const char *
ph_assign_text(struct json_object *assigns, const char *name, size_t len)
{
	char key[256];
	struct json_object *v;
	if (assigns == NULL || len >= sizeof key)
		return NULL;
	memcpy(key, name, len);
	key[len] = '\0';
	v = ph_jget(assigns, key);
	if (v == NULL || json_object_is_type(v, json_type_object) || json_object_is_type(v, json_type_array) ||
	    json_object_is_type(v, json_type_null))
		return NULL;
	/* a string holding U+0000 would read as the text before it: "acme\u0000x"
	 * must not pass a module's strcmp for acme */
	if (json_object_is_type(v, json_type_string) &&
	    memchr(json_object_get_string(v), '\0', (size_t)json_object_get_string_len(v)) != NULL)
		return NULL;
	return json_object_get_string(v);
}

void
ph_outcome_not_found(struct ph_req *r, struct ph_outcome *o, const char *uri)
{
	struct json_object *d = json_object_new_object();
	json_object_object_add(d, "uri", json_object_new_string(uri));
	ph_outcome_error(o, PH_E_NOT_FOUND, d, "Resource not found: %s", uri);
}

/* ---- notifications and liveness ------------------------------------------ */

void
ph_req_headers(const struct ph_req *r, const struct ph_header *hdrs, struct ph_header *out, size_t max)
{
	size_t n = 0;
	bool has_acao = false;
	for (; hdrs && hdrs->name && n + 5 < max; hdrs++) {
		if (strcasecmp(hdrs->name, "Access-Control-Allow-Origin") == 0)
			has_acao = true;
		out[n++] = *hdrs;
	}
	if (r->cors_origin && !has_acao) {
		/* the origin itself, never "*": a browser then also sends and
		 * reads credentials-bearing requests */
		out[n++] = (struct ph_header){"Access-Control-Allow-Origin", r->cors_origin};
		out[n++] = (struct ph_header){"Access-Control-Expose-Headers", "Mcp-Session-Id, WWW-Authenticate"};
		out[n++] = (struct ph_header){"Vary", "Origin"};
	}
	if (r->sess.session_issued)
		out[n++] = (struct ph_header){"Mcp-Session-Id", r->sess.session_issued};
	out[n] = (struct ph_header){NULL, NULL};
}

int
ph_req_stream(struct ph_req *r)
{
	static const struct ph_header sse[] = {
		{"Cache-Control", "no-cache, no-transform"}, {"X-Accel-Buffering", "no"}, {NULL, NULL}};
	if (r->ex->cancelled)
		return -1;
	if (r->ex->http && !r->resp.streaming) {
		struct ph_header h[8];
		ph_req_headers(r, sse, h, PH_ARRAY_LEN(h));
		if (r->ex->ops->stream_start(r->ex, h) != 0) {
			r->ex->cancelled = 1;
			return -1;
		}
		r->resp.streaming = true;
	}
	return 0;
}

int
ph_req_send(struct ph_req *r, struct json_object *msg)
{
	size_t len;
	const char *s;
	int rc;
	if (ph_req_stream(r) != 0)
		return -1;
	s = ph_json_text(msg, &len);
	rc = r->ex->ops->stream_send(r->ex, s, len);
	if (rc != 0)
		r->ex->cancelled = 1;
	return rc;
}

int
ph_req_notify(struct ph_req *r, const char *method, struct json_object *params)
{
	struct json_object *n;
	int rc;
	if (r->ex->cancelled) {
		json_object_put(params);
		return -1;
	}
	if (r->resp.batch != NULL) {
		json_object_put(params);
		return 0;
	}
	n = json_object_new_object();
	json_object_object_add(n, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(n, "method", json_object_new_string(method));
	if (params)
		json_object_object_add(n, "params", params);
	rc = ph_req_send(r, n);
	json_object_put(n);
	return rc;
}

bool
ph_req_gone(struct ph_req *r)
{
	if (!r->ex->cancelled && r->ex->ops->closed && r->ex->ops->closed(r->ex))
		r->ex->cancelled = 1;
	return r->ex->cancelled != 0;
}

static bool
same_id(struct json_object *a, struct json_object *b)
{
	if (a == NULL || b == NULL || json_object_get_type(a) != json_object_get_type(b))
		return false;
	if (json_object_is_type(a, json_type_int))
		return json_object_get_int64(a) == json_object_get_int64(b);
	return json_object_get_string_len(a) == json_object_get_string_len(b) &&
	       memcmp(json_object_get_string(a), json_object_get_string(b),
		      (size_t)json_object_get_string_len(a)) == 0;
}

/* True when line is a notifications/cancelled naming request id. */
static bool
cancels(const char *line, size_t len, struct json_object *id)
{
	static const char want[] = "notifications/cancelled";
	struct json_object *o, *p, *rid, *m;
	bool yes = false;
	/* a line the core would refuse is left queued, to be answered so */
	if (!ph_utf8_valid(line, len) || !ph_json_parse(line, len, PH_JSON_DEPTH_CANCEL, &o) || o == NULL)
		return false;
	p = ph_jget(o, "params");
	rid = ph_jget(p, "requestId");
	m = ph_jget(o, "method");
	if (ph_jget(o, "id") == NULL && json_object_is_type(m, json_type_string) &&
	    json_object_get_string_len(m) == sizeof want - 1 &&
	    memcmp(json_object_get_string(m), want, sizeof want - 1) == 0 && same_id(rid, id) &&
	    !ph_json_key_nul(line, len))
		yes = true;
	json_object_put(o);
	return yes;
}

/* Consumes a message the front read ahead that cancels this request.
 * Returns true when there was one. */
static bool
cancel_queued(struct ph_req *r)
{
	const char *line;
	size_t len;
	if (r->ex->ops->queued == NULL || r->id == NULL)
		return false;
	for (size_t i = 0; (line = r->ex->ops->queued(r->ex, i, &len)) != NULL; i++) {
		if (cancels(line, len, r->id)) {
			r->ex->ops->dequeue(r->ex, i);
			return true;
		}
	}
	return false;
}

bool
ph_req_alive(struct ph_req *r)
{
	if (ph_req_gone(r))
		return false;
	/* HTTP: only an open SSE stream can tell; stdio: reads ahead */
	if ((r->resp.streaming || !r->ex->http) && r->ex->ops->stream_ping(r->ex) != 0)
		r->ex->cancelled = 1;
	if (!r->ex->cancelled && cancel_queued(r))
		r->ex->cancelled = 1;
	return !r->ex->cancelled;
}

int
ph_req_progress(struct ph_req *r, double progress, double total, const char *message)
{
	struct json_object *p;
	if (r->progress_token == NULL)
		return 0;
	if (r->resp.last_progress >= 0 && progress <= r->resp.last_progress)
		return 0; /* progress MUST increase */
	r->resp.last_progress = progress;
	p = json_object_new_object();
	json_object_object_add(p, "progressToken", json_object_get(r->progress_token));
	json_object_object_add(p, "progress", json_object_new_double(progress));
	if (total > 0)
		json_object_object_add(p, "total", json_object_new_double(total));
	if (message)
		json_object_object_add(p, "message", json_object_new_string(message));
	return ph_req_notify(r, "notifications/progress", p);
}

int
ph_req_log(struct ph_req *r, enum ph_log_level level, const char *logger, struct json_object *data)
{
	struct json_object *p;
	if (r->log_level == PH_LOG_NONE || level < r->log_level) {
		json_object_put(data);
		return 0;
	}
	p = json_object_new_object();
	json_object_object_add(p, "level", json_object_new_string(ph_log_level_name(level)));
	if (logger)
		json_object_object_add(p, "logger", json_object_new_string(logger));
	json_object_object_add(p, "data", data);
	return ph_req_notify(r, "notifications/message", p);
}

static const char *const level_names[] = {"debug", "info", "notice", "warning",
					  "error", "critical", "alert", "emergency"};

enum ph_log_level
ph_log_level_parse(const char *s)
{
	for (size_t i = 0; i < PH_ARRAY_LEN(level_names); i++)
		if (strcmp(s, level_names[i]) == 0)
			return (enum ph_log_level)i;
	return PH_LOG_NONE;
}

const char *
ph_log_level_name(enum ph_log_level l)
{
	if (l < 0 || (size_t)l >= PH_ARRAY_LEN(level_names))
		return "none";
	return level_names[l];
}

/* ---- pagination (mcp-wire §11) ------------------------------------------ */

/* Cursors are opaque to clients (unpadded base64url). "p2:<next>:" and a
 * digest of the key of each of the page's last entries (at most
 * PAGE_MARKS): the next page starts after the last of them still listed, so
 * a reload between two pages (an entry added or removed before the cursor)
 * neither skips nor repeats an entry; when none is listed any more, at
 * <next> minus the marks (repeats rather than skips). "p1:<offset>" (before
 * the keys) is still read as an offset. */
#define PAGE_MARKS 16
#define MARK_BYTES 8
#define CURSOR_MAX 256

/* The digest of the key of entry i. */
static void
mark_of(const struct ph_page_keys *k, size_t i, struct ph_buf *b, unsigned char m[MARK_BYTES])
{
	ph_buf_reset(b);
	k->key(k->ctx, i, b);
	crypto_generichash(m, MARK_BYTES, (const unsigned char *)b->data, b->len, NULL, 0);
}

static char *
cursor_encode(size_t next, size_t count, const struct ph_page_keys *k)
{
	struct ph_buf raw, key;
	size_t first = count > PAGE_MARKS ? next - PAGE_MARKS : next - count;
	char *c;
	ph_buf_init(&raw);
	if (k == NULL) {
		ph_buf_printf(&raw, "p1:%zu", next);
	} else {
		ph_buf_printf(&raw, "p2:%zu:", next);
		ph_buf_init(&key);
		for (size_t i = first; i < next; i++) {
			unsigned char m[MARK_BYTES];
			mark_of(k, i, &key, m);
			ph_buf_add(&raw, m, MARK_BYTES);
		}
		ph_buf_free(&key);
	}
	c = ph_base64url(raw.data, raw.len);
	ph_buf_free(&raw);
	return c;
}

/* Where a "p2" cursor's page resumes in the list as it is now: after the
 * last marked entry found, else at next minus the marks (at most total). */
static size_t
cursor_resume(const unsigned char *marks, size_t nmarks, size_t next, size_t total,
	      const struct ph_page_keys *k)
{
	size_t at = next > nmarks ? next - nmarks : 0, found = SIZE_MAX;
	unsigned char *all;
	struct ph_buf key;
	if (nmarks == 0 || k == NULL)
		return next < total ? next : total;
	all = ph_xmalloc(total * MARK_BYTES + 1);
	ph_buf_init(&key);
	for (size_t i = 0; i < total; i++)
		mark_of(k, i, &key, all + i * MARK_BYTES);
	ph_buf_free(&key);
	for (size_t m = nmarks; m-- > 0 && found == SIZE_MAX;)
		for (size_t i = 0; i < total; i++)
			if (memcmp(all + i * MARK_BYTES, marks + m * MARK_BYTES, MARK_BYTES) == 0) {
				found = i + 1;
				break;
			}
	free(all);
	if (found != SIZE_MAX)
		return found;
	return at < total ? at : total;
}

/* Returns 0 with *offset for a cursor this server made, -1 otherwise. */
static int
cursor_decode(const char *c, size_t total, const struct ph_page_keys *k, size_t *offset)
{
	unsigned char *raw;
	size_t n = strlen(c), rlen, digits = 0;
	long long v;
	const char *err;
	char num[16];
	int rc = -1;
	if (n == 0 || n > CURSOR_MAX || ph_base64url_decode(c, n, &raw, &rlen) != 0)
		return -1;
	if (rlen > 3 && (memcmp(raw, "p1:", 3) == 0 || memcmp(raw, "p2:", 3) == 0)) {
		while (3 + digits < rlen && raw[3 + digits] >= '0' && raw[3 + digits] <= '9' && digits < 10)
			digits++;
		memcpy(num, raw + 3, digits);
		num[digits] = '\0';
		if (digits == 0 || ph_strtonum(num, 0, INT32_MAX, &v, &err) != 0)
			rc = -1;
		else if (raw[1] == '1' && 3 + digits == rlen && (size_t)v <= total)
			rc = 0, *offset = (size_t)v;
		else if (raw[1] == '2' && 3 + digits < rlen && raw[3 + digits] == ':' &&
			 (rlen - 4 - digits) % MARK_BYTES == 0 && (rlen - 4 - digits) / MARK_BYTES <= PAGE_MARKS)
			rc = 0, *offset = cursor_resume(raw + 4 + digits, (rlen - 4 - digits) / MARK_BYTES,
							(size_t)v, total, k);
	}
	free(raw);
	return rc;
}

int
ph_page_resume(struct ph_req *r, size_t total, const struct ph_page_keys *k, size_t *offset,
	       struct ph_outcome *o)
{
	struct json_object *c = ph_jget(r->params, "cursor");
	*offset = 0;
	if (c == NULL)
		return 0;
	if (!json_object_is_type(c, json_type_string) ||
	    cursor_decode(json_object_get_string(c), total, k, offset) != 0) {
		ph_outcome_error(o, PH_E_PARAMS, NULL, "Invalid cursor");
		return -1;
	}
	return 0;
}

int
ph_page_begin(struct ph_req *r, size_t total, size_t *offset, struct ph_outcome *o)
{
	return ph_page_resume(r, total, NULL, offset, o);
}

size_t
ph_page_count(const struct ph_req *r, size_t total, size_t offset)
{
	size_t ps = (size_t)r->srv->conf->server.page_size;
	if (offset >= total)
		return 0;
	return total - offset < ps ? total - offset : ps;
}

void
ph_page_mark(struct ph_req *r, struct json_object *result, size_t offset, size_t count, size_t total,
	     const struct ph_page_keys *k)
{
	(void)r;
	if (offset + count < total) {
		char *c = cursor_encode(offset + count, count, k);
		json_object_object_add(result, "nextCursor", json_object_new_string(c));
		free(c);
	}
}

void
ph_page_end(struct ph_req *r, struct json_object *result, size_t offset, size_t count, size_t total)
{
	ph_page_mark(r, result, offset, count, total, NULL);
}

/* ---- MCP header values (mcp-wire §6.5) --------------------------------- */

int
ph_header_decode(const char *v, size_t n, char **out)
{
	static const char pre[] = "=?base64?", suf[] = "?=";
	const size_t pl = sizeof pre - 1, sl = sizeof suf - 1;
	unsigned char *dec;
	size_t len;
	if (n < pl + sl || memcmp(v, pre, pl) != 0 || memcmp(v + n - sl, suf, sl) != 0)
		return 1;
	if (ph_base64_decode(v + pl, n - pl - sl, &dec, &len) != 0)
		return -1;
	/* what it names is valid UTF-8 without U+0000, so must its header be */
	if (!ph_utf8_valid((const char *)dec, len)) {
		free(dec);
		return -1;
	}
	*out = (char *)dec;
	return 0;
}
