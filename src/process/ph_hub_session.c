/* ph_hub_session.c: the hub's part of legacy sessions. A session id is a
 * sealed token any worker can open (core/ph_session.c); what a token cannot
 * say is that it was ended, so the ids ended with DELETE are kept here,
 * each until the expiry its token carries, at most sessions.max_terminated
 * of them. Workers ask over the master's channel with a reply socket
 * (the messages: ipc/ph_hubmsg.h):
 *   SESSION_CHECK (sid)       -> "live" | "ended"
 *   SESSION_END (sid, exp)    -> "ok" | "no <reason>"
 * ("live LEVEL" once the session set a log level); what else a session
 * keeps here (its log level, subscriptions, GET streams) is ph_hub_state.c's.
 *
 * It also holds the calls parked on a server-to-client request: a worker
 * whose handler needs elicitation/create, sampling/createMessage or
 * roots/list starts the call's SSE stream and hands the FastCGI connection
 * over with PARK_CALL (the session, the binding, the request, the
 * handler's state, the requests to push and their ids, the request id)
 * and returns to accept. The hub writes the pushed requests on the stream
 * only once it holds the call, so the client cannot answer first. The
 * client's answers reach any worker, which sends PARK_ANSWER and is told
 * "ok" (202, more answers to come), "no <reason>" (refused), or "take
 * {rid, msg, state, answers}" (ph_hubmsg_take) with the connection
 * attached: the round is complete and that worker calls the handler again
 * and writes on the connection. A call with no complete round within
 * sessions.park_timeout_ms gets an error result on its stream; one whose
 * client goes away is freed. */
#include "first.h"
#include "ph_hub_session.h"
#include "ph_call.h"
#include "ph_features.h"
#include "ph_registry.h"
#include "ph_hub_state.h"
#include "ph_fcgi_wire.h"
#include "ph_shared.h"
#include "ph_json.h"
#include "ph_util.h"
#include "ph_park.h"
#include "ph_otel.h"
#include <errno.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* The bytes of a session's id (its "sid", 32 hex digits in the token). */
#define SID_BYTES PH_HUBMSG_SID_BYTES
/* How often expired ids are forgotten. */
#define PURGE_EVERY_US 10000000

struct ended {
	unsigned char sid[SID_BYTES];
	int64_t exp; /* seconds; 0: the slot is free */
};

/* A call waiting for the client's answers. */
struct parked {
	int fd;                    /* the FastCGI connection */
	unsigned rid;              /* its request id */
	char sid[2 * SID_BYTES + 1];
	char *who;                 /* the binding of its principal, NULL: anonymous */
	struct json_object *msg;   /* the original request (owned) */
	struct json_object *state; /* the handler's state (owned, may be NULL) */
	struct json_object *ids;   /* pushed request id -> inputRequests key (owned) */
	struct json_object *answers; /* key -> the client's result (owned) */
	struct json_object *auth;  /* with cluster: who it runs for (owned, may be NULL) */
	size_t outstanding;
	size_t answer_bytes;       /* of the answers so far (sessions.max_answer) */
	int64_t deadline_us;
	struct ph_buf out;         /* records of the pushed requests not yet written */
	size_t off;                /* how much of out was written */
};

/* A session issued on this host while sessions.on_end is configured: what
 * the hook is told when it expires. */
struct live {
	unsigned char sid[SID_BYTES];
	int64_t iat, exp;          /* seconds */
	char *principal;           /* NULL: anonymous */
	struct json_object *assigns; /* NULL: none */
};

static void live_drop(struct ph_hub_sessions *t, size_t i);
static void live_expire(struct ph_hub_sessions *t, int64_t now_s);

struct ph_hub_sessions {
	struct ph_server *srv; /* borrowed: the hub's */
	struct live *live;     /* sessions.on_end: the sessions to tell of at expiry */
	size_t nlive;
	struct ph_hub_states *states; /* the sessions' mutable state (ph_hub_state.c) */
	int ep;                /* the parked connections, watched for the client going */
	struct parked **park;
	size_t npark, capark;
	struct ended *tab;     /* open addressing, linear probing; cap a power of two */
	size_t n, cap;
	int64_t next_purge_us;
	ph_hub_sessions_defer_fn defer; /* cluster: (NULL: none) */
	void *defer_ctx;
};

struct ph_hub_sessions *
ph_hub_sessions_new(struct ph_server *srv)
{
	struct ph_hub_sessions *t = ph_xcalloc(1, sizeof *t);
	t->srv = srv;
	t->next_purge_us = ph_now_us() + PURGE_EVERY_US;
	t->ep = epoll_create1(EPOLL_CLOEXEC);
	t->states = ph_hub_states_new(srv);
	return t;
}

struct ph_hub_states *
ph_hub_sessions_states(struct ph_hub_sessions *t)
{
	return t->states;
}

int
ph_hub_sessions_fd(const struct ph_hub_sessions *t)
{
	return t->ep;
}

size_t
ph_hub_sessions_parked(const struct ph_hub_sessions *t)
{
	return t->npark;
}

/* Sends text to the worker waiting on fd. Returns false when it could not
 * (the worker gave up waiting: it shuts its end for reading first, so
 * what it did not get it is told it did not get). fd -1: the answer came
 * from another host (cluster:), whose client was told 202 already: a
 * refusal is logged, and the answer counts as told. */
static bool
reply(int fd, const char *text)
{
	if (fd < 0) {
		if (strncmp(text, "no ", 3) == 0)
			ph_log("warning", "hub: an answer another host took for a call parked here is refused: %s",
			       text + 3);
		return true;
	}
	if (send(fd, text, strlen(text), MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
		ph_log("warning", "hub: a worker did not wait for the session answer: %s", strerror(errno));
		return false;
	}
	return true;
}

/* ---- parked calls ---------------------------------------------------------- */


/* Removes p from the list and frees it; its connection is closed unless
 * keep_fd (it went to a worker). */
static void
unpark(struct ph_hub_sessions *t, struct parked *p, bool keep_fd, const char *why)
{
	for (size_t i = 0; i < t->npark; i++) {
		if (t->park[i] != p)
			continue;
		t->park[i] = t->park[--t->npark];
		break;
	}
	ph_log("info", "hub: parked call %s of session %.8s... %s (%zu parked now)", ph_jstr(p->msg, "method"),
	       p->sid, why, t->npark);
	epoll_ctl(t->ep, EPOLL_CTL_DEL, p->fd, NULL);
	if (!keep_fd)
		close(p->fd);
	ph_buf_free(&p->out);
	free(p->who);
	json_object_put(p->msg);
	json_object_put(p->state);
	json_object_put(p->ids);
	json_object_put(p->answers);
	json_object_put(p->auth);
	free(p);
}

/* Ends a parked call with message on its stream: a tool result with
 * isError for tools/call, a JSON-RPC error for the other methods; then the
 * end of stdout and FCGI_END_REQUEST. The write is best effort (a few
 * hundred bytes into a socket whose client reads). With telemetry, the
 * time it waited is a span ended with an error status saying why. */
static void
fail_parked(struct ph_hub_sessions *t, struct parked *p, const char *message)
{
	struct json_object *m = json_object_new_object();
	const char *method = ph_jstr(p->msg, "method"), *j;
	struct ph_buf b, ev;
	size_t len;
	json_object_object_add(m, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(m, "id", json_object_get(ph_jget(p->msg, "id")));
	if (method && ph_method_find(method) == PH_METHOD_TOOLS_CALL) {
		json_object_object_add(m, "result", ph_tool_error_result(message));
	} else {
		struct json_object *e = json_object_new_object();
		json_object_object_add(e, "code", json_object_new_int(-32603));
		json_object_object_add(e, "message", json_object_new_string(message));
		json_object_object_add(m, "error", e);
	}
	j = ph_json_text(m, &len);
	ph_buf_init(&ev);
	ph_sse_event(&ev, 0, j, len);
	ph_buf_init(&b);
	/* what is left of the pushed requests first: the stream stays whole */
	if (p->off < p->out.len)
		ph_buf_add(&b, p->out.data + p->off, p->out.len - p->off);
	ph_fcgi_records(&b, PH_FCGI_STDOUT, p->rid, ev.data, ev.len);
	ph_fcgi_end(&b, p->rid);
	if (write(p->fd, b.data, b.len) != (ssize_t)b.len)
		ph_log("warning", "hub: the end of a parked call could not be written whole");
	ph_buf_free(&b);
	ph_buf_free(&ev);
	json_object_put(m);
	if (ph_otel_on)
		ph_otel_park_failed(p->msg, message); /* the wait, ended with the call */
	unpark(t, p, false, message);
}

/* Writes what p->out still holds; once it is all out, the connection is
 * watched only for the client going. Returns false when the client went
 * away (p is then freed). */
static bool
flush_out(struct ph_hub_sessions *t, struct parked *p)
{
	struct epoll_event ev;
	int rc = ph_buf_write(p->fd, &p->out, &p->off);
	if (rc < 0) {
		unpark(t, p, false, "dropped: the client went away before the requests were written");
		return false;
	}
	memset(&ev, 0, sizeof ev);
	ev.events = EPOLLIN | EPOLLRDHUP | (rc == 0 ? EPOLLOUT : 0);
	ev.data.ptr = p;
	epoll_ctl(t->ep, EPOLL_CTL_MOD, p->fd, &ev);
	if (rc > 0) { /* all out: its memory back */
		ph_buf_free(&p->out);
		ph_buf_init(&p->out);
	}
	return true;
}

/* Takes the call handed over as c (borrowed) with its connection fd (taken). */
static void
park_call(struct ph_hub_sessions *t, const struct ph_hubmsg_call *c, int fd)
{
	struct json_object *push = c->push;
	struct epoll_event ev;
	struct parked *p;
	p = ph_xcalloc(1, sizeof *p);
	p->fd = fd;
	p->rid = c->rid;
	memcpy(p->sid, c->sid, sizeof p->sid);
	p->who = c->who ? ph_xstrdup(c->who) : NULL;
	p->msg = json_object_get(c->msg);
	p->state = json_object_get(c->state);
	p->ids = json_object_get(c->ids);
	p->answers = json_object_new_object();
	p->auth = json_object_get(c->auth);
	p->outstanding = (size_t)json_object_object_length(c->ids);
	p->deadline_us = ph_now_us() + t->srv->conf->sessions.park_timeout_ms * 1000;
	ph_buf_init(&p->out);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	if (t->npark == t->capark) {
		t->capark = t->capark ? 2 * t->capark : 64;
		t->park = ph_xrealloc(t->park, t->capark * sizeof *t->park);
	}
	t->park[t->npark++] = p;
	memset(&ev, 0, sizeof ev);
	ev.events = EPOLLIN | EPOLLRDHUP;
	ev.data.ptr = p;
	if (epoll_ctl(t->ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
		fail_parked(t, p, "Internal error: the hub cannot watch the parked call");
		return;
	}
	if ((long long)t->npark > t->srv->conf->sessions.max_parked) {
		char m[200];
		snprintf(m, sizeof m, "The server holds too many calls waiting for a client's answer "
			 "(sessions.max_parked is %lld); try again later", t->srv->conf->sessions.max_parked);
		fail_parked(t, p, m);
		return;
	}
	for (size_t i = 0; i < json_object_array_length(push); i++) {
		struct ph_buf e;
		size_t len;
		const char *j = ph_json_text(json_object_array_get_idx(push, i), &len);
		ph_buf_init(&e);
		ph_sse_event(&e, 0, j, len);
		ph_fcgi_records(&p->out, PH_FCGI_STDOUT, p->rid, e.data, e.len);
		ph_buf_free(&e);
	}
	ph_log("info", "hub: call %s of session %.8s... parked for %zu answers (%zu parked now)",
	       ph_jstr(c->msg, "method"), p->sid, p->outstanding, t->npark);
	flush_out(t, p);
}

/* The parked call that pushed the request id, or NULL. */
static struct parked *
find_pushed(struct ph_hub_sessions *t, const char *id)
{
	for (size_t i = 0; i < t->npark; i++)
		if (ph_jget(t->park[i]->ids, id) != NULL)
			return t->park[i];
	return NULL;
}

/* Sends "take {...}" with p's connection to the worker on fd, and forgets
 * p. Returns 1; 0 when the worker had given up waiting (it told its client
 * that the answer was not taken: p waits on); -1 when it could not be told
 * otherwise (p is then to fail). */
static int
hand_back(struct ph_hub_sessions *t, struct parked *p, int fd)
{
	struct ph_hubmsg_take take = {p->rid, p->msg, p->state, p->answers};
	struct ph_buf b;
	int rc, e;
	ph_buf_init(&b);
	ph_hubmsg_take(&b, &take);
	rc = ph_send_fd(fd, b.data, b.len, p->fd, 0);
	e = errno;
	ph_buf_free(&b);
	if (rc != 0 && (e == EPIPE || e == ECONNREFUSED || e == ENOTCONN)) {
		ph_log("warning", "hub: the worker with the last answer to call %s of session %.8s... gave "
		       "up waiting (sessions.answer_wait_ms); the call waits for the answer again",
		       ph_jstr(p->msg, "method"), p->sid);
		return 0;
	}
	if (rc != 0) {
		ph_log("warning", "hub: the worker did not take the parked call back: %s", strerror(e));
		return -1;
	}
	unpark(t, p, false, "handed back with its answers");
	return 1;
}

/* The last answer of p's round came through another host (cluster:): no
 * worker here waits to take the call, so a process of the hub's own
 * resumes it on its connection, as the worker would have, for the
 * principal the call was parked for (p->auth), and the hub forgets it.
 * Returns false when that cannot be (p then fails). */
static bool
resume_here(struct ph_hub_sessions *t, struct parked *p)
{
	sigset_t none;
	pid_t pid;
	if (p->auth == NULL) {
		ph_log("error", "hub: a call parked without cluster: got its answer through another host");
		return false;
	}
	if ((pid = fork()) < 0) {
		ph_log("error", "hub: the parked call cannot be resumed (fork: %s)", strerror(errno));
		return false;
	}
	if (pid == 0) {
		/* the child: the hub's signal handling is not its own */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_IGN);
		ph_close_fds_except(p->fd, ph_hub_fd); /* the streams' connections above all */
		prctl(PR_SET_NAME, "phantom-resume");
		fcntl(p->fd, F_SETFL, fcntl(p->fd, F_GETFL) & ~O_NONBLOCK);
		ph_park_resume_held(t->srv, p->fd, p->rid, p->msg, p->state, p->answers, p->auth);
		_exit(0);
	}
	unpark(t, p, false, "resumed here with an answer taken by another host");
	return true;
}

/* True when answer a (borrowed) takes p's answers over sessions.max_answer
 * (or its worker found it over on its own: too_large); why says so. Else
 * *len is what it adds to p->answer_bytes once taken. */
static bool
too_large(struct ph_hub_sessions *t, struct parked *p, const struct ph_hubmsg_answer *a, size_t *alen,
	  char *why, size_t n)
{
	long long max = t->srv->conf->sessions.max_answer;
	size_t len = 0;
	if (a->too_large)
		len = (size_t)a->size;
	else if (a->result != NULL)
		json_object_to_json_string_length(a->result, JSON_C_TO_STRING_PLAIN, &len);
	*alen = len;
	if (!a->too_large && (long long)(p->answer_bytes + len) <= max)
		return false;
	snprintf(why, n, "The client's answer to the request the server sent is too large (%zu bytes; "
		 "sessions.max_answer is %lld for the answers of one call); the call was abandoned",
		 p->answer_bytes + len, max);
	return true;
}

/* One answer a (borrowed) from a worker that waits on fd. */
static void
park_answer(struct ph_hub_sessions *t, const struct ph_hubmsg_answer *a, int fd)
{
	const char *id = a->id, *sid = a->sid, *who = a->who, *key;
	struct json_object *res = a->result, *err = a->error;
	struct parked *p = id ? find_pushed(t, id) : NULL;
	char out[300];
	size_t len;
	if (p == NULL) {
		reply(fd, "no unknown: no call of this host waits for an answer with this id (it was "
		      "answered already, or its call ended: an error answer, sessions.park_timeout_ms, "
		      "its client went away)");
		return;
	}
	if (sid == NULL || strcmp(sid, p->sid) != 0 ||
	    (who == NULL ? p->who != NULL : (p->who == NULL || strcmp(who, p->who) != 0))) {
		reply(fd, "no session: the request with this id was sent to another session");
		return;
	}
	key = json_object_get_string(ph_jget(p->ids, id));
	if (ph_jget(p->answers, key) != NULL) {
		reply(fd, "no twice: this request was already answered");
		return;
	}
	if (too_large(t, p, a, &len, out, sizeof out)) {
		char no[sizeof out + 16];
		snprintf(no, sizeof no, "no large: %s", out);
		reply(fd, no);
		fail_parked(t, p, out);
		return;
	}
	if (err != NULL || !json_object_is_type(res, json_type_object)) {
		const char *em = ph_jstr(err, "message");
		snprintf(out, sizeof out, "The client answered the request the server sent with an "
			 "error: %.200s", em ? em : "(no message)");
		if (reply(fd, "ok"))
			fail_parked(t, p, out);
		return;
	}
	/* an answer counts once its worker is told so: one that gave up
	 * waiting told its client the answer was not taken */
	if (p->outstanding > 1) {
		if (reply(fd, "ok")) {
			json_object_object_add(p->answers, key, json_object_get(res));
			p->answer_bytes += len;
			p->outstanding--;
		}
		return;
	}
	json_object_object_add(p->answers, key, json_object_get(res));
	if (fd < 0) {
		if (!resume_here(t, p))
			fail_parked(t, p, "Internal error: the call could not be resumed");
		return;
	}
	switch (hand_back(t, p, fd)) {
	case 0:
		json_object_object_del(p->answers, key);
		break;
	case -1:
		fail_parked(t, p, "Internal error: the call could not be resumed");
		break;
	default:
		break;
	}
}

void
ph_hub_sessions_remote_answer(struct ph_hub_sessions *t, const char *text, size_t len)
{
	struct ph_hubmsg m;
	if (ph_hubmsg_parse(text, len, ph_hubmsg_depth(t->srv->conf->limits.json_depth), &m) &&
	    m.type == PH_HUBMSG_PARK_ANSWER)
		park_answer(t, &m.u.answer, -1);
	else
		ph_log("warning", "hub: an answer from another host that is no answer was dropped");
	ph_hubmsg_free(&m);
}

void
ph_hub_sessions_stop(struct ph_hub_sessions *t)
{
	while (t->npark > 0)
		fail_parked(t, t->park[t->npark - 1], "The server is stopping; the call was abandoned (call "
			    "the tool again)");
}

void
ph_hub_sessions_events(struct ph_hub_sessions *t)
{
	struct epoll_event evs[64];
	int n = epoll_wait(t->ep, evs, 64, 0);
	for (int i = 0; i < n; i++) {
		struct parked *p = evs[i].data.ptr;
		unsigned char buf[512];
		ssize_t got;
		bool gone = false;
		if ((evs[i].events & EPOLLOUT) && !flush_out(t, p))
			continue;
		/* only FCGI_ABORT_REQUEST or a close can come on a parked connection */
		while ((got = read(p->fd, buf, sizeof buf)) > 0)
			if (ph_fcgi_aborted(buf, (size_t)got))
				gone = true;
		if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR))
			gone = true;
		if (gone || (evs[i].events & (EPOLLHUP | EPOLLERR | EPOLLRDHUP)))
			unpark(t, p, false, "dropped: the client went away");
	}
}

void
ph_hub_sessions_free(struct ph_hub_sessions *t)
{
	if (t == NULL)
		return;
	while (t->npark > 0)
		unpark(t, t->park[t->npark - 1], false, "dropped: the hub stopped");
	free(t->park);
	ph_hub_states_free(t->states);
	if (t->ep >= 0)
		close(t->ep);
	free(t->tab);
	while (t->nlive > 0)
		live_drop(t, t->nlive - 1);
	free(t->live);
	free(t);
}

void
ph_hub_sessions_reconf(struct ph_hub_sessions *t, struct ph_server *srv)
{
	t->srv = srv;
	ph_hub_states_reconf(t->states, srv);
}

size_t
ph_hub_sessions_ended(const struct ph_hub_sessions *t)
{
	return t->n;
}

/* The slot of sid in tab (cap entries): where it is, or the free slot
 * where it would go. The ids are random, so their first bytes hash well. */
static size_t
slot(const struct ended *tab, size_t cap, const unsigned char *sid)
{
	uint64_t hv;
	size_t i;
	memcpy(&hv, sid, sizeof hv);
	for (i = (size_t)hv & (cap - 1); tab[i].exp != 0; i = (i + 1) & (cap - 1))
		if (memcmp(tab[i].sid, sid, SID_BYTES) == 0)
			break;
	return i;
}

/* Rebuilds the table with room for at least want entries, dropping the
 * ids that have expired by now_s. */
static void
rebuild(struct ph_hub_sessions *t, size_t want, int64_t now_s)
{
	size_t cap = 64;
	struct ended *tab;
	while (cap < 2 * want)
		cap *= 2;
	tab = ph_xcalloc(cap, sizeof *tab);
	t->n = 0;
	for (size_t i = 0; i < t->cap; i++) {
		if (t->tab[i].exp == 0 || t->tab[i].exp < now_s)
			continue;
		tab[slot(tab, cap, t->tab[i].sid)] = t->tab[i];
		t->n++;
	}
	free(t->tab);
	t->tab = tab;
	t->cap = cap;
}

static bool
is_ended(const struct ph_hub_sessions *t, const unsigned char *sid, int64_t now_s)
{
	size_t i;
	if (t->cap == 0)
		return false;
	i = slot(t->tab, t->cap, sid);
	return t->tab[i].exp != 0 && t->tab[i].exp >= now_s;
}

/* Remembers sid until exp. Returns NULL, or why it cannot. */
static const char *
remember(struct ph_hub_sessions *t, const unsigned char *sid, int64_t exp, int64_t now_s)
{
	long long max = t->srv->conf->sessions.max_terminated;
	size_t i;
	if (exp < now_s)
		return NULL; /* expired anyway: nothing to remember */
	if (is_ended(t, sid, now_s))
		return NULL;
	if ((long long)t->n >= max)
		rebuild(t, t->n, now_s); /* make room from the expired ones */
	if ((long long)t->n >= max)
		return "too many ended sessions are remembered (sessions.max_terminated)";
	if (2 * (t->n + 1) > t->cap)
		rebuild(t, t->n + 1, now_s);
	i = slot(t->tab, t->cap, sid);
	memcpy(t->tab[i].sid, sid, SID_BYTES);
	t->tab[i].exp = exp;
	t->n++;
	return NULL;
}

void
ph_hub_sessions_tick(struct ph_hub_sessions *t)
{
	int64_t now = ph_now_us();
	ph_hub_states_tick(t->states);
	if (t->nlive > 0)
		live_expire(t, (int64_t)time(NULL));
	for (size_t i = t->npark; i-- > 0;) {
		struct parked *p = t->park[i];
		char m[200];
		if (now < p->deadline_us)
			continue;
		snprintf(m, sizeof m, "The client did not answer the request the server sent within "
			 "sessions.park_timeout_ms (%lld ms); the call was abandoned",
			 t->srv->conf->sessions.park_timeout_ms);
		fail_parked(t, p, m);
	}
	if (now < t->next_purge_us)
		return;
	t->next_purge_us = now + PURGE_EVERY_US;
	if (t->n > 0)
		rebuild(t, t->n, (int64_t)time(NULL));
}


/* ---- sessions.on_end ---------------------------------------------------------------- */

/* Calls sessions.on_end for a session that ended (how: "deleted" or
 * "expired") after age seconds, in a process of its own so that the hub's
 * loop never waits for it (the hub reaps it with its other children). */
static void
call_end_hook(struct ph_hub_sessions *t, const char *principal, struct json_object *assigns, int64_t age,
	      const char *how)
{
	const struct ph_catalog *c = t->srv->conf->registry ? t->srv->conf->registry->session_end : NULL;
	struct json_object *args, *res;
	sigset_t none;
	pid_t pid;
	if (c == NULL)
		return;
	if ((pid = fork()) < 0) {
		ph_log("error", "hub: sessions.on_end not called (fork: %s)", strerror(errno));
		return;
	}
	if (pid > 0)
		return;
	/* the child: the hub's signal handling is not its own */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	args = json_object_new_object();
	json_object_object_add(args, "reason", json_object_new_string(how));
	json_object_object_add(args, "age_s", json_object_new_int64(age < 0 ? 0 : age));
	res = ph_catalog_hook(t->srv, &c->h, PHANTOM_KIND_SESSION_END, "sessions.on_end", principal, assigns,
			      args);
	if (res == NULL)
		ph_log("warning", "hub: sessions.on_end failed for a session of %s (%s); see above",
		       principal ? principal : "(anonymous)", how);
	json_object_put(res);
	json_object_put(args);
	_exit(0);
}

static void
live_drop(struct ph_hub_sessions *t, size_t i)
{
	free(t->live[i].principal);
	json_object_put(t->live[i].assigns);
	t->live[i] = t->live[--t->nlive];
}

/* The index of sid in the live table, or -1. */
static long
live_find(const struct ph_hub_sessions *t, const unsigned char *sid)
{
	for (size_t i = 0; i < t->nlive; i++)
		if (memcmp(t->live[i].sid, sid, SID_BYTES) == 0)
			return (long)i;
	return -1;
}

/* "issued" (m): a session to tell sessions.on_end of when it expires, at
 * most sessions.max_terminated of them. */
static void
live_add(struct ph_hub_sessions *t, const struct ph_hubmsg_session *m, char *out, size_t n)
{
	struct live *l;
	if (t->srv->conf->registry == NULL || t->srv->conf->registry->session_end == NULL) {
		snprintf(out, n, "ok");
		return;
	}
	if ((long long)t->nlive >= t->srv->conf->sessions.max_terminated) {
		ph_log("warning", "hub: %zu sessions are followed for sessions.on_end "
		       "(sessions.max_terminated); this one will not be told of at its expiry", t->nlive);
		snprintf(out, n, "ok");
		return;
	}
	t->live = ph_xrealloc(t->live, (t->nlive + 1) * sizeof *t->live);
	l = &t->live[t->nlive++];
	memcpy(l->sid, m->sid, SID_BYTES);
	l->iat = m->iat;
	l->exp = m->exp;
	l->principal = m->principal ? ph_xstrdup(m->principal) : NULL;
	l->assigns = json_object_get(m->assigns);
	snprintf(out, n, "ok");
}

/* The session sid was ended with DELETE (m: the worker's message, with the
 * session's principal, issue time and the request's assigns): the hook. */
static void
ended_now(struct ph_hub_sessions *t, const struct ph_hubmsg_session *m, int64_t now_s)
{
	long i = live_find(t, m->sid);
	call_end_hook(t, m->principal, m->assigns, now_s - m->iat, "deleted");
	if (i >= 0)
		live_drop(t, (size_t)i);
}

/* The sessions that expired: the hook, each once. */
static void
live_expire(struct ph_hub_sessions *t, int64_t now_s)
{
	for (size_t i = t->nlive; i-- > 0;) {
		if (t->live[i].exp > now_s)
			continue;
		call_end_hook(t, t->live[i].principal, t->live[i].assigns, t->live[i].exp - t->live[i].iat,
			      "expired");
		live_drop(t, i);
	}
}

/* A session message m (borrowed) from a worker waiting on fd: the answer
 * for it in out. */
static void
session_message(struct ph_hub_sessions *t, const struct ph_hubmsg *msg, char *out, size_t n)
{
	const struct ph_hubmsg_session *m = &msg->u.session;
	int64_t now_s = (int64_t)time(NULL);
	if (msg->type == PH_HUBMSG_SESSION_CHECK) {
		if (is_ended(t, m->sid, now_s))
			snprintf(out, n, "ended");
		else
			ph_hub_states_check(t->states, m->sid, out, n);
	} else if (msg->type == PH_HUBMSG_SESSION_END && m->has_exp) {
		bool again = is_ended(t, m->sid, now_s);
		const char *why = remember(t, m->sid, m->exp, now_s);
		if (why != NULL)
			ph_log("warning", "hub: a session cannot be ended: %s", why);
		else
			ph_hub_states_end(t->states, m->sid);
		if (why == NULL && !again)
			ended_now(t, m, now_s);
		snprintf(out, n, "%s%s", why ? "no " : "ok", why ? why : "");
	} else if (is_ended(t, m->sid, now_s)) {
		snprintf(out, n, "no the session was ended");
	} else if (msg->type == PH_HUBMSG_SESSION_ISSUED) {
		live_add(t, m, out, n);
	} else if (!ph_hub_states_message(t->states, msg, out, n)) {
		snprintf(out, n, "no unknown session message");
	}
}

void
ph_hub_sessions_message(struct ph_hub_sessions *t, const struct ph_hubmsg *m, int fd)
{
	char out[300];
	switch (m->type) {
	case PH_HUBMSG_PARK_CALL:
		if (fd >= 0)
			park_call(t, &m->u.call, fd);
		return;
	case PH_HUBMSG_PARK_ANSWER:
		park_answer(t, &m->u.answer, fd);
		break;
	default:
		session_message(t, m, out, sizeof out);
		if (fd >= 0 && t->defer != NULL && t->defer(t->defer_ctx, m, out, fd))
			return; /* the cluster answers and closes fd */
		reply(fd, out);
		break;
	}
	if (fd >= 0)
		close(fd);
}

void
ph_hub_sessions_defer(struct ph_hub_sessions *t, ph_hub_sessions_defer_fn fn, void *ctx)
{
	t->defer = fn;
	t->defer_ctx = ctx;
}

void
ph_hub_sessions_ended_elsewhere(struct ph_hub_sessions *t, const unsigned char *sid, int64_t exp)
{
	int64_t now_s = (int64_t)time(NULL);
	const char *why;
	if (is_ended(t, sid, now_s))
		return;
	if ((why = remember(t, sid, exp, now_s)) != NULL)
		ph_log("warning", "hub: a session ended on another host is not remembered here: %s", why);
	ph_hub_states_end(t->states, sid);
}

void
ph_hub_sessions_answer(int fd, const char *out)
{
	reply(fd, out);
	close(fd);
}
