/* ph_hub_ctl.c: the hub's control socket (subscriptions.control_socket):
 * an application outside the server announces a list change or a
 * resource update (phantom-fcgi --notify, ph_notify.c, is its client),
 * and the hub tells the streams and sessions that listen for it. */
#include "first.h"
#include "ph_hub_ctl.h"
#include "ph_hub_cluster.h"
#include "ph_hub_int.h"
#include "ph_hub_session.h"
#include "ph_hub_state.h"
#include "ph_watch.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* How long a client may take to send its command line (at most
 * PH_HUB_CTL_LINE_MAX), and how many clients are read at once (the loop
 * never waits for one: a slow client holds a slot, not the hub). */
#define CTL_LINE_MAX PH_HUB_CTL_LINE_MAX
#define CTL_TIMEOUT_MS 1000
#define CTL_CONNS_MAX 32

/* A control client whose command line is being read. */
struct ctl_conn {
	int fd;
	size_t len;
	int64_t until_us;
	char line[CTL_LINE_MAX];
};

bool
ph_hub_ctl_addr(const char *path, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sa->sun_path)
		return false;
	memcpy(sa->sun_path, path, strlen(path));
	return true;
}

/* Listens on subscriptions.control_socket, mode 0600. A socket file
 * someone still listens on is left alone (another server uses it); a stale
 * one is replaced. Leaves h->ctl -1 after logging when it cannot. */
void
ph_hub_ctl_open(struct hub *h)
{
	const char *path = h->srv->conf->subscriptions.control_socket;
	struct sockaddr_un sa;
	int fd, probe;
	mode_t old;
	h->ctl = -1;
	if (path == NULL || *path == '\0')
		return;
	if (!ph_hub_ctl_addr(path, &sa)) {
		ph_log("error", "hub: subscriptions.control_socket is too long: %s", path);
		return;
	}
	probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof sa) == 0) {
		close(probe);
		ph_log("error", "hub: %s is in use by another server; --notify will not reach this one",
		       path);
		return;
	}
	if (probe >= 0)
		close(probe);
	unlink(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	old = umask(0177); /* created 0600: only the owner may connect */
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 16) != 0) {
		umask(old);
		ph_log("warning", "hub: no control socket at %s (%s); --notify is not available", path,
		       strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	umask(old);
	h->ctl = fd;
	h->ctl_path = ph_xstrdup(path);
	h->cc = ph_xcalloc(CTL_CONNS_MAX, sizeof *h->cc);
	h->ctl_ep = epoll_create1(EPOLL_CLOEXEC);
}

/* "resources/updated URI...": resources/updated to the streams subscribed
 * to each URI. Returns how many notifications were sent. */
static long
ctl_updated(struct hub *h, char *uris)
{
	long told = 0;
	for (char *save = NULL, *u = strtok_r(uris, " \t", &save); u; u = strtok_r(NULL, " \t", &save)) {
		told += (long)ph_watch_announce(h->watch, u, ph_hub_updated, h);
		told += (long)ph_hub_states_announce(ph_hub_sessions_states(h->sessions), u);
		ph_hub_cluster_updated(h->cluster, u, false);
	}
	return told;
}

/* Announces kind's list_changed to every stream that asked for it, or
 * resources/updated to those subscribed to the URIs named. Returns how
 * many streams were told, or -1 when the command is unknown. */
static long
ctl_command(struct hub *h, char *line)
{
	long told = 0;
	size_t k;
	if (strncmp(line, "resources/updated ", 18) == 0) {
		told = ctl_updated(h, line + 18);
		ph_log("notice", "hub: --notify resources/updated told %ld streams", told);
		return told;
	}
	for (k = 0; k < NKINDS; k++)
		if (strcmp(line, ph_hub_kinds[k].method + strlen("notifications/")) == 0)
			break;
	if (k == NKINDS)
		return -1;
	for (size_t i = h->n; i-- > 0;) {
		struct stream *s = h->v[i];
		if (s->on[k] && !s->ending && ph_hub_notify_stream(h, s, ph_hub_kinds[k].method))
			told++;
	}
	told += (long)ph_hub_states_list_changed(ph_hub_sessions_states(h->sessions), k, NULL, NULL);
	ph_hub_cluster_list_changed(h->cluster, k);
	ph_log("notice", "hub: --notify %s told %ld streams", line, told);
	return told;
}

/* Answers control client i with out (one line; best effort: the socket
 * takes a few hundred bytes) and forgets it. */
static void
ctl_done(struct hub *h, size_t i, const char *out)
{
	struct ctl_conn *c = h->cc[i];
	if (write(c->fd, out, strlen(out)) < 0) {
		/* the client went away: nothing to tell it */
	}
	epoll_ctl(h->ctl_ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c);
	h->cc[i] = h->cc[--h->ncc];
}

/* Reads what control client i sent; a whole line is run and answered
 * ("ok N" or "error ..."), a partial one waits for more. */
static void
ctl_read(struct hub *h, size_t i)
{
	struct ctl_conn *c = h->cc[i];
	char out[256], *nl;
	long told;
	ssize_t n;
	while ((n = read(c->fd, c->line + c->len, sizeof c->line - 1 - c->len)) < 0 && errno == EINTR)
		;
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return;
	if (n <= 0) {
		ctl_done(h, i, "");
		return;
	}
	c->len += (size_t)n;
	c->line[c->len] = '\0';
	if ((nl = memchr(c->line, '\n', c->len)) == NULL) {
		if (c->len + 1 >= sizeof c->line)
			ctl_done(h, i, "error the command line is over 4096 bytes\n");
		return;
	}
	*nl = '\0';
	c->line[strcspn(c->line, "\r")] = '\0';
	if ((told = ctl_command(h, c->line)) < 0)
		snprintf(out, sizeof out, "error unknown notification '%.60s' (tools/list_changed, "
			 "prompts/list_changed, resources/list_changed, resources/updated URI...)\n", c->line);
	else
		snprintf(out, sizeof out, "ok %ld\n", told);
	ctl_done(h, i, out);
}

/* The control connections that became readable. */
void
ph_hub_ctl_events(struct hub *h)
{
	struct epoll_event evs[CTL_CONNS_MAX];
	int n = epoll_wait(h->ctl_ep, evs, CTL_CONNS_MAX, 0);
	for (int k = 0; k < n; k++)
		for (size_t i = 0; i < h->ncc; i++)
			if (h->cc[i] == evs[k].data.ptr) {
				ctl_read(h, i);
				break;
			}
}

/* Control clients past CTL_TIMEOUT_MS without a whole line are told so. */
void
ph_hub_ctl_tick(struct hub *h)
{
	int64_t now = ph_now_us();
	for (size_t i = h->ncc; i-- > 0;)
		if (now >= h->cc[i]->until_us)
			ctl_done(h, i, "error no command line within 1000 ms\n");
}

/* New control clients: only root and this server's own user; each sends
 * one command line and gets one answer line. */
void
ph_hub_ctl_accept(struct hub *h)
{
	int fd;
	while ((fd = accept4(h->ctl, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
		struct ucred cr;
		socklen_t cl = sizeof cr;
		struct epoll_event ev;
		struct ctl_conn *c;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) != 0 ||
		    (cr.uid != 0 && cr.uid != geteuid())) {
			ph_log("warning", "hub: control connection from uid %d refused", (int)cr.uid);
			close(fd);
			continue;
		}
		c = ph_xcalloc(1, sizeof *c);
		c->fd = fd;
		c->until_us = ph_now_us() + CTL_TIMEOUT_MS * 1000;
		h->cc[h->ncc++] = c;
		memset(&ev, 0, sizeof ev);
		ev.events = EPOLLIN | EPOLLRDHUP;
		ev.data.ptr = c;
		if (h->ncc > CTL_CONNS_MAX - 1 || epoll_ctl(h->ctl_ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
			ctl_done(h, h->ncc - 1, "error the hub reads too many control connections at once; "
				 "try again\n");
			continue;
		}
		ctl_read(h, h->ncc - 1); /* the line is often there already */
	}
}

void
ph_hub_ctl_close(struct hub *h)
{
	if (h->ctl >= 0) {
		while (h->ncc > 0)
			ctl_done(h, h->ncc - 1, "error the hub is stopping\n");
		close(h->ctl_ep);
		free(h->cc);
		close(h->ctl);
		unlink(h->ctl_path);
	}
	free(h->ctl_path);
}
