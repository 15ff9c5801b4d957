/* ph_stdio.c: the stdio front. One JSON-RPC message per line on stdin, one
 * per line on stdout, logs only on stderr, exit on EOF.
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
#include <errno.h>
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
	bool reload;      /* SIGHUP reloads: a wait for input ends on it */
};

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
static int send_line(void *ctx, const char *json, size_t len);

/* Waiting for input: the files the client's listens subscribed to are
 * watched meanwhile, and their changes sent as they come. Returns true
 * when stdin has something (or ended), false when a reload interrupted the
 * wait or a change was sent (the caller looks again). */
static bool
input_or_watch(struct stdio_front *f)
{
	int wfd = ph_subscriptions_watch_fd();
	struct pollfd p[2] = {{0, POLLIN, 0}, {wfd, POLLIN, 0}};
	if (wfd < 0)
		return true;
	while (poll(p, 2, -1) < 0) {
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
		f->eof = true;
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

static const struct ph_front_ops stdio_ops = {
	.param = stdio_param,
	.read = stdio_read,
	.respond = stdio_respond,
	.stream_start = stdio_stream_start,
	.stream_send = stdio_stream_send,
	.stream_ping = stdio_stream_ping,
	.queued = stdio_queued,
	.dequeue = stdio_dequeue,
};

/* Takes the next complete line out of the buffer (reading as needed).
 * Returns its length (line NUL-terminated in *out, caller frees), -1 at
 * EOF, -2 when a reload was asked for while waiting for input. A line over
 * max_line, the last one without a newline too, is returned as too long
 * with *too_long set and only its first bytes kept. */
static long
next_line(struct stdio_front *f, char **out, bool *too_long)
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
					f->eof = true;
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
		fill(f, true);
	}
}

static int
send_line(void *ctx, const char *json, size_t len)
{
	(void)ctx;
	return put_line(json, len);
}

static void
on_hup(int sig)
{
	(void)sig;
	ph_reload_requested = 1;
}

/* SIGHUP: the configuration again (the running one stays when it does not
 * load), and list_changed on the client's open listens for what changed. */
static void
reload(struct ph_server **srv, const char *conf_path)
{
	struct ph_server *n;
	ph_reload_requested = 0;
	if ((n = ph_server_load(conf_path)) == NULL) {
		ph_log("error", "reload failed: keeping the running configuration");
		return;
	}
	ph_subscriptions_reloaded(*srv, n, send_line, NULL);
	ph_subscriptions_rewatch(n, ph_auth_configured_access);
	ph_server_free(*srv);
	*srv = n;
	ph_persist_prestart(n);
	ph_log("notice", "configuration reloaded; %zu listens open", ph_subscriptions_kept());
}

int
ph_stdio_run(struct ph_server **srvp, const char *conf_path, bool reloadable)
{
	struct stdio_front f;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	/* what a handler leaves behind (even after setsid) becomes ours to kill */
	ph_exec_subreaper();
	if (reloadable) {
		/* no SA_RESTART: a SIGHUP interrupts the wait for input */
		sa.sa_handler = on_hup;
		sigaction(SIGHUP, &sa, NULL);
	}
	memset(&f, 0, sizeof f);
	ph_buf_init(&f.in);
	f.max_line = (size_t)(*srvp)->conf->http.max_body;
	f.reload = reloadable;
	ph_persist_prestart(*srvp);
	for (;;) {
		struct ph_server *srv;
		struct ph_exchange ex;
		char *line = NULL;
		bool too_long;
		long n;
		if (reloadable && ph_reload_requested)
			reload(srvp, conf_path);
		srv = *srvp;
		if ((n = next_line(&f, &line, &too_long)) == -2)
			continue;
		if (n < 0)
			break; /* EOF: the client is done */
		while (n > 0 && line[n - 1] == '\r')
			line[--n] = '\0';
		if (n == 0) {
			free(line);
			continue;
		}
		memset(&ex, 0, sizeof ex);
		ex.ops = &stdio_ops;
		ex.front = &f;
		ex.http = false;
		ex.body = line;
		ex.body_len = (size_t)n;
		ex.too_large = too_long;
		ph_serve(srv, &ex);
		free(line);
		ph_persist_tick();
		if (ferror(stdout))
			break;
	}
	ph_buf_free(&f.in);
	ph_subscriptions_forget();
	ph_persist_shutdown();
	return 0;
}
