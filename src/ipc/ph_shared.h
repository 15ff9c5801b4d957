/* ph_shared.h: the little state all processes of one server share through an
 * anonymous shared mapping made before the first fork (change counters for
 * list_changed notifications, the open listen streams and who holds them), and this
 * process's stop and reload flags. */
#ifndef PH_SHARED_H
#define PH_SHARED_H
#include "first.h"
#include "ph_server.h"
#include "ph_util.h"
#include <signal.h>

/* Creates the mapping (once; later calls do nothing). Call before forking. */
void ph_shared_init(void);
/* Eight hex digits drawn at random by ph_shared_init, the same in every
 * process of this run of the server on this host and (almost surely)
 * different on another host or run: the ids of the requests pushed to a
 * legacy client carry it, so the host an answer reaches can tell whether it
 * sent that request (core/ph_park.c). */
const char *ph_shared_host_tag(void);
/* Records that the list of this kind changed (tools, prompts, resources). */
void ph_shared_changed(enum ph_kind kind);
/* The change count of a kind; compare two readings to see a change. */
uint64_t ph_shared_changes(enum ph_kind kind);
/* The owners of listen-stream slots: the hub, and each worker by its slot
 * in the master plus one. */
#define PH_SHARED_OWNERS 1025
#define PH_SHARED_OWNER_HUB 0
/* Sets this process's owner number (in a child, after the fork); a number
 * out of range leaves it without one (counted in the total only). */
void ph_shared_set_owner(int n);
/* Takes a listen-stream slot when fewer than max are open. Returns false when full. */
bool ph_shared_listener_enter(long long max);
/* Gives the slot back: the stream ended. */
void ph_shared_listener_leave(void);
/* A worker has handed the stream to the hub: the slot is in flight. */
void ph_shared_listener_give(void);
/* The hub has received a stream in flight: its slot is the hub's now. */
void ph_shared_listener_take(void);
/* The master, when owner n has died: gives back every slot it held.
 * Returns how many. */
int ph_shared_listeners_release(int n);
/* Most argon2 verifications running at once on one host
 * (auth.max_concurrent_verify is bounded by it). */
#define PH_SHARED_VERIFY_MAX 64
/* Takes one of the first max verification slots. Returns its index, or -1
 * when all are held; a slot held by a process that died is taken over, so
 * a worker killed while verifying does not leak one. */
int ph_shared_verify_enter(long long max);
/* Gives back slot (from ph_shared_verify_enter; -1 does nothing). */
void ph_shared_verify_leave(int slot);
/* Argon2 verifications the host remembers together (beside each worker's
 * auth.argon2_cache), so a worker started after a client was verified does
 * not verify it again; digests are PH_SHARED_DIGEST bytes, keyed by the
 * configuration (ph_auth.c), so a reload's entries never match old ones. */
#define PH_SHARED_AUTH_SLOTS 1024
#define PH_SHARED_DIGEST 32
/* Remembers that digest matched token entry token. */
void ph_shared_auth_put(const unsigned char *digest, size_t token);
/* The token entry remembered for digest, or -1; the few candidate slots
 * are all compared in constant time. */
long ph_shared_auth_get(const unsigned char *digest);
/* Listen streams open now. */
int ph_shared_listeners(void);
/* Set by the signal handlers of the fronts and the master; checked
 * between requests and by long streams. */
extern volatile sig_atomic_t ph_stop_requested;
extern volatile sig_atomic_t ph_reload_requested;
/* This worker's slot in the master's shared scoreboard (NULL without a master). */
extern volatile long long *ph_served_counter;
/* Sends one message of len bytes to the hub on ph_hub_fd, with fd attached
 * (SCM_RIGHTS) unless it is -1, waiting up to wait_ms for room in the
 * channel (many workers at once can fill it for a moment). Returns 0, or
 * -1 with errno (EBADF: there is no hub). */
int ph_hub_send(const char *text, size_t len, int fd, int wait_ms);
/* Sends the hub message m (taken: one of ph_hubmsg.h's builders) as
 * ph_hub_send does. */
int ph_hub_send_json(struct json_object *m, int fd, int wait_ms);
/* Tells the hub the record of task id changed (an answer, a cancel, a
 * status, ph_task.h): it wakes the task's supervisor and tells the streams
 * listening for the task. Nothing happens without a hub. */
void ph_task_changed(const char *id);
/* The same on any unix socket sock (a reply socket of the hub's). */
int ph_send_fd(int sock, const char *text, size_t len, int fd, int wait_ms);
/* The largest message on that channel that travels as one datagram; a
 * longer one (a stream's description with many resourceSubscriptions, a
 * client's large answer to a pushed request) travels in a memfd attached
 * to a small datagram, which ph_recv_msg reads back. */
#define PH_HUB_MSG_MAX (192 * 1024)
/* Receives one message from sock (recvmsg flags) into out (its text
 * NUL-terminated), with the descriptor attached in *fd (-1: none; the
 * caller's, also on failure). Returns its length, 0 for an empty datagram
 * (the peer closed), or -1 with errno (EMSGSIZE: longer than max). */
ssize_t ph_recv_msg(int sock, struct ph_buf *out, size_t max, int *fd, int flags);
/* Tells the hub that the resource at uri changed, for the listen streams
 * subscribed to it (phantom_resource_updated, an exec handler's
 * resourcesUpdated). Returns 0, or -1 when there is no hub to tell or it
 * does not take the message. */
int ph_shared_announce_updated(const char *uri);
/* Where there is no hub, the process that hears announcements itself (the
 * stdio front): fn (NULL: none) takes each uri ph_shared_announce_updated
 * is given and returns what it returns. */
void ph_shared_local_announce(int (*fn)(const char *uri));

/* ---- the pool's scoreboard: a cell per worker, by owner number ----
 * The master opens a worker's cell when it starts it in the current
 * generation (idle from then) and closes it when it retires or loses it;
 * the worker marks it busy while it holds a connection, from the accept. */
void ph_shared_cell_open(int n);
void ph_shared_cell_close(int n);
/* True when worker n is busy; *since_us (may be NULL): since when it has
 * been busy or idle (ph_now_us). */
bool ph_shared_cell_busy(int n, int64_t *since_us);
/* The master: its workers are owners 1..cells; a worker that takes a
 * connection leaving fewer than below workers idle sends it SIGURG, once until
 * ph_shared_pool_rearm (below 0: never). */
void ph_shared_pool_watch(int cells, int below);
void ph_shared_pool_rearm(void);
/* The open cells, busy and idle, now. */
void ph_shared_pool_count(long long *busy, long long *idle);
/* This worker (its owner number set) is now busy or idle; no-op elsewhere. */
void ph_shared_cell_mark(bool busy);
/* True when the master has closed this worker's cell: it is being retired
 * (its SIGTERM comes), so it should take no more connections in a row. */
bool ph_shared_cell_retired(void);

/* ---- the cluster's Redis as the processes of this host last saw it
 * (ph_cluster.c): one state, so that each change is logged once a host,
 * and one backoff, so that all processes wait it out together. */
#define PH_SHARED_CLUSTER_UP 1
#define PH_SHARED_CLUSTER_DOWN 2
/* Records state; true when it differs from the one recorded (log it then). */
bool ph_shared_cluster_state(int state);
/* No process tries Redis again before this (ph_now_us; 0: any time). */
int64_t ph_shared_cluster_retry_at(void);
/* A try failed: the backoff doubles (100 ms at first, at most max_ms). */
void ph_shared_cluster_failed(long long max_ms);
/* A try succeeded: no backoff. */
void ph_shared_cluster_ok(void);

/* True when this process has been asked to stop or reload (a signal is
 * pending while a request runs), so long streams can end cleanly. */
bool ph_stop_pending(void);
#endif
