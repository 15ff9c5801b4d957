/* test_fcgi_wire.c: the FastCGI wire (lib/ph_fcgi_wire.c): whether a
 * connection's bytes hold a whole request, the split of a simple one in
 * place, and a record written before its length is known; and which
 * reader takes a request as the switches say (front/ph_fcgi_split.c). */
#include "first.h"
#include "ph_fcgi_wire.h"
#include "ph_fcgi_split.h"
#include "ph_front.h"
#include "ph_util.h"
#include "tap.h"
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* Appends a FastCGI record (version 1) of type for request id with len
 * bytes of content (zeros) and pad bytes of padding. */
static void
rec(struct ph_buf *b, int type, unsigned id, size_t len, unsigned pad)
{
	unsigned char h[8] = {1, (unsigned char)type, (unsigned char)(id >> 8), (unsigned char)id,
			      (unsigned char)(len >> 8), (unsigned char)len, (unsigned char)pad, 0};
	ph_buf_add(b, h, sizeof h);
	for (size_t i = 0; i < len + pad; i++)
		ph_buf_addc(b, 'x');
}

/* ph_fcgi_wire.c: when a request waits whole on its connection (the front
 * then reads it without deadlines). */
static void
test_fcgi_whole(void)
{
	struct ph_buf b;
	const unsigned char *u;
	size_t full;
	bool every_prefix_short = true;
	ph_buf_init(&b);
	rec(&b, 1, 1, 8, 0);      /* FCGI_BEGIN_REQUEST */
	rec(&b, 4, 1, 300, 4);    /* parameters, padded */
	rec(&b, 4, 1, 0, 0);      /* their end */
	rec(&b, 5, 1, 250, 6);    /* body */
	rec(&b, 5, 1, 0, 0);      /* its end */
	full = b.len;
	u = (const unsigned char *)b.data;
	ok(ph_fcgi_request_whole(u, full), "fcgi whole: begin, parameters, body and both ends");
	for (size_t n = 0; n < full; n++)
		if (ph_fcgi_request_whole(u, n))
			every_prefix_short = false;
	ok(every_prefix_short, "fcgi whole: no shorter prefix counts as whole");
	rec(&b, 1, 2, 8, 0); /* the next request's start after it changes nothing */
	ok(ph_fcgi_request_whole((const unsigned char *)b.data, b.len), "fcgi whole: bytes after the request");
	ph_buf_reset(&b);
	rec(&b, 9, 0, 20, 0); /* FCGI_GET_VALUES first */
	rec(&b, 1, 7, 8, 0);
	rec(&b, 4, 7, 0, 0);
	rec(&b, 5, 3, 0, 0); /* another request's end of body does not end this one */
	ok(!ph_fcgi_request_whole((const unsigned char *)b.data, b.len), "fcgi whole: another id's end of body");
	rec(&b, 5, 7, 0, 0);
	ok(ph_fcgi_request_whole((const unsigned char *)b.data, b.len), "fcgi whole: management records before it");
	ph_buf_reset(&b);
	rec(&b, 4, 1, 0, 0); /* ends before any FCGI_BEGIN_REQUEST */
	rec(&b, 5, 1, 0, 0);
	ok(!ph_fcgi_request_whole((const unsigned char *)b.data, b.len), "fcgi whole: no FCGI_BEGIN_REQUEST");
	ph_buf_reset(&b);
	rec(&b, 1, 1, 8, 0);
	rec(&b, 4, 1, 0, 0);
	rec(&b, 5, 1, 0, 0);
	b.data[8 + 8] = 2; /* version 2 */
	ok(!ph_fcgi_request_whole((const unsigned char *)b.data, b.len), "fcgi whole: a record not of version 1");
	ph_buf_free(&b);
}

/* Appends a record of type for request 1 carrying len bytes of data. */
static void
rec_data(struct ph_buf *b, int type, const char *data, size_t len)
{
	unsigned char h[8] = {1, (unsigned char)type, 0, 1, (unsigned char)(len >> 8), (unsigned char)len, 0, 0};
	ph_buf_add(b, h, sizeof h);
	ph_buf_add(b, data, len);
}

/* ph_fcgi_wire.c: a simple request split out of its records. */
static void
test_fcgi_split(void)
{
	static const char begin[8] = {0, 1, 0, 0, 0, 0, 0, 0}, keep[8] = {0, 1, 1, 0, 0, 0, 0, 0},
			  auth[8] = {0, 2, 0, 0, 0, 0, 0, 0};
	/* REQUEST_METHOD=POST, then a value of 200 bytes (a 4-byte length) */
	char pairs[300], big[200];
	size_t np = 0;
	struct ph_buf b;
	struct ph_fcgi_split sp = {0};
	memset(big, 'v', sizeof big);
	pairs[np++] = 14;
	pairs[np++] = 4;
	memcpy(pairs + np, "REQUEST_METHODPOST", 18);
	np += 18;
	pairs[np++] = 1;
	memcpy(pairs + np, "\x80\x00\x00\xc8", 4);
	np += 4;
	pairs[np++] = 'X';
	memcpy(pairs + np, big, sizeof big);
	np += sizeof big;
	ph_buf_init(&b);
	rec_data(&b, 1, begin, 8);
	rec_data(&b, 4, pairs, 10); /* the block cut across two records */
	rec_data(&b, 4, pairs + 10, np - 10);
	rec_data(&b, 4, NULL, 0);
	rec_data(&b, 5, "{\"a\":", 5);
	rec_data(&b, 5, "1}", 2);
	rec_data(&b, 5, NULL, 0);
	rec_data(&b, 1, begin, 8); /* the next request's start is not taken */
	{
		/* split in place: a copy, the split's from then on */
		char *copy = ph_xmalloc(b.len), *mem;
		memcpy(copy, b.data, b.len);
		ok(ph_fcgi_request_split((unsigned char *)copy, b.len, &sp), "fcgi split: a simple request");
		ok(sp.n == 2 && sp.nlen[0] == 14 && memcmp(sp.name[0], "REQUEST_METHOD", 14) == 0 &&
			   strcmp(sp.value[0], "POST") == 0 && sp.vlen[0] == 4,
		   "fcgi split: the first parameter, joined across records");
		ok(sp.nlen[1] == 1 && sp.name[1][0] == 'X' && sp.vlen[1] == 200 && strlen(sp.value[1]) == 200 &&
			   strspn(sp.value[1], "v") == 200,
		   "fcgi split: a value with a four-byte length");
		is_str(sp.body, "{\"a\":1}", "fcgi split: the body, joined");
		is_int(sp.used, b.len - 16, "fcgi split: takes the request's bytes only");
		is_str(ph_fcgi_split_param(&sp, "REQUEST_METHOD"), "POST", "fcgi split: a parameter by name");
		ok(ph_fcgi_split_param(&sp, "X") == sp.value[1] && ph_fcgi_split_param(&sp, "REQUEST_METHO") == NULL &&
			   ph_fcgi_split_param(&sp, "Y") == NULL && ph_fcgi_split_param(&sp, "") == NULL,
		   "fcgi split: only a whole name is found");
		mem = sp.mem;
		memcpy(copy, b.data, b.len);
		ok(ph_fcgi_request_split((unsigned char *)copy, b.len, &sp) && sp.mem == mem && sp.n == 2 &&
			   strcmp(sp.value[0], "POST") == 0 && strcmp(sp.body, "{\"a\":1}") == 0,
		   "fcgi split: the next request reuses the memory");
		free(copy);
	}
	{
		/* each block in one record: the values and the body lie in the
		 * request's bytes, NUL-ended there */
		struct ph_buf one;
		unsigned char *u;
		ph_buf_init(&one);
		rec_data(&one, 1, begin, 8);
		rec_data(&one, 4, pairs, np);
		rec_data(&one, 4, NULL, 0);
		rec_data(&one, 5, "{}", 2);
		rec_data(&one, 5, NULL, 0);
		u = (unsigned char *)one.data;
		ok(ph_fcgi_request_split(u, one.len, &sp) && sp.n == 2 && sp.name[0] == (char *)u + 8 + 8 + 8 + 2 &&
			   sp.value[0] == sp.name[0] + 14 && strcmp(sp.value[0], "POST") == 0 &&
			   sp.body == (char *)u + one.len - 8 - 2 && strcmp(sp.body, "{}") == 0 &&
			   strlen(sp.value[1]) == 200,
		   "fcgi split: a block in one record is split where it lies");
		ph_buf_free(&one);
	}
	ph_fcgi_split_free(&sp);
	ph_buf_reset(&b);
	rec_data(&b, 1, keep, 8);
	rec_data(&b, 4, NULL, 0);
	rec_data(&b, 5, NULL, 0);
	ok(!ph_fcgi_request_split((unsigned char *)b.data, b.len, &sp) && sp.name == NULL,
	   "fcgi split: FCGI_KEEP_CONN is left to libfcgi");
	ph_buf_reset(&b);
	rec_data(&b, 1, auth, 8);
	rec_data(&b, 4, NULL, 0);
	rec_data(&b, 5, NULL, 0);
	ok(!ph_fcgi_request_split((unsigned char *)b.data, b.len, &sp), "fcgi split: so is another role");
	ph_buf_reset(&b);
	rec_data(&b, 1, begin, 8);
	rec_data(&b, 4, pairs, 23); /* the second pair's four-byte length is cut */
	rec_data(&b, 4, NULL, 0);
	rec_data(&b, 5, NULL, 0);
	ok(!ph_fcgi_request_split((unsigned char *)b.data, b.len, &sp), "fcgi split: a pair past its block");
	ph_buf_reset(&b);
	rec_data(&b, 1, begin, 8);
	rec_data(&b, 5, NULL, 0); /* the body before the parameters' end */
	rec_data(&b, 4, NULL, 0);
	ok(!ph_fcgi_request_split((unsigned char *)b.data, b.len, &sp), "fcgi split: records out of order");
	ph_fcgi_split_free(&sp); /* what the refused ones kept for the next */
	ph_buf_free(&b);
}

/* Appends the pair name=value (each under 128 bytes) to b. */
static void
pair(struct ph_buf *b, const char *name, const char *value)
{
	ph_buf_addc(b, (char)strlen(name));
	ph_buf_addc(b, (char)strlen(value));
	ph_buf_adds(b, name);
	ph_buf_adds(b, value);
}

/* The split of the request holding the pairs of p, made with the fast paths
 * on or off (ph_fast_paths), then each of names looked up: whether every
 * one found what want says (NULL: nothing). */
static bool
split_finds(const struct ph_buf *p, bool fast, const char *const *names, const char *const *want, size_t n,
	    int *first6)
{
	static const char begin[8] = {0, 1, 0, 0, 0, 0, 0, 0};
	struct ph_fcgi_split sp = {0};
	struct ph_buf b;
	bool all;
	ph_buf_init(&b);
	rec_data(&b, 1, begin, 8);
	rec_data(&b, 4, p->data, p->len);
	rec_data(&b, 4, NULL, 0);
	rec_data(&b, 5, NULL, 0);
	ph_fast_paths = fast;
	all = ph_fcgi_request_split((unsigned char *)b.data, b.len, &sp);
	for (size_t i = 0; all && i < n; i++) {
		const char *v = ph_fcgi_split_param(&sp, names[i]);
		all = want[i] ? v != NULL && strcmp(v, want[i]) == 0 : v == NULL;
	}
	*first6 = sp.by_len[6];
	ph_fast_paths = true;
	ph_fcgi_split_free(&sp);
	ph_buf_free(&b);
	return all;
}

/* ph_fcgi_split_param with its by_len index (the fast path) and without
 * (PHANTOM_FAST_PATHS=off: a scan of every pair) finds the same values:
 * names of one length, a name given twice (the first wins, as in libfcgi),
 * names longer than PH_FCGI_SPLIT_LENS, an empty value. */
static void
test_fcgi_split_plain(void)
{
	static const char long1[] = "HTTP_A_HEADER_NAME_LONGER_THAN_THIRTY_TWO_1";
	static const char long2[] = "HTTP_A_HEADER_NAME_LONGER_THAN_THIRTY_TWO_2";
	const char *const names[] = {"HTTP_X", "HTTP_Y", "HTTP_Z", "HTTP_", long1, long2, "Q", ""};
	const char *const want[] = {"first", "y", NULL, NULL, "l1", "l2", "", NULL};
	struct ph_buf p;
	int first6;
	ph_buf_init(&p);
	pair(&p, "HTTP_X", "first");
	pair(&p, "HTTP_Y", "y");
	pair(&p, long2, "l2");
	pair(&p, "HTTP_X", "second");
	pair(&p, "Q", "");
	pair(&p, long1, "l1");
	ok(split_finds(&p, true, names, want, PH_ARRAY_LEN(names), &first6) && first6 == 0,
	   "fcgi split: by the by_len index, each name's first value");
	ok(split_finds(&p, false, names, want, PH_ARRAY_LEN(names), &first6) && first6 == -1,
	   "fcgi split: fast paths off, no index and the same values, by a scan");
	ph_buf_free(&p);
}

/* A record begun before its content (ph_fcgi_record_open) is closed as
 * ph_fcgi_records would have written it: one record, or, past 65535
 * bytes, several. */
static void
test_fcgi_record_close(void)
{
	struct ph_buf a, b;
	char *big = malloc(70000);
	size_t at;
	for (size_t i = 0; i < 70000; i++)
		big[i] = (char)('a' + i % 26);
	ph_buf_init(&a);
	ph_buf_init(&b);
	ph_buf_adds(&a, "before");
	at = ph_fcgi_record_open(&a);
	ph_buf_add(&a, big, 300);
	ph_fcgi_record_close(&a, at, PH_FCGI_STDOUT, 258);
	ph_buf_adds(&b, "before");
	ph_fcgi_records(&b, PH_FCGI_STDOUT, 258, big, 300);
	ok(a.len == b.len && memcmp(a.data, b.data, a.len) == 0,
	   "fcgi record: closed in place, as ph_fcgi_records writes it");
	ph_buf_reset(&a);
	ph_buf_reset(&b);
	at = ph_fcgi_record_open(&a);
	ph_buf_add(&a, big, 70000);
	ph_fcgi_record_close(&a, at, PH_FCGI_STDOUT, 3);
	ph_fcgi_records(&b, PH_FCGI_STDOUT, 3, big, 70000);
	ok(a.len == 70000 + 16 && a.len == b.len && memcmp(a.data, b.data, a.len) == 0,
	   "fcgi record: over 65535 bytes, cut into two records");
	ph_buf_free(&a);
	ph_buf_free(&b);
	free(big);
}

/* ph_fcgi_wire.c: the record header's decoder and encoder, and what
 * each says of bytes that are not a header. */
static void
test_fcgi_header(void)
{
	static const unsigned char stdin_rec[8] = {1, 5, 0x01, 0x02, 0x12, 0x34, 7, 0};
	struct ph_fcgi_header h = {0}, back;
	unsigned char out[PH_FCGI_HEADER_LEN], v2[8];
	char err[80];
	pid_t pid;
	int st = 0;
	ok(ph_fcgi_header_decode(stdin_rec, sizeof stdin_rec, &h) == PH_FCGI_HDR_OK && h.version == 1 &&
	   h.type == PH_FCGI_STDIN && h.rid == 0x0102 && h.clen == 0x1234 && h.plen == 7,
	   "fcgi header: decoded field by field");
	ok(ph_fcgi_record_len(&h) == 8 + 0x1234 + 7, "fcgi header: a record is header, content and padding");
	ph_fcgi_header_encode(&h, out);
	ok(memcmp(out, stdin_rec, sizeof out) == 0, "fcgi header: encoded back to the same bytes");
	ok(ph_fcgi_header_decode(out, sizeof out, &back) == PH_FCGI_HDR_OK && back.rid == h.rid &&
	   back.clen == h.clen, "fcgi header: round trip");
	ok(ph_fcgi_header_decode(stdin_rec, 7, &h) == PH_FCGI_HDR_SHORT, "fcgi header: 7 bytes are short");
	ok(strcmp(ph_fcgi_header_error(PH_FCGI_HDR_SHORT, &h, err, sizeof err),
		  "short header: fewer than 8 bytes") == 0, "fcgi header: short says so");
	memcpy(v2, stdin_rec, sizeof v2);
	v2[0] = 2;
	ok(ph_fcgi_header_decode(v2, sizeof v2, &h) == PH_FCGI_HDR_VERSION && h.version == 2,
	   "fcgi header: version 2 refused");
	ok(strcmp(ph_fcgi_header_error(PH_FCGI_HDR_VERSION, &h, err, sizeof err),
		  "bad header version: 2 (want 1)") == 0, "fcgi header: the error names both versions");
	/* a content length over its 16 bits is the caller's bug: abort */
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		struct ph_fcgi_header big = {PH_FCGI_VERSION_1, PH_FCGI_STDOUT, 1, PH_FCGI_RECORD_MAX + 1, 0};
		signal(SIGABRT, SIG_DFL);
		ph_fcgi_header_encode(&big, out);
		_exit(0);
	}
	ok(pid > 0 && waitpid(pid, &st, 0) == pid && WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT,
	   "fcgi header: a content length over 65535 aborts");
}

/* ph_fcgi_wire.c: the end of an answer as the spec lays it out, and the
 * hub's abort test on what a web server writes. */
static void
test_fcgi_end_abort(void)
{
	static const unsigned char end[] = {1, 6, 1, 2, 0, 0, 0, 0, 1, 3, 1, 2, 0, 8, 0, 0,
					    0, 0, 0, 0, 0, 0, 0, 0};
	struct ph_buf b;
	ph_buf_init(&b);
	ph_fcgi_end(&b, 0x0102);
	ok(b.len == sizeof end && b.len == PH_FCGI_END_ROOM && memcmp(b.data, end, sizeof end) == 0,
	   "fcgi end: empty FCGI_STDOUT, FCGI_END_REQUEST complete");
	ph_buf_reset(&b);
	rec(&b, PH_FCGI_ABORT_REQUEST, 1, 0, 0);
	ok(ph_fcgi_aborted((const unsigned char *)b.data, b.len), "fcgi abort: FCGI_ABORT_REQUEST alone");
	ph_buf_reset(&b);
	rec(&b, PH_FCGI_STDIN, 1, 20, 3);
	ok(!ph_fcgi_aborted((const unsigned char *)b.data, b.len), "fcgi abort: a body record is not one");
	rec(&b, PH_FCGI_ABORT_REQUEST, 1, 0, 0);
	ok(ph_fcgi_aborted((const unsigned char *)b.data, b.len), "fcgi abort: after a body record");
	ok(!ph_fcgi_aborted((const unsigned char *)b.data, 30), "fcgi abort: not before it is read");
	ph_buf_reset(&b);
	rec(&b, PH_FCGI_ABORT_REQUEST, 1, 0, 0);
	b.data[0] = 2;
	ok(!ph_fcgi_aborted((const unsigned char *)b.data, b.len), "fcgi abort: not from a version 2 record");
	ok(!ph_fcgi_aborted((const unsigned char *)b.data, 1), "fcgi abort: one byte is no record");
	ph_buf_free(&b);
}

/* front/ph_fcgi_split.c: a parked call resumed on the connection the hub
 * handed back writes its events and its end as FastCGI records of its
 * request id, and an empty complete response writes nothing. */
static void
test_fcgi_resume(void)
{
	struct ph_buf want;
	struct ph_exchange *ex;
	char got[512];
	ssize_t n;
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
		ok(false, "resume: a socket pair");
		return;
	}
	ex = ph_fcgi_resume_ops.open(sv[0], 0x10007); /* a request id is 16 bits */
	ok(ex->ops->param(ex, "REQUEST_METHOD") == NULL && ex->ops->read(ex, got, sizeof got) == 0,
	   "resume: nothing to read");
	ok(ex->ops->respond(ex, 200, "application/json", NULL, NULL, 0) == 0, "resume: an empty response");
	ok(ex->ops->respond(ex, 200, "application/json", NULL, "{\"a\":1}", 7) == 0 &&
	   ex->ops->stream_send(ex, "{}", 2) == 0, "resume: two events");
	ph_fcgi_resume_ops.end(ex);
	ph_buf_init(&want);
	ph_fcgi_records(&want, PH_FCGI_STDOUT, 7, "event: message\ndata: {\"a\":1}\n\n", 30);
	ph_fcgi_records(&want, PH_FCGI_STDOUT, 7, "event: message\ndata: {}\n\n", 25);
	ph_fcgi_end(&want, 7);
	n = read(sv[1], got, sizeof got);
	ok(n == (ssize_t)want.len && memcmp(got, want.data, want.len) == 0,
	   "resume: the events and the end as records of request 7");
	ok(read(sv[1], got, sizeof got) == 0, "resume: the connection closed");
	close(sv[1]);
	ph_buf_free(&want);
}

/* front/ph_fcgi_split.c: who reads a simple request waiting whole on a
 * fresh connection, as PHANTOM_FCGI_READER and PHANTOM_FAST_PATHS say:
 * the split reader takes it (PH_FCGI_WAIT_SPLIT), or it is left whole for
 * libfcgi (PH_FCGI_WAIT_WHOLE). */
static void
test_fcgi_reader(void)
{
	static const char begin[8] = {0, 1, 0, 0, 0, 0, 0, 0}, pairs[] = "\x0e\x04REQUEST_METHODPOST";
	static const struct {
		const char *reader; /* PHANTOM_FCGI_READER, NULL: unset */
		bool fast;          /* PHANTOM_FAST_PATHS on */
		enum ph_fcgi_wait want;
		const char *what;
	} cases[] = {
		{NULL, true, PH_FCGI_WAIT_SPLIT, "unset, fast paths on: the split reader"},
		{NULL, false, PH_FCGI_WAIT_WHOLE, "unset, PHANTOM_FAST_PATHS=off: libfcgi"},
		{"", false, PH_FCGI_WAIT_WHOLE, "empty, PHANTOM_FAST_PATHS=off: libfcgi"},
		{"split", false, PH_FCGI_WAIT_SPLIT, "split, PHANTOM_FAST_PATHS=off: the split reader still"},
		{"libfcgi", true, PH_FCGI_WAIT_WHOLE, "libfcgi, fast paths on: libfcgi"},
	};
	struct ph_fcgi_split sp = {0};
	struct ph_buf b;
	char err[128];
	ph_buf_init(&b);
	rec_data(&b, 1, begin, 8);
	rec_data(&b, 4, pairs, sizeof pairs - 1);
	rec_data(&b, 4, NULL, 0);
	rec_data(&b, 5, "{}", 2);
	rec_data(&b, 5, NULL, 0);
	for (size_t i = 0; i < PH_ARRAY_LEN(cases); i++) {
		int sv[2];
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0 || ph_write_all(sv[1], b.data, b.len) != 0) {
			ok(false, "reader: a socket pair holding a request");
			continue;
		}
		if (cases[i].reader)
			setenv("PHANTOM_FCGI_READER", cases[i].reader, 1);
		else
			unsetenv("PHANTOM_FCGI_READER");
		ph_fast_paths = cases[i].fast;
		ok(ph_fcgi_reader(false, err, sizeof err) && ph_fcgi_waiting(sv[0], true, 100, &sp) == cases[i].want,
		   "reader: %s", cases[i].what);
		close(sv[0]);
		close(sv[1]);
	}
	unsetenv("PHANTOM_FCGI_READER");
	ph_fast_paths = true;
	ok(ph_fcgi_reader(false, err, sizeof err), "reader: back to the default");
	ph_fcgi_split_free(&sp);
	ph_buf_free(&b);
}

int
main(void)
{
	test_fcgi_whole();
	test_fcgi_split();
	test_fcgi_split_plain();
	test_fcgi_record_close();
	test_fcgi_header();
	test_fcgi_end_abort();
	test_fcgi_resume();
	test_fcgi_reader();
	return tap_done();
}
