/* ph_fcgi.c: the FastCGI front (libfcgi; the CGI front is ph_cgi.c).
 *
 * Signals: stop and reload signals stay blocked while a request runs and are
 * taken only inside ppoll() before accept, because libfcgi does not retry a
 * read interrupted by a signal and would hand us a silently truncated body.
 * The listening socket is non-blocking, so a worker that loses the race for
 * a connection returns to ppoll() instead of sleeping in accept().
 *
 * Deadlines: libfcgi reads a request with blocking reads and loops inside a
 * record (padding, skipped records) as long as bytes come, so a slow client
 * would hold the worker. Reads run under a deadline instead (see
 * deadline_arm): the parameters within http.params_timeout_ms, the body
 * within http.body_timeout_ms. A request that already waits whole on the
 * connection (ph_fcgi_waiting: the usual case behind a web server, which
 * sends it in one write) cannot make a read block, and is read without
 * them; a simple one of those on a fresh connection is not even given to
 * libfcgi (ph_fcgi_split.c). The drain of a closing connection is bounded
 * by poll (ph_fcgi_close_drain); one that sent nothing past its request needs
 * none (ph_fcgi_close_answered). Both, the peers allowed and the handoff to
 * the hub, are in ph_fcgi_conn.c. */
#include "first.h"
#include "ph_features.h"
#include "ph_front.h"
#include "ph_log.h"
#include "ph_metrics.h"
#include "ph_persist.h"
#include "ph_fcgi_conn.h"
#include "ph_fcgi_split.h"
#include "ph_fcgi_wire.h"
#include "ph_shared.h"
#include "ph_util.h"
#include <errno.h>
#include <fcgiapp.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>


static void
on_stop(int sig)
{
	(void)sig;
	ph_stop_requested = 1;
}

static void
on_reload(int sig)
{
	(void)sig;
	ph_reload_requested = 1;
}

/* ---- read deadlines ------------------------------------------------------ */

/* The connection a deadline guards (-1: none armed), and whether it passed;
 * deadline_keep asks for a copy of the connection at the deadline (the
 * parameters' one: libfcgi closes the connection when it gives up, and the
 * 408 is written on the copy), deadline_kept holds it (-1: none). */
static volatile sig_atomic_t deadline_fd = -1;
static volatile sig_atomic_t deadline_hit;
static volatile sig_atomic_t deadline_keep;
static volatile sig_atomic_t deadline_kept = -1;

/* SIGALRM at a deadline: the reading side of the connection is shut, so the
 * read libfcgi is blocked in, and every later one, returns 0 at once,
 * wherever it is in a record; the answer (408) can still be written. No
 * race with arming: a read that starts after the shutdown returns too.
 * The copy is taken here, not for every request: fcntl and shutdown are
 * async-signal-safe. */
static void
on_deadline(int sig)
{
	int fd = deadline_fd;
	(void)sig;
	if (fd >= 0) {
		if (deadline_keep && deadline_kept < 0)
			deadline_kept = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		shutdown(fd, SHUT_RD);
		deadline_hit = 1;
	}
}

/* Guards reads on fd until until_us (ph_now_us time); at once when past.
 * keep: take a copy of fd at the deadline (deadline_kept). */
static void
deadline_arm_keep(int fd, int64_t until_us, bool keep)
{
	struct itimerval it;
	int64_t left = until_us - ph_now_us();
	if (left < 1)
		left = 1;
	memset(&it, 0, sizeof it);
	it.it_value.tv_sec = (time_t)(left / 1000000);
	it.it_value.tv_usec = (suseconds_t)(left % 1000000);
	deadline_hit = 0;
	deadline_keep = keep;
	deadline_fd = fd;
	setitimer(ITIMER_REAL, &it, NULL);
}

static void
deadline_arm(int fd, int64_t until_us)
{
	deadline_arm_keep(fd, until_us, false);
}

/* Stops the timer. Returns true when the deadline had passed. */
static bool
deadline_disarm(void)
{
	struct itimerval it;
	memset(&it, 0, sizeof it);
	setitimer(ITIMER_REAL, &it, NULL);
	deadline_fd = -1;
	deadline_keep = 0;
	return deadline_hit != 0;
}

/* The deadlines when no configuration loaded (the key table's defaults). */
#define DEFAULT_PARAMS_MS 10000
#define DEFAULT_BODY_MS 30000

static sigset_t worker_blocked;

/* Persistent handler exits waited on beside the listening socket; more are
 * looked at once a second. */
#define PH_FCGI_PERSIST_FDS 32

void
ph_signals_worker_init(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sa.sa_handler = on_stop;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_reload;
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = on_deadline;
	sigaction(SIGALRM, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sa.sa_handler = SIG_DFL;
	sigaction(SIGCHLD, &sa, NULL);
	sigemptyset(&worker_blocked);
	sigaddset(&worker_blocked, SIGTERM);
	sigaddset(&worker_blocked, SIGINT);
	sigaddset(&worker_blocked, SIGUSR1);
	sigaddset(&worker_blocked, SIGHUP);
	sigprocmask(SIG_SETMASK, &worker_blocked, NULL);
}

/* ---- FastCGI exchange ---------------------------------------------------- */

struct fcgi_front {
	FCGX_Request *req;
	bool handed_off;      /* the hub carries the request on */
	bool ended;           /* ended early (fcgi_finish): nothing more is written */
	bool whole;           /* the whole request waited: reads need no deadline */
	bool tcp;             /* a TCP connection */
	bool body_armed;      /* the body's deadline guards the reads */
	int64_t body_until_us; /* the body's deadline */
};

/* A parameter of a request by name in envp ("NAME=VALUE" strings, as
 * libfcgi gives them): FCGX_GetParam's lookup. */
static const char *
envp_param(char **envp, const char *name)
{
	size_t n;
	if (name == NULL || envp == NULL)
		return NULL;
	n = strlen(name);
	for (char **p = envp; *p; p++)
		if (strncmp(*p, name, n) == 0 && (*p)[n] == '=')
			return *p + n + 1;
	return NULL;
}

static const char *
fcgi_param(struct ph_exchange *ex, const char *name)
{
	struct fcgi_front *f = ex->front;
	return envp_param(f->req->envp, name);
}

static long
fcgi_read(struct ph_exchange *ex, char *buf, size_t len)
{
	struct fcgi_front *f = ex->front;
	int n;
	/* one deadline for the whole body: armed at the first read, stopped
	 * at its end (0), an error or the deadline; the core reads until one
	 * of those or answers at once (413), and serve_one stops it then */
	if (!f->whole && !f->body_armed) {
		deadline_arm(f->req->ipcFd, f->body_until_us);
		f->body_armed = true;
	}
	n = FCGX_GetStr(buf, (int)len, f->req->in);
	if (f->body_armed && deadline_hit) {
		deadline_disarm();
		f->body_armed = false;
		return PH_READ_TIMEOUT;
	}
	if (n <= 0 && f->body_armed) {
		deadline_disarm();
		f->body_armed = false;
	}
	if (n < 0 || (n == 0 && FCGX_GetError(f->req->in) != 0))
		return -1;
	return n;
}

static int
fcgi_respond(struct ph_exchange *ex, int status, const char *ctype, const struct ph_header *hdrs,
	     const char *body, size_t len)
{
	struct fcgi_front *f = ex->front;
	struct ph_buf b;
	int rc = 0;
	if (f->ended)
		return -1;
	ph_buf_init(&b);
	ph_cgi_response_head(&b, status, ctype, hdrs, len);
	if (FCGX_PutStr(b.data, (int)b.len, f->req->out) < 0 ||
	    (len && body && FCGX_PutStr(body, (int)len, f->req->out) < 0))
		rc = -1;
	ph_buf_free(&b);
	return rc;
}

static int
fcgi_stream_start(struct ph_exchange *ex, const struct ph_header *hdrs)
{
	struct fcgi_front *f = ex->front;
	struct ph_buf b;
	int rc = 0;
	ph_buf_init(&b);
	ph_cgi_head(&b, 200, "text/event-stream", hdrs);
	ph_buf_adds(&b, "\r\n");
	if (FCGX_PutStr(b.data, (int)b.len, f->req->out) < 0 || FCGX_FFlush(f->req->out) < 0)
		rc = -1;
	ph_buf_free(&b);
	return rc;
}

static int
fcgi_stream_send(struct ph_exchange *ex, const char *json, size_t len)
{
	struct fcgi_front *f = ex->front;
	struct ph_buf b;
	int rc = 0;
	ph_buf_init(&b);
	ph_sse_event(&b, 0, json, len);
	if (FCGX_PutStr(b.data, (int)b.len, f->req->out) < 0 || FCGX_FFlush(f->req->out) < 0 ||
	    FCGX_GetError(f->req->out) != 0)
		rc = -1;
	ph_buf_free(&b);
	return rc;
}

static int
fcgi_stream_ping(struct ph_exchange *ex)
{
	struct fcgi_front *f = ex->front;
	if (FCGX_PutStr(": keepalive\n\n", 13, f->req->out) < 0 || FCGX_FFlush(f->req->out) < 0 ||
	    FCGX_GetError(f->req->out) != 0)
		return -1;
	return 0;
}

/* The web server sends nothing after the request body except to close the
 * connection (nginx, lighttpd and Apache close the FastCGI connection when
 * their client goes away), so a readable or hung-up socket means gone. */
static bool
fcgi_closed(struct ph_exchange *ex)
{
	struct fcgi_front *f = ex->front;
	struct pollfd p = {f->req->ipcFd, POLLIN | POLLRDHUP, 0};
	if (f->req->ipcFd < 0)
		return true;
	return poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

static int
fcgi_handoff(struct ph_exchange *ex, const char *desc, size_t len)
{
	struct fcgi_front *f = ex->front;
	if (ph_hub_fd < 0 || f->req->ipcFd < 0 || FCGX_FFlush(f->req->out) < 0 ||
	    FCGX_GetError(f->req->out) != 0 ||
	    ph_fcgi_hand_to_hub(f->req->ipcFd, (unsigned)f->req->requestId, desc, len) != 0)
		return -1;
	f->handed_off = true;
	return 0;
}

static void fcgi_finish(struct ph_exchange *ex);

static const struct ph_front_ops fcgi_ops = {
	.param = fcgi_param,
	.read = fcgi_read,
	.respond = fcgi_respond,
	.stream_start = fcgi_stream_start,
	.stream_send = fcgi_stream_send,
	.stream_ping = fcgi_stream_ping,
	.closed = fcgi_closed,
	.handoff = fcgi_handoff,
	.finish = fcgi_finish,
};

/* The request log as the configuration says (a worker under a master
 * takes a new configuration as a new process). */
static void
log_buffer(const struct ph_server *srv)
{
	if (srv)
		ph_log_buffer((size_t)srv->conf->log.buffer, srv->conf->log.flush_ms);
}

static void
reload_in_place(struct ph_server **srv, const char *path)
{
	struct ph_server *n = ph_server_load(path);
	if (n == NULL) {
		ph_log("error", "reload failed: keeping the running configuration");
		return;
	}
	ph_catalog_announce(*srv, n); /* this process's own listen streams */
	ph_server_free(*srv);
	*srv = n;
	n->resume = &ph_fcgi_resume_ops;
	ph_metrics_set_generation(ph_metrics_generation() + 1);
	ph_metrics_reloaded();
	ph_log("notice", "configuration reloaded");
	ph_persist_prestart(*srv);
	log_buffer(*srv);
}

/* Asked to stop: a single process (own_reload) with http.drain_ms goes on
 * serving until *end (set at the first call), health answering 503.
 * Returns true while it still serves. */
static bool
draining(struct ph_server **srv, bool own_reload, int64_t *end)
{
	if (*end == 0) {
		long long ms = *srv ? (*srv)->conf->http.drain_ms : 0;
		if (!own_reload)
			return false; /* a worker: the master drains and says it stops */
		ph_metrics_set_stopping(true);
		if (ms <= 0)
			return false;
		ph_log("notice", "stopping: serving %lld ms more with health 503", ms);
		*end = ph_now_us() + ms * 1000;
		return true;
	}
	return ph_now_us() < *end;
}

/* The worker's own epoll instance holding the listening socket with
 * EPOLLEXCLUSIVE, for the wait with nothing else to watch: a connection
 * then wakes one idle worker. Waiting on the socket itself (ppoll) wakes
 * every worker waiting, and all but one find nothing to accept. Made at
 * the worker's first such wait, after the fork (each worker has its own);
 * -1 when epoll refuses it (ppoll is used). */
static int
listen_epoll(int listen_fd)
{
	static int ep = -1, ep_fd = -1;
	struct epoll_event ev = {.events = EPOLLIN | EPOLLEXCLUSIVE, .data = {.fd = listen_fd}};
	if (ep_fd == listen_fd)
		return ep;
	if (ep >= 0)
		close(ep);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, listen_fd, &ev) != 0) {
		close(ep);
		ep = -1;
	}
	ep_fd = listen_fd;
	return ep;
}

/* Waits on pf (n entries) as ppoll does, the listening socket pf[0]
 * through listen_epoll when epoll and it is the only one: returns what
 * ppoll would, pf[0].revents set. */
static int
wait_fds(struct pollfd *pf, nfds_t n, int ms, const struct timespec *tsp, const sigset_t *open_mask,
	 bool epoll)
{
	struct epoll_event ev;
	int ep = epoll && n == 1 ? listen_epoll(pf[0].fd) : -1, rc;
	if (ep < 0)
		return ppoll(pf, n, tsp, open_mask);
	rc = epoll_pwait(ep, &ev, 1, ms, open_mask);
	pf[0].revents = 0;
	if (rc > 0)
		pf[0].revents = (short)((ev.events & EPOLLIN ? POLLIN : 0) | (ev.events & EPOLLERR ? POLLERR : 0) |
					(ev.events & EPOLLHUP ? POLLHUP : 0));
	return rc;
}

/* Waits for a connection on the listening socket, running persistent
 * handlers' turns (their exits and idle ends) meanwhile; the only place stop
 * and reload signals are delivered (open_mask). drain_end > 0: stopping is
 * delayed until then; idle: no connection was waiting (else poll looks
 * without waiting first). Before it waits, the request log lines held are
 * written. A TCP socket is waited on through listen_epoll (see
 * ph_fcgi_close_answered for why only TCP). kept: listen_fd is a connection
 * kept for its next request instead, whose failure is its own, not the
 * listener's. Returns 1 when a connection is waiting, 0 to look again (a
 * signal, a handler's turn, stopping), -1 when the socket failed. */
static int
wait_listener(int listen_fd, const sigset_t *open_mask, int64_t drain_end, bool idle, bool tcp, bool kept)
{
	struct pollfd pf[1 + PH_FCGI_PERSIST_FDS];
	struct timespec ts, *tsp = NULL;
	int rc, ms = -1;
	nfds_t n;
	ph_persist_tick();
	pf[0] = (struct pollfd){listen_fd, POLLIN, 0};
	n = 1 + (nfds_t)ph_persist_pollfds(pf + 1, PH_FCGI_PERSIST_FDS, &ms);
	if (drain_end > 0) {
		int64_t left = (drain_end - ph_now_us()) / 1000;
		if (left < 0)
			left = 0;
		if (ms < 0 || left < ms)
			ms = (int)left;
	}
	if (ms >= 0) {
		ts = (struct timespec){ms / 1000, (long)(ms % 1000) * 1000000L};
		tsp = &ts;
	}
	rc = 0;
	if (!idle) {
		/* the round after ACCEPT_BURST connections: one may wait */
		struct timespec zero = {0, 0};
		rc = wait_fds(pf, n, 0, &zero, open_mask, tcp);
	}
	if (rc == 0) {
		ph_log_flush(); /* no connection waits: the request lines held go out */
		rc = wait_fds(pf, n, ms, tsp, open_mask, tcp);
	}
	if (rc < 0) {
		if (errno == EINTR)
			return 0;
		ph_log("error", "poll on the listening socket: %s", strerror(errno));
		return -1;
	}
	if (rc == 0 || pf[0].revents == 0 || (ph_stop_requested && drain_end == 0))
		return 0; /* a handler's turn (ph_persist_tick), or stopping */
	if (pf[0].revents & (POLLERR | POLLNVAL)) {
		if (kept)
			return 1; /* the kept connection broke: serving it finds it gone */
		ph_log("error", "the listening socket failed");
		return -1;
	}
	return 1;
}

/* Ends the request as FCGX_Finish_r does (the rest of the output and the
 * end records), then closes the connection unless the web server keeps it
 * (FCGI_KEEP_CONN): a request that waited whole on TCP as the split's are
 * (ph_fcgi_close_answered), any other with ph_fcgi_close_drain. libfcgi
 * itself closes only when writing failed, and then without its drain
 * (detached). */
static void
finish(FCGX_Request *req, bool answered_whole)
{
	int fd = req->ipcFd, keep = req->keepConnection;
	if (fd < 0) {
		FCGX_Finish_r(req);
		return;
	}
	req->keepConnection = 1;
	req->detached = 1;
	FCGX_Finish_r(req);
	req->detached = 0;
	req->keepConnection = keep;
	if (req->ipcFd >= 0 && !keep) {
		if (answered_whole)
			ph_fcgi_close_answered(fd);
		else
			ph_fcgi_close_drain(fd);
		req->ipcFd = -1;
	}
}

/* The end of the request now (ph_front_ops.finish): what was written and
 * the end records go out as FCGX_Finish_r writes them, and the connection
 * is closed as finish() closes it, but the parameters stay for the
 * request's log line; serve_one's finish() then only frees the request. */
static void
fcgi_finish(struct ph_exchange *ex)
{
	struct fcgi_front *f = ex->front;
	FCGX_Request *req = f->req;
	int fd = req->ipcFd;
	bool sent;
	if (f->ended || f->handed_off || fd < 0)
		return;
	f->ended = true;
	if (f->body_armed) {
		deadline_disarm();
		f->body_armed = false;
	}
	sent = FCGX_FClose(req->err) == 0 && FCGX_FClose(req->out) == 0;
	if (sent && req->keepConnection)
		return; /* the web server sends the next request on it */
	req->ipcFd = -1;
	if (!sent)
		close(fd);
	else if (f->whole && f->tcp)
		ph_fcgi_close_answered(fd);
	else
		ph_fcgi_close_drain(fd);
}

/* Serves the accepted request req, then ends it (finish), or, when the hub
 * has taken the connection, only our copy of it closed (no
 * FCGI_END_REQUEST, no shutdown()). whole: the request waited whole (no
 * deadline for the body). tcp: a TCP connection. srv NULL: the
 * configuration did not load, and the request is told so. */
static void
serve_one(struct ph_server *srv, FCGX_Request *req, bool whole, bool tcp)
{
	long long body_ms = srv ? srv->conf->http.body_timeout_ms : DEFAULT_BODY_MS;
	struct fcgi_front f = {.req = req, .whole = whole, .tcp = tcp,
			       .body_until_us = ph_now_us() + body_ms * 1000};
	ph_fcgi_serve_exchange(srv, &fcgi_ops, &f);
	if (f.body_armed)
		deadline_disarm(); /* answered before the body's end (413, ...) */
	if (f.handed_off) {
		FCGX_Detach(req);
		FCGX_Free(req, 1);
	}
	finish(req, whole && tcp);
}

/* Takes a connection off the listening socket for libfcgi, which would
 * otherwise accept and then read the parameters with no bound on the time.
 * Returns 1 with req->ipcFd set (or kept from the last request,
 * FCGI_KEEP_CONN), 0 when none was waiting, -1 when accept failed. */
static int
take_connection(FCGX_Request *req, int listen_fd)
{
	int fd;
	if (req->ipcFd >= 0)
		return 1;
	fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED ||
		    errno == EPROTO || errno == ENETDOWN || errno == ENETUNREACH || errno == EHOSTUNREACH)
			return 0;
		ph_log("error", "FastCGI accept failed: %s", strerror(errno));
		return -1;
	}
	if (!ph_fcgi_peer_allowed(fd)) {
		ph_log("warning", "a FastCGI connection from outside FCGI_WEB_SERVER_ADDRS; closed");
		close(fd);
		return 0;
	}
	req->ipcFd = fd;
	req->keepConnection = 1; /* FCGX_Accept_r's first FCGX_Finish_r keeps fd */
	return 1;
}

/* ---- the answer to a request whose parameters came too late ----------------
 * libfcgi has let the request go by then, so the records are written here. */

struct late {
	int fd, rid;
};

static const char *
late_param(struct ph_exchange *ex, const char *name)
{
	(void)ex;
	(void)name;
	return NULL;
}

/* Writes the response as FCGI_STDOUT, its end and FCGI_END_REQUEST, never
 * blocking (the socket's buffer takes it: it is small). */
static int
late_respond(struct ph_exchange *ex, int status, const char *ctype, const struct ph_header *hdrs,
	     const char *body, size_t len)
{
	struct late *l = ex->front;
	struct ph_buf out, rec;
	ssize_t n;
	ph_buf_init(&out);
	ph_buf_init(&rec);
	ph_cgi_response_head(&out, status, ctype, hdrs, len);
	ph_buf_add(&out, body, len);
	if (out.len <= PH_FCGI_RECORD_MAX)
		ph_fcgi_records(&rec, PH_FCGI_STDOUT, (unsigned)l->rid, out.data, out.len);
	ph_fcgi_end(&rec, (unsigned)l->rid);
	n = send(l->fd, rec.data, rec.len, MSG_DONTWAIT | MSG_NOSIGNAL);
	ph_buf_free(&out);
	ph_buf_free(&rec);
	return n == (ssize_t)rec.len ? 0 : -1;
}

static const struct ph_front_ops late_ops = {.param = late_param, .respond = late_respond};

static void
log_params_late(long long params_ms)
{
	ph_log("warning", "a FastCGI request's parameters took over %lld ms (http.params_timeout_ms); "
			  "connection closed", params_ms);
}

/* Reads the next request's parameters (FCGX_Accept_r) from the connection
 * take_connection gave, within params_ms unless it waited whole
 * (ph_fcgi_waiting). Returns true when a request is ready; false when it
 * failed or was too slow: the connection is then closed, after a 408 when
 * the request had begun. */
static bool
read_params(FCGX_Request *req, long long params_ms, bool whole)
{
	int keep, rc;
	bool late = false;
	req->listen_sock = -1; /* after a failure libfcgi returns instead of accepting */
	req->requestId = 0;
	req->detached = 1; /* its close leaves the socket to our copy (no shutdown) */
	if (!whole)
		deadline_arm_keep(req->ipcFd, ph_now_us() + params_ms * 1000, true);
	rc = FCGX_Accept_r(req);
	if (!whole)
		late = deadline_disarm();
	keep = deadline_kept; /* the copy the deadline took, if it passed */
	deadline_kept = -1;
	req->detached = 0;
	if (rc != 0 && late) {
		log_params_late(params_ms);
		if (req->requestId != 0 && keep >= 0) {
			struct late l = {keep, req->requestId};
			struct ph_exchange ex;
			memset(&ex, 0, sizeof ex);
			ex.ops = &late_ops;
			ex.front = &l;
			ex.http = true;
			ph_serve_refused(&ex, PH_E_TIMEOUT);
		}
	}
	if (keep >= 0)
		close(keep);
	return rc == 0;
}

/* Connections taken one after the other without poll (see next_connection). */
#define ACCEPT_BURST 32

/* The request ph_fcgi_waiting split, its memory kept for the next one. */
static struct ph_fcgi_split split_req;

/* Makes this process a FastCGI worker on r->listen_fd: the reader chosen,
 * signals, libfcgi and req set up, the socket made non-blocking; *tcp says
 * whether it is a TCP socket. Returns false (logged) when it cannot serve. */
static bool
worker_setup(const struct ph_run *r, FCGX_Request *req, bool *tcp)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	int fl;
	char err[128];
	if (!ph_fcgi_reader(false, err, sizeof err)) {
		ph_log("error", "%s", err);
		return false;
	}
	ph_signals_worker_init();
	/* what a handler leaves behind (even after setsid) becomes ours to kill */
	ph_exec_subreaper();
	if (FCGX_Init() != 0) {
		ph_log("error", "FCGX_Init failed");
		return false;
	}
	/* TCP_NODELAY is for TCP connections only (a unix socket refuses it) */
	*tcp = true;
	if (getsockname(r->listen_fd, (struct sockaddr *)&ss, &sl) == 0)
		*tcp = ss.ss_family == AF_INET || ss.ss_family == AF_INET6;
	fl = fcntl(r->listen_fd, F_GETFL);
	if (fl >= 0)
		fcntl(r->listen_fd, F_SETFL, fl | O_NONBLOCK);
	if (FCGX_InitRequest(req, r->listen_fd, 0) != 0) {
		ph_log("error", "FCGX_InitRequest failed");
		return false;
	}
	return true;
}

/* Makes req->ipcFd a connection to read a request from: the one kept from
 * the last request (FCGI_KEEP_CONN), or one taken off listen_fd. Under load
 * a connection is already waiting and is taken without asking poll first;
 * poll (wait_listener), the only place stop and reload signals come in,
 * runs when none waits and at least every ACCEPT_BURST connections (*burst
 * counts those taken without it). A kept connection is waited on itself,
 * signals let in as on the listener. Returns 1 with a connection, 0 to look
 * again (a signal, a handler's turn, stopping, none to take), -1 when the
 * socket failed. */
static int
next_connection(FCGX_Request *req, int listen_fd, const sigset_t *open_mask, int64_t drain_end, bool tcp,
		unsigned *burst)
{
	int rc = 0;
	bool idle;
	if (req->ipcFd < 0 && drain_end == 0 && *burst < ACCEPT_BURST && !ph_shared_cell_retired())
		rc = take_connection(req, listen_fd);
	if (rc != 0) {
		if (rc > 0)
			(*burst)++;
		return rc;
	}
	idle = *burst < ACCEPT_BURST;
	*burst = 0;
	if (req->ipcFd >= 0)
		/* kept for its next request (FCGI_KEEP_CONN): that request comes
		 * on it, not on the listener, which may stay quiet meanwhile */
		return wait_listener(req->ipcFd, open_mask, drain_end, true, false, true);
	rc = wait_listener(listen_fd, open_mask, drain_end, idle, tcp, false);
	if (rc <= 0)
		return rc;
	return take_connection(req, listen_fd);
}

/* Reads the next request off the connection req->ipcFd as what waits on it
 * allows (ph_fcgi_waiting): split and served here, or read by libfcgi
 * (read_params, serve_one). fresh: the connection was just taken. Returns
 * true when a request was served; false when none was (the connection is
 * closed then, unless libfcgi keeps it). */
static bool
serve_connection(struct ph_server *srv, FCGX_Request *req, bool fresh, bool tcp)
{
	long long params_ms = srv ? srv->conf->http.params_timeout_ms : DEFAULT_PARAMS_MS;
	enum ph_fcgi_wait w = ph_fcgi_waiting(req->ipcFd, fresh, params_ms, &split_req);
	if (w == PH_FCGI_WAIT_SILENT)
		log_params_late(params_ms);
	if (w == PH_FCGI_WAIT_GONE || w == PH_FCGI_WAIT_SILENT) {
		close(req->ipcFd);
		req->ipcFd = -1;
		return false;
	}
	if (w == PH_FCGI_WAIT_SPLIT) {
		int fd = req->ipcFd;
		req->ipcFd = -1; /* ours now, not libfcgi's */
		ph_fcgi_serve_split(srv, fd, &split_req, tcp);
		return true;
	}
	if (fresh)
		ph_fcgi_nodelay(req->ipcFd, tcp);
	if (!read_params(req, params_ms, w == PH_FCGI_WAIT_WHOLE))
		return false;
	serve_one(srv, req, w == PH_FCGI_WAIT_WHOLE, tcp);
	return true;
}

/* Counts this worker busy while it holds a connection (*held says whether
 * it is counted so), from the accept until the connection is closed or
 * handed to the hub: one still sending its parameters keeps the worker from
 * every other as much as a request running does, and the master forks past
 * workers that hold one (ph_shared_cell_mark wakes it). A connection kept
 * for the next request (FCGI_KEEP_CONN) is held too. */
static void
hold(bool *held, bool now)
{
	if (*held == now)
		return;
	ph_metrics_busy(now ? 1 : -1);
	*held = now;
}

int
ph_fcgi_serve(struct ph_server **srv, const struct ph_run *r, bool own_reload)
{
	FCGX_Request req;
	long long served = 0;
	int64_t drain_end = 0;
	sigset_t open_mask;
	bool tcp, fresh, held = false, served_one;
	unsigned burst = 0;
	int rc;

	if (!worker_setup(r, &req, &tcp))
		return 1;
	sigemptyset(&open_mask);
	if (own_reload)
		ph_metrics_set_workers(1); /* no master to say so */
	ph_metrics_set_listen_fd(r->listen_fd);
	if (*srv)
		(*srv)->resume = &ph_fcgi_resume_ops; /* a parked call comes back over FastCGI */
	ph_persist_prestart(*srv);
	log_buffer(*srv);
	for (;;) {
		if (ph_stop_requested && !draining(srv, own_reload, &drain_end))
			break;
		if (ph_reload_requested) {
			ph_reload_requested = 0;
			if (own_reload)
				reload_in_place(srv, r->conf_path);
		}
		fresh = req.ipcFd < 0;
		rc = next_connection(&req, r->listen_fd, &open_mask, drain_end, tcp, &burst);
		hold(&held, req.ipcFd >= 0);
		if (rc < 0)
			return 1;
		served_one = rc > 0 && serve_connection(*srv, &req, fresh, tcp);
		hold(&held, req.ipcFd >= 0);
		if (!served_one)
			continue;
		served++;
		if (ph_served_counter)
			*ph_served_counter = served;
		if (r->max_requests > 0 && served >= r->max_requests)
			break;
	}
	ph_log_buffer(0, 0); /* what is held is written */
	FCGX_Free(&req, 1);
	ph_fcgi_split_free(&split_req);
	ph_persist_shutdown();
	return 0;
}
