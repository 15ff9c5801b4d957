/* ph_oauth_keys.c: the key file and its fetches (through ph_http.h: libcurl,
 * or OpenSSL's HTTP client in the static build)
 * of auth.mode oauth; ph_oauth.c's head comment describes who fetches when.
 *
 * The file is the publication: a fetch writes the JWK set to a temporary
 * file in cache_dir and renames it over the cache file, so a worker reads
 * either the old set or the new one, whole. Workers stat the file at most
 * once a second (and at once for an unknown kid) and parse it again only
 * when its inode, size or mtime changed.
 *
 * The lock file beside it ("<cache file>.lock") holds, in milliseconds, when
 * the last fetch attempt started and when it ended (0 while it runs).
 * Whoever fetches takes its flock without waiting and gives up when another
 * process holds it or when the last attempt started less than min_refresh_s
 * ago: one attempt per interval for the whole host, whatever the number of
 * unknown kids.
 *
 * Where a master runs, workers never fetch. A worker that meets an unknown
 * kid (or has no key yet) asks the master with a request file,
 * "<cache file>.want", and wakes it with SIGURG (the signal a worker already
 * sends it when the pool runs short; the master reads only what it finds
 * in cache_dir, so a stray signal costs it a stat). A file rather than the
 * signal alone because it survives a master busy elsewhere and needs no
 * handler state; a file rather than the worker channel because that
 * channel carries the pool's accounting. The master's fetching child
 * removes the request once it holds the lock. The worker waits for the
 * attempt to end, at most refresh_wait_ms (clients such as the SDKs do not
 * retry a 503 while they connect), then reads the new file; past that bound
 * it answers 503 with Retry-After: 1 (the token may well be valid: a 401
 * would send the client through a new authorization). Once an attempt that
 * started within min_refresh_s has ended without the kid, a token issued
 * before that attempt started (its iat, give or take clock_skew_s) is 401
 * invalid_token at once: the authorization server had not published its
 * key, and a flood of forged kids costs one fetch per interval and no wait.
 * A token issued since may be of a key published after the fetch (a
 * rotation): it waits for the interval's end when that is within
 * refresh_wait_ms, then for the fetch it asks for; otherwise it gets 503
 * with Retry-After the seconds left, never a 401 that would send its
 * client through a new authorization. */
#include "first.h"
#include "ph_oauth_keys.h"
#include "ph_json.h"
#include "ph_log.h"
#include "ph_util.h"
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef PH_HAVE_OAUTH
#include "ph_http.h"

#define STAT_EVERY_US 1000000 /* a worker looks at the key file at most this often */
#define DISCOVERY_DEPTH 8

static bool master_fetches; /* set in the master before it forks workers */
static pid_t fetcher;       /* the master's fetching child, 0: none */

/* ---- configuration ---------------------------------------------------------------- */

bool
ph_oauth_url_ok(const char *url)
{
	static const char *const loop[] = {"127.0.0.1", "localhost", "[::1]"};
	if (strncmp(url, "https://", 8) == 0)
		return url[8] != '\0';
	if (strncmp(url, "http://", 7) != 0)
		return false;
	for (size_t i = 0; i < PH_ARRAY_LEN(loop); i++) {
		size_t n = strlen(loop[i]);
		if (strncmp(url + 7, loop[i], n) == 0 && strchr(":/", url[7 + n]) != NULL)
			return true;
	}
	return false;
}

/* Why the directory or file of st, in the key cache, cannot be trusted:
 * another user owns it or may write it, and could plant keys. NULL when
 * it is Phantom's own. */
static const char *
cache_distrust(const struct stat *st)
{
	if (st->st_uid != geteuid())
		return "belongs to another user";
	if ((st->st_mode & 022) != 0)
		return "is writable by its group or by every user";
	return NULL;
}

/* 0 when mkdir(dir) could make dir (its parent a directory this user may
 * write and search), else -1 with errno as mkdir would set it; makes
 * nothing. */
static int
mkdir_could(const char *dir)
{
	char *copy = ph_xstrdup(dir);
	const char *parent = dirname(copy);
	struct stat st;
	int rc = -1;
	if (stat(parent, &st) != 0)
		goto done;
	if (!S_ISDIR(st.st_mode))
		errno = ENOTDIR;
	else if (faccessat(AT_FDCWD, parent, W_OK | X_OK, AT_EACCESS) == 0)
		rc = 0;
done:
	free(copy);
	return rc;
}

/* The cache directory is Phantom's own and no link. make: made mode 0700
 * when missing (the runtime); otherwise only whether it could be (-t: a
 * check changes nothing). Returns 0, or -1 with k->last_error. */
static int
cache_dir_check(struct ph_oauth_keys *k, bool make)
{
	struct stat st;
	const char *why;
	int cannot = 0; /* why it cannot be made */
	if (!make && lstat(k->cache_dir, &st) != 0 && (errno == ENOENT || errno == ENOTDIR)) {
		if (mkdir_could(k->cache_dir) == 0)
			return 0; /* the first fetch makes it */
		cannot = errno;
	} else if (make && mkdir(k->cache_dir, 0700) != 0 && errno != EEXIST) {
		cannot = errno;
	}
	if (cannot != 0) {
		snprintf(k->errbuf, sizeof k->errbuf, "cannot create auth.oauth.cache_dir %s: %s", k->cache_dir,
			 strerror(cannot));
	} else if (lstat(k->cache_dir, &st) != 0) {
		snprintf(k->errbuf, sizeof k->errbuf, "auth.oauth.cache_dir %s: %s", k->cache_dir, strerror(errno));
	} else if (!S_ISDIR(st.st_mode)) {
		snprintf(k->errbuf, sizeof k->errbuf, "auth.oauth.cache_dir %s is not a directory (a symbolic link "
			 "is not followed)", k->cache_dir);
	} else if ((why = cache_distrust(&st)) != NULL) {
		snprintf(k->errbuf, sizeof k->errbuf, "auth.oauth.cache_dir %s %s (mode %04o): keys planted there "
			 "would be trusted; give a directory of Phantom's own, mode 0700", k->cache_dir, why,
			 (unsigned)(st.st_mode & 07777));
	} else {
		return 0;
	}
	k->last_error = k->errbuf;
	return -1;
}

/* Opens the cache file: no link, a regular file of Phantom's own that
 * nobody else may write. Returns the descriptor, or -1 with k->errbuf. */
static int
cache_open(struct ph_oauth_keys *k)
{
	struct stat st;
	const char *why = NULL;
	int fd;
	if (cache_dir_check(k, true) != 0)
		return -1;
	if ((fd = open(k->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)) < 0) {
		snprintf(k->errbuf, sizeof k->errbuf, "cannot read %s: %s", k->path,
			 errno == ELOOP ? "a symbolic link (not followed)" : strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		why = ph_strerror(PH_ENOTREG);
	else if ((why = cache_distrust(&st)) != NULL)
		why = st.st_uid != geteuid() ? "it belongs to another user: keys planted there are not trusted"
					     : "it is writable by its group or by every user: not trusted";
	if (why != NULL) {
		snprintf(k->errbuf, sizeof k->errbuf, "cannot read %s: %s", k->path, why);
		close(fd);
		return -1;
	}
	return fd;
}

/* Re-reads the key file when it changed since it was loaded. Returns 0
 * when the keys are those of the file, -1 (last_error set) when it cannot
 * be read or parsed: the keys held before stay. The cache file (not a
 * configured jwks_file) is trusted only as cache_open checks it. */
static int
reload(struct ph_oauth_keys *k)
{
	struct stat st;
	struct ph_jwks set;
	char *buf = NULL;
	size_t len = 0;
	const char *why;
	int fd = -1;
	if ((k->cache_dir ? lstat(k->path, &st) : stat(k->path, &st)) != 0) {
		snprintf(k->errbuf, sizeof k->errbuf, "no key file %s yet: %s", k->path, strerror(errno));
		k->last_error = k->errbuf;
		return -1;
	}
	if (k->loaded && st.st_ino == k->ino && st.st_dev == k->dev && st.st_size == k->size &&
	    st.st_mtim.tv_sec == k->mtime.tv_sec && st.st_mtim.tv_nsec == k->mtime.tv_nsec)
		return 0;
	if (k->cache_dir != NULL && (fd = cache_open(k)) < 0) {
		k->last_error = k->errbuf;
		return -1;
	}
	if (k->cache_dir != NULL ? ph_read_fd(fd, (size_t)k->max_fetch, &buf, &len) != 0
				 : ph_read_file(k->path, (size_t)k->max_fetch, &buf, &len) != 0) {
		snprintf(k->errbuf, sizeof k->errbuf, "cannot read %s: %s", k->path,
			 errno == EFBIG ? "larger than auth.oauth.max_fetch_bytes" : ph_strerror(errno));
		k->last_error = k->errbuf;
		return -1;
	}
	if (ph_jwks_parse(buf, len, &set, NULL, &why) != 0) {
		snprintf(k->errbuf, sizeof k->errbuf, "%s: %s", k->path, why);
		k->last_error = k->errbuf;
		free(buf);
		return -1;
	}
	free(buf);
	ph_jwks_free(&k->set);
	k->set = set;
	k->loaded = true;
	k->generation++;
	k->dev = st.st_dev;
	k->ino = st.st_ino;
	k->size = st.st_size;
	k->mtime = st.st_mtim;
	if (set.n == 0) {
		snprintf(k->errbuf, sizeof k->errbuf, "%s holds no usable key", k->path);
		k->last_error = k->errbuf;
	}
	return 0;
}

/* The cache file's name: one per issuer and jwks_uri, so two configurations
 * sharing cache_dir do not mix their keys. Caller frees. */
static char *
cache_name(const struct ph_oauth_keys *k)
{
	unsigned char h[8];
	char hex[17];
	char *src = ph_xasprintf("%s\n%s", k->issuer ? k->issuer : "", k->jwks_uri ? k->jwks_uri : "");
	crypto_generichash(h, sizeof h, (const unsigned char *)src, strlen(src), NULL, 0);
	sodium_bin2hex(hex, sizeof hex, h, sizeof h);
	free(src);
	return ph_xasprintf("%s/jwks-%s.json", k->cache_dir, hex);
}

/* auth.oauth.ca_file, relative to the configuration's directory; -t: a
 * readable regular file. */
static void
ca_file_parse(struct ph_ysink *s, struct ph_oauth_keys *k, const struct ph_oauth_opts *o,
	      const struct ph_ynode *on, const char *dir)
{
	struct stat st;
	const char *why = NULL;
	if (o->ca_file == NULL)
		return;
	k->ca_file = ph_path_join(dir, o->ca_file);
	if (!s->probs->host)
		return;
	if (stat(k->ca_file, &st) != 0 || access(k->ca_file, R_OK) != 0)
		why = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	if (why != NULL)
		ph_yread_problem(s, ph_yread_key_line(on, "ca_file"), "auth.oauth.ca_file %s: %s (checked as uid "
				 "%u: run -t as the user Phantom runs as)", k->ca_file, why, (unsigned)geteuid());
}

void
ph_oauth_keys_parse(struct ph_ysink *s, struct ph_oauth_keys *k, const struct ph_oauth_opts *o,
		    const struct ph_ynode *on, const char *dir)
{
	int line = on ? on->line : 0;
	k->refresh_s = o->refresh_s;
	k->min_refresh_s = o->min_refresh_s;
	k->fetch_timeout_ms = o->fetch_timeout_ms;
	k->max_fetch = o->max_fetch_bytes;
	k->wait_ms = o->refresh_wait_ms;
	k->issuer = o->issuer ? ph_xstrdup(o->issuer) : NULL;
	if (o->issuer && !ph_oauth_url_ok(o->issuer))
		ph_yread_problem(s, ph_yread_key_line(on, "issuer"), "auth.oauth.issuer: an https URL (http only "
				 "to a loopback address)");
	if (o->jwks_uri && o->jwks_file)
		ph_yread_problem(s, line, "auth.oauth: give jwks_uri or jwks_file, not both");
	if (o->jwks_uri && !ph_oauth_url_ok(o->jwks_uri))
		ph_yread_problem(s, ph_yread_key_line(on, "jwks_uri"), "auth.oauth.jwks_uri: an https URL (http "
				 "only to a loopback address)");
	if (o->jwks_file) {
		k->path = ph_path_join(dir, o->jwks_file);
		if (reload(k) != 0 || k->set.n == 0)
			ph_yread_problem(s, ph_yread_key_line(on, "jwks_file"), "auth.oauth.jwks_file: %s",
					 k->last_error);
		return;
	}
	k->jwks_uri = o->jwks_uri ? ph_xstrdup(o->jwks_uri) : NULL;
	k->cache_dir = ph_path_join(dir, o->cache_dir);
	ca_file_parse(s, k, o, on, dir);
	k->path = cache_name(k);
	k->lock_path = ph_xasprintf("%s.lock", k->path);
	k->want_path = ph_xasprintf("%s.want", k->path);
	k->wait_path = ph_xasprintf("%s.wait", k->path);
	/* -t: the directory as the first fetch would find it, as this user;
	 * not made here, a check changes nothing */
	if (s->probs->host && cache_dir_check(k, false) != 0)
		ph_yread_problem(s, on ? ph_yread_key_line(on, "cache_dir") : line, "%s (checked as uid %u: run -t "
				 "as the user Phantom runs as)", k->last_error, (unsigned)geteuid());
}

void
ph_oauth_keys_free(struct ph_oauth_keys *k)
{
	ph_jwks_free(&k->set);
	free(k->issuer);
	free(k->jwks_uri);
	free(k->path);
	free(k->lock_path);
	free(k->want_path);
	free(k->wait_path);
	free(k->cache_dir);
	free(k->ca_file);
	memset(k, 0, sizeof *k);
}

/* ---- HTTP ------------------------------------------------------------------------- */

/* GETs url (or POSTs form with the Basic credentials user:pass) within
 * fetch_timeout_ms, no redirect, at most max_fetch bytes of answer, which
 * must be 200; https verified against ca_file (or the system's CAs).
 * Returns 0 with the body in out (NUL-ended; caller frees), or -1 with the
 * reason in err. */
static int
http_do(const struct ph_oauth_keys *k, const char *url, const char *form, const char *user, const char *pass,
	struct ph_buf *out, char *err, size_t esz)
{
	static const char *const hdr[] = {"Accept", "application/json", NULL};
	struct ph_http_req rq = {.url = url,
				 .hdr = hdr,
				 .body = form,
				 .body_len = form ? strlen(form) : 0,
				 .content_type = "application/x-www-form-urlencoded",
				 .user = user,
				 .pass = pass,
				 .timeout_ms = k->fetch_timeout_ms,
				 .max_bytes = (size_t)k->max_fetch,
				 .ca_file = k->ca_file};
	return ph_http_do(&rq, out, err, esz);
}

/* The jwks_uri of the issuer's metadata: RFC 8414 (the well-known name
 * between host and path), then OpenID discovery (appended to the issuer).
 * The metadata's issuer must be ours. Caller frees; NULL with err. */
static char *
discover(const struct ph_oauth_keys *k, char *err, size_t esz)
{
	const char *host = k->issuer + (strncmp(k->issuer, "https://", 8) == 0 ? 8 : 7);
	const char *path = strchr(host, '/');
	size_t il = strlen(k->issuer);
	char *urls[2];
	char *found = NULL;
	if (path == NULL || strcmp(path, "/") == 0)
		urls[0] = ph_xasprintf("%.*s/.well-known/oauth-authorization-server", (int)(host - k->issuer) +
				       (int)(path ? (size_t)(path - host) : strlen(host)), k->issuer);
	else
		urls[0] = ph_xasprintf("%.*s/.well-known/oauth-authorization-server%s", (int)(path - k->issuer),
				       k->issuer, path);
	urls[1] = ph_xasprintf("%.*s/.well-known/openid-configuration",
			       (int)(il > 0 && k->issuer[il - 1] == '/' ? il - 1 : il), k->issuer);
	for (int i = 0; i < 2 && found == NULL; i++) {
		struct ph_buf b;
		struct json_object *doc = NULL;
		const char *iss, *ju;
		char what[260];
		/* the second attempt's reason goes after the first's */
		size_t at = i == 0 ? 0 : strlen(err);
		if (i > 0 && at + 2 < esz)
			memcpy(err + at, "; ", 3), at += 2;
		err += at;
		esz -= at;
		snprintf(what, sizeof what, "%.240s: its issuer", urls[i]);
		if (http_do(k, urls[i], NULL, NULL, NULL, &b, err, esz) != 0)
			continue;
		if (!ph_json_parse(b.data, b.len, DISCOVERY_DEPTH, &doc) || !json_object_is_type(doc, json_type_object))
			snprintf(err, esz, "%s: not a JSON object", urls[i]);
		else if ((iss = ph_jtext(doc, "issuer")) == NULL || strcmp(iss, k->issuer) != 0)
			ph_jwt_iss_why(err, esz, what, iss, k->issuer);
		else if ((ju = ph_jtext(doc, "jwks_uri")) == NULL || !ph_oauth_url_ok(ju))
			snprintf(err, esz, "%s: no https jwks_uri", urls[i]);
		else
			found = ph_xstrdup(ju);
		json_object_put(doc);
		ph_buf_free(&b);
	}
	free(urls[0]);
	free(urls[1]);
	return found;
}

/* Fetches the key set and publishes it (temporary file, then rename).
 * Returns 0, or -1 with err: the file is left as it was. */
static int
fetch_and_store(const struct ph_oauth_keys *k, char *err, size_t esz)
{
	char *url = k->jwks_uri ? ph_xstrdup(k->jwks_uri) : discover(k, err, esz);
	char *tmp = NULL;
	struct ph_buf b = {0};
	struct ph_jwks set = {0};
	const char *why;
	int fd = -1, rc = -1;
	if (url == NULL || http_do(k, url, NULL, NULL, NULL, &b, err, esz) != 0)
		goto out;
	if (ph_jwks_parse(b.data, b.len, &set, NULL, &why) != 0 || set.n == 0) {
		snprintf(err, esz, "%s: %s", url, set.n == 0 && b.len ? "no usable key in the set" : why);
		goto out;
	}
	tmp = ph_xasprintf("%s.%d.tmp", k->path, (int)getpid());
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0 && errno == EEXIST &&
	    unlink(tmp) == 0) /* a fetcher of this pid that died: ours alone */
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0 && (ph_write_all(fd, b.data, b.len) != 0 || fsync(fd) != 0)) {
		int e = errno;
		close(fd); /* never left open by a failed write */
		fd = -1;
		errno = e;
	}
	if (fd < 0 || close(fd) != 0 || rename(tmp, k->path) != 0) {
		snprintf(err, esz, "writing %s: %s", k->path, strerror(errno));
		unlink(tmp);
		goto out;
	}
	rc = 0;
out:
	ph_jwks_free(&set);
	ph_buf_free(&b);
	free(url);
	free(tmp);
	return rc;
}

/* The lock file's stamp: when the last attempt started and ended (ms of
 * the wall clock; end 0 while it runs). Fixed width, written in one pwrite,
 * so a reader without the lock sees one stamp or the other. */
#define STAMP_LEN 42

static void
stamp_read(int fd, long long *start, long long *end)
{
	char buf[STAMP_LEN + 1];
	ssize_t got = pread(fd, buf, STAMP_LEN, 0);
	buf[got > 0 ? got : 0] = '\0';
	*start = *end = 0;
	if (sscanf(buf, "%lld %lld", start, end) < 1)
		*start = *end = 0;
}

static void
stamp_write(const struct ph_oauth_keys *k, int fd, long long start, long long end)
{
	char buf[STAMP_LEN + 1];
	snprintf(buf, sizeof buf, "%020lld %020lld\n", start, end);
	if (pwrite(fd, buf, STAMP_LEN, 0) != STAMP_LEN)
		ph_log("warning", "auth.oauth: cannot write %s: %s", k->lock_path, strerror(errno));
}

/* The stamp read without the lock; both 0 when there is none yet. */
static void
stamp_peek(const struct ph_oauth_keys *k, long long *start, long long *end)
{
	int fd = open(k->lock_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	*start = *end = 0;
	if (fd >= 0) {
		stamp_read(fd, start, end);
		close(fd);
	}
}

/* How long an attempt may run (discovery's two documents, then the key
 * set, each bounded by fetch_timeout_ms): past it, a stamp without an end
 * is a fetcher that died. */
static long long
attempt_ms(const struct ph_oauth_keys *k)
{
	return 3 * k->fetch_timeout_ms + 1000;
}

enum fetch { FETCHED, FETCH_FAILED, FETCH_BUSY, FETCH_RECENT };

/* One fetch attempt for the host (now: ms): the lock taken without
 * waiting, the last attempt started min_refresh_s ago or more. A pending
 * request of a worker is served by it. k->last_error says why when no
 * keys were published. */
static enum fetch
try_fetch(struct ph_oauth_keys *k, long long now)
{
	char err[256];
	long long start, end;
	enum fetch rc = FETCH_RECENT;
	int fd;
	if (cache_dir_check(k, true) != 0)
		return FETCH_FAILED;
	if ((fd = open(k->lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0 ||
	    flock(fd, LOCK_EX | LOCK_NB) != 0) {
		if (fd >= 0)
			close(fd);
		if (!k->loaded)
			k->last_error = "no key yet: another process is fetching the keys";
		return FETCH_BUSY;
	}
	stamp_read(fd, &start, &end);
	if (now - start >= k->min_refresh_s * 1000) {
		stamp_write(k, fd, now, 0);
		unlink(k->want_path); /* this attempt answers it */
		rc = fetch_and_store(k, err, sizeof err) == 0 ? FETCHED : FETCH_FAILED;
		stamp_write(k, fd, now, (long long)ph_wall_ms());
	}
	close(fd); /* releases the lock */
	if (rc == FETCH_FAILED) {
		snprintf(k->errbuf, sizeof k->errbuf, "fetching the keys failed: %s", err);
		k->last_error = k->errbuf;
		ph_log("warning", "auth.oauth: %s; %s", k->errbuf,
		       k->loaded && k->set.n ? "the last keys keep serving" : "no key yet: requests get 503");
	} else if (rc == FETCH_RECENT && !k->loaded) {
		k->last_error = "no key yet, and the last fetch (its failure is logged) was less than "
				"auth.oauth.min_refresh_s ago";
	}
	return rc;
}

/* The key file is older than refresh_s (or missing). */
static bool
stale(const struct ph_oauth_keys *k, long long now)
{
	struct stat st;
	return stat(k->path, &st) != 0 || (long long)st.st_mtim.tv_sec + k->refresh_s <= now;
}

const struct ph_jwks *
ph_oauth_keys_get(struct ph_oauth_keys *k, long long now)
{
	int64_t us = ph_now_us();
	if (!k->loaded || us - k->checked_us >= STAT_EVERY_US) {
		k->checked_us = us;
		(void)reload(k);
		/* with a master, the master fetches (ph_oauth_keys_tick) */
		if (k->lock_path != NULL && !master_fetches && (!k->loaded || stale(k, now)) &&
		    try_fetch(k, (long long)ph_wall_ms()) == FETCHED)
			(void)reload(k);
		if (!k->loaded && master_fetches && k->lock_path != NULL)
			k->last_error = "no key yet: the master fetches them (its log says why it could not)";
	}
	return k->loaded ? &k->set : NULL;
}

/* Asks the master for a fetch: the request file, then SIGURG to wake it. */
static void
ask_master(const struct ph_oauth_keys *k)
{
	int fd;
	if (mkdir(k->cache_dir, 0700) != 0 && errno != EEXIST)
		return; /* the master's fetch reports it */
	fd = open(k->want_path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		ph_log("warning", "auth.oauth: cannot ask for a key refresh (%s): %s", k->want_path, strerror(errno));
		return;
	}
	close(fd);
	kill(getppid(), SIGURG);
}

/* A fetch is asked for (of the master, which has not started it) or runs
 * (now: ms). */
static bool
attempt_pending(const struct ph_oauth_keys *k, long long now, long long start, long long end)
{
	return (master_fetches && access(k->want_path, F_OK) == 0) ||
	       (start > 0 && end == 0 && now - start < attempt_ms(k));
}

/* Waits for the pending attempt to end, until (us, polling the stamp every
 * 10 ms). True when it ended. */
static bool
wait_attempt(const struct ph_oauth_keys *k, int64_t until)
{
	long long start, end;
	for (;;) {
		stamp_peek(k, &start, &end);
		if (!attempt_pending(k, (long long)ph_wall_ms(), start, end))
			return true;
		if (ph_now_us() >= until)
			return false;
		usleep(10000);
	}
}

bool
ph_oauth_keys_reread(struct ph_oauth_keys *k)
{
	unsigned gen = k->generation;
	k->checked_us = ph_now_us();
	(void)reload(k);
	return k->generation != gen;
}

/* Takes, without waiting, the right to wait for the end of min_refresh_s:
 * one process of the host at a time, so that a flood of tokens replaying a
 * fresh payload under forged kids holds one worker, not all. Returns the
 * descriptor holding it (the caller closes it), or -1. */
static int
take_wait(const struct ph_oauth_keys *k)
{
	int fd = open(k->wait_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) != 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

enum ph_keys_next
ph_oauth_keys_unknown(struct ph_oauth_keys *k, long long issued, long long skew_s)
{
	long long now = (long long)ph_wall_ms(), start, end, left;
	int64_t until = ph_now_us() + k->wait_ms * 1000;
	int waiting = -1;
	bool ended = true;
	if (k->lock_path != NULL) {
		stamp_peek(k, &start, &end);
		left = start + k->min_refresh_s * 1000 - now;
		if (!attempt_pending(k, now, start, end) && left > 0) {
			/* the last fetch ended within the interval; a token issued
			 * before it started names a kid that was not published */
			if (issued <= 0 || (issued + skew_s) * 1000 < start)
				goto reread;
			if (left > k->wait_ms || (waiting = take_wait(k)) < 0) {
				k->retry_s = (int)((left + 999) / 1000);
				return PH_KEYS_LATER;
			}
			usleep((useconds_t)left * 1000); /* the interval's end is near */
			now = (long long)ph_wall_ms();
			until = ph_now_us() + k->wait_ms * 1000; /* and the fetch its own wait */
		}
		if (!attempt_pending(k, now, start, end) && now - start >= k->min_refresh_s * 1000) {
			if (master_fetches)
				ask_master(k);
			else
				(void)try_fetch(k, now); /* another process's: waited for below */
		}
		ended = wait_attempt(k, until);
		if (waiting >= 0)
			close(waiting);
		if (!ended)
			return PH_KEYS_WAIT;
	}
reread:
	/* an attempt ended within min_refresh_s: what it published is final */
	k->checked_us = ph_now_us();
	(void)reload(k);
	return PH_KEYS_AGAIN;
}

/* ---- introspection -------------------------------------------------------------------- */

int
ph_oauth_introspect(const struct ph_oauth_keys *k, const char *endpoint, const char *client, const char *secret,
		    const char *tok, size_t n, struct json_object **ans, const char **why)
{
	static char err[320];
	char *esc = ph_http_form_escape(tok, n), *form;
	struct ph_buf b;
	int rc = -1;
	bool key_nul = false;
	*ans = NULL;
	form = ph_xasprintf("token=%s&token_type_hint=access_token", esc);
	sodium_memzero(esc, strlen(esc));
	free(esc);
	if (http_do(k, endpoint, form, client, secret, &b, err, sizeof err) != 0) {
		*why = err;
	} else if (!ph_json_parse_ex(b.data, b.len, DISCOVERY_DEPTH, ans, &key_nul) || key_nul ||
		   !json_object_is_type(*ans, json_type_object)) {
		json_object_put(*ans);
		*ans = NULL;
		*why = "the introspection endpoint's answer is not a JSON object";
		ph_buf_free(&b);
	} else {
		rc = 0;
		ph_buf_free(&b);
	}
	sodium_memzero(form, strlen(form));
	free(form);
	return rc;
}

/* ---- the master ------------------------------------------------------------------------ */

void
ph_oauth_keys_master_mode(void)
{
	master_fetches = true;
}

/* Fetches (in a child) when the key file is stale or a worker asked, and
 * the last attempt is min_refresh_s old; a request that an attempt started
 * since has answered is dropped. */
int64_t
ph_oauth_keys_tick(struct ph_oauth_keys *k, int64_t now)
{
	long long wall = (long long)ph_wall_ms(), start, end;
	bool asked;
	pid_t pid;
	if (k == NULL)
		return now + 3600 * (int64_t)1000000;
	/* the master reads the keys too, as a worker does: a worker it forks
	 * starts with them parsed and libcrypto's key types fetched (some 5
	 * million instructions a worker would otherwise spend on its first
	 * request) */
	if (!k->loaded || now - k->checked_us >= STAT_EVERY_US) {
		k->checked_us = now;
		(void)reload(k);
	}
	if (k->lock_path == NULL)
		return now + 3600 * (int64_t)1000000;
	if (fetcher > 0)
		return now + 1000000; /* SIGCHLD wakes us before */
	asked = access(k->want_path, F_OK) == 0;
	if (!asked && !stale(k, wall / 1000))
		return now + 1000000;
	/* the last attempt, read without the lock: only to spare a fork */
	stamp_peek(k, &start, &end);
	if (wall - start < k->min_refresh_s * 1000) {
		if (asked)
			unlink(k->want_path);
		return now + 1000000;
	}
	if ((pid = fork()) < 0) {
		ph_log("warning", "auth.oauth: cannot start the key fetch: %s", strerror(errno));
		return now + 1000000;
	}
	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		(void)reload(k); /* so a failure's log line says whether keys keep serving */
		_exit(try_fetch(k, wall) == FETCHED ? 0 : 1);
	}
	fetcher = pid;
	return now + 1000000;
}

bool
ph_oauth_keys_fetching(void)
{
	return fetcher > 0;
}

bool
ph_oauth_keys_reaped(pid_t pid)
{
	if (pid != fetcher || pid <= 0)
		return false;
	fetcher = 0;
	return true;
}
#endif /* PH_HAVE_OAUTH */
