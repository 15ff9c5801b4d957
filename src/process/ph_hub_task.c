/* ph_hub_task.c: task processes, run by supervisors the hub forks
 * (ph_hub_task.h). A supervisor is not a child of any worker, so recycling
 * workers or reloading leaves it running; it dies with the hub
 * (PR_SET_PDEATHSIG), marking its task failed on the way. */
#include "first.h"
#include "ph_otel.h"
#include "ph_hub_task.h"
#include "ph_call.h"
#include "ph_cluster.h"
#include "ph_exec.h"
#include "ph_exec_conf.h"
#include "ph_features.h"
#include "ph_json.h"
#include "ph_registry.h"
#include "ph_shared.h"
#include "ph_task.h"
#include "ph_util.h"
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A pass over the store starts tasks.purge_interval_ms after the last one
 * ended, and reads at most this many records per loop of the hub. */
#define PASS_STEP 2000
/* A record without a supervisor is left alone this long after it was
 * made: its worker may still be asking the hub to start it. */
#define UNSTARTED_GRACE_MS 30000
/* How long a supervisor waits for the worker to take an inline
 * input_required answer. */
#define TOOK_WAIT_MS 5000
/* The value the hub queues with SIGUSR1 to cancel a task whose record
 * cannot say so (sigqueue: a plain kill -USR1 only wakes). */
#define SIG_CANCEL 0x70686378

struct running {
	pid_t pid;
	char id[PH_TASK_ID_MAX];
	char *owner; /* NULL: anonymous */
};

struct ph_hub_tasks {
	struct ph_server *srv; /* borrowed: the hub's */
	ph_hub_task_fn changed;
	void *ctx;
	struct running *v;
	size_t n, cap;
	long long records;       /* in the store, as of the last pass plus those started since */
	long long pass_records;  /* counted by the pass in progress */
	DIR *pass;               /* the pass in progress, NULL between passes */
	struct ph_htr *redis;    /* with cluster: the pass over Redis */
	int64_t next_pass_us;
};

static char *
store_dir(const struct ph_server *srv)
{
	return ph_path_join(srv->conf->dir, srv->conf->tasks.dir);
}

/* The start time of pid (field 22 of /proc/pid/stat), 0 when it is gone. */
static unsigned long long
proc_start(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long start = 0;
	FILE *f;
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return 0;
	if (fgets(buf, sizeof buf, f) && (p = strrchr(buf, ')')) != NULL) {
		/* after the command: state is field 3, starttime field 22 */
		int field = 2;
		for (p++; *p && field < 22; p++)
			if (*p == ' ')
				field++;
		start = strtoull(p, NULL, 10);
	}
	fclose(f);
	return start;
}

/* Under the store's lock: applies edit to the record of id and saves it.
 * Returns the record as saved (caller puts), or NULL. */
static struct json_object *
edit_record(const char *dir, const char *id, bool (*edit)(struct json_object *, void *), void *arg)
{
	int lk = ph_task_lock(dir, id);
	struct json_object *rec;
	if (lk < 0)
		return NULL;
	rec = ph_task_load(dir, id);
	if (rec && edit(rec, arg) && ph_task_save(dir, rec) != 0) {
		ph_log("error", "task %s: cannot write its record: %s", id, strerror(errno));
		json_object_put(rec);
		rec = NULL;
	}
	ph_task_unlock(lk);
	return rec;
}

/* What a task ends with. */
struct ending {
	const char *status;         /* completed, failed, cancelled, or input_required */
	struct json_object *result; /* completed: the CallToolResult (owned) */
	const char *message;        /* failed: the error's message */
	const char *detail;         /* statusMessage, or NULL */
	struct json_object *ir;     /* input_required: the handler's inputRequired (borrowed) */
	bool applied;               /* set by edit_end when it changed the record */
};

/* Writes e into a record that has not ended yet (a cancel may have ended
 * it first: a final status is never replaced). */
static bool
edit_end(struct json_object *rec, void *arg)
{
	struct ending *e = arg;
	if (ph_task_status_final(ph_jstr(rec, "status")))
		return false;
	e->applied = true;
	ph_task_set_status(rec, e->status, e->detail);
	if (e->result)
		json_object_object_add(rec, "result", json_object_get(e->result));
	if (strcmp(e->status, "failed") == 0) {
		struct json_object *err = json_object_new_object();
		json_object_object_add(err, "code", json_object_new_int(-32603));
		json_object_object_add(err, "message", json_object_new_string(e->message));
		json_object_object_add(rec, "error", err);
	}
	if (e->ir) {
		json_object_object_add(rec, "inputRequests", json_object_get(ph_jget(e->ir, "inputRequests")));
		json_object_object_add(rec, "_ir", json_object_get(e->ir));
		json_object_object_add(rec, "_answers", json_object_new_object());
	}
	return true;
}

/* ---- the supervisor ---------------------------------------------------------- */

struct sup {
	struct ph_server *srv;
	const struct ph_tool *tool;
	char *dir;
	char id[PH_TASK_ID_MAX];
	char label[200];
	int reply;           /* the creating worker's socket, -1 once it is of no use */
	sigset_t sigs;       /* blocked, taken with sigtimedwait */
	bool stopping, cancel;
	int64_t deadline_us; /* the task's timeout */
	/* await: true: the answers go to the running process's stdin */
	struct ph_buf more;  /* bytes for its stdin (the runner takes them) */
	bool awaiting;       /* it asked on fd 3 and waits for the answers */
	const char *bad;     /* why the task fails though its process ran */
};

/* Takes the pending signals: SIGTERM or SIGINT stop the task, SIGUSR1 (the
 * hub: the record changed) only wakes, unless the hub queued it with
 * SIG_CANCEL (a cancel the store could not record). Waits up to ms for one. */
static void
take_signals(struct sup *s, int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	siginfo_t si;
	int sig;
	while ((sig = sigtimedwait(&s->sigs, &si, &ts)) > 0) {
		if (sig == SIGTERM || sig == SIGINT)
			s->stopping = true;
		if (sig == SIGUSR1 && si.si_code == SI_QUEUE && si.si_pid == getppid() &&
		    si.si_value.sival_int == SIG_CANCEL)
			s->cancel = true;
		ts.tv_sec = ts.tv_nsec = 0;
	}
}

/* Reads the record: a cancel asked for. Returns the record (caller puts),
 * NULL also while the store (the cluster's Redis) is unreachable: the task
 * goes on and the record is read again at the next look. */
static struct json_object *
look(struct sup *s)
{
	struct json_object *rec = ph_task_load(s->dir, s->id);
	if (rec == NULL && ph_task_store_down())
		return NULL;
	if (rec == NULL || json_object_get_boolean(ph_jget(rec, "_cancel")) ||
	    ph_task_status_final(ph_jstr(rec, "status")))
		s->cancel = true; /* cancelled, ended or removed: nothing more to do */
	return rec;
}

static const char *input_problem(struct sup *s, struct json_object *ir);
static struct json_object *write_end(struct sup *s, struct ending *e);
static struct json_object *edit_record(const char *dir, const char *id,
				       bool (*edit)(struct json_object *, void *), void *arg);

/* Takes the answers tasks/update collected out of the record (they go to
 * the process now). */
static bool
edit_take(struct json_object *rec, void *arg)
{
	struct json_object **out = arg;
	*out = json_object_get(ph_jget(rec, "_answers"));
	json_object_object_del(rec, "_answers");
	return true;
}

/* await: true, once every open request is answered (tasks/update moved the
 * task back to working): the answers as one line on the process's stdin,
 * {"inputResponses": {...}}. */
static void
deliver(struct sup *s, struct json_object *rec)
{
	struct json_object *ans = NULL, *line, *taken;
	const char *st = ph_jstr(rec, "status");
	if (!s->awaiting || st == NULL || strcmp(st, "working") != 0)
		return;
	if ((taken = edit_record(s->dir, s->id, edit_take, &ans)) == NULL) {
		json_object_put(ans); /* not taken out of the record: again at the next look */
		return;
	}
	json_object_put(taken);
	line = json_object_new_object();
	json_object_object_add(line, "inputResponses", ans ? ans : json_object_new_object());
	ph_buf_adds(&s->more, json_object_to_json_string_ext(line, JSON_C_TO_STRING_PLAIN));
	ph_buf_addc(&s->more, '\n');
	json_object_put(line);
	s->awaiting = false;
}

/* The runner asks about once a second whether to go on. */
static bool
sup_alive(void *ctx)
{
	struct sup *s = ctx;
	struct json_object *rec;
	take_signals(s, 0);
	if (!s->stopping && s->bad == NULL) {
		rec = look(s);
		if (!s->cancel)
			deliver(s, rec);
		json_object_put(rec);
	}
	return !s->stopping && !s->cancel && s->bad == NULL;
}

/* A line on fd 3. With await: true, {"inputRequired": {"inputRequests":
 * {...}}} asks while the process runs: the task shows input_required with
 * those requests until tasks/update answered them all. Other lines (progress,
 * log) have no request to go to and are dropped. */
static void
sup_fd3(void *ctx, const char *line, size_t len)
{
	struct sup *s = ctx;
	struct json_object *o, *ir;
	struct ending e;
	if (!s->tool->task_await || s->bad || !ph_json_parse(line, len, (int)s->srv->conf->limits.json_depth, &o))
		return;
	if ((ir = ph_jget(o, "inputRequired")) != NULL) {
		if ((s->bad = input_problem(s, ir)) == NULL) {
			e = (struct ending){"input_required", NULL, NULL, NULL, ir};
			json_object_put(write_end(s, &e));
			s->awaiting = true;
			ph_task_changed(s->id);
		}
	}
	json_object_put(o);
}

/* The stdin document of a round after the first: the first round's, with
 * the state the handler left and the answers to its input requests. */
static struct json_object *
next_input(struct json_object *rec)
{
	struct json_object *in = ph_jget(rec, "_input"), *ir = ph_jget(rec, "_ir"), *doc = json_object_new_object();
	struct json_object *state = ph_jget(ir, "state"), *ans = ph_jget(rec, "_answers");
	json_object_object_foreach(in, k, v) {
		if (strcmp(k, "state") == 0 || strcmp(k, "inputResponses") == 0)
			continue;
		json_object_object_add(doc, k, json_object_get(v));
		if (strcmp(k, "name") == 0)
			json_object_object_add(doc, "state", state ? json_object_get(state) : NULL);
	}
	json_object_object_add(doc, "inputResponses", ans ? json_object_get(ans) : json_object_new_object());
	return doc;
}

/* Runs one round with input; fills e. Returns the handler's answer when it
 * asks for input (caller puts; e->ir points into it), else NULL. */
static struct json_object *
run_round(struct sup *s, struct json_object *input, struct ending *e)
{
	const struct ph_config *c = s->srv->conf;
	struct ph_exec_spec spec = s->tool->h.exec;
	struct ph_exec_limits lim;
	struct ph_exec_hooks hooks = {sup_fd3, sup_alive, s, s->label, NULL, s->tool->task_await ? &s->more : NULL};
	struct ph_exec_result res;
	struct json_object *out = NULL;
	size_t len;
	const char *doc = json_object_to_json_string_length(input, JSON_C_TO_STRING_PLAIN, &len);
	char *text = s->tool->task_await ? ph_xasprintf("%s\n", doc) : ph_xstrdup(doc);
	len += s->tool->task_await;
	static char why[200];
	int64_t left = (s->deadline_us - ph_now_us()) / 1000;
	ph_exec_limits_of(c, &lim);
	spec.timeout_ms = left > 1 ? left : 1;
	spec.max_output = c->tasks.max_result;
	ph_exec_run(&spec, &lim, text, len, &hooks, &res);
	free(text);
	memset(e, 0, sizeof *e);
	e->status = "failed";
	e->message = "Tool execution failed";
	if (res.status == PH_EXEC_CANCELLED && s->bad) {
		e->detail = s->bad;
		ph_log("warning", "%s: task %s: %s", s->label, s->id, s->bad);
	} else if (res.status == PH_EXEC_CANCELLED) {
		e->status = s->stopping ? "failed" : "cancelled";
		e->message = "The server stopped while the task ran";
		e->detail = s->stopping ? e->message : NULL;
	} else if (res.status != PH_EXEC_OK) {
		e->detail = res.status == PH_EXEC_OVERFLOW ? "the result is over tasks.max_result"
							    : ph_exec_describe(&res, why, sizeof why);
		ph_log("warning", "%s: task %s failed: %s", s->label, s->id, e->detail);
	} else if (!ph_json_parse(res.out, res.out_len, (int)c->limits.json_depth, &out) ||
		   !json_object_is_type(out, json_type_object)) {
		ph_log("warning", "%s: task %s: the handler did not write one JSON object", s->label, s->id);
		e->detail = "the handler did not write one JSON object";
		json_object_put(out);
		out = NULL;
	} else if ((e->ir = ph_jget(out, "inputRequired")) != NULL) {
		e->status = "input_required";
	} else {
		e->status = "completed";
		e->result = ph_tool_result(s->tool, out, s->label);
		json_object_put(out);
		out = NULL;
	}
	ph_exec_result_free(&res);
	return out;
}

/* True when ir asks something in a form a task can carry: an object of
 * input requests, none under a key this task asked before (keys are never
 * reused within a task). Adds its keys to the record's _asked. */
static bool
edit_asked(struct json_object *rec, void *arg)
{
	struct json_object *reqs = ph_jget(arg, "inputRequests"), *asked = ph_jget(rec, "_asked");
	if (asked == NULL) {
		asked = json_object_new_object();
		json_object_object_add(rec, "_asked", asked);
	}
	json_object_object_foreach(reqs, k, v) {
		(void)v;
		json_object_object_add(asked, k, json_object_new_boolean(1));
	}
	return true;
}

static const char *
input_problem(struct sup *s, struct json_object *ir)
{
	struct json_object *reqs = ph_jget(ir, "inputRequests"), *rec;
	const char *bad = NULL;
	if (reqs == NULL || !json_object_is_type(reqs, json_type_object) || json_object_object_length(reqs) == 0)
		return "the handler asked for input without inputRequests";
	rec = ph_task_load(s->dir, s->id);
	json_object_object_foreach(reqs, k, v) {
		(void)v;
		if (ph_jget(ph_jget(rec, "_asked"), k) != NULL)
			bad = "the handler asked for an input key it had asked before";
	}
	json_object_put(rec);
	if (bad == NULL)
		json_object_put(edit_record(s->dir, s->id, edit_asked, ir));
	return bad;
}

/* Sends word to the creating worker while it may still be waiting. */
static void
tell_worker(struct sup *s, const char *word)
{
	if (s->reply >= 0 && send(s->reply, word, strlen(word), MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
		close(s->reply);
		s->reply = -1;
	}
}

/* An inline first round that asked for input: the worker answers the
 * call with it (and removes the record) when it says "took". */
static bool
worker_took(struct sup *s)
{
	char buf[16];
	struct pollfd p = {s->reply, POLLIN, 0};
	ssize_t n;
	if (s->reply < 0)
		return false;
	tell_worker(s, "input");
	if (s->reply < 0 || poll(&p, 1, TOOK_WAIT_MS) <= 0)
		return false;
	n = recv(s->reply, buf, sizeof buf - 1, MSG_DONTWAIT);
	return n == 4 && memcmp(buf, "took", 4) == 0;
}

/* Waits for the answers to every open input request (tasks/update moves
 * the task back to working), a cancel, a stop or the timeout. Returns the
 * record with the answers (caller puts), or NULL with e set to how the
 * task ends. */
static struct json_object *
wait_answers(struct sup *s, struct ending *e)
{
	memset(e, 0, sizeof *e);
	while (!s->stopping && ph_now_us() < s->deadline_us) {
		struct json_object *rec;
		take_signals(s, 1000);
		if (s->stopping)
			break;
		rec = look(s);
		if (s->cancel) {
			json_object_put(rec);
			e->status = "cancelled";
			return NULL;
		}
		if (strcmp(ph_jstr(rec, "status") ? ph_jstr(rec, "status") : "", "working") == 0)
			return rec;
		json_object_put(rec);
	}
	e->status = "failed";
	e->message = s->stopping ? "The server stopped while the task ran"
				 : "The task's input was not given before its timeout";
	e->detail = e->message;
	return NULL;
}

/* Writes e (an end, or a round's input requests) into the record. While
 * the task store (the cluster's Redis) is unreachable it is tried again
 * every half second for at most cluster.lease_ms (after that the other
 * hosts take this one for lost) or until the supervisor is stopped.
 * Returns the record as written (caller puts) or NULL. */
static struct json_object *
write_end(struct sup *s, struct ending *e)
{
	const struct ph_cluster_conf *cc = ph_cluster_conf();
	struct json_object *rec = edit_record(s->dir, s->id, edit_end, e);
	int64_t until;
	if (rec != NULL || !ph_task_store_down())
		return rec;
	until = ph_now_us() + (cc ? cc->lease_ms : 0) * 1000;
	ph_log("warning", "%s: task %s %s while the task store is unreachable; written once it is back",
	       s->label, s->id, e->ir ? "asked for input" : "ended");
	while (rec == NULL && ph_task_store_down() && !s->stopping && ph_now_us() < until) {
		take_signals(s, 500);
		rec = edit_record(s->dir, s->id, edit_end, e);
	}
	if (rec == NULL)
		ph_log("error", "%s: task %s: its record could not be written", s->label, s->id);
	return rec;
}

/* Ends the task with e: the record written, the hub and the creating
 * worker told. */
static void
finish(struct sup *s, struct ending *e)
{
	json_object_put(write_end(s, e));
	json_object_put(e->result);
	e->result = NULL;
	ph_task_changed(s->id);
	tell_worker(s, "done");
}

/* The rounds of one task until it ends. */
static void
supervise(struct sup *s, struct json_object *rec)
{
	struct json_object *input = json_object_get(ph_jget(rec, "_input"));
	for (unsigned round = 0;; round++) {
		struct ending e;
		struct json_object *asked = run_round(s, input, &e), *now;
		const char *bad;
		json_object_put(input);
		if (asked == NULL) {
			finish(s, &e);
			return;
		}
		if ((bad = input_problem(s, e.ir)) != NULL) {
			ph_log("warning", "%s: task %s: %s", s->label, s->id, bad);
			e = (struct ending){"failed", NULL, "Tool execution failed", bad, NULL};
			json_object_put(asked);
			finish(s, &e);
			return;
		}
		json_object_put(write_end(s, &e));
		json_object_put(asked);
		if (round == 0 && worker_took(s))
			return; /* answered inline: the record is the worker's to remove */
		ph_task_changed(s->id);
		if (s->reply >= 0)
			close(s->reply);
		s->reply = -1;
		if ((now = wait_answers(s, &e)) == NULL) {
			finish(s, &e);
			return;
		}
		input = next_input(now);
		json_object_put(now);
	}
}

static bool
edit_started(struct json_object *rec, void *arg)
{
	struct json_object *sup = json_object_new_object();
	(void)arg;
	json_object_object_add(sup, "pid", json_object_new_int((int)getpid()));
	json_object_object_add(sup, "start", json_object_new_int64((int64_t)proc_start(getpid())));
	json_object_object_add(rec, "_sup", sup);
	return true;
}

/* The supervisor's process: its own signals, the record marked as started,
 * the rounds, and exit. */
static void __attribute__((noreturn))
sup_main(struct ph_server *srv, const struct ph_tool *tool, const char *id, int reply)
{
	struct sup s;
	struct json_object *rec;
	long long timeout;
	memset(&s, 0, sizeof s);
	ph_close_fds_except(reply, ph_hub_fd);
	prctl(PR_SET_NAME, "phantom-task");
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	/* what the program starts and detaches (setsid) comes back to us, and
	 * the runner kills it after each round */
	ph_exec_subreaper();
	signal(SIGHUP, SIG_IGN);
	signal(SIGUSR2, SIG_IGN);
	signal(SIGCHLD, SIG_DFL);
	sigemptyset(&s.sigs);
	sigaddset(&s.sigs, SIGTERM);
	sigaddset(&s.sigs, SIGINT);
	sigaddset(&s.sigs, SIGUSR1);
	sigprocmask(SIG_SETMASK, &s.sigs, NULL);
	s.srv = srv;
	s.tool = tool;
	s.dir = store_dir(srv);
	s.reply = reply;
	ph_buf_init(&s.more);
	snprintf(s.id, sizeof s.id, "%s", id);
	ph_label(s.label, sizeof s.label, "tool", tool->name);
	timeout = tool->h.exec.timeout_ms > 0 ? tool->h.exec.timeout_ms : srv->conf->tasks.timeout_ms;
	s.deadline_us = ph_now_us() + timeout * 1000;
	if (getppid() == 1 || (rec = edit_record(s.dir, id, edit_started, NULL)) == NULL)
		_exit(1);
	supervise(&s, rec);
	json_object_put(rec);
	_exit(0);
}

/* ---- the hub's side ------------------------------------------------------------ */

static size_t
of_owner(const struct ph_hub_tasks *t, const char *owner)
{
	size_t n = 0;
	for (size_t i = 0; i < t->n; i++)
		if ((owner == NULL && t->v[i].owner == NULL) ||
		    (owner && t->v[i].owner && strcmp(owner, t->v[i].owner) == 0))
			n++;
	return n;
}

/* Why the task of rec cannot start now, NULL when it can. */
static const char *
refusal(const struct ph_hub_tasks *t, struct json_object *rec, char *buf, size_t n)
{
	const struct ph_config *c = t->srv->conf;
	if ((long long)t->n >= c->tasks.max_running)
		snprintf(buf, n, "Too many running tasks (tasks.max_running is %lld)", c->tasks.max_running);
	else if (c->tasks.max_per_principal > 0 &&
		 (long long)of_owner(t, ph_jstr(rec, "_owner")) >= c->tasks.max_per_principal)
		snprintf(buf, n, "Too many running tasks for this principal (tasks.max_per_principal is %lld)",
			 c->tasks.max_per_principal);
	else if (t->records >= c->tasks.max_records)
		snprintf(buf, n, "Too many task records (tasks.max_records is %lld)", c->tasks.max_records);
	else
		return NULL;
	return buf;
}

static void
reply(int fd, const char *text)
{
	(void)send(fd, text, strlen(text), MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* ph_htr_rec_fn of a failed mark (arg: non-NULL to end the task's span):
 * the streams are told when it was written (a task that ended by itself
 * was told of by its supervisor). */
static void
marked(void *ctx, const char *id, struct json_object *rec, bool written, void *arg)
{
	struct ph_hub_tasks *t = ctx;
	if (rec && written && t->changed)
		t->changed(t->ctx, id, rec);
	if (rec && arg != NULL && ph_otel_on)
		ph_otel_task_ended(rec);
}

/* Marks the record of id failed with message unless it has ended; span:
 * the run ended, as a span when telemetry is on. With cluster: on the
 * asynchronous connection, never waited for. */
static void
mark_failed(struct ph_hub_tasks *t, const char *id, const char *message, bool span)
{
	char *dir;
	struct ending e = {"failed", NULL, message, message, NULL, false};
	struct json_object *rec;
	if (ph_cluster_on()) {
		ph_htr_fail(t->redis, id, message, marked, span ? t : NULL);
		return;
	}
	dir = store_dir(t->srv);
	rec = edit_record(dir, id, edit_end, &e);
	if (rec == NULL && span)
		rec = ph_task_load(dir, id);
	marked(t, id, rec, e.applied, span ? t : NULL);
	json_object_put(rec);
	free(dir);
}

/* ph_htr_rec_fn of TASK_START (arg: the worker's socket): the task's
 * supervisor forked once its record is read. */
static void
start_read(void *ctx, const char *id, struct json_object *rec, bool written, void *arg)
{
	struct ph_hub_tasks *t = ctx;
	int fd = (int)(intptr_t)arg;
	char why[200], msg[210];
	const struct ph_tool *tool = rec ? ph_registry_tool(t->srv->conf->registry, ph_jstr(rec, "_tool")) : NULL;
	const char *no = rec == NULL ? "the task's record is missing"
		       : tool == NULL ? "the tool is no longer configured" : refusal(t, rec, why, sizeof why);
	pid_t pid;
	(void)written;
	if (no) {
		snprintf(msg, sizeof msg, "no %s", no);
		reply(fd, msg);
		goto out;
	}
	reply(fd, "ok"); /* before the fork: the supervisor's "done" comes after it */
	if ((pid = fork()) == 0)
		sup_main(t->srv, tool, id, fd);
	if (pid < 0) {
		ph_log("error", "hub: fork of task %s: %s", id, strerror(errno));
		mark_failed(t, id, "The task's process could not be started", false);
		goto out;
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 16;
		t->v = ph_xrealloc(t->v, t->cap * sizeof *t->v);
	}
	t->v[t->n].pid = pid;
	snprintf(t->v[t->n].id, sizeof t->v[t->n].id, "%s", id);
	t->v[t->n].owner = ph_jstr(rec, "_owner") ? ph_xstrdup(ph_jstr(rec, "_owner")) : NULL;
	t->n++;
	t->records++;
out:
	close(fd);
}

/* ph_htr_rec_fn of TASK_CHANGED: the streams hear of the record. */
static void
changed_read(void *ctx, const char *id, struct json_object *rec, bool written, void *arg)
{
	struct ph_hub_tasks *t = ctx;
	(void)written, (void)arg;
	if (rec != NULL && t->changed)
		t->changed(t->ctx, id, rec);
}

/* Reads the record of id and calls fn: with cluster: on the asynchronous
 * connection, in the order asked. */
static void
read_then(struct ph_hub_tasks *t, const char *id, ph_htr_rec_fn fn, void *arg)
{
	char *dir;
	struct json_object *rec;
	if (ph_cluster_on()) {
		ph_htr_get(t->redis, id, fn, arg);
		return;
	}
	dir = store_dir(t->srv);
	rec = ph_task_load(dir, id);
	fn(t, id, rec, false, arg);
	json_object_put(rec);
	free(dir);
}

static struct running *
find(struct ph_hub_tasks *t, const char *id)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->v[i].id, id) == 0)
			return &t->v[i];
	return NULL;
}

/* A record changed: its supervisor looks again, the streams hear of it. */
static void
changed(struct ph_hub_tasks *t, const char *id)
{
	struct running *run = find(t, id);
	if (run)
		kill(run->pid, SIGUSR1); /* our child, not yet reaped */
	if (t->changed != NULL)
		read_then(t, id, changed_read, NULL);
}

/* A cancel the task store could not record: the supervisor stops the
 * task's process all the same. */
static void
stop_unrecorded(struct ph_hub_tasks *t, const char *id)
{
	struct running *run = find(t, id);
	union sigval v = {.sival_int = SIG_CANCEL};
	if (run == NULL)
		return; /* ended already */
	ph_log("warning", "hub: task %s: cancelled though its record cannot say so", id);
	sigqueue(run->pid, SIGUSR1, v); /* our child, not yet reaped */
}

void
ph_hub_tasks_message(struct ph_hub_tasks *t, const struct ph_hubmsg *m, int fd)
{
	const char *id = m->u.task;
	if (!ph_task_id_ok(id))
		ph_log("error", "hub: a task message it cannot read; ignored");
	else if (m->type == PH_HUBMSG_TASK_START && fd >= 0) {
		read_then(t, id, start_read, (void *)(intptr_t)fd);
		fd = -1;
	} else if (m->type == PH_HUBMSG_TASK_CHANGED)
		changed(t, id);
	else if (m->type == PH_HUBMSG_TASK_CANCEL)
		stop_unrecorded(t, id);
	if (fd >= 0)
		close(fd);
}

void
ph_hub_tasks_reap(struct ph_hub_tasks *t)
{
	int st;
	pid_t pid;
	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		for (size_t i = 0; i < t->n; i++) {
			struct running run = t->v[i];
			if (run.pid != pid)
				continue;
			t->v[i] = t->v[--t->n];
			if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
				ph_log("warning", "hub: the supervisor of task %s ended badly (%s %d)", run.id,
				       WIFSIGNALED(st) ? "signal" : "status",
				       WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
			/* a supervisor that died before it wrote the end */
			mark_failed(t, run.id, "The task's process was lost", true);
			free(run.owner);
			break;
		}
	}
}

/* ---- passes over the store ----------------------------------------------------- */

/* Whether a working record of this host without a running supervisor is
 * lost: its process is gone (a server that stopped or restarted while it
 * ran), or it never started after a grace. */
static bool
own_lost(struct json_object *rec, int64_t now)
{
	struct json_object *sup = ph_jget(rec, "_sup");
	int pid = json_object_get_int(ph_jget(sup, "pid"));
	int64_t made = json_object_get_int64(ph_jget(rec, "_created_ms"));
	bool alive = sup && pid > 0 &&
		     proc_start(pid) == (unsigned long long)json_object_get_int64(ph_jget(sup, "start"));
	return !alive && (sup || now - made > UNSTARTED_GRACE_MS);
}

/* Why a pass fails rec (borrowed), a record that has not ended: the
 * message, or NULL to leave it. alive: whether the host named by its
 * _host holds its lease (1, 0, -1 unknown). */
static const char *
lost(struct ph_hub_tasks *t, struct json_object *rec, int alive)
{
	const char *id = ph_jstr(rec, "taskId"), *host = ph_jstr(rec, "_host");
	if (id == NULL || ph_task_ended_ms(rec) > 0)
		return NULL;
	if (ph_cluster_on() && host && strcmp(host, ph_cluster_host()) != 0)
		return alive == 0 ? "The task's process was lost: the host running it stopped renewing its "
				    "lease (cluster.lease_ms)"
				  : NULL;
	if (find(t, id) == NULL && own_lost(rec, ph_wall_ms()))
		return "The task's process was lost: the server stopped or restarted while it ran";
	return NULL;
}

static bool
set_failed(struct json_object *rec, const char *message)
{
	struct ending e = {"failed", NULL, message, message, NULL, false};
	return edit_end(rec, &e);
}

static void
pass_failed(void *ctx, const char *id, struct json_object *rec)
{
	struct ph_hub_tasks *t = ctx;
	if (t->changed && id != NULL)
		t->changed(t->ctx, id, rec);
}

static void
pass_counted(void *ctx, long long n)
{
	struct ph_hub_tasks *t = ctx;
	t->records = n;
}

static const char *
pass_lost(void *ctx, struct json_object *rec, int alive)
{
	return lost(ctx, rec, alive);
}

/* What the pass over Redis (ph_hub_task_redis.c) asks of this table. */
static const struct ph_htr_ops htr_ops = {pass_lost, set_failed, pass_failed, pass_counted};

/* One record of a pass over tasks.dir: removed when it expired, failed
 * when its process is gone. */
static void
pass_rec(struct ph_hub_tasks *t, const char *dir, struct json_object *rec)
{
	const char *id = ph_jstr(rec, "taskId"), *why;
	struct json_object *ttl = ph_jget(rec, "ttlMs");
	int64_t now = ph_wall_ms(), ended = ph_task_ended_ms(rec);
	if (id == NULL || !ph_task_id_ok(id))
		return;
	t->pass_records++;
	if (ended > 0) {
		if (ttl && json_object_is_type(ttl, json_type_int) && now > ended + json_object_get_int64(ttl) &&
		    ph_task_remove(dir, id) == 0)
			t->pass_records--;
	} else if ((why = lost(t, rec, -1)) != NULL) {
		mark_failed(t, id, why, false);
	}
}

void
ph_hub_tasks_tick(struct ph_hub_tasks *t, struct ph_hcl *conn)
{
	struct dirent *de;
	char *dir;
	int n = 0;
	/* without cluster: only what waits on a connection left by a reload ends */
	ph_htr_tick(t->redis, conn, t->srv->conf->tasks.purge_interval_ms);
	if (ph_cluster_on())
		return;
	if (t->pass == NULL) {
		if (ph_now_us() < t->next_pass_us)
			return;
		dir = store_dir(t->srv);
		t->pass = opendir(dir);
		free(dir);
		t->pass_records = 0;
		if (t->pass == NULL) {
			t->next_pass_us = ph_now_us() + t->srv->conf->tasks.purge_interval_ms * 1000;
			return;
		}
	}
	dir = store_dir(t->srv);
	while (n++ < PASS_STEP && (de = readdir(t->pass)) != NULL) {
		size_t l = strlen(de->d_name);
		char id[PH_TASK_ID_MAX];
		struct json_object *rec;
		if (de->d_name[0] == '.' || l < 6 || l - 5 >= sizeof id || strcmp(de->d_name + l - 5, ".json") != 0)
			continue;
		snprintf(id, sizeof id, "%.*s", (int)(l - 5), de->d_name);
		if ((rec = ph_task_load(dir, id)) != NULL)
			pass_rec(t, dir, rec);
		json_object_put(rec);
	}
	if (de == NULL && n <= PASS_STEP) {
		closedir(t->pass);
		t->pass = NULL;
		t->records = t->pass_records;
		t->next_pass_us = ph_now_us() + t->srv->conf->tasks.purge_interval_ms * 1000;
	}
	free(dir);
}

struct ph_hub_tasks *
ph_hub_tasks_new(struct ph_server *srv, ph_hub_task_fn fn, void *ctx)
{
	struct ph_hub_tasks *t = ph_xcalloc(1, sizeof *t);
	char *dir = store_dir(srv);
	const char *why;
	t->srv = srv;
	t->changed = fn;
	t->ctx = ctx;
	t->redis = ph_htr_new(&htr_ops, t);
	if (ph_tasks_available(srv) && ph_task_dir_ready(dir, &why) != 0)
		ph_log("error", "hub: the task store %s: %s; tasks cannot be created", dir, why);
	free(dir);
	return t; /* the first pass starts at the first tick */
}

void
ph_hub_tasks_reconf(struct ph_hub_tasks *t, struct ph_server *srv)
{
	t->srv = srv;
	ph_htr_reset(t->redis);
	if (t->pass) {
		closedir(t->pass); /* the store may have moved: start again */
		t->pass = NULL;
	}
}

void
ph_hub_tasks_stop(struct ph_hub_tasks *t)
{
	for (size_t i = 0; i < t->n; i++)
		kill(t->v[i].pid, SIGTERM);
}

size_t
ph_hub_tasks_running(const struct ph_hub_tasks *t)
{
	return t->n;
}

void
ph_hub_tasks_free(struct ph_hub_tasks *t)
{
	if (t == NULL)
		return;
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].owner);
	free(t->v);
	if (t->pass)
		closedir(t->pass);
	ph_htr_free(t->redis);
	free(t);
}
