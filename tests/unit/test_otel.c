/* test_otel.c: the protobuf writer (lib/ph_pb.c) byte for byte, and the
 * telemetry settings (ipc/ph_otel.c): the OTEL_* variables over
 * telemetry:, the endpoint path rules, headers, the sampler and what is
 * refused; the resource's attributes (cluster.host as service.instance.id,
 * the variables winning). What is exported is checked against the official definitions
 * by tests/integration/telemetry.sh. */
#include "first.h"
#include "ph_cluster.h"
#include "ph_config.h"
#include "ph_otel.h"
#include "ph_http.h"
#include "ph_pb.h"
#include "ph_util.h"
#include "tap.h"
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *
hex(const struct ph_buf *b)
{
	static char out[512];
	size_t n = 0;
	for (size_t i = 0; i < b->len && n + 3 < sizeof out; i++)
		n += (size_t)snprintf(out + n, sizeof out - n, "%02x", (unsigned char)b->data[i]);
	out[n] = '\0';
	return out;
}

static void
test_pb(void)
{
	struct ph_buf b;
	size_t at;
	ph_buf_init(&b);
	ph_pb_varint(&b, 300);
	is_str(hex(&b), "ac02", "pb: 300 as a varint");
	ph_buf_reset(&b);
	ph_pb_uint(&b, 6, 2);
	ph_pb_str(&b, 5, "hi");
	is_str(hex(&b), "30022a026869", "pb: a varint field and a string field");
	ph_buf_reset(&b);
	ph_pb_fixed64(&b, 7, 1);
	ph_pb_fixed32(&b, 16, 1);
	is_str(hex(&b), "390100000000000000850101000000", "pb: fixed64 field 7, fixed32 field 16");
	ph_buf_reset(&b);
	ph_pb_double(&b, 5, 1.0);
	is_str(hex(&b), "29000000000000f03f", "pb: a double, little-endian");
	ph_buf_reset(&b);
	at = ph_pb_open(&b, 1);
	ph_pb_str(&b, 1, "k");
	ph_pb_close(&b, at);
	is_str(hex(&b), "0a030a016b", "pb: a nested message, its length in front");
	ph_buf_reset(&b);
	at = ph_pb_open(&b, 2);
	for (int i = 0; i < 200; i++)
		ph_buf_addc(&b, 'x');
	ph_pb_close(&b, at);
	ok(b.len == 203 && (unsigned char)b.data[1] == 0xc8 && (unsigned char)b.data[2] == 0x01 &&
	   b.data[3] == 'x' && b.data[202] == 'x', "pb: a nested message of 200 bytes moves for a 2-byte length");
	ph_buf_reset(&b);
	ph_pb_kv_str(&b, 9, "a", "b");
	is_str(hex(&b), "4a080a016112030a0162", "pb: KeyValue {key, AnyValue {string_value}}");
	ph_buf_reset(&b);
	ph_pb_kv_int(&b, 9, "n", -1);
	ok(b.len == 18 && (unsigned char)b.data[b.len - 1] == 0x01, "pb: a negative int_value is ten varint bytes");
	ph_buf_free(&b);
}

/* The short fields' fast path (ph_fast_paths) and the plain path write the
 * same bytes: keys and values at and around the one-byte length bounds,
 * fields 15 and 16, ids and names. */
static void
encode_fields(struct ph_buf *b)
{
	static const size_t lens[] = {0, 1, 60, 119, 120, 121, 122, 123, 126, 127, 128, 129, 300};
	char v[301];
	memset(v, 'v', sizeof v);
	ph_buf_reset(b);
	for (size_t i = 0; i < PH_ARRAY_LEN(lens); i++) {
		for (unsigned field = 14; field <= 16; field++) {
			ph_pb_bytes(b, field, v, lens[i]);
			ph_pb_kv_strn(b, field, "mcp.method.name", v, lens[i]);
			ph_pb_kv_strn(b, field, "k", v, lens[i]);
		}
	}
	v[120] = '\0';
	ph_pb_kv_strn(b, 9, v, "x", 1); /* a long key */
	ph_pb_str(b, 5, "tools/call mod");
	ph_pb_varint(b, 127);
	ph_pb_varint(b, 128);
}

static void
test_pb_fast(void)
{
	struct ph_buf fast, plain;
	ph_buf_init(&fast);
	ph_buf_init(&plain);
	encode_fields(&fast);
	ph_fast_paths = false;
	encode_fields(&plain);
	ph_fast_paths = true;
	ok(fast.len == plain.len && memcmp(fast.data, plain.data, fast.len) == 0,
	   "pb: the short fields' fast path writes the plain path's bytes (%zu)", fast.len);
	ph_buf_reset(&fast);
	ph_pb_kv_str(&fast, 9, "a", "b");
	is_str(hex(&fast), "4a080a016112030a0162", "pb: a KeyValue on the fast path");
	ph_buf_free(&fast);
	ph_buf_free(&plain);
}

static const char *const vars[] = {
	"OTEL_SDK_DISABLED", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES", "OTEL_EXPORTER_OTLP_ENDPOINT",
	"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
	"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_PROTOCOL",
	"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_COMPRESSION", "OTEL_EXPORTER_OTLP_TIMEOUT",
	"OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG", "OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER",
	"OTEL_BSP_SCHEDULE_DELAY", "OTEL_BSP_MAX_QUEUE_SIZE", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
	"OTEL_BSP_EXPORT_TIMEOUT", "OTEL_METRIC_EXPORT_INTERVAL", "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT",
	"OTEL_EXPORTER_OTLP_CERTIFICATE", "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE",
	"OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE",
};

static void
clear_env(void)
{
	for (size_t i = 0; i < PH_ARRAY_LEN(vars); i++)
		unsetenv(vars[i]);
}

/* the telemetry section as the key table's defaults leave it */
static void
defaults(struct ph_config *c)
{
	memset(c, 0, sizeof *c);
	c->dir = (char *)".";
	c->telemetry.protocol = (char *)"http/protobuf";
	c->telemetry.compression = (char *)"gzip";
	c->telemetry.timeout_ms = 10000;
	c->telemetry.service_name = (char *)"phantom";
	c->telemetry.sample = (char *)"1.0";
	c->telemetry.max_queue = 2048;
	c->telemetry.max_batch = 512;
	c->telemetry.delay_ms = 5000;
	c->telemetry.metric_interval_ms = 60000;
	c->telemetry.retry_budget_ms = 30000;
}

static int
load(const struct ph_config *c, struct ph_otel_settings *s, char *err)
{
	return ph_otel_settings_load(c, s, err, 256);
}

static void
test_settings(void)
{
	struct ph_config c;
	struct ph_otel_settings s;
	char err[256], ca_path[] = "/tmp/test_otel_ca.XXXXXX", fifo_path[64];
	int fd = mkstemp(ca_path);
	if (fd >= 0)
		close(fd); /* a regular file, its contents not read here */
	snprintf(fifo_path, sizeof fifo_path, "%s.fifo", ca_path);
	if (mkfifo(fifo_path, 0600) != 0)
		fprintf(stderr, "# mkfifo %s failed\n", fifo_path);
	clear_env();
	defaults(&c);
	ok(load(&c, &s, err) == 0 && !s.on, "settings: off without an endpoint");
	ph_otel_settings_free(&s);

	c.telemetry.endpoint = (char *)"http://collector:4318/";
	ok(load(&c, &s, err) == 0 && s.on, "settings: on with telemetry.otlp.endpoint");
	is_str(s.traces_url, "http://collector:4318/v1/traces", "settings: /v1/traces appended (one slash)");
	is_str(s.metrics_url, "http://collector:4318/v1/metrics", "settings: /v1/metrics appended");
	ok(s.sampler == PH_OS_PARENT_RATIO && s.ratio == 1.0 && s.max_queue == 2048 && s.max_batch == 512 &&
	   s.delay_ms == 5000 && s.gzip, "settings: the batch processor's defaults, parent-based ratio 1.0, gzip");
	is_str(s.service_name, "phantom", "settings: service_name from telemetry:");
	ph_otel_settings_free(&s);

	setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:4318/base", 1);
	setenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://m:9/custom", 1);
	setenv("OTEL_SERVICE_NAME", "svc", 1);
	setenv("OTEL_BSP_MAX_QUEUE_SIZE", "10", 1);
	setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "50", 1);
	setenv("OTEL_TRACES_SAMPLER", "traceidratio", 1);
	setenv("OTEL_TRACES_SAMPLER_ARG", "0.25", 1);
	setenv("OTEL_EXPORTER_OTLP_HEADERS", "api-key=a%2Cb, x-two = 2 ", 1);
	ok(load(&c, &s, err) == 0 && s.on, "settings: the variables load");
	is_str(s.traces_url, "http://env:4318/base/v1/traces", "settings: OTEL_EXPORTER_OTLP_ENDPOINT wins, path appended");
	is_str(s.metrics_url, "http://m:9/custom", "settings: a signal's own endpoint is used as it is");
	is_str(s.service_name, "svc", "settings: OTEL_SERVICE_NAME wins");
	ok(s.max_queue == 10 && s.max_batch == 10, "settings: a batch larger than the queue is cut to it");
	ok(s.sampler == PH_OS_RATIO && s.ratio == 0.25, "settings: OTEL_TRACES_SAMPLER and its argument");
	ok(s.nheaders == 2 && strcmp(s.headers[0].name, "api-key") == 0 && strcmp(s.headers[0].value, "a,b") == 0 &&
	   strcmp(s.headers[1].name, "x-two") == 0 && strcmp(s.headers[1].value, "2") == 0,
	   "settings: headers trimmed and percent-decoded");
	ph_otel_settings_free(&s);

	setenv("OTEL_SDK_DISABLED", "TRUE", 1);
	ok(load(&c, &s, err) == 0 && !s.on, "settings: OTEL_SDK_DISABLED=true turns it off");
	ph_otel_settings_free(&s);
	unsetenv("OTEL_SDK_DISABLED");
	setenv("OTEL_TRACES_EXPORTER", "none", 1);
	ok(load(&c, &s, err) == 0 && s.on && !s.traces && s.metrics, "settings: OTEL_TRACES_EXPORTER=none keeps metrics");
	ph_otel_settings_free(&s);
	unsetenv("OTEL_TRACES_EXPORTER");

	setenv("OTEL_TRACES_SAMPLER_ARG", "1.5", 1);
	ok(load(&c, &s, err) == -1 && strstr(err, "OTEL_TRACES_SAMPLER_ARG") != NULL, "settings: a ratio over 1 is refused");
	setenv("OTEL_TRACES_SAMPLER_ARG", "0.5", 1);
	setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", 1);
	ok(load(&c, &s, err) == -1 && strstr(err, "grpc") != NULL, "settings: grpc is refused, naming it");
	unsetenv("OTEL_EXPORTER_OTLP_PROTOCOL");
	setenv("OTEL_EXPORTER_OTLP_HEADERS", "novalue", 1);
	ok(load(&c, &s, err) == -1 && strstr(err, "OTEL_EXPORTER_OTLP_HEADERS") != NULL,
	   "settings: a header without '=' is refused");
	setenv("OTEL_EXPORTER_OTLP_HEADERS", "k=secret%0Avalue", 1);
	ok(load(&c, &s, err) == -1 && strstr(err, "control") != NULL && strstr(err, "secret") == NULL,
	   "settings: a value with a control character is refused, the value never in the message");
	setenv("OTEL_EXPORTER_OTLP_HEADERS", "a b=c", 1);
	ok(load(&c, &s, err) == -1, "settings: a header name that is not a token is refused");
	unsetenv("OTEL_EXPORTER_OTLP_HEADERS");
	ok(load(&c, &s, err) == 0 && s.traces_ca == NULL && s.metrics_ca == NULL && s.traces_ca_from == NULL,
	   "settings: no CA file named: the system's");
	ph_otel_settings_free(&s);
	setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", ca_path, 1);
	setenv("OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE", "/proc/self/status", 1);
	ok(load(&c, &s, err) == 0 && strcmp(s.traces_ca, ca_path) == 0 &&
	   strcmp(s.traces_ca_from, "OTEL_EXPORTER_OTLP_CERTIFICATE") == 0 &&
	   strcmp(s.metrics_ca, "/proc/self/status") == 0 &&
	   strcmp(s.metrics_ca_from, "OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE") == 0,
	   "settings: OTEL_EXPORTER_OTLP_CERTIFICATE, a signal's own winning, each named");
	ph_otel_settings_free(&s);
	setenv("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", "/nonexistent/ca.pem", 1);
	ok(load(&c, &s, err) == -1 &&
	       strstr(err, "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE: cannot read /nonexistent/ca.pem") != NULL,
	   "settings: a CA file that cannot be read is refused, naming the variable and the file");
	setenv("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", "/dev/null", 1);
	ok(load(&c, &s, err) == -1 && strstr(err, "/dev/null is not a regular file") != NULL,
	   "settings: a device as the CA file is refused");
	setenv("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", fifo_path, 1);
	ok(load(&c, &s, err) == -1 && strstr(err, "is not a regular file") != NULL,
	   "settings: a FIFO as the CA file is refused (the exporter would wait in its open)");
	unlink(fifo_path);
	unlink(ca_path);
	clear_env();
	setenv("OTEL_BSP_SCHEDULE_DELAY", "soon", 1);
	ok(load(&c, &s, err) == -1 && strstr(err, "OTEL_BSP_SCHEDULE_DELAY") != NULL, "settings: a number that is not one");
	clear_env();
	c.telemetry.sample = (char *)"half";
	ok(load(&c, &s, err) == -1 && strstr(err, "telemetry.sample") != NULL, "settings: telemetry.sample is a ratio");
	clear_env();
}

static uint64_t
varint_at(const struct ph_buf *b, size_t *at)
{
	uint64_t v = 0;
	for (unsigned sh = 0; *at < b->len && sh < 64; sh += 7) {
		unsigned char c = (unsigned char)b->data[(*at)++];
		v |= (uint64_t)(c & 0x7f) << sh;
		if (!(c & 0x80))
			break;
	}
	return v;
}

/* The Resource's attributes (KeyValue {key 1, value 2 {string_value 1}})
 * as "k=v;k=v;" in their order, "?" when b is not made of them. */
static char *
resource_text(const struct ph_buf *b)
{
	static char out[1024];
	size_t n = 0, at = 0;
	out[0] = '\0';
	while (at < b->len) {
		size_t len, end, sub;
		const char *k = NULL, *v = NULL;
		size_t kl = 0, vl = 0;
		if (varint_at(b, &at) != 0x0a)
			return (char *)"?";
		len = (size_t)varint_at(b, &at);
		end = at + len;
		while (at < end) {
			uint64_t tag = varint_at(b, &at);
			size_t l = (size_t)varint_at(b, &at);
			if (tag == 0x0a) {
				k = b->data + at, kl = l;
			} else if (tag == 0x12) {
				sub = at;
				if (varint_at(b, &sub) != 0x0a)
					return (char *)"?";
				vl = (size_t)varint_at(b, &sub);
				v = b->data + sub;
			}
			at += l;
		}
		if (k == NULL || v == NULL || at != end)
			return (char *)"?";
		n += (size_t)snprintf(out + n, sizeof out - n, "%.*s=%.*s;", (int)kl, k, (int)vl, v);
		if (n >= sizeof out)
			return (char *)"?";
	}
	return out;
}

static void
test_resource(void)
{
	struct ph_config c;
	struct ph_cluster_conf cc;
	struct ph_otel_settings s;
	struct ph_buf b;
	char err[256], host[256], want[600];
	clear_env();
	defaults(&c);
	memset(&cc, 0, sizeof cc);
	cc.host = (char *)"host-a";
	ph_buf_init(&b);
	ok(gethostname(host, sizeof host) == 0, "resource: the system has a host name");
	host[sizeof host - 1] = '\0';
	load(&c, &s, err);
	ph_otel_resource(&s, &b);
	snprintf(want, sizeof want, "service.name=phantom;telemetry.sdk.name=phantom;telemetry.sdk.version=%s;"
		 "host.name=%s;", PACKAGE_VERSION, host);
	is_str(resource_text(&b), want, "resource: without a cluster, no service.instance.id");
	ph_otel_settings_free(&s);
	c.cluster = &cc;
	load(&c, &s, err);
	ph_buf_reset(&b);
	ph_otel_resource(&s, &b);
	snprintf(want, sizeof want, "service.name=phantom;telemetry.sdk.name=phantom;telemetry.sdk.version=%s;"
		 "host.name=%s;service.instance.id=host-a;", PACKAGE_VERSION, host);
	is_str(resource_text(&b), want, "resource: cluster.host is service.instance.id, beside host.name");
	ph_otel_settings_free(&s);
	setenv("OTEL_RESOURCE_ATTRIBUTES", " service.instance.id = i-1 ,deployment.environment=prod,host.name=h1,"
	       "service.name=no,junk", 1);
	setenv("OTEL_SERVICE_NAME", "svc", 1);
	load(&c, &s, err);
	ph_buf_reset(&b);
	ph_otel_resource(&s, &b);
	snprintf(want, sizeof want, "service.name=svc;telemetry.sdk.name=phantom;telemetry.sdk.version=%s;"
		 "service.instance.id=i-1;deployment.environment=prod;host.name=h1;", PACKAGE_VERSION);
	is_str(resource_text(&b), want,
	       "resource: OTEL_RESOURCE_ATTRIBUTES wins for the keys it sets, each written once");
	ph_otel_settings_free(&s);
	ph_buf_free(&b);
	clear_env();
}

static void
test_sampling(void)
{
	struct ph_otel_settings s;
	memset(&s, 0, sizeof s);
	ph_otel_init(&s); /* off: nothing is opened */
	ph_otel.sampler = PH_OS_PARENT_RATIO;
	ph_otel.ratio = 0.5;
	ok(ph_otel_sample("00000000000000000000000000000000", false, false), "sample: a low trace id is in at 0.5");
	ok(!ph_otel_sample("0000000000000000ffffffffffffffff", false, false), "sample: a high one is not");
	ok(ph_otel_sample("0000000000000000ffffffffffffffff", true, true), "sample: a sampled parent decides");
	ok(!ph_otel_sample("00000000000000000000000000000000", true, false), "sample: so does one not sampled");
	ph_otel.sampler = PH_OS_ALWAYS_OFF;
	ok(!ph_otel_sample("00000000000000000000000000000000", true, true), "sample: always_off");
	{
		char id[33];
		ph_otel_new_id(id, 32);
		ok(strlen(id) == 32 && strspn(id, "0123456789abcdef") == 32, "ids: 32 lower-case hex digits");
	}
}

/* the OpenSSL HTTP engine's reading of a collector's answer (lib/ph_http.c) */
static void
test_head(void)
{
	struct ph_http_head h;
	const char *a = "HTTP/1.1 503 Busy\r\nretry-after:  7 \r\nContent-Length: 4\r\nX: y\r\n\r\nbody";
	ok(ph_http_head(a, strlen(a), &h) == 1 && h.ans.status == 503 && h.ans.retry_after_s == 7 &&
	   h.content_length == 4 && strcmp(h.reason, "Busy") == 0 && h.len == strlen(a) - 4,
	   "head: status, reason, Retry-After in seconds, Content-Length, its length");
	ok(ph_http_head(a, 20, &h) == 0, "head: a part of it asks for more");
	a = "HTTP/1.0 200\r\nRetry-After: Wed, 21 Oct 2015 07:28:00 GMT\r\n\r\n";
	ok(ph_http_head(a, strlen(a), &h) == 1 && h.ans.status == 200 && h.ans.retry_after_s == -1 &&
	   h.content_length == -1 && h.reason[0] == '\0',
	   "head: a status without a reason; an HTTP-date Retry-After counts as none");
	a = "HTTP/1.1 200 OK\nContent-Length: 0\n\n";
	ok(ph_http_head(a, strlen(a), &h) == 1 && h.content_length == 0 && h.len == strlen(a),
	   "head: lines ended by LF alone");
	a = "HTTP/2 200 OK\r\n\r\n";
	ok(ph_http_head(a, strlen(a), &h) == -1, "head: not HTTP/1.x is refused");
	a = "HTTP/1.1 999 X\r\n\r\n";
	ok(ph_http_head(a, strlen(a), &h) == -1, "head: a status over 599 is refused");
	a = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
	ok(ph_http_head(a, strlen(a), &h) == -1, "head: a chunked answer is refused (HTTP/1.0 asked)");
	a = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n";
	ok(ph_http_head(a, strlen(a), &h) == -1, "head: two different Content-Lengths are refused");
	a = "HTTP/1.1 200 OK\r\nContent-Length: -3\r\n\r\n";
	ok(ph_http_head(a, strlen(a), &h) == -1, "head: a Content-Length not of digits is refused");
	a = "HTTP/1.1 429 X\r\nRetry-After: 9999999\r\n\r\n";
	ok(ph_http_head(a, strlen(a), &h) == 1 && h.ans.status == 429 && h.ans.retry_after_s == -1,
	   "head: a Retry-After past a day is not followed");
	{
		static char big[PH_HTTP_HEAD_MAX + 10];
		memset(big, 'x', sizeof big);
		ok(ph_http_head(big, sizeof big, &h) == -1, "head: longer than PH_HTTP_HEAD_MAX is refused");
	}
}

int
main(void)
{
	test_head();
	test_pb();
	test_pb_fast();
	test_settings();
	test_resource();
	test_sampling();
	return tap_done();
}
