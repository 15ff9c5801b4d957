/* ph_fcgi_conn.c: a FastCGI connection of the front, whichever reader
 * reads it (ph_fcgi_conn.h): who may connect, its TCP delay, its request
 * served, handing it to the hub, and closing it without an RST that would
 * drop the answer. */
#include "first.h"
#include "ph_fcgi_conn.h"
#include "ph_core.h"
#include "ph_hubmsg.h"
#include "ph_log.h"
#include "ph_shared.h"
#include "ph_util.h"
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

/* How long a connection we close is drained (libfcgi's own drain reads until
 * the peer has been quiet for 2 s, which a trickling client never is). */
#define CLOSE_DRAIN_MS 2000

/* The longest a worker waits for room on the hub's channel. */
#define HANDOFF_WAIT_MS 200

/* Sends connection fd, what was written on it flushed, to the hub: FastCGI
 * request id rid joins desc (a JSON object text ending in '}'), the fd
 * travels as SCM_RIGHTS. Never blocks: a hub that does not keep up leaves
 * the stream with the worker. Returns 0 when the hub has it. */
int
ph_fcgi_hand_to_hub(int fd, unsigned rid, const char *desc, size_t len)
{
	struct ph_buf msg;
	int rc;
	if (ph_hub_fd < 0 || fd < 0)
		return -1;
	ph_buf_init(&msg);
	if (!ph_hubmsg_add_rid(&msg, desc, len, rid)) {
		ph_buf_free(&msg);
		return -1;
	}
	/* a full channel is waited for a bounded time (HANDOFF_WAIT_MS) rather
	 * than keep the stream on this worker */
	rc = ph_hub_send(msg.data, msg.len, fd, HANDOFF_WAIT_MS);
	ph_buf_free(&msg);
	if (rc != 0) {
		ph_log("warning", "the hub does not take the stream (%s); this worker keeps it",
		       strerror(errno));
		return -1;
	}
	return 0;
}

void
ph_fcgi_serve_exchange(struct ph_server *srv, const struct ph_front_ops *ops, void *front)
{
	struct ph_exchange ex;
	memset(&ex, 0, sizeof ex);
	ex.ops = ops;
	ex.front = front;
	ex.http = true;
	if (srv)
		ph_serve(srv, &ex);
	else
		ph_serve_unconfigured(&ex);
}

/* As libfcgi does on TCP for the requests it reads: the peer answers
 * nothing, so Nagle's algorithm only delays. */
void
ph_fcgi_nodelay(int fd, bool tcp)
{
	int one = 1;
	if (tcp)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* Shuts our side of fd, reads what the peer still sends for at most
 * CLOSE_DRAIN_MS (an RST would make it drop what we wrote), and closes it.
 * Bounded by poll alone: no timer. */
void
ph_fcgi_close_drain(int fd)
{
	char trash[1024];
	int64_t end = ph_now_us() + (int64_t)CLOSE_DRAIN_MS * 1000;
	if (shutdown(fd, SHUT_WR) == 0) {
		for (;;) {
			int64_t left = (end - ph_now_us()) / 1000;
			struct pollfd p = {fd, POLLIN, 0};
			if (left <= 0 || poll(&p, 1, (int)left) <= 0 || read(fd, trash, sizeof trash) <= 0)
				break;
		}
	}
	close(fd);
}

/* Closes the TCP connection fd after the answer to a request read off it
 * whole (ph_fcgi_serve_split). When the peer has sent nothing more,
 * nothing can turn the close into an RST: fd is closed at once, and the
 * worker does not wait for the web server to close its side first; else
 * ph_fcgi_close_drain.
 * Measured behind nginx (ABBA, 2 cores): over TCP this with listen_epoll
 * serves 8% more requests than the drain with ppoll; over a unix socket,
 * where the web server's close comes at once, the drain with ppoll served
 * 5% more than this, so a unix socket keeps them. */
void
ph_fcgi_close_answered(int fd)
{
	char c;
	ssize_t n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	if (n == 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)))
		close(fd);
	else
		ph_fcgi_close_drain(fd);
}

/* libfcgi's FCGI_WEB_SERVER_ADDRS (addresses, comma-separated), kept now
 * that Phantom accepts itself: when it is set, a peer over TCP whose
 * address is not in it is refused. An IPv4 peer reaching an IPv6 socket
 * (::ffff:a.b.c.d) is compared as IPv4; an IPv6 peer by its text form;
 * a unix socket's peer is the local web server. Anything else, or a peer
 * that cannot be read, is refused: the list is a guard, it fails closed.
 * Returns true when the peer of fd may send. The variable is read once:
 * the environment a process started with. */
bool
ph_fcgi_peer_allowed(int fd)
{
	static const char *addrs;
	static bool looked;
	const char *p;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	char ip[INET6_ADDRSTRLEN];
	size_t n;
	if (!looked) {
		addrs = getenv("FCGI_WEB_SERVER_ADDRS");
		looked = true;
	}
	if ((p = addrs) == NULL)
		return true;
	if (getpeername(fd, (struct sockaddr *)&ss, &sl) != 0)
		return false;
	if (ss.ss_family == AF_UNIX)
		return true;
	if (ss.ss_family == AF_INET) {
		if (inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, ip, sizeof ip) == NULL)
			return false;
	} else if (ss.ss_family == AF_INET6) {
		const struct in6_addr *a6 = &((struct sockaddr_in6 *)&ss)->sin6_addr;
		if (IN6_IS_ADDR_V4MAPPED(a6) ? inet_ntop(AF_INET, &a6->s6_addr[12], ip, sizeof ip) == NULL
					     : inet_ntop(AF_INET6, a6, ip, sizeof ip) == NULL)
			return false;
	} else {
		return false;
	}
	n = strlen(ip);
	while (*p) {
		size_t l = strcspn(p, ",");
		if (l == n && memcmp(p, ip, n) == 0)
			return true;
		p += l + (p[l] == ',');
	}
	return false;
}
