/* ph_run.h: the steps of running one exec process, shared by the runner
 * of a call (ph_exec.c: start, poll loop, drain, reap) and the persistent
 * process (ph_exec_proc.c: the same start, leader watch and group
 * killing, a loop that ends at the first line on stdout instead of at EOF).
 * Private to handler/: what the rest of the server uses is ph_exec.h. */
#ifndef PH_RUN_H
#define PH_RUN_H
#include "first.h"
#include "ph_exec.h"
#include "ph_util.h"
#include <poll.h>
#include <stdbool.h>
#include <sys/types.h>

/* Lines of stderr or fd 3 being cut out of what a process writes. */
struct linebuf {
	struct ph_buf b;
	bool skipping; /* the current line went over LINE_MAX_BYTES */
};

struct errlog {
	const char *label;
	size_t logged, dropped, max;
};

struct p3ctx {
	const struct ph_exec_hooks *hooks;
};

enum leader {
	LEADER_RUNNING,
	LEADER_EXITED, /* a zombie, not reaped: its pid and group id stay taken */
	LEADER_GONE,   /* not our child any more (SIGCHLD ignored: the kernel reaped it) */
};

/* One run of ph_exec_run: what its steps share. The pipes are [read, write]
 * pairs, -1 once closed; pst carries the child's errno when execve fails.
 * spec, lim, hooks, input and res are the caller's (borrowed); envp and out
 * are owned here until run_finish. */
struct run {
	const struct ph_exec_spec *spec;
	const struct ph_exec_limits *lim;
	const struct ph_exec_hooks *hooks;
	struct ph_exec_result *res;
	const char *input;
	size_t input_len, written;
	int pin[2], pout[2], perr[2], p3[2], pst[2];
	int pidfd, wstatus;
	pid_t pid;
	bool reaped, killed;
	/* never wait for the leader (the hub's loop): a stop sends SIGKILL
	 * without a grace (the caller runs its own, by steps) and a leader
	 * not dead at once is reaped later (ph_exec_reap_dying) */
	bool nowait;
	long long cap, exit_grace_ms;
	int64_t t0, deadline, next_alive;
	int64_t exited; /* when the loop reaped the leader, 0 before */
	const char *label;
	struct linebuf lerr, l3;
	struct errlog el;
	struct p3ctx pc;
	struct ph_buf out;
	char **envp;
};

/* The fds of one poll, each index -1 when its fd is not polled. */
struct pollset {
	struct pollfd pf[5];
	int np, iin, iout, ierr, i3, ipid;
};

void ph_run_close_fd(int *fd);
/* The stderr log of one call, capped at lim->log_max bytes. */
struct errlog ph_run_errlog(const char *label, const struct ph_exec_limits *lim);
void ph_run_free_env(char **env);
/* SIGKILL to whatever is left of the group, and to the leader itself in
 * case it left the group, while the leader is still unreaped; then reaps the
 * leader (its status in *wstatus). A leader reaped elsewhere (LEADER_GONE)
 * is not signalled: its group id may already belong to someone else. */
void ph_run_kill_and_reap(pid_t pid, int *wstatus, bool *reaped);
/* The same without waiting: a leader not dead at once is reaped later by
 * ph_exec_reap_dying (and counts as reaped, *wstatus saying SIGKILL). */
void ph_run_kill_nowait(pid_t pid, int *wstatus, bool *reaped);
/* The leader's state, read without reaping it (WNOWAIT). */
enum leader ph_run_leader_state(pid_t pid);
int ph_run_pidfd(pid_t pid);
/* The poll timeout in ms: up to the deadline or the next liveness check,
 * at most 50 ms while the leader's exit can only be seen by polling. */
int ph_run_poll_timeout(const struct run *r);
/* Adds fd to the set for events; returns its index. */
int ph_run_pollset_add(struct pollset *ps, int fd, short events);
/* True when poll returned rc > 0 and entry i (if polled) has one of ev. */
bool ph_run_pollset_ready(const struct pollset *ps, int rc, int i, short ev);
/* Reads *fd (stderr or fd 3) and hands its lines to fn; closes *fd at EOF
 * or on an error. */
void ph_run_read_lines(int *fd, struct linebuf *lb, void (*fn)(void *, const char *, size_t), void *ctx);
/* Starts a call's clock: its deadline timeout ms from now (30 s when the
 * caller gave none) and the first liveness check a second from now. */
void ph_run_clock(struct run *r, long long timeout);
/* Closes what a run holds of its process: the pipes, the pidfd, the
 * environment built for it. */
void ph_run_close(struct run *r);
/* After the fds: stops the command past its deadline, or when the hooks
 * say the client went away (asked once a second). Returns true when it
 * was stopped. */
bool ph_run_expired(struct run *r);
/* Fills r for one run: every fd -1, then the call as ph_run_call sets it.
 * Borrows every pointer. */
void ph_run_init(struct run *r, const struct ph_exec_spec *spec, const struct ph_exec_limits *lim, const char *input, size_t input_len, const struct ph_exec_hooks *hooks, struct ph_exec_result *res);
/* Sets r up for one call: res cleared, the hooks and the input, the limits
 * of the spec over those of lim (output cap, stderr log) and the clock
 * started. Borrows every pointer; r->label must be set. */
void ph_run_call(struct run *r, const struct ph_exec_spec *spec, const struct ph_exec_limits *lim, const char *input, size_t input_len, const struct ph_exec_hooks *hooks, struct ph_exec_result *res);
/* Opens the pipes, builds the environment and starts the command in its
 * own process group, keeping our ends of the pipes. Returns true when the
 * command runs; false with res set to PH_EXEC_SPAWN. */
bool ph_run_start(struct run *r);
/* Ends the command early with status: SIGTERM to its group, SIGKILL after
 * grace_ms, and the leader reaped. */
void ph_run_stop(struct run *r, enum ph_exec_status status, long long grace_ms);
/* Waits at most ms for the leader to exit, leaving it unreaped; true when
 * it has. */
bool ph_run_wait_exit(pid_t pid, int ms);
/* write() to the command's stdin without dying of SIGPIPE when it has
 * exited: the server ignores SIGPIPE, a program embedding libphantom may
 * not. A SIGPIPE raised here is taken back before the mask is restored. */
ssize_t ph_run_write_nopipe(int fd, const void *p, size_t n);
/* Reads what *fd has now, handing lines to fn; at most a few rounds, so a
 * flood cannot hold the caller. */
void ph_run_drain_lines(int *fd, struct linebuf *lb, void (*fn)(void *, const char *, size_t), void *ctx);
/* Readies a started command for a poll loop: a pidfd for its exit where
 * the kernel has one, our pipe ends non-blocking, stdin closed at once when
 * there is no input. */
void ph_run_watch(struct run *r);
/* Writes what stdin takes of the input without blocking; closes it once
 * all is written or the command does not read. */
void ph_run_feed_stdin(struct run *r);
/* Reads stdout once into r->out, closing it at EOF; false when the output
 * went over the cap and the command was killed (PH_EXEC_OVERFLOW). */
bool ph_run_read_stdout(struct run *r);
/* After the command has ended: reads what is still in the pipes without
 * waiting for a writer that escaped. */
void ph_run_drain(struct run *r);
/* Flushes the last lines, closes every fd and hands the output to r->res
 * (stolen on PH_EXEC_OK, wiped otherwise). Returns 0 on PH_EXEC_OK. */
int ph_run_finish(struct run *r);
/* True (after logging) when the leader exited limits.exec_exit_grace_ms
 * ago and something it started still holds an output open: the answer is
 * then taken as it is. */
bool ph_run_exit_grace_over(const struct run *r);
void ph_run_log_stderr(void *ctx, const char *line, size_t len);
void ph_run_fd3_line(void *ctx, const char *line, size_t len);
#endif
