/* ph_master.c: the prefork master. Forks workers that share the listening
 * socket, as many as the pool policy (ph_pool.c) wants: a fixed number
 * (static), or by demand (dynamic, ondemand), seen on the shared scoreboard
 * where each worker marks itself busy and idle and on the listening socket;
 * replaces a worker that dies (at once if it had served requests,
 * with a gentle back-off when new workers keep dying before serving), recycles
 * workers after max_requests (they exit 0 and are replaced), stops gracefully
 * on SIGTERM and reloads on SIGHUP by starting a new generation of workers
 * while the old one finishes what it is doing. The master never serves. */
#include "first.h"
#include "ph_auth.h"
#include "ph_features.h"
#include "ph_front.h"
#include "ph_hub.h"
#include "ph_otel_export.h"
#include "ph_listenq.h"
#include "ph_log.h"
#include "ph_metrics.h"
#include "ph_oauth.h"
#include "ph_otel.h"
#include "ph_otel_ring.h"
#include "ph_pool.h"
#include "ph_shared.h"
#include "ph_util.h"
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__SANITIZE_ADDRESS__)
#define PH_LEAK_CHECK 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PH_LEAK_CHECK 1
#endif
#endif
#ifdef PH_LEAK_CHECK
#include <sanitizer/lsan_interface.h>
#endif


/* The process names (comm, at most 15 bytes) of a master's processes, as
 * ps, top and pgrep -x see them; phantom-fcgi(8) lists them. */
#define PH_MASTER_NAME "phantom-master"
#define PH_WORKER_NAME "phantom-worker"
#define PH_HUB_NAME "phantom-hub"

struct slot {
	pid_t pid;            /* 0 = empty */
	unsigned gen;         /* generation the worker belongs to */
	int64_t started_us;
	int64_t respawn_at_us;/* when an empty slot of the current generation refills */
	int64_t term_at_us;   /* when SIGTERM was sent (0 = not) */
};

/* An idle worker of the current generation, at one look. */
struct idle {
	int64_t since_us;
	size_t slot;
};

struct master {
	struct ph_server *srv;
	const struct ph_run *run;
	struct slot *slots;
	size_t nslots;        /* capacity: current + draining generations */
	struct ph_pool pool;  /* how many workers the current generation has */
	struct idle *idle;    /* nslots entries, for each look */
	int64_t *since;       /* the same idle workers' times, for ph_pool_trim */
	int sfd;              /* the signals the master waits for (signalfd) */
	unsigned gen;
	volatile long long *board; /* shared served counters, one per slot */
	int64_t backoff_us;
	bool stopping;
	/* the hub: the channel workers hand streams over on ([0] the workers',
	 * [1] the hub's end; the master keeps both, so a restarted hub finds
	 * what was sent while none ran), its pid and when it was told to stop */
	int chan[2];
	pid_t hub;
	int64_t hub_term_at_us;
	int64_t drain_until_us; /* stopping: workers get SIGTERM then (0: sent) */
};

/* Ends a worker or the hub with rc. A child leaves with _exit (the
 * master's atexit handlers and stdio buffers are not its own), which skips
 * LeakSanitizer: a sanitizer build (--enable-sanitizers) runs its check
 * here first, so a leak in a worker is reported on stderr (the server log
 * tests/lib.sh reads) and the child exits with status 23 instead. */
static void __attribute__((noreturn))
child_exit(int rc)
{
#ifdef PH_LEAK_CHECK
	if (__lsan_do_recoverable_leak_check() != 0)
		rc = 23;
#endif
	_exit(rc);
}

static void
spawn(struct master *m, size_t i)
{
	pid_t pid;
	m->board[i] = 0;
	/* open before the fork: the worker may mark itself busy at once */
	ph_shared_cell_open((int)i + 1);
	pid = fork();
	if (pid < 0) {
		ph_log("error", "fork failed: %s; retrying", strerror(errno));
		ph_shared_cell_close((int)i + 1);
		m->slots[i].pid = 0;
		m->slots[i].respawn_at_us = ph_now_us() + 1000000;
		return;
	}
	if (pid == 0) {
		struct ph_server *srv = m->srv;
		int rc;
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		prctl(PR_SET_NAME, PH_WORKER_NAME); /* ps and pgrep tell it from the master */
		if (getppid() == 1)
			_exit(0); /* the master died before we got here */
		close(m->sfd);
		ph_served_counter = &m->board[i];
		ph_shared_set_owner((int)i + 1);
		ph_otel_ring_attach(i);
		rc = ph_fcgi_serve(&srv, m->run, false);
		child_exit(rc);
	}
	m->slots[i].pid = pid;
	m->slots[i].gen = m->gen;
	m->slots[i].started_us = ph_now_us();
	m->slots[i].respawn_at_us = 0;
	m->slots[i].term_at_us = 0;
}

/* Starts the hub; a hub that cannot start is retried by the caller. */
static void
spawn_hub(struct master *m)
{
	pid_t pid = fork();
	if (pid < 0) {
		ph_log("error", "fork of the hub failed: %s", strerror(errno));
		return;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		prctl(PR_SET_NAME, PH_HUB_NAME); /* ps and pgrep tell it from the workers */
		ph_shared_set_owner(PH_SHARED_OWNER_HUB);
		if (getppid() == 1)
			_exit(0);
		close(m->run->listen_fd); /* the hub never accepts */
		close(m->sfd);
		/* the workers' end (ph_hub_fd) stays open: the task supervisors
		 * the hub forks tell it of their changes on it */
		child_exit(ph_hub_run(m->srv, m->run, m->chan[1]));
	}
	m->hub = pid;
	m->hub_term_at_us = 0;
}

/* The hub died: the streams it held are gone with it; a new one starts at
 * once unless the server is stopping. */
static void
hub_died(struct master *m, int st)
{
	if (WIFSIGNALED(st))
		ph_log("warning", "hub %d killed by signal %d; its streams ended", (int)m->hub, WTERMSIG(st));
	else if (WEXITSTATUS(st) != 0 || !m->stopping)
		ph_log("warning", "hub %d exited with status %d", (int)m->hub, WEXITSTATUS(st));
	m->hub = 0;
	ph_shared_listeners_release(PH_SHARED_OWNER_HUB);
	if (!m->stopping)
		spawn_hub(m);
}

/* Logs the listen-stream slots given back for a worker that died holding
 * streams (it could not hand them to the hub). */
static void
released(pid_t pid, int n)
{
	if (n > 0)
		ph_log("notice", "worker %d held %d listen stream%s; slot%s given back", (int)pid, n,
		       n == 1 ? "" : "s", n == 1 ? "" : "s");
}

static size_t
live(const struct master *m)
{
	size_t n = 0;
	for (size_t i = 0; i < m->nslots; i++)
		if (m->slots[i].pid > 0)
			n++;
	return n;
}

static size_t
free_slot(struct master *m)
{
	for (size_t i = 0; i < m->nslots; i++)
		if (m->slots[i].pid == 0 && m->slots[i].respawn_at_us == 0)
			return i;
	return (size_t)-1;
}

static void
reap(struct master *m)
{
	for (;;) {
		int st;
		pid_t pid = waitpid(-1, &st, WNOHANG);
		if (pid <= 0)
			return;
		if (pid == m->hub) {
			hub_died(m, st);
			continue;
		}
		if (ph_otel_reaped(pid, m->stopping, m->run->listen_fd))
			continue; /* the telemetry exporter (another started) */
		if (ph_oauth_reaped(pid))
			continue; /* the key fetch (it logged its own failure) */
		/* a pid in no slot: an orphan of one of ours, reaped (above) */
		for (size_t i = 0; i < m->nslots; i++) {
			struct slot *s = &m->slots[i];
			long long served;
			if (s->pid != pid)
				continue;
			served = m->board[i];
			s->pid = 0;
			ph_shared_cell_close((int)i + 1);
			released(pid, ph_shared_listeners_release((int)i + 1));
			if (WIFSIGNALED(st))
				ph_log("warning", "worker %d killed by signal %d after %lld requests", (int)pid,
				       WTERMSIG(st), served);
			else if (WEXITSTATUS(st) != 0)
				ph_log("warning", "worker %d exited with status %d after %lld requests",
				       (int)pid, WEXITSTATUS(st), served);
			if (m->stopping || s->gen != m->gen || s->term_at_us != 0) {
				s->respawn_at_us = 0;
				break;
			}
			if (served > 0 || (WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
				/* it worked for a while, or was recycled: replace at once */
				m->backoff_us = 0;
				s->respawn_at_us = ph_now_us();
			} else {
				/* died before serving anything: a start-up crash loop */
				m->backoff_us = m->backoff_us ? m->backoff_us * 2 : 100000;
				if (m->backoff_us > 5000000)
					m->backoff_us = 5000000;
				s->respawn_at_us = ph_now_us() + m->backoff_us;
				ph_log("warning", "worker died before serving; next start in %lld ms",
				       (long long)(m->backoff_us / 1000));
			}
			break;
		}
	}
}

/* Asks worker slot i to finish what it serves and exit (it is not
 * replaced); its cell closes, so it takes no more connections in a row. */
static void
retire(struct master *m, size_t i, int64_t now)
{
	struct slot *s = &m->slots[i];
	s->respawn_at_us = 0;
	ph_shared_cell_close((int)i + 1);
	if (s->pid > 0 && s->term_at_us == 0) {
		kill(s->pid, SIGTERM);
		s->term_at_us = now;
	}
}

static void
terminate_generation(struct master *m, unsigned gen_below)
{
	int64_t now = ph_now_us();
	for (size_t i = 0; i < m->nslots; i++)
		if (m->slots[i].gen < gen_below)
			retire(m, i, now);
}

/* Takes the pool policy c (a reload's, or the start's), its maximum held
 * to half the slots: the other half is for a generation that drains. */
static void
pool_policy(struct master *m, const struct ph_pool_conf *c)
{
	long long cap = (long long)m->nslots / 2;
	ph_pool_init(&m->pool, c, m->run->workers, ph_now_us());
	if (m->pool.c.max < 1) /* workers: 0 or 1 means one process only at start */
		m->pool.c.max = m->pool.c.start = 1;
	if (m->pool.c.max > cap) {
		ph_log("warning", "workers.max %lld: at most %lld until a restart", m->pool.c.max, cap);
		m->pool.c.max = cap;
	}
	if (m->pool.c.start > m->pool.c.max)
		m->pool.c.start = m->pool.c.max;
	ph_metrics_set_pool_max(m->pool.c.max);
}

static void
reload(struct master *m)
{
	struct ph_server *n = ph_server_load(m->run->conf_path);
	char **names = NULL;
	size_t changed;
	if (n == NULL) {
		ph_log("error", "reload failed: the running configuration keeps serving");
		return;
	}
	changed = ph_conf_unreloadable_changes(m->srv->conf, n->conf, &names);
	for (size_t i = 0; i < changed; i++) {
		ph_log("warning", "reload: '%s' changed; it takes effect on restart", names[i]);
		free(names[i]);
	}
	free(names);
	/* listen streams a worker holds (the hub could not take them) announce
	 * what changed before their worker ends */
	ph_catalog_announce(m->srv, n);
	ph_server_free(m->srv);
	m->srv = n;
	m->gen++;
	if (m->run->workers == 0)
		pool_policy(m, &n->conf->pool);
	/* new generation first, so the socket always has someone accepting
	 * (ondemand starts none: the master forks when a connection waits) */
	for (long long k = 0; k < m->pool.c.start; k++) {
		size_t i = free_slot(m);
		if (i == (size_t)-1) {
			ph_log("warning", "reload: no free worker slot; waiting for old workers");
			break;
		}
		spawn(m, i);
	}
	terminate_generation(m, m->gen);
	ph_metrics_set_generation(m->gen);
	ph_metrics_reloaded();
	if (m->hub > 0)
		kill(m->hub, SIGHUP); /* it reloads too, and announces what changed */
	ph_log("notice", "configuration reloaded; generation %u started", m->gen);
}

/* The hub holds a connection per stream: the soft open-file limit goes as
 * far as the hard one allows, and the figure is logged. */
static void
raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return;
	if (rl.rlim_cur < rl.rlim_max) {
		rlim_t was = rl.rlim_cur;
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
			rl.rlim_cur = was;
	}
	ph_log("notice", "open files limit: %llu (listen streams are bounded by it)",
	       (unsigned long long)rl.rlim_cur);
}

/* Sizes the master for srv (kept in m: a reload replaces it, the end of
 * ph_master_run frees it) and run (borrowed): the wanted worker count, the
 * slots and the shared scoreboard. Returns 0, or -1 after logging when the
 * scoreboard cannot be mapped. */
static int
master_init(struct master *m, struct ph_server *srv, const struct ph_run *run)
{
	memset(m, 0, sizeof *m);
	m->srv = srv;
	m->run = run;
	m->sfd = -1;
	{
		size_t max = (size_t)(run->workers > 0 ? run->workers : srv->conf->pool.max);
		/* room for the current generation and draining ones, and for a
		 * reload that raises the maximum; each slot is an owner number of
		 * the scoreboard */
		m->nslots = max * 4 > 64 ? max * 4 : 64;
		if (m->nslots > PH_SHARED_OWNERS - 1)
			m->nslots = PH_SHARED_OWNERS - 1;
	}
	m->slots = ph_xcalloc(m->nslots, sizeof *m->slots);
	m->idle = ph_xcalloc(m->nslots, sizeof *m->idle);
	m->since = ph_xcalloc(m->nslots, sizeof *m->since);
	pool_policy(m, &srv->conf->pool);
	ph_metrics_set_listen_fd(run->listen_fd);
	m->board = mmap(NULL, m->nslots * sizeof *m->board, PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (m->board == MAP_FAILED) {
		ph_log("error", "mmap: %s", strerror(errno));
		return -1;
	}
	/* a worker's spans go to the exporter through a ring of its slot's
	 * (on failure, logged, through the channel) */
	if (ph_otel_on && ph_fast_paths)
		(void)ph_otel_rings_create(m->nslots, (size_t)ph_otel.worker_buffer);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, m->chan) != 0) {
		ph_log("error", "the hub's channel: %s", strerror(errno));
		return -1;
	}
	ph_hub_fd = m->chan[0];
	{
		/* room for bursts of hand-overs (the kernel caps it at wmem_max) */
		int sz = 4 << 20;
		setsockopt(m->chan[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
		setsockopt(m->chan[1], SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
	}
	raise_nofile();
	return 0;
}

/* Blocks the signals the master waits for and returns a signalfd that
 * reads them (-1 after logging): SIGCHLD, the stop signals, SIGHUP, SIGUSR2
 * (the pool's status) and SIGURG (a worker took one of the last idle
 * places). SIGPIPE is ignored. */
static int
master_signals(void)
{
	static const int sigs[] = {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2, SIGURG};
	struct sigaction sa;
	sigset_t set;
	int fd;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sigemptyset(&set);
	for (size_t i = 0; i < PH_ARRAY_LEN(sigs); i++)
		sigaddset(&set, sigs[i]);
	sigprocmask(SIG_BLOCK, &set, NULL);
	fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (fd < 0)
		ph_log("error", "signalfd: %s", strerror(errno));
	return fd;
}

/* Refills the current generation's empty slots whose time has come, and
 * SIGKILLs workers still running past the shutdown timeout after their
 * SIGTERM. Returns the earliest time something is due, at most wake. */
static int64_t
tend_slots(struct master *m, int64_t now, int64_t wake)
{
	for (size_t i = 0; i < m->nslots; i++) {
		struct slot *s = &m->slots[i];
		if (!m->stopping && s->pid == 0 && s->gen == m->gen && s->respawn_at_us > 0) {
			if (s->respawn_at_us <= now)
				spawn(m, i);
			else if (s->respawn_at_us < wake)
				wake = s->respawn_at_us;
		}
		if (s->pid > 0 && s->term_at_us > 0) {
			int64_t dl = s->term_at_us + m->run->shutdown_timeout * 1000000;
			if (dl <= now) {
				ph_log("warning", "worker %d did not finish in %llds; killing it", (int)s->pid,
				       m->run->shutdown_timeout);
				kill(s->pid, SIGKILL);
				s->term_at_us = INT64_MAX / 2;
			} else if (dl < wake) {
				wake = dl;
			}
		}
	}
	if (m->hub > 0 && m->hub_term_at_us > 0) {
		int64_t dl = m->hub_term_at_us + m->run->shutdown_timeout * 1000000;
		if (dl <= now) {
			ph_log("warning", "the hub did not finish in %llds; killing it", m->run->shutdown_timeout);
			kill(m->hub, SIGKILL);
			m->hub_term_at_us = INT64_MAX / 2;
		} else if (dl < wake) {
			wake = dl;
		}
	}
	return wake;
}

/* True when a connection waits on the listening socket fd. */
static bool
accept_waiting(int fd)
{
	struct pollfd p = {fd, POLLIN, 0};
	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

/* Looks at the current generation: its workers, busy and idle (m->idle
 * gets the idle ones, idle longest first), and whether connections wait
 * with none idle. Returns how many are idle. */
static size_t
look(struct master *m, struct ph_pool_view *v)
{
	size_t n = 0;
	memset(v, 0, sizeof *v);
	for (size_t i = 0; i < m->nslots; i++) {
		struct slot *s = &m->slots[i];
		int64_t since;
		if (s->gen != m->gen || s->term_at_us != 0 || (s->pid == 0 && s->respawn_at_us == 0))
			continue;
		v->total++;
		if (s->pid == 0)
			continue; /* refilled soon */
		if (ph_shared_cell_busy((int)i + 1, &since)) {
			v->busy++;
		} else {
			m->idle[n].since_us = since;
			m->idle[n++].slot = i;
		}
	}
	v->idle = (long long)n;
	if (n == 0 && accept_waiting(m->run->listen_fd)) {
		long long backlog;
		v->waiting = true;
		if (ph_listen_queue(m->run->listen_fd, &v->queue, &backlog) != 0 || v->queue < 1)
			v->queue = 1;
	}
	/* few entries, mostly in order already */
	for (size_t i = 1; i < n; i++)
		for (size_t k = i; k > 0 && m->idle[k].since_us < m->idle[k - 1].since_us; k--) {
			struct idle t = m->idle[k];
			m->idle[k] = m->idle[k - 1];
			m->idle[k - 1] = t;
		}
	return n;
}

/* Sizes the current generation by demand (ph_pool.c): forks what the pool
 * wants, ends idle workers past their time. Lowers *wake to when something
 * is next due. Returns true when the master should wake for a connection
 * on the listening socket (none idle, room to fork). */
static bool
tend_pool(struct master *m, int64_t now, int64_t *wake)
{
	struct ph_pool_view v;
	size_t nidle, ends, k;
	long long forks, made = 0;
	if (m->stopping && m->drain_until_us == 0) {
		/* stopping: no fork; while draining (http.drain_ms) it still serves */
		ph_shared_pool_watch((int)m->nslots, 0);
		return false;
	}
	ph_shared_pool_rearm(); /* a worker taking a place after this wakes us again */
	nidle = look(m, &v);
	ph_pool_note_full(&m->pool, &v, now);
	forks = ph_pool_forks(&m->pool, &v, now, wake);
	for (; made < forks; made++) {
		size_t i = free_slot(m);
		if (i == (size_t)-1)
			break;
		spawn(m, i);
	}
	ph_pool_forked(&m->pool, made);
	for (k = 0; k < nidle; k++)
		m->since[k] = m->idle[k].since_us;
	ends = made > 0 ? 0 : ph_pool_trim(&m->pool, m->since, nidle, now, wake);
	for (k = 0; k < ends; k++)
		retire(m, m->idle[k].slot, now);
	v.total += made - (long long)ends;
	v.idle += made - (long long)ends;
	ph_shared_pool_watch((int)m->nslots, ph_pool_wake_below(&m->pool, &v, now));
	if (nidle > 0)
		ph_pool_check_memory(&m->pool, m->slots[m->idle[0].slot].pid, now);
	return m->pool.c.mode != PH_POOL_STATIC && v.idle == 0 && !v.waiting && v.total < m->pool.c.max;
}

/* Waits until wake for a signal (then handled by the caller from sfd) or,
 * when watch, a connection on the listening socket. Returns true when
 * signals are there to read. */
static bool
wait_event(struct master *m, int64_t now, int64_t wake, bool watch)
{
	struct pollfd pf[2] = {{m->sfd, POLLIN, 0}, {m->run->listen_fd, POLLIN, 0}};
	int64_t ms = wake > now ? (wake - now + 999) / 1000 : 0;
	int rc = poll(pf, watch ? 2 : 1, ms > 1000 ? 1000 : (int)ms);
	return rc > 0 && (pf[0].revents & POLLIN);
}

/* The end of a graceful stop: the workers finish what they serve, and the
 * hub ends every stream with its result before the connection closes. */
static void
stop_all(struct master *m)
{
	terminate_generation(m, m->gen + 1);
	if (m->hub > 0) {
		kill(m->hub, SIGTERM);
		m->hub_term_at_us = ph_now_us();
	}
}

/* Acts on one signal: SIGCHLD reaps, SIGTERM, SIGINT and SIGUSR1 start a
 * graceful stop, SIGHUP reloads (both once stopping, ignored), SIGUSR2
 * logs the pool's state. */
static void
on_signal(struct master *m, int sig)
{
	switch (sig) {
	case SIGCHLD:
		reap(m);
		break;
	case SIGTERM:
	case SIGINT:
	case SIGUSR1:
		if (!m->stopping) {
			long long drain = m->srv->conf->http.drain_ms;
			m->stopping = true;
			ph_metrics_set_stopping(true);
			if (drain > 0 && sig == SIGTERM) {
				/* health answers 503 while the workers still serve, so a
				 * load balancer moves away before anything is refused */
				ph_log("notice", "stopping: serving %lld ms more with health 503", drain);
				m->drain_until_us = ph_now_us() + drain * 1000;
			} else {
				ph_log("notice", "stopping: letting %zu workers finish", live(m));
				stop_all(m);
			}
		}
		break;
	case SIGHUP:
		if (!m->stopping)
			reload(m);
		break;
	case SIGUSR2:
		ph_pool_log_status();
		break;
	default: /* SIGURG: the next look sees why */
		break;
	}
}

/* Reads the signals waiting on m->sfd and acts on each. */
static void
take_signals(struct master *m)
{
	struct signalfd_siginfo si;
	while (read(m->sfd, &si, sizeof si) == (ssize_t)sizeof si)
		on_signal(m, (int)si.ssi_signo);
}

/* Publishes the current generation's live workers (the metrics of a
 * process without the scoreboard read it). */
static void
publish_live(const struct master *m)
{
	size_t current = 0;
	for (size_t i = 0; i < m->nslots; i++)
		if (m->slots[i].pid > 0 && m->slots[i].gen == m->gen && m->slots[i].term_at_us == 0)
			current++;
	ph_metrics_set_workers((long long)current);
}

int
ph_master_run(struct ph_server *srv, const struct ph_run *run)
{
	struct master m;
	static const char *const modes[] = {"static", "dynamic", "ondemand"};

	if (master_init(&m, srv, run) != 0 || (m.sfd = master_signals()) < 0)
		return 1;
	/* the program's name stays with a single process; a master names
	 * itself, so ps, top and pgrep -x tell it from its hub and workers
	 * (whose names they set as they start) */
	prctl(PR_SET_NAME, PH_MASTER_NAME);
	/* the keys of auth.mode oauth are fetched on schedule from here */
	ph_oauth_master_mode();
	/* what our children leave behind (task supervisors of a hub that
	 * died, a handler a worker started) comes back to us, not to PID 1,
	 * which in a container without an init would leave it a zombie:
	 * reap() takes every child, known or not */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
		ph_log("warning", "the master cannot be the subreaper of its processes: %s", strerror(errno));
	/* the keys read (and a fetch started if they are due) before the
	 * first fork: the workers start with them */
	(void)ph_oauth_tick(ph_auth_oauth(m.srv), ph_now_us());
	spawn_hub(&m);
	ph_otel_spawn(true, run->listen_fd);
	for (long long i = 0; i < m.pool.c.start; i++)
		spawn(&m, (size_t)i);
	ph_log("notice", "master %d started %lld workers (%s pool, at most %lld) and hub %d", (int)getpid(),
	       m.pool.c.start, modes[m.pool.c.mode], m.pool.c.max, (int)m.hub);

	for (;;) {
		int64_t now = ph_now_us();
		int64_t wake = tend_slots(&m, now, now + 1000000);
		bool watch = tend_pool(&m, now, &wake);
		int64_t keys = m.stopping ? wake : ph_oauth_tick(ph_auth_oauth(m.srv), now);
		publish_live(&m);
		if (m.drain_until_us > 0) {
			if (now >= m.drain_until_us) {
				m.drain_until_us = 0;
				ph_log("notice", "stopping: letting %zu workers finish", live(&m));
				stop_all(&m);
				continue;
			}
			if (m.drain_until_us < wake)
				wake = m.drain_until_us;
		}
		/* the exporter goes last: it sends what the others made */
		if (m.stopping && live(&m) == 0 && m.hub == 0 && !ph_oauth_fetching() &&
		    !ph_otel_stop_wait())
			break;
		if (keys < wake)
			wake = keys;
		if (wait_event(&m, now, wake, watch))
			take_signals(&m);
	}
	munmap((void *)m.board, m.nslots * sizeof *m.board);
	close(m.chan[0]);
	close(m.chan[1]);
	close(m.sfd);
	free(m.slots);
	free(m.idle);
	free(m.since);
	ph_server_free(m.srv);
	ph_log("notice", "master %d exiting", (int)getpid());
	return 0;
}
