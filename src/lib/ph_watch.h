/* ph_watch.h: resource subscriptions (ph_watch.c), for the hub and the
 * stdio front: which listen stream subscribed to which URI, and the inotify
 * watches behind the URIs that are files, one per directory, shared by
 * every subscription. */
#ifndef PH_WATCH_H
#define PH_WATCH_H
#include "first.h"
#include <stddef.h>

struct ph_watch;
struct ph_wsub;

/* Called for each (owner, uri) a change reaches; owner is what was given
 * to ph_watch_add. The callback may drop owner's subscriptions (and only
 * owner's). */
typedef void (*ph_watch_fn)(void *ctx, void *owner, const char *uri);

/* A new table with its inotify descriptor (non-blocking). Returns NULL
 * after logging when inotify is not available. */
struct ph_watch *ph_watch_new(void);
void ph_watch_free(struct ph_watch *w);
/* The descriptor to poll for changes. */
int ph_watch_fd(const struct ph_watch *w);
/* Subscribes owner to uri; path (borrowed, may be NULL) is the file that
 * serves it, watched through its directory, at most max_dirs directories
 * in all. Returns the subscription (release with ph_watch_drop), or NULL
 * when the directory cannot be watched (limit, inotify's own limit). */
struct ph_wsub *ph_watch_add(struct ph_watch *w, void *owner, const char *uri, const char *path,
			     long long max_dirs);
/* Ends one subscription (frees it). */
void ph_watch_drop(struct ph_watch *w, struct ph_wsub *s);
/* Reads the pending inotify events and calls fn once per subscription of
 * each changed file. */
void ph_watch_read(struct ph_watch *w, ph_watch_fn fn, void *ctx);
/* Calls fn for each subscription to uri (an application's own
 * announcement). Returns how many there were. */
size_t ph_watch_announce(struct ph_watch *w, const char *uri, ph_watch_fn fn, void *ctx);
/* Subscriptions and watched directories held now. */
size_t ph_watch_subs(const struct ph_watch *w);
size_t ph_watch_dirs(const struct ph_watch *w);
#endif
