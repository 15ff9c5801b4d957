/* ph_otel_export.c: the exporter process (ph_otel_export.h). It is the only
 * process that talks to the collector, so a slow or absent collector costs
 * the serving processes nothing: their records wait in the workers' rings
 * (ipc/ph_otel_ring.c) or the channel's socket buffer and, when that is
 * full, are dropped by the sender and counted. */
#include "first.h"
#include "ph_otel_export.h"
#include "ph_otel_ring.h"
#include "ph_exec.h"
#include "ph_log.h"
#include "ph_metrics.h"
#include "ph_otel.h"
#include "ph_http.h"
#include "ph_pb.h"
#include "ph_util.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#ifdef PH_HAVE_ZLIB
#include <zlib.h>
#endif

#define PH_OTEL_NAME "phantom-otel"
#define MAX_RECORD 65536
/* the largest collector's answer read (an Export*ServiceResponse, or a
 * Status with the error; neither is used past its HTTP status) */
#define MAX_ANSWER (1 << 20)
/* while records come, the exporter looks for more this often (ms) */
#define DRAIN_MS 10
/* the conventions' advice for mcp.server.*.duration, in seconds */
static const double bounds[] = {0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300};
#define NB (PH_ARRAY_LEN(bounds) + 1)
#define MAX_SERIES 1024 /* attribute sets per histogram; more are folded into none */

struct series {
	int which;
	char *attrs; /* HistogramDataPoint.attributes fields, as encoded by the sender */
	size_t alen;
	uint64_t counts[NB], count;
	double sum, min, max;
};

struct exporter {
	int fd;
	bool eof;
	/* the queued spans, each already the ScopeSpans field it goes out
	 * as, one after the other: span i ends at ends[i] */
	struct ph_buf queue;
	size_t *ends;
	size_t nspans;
	struct ph_buf body, zbody; /* an export's, kept for the next */
#ifdef PH_HAVE_ZLIB
	z_stream z;  /* made once and reset for each export: its 256 KiB of */
	bool z_made; /* state are not allocated and faulted in each time */
#endif
	struct series *series;
	size_t nseries;
	int64_t start_ns;      /* of the cumulative histograms */
	int64_t last_export_us, next_metrics_us;
	int64_t last_log_us;
	struct ph_buf resource; /* the Resource message's content */
};

static volatile sig_atomic_t stop_asked;
static pid_t exporter_pid;
static bool exporter_termed;

static void
on_term(int sig)
{
	(void)sig;
	stop_asked = 1;
}

/* ---- records in ---------------------------------------------------------------- */

static struct series *
find_series(struct exporter *e, int which, const char *a, size_t n)
{
	for (size_t i = 0; i < e->nseries; i++)
		if (e->series[i].which == which && e->series[i].alen == n && memcmp(e->series[i].attrs, a, n) == 0)
			return &e->series[i];
	if (e->nseries == MAX_SERIES)
		n = 0; /* bounded: the rest share the point without attributes */
	for (size_t i = 0; i < e->nseries; i++)
		if (e->series[i].which == which && e->series[i].alen == n)
			return &e->series[i];
	e->series = ph_xrealloc(e->series, (e->nseries + 1) * sizeof *e->series);
	memset(&e->series[e->nseries], 0, sizeof *e->series);
	e->series[e->nseries].which = which;
	e->series[e->nseries].attrs = ph_xmalloc(n ? n : 1);
	memcpy(e->series[e->nseries].attrs, a, n);
	e->series[e->nseries].alen = n;
	return &e->series[e->nseries++];
}

static void
add_point(struct exporter *e, int which, const unsigned char *p, size_t n)
{
	uint64_t ns = 0;
	double s;
	struct series *x;
	size_t b = 0;
	if (n < 8)
		return;
	for (int i = 0; i < 8; i++)
		ns |= (uint64_t)p[i] << (8 * i);
	s = (double)ns / 1e9;
	x = find_series(e, which, (const char *)p + 8, n - 8);
	while (b < PH_ARRAY_LEN(bounds) && s > bounds[b])
		b++; /* a bucket holds (previous bound, its bound] */
	x->counts[b]++;
	if (x->count == 0 || s < x->min)
		x->min = s;
	if (x->count == 0 || s > x->max)
		x->max = s;
	x->count++;
	x->sum += s;
}

/* The records of one datagram: each a 2-byte little-endian length, then
 * its type ('S' a Span message, 'M' or 'N' a metric point) and payload. */
static void
take_records(struct exporter *e, const unsigned char *p, size_t n)
{
	while (n >= 3) {
		size_t len = (size_t)p[0] | (size_t)p[1] << 8;
		const unsigned char *r = p + 2;
		if (len == 0 || len > n - 2)
			return; /* the senders are ours: cannot be, and nothing is read past it */
		if (r[0] == 'S') {
			if (e->nspans >= (size_t)ph_otel.max_queue) {
				ph_metrics_otel(PH_MO_DROP_QUEUE, 1);
			} else {
				ph_pb_bytes(&e->queue, 2, r + 1, len - 1); /* ScopeSpans.spans */
				e->ends[e->nspans++] = e->queue.len;
			}
		} else if (r[0] == 'M' || r[0] == 'N') {
			add_point(e, r[0] == 'M' ? 0 : 1, r + 1, len - 1);
		}
		p += 2 + len;
		n -= 2 + len;
	}
}

static void
ring_record(void *arg, const unsigned char *p, size_t n)
{
	take_records(arg, p, n);
}

/* Takes every record waiting on the channel. */
static void
drain(struct exporter *e)
{
	static unsigned char buf[MAX_RECORD];
	for (;;) {
		ssize_t n = recv(e->fd, buf, sizeof buf, MSG_DONTWAIT);
		if (n == 0) {
			e->eof = true; /* every sender has gone */
			return;
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		take_records(e, buf, (size_t)n);
	}
}

/* ---- envelopes ------------------------------------------------------------------- */

/* resource.proto Resource {attributes = 1}: ph_otel_resource */
static void
make_resource(struct exporter *e)
{
	ph_buf_init(&e->resource);
	ph_otel_resource(&ph_otel, &e->resource);
}

/* common.proto InstrumentationScope {name = 1, version = 2} */
static void
scope(struct ph_buf *b)
{
	size_t s = ph_pb_open(b, 1);
	ph_pb_str(b, 1, "phantom");
	ph_pb_str(b, 2, PACKAGE_VERSION);
	ph_pb_close(b, s);
}

/* ExportTraceServiceRequest {resource_spans = 1 {resource = 1, scope_spans
 * = 2 {scope = 1, spans = 2}}} with spans [0, n) of the queue */
static void
traces_body(struct exporter *e, size_t n, struct ph_buf *b)
{
	size_t rs = ph_pb_open(b, 1), ss;
	ph_pb_bytes(b, 1, e->resource.data, e->resource.len);
	ss = ph_pb_open(b, 2);
	scope(b);
	if (n > 0)
		ph_buf_add(b, e->queue.data, e->ends[n - 1]);
	ph_pb_close(b, ss);
	ph_pb_close(b, rs);
}

/* metrics.proto HistogramDataPoint {attributes 9, start 2, time 3, count 4,
 * sum 5, bucket_counts 6 (packed), explicit_bounds 7 (packed), min 11, max 12} */
static void
data_point(struct ph_buf *b, const struct series *x, int64_t start, int64_t now)
{
	size_t dp = ph_pb_open(b, 1), pk;
	ph_buf_add(b, x->attrs, x->alen);
	ph_pb_fixed64(b, 2, (uint64_t)start);
	ph_pb_fixed64(b, 3, (uint64_t)now);
	ph_pb_fixed64(b, 4, x->count);
	ph_pb_double(b, 5, x->sum);
	pk = ph_pb_open(b, 6);
	for (size_t i = 0; i < NB; i++) {
		unsigned char t[8];
		for (int j = 0; j < 8; j++)
			t[j] = (unsigned char)(x->counts[i] >> (8 * j));
		ph_buf_add(b, t, 8);
	}
	ph_pb_close(b, pk);
	pk = ph_pb_open(b, 7);
	for (size_t i = 0; i < PH_ARRAY_LEN(bounds); i++) {
		uint64_t u;
		unsigned char t[8];
		memcpy(&u, &bounds[i], 8);
		for (int j = 0; j < 8; j++)
			t[j] = (unsigned char)(u >> (8 * j));
		ph_buf_add(b, t, 8);
	}
	ph_pb_close(b, pk);
	ph_pb_double(b, 11, x->min);
	ph_pb_double(b, 12, x->max);
	ph_pb_close(b, dp);
}

/* ExportMetricsServiceRequest {resource_metrics = 1 {resource = 1,
 * scope_metrics = 2 {scope = 1, metrics = 2 {name 1, description 2, unit 3,
 * histogram 9 {data_points 1, aggregation_temporality 2}}}}} */
static bool
metrics_body(struct exporter *e, struct ph_buf *b)
{
	static const char *const names[] = {"mcp.server.operation.duration", "mcp.server.session.duration"};
	static const char *const briefs[] = {
		"MCP request or notification duration as observed on the receiver.",
		"The duration of the MCP session as observed on the MCP server."};
	int64_t now = ph_otel_now_ns();
	size_t rm = ph_pb_open(b, 1), sm;
	bool any = false;
	ph_pb_bytes(b, 1, e->resource.data, e->resource.len);
	sm = ph_pb_open(b, 2);
	scope(b);
	for (int w = 0; w < 2; w++) {
		size_t m = 0, h = 0;
		bool has = false;
		for (size_t i = 0; i < e->nseries && !has; i++)
			has = e->series[i].which == w;
		if (!has)
			continue;
		any = true;
		m = ph_pb_open(b, 2);
		ph_pb_str(b, 1, names[w]);
		ph_pb_str(b, 2, briefs[w]);
		ph_pb_str(b, 3, "s");
		h = ph_pb_open(b, 9);
		for (size_t i = 0; i < e->nseries; i++)
			if (e->series[i].which == w)
				data_point(b, &e->series[i], e->start_ns, now);
		ph_pb_uint(b, 2, 2); /* AGGREGATION_TEMPORALITY_CUMULATIVE */
		ph_pb_close(b, h);
		ph_pb_close(b, m);
	}
	ph_pb_close(b, sm);
	ph_pb_close(b, rm);
	return any;
}

/* ---- posting -------------------------------------------------------------------- */

#ifdef PH_HAVE_ZLIB
/* in gzipped into e->zbody; false when zlib fails (sent as it is) */
static bool
gzip_body(struct exporter *e, const struct ph_buf *in)
{
	z_stream *z = &e->z;
	if (!e->z_made) {
		memset(z, 0, sizeof *z);
		if (deflateInit2(z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
			return false;
		e->z_made = true;
	} else if (deflateReset(z) != Z_OK) {
		return false;
	}
	ph_buf_reset(&e->zbody);
	ph_buf_reserve(&e->zbody, deflateBound(z, in->len));
	z->next_in = (Bytef *)in->data;
	z->avail_in = (uInt)in->len;
	z->next_out = (Bytef *)e->zbody.data;
	z->avail_out = (uInt)e->zbody.cap;
	if (deflate(z, Z_FINISH) != Z_STREAM_END)
		return false;
	e->zbody.len = z->total_out;
	return true;
}
#endif

/* Waits until deadline (monotonic us) taking records meanwhile; false
 * when asked to stop. */
static void
wait_taking(struct exporter *e, int64_t until)
{
	for (;;) {
		int64_t now = ph_now_us(), ms = (until - now + 999) / 1000;
		struct pollfd pf = {e->fd, POLLIN, 0};
		if (now >= until || e->eof || stop_asked)
			return;
		if (poll(&pf, 1, ms < DRAIN_MS ? (int)ms : DRAIN_MS) > 0) /* the rings are looked at too */
			drain(e);
		(void)ph_otel_rings_take(ring_record, e);
	}
}

/* What one post brought back: the status (0: none, err says why) and
 * Retry-After in ms (-1: none). */
struct answer {
	int status;
	long long retry_after_ms;
	char err[400];
};

static void
log_failure(struct exporter *e, const char *url, const struct answer *a)
{
	int64_t now = ph_now_us();
	if (e->last_log_us != 0 && now - e->last_log_us < 60000000)
		return; /* one line a minute: a collector that is down is no flood */
	e->last_log_us = now;
	if (a->status != 0)
		ph_log("warning", "telemetry: %s answered %d", url, a->status);
	else
		ph_log("warning", "telemetry: %s", a->err); /* "URL: why" */
}

#ifdef PH_HAVE_HTTP
/* The headers of every export: Content-Encoding: gzip, then those of
 * OTEL_EXPORTER_OTLP_HEADERS; made once. An export not gzipped starts two
 * entries further. */
static const char *const *
otlp_headers(void)
{
	static const char **hdr;
	if (hdr == NULL) {
		size_t k = 0;
		hdr = ph_xcalloc(2 * ph_otel.nheaders + 3, sizeof *hdr);
		hdr[k++] = "Content-Encoding";
		hdr[k++] = "gzip";
		for (size_t i = 0; i < ph_otel.nheaders; i++) {
			hdr[k++] = ph_otel.headers[i].name;
			hdr[k++] = ph_otel.headers[i].value;
		}
	}
	return hdr;
}
#endif

#ifdef PH_HAVE_HTTP
/* the exporter's connection to the collector, kept between posts */
static struct ph_http_conn *conn;
#endif

/* One OTLP/HTTP POST of body[0, len) to url through lib/ph_http.h: the
 * headers of OTEL_EXPORTER_OTLP_HEADERS (secrets: the client never puts a
 * header into an error), Content-Encoding: gzip when gz; https verified
 * against ca (NULL: the system's CA bundle), which the variable from named. */
static void
post_once(const char *url, const char *ca, const char *from, const char *body, size_t len, bool gz, struct answer *a)
{
	a->status = 0;
	a->retry_after_ms = -1;
	a->err[0] = '\0';
#ifdef PH_HAVE_HTTP
	struct ph_http_req rq = {.url = url, .hdr = otlp_headers() + (gz ? 0 : 2), .body = body, .body_len = len,
				 .content_type = "application/x-protobuf", .timeout_ms = ph_otel.timeout_ms,
				 .max_bytes = MAX_ANSWER, .ca_file = ca, .ca_from = from, .keep = conn};
	struct ph_http_ans an;
	struct ph_buf out;
	if (ph_http_send(&rq, &an, &out, a->err, sizeof a->err) == 0) {
		a->status = an.status;
		a->retry_after_ms = an.retry_after_s >= 0 ? an.retry_after_s * 1000 : -1;
		ph_buf_free(&out);
	}
#else
	(void)ca, (void)from, (void)body, (void)len, (void)gz;
	snprintf(a->err, sizeof a->err, "%s: %s", url, ph_otel_url_missing(url));
#endif
}

/* Posts body to url: retried with exponential backoff (1 s doubling to
 * 32 s, or Retry-After) on no answer, 429, 502, 503 and 504 while the
 * retry budget lasts. Returns whether the collector took it. */
static bool
post(struct exporter *e, const char *url, const char *ca, const char *from, const struct ph_buf *raw)
{
	const struct ph_buf *body = raw;
	struct answer a;
	int64_t give_up = ph_now_us() + ph_otel.retry_budget_ms * 1000, backoff = 1000000;
	bool ok = false;
#ifdef PH_HAVE_ZLIB
	if (ph_otel.gzip && gzip_body(e, raw))
		body = &e->zbody;
#endif
	for (;;) {
		int64_t wait;
		post_once(url, ca, from, body->data, body->len, body != raw, &a);
		if (a.status >= 200 && a.status < 300) {
			ok = true;
			break;
		}
		ph_metrics_otel(PH_MO_FAIL, 1);
		log_failure(e, url, &a);
		if (a.status != 0 && a.status != 429 && a.status != 502 && a.status != 503 && a.status != 504)
			break;
		wait = a.retry_after_ms >= 0 ? a.retry_after_ms * 1000 : backoff;
		if (stop_asked || e->eof || ph_now_us() + wait >= give_up)
			break;
		ph_metrics_otel(PH_MO_RETRY, 1);
		wait_taking(e, ph_now_us() + wait);
		if (backoff < 32000000)
			backoff *= 2;
	}
	return ok;
}

/* Sends the first batch of the queue (at most max_batch spans). */
static void
export_batch(struct exporter *e)
{
	size_t n = e->nspans < (size_t)ph_otel.max_batch ? e->nspans : (size_t)ph_otel.max_batch;
	size_t cut = n > 0 ? e->ends[n - 1] : 0;
	bool sent;
	ph_buf_reset(&e->body);
	traces_body(e, n, &e->body);
	sent = post(e, ph_otel.traces_url, ph_otel.traces_ca, ph_otel.traces_ca_from, &e->body);
	ph_metrics_otel(sent ? PH_MO_EXPORTED : PH_MO_DROP_EXPORT, n);
	/* records taken while it was retried stay queued behind it */
	memmove(e->queue.data, e->queue.data + cut, e->queue.len - cut);
	e->queue.len -= cut;
	for (size_t i = n; i < e->nspans; i++)
		e->ends[i - n] = e->ends[i] - cut;
	e->nspans -= n;
	e->last_export_us = ph_now_us();
}

static void
export_metrics(struct exporter *e)
{
	struct ph_buf b;
	ph_buf_init(&b);
	if (metrics_body(e, &b))
		(void)post(e, ph_otel.metrics_url, ph_otel.metrics_ca, ph_otel.metrics_ca_from, &b);
	ph_buf_free(&b);
	e->next_metrics_us = ph_now_us() + ph_otel.metric_interval_ms * 1000;
}

/* ---- the loop ------------------------------------------------------------------- */

/* After taking what was there, the exporter sleeps a little before it
 * looks again (at most DRAIN_MS, never past due): under load it wakes a
 * hundred times a second, not once a request, and the workers' sends find
 * nobody to wake. The socket buffer holds what comes meanwhile. */
static void
nap(int64_t due)
{
	int64_t now = ph_now_us(), us = DRAIN_MS * 1000;
	struct timespec ts;
	if (!ph_fast_paths)
		return;
	if (due - now < us)
		us = due - now;
	if (us <= 0 || stop_asked)
		return;
	ts.tv_sec = 0;
	ts.tv_nsec = (long)us * 1000;
	nanosleep(&ts, NULL);
}

/* Takes the records of the workers' rings and of the channel, waiting for
 * them until due: while they come it looks again after DRAIN_MS; when
 * there are none it sleeps until due or until a worker wakes it. */
static void
take_until(struct exporter *e, int64_t due)
{
	int64_t now = ph_now_us();
	int ms = due > now ? (int)((due - now + 999) / 1000) : 0;
	struct pollfd pf = {e->fd, POLLIN, 0};
	if ((ph_otel_rings_take(ring_record, e) > 0 || !ph_otel_rings_arm()) && ms > DRAIN_MS)
		ms = DRAIN_MS;
	if (poll(&pf, 1, ms) > 0) {
		drain(e);
		nap(due);
	}
	ph_otel_rings_disarm();
	(void)ph_otel_rings_take(ring_record, e);
}

int
ph_otel_export_run(int fd, bool supervised)
{
	struct exporter e;
	struct sigaction sa;
	memset(&e, 0, sizeof e);
	e.fd = fd;
	e.ends = ph_xcalloc((size_t)ph_otel.max_queue, sizeof *e.ends);
	e.start_ns = ph_otel_now_ns();
	e.last_export_us = ph_now_us();
	e.next_metrics_us = e.last_export_us + ph_otel.metric_interval_ms * 1000;
	make_resource(&e);
#ifdef PH_HAVE_HTTP
	conn = ph_http_conn_new();
#endif
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	(void)supervised;
	for (;;) {
		int64_t now = ph_now_us();
		int64_t due = e.next_metrics_us;
		bool ending = stop_asked || e.eof;
		if (ph_otel.traces && e.nspans > 0 && e.last_export_us + ph_otel.delay_ms * 1000 < due)
			due = e.last_export_us + ph_otel.delay_ms * 1000;
		if (!ending) {
			take_until(&e, due);
		} else { /* what is still there goes with the last export */
			(void)ph_otel_rings_take(ring_record, &e);
			drain(&e);
		}
		now = ph_now_us();
		ending = stop_asked || e.eof;
		while (ph_otel.traces && e.nspans > 0 &&
		       (ending || e.nspans >= (size_t)ph_otel.max_batch ||
			now >= e.last_export_us + ph_otel.delay_ms * 1000)) {
			export_batch(&e);
			now = ph_now_us();
		}
		if (ph_otel.metrics && (ending || now >= e.next_metrics_us))
			export_metrics(&e);
		if (ending && e.nspans == 0)
			break;
	}
	for (size_t i = 0; i < e.nseries; i++)
		free(e.series[i].attrs);
	free(e.series);
	free(e.ends);
	ph_buf_free(&e.queue);
	ph_buf_free(&e.body);
	ph_buf_free(&e.zbody);
#ifdef PH_HAVE_HTTP
	ph_http_conn_free(conn);
	conn = NULL;
#endif
#ifdef PH_HAVE_ZLIB
	if (e.z_made)
		deflateEnd(&e.z);
#endif
	ph_buf_free(&e.resource);
	return 0;
}

/* ---- starting and stopping --------------------------------------------------------- */

/* The exporter keeps stdio's descriptors and fd, nothing else its parent
 * had (the listening socket, a master's signalfd, the hub's channel), and
 * none of the signals its parent blocked. */
static void
keep_only(int fd)
{
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	ph_close_fds_except(fd, -1);
}
pid_t
ph_otel_spawn(bool supervised, int close_fd)
{
	pid_t pid;
	if (!ph_otel_on)
		return 0;
	pid = fork();
	if (pid < 0) {
		ph_log("error", "telemetry: fork of the exporter failed: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		int rfd = ph_otel_reader_fd(), null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (supervised)
			prctl(PR_SET_PDEATHSIG, SIGTERM);
		else
			setsid(); /* it finishes its last export after its starter has gone */
		prctl(PR_SET_NAME, PH_OTEL_NAME);
		(void)close_fd;
		keep_only(rfd);
		/* stdin and stdout belong to the protocol (stdio) or the web
		 * server (CGI): never held open by the exporter */
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			close(null);
		}
		ph_otel_sender_close(); /* its own copy would keep the channel from ending */
		_exit(ph_otel_export_run(rfd, supervised));
	}
	exporter_pid = pid;
	exporter_termed = false;
	if (!supervised) {
		ph_otel_reader_close();
		ph_exec_own(pid); /* ours, not a handler's leftover for the sweep */
	}
	return pid;
}

bool
ph_otel_reaped(pid_t pid, bool stopping, int close_fd)
{
	if (pid <= 0 || pid != exporter_pid)
		return false;
	exporter_pid = 0;
	if (!stopping) {
		ph_log("warning", "telemetry: the exporter %d ended; starting another", (int)pid);
		ph_otel_spawn(true, close_fd);
	}
	return true;
}

bool
ph_otel_stop_wait(void)
{
	if (exporter_pid <= 0)
		return false;
	if (!exporter_termed) {
		kill(exporter_pid, SIGTERM);
		exporter_termed = true;
	}
	return true;
}
