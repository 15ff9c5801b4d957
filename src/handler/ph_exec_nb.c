/* ph_exec_nb.c: one exec command driven by the caller's event loop rather
 * than by a loop of its own (ph_exec_run), for a process that serves many
 * clients and must never wait: the hub. The same steps run it (ph_run.h:
 * start, environment, rlimits, stdin, the output cap, stderr to the log,
 * its group killed before the leader is reaped), but nothing here blocks:
 * the descriptors are armed one-shot in the caller's epoll set, a timeout
 * sends SIGTERM to the group and SIGKILL once limits.exec_grace_ms has
 * passed, at a later step rather than after a sleep, and a leader that is
 * not dead at once when killed is reaped later (ph_exec_reap_dying), never
 * waited for. */
#include "first.h"
#include "ph_exec.h"
#include "ph_log.h"
#include "ph_run.h"
#include "ph_util.h"
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>

struct ph_exec_nb {
	struct run r;
	struct ph_exec_result res;
	struct ph_exec_limits lim;
	struct ph_exec_hooks hooks; /* only its label: fd 3 lines are dropped */
	char *label, *input;
	int ep;
	uint64_t tag;
	int64_t kill_at;  /* timed out: SIGKILL from then on (0: not timed out) */
	bool lost;        /* the leader was reaped by someone else: no status */
	bool done;
};

/* Arms fd (when open) for events, once: a descriptor that is closed while
 * something forked meanwhile still holds it stays disarmed, never firing
 * again (epoll keeps a registration while any copy of the file lives). */
static void
arm(struct ph_exec_nb *x, int fd, uint32_t events)
{
	struct epoll_event ev;
	if (fd < 0)
		return;
	memset(&ev, 0, sizeof ev);
	ev.events = events | EPOLLONESHOT;
	ev.data.u64 = x->tag;
	if (epoll_ctl(x->ep, EPOLL_CTL_MOD, fd, &ev) != 0 && errno == ENOENT)
		epoll_ctl(x->ep, EPOLL_CTL_ADD, fd, &ev);
}

static void
rearm(struct ph_exec_nb *x)
{
	struct run *r = &x->r;
	arm(x, r->pin[1], EPOLLOUT);
	arm(x, r->pout[0], EPOLLIN);
	arm(x, r->perr[0], EPOLLIN);
	arm(x, r->p3[0], EPOLLIN);
	if (!r->reaped)
		arm(x, r->pidfd, EPOLLIN);
}

struct ph_exec_nb *
ph_exec_nb_start(const struct ph_exec_spec *spec, const struct ph_exec_limits *lim, const char *input,
		 size_t len, const char *label, int ep, uint64_t tag)
{
	struct ph_exec_nb *x = ph_xcalloc(1, sizeof *x);
	x->lim = *lim;
	x->label = ph_xstrdup(label);
	x->input = ph_xmalloc(len + 1);
	memcpy(x->input, input, len);
	x->input[len] = '\0';
	x->hooks.label = x->label;
	x->ep = ep;
	x->tag = tag;
	ph_run_init(&x->r, spec, &x->lim, x->input, len, &x->hooks, &x->res);
	x->r.nowait = true;
	if (!ph_run_start(&x->r)) {
		x->done = true;
		return x;
	}
	/* the spec is the registry's, which a reload frees: not used again */
	x->r.spec = NULL;
	ph_run_watch(&x->r);
	rearm(x);
	return x;
}

/* Reaps the leader once it has exited, its group killed first; notes a
 * leader someone else reaped (its status is then unknown). */
static void
reap_exited(struct ph_exec_nb *x)
{
	struct run *r = &x->r;
	enum leader st;
	if (r->reaped || (st = ph_run_leader_state(r->pid)) == LEADER_RUNNING)
		return;
	x->lost = st == LEADER_GONE;
	ph_run_kill_nowait(r->pid, &r->wstatus, &r->reaped);
	if (!r->exited)
		r->exited = ph_now_us();
}

/* Past the deadline: SIGTERM to the group; past the grace too, SIGKILL
 * and the leader reaped, or left to ph_exec_reap_dying when it is not dead
 * at once (stuck in the kernel, held by a tracer): the run is over all the
 * same. */
static void
enforce_deadline(struct ph_exec_nb *x, int64_t now)
{
	struct run *r = &x->r;
	if (r->reaped)
		return;
	if (x->kill_at == 0 && now >= r->deadline) {
		r->res->status = PH_EXEC_TIMEOUT;
		r->killed = true;
		kill(-r->pid, SIGTERM);
		kill(r->pid, SIGTERM);
		x->kill_at = now + (x->lim.grace_ms > 0 ? x->lim.grace_ms : 1) * 1000;
	} else if (x->kill_at != 0 && now >= x->kill_at) {
		ph_run_kill_nowait(r->pid, &r->wstatus, &r->reaped);
	}
}

/* Sets the status from how the leader ended, unless it was stopped. */
static void
settle(struct ph_exec_nb *x)
{
	struct run *r = &x->r;
	if (r->killed)
		return;
	if (x->lost) {
		ph_log("warning", "%s: reaped elsewhere before its exit status was read", x->label);
		r->res->status = PH_EXEC_EXIT;
		r->res->code = -1;
	} else if (WIFEXITED(r->wstatus)) {
		r->res->code = WEXITSTATUS(r->wstatus);
		r->res->status = r->res->code == 0 ? PH_EXEC_OK : PH_EXEC_EXIT;
	} else if (WIFSIGNALED(r->wstatus)) {
		r->res->code = WTERMSIG(r->wstatus);
		r->res->status = PH_EXEC_SIGNAL;
	}
}

bool
ph_exec_nb_step(struct ph_exec_nb *x)
{
	struct run *r = &x->r;
	if (x->done)
		return true;
	if (r->pin[1] >= 0)
		ph_run_feed_stdin(r);
	for (int i = 0; i < 8 && r->pout[0] >= 0 && !r->killed; i++) {
		size_t before = r->out.len;
		if (!ph_run_read_stdout(r) || r->out.len == before)
			break; /* over the cap (killed and reaped), drained, or EOF */
	}
	if (r->perr[0] >= 0)
		ph_run_read_lines(&r->perr[0], &r->lerr, ph_run_log_stderr, &r->el);
	if (r->p3[0] >= 0)
		ph_run_read_lines(&r->p3[0], &r->l3, ph_run_fd3_line, &r->pc);
	reap_exited(x);
	enforce_deadline(x, ph_now_us());
	if (r->reaped && (r->killed || (r->pout[0] < 0 && r->perr[0] < 0 && r->p3[0] < 0) ||
			  ph_run_exit_grace_over(r))) {
		x->done = true;
		ph_exec_sweep(); /* where we are a subreaper (not the hub): what it left */
		ph_run_drain(r);
		settle(x);
		return true;
	}
	rearm(x);
	return false;
}

void
ph_exec_nb_reap(struct ph_exec_nb *x)
{
	if (!x->done && x->r.pid > 0)
		reap_exited(x);
}

int
ph_exec_nb_finish(struct ph_exec_nb *x, struct ph_exec_result *res)
{
	int rc;
	if (!x->r.reaped && x->r.pid > 0) { /* abandoned while it runs */
		x->r.killed = true;
		x->r.res->status = PH_EXEC_CANCELLED;
		ph_run_kill_nowait(x->r.pid, &x->r.wstatus, &x->r.reaped);
		ph_exec_sweep();
	}
	rc = ph_run_finish(&x->r);
	*res = x->res;
	free(x->label);
	free(x->input);
	free(x);
	return rc;
}
