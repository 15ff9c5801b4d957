/* test_hub_watch.c: the hub's resource subscriptions (ph_hub_watch.c) on
 * real files in a temporary directory: a change reaches exactly the
 * subscriptions to that file, once per batch even when several events name
 * it, a file replaced by rename counts, one watch serves every file of a
 * directory, max_dirs is enforced, dropping the last subscription of a
 * directory frees its watch, an announcement reaches the subscribers of a
 * URI that is not a file, and a callback may drop its own owner's
 * subscriptions while the change is being delivered. */
#include "first.h"
#include "ph_watch.h"
#include "ph_util.h"
#include "tap.h"
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[256];

struct got {
	void *owner[64];
	char uri[64][128];
	size_t n;
	struct ph_watch *w;
	struct ph_wsub *drop_on_call; /* dropped by the callback when set */
};

static void
record(void *ctx, void *owner, const char *uri)
{
	struct got *g = ctx;
	if (g->n < 64) {
		g->owner[g->n] = owner;
		snprintf(g->uri[g->n], sizeof g->uri[g->n], "%s", uri);
		g->n++;
	}
	if (g->drop_on_call) {
		ph_watch_drop(g->w, g->drop_on_call);
		g->drop_on_call = NULL;
	}
}

static char *
path(const char *rel)
{
	return ph_xasprintf("%s/%s", tmpdir, rel);
}

static void
put(const char *rel, const char *text)
{
	char *p = path(rel);
	FILE *f = fopen(p, "w");
	if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0) {
		perror(p);
		exit(2);
	}
	free(p);
}

/* Waits for inotify's events (a short while) and delivers them to g. */
static void
settle(struct ph_watch *w, struct got *g)
{
	struct pollfd p = {ph_watch_fd(w), POLLIN, 0};
	g->n = 0;
	while (poll(&p, 1, 200) > 0)
		ph_watch_read(w, record, g);
}

int
main(void)
{
	struct ph_watch *w;
	struct got g;
	int A, B, C;
	char *pa, *pb, *pc, *sub;
	struct ph_wsub *a1, *b1, *c1, *x;
	snprintf(tmpdir, sizeof tmpdir, "/tmp/ph-hubwatch-XXXXXX");
	if (mkdtemp(tmpdir) == NULL)
		return 2;
	sub = path("sub");
	mkdir(sub, 0700);
	put("a", "1");
	put("b", "1");
	put("sub/c", "1");
	pa = path("a");
	pb = path("b");
	pc = path("sub/c");
	memset(&g, 0, sizeof g);
	w = ph_watch_new();
	ok(w != NULL, "an inotify table is made");
	if (w == NULL)
		return tap_done();
	g.w = w;
	a1 = ph_watch_add(w, &A, "file:///a", pa, 2);
	b1 = ph_watch_add(w, &B, "file:///a", pa, 2);
	ok(a1 && b1 && ph_watch_add(w, &B, "file:///b", pb, 2), "three subscriptions to two files");
	is_int(ph_watch_dirs(w), 1, "two files of one directory share one watch");
	is_int(ph_watch_subs(w), 3, "three subscriptions are counted");
	c1 = ph_watch_add(w, &C, "file:///sub/c", pc, 2);
	ok(c1 != NULL, "a file of a second directory takes a second watch");
	x = ph_watch_add(w, &C, "file:///elsewhere", "/tmp/x", 2);
	ok(x == NULL, "a third directory is over max_dirs");
	is_int(ph_watch_dirs(w), 2, "and is not watched");

	put("a", "2");
	settle(w, &g);
	is_int(g.n, 2, "a change to a reaches its two subscriptions");
	ok(g.n == 2 && g.owner[0] != g.owner[1] && strcmp(g.uri[0], "file:///a") == 0,
	   "once each, with its URI");
	put("b", "2");
	put("b", "3");
	settle(w, &g);
	ok(g.n >= 1 && g.n <= 2 && g.owner[0] == &B && strcmp(g.uri[0], "file:///b") == 0,
	   "b's change reaches only b's subscriber");
	put("sub/d", "new");
	settle(w, &g);
	is_int(g.n, 0, "a file nobody subscribed to reaches nobody");
	{
		char *tmp = path("sub/.c.swp");
		put("sub/.c.swp", "saved");
		rename(tmp, pc);
		free(tmp);
	}
	settle(w, &g);
	ok(g.n == 1 && g.owner[0] == &C, "a file replaced by rename (as editors save) counts");

	is_int(ph_watch_announce(w, "file:///a", record, &g), 2, "an announcement of a URI reaches its subscribers");
	x = ph_watch_add(w, &C, "app://counter", NULL, 2);
	ok(x != NULL, "a URI that is not a file needs no watch");
	g.n = 0;
	is_int(ph_watch_announce(w, "app://counter", record, &g), 1, "and is announced to its subscriber");
	is_int(ph_watch_announce(w, "app://none", record, &g), 0, "a URI nobody subscribed to reaches nobody");
	g.n = 0;
	g.drop_on_call = a1;
	ph_watch_announce(w, "file:///a", record, &g);
	is_int(g.n, 2, "a callback that drops a subscription of the URI being announced does not stop it");
	is_int(ph_watch_subs(w), 4, "and the dropped one is gone");
	ph_watch_drop(w, c1);
	is_int(ph_watch_dirs(w), 1, "the last subscription of a directory frees its watch");
	ph_watch_drop(w, x);
	ph_watch_free(w);
	ok(1, "the table is freed with its subscriptions");
	{
		char *cmd = ph_xasprintf("rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			perror(cmd);
		free(cmd);
	}
	free(pa);
	free(pb);
	free(pc);
	free(sub);
	return tap_done();
}
