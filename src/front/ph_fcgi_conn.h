/* ph_fcgi_conn.h: a FastCGI connection of the front (ph_fcgi_conn.c),
 * used by both readers: libfcgi's (ph_fcgi.c) and the split's. */
#ifndef PH_FCGI_CONN_H
#define PH_FCGI_CONN_H
#include "first.h"
#include <stdbool.h>
#include <stddef.h>

/* Whether the peer of the accepted connection fd may send:
 * FCGI_WEB_SERVER_ADDRS, as libfcgi reads it. */
bool ph_fcgi_peer_allowed(int fd);
struct ph_front_ops;
struct ph_server;
/* Serves the request of a FastCGI exchange (ops, with front as its state);
 * srv NULL: the configuration did not load, and the request is told so.
 * The worker counts as busy already: it holds the connection (ph_fcgi.c). */
void ph_fcgi_serve_exchange(struct ph_server *srv, const struct ph_front_ops *ops, void *front);
/* Sets TCP_NODELAY on fd when tcp (a unix socket refuses it). */
void ph_fcgi_nodelay(int fd, bool tcp);
/* Hands connection fd (what was written on it flushed) to the hub with
 * desc (len bytes, a JSON object) and FastCGI request id rid. Returns 0
 * when the hub has it (our copy of fd is then closed by the caller), -1
 * (logged) when not. */
int ph_fcgi_hand_to_hub(int fd, unsigned rid, const char *desc, size_t len);
/* Shuts our side of fd, drains what the peer still sends (bounded) and
 * closes it. */
void ph_fcgi_close_drain(int fd);
/* Closes fd after the answer to a request read off it whole: at once when
 * the peer sent nothing more, else as ph_fcgi_close_drain. */
void ph_fcgi_close_answered(int fd);
#endif
