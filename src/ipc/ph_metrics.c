/* ph_metrics.c: the shared counters and their Prometheus exposition. Label
 * values come from fixed tables (known methods, known statuses), so a
 * client cannot grow the output. */
#include "first.h"
#include "ph_metrics.h"
#include "ph_listenq.h"
#include "ph_method.h"
#include "ph_shared.h"
#include "ph_shm.h"
#include <string.h>

/* The label of counter row i: the methods of ph_method.h, then these. */
#define M_NOTIFICATION PH_METHOD__COUNT
#define M_OTHER (PH_METHOD__COUNT + 1)
#define M_NONE (PH_METHOD__COUNT + 2)
_Static_assert(M_NONE + 1 == PH_M_METHODS, "one counter row per label");

static const char *
label(size_t i)
{
	static const char *const extra[] = {"notification", "other", "none"};
	_Static_assert(PH_ARRAY_LEN(extra) == PH_M_METHODS - PH_METHOD__COUNT, "a label per extra row");
	return i < PH_METHOD__COUNT ? ph_method_name((enum ph_method)i) : extra[i - PH_METHOD__COUNT];
}

static const int statuses[PH_M_STATUSES] = {200, 202, 204, 400, 401, 403, 404, 405,
					     413, 415, 429, 499, 500, 503, 504, 0};
/* upper bounds of the duration buckets, seconds; the last is +Inf */
static const double bounds[PH_M_BUCKETS - 1] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
						0.1, 0.25, 0.5, 1, 2.5, 10};
static const char *const exec_names[PH_MX__COUNT] = {
	"start", "timeout", "output_cap", "cancelled", "exit", "signal", "spawn"};

/* The counter row of a request's method: mid, or for a name Phantom does
 * not serve (or none at all) one of the extra rows. */
static size_t
method_index(enum ph_method mid, const char *m)
{
	if (m == NULL)
		return M_NONE;
	if (mid < PH_METHOD__COUNT)
		return (size_t)mid;
	return strncmp(m, "notifications/", 14) == 0 ? M_NOTIFICATION : M_OTHER;
}

static size_t
status_index(int st)
{
	for (size_t i = 0; i + 1 < PH_M_STATUSES; i++)
		if (statuses[i] == st)
			return i;
	return PH_M_STATUSES - 1;
}

#define ADD(p, n) __atomic_add_fetch(&(p), (n), __ATOMIC_RELAXED)
#define GET(p) __atomic_load_n(&(p), __ATOMIC_RELAXED)
#define SET(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELAXED)

void
ph_metrics_request(enum ph_method mid, const char *method, int status, int64_t us)
{
	struct ph_shm_metrics *m = ph_shm_metrics();
	size_t mi = method_index(mid, method), b = 0;
	double s = (double)us / 1e6;
	while (b < PH_M_BUCKETS - 1 && s > bounds[b])
		b++;
	ADD(m->requests[mi][status_index(status)], 1);
	ADD(m->buckets[mi][b], 1);
	ADD(m->sum_us[mi], (uint64_t)(us > 0 ? us : 0));
}

void ph_metrics_exec(enum ph_metric_exec what) { ADD(ph_shm_metrics()->exec[what], 1); }
void ph_metrics_rate_limited(void) { ADD(ph_shm_metrics()->rate_limited, 1); }
void ph_metrics_otel(enum ph_metric_otel what, uint64_t n) { ADD(ph_shm_metrics()->otel[what], n); }
void
ph_metrics_busy(int delta)
{
	ADD(ph_shm_metrics()->busy, delta);
	ph_shared_cell_mark(delta > 0); /* the master's scoreboard, under a master */
}
void ph_metrics_set_workers(long long live) { SET(ph_shm_metrics()->workers, live); }
void ph_metrics_set_generation(long long gen) { SET(ph_shm_metrics()->generation, gen); }
void ph_metrics_reloaded(void) { ADD(ph_shm_metrics()->reloads, 1); }
void ph_metrics_set_stopping(bool st) { SET(ph_shm_metrics()->stopping, st ? 1 : 0); }
bool ph_metrics_stopping(void) { return GET(ph_shm_metrics()->stopping) != 0; }
long long ph_metrics_generation(void) { return GET(ph_shm_metrics()->generation); }
void ph_metrics_set_pool_max(long long max) { SET(ph_shm_metrics()->pool_max, max); }
void ph_metrics_pool_full(void) { ADD(ph_shm_metrics()->pool_full, 1); }

static int listen_fd = -1;
void ph_metrics_set_listen_fd(int fd) { listen_fd = fd; }

void
ph_metrics_pool(struct ph_pool_status *st)
{
	struct ph_shm_metrics *m = ph_shm_metrics();
	st->max = GET(m->pool_max);
	st->full = (long long)GET(m->pool_full);
	if (st->max > 0) {
		ph_shared_pool_count(&st->busy, &st->idle);
	} else {
		/* a single process: it is the pool */
		long long workers = GET(m->workers);
		st->busy = GET(m->busy);
		st->idle = workers > st->busy ? workers - st->busy : 0;
		st->max = workers > st->busy ? workers : st->busy;
	}
	st->total = st->busy + st->idle;
	ph_listen_queue(listen_fd, &st->queue, &st->backlog);
}

static void
family(struct ph_buf *b, const char *name, const char *type, const char *help)
{
	ph_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* The duration histogram of every method that has been counted. */
static void
render_durations(struct ph_buf *b, struct ph_shm_metrics *m)
{
	static const char name[] = "mcp_server_operation_duration_seconds";
	family(b, name, "histogram",
	       "Duration of MCP requests by method (OpenTelemetry mcp.server.operation.duration).");
	for (size_t i = 0; i < PH_M_METHODS; i++) {
		uint64_t cum = 0;
		for (size_t k = 0; k < PH_M_BUCKETS; k++)
			cum += GET(m->buckets[i][k]);
		if (cum == 0)
			continue;
		cum = 0;
		for (size_t k = 0; k < PH_M_BUCKETS; k++) {
			cum += GET(m->buckets[i][k]);
			if (k < PH_M_BUCKETS - 1)
				ph_buf_printf(b, "%s_bucket{mcp_method_name=\"%s\",le=\"%g\"} %llu\n", name,
					      label(i), bounds[k], (unsigned long long)cum);
			else
				ph_buf_printf(b, "%s_bucket{mcp_method_name=\"%s\",le=\"+Inf\"} %llu\n", name,
					      label(i), (unsigned long long)cum);
		}
		ph_buf_printf(b, "%s_sum{mcp_method_name=\"%s\"} %.6f\n", name, label(i),
			      (double)GET(m->sum_us[i]) / 1e6);
		ph_buf_printf(b, "%s_count{mcp_method_name=\"%s\"} %llu\n", name, label(i),
			      (unsigned long long)cum);
	}
}

/* The pool's gauges and counter (ph_metrics_pool); the queue only where
 * the kernel tells it. */
/* What became of the telemetry records (spans and metric points). */
static void
render_otel(struct ph_buf *b, struct ph_shm_metrics *m)
{
	static const char *const names[PH_MO__COUNT] = {
		"handed", "dropped_channel", "dropped_queue", "exported", "dropped_export",
		"export_retry", "export_failed"};
	family(b, "phantom_otel_records_total", "counter",
	       "Telemetry records (spans, metric points) by what became of them; export_retry and "
	       "export_failed count OTLP requests.");
	for (int i = 0; i < PH_MO__COUNT; i++)
		ph_buf_printf(b, "phantom_otel_records_total{event=\"%s\"} %llu\n", names[i],
			      (unsigned long long)GET(m->otel[i]));
}

static void
render_pool(struct ph_buf *b)
{
	struct ph_pool_status st;
	ph_metrics_pool(&st);
	family(b, "phantom_workers", "gauge", "Worker processes of the current generation, by state.");
	ph_buf_printf(b, "phantom_workers{state=\"busy\"} %lld\n", st.busy);
	ph_buf_printf(b, "phantom_workers{state=\"idle\"} %lld\n", st.idle);
	family(b, "phantom_pool_workers", "gauge", "Worker processes of the current generation.");
	ph_buf_printf(b, "phantom_pool_workers %lld\n", st.total);
	family(b, "phantom_pool_max_workers", "gauge", "Most worker processes the pool may run (workers.max).");
	ph_buf_printf(b, "phantom_pool_max_workers %lld\n", st.max);
	family(b, "phantom_pool_max_reached_total", "counter",
	       "Times every worker was busy at the maximum while a request waited.");
	ph_buf_printf(b, "phantom_pool_max_reached_total %lld\n", st.full);
	if (st.queue >= 0) {
		family(b, "phantom_listen_queue", "gauge",
		       "Connections waiting in the listening socket's accept queue.");
		ph_buf_printf(b, "phantom_listen_queue %lld\n", st.queue);
		family(b, "phantom_listen_backlog", "gauge", "The most that accept queue holds.");
		ph_buf_printf(b, "phantom_listen_backlog %lld\n", st.backlog);
	}
}

void
ph_metrics_render(struct ph_buf *b)
{
	struct ph_shm_metrics *m = ph_shm_metrics();
	family(b, "phantom_requests_total", "counter", "MCP requests answered, by method and HTTP status.");
	for (size_t i = 0; i < PH_M_METHODS; i++)
		for (size_t k = 0; k < PH_M_STATUSES; k++) {
			uint64_t n = GET(m->requests[i][k]);
			if (n == 0)
				continue;
			if (statuses[k])
				ph_buf_printf(b, "phantom_requests_total{method=\"%s\",status=\"%d\"} %llu\n",
					      label(i), statuses[k], (unsigned long long)n);
			else
				ph_buf_printf(b, "phantom_requests_total{method=\"%s\",status=\"other\"} %llu\n",
					      label(i), (unsigned long long)n);
		}
	render_durations(b, m);
	family(b, "phantom_exec_total", "counter",
	       "Exec handler runs: starts, and how the ones without a result ended.");
	for (size_t i = 0; i < PH_MX__COUNT; i++)
		ph_buf_printf(b, "phantom_exec_total{event=\"%s\"} %llu\n", exec_names[i],
			      (unsigned long long)GET(m->exec[i]));
	family(b, "phantom_rate_limited_total", "counter", "Requests refused with 429 by limits.rate.");
	ph_buf_printf(b, "phantom_rate_limited_total %llu\n", (unsigned long long)GET(m->rate_limited));
	render_otel(b, m);
	render_pool(b);
	family(b, "phantom_reloads_total", "counter", "Configuration reloads (SIGHUP) that succeeded.");
	ph_buf_printf(b, "phantom_reloads_total %llu\n", (unsigned long long)GET(m->reloads));
	family(b, "phantom_generation", "gauge", "Configuration generation now serving (0 at start).");
	ph_buf_printf(b, "phantom_generation %lld\n", (long long)GET(m->generation));
	family(b, "phantom_listen_streams", "gauge", "subscriptions/listen streams open now.");
	ph_buf_printf(b, "phantom_listen_streams %d\n", ph_shared_listeners());
}
