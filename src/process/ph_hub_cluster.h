/* ph_hub_cluster.h: the hub's side of cluster: (ph_hub_cluster.c). The
 * hub holds an asynchronous Redis connection in its own loop, subscribes
 * to the cluster's announcement channel and publishes there what happens
 * on this host (--notify, a handler's resources/updated, a watched file's
 * change), so that every host's hub tells its own streams. Not for use
 * outside process/ph_hub*.c. Every function takes a NULL cluster (no
 * cluster: section, or a build without hiredis) and then does nothing. */
#ifndef PH_HUB_CLUSTER_H
#define PH_HUB_CLUSTER_H
#include "first.h"
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

struct hub;
struct ph_hub_cluster;
struct ph_hcl;

/* The cluster of hub h when its configuration has a cluster: section,
 * else NULL. Connects in the background (the loop never waits). */
struct ph_hub_cluster *ph_hub_cluster_new(struct hub *h);
void ph_hub_cluster_free(struct ph_hub_cluster *c);
/* After a reload: the new configuration's address, password and keys
 * (the connections are made again when one changed); a cluster: section
 * added or removed starts or ends the sharing. */
void ph_hub_cluster_reconf(struct hub *h);
/* An epoll event for tag (the event's data.ptr). Returns false when tag
 * is not one of the cluster's connections. */
bool ph_hub_cluster_event(struct ph_hub_cluster *c, void *tag, uint32_t events);
/* Called every loop: timeouts, heartbeats and reconnecting. */
void ph_hub_cluster_tick(struct ph_hub_cluster *c);
/* The asynchronous command connection (borrowed), NULL without one. */
struct ph_hcl *ph_hub_cluster_conn(const struct ph_hub_cluster *c);
/* The ph_hcl_msg_fn of the subscribed connection (ctx: the cluster): a
 * message of len bytes on channel (both borrowed). An announcement that
 * opens under the channel's name is told to this hub's streams and
 * sessions; a message on this host's wake-up channel empties its mailbox.
 * Only with hiredis; the entry point of tests/fuzz/fuzz_hub_announce.c. */
void ph_hub_cluster_message(void *ctx, const char *channel, const char *text, size_t len);
/* True while both connections are up and subscribed. */
bool ph_hub_cluster_up(const struct ph_hub_cluster *c);

/* Publishes list kind k's list_changed (told here already). */
void ph_hub_cluster_list_changed(struct ph_hub_cluster *c, size_t k);
/* Publishes resources/updated for uri (told here already); watched: it
 * comes from a watched file's change (another host that watches the same
 * file tells its own streams, see ph_hub_cluster.c). */
void ph_hub_cluster_updated(struct ph_hub_cluster *c, const char *uri, bool watched);
/* ph_hub_task_fn: a task's record changed here: notifications/tasks to
 * this hub's streams (ph_hub_task_changed) and, with cluster:, to the
 * other hosts' (the record travels sealed in the announcement). ctx is
 * the hub. */
void ph_hub_cluster_task_changed(void *ctx, const char *id, struct json_object *rec);
/* Reads the hub's file watches (streams' and sessions'), tells the
 * subscribers here and publishes each URI that changed, once. */
void ph_hub_cluster_watch_read(struct hub *h);
void ph_hub_cluster_states_watch_read(struct hub *h);
#endif
