/* fuzz_hub_session.c: libFuzzer harness for the hub's reader of session and
 * park messages (ph_hubmsg_parse and ph_hub_sessions_message, the production
 * entry points), with a reply socket as a worker sends it and, for park
 * calls, a connection.
 * Whatever the input: no crash, no leak, the reply socket always taken, and
 * at most the bounded number of calls parked.
 *
 *   make -C build fuzz && build/tests/fuzz/fuzz_hub_session tests/fuzz/corpus/hub_session
 */
#include "first.h"
#include "ph_hub_session.h"
#include "ph_hubmsg.h"
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ph_config conf;
	static struct ph_server srv;
	static struct ph_hub_sessions *t;
	struct ph_hubmsg m;
	int sp[2];
	if (t == NULL) {
		conf.sessions.max_terminated = 64;
		conf.sessions.max_parked = 8;
		conf.sessions.park_timeout_ms = 0; /* every tick ends what was parked */
		conf.sessions.max_state = 8;
		conf.sessions.max_subscriptions = 4;
		conf.sessions.state_idle = 1;
		conf.sessions.replay = 4;
		srv.conf = &conf;
		signal(SIGPIPE, SIG_IGN); /* as in the hub: a closed peer is an error, not a signal */
		t = ph_hub_sessions_new(&srv);
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) != 0)
		return 0;
	/* read as the hub reads it (ph_hubmsg_parse); the fd is taken by the
	 * handler, and closed here when the message is not the sessions' */
	if (ph_hubmsg_parse((const char *)data, size, ph_hubmsg_depth(64), &m) && m.type >= PH_HUBMSG_SESSION_CHECK &&
	    m.type <= PH_HUBMSG_PARK_ANSWER)
		ph_hub_sessions_message(t, &m, sp[1]);
	else
		close(sp[1]);
	ph_hubmsg_free(&m);
	close(sp[0]);
	ph_hub_sessions_tick(t);
	if (ph_hub_sessions_parked(t) > 8)
		abort();
	return 0;
}
