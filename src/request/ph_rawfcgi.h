/* ph_rawfcgi.h: an exchange over a FastCGI connection the hub handed back
 * (ph_rawfcgi.c). The web server's request on it is already answered up to
 * an open SSE stream; what is written goes out as FCGI_STDOUT records for
 * the request id, and the end as the empty record and FCGI_END_REQUEST. A
 * resumed legacy call (core/ph_park.c) is served on it; the core gets the
 * exchange ready made (ph_rawfcgi_resume) and never sees the framing. */
#ifndef PH_RAWFCGI_H
#define PH_RAWFCGI_H
#include "first.h"
#include "ph_exchange.h"
#include <json-c/json.h>

/* The exchange of a call the hub handed back on its connection fd (taken),
 * for the front's request on that connection: the FastCGI request id rid
 * the front added when it handed the stream over (ph_hubmsg_add_rid).
 * Caller frees with ph_rawfcgi_end. */
struct ph_exchange *ph_rawfcgi_resume(int fd, unsigned rid);
/* Ends the stream (unless it went back to the hub) and closes fd. */
void ph_rawfcgi_end(struct ph_exchange *ex);
#endif
