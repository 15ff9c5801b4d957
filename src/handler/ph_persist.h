/* ph_persist.h: the persistent exec handlers of one worker.
 *
 * Each worker owns its persistent processes, one per handler, started on
 * the first call and kept between calls (phantom.yaml(5), EXEC HANDLERS,
 * Persistent handlers). A call writes the exec input as one line with an
 * "id" member and takes one line back that must carry the same id. A
 * process is replaced when it fails a call in any way (timeout, crash,
 * cancellation, an answer that is not one JSON object line with the right
 * id, an answer twice, stdout closed or written between calls), after
 * max_calls calls, past max_rss and after idle_ms without a call. The
 * worker's front asks for the pidfds to wait on and calls ph_persist_tick
 * between requests so that exited and idle processes go at once; all of
 * them go with ph_persist_shutdown (worker exit, reload). */
#ifndef PH_PERSIST_H
#define PH_PERSIST_H
#include "first.h"
#include "ph_exec.h"
#include <json-c/json.h>
#include <poll.h>

/* How a call was served, for the request log line. */
enum ph_persist_how { PH_PERSIST_NONE, PH_PERSIST_WARM, PH_PERSIST_FRESH };

/* Runs one call of spec (whose persist.on is set) with input, the exec
 * input document (borrowed; an "id" member is added to it). Returns the
 * answer without its id (caller puts), or NULL after logging why (the
 * process is then replaced). *how says whether a running process served
 * it. depth bounds the answer's JSON. */
struct json_object *ph_persist_call(const struct ph_exec_spec *spec, const struct ph_exec_limits *lim,
				    struct json_object *input, const struct ph_exec_hooks *hooks,
				    int depth, enum ph_persist_how *how);

/* Checks an answer line (without its newline): one JSON object of at most
 * depth levels carrying "id": id, which is removed. Returns it (caller
 * puts) or NULL after logging why, naming label. */
struct json_object *ph_persist_answer(const char *label, const char *line, size_t len, long long id,
				      int depth);

/* Fills pf (at most max entries) with the pidfds of the running processes
 * and *timeout_ms (not changed when nothing is due; it is only lowered)
 * with when ph_persist_tick has work next. Returns the number filled. */
size_t ph_persist_pollfds(struct pollfd *pf, size_t max, int *timeout_ms);
/* Stops the processes that exited, idled past idle_ms or are due for
 * recycling. */
void ph_persist_tick(void);
/* At the start of a worker (or a single process, or stdio) and after it
 * reloads: starts the persistent process of every exec handler of srv
 * whose persistent mapping says start: true (NULL srv: none loaded). */
struct ph_server;
void ph_persist_prestart(const struct ph_server *srv);
/* Stops every persistent process of this worker. */
void ph_persist_shutdown(void);
/* How many are running (tests). */
size_t ph_persist_running(void);
#endif
