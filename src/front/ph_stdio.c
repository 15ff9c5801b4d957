/* ph_stdio.c: the stdio front. One JSON-RPC message per line on stdin, one
 * per line on stdout, logs only on stderr, exit on EOF (once the calls in
 * flight are done). Calls run in child processes, stdio.concurrency at
 * once (below); with 1, everything is served in this process in turn.
 *
 * Input is read with read(2) into our own buffer so that, while a request
 * runs, the core can look through the lines read ahead (the queued op) for
 * a notifications/cancelled naming it; the others stay queued, in order,
 * for later. The front itself never parses a message. */
#include "first.h"
#include "ph_front.h"
#include "ph_auth.h"
#include "ph_build.h"
#include "ph_features.h"
#include "ph_persist.h"
#include "ph_shared.h"
#include "ph_util.h"
#include "ph_exec.h"
#include "ph_line.h"
#include "ph_park.h"
#include <errno.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct stdio_front {
	struct ph_buf in; /* bytes read, not yet served */
	size_t max_line;
	bool eof;
	int64_t end_us;   /* when the client closed stdin, 0: not yet (shutdown_timeout counts from it) */
	bool reload;      /* SIGHUP reloads: a wait for input ends on it */
	bool kid;         /* a call process: the file watches are the main process's */
};

/* Stdin has ended (or broken): the client is done. */
static void
set_eof(struct stdio_front *f)
{
	if (f->end_us == 0)
		f->end_us = ph_now_us();
	f->eof = true;
}

/* Notes when the client closed stdin, though lines it sent before may
 * still wait in the pipe (a pipe polls POLLHUP then): one poll, no read. */
static void
note_hangup(struct stdio_front *f)
{
	struct pollfd p = {0, POLLIN, 0};
	if (f->end_us == 0 && poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR)))
		f->end_us = ph_now_us();
}

/* Whether shutdown_s has passed since the client closed stdin: what has
 * not started by then is answered with an error, not served. */
static bool
past_shutdown(const struct stdio_front *f, long long shutdown_s)
{
	return f->end_us != 0 && ph_now_us() - f->end_us >= (int64_t)shutdown_s * 1000000;
}

static int send_line(void *ctx, const char *json, size_t len);

/* Answers the call whose id is the JSON text id with an error: the input
 * ended and shutdown_timeout passed before it finished (or started). */
static void
answer_stopped(const char *id, long long shutdown_s)
{
	char *line = ph_xasprintf("{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":-32000,\"message\":"
				  "\"Server stopping: the input ended and shutdown_timeout (%lld s) passed before "
				  "this call finished; it was not completed\"}}", id, shutdown_s);
	send_line(NULL, line, strlen(line));
	free(line);
}

static const char *
stdio_param(struct ph_exchange *ex, const char *name)
{
	(void)ex;
	(void)name;
	return NULL;
}

static long
stdio_read(struct ph_exchange *ex, char *buf, size_t len)
{
	(void)ex;
	(void)buf;
	(void)len;
	return 0;
}

static int
put_line(const char *s, size_t len)
{
	if (fwrite(s, 1, len, stdout) != len || fputc('\n', stdout) == EOF || fflush(stdout) != 0)
		return -1;
	return 0;
}

static int
stdio_respond(struct ph_exchange *ex, int status, const char *ctype, const struct ph_header *hdrs,
	      const char *body, size_t len)
{
	(void)ex;
	(void)status;
	(void)ctype;
	(void)hdrs;
	if (body == NULL || len == 0)
		return 0; /* notifications get no answer */
	return put_line(body, len);
}

static int
stdio_stream_start(struct ph_exchange *ex, const struct ph_header *hdrs)
{
	(void)ex;
	(void)hdrs;
	return 0;
}

static int
stdio_stream_send(struct ph_exchange *ex, const char *json, size_t len)
{
	(void)ex;
	return put_line(json, len);
}

/* Reads whatever is available (blocking when wait is set). Returns the bytes
 * read, 0 at EOF, -1 on error or when nothing was available. */

/* poll(2) that a SIGHUP asking for a reload always ends: the signal is
 * held from the last look at the flag until ppoll waits, since one that
 * came between the two would otherwise wait for the next input. */
static int
poll_or_reload(const struct stdio_front *f, struct pollfd *p, nfds_t n, int ms)
{
	sigset_t hup, old;
	struct timespec ts, *tp = NULL;
	int rc, e;
	if (!f->reload)
		return poll(p, n, ms);
	sigemptyset(&hup);
	sigaddset(&hup, SIGHUP);
	sigprocmask(SIG_BLOCK, &hup, &old);
	if (ph_reload_requested) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		errno = EINTR;
		return -1;
	}
	if (ms >= 0) {
		ts.tv_sec = ms / 1000;
		ts.tv_nsec = (long)(ms % 1000) * 1000000L;
		tp = &ts;
	}
	rc = ppoll(p, n, tp, &old);
	e = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	errno = e;
	return rc;
}

/* Waiting for input: the files the client's listens subscribed to are
 * watched meanwhile, and their changes sent as they come. Returns true
 * when stdin has something (or ended), false when a reload interrupted the
 * wait or a change was sent (the caller looks again). */
static bool
input_or_watch(struct stdio_front *f)
{
	int wfd = f->kid ? -1 : ph_subscriptions_watch_fd();
	struct pollfd p[2] = {{0, POLLIN, 0}, {wfd, POLLIN, 0}};
	while (poll_or_reload(f, p, 2, -1) < 0) {
		if (errno != EINTR || (f->reload && ph_reload_requested))
			return false;
	}
	if (p[1].revents & POLLIN)
		ph_subscriptions_watch_read(send_line, NULL);
	return (p[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0;
}

static long
fill(struct stdio_front *f, bool wait)
{
	char chunk[65536];
	ssize_t n;
	if (!wait) {
		struct pollfd p = {0, POLLIN, 0};
		if (poll(&p, 1, 0) <= 0)
			return -1;
	} else if (!input_or_watch(f)) {
		return -1;
	}
	for (;;) {
		n = read(0, chunk, sizeof chunk);
		if (n < 0 && errno == EINTR && !(f->reload && ph_reload_requested))
			continue;
		break;
	}
	if (n == 0)
		set_eof(f);
	if (n > 0)
		ph_buf_add(&f->in, chunk, (size_t)n);
	return (long)n;
}

/* While a request runs: reads what has arrived, without waiting, so the
 * core can look through it (stdio_queued). */
static int
stdio_stream_ping(struct ph_exchange *ex)
{
	struct stdio_front *f = ex->front;
	if (!f->eof)
		fill(f, false);
	return 0;
}

/* Finds complete line i of the read-ahead buffer: its start offset and
 * length. Returns false past the last complete line. */
static bool
queued_at(const struct stdio_front *f, size_t i, size_t *start, size_t *len)
{
	size_t at = 0;
	for (;;) {
		const char *nl = at < f->in.len ? memchr(f->in.data + at, '\n', f->in.len - at) : NULL;
		if (nl == NULL)
			return false;
		if (i-- == 0) {
			*start = at;
			*len = (size_t)(nl - f->in.data) - at;
			return true;
		}
		at = (size_t)(nl - f->in.data) + 1;
	}
}

static const char *
stdio_queued(struct ph_exchange *ex, size_t i, size_t *len)
{
	struct stdio_front *f = ex->front;
	size_t start;
	return queued_at(f, i, &start, len) ? f->in.data + start : NULL;
}

static void
stdio_dequeue(struct ph_exchange *ex, size_t i)
{
	struct stdio_front *f = ex->front;
	size_t start, len;
	if (!queued_at(f, i, &start, &len))
		return;
	memmove(f->in.data + start, f->in.data + start + len + 1, f->in.len - start - len - 1);
	f->in.len -= len + 1;
	f->in.data[f->in.len] = '\0';
}

/* A call waiting for the client's answers: reads what arrives within ms. */
static int
stdio_wait(struct ph_exchange *ex, int ms)
{
	struct stdio_front *f = ex->front;
	struct pollfd p = {0, POLLIN, 0};
	if (f->eof)
		return -1;
	if (poll(&p, 1, ms) > 0)
		fill(f, false);
	return f->eof ? -1 : 0;
}

static const struct ph_front_ops stdio_ops = {
	.param = stdio_param,
	.read = stdio_read,
	.respond = stdio_respond,
	.stream_start = stdio_stream_start,
	.stream_send = stdio_stream_send,
	.stream_ping = stdio_stream_ping,
	.queued = stdio_queued,
	.dequeue = stdio_dequeue,
	.wait = stdio_wait,
};

/* Takes the next complete line out of the buffer (reading as needed, when
 * wait is set). Returns its length (line NUL-terminated in *out, caller
 * frees), -1 at EOF, -2 when a reload was asked for while waiting for
 * input, -3 when wait is off and no whole line is in yet. A line over
 * max_line, the last one without a newline too, is returned as too long
 * with *too_long set and only its first bytes kept. */
static long
next_line(struct stdio_front *f, char **out, bool *too_long, bool wait)
{
	size_t scanned = 0;
	*too_long = false;
	for (;;) {
		char *nl = memchr(f->in.data ? f->in.data + scanned : "", '\n', f->in.len - scanned);
		if (nl != NULL) {
			size_t len = (size_t)(nl - f->in.data);
			*out = ph_xstrndup(f->in.data, len);
			memmove(f->in.data, nl + 1, f->in.len - len - 1);
			f->in.len -= len + 1;
			f->in.data[f->in.len] = '\0';
			if (len > f->max_line)
				*too_long = true;
			return (long)len;
		}
		scanned = f->in.len;
		if (f->eof) {
			size_t len = f->in.len;
			if (len == 0)
				return -1;
			/* a last line without a newline still counts, and is
			 * held to the same limit (its excess was dropped above) */
			*out = ph_buf_steal(&f->in);
			*too_long = len > f->max_line;
			return (long)len;
		}
		if (f->in.len > f->max_line + 1) {
			/* drop the excess of an over-long line but remember it */
			f->in.len = f->max_line + 1;
			f->in.data[f->in.len] = '\0';
			scanned = f->in.len;
			for (;;) {
				char chunk[65536];
				ssize_t n = read(0, chunk, sizeof chunk);
				char *e;
				if (n < 0 && errno == EINTR)
					continue;
				if (n <= 0) {
					set_eof(f);
					break;
				}
				e = memchr(chunk, '\n', (size_t)n);
				if (e) {
					ph_buf_add(&f->in, e, (size_t)(n - (e - chunk)));
					break;
				}
			}
			continue;
		}
		if (f->reload && ph_reload_requested)
			return -2;
		if (!wait)
			return -3;
		fill(f, true);
	}
}

static int
send_line(void *ctx, const char *json, size_t len)
{
	(void)ctx;
	return put_line(json, len);
}

/* An announcement heard by the main process (phantom_resource_updated,
 * an exec handler's resourcesUpdated in a call served here): told to the
 * client's listens and legacy session subscribed to uri. */
static int
announce_here(const char *uri)
{
	ph_subscriptions_announce(uri, send_line, NULL);
	return 0;
}

/* The same heard in a call process: passed to the main process, which
 * holds the subscriptions, as a line of its own on the call's stdout, one
 * that no JSON-RPC message starts with (kid_lines takes it out). */
#define ANNOUNCE_MARK '\001'
static int
announce_to_main(const char *uri)
{
	if (strchr(uri, '\n') != NULL) {
		ph_log("warning", "stdio: an announced URI with a newline in it is not passed on");
		return -1;
	}
	if (fputc(ANNOUNCE_MARK, stdout) == EOF)
		return -1;
	return put_line(uri, strlen(uri));
}

static void
on_hup(int sig)
{
	(void)sig;
	ph_reload_requested = 1;
}

/* SIGHUP: the configuration again (the running one stays when it does not
 * load), and list_changed on the client's open listens for what changed.
 * persist: persistent handlers are started here (one request at a time);
 * with calls in children, each child starts its own. */
static void
reload(struct ph_server **srv, const char *conf_path, bool persist)
{
	struct ph_server *n;
	ph_reload_requested = 0;
	if ((n = ph_server_load(conf_path)) == NULL) {
		ph_log("error", "reload failed: keeping the running configuration");
		return;
	}
	ph_subscriptions_reloaded(*srv, n, ph_auth_configured_access, send_line, NULL);
	ph_subscriptions_rewatch(n, ph_auth_configured_access);
	ph_server_free(*srv);
	*srv = n;
	if (persist)
		ph_persist_prestart(n);
	ph_log("notice", "configuration reloaded; %zu listens open", ph_subscriptions_kept());
}

/* Serves line (n bytes, borrowed) in this process. */
static void
serve_here(struct stdio_front *f, struct ph_server *srv, const char *line, size_t n, bool too_long)
{
	struct ph_exchange ex;
	memset(&ex, 0, sizeof ex);
	ex.ops = &stdio_ops;
	ex.front = f;
	ex.http = false;
	ex.body = line;
	ex.body_len = n;
	ex.too_large = too_long;
	ph_serve(srv, &ex);
}

/* Takes the next line to serve: its length (line in *out, caller frees),
 * or what next_line returns when there is none (-1 EOF, -2 reload, -3
 * nothing whole yet). A trailing CR is dropped; empty lines are skipped. */
static long
take_line(struct stdio_front *f, char **out, bool *too_long, bool wait)
{
	for (;;) {
		long n = next_line(f, out, too_long, wait);
		if (n < 0)
			return n;
		while (n > 0 && (*out)[n - 1] == '\r')
			(*out)[--n] = '\0';
		if (n > 0)
			return n;
		free(*out);
	}
}

/* stdio.concurrency 1: one request at a time, in this process. */
static void
run_serial(struct stdio_front *f, struct ph_server **srvp, const char *conf_path)
{
	ph_persist_prestart(*srvp);
	for (;;) {
		char *line = NULL;
		bool too_long;
		long n;
		if (f->reload && ph_reload_requested)
			reload(srvp, conf_path, true);
		if ((n = take_line(f, &line, &too_long, true)) == -2)
			continue;
		if (n < 0)
			break; /* EOF: the client is done */
		note_hangup(f);
		if (past_shutdown(f, (*srvp)->conf->shutdown_timeout) && !too_long) {
			char *id = NULL;
			if (ph_line_kind(*srvp, line, (size_t)n, &id) == PH_LINE_CALL) {
				answer_stopped(id, (*srvp)->conf->shutdown_timeout);
				free(id);
				free(line);
				continue;
			}
			free(id);
		}
		serve_here(f, *srvp, line, (size_t)n, too_long);
		free(line);
		ph_persist_tick();
		if (ferror(stdout))
			break;
	}
}

/* ---- calls in processes of their own ---------------------------------------------
 * The main process reads stdin, answers what needs no handler itself (in
 * order: initialize, ping, lists, logging, subscriptions) and gives each
 * call (ph_line.c says which) to a call process, up to stdio.concurrency
 * at once; more wait in a queue. Call processes are forked on demand and
 * serve one call after another, as prefork workers do, so persistent exec
 * handlers stay warm and a module's data lives on in them; each writes an
 * empty line after a call, which tells the main process it is free. A call
 * process's stdin is a pipe on which the main process passes it its next
 * call and what concerns the call in progress (a notifications/cancelled
 * naming it, the client's response to a request it sent the client), so
 * the core's look-ahead works there as it does in-process; its stdout is a
 * pipe that the main process copies to stdout a whole line at a time, so
 * lines never mix (and notes the ids of the requests among them). After a
 * reload or a new initialize the call processes are replaced (each once
 * its call is done): they hold the configuration and the client's
 * capabilities of their fork. One is reaped by its pid, and its group is
 * killed only before that, while the id cannot belong to another process. */

struct kid {
	pid_t pid;         /* 0: a free slot */
	int to, from;      /* its stdin (-1 once closed), its stdout (-1 once at its end) */
	char *id;          /* the JSON text of its call's id; NULL: it is free */
	bool retire;       /* ends (its stdin closed) once its call is done */
	struct ph_buf out; /* what it wrote after its last whole line */
	struct ph_buf fwd; /* lines for it, not yet written */
	int64_t kill_at;   /* after a cancel: killed if it still runs then (us); 0: no */
	bool reaped;
	char **asked;      /* the JSON text of the ids of the requests it sent the client */
	size_t nasked;
};

struct waiting {
	char *line, *id;
	size_t len;
	bool too_long;
};

struct pool {
	struct kid *kids;
	size_t max, running; /* call processes: at most, alive */
	size_t busy;         /* of them serving a call */
	struct waiting *q;
	size_t nq, qmax;
	int64_t grace_us;   /* limits.exec_grace_ms */
	unsigned gen;       /* ph_park_stdio_gen() when the call processes were forked */
	unsigned sgen;      /* ph_subscriptions_stdio_gen() then (the log level) */
	bool eof_sent;      /* stdin ended and the queue is empty: the children's stdin is closed too */
	bool gone;          /* stdout failed: the client is gone */
};

static void
set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static void kid_write(struct kid *k);

/* In the child: serves w, then the calls the main process passes on its
 * stdin until that ends; exits. Never returns. */
static void __attribute__((noreturn))
kid_run(struct stdio_front *f, struct pool *p, struct ph_server *srv, const struct waiting *w,
	const int in[2], const int out[2])
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGHUP, &sa, NULL); /* reloading is the main process's */
	setpgid(0, 0);
	for (size_t i = 0; i < p->max; i++) {
		if (p->kids[i].pid == 0)
			continue;
		if (p->kids[i].to >= 0)
			close(p->kids[i].to);
		if (p->kids[i].from >= 0)
			close(p->kids[i].from);
	}
	/* the main process's ends too: its stdin ends when the main process
	 * closes its own */
	close(in[1]);
	close(out[0]);
	if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0)
		_exit(1);
	close(in[0]);
	close(out[1]);
	/* what its handlers leave behind is its own to sweep */
	ph_exec_subreaper();
	ph_buf_reset(&f->in);
	f->eof = false;
	f->reload = false;
	f->kid = true;
	ph_shared_local_announce(announce_to_main);
	serve_here(f, srv, w->line, w->len, w->too_long);
	for (;;) {
		char *line;
		bool too_long;
		long n;
		/* the empty line: this call is done, the next may come */
		if (fputc('\n', stdout) == EOF || fflush(stdout) != 0)
			break;
		ph_persist_tick();
		ph_exec_sweep();
		if ((n = take_line(f, &line, &too_long, true)) < 0)
			break; /* the main process closed stdin: no more calls */
		serve_here(f, srv, line, (size_t)n, too_long);
		free(line);
	}
	fflush(stdout);
	ph_persist_shutdown();
	_exit(0);
}

/* k's call is done (it wrote the empty line): k is free for the next, or
 * ends when it is to retire or the input has ended. */
static void
kid_free(struct pool *p, struct kid *k)
{
	if (k->id == NULL)
		return;
	free(k->id);
	k->id = NULL;
	for (size_t i = 0; i < k->nasked; i++)
		free(k->asked[i]);
	k->nasked = 0;
	k->kill_at = 0;
	p->busy--;
	if ((k->retire || p->eof_sent) && k->to >= 0) {
		kid_write(k);
		close(k->to);
		k->to = -1;
	}
}

/* Writes the whole lines k has written to stdout. */
static void
kid_lines(struct pool *p, struct kid *k)
{
	size_t at = 0;
	char *nl;
	while ((nl = memchr(k->out.data + at, '\n', k->out.len - at)) != NULL) {
		size_t len = (size_t)(nl - (k->out.data + at));
		char *id = len ? ph_line_pushed(k->out.data + at, len) : NULL;
		if (len == 0) { /* its call is done */
			at++;
			kid_free(p, k);
			continue;
		}
		if (k->out.data[at] == ANNOUNCE_MARK) { /* its handler announced a change */
			char *uri = ph_xstrndup(k->out.data + at + 1, len - 1);
			announce_here(uri);
			free(uri);
			at += len + 1;
			continue;
		}
		if (id != NULL) { /* the client's answer goes to k */
			k->asked = ph_xrealloc(k->asked, (k->nasked + 1) * sizeof *k->asked);
			k->asked[k->nasked++] = id;
		}
		if (!p->gone && put_line(k->out.data + at, len) != 0)
			p->gone = true;
		at += len + 1;
	}
	memmove(k->out.data, k->out.data + at, k->out.len - at);
	k->out.len -= at;
	k->out.data[k->out.len] = '\0';
}

/* Reads what k wrote, without waiting; closes its stdout at the end. */
static void
kid_read(struct pool *p, struct kid *k)
{
	char chunk[65536];
	while (k->from >= 0) {
		ssize_t n = read(k->from, chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			close(k->from);
			k->from = -1;
			if (k->out.len > 0)
				ph_log("warning", "stdio: a call's process ended in the middle of a line; "
				       "the part is dropped");
			return;
		}
		ph_buf_add(&k->out, chunk, (size_t)n);
		kid_lines(p, k);
	}
}

/* Writes what is waiting for k's stdin, without blocking. */
static void
kid_write(struct kid *k)
{
	while (k->to >= 0 && k->fwd.len > 0) {
		ssize_t n = write(k->to, k->fwd.data, k->fwd.len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n < 0) { /* it is gone: what it did not read does not matter */
			ph_buf_reset(&k->fwd);
			return;
		}
		memmove(k->fwd.data, k->fwd.data + n, k->fwd.len - (size_t)n);
		k->fwd.len -= (size_t)n;
	}
}

/* Kills k's process group, only while k is unreaped (its pid, the group's
 * id, cannot have been given to another process yet). */
static void
kid_kill(struct kid *k)
{
	if (k->pid > 0 && !k->reaped && kill(-k->pid, SIGKILL) != 0)
		kill(k->pid, SIGKILL);
}

/* Reaps k if it has exited (waiting for it when wait is set). */
static void
kid_reap(struct kid *k, bool wait)
{
	int st;
	pid_t r;
	if (k->reaped)
		return;
	while ((r = waitpid(k->pid, &st, wait ? 0 : WNOHANG)) < 0 && errno == EINTR)
		;
	if (r == k->pid || (r < 0 && errno == ECHILD)) {
		k->reaped = true;
		ph_exec_disown(k->pid);
		if (r == k->pid && WIFSIGNALED(st) && k->kill_at == 0)
			ph_log("warning", "stdio: the process of call %s died of signal %d",
			       k->id ? k->id : "(none: it was free)", WTERMSIG(st));
	}
}

/* Frees k's slot once it is reaped and its output read; what it left
 * behind (a handler's process outside its group) is killed. Returns true
 * when the slot is free. */
static bool
kid_done(struct pool *p, struct kid *k)
{
	if (!k->reaped)
		return false;
	if (k->from >= 0) {
		kid_read(p, k);
		if (k->from >= 0) { /* held open by something it left behind */
			close(k->from);
			k->from = -1;
		}
	}
	if (k->to >= 0)
		close(k->to);
	if (k->id != NULL) /* it ended in the middle of a call */
		p->busy--;
	ph_buf_free(&k->out);
	ph_buf_free(&k->fwd);
	free(k->id);
	for (size_t i = 0; i < k->nasked; i++)
		free(k->asked[i]);
	free(k->asked);
	memset(k, 0, sizeof *k);
	p->running--;
	ph_exec_sweep();
	return true;
}

/* A free call process that can take a call, or NULL. */
static struct kid *
kid_idle(struct pool *p)
{
	for (size_t i = 0; i < p->max; i++) {
		struct kid *k = &p->kids[i];
		if (k->pid != 0 && !k->reaped && k->id == NULL && !k->retire && k->to >= 0)
			return k;
	}
	return NULL;
}

/* Whether a call can start now: a free call process, or room for one. */
static bool
kid_room(struct pool *p)
{
	return p->busy < p->max && (kid_idle(p) != NULL || p->running < p->max);
}

/* Gives w (taken) to a free call process, or starts one for it. Where no
 * process can be made, serves it here. */
static void
kid_start(struct stdio_front *f, struct pool *p, struct ph_server *srv, struct waiting *w)
{
	struct kid *k = kid_idle(p);
	int in[2] = {-1, -1}, out[2] = {-1, -1};
	pid_t pid;
	if (k != NULL) {
		ph_buf_add(&k->fwd, w->line, w->len);
		ph_buf_addc(&k->fwd, '\n');
		k->id = w->id;
		p->busy++;
		kid_write(k);
		free(w->line);
		return;
	}
	for (size_t i = 0; i < p->max && k == NULL; i++)
		if (p->kids[i].pid == 0)
			k = &p->kids[i];
	if (k == NULL || pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
		goto here;
	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) < 0)
		goto here;
	if (pid == 0)
		kid_run(f, p, srv, w, in, out);
	setpgid(pid, pid); /* also done by the child: whichever runs first */
	ph_exec_own(pid);
	close(in[0]);
	close(out[1]);
	set_nonblock(in[1]);
	set_nonblock(out[0]);
	memset(k, 0, sizeof *k);
	k->pid = pid;
	k->to = in[1];
	k->from = out[0];
	k->id = w->id;
	ph_buf_init(&k->out);
	ph_buf_init(&k->fwd);
	if (p->eof_sent) {
		close(k->to);
		k->to = -1;
	}
	p->running++;
	p->busy++;
	free(w->line);
	return;
here:
	ph_log("error", "stdio: cannot start a process for call %s (%s); serving it in line", w->id,
	       strerror(errno));
	for (int i = 0; i < 2; i++) {
		if (in[i] >= 0)
			close(in[i]);
		if (out[i] >= 0)
			close(out[i]);
	}
	serve_here(f, srv, w->line, w->len, w->too_long);
	free(w->line);
	free(w->id);
}

/* A notifications/cancelled naming id (line, n bytes): passed to the call
 * running it, which stops as in-process (and is killed if it has not
 * within the grace), or the waiting call dropped unanswered. */
static void
cancel_call(struct pool *p, const char *id, const char *line, size_t n)
{
	for (size_t i = 0; i < p->max; i++) {
		struct kid *k = &p->kids[i];
		if (k->pid == 0 || k->reaped || k->id == NULL || strcmp(k->id, id) != 0)
			continue;
		ph_buf_add(&k->fwd, line, n);
		ph_buf_addc(&k->fwd, '\n');
		kid_write(k);
		if (k->kill_at == 0)
			k->kill_at = ph_now_us() + p->grace_us;
		return;
	}
	for (size_t i = 0; i < p->nq; i++) {
		if (strcmp(p->q[i].id, id) != 0)
			continue;
		free(p->q[i].line);
		free(p->q[i].id);
		memmove(&p->q[i], &p->q[i + 1], (p->nq - i - 1) * sizeof *p->q);
		p->nq--;
		return;
	}
}

/* After a reload or an initialize: every call process ends once its call
 * is done (a free one at once); new ones fork with what holds now. */
static void
kid_retire_all(struct pool *p)
{
	for (size_t i = 0; i < p->max; i++) {
		struct kid *k = &p->kids[i];
		if (k->pid == 0 || k->retire)
			continue;
		k->retire = true;
		if (k->id == NULL && k->to >= 0) {
			close(k->to);
			k->to = -1;
		}
	}
}

/* A JSON-RPC response with id (line, n bytes): passed to the call that
 * sent the request it answers. Returns false when no call did. */
static bool
answer_call(struct pool *p, const char *id, const char *line, size_t n)
{
	for (size_t i = 0; i < p->max; i++) {
		struct kid *k = &p->kids[i];
		for (size_t j = 0; k->pid != 0 && !k->reaped && j < k->nasked; j++) {
			if (strcmp(k->asked[j], id) != 0)
				continue;
			free(k->asked[j]);
			k->asked[j] = k->asked[--k->nasked];
			ph_buf_add(&k->fwd, line, n);
			ph_buf_addc(&k->fwd, '\n');
			kid_write(k);
			return true;
		}
	}
	return false;
}

/* What the main process does with one line (taken). */
static void
dispatch(struct stdio_front *f, struct pool *p, struct ph_server *srv, char *line, size_t n, bool too_long)
{
	char *id = NULL;
	enum ph_line_kind kind = too_long ? PH_LINE_INLINE : ph_line_kind(srv, line, n, &id);
	if (kind == PH_LINE_CALL) {
		struct waiting *w = &p->q[p->nq++];
		w->line = line;
		w->len = n;
		w->too_long = too_long;
		w->id = id;
		return;
	}
	if (kind == PH_LINE_ANSWER && answer_call(p, id, line, n)) {
		free(line);
		free(id);
		return;
	}
	/* an answer to nothing asked is refused here as any stray response */
	if (kind == PH_LINE_CANCEL)
		cancel_call(p, id, line, n);
	/* cancels too: one may name a listen this process holds */
	serve_here(f, srv, line, n, too_long);
	free(line);
	free(id);
	/* an initialize (other capabilities) or a logging/setLevel */
	if (p->gen != ph_park_stdio_gen() || p->sgen != ph_subscriptions_stdio_gen()) {
		p->gen = ph_park_stdio_gen();
		p->sgen = ph_subscriptions_stdio_gen();
		kid_retire_all(p);
	}
}

/* The poll timeout until the next thing the loop must do by time: a
 * cancelled call's grace, the end of the shutdown wait, a child whose
 * output ended but that is not reaped yet. -1: none. */
static int
next_timeout(const struct pool *p, int64_t deadline)
{
	int64_t now = ph_now_us(), soonest = deadline;
	for (size_t i = 0; i < p->max; i++) {
		const struct kid *k = &p->kids[i];
		if (k->pid == 0)
			continue;
		if (k->from < 0 && !k->reaped)
			return 10;
		if (k->kill_at > 0 && !k->reaped && (soonest == 0 || k->kill_at < soonest))
			soonest = k->kill_at;
	}
	if (soonest == 0)
		return -1;
	return soonest <= now ? 0 : (int)((soonest - now + 999) / 1000);
}

/* A pool for srv's stdio section: stdio.concurrency call processes, none
 * started yet, and a queue of stdio.queue calls. */
static void
pool_init(struct pool *p, const struct ph_server *srv)
{
	memset(p, 0, sizeof *p);
	p->max = (size_t)srv->conf->stdio.concurrency;
	p->qmax = (size_t)srv->conf->stdio.queue;
	p->kids = ph_xcalloc(p->max, sizeof *p->kids);
	p->gen = ph_park_stdio_gen();
	p->sgen = ph_subscriptions_stdio_gen();
	p->q = ph_xcalloc(p->qmax, sizeof *p->q);
}

/* Kills and reaps every call process. With stopped, a call one was in the
 * middle of, and had not answered, is answered with the shutdown error
 * and counted in *stopped. */
static void
kids_end(struct pool *p, long long shutdown_s, size_t *stopped)
{
	for (size_t i = 0; i < p->max; i++) {
		struct kid *k = &p->kids[i];
		if (k->pid == 0)
			continue;
		kid_kill(k);
		kid_reap(k, true);
		if (stopped != NULL) {
			kid_read(p, k); /* its answer may be there, unread */
			if (k->id != NULL) {
				answer_stopped(k->id, shutdown_s);
				(*stopped)++;
			}
		}
		kid_done(p, k);
	}
}

/* The end: what still runs is killed, everything reaped and freed. */
static void
pool_end(struct pool *p)
{
	kids_end(p, 0, NULL);
	for (size_t i = 0; i < p->nq; i++) {
		free(p->q[i].line);
		free(p->q[i].id);
	}
	free(p->q);
	free(p->kids);
}

/* The lines read: answered, started or queued, in order, as long as the
 * queue has room and the client is there. */
static void
take_lines(struct stdio_front *f, struct pool *p, struct ph_server *srv)
{
	for (;;) {
		char *line;
		bool too_long;
		long n;
		while (!p->gone && p->nq > 0 && kid_room(p)) {
			struct waiting w = p->q[0];
			memmove(&p->q[0], &p->q[1], (p->nq - 1) * sizeof *p->q);
			p->nq--;
			kid_start(f, p, srv, &w);
		}
		if (p->gone || p->nq >= p->qmax || (n = take_line(f, &line, &too_long, false)) < 0)
			break;
		dispatch(f, p, srv, line, (size_t)n, too_long);
		if (ferror(stdout))
			p->gone = true;
	}
}

/* The client is done and every call has its process (the queued ones went
 * to the warm call processes, whose stdin stayed open for them): their
 * stdin is closed. */
static void
end_input(struct pool *p)
{
	p->eof_sent = true;
	for (size_t i = 0; i < p->max; i++) {
		if (p->kids[i].pid != 0 && p->kids[i].to >= 0) {
			kid_write(&p->kids[i]);
			close(p->kids[i].to);
			p->kids[i].to = -1;
		}
	}
}

/* shutdown_s after the end of input: every call still running is killed
 * and, unless it wrote its answer before, answered with an error; every
 * call waiting, and every call in the input not yet read, is answered so
 * too. Nothing the client sent goes unanswered. */
static void
stop_late(struct stdio_front *f, struct pool *p, struct ph_server *srv, long long shutdown_s)
{
	size_t stopped = 0;
	char *line, *id;
	bool too_long;
	long n;
	kids_end(p, shutdown_s, &stopped);
	for (size_t i = 0; i < p->nq; i++) {
		answer_stopped(p->q[i].id, shutdown_s);
		stopped++;
		free(p->q[i].line);
		free(p->q[i].id);
	}
	p->nq = 0;
	/* the client closed stdin: what it sent before is all there, and the
	 * reads end at its end */
	while ((n = take_line(f, &line, &too_long, true)) >= 0) {
		id = NULL;
		if (!too_long && ph_line_kind(srv, line, (size_t)n, &id) == PH_LINE_CALL) {
			answer_stopped(id, shutdown_s);
			stopped++;
		} else {
			serve_here(f, srv, line, (size_t)n, too_long); /* needs no handler */
		}
		free(id);
		free(line);
	}
	if (stopped > 0)
		ph_log("warning", "stdio: %zu call%s not done %llds after the end of input; answered with an "
		       "error (shutdown_timeout)", stopped, stopped == 1 ? "" : "s", shutdown_s);
}

/* Kills the calls that did not stop within the grace after their cancel. */
static void
kill_late(struct pool *p, int64_t now)
{
	for (size_t i = 0; i < p->max; i++) {
		struct kid *k = &p->kids[i];
		if (k->pid != 0 && k->kill_at > 0 && now >= k->kill_at && !k->reaped) {
			ph_log("notice", "stdio: call %s did not stop within %lld ms of its cancel; killed",
			       k->id, (long long)(p->grace_us / 1000));
			kid_kill(k);
			kid_reap(k, true);
		}
	}
}

/* Fills pf with what the loop waits on: stdin while the queue has room
 * (its index in *stdin_at, else -1), the subscriptions' watch (*watch_at),
 * each call process's stdout and, with something to pass on, its stdin.
 * Returns how many. */
static size_t
poll_set(const struct stdio_front *f, const struct pool *p, struct pollfd *pf, int *stdin_at, int *watch_at)
{
	size_t npf = 0;
	*stdin_at = *watch_at = -1;
	if (!f->eof && p->nq < p->qmax) {
		*stdin_at = (int)npf;
		pf[npf++] = (struct pollfd){0, POLLIN, 0};
	}
	if (ph_subscriptions_watch_fd() >= 0) {
		*watch_at = (int)npf;
		pf[npf++] = (struct pollfd){ph_subscriptions_watch_fd(), POLLIN, 0};
	}
	for (size_t i = 0; i < p->max; i++) {
		const struct kid *k = &p->kids[i];
		if (k->pid == 0)
			continue;
		if (k->from >= 0)
			pf[npf++] = (struct pollfd){k->from, POLLIN, 0};
		if (k->to >= 0 && k->fwd.len > 0)
			pf[npf++] = (struct pollfd){k->to, POLLOUT, 0};
	}
	return npf;
}

/* After the wait on pf (poll_set): stdin read, the watch's events sent,
 * and every call process's output read, its input written, and its slot
 * freed once it is reaped. */
static void
poll_done(struct stdio_front *f, struct pool *p, const struct pollfd *pf, int stdin_at, int watch_at)
{
	if (stdin_at >= 0 && (pf[stdin_at].revents & (POLLIN | POLLHUP | POLLERR))) {
		errno = 0;
		if (fill(f, false) < 0 && errno != 0 && errno != EINTR && errno != EAGAIN)
			set_eof(f); /* stdin is broken: as good as ended */
	}
	if (watch_at >= 0 && (pf[watch_at].revents & POLLIN))
		ph_subscriptions_watch_read(send_line, NULL);
	for (size_t i = 0; i < p->max; i++) {
		struct kid *k = &p->kids[i];
		if (k->pid == 0)
			continue;
		kid_read(p, k);
		kid_write(k);
		if (k->from < 0)
			kid_reap(k, false);
		kid_done(p, k);
	}
}

static void
run_concurrent(struct stdio_front *f, struct ph_server **srvp, const char *conf_path)
{
	struct pool p;
	long long shutdown_s = (*srvp)->conf->shutdown_timeout;
	struct pollfd *pf;
	pool_init(&p, *srvp);
	pf = ph_xcalloc(2 * p.max + 2, sizeof *pf);
	for (;;) {
		struct ph_server *srv;
		size_t npf;
		int stdin_at, watch_at, ms;
		int64_t now;
		if (f->reload && ph_reload_requested) {
			reload(srvp, conf_path, false);
			kid_retire_all(&p);
		}
		srv = *srvp;
		p.grace_us = srv->conf->limits.exec_grace_ms * 1000;
		take_lines(f, &p, srv);
		if (f->eof && f->in.len == 0 && p.nq == 0 && !p.eof_sent)
			end_input(&p);
		if (p.gone || (p.eof_sent && p.running == 0 && p.nq == 0))
			break;
		now = ph_now_us();
		note_hangup(f);
		if (past_shutdown(f, shutdown_s)) {
			stop_late(f, &p, srv, shutdown_s);
			break;
		}
		kill_late(&p, now);
		npf = poll_set(f, &p, pf, &stdin_at, &watch_at);
		ms = next_timeout(&p, f->end_us ? f->end_us + shutdown_s * 1000000 : 0);
		if (poll_or_reload(f, pf, (nfds_t)npf, ms) < 0 && errno != EINTR)
			break;
		poll_done(f, &p, pf, stdin_at, watch_at);
	}
	pool_end(&p);
	free(pf);
}

int
ph_stdio_run(struct ph_server **srvp, const char *conf_path, bool reloadable, bool children)
{
	struct stdio_front f;
	struct sigaction sa;
	ph_front_alone();
	memset(&sa, 0, sizeof sa);
	if (reloadable) {
		/* no SA_RESTART: a SIGHUP interrupts the wait for input */
		sa.sa_handler = on_hup;
		sigaction(SIGHUP, &sa, NULL);
	}
	ph_shared_local_announce(announce_here);
	memset(&f, 0, sizeof f);
	ph_buf_init(&f.in);
	f.max_line = (size_t)(*srvp)->conf->http.max_body;
	f.reload = reloadable;
	if (children && (*srvp)->conf->stdio.concurrency > 1)
		run_concurrent(&f, srvp, conf_path);
	else
		run_serial(&f, srvp, conf_path);
	ph_buf_free(&f.in);
	ph_shared_local_announce(NULL);
	ph_subscriptions_forget();
	ph_persist_shutdown();
	return 0;
}
