/* ph_listenq.h: the accept queue of a listening socket (TCP or unix), as
 * the kernel tells it. */
#ifndef PH_LISTENQ_H
#define PH_LISTENQ_H
#include "first.h"

/* Sets *waiting to the connections queued on the listening socket fd that
 * no process has accepted yet, and *backlog to the most the queue holds.
 * Returns 0, or -1 with both -1 when the kernel does not say (not a
 * listening TCP or unix stream socket, sock_diag refused). */
int ph_listen_queue(int fd, long long *waiting, long long *backlog);
#endif
