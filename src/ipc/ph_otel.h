/* ph_otel.h: OpenTelemetry spans and metric points as the processes that
 * serve make them (workers, the stdio and CGI fronts, the hub's task
 * supervisors), and the settings that say where they go.
 *
 * A finished span is encoded as an OTLP Span message where it ends and
 * handed to the exporter process (process/ph_otel_export.c) as one
 * datagram on a nonblocking unix socket: nothing here waits, and a record
 * the socket cannot take at once is dropped and counted (phantom_otel_*
 * in /metrics). With telemetry off every hook is one branch on ph_otel_on. */
#ifndef PH_OTEL_H
#define PH_OTEL_H
#include "first.h"

struct ph_config;
struct ph_req;
struct json_object;

/* the sampler of OTEL_TRACES_SAMPLER */
enum ph_otel_sampler {
	PH_OS_ALWAYS_ON,
	PH_OS_ALWAYS_OFF,
	PH_OS_RATIO,
	PH_OS_PARENT_ON,
	PH_OS_PARENT_OFF,
	PH_OS_PARENT_RATIO,
};

/* A header sent with each export (OTEL_EXPORTER_OTLP_HEADERS): the values
 * are secrets, never logged. */
struct ph_otel_header {
	char *name, *value;
};

/* What the configuration and the OTEL_* variables say, resolved once at
 * start (ph_otel_settings_load); the variables win over telemetry:. */
struct ph_otel_settings {
	bool on;                 /* an endpoint is set and the SDK is not disabled */
	bool traces, metrics;    /* the signals exported (OTEL_TRACES/METRICS_EXPORTER) */
	char *traces_url, *metrics_url;
	/* the CA file verifying each collector's certificate, or NULL (the
	 * system's, as ph_http_ca_default); *_ca_from names its variable */
	char *traces_ca, *metrics_ca;
	const char *traces_ca_from, *metrics_ca_from;
	struct ph_otel_header *headers;
	size_t nheaders;
	bool gzip;               /* OTEL_EXPORTER_OTLP_COMPRESSION gzip */
	long long timeout_ms;    /* one export request */
	char *service_name;
	char *resource;          /* OTEL_RESOURCE_ATTRIBUTES as given: k=v,k=v */
	char *instance_id;       /* service.instance.id: cluster.host, NULL without a cluster */
	enum ph_otel_sampler sampler;
	double ratio;
	long long delay_ms, max_queue, max_batch, export_timeout_ms; /* OTEL_BSP_* */
	long long metric_interval_ms; /* OTEL_METRIC_EXPORT_INTERVAL */
	long long retry_budget_ms;    /* retries of one batch stop after this long */
	long long attr_limit;         /* OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT */
	long long worker_buffer;      /* bytes of each worker's ring (telemetry.worker_buffer_kb) */
	bool uri_in_name;             /* resources/read spans named with their URI */
};

/* Non-zero when telemetry is on in this process: the one branch of every hook. */
extern bool ph_otel_on;
/* The settings in force (read by the exporter); borrowed. */
extern struct ph_otel_settings ph_otel;

/* Resolves the settings from c (may be NULL) and the environment into s
 * (freed with ph_otel_settings_free). Returns 0, or -1 with why in err (a
 * variable or key that cannot be used; never a header's value) and s
 * emptied. */
int ph_otel_settings_load(const struct ph_config *c, struct ph_otel_settings *s, char *err,
			  size_t errsz);
void ph_otel_settings_free(struct ph_otel_settings *s);

/* NULL when this build can post to the OTLP endpoint url, else why not
 * (for -t): it is not an http:// or https:// URL, or the build has no HTTP
 * client (lib/ph_http.h). */
const char *ph_otel_url_missing(const char *url);

/* The content of the Resource message of s's exports (the attributes,
 * field 1) into b: service.name, telemetry.sdk.*, host.name (gethostname),
 * service.instance.id (cluster.host) and OTEL_RESOURCE_ATTRIBUTES, whose
 * keys win: a key it sets is not also written from elsewhere. */
struct ph_buf;
void ph_otel_resource(const struct ph_otel_settings *s, struct ph_buf *b);

/* Turns telemetry on in this process and the ones it forks: takes s (moved)
 * and makes the channel records go on. Returns 0 or -1 (logged). */
int ph_otel_init(struct ph_otel_settings *s);
/* The exporter's end of the channel (-1 when off); the senders' end is
 * closed in the process that calls ph_otel_sender_close. */
int ph_otel_reader_fd(void);
void ph_otel_sender_close(void);
void ph_otel_reader_close(void);

/* ---- spans ---------------------------------------------------------------- */

enum { PH_OTEL_INTERNAL = 1, PH_OTEL_SERVER = 2, PH_OTEL_CLIENT = 3 };

/* An attribute: a string s (NULL: the integer i). */
struct ph_otel_attr {
	const char *key;
	const char *s;
	int64_t i;
};

/* A finished span; ids in lower-case hex (trace 32, span 16), parent and
 * link may be NULL or empty. All borrowed for the call. */
struct ph_otel_span {
	const char *trace, *span, *parent;
	const char *link_trace, *link_span;
	const char *name;
	int kind;
	int64_t start_ns, end_ns;          /* unix time */
	const struct ph_otel_attr *attrs;
	size_t nattrs;
	bool error;                        /* status ERROR (else unset) */
	const char *message;               /* its description, may be NULL */
};
/* The largest datagram: the records of one request together. */
#define PH_OTEL_RECORD_MAX 65000
/* While a request runs (on), the records it makes are held and then handed
 * over together when it ends (off): one system call a request. */
void ph_otel_hold(bool on);
/* Encodes sp and hands it over without waiting. */
void ph_otel_send_span(const struct ph_otel_span *sp);
/* Metric points: which (0 mcp.server.operation.duration, 1
 * mcp.server.session.duration), a duration in nanoseconds and its attributes. */
void ph_otel_send_point(int which, int64_t ns, const struct ph_otel_attr *attrs, size_t n);

/* The wall clock in nanoseconds since the epoch. */
int64_t ph_otel_now_ns(void);
/* out (56 bytes) = "00-" trace "-" span "-" flags (2 hex digits), without
 * printf: a request writes three. */
void ph_otel_traceparent(char *out, const char *trace, const char *span, const char *flags);
/* out (n bytes) = a sep b, cut to fit (a span's name, without printf). */
void ph_otel_join(char *out, size_t n, const char *a, const char *sep, const char *b);
/* A random span id (16 hex digits and a NUL) or trace id (32). */
void ph_otel_new_id(char *hex, size_t digits);
/* The sampling decision for a new span of trace (hex) whose parent was
 * sampled or not (has_parent false: a root). */
bool ph_otel_sample(const char *trace, bool has_parent, bool parent_sampled);

/* ---- the request's spans (ph_otel_req.c; struct ph_otel_req is in ph_server.h) ---- */


/* The ladder read the trace context: other is the traceparent header when
 * _meta's was used (it becomes a link), else NULL. Makes a trace for a
 * request without one, decides sampling and sets r->child_traceparent. */
void ph_otel_req_begin(struct ph_req *r, const char *other);
/* The request is over: its SERVER span and its metric point. */
void ph_otel_req_end(struct ph_req *r);

/* A child span of the request (a handler's run, a token check, a parked
 * wait): begin saves r->child_traceparent and puts this span's context in
 * it (so an exec handler started meanwhile continues from it); end sends
 * the span and restores it. */
struct ph_otel_child {
	bool live;
	char span[17];
	char saved[56];
	int64_t start_ns;
};
void ph_otel_child_begin(struct ph_req *r, struct ph_otel_child *c);
void ph_otel_child_end(struct ph_req *r, struct ph_otel_child *c, const char *name,
		       const struct ph_otel_attr *attrs, size_t n, bool error);
/* A legacy call parked in the hub: mark puts this request's span and the
 * time into r->msg (which the hub hands back with the answers); resumed,
 * on the request made of that message, sends the wait as a span and makes
 * the resumed run a child of the first request's span in the same trace. */
void ph_otel_park_mark(struct ph_req *r);
void ph_otel_park_resumed(struct ph_req *r);
/* In the hub: the parked call of message msg was given up (why: the
 * sessions.park_timeout_ms timeout, the server stopping...): its wait is a
 * span ended with an error status whose description is why. */
void ph_otel_park_failed(struct json_object *msg, const char *why);

/* Tasks: mark puts the creating request's span into the task's record
 * (rec); ended, once the record says how the task ended, sends its run as a
 * span of a trace of its own, linked to the request that created it. */
void ph_otel_task_mark(const struct ph_req *r, struct json_object *rec);
void ph_otel_task_ended(struct json_object *rec);

/* A legacy session ended by DELETE: mcp.server.session.duration, from its
 * issue time (the session doc's iat, seconds). */
void ph_otel_session_ended(struct ph_req *r);

/* Abandons c: nothing is sent, r->child_traceparent is restored. */
void ph_otel_child_drop(struct ph_req *r, struct ph_otel_child *c);
#endif
