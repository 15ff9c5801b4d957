/* ph_watch.c: resource subscriptions (the hub's and stdio's). A target is
 * one URI (with the file that serves it, if any) and the subscriptions to
 * it; the
 * file is watched through its directory (inotify on the directory catches
 * a file replaced by rename, as editors save), one watch per directory
 * shared by all its targets. A change marks the targets whose file name it
 * names, and each marked target is announced once per batch of events. */
#include "first.h"
#include "ph_watch.h"
#include "ph_log.h"
#include "ph_util.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#define TARGET_BUCKETS 65536
#define DIR_BUCKETS 4096
/* What changes a file's bytes or replaces it. */
#define EV_MASK (IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_ONLYDIR)

struct target;

struct wdir {
	int wd;                   /* -1 once the kernel dropped the watch */
	char *path;
	size_t refs;              /* targets in it */
	struct target *targets;   /* linked by dnext */
	struct wdir *pnext, *wnext;
};

struct target {
	char *uri, *path;         /* path NULL: not a file */
	const char *base;         /* the file's name in dir (points into path) */
	struct wdir *dir;
	struct ph_wsub **subs;
	size_t n, cap;
	int busy;                 /* being announced: freed afterwards when empty */
	bool pending;
	struct target *unext, *dnext, **dprev;
};

struct ph_wsub {
	struct target *t;
	void *owner;
	size_t idx;
};

struct ph_watch {
	int fd;
	struct target *byuri[TARGET_BUCKETS];
	struct wdir *bypath[DIR_BUCKETS], *bywd[DIR_BUCKETS];
	size_t nsubs, ndirs;
	struct target **marked;   /* targets announced in the current batch */
	size_t nmarked, capmarked;
};

static size_t
hash(const char *s)
{
	size_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static bool
same(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

struct ph_watch *
ph_watch_new(void)
{
	struct ph_watch *w;
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (fd < 0) {
		ph_log("warning", "inotify: %s; file resources are not watched", strerror(errno));
		return NULL;
	}
	w = ph_xcalloc(1, sizeof *w);
	w->fd = fd;
	return w;
}

int
ph_watch_fd(const struct ph_watch *w)
{
	return w->fd;
}

size_t
ph_watch_subs(const struct ph_watch *w)
{
	return w ? w->nsubs : 0;
}

size_t
ph_watch_dirs(const struct ph_watch *w)
{
	return w ? w->ndirs : 0;
}

/* ---- directories ---------------------------------------------------------- */

static struct wdir *
dir_by_wd(const struct ph_watch *w, int wd)
{
	struct wdir *d = w->bywd[(unsigned)wd % DIR_BUCKETS];
	while (d && d->wd != wd)
		d = d->wnext;
	return d;
}

static void
unlink_wd(struct ph_watch *w, struct wdir *d)
{
	struct wdir **p = &w->bywd[(unsigned)d->wd % DIR_BUCKETS];
	while (*p && *p != d)
		p = &(*p)->wnext;
	if (*p)
		*p = d->wnext;
	d->wd = -1;
}

/* The watched directory path (taken), watching it when it is new. Returns
 * NULL (path freed) over max_dirs or when inotify refuses. */
static struct wdir *
dir_get(struct ph_watch *w, char *path, long long max_dirs)
{
	size_t b = hash(path) % DIR_BUCKETS;
	struct wdir *d;
	int wd;
	for (d = w->bypath[b]; d; d = d->pnext)
		if (strcmp(d->path, path) == 0) {
			free(path);
			return d;
		}
	if ((long long)w->ndirs >= max_dirs ||
	    (wd = inotify_add_watch(w->fd, path, EV_MASK)) < 0) {
		if ((long long)w->ndirs < max_dirs)
			ph_log("warning", "cannot watch %s: %s", path, strerror(errno));
		free(path);
		return NULL;
	}
	/* another path to a directory already watched shares its watch */
	if ((d = dir_by_wd(w, wd)) != NULL) {
		free(path);
		return d;
	}
	d = ph_xcalloc(1, sizeof *d);
	d->wd = wd;
	d->path = path;
	d->pnext = w->bypath[b];
	w->bypath[b] = d;
	d->wnext = w->bywd[(unsigned)wd % DIR_BUCKETS];
	w->bywd[(unsigned)wd % DIR_BUCKETS] = d;
	w->ndirs++;
	return d;
}

static void
dir_put(struct ph_watch *w, struct wdir *d)
{
	struct wdir **p;
	if (--d->refs > 0)
		return;
	if (d->wd >= 0) {
		inotify_rm_watch(w->fd, d->wd);
		unlink_wd(w, d);
	}
	for (p = &w->bypath[hash(d->path) % DIR_BUCKETS]; *p != d; p = &(*p)->pnext)
		;
	*p = d->pnext;
	w->ndirs--;
	free(d->path);
	free(d);
}

/* ---- targets -------------------------------------------------------------- */

/* The target of (uri, path), made when new. Returns NULL when its
 * directory cannot be watched. */
static struct target *
target_get(struct ph_watch *w, const char *uri, const char *path, long long max_dirs)
{
	size_t b = hash(uri) % TARGET_BUCKETS;
	struct target *t;
	struct wdir *d = NULL;
	const char *slash = path ? strrchr(path, '/') : NULL;
	for (t = w->byuri[b]; t; t = t->unext)
		if (strcmp(t->uri, uri) == 0 && same(t->path, path))
			return t;
	if (slash && (d = dir_get(w, ph_xstrndup(path, slash > path ? (size_t)(slash - path) : 1), max_dirs)) == NULL)
		return NULL;
	t = ph_xcalloc(1, sizeof *t);
	t->uri = ph_xstrdup(uri);
	if (d) {
		t->path = ph_xstrdup(path);
		t->base = t->path + (slash - path) + 1;
		t->dir = d;
		d->refs++;
		t->dnext = d->targets;
		if (d->targets)
			d->targets->dprev = &t->dnext;
		d->targets = t;
		t->dprev = &d->targets;
	}
	t->unext = w->byuri[b];
	w->byuri[b] = t;
	return t;
}

/* Frees t when nothing holds it any more. */
static void
target_put(struct ph_watch *w, struct target *t)
{
	struct target **p;
	if (t->n > 0 || t->busy > 0)
		return;
	for (p = &w->byuri[hash(t->uri) % TARGET_BUCKETS]; *p != t; p = &(*p)->unext)
		;
	*p = t->unext;
	if (t->dir) {
		*t->dprev = t->dnext;
		if (t->dnext)
			t->dnext->dprev = t->dprev;
		dir_put(w, t->dir);
	}
	free(t->subs);
	free(t->uri);
	free(t->path);
	free(t);
}

struct ph_wsub *
ph_watch_add(struct ph_watch *w, void *owner, const char *uri, const char *path, long long max_dirs)
{
	struct target *t = target_get(w, uri, path, max_dirs);
	struct ph_wsub *s;
	if (t == NULL)
		return NULL;
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 4;
		t->subs = ph_xrealloc(t->subs, t->cap * sizeof *t->subs);
	}
	s = ph_xcalloc(1, sizeof *s);
	s->t = t;
	s->owner = owner;
	s->idx = t->n;
	t->subs[t->n++] = s;
	w->nsubs++;
	return s;
}

void
ph_watch_drop(struct ph_watch *w, struct ph_wsub *s)
{
	struct target *t = s->t;
	t->subs[s->idx] = t->subs[--t->n];
	t->subs[s->idx]->idx = s->idx;
	w->nsubs--;
	free(s);
	target_put(w, t);
}

/* ---- announcing ----------------------------------------------------------- */

/* Calls fn for every subscription t has now. Each callback may end its own
 * owner's subscriptions, never another's, so the owners copied first stay
 * valid; t itself is held until the end. */
static size_t
announce(struct ph_watch *w, struct target *t, ph_watch_fn fn, void *ctx)
{
	size_t n = t->n;
	void **owners = ph_xcalloc(n ? n : 1, sizeof *owners);
	for (size_t i = 0; i < n; i++)
		owners[i] = t->subs[i]->owner;
	t->busy++;
	for (size_t i = 0; i < n; i++)
		fn(ctx, owners[i], t->uri);
	t->busy--;
	free(owners);
	target_put(w, t);
	return n;
}

size_t
ph_watch_announce(struct ph_watch *w, const char *uri, ph_watch_fn fn, void *ctx)
{
	struct target **hold = NULL;
	size_t nhold = 0, told = 0;
	/* one URI may have several targets (files of different configurations) */
	for (struct target *t = w ? w->byuri[hash(uri) % TARGET_BUCKETS] : NULL; t; t = t->unext)
		if (strcmp(t->uri, uri) == 0) {
			hold = ph_xrealloc(hold, (nhold + 1) * sizeof *hold);
			hold[nhold++] = t;
			t->busy++;
		}
	for (size_t i = 0; i < nhold; i++) {
		hold[i]->busy--;
		told += announce(w, hold[i], fn, ctx);
	}
	free(hold);
	return told;
}

static void
mark(struct ph_watch *w, struct target *t)
{
	if (t->pending)
		return;
	if (w->nmarked == w->capmarked) {
		w->capmarked = w->capmarked ? w->capmarked * 2 : 16;
		w->marked = ph_xrealloc(w->marked, w->capmarked * sizeof *w->marked);
	}
	t->pending = true;
	t->busy++;
	w->marked[w->nmarked++] = t;
}

/* One event: marks the targets of the file it names; an overflowed queue
 * marks every file target (some change was lost). */
static void
on_event(struct ph_watch *w, const struct inotify_event *ev)
{
	struct wdir *d;
	if (ev->mask & IN_Q_OVERFLOW) {
		for (size_t b = 0; b < TARGET_BUCKETS; b++)
			for (struct target *t = w->byuri[b]; t; t = t->unext)
				if (t->dir)
					mark(w, t);
		return;
	}
	if ((d = dir_by_wd(w, ev->wd)) == NULL)
		return;
	if (ev->mask & IN_IGNORED) {
		unlink_wd(w, d); /* the directory is gone: its targets stay, unwatched */
		return;
	}
	if (ev->len == 0)
		return;
	for (struct target *t = d->targets; t; t = t->dnext)
		if (strcmp(t->base, ev->name) == 0)
			mark(w, t);
}

void
ph_watch_read(struct ph_watch *w, ph_watch_fn fn, void *ctx)
{
	char buf[65536] __attribute__((aligned(__alignof__(struct inotify_event))));
	for (;;) {
		ssize_t n = read(w->fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			on_event(w, ev);
			p += sizeof *ev + ev->len;
		}
	}
	for (size_t i = 0; i < w->nmarked; i++) {
		struct target *t = w->marked[i];
		t->pending = false;
		t->busy--;
		announce(w, t, fn, ctx);
	}
	w->nmarked = 0;
}

void
ph_watch_free(struct ph_watch *w)
{
	if (w == NULL)
		return;
	for (size_t b = 0; b < TARGET_BUCKETS; b++)
		while (w->byuri[b]) {
			struct target *t = w->byuri[b];
			t->busy = 0;
			if (t->n == 0)
				target_put(w, t);
			else
				ph_watch_drop(w, t->subs[t->n - 1]); /* the last one frees t */
		}
	close(w->fd);
	free(w->marked);
	free(w);
}
