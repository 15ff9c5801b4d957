/* fuzz_hub_session.c: libFuzzer harness for the hub's reader of session and
 * park messages (ph_hub_sessions_message, the production entry point), with
 * a reply socket as a worker sends it and, for park calls, a connection.
 * Whatever the input: no crash, no leak, the reply socket always taken, and
 * at most the bounded number of calls parked.
 *
 *   make -C build fuzz && build/tests/fuzz/fuzz_hub_session tests/fuzz/corpus/hub_session
 */
#include "first.h"
#include "ph_hub_session.h"
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
	/* the fd is taken whether the message is ours or not: close it if not */
	if (!ph_hub_sessions_message(t, (const char *)data, size, sp[1]))
		close(sp[1]);
	close(sp[0]);
	ph_hub_sessions_tick(t);
	if (ph_hub_sessions_parked(t) > 8)
		abort();
	return 0;
}
