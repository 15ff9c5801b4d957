/* ph_log.c: the one-line-per-request log and server messages, on stderr. */
#include "first.h"
#include "ph_server.h"
#include "ph_util.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static void
timestamp(char *buf, size_t n)
{
	struct timeval tv;
	struct tm tm;
	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	snprintf(buf, n, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(tv.tv_usec / 1000));
}

/* Appends s to b with control characters and quotes escaped, so one request
 * is always one line whatever the client sent. */
static void
add_safe(struct ph_buf *b, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c == 0x7f || c == '"' || c == '\\')
			ph_buf_printf(b, "\\x%02x", c);
		else
			ph_buf_addc(b, (char)c);
	}
}

void
ph_log_request(const struct ph_req *r, const char *method)
{
	char ts[96];
	struct ph_buf b;
	long long us = (long long)(ph_now_us() - r->t0);
	timestamp(ts, sizeof ts);
	ph_buf_init(&b);
	if (r->srv->conf->log.json) {
		struct json_object *o = json_object_new_object();
		json_object_object_add(o, "time", json_object_new_string(ts));
		json_object_object_add(o, "pid", json_object_new_int((int)getpid()));
		json_object_object_add(o, "method", json_object_new_string(method));
		if (r->target)
			json_object_object_add(o, "target", json_object_new_string(r->target));
		json_object_object_add(o, "status", json_object_new_int(r->status));
		if (r->rpc_code)
			json_object_object_add(o, "code", json_object_new_int(r->rpc_code));
		json_object_object_add(o, "us", json_object_new_int64(us));
		if (r->principal)
			json_object_object_add(o, "principal", json_object_new_string(r->principal));
		if (r->traceparent)
			json_object_object_add(o, "traceparent", json_object_new_string(r->traceparent));
		ph_buf_adds(&b, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
	} else {
		ph_buf_printf(&b, "%s phantom[%d] method=", ts, (int)getpid());
		add_safe(&b, method);
		ph_buf_adds(&b, " target=");
		add_safe(&b, r->target ? r->target : "-");
		ph_buf_printf(&b, " status=%d code=", r->status);
		if (r->rpc_code)
			ph_buf_printf(&b, "%d", r->rpc_code);
		else
			ph_buf_addc(&b, '-');
		ph_buf_printf(&b, " us=%lld", us);
		if (r->principal) {
			ph_buf_adds(&b, " principal=");
			add_safe(&b, r->principal);
		}
		if (r->traceparent) {
			ph_buf_adds(&b, " traceparent=");
			add_safe(&b, r->traceparent);
		}
	}
	ph_buf_addc(&b, '\n');
	/* one write per line keeps lines whole when workers share stderr */
	if (write(2, b.data, b.len) < 0) {
		/* stderr gone: nothing to report it on */
	}
	ph_buf_free(&b);
}

void
ph_log(const char *level, const char *fmt, ...)
{
	char ts[96], msg[2048];
	struct ph_buf b;
	va_list ap;
	timestamp(ts, sizeof ts);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	ph_buf_init(&b);
	ph_buf_printf(&b, "%s phantom[%d] %s: %s\n", ts, (int)getpid(), level, msg);
	if (write(2, b.data, b.len) < 0) {
		/* nothing to do */
	}
	ph_buf_free(&b);
}
