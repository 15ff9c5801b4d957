/* ph_hub_subs.c: the resource subscriptions of the hub's streams: the
 * resourceSubscriptions a worker granted a listen stream, watched in the
 * hub's table (lib/ph_watch.c) while its principal may read them (again
 * after each reload), and the announcements of a change from workers and
 * --notify. */
#include "first.h"
#include "ph_hub_int.h"
#include "ph_auth.h"
#include "ph_hub_cluster.h"
#include "ph_features.h"
#include "ph_hub_session.h"
#include "ph_hub_state.h"
#include "ph_watch.h"
#include <stdio.h>
#include <stdlib.h>

/* Keeps the URIs of the hand-over's "uris" (NULL: none) in s. Returns
 * false when it is not an array of strings. */
static bool
take_uris(struct stream *s, struct json_object *uris)
{
	size_t n;
	if (uris == NULL)
		return true;
	if (!json_object_is_type(uris, json_type_array))
		return false;
	n = json_object_array_length(uris);
	s->uris = ph_xcalloc(n ? n : 1, sizeof *s->uris);
	for (size_t i = 0; i < n; i++) {
		struct json_object *u = json_object_array_get_idx(uris, i);
		if (!json_object_is_type(u, json_type_string))
			return false;
		s->uris[s->nuris++] = ph_xstrdup(json_object_get_string(u));
	}
	return true;
}

/* Subscribes s to each of its URIs that its principal may read under the
 * hub's configuration now (a reload may have narrowed an allow-list or
 * moved a file); a file's directory is watched. Returns false when one
 * could not be watched (subscriptions.max_watches). */
static bool
watch_stream(struct hub *h, struct stream *s)
{
	bool denied = false;
	const struct ph_access *acc = s->own ? s->own : ph_auth_configured_access(h->srv, s->principal, &denied);
	if (s->nuris == 0 || h->watch == NULL || denied)
		return true;
	s->wsubs = ph_xcalloc(s->nuris, sizeof *s->wsubs);
	for (size_t i = 0; i < s->nuris; i++) {
		char *path = NULL;
		struct ph_wsub *w;
		if (ph_catalog_watch(h->srv, s->principal, acc, s->uris[i], &path) == PH_SUB_NONE)
			continue;
		w = ph_watch_add(h->watch, s, s->uris[i], path, h->srv->conf->subscriptions.max_watches);
		free(path);
		if (w == NULL)
			return false;
		s->wsubs[s->nwsubs++] = w;
	}
	return true;
}

/* Takes the resourceSubscriptions the worker granted s (uris, borrowed)
 * and watches them; a stream whose files cannot all be watched ends with
 * an error naming subscriptions.max_watches. */
void
ph_hub_watch_start(struct hub *h, struct stream *s, struct json_object *uris)
{
	char msg[200];
	if (!take_uris(s, uris)) {
		ph_log("error", "hub: a worker handed over resourceSubscriptions that are not URIs");
		ph_hub_refuse(h, s, "Internal error: the subscription could not be taken");
		return;
	}
	if (watch_stream(h, s))
		return;
	ph_hub_unwatch(h, s);
	snprintf(msg, sizeof msg, "Too many watched resources (subscriptions.max_watches is %lld)",
		 h->srv->conf->subscriptions.max_watches);
	ph_hub_refuse(h, s, msg);
}

/* After a reload: every stream's subscriptions again, with the new
 * configuration's files and allow-lists. */
void
ph_hub_rewatch(struct hub *h)
{
	for (size_t i = h->n; i-- > 0;) {
		struct stream *s = h->v[i];
		ph_hub_unwatch(h, s);
		if (!s->ending && !watch_stream(h, s))
			ph_log("warning", "hub: listen %s: some resources are no longer watched "
			       "(subscriptions.max_watches is %lld)", json_object_get_string(s->id),
			       h->srv->conf->subscriptions.max_watches);
	}
}

/* An announcement from a worker (no connection attached): UPDATED, from
 * phantom_resource_updated or an exec handler's resourcesUpdated; with
 * cluster: the other hosts' hubs hear of it too. */
void
ph_hub_announce(struct hub *h, const char *uri)
{
	ph_watch_announce(h->watch, uri, ph_hub_updated, h);
	ph_hub_states_announce(ph_hub_sessions_states(h->sessions), uri);
	ph_hub_cluster_updated(h->cluster, uri, false);
}
