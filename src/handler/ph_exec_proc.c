/* ph_exec_proc.c: a persistent exec process (ph_exec.h, ph_exec_proc_*).
 * It is a struct run that outlives one call: the same start
 * (ph_run_start), the same leader watch and the same group killing as a
 * call's run in ph_exec.c; only the loop differs, ending at the first line
 * on stdout instead of at EOF. ph_persist.c keeps one per handler. */
#include "first.h"
#include "ph_exec.h"
#include "ph_log.h"
#include "ph_run.h"
#include "ph_util.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
/* ---- persistent processes ------------------------------------------------------
 * A persistent process is a struct run that outlives one call: the same
 * start (ph_run_start), the same leader watch and the same group killing; only
 * the loop differs, ending at the first line on stdout instead of at EOF. */

struct ph_exec_proc {
	struct run r;               /* pipes, pid, pidfd, reaped; r.res points at the call's result */
	struct ph_exec_result sres; /* the result of the start */
	struct ph_exec_hooks h;     /* the label, for the start */
	char *label;                /* owned */
	struct ph_buf ob;           /* stdout bytes of the call in progress */
	long long log_max;          /* limits.exec_log_max at the start, for between calls */
};

static void
proc_free(struct ph_exec_proc *p)
{
	struct run *r = &p->r;
	ph_run_close(r);
	ph_buf_free(&r->lerr.b);
	ph_buf_free(&r->l3.b);
	ph_buf_free(&r->out);
	ph_buf_free(&p->ob);
	free(p->label);
	free(p);
}

struct ph_exec_proc *
ph_exec_proc_start(const struct ph_exec_spec *spec, const struct ph_exec_limits *lim, const char *label,
		   struct ph_exec_result *res)
{
	struct ph_exec_proc *p = ph_xcalloc(1, sizeof *p);
	struct run *r = &p->r;
	p->label = ph_xstrdup(label ? label : spec->argv[0]);
	p->h.label = p->label;
	p->log_max = lim->log_max;
	ph_run_init(r, spec, lim, NULL, 0, &p->h, &p->sres);
	ph_buf_init(&p->ob);
	if (!ph_run_start(r)) {
		*res = p->sres;
		res->out = ph_xstrdup("");
		proc_free(p);
		return NULL;
	}
	/* vfork: the child has exec'd, its environment copy is no longer needed */
	ph_run_free_env(r->envp);
	r->envp = NULL;
	r->pidfd = ph_run_pidfd(r->pid);
	fcntl(r->pin[1], F_SETFL, O_NONBLOCK);
	fcntl(r->pout[0], F_SETFL, O_NONBLOCK);
	fcntl(r->perr[0], F_SETFL, O_NONBLOCK);
	fcntl(r->p3[0], F_SETFL, O_NONBLOCK);
	/* what ph_run_init borrowed is only good for the start */
	r->spec = NULL;
	r->lim = NULL;
	r->hooks = NULL;
	r->res = NULL;
	memset(res, 0, sizeof *res);
	return p;
}

/* Takes the first line of p->ob as the answer into res (without its
 * newline or a '\r' before it); *extra when bytes follow it. Returns false
 * while there is no complete line. */
static bool
proc_take_answer(struct ph_exec_proc *p, struct ph_exec_result *res, bool *extra)
{
	char *nl = p->ob.len ? memchr(p->ob.data, '\n', p->ob.len) : NULL;
	size_t n;
	if (nl == NULL)
		return false;
	n = (size_t)(nl - p->ob.data);
	*extra = p->ob.len > n + 1;
	if (n > 0 && p->ob.data[n - 1] == '\r')
		n--;
	res->out = ph_xmalloc(n + 1);
	memcpy(res->out, p->ob.data, n);
	res->out[n] = '\0';
	res->out_len = n;
	ph_buf_reset(&p->ob);
	return true;
}

/* Reads what stdout has into p->ob. Returns 1 when a complete line is
 * there, 0 when more is to come, -1 at EOF or on an error (stdout closed)
 * and -2 when the line went over the cap. */
static int
proc_read_stdout(struct ph_exec_proc *p)
{
	struct run *r = &p->r;
	char buf[16384];
	for (;;) {
		ssize_t n = read(r->pout[0], buf, sizeof buf);
		if (n > 0) {
			ph_buf_add(&p->ob, buf, (size_t)n);
			if (memchr(buf, '\n', (size_t)n) != NULL) {
				char *nl = memchr(p->ob.data, '\n', p->ob.len);
				return (long long)(nl - p->ob.data) > r->cap ? -2 : 1;
			}
			if ((long long)p->ob.len > r->cap)
				return -2;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		ph_run_close_fd(&r->pout[0]);
		return -1;
	}
}

/* The status of a leader that exited during a call, from its wait status. */
static void
proc_exit_status(struct run *r, struct ph_exec_result *res)
{
	if (WIFSIGNALED(r->wstatus)) {
		res->status = PH_EXEC_SIGNAL;
		res->code = WTERMSIG(r->wstatus);
	} else {
		res->status = PH_EXEC_EXIT;
		res->code = WIFEXITED(r->wstatus) ? WEXITSTATUS(r->wstatus) : 0;
	}
}

/* Prepares the run for one call: the hooks, limits and clock of this call. */
static void
proc_call_init(struct ph_exec_proc *p, const struct ph_exec_spec *spec, const struct ph_exec_limits *lim,
	       const char *line, size_t len, const struct ph_exec_hooks *hooks, struct ph_exec_result *res)
{
	ph_run_call(&p->r, spec, lim, line, len, hooks, res);
	ph_buf_reset(&p->ob);
}

/* One poll round of a call. Returns 1 when the answer is in, 0 to go on,
 * -1 when the call ended otherwise (res->status says how). */
static int
proc_round(struct ph_exec_proc *p, struct ph_exec_result *res, bool *extra)
{
	struct run *r = &p->r;
	struct pollset ps;
	int rc, got = 0;
	ps.np = 0;
	ps.iin = ps.iout = ps.ierr = ps.i3 = ps.ipid = -1;
	if (r->pin[1] >= 0 && r->written < r->input_len)
		ps.iin = ph_run_pollset_add(&ps, r->pin[1], POLLOUT);
	if (r->pout[0] >= 0)
		ps.iout = ph_run_pollset_add(&ps, r->pout[0], POLLIN);
	if (r->perr[0] >= 0)
		ps.ierr = ph_run_pollset_add(&ps, r->perr[0], POLLIN);
	if (r->p3[0] >= 0)
		ps.i3 = ph_run_pollset_add(&ps, r->p3[0], POLLIN);
	if (r->pidfd >= 0 && !r->reaped)
		ps.ipid = ph_run_pollset_add(&ps, r->pidfd, POLLIN);
	rc = poll(ps.pf, (nfds_t)ps.np, ph_run_poll_timeout(r));
	if (rc < 0 && errno != EINTR) {
		ph_run_stop(r, PH_EXEC_CLOSED, 0);
		return -1;
	}
	if (ph_run_pollset_ready(&ps, rc, ps.iin, POLLOUT | POLLERR | POLLHUP)) {
		ssize_t w = ph_run_write_nopipe(r->pin[1], r->input + r->written, r->input_len - r->written);
		if (w > 0)
			r->written += (size_t)w;
		else if (w < 0 && errno != EAGAIN && errno != EINTR)
			ph_run_close_fd(&r->pin[1]); /* it closed its stdin: its exit tells the rest */
	}
	if (ph_run_pollset_ready(&ps, rc, ps.ierr, POLLIN | POLLHUP | POLLERR))
		ph_run_read_lines(&r->perr[0], &r->lerr, ph_run_log_stderr, &r->el);
	if (ph_run_pollset_ready(&ps, rc, ps.i3, POLLIN | POLLHUP | POLLERR))
		ph_run_read_lines(&r->p3[0], &r->l3, ph_run_fd3_line, &r->pc);
	if (ph_run_pollset_ready(&ps, rc, ps.iout, POLLIN | POLLHUP | POLLERR)) {
		got = proc_read_stdout(p);
		if (got == -2) {
			ph_run_stop(r, PH_EXEC_OVERFLOW, 0);
			return -1;
		}
		if (got == 1)
			return proc_take_answer(p, res, extra) ? 1 : 0;
		if (got == -1) {
			/* stdout closes as the process dies: a crash is told as one */
			if (ph_run_wait_exit(r->pid, 100)) {
				ph_run_kill_and_reap(r->pid, &r->wstatus, &r->reaped);
				proc_exit_status(r, res);
			} else {
				ph_run_stop(r, PH_EXEC_CLOSED, 0);
			}
			return -1;
		}
	}
	if (!r->reaped && (ps.ipid < 0 || ph_run_pollset_ready(&ps, rc, ps.ipid, POLLIN)) &&
	    ph_run_leader_state(r->pid) != LEADER_RUNNING) {
		/* it died: an answer it wrote just before still counts; then
		 * its group goes, before the leader is reaped */
		got = r->pout[0] >= 0 ? proc_read_stdout(p) : 0;
		ph_run_kill_and_reap(r->pid, &r->wstatus, &r->reaped);
		if (got == 1 && proc_take_answer(p, res, extra)) {
			*extra = true; /* not to be used again */
			return 1;
		}
		proc_exit_status(r, res);
		return -1;
	}
	return ph_run_expired(r) ? -1 : 0;
}

int
ph_exec_proc_call(struct ph_exec_proc *p, const struct ph_exec_spec *spec, const struct ph_exec_limits *lim,
		  const char *line, size_t len, const struct ph_exec_hooks *hooks, struct ph_exec_result *res,
		  bool *extra)
{
	struct run *r = &p->r;
	int rc = 0;
	*extra = false;
	proc_call_init(p, spec, lim, line, len, hooks, res);
	if (r->reaped || r->pin[1] < 0 || r->pout[0] < 0) {
		res->status = PH_EXEC_CLOSED;
		rc = -1;
	}
	while (rc == 0)
		rc = proc_round(p, res, extra);
	if (r->el.dropped)
		ph_log("info", "%s: stderr: %zu more bytes not logged", p->label, r->el.dropped);
	/* an fd 3 line cut short belongs to no later call */
	ph_buf_reset(&r->l3.b);
	r->l3.skipping = false;
	r->hooks = NULL;
	r->pc = (struct p3ctx){NULL};
	r->lim = NULL;
	r->res = NULL;
	res->us = ph_now_us() - r->t0;
	if (r->reaped)
		ph_exec_sweep();
	if (rc == 1)
		return 0;
	if (!r->reaped) /* never left running after a failed call */
		ph_run_kill_and_reap(r->pid, &r->wstatus, &r->reaped);
	ph_exec_sweep();
	free(res->out);
	res->out = ph_xstrdup("");
	res->out_len = 0;
	ph_buf_reset(&p->ob);
	return -1;
}

static void
drop_line(void *ctx, const char *line, size_t len)
{
	size_t *n = ctx;
	(void)line;
	*n += len;
}

bool
ph_exec_proc_ready(struct ph_exec_proc *p)
{
	struct run *r = &p->r;
	struct pollfd pf;
	size_t dropped = 0;
	if (r->reaped)
		return false;
	r->el = ph_run_errlog(p->label, &(struct ph_exec_limits){.log_max = p->log_max});
	ph_run_drain_lines(&r->perr[0], &r->lerr, ph_run_log_stderr, &r->el);
	ph_run_drain_lines(&r->p3[0], &r->l3, drop_line, &dropped);
	ph_buf_reset(&r->l3.b);
	if (dropped)
		ph_log("info", "%s: fd 3: %zu bytes written between calls, dropped", p->label, dropped);
	if (ph_run_leader_state(r->pid) != LEADER_RUNNING) {
		ph_run_kill_and_reap(r->pid, &r->wstatus, &r->reaped);
		ph_exec_sweep();
		ph_log("info", "%s: the persistent process exited between calls", p->label);
		return false;
	}
	if (r->pin[1] < 0 || r->pout[0] < 0)
		return false;
	pf = (struct pollfd){r->pout[0], POLLIN, 0};
	if (poll(&pf, 1, 0) > 0) {
		ph_log("warning", "%s: the persistent process wrote on stdout (or closed it) between calls; "
		       "replacing it", p->label);
		return false;
	}
	return true;
}

long long
ph_exec_proc_rss(const struct ph_exec_proc *p)
{
	char path[64];
	long long size = 0, resident = -1;
	FILE *f;
	snprintf(path, sizeof path, "/proc/%d/statm", (int)p->r.pid);
	f = fopen(path, "re");
	if (f == NULL)
		return -1;
	if (fscanf(f, "%lld %lld", &size, &resident) != 2)
		resident = -1;
	fclose(f);
	return resident < 0 ? -1 : resident * (long long)sysconf(_SC_PAGESIZE);
}

int
ph_exec_proc_pidfd(const struct ph_exec_proc *p)
{
	return p->r.reaped ? -1 : p->r.pidfd;
}

pid_t
ph_exec_proc_pid(const struct ph_exec_proc *p)
{
	return p->r.pid;
}

void
ph_exec_proc_stop(struct ph_exec_proc *p)
{
	if (p == NULL)
		return;
	/* a loop reading stdin sees EOF; whatever is left of its group is
	 * killed while the leader is still unreaped */
	ph_run_close_fd(&p->r.pin[1]);
	if (!p->r.reaped && p->r.pid > 0)
		ph_run_kill_and_reap(p->r.pid, &p->r.wstatus, &p->r.reaped);
	ph_exec_sweep();
	proc_free(p);
}
