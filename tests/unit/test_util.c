/* test_util.c: bounded number parsing, buffers, the log timestamp, paths,
 * trimming, labels, address networks, listen specs and memory kept
 * between uses. The
 * FastCGI wire, the JSON parser and what processes share have their own
 * tests (test_fcgi_wire.c, test_json.c, test_shared.c). */
#include "first.h"
#include "ph_cidr.h"
#include "ph_json.h"
#include "ph_listen_addr.h"
#include "ph_log.h"
#include "ph_mime.h"
#include "ph_rate.h"
#include "ph_fcgi_wire.h"
#include "ph_shared.h"
#include "ph_util.h"
#include "tap.h"
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ph_cidr.c: what http.metrics.allow accepts and matches. */
static void
test_cidr(void)
{
	struct ph_cidr n;
	ok(ph_cidr_parse("127.0.0.0/8", &n) == 0 && n.bits == 8, "cidr: 127.0.0.0/8");
	ok(ph_cidr_contains(&n, "127.1.2.3"), "cidr: 127.1.2.3 is inside /8");
	ok(!ph_cidr_contains(&n, "128.0.0.1"), "cidr: 128.0.0.1 is not");
	ok(ph_cidr_contains(&n, "::ffff:127.0.0.9"), "cidr: an IPv4-mapped address counts as IPv4");
	ok(!ph_cidr_contains(&n, "not an address"), "cidr: garbage is never inside");
	ok(!ph_cidr_contains(&n, NULL), "cidr: no REMOTE_ADDR is never inside");
	ok(ph_cidr_parse("::1/128", &n) == 0 && ph_cidr_contains(&n, "::1") && !ph_cidr_contains(&n, "::2"),
	   "cidr: ::1/128");
	ok(ph_cidr_parse("10.1.2.3", &n) == 0 && n.bits == 32, "cidr: a bare address is /32");
	ok(ph_cidr_parse("10.0.0.0/20", &n) == 0 && ph_cidr_contains(&n, "10.0.15.255") &&
	   !ph_cidr_contains(&n, "10.0.16.0"), "cidr: a prefix that is not a whole byte");
	ok(ph_cidr_parse("10.0.0.0/33", &n) != 0, "cidr: /33 is refused");
	ok(ph_cidr_parse("10.0.0/8", &n) != 0, "cidr: a short address is refused");
	ok(ph_cidr_parse("", &n) != 0, "cidr: empty is refused");
	ok(ph_cidr_parse("::/-1", &n) != 0, "cidr: a negative prefix is refused");
}

/* ph_listen_addr.c: the listen specs a start binds and -t checks (a host
 * name is refused in the static build only: static.sh). */
static void
test_listen_addr(void)
{
	static const struct { const char *spec, *why; } bad[] = {
		{"nonsense", "bad listen address 'nonsense': expected HOST:PORT or unix:PATH"},
		{"[::1]9000", "bad listen address '[::1]9000': expected [ADDR]:PORT"},
		{"[::1", "bad listen address '[::1': expected [ADDR]:PORT"},
		{"x:", "bad port '' in 'x:': is empty"},
		{"x:8o", "bad port '8o' in 'x:8o': is not an integer"},
		{"x:+80", "bad port '+80' in 'x:+80': is not an integer"},
		{"x:0", "bad port '0' in 'x:0': is too small"},
		{"x:65536", "bad port '65536' in 'x:65536': is too large"},
	};
	struct ph_listen_addr a;
	char err[512], spec[400];
	ok(ph_listen_addr_parse("127.0.0.1:9000", &a, err, sizeof err) == 0 && a.path == NULL &&
	   strcmp(a.host, "127.0.0.1") == 0 && strcmp(a.port, "9000") == 0, "listen: HOST:PORT");
	ok(ph_listen_addr_parse("[::1]:080", &a, err, sizeof err) == 0 && strcmp(a.host, "::1") == 0 &&
	   strcmp(a.port, "80") == 0, "listen: [ADDR]:PORT, the port as a number");
	ok(ph_listen_addr_parse(":65535", &a, err, sizeof err) == 0 && a.host[0] == '\0' &&
	   strcmp(a.port, "65535") == 0, "listen: :PORT, every address");
	ok(ph_listen_addr_parse("unix:/run/p.sock", &a, err, sizeof err) == 0 && a.path != NULL &&
	   strcmp(a.path, "/run/p.sock") == 0, "listen: unix:PATH");
	for (size_t i = 0; i < PH_ARRAY_LEN(bad); i++) {
		err[0] = '\0';
		ok(ph_listen_addr_parse(bad[i].spec, &a, err, sizeof err) != 0, "listen: '%s' is refused", bad[i].spec);
		is_str(err, bad[i].why, "listen: '%s': why", bad[i].spec);
	}
	memset(spec, 'h', sizeof spec);
	memcpy(spec + 256, ":80", 4);
	ok(ph_listen_addr_parse(spec, &a, err, sizeof err) != 0 && strstr(err, "longer than 255 bytes"),
	   "listen: a host of 256 bytes is refused, not cut");
	memcpy(spec, "unix:", 5);
	spec[5 + 108] = '\0';
	ok(ph_listen_addr_parse(spec, &a, err, sizeof err) != 0 && strstr(err, "unix socket path too long"),
	   "listen: a unix path of 108 bytes is refused");
}

/* listen_mode is octal 0 to 0777, leading zeros or not, and nothing else;
 * listen_owner and listen_group take any number below (uid_t)-1. */
static void
test_listen_perm(void)
{
	static const struct { const char *s; int mode; } good[] = {
		{"0660", 0660}, {"660", 0660}, {"0", 0}, {"0777", 0777}, {"000000600", 0600},
	};
	static const char *const bad[] = {"", "0778", "01000", "777777777777777777777", "-1", "+660",
					  " 660", "0o660", "rw-rw----"};
	struct ph_listen_perm none = {-1, -1, -1}, zero = {0, -1, -1};
	char err[256];
	long long id;
	int mode;
	for (size_t i = 0; i < PH_ARRAY_LEN(good); i++)
		ok(ph_listen_mode_parse(good[i].s, &mode, err, sizeof err) == 0 && mode == good[i].mode,
		   "listen_mode '%s' is %o", good[i].s, good[i].mode);
	for (size_t i = 0; i < PH_ARRAY_LEN(bad); i++) {
		mode = -7;
		ok(ph_listen_mode_parse(bad[i], &mode, err, sizeof err) != 0 && mode == -7 &&
		   strstr(err, "is not an octal mode from 0 to 0777"), "listen_mode '%s' is refused", bad[i]);
	}
	ok(ph_listen_id_parse("4294967294", false, &id, err, sizeof err) == 0 && id == 4294967294LL,
	   "listen_owner: the largest id");
	ok(ph_listen_id_parse("4294967295", true, &id, err, sizeof err) != 0 &&
	   strcmp(err, "group id '4294967295' is too large (0 to 4294967294)") == 0,
	   "listen_group: (gid_t)-1 is not an id");
	ok(ph_listen_id_parse("0", true, &id, err, sizeof err) == 0 && id == 0, "listen_group: 0");
	ok(!ph_listen_perm_any(&none) && ph_listen_perm_any(&zero), "a mode of 0 is asked for, -1 is not");
}

/* ph_kept: the memory of one use is handed to the next, a use within a use
 * gets its own, and memory grown past the limit is not kept. */
static void
test_kept(void)
{
	struct ph_kept k = {{NULL, 0, 0}, false};
	struct ph_buf a, b;
	bool ka, kb;
	char *first;
	ka = ph_kept_take(&k, &a);
	ph_buf_adds(&a, "first use");
	first = a.data;
	ph_kept_give(&k, &a, ka, 4096);
	ka = ph_kept_take(&k, &a);
	ok(ka && a.data == first && a.len == 0 && a.data[0] == '\0', "kept: the next use gets the memory, emptied");
	kb = ph_kept_take(&k, &b);
	ok(!kb && b.data == NULL, "kept: a use within a use gets a buffer of its own");
	ph_buf_adds(&b, "inner");
	ph_kept_give(&k, &b, kb, 4096);
	ok(b.data == NULL && k.busy, "kept: the inner buffer is freed, the kept one still in use");
	ph_buf_reserve(&a, 8192);
	ph_kept_give(&k, &a, ka, 4096);
	ka = ph_kept_take(&k, &a);
	ok(ka && a.cap == 0, "kept: memory grown past the limit is not kept");
	ph_buf_adds(&a, "x");
	first = a.data;
	ph_kept_give(&k, &a, ka, 4096);
	/* the plain path (PHANTOM_FAST_PATHS=off): every use its own buffer */
	ph_fast_paths = false;
	ka = ph_kept_take(&k, &a);
	ok(!ka && a.data == NULL && !k.busy && k.b.data == first,
	   "kept, fast paths off: a buffer of its own, the kept memory left aside");
	ph_buf_adds(&a, "plain");
	ph_kept_give(&k, &a, ka, 4096);
	ok(a.data == NULL && k.b.data == first, "kept, fast paths off: that buffer is freed, the kept one stays");
	ph_fast_paths = true;
	ph_buf_free(&k.b);
}

/* The RFC 6750 b64token syntax, byte by byte against the RFC's list. */
static void
test_token68(void)
{
	static const char allowed[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/";
	int wrong = 0;
	for (int b = 0; b < 256; b++) {
		char t[3] = {'a', (char)b, 'a'};
		bool want = b != 0 && memchr(allowed, b, sizeof allowed - 1) != NULL;
		if (ph_token68(t, 3) != want) {
			printf("# byte 0x%02x: %s\n", b, want ? "refused" : "accepted");
			wrong++;
		}
	}
	is_int(wrong, 0, "token68: each of the 256 bytes inside a token as RFC 6750 says");
	ok(ph_token68("abc==", 5) && ph_token68("a=", 2), "token68: trailing '=' padding");
	ok(!ph_token68("=abc", 4) && !ph_token68("ab=c", 4) && !ph_token68("==", 2),
	   "token68: '=' only at the end, after one other byte");
	ok(!ph_token68("", 0) && !ph_token68("ab\0cd", 5), "token68: empty, or with a NUL inside");
}

/* ph_log: a message holding control characters (a client's id, an error
 * message it sent) is one line, its control characters written out. */
static void
test_log_escape(void)
{
	char path[] = "/tmp/phantom-log-XXXXXX", *text = NULL;
	int fd = mkstemp(path), saved = dup(2);
	size_t len = 0;
	ok(fd >= 0 && saved >= 0 && dup2(fd, 2) == 2, "log: stderr goes to a file");
	ph_log("info", "id %s ended", "x\n2026-12-06T00:00:00.000Z phantom[1] error: forged\x1b[31m\x7f");
	dup2(saved, 2);
	close(saved);
	close(fd);
	ok(ph_read_file(path, 4096, &text, &len) == 0, "log: the file is read");
	ok(text != NULL && memchr(text, '\n', len) == text + len - 1, "log: one line for one message");
	ok(text != NULL && strstr(text, "info: id x\\x0a2026-12-06T00:00:00.000Z phantom[1] error: forged\\x1b[31m\\x7f ended\n") != NULL,
	   "log: the line feed, ESC and DEL are written out (%s)", text ? text : "");
	free(text);
	unlink(path);
}

int
main(void)
{
	long long v = 0;
	const char *err = NULL;
	struct ph_buf b;
	size_t n;
	const char *t;
	char *p;

	test_token68();
	test_log_escape();
	ph_buf_init(&b);
	ph_sse_event(&b, 0, "{\"a\":1}", 7);
	ph_sse_event(&b, 42, "{}", 2);
	is_str(b.data, "event: message\ndata: {\"a\":1}\n\nid: 42\nevent: message\ndata: {}\n\n",
	       "sse: an event, and one with an id");
	ph_buf_free(&b);
	ok(ph_strtonum("42", 0, 100, &v, &err) == 0 && v == 42, "strtonum parses 42");
	ok(ph_strtonum("101", 0, 100, &v, &err) != 0, "strtonum refuses above max");
	is_str(err, "is too large", "strtonum says why");
	ok(ph_strtonum("-1", 0, 100, &v, &err) != 0, "strtonum refuses below min");
	ok(ph_strtonum("12x", 0, 100, &v, &err) != 0, "strtonum refuses trailing junk");
	ok(ph_strtonum("", 0, 100, &v, &err) != 0, "strtonum refuses empty");
	ok(ph_strtonum("99999999999999999999", 0, INT64_MAX, &v, &err) != 0, "strtonum refuses overflow");

	ph_buf_init(&b);
	for (int i = 0; i < 1000; i++)
		ph_buf_printf(&b, "%d,", i);
	ok(b.len > 2000 && b.data[b.len] == '\0', "buffer grows and stays terminated");
	p = ph_buf_steal(&b);
	ok(strncmp(p, "0,1,2,", 6) == 0 && b.data == NULL, "steal hands over the data");
	free(p);
	{
		/* formatted into the room left, and again when it did not fit */
		char big[300], want[400];
		memset(big, 'x', sizeof big - 1);
		big[sizeof big - 1] = '\0';
		ph_buf_init(&b);
		ph_buf_adds(&b, "head:");
		ph_buf_printf(&b, "%d", 42);
		ph_buf_printf(&b, "[%s]", big);
		ph_buf_printf(&b, "%s", "");
		ph_buf_printf(&b, "-%05d", 7);
		snprintf(want, sizeof want, "head:42[%s]-00007", big);
		is_str(b.data, want, "printf appends whether or not the text fits the room left");
		ok(b.len == strlen(want), "... and counts what it appended");
		ph_buf_free(&b);
	}
	{
		/* the log timestamp: UTC to the millisecond, its date kept a second */
		char ts[96], a[32], c[32];
		time_t t0, t1;
		struct tm tm;
		bool same = false;
		for (int i = 0; i < 3 && !same; i++) {
			/* the clock the timestamp reads: time() lags it by up to a tick */
			struct timeval tv;
			gettimeofday(&tv, NULL);
			t0 = tv.tv_sec;
			ph_log_timestamp(ts, sizeof ts);
			ph_log_timestamp(ts, sizeof ts); /* the second one from the kept date */
			gettimeofday(&tv, NULL);
			t1 = tv.tv_sec;
			gmtime_r(&t0, &tm);
			strftime(a, sizeof a, "%Y-%m-%dT%H:%M:%S.", &tm);
			gmtime_r(&t1, &tm);
			strftime(c, sizeof c, "%Y-%m-%dT%H:%M:%S.", &tm);
			same = strcmp(a, c) == 0;
		}
		ok(strlen(ts) == 24 && strncmp(ts, a, 20) == 0 && ts[20] >= '0' && ts[20] <= '9' &&
			   ts[21] >= '0' && ts[21] <= '9' && ts[22] >= '0' && ts[22] <= '9' && ts[23] == 'Z',
		   "log timestamps read YYYY-MM-DDTHH:MM:SS.mmmZ in UTC (%s)", ts);
	}

	t = ph_trim("  \tvalue \t ", &n);
	ok(n == 5 && strncmp(t, "value", 5) == 0, "trim removes OWS on both sides");
	ok(ph_strcaseeq("Mcp-Method", "mcp-method"), "header names compare case-insensitively");
	ok(!ph_strcaseeq("Mcp-Method", "Mcp-Metho"), "different lengths differ");

	p = ph_path_join("/etc/phantom", "skills/manifest.yaml");
	is_str(p, "/etc/phantom/skills/manifest.yaml", "relative paths join the directory");
	free(p);
	p = ph_path_join("/etc/phantom", "/abs/x");
	is_str(p, "/abs/x", "absolute paths stay");
	free(p);
	p = ph_dirname("conf/phantom.yaml");
	is_str(p, "conf", "dirname");
	free(p);
	p = ph_dirname("phantom.yaml");
	is_str(p, ".", "dirname without a slash");
	free(p);
	test_cidr();
	ph_buf_init(&b);
	ph_buf_addint(&b, 0);
	ph_buf_addc(&b, ' ');
	ph_buf_addint(&b, -42);
	ph_buf_addc(&b, ' ');
	ph_buf_addint(&b, INT64_MIN);
	ph_buf_addc(&b, ' ');
	ph_buf_addint(&b, INT64_MAX);
	is_str(b.data, "0 -42 -9223372036854775808 9223372036854775807", "buf addint: as %%lld prints");
	ph_buf_free(&b);
	{
		char lab[8];
		ph_label(lab, sizeof lab, "tool", "echo");
		is_str(lab, "tool ec", "label: cut as snprintf cuts");
		ph_label(lab, sizeof lab, "ab", "c");
		is_str(lab, "ab c", "label: kind, a space, the name");
		ph_label(lab, 3, "tool", "x");
		is_str(lab, "to", "label: cut inside the kind");
	}
	test_listen_addr();
	test_listen_perm();
	test_kept();
	return tap_done();
}
