/* ph_exec.h: runs one external command for a request, safely.
 *
 * Used by exec handlers of tools, prompts, resources and completion, and by
 * any feature that runs a program per request (dynamic skills, the exec auth
 * mode). The command runs without a shell, in its own process group, with a
 * scrubbed environment, resource limits, a wall-clock timeout (SIGTERM, then
 * SIGKILL to the whole group) and a cap on its output; it is always reaped
 * and nothing it started outlives the call. Its stdin gets the input bytes;
 * its stdout is collected; its stderr goes line by line to the server log
 * (never to a client); lines it writes on fd 3 are handed to a callback. */
#ifndef PH_EXEC_H
#define PH_EXEC_H
#include "first.h"
#include <sys/types.h>

struct ph_buf;

/* A persistent handler (phantom.yaml(5), EXEC HANDLERS, Persistent
 * handlers): the program stays up between calls and is replaced after
 * max_calls calls, idle_ms without one, or once its resident set passes
 * max_rss bytes (0: no limit). */
struct ph_exec_persist {
	bool on;
	bool start; /* started when the worker starts, not at the first call */
	long long max_calls, idle_ms, max_rss;
};
#define PH_PERSIST_MAX_CALLS 10000
#define PH_PERSIST_IDLE_MS 300000

/* What to run. Built at configuration load; never changed afterwards. */
struct ph_exec_spec {
	char **argv;  /* NULL-terminated; argv[0] is an absolute path */
	char **env;   /* NULL-terminated: "NAME" passes our value on, "NAME=value" sets it */
	char *cwd;    /* working directory, NULL: the server's */
	long long timeout_ms; /* 0: limits.exec_timeout_ms */
	long long max_output; /* 0: limits.exec_max_output */
	bool no_core;         /* RLIMIT_CORE 0: the command handles secrets (auth) */
	struct ph_exec_persist persist;
};

/* Server-wide limits (phantom.yaml `limits.exec_*`). 0 leaves an rlimit as
 * inherited. log_max bounds the stderr bytes logged per call (0:
 * PH_EXEC_LOG_MAX); exit_grace_ms is how long stdout is still read after
 * the command itself has exited while something it started holds it open. */
struct ph_exec_limits {
	long long timeout_ms, grace_ms, max_output;
	long long cpu_s, memory, files, procs;
	long long log_max, exit_grace_ms;
};
#define PH_EXEC_LOG_MAX 65536

struct ph_exec_hooks {
	/* One line the command wrote on fd 3 (without the newline, NUL-terminated). */
	void (*fd3_line)(void *ctx, const char *line, size_t len);
	/* Asked about once a second; returning false cancels the command. */
	bool (*alive)(void *ctx);
	void *ctx;
	const char *label; /* names the command in log lines ("tool deploy") */
	/* "NAME=value" entries added to this run's environment (the request's
	 * trace context), NULL-terminated; may be NULL */
	char *const *env;
	/* NULL: stdin is closed once the input is written. Else stdin stays
	 * open, and bytes the callbacks add to *more are written to it (and
	 * taken out of it): a task that awaits its answers (ph_hub_task.c). */
	struct ph_buf *more;
};

enum ph_exec_status {
	PH_EXEC_OK,        /* exited with status 0 */
	PH_EXEC_SPAWN,     /* could not be started (code: errno) */
	PH_EXEC_EXIT,      /* exited with a non-zero status (code) */
	PH_EXEC_SIGNAL,    /* died of a signal (code), e.g. a crash */
	PH_EXEC_TIMEOUT,   /* ran past its timeout and was killed */
	PH_EXEC_OVERFLOW,  /* wrote more than max_output on stdout and was killed */
	PH_EXEC_CANCELLED, /* the request was cancelled and the command killed */
	PH_EXEC_CLOSED,    /* persistent: closed its stdout without answering */
};

struct ph_exec_result {
	enum ph_exec_status status;
	int code;
	char *out;      /* stdout, NUL-terminated (caller frees with ph_exec_result_free) */
	size_t out_len;
	int64_t us;     /* wall time */
};

/* Runs spec with input on stdin. Always fills res (the status says how it
 * went); returns 0 when the command ran to a normal exit with status 0. */
int ph_exec_run(const struct ph_exec_spec *spec, const struct ph_exec_limits *lim,
		const char *input, size_t input_len, const struct ph_exec_hooks *hooks,
		struct ph_exec_result *res);
void ph_exec_result_free(struct ph_exec_result *res);
/* A short description for the log ("exit status 3", "killed by signal 11
 * (Segmentation fault)", "timed out after 500 ms"). Returns buf. */
const char *ph_exec_describe(const struct ph_exec_result *res, char *buf, size_t n);

/* ---- persistent processes (ph_persist.c keeps them) ----------------------
 * The same start as ph_exec_run (own process group, scrubbed environment,
 * rlimits, cwd, stderr to the log), but the process stays up: each call
 * writes one line on its stdin and reads one line from its stdout. Its
 * group is signalled only while the leader is unreaped, as above. */
struct ph_exec_proc;

/* Starts spec as a persistent process. Returns it (stop it with
 * ph_exec_proc_stop), or NULL with res set to PH_EXEC_SPAWN. label is
 * copied. */
struct ph_exec_proc *ph_exec_proc_start(const struct ph_exec_spec *spec,
					const struct ph_exec_limits *lim, const char *label,
					struct ph_exec_result *res);
/* One call: writes line (which must end in a newline) and waits for one
 * line on stdout, handing fd 3 lines to hooks, until the timeout of spec,
 * a cancellation (hooks->alive), an answer longer than the output cap, the
 * process closing its stdout or dying. On PH_EXEC_OK res->out holds the
 * answer without its newline, and *extra is set when more bytes followed it
 * (an answer twice). Any other status has killed the process (or found it
 * dead): it can only be stopped. Returns 0 on PH_EXEC_OK, else -1. */
int ph_exec_proc_call(struct ph_exec_proc *p, const struct ph_exec_spec *spec,
		      const struct ph_exec_limits *lim, const char *line, size_t len,
		      const struct ph_exec_hooks *hooks, struct ph_exec_result *res, bool *extra);
/* Between calls: logs what it wrote on stderr, drops fd 3 lines, and says
 * whether it can take a call: false when it has died or written on stdout
 * unasked (or closed it). The dead leader is reaped here with its group
 * killed first. */
bool ph_exec_proc_ready(struct ph_exec_proc *p);
/* The process's resident set in bytes, -1 when unknown. */
long long ph_exec_proc_rss(const struct ph_exec_proc *p);
/* A pidfd that becomes readable when the leader exits, -1 when the kernel
 * has none. */
int ph_exec_proc_pidfd(const struct ph_exec_proc *p);
pid_t ph_exec_proc_pid(const struct ph_exec_proc *p);
/* Closes its stdin, kills its group (while the leader is unreaped), reaps
 * it, closes every fd and frees p. NULL is fine. */
void ph_exec_proc_stop(struct ph_exec_proc *p);

/* Makes this process a child subreaper (PR_SET_CHILD_SUBREAPER), so that
 * whatever a command starts and leaves behind, even after setsid, becomes
 * our child when its parent dies, and is killed and reaped after each run
 * (ph_exec_sweep). For the server's own processes (worker, single process,
 * stdio, CGI), never for a program embedding libphantom, whose other
 * children the sweep would take. Returns false where the kernel has no
 * subreapers. */
bool ph_exec_subreaper(void);
/* With ph_exec_subreaper on: SIGKILLs and reaps every child of ours that
 * we did not start, except those still in the process group of a command
 * we run (a persistent process's own background work goes with it).
 * Called after every run and stop; harmless at any time. */
void ph_exec_sweep(void);
/* Counts pid, a child the caller started and reaps itself (a stdio call's
 * process), as one of ours, so the sweep leaves it and its group alone;
 * ph_exec_disown once it is reaped. */
void ph_exec_own(pid_t pid);
void ph_exec_disown(pid_t pid);
/* Reaps, without waiting, the leaders a run that may not wait killed when
 * they could not be reaped at once (ph_exec_nb: one stuck in the kernel or
 * held by a tracer), SIGKILLing their groups again. Returns how many are
 * still there; call it on SIGCHLD and now and then while it is not 0. */
size_t ph_exec_reap_dying(void);

/* ---- a run driven by the caller's event loop (ph_exec_nb.c) --------------
 * For a process that must never wait (the hub): the same start, limits,
 * output cap, stderr logging and reaping as ph_exec_run, but each step
 * does only what the descriptors allow now. The descriptors are armed
 * one-shot in the epoll set ep with data.u64 tag; call ph_exec_nb_step
 * when tag fires and on a timer (the deadline and, without pidfds, the
 * leader's exit are seen there). */
struct ph_exec_nb;

/* Starts spec (borrowed only for the start) with input (copied) on stdin,
 * label naming it in log lines. Always returns a run; one that could not
 * start is done at once (PH_EXEC_SPAWN). */
struct ph_exec_nb *ph_exec_nb_start(const struct ph_exec_spec *spec, const struct ph_exec_limits *lim,
				    const char *input, size_t len, const char *label, int ep, uint64_t tag);
/* Does what can be done without waiting; past spec's timeout, SIGTERM to
 * the group and SIGKILL once lim's grace_ms has passed too (the run is
 * then over, its leader reaped later by ph_exec_reap_dying when it is not
 * dead at once). Returns true when the run is over (call
 * ph_exec_nb_finish). */
bool ph_exec_nb_step(struct ph_exec_nb *x);
/* SIGCHLD: reaps the leader now if it has exited (its group killed
 * first), before a waitpid(-1) elsewhere takes its status. */
void ph_exec_nb_reap(struct ph_exec_nb *x);
/* Fills res as ph_exec_run does (free it with ph_exec_result_free) and
 * frees x; a run not over yet is killed first (PH_EXEC_CANCELLED), its
 * leader reaped now if it is dead at once, else by ph_exec_reap_dying.
 * Returns 0 on PH_EXEC_OK, else -1. */
int ph_exec_nb_finish(struct ph_exec_nb *x, struct ph_exec_result *res);

/* Resolves a command name at load: a name with '/' is taken relative to dir,
 * a bare name is searched in path (a PATH value). Returns the absolute path
 * of an executable file (caller frees) or NULL with errno set. */
char *ph_exec_resolve(const char *name, const char *dir, const char *path);
/* The PATH given to commands unless the env allow-list sets one. */
#define PH_EXEC_DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"
#endif
