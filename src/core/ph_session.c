/* ph_session.c: issuing, opening and ending legacy session ids. */
#include "first.h"
#include "ph_session.h"
#include "ph_registry.h"
#include "ph_json.h"
#include "ph_shared.h"
#include "ph_state.h"
#include "ph_util.h"
#include <errno.h>
#include <poll.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PURPOSE "session"
/* How long a worker waits for the hub to answer a session question. */
#define HUB_ASK_MS 500

/* With sessions.on_end, tells the hub of the session doc just issued, so
 * that it can call the hook when the session expires. */
static void
follow(struct ph_req *r, struct json_object *doc)
{
	const struct ph_registry *reg = r->srv->conf->registry;
	struct json_object *q;
	char ans[64];
	if (reg == NULL || reg->session_end == NULL || ph_hub_fd < 0)
		return;
	q = ph_hubmsg_session_hook(PH_HUBMSG_SESSION_ISSUED, r, doc);
	if (ph_session_hub_ask(ph_json_text(q, NULL), ans, sizeof ans, NULL) < 0)
		ph_log("warning", "the hub did not take a new session: sessions.on_end will not be "
		       "called at its expiry");
	json_object_put(q);
}

char *
ph_session_issue(struct ph_req *r, const char *version)
{
	struct json_object *doc = json_object_new_object(), *caps, *info;
	unsigned char sid[16];
	char hex[2 * sizeof sid + 1], *who = ph_req_binding(r), *tok;
	int64_t now = (int64_t)time(NULL);
	randombytes_buf(sid, sizeof sid);
	sodium_bin2hex(hex, sizeof hex, sid, sizeof sid);
	caps = ph_jget(r->params, "capabilities");
	info = ph_jget(r->params, "clientInfo");
	json_object_object_add(doc, "sid", json_object_new_string(hex));
	json_object_object_add(doc, "v", json_object_new_string(version));
	json_object_object_add(doc, "c", json_object_is_type(caps, json_type_object)
						 ? json_object_get(caps) : json_object_new_object());
	if (json_object_is_type(info, json_type_object))
		json_object_object_add(doc, "i", json_object_get(info));
	json_object_object_add(doc, "p", who ? json_object_new_string(who) : NULL);
	json_object_object_add(doc, "iat", json_object_new_int64(now));
	json_object_object_add(doc, "exp", json_object_new_int64(now + r->srv->conf->sessions.max_age));
	tok = ph_state_seal_doc(r->srv->conf->request_state, PURPOSE, doc);
	follow(r, doc);
	json_object_put(doc);
	free(who);
	return tok;
}

long
ph_session_hub_ask_buf(const char *text, size_t len, struct ph_buf *out, size_t max, int wait_ms, int *fdp)
{
	int sp[2], fd = -1;
	ssize_t got = -1;
	int64_t until = ph_now_us() + (int64_t)wait_ms * 1000;
	if (fdp)
		*fdp = -1;
	if (ph_hub_fd < 0 || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) != 0)
		return -1;
	if (ph_hub_send(text, len, sp[1], wait_ms) != 0)
		goto out;
	close(sp[1]);
	sp[1] = -1;
	for (;;) {
		int64_t left = (until - ph_now_us()) / 1000;
		struct pollfd p = {sp[0], POLLIN, 0};
		int rc = poll(&p, 1, left > 0 ? (int)left : 0);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc == 0) {
			/* no answer in time: from now on the hub's answer fails
			 * to send (it then knows this worker has given up), and
			 * one sent just before is still read */
			shutdown(sp[0], SHUT_RD);
			got = ph_recv_msg(sp[0], out, max, &fd, MSG_DONTWAIT);
			if (got == 0)
				got = -1;
			break;
		}
		if (rc < 0)
			goto out;
		got = ph_recv_msg(sp[0], out, max, &fd, MSG_DONTWAIT);
		if (got < 0 && errno == EINTR)
			continue;
		break;
	}
	if (fd >= 0 && fdp && got >= 0)
		*fdp = fd;
	else if (fd >= 0)
		close(fd);
out:
	close(sp[0]);
	if (sp[1] >= 0)
		close(sp[1]);
	return got < 0 ? -1 : (long)got;
}

long
ph_session_hub_ask(const char *text, char *out, size_t n, int *fdp)
{
	struct ph_buf b;
	long got;
	ph_buf_init(&b);
	got = ph_session_hub_ask_buf(text, strlen(text), &b, n - 1, HUB_ASK_MS, fdp);
	if (got >= 0)
		memcpy(out, b.data, (size_t)got + 1);
	ph_buf_free(&b);
	return got;
}

/* True when the hub says the session of doc was ended; else the level its
 * state holds, if any, is put in doc as "lvl". A hub that does not answer
 * counts as "not ended" (logged): plain requests keep working. */
static bool
ended(struct json_object *doc)
{
	const char *sid = ph_jstr(doc, "sid");
	struct json_object *q;
	char ans[64];
	long got;
	if (ph_hub_fd < 0)
		return false;
	q = ph_hubmsg_session_check(sid);
	got = ph_session_hub_ask(ph_json_text(q, NULL), ans, sizeof ans, NULL);
	json_object_put(q);
	if (got < 0) {
		ph_log("warning", "session %.8s...: the hub did not say whether it was ended", sid);
		return false;
	}
	if (strncmp(ans, "live ", 5) == 0 && ph_log_level_parse(ans + 5) != PH_LOG_NONE)
		json_object_object_add(doc, "lvl", json_object_new_string(ans + 5));
	return strcmp(ans, "ended") == 0;
}

enum ph_log_level
ph_session_level(struct json_object *doc)
{
	const char *l = doc ? ph_jstr(doc, "lvl") : NULL;
	enum ph_log_level v = l ? ph_log_level_parse(l) : PH_LOG_NONE;
	return v == PH_LOG_NONE ? PH_LOG_DEBUG : v;
}

bool
ph_session_has_state(const struct ph_req *r)
{
	return r->sess.session != NULL && r->ex->http && r->resp.batch == NULL && r->ex->ops->handoff != NULL &&
	       ph_hub_fd >= 0;
}

enum ph_err
ph_session_tell(struct ph_req *r, enum ph_hubmsg_type what, struct json_object *extra, char *msg, size_t n)
{
	struct json_object *q = ph_hubmsg_session_state(what, r, extra);
	char ans[400];
	const char *text;
	size_t len;
	long got;
	text = ph_json_text(q, &len);
	got = len < PH_HUB_MSG_MAX ? ph_session_hub_ask(text, ans, sizeof ans, NULL) : -1;
	json_object_put(q);
	if (got < 0) {
		snprintf(msg, n, "Internal error: the hub did not answer; the session's state is unchanged");
		return PH_E_INTERNAL;
	}
	if (strncmp(ans, "ok", 2) != 0) {
		snprintf(msg, n, "%s%s", strncmp(ans, "no ", 3) == 0 ? "" : "the hub said: ",
			 strncmp(ans, "no ", 3) == 0 ? ans + 3 : ans);
		if (msg[0] >= 'a' && msg[0] <= 'z')
			msg[0] = (char)(msg[0] - 'a' + 'A');
		return PH_E_HANDLER;
	}
	return PH_OK;
}

static bool
sid_ok(const char *sid)
{
	if (sid == NULL || strlen(sid) != 32)
		return false;
	for (const char *p = sid; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return false;
	return true;
}

struct json_object *
ph_session_open(struct ph_req *r, const char *token, char *msg, size_t n)
{
	struct json_object *doc, *exp, *p;
	char *who;
	bool same;
	size_t tl;
	const char *t = ph_trim(token, &tl);
	char *copy = ph_xstrndup(t, tl);
	doc = ph_state_open_doc(r->srv->conf->request_state, PURPOSE, copy, PH_SESSION_TOKEN_MAX);
	free(copy);
	if (doc == NULL || !sid_ok(ph_jstr(doc, "sid")) || ph_jstr(doc, "v") == NULL ||
	    !json_object_is_type(ph_jget(doc, "c"), json_type_object) ||
	    !json_object_is_type(exp = ph_jget(doc, "exp"), json_type_int)) {
		snprintf(msg, n, "Session not found: this Mcp-Session-Id was not issued by this server "
			 "or was altered; initialize again");
		goto fail;
	}
	if (json_object_get_int64(exp) < (int64_t)time(NULL)) {
		snprintf(msg, n, "Session not found: the session has expired (sessions.max_age); "
			 "initialize again");
		goto fail;
	}
	who = ph_req_binding(r);
	p = ph_jget(doc, "p");
	same = who == NULL ? p == NULL
			   : (json_object_is_type(p, json_type_string) &&
			      strcmp(json_object_get_string(p), who) == 0);
	free(who);
	if (!same) {
		snprintf(msg, n, "Session not found: the session was issued to another principal (or "
			 "with other assigns); initialize again");
		goto fail;
	}
	if (ended(doc)) {
		snprintf(msg, n, "Session not found: the session was ended; initialize again");
		goto fail;
	}
	return doc;
fail:
	json_object_put(doc);
	return NULL;
}

enum ph_err
ph_session_end(struct ph_req *r, char *msg, size_t n)
{
	struct json_object *doc = r->sess.session, *q;
	char ans[200];
	long got;
	if (ph_hub_fd < 0) {
		snprintf(msg, n, "Method not allowed: sessions cannot be ended without the hub (it runs "
			 "only under a master); the session expires after sessions.max_age");
		return PH_E_HTTP_METHOD;
	}
	q = ph_hubmsg_session_hook(PH_HUBMSG_SESSION_END, r, doc);
	got = ph_session_hub_ask(ph_json_text(q, NULL), ans, sizeof ans, NULL);
	json_object_put(q);
	if (got < 0) {
		snprintf(msg, n, "Internal error: the hub did not answer; the session was not ended");
		return PH_E_INTERNAL;
	}
	if (strncmp(ans, "ok", 2) != 0) {
		snprintf(msg, n, "Internal error: the session was not ended: %s",
			 strncmp(ans, "no ", 3) == 0 ? ans + 3 : ans);
		return PH_E_INTERNAL;
	}
	return PH_OK;
}
