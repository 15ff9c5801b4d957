/* ph_tasks.c: tools that run as tasks (io.modelcontextprotocol/tasks), the
 * worker's side. A tools/call that becomes a task writes the task's record
 * (ph_task.c) and asks the hub to start its process (over the hub's
 * channel, with a socket for the hub's answer attached), then answers at
 * once with the task; tasks/get, tasks/update and tasks/cancel read and
 * change the record, and tell the hub when they changed it. The process,
 * its rounds of input and its result are the hub's (ph_hub_task.c). */
#include "first.h"
#include "ph_otel.h"
#include "ph_features.h"
#include "ph_call.h"
#include "ph_hubmsg.h"
#include "ph_json.h"
#include "ph_mrtr.h"
#include "ph_registry.h"
#include "ph_shared.h"
#include "ph_task.h"
#include "ph_util.h"
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* How long a worker waits for the hub to say it started a task's process
 * (it answers at once unless it is restarting). */
#define HUB_REPLY_MS 2000
/* How long a worker waits for room in the hub's channel. */
#define HUB_SEND_MS 200
/* The largest answer the hub or a task's supervisor sends a worker. */
#define REPLY_MAX 512

bool
ph_tasks_available(const struct ph_server *s)
{
	const struct ph_registry *reg = s->conf->registry;
	for (size_t i = 0; reg && i < reg->ntools; i++)
		if (reg->tools[i]->task != PH_TASK_OFF)
			return true;
	return false;
}

void
ph_tasks_capabilities(struct ph_req *r, struct json_object *caps)
{
	if (r->legacy || !ph_tasks_available(r->srv))
		return;
	json_object_object_add(ph_caps_extensions(caps), PH_TASK_EXT, json_object_new_object());
}

/* True when this request declares the extension in its _meta client
 * capabilities (the only way a client opts in, per request). */
static bool
declared(const struct ph_req *r)
{
	return !r->legacy && ph_jget(ph_jget(r->client_caps, "extensions"), PH_TASK_EXT) != NULL;
}

/* -32021 naming the extension (data.requiredCapabilities is required). */
static void
missing_extension(struct ph_outcome *o, const char *what)
{
	struct json_object *d = json_object_new_object(), *rc = json_object_new_object(),
			   *ext = json_object_new_object();
	json_object_object_add(ext, PH_TASK_EXT, json_object_new_object());
	json_object_object_add(rc, "extensions", ext);
	json_object_object_add(d, "requiredCapabilities", rc);
	ph_outcome_error(o, PH_E_CAPABILITY, d, "Missing required client capability: %s needs the "
			 "%s extension, which the request does not declare", what, PH_TASK_EXT);
}

bool
ph_tasks_refuse(struct ph_req *r, const struct ph_tool *t, struct ph_outcome *o)
{
	char what[200];
	if (t->task != PH_TASK_REQUIRED || declared(r))
		return false;
	ph_label(what, sizeof what, "tool", t->name);
	missing_extension(o, what);
	return true;
}

bool
ph_tasks_refuse_listen(struct ph_req *r, struct ph_outcome *o)
{
	if (declared(r))
		return false;
	missing_extension(o, "subscriptions/listen with taskIds");
	return true;
}

/* The task store of this configuration (tasks.dir, relative to the
 * configuration file's directory). Caller frees. */
static char *
store_of(const struct ph_req *r)
{
	const struct ph_config *c = r->srv->conf;
	return ph_path_join(c->dir, c->tasks.dir);
}

/* ---- talking to the hub ---------------------------------------------------- */

/* Reads one message from fd within ms (-1: none came). */
static ssize_t
read_reply(int fd, char *buf, size_t n, int ms)
{
	struct pollfd p = {fd, POLLIN, 0};
	ssize_t got;
	int rc;
	while ((rc = poll(&p, 1, ms)) < 0 && errno == EINTR)
		;
	if (rc <= 0)
		return -1;
	while ((got = recv(fd, buf, n - 1, MSG_DONTWAIT)) < 0 && errno == EINTR)
		;
	if (got < 0)
		return -1;
	buf[got] = '\0';
	return got;
}

/* Asks the hub to start the task id; returns the socket the hub and the
 * task's supervisor answer on (after "ok"), or -1 with the reason in why. */
static int
hub_start(const char *id, char *why, size_t n)
{
	char reply[REPLY_MAX];
	int sp[2];
	if (ph_hub_fd < 0) {
		snprintf(why, n, "tasks need the hub, which runs only under a master (phantom-fcgi "
			 "without --no-master)");
		return -1;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) != 0) {
		snprintf(why, n, "socketpair: %s", strerror(errno));
		return -1;
	}
	if (ph_hub_send_json(ph_hubmsg_task(PH_HUBMSG_TASK_START, id), sp[1], HUB_SEND_MS) != 0) {
		snprintf(why, n, "the hub is not taking tasks (%s)", strerror(errno));
		close(sp[0]);
		close(sp[1]);
		return -1;
	}
	close(sp[1]);
	if (read_reply(sp[0], reply, sizeof reply, HUB_REPLY_MS) < 0) {
		snprintf(why, n, "the hub did not answer within %d ms", HUB_REPLY_MS);
		close(sp[0]);
		return -1;
	}
	if (strncmp(reply, "ok", 2) != 0) {
		snprintf(why, n, "%.200s", strncmp(reply, "no ", 3) == 0 ? reply + 3 : reply);
		close(sp[0]);
		return -1;
	}
	return sp[0];
}

/* ---- tools/call as a task ------------------------------------------------------ */

/* The record of a new task for t called with args (the exec input of the
 * call, as the process will read it). Caller puts. */
static struct json_object *
new_record(struct ph_req *r, const struct ph_tool *t, struct json_object *args, const char *label,
	   char id[PH_TASK_ID_MAX])
{
	const struct ph_config *c = r->srv->conf;
	struct ph_invocation inv;
	struct json_object *rec;
	ph_task_id_new(c->tasks.host, id);
	rec = ph_task_record_new(id, r->who.principal, t->task_ttl_ms > 0 ? t->task_ttl_ms : c->tasks.ttl_ms,
				 c->tasks.poll_ms);
	memset(&inv, 0, sizeof inv);
	inv.kind = PHANTOM_KIND_TOOL;
	inv.label = label;
	inv.name = t->name;
	inv.arguments = args;
	json_object_object_add(rec, "_tool", json_object_new_string(t->name));
	if (ph_otel_on)
		ph_otel_task_mark(r, rec); /* the run's span links to this request's */
	json_object_object_add(rec, "_input", ph_call_exec_input(r, &inv));
	return rec;
}

/* What the inline window saw: the task ended ("done") or asked for input
 * as its first answer ("input"), and the record then. The record is
 * removed: the client never hears of the task. Returns true when o is
 * set from it. */
static bool
answer_inline(struct ph_req *r, const char *dir, const char *id, int sock, const char *what,
	      const char *label, struct ph_outcome *o)
{
	struct json_object *rec = ph_task_load(dir, id), *ir;
	const char *st = ph_jstr(rec, "status");
	bool done = false;
	if (rec == NULL)
		return false;
	if (strcmp(what, "input") == 0 && (ir = ph_jget(rec, "_ir")) != NULL && st &&
	    strcmp(st, "input_required") == 0) {
		if (send(sock, "took", 4, MSG_NOSIGNAL) == 4) {
			ph_mrtr_answer(r, ir, label, o);
			done = true;
		}
	} else if (strcmp(what, "done") == 0 && st && strcmp(st, "completed") == 0) {
		o->result = json_object_get(ph_jget(rec, "result"));
		done = o->result != NULL;
	} else if (strcmp(what, "done") == 0 && st && strcmp(st, "failed") == 0) {
		struct json_object *e = ph_jget(rec, "error");
		ph_outcome_error(o, PH_E_HANDLER, NULL, "%s", ph_jstr(e, "message") ? ph_jstr(e, "message")
										  : "Tool execution failed");
		done = true;
	}
	if (done)
		ph_task_remove(dir, id);
	json_object_put(rec);
	return done;
}

/* The answer to a call that became a task: the task as it is now, flat
 * (resultType "task", no result, error or inputRequests). */
static void
answer_task(const char *dir, const char *id, struct json_object *rec, struct ph_outcome *o)
{
	struct json_object *now = ph_task_load(dir, id), *v = ph_task_view(now ? now : rec);
	json_object_object_del(v, "result");
	json_object_object_del(v, "error");
	json_object_object_del(v, "inputRequests");
	json_object_object_add(v, "resultType", json_object_new_string("task"));
	json_object_put(now);
	o->result = v;
}

bool
ph_tasks_call(struct ph_req *r, const struct ph_tool *t, struct json_object *args, const char *label,
	      struct ph_outcome *o)
{
	const struct ph_config *c = r->srv->conf;
	long long inline_ms = t->task_inline_ms >= 0 ? t->task_inline_ms : c->tasks.inline_ms;
	char id[PH_TASK_ID_MAX], why[300], what[REPLY_MAX];
	char *dir;
	const char *bad = NULL;
	struct json_object *rec;
	int sock;
	if (t->task == PH_TASK_OFF || !declared(r))
		return false;
	if (ph_hub_fd < 0 && t->task == PH_TASK_OPTIONAL)
		return false; /* no hub to run it: answered inline, as the spec allows */
	dir = store_of(r);
	rec = new_record(r, t, args, label, id);
	/* durable before returned: the record is there before the hub hears of it */
	if (ph_task_dir_ready(dir, &bad) != 0 || ph_task_save(dir, rec) != 0) {
		ph_log("error", "%s: cannot write a task record in %s: %s", label, dir, bad ? bad : strerror(errno));
		ph_outcome_error(o, PH_E_HANDLER, NULL, "The task could not be created: its record "
				 "could not be written");
		goto out;
	}
	if ((sock = hub_start(id, why, sizeof why)) < 0) {
		ph_task_remove(dir, id);
		ph_log("warning", "%s: task not started: %s", label, why);
		ph_outcome_error(o, PH_E_HANDLER, NULL, "The task could not be started: %s", why);
		goto out;
	}
	r->target = t->name;
	if (inline_ms > 0 && read_reply(sock, what, sizeof what, (int)inline_ms) > 0 &&
	    answer_inline(r, dir, id, sock, what, label, o)) {
		close(sock);
		goto out;
	}
	close(sock); /* the process goes on; a late "done" finds nobody */
	answer_task(dir, id, rec, o);
	ph_log("info", "%s: task %s created", label, id);
out:
	json_object_put(rec);
	free(dir);
	return true;
}

struct json_object *
ph_tasks_grant(struct ph_req *r, struct json_object *ids)
{
	struct json_object *out = json_object_new_array();
	char *dir = store_of(r);
	for (size_t i = 0; ids && i < json_object_array_length(ids); i++) {
		const char *id = json_object_get_string(json_object_array_get_idx(ids, i));
		struct json_object *rec = ph_task_load(dir, id);
		if (rec && ph_task_owned(rec, r->who.principal))
			json_object_array_add(out, json_object_new_string(id));
		json_object_put(rec);
	}
	free(dir);
	return out;
}

/* ---- tasks/get, tasks/update, tasks/cancel ----------------------------------------- */

/* The checks every task method starts with: the extension declared (before
 * anything else, the id included), a taskId, and a record this principal
 * owns. Returns the record (caller puts) with its store in *dir (caller
 * frees), or NULL after setting o. */
static struct json_object *
task_of(struct ph_req *r, const char *method, struct ph_outcome *o, char **dir)
{
	const char *id = ph_jstr(r->params, "taskId");
	struct json_object *rec;
	*dir = NULL;
	if (!declared(r)) {
		missing_extension(o, method);
		return NULL;
	}
	if (id == NULL) {
		ph_outcome_error(o, PH_E_PARAMS, NULL, "Invalid params: taskId must be a string");
		return NULL;
	}
	r->target = id;
	*dir = store_of(r);
	rec = ph_task_load(*dir, id);
	if (rec && ph_task_ended_ms(rec) > 0) {
		struct json_object *ttl = ph_jget(rec, "ttlMs");
		if (ttl && json_object_is_type(ttl, json_type_int) &&
		    ph_wall_ms() > ph_task_ended_ms(rec) + json_object_get_int64(ttl)) {
			json_object_put(rec); /* expired: the hub purges it */
			rec = NULL;
		}
	}
	if (rec == NULL && ph_task_store_down()) {
		free(*dir);
		*dir = NULL;
		ph_outcome_error(o, PH_E_HANDLER, NULL, "The task store is unreachable (the cluster's "
				 "Redis did not answer); try again later");
		return NULL;
	}
	/* another principal's task is as unknown as a missing one */
	if (rec == NULL || !ph_task_owned(rec, r->who.principal)) {
		json_object_put(rec);
		free(*dir);
		*dir = NULL;
		ph_outcome_error(o, PH_E_PARAMS, NULL, "Unknown task: %s", id);
		return NULL;
	}
	return rec;
}

void
ph_tasks_get(struct ph_req *r, struct ph_outcome *o)
{
	char *dir;
	struct json_object *rec = task_of(r, "tasks/get", o, &dir);
	if (rec == NULL)
		return;
	o->result = ph_task_view(rec);
	json_object_put(rec);
	free(dir);
}

/* Moves the answers for outstanding keys out of inputRequests into the
 * record's _answers; unknown, answered or superseded keys are ignored.
 * Returns true when no request is left open (the process can go on). */
static bool
take_answers(struct json_object *rec, struct json_object *responses)
{
	struct json_object *open = ph_jget(rec, "inputRequests"), *ans = ph_jget(rec, "_answers");
	if (ans == NULL || !json_object_is_type(ans, json_type_object)) {
		ans = json_object_new_object();
		json_object_object_add(rec, "_answers", ans);
	}
	json_object_object_foreach(responses, k, v) {
		if (open && ph_jget(open, k) != NULL) {
			json_object_object_add(ans, k, json_object_get(v));
			json_object_object_del(open, k);
		}
	}
	return open == NULL || json_object_object_length(open) == 0;
}

/* Under the store's lock: reloads the record (it may have changed since
 * task_of read it), lets edit change it, saves it when edit says so.
 * Returns 1 when it was saved, 0 when edit changed nothing, -1 with errno
 * when the store could not be locked or written. */
static int
locked_edit(const char *dir, const char *id, bool (*edit)(struct json_object *rec, void *arg), void *arg)
{
	int lk = ph_task_lock(dir, id), rc = 0, e = 0;
	struct json_object *rec;
	if (lk < 0) {
		e = errno;
		ph_log("error", "task %s: cannot lock %s: %s", id, dir, strerror(e));
		errno = e;
		return -1;
	}
	rec = ph_task_load(dir, id);
	if (rec && edit(rec, arg)) {
		rc = ph_task_save(dir, rec) == 0 ? 1 : -1;
		e = errno;
		if (rc < 0)
			ph_log("error", "task %s: cannot write its record: %s", id, strerror(e));
	}
	json_object_put(rec);
	ph_task_unlock(lk);
	errno = e;
	return rc;
}

static bool
edit_answers(struct json_object *rec, void *arg)
{
	const char *st = ph_jstr(rec, "status");
	if (st == NULL || strcmp(st, "input_required") != 0)
		return false; /* nothing is asked: the answers are acked and ignored */
	if (take_answers(rec, arg))
		ph_task_set_status(rec, "working", NULL);
	return true;
}

void
ph_tasks_update(struct ph_req *r, struct ph_outcome *o)
{
	char *dir;
	struct json_object *rec = task_of(r, "tasks/update", o, &dir), *resp;
	if (rec == NULL)
		return;
	resp = ph_jget(r->params, "inputResponses");
	if (resp == NULL || !json_object_is_type(resp, json_type_object)) {
		ph_outcome_error(o, PH_E_PARAMS, NULL, "Invalid params: inputResponses must be an object");
	} else {
		/* applied before the ack: a tasks/get right after it sees them
		 * (a task that asks nothing acks without the store's lock) */
		const char *st = ph_jstr(rec, "status");
		int rc = st && strcmp(st, "input_required") == 0 ? locked_edit(dir, r->target, edit_answers, resp) : 0;
		if (rc < 0)
			ph_outcome_error(o, PH_E_HANDLER, NULL, "The answers could not be recorded: the task "
					 "store cannot be written (%s); the task still waits for them", strerror(errno));
		else
			o->result = json_object_new_object();
		if (rc > 0)
			ph_task_changed(r->target);
	}
	json_object_put(rec);
	free(dir);
}

static bool
edit_cancel(struct json_object *rec, void *arg)
{
	(void)arg;
	if (ph_task_status_final(ph_jstr(rec, "status")))
		return false; /* a finished task stays as it ended; the ack is the same */
	json_object_object_add(rec, "_cancel", json_object_new_boolean(1));
	return true;
}

/* A cancel the store cannot record (tasks.dir read-only or full): the
 * hub still stops the task's process, and the client hears that the
 * record says otherwise (never an ack of what was not done). */
static void
cancel_unrecorded(const char *id, const char *why, struct ph_outcome *o)
{
	bool stopped = ph_hub_send_json(ph_hubmsg_task(PH_HUBMSG_TASK_CANCEL, id), -1, HUB_SEND_MS) == 0;
	if (!stopped)
		ph_log("error", "task %s: the hub could not be asked to stop it: %s", id, strerror(errno));
	ph_outcome_error(o, PH_E_HANDLER, NULL, "The cancel could not be recorded: the task store cannot be "
			 "written (%s); %s", why, stopped ? "the task's process is being stopped, but its "
			 "record does not say cancelled" : "the task could not be stopped either");
}

void
ph_tasks_cancel(struct ph_req *r, struct ph_outcome *o)
{
	char *dir;
	struct json_object *rec = task_of(r, "tasks/cancel", o, &dir);
	if (rec == NULL)
		return;
	/* a finished task needs no lock (nor a writable store) for its ack */
	switch (ph_task_status_final(ph_jstr(rec, "status")) ? 0 : locked_edit(dir, r->target, edit_cancel, NULL)) {
	case 1:
		ph_task_changed(r->target);
		/* fall through */
	case 0:
		o->result = json_object_new_object();
		break;
	default:
		cancel_unrecorded(r->target, strerror(errno), o);
		break;
	}
	json_object_put(rec);
	free(dir);
}
