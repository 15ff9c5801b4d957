/* test_hub_authz.c: subscriptions.authorize asked by the hub
 * (ph_hub_authz.c) without a hub. An update reaching 10,000 owners (the
 * listen streams the hub is built for), answered by a C handler in the
 * hub (which sees the call's kind as PHANTOM_KIND_SUBSCRIPTION): each
 * owner is told exactly what the handler allows of what changed for it, once; owners forgotten before (and one while another is told)
 * are told nothing; and what it cost, counted in owners compared by the
 * lookups: a few per owner, where a scan of every owner for each made it
 * grow with their number (about 10^8 for 10,000). Then an exec handler
 * with max_authorize 2: never more than two run, and who waited first is
 * asked first. */
#include "first.h"
#include "ph_hub_authz.c" /* its struct, to count and to look at the queues */
#include "ph_build.h"
#include "ph_conf.h"
#include "tap.h"
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define OWNERS 10000

/* An owner as the hub has one: a stream, here what it was told. */
struct stream {
	int told;              /* times fn was called for it */
	char allowed[64];      /* the last allowed list, as JSON */
	struct stream *forget; /* forgotten when this one is told (NULL: none) */
};

static struct ph_hub_authz *A;

static void
told(void *ctx, void *owner, struct json_object *allowed)
{
	struct stream *s = owner;
	(void)ctx;
	s->told++;
	snprintf(s->allowed, sizeof s->allowed, "%s", json_object_to_json_string_ext(allowed, JSON_C_TO_STRING_PLAIN));
	if (s->forget)
		ph_hub_authz_forget(A, s->forget);
}

/* Calls of even_items that saw another kind than PHANTOM_KIND_SUBSCRIPTION. */
static size_t other_kinds;

/* The handler: allows item://N for an even N (tests/modules/testmod.c's
 * even_items, linked in); fails a kind other than subscription, as
 * phantom.h tells a handler to fail a kind it does not know. */
static phantom_result *
even_items(phantom_call *c, void *u)
{
	struct json_object *uris = NULL, *ok, *out;
	phantom_result *res;
	(void)u;
	if (phantom_call_kind_id(c) != PHANTOM_KIND_SUBSCRIPTION) {
		other_kinds++;
		return NULL;
	}
	ok = json_object_new_array();
	out = json_object_new_object();
	res = phantom_result_new();
	json_object_object_get_ex(phantom_call_arguments(c), "uris", &uris);
	for (size_t i = 0; i < json_object_array_length(uris); i++) {
		struct json_object *uri = NULL;
		const char *s;
		if (json_object_object_get_ex(json_object_array_get_idx(uris, i), "uri", &uri) &&
		    (s = json_object_get_string(uri)) != NULL && strncmp(s, "item://", 7) == 0 &&
		    atoll(s + 7) % 2 == 0)
			json_object_array_add(ok, json_object_new_string(s));
	}
	json_object_object_add(out, "allowed", ok);
	phantom_result_structured_take(res, out);
	return res;
}

static struct ph_server *
make_server(const char *yaml)
{
	struct ph_conf_problems p = {0};
	struct ph_config *c = ph_conf_load_buf("t.yaml", ".", yaml, strlen(yaml), &p);
	struct ph_server *s = c ? ph_server_new(c, &p) : NULL;
	for (size_t i = 0; i < p.n; i++)
		printf("# %s\n", p.v[i]);
	ph_conf_problems_free(&p);
	if (s == NULL) {
		printf("Bail out! cannot build a server from: %s\n", yaml);
		exit(1);
	}
	return s;
}

/* Tells A that item://2i and item://2i+1 (twice: taken once) changed for
 * each owner i of n. */
static void
update_all(struct stream *v, size_t n)
{
	char uri[40];
	for (size_t i = 0; i < n; i++) {
		snprintf(uri, sizeof uri, "item://%zu", 2 * i);
		ph_hub_authz_updated(A, &v[i], NULL, NULL, uri, told, NULL);
		snprintf(uri, sizeof uri, "item://%zu", 2 * i + 1);
		ph_hub_authz_updated(A, &v[i], NULL, NULL, uri, told, NULL);
		ph_hub_authz_updated(A, &v[i], NULL, NULL, uri, told, NULL);
	}
}

/* One update reaching OWNERS owners, a C handler answering in the hub. */
static void
module_tests(void)
{
	struct ph_server *srv = make_server("server: {name: t, version: \"1\"}\n"
					    "tools: [{name: t, exec: [/bin/true]}]\n");
	struct ph_catalog *hook = ph_xcalloc(1, sizeof *hook);
	struct stream *v = ph_xcalloc(OWNERS, sizeof *v);
	unsigned long long cost, forgotten = 0;
	size_t right = 0, wrong = 0, silent = 0;
	char want[64];

	hook->name = ph_xstrdup("subscriptions.authorize");
	hook->h.kind = PH_HANDLER_C;
	hook->h.fn = even_items;
	srv->conf->registry->sub_authorize = hook;
	A = ph_hub_authz_new(srv);

	/* every 1000th owner goes before its check; every 1000th + 1, when
	 * told, forgets the owner after it, which waits behind it */
	for (size_t i = 1; i + 1 < OWNERS; i += 1000)
		v[i].forget = &v[i + 1];
	update_all(v, OWNERS);
	for (size_t i = 0; i < OWNERS; i += 1000)
		ph_hub_authz_forget(A, &v[i]);
	is_int(A->n, OWNERS - OWNERS / 1000, "%d owners wait, those forgotten gone", OWNERS - OWNERS / 1000);
	ph_hub_authz_tick(A);
	cost = A->compared;
	for (size_t i = 0; i < OWNERS; i++) {
		bool gone = i % 1000 == 0 || i % 1000 == 2;
		snprintf(want, sizeof want, "[\"item:\\/\\/%zu\"]", 2 * i);
		if (gone) {
			forgotten++;
			silent += v[i].told == 0;
		} else if (v[i].told == 1 && strcmp(v[i].allowed, want) == 0) {
			right++;
		} else if (wrong++ == 0) {
			printf("# owner %zu: told %d times, last %s\n", i, v[i].told, v[i].allowed);
		}
	}
	is_int(right, OWNERS - forgotten, "each owner told once, of its even item only (%zu)", right);
	is_int(wrong, 0, "no owner told twice or wrongly");
	is_int(silent, forgotten, "the %llu owners forgotten (10 of them while another was told) told nothing",
	       forgotten);
	is_int(A->n, 0, "every owner answered is gone");
	is_int(other_kinds, 0, "the handler saw PHANTOM_KIND_SUBSCRIPTION on every call");
	printf("# one update reaching %d owners (3 changes each): %llu owners compared, %.2f per owner\n", OWNERS,
	       cost, (double)cost / OWNERS);
	/* a scan per lookup compared about 10^8; hashed, a few per owner */
	ok(cost <= 8ULL * OWNERS, "the lookups compared %llu owners, at most 8 per owner", cost);

	/* again, with the owners indexed from the first round gone: the same */
	for (size_t i = 0; i < OWNERS; i++)
		v[i] = (struct stream){0};
	A->compared = 0;
	update_all(v, OWNERS);
	ph_hub_authz_tick(A);
	for (right = 0; right < OWNERS && v[right].told == 1; right++)
		;
	is_int(right, OWNERS, "a second update: every owner told once again");
	ok(A->compared <= 8ULL * OWNERS, "  comparing %llu owners", A->compared);

	ph_hub_authz_free(A);
	ph_server_free(srv);
	free(v);
}

/* An exec handler, subscriptions.max_authorize 2: five owners. */
static void
exec_tests(void)
{
	char dir[] = "/tmp/ph-authz-test.XXXXXX", *yaml, *path;
	struct ph_server *srv;
	struct stream v[5];
	size_t order[5], norder = 0, most = 0, loops;
	FILE *f;

	memset(v, 0, sizeof v);
	if (mkdtemp(dir) == NULL)
		return;
	path = ph_xasprintf("%s/authz.sh", dir);
	f = fopen(path, "w");
	fprintf(f, "#!/bin/sh\ncat >/dev/null\nsleep 0.1\necho '{\"allowed\":[]}'\n");
	fclose(f);
	chmod(path, 0755);
	yaml = ph_xasprintf("server: {name: t, version: \"1\"}\n"
			    "subscriptions: {max_authorize: 2, authorize: {exec: [%s], timeout_ms: 5000}}\n", path);
	srv = make_server(yaml);
	A = ph_hub_authz_new(srv);
	for (size_t i = 0; i < 5; i++)
		ph_hub_authz_updated(A, &v[i], NULL, NULL, "item://1", told, NULL);
	for (loops = 0; loops < 1000; loops++) {
		struct pollfd p = {ph_hub_authz_fd(A), POLLIN, 0};
		size_t done = 0;
		ph_hub_authz_tick(A);
		if (A->running.n > most)
			most = A->running.n;
		/* the owners seen running, in the order they started */
		for (struct owner *o = A->running.head; o != NULL; o = o->next) {
			size_t k = (size_t)((struct stream *)o->owner - v), j;
			for (j = 0; j < norder && order[j] != k; j++)
				;
			if (j == norder && norder < 5)
				order[norder++] = k;
		}
		for (size_t i = 0; i < 5; i++)
			done += v[i].told == 1;
		if (done == 5)
			break;
		poll(&p, 1, 20);
		ph_hub_authz_events(A);
	}
	is_int(norder, 5, "exec: the five owners were asked");
	ok(norder == 5 && order[0] == 0 && order[1] == 1 && order[2] == 2 && order[3] == 3 && order[4] == 4,
	   "exec: who waited first was asked first");
	is_int(most, 2, "exec: never more than max_authorize (2) at once");
	is_int(A->n, 0, "exec: every owner answered is gone");
	ph_hub_authz_free(A);
	ph_server_free(srv);
	unlink(path);
	rmdir(dir);
	free(path);
	free(yaml);
}

int
main(void)
{
	module_tests();
	exec_tests();
	return tap_done();
}
