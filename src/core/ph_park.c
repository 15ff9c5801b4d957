/* ph_park.c: pushing a handler's input requests to a legacy client and
 * passing the client's answers to the hub (ph_park.h; the hub's side is
 * process/ph_hub_session.c). */
#include "first.h"
#include "ph_otel.h"
#include "ph_cluster.h"
#include "ph_hubmsg.h"
#include "ph_json.h"
#include "ph_mime.h"
#include "ph_mrtr.h"
#include "ph_park.h"
#include "ph_session.h"
#include "ph_shared.h"
#include "ph_util.h"
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef PH_HAVE_HIREDIS
#include <hiredis/hiredis.h>
#endif

/* The JSON-RPC request for the input request req {method, params} under
 * id (caller puts). */
static struct json_object *
pushed_request(struct json_object *req, const char *id)
{
	struct json_object *m = json_object_new_object(), *p = ph_jget(req, "params"), *pc;
	const char *mode = ph_jstr(p, "mode");
	json_object_object_add(m, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(m, "id", json_object_new_string(id));
	json_object_object_add(m, "method", json_object_new_string(ph_jstr(req, "method")));
	pc = p ? json_object_new_object() : NULL;
	if (p) {
		json_object_object_foreach(p, k, v)
			json_object_object_add(pc, k, json_object_get(v));
	}
	if (mode && strcmp(mode, "url") == 0 && ph_jstr(pc, "elicitationId") == NULL) {
		char u[37];
		ph_uuid4(u);
		json_object_object_add(pc, "elicitationId", json_object_new_string(u));
	}
	if (pc)
		json_object_object_add(m, "params", pc);
	return m;
}

/* A fresh prefix for the ids of one round's requests: "ph-<12 hex>". */
static void
round_prefix(char hex[13])
{
	unsigned char rnd[6];
	randombytes_buf(rnd, sizeof rnd);
	sodium_bin2hex(hex, 13, rnd, sizeof rnd);
}

bool
ph_park_call(struct ph_req *r, char *why, size_t n)
{
	struct json_object *reqs = ph_jget(r->sess.park, "inputRequests"), *ids, *push, *d;
	char hex[13];
	size_t i = 0, len;
	const char *text;
	bool ok = false;
	/* The head goes out now; the requests themselves are written by the
	 * hub once it holds the call, so no answer can reach the hub before
	 * the call it answers. */
	if (ph_req_stream(r) != 0) {
		snprintf(why, n, "the client went away");
		return false;
	}
	round_prefix(hex);
	ids = json_object_new_object();
	push = json_object_new_array();
	json_object_object_foreach(reqs, k, req) {
		char id[48];
		/* ph-HOST-CALL-N: the host's tag tells an answer that reached
		 * another host (ph_park_answer) */
		snprintf(id, sizeof id, "ph-%s-%s-%zu", ph_shared_host_tag(), hex, i++);
		json_object_array_add(push, pushed_request(req, id));
		json_object_object_add(ids, id, json_object_new_string(k));
	}
	if (ph_otel_on)
		ph_otel_park_mark(r); /* the wait becomes a span when the call resumes */
	d = ph_hubmsg_park_call(r, ph_jget(r->sess.park, "state"), ids, push, ph_cluster_on());
	text = ph_json_text(d, &len);
	if (len > PH_PARK_DESC_MAX)
		snprintf(why, n, "Internal error: the call is too large to wait for the client's answer "
			 "(%zu bytes with the handler's state; at most %d)", len, PH_PARK_DESC_MAX);
	else if (r->ex->ops->handoff(r->ex, text, len) != 0)
		snprintf(why, n, "Internal error: the hub cannot hold the call while the client answers");
	else
		ok = true;
	json_object_put(d);
	return ok;
}

/* The id of a request this server pushes: "ph-" HOST "-" CALL "-" N, HOST
 * 8 and CALL 12 lowercase hex digits. Sets *host (the 8 digits) when it is. */
static bool
pushed_id(const char *id, const char **host)
{
	size_t i;
	if (strncmp(id, "ph-", 3) != 0)
		return false;
	for (i = 3; i < 3 + 8 + 1 + 12; i++) {
		char c = id[i];
		if (i == 3 + 8 ? c != '-' : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return false;
	}
	if (id[i++] != '-' || id[i] < '0' || id[i] > '9')
		return false;
	while (id[i] >= '0' && id[i] <= '9')
		i++;
	*host = id + 3;
	return id[i] == '\0';
}

/* Why the JSON-RPC response msg cannot answer a request the server pushed,
 * or NULL. Every such request (elicitation/create, sampling/createMessage,
 * roots/list) expects an object as its result; an error must be a JSON-RPC
 * error object. A response that is neither, or both, is refused and the
 * call keeps waiting for a proper answer. */
const char *
ph_park_check(struct json_object *msg, const char **host)
{
	struct json_object *v = ph_jget(msg, "jsonrpc"), *res, *err, *code, *id = ph_jget(msg, "id");
	bool has_res = json_object_object_get_ex(msg, "result", &res);
	bool has_err = json_object_object_get_ex(msg, "error", &err);
	*host = NULL;
	if (!json_object_is_type(v, json_type_string) || strcmp(json_object_get_string(v), "2.0") != 0)
		return "jsonrpc must be \"2.0\"";
	if (has_res && has_err)
		return "a response carries a result or an error, not both";
	if (!has_res && !has_err)
		return "a response carries a result or an error";
	if (has_res && !json_object_is_type(res, json_type_object))
		return "the result of a request this server sends is an object";
	if (has_err) {
		code = ph_jget(err, "code");
		if (!json_object_is_type(err, json_type_object) || !json_object_is_type(code, json_type_int) ||
		    !json_object_is_type(ph_jget(err, "message"), json_type_string))
			return "an error is an object with an integer code and a string message";
	}
	if (!json_object_is_type(id, json_type_string) || !pushed_id(json_object_get_string(id), host))
		return "no request of this server has this id (the server's ids are strings "
		       "ph-<hex>-<hex>-<n>)";
	return NULL;
}

/* The hub's "take {rid, msg, state, answers}" (text, len bytes, nested
 * at most depth deep; fd the connection) as out, its exchange made by the
 * front (srv->resume) from fd (then taken) and the call's request id.
 * Returns 1, or -1 with why. */
static int
take_call(const struct ph_server *srv, const char *text, size_t len, int depth, int fd,
	  struct ph_park_resume *out, char *why, size_t n)
{
	struct ph_hubmsg_take t;
	if (fd < 0 || !ph_hubmsg_take_read(text, len, depth, &t)) {
		snprintf(why, n, "Internal error: the hub handed back a call it did not describe");
		return -1;
	}
	if (srv->resume == NULL) {
		snprintf(why, n, "Internal error: this front cannot resume a call");
		json_object_put(t.msg);
		json_object_put(t.state);
		json_object_put(t.answers);
		return -1;
	}
	out->ex = srv->resume->open(fd, t.rid);
	out->msg = t.msg;
	out->state = t.state;
	out->answers = t.answers;
	return 1;
}

void
ph_park_mailbox(const char *kind, const char *tag, char *out)
{
	ph_cluster_key(kind, tag, 8, out);
}

/* Runs one command on the cluster's Redis. Returns false when it failed
 * or Redis answered an error. */
static bool
cluster_do(int argc, const char **argv, const size_t *len)
{
#ifdef PH_HAVE_HIREDIS
	redisReply *rep = ph_cluster_cmd(argc, argv, len);
	bool ok = rep != NULL && rep->type != REDIS_REPLY_ERROR;
	ph_redis_reply_free(rep);
	return ok;
#else
	(void)argc, (void)argv, (void)len;
	return false;
#endif
}

/* With cluster:, the answer r->msg to a request the host tagged host (8
 * hex digits) pushed: sealed into that host's mailbox, which expires with
 * the longest wait for an answer, and that host's hub woken (it takes the
 * mailbox again each time it connects, should it miss the wake). The
 * client is told 202 once the answer is stored; the hub that holds the
 * call checks it as it checks its own host's (a refusal is logged there).
 * Returns 0, or -1 with the reason in why when Redis does not store it. */
static int
forward(struct ph_req *r, const char *host, long long max, char *why, size_t n)
{
	struct json_object *q = ph_hubmsg_park_answer(r, max);
	char tag[9], box_key[PH_CLUSTER_KEY_MAX], wake[PH_CLUSTER_KEY_MAX], px[24];
	const char *text;
	unsigned char *box;
	size_t len, blen;
	bool stored;
	memcpy(tag, host, 8);
	tag[8] = '\0';
	ph_park_mailbox(PH_PARK_MAILBOX, tag, box_key);
	ph_park_mailbox(PH_PARK_WAKE, tag, wake);
	text = json_object_to_json_string_length(q, JSON_C_TO_STRING_PLAIN, &len);
	box = ph_cluster_seal(box_key, text, len, &blen);
	json_object_put(q);
	snprintf(px, sizeof px, "%lld", 2 * r->srv->conf->sessions.park_timeout_ms);
	{
		const char *push[3] = {"RPUSH", box_key, (const char *)box};
		size_t plen[3] = {5, strlen(box_key), blen};
		const char *exp[3] = {"PEXPIRE", box_key, px};
		size_t elen[3] = {7, strlen(box_key), strlen(px)};
		const char *pub[3] = {"PUBLISH", wake, "1"};
		size_t qlen[3] = {7, strlen(wake), 1};
		stored = cluster_do(3, push, plen);
		if (stored && (!cluster_do(3, exp, elen) || !cluster_do(3, pub, qlen)))
			ph_log("warning", "park: an answer for another host was stored, but its expiry or "
			       "the wake-up failed (that host takes it when it connects again)");
	}
	free(box);
	if (!stored) {
		snprintf(why, n, "Internal error: the answer could not be passed to the host that sent the "
			 "request (the cluster's Redis did not answer within cluster.timeout_ms); send it again");
		return -1;
	}
	ph_log("info", "park: an answer for a call parked on another host is in its mailbox");
	return 0;
}

int
ph_park_answer(struct ph_req *r, struct ph_park_resume *out, char *why, size_t n)
{
	struct json_object *q;
	long long max = r->srv->conf->sessions.max_answer, wait = r->srv->conf->sessions.answer_wait_ms;
	const char *text, *host, *bad = ph_park_check(r->msg, &host);
	struct ph_buf reply;
	size_t len;
	long got;
	int fd = -1, rc = -1;
	memset(out, 0, sizeof *out);
	if (bad != NULL) {
		snprintf(why, n, "Invalid response: %s", bad);
		return -1;
	}
	if (strncmp(host, ph_shared_host_tag(), 8) != 0 && ph_cluster_on())
		return forward(r, host, max, why, n);
	if (strncmp(host, ph_shared_host_tag(), 8) != 0) {
		snprintf(why, n, "Invalid response: the request with this id was sent by another host of "
			 "this server (or by this one before a restart) and only that host can take "
			 "the answer: route the requests of a session to one host by Mcp-Session-Id "
			 "(conf/nginx.conf: hash $http_mcp_session_id consistent)");
		return -1;
	}
	if (ph_hub_fd < 0) {
		snprintf(why, n, "Invalid response: this server sends no requests to clients here (no "
			 "hub: it runs only under a master)");
		return -1;
	}
	q = ph_hubmsg_park_answer(r, max);
	text = json_object_to_json_string_length(q, JSON_C_TO_STRING_PLAIN, &len);
	ph_buf_init(&reply);
	/* the call comes back with every answer of its round */
	got = ph_session_hub_ask_buf(text, len, &reply, 2 * (size_t)max + PH_PARK_REPLY_MAX, (int)wait, &fd);
	json_object_put(q);
	if (got < 0) {
		snprintf(why, n, "Internal error: the hub did not take the answer within "
			 "sessions.answer_wait_ms (%lld ms); the call still waits for it: send it again", wait);
	} else if (strncmp(reply.data, "ok", 2) == 0) {
		rc = 0;
	} else if (strncmp(reply.data, "take ", 5) == 0) {
		rc = take_call(r->srv, reply.data + 5, (size_t)got - 5, ph_hubmsg_depth(r->srv->conf->limits.json_depth),
			       fd, out, why, n);
		if (rc > 0)
			fd = -1;
	} else if (strncmp(reply.data, "no large: ", 10) == 0) {
		snprintf(why, n, "%s", reply.data + 10);
		rc = -2;
	} else if (strncmp(reply.data, "no ", 3) == 0) {
		const char *reason = strchr(reply.data + 3, ':');
		snprintf(why, n, "Invalid response: %s", reason ? reason + 2 : reply.data + 3);
	} else {
		snprintf(why, n, "Internal error: the hub answered %.40s", reply.data);
	}
	if (fd >= 0)
		close(fd);
	ph_buf_free(&reply);
	return rc;
}

/* ---- stdio ---------------------------------------------------------------------- */

static struct json_object *stdio_caps;
static unsigned stdio_gen;

void
ph_park_stdio_client(struct json_object *caps)
{
	json_object_put(stdio_caps);
	stdio_caps = NULL;
	stdio_gen++;
	if (json_object_is_type(caps, json_type_object))
		json_object_deep_copy(caps, &stdio_caps, NULL);
}

struct json_object *
ph_park_stdio_caps(void)
{
	return stdio_caps;
}

unsigned
ph_park_stdio_gen(void)
{
	return stdio_gen;
}

/* When line (len bytes) is a JSON-RPC response to one of the requests in
 * ids (pushed id -> request key): its key, and the result in *res or the
 * error's message in *err (both borrowed from *msg, which the caller puts).
 * NULL for any other line. */
static const char *
answer_to(const char *line, size_t len, struct json_object *ids, struct json_object **msg,
	  struct json_object **res, const char **err)
{
	struct json_object *o, *id, *key;
	*msg = NULL;
	if (!ph_utf8_valid(line, len) || ph_json_key_nul(line, len) ||
	    !ph_json_parse(line, len, PH_JSON_DEPTH_DOCUMENT, &o) || o == NULL)
		return NULL;
	id = ph_jget(o, "id");
	if (!json_object_is_type(o, json_type_object) || ph_jget(o, "method") != NULL ||
	    !json_object_is_type(id, json_type_string) ||
	    !json_object_object_get_ex(ids, json_object_get_string(id), &key) ||
	    (ph_jget(o, "result") == NULL && ph_jget(o, "error") == NULL)) {
		json_object_put(o);
		return NULL;
	}
	*msg = o;
	*res = ph_jget(o, "result");
	*err = NULL;
	if (ph_jget(o, "error") != NULL && (*err = ph_jstr(ph_jget(o, "error"), "message")) == NULL)
		*err = "(no message)";
	return json_object_get_string(key);
}

/* Takes the answers to ids out of the lines read ahead into got. Returns
 * 1 when one was an error (the reason in why), else 0. */
static int
take_answers(struct ph_req *r, struct json_object *ids, struct json_object *got, char *why, size_t n)
{
	const char *line;
	size_t len, i = 0;
	while ((line = r->ex->ops->queued(r->ex, i, &len)) != NULL) {
		struct json_object *msg, *res;
		const char *err, *key = answer_to(line, len, ids, &msg, &res, &err);
		if (key == NULL || ph_jget(got, key) != NULL) {
			/* not ours, or answered twice: left for the main loop to refuse */
			json_object_put(msg);
			i++;
			continue;
		}
		if (err != NULL || !json_object_is_type(res, json_type_object)) {
			snprintf(why, n, "The client answered the request the server sent with an error: %.200s",
				 err ? err : "(a result that is not an object)");
			json_object_put(msg);
			r->ex->ops->dequeue(r->ex, i);
			return 1;
		}
		json_object_object_add(got, key, json_object_get(res));
		json_object_put(msg);
		r->ex->ops->dequeue(r->ex, i);
	}
	return 0;
}

bool
ph_park_stdio(struct ph_req *r, struct json_object **answers, char *why, size_t n)
{
	struct json_object *reqs = ph_jget(r->sess.park, "inputRequests"), *ids, *got;
	long long timeout_ms = r->srv->conf->sessions.park_timeout_ms;
	int64_t deadline = ph_now_us() + timeout_ms * 1000;
	size_t i = 0, want = 0;
	char hex[13];
	*answers = NULL;
	why[0] = '\0';
	round_prefix(hex);
	ids = json_object_new_object();
	json_object_object_foreach(reqs, k, req) {
		char id[40];
		struct json_object *m;
		snprintf(id, sizeof id, "ph-%s-%zu", hex, i++);
		json_object_object_add(ids, id, json_object_new_string(k));
		m = pushed_request(req, id);
		ph_req_send(r, m);
		json_object_put(m);
		want++;
	}
	got = json_object_new_object();
	for (;;) {
		int64_t left;
		if (!ph_req_alive(r))
			break; /* cancelled, or stdout is gone */
		if (take_answers(r, ids, got, why, n) != 0)
			break;
		if ((size_t)json_object_object_length(got) == want) {
			*answers = got;
			got = NULL;
			break;
		}
		if ((left = deadline - ph_now_us()) <= 0) {
			snprintf(why, n, "The client did not answer the request the server sent within "
				 "sessions.park_timeout_ms (%lld ms); the call was abandoned", timeout_ms);
			break;
		}
		if (r->ex->ops->wait(r->ex, left > 200000 ? 200 : (int)(left / 1000) + 1) != 0) {
			/* one more look: the answer may have come with the end */
			if (take_answers(r, ids, got, why, n) == 0 &&
			    (size_t)json_object_object_length(got) == want) {
				*answers = got;
				got = NULL;
			} else if (why[0] == '\0') {
				snprintf(why, n, "The client's input ended before it answered the request the "
					 "server sent; the call was abandoned");
			}
			break;
		}
	}
	json_object_put(got);
	json_object_put(ids);
	return *answers != NULL;
}
