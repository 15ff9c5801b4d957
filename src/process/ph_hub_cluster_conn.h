/* ph_hub_cluster_conn.h: the hub's two asynchronous Redis connections
 * (ph_hub_cluster_conn.c, only with hiredis): one subscribed to the
 * cluster's channels, one for commands, both driven by the hub's epoll
 * loop. Used by ph_hub_cluster.c only. */
#ifndef PH_HUB_CLUSTER_CONN_H
#define PH_HUB_CLUSTER_CONN_H
#include "first.h"
#include "ph_server.h"
#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

/* The longest message taken from a channel. */
#define PH_HCL_MSG_MAX (1024 * 1024)

struct ph_hcl;
struct redisReply;

/* A message (len bytes, borrowed) on channel (borrowed). */
typedef void (*ph_hcl_msg_fn)(void *ctx, const char *channel, const char *text, size_t len);
/* The reply to a command (borrowed), or NULL when none came: Redis was
 * unreachable, the connection was lost or timed out. */
typedef void (*ph_hcl_reply_fn)(void *ctx, void *priv, struct redisReply *r);

/* The connections of a hub whose epoll set is ep, subscribed to the
 * nchan channels (copied), for the cluster this process is configured
 * with (ph_cluster_conf); NULL when none is. Messages go to fn(ctx). The
 * first connection is made by the first ph_hcl_tick. */
struct ph_hcl *ph_hcl_new(int ep, const char *const *chan, size_t nchan, ph_hcl_msg_fn fn, void *ctx);
/* up(ctx) is called each time both connections are (again) up. */
void ph_hcl_on_up(struct ph_hcl *o, void (*up)(void *ctx));
void ph_hcl_free(struct ph_hcl *o);
/* After a reload: connects again when the address or password changed. */
void ph_hcl_reconf(struct ph_hcl *o);
/* An epoll event for tag. Returns false when tag is not o's. */
bool ph_hcl_event(struct ph_hcl *o, void *tag, uint32_t events);
/* Timeouts, the heartbeat and reconnecting; called every loop. */
void ph_hcl_tick(struct ph_hcl *o);
/* True while both connections are up (the subscription confirmed). */
bool ph_hcl_up(const struct ph_hcl *o);
/* Sends a command of argc arguments (borrowed; copied) on the command
 * connection; fn(ctx, priv, reply) is called once, with NULL when it
 * fails (at once when the connection is not up). fn may be NULL. */
void ph_hcl_cmd(struct ph_hcl *o, int argc, const char **argv, const size_t *len, ph_hcl_reply_fn fn,
		void *ctx, void *priv);
/* Stamps doc (taken) with this host's tag ("o") and an expiry ttl_s from
 * now ("x"), seals it for channel and PUBLISHes it there; while Redis is
 * unreachable it is dropped (the outage was logged). */
void ph_hcl_publish(struct ph_hcl *o, const char *channel, struct json_object *doc, int ttl_s);
#endif
