/* ph_persist.c: the persistent exec handlers of one worker (ph_persist.h).
 *
 * A worker serves one request at a time, so a handler has one process and
 * a call has it to itself. A handler called again while its process is in
 * use (a prompt that embeds itself through a resource, say) gets a process
 * of its own for that call: the loop reads one line, answers, reads EOF and
 * exits, as a per-call exec. */
#include "first.h"
#include "ph_persist.h"
#include "ph_registry.h"
#include "ph_exec_conf.h"
#include "ph_server.h"
#include "ph_json.h"
#include "ph_log.h"
#include "ph_mime.h"
#include "ph_util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct slot {
	const struct ph_exec_spec *spec; /* borrowed from the registry; NULL: free slot */
	struct ph_exec_proc *p;          /* NULL when not running */
	char *label;                     /* owned, for the log lines of the tick */
	long long calls;
	int64_t last_us;                 /* end of the last call (or the start) */
	bool busy, retire;
};

static struct slot *slots;
static size_t nslots;
static long long call_seq;

/* The slot of spec, made on first use. */
static struct slot *
slot_for(const struct ph_exec_spec *spec, const char *label)
{
	struct slot *free_one = NULL;
	for (size_t i = 0; i < nslots; i++) {
		if (slots[i].spec == spec)
			return &slots[i];
		if (slots[i].spec == NULL && free_one == NULL)
			free_one = &slots[i];
	}
	if (free_one == NULL) {
		slots = ph_xrealloc(slots, (nslots + 1) * sizeof *slots);
		free_one = &slots[nslots++];
	}
	memset(free_one, 0, sizeof *free_one);
	free_one->spec = spec;
	free_one->label = ph_xstrdup(label ? label : spec->argv[0]);
	return free_one;
}

/* Stops the slot's process (if any); why goes to the log when not NULL. */
static void
slot_stop(struct slot *s, const char *why)
{
	if (s->p == NULL)
		return;
	if (why)
		ph_log("info", "%s: persistent process %d stopped: %s", s->label,
		       (int)ph_exec_proc_pid(s->p), why);
	ph_exec_proc_stop(s->p);
	s->p = NULL;
	s->retire = false;
}

struct json_object *
ph_persist_answer(const char *label, const char *line, size_t len, long long id, int depth)
{
	struct json_object *o = NULL, *v;
	if (!ph_utf8_valid(line, len)) {
		ph_log("warning", "%s: the persistent process answered with %zu bytes that are not valid UTF-8",
		       label, len);
		return NULL;
	}
	if (!ph_json_parse(line, len, depth, &o) || !json_object_is_type(o, json_type_object)) {
		ph_log("warning", "%s: the persistent process did not answer with one JSON object line "
		       "(%zu bytes: %.120s)", label, len, line);
		json_object_put(o);
		return NULL;
	}
	if (!json_object_object_get_ex(o, "id", &v) || !json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) != id) {
		ph_log("warning", "%s: the persistent process answered for call id %s, expected %lld", label,
		       v ? json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN) : "(none)", id);
		json_object_put(o);
		return NULL;
	}
	json_object_object_del(o, "id");
	return o;
}

/* The call line: input with its id, plain JSON, one newline. Caller frees. */
static char *
call_line(struct json_object *input, long long id, size_t *len)
{
	const char *s;
	size_t n;
	char *line;
	json_object_object_add(input, "id", json_object_new_int64(id));
	s = json_object_to_json_string_length(input, JSON_C_TO_STRING_PLAIN, &n);
	line = ph_xmalloc(n + 2);
	memcpy(line, s, n);
	line[n] = '\n';
	line[n + 1] = '\0';
	*len = n + 1;
	return line;
}

/* A call while the handler's process is in use: a process for this call
 * only, given the line and EOF. */
static struct json_object *
call_once(const struct ph_exec_spec *spec, const struct ph_exec_limits *lim, const char *line, size_t len,
	  const struct ph_exec_hooks *hooks, long long id, int depth)
{
	struct ph_exec_result res;
	struct json_object *out = NULL;
	char why[200];
	const char *label = hooks && hooks->label ? hooks->label : spec->argv[0];
	if (ph_exec_run(spec, lim, line, len, hooks, &res) != 0) {
		ph_log("warning", "%s: %s failed: %s", label, spec->argv[0], ph_exec_describe(&res, why, sizeof why));
	} else {
		size_t n = res.out_len;
		while (n > 0 && (res.out[n - 1] == '\n' || res.out[n - 1] == '\r'))
			n--;
		res.out[n] = '\0';
		out = ph_persist_answer(label, res.out, n, id, depth);
	}
	ph_exec_result_free(&res);
	return out;
}

/* Before a call: the slot's process if it can take one, else a fresh one
 * (the old one stopped). Returns false after logging when none starts. */
static bool
slot_ready(struct slot *s, const struct ph_exec_spec *spec, const struct ph_exec_limits *lim,
	   enum ph_persist_how *how)
{
	struct ph_exec_result res;
	char why[200];
	if (s->p && s->retire)
		slot_stop(s, NULL);
	if (s->p && ph_now_us() - s->last_us >= spec->persist.idle_ms * 1000)
		slot_stop(s, "idle");
	if (s->p && !ph_exec_proc_ready(s->p))
		slot_stop(s, "not ready for a call");
	*how = s->p ? PH_PERSIST_WARM : PH_PERSIST_FRESH;
	if (s->p)
		return true;
	s->p = ph_exec_proc_start(spec, lim, s->label, &res);
	s->calls = 0;
	s->last_us = ph_now_us();
	if (s->p == NULL) {
		ph_log("warning", "%s: %s failed: %s", s->label, spec->argv[0],
		       ph_exec_describe(&res, why, sizeof why));
		ph_exec_result_free(&res);
		return false;
	}
	return true;
}

/* After a good call: recycles the process when max_calls or max_rss says so
 * (it is stopped by the next tick, after the response is sent). */
static void
slot_after(struct slot *s, const struct ph_exec_spec *spec)
{
	long long rss;
	s->calls++;
	s->last_us = ph_now_us();
	if (spec->persist.max_calls > 0 && s->calls >= spec->persist.max_calls) {
		ph_log("info", "%s: persistent process %d served max_calls (%lld): recycled", s->label,
		       (int)ph_exec_proc_pid(s->p), s->calls);
		s->retire = true;
	} else if (spec->persist.max_rss > 0 && (rss = ph_exec_proc_rss(s->p)) > spec->persist.max_rss) {
		ph_log("info", "%s: persistent process %d uses %lld bytes, over max_rss (%lld): recycled",
		       s->label, (int)ph_exec_proc_pid(s->p), rss, spec->persist.max_rss);
		s->retire = true;
	}
}

struct json_object *
ph_persist_call(const struct ph_exec_spec *spec, const struct ph_exec_limits *lim, struct json_object *input,
		const struct ph_exec_hooks *hooks, int depth, enum ph_persist_how *how)
{
	struct slot *s = slot_for(spec, hooks ? hooks->label : NULL);
	struct ph_exec_result res;
	struct json_object *out = NULL;
	long long id = ++call_seq;
	size_t len;
	char *line = call_line(input, id, &len), why[200];
	bool extra = false;
	*how = PH_PERSIST_FRESH;
	if (s->busy) {
		out = call_once(spec, lim, line, len, hooks, id, depth);
		free(line);
		return out;
	}
	if (!slot_ready(s, spec, lim, how)) {
		free(line);
		return NULL;
	}
	s->busy = true;
	if (ph_exec_proc_call(s->p, spec, lim, line, len, hooks, &res, &extra) != 0) {
		ph_log("warning", "%s: %s failed: %s", s->label, spec->argv[0],
		       ph_exec_describe(&res, why, sizeof why));
		slot_stop(s, "the call failed");
	} else {
		out = ph_persist_answer(s->label, res.out, res.out_len, id, depth);
		if (out == NULL)
			slot_stop(s, "a bad answer");
		else if (extra)
			slot_stop(s, "it wrote more than one answer line");
		else
			slot_after(s, spec);
	}
	/* the slot may have moved if a nested call added one: find it again */
	s = slot_for(spec, NULL);
	s->busy = false;
	ph_exec_result_free(&res);
	free(line);
	return out;
}

size_t
ph_persist_pollfds(struct pollfd *pf, size_t max, int *timeout_ms)
{
	size_t n = 0;
	int64_t now = ph_now_us();
	for (size_t i = 0; i < nslots; i++) {
		struct slot *s = &slots[i];
		int fd, ms;
		if (s->spec == NULL || s->p == NULL)
			continue;
		fd = ph_exec_proc_pidfd(s->p);
		if (s->retire)
			ms = 0;
		else if (fd < 0 || n >= max)
			ms = 1000; /* its exit can only be seen by looking */
		else {
			int64_t left = s->last_us + s->spec->persist.idle_ms * 1000 - now;
			ms = left <= 0 ? 0 : left > 3600000000LL ? 3600000 : (int)((left + 999) / 1000);
		}
		if (*timeout_ms < 0 || ms < *timeout_ms)
			*timeout_ms = ms;
		if (fd >= 0 && n < max)
			pf[n++] = (struct pollfd){fd, POLLIN, 0};
	}
	return n;
}

void
ph_persist_tick(void)
{
	int64_t now = ph_now_us();
	for (size_t i = 0; i < nslots; i++) {
		struct slot *s = &slots[i];
		if (s->spec == NULL || s->p == NULL || s->busy)
			continue;
		if (s->retire)
			slot_stop(s, NULL);
		else if (now - s->last_us >= s->spec->persist.idle_ms * 1000)
			slot_stop(s, "idle");
		else if (!ph_exec_proc_ready(s->p))
			slot_stop(s, "not ready for a call");
	}
}

void
ph_persist_shutdown(void)
{
	for (size_t i = 0; i < nslots; i++) {
		slot_stop(&slots[i], NULL);
		free(slots[i].label);
	}
	free(slots);
	slots = NULL;
	nslots = 0;
}

size_t
ph_persist_running(void)
{
	size_t n = 0;
	for (size_t i = 0; i < nslots; i++)
		n += slots[i].p != NULL;
	return n;
}

static void
prestart_one(void *ctx, const struct ph_handler *h, const char *label)
{
	const struct ph_exec_limits *lim = ctx;
	enum ph_persist_how how;
	if (h->kind != PH_HANDLER_EXEC || !h->exec.persist.on || !h->exec.persist.start)
		return;
	if (slot_ready(slot_for(&h->exec, label), &h->exec, lim, &how) && how == PH_PERSIST_FRESH)
		ph_log("info", "%s: persistent process started with the worker", label);
}

void
ph_persist_prestart(const struct ph_server *srv)
{
	struct ph_exec_limits lim;
	if (srv == NULL) /* no configuration loaded: nothing to start */
		return;
	ph_exec_limits_of(srv->conf, &lim);
	ph_registry_each_handler(srv->conf->registry, prestart_one, &lim);
}
