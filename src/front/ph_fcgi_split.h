/* ph_fcgi_split.h: the FastCGI front's own reader (ph_fcgi_split.c):
 * what waits on a connection, and a simple request split out of it and
 * served without libfcgi. PHANTOM_FCGI_READER=libfcgi turns the split off,
 * and so does PHANTOM_FAST_PATHS=off unless PHANTOM_FCGI_READER=split
 * (ph_fcgi_reader, ph_front.h). */
#ifndef PH_FCGI_SPLIT_H
#define PH_FCGI_SPLIT_H
#include "first.h"
#include "ph_fcgi_wire.h"
#include <stdbool.h>

struct ph_server;

/* What of the next request waits on a connection (ph_fcgi_waiting). */
enum ph_fcgi_wait {
	PH_FCGI_WAIT_PART,   /* part of it: libfcgi reads it under the deadlines */
	PH_FCGI_WAIT_WHOLE,  /* all of it: libfcgi reads it without them */
	PH_FCGI_WAIT_SPLIT,  /* a simple one, split and taken off the connection */
	PH_FCGI_WAIT_GONE,   /* taking it off failed: the connection is lost */
	PH_FCGI_WAIT_SILENT, /* a fresh connection on which nothing came in time */
};

/* Looks at what waits on fd (fresh: a connection just accepted; params_ms:
 * how long a fresh one may stay silent) and, for PH_FCGI_WAIT_SPLIT, splits
 * it into *sp (its memory reused from request to request). */
enum ph_fcgi_wait ph_fcgi_waiting(int fd, bool fresh, long long params_ms, struct ph_fcgi_split *sp);
/* Serves the split request sp read off fd (taken) and ends it: srv NULL
 * when the configuration did not load; tcp: a TCP connection. */
void ph_fcgi_serve_split(struct ph_server *srv, int fd, const struct ph_fcgi_split *sp, bool tcp);
/* How the core resumes a parked call on the FastCGI connection the hub
 * hands back (the server's resume hook, ph_server.h): records written as
 * the split's are. */
extern const struct ph_resume_ops ph_fcgi_resume_ops;
#endif
