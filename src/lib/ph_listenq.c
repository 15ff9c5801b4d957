/* ph_listenq.c: how many connections wait in a listening socket's accept
 * queue, as the kernel tells it (Linux). TCP: TCP_INFO on a listening
 * socket gives the queue in tcpi_unacked and the backlog in tcpi_sacked.
 * Unix: sock_diag (what ss -xl prints as Recv-Q and Send-Q), asked for the
 * socket by its inode; unprivileged, as ss is. */
#include "first.h"
#include "ph_listenq.h"
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define TCP_STATE_LISTEN 10 /* TCP_LISTEN of the kernel's enum */

/* The queue of a TCP listening socket. Returns 0, or -1. */
static int
tcp_queue(int fd, long long *waiting, long long *backlog)
{
	struct tcp_info ti;
	socklen_t len = sizeof ti;
	memset(&ti, 0, sizeof ti);
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 || ti.tcpi_state != TCP_STATE_LISTEN)
		return -1;
	*waiting = ti.tcpi_unacked;
	*backlog = ti.tcpi_sacked;
	return 0;
}

/* The UNIX_DIAG_RQLEN attribute of the answer in buf (n bytes), or NULL. */
static const struct unix_diag_rqlen *
rqlen_of(const char *buf, size_t n)
{
	const struct nlmsghdr *h = (const void *)buf;
	const struct rtattr *a;
	size_t left;
	if (n < sizeof *h || !NLMSG_OK(h, n) || h->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
	    h->nlmsg_len < NLMSG_LENGTH(sizeof(struct unix_diag_msg)))
		return NULL;
	a = (const void *)((const char *)NLMSG_DATA(h) + NLMSG_ALIGN(sizeof(struct unix_diag_msg)));
	left = h->nlmsg_len - NLMSG_LENGTH(NLMSG_ALIGN(sizeof(struct unix_diag_msg)));
	for (; RTA_OK(a, left); a = RTA_NEXT(a, left))
		if (a->rta_type == UNIX_DIAG_RQLEN && RTA_PAYLOAD(a) >= sizeof(struct unix_diag_rqlen))
			return RTA_DATA(a);
	return NULL;
}

/* The queue of a unix listening socket, asked of sock_diag by inode.
 * Returns 0, or -1. */
static int
unix_queue(int fd, long long *waiting, long long *backlog)
{
	struct {
		struct nlmsghdr h;
		struct unix_diag_req r;
	} q;
	struct sockaddr_nl nl = {.nl_family = AF_NETLINK};
	union {
		char b[1024];
		struct nlmsghdr align;
	} ans;
	const struct unix_diag_rqlen *rq;
	struct stat st;
	ssize_t n;
	int s;
	if (fstat(fd, &st) != 0)
		return -1;
	memset(&q, 0, sizeof q);
	q.h.nlmsg_len = sizeof q;
	q.h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	q.h.nlmsg_flags = NLM_F_REQUEST;
	q.r.sdiag_family = AF_UNIX;
	q.r.udiag_states = 1u << TCP_STATE_LISTEN;
	q.r.udiag_ino = (unsigned)st.st_ino;
	q.r.udiag_show = UDIAG_SHOW_RQLEN;
	q.r.udiag_cookie[0] = q.r.udiag_cookie[1] = ~0u; /* no cookie: found by inode */
	s = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (s < 0)
		return -1;
	if (sendto(s, &q, sizeof q, 0, (struct sockaddr *)&nl, sizeof nl) != (ssize_t)sizeof q) {
		close(s);
		return -1;
	}
	n = recv(s, ans.b, sizeof ans.b, 0);
	close(s);
	rq = n > 0 ? rqlen_of(ans.b, (size_t)n) : NULL;
	if (rq == NULL)
		return -1;
	*waiting = rq->udiag_rqueue;
	*backlog = rq->udiag_wqueue;
	return 0;
}

int
ph_listen_queue(int fd, long long *waiting, long long *backlog)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	*waiting = *backlog = -1;
	if (fd < 0 || getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
		return -1;
	if (ss.ss_family == AF_INET || ss.ss_family == AF_INET6)
		return tcp_queue(fd, waiting, backlog);
	if (ss.ss_family == AF_UNIX)
		return unix_queue(fd, waiting, backlog);
	return -1;
}
