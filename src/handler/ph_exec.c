/* ph_exec.c: fork+execve with pipes, limits, a timeout and a poll loop.
 *
 * The child gets its own process group so that a timeout or a cancellation
 * reaches everything it started. The leader's exit is watched through a
 * pidfd (or, on kernels without one, by polling every 50 ms): as soon as
 * it exits the rest of the group is killed, so a background process that
 * keeps a pipe open cannot hold the request. A process that left the group
 * (setsid) can hold a pipe for at most the exit grace; where the server is
 * a child subreaper, it is then our child and the sweep after the run kills
 * it.
 *
 * The group is only ever signalled while its leader is not yet reaped: the
 * leader's exit is seen with waitid(WNOWAIT), and an unreaped zombie keeps
 * its pid, so the group id cannot have been given to an unrelated process
 * group (the server often runs as root). */
#include "first.h"
#include "ph_exec.h"
#include "ph_run.h"
#include "ph_server.h"
#include "ph_util.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* Longest fd-3 or stderr line kept; longer ones are cut. */
#define LINE_MAX_BYTES 65536
/* Rounds of a sweep: each kills the orphans of the round before's. */
#define SWEEP_ROUNDS 64
/* Most children looked at in one round. */
#define SWEEP_MAX 1024
#ifndef P_PIDFD
#define P_PIDFD 3
#endif

void
ph_exec_result_free(struct ph_exec_result *res)
{
	free(res->out);
	res->out = NULL;
	res->out_len = 0;
}

const char *
ph_exec_describe(const struct ph_exec_result *res, char *buf, size_t n)
{
	switch (res->status) {
	case PH_EXEC_OK:
		snprintf(buf, n, "exit status 0");
		break;
	case PH_EXEC_SPAWN:
		snprintf(buf, n, "could not start: %s", strerror(res->code));
		break;
	case PH_EXEC_EXIT:
		snprintf(buf, n, "exit status %d", res->code);
		break;
	case PH_EXEC_SIGNAL:
		snprintf(buf, n, "killed by signal %d (%s)", res->code, strsignal(res->code));
		break;
	case PH_EXEC_TIMEOUT:
		snprintf(buf, n, "timed out after %lld ms and was killed", (long long)(res->us / 1000));
		break;
	case PH_EXEC_OVERFLOW:
		snprintf(buf, n, "wrote more output than allowed and was killed");
		break;
	case PH_EXEC_CANCELLED:
		snprintf(buf, n, "cancelled: the client went away");
		break;
	case PH_EXEC_CLOSED:
		snprintf(buf, n, "closed its stdout without answering");
		break;
	}
	return buf;
}

char *
ph_exec_resolve(const char *name, const char *dir, const char *path)
{
	struct stat st;
	if (name[0] == '\0') {
		errno = ENOENT;
		return NULL;
	}
	if (strchr(name, '/') != NULL) {
		char *p = ph_path_join(dir, name);
		if (p[0] != '/') {
			char cwd[PATH_MAX];
			if (getcwd(cwd, sizeof cwd) != NULL) {
				char *a = ph_path_join(cwd, p);
				free(p);
				p = a;
			}
		}
		if (stat(p, &st) != 0 || !S_ISREG(st.st_mode) || access(p, X_OK) != 0) {
			int e = errno ? errno : EACCES;
			if (stat(p, &st) == 0 && !S_ISREG(st.st_mode))
				e = EISDIR;
			free(p);
			errno = e;
			return NULL;
		}
		return p;
	}
	while (path && *path) {
		size_t l = strcspn(path, ":");
		if (l > 0 && path[0] == '/') {
			char *p = ph_xasprintf("%.*s/%s", (int)l, path, name);
			if (stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0)
				return p;
			free(p);
		}
		path += l + (path[l] == ':');
	}
	errno = ENOENT;
	return NULL;
}

/* The environment of the command: PATH (ours unless the list sets it) and
 * the allow-listed names. Caller frees the array and its strings. */
static char **
build_env(char *const *allow, char *const *extra)
{
	size_t n = 0, cap = 4;
	char **env = ph_xcalloc(cap, sizeof *env);
	bool has_path = false;
	for (size_t i = 0; allow && allow[i]; i++) {
		const char *eq = strchr(allow[i], '=');
		char *entry = NULL;
		if (eq) {
			entry = ph_xstrdup(allow[i]);
			if (strncmp(allow[i], "PATH=", 5) == 0)
				has_path = true;
		} else {
			const char *v = getenv(allow[i]);
			if (v == NULL)
				continue;
			entry = ph_xasprintf("%s=%s", allow[i], v);
			if (strcmp(allow[i], "PATH") == 0)
				has_path = true;
		}
		if (n + 2 >= cap) {
			cap *= 2;
			env = ph_xrealloc(env, cap * sizeof *env);
		}
		env[n++] = entry;
	}
	for (size_t i = 0; extra && extra[i]; i++) {
		if (n + 2 >= cap) {
			cap *= 2;
			env = ph_xrealloc(env, cap * sizeof *env);
		}
		env[n++] = ph_xstrdup(extra[i]);
	}
	if (!has_path) {
		if (n + 2 >= cap)
			env = ph_xrealloc(env, (cap + 2) * sizeof *env);
		env[n++] = ph_xstrdup("PATH=" PH_EXEC_DEFAULT_PATH);
	}
	env[n] = NULL;
	return env;
}

void
ph_run_free_env(char **env)
{
	for (size_t i = 0; env[i]; i++)
		free(env[i]);
	free(env);
}

static void
set_limit(int res, long long v)
{
	struct rlimit rl;
	if (v <= 0)
		return;
	rl.rlim_cur = rl.rlim_max = (rlim_t)v;
	/* lowering never needs privileges; raising past the hard limit fails
	 * and leaves the inherited (lower) limit, which is fine */
	if (setrlimit(res, &rl) != 0 && getrlimit(res, &rl) == 0 && rl.rlim_max > (rlim_t)v) {
		rl.rlim_cur = (rlim_t)v;
		setrlimit(res, &rl);
	}
}

/* In the child: never returns. Reports a failure to start on errfd. */
static void __attribute__((noreturn))
child(const struct ph_exec_spec *spec, const struct ph_exec_limits *lim, char **envp, int in, int out,
      int err, int p3, int errfd)
{
	sigset_t none;
	int e;
	setpgid(0, 0);
	/* A command starts with default signal dispositions (the worker
	 * ignores SIGPIPE, and SIG_IGN survives execve); the mask, which blocks
	 * the stop signals while a request runs, is cleared just before execve
	 * so no handler of the worker can run in this vfork child. */
	for (int s = 1; s < NSIG; s++)
		signal(s, SIG_DFL);
	/* move everything above 9 first so the dup2 below cannot clobber a
	 * pipe end that happens to sit on 0..4 */
	in = fcntl(in, F_DUPFD, 10);
	out = fcntl(out, F_DUPFD, 10);
	err = fcntl(err, F_DUPFD, 10);
	p3 = fcntl(p3, F_DUPFD, 10);
	errfd = fcntl(errfd, F_DUPFD_CLOEXEC, 10);
	if (in < 0 || out < 0 || err < 0 || p3 < 0 || errfd < 0)
		goto fail;
	if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0 || dup2(p3, 3) < 0 ||
	    dup2(errfd, 4) < 0 || fcntl(4, F_SETFD, FD_CLOEXEC) < 0)
		goto fail;
#ifdef HAVE_CLOSEFROM
	closefrom(5);
#else
	for (int fd = 5; fd < 65536; fd++)
		close(fd);
#endif
	if (spec->cwd && chdir(spec->cwd) != 0)
		goto fail;
	set_limit(RLIMIT_CPU, lim->cpu_s);
	set_limit(RLIMIT_AS, lim->memory);
	set_limit(RLIMIT_NOFILE, lim->files);
	set_limit(RLIMIT_NPROC, lim->procs);
	if (spec->no_core) {
		struct rlimit nocore = {0, 0};
		setrlimit(RLIMIT_CORE, &nocore);
	}
#ifdef PR_SET_PDEATHSIG
	/* a persistent process must not outlive a worker that dies without
	 * stopping it (a crash, SIGKILL) */
	if (spec->persist.on)
		prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execve(spec->argv[0], spec->argv, envp);
fail:
	e = errno;
	if (write(errfd >= 0 ? 4 : 2, &e, sizeof e) < 0) {
		/* nothing left to tell */
	}
	_exit(127);
}

/* Starts the command with vfork: the worker's page tables are not copied
 * and the worker resumes once the child has exec'd (or failed to). The
 * child runs only async-signal-safe calls on its own arguments, resets
 * every signal before unblocking any, and leaves with execve or _exit.
 * Returns the pid, or -1 with errno. */
static pid_t
start_child(const struct ph_exec_spec *spec, const struct ph_exec_limits *lim, char **envp, int in,
	    int out, int err, int p3, int errfd)
{
	pid_t pid = vfork();
	if (pid == 0)
		child(spec, lim, envp, in, out, err, p3, errfd);
	return pid;
}


/* Splits new bytes into lines and hands complete ones to fn. */
static void
lines_feed(struct linebuf *lb, const char *p, size_t n, void (*fn)(void *, const char *, size_t),
	   void *ctx)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '\n') {
			if (!lb->skipping && lb->b.len)
				fn(ctx, lb->b.data, lb->b.len);
			ph_buf_reset(&lb->b);
			lb->skipping = false;
		} else if (!lb->skipping) {
			if (lb->b.len >= LINE_MAX_BYTES) {
				fn(ctx, lb->b.data, lb->b.len);
				ph_buf_reset(&lb->b);
				lb->skipping = true;
			} else {
				ph_buf_addc(&lb->b, p[i]);
			}
		}
	}
}

static void
lines_flush(struct linebuf *lb, void (*fn)(void *, const char *, size_t), void *ctx)
{
	if (!lb->skipping && lb->b.len)
		fn(ctx, lb->b.data, lb->b.len);
	ph_buf_free(&lb->b);
}


/* The stderr log of one call, capped at lim->log_max bytes. */
struct errlog
ph_run_errlog(const char *label, const struct ph_exec_limits *lim)
{
	long long max = lim && lim->log_max > 0 ? lim->log_max : PH_EXEC_LOG_MAX;
	return (struct errlog){label, 0, 0, (size_t)max};
}

void
ph_run_log_stderr(void *ctx, const char *line, size_t len)
{
	struct errlog *el = ctx;
	if (el->logged >= el->max) {
		el->dropped += len;
		return;
	}
	el->logged += len;
	ph_log("info", "%s: stderr: %.*s", el->label, (int)(len > 2000 ? 2000 : len), line);
}


void
ph_run_fd3_line(void *ctx, const char *line, size_t len)
{
	const struct ph_exec_hooks *h = ((struct p3ctx *)ctx)->hooks;
	if (h && h->fd3_line)
		h->fd3_line(h->ctx, line, len);
}

int
ph_run_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	long fd = syscall(SYS_pidfd_open, pid, 0);
	if (fd >= 0) {
		fcntl((int)fd, F_SETFD, FD_CLOEXEC);
		return (int)fd;
	}
#else
	(void)pid;
	errno = ENOSYS;
#endif
	return -1;
}

/* ---- what we started, and what was left behind ---------------------------------
 * The leaders of the commands we run (per call and persistent), from the
 * start to the reaping; any other child of ours is an orphan a command left
 * behind (a subreaper inherits them). A worker runs one call at a time, so a
 * plain array does. */
/* A few pids, in no order. */
struct pids {
	pid_t *v;
	size_t n, cap;
};

static void
pids_add(struct pids *s, pid_t pid)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 8;
		s->v = ph_xrealloc(s->v, s->cap * sizeof *s->v);
	}
	s->v[s->n++] = pid;
}

static void
pids_del(struct pids *s, pid_t pid)
{
	for (size_t i = 0; i < s->n; i++) {
		if (s->v[i] == pid) {
			s->v[i] = s->v[--s->n];
			return;
		}
	}
}

static struct pids owned;
static bool subreaper_on;

static void
owned_add(pid_t pid)
{
	pids_add(&owned, pid);
}

static void
owned_del(pid_t pid)
{
	pids_del(&owned, pid);
}

static bool
is_owned(pid_t pid)
{
	for (size_t i = 0; i < owned.n; i++)
		if (owned.v[i] == pid)
			return true;
	return false;
}

void
ph_exec_own(pid_t pid)
{
	owned_add(pid);
}

void
ph_exec_disown(pid_t pid)
{
	owned_del(pid);
}

bool
ph_exec_subreaper(void)
{
#ifdef PR_SET_CHILD_SUBREAPER
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == 0)
		subreaper_on = true;
#endif
	return subreaper_on;
}

/* Adds the pids listed in one /proc/self/task/TID/children file to kids
 * (at most max in all). Returns the new count. */
static size_t
read_children(const char *path, pid_t *kids, size_t n, size_t max)
{
	FILE *f = fopen(path, "re");
	long v;
	if (f == NULL)
		return n;
	while (n < max && fscanf(f, "%ld", &v) == 1)
		if (v > 0)
			kids[n++] = (pid_t)v;
	fclose(f);
	return n;
}

/* Our children, from every thread's children list (an orphan goes to one
 * of the subreaper's threads). Returns how many went into kids. */
static size_t
list_children(pid_t *kids, size_t max)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	size_t n = 0;
	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		char path[300];
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "/proc/self/task/%s/children", de->d_name);
		n = read_children(path, kids, n, max);
	}
	closedir(d);
	return n;
}

/* Waits at most ms for the process behind pidfd fd to exit; true when it has. */
static bool
pidfd_wait(int fd, int ms)
{
	struct pollfd pf = {fd, POLLIN, 0};
	int rc;
	while ((rc = poll(&pf, 1, ms)) < 0 && errno == EINTR)
		;
	return rc > 0;
}

/* Kills and reaps one orphan through a pidfd, so the signal reaches that
 * very process, and only while it is still our child (waitid with WNOWAIT
 * fails otherwise). Returns true when it was ours. */
static bool
kill_orphan_pidfd(int fd)
{
	siginfo_t si;
	memset(&si, 0, sizeof si);
	if (waitid((idtype_t)P_PIDFD, (id_t)fd, &si, WEXITED | WNOHANG | WNOWAIT) != 0)
		return false;
#ifdef SYS_pidfd_send_signal
	syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0);
#endif
	if (pidfd_wait(fd, 1000))
		waitid((idtype_t)P_PIDFD, (id_t)fd, &si, WEXITED | WNOHANG);
	return true;
}

/* The same without pidfds: an unreaped child keeps its pid, so it is
 * signalled only after waitid says it is still ours. */
static void
kill_orphan_pid(pid_t pid)
{
	siginfo_t si;
	int st;
	memset(&si, 0, sizeof si);
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0)
		return;
	kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
}


/* One round of the sweep: kills the orphans among our children. Returns
 * how many it found. */
static size_t
sweep_round(void)
{
	pid_t kids[SWEEP_MAX];
	size_t n = list_children(kids, SWEEP_MAX), found = 0;
	for (size_t i = 0; i < n; i++) {
		pid_t pg;
		int fd;
		if (is_owned(kids[i]))
			continue;
		pg = getpgid(kids[i]);
		if (pg > 0 && is_owned(pg))
			continue; /* still in the group of a command we run: goes with it */
		found++;
		fd = ph_run_pidfd(kids[i]);
		if (fd >= 0) {
			kill_orphan_pidfd(fd);
			close(fd);
		} else if (errno != ESRCH) {
			kill_orphan_pid(kids[i]);
		}
	}
	return found;
}

void
ph_exec_sweep(void)
{
	size_t total = 0, n = 0;
	int round;
	if (!subreaper_on)
		return;
	/* a killed orphan's own children become ours: the next round takes them */
	for (round = 0; round < SWEEP_ROUNDS && (n = sweep_round()) > 0; round++)
		total += n;
	if (total > 0)
		ph_log("info", "exec: killed %zu process%s left behind by a command", total,
		       total == 1 ? "" : "es");
	if (n > 0)
		ph_log("warning", "exec: processes left behind are still forking after %d rounds", round);
}

static void
sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}


/* The leader's state, read without reaping it (WNOWAIT). */
enum leader
ph_run_leader_state(pid_t pid)
{
	siginfo_t si;
	int r;
	memset(&si, 0, sizeof si);
	while ((r = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT)) != 0 && errno == EINTR)
		;
	if (r != 0)
		return LEADER_GONE;
	return si.si_pid == pid ? LEADER_EXITED : LEADER_RUNNING;
}

/* Waits at most ms for the leader to exit, leaving it unreaped; true when
 * it has. */
bool
ph_run_wait_exit(pid_t pid, int ms)
{
	int64_t end = ph_now_us() + (int64_t)ms * 1000;
	for (;;) {
		if (ph_run_leader_state(pid) != LEADER_RUNNING)
			return true;
		if (ph_now_us() >= end)
			return false;
		sleep_ms(2);
	}
}

/* ---- leaders killed, not dead yet -------------------------------------------
 * A caller that must never wait (the hub: a run's nowait) does not block in
 * waitpid for a leader it has SIGKILLed: one stuck in the kernel (a hung
 * mount), or held by a tracer, dies when it can. Such a leader stays owned
 * (the sweep leaves its group alone) and waits here for
 * ph_exec_reap_dying. */
static struct pids dying;

size_t
ph_exec_reap_dying(void)
{
	size_t was = dying.n;
	for (size_t i = 0; i < dying.n;) {
		pid_t pid = dying.v[i], got;
		int st;
		while ((got = waitpid(pid, &st, WNOHANG)) < 0 && errno == EINTR)
			;
		if (got == 0) {
			/* its group id stays its own until it is reaped: what the
			 * group started since the first SIGKILL goes too */
			kill(-pid, SIGKILL);
			i++;
			continue;
		}
		owned_del(pid); /* reaped now, or elsewhere (ECHILD) */
		dying.v[i] = dying.v[--dying.n];
	}
	if (dying.n < was)
		ph_exec_sweep(); /* a subreaper: its group, ours now, left alone until then */
	return dying.n;
}

/* SIGKILL to whatever is left of the group, and to the leader itself in
 * case it left the group, while the leader is still unreaped; then reaps the
 * leader (its status in *wstatus), waiting for it unless nowait. With
 * nowait a leader not dead yet goes to the dying (ph_exec_reap_dying): it
 * counts as reaped here, *wstatus saying SIGKILL ended it. A leader reaped
 * elsewhere (LEADER_GONE) is not signalled: its group id may already
 * belong to someone else. */
static void
kill_leader(pid_t pid, int *wstatus, bool *reaped, bool nowait)
{
	enum leader st = ph_run_leader_state(pid);
	if (st != LEADER_GONE) {
		pid_t got;
		kill(-pid, SIGKILL);
		if (st == LEADER_RUNNING)
			kill(pid, SIGKILL);
		while ((got = waitpid(pid, wstatus, nowait ? WNOHANG : 0)) < 0 && errno == EINTR)
			;
		if (got == 0) {
			pids_add(&dying, pid);
			*wstatus = SIGKILL; /* as waitpid will say */
			*reaped = true;
			return;
		}
	}
	owned_del(pid);
	*reaped = true;
}

void
ph_run_kill_and_reap(pid_t pid, int *wstatus, bool *reaped)
{
	kill_leader(pid, wstatus, reaped, false);
}

void
ph_run_kill_nowait(pid_t pid, int *wstatus, bool *reaped)
{
	kill_leader(pid, wstatus, reaped, true);
}

/* SIGTERM to r's group, then SIGKILL after the grace period (at once when
 * the leader has already exited, or when r may not wait); the leader is
 * reaped after the last signal. A leader reaped before had its group
 * killed then: nothing to do. */
static void
terminate(struct run *r, long long grace_ms)
{
	if (r->reaped)
		return;
	if (ph_run_leader_state(r->pid) == LEADER_RUNNING) {
		kill(-r->pid, SIGTERM);
		if (!r->nowait)
			ph_run_wait_exit(r->pid, (int)(grace_ms > 0 ? grace_ms : 1));
	}
	kill_leader(r->pid, &r->wstatus, &r->reaped, r->nowait);
}

/* write() to the command's stdin without dying of SIGPIPE when it has
 * exited: the server ignores SIGPIPE, a program embedding libphantom may
 * not. A SIGPIPE raised here is taken back before the mask is restored. */
ssize_t
ph_run_write_nopipe(int fd, const void *p, size_t n)
{
	sigset_t pipe_set, old, pending;
	bool was_pending;
	ssize_t w;
	int e;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigpending(&pending);
	was_pending = sigismember(&pending, SIGPIPE);
	sigprocmask(SIG_BLOCK, &pipe_set, &old);
	w = write(fd, p, n);
	e = errno;
	if (w < 0 && e == EPIPE && !was_pending) {
		struct timespec zero = {0, 0};
		sigtimedwait(&pipe_set, NULL, &zero);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	errno = e;
	return w;
}

void
ph_run_close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}


/* Starts a call's clock: its deadline timeout ms from now (30 s when the
 * caller gave none) and the first liveness check a second from now. */
void
ph_run_clock(struct run *r, long long timeout)
{
	r->t0 = ph_now_us();
	if (timeout <= 0)
		timeout = 30000;
	r->deadline = r->t0 + timeout * 1000;
	r->next_alive = r->t0 + 1000000;
}

/* Fills r for one run: every fd -1, then the call as ph_run_call sets it.
 * Borrows every pointer. */
void
ph_run_init(struct run *r, const struct ph_exec_spec *spec, const struct ph_exec_limits *lim,
	 const char *input, size_t input_len, const struct ph_exec_hooks *hooks,
	 struct ph_exec_result *res)
{
	memset(r, 0, sizeof *r);
	r->spec = spec;
	r->pin[0] = r->pin[1] = r->pout[0] = r->pout[1] = r->perr[0] = r->perr[1] = -1;
	r->p3[0] = r->p3[1] = r->pst[0] = r->pst[1] = -1;
	r->pidfd = -1;
	r->exit_grace_ms = lim->exit_grace_ms;
	r->label = hooks && hooks->label ? hooks->label : spec->argv[0];
	ph_buf_init(&r->out);
	ph_run_call(r, spec, lim, input, input_len, hooks, res);
}

/* The one place where a call's limits are taken: those of the spec (the
 * handler's) over those of lim (the server's). Shared by a run and by each
 * call to a persistent process. */
void
ph_run_call(struct run *r, const struct ph_exec_spec *spec, const struct ph_exec_limits *lim,
	    const char *input, size_t input_len, const struct ph_exec_hooks *hooks,
	    struct ph_exec_result *res)
{
	long long timeout = spec->timeout_ms > 0 ? spec->timeout_ms : lim->timeout_ms;
	memset(res, 0, sizeof *res);
	r->lim = lim;
	r->hooks = hooks;
	r->res = res;
	r->killed = false;
	r->input = input;
	r->input_len = input_len;
	r->written = 0;
	r->cap = spec->max_output > 0 ? spec->max_output : lim->max_output;
	r->el = ph_run_errlog(r->label, lim);
	r->pc = (struct p3ctx){hooks};
	ph_run_clock(r, timeout);
}

/* Records a failure to start, with errno as its code. */
static void
spawn_failed(struct run *r, int code)
{
	r->res->status = PH_EXEC_SPAWN;
	r->res->code = code;
}

/* Reads the status pipe once the child has exec'd or given up: an errno
 * there means execve never happened, and the child is then reaped. Returns
 * true with that errno in *e when execve failed, false when the command
 * runs. */
static bool
exec_failed(struct run *r, int *e)
{
	ssize_t n;
	*e = 0;
	while ((n = read(r->pst[0], e, sizeof *e)) < 0 && errno == EINTR)
		;
	ph_run_close_fd(&r->pst[0]);
	if (n != (ssize_t)sizeof *e)
		return false;
	if (!r->nowait)
		ph_run_wait_exit(r->pid, 1000); /* it is on its way to _exit(127) */
	kill_leader(r->pid, &r->wstatus, &r->reaped, r->nowait);
	return true;
}

/* Opens the pipes, builds the environment and starts the command in its
 * own process group, keeping our ends of the pipes. Returns true when the
 * command runs; false with res set to PH_EXEC_SPAWN. */
bool
ph_run_start(struct run *r)
{
	int e;
	if (pipe2(r->pin, O_CLOEXEC) != 0 || pipe2(r->pout, O_CLOEXEC) != 0 ||
	    pipe2(r->perr, O_CLOEXEC) != 0 || pipe2(r->p3, O_CLOEXEC) != 0 ||
	    pipe2(r->pst, O_CLOEXEC) != 0) {
		spawn_failed(r, errno);
		return false;
	}
	r->envp = build_env(r->spec->env, r->hooks ? r->hooks->env : NULL);
	r->pid = start_child(r->spec, r->lim, r->envp, r->pin[0], r->pout[1], r->perr[1], r->p3[1],
			     r->pst[1]);
	if (r->pid < 0) {
		spawn_failed(r, errno);
		return false;
	}
	owned_add(r->pid);
	setpgid(r->pid, r->pid); /* also done by the child: whichever runs first */
	ph_run_close_fd(&r->pin[0]);
	ph_run_close_fd(&r->pout[1]);
	ph_run_close_fd(&r->perr[1]);
	ph_run_close_fd(&r->p3[1]);
	ph_run_close_fd(&r->pst[1]);
	if (exec_failed(r, &e)) {
		spawn_failed(r, e);
		return false;
	}
	return true;
}

/* True when stdin stays open for more input after the first (hooks->more). */
static bool
more_wanted(const struct run *r)
{
	return r->hooks && r->hooks->more;
}

/* True when there are bytes for stdin: the input, or more of it. */
static bool
stdin_pending(const struct run *r)
{
	return r->written < r->input_len || (more_wanted(r) && r->hooks->more->len > 0);
}

/* Readies the running command for the poll loop: a pidfd for its exit
 * where the kernel has one, our pipe ends non-blocking, stdin closed at
 * once when there is no input. */
void
ph_run_watch(struct run *r)
{
	r->pidfd = ph_run_pidfd(r->pid);
	fcntl(r->pin[1], F_SETFL, O_NONBLOCK);
	fcntl(r->pout[0], F_SETFL, O_NONBLOCK);
	fcntl(r->perr[0], F_SETFL, O_NONBLOCK);
	fcntl(r->p3[0], F_SETFL, O_NONBLOCK);
	if (r->input_len == 0 && !more_wanted(r))
		ph_run_close_fd(&r->pin[1]);
}


/* The poll timeout in ms: up to the deadline or the next liveness check,
 * at most 50 ms while the leader's exit can only be seen by polling. */
int
ph_run_poll_timeout(const struct run *r)
{
	int64_t now = ph_now_us();
	int64_t wait = (r->deadline < r->next_alive ? r->deadline : r->next_alive) - now;
	if (r->exited && r->exited + r->exit_grace_ms * 1000 - now < wait)
		wait = r->exited + r->exit_grace_ms * 1000 - now;
	if (r->pidfd < 0 && !r->reaped && wait > 50000)
		wait = 50000;
	if (wait < 0)
		wait = 0;
	return (int)((wait + 999) / 1000);
}

/* Adds fd to the set for events; returns its index. */
int
ph_run_pollset_add(struct pollset *ps, int fd, short events)
{
	ps->pf[ps->np] = (struct pollfd){fd, events, 0};
	return ps->np++;
}

/* The open pipe ends, and the pidfd while the leader is unreaped. */
static void
pollset_fill(const struct run *r, struct pollset *ps)
{
	ps->np = 0;
	ps->iin = ps->iout = ps->ierr = ps->i3 = ps->ipid = -1;
	if (r->pin[1] >= 0 && stdin_pending(r))
		ps->iin = ph_run_pollset_add(ps, r->pin[1], POLLOUT);
	if (r->pout[0] >= 0)
		ps->iout = ph_run_pollset_add(ps, r->pout[0], POLLIN);
	if (r->perr[0] >= 0)
		ps->ierr = ph_run_pollset_add(ps, r->perr[0], POLLIN);
	if (r->p3[0] >= 0)
		ps->i3 = ph_run_pollset_add(ps, r->p3[0], POLLIN);
	if (r->pidfd >= 0 && !r->reaped)
		ps->ipid = ph_run_pollset_add(ps, r->pidfd, POLLIN);
}

/* True when poll returned rc > 0 and entry i (if polled) has one of ev. */
bool
ph_run_pollset_ready(const struct pollset *ps, int rc, int i, short ev)
{
	return rc > 0 && i >= 0 && (ps->pf[i].revents & ev);
}

/* Ends the command early with status: SIGTERM to its group, SIGKILL after
 * grace_ms, and the leader reaped. */
void
ph_run_stop(struct run *r, enum ph_exec_status status, long long grace_ms)
{
	r->res->status = status;
	r->killed = true;
	terminate(r, grace_ms);
}

/* Writes what stdin can take of the input; closes it when all is written
 * or the command does not read (EPIPE). */
void
ph_run_feed_stdin(struct run *r)
{
	struct ph_buf *more = more_wanted(r) ? r->hooks->more : NULL;
	ssize_t w;
	if (r->written < r->input_len) {
		w = ph_run_write_nopipe(r->pin[1], r->input + r->written, r->input_len - r->written);
		if (w > 0)
			r->written += (size_t)w;
	} else if (more && more->len > 0) {
		w = ph_run_write_nopipe(r->pin[1], more->data, more->len);
		if (w > 0) {
			memmove(more->data, more->data + w, more->len - (size_t)w + 1);
			more->len -= (size_t)w;
		}
	} else {
		return;
	}
	if ((w < 0 && errno != EAGAIN && errno != EINTR) || (more == NULL && r->written == r->input_len))
		ph_run_close_fd(&r->pin[1]); /* done, or the command does not read (EPIPE) */
}

/* Reads stdout into out, closing it at EOF or on an error. Returns false
 * when the output went over the cap and the command was killed. */
bool
ph_run_read_stdout(struct run *r)
{
	char buf[16384];
	ssize_t n = read(r->pout[0], buf, sizeof buf);
	if (n > 0) {
		if ((long long)(r->out.len + (size_t)n) > r->cap) {
			ph_run_stop(r, PH_EXEC_OVERFLOW, 0);
			return false;
		}
		ph_buf_add(&r->out, buf, (size_t)n);
	} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
		ph_run_close_fd(&r->pout[0]);
	}
	return true;
}

/* Reads *fd (stderr or fd 3) and hands its lines to fn; closes *fd at EOF
 * or on an error. */
void
ph_run_read_lines(int *fd, struct linebuf *lb, void (*fn)(void *, const char *, size_t), void *ctx)
{
	char buf[8192];
	ssize_t n = read(*fd, buf, sizeof buf);
	if (n > 0)
		lines_feed(lb, buf, (size_t)n, fn, ctx);
	else if (n == 0 || (errno != EAGAIN && errno != EINTR))
		ph_run_close_fd(fd);
}

/* After the fds: stops the command past its deadline, or when the hooks
 * say the client went away (asked once a second). Returns true when it
 * was stopped. */
bool
ph_run_expired(struct run *r)
{
	int64_t now = ph_now_us();
	if (now >= r->deadline) {
		ph_run_stop(r, PH_EXEC_TIMEOUT, r->lim->grace_ms);
		return true;
	}
	if (now >= r->next_alive) {
		r->next_alive = now + 1000000;
		if (r->hooks && r->hooks->alive && !r->hooks->alive(r->hooks->ctx)) {
			ph_run_stop(r, PH_EXEC_CANCELLED, r->lim->grace_ms);
			return true;
		}
	}
	return false;
}

/* True when the leader has exited exit_grace_ms ago and something it
 * started (out of its process group: setsid) still holds an output open:
 * the answer is then taken as it is. */
bool
ph_run_exit_grace_over(const struct run *r)
{
	if (!r->exited || ph_now_us() < r->exited + r->exit_grace_ms * 1000)
		return false;
	ph_log("info", "%s: its output was still held open %lld ms after it exited; not waiting longer",
	       r->label, r->exit_grace_ms);
	return true;
}

/* The poll loop: feeds stdin, drains stdout, stderr and fd 3, and reaps
 * the leader once it exits, until every output is closed and the leader
 * is reaped, or the command is stopped (output cap, timeout,
 * cancellation), or poll fails. */
static void
run_loop(struct run *r)
{
	while (r->pout[0] >= 0 || r->perr[0] >= 0 || r->p3[0] >= 0 || !r->reaped) {
		struct pollset ps;
		int ms = ph_run_poll_timeout(r), rc;
		pollset_fill(r, &ps);
		rc = poll(ps.pf, (nfds_t)ps.np, ms);
		if (rc < 0 && errno != EINTR)
			break;
		if (ph_run_pollset_ready(&ps, rc, ps.iin, POLLOUT | POLLERR | POLLHUP))
			ph_run_feed_stdin(r);
		if (ph_run_pollset_ready(&ps, rc, ps.iout, POLLIN | POLLHUP | POLLERR) && !ph_run_read_stdout(r))
			break;
		if (ph_run_pollset_ready(&ps, rc, ps.ierr, POLLIN | POLLHUP | POLLERR))
			ph_run_read_lines(&r->perr[0], &r->lerr, ph_run_log_stderr, &r->el);
		if (ph_run_pollset_ready(&ps, rc, ps.i3, POLLIN | POLLHUP | POLLERR))
			ph_run_read_lines(&r->p3[0], &r->l3, ph_run_fd3_line, &r->pc);
		if (!r->reaped && (ps.ipid < 0 || ph_run_pollset_ready(&ps, rc, ps.ipid, POLLIN)) &&
		    ph_run_leader_state(r->pid) != LEADER_RUNNING) {
			/* the leader is done: nothing it started may linger (and
			 * hold our pipes open); its group is killed before it is
			 * reaped */
			ph_run_kill_and_reap(r->pid, &r->wstatus, &r->reaped);
			r->exited = ph_now_us();
		}
		if (ph_run_expired(r) || ph_run_exit_grace_over(r))
			break;
	}
}

/* After the loop, with what the command left behind killed: reads what is
 * still in the pipes (without waiting for a writer that escaped). */
void
ph_run_drain(struct run *r)
{
	while (r->pout[0] >= 0 && !r->killed) {
		size_t before = r->out.len;
		if (!ph_run_read_stdout(r) || r->out.len == before)
			break;
	}
	ph_run_drain_lines(&r->perr[0], &r->lerr, ph_run_log_stderr, &r->el);
	ph_run_drain_lines(&r->p3[0], &r->l3, ph_run_fd3_line, &r->pc);
}

/* After the loop: makes sure the leader is reaped and nothing it started
 * is left, and unless the command was stopped, sets the status from how
 * it ended. */
static void
run_status(struct run *r)
{
	if (!r->reaped) /* poll failed: do not leave anything behind */
		terminate(r, 0);
	ph_exec_sweep();
	ph_run_drain(r);
	if (r->killed)
		return;
	if (WIFEXITED(r->wstatus)) {
		r->res->code = WEXITSTATUS(r->wstatus);
		r->res->status = r->res->code == 0 ? PH_EXEC_OK : PH_EXEC_EXIT;
	} else if (WIFSIGNALED(r->wstatus)) {
		r->res->code = WTERMSIG(r->wstatus);
		r->res->status = PH_EXEC_SIGNAL;
	}
}

/* Closes both ends of a pipe that are still open. */
static void
close_pipe(int p[2])
{
	ph_run_close_fd(&p[0]);
	ph_run_close_fd(&p[1]);
}

/* Closes what a run holds of its process: the pipes, the pidfd, the
 * environment built for it. */
void
ph_run_close(struct run *r)
{
	close_pipe(r->pin);
	close_pipe(r->pout);
	close_pipe(r->perr);
	close_pipe(r->p3);
	close_pipe(r->pst);
	if (r->pidfd >= 0)
		close(r->pidfd);
	r->pidfd = -1;
	if (r->envp)
		ph_run_free_env(r->envp);
	r->envp = NULL;
}

/* Flushes the last lines, closes every fd, frees the environment and hands
 * the output to res: stolen on success, wiped and replaced by "" otherwise.
 * Returns 0 on success, else -1. */
int
ph_run_finish(struct run *r)
{
	struct ph_exec_result *res = r->res;
	lines_flush(&r->lerr, ph_run_log_stderr, &r->el);
	lines_flush(&r->l3, ph_run_fd3_line, &r->pc);
	if (r->el.dropped)
		ph_log("info", "%s: stderr: %zu more bytes not logged", r->label, r->el.dropped);
	ph_run_close(r);
	res->us = ph_now_us() - r->t0;
	if (res->status == PH_EXEC_OK) {
		res->out_len = r->out.len;
		res->out = ph_buf_steal(&r->out);
	} else {
		/* what a failed command wrote may hold secrets (an authenticator
		 * echoing a token): wiped, not just freed */
		if (r->out.data)
			sodium_memzero(r->out.data, r->out.len);
		ph_buf_free(&r->out);
		res->out = ph_xstrdup("");
	}
	return res->status == PH_EXEC_OK ? 0 : -1;
}

int
ph_exec_run(const struct ph_exec_spec *spec, const struct ph_exec_limits *lim, const char *input,
	    size_t input_len, const struct ph_exec_hooks *hooks, struct ph_exec_result *res)
{
	struct run r;
	ph_run_init(&r, spec, lim, input, input_len, hooks, res);
	if (ph_run_start(&r)) {
		ph_run_watch(&r);
		run_loop(&r);
		run_status(&r);
	}
	return ph_run_finish(&r);
}

/* Reads what *fd has now, handing lines to fn; at most a few rounds, so a
 * flood cannot hold the caller. */
void
ph_run_drain_lines(int *fd, struct linebuf *lb, void (*fn)(void *, const char *, size_t), void *ctx)
{
	for (int i = 0; i < 16 && *fd >= 0; i++) {
		struct pollfd pf = {*fd, POLLIN, 0};
		if (poll(&pf, 1, 0) <= 0)
			return;
		ph_run_read_lines(fd, lb, fn, ctx);
	}
}
