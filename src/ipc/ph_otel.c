/* ph_otel.c: the telemetry settings (telemetry: and the OTEL_* variables),
 * the channel to the exporter, and spans and metric points encoded and
 * handed over without waiting. The request's own spans are in
 * ph_otel_req.c; the exporter in process/ph_otel_export.c. */
#include "first.h"
#include "ph_otel.h"
#include "ph_cluster.h"
#include "ph_otel_ring.h"
#include "ph_config.h"
#include "ph_log.h"
#include "ph_metrics.h"
#include "ph_pb.h"
#include "ph_util.h"
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

bool ph_otel_on;
struct ph_otel_settings ph_otel;
/* [0] the senders' end (every process forked after ph_otel_init), [1] the exporter's */
static int chan[2] = {-1, -1};

/* ---- settings ---------------------------------------------------------------- */

/* The variable name when set and not empty, else NULL. */
static const char *
env(const char *name)
{
	const char *v = getenv(name);
	return v != NULL && *v != '\0' ? v : NULL;
}

/* A number of milliseconds (or a count) from a variable, else def. */
static int
env_num(const char *name, long long min, long long max, long long def, long long *out, char *err,
	size_t errsz)
{
	const char *v = env(name);
	*out = def;
	if (v == NULL)
		return 0;
	const char *why;
	if (ph_strtonum(v, min, max, out, &why) != 0) {
		snprintf(err, errsz, "%s: not a number from %lld to %lld", name, min, max);
		return -1;
	}
	return 0;
}

/* A ratio from 0 to 1 (the sampler's argument). */
static int
parse_ratio(const char *what, const char *v, double *out, char *err, size_t errsz)
{
	char *end;
	double d;
	errno = 0;
	d = strtod(v, &end);
	if (errno != 0 || end == v || *end != '\0' || !(d >= 0.0 && d <= 1.0)) {
		snprintf(err, errsz, "%s: a ratio from 0 to 1 is needed", what);
		return -1;
	}
	*out = d;
	return 0;
}

/* Decodes %XX in place (the W3C baggage form the headers variable uses). */
static void
percent_decode(char *s)
{
	char *w = s;
	for (char *p = s; *p; p++) {
		if (p[0] == '%' && isxdigit((unsigned char)p[1]) && isxdigit((unsigned char)p[2])) {
			char h[3] = {p[1], p[2], 0};
			*w++ = (char)strtol(h, NULL, 16);
			p += 2;
		} else {
			*w++ = *p;
		}
	}
	*w = '\0';
}

/* Adds the headers of list ("k=v,k=v") to s. A header name outside the
 * token characters or a value with a control character is refused. */
static int
add_headers(struct ph_otel_settings *s, const char *what, const char *list, char *err, size_t errsz)
{
	char *copy = ph_xstrdup(list), *save = NULL;
	int rc = 0;
	for (char *item = strtok_r(copy, ",", &save); item != NULL; item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');
		size_t nl, vl;
		const char *name, *value;
		if (eq == NULL) {
			snprintf(err, errsz, "%s: an entry without '=' (key=value,...)", what);
			rc = -1;
			break;
		}
		*eq = '\0';
		name = ph_trim(item, &nl);
		value = ph_trim(eq + 1, &vl);
		if (nl == 0 || !ph_token68(name, nl) || strpbrk(name, "/=") != NULL) {
			snprintf(err, errsz, "%s: a header name is not a token", what);
			rc = -1;
			break;
		}
		s->headers = ph_xrealloc(s->headers, (s->nheaders + 1) * sizeof *s->headers);
		s->headers[s->nheaders].name = ph_xstrndup(name, nl);
		s->headers[s->nheaders].value = ph_xstrndup(value, vl);
		percent_decode(s->headers[s->nheaders].value);
		for (const char *c = s->headers[s->nheaders].value; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f) {
				rc = -1;
				snprintf(err, errsz, "%s: a header value has a control character", what);
			}
		s->nheaders++;
		if (rc != 0)
			break;
	}
	free(copy);
	return rc;
}

/* The URL of one signal: its own variable as it is, else the generic
 * endpoint (variable, then telemetry.otlp.endpoint) with /v1/<path>. */
static char *
signal_url(const char *own, const char *base, const char *path)
{
	const char *v = env(own);
	size_t n;
	if (v != NULL)
		return ph_xstrdup(v);
	if (base == NULL)
		return NULL;
	n = strlen(base);
	return ph_xasprintf("%.*s/%s", (int)(n > 0 && base[n - 1] == '/' ? n - 1 : n), base, path);
}

static int
load_sampler(const struct ph_config *c, struct ph_otel_settings *s, char *err, size_t errsz)
{
	static const struct {
		const char *name;
		enum ph_otel_sampler s;
	} names[] = {
		{"always_on", PH_OS_ALWAYS_ON}, {"always_off", PH_OS_ALWAYS_OFF},
		{"traceidratio", PH_OS_RATIO}, {"parentbased_always_on", PH_OS_PARENT_ON},
		{"parentbased_always_off", PH_OS_PARENT_OFF},
		{"parentbased_traceidratio", PH_OS_PARENT_RATIO},
	};
	const char *v = env("OTEL_TRACES_SAMPLER"), *arg = env("OTEL_TRACES_SAMPLER_ARG");
	s->sampler = PH_OS_PARENT_RATIO;
	s->ratio = 1.0;
	if (c != NULL && c->telemetry.sample != NULL &&
	    parse_ratio("telemetry.sample", c->telemetry.sample, &s->ratio, err, errsz) != 0)
		return -1;
	if (v == NULL)
		return arg != NULL ? parse_ratio("OTEL_TRACES_SAMPLER_ARG", arg, &s->ratio, err, errsz) : 0;
	for (size_t i = 0; i < PH_ARRAY_LEN(names); i++)
		if (strcmp(v, names[i].name) == 0) {
			s->sampler = names[i].s;
			if ((s->sampler == PH_OS_RATIO || s->sampler == PH_OS_PARENT_RATIO) && arg != NULL)
				return parse_ratio("OTEL_TRACES_SAMPLER_ARG", arg, &s->ratio, err, errsz);
			return 0;
		}
	snprintf(err, errsz, "OTEL_TRACES_SAMPLER: %s is not one of always_on, always_off, "
		 "traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio", v);
	return -1;
}

/* The CA file of one signal (OTEL_EXPORTER_OTLP_<SIGNAL>_CERTIFICATE, else
 * OTEL_EXPORTER_OTLP_CERTIFICATE) into *ca and the variable's name into
 * *from; -1 when it names a file that cannot be read. */
static int
signal_ca(const char *own, char **ca, const char **from, char *err, size_t errsz)
{
	const char *v = env(own);
	struct stat st;
	*from = own;
	if (v == NULL) {
		v = env("OTEL_EXPORTER_OTLP_CERTIFICATE");
		*from = "OTEL_EXPORTER_OTLP_CERTIFICATE";
	}
	if (v == NULL) {
		*from = NULL;
		return 0;
	}
	if (stat(v, &st) != 0 || access(v, R_OK) != 0) {
		snprintf(err, errsz, "%s: cannot read %s: %s", *from, v, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) { /* a FIFO or a device would hold the exporter in open() */
		snprintf(err, errsz, "%s: %s is not a regular file", *from, v);
		return -1;
	}
	*ca = ph_xstrdup(v);
	return 0;
}

/* The export side: endpoints, protocol, compression, headers, timeouts. */
static int
load_export(const struct ph_config *c, struct ph_otel_settings *s, char *err, size_t errsz)
{
	const char *base = env("OTEL_EXPORTER_OTLP_ENDPOINT");
	const char *proto = env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL");
	const char *comp = env("OTEL_EXPORTER_OTLP_COMPRESSION");
	const char *h = env("OTEL_EXPORTER_OTLP_HEADERS");
	if (base == NULL && c != NULL)
		base = c->telemetry.endpoint;
	s->traces_url = signal_url("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", base, "v1/traces");
	s->metrics_url = signal_url("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", base, "v1/metrics");
	if (signal_ca("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", &s->traces_ca, &s->traces_ca_from, err, errsz) != 0 ||
	    signal_ca("OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE", &s->metrics_ca, &s->metrics_ca_from, err, errsz) != 0)
		return -1;
	if (proto == NULL)
		proto = env("OTEL_EXPORTER_OTLP_PROTOCOL");
	if (proto == NULL && c != NULL)
		proto = c->telemetry.protocol;
	if (proto != NULL && strcmp(proto, "http/protobuf") != 0) {
		snprintf(err, errsz, "OTLP protocol %s: Phantom exports http/protobuf only (http/json "
			 "and grpc are not built in)", proto);
		return -1;
	}
	if (comp == NULL && c != NULL)
		comp = c->telemetry.compression;
	s->gzip = comp != NULL && strcmp(comp, "gzip") == 0;
	if (comp != NULL && !s->gzip && strcmp(comp, "none") != 0) {
		snprintf(err, errsz, "OTEL_EXPORTER_OTLP_COMPRESSION: %s is not gzip or none", comp);
		return -1;
	}
	if (c != NULL && c->telemetry.headers != NULL &&
	    add_headers(s, "telemetry.otlp.headers", c->telemetry.headers, err, errsz) != 0)
		return -1;
	if (c != NULL && c->telemetry.headers_file != NULL) {
		char *text;
		size_t len;
		int rc;
		char *full = ph_path_join(c->dir, c->telemetry.headers_file);
		rc = ph_read_file(full, 65536, &text, &len);
		free(full);
		if (rc != 0) {
			snprintf(err, errsz, "telemetry.otlp.headers_file %s: %s", c->telemetry.headers_file,
				 strerror(errno));
			return -1;
		}
		while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r'))
			text[--len] = '\0';
		rc = add_headers(s, "telemetry.otlp.headers_file", text, err, errsz);
		sodium_memzero(text, len);
		free(text);
		if (rc != 0)
			return -1;
	}
	if (h != NULL && add_headers(s, "OTEL_EXPORTER_OTLP_HEADERS", h, err, errsz) != 0)
		return -1;
	if ((h = env("OTEL_EXPORTER_OTLP_TRACES_HEADERS")) != NULL &&
	    add_headers(s, "OTEL_EXPORTER_OTLP_TRACES_HEADERS", h, err, errsz) != 0)
		return -1;
	return env_num("OTEL_EXPORTER_OTLP_TIMEOUT", 1, 3600000,
		       c != NULL ? c->telemetry.timeout_ms : 10000, &s->timeout_ms, err, errsz);
}

/* The batch processor, the metric reader and the limits. */
static int
load_limits(const struct ph_config *c, struct ph_otel_settings *s, char *err, size_t errsz)
{
	if (env_num("OTEL_BSP_SCHEDULE_DELAY", 1, 3600000, c ? c->telemetry.delay_ms : 5000,
		    &s->delay_ms, err, errsz) != 0 ||
	    env_num("OTEL_BSP_MAX_QUEUE_SIZE", 1, 1000000, c ? c->telemetry.max_queue : 2048,
		    &s->max_queue, err, errsz) != 0 ||
	    env_num("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 1, 1000000, c ? c->telemetry.max_batch : 512,
		    &s->max_batch, err, errsz) != 0 ||
	    env_num("OTEL_BSP_EXPORT_TIMEOUT", 1, 3600000, c ? c->telemetry.retry_budget_ms : 30000,
		    &s->retry_budget_ms, err, errsz) != 0 ||
	    env_num("OTEL_METRIC_EXPORT_INTERVAL", 100, 86400000,
		    c ? c->telemetry.metric_interval_ms : 60000, &s->metric_interval_ms, err, errsz) != 0 ||
	    env_num("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", 16, 16384, 4096, &s->attr_limit, err,
		    errsz) != 0)
		return -1;
	if (s->max_batch > s->max_queue)
		s->max_batch = s->max_queue; /* as the specification says */
	s->uri_in_name = c != NULL && c->telemetry.resource_uri_in_name;
	s->worker_buffer = (c != NULL ? c->telemetry.worker_buffer_kb : 256) * 1024;
	return 0;
}

static bool
truthy(const char *v)
{
	return v != NULL && ph_strcaseeq(v, "true");
}

int
ph_otel_settings_load(const struct ph_config *c, struct ph_otel_settings *s, char *err, size_t errsz)
{
	const char *v;
	memset(s, 0, sizeof *s);
	*err = '\0';
	if (load_export(c, s, err, errsz) != 0 || load_sampler(c, s, err, errsz) != 0 ||
	    load_limits(c, s, err, errsz) != 0) {
		ph_otel_settings_free(s);
		return -1;
	}
	v = env("OTEL_SERVICE_NAME");
	s->service_name = ph_xstrdup(v ? v : c != NULL && c->telemetry.service_name ? c->telemetry.service_name
										: "phantom");
	s->resource = ph_xstrdup(env("OTEL_RESOURCE_ATTRIBUTES") ? env("OTEL_RESOURCE_ATTRIBUTES") : "");
	/* the hosts of a cluster told apart (DESIGN.md 4e) */
	if (c != NULL && c->cluster != NULL && c->cluster->host != NULL)
		s->instance_id = ph_xstrdup(c->cluster->host);
	v = env("OTEL_TRACES_EXPORTER");
	s->traces = s->traces_url != NULL && (v == NULL || strcmp(v, "none") != 0);
	v = env("OTEL_METRICS_EXPORTER");
	s->metrics = s->metrics_url != NULL && (v == NULL || strcmp(v, "none") != 0);
	s->on = (s->traces || s->metrics) && !truthy(env("OTEL_SDK_DISABLED"));
	return 0;
}

void
ph_otel_settings_free(struct ph_otel_settings *s)
{
	for (size_t i = 0; i < s->nheaders; i++) {
		free(s->headers[i].name);
		sodium_memzero(s->headers[i].value, strlen(s->headers[i].value));
		free(s->headers[i].value);
	}
	free(s->headers);
	free(s->traces_url);
	free(s->metrics_url);
	free(s->traces_ca);
	free(s->metrics_ca);
	free(s->service_name);
	free(s->resource);
	free(s->instance_id);
	memset(s, 0, sizeof *s);
}

/* Calls fn for each k=v of an OTEL_RESOURCE_ATTRIBUTES list (blanks around
 * each trimmed, an entry without '=' or a key skipped) until it returns
 * true. Returns whether one did. */
static bool
resource_each(const char *list, bool (*fn)(void *, const char *, size_t, const char *, size_t), void *ctx)
{
	char *copy = ph_xstrdup(list ? list : ""), *save = NULL;
	bool stop = false;
	for (char *kv = strtok_r(copy, ",", &save); kv && !stop; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');
		size_t kl, vl;
		const char *k, *v;
		if (eq == NULL)
			continue;
		*eq = '\0';
		k = ph_trim(kv, &kl);
		v = ph_trim(eq + 1, &vl);
		if (kl > 0)
			stop = fn(ctx, k, kl, v, vl);
	}
	free(copy);
	return stop;
}

static bool
key_is(void *ctx, const char *k, size_t kl, const char *v, size_t vl)
{
	(void)v;
	(void)vl;
	return strlen(ctx) == kl && memcmp(ctx, k, kl) == 0;
}

static bool
put_kv(void *ctx, const char *k, size_t kl, const char *v, size_t vl)
{
	char *key;
	if (kl == 12 && memcmp(k, "service.name", 12) == 0) /* OTEL_SERVICE_NAME's, or ours */
		return false;
	key = ph_xstrndup(k, kl);
	ph_pb_kv_strn(ctx, 1, key, v, vl);
	free(key);
	return false;
}

void
ph_otel_resource(const struct ph_otel_settings *s, struct ph_buf *b)
{
	char host[256];
	ph_pb_kv_str(b, 1, "service.name", s->service_name);
	ph_pb_kv_str(b, 1, "telemetry.sdk.name", "phantom");
	ph_pb_kv_str(b, 1, "telemetry.sdk.version", PACKAGE_VERSION);
	if (!resource_each(s->resource, key_is, (void *)"host.name") && gethostname(host, sizeof host) == 0) {
		host[sizeof host - 1] = '\0';
		ph_pb_kv_str(b, 1, "host.name", host);
	}
	if (s->instance_id != NULL && !resource_each(s->resource, key_is, (void *)"service.instance.id"))
		ph_pb_kv_str(b, 1, "service.instance.id", s->instance_id);
	resource_each(s->resource, put_kv, b);
}

/* ---- the channel ----------------------------------------------------------------- */

int
ph_otel_init(struct ph_otel_settings *s)
{
	int sz = 1 << 20;
	ph_otel = *s;
	memset(s, 0, sizeof *s);
	if (!ph_otel.on)
		return 0;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, chan) != 0) {
		ph_log("error", "telemetry: the exporter's channel: %s; telemetry is off", strerror(errno));
		ph_otel.on = false;
		return -1;
	}
	/* the bounded queue between the processes that make records and the
	 * exporter: what does not fit is dropped by the sender, never waited for */
	fcntl(chan[0], F_SETFL, fcntl(chan[0], F_GETFL) | O_NONBLOCK);
	setsockopt(chan[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
	setsockopt(chan[1], SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
	ph_otel_on = true;
	return 0;
}

int ph_otel_reader_fd(void) { return chan[1]; }

void
ph_otel_sender_close(void)
{
	if (chan[0] >= 0)
		close(chan[0]);
	chan[0] = -1;
	ph_otel_on = false;
}

void
ph_otel_reader_close(void)
{
	if (chan[1] >= 0)
		close(chan[1]);
	chan[1] = -1;
}

/* Records wait here while a request runs (ph_otel_hold) and go in one
 * datagram when it ends: one send a request, not one a record. */
static struct ph_buf held;
static unsigned nheld;
static bool holding;

/* Hands the records in b (n of them) over: into this worker's ring, else as
 * one datagram on the channel; or drops and counts them. */
static void
send_records(const struct ph_buf *b, unsigned n)
{
	if (chan[0] < 0 || n == 0)
		return;
	switch (ph_otel_ring_put(b->data, b->len)) {
	case PH_RING_WAKE: /* one byte: the reader's drain skips it */
		(void)send(chan[0], "w", 1, MSG_DONTWAIT | MSG_NOSIGNAL);
		ph_metrics_otel(PH_MO_HANDED, n);
		return;
	case PH_RING_PUT:
		ph_metrics_otel(PH_MO_HANDED, n);
		return;
	case PH_RING_FULL:
		ph_metrics_otel(PH_MO_DROP_CHANNEL, n);
		return;
	case PH_RING_NONE:
		break;
	}
	if (send(chan[0], b->data, b->len, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)b->len)
		ph_metrics_otel(PH_MO_HANDED, n);
	else
		ph_metrics_otel(PH_MO_DROP_CHANNEL, n);
}

/* Hands over the record in b (from offset 2: its type and payload; the
 * first two bytes are room for its length): held while a request runs,
 * else sent at once. */
static void
hand_over(struct ph_buf *b)
{
	size_t n = b->len - 2;
	if (n > PH_OTEL_RECORD_MAX) {
		ph_metrics_otel(PH_MO_DROP_CHANNEL, 1); /* many long attributes: too large to hand over */
		return;
	}
	b->data[0] = (char)(n & 0xff);
	b->data[1] = (char)(n >> 8);
	if (holding && ph_fast_paths && held.len + b->len <= PH_OTEL_RECORD_MAX) {
		ph_buf_add(&held, b->data, b->len);
		nheld++;
		return;
	}
	send_records(b, 1);
}

void
ph_otel_hold(bool on)
{
	if (!ph_otel_on)
		return;
	if (!on) {
		send_records(&held, nheld);
		ph_buf_reset(&held);
		nheld = 0;
	}
	holding = on;
}

/* ---- ids, clock, sampling ------------------------------------------------------------ */

int64_t
ph_otel_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Random bytes for ids from a ChaCha20 stream keyed once per process
 * (randombytes_buf reads the kernel's generator each time: a system call an
 * id); a forked process keys its own, so no two share a stream. The stream
 * is taken a 64-byte block at a time (what one ChaCha20 call computes
 * anyway), handed out in order: a request's three ids take 32 bytes. */
static void
id_bytes(unsigned char *out, size_t n)
{
	static unsigned char key[crypto_stream_chacha20_KEYBYTES];
	static unsigned char block[64];
	static size_t left; /* bytes of block not handed out, at its end */
	static int keyed_pid;
	static uint64_t counter;
	unsigned char nonce[crypto_stream_chacha20_NONCEBYTES];
	if (!ph_fast_paths) {
		randombytes_buf(out, n); /* the plain path: the kernel's generator each time */
		return;
	}
	if (keyed_pid != ph_pid()) {
		randombytes_buf(key, sizeof key);
		keyed_pid = ph_pid();
		counter = 0;
		left = 0;
	}
	if (left < n) {
		counter++;
		for (size_t i = 0; i < sizeof nonce; i++)
			nonce[i] = (unsigned char)(counter >> (8 * i));
		crypto_stream_chacha20(block, sizeof block, nonce, key);
		left = sizeof block;
	}
	memcpy(out, block + sizeof block - left, n);
	left -= n;
}

/* Ids are not secrets: plain hex both ways (sodium's constant-time
 * conversions cost some 3,500 instructions a request: five ids decoded,
 * three made). */
static const char hex_digits[] = "0123456789abcdef";

/* a hex digit's value plus one; 0: not a hex digit */
static const unsigned char hex_plus1[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7, ['7'] = 8, ['8'] = 9,
	['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16, ['A'] = 11,
	['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

void
ph_otel_traceparent(char *out, const char *trace, const char *span, const char *flags)
{
	memcpy(out, "00-", 3);
	memcpy(out + 3, trace, 32);
	out[35] = '-';
	memcpy(out + 36, span, 16);
	out[52] = '-';
	out[53] = flags[0];
	out[54] = flags[1];
	out[55] = '\0';
}

static size_t
append(char *out, size_t i, size_t n, const char *s)
{
	while (*s && i + 1 < n)
		out[i++] = *s++;
	return i;
}

void
ph_otel_join(char *out, size_t n, const char *a, const char *sep, const char *b)
{
	size_t i = append(out, 0, n, a);
	i = append(out, i, n, sep);
	out[append(out, i, n, b)] = '\0';
}

void
ph_otel_new_id(char *hex, size_t digits)
{
	unsigned char rnd[16];
	bool zero;
	do {
		id_bytes(rnd, digits / 2);
		zero = true;
		for (size_t i = 0; i < digits / 2; i++)
			zero = zero && rnd[i] == 0;
	} while (zero); /* all zero is the invalid id */
	for (size_t i = 0; i < digits / 2; i++) {
		hex[2 * i] = hex_digits[rnd[i] >> 4];
		hex[2 * i + 1] = hex_digits[rnd[i] & 15];
	}
	hex[digits] = '\0';
}

/* TraceIdRatioBased: the trace's last 56 bits (random under W3C level 2)
 * against the ratio, so every process decides the same for one trace. */
static bool
ratio_says(const char *trace)
{
	uint64_t v = 0;
	if (ph_otel.ratio >= 1.0)
		return true;
	for (int i = 18; i < 32; i++) {
		char c = trace[i];
		v = v << 4 | (uint64_t)(c <= '9' ? c - '0' : c - 'a' + 10);
	}
	return (double)v < ph_otel.ratio * 72057594037927936.0; /* 2^56 */
}

bool
ph_otel_sample(const char *trace, bool has_parent, bool parent_sampled)
{
	switch (ph_otel.sampler) {
	case PH_OS_ALWAYS_ON:
		return true;
	case PH_OS_ALWAYS_OFF:
		return false;
	case PH_OS_RATIO:
		return ratio_says(trace);
	case PH_OS_PARENT_ON:
		return has_parent ? parent_sampled : true;
	case PH_OS_PARENT_OFF:
		return has_parent ? parent_sampled : false;
	default:
		return has_parent ? parent_sampled : ratio_says(trace);
	}
}

/* ---- encoding ---------------------------------------------------------------------- */

/* hex (2n digits) as n bytes of field, when it is there */
static void
id_field(struct ph_buf *b, unsigned field, const char *hex, size_t n)
{
	unsigned char bin[16];
	if (hex == NULL)
		return;
	for (size_t i = 0; i < n; i++) {
		unsigned hi = hex_plus1[(unsigned char)hex[2 * i]], lo = hi ? hex_plus1[(unsigned char)hex[2 * i + 1]] : 0;
		if (lo == 0)
			return; /* not 2n hex digits */
		bin[i] = (unsigned char)((hi - 1) << 4 | (lo - 1));
	}
	if (hex[2 * n] != '\0')
		return;
	ph_pb_bytes(b, field, bin, n);
}

static void
attrs_field(struct ph_buf *b, unsigned field, const struct ph_otel_attr *a, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (a[i].s == NULL) {
			ph_pb_kv_int(b, field, a[i].key, a[i].i);
		} else {
			size_t l = strlen(a[i].s);
			ph_pb_kv_strn(b, field, a[i].key, a[i].s,
				      l > (size_t)ph_otel.attr_limit ? (size_t)ph_otel.attr_limit : l);
		}
	}
}

/* trace.proto Span: trace_id 1, span_id 2, parent_span_id 4, name 5, kind 6,
 * start 7, end 8, attributes 9, links 13 {trace_id 1, span_id 2,
 * attributes 4}, status 15 {message 2, code 3}, flags 16 */
void
ph_otel_send_span(const struct ph_otel_span *sp)
{
	static struct ph_kept kept;
	struct ph_buf b;
	bool k;
	if (!ph_otel_on || !ph_otel.traces)
		return;
	k = ph_kept_take(&kept, &b);
	ph_buf_add(&b, "\0\0S", 3);
	id_field(&b, 1, sp->trace, 16);
	id_field(&b, 2, sp->span, 8);
	if (sp->parent != NULL && *sp->parent)
		id_field(&b, 4, sp->parent, 8);
	ph_pb_str(&b, 5, sp->name);
	ph_pb_uint(&b, 6, (uint64_t)sp->kind);
	ph_pb_fixed64(&b, 7, (uint64_t)sp->start_ns);
	ph_pb_fixed64(&b, 8, (uint64_t)sp->end_ns);
	attrs_field(&b, 9, sp->attrs, sp->nattrs);
	if (sp->link_trace != NULL && *sp->link_trace) {
		size_t l = ph_pb_open(&b, 13);
		id_field(&b, 1, sp->link_trace, 16);
		id_field(&b, 2, sp->link_span, 8);
		ph_pb_close(&b, l);
	}
	if (sp->error) {
		size_t st = ph_pb_open(&b, 15);
		if (sp->message != NULL && *sp->message) {
			size_t l = strlen(sp->message);
			ph_pb_bytes(&b, 2, sp->message,
				    l > (size_t)ph_otel.attr_limit ? (size_t)ph_otel.attr_limit : l);
		}
		ph_pb_uint(&b, 3, 2); /* STATUS_CODE_ERROR */
		ph_pb_close(&b, st);
	}
	ph_pb_fixed32(&b, 16, 1u); /* the W3C flags: sampled (only those are sent) */
	hand_over(&b);
	ph_kept_give(&kept, &b, k, 65536);
}

void
ph_otel_send_point(int which, int64_t ns, const struct ph_otel_attr *attrs, size_t n)
{
	static struct ph_kept kept;
	struct ph_buf b;
	bool k;
	unsigned char t[8];
	if (!ph_otel_on || !ph_otel.metrics)
		return;
	k = ph_kept_take(&kept, &b);
	ph_buf_add(&b, "\0\0", 2);
	ph_buf_addc(&b, which == 0 ? 'M' : 'N');
	for (int i = 0; i < 8; i++)
		t[i] = (unsigned char)((uint64_t)ns >> (8 * i));
	ph_buf_add(&b, t, 8);
	attrs_field(&b, 9, attrs, n); /* HistogramDataPoint.attributes */
	hand_over(&b);
	ph_kept_give(&kept, &b, k, 65536);
}

const char *
ph_otel_url_missing(const char *url)
{
	if (url == NULL)
		return NULL;
	if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)
		return "the OTLP endpoint is not an http:// or https:// URL";
#ifdef PH_HAVE_HTTP
	return NULL;
#else
	return "this build has no HTTP client (configure found neither libcurl nor libssl with c-ares, "
	       "or was given --with-http-client=no)";
#endif
}
