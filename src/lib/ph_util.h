/* ph_util.h: allocation, growable buffers, bounded number parsing, small string helpers. */
#ifndef PH_UTIL_H
#define PH_UTIL_H
#include "first.h"
#include <errno.h>
#include <stdarg.h>
#include <string.h>

/* Allocation failure aborts the process: in a worker the master starts a new
 * one, so request paths never carry NULL checks for memory. */
void *ph_xmalloc(size_t n) PH_NONNULL_RET;
void *ph_xcalloc(size_t n, size_t sz) PH_NONNULL_RET;
void *ph_xrealloc(void *p, size_t n) __attribute__((returns_nonnull));
char *ph_xstrdup(const char *s) PH_NONNULL_RET;
char *ph_xstrndup(const char *s, size_t n) PH_NONNULL_RET;
char *ph_xasprintf(const char *fmt, ...) PH_PRINTF(1, 2) PH_NONNULL_RET;

/* A growable byte buffer, always NUL-terminated. */
struct ph_buf {
	char *data;
	size_t len;
	size_t cap;
};
void ph_buf_init(struct ph_buf *b);
void ph_buf_free(struct ph_buf *b);
void ph_buf_reset(struct ph_buf *b);
/* Makes room for extra more bytes (and the NUL) at once. */
void ph_buf_reserve(struct ph_buf *b, size_t extra);
/* Appends n bytes (the data stays NUL-terminated); inline for the common
 * case, room already there. */
static inline void
ph_buf_add(struct ph_buf *b, const void *p, size_t n)
{
	if (b->len + n >= b->cap)
		ph_buf_reserve(b, n);
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}
static inline void
ph_buf_adds(struct ph_buf *b, const char *s)
{
	ph_buf_add(b, s, strlen(s));
}
static inline void
ph_buf_addc(struct ph_buf *b, char c)
{
	if (b->len + 1 >= b->cap)
		ph_buf_reserve(b, 1);
	b->data[b->len++] = c;
	b->data[b->len] = '\0';
}
/* Appends v in decimal (what "%lld" prints, without printf). */
void ph_buf_addint(struct ph_buf *b, long long v);
void ph_buf_printf(struct ph_buf *b, const char *fmt, ...) PH_PRINTF(2, 3);
/* Hands the data to the caller (caller frees) and leaves b empty. */
char *ph_buf_steal(struct ph_buf *b);
/* A buffer whose memory is kept from one use to the next (a process serves
 * one request at a time, so most uses find it free). ph_kept_take hands out
 * the kept memory emptied, or a new buffer while the kept one is in use (a
 * use within a use) or ph_fast_paths is off, and says which; ph_kept_give
 * takes the buffer back, keeping its memory for the next use unless it
 * grew past max bytes. A fast path (docs/internals.md): a use keeps no
 * pointer into the buffer after giving it back. */
struct ph_kept {
	struct ph_buf b;
	bool busy;
};
bool ph_kept_take(struct ph_kept *k, struct ph_buf *b);
void ph_kept_give(struct ph_kept *k, struct ph_buf *b, bool kept, size_t max);

/* Writes b from *off on the non-blocking fd as far as it takes it.
 * Returns 1 when all is written (b is then emptied, *off 0), 0 when fd is
 * full (again once it is writable), -1 when the write failed (errno). */
int ph_buf_write(int fd, struct ph_buf *b, size_t *off);

/* Writes all n bytes at p on fd, retrying short and interrupted writes.
 * Returns 0, or -1 with errno once a write failed. */
int ph_write_all(int fd, const void *p, size_t n);

/* Closes every descriptor of this process above stderr but keep and
 * keep2 (-1: none): what a child forked from a server process must not
 * hold (listening sockets, streams' connections, channels). */
void ph_close_fds_except(int keep, int keep2);

/* "KIND NAME" into buf of n bytes, cut as snprintf cuts (the label of a
 * handler call in log lines), without printf. */
void ph_label(char *buf, size_t n, const char *kind, const char *name);

/* strtonum-like: parses a whole decimal string within [min, max].
 * Returns 0 and stores the value, or -1 with *err set to a static message. */
int ph_strtonum(const char *s, long long min, long long max, long long *out,
		const char **err) PH_WUR;

/* Case-insensitive ASCII comparison of header names. */
bool ph_strcaseeq(const char *a, const char *b);
/* Whether the n bytes at s are an RFC 6750 b64token (token68): A-Z a-z
 * 0-9 - . _ ~ + / then '=' padding only, at least one byte before it. The
 * only bearer token syntax accepted. */
bool ph_token68(const char *s, size_t n);
/* Returns a pointer into s past leading blanks, and sets *len to the length
 * without trailing blanks (RFC 9110 OWS: space and tab). */
const char *ph_trim(const char *s, size_t *len);

/* Monotonic clock in microseconds. */
int64_t ph_now_us(void);
/* Wall clock in milliseconds since the epoch. */
int64_t ph_wall_ms(void);
/* This process's id, kept from the first call until a fork (the child asks
 * again): every log line names it, and getpid() is a system call. */
int ph_pid(void);

#ifdef PH_STATIC_BUILD
/* Why the static build (configure --enable-static-binary) refuses a host
 * name where an address is wanted. */
#define PH_STATIC_NUMERIC "the static build does not look names up (a static program has no NSS): " \
	"give a numeric address such as 127.0.0.1 or [::1], or unix:PATH"
/* Why it refuses a user or group name where an id will do. */
#define PH_STATIC_NUMERIC_ID "the static build does not look names up (a static program has no NSS): " \
	"give the number (id -u NAME, getent group NAME)"
#endif

/* Appends one event of an MCP SSE stream to b: "event: message", the JSON
 * text (len bytes, one line) as its data, a blank line; with id > 0 an
 * "id:" line first (a legacy session's event, for Last-Event-ID). The one
 * place the frame is written. */
void ph_sse_event(struct ph_buf *b, unsigned long long id, const char *json, size_t len);

/* Joins dir and a relative path (absolute paths are returned as they are).
 * Caller frees. */
char *ph_path_join(const char *dir, const char *path) PH_NONNULL_RET;
/* Directory part of a path ("." when it has none). Caller frees. */
char *ph_dirname(const char *path) PH_NONNULL_RET;

/* errno when a path that must be a file is something else (a FIFO, a
 * socket, a device): opened without blocking, then refused. A directory
 * gives EISDIR. ph_strerror says so in words. */
#define PH_ENOTREG EMEDIUMTYPE
/* strerror(err), but PH_ENOTREG reads "not a regular file (a FIFO, socket
 * or device)". Static string. */
const char *ph_strerror(int err);
/* Reads a whole file up to max bytes. Returns 0, or -1 with errno set
 * (EFBIG when larger than max, PH_ENOTREG or EISDIR when not a regular
 * file: a FIFO never blocks the open). *out is NUL-terminated; caller
 * frees. */
int ph_read_file(const char *path, size_t max, char **out, size_t *len) PH_WUR;
/* The same, opened with these extra open(2) flags (O_NOFOLLOW: never
 * through a symbolic link). */
int ph_read_file_flags(const char *path, int flags, size_t max, char **out, size_t *len) PH_WUR;
/* Reads fd (a regular file) to its end, up to max bytes, and closes it.
 * As ph_read_file otherwise. */
int ph_read_fd(int fd, size_t max, char **out, size_t *len) PH_WUR;

/* Whether the fast paths of docs/internals.md run (the default), or each
 * takes its plain path so that tests cover that too: false after
 * ph_fast_paths_read found PHANTOM_FAST_PATHS=off. Each fast path checks
 * it at its entry; set once at start, before any request. */
extern bool ph_fast_paths;
/* Reads PHANTOM_FAST_PATHS into ph_fast_paths: unset, empty or "on", on;
 * "off", off. false with a message in err for any other value. */
bool ph_fast_paths_read(char *err, size_t errsz);
#endif
