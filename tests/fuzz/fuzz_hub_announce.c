/* fuzz_hub_announce.c: libFuzzer harness for what a hub does with a message
 * from the cluster's announcement channel (ph_hub_cluster_message, the
 * production entry point hiredis calls), once it opened: the input's JSON
 * is sealed under the channel's name as another host would seal it, so
 * every message reaches the handler (list_changed kinds, resources/updated
 * URIs from a watcher or not, task records, a session ended elsewhere, a
 * session's subscriptions changed or its GET stream taken elsewhere). The
 * hub has its sessions, its watcher and a cluster whose connection is not
 * up (what the handler asks of Redis fails at once, as while it is down).
 *
 * The first byte says what is left as the input gave it: bit 0 the expiry
 * "x" (else one minute ahead, so the message is not dropped as replayed),
 * bit 1 the origin "o" (else another host's tag), bit 2 the bytes are also
 * given unsealed (they must not open). The rest is the document; bytes
 * that are no JSON object are sealed as they are.
 *
 * Invariants: no crash, no leak; an announcement never opens a stream or
 * makes a session hold state on this hub.
 *
 *   make -C build fuzz && build/tests/fuzz/fuzz_hub_announce tests/fuzz/corpus/hub_announce
 */
#include "first.h"
#include "ph_hub_int.h"
#include "ph_hub_cluster.h"
#include "ph_hub_session.h"
#include "ph_hub_state.h"
#include "ph_cluster.h"
#include "ph_json.h"
#include "ph_log.h"
#include "ph_state.h"
#include "ph_util.h"
#include "ph_watch.h"
#include <signal.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifdef PH_HAVE_HIREDIS
static struct hub h;
static char chan[PH_CLUSTER_KEY_MAX];

static void
init(void)
{
	static struct ph_state_conf sc;
	static struct ph_cluster_conf cc;
	static struct ph_config conf;
	static struct ph_server srv;
	if (sodium_init() < 0)
		abort();
	signal(SIGPIPE, SIG_IGN);
	memset(sc.key, 7, sizeof sc.key);
	cc.host = "fuzz";
	cc.prefix = "f:";
	cc.timeout_ms = 100;
	cc.lease_ms = 1000;
	cc.backoff_max_ms = 1000;
	conf.request_state = &sc;
	conf.cluster = &cc;
	conf.sessions.max_terminated = 64;
	conf.sessions.max_parked = 8;
	conf.sessions.max_state = 8;
	conf.sessions.max_subscriptions = 4;
	conf.sessions.state_idle = 1;
	conf.sessions.replay = 4;
	conf.subscriptions.max_queue = 65536;
	ph_cluster_configure(&conf);
	srv.conf = &conf;
	h.srv = &srv;
	h.ep = epoll_create1(EPOLL_CLOEXEC);
	h.watch = ph_watch_new();
	h.sessions = ph_hub_sessions_new(&srv);
	h.cluster = ph_hub_cluster_new(&h);
	if (h.cluster == NULL)
		abort();
	/* the channel's name as ph_hub_cluster.c derives it (kind "a") */
	ph_cluster_key("a", "announce", 8, chan);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	struct json_object *doc = NULL;
	const char *plain = (const char *)data + 1;
	size_t plen = size ? size - 1 : 0, blen;
	unsigned char *box, flags;
	if (!ready) {
		init();
		ready = true;
	}
	if (size == 0)
		return 0;
	flags = data[0];
	if (ph_json_parse(plain, plen, 16, &doc) && json_object_is_type(doc, json_type_object)) {
		if (!(flags & 1))
			json_object_object_add(doc, "x", json_object_new_int64(ph_now_us() / 1000000 + 60));
		if (!(flags & 2))
			json_object_object_add(doc, "o", json_object_new_string("0123abcd"));
		plain = json_object_to_json_string_length(doc, JSON_C_TO_STRING_PLAIN, &plen);
	}
	box = ph_cluster_seal(chan, plain, plen, &blen);
	ph_hub_cluster_message(h.cluster, chan, (const char *)box, blen);
	free(box);
	json_object_put(doc);
	if (flags & 4)
		ph_hub_cluster_message(h.cluster, chan, (const char *)data + 1, size - 1);
	if (h.n != 0 || ph_hub_states_count(ph_hub_sessions_states(h.sessions)) != 0)
		abort();
	return 0;
}
#else
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	(void)data, (void)size;
	return 0; /* no cluster: without hiredis */
}
#endif
