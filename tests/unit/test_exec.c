/* test_exec.c: the exec runner: input and output, fd 3 lines, stderr, every
 * failure mode (exit status, crash, timeout, output cap, cancellation,
 * a command that cannot start), the scrubbed environment and the rlimits;
 * after each run no child of ours is left, zombie or alive, nothing the
 * command started in its group survives, and its process group was never
 * signalled after its leader had been reaped. */
#include "first.h"
#include "ph_exec.h"
#include "ph_util.h"
#include "tap.h"
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The runner's kill() calls go through kill_seen(), which counts the
 * signals to a process group sent after the group's leader was reaped:
 * by then the group id may belong to an unrelated process group. */
static int kill_seen(pid_t pid, int sig);
#define kill(pid, sig) kill_seen(pid, sig)
#include "ph_exec.c" /* its static functions, with kill() recorded */
#include "ph_exec_nb.c"
#undef kill

static int group_kills, group_kills_after_reap;

static int
kill_seen(pid_t pid, int sig)
{
	if (pid < -1) {
		siginfo_t si;
		int e = errno;
		group_kills++;
		memset(&si, 0, sizeof si);
		/* ECHILD: not our child any more, i.e. already reaped */
		if (waitid(P_PID, (id_t)-pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0 && errno == ECHILD)
			group_kills_after_reap++;
		errno = e;
	}
	return kill(pid, sig);
}

static char dir[] = "/tmp/ph-exec-test.XXXXXX";

static void
on_hup(int sig)
{
	(void)sig;
}

static char *
script(const char *name, const char *body)
{
	char *p = ph_xasprintf("%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	fprintf(f, "#!/bin/sh\n%s\n", body);
	fclose(f);
	chmod(p, 0755);
	return p;
}

/* Number of processes whose parent is us (zombies included). */
static int
children(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;
	pid_t me = getpid();
	while ((e = readdir(d)) != NULL) {
		char path[300], buf[512];
		FILE *f;
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		if (fgets(buf, sizeof buf, f)) {
			char *rp = strrchr(buf, ')');
			int ppid = 0;
			char st;
			if (rp && sscanf(rp + 2, "%c %d", &st, &ppid) == 2 && ppid == me)
				n++;
		}
		fclose(f);
	}
	closedir(d);
	return n;
}

/* True once pid is gone (or a zombie waiting for its new parent), within
 * about a second; a survivor is killed so that it does not outlive the
 * test. */
static bool
dead(pid_t pid)
{
	for (int i = 0; i < 100; i++) {
		char path[64], buf[512];
		bool zombie = false;
		FILE *f;
		snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
		if ((f = fopen(path, "r")) == NULL)
			return true;
		if (fgets(buf, sizeof buf, f)) {
			char *rp = strrchr(buf, ')');
			zombie = rp && rp[1] == ' ' && rp[2] == 'Z';
		}
		fclose(f);
		if (zombie)
			return true;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	return false;
}

/* The pid a script wrote to name in the test directory, or -1. */
static pid_t
pid_file(const char *name)
{
	char *p = ph_xasprintf("%s/%s", dir, name), *buf = NULL;
	size_t len;
	long v = -1;
	if (ph_read_file(p, 64, &buf, &len) == 0)
		v = strtol(buf, NULL, 10);
	free(buf);
	free(p);
	return v > 1 ? (pid_t)v : -1;
}

static struct ph_exec_limits lim = {2000, 200, 65536, 10, 0, 64, 0};

static struct ph_exec_result
run(const char *path, const char *input, const struct ph_exec_hooks *hooks, long long timeout)
{
	char *argv[] = {(char *)path, "arg one", NULL};
	char *env[] = {"PHANTOM_TEST_PASS", "FIXED=yes", NULL};
	struct ph_exec_spec spec = {argv, env, dir, timeout, 0};
	struct ph_exec_result res;
	ph_exec_run(&spec, &lim, input, input ? strlen(input) : 0, hooks, &res);
	return res;
}

struct seen {
	char lines[8][200];
	int n;
	int alive_calls;
	bool cancel;
};

static void
on_line(void *ctx, const char *line, size_t len)
{
	struct seen *s = ctx;
	(void)len;
	if (s->n < 8)
		snprintf(s->lines[s->n++], 200, "%s", line);
}

static bool
alive(void *ctx)
{
	struct seen *s = ctx;
	s->alive_calls++;
	return !s->cancel;
}

/* A persistent process of the script at path, with timeout_ms. */
static struct ph_exec_proc *
proc(const char *path, long long timeout, struct ph_exec_spec *spec, char **argv)
{
	struct ph_exec_result r;
	struct ph_exec_proc *pr;
	argv[0] = (char *)path;
	argv[1] = NULL;
	memset(spec, 0, sizeof *spec);
	spec->argv = argv;
	spec->cwd = dir;
	spec->timeout_ms = timeout;
	spec->persist.on = true;
	pr = ph_exec_proc_start(spec, &lim, "persistent test", &r);
	ph_exec_result_free(&r);
	return pr;
}

/* Persistent processes: calls on one process, an answer twice, a timeout,
 * a death between calls, a child holding the pipes, stop. */
static void
persistent_tests(void)
{
	struct ph_exec_spec spec;
	struct ph_exec_result r;
	struct ph_exec_proc *pr;
	char *argv[2], *p;
	bool extra;
	pid_t pid, child;
	int64_t t0;

	p = script("loop.sh", "while IFS= read -r l; do echo \"got $l\"; done");
	pr = proc(p, 1000, &spec, argv);
	ok(pr != NULL, "a persistent process starts");
	pid = ph_exec_proc_pid(pr);
	ok(ph_exec_proc_call(pr, &spec, &lim, "one\n", 4, NULL, &r, &extra) == 0 && !extra,
	   "a call gets one line back");
	is_str(r.out, "got one", "... the answer, without its newline");
	ph_exec_result_free(&r);
	ok(ph_exec_proc_ready(pr), "it is ready for the next call");
	ok(ph_exec_proc_call(pr, &spec, &lim, "two\n", 4, NULL, &r, &extra) == 0, "a second call");
	is_str(r.out, "got two", "... is answered by the same process");
	ok(ph_exec_proc_pid(pr) == pid && ph_exec_proc_rss(pr) > 0, "one process, with a resident set");
	ph_exec_result_free(&r);
	ph_exec_proc_stop(pr);
	ok(dead(pid), "stop ends it");
	free(p);

	p = script("twice.sh", "while IFS= read -r l; do echo a; echo b; done");
	pr = proc(p, 1000, &spec, argv);
	ph_exec_proc_call(pr, &spec, &lim, "x\n", 2, NULL, &r, &extra);
	is_str(r.out, "a", "answering twice: the first line is the answer");
	ph_exec_result_free(&r);
	usleep(50000);
	ok(extra || !ph_exec_proc_ready(pr), "... and the second is seen (with it or between calls)");
	ph_exec_proc_stop(pr);
	free(p);

	p = script("hang.sh", "echo $$ >hang.pid; sleep 30 & echo $! >hang.child; read l; wait");
	pr = proc(p, 300, &spec, argv);
	t0 = ph_now_us();
	ph_exec_proc_call(pr, &spec, &lim, "x\n", 2, NULL, &r, &extra);
	ok(r.status == PH_EXEC_TIMEOUT && ph_now_us() - t0 < 1500000, "never answering: a timeout (%s)",
	   ph_exec_describe(&r, (char[200]){0}, 200));
	ph_exec_result_free(&r);
	ok(!ph_exec_proc_ready(pr), "a timed-out process takes no more calls");
	child = pid_file("hang.child");
	ok(child > 0 && dead(child), "its group was killed");
	ph_exec_proc_stop(pr);
	free(p);

	p = script("forker.sh", "read l; sleep 30 & echo $! >fork.child; exit 0");
	pr = proc(p, 5000, &spec, argv);
	t0 = ph_now_us();
	ph_exec_proc_call(pr, &spec, &lim, "x\n", 2, NULL, &r, &extra);
	ok(r.status == PH_EXEC_EXIT && ph_now_us() - t0 < 1500000,
	   "exiting with a child holding the pipes ends the call at once (%s)",
	   ph_exec_describe(&r, (char[200]){0}, 200));
	ph_exec_result_free(&r);
	child = pid_file("fork.child");
	ok(child > 0 && dead(child), "... and the child is killed");
	ph_exec_proc_stop(pr);
	free(p);

	p = script("dies.sh", "read l; echo ok; exit 3");
	pr = proc(p, 1000, &spec, argv);
	pid = ph_exec_proc_pid(pr);
	ok(ph_exec_proc_call(pr, &spec, &lim, "x\n", 2, NULL, &r, &extra) == 0, "an answer just before exiting counts");
	ph_exec_result_free(&r);
	usleep(100000);
	ok(!ph_exec_proc_ready(pr), "the exit is seen between calls");
	ok(dead(pid), "... and the process reaped");
	ph_exec_proc_stop(pr);
	free(p);

	p = script("closer.sh", "exec >&-; read l; sleep 30");
	pr = proc(p, 2000, &spec, argv);
	usleep(50000);
	ok(!ph_exec_proc_ready(pr), "a process that closed its stdout is not ready for a call");
	ok(ph_exec_proc_call(pr, &spec, &lim, "x\n", 2, NULL, &r, &extra) != 0 && r.status == PH_EXEC_CLOSED,
	   "... and a call on it fails at once: %s", ph_exec_describe(&r, (char[200]){0}, 200));
	ph_exec_result_free(&r);
	ph_exec_proc_stop(pr);
	free(p);
}

/* As a subreaper: a setsid grandchild holding stdout does not hold the
 * call past limits.exec_exit_grace_ms and is killed after it, as is a chain
 * of them; a persistent process's own background child, still in its
 * group, is left to it until the process stops. */
static void
subreaper_tests(void)
{
	struct ph_exec_limits gl = lim;
	char *argv[] = {NULL, NULL}, *pargv[2], *p, *pp;
	struct ph_exec_spec spec = {argv, NULL, dir, 5000, 0};
	struct ph_exec_spec pspec;
	struct ph_exec_proc *pr;
	struct ph_exec_result r;
	bool extra;
	pid_t bg, esc;
	int64_t t0, ms;
	char path[64];

	ok(ph_exec_subreaper(), "the runner can be a child subreaper");
	pp = script("pbg.sh", "sleep 30 & echo $! >pbg.child; while IFS= read -r l; do echo ok; done");
	pr = proc(pp, 2000, &pspec, pargv);
	ok(pr && ph_exec_proc_call(pr, &pspec, &lim, "x\n", 2, NULL, &r, &extra) == 0,
	   "a persistent process with a background child answers");
	ph_exec_result_free(&r);
	bg = pid_file("pbg.child");

	gl.exit_grace_ms = 300;
	p = script("esc.sh", "setsid sh -c 'echo $$ >esc.pid; exec sleep 30' & "
			     "while [ ! -s esc.pid ]; do sleep 0.01; done; echo answer");
	argv[0] = p;
	t0 = ph_now_us();
	ph_exec_run(&spec, &gl, NULL, 0, NULL, &r);
	ms = (ph_now_us() - t0) / 1000;
	ok(r.status == PH_EXEC_OK, "a setsid grandchild holding stdout: the run succeeds (%s)",
	   ph_exec_describe(&r, (char[200]){0}, 200));
	is_str(r.out, "answer\n", "... with the answer written before the exit");
	ok(ms >= 290 && ms < 1500, "... after the exit grace, not the timeout (%lld ms)", (long long)ms);
	ph_exec_result_free(&r);
	esc = pid_file("esc.pid");
	ok(esc > 0 && dead(esc), "... and the setsid process is killed");
	snprintf(path, sizeof path, "/proc/%d", (int)bg);
	ok(bg > 0 && access(path, F_OK) == 0, "the persistent process's child is left");
	free(p);

	p = script("chain.sh", "sh -c 'setsid sh -c \"setsid sleep 30 & echo \\$! >chain.pid; sleep 30\" &'; "
			       "while [ ! -s chain.pid ]; do sleep 0.01; done; echo done");
	argv[0] = p;
	ph_exec_run(&spec, &gl, NULL, 0, NULL, &r);
	is_str(r.out, "done\n", "a chain of setsid processes: the answer is used");
	ph_exec_result_free(&r);
	esc = pid_file("chain.pid");
	ok(esc > 0 && dead(esc), "... and the last of the chain is killed");
	free(p);

	ph_exec_proc_stop(pr);
	ok(bg > 0 && dead(bg), "stopping the persistent process ends its child");
	free(pp);
}

/* Runs path with input through ph_exec_nb, driven by an epoll loop as the
 * hub drives it (steps on readiness and every 50 ms), timing out after
 * timeout ms; *steps counts the loop's rounds. */
static struct ph_exec_result
run_nb(const char *path, const char *input, long long timeout, int *steps)
{
	char *argv[] = {(char *)path, NULL};
	struct ph_exec_spec spec = {argv, NULL, dir, timeout, 0};
	struct ph_exec_result res;
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct ph_exec_nb *x = ph_exec_nb_start(&spec, &lim, input, strlen(input), "nb", ep, 7);
	*steps = 0;
	for (;;) {
		struct epoll_event ev[8];
		int n = epoll_wait(ep, ev, 8, 50);
		bool tagged = true;
		for (int i = 0; i < n; i++)
			tagged = tagged && ev[i].data.u64 == 7;
		(*steps)++;
		if (!tagged || ph_exec_nb_step(x) || *steps > 400)
			break;
	}
	ph_exec_nb_finish(x, &res);
	close(ep);
	return res;
}

/* Forks a tracer that holds pid (PTRACE_SEIZE) and never waits for it,
 * so that pid, once killed, cannot be reaped by us until the tracer goes
 * (as a process stuck in the kernel): it goes when killed, or after 20 s.
 * Returns the tracer (owned: ph_exec_disown it once reaped) once it holds
 * pid, -1 when ptrace is refused here. */
static pid_t
hold(pid_t pid)
{
	int p[2];
	char held = 0;
	pid_t t;
	if (pipe(p) != 0)
		return -1;
	if ((t = fork()) == 0) {
		held = ptrace(PTRACE_SEIZE, pid, NULL, NULL) == 0;
		if (write(p[1], &held, 1) == 1 && held) {
			alarm(20);
			for (;;)
				pause(); /* SIGCHLD, when pid dies, may end a pause */
		}
		_exit(0);
	}
	close(p[1]);
	if (t < 0 || read(p[0], &held, 1) != 1 || !held) {
		if (t > 0)
			waitpid(t, NULL, 0);
		t = -1;
	}
	close(p[0]);
	if (t > 0)
		ph_exec_own(t); /* not something a command left behind: the sweep leaves it */
	return t;
}

/* Reaps what ph_exec_reap_dying has, for up to 2 s; returns what is left. */
static size_t
reap_dying_for_a_while(void)
{
	size_t left;
	for (int i = 0; (left = ph_exec_reap_dying()) > 0 && i < 200; i++)
		usleep(10000);
	return left;
}

/* A run abandoned while its leader cannot be reaped (held by a tracer):
 * ph_exec_nb_finish returns without waiting for it, and the leader is
 * reaped later, once it can be. */
static void
nb_held_test(void)
{
	char *p = script("nb-held.sh", "sleep 30"), *argv[] = {p, NULL};
	struct ph_exec_spec spec = {argv, NULL, dir, 0, 0};
	struct ph_exec_result r;
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct ph_exec_nb *x = ph_exec_nb_start(&spec, &lim, "", 0, "nb", ep, 7);
	pid_t tracer = hold(x->r.pid);
	if (tracer < 0) {
		ok(1, "# SKIP ptrace refused here: a leader that cannot be reaped at once");
		ok(1, "# SKIP ptrace refused here: reaped later");
	} else {
		ph_exec_nb_finish(x, &r);
		x = NULL;
		is_int(ph_exec_reap_dying(), 1,
		       "nb: abandoned while a tracer holds its leader, the run ends without waiting for it");
		kill(tracer, SIGKILL);
		waitpid(tracer, NULL, 0);
		ph_exec_disown(tracer);
		is_int(reap_dying_for_a_while(), 0, "nb: the leader is reaped once the tracer lets go");
	}
	if (x != NULL)
		ph_exec_nb_finish(x, &r);
	ph_exec_result_free(&r);
	reap_dying_for_a_while();
	close(ep);
	free(p);
}

/* The event-loop runner (ph_exec_nb.c): an answer, a timeout with SIGKILL
 * after the grace period, the output cap, and no child left behind. */
static void
nb_tests(void)
{
	struct ph_exec_result r;
	char *p, why[200];
	int steps;
	int64_t t0;

	p = script("nb-echo.sh", "cat; echo ' back'");
	r = run_nb(p, "{\"x\":1}", 0, &steps);
	ok(r.status == PH_EXEC_OK, "nb: a command runs (%d steps)", steps);
	is_str(r.out, "{\"x\":1} back\n", "nb: stdin reaches it, stdout comes back");
	ph_exec_result_free(&r);
	free(p);

	p = script("nb-stubborn.sh", "trap '' TERM; while :; do sleep 0.05; done");
	t0 = ph_now_us();
	r = run_nb(p, "", 200, &steps);
	ok(r.status == PH_EXEC_TIMEOUT && ph_now_us() - t0 < 2000000,
	   "nb: past timeout_ms, SIGTERM ignored: killed after the grace period (%s)",
	   ph_exec_describe(&r, why, sizeof why));
	ph_exec_result_free(&r);
	free(p);

	p = script("nb-big.sh", "head -c 200000 /dev/zero | tr '\\0' x");
	r = run_nb(p, "", 0, &steps);
	ok(r.status == PH_EXEC_OVERFLOW, "nb: output over the cap: %s", ph_exec_describe(&r, why, sizeof why));
	ph_exec_result_free(&r);
	free(p);

	/* the leaders killed were not waited for: reaped now */
	is_int(reap_dying_for_a_while(), 0, "nb: the leaders it killed are reaped later, without waiting");
	nb_held_test();
	usleep(50000);
	is_int(children(), 0, "nb: no child process left, zombie or alive");
}

int
main(void)
{
	struct ph_exec_result r;
	struct seen seen;
	struct ph_exec_hooks hooks = {on_line, alive, &seen, "test"};
	char *p;
	char why[200];
	int64_t t0;

	if (mkdtemp(dir) == NULL)
		return 1;
	setenv("PHANTOM_TEST_PASS", "passed", 1);
	setenv("PHANTOM_TEST_SECRET", "leaked", 1);

	p = script("echo.sh", "cat; printf ' argv1=%s' \"$1\"");
	r = run(p, "{\"x\":1}", NULL, 0);
	ok(r.status == PH_EXEC_OK, "a command runs");
	is_str(r.out, "{\"x\":1} argv1=arg one", "stdin reaches it and argv is passed without a shell");
	ph_exec_result_free(&r);
	free(p);

	p = script("env.sh", "printf '%s|%s|%s|%s' \"$PHANTOM_TEST_PASS\" \"$FIXED\" \"${PHANTOM_TEST_SECRET:-none}\" \"$PATH\"");
	r = run(p, NULL, NULL, 0);
	is_str(r.out, "passed|yes|none|" PH_EXEC_DEFAULT_PATH, "only allow-listed variables pass; PATH is the default");
	ph_exec_result_free(&r);
	free(p);

	p = script("cwd.sh", "pwd");
	r = run(p, NULL, NULL, 0);
	ok(strncmp(r.out, dir, strlen(dir)) == 0, "runs in its working directory");
	ph_exec_result_free(&r);
	free(p);

	memset(&seen, 0, sizeof seen);
	p = script("fd3.sh", "echo '{\"progress\":1}' >&3; echo 'to the log' >&2; printf 'partial' >&3; echo done");
	r = run(p, NULL, &hooks, 0);
	ok(r.status == PH_EXEC_OK && seen.n == 2, "fd 3 lines reach the callback (%d)", seen.n);
	is_str(seen.lines[0], "{\"progress\":1}", "first fd 3 line");
	is_str(seen.lines[1], "partial", "an unterminated last line is delivered at the end");
	ph_exec_result_free(&r);
	free(p);

	p = script("exit3.sh", "exit 3");
	r = run(p, NULL, NULL, 0);
	ok(r.status == PH_EXEC_EXIT && r.code == 3, "non-zero exit status: %s", ph_exec_describe(&r, why, sizeof why));
	ph_exec_result_free(&r);
	free(p);

	p = script("crash.sh", "kill -SEGV $$");
	r = run(p, NULL, NULL, 0);
	ok(r.status == PH_EXEC_SIGNAL && r.code == SIGSEGV, "a crash: %s", ph_exec_describe(&r, why, sizeof why));
	ph_exec_result_free(&r);
	free(p);

	p = script("slow.sh", "sleep 30");
	t0 = ph_now_us();
	r = run(p, NULL, NULL, 300);
	ok(r.status == PH_EXEC_TIMEOUT, "a timeout: %s", ph_exec_describe(&r, why, sizeof why));
	ok(ph_now_us() - t0 < 2000000, "the timeout is kept (%lld ms)", (long long)((ph_now_us() - t0) / 1000));
	ph_exec_result_free(&r);
	free(p);

	p = script("stubborn.sh", "trap '' TERM; while :; do sleep 0.05; done");
	t0 = ph_now_us();
	r = run(p, NULL, NULL, 200);
	ok(r.status == PH_EXEC_TIMEOUT && ph_now_us() - t0 < 2000000, "SIGTERM ignored: SIGKILL follows the grace period");
	ph_exec_result_free(&r);
	free(p);

	p = script("big.sh", "head -c 200000 /dev/zero | tr '\\0' x");
	r = run(p, NULL, NULL, 0);
	ok(r.status == PH_EXEC_OVERFLOW, "output over the cap: %s", ph_exec_describe(&r, why, sizeof why));
	ph_exec_result_free(&r);
	free(p);

	memset(&seen, 0, sizeof seen);
	seen.cancel = true;
	p = script("cancel.sh", "sleep 30");
	t0 = ph_now_us();
	r = run(p, NULL, &hooks, 5000);
	ok(r.status == PH_EXEC_CANCELLED && seen.alive_calls == 1, "alive() false cancels within about a second");
	ok(ph_now_us() - t0 < 2500000, "cancellation is prompt");
	ph_exec_result_free(&r);
	free(p);

	p = script("bg.sh", "sleep 30 & echo '{}'");
	t0 = ph_now_us();
	r = run(p, NULL, NULL, 5000);
	ok(r.status == PH_EXEC_OK && ph_now_us() - t0 < 1500000,
	   "a background child holding stdout does not hold the call");
	ph_exec_result_free(&r);
	free(p);

	{
		/* the leader exits; a grandchild in its group that ignores
		 * SIGTERM keeps stdout open: the call is answered at once with
		 * the leader's status and the grandchild is killed */
		pid_t gc;
		int before = group_kills_after_reap;
		p = script("orphan.sh", "(trap '' TERM; exec sleep 30) & echo $! >orphan.pid; echo '{}'");
		t0 = ph_now_us();
		r = run(p, NULL, NULL, 5000);
		gc = pid_file("orphan.pid");
		ok(r.status == PH_EXEC_OK && strcmp(r.out, "{}\n") == 0 && ph_now_us() - t0 < 1500000,
		   "leader exits, a grandchild holds stdout: answered with the leader's status (%lld ms)",
		   (long long)((ph_now_us() - t0) / 1000));
		ok(gc > 0 && dead(gc), "... and the grandchild is killed");
		is_int(group_kills_after_reap - before, 0, "... and its group was killed before the leader was reaped");
		ph_exec_result_free(&r);
		free(p);

		/* both run past the timeout; the grandchild outlives SIGTERM */
		p = script("orphan-slow.sh", "(trap '' TERM; exec sleep 30) & echo $! >orphan-slow.pid; sleep 30");
		before = group_kills_after_reap;
		t0 = ph_now_us();
		r = run(p, NULL, NULL, 300);
		gc = pid_file("orphan-slow.pid");
		ok(r.status == PH_EXEC_TIMEOUT && ph_now_us() - t0 < 2000000,
		   "leader and a grandchild past the timeout: timed out and answered (%lld ms)",
		   (long long)((ph_now_us() - t0) / 1000));
		ok(gc > 0 && dead(gc), "... and the grandchild, which ignores SIGTERM, is killed");
		is_int(group_kills_after_reap - before, 0, "... and its group was killed before the leader was reaped");
		ph_exec_result_free(&r);
		free(p);
	}

	p = script("pgrp.sh", "printf '%s %s' $$ \"$(cut -d' ' -f5 /proc/$$/stat)\"");
	r = run(p, NULL, NULL, 0);
	{
		int leader = 0, group = 0;
		ok(r.status == PH_EXEC_OK && sscanf(r.out, "%d %d", &leader, &group) == 2 && leader == group &&
			   group != (int)getpgrp(),
		   "the command leads a process group of its own (pid and group: %s; ours %d)", r.out,
		   (int)getpgrp());
	}
	ph_exec_result_free(&r);
	free(p);

	p = script("nofile.sh", "ulimit -n");
	r = run(p, NULL, NULL, 0);
	if (getenv("PHANTOM_UNDER_VALGRIND"))
		/* valgrind keeps file descriptors for itself and rewrites RLIMIT_NOFILE */
		printf("ok %d - RLIMIT_NOFILE is applied # SKIP under valgrind\n", ++tap_n);
	else
		is_str(r.out, "64\n", "RLIMIT_NOFILE is applied");
	ph_exec_result_free(&r);
	free(p);

	{
		/* like a worker: SIGPIPE ignored, stop signals blocked, a handler
		 * for SIGHUP; the command must start with none of that */
		sigset_t block, old;
		struct sigaction ign, hup, old_pipe, old_hup;
		memset(&ign, 0, sizeof ign);
		ign.sa_handler = SIG_IGN;
		memset(&hup, 0, sizeof hup);
		hup.sa_handler = on_hup;
		sigaction(SIGPIPE, &ign, &old_pipe);
		sigaction(SIGHUP, &hup, &old_hup);
		sigemptyset(&block);
		sigaddset(&block, SIGTERM);
		sigaddset(&block, SIGHUP);
		sigprocmask(SIG_BLOCK, &block, &old);
		/* the standard signals 1-31 (the C library keeps 32 and 33) */
		p = script("sigs.sh", "grep -E '^Sig(Ign|Blk)' /proc/$$/status | "
				      "while read -r k v; do echo \"$k $(( 0x$v & 0x7fffffff ))\"; done");
		r = run(p, NULL, NULL, 0);
		is_str(r.out, "SigBlk: 0\nSigIgn: 0\n",
		       "a command starts with no signal blocked or ignored (caught ones end at execve)");
		ph_exec_result_free(&r);
		free(p);
		sigprocmask(SIG_SETMASK, &old, NULL);
		sigaction(SIGPIPE, &old_pipe, NULL);
		sigaction(SIGHUP, &old_hup, NULL);
	}

	p = script("cpu.sh", "ulimit -t");
	r = run(p, NULL, NULL, 0);
	is_str(r.out, "10\n", "RLIMIT_CPU is applied");
	ph_exec_result_free(&r);
	free(p);

	p = script("core.sh", "ulimit -c");
	{
		/* a core size we inherit is not passed on under no_core */
		char *argv[] = {p, NULL};
		struct ph_exec_spec spec = {.argv = argv, .no_core = true};
		struct rlimit old, some;
		getrlimit(RLIMIT_CORE, &old);
		some = old;
		some.rlim_cur = old.rlim_max == RLIM_INFINITY || old.rlim_max > 1 << 20 ? 1 << 20 : old.rlim_max;
		if (some.rlim_cur == 0 || setrlimit(RLIMIT_CORE, &some) != 0) {
			printf("ok %d - no_core: the command cannot dump core # SKIP core dumps are off\n", ++tap_n);
		} else {
			ph_exec_run(&spec, &lim, NULL, 0, NULL, &r);
			is_str(r.out, "0\n", "no_core: the command cannot dump core (it may hold secrets)");
			ph_exec_result_free(&r);
			spec.no_core = false;
			ph_exec_run(&spec, &lim, NULL, 0, NULL, &r);
			ok(strcmp(r.out, "0\n") != 0, "without no_core the inherited core size stays (%.*s blocks)",
			   (int)strcspn(r.out, "\n"), r.out);
			ph_exec_result_free(&r);
			setrlimit(RLIMIT_CORE, &old);
		}
	}
	free(p);

	p = script("stdin.sh", "exit 0");
	{
		/* more input than a pipe holds, to a command that never reads */
		size_t n = 1 << 20;
		char *big = ph_xmalloc(n + 1);
		char *argv[] = {p, NULL};
		struct ph_exec_spec spec = {argv, NULL, NULL, 0, 0};
		memset(big, 'x', n);
		big[n] = '\0';
		ph_exec_run(&spec, &lim, big, n, NULL, &r);
		ok(r.status == PH_EXEC_OK, "a command that does not read its input is fine");
		ph_exec_result_free(&r);
		free(big);
	}
	free(p);

	{
		char *argv[] = {"/nonexistent/cmd", NULL};
		struct ph_exec_spec spec = {argv, NULL, NULL, 0, 0};
		ph_exec_run(&spec, &lim, NULL, 0, NULL, &r);
		ok(r.status == PH_EXEC_SPAWN && r.code == ENOENT, "a missing program: %s", ph_exec_describe(&r, why, sizeof why));
		ph_exec_result_free(&r);
	}
	{
		char *argv[] = {"/bin/true", NULL};
		struct ph_exec_spec spec = {argv, NULL, "/nonexistent-dir", 0, 0};
		ph_exec_run(&spec, &lim, NULL, 0, NULL, &r);
		ok(r.status == PH_EXEC_SPAWN, "a bad working directory: %s", ph_exec_describe(&r, why, sizeof why));
		ph_exec_result_free(&r);
	}

	persistent_tests();
	subreaper_tests();
	nb_tests();

	usleep(100000);
	is_int(children(), 0, "no child process left, zombie or alive");
	ok(group_kills > 0 && group_kills_after_reap == 0,
	   "over every run, no process group was signalled after its leader was reaped (%d group kills, "
	   "%d after)",
	   group_kills, group_kills_after_reap);

	p = ph_exec_resolve("sh", NULL, PH_EXEC_DEFAULT_PATH);
	ok(p && p[0] == '/', "bare names are found in PATH (%s)", p ? p : "-");
	free(p);
	p = ph_exec_resolve("echo.sh", dir, PH_EXEC_DEFAULT_PATH);
	ok(p == NULL, "a bare name is not looked up in the config directory");
	free(p);
	p = ph_exec_resolve("./echo.sh", dir, PH_EXEC_DEFAULT_PATH);
	ok(p && strstr(p, dir) == p, "./name is relative to the config directory");
	free(p);
	p = ph_exec_resolve("./", dir, PH_EXEC_DEFAULT_PATH);
	ok(p == NULL, "a directory is not a command");
	free(p);

	{
		char *cmd = ph_xasprintf("rm -rf %s", dir);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", dir);
		free(cmd);
	}
	return tap_done();
}
