/* ph_hub_authz.h: subscriptions.authorize asked again by the hub before it
 * sends notifications/resources/updated (ph_hub_authz.c), on listen
 * streams and on legacy sessions alike, without ever waiting: the
 * handler runs beside the hub's loop, and the URIs that change while a
 * check of an owner (a stream, a session) is in flight go into its next
 * check, one call for them all. */
#ifndef PH_HUB_AUTHZ_H
#define PH_HUB_AUTHZ_H
#include "first.h"
#include "ph_server.h"

struct ph_hub_authz;

/* The URIs of owner's batch that may be told of now (allowed, borrowed:
 * an array of strings, possibly empty). */
typedef void (*ph_hub_authz_fn)(void *ctx, void *owner, struct json_object *allowed);

/* The checks of a hub serving srv (borrowed; see ph_hub_authz_reconf). */
struct ph_hub_authz *ph_hub_authz_new(struct ph_server *srv);
/* Stops the checks in flight (killed and reaped) and frees a. */
void ph_hub_authz_free(struct ph_hub_authz *a);
/* The epoll set of the checks in flight: readable when one of them can
 * go on (ph_hub_authz_events). */
int ph_hub_authz_fd(const struct ph_hub_authz *a);
/* A change reached owner's subscription to uri: without
 * subscriptions.authorize, fn (with ctx) is called at once with uri;
 * otherwise uri joins owner's next check, asked for principal (NULL:
 * anonymous) and assigns (may be NULL; both taken at the owner's first
 * pending change), and fn gets what it allows. */
void ph_hub_authz_updated(struct ph_hub_authz *a, void *owner, const char *principal,
			  struct json_object *assigns, const char *uri, ph_hub_authz_fn fn, void *ctx);
/* owner is going away: its pending URIs and its check are dropped. */
void ph_hub_authz_forget(struct ph_hub_authz *a, void *owner);
/* The checks whose descriptors are ready go on; those done call fn. */
void ph_hub_authz_events(struct ph_hub_authz *a);
/* Called every loop: starts the checks of owners with pending URIs (one
 * per owner at a time), enforces the handler's timeout_ms and reaps the
 * handlers killed that have died since. */
void ph_hub_authz_tick(struct ph_hub_authz *a);
/* SIGCHLD: reaps the handlers that exited, and those killed that were not
 * dead at once, before anything else in the hub reaps children. */
void ph_hub_authz_reap(struct ph_hub_authz *a);
/* After a reload: checks in flight are stopped and their URIs asked again
 * under srv (whose handler may differ, or be gone). */
void ph_hub_authz_reconf(struct ph_hub_authz *a, struct ph_server *srv);
#endif
