/* ph_util.c: allocation wrappers, buffers and small helpers shared by every module. */
#include "first.h"
#include "ph_util.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void
oom(size_t n)
{
	/* Nothing sane can follow; the master replaces this worker. */
	char msg[96];
	int len = snprintf(msg, sizeof msg, "phantom: out of memory (%zu bytes)\n", n);
	if (len > 0 && write(2, msg, (size_t)len) < 0) {
		/* nothing more to do */
	}
	abort();
}

void *
ph_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (p == NULL)
		oom(n);
	return p;
}

void *
ph_xcalloc(size_t n, size_t sz)
{
	void *p;
	n = n ? n : 1;
	sz = sz ? sz : 1;
	p = calloc(n, sz);
	if (p == NULL)
		oom(n * sz);
	return p;
}

void *
ph_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (q == NULL)
		oom(n);
	return q;
}

char *
ph_xstrdup(const char *s)
{
	return ph_xstrndup(s, strlen(s));
}

char *
ph_xstrndup(const char *s, size_t n)
{
	char *p = ph_xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *
ph_xasprintf(const char *fmt, ...)
{
	struct ph_buf b;
	va_list ap;
	ph_buf_init(&b);
	va_start(ap, fmt);
	{
		va_list ap2;
		int n;
		va_copy(ap2, ap);
		n = vsnprintf(NULL, 0, fmt, ap2);
		va_end(ap2);
		if (n < 0)
			n = 0;
		b.data = ph_xmalloc((size_t)n + 1);
		b.cap = (size_t)n + 1;
		vsnprintf(b.data, b.cap, fmt, ap);
		b.len = (size_t)n;
	}
	va_end(ap);
	return b.data;
}

void
ph_buf_init(struct ph_buf *b)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

void
ph_buf_free(struct ph_buf *b)
{
	free(b->data);
	ph_buf_init(b);
}

void
ph_buf_reset(struct ph_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

bool
ph_kept_take(struct ph_kept *k, struct ph_buf *b)
{
	/* ph_fast_paths off (docs/internals.md): every use its own buffer */
	if (k->busy || !ph_fast_paths) {
		ph_buf_init(b);
		return false;
	}
	*b = k->b;
	ph_buf_reset(b);
	k->busy = true;
	return true;
}

void
ph_kept_give(struct ph_kept *k, struct ph_buf *b, bool kept, size_t max)
{
	if (!kept) {
		ph_buf_free(b);
		return;
	}
	if (b->cap > max)
		ph_buf_free(b);
	k->b = *b;
	k->busy = false;
	ph_buf_init(b);
}

int
ph_buf_write(int fd, struct ph_buf *b, size_t *off)
{
	while (*off < b->len) {
		ssize_t n = write(fd, b->data + *off, b->len - *off);
		if (n > 0) {
			*off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n == 0)
			errno = EPIPE;
		return -1;
	}
	ph_buf_reset(b);
	*off = 0;
	return 1;
}

static void
buf_reserve(struct ph_buf *b, size_t extra)
{
	size_t need = b->len + extra + 1;
	if (need <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap *= 2;
	b->data = ph_xrealloc(b->data, cap);
	b->cap = cap;
}

void
ph_buf_reserve(struct ph_buf *b, size_t extra)
{
	buf_reserve(b, extra);
}

void
ph_close_fds_except(int keep, int keep2)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		int fd = atoi(de->d_name);
		if (de->d_name[0] != '.' && fd > 2 && fd != keep && fd != keep2 && fd != dirfd(d))
			close(fd);
	}
	closedir(d);
}

int
ph_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n > 0) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

void
ph_label(char *buf, size_t n, const char *kind, const char *name)
{
	size_t k = strlen(kind), m = strlen(name), w = 0;
	if (n == 0)
		return;
	for (const char *part[] = {kind, " ", name}, **q = part; q < part + 3; q++) {
		size_t l = q == part ? k : q == part + 1 ? 1 : m;
		if (l > n - 1 - w)
			l = n - 1 - w;
		memcpy(buf + w, *q, l);
		w += l;
	}
	buf[w] = '\0';
}

void
ph_buf_printf(struct ph_buf *b, const char *fmt, ...)
{
	va_list ap, ap2;
	size_t room;
	int n;
	/* formatted once into the room there is; again only when it did not fit */
	buf_reserve(b, 63);
	room = b->cap - b->len;
	va_start(ap, fmt);
	va_copy(ap2, ap);
	n = vsnprintf(b->data + b->len, room, fmt, ap);
	if (n > 0 && (size_t)n >= room) {
		buf_reserve(b, (size_t)n);
		vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap2);
	}
	va_end(ap2);
	va_end(ap);
	if (n > 0)
		b->len += (size_t)n;
	else
		b->data[b->len] = '\0';
}

void
ph_buf_addint(struct ph_buf *b, long long v)
{
	char d[24], *p = d + sizeof d;
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u > 0);
	if (v < 0)
		*--p = '-';
	ph_buf_add(b, p, (size_t)(d + sizeof d - p));
}

char *
ph_buf_steal(struct ph_buf *b)
{
	char *p = b->data ? b->data : ph_xstrdup("");
	ph_buf_init(b);
	return p;
}

int
ph_strtonum(const char *s, long long min, long long max, long long *out, const char **err)
{
	char *end;
	long long v;
	if (s == NULL || *s == '\0') {
		*err = "is empty";
		return -1;
	}
	errno = 0;
	v = strtoll(s, &end, 10);
	if (*end != '\0' || end == s) {
		*err = "is not an integer";
		return -1;
	}
	if (errno == ERANGE || v < min) {
		*err = v < min ? "is too small" : "is out of range";
		return -1;
	}
	if (v > max) {
		*err = "is too large";
		return -1;
	}
	*out = v;
	return 0;
}

bool
ph_strcaseeq(const char *a, const char *b)
{
	for (; *a && *b; a++, b++) {
		char x = *a, y = *b;
		if (x >= 'A' && x <= 'Z')
			x = (char)(x - 'A' + 'a');
		if (y >= 'A' && y <= 'Z')
			y = (char)(y - 'A' + 'a');
		if (x != y)
			return false;
	}
	return *a == *b;
}

/* The bytes of an RFC 6750 b64token before its '=' padding: A-Z a-z 0-9
 * and "-._~+/". A table, as a JWT is some 700 of them on every request of
 * auth.mode oauth: the chained range tests and strchr cost 10 instructions
 * a byte there, the look-up 3. */
#define T68_ROW(a) a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a
static const unsigned char token68_byte[256] = {
	T68_ROW(0), T68_ROW(0),                                         /* 0x00-0x1f */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 1,                   /* 0x20-0x2f: + - . / */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0,                   /* 0x30-0x3f: 0-9 */
	0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,                   /* 0x40-0x4f: A-O */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1,                   /* 0x50-0x5f: P-Z _ */
	0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,                   /* 0x60-0x6f: a-o */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 0,                   /* 0x70-0x7f: p-z ~ */
	T68_ROW(0), T68_ROW(0), T68_ROW(0), T68_ROW(0),                 /* 0x80-0xbf */
	T68_ROW(0), T68_ROW(0), T68_ROW(0), T68_ROW(0),                 /* 0xc0-0xff */
};
#undef T68_ROW

bool
ph_token68(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;
	while (i < n && token68_byte[u[i]])
		i++;
	if (i == 0)
		return false;
	while (i < n && s[i] == '=')
		i++;
	return i == n;
}

const char *
ph_trim(const char *s, size_t *len)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	*len = n;
	return s;
}

int64_t
ph_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static pid_t pid_kept;

static void
pid_forget(void)
{
	pid_kept = 0;
}

int
ph_pid(void)
{
	static bool hooked;
	if (!hooked) {
		hooked = true;
		pthread_atfork(NULL, NULL, pid_forget);
	}
	if (pid_kept == 0)
		pid_kept = getpid();
	return (int)pid_kept;
}

int64_t
ph_wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

char *
ph_path_join(const char *dir, const char *path)
{
	if (path[0] == '/' || dir == NULL || dir[0] == '\0')
		return ph_xstrdup(path);
	return ph_xasprintf("%s/%s", dir, path);
}

char *
ph_dirname(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (slash == NULL)
		return ph_xstrdup(".");
	if (slash == path)
		return ph_xstrdup("/");
	return ph_xstrndup(path, (size_t)(slash - path));
}

int
ph_read_file(const char *path, size_t max, char **out, size_t *len)
{
	return ph_read_file_flags(path, 0, max, out, len);
}

void
ph_sse_event(struct ph_buf *b, unsigned long long id, const char *json, size_t len)
{
	if (id > 0)
		ph_buf_printf(b, "id: %llu\n", id);
	ph_buf_adds(b, "event: message\ndata: ");
	ph_buf_add(b, json, len);
	ph_buf_adds(b, "\n\n");
}

const char *
ph_strerror(int err)
{
	return err == PH_ENOTREG ? "not a regular file (a FIFO, socket or device)" : strerror(err);
}

int
ph_read_file_flags(const char *path, int flags, size_t max, char **out, size_t *len)
{
	struct stat st;
	/* O_NONBLOCK: the open of a FIFO returns at once, and is refused */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | flags), e;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		e = S_ISDIR(st.st_mode) ? EISDIR : PH_ENOTREG;
		close(fd);
		errno = e;
		return -1;
	}
	return ph_read_fd(fd, max, out, len);
}

int
ph_read_fd(int fd, size_t max, char **out, size_t *len)
{
	struct ph_buf b;
	char chunk[8192];
	ph_buf_init(&b);
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof chunk);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			close(fd);
			ph_buf_free(&b);
			errno = e;
			return -1;
		}
		if (n == 0)
			break;
		if (b.len + (size_t)n > max) {
			close(fd);
			ph_buf_free(&b);
			errno = EFBIG;
			return -1;
		}
		ph_buf_add(&b, chunk, (size_t)n);
	}
	close(fd);
	*len = b.len;
	*out = ph_buf_steal(&b);
	return 0;
}

bool ph_fast_paths = true;

bool
ph_fast_paths_read(char *err, size_t errsz)
{
	const char *v = getenv("PHANTOM_FAST_PATHS");
	if (v == NULL || *v == '\0' || strcmp(v, "on") == 0) {
		ph_fast_paths = true;
	} else if (strcmp(v, "off") == 0) {
		ph_fast_paths = false;
	} else {
		snprintf(err, errsz, "PHANTOM_FAST_PATHS is '%.64s': it is on or off", v);
		return false;
	}
	return true;
}
