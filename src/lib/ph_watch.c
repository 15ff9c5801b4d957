/* ph_watch.c: resource subscriptions (the hub's and stdio's). A target is
 * one URI (with the file that serves it, if any) and the subscriptions to
 * it; the
 * file is watched through its directory (inotify on the directory catches
 * a file replaced by rename, as editors save), one watch per directory
 * shared by all its targets. A file reached through symbolic links is
 * watched at each of them too (a point: a name in a watched directory):
 * the link, every link on the way, and the file they lead to, so that a
 * change to the file behind link.txt, or a Kubernetes volume whose ..data
 * link is swapped by rename, is seen; after a change the links are
 * followed again. A change marks the targets a point of which it names,
 * and each marked target is announced once per batch of events. */
#include "first.h"
#include "ph_watch.h"
#include "ph_log.h"
#include "ph_util.h"
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#define TARGET_BUCKETS 65536
#define DIR_BUCKETS 4096
/* What changes a file's bytes or replaces it (IN_CREATE: a symbolic link
 * made again, as ln -sf does, is never written). */
#define EV_MASK (IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE | IN_ONLYDIR)
/* Symbolic links followed from one file, as the kernel's MAXSYMLINKS. */
#define LINKS_MAX 40

struct target;

struct wdir {
	int wd;                   /* -1 once the kernel dropped the watch */
	char *path;
	size_t refs;              /* points in it */
	struct point *points;     /* linked by dnext */
	struct wdir *pnext, *wnext;
};

/* A name in a watched directory whose changes reach a target. */
struct point {
	struct target *t;
	struct wdir *dir;
	char *name;
	struct point *dnext, **dprev;
};

struct target {
	char *uri, *path;         /* path NULL: not a file */
	struct point **pts;       /* pts[0]: path itself; then links and the file they lead to */
	size_t npts;
	struct ph_wsub **subs;
	size_t n, cap;
	int busy;                 /* being announced: freed afterwards when empty */
	bool pending;
	struct target *unext;
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
	long long max_dirs;       /* the last limit given to ph_watch_add */
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

/* ---- points: a name in a watched directory ------------------------------------ */

/* Adds the point (dir, name) to t, watching dir (taken) when it is new.
 * Returns false when the directory cannot be watched. */
static bool
point_add(struct ph_watch *w, struct target *t, char *dir, const char *name, long long max_dirs)
{
	struct wdir *d;
	struct point *p;
	for (size_t i = 0; i < t->npts; i++)
		if (strcmp(t->pts[i]->dir->path, dir) == 0 && strcmp(t->pts[i]->name, name) == 0) {
			free(dir);
			return true;
		}
	if ((d = dir_get(w, dir, max_dirs)) == NULL)
		return false;
	p = ph_xcalloc(1, sizeof *p);
	p->t = t;
	p->dir = d;
	p->name = ph_xstrdup(name);
	d->refs++;
	p->dnext = d->points;
	if (d->points)
		d->points->dprev = &p->dnext;
	d->points = p;
	p->dprev = &d->points;
	t->pts = ph_xrealloc(t->pts, (t->npts + 1) * sizeof *t->pts);
	t->pts[t->npts++] = p;
	return true;
}

static void
point_free(struct ph_watch *w, struct point *p)
{
	*p->dprev = p->dnext;
	if (p->dnext)
		p->dnext->dprev = p->dprev;
	dir_put(w, p->dir);
	free(p->name);
	free(p);
}

/* Adds the point of path: its directory and its name in it. */
static bool
point_of(struct ph_watch *w, struct target *t, const char *path, long long max_dirs)
{
	const char *slash = strrchr(path, '/');
	if (slash == NULL || slash[1] == '\0')
		return false;
	return point_add(w, t, ph_xstrndup(path, slash > path ? (size_t)(slash - path) : 1), slash + 1,
			 max_dirs);
}

/* Follows the symbolic links of t's path (absolute), component by
 * component, adding a point for each link met and one for the file it
 * all leads to; points that cannot be watched (max_dirs) are left out. */
static void
follow_links(struct ph_watch *w, struct target *t, long long max_dirs)
{
	struct ph_buf done, rest;
	int links = 0;
	ph_buf_init(&done);
	ph_buf_init(&rest);
	ph_buf_adds(&rest, t->path);
	ph_buf_addc(&rest, '\0');
	while (rest.data[0] != '\0') {
		char *comp = rest.data, *end, link[PATH_MAX];
		size_t clen, keep = done.len;
		ssize_t n;
		while (*comp == '/')
			comp++;
		end = strchrnul(comp, '/');
		clen = (size_t)(end - comp);
		if (clen == 0 || (clen == 1 && comp[0] == '.')) {
			memmove(rest.data, end, strlen(end) + 1);
			continue;
		}
		if (clen == 2 && comp[0] == '.' && comp[1] == '.') {
			while (done.len > 0 && done.data[--done.len] != '/')
				;
			memmove(rest.data, end, strlen(end) + 1);
			continue;
		}
		ph_buf_addc(&done, '/');
		ph_buf_add(&done, comp, clen);
		ph_buf_addc(&done, '\0');
		done.len--;
		n = links < LINKS_MAX ? readlink(done.data, link, sizeof link - 1) : -1;
		if (n <= 0) {
			memmove(rest.data, end, strlen(end) + 1);
			continue;
		}
		/* a link: watched where it is, then what it says replaces it */
		link[n] = '\0';
		links++;
		(void)point_of(w, t, done.data, max_dirs);
		done.len = link[0] == '/' ? 0 : keep;
		{
			char *more = ph_xasprintf("%s%s", link, end);
			rest.len = 0;
			ph_buf_adds(&rest, more);
			ph_buf_addc(&rest, '\0');
			free(more);
		}
	}
	ph_buf_addc(&done, '\0');
	if (links > 0 && done.data[0] == '/')
		(void)point_of(w, t, done.data, max_dirs);
	ph_buf_free(&done);
	ph_buf_free(&rest);
}

/* Follows t's links again after a change (a link replaced, ..data swapped):
 * the points after the first are made anew, then the old ones let go (a
 * directory still needed keeps its watch). */
static void
target_refollow(struct ph_watch *w, struct target *t)
{
	struct point **old = t->pts;
	size_t nold = t->npts;
	if (t->path == NULL || t->path[0] != '/' || nold == 0)
		return;
	t->pts = ph_xcalloc(1, sizeof *t->pts);
	t->pts[0] = old[0];
	t->npts = 1;
	follow_links(w, t, w->max_dirs);
	for (size_t i = 1; i < nold; i++)
		point_free(w, old[i]);
	free(old);
}

/* ---- targets -------------------------------------------------------------- */

/* The target of (uri, path), made when new. Returns NULL when its
 * directory cannot be watched. */
static struct target *
target_get(struct ph_watch *w, const char *uri, const char *path, long long max_dirs)
{
	size_t b = hash(uri) % TARGET_BUCKETS;
	struct target *t;
	for (t = w->byuri[b]; t; t = t->unext)
		if (strcmp(t->uri, uri) == 0 && same(t->path, path))
			return t;
	t = ph_xcalloc(1, sizeof *t);
	t->uri = ph_xstrdup(uri);
	if (path && strchr(path, '/')) {
		t->path = ph_xstrdup(path);
		if (!point_of(w, t, path, max_dirs)) {
			free(t->path);
			free(t->uri);
			free(t);
			return NULL;
		}
		if (path[0] == '/')
			follow_links(w, t, max_dirs);
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
	for (size_t i = 0; i < t->npts; i++)
		point_free(w, t->pts[i]);
	free(t->pts);
	free(t->subs);
	free(t->uri);
	free(t->path);
	free(t);
}

struct ph_wsub *
ph_watch_add(struct ph_watch *w, void *owner, const char *uri, const char *path, long long max_dirs)
{
	struct target *t;
	struct ph_wsub *s;
	w->max_dirs = max_dirs;
	t = target_get(w, uri, path, max_dirs);
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
				if (t->npts > 0)
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
	for (struct point *p = d->points; p; p = p->dnext)
		if (strcmp(p->name, ev->name) == 0)
			mark(w, p->t);
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
		target_refollow(w, t); /* where its links lead may have changed */
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
