/* ph_line.h: what the stdio front does with one line of input, decided by
 * the core (the front never parses a message). */
#ifndef PH_LINE_H
#define PH_LINE_H
#include "first.h"
#include "ph_server.h"

enum ph_line_kind {
	PH_LINE_INLINE, /* served at once by the main process, in order */
	PH_LINE_CALL,   /* a request that may run a handler: a process of its own */
	PH_LINE_CANCEL, /* notifications/cancelled naming a request */
	PH_LINE_ANSWER, /* a JSON-RPC response to a request the server pushed */
};

/* Sorts one stdio line (len bytes, not NUL-terminated). *id gets the JSON
 * text of the request's id (CALL), of the requestId it names (CANCEL) or of
 * the response's id (ANSWER), the same text for the same id; caller frees;
 * NULL for INLINE. A line the core would refuse is INLINE: it is answered
 * so. */
enum ph_line_kind ph_line_kind(const struct ph_server *srv, const char *line, size_t len, char **id);
/* A line a stdio call wrote (len bytes): when it is a JSON-RPC request (a
 * method and a string id: the server asking the client mid-call), the JSON
 * text of its id, as ph_line_kind gives a response's (caller frees); else
 * NULL. */
char *ph_line_pushed(const char *line, size_t len);
#endif
