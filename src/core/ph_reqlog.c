/* ph_reqlog.c: the one-line-per-request log on stderr. */
#include "first.h"
#include "ph_core.h"
#include "ph_log.h"
#include "ph_server.h"
#include "ph_util.h"
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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
	ph_log_timestamp(ts, sizeof ts);
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
		if (r->exec_how)
			json_object_object_add(o, "exec", json_object_new_string(r->exec_how));
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
		if (r->exec_how)
			ph_buf_printf(&b, " exec=%s", r->exec_how);
	}
	ph_buf_addc(&b, '\n');
	/* one write per line keeps lines whole when workers share stderr */
	if (write(2, b.data, b.len) < 0) {
		/* stderr gone: nothing to report it on */
	}
	ph_buf_free(&b);
}
