/* fuzz_hub_watch.c: libFuzzer harness for the hub's subscription table
 * (ph_hub_watch.c): the input is a program of subscriptions added (URIs,
 * files in three directories or none), dropped, and announced (by URI, and
 * as the text of a worker's announcement or a --notify line would give
 * it), with callbacks that drop every subscription of the owner they are
 * told about, as the hub does when it drops a stream whose client is gone.
 *
 * Invariants checked: the table counts the subscriptions that were added
 * and not dropped; an announcement calls back only owners subscribed to
 * that URI; once everything is dropped no subscription and no watched
 * directory remains; a table freed while it still holds subscriptions (the
 * hub exiting) frees them all.
 *
 *   make -C build fuzz && build/tests/fuzz/fuzz_hub_watch tests/fuzz/corpus/hub_watch
 */
#include "first.h"
#include "ph_watch.h"
#include "ph_util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define OWNERS 8
#define PER_OWNER 32

struct owner {
	struct ph_wsub *subs[PER_OWNER];
	char *uris[PER_OWNER];
	size_t n;
};

struct run {
	struct ph_watch *w;
	struct owner o[OWNERS];
	size_t total;
	bool drop_told; /* the callback drops the owner it is told about */
};

static char root[64];

static void
drop_all(struct run *r, struct owner *o)
{
	for (size_t i = 0; i < o->n; i++) {
		ph_watch_drop(r->w, o->subs[i]);
		free(o->uris[i]);
	}
	r->total -= o->n;
	o->n = 0;
}

static void
told(void *ctx, void *owner, const char *uri)
{
	struct run *r = ctx;
	struct owner *o = owner;
	bool has = false;
	for (size_t i = 0; i < o->n; i++)
		has = has || strcmp(o->uris[i], uri) == 0;
	if (!has)
		abort(); /* told about a URI it did not subscribe to (or after its drop) */
	if (r->drop_told)
		drop_all(r, o);
}

static void
add(struct run *r, uint8_t a, uint8_t b)
{
	struct owner *o = &r->o[a % OWNERS];
	char uri[32], *path = NULL;
	struct ph_wsub *s;
	if (o->n == PER_OWNER)
		return;
	snprintf(uri, sizeof uri, "u://%u", b % 16);
	/* a stream names each URI once (the worker removes repeats) */
	for (size_t i = 0; i < o->n; i++)
		if (strcmp(o->uris[i], uri) == 0)
			return;
	if (b & 0x80)
		path = ph_xasprintf("%s/d%u/f%u", root, (b >> 4) % 3, b % 5);
	s = ph_watch_add(r->w, o, uri, path, 2);
	free(path);
	if (s == NULL)
		return;
	o->subs[o->n] = s;
	o->uris[o->n++] = ph_xstrdup(uri);
	r->total++;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct run r;
	if (root[0] == '\0') {
		snprintf(root, sizeof root, "/tmp/ph-fuzz-watch-XXXXXX");
		if (mkdtemp(root) == NULL)
			abort();
		for (int d = 0; d < 3; d++) {
			char *p = ph_xasprintf("%s/d%d", root, d);
			mkdir(p, 0700);
			free(p);
		}
	}
	memset(&r, 0, sizeof r);
	if ((r.w = ph_watch_new()) == NULL)
		return 0;
	for (size_t i = 0; i + 2 < size; i += 3) {
		uint8_t op = data[i], a = data[i + 1], b = data[i + 2];
		char uri[32];
		r.drop_told = op & 0x10;
		switch (op % 4) {
		case 0:
		case 1:
			add(&r, a, b);
			break;
		case 2:
			drop_all(&r, &r.o[a % OWNERS]);
			break;
		case 3:
			snprintf(uri, sizeof uri, "u://%u", b % 16);
			ph_watch_announce(r.w, (a & 1) ? uri : "u://", told, &r);
			ph_watch_read(r.w, told, &r);
			break;
		}
		if (ph_watch_subs(r.w) != r.total)
			abort();
	}
	if (size > 0 && (data[0] & 0x40)) {
		/* the table freed with its subscriptions (the hub exiting) */
		ph_watch_free(r.w);
		for (size_t k = 0; k < OWNERS; k++)
			for (size_t i = 0; i < r.o[k].n; i++)
				free(r.o[k].uris[i]);
		return 0;
	}
	for (size_t k = 0; k < OWNERS; k++)
		drop_all(&r, &r.o[k]);
	if (ph_watch_subs(r.w) != 0 || ph_watch_dirs(r.w) != 0)
		abort();
	ph_watch_free(r.w);
	return 0;
}
