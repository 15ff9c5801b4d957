/* ph_metrics.h: the counters every process of one server adds to (requests
 * by method and status, durations, exec handlers, rate limiting) and the
 * worker state the master publishes (busy and live workers, generation,
 * reloads, stopping), kept in the shared mapping of ph_shared.c, and their
 * Prometheus text exposition (format 0.0.4). */
#ifndef PH_METRICS_H
#define PH_METRICS_H
#include "first.h"
#include "ph_method.h"
#include "ph_util.h"

/* Why an exec handler did not give a result. */
enum ph_metric_exec {
	PH_MX_START,      /* started (every run) */
	PH_MX_TIMEOUT,    /* stopped: ran past its timeout */
	PH_MX_OUTPUT_CAP, /* stopped: wrote more than max_output */
	PH_MX_CANCELLED,  /* stopped: the client went away or cancelled */
	PH_MX_EXIT,       /* failed: non-zero exit */
	PH_MX_SIGNAL,     /* failed: died of a signal */
	PH_MX_SPAWN,      /* failed: could not be started */
	PH_MX__COUNT
};

/* What became of a telemetry record (a span or a metric point) a process
 * made: handed over, dropped because the exporter's channel was full,
 * dropped from the exporter's full queue, sent, lost after the retries, and
 * export requests retried and failed. */
enum ph_metric_otel {
	PH_MO_HANDED,
	PH_MO_DROP_CHANNEL,
	PH_MO_DROP_QUEUE,
	PH_MO_EXPORTED,
	PH_MO_DROP_EXPORT,
	PH_MO_RETRY,
	PH_MO_FAIL,
	PH_MO__COUNT
};
void ph_metrics_otel(enum ph_metric_otel what, uint64_t n);

/* Counts one answered MCP request: its method mid and name method (NULL:
 * none was read; mid PH_METHOD__COUNT: one not served, counted as a
 * notification or other by its name), HTTP status, duration in
 * microseconds. */
void ph_metrics_request(enum ph_method mid, const char *method, int status, int64_t us);
void ph_metrics_exec(enum ph_metric_exec what);
void ph_metrics_rate_limited(void);
/* A worker takes (+1) or lets go of (-1) a connection (ph_fcgi.c). */
void ph_metrics_busy(int delta);
/* Published by the master (or the single process): live workers of the
 * current generation, the generation, one more reload, stopping. */
void ph_metrics_set_workers(long long live);
void ph_metrics_set_generation(long long gen);
void ph_metrics_reloaded(void);
void ph_metrics_set_stopping(bool stopping);
bool ph_metrics_stopping(void);
long long ph_metrics_generation(void);
/* The pool as /metrics, the health check and the master's status line say
 * it: workers busy, idle, their total, the maximum, the times it was
 * reached, and the listen queue (-1 where the kernel does not tell). */
struct ph_pool_status {
	long long busy, idle, total, max, full, queue, backlog;
};
void ph_metrics_pool(struct ph_pool_status *st);
/* The master publishes its maximum (0: no master; then the live and busy
 * counts above stand for the pool) and counts each time it was reached. */
void ph_metrics_set_pool_max(long long max);
void ph_metrics_pool_full(void);
/* The listening socket whose queue the status reports (this process's fd). */
void ph_metrics_set_listen_fd(int fd);
/* Appends the whole exposition to b. */
void ph_metrics_render(struct ph_buf *b);
#endif
