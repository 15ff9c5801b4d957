/* ph_init.c: phantom-fcgi --init WEBDIR [APPDIR], the first five minutes on
 * shared hosting. Writes the starter application of examples/hosting (its
 * configuration and tools, compiled in from those files so that the one
 * static binary is all a user uploads), a fresh request_state secret, and
 * the web directory's .htaccess and mcp.fcgi (conf/htaccess, conf/mcp.fcgi)
 * with the real paths of this program and the configuration. */
#include "first.h"
#include "ph_init.h"
#include "ph_server.h"
#include "ph_util.h"
#include "ph_init_files.h" /* generated: see INIT_FILES in Makefile.am */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The directories --init writes into, each opened once: every file is
 * created relative to one, so no link on the way is followed after the
 * checks. */
enum init_dir { IN_APP, IN_TOOLS, IN_WEB, IN_N };

/* One file to write: its name in one of those directories. */
struct init_file {
	const char *name;
	const char *text;
	mode_t mode;
	enum init_dir dir;
};

/* The opened directories and their real paths (for messages). */
struct init_dirs {
	int fd[IN_N];
	char path[IN_N][PATH_MAX];
	bool made_tools; /* tools/ was made by this run: removed on a failure */
};

/* A directory outside the web directory: should it be in the web space
 * after all, nothing in it is served either. */
static const char deny_all[] =
	"# Phantom's configuration, secret and tools: nothing here is for download.\n"
	"Require all denied\n";

/* The paths of conf/mcp.fcgi that --init replaces with the real ones. */
#define TEMPLATE_BIN "/home/user/phantom/bin/phantom-fcgi"
#define TEMPLATE_CONF "/home/user/phantom/phantom.yaml"
#define SECRET_NAME "request_state.key"

/* s with the first "from" replaced by "to" (caller frees). */
static char *
replace(const char *s, const char *from, const char *to)
{
	const char *at = strstr(s, from);
	if (at == NULL)
		return ph_xstrdup(s);
	return ph_xasprintf("%.*s%s%s", (int)(at - s), s, to, at + strlen(from));
}

/* mcp.fcgi starting self with conf: conf/mcp.fcgi with both paths
 * single-quoted (ensure_dir refuses quotes in them). Caller frees. */
static char *
mcp_fcgi_text(const char *self, const char *conf)
{
	char *qb = ph_xasprintf("'%s'", self), *qc = ph_xasprintf("'%s'", conf);
	char *a = replace(ph_init_conf_mcp_fcgi, TEMPLATE_BIN, qb);
	char *b = replace(a, TEMPLATE_CONF, qc);
	free(qb);
	free(qc);
	free(a);
	return b;
}

/* 32 random bytes as hex and a newline: what request_state.secret_file
 * reads. Caller wipes (sodium_memzero) and frees. */
static char *
secret_text(void)
{
	unsigned char key[32];
	char hex[sizeof key * 2 + 1];
	randombytes_buf(key, sizeof key);
	sodium_bin2hex(hex, sizeof hex, key, sizeof key);
	sodium_memzero(key, sizeof key);
	{
		char *t = ph_xasprintf("%s\n", hex);
		sodium_memzero(hex, sizeof hex);
		return t;
	}
}

/* Whether path can go into mcp.fcgi between single quotes; false after a
 * message. */
static bool
quotable(const char *path)
{
	if (strpbrk(path, "'\n") == NULL)
		return true;
	fprintf(stderr, "phantom-fcgi --init: %s: a path with a quote or newline is not supported\n",
		path);
	return false;
}

/* Whether the directory of st (path, for the message) is safe to hold
 * what --init writes, as sshd's StrictModes asks of ~/.ssh: owned by root
 * or by this user, and writable by nobody else. Above the target a
 * root-owned sticky directory (/tmp) is safe too: nobody else can rename
 * or remove what is in it. false after a message. */
static bool
dir_safe(const char *path, const struct stat *st, bool above)
{
	uid_t me = geteuid();
	if (!S_ISDIR(st->st_mode)) {
		fprintf(stderr, "phantom-fcgi --init: %s is not a directory\n", path);
		return false;
	}
	if (st->st_uid != me && st->st_uid != 0) {
		fprintf(stderr, "phantom-fcgi --init: %s belongs to another user (uid %u): they could replace "
			"phantom.yaml or a tool, which would then run as you; use a directory of your own\n",
			path, (unsigned)st->st_uid);
		return false;
	}
	if ((st->st_mode & 022) != 0 && !(above && st->st_uid == 0 && (st->st_mode & S_ISVTX))) {
		fprintf(stderr, "phantom-fcgi --init: %s is writable by %s (mode %04o): they could replace "
			"phantom.yaml or a tool, which would then run as you; chmod go-w it first\n",
			path, (st->st_mode & 002) ? "every user" : "its group", (unsigned)(st->st_mode & 07777));
		return false;
	}
	return true;
}

/* Every directory above real (a path without links) is safe. */
static bool
parents_safe(const char *real)
{
	char p[PATH_MAX];
	struct stat st;
	snprintf(p, sizeof p, "%s", real);
	for (;;) {
		char *slash = strrchr(p, '/');
		if (slash == NULL || slash == p) {
			if (strcmp(p, "/") == 0)
				return true;
			p[1] = '\0'; /* then "/" itself */
		} else {
			*slash = '\0';
		}
		if (lstat(p, &st) != 0) {
			fprintf(stderr, "phantom-fcgi --init: cannot check %s: %s\n", p, strerror(errno));
			return false;
		}
		if (!dir_safe(p, &st, true))
			return false;
	}
}

/* Makes dir unless it is a directory already (its parent must exist),
 * opens it (its real path into real) and checks it and every directory
 * above it. Returns the descriptor, or -1 after a message. */
static int
open_dir(const char *dir, char real[PATH_MAX])
{
	struct stat st;
	int fd;
	if (!quotable(dir))
		return -1;
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "phantom-fcgi --init: cannot make %s: %s\n", dir, strerror(errno));
		return -1;
	}
	if (realpath(dir, real) == NULL) {
		fprintf(stderr, "phantom-fcgi --init: %s is not a directory\n", dir);
		return -1;
	}
	/* again: a symbolic link on the way may have brought one */
	if (!quotable(real))
		return -1;
	if ((fd = open(real, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		fprintf(stderr, "phantom-fcgi --init: %s is not a directory: %s\n", dir, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || !dir_safe(real, &st, false) || !parents_safe(real)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Opens (making it when missing) the tools directory below the
 * application's, never through a link, and checks it. Returns 0 or -1
 * after a message. */
static int
open_tools(struct init_dirs *d)
{
	struct stat st;
	if ((size_t)snprintf(d->path[IN_TOOLS], sizeof d->path[IN_TOOLS], "%s/tools", d->path[IN_APP]) >=
	    sizeof d->path[IN_TOOLS]) {
		fprintf(stderr, "phantom-fcgi --init: %s: the path is too long\n", d->path[IN_APP]);
		return -1;
	}
	if (mkdirat(d->fd[IN_APP], "tools", 0755) == 0)
		d->made_tools = true;
	else if (errno != EEXIST) {
		fprintf(stderr, "phantom-fcgi --init: cannot make %s: %s\n", d->path[IN_TOOLS], strerror(errno));
		return -1;
	}
	d->fd[IN_TOOLS] = openat(d->fd[IN_APP], "tools", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d->fd[IN_TOOLS] < 0) {
		fprintf(stderr, "phantom-fcgi --init: %s is not a directory%s\n", d->path[IN_TOOLS],
			errno == ELOOP || errno == ENOTDIR ? " (a symbolic link or a file): not followed" : "");
		return -1;
	}
	return fstat(d->fd[IN_TOOLS], &st) == 0 && dir_safe(d->path[IN_TOOLS], &st, false) ? 0 : -1;
}

/* Creates name in directory dfd with exactly mode (not the umask's) and
 * text; never an existing file or a symbolic link. Returns 0, or -1 after
 * a message naming path. */
static int
write_new(int dfd, const char *name, const char *path, const char *text, mode_t mode)
{
	size_t len = strlen(text), done = 0;
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 0600);
	if (fd < 0) {
		fprintf(stderr, "phantom-fcgi --init: cannot create %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (done < len) {
		ssize_t n = write(fd, text + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	if (done < len || fchmod(fd, mode) != 0 || close(fd) != 0) {
		fprintf(stderr, "phantom-fcgi --init: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Where a file goes, for messages. Caller frees. */
static char *
target(const struct init_file *f, const struct init_dirs *d)
{
	return ph_path_join(d->path[f->dir], f->name);
}

/* None of the files may exist (nor a link in their place). Returns 0, or
 * -1 after naming each one that does. */
static int
check_free(const struct init_file *fs, size_t n, const struct init_dirs *d)
{
	int rc = 0;
	struct stat st;
	for (size_t i = 0; i < n; i++) {
		if (fstatat(d->fd[fs[i].dir], fs[i].name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			char *p = target(&fs[i], d);
			fprintf(stderr, "phantom-fcgi --init: %s exists: not overwritten\n", p);
			free(p);
			rc = -1;
		}
	}
	if (rc != 0)
		fprintf(stderr, "phantom-fcgi --init: nothing written (move those files away first)\n");
	return rc;
}

/* Writes every file; on a failure removes the ones it wrote. Returns 0 or -1. */
static int
write_all(const struct init_file *fs, size_t n, struct init_dirs *d)
{
	size_t i;
	for (i = 0; i < n; i++) {
		char *p = target(&fs[i], d);
		int rc = write_new(d->fd[fs[i].dir], fs[i].name, p, fs[i].text, fs[i].mode);
		free(p);
		if (rc != 0)
			break;
	}
	if (i == n)
		return 0;
	while (i-- > 0)
		unlinkat(d->fd[fs[i].dir], fs[i].name, 0);
	if (d->made_tools)
		unlinkat(d->fd[IN_APP], "tools", AT_REMOVEDIR);
	return -1;
}

/* The URL path of dir, guessed from the usual names of a web root
 * (public_html, www, htdocs, httpdocs, html): "/" and what follows the
 * nearest one, or the whole path when there is none. Caller frees. */
static char *
url_path(const char *dir)
{
	static const char *const roots[] = {"public_html", "www", "htdocs", "httpdocs", "html"};
	const char *best = NULL;
	for (const char *p = dir; (p = strchr(p, '/')) != NULL; p++)
		for (size_t i = 0; i < PH_ARRAY_LEN(roots); i++) {
			size_t l = strlen(roots[i]);
			if (strncmp(p + 1, roots[i], l) == 0 && (p[1 + l] == '/' || p[1 + l] == '\0'))
				best = p + 1 + l;
		}
	if (best == NULL)
		best = dir;
	return ph_xasprintf("%s/", best);
}

/* Tells on out where everything went, the URL of the web directory and a
 * curl line that lists the tools through it. */
static void
print_done(FILE *out, const char *web, const char *app)
{
	char *path = url_path(web);
	const char *user = getenv("USER");
	fprintf(out, "Phantom's starter application is in %s (configuration %s/phantom.yaml,\n"
		"secret %s/" SECRET_NAME ", tools %s/tools), served through %s/mcp.fcgi.\n\n",
		app, app, app, app, web);
	fprintf(out, "URL to try (your site's address in place of example.com):\n"
		"  https://example.com%smcp\n", path);
	if (strstr(web, "/public_html") != NULL && user != NULL && *user)
		fprintf(out, "  (a UserDir site: https://example.com/~%s%smcp)\n", user, path);
	fprintf(out, "\nTry it:\n"
		"  curl -s https://example.com%smcp -H 'Content-Type: application/json' "
		"-H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: %s' "
		"-H 'Mcp-Method: tools/list' -d '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\","
		"\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"%s\","
		"\"io.modelcontextprotocol/clientCapabilities\":{}}}}'\n",
		path, PH_MODERN_VERSION, PH_MODERN_VERSION);
	free(path);
}

int
ph_init_app(const char *webdir, const char *appdir, const char *self, FILE *out, char **conf_path)
{
	struct init_dirs d = {{-1, -1, -1}, {{0}}, false};
	char *fcgi = NULL, *conf = NULL, *secret = NULL;
	int rc = 1;
	if (sodium_init() < 0) {
		fprintf(stderr, "phantom-fcgi --init: libsodium cannot start\n");
		return 1;
	}
	if ((d.fd[IN_WEB] = open_dir(webdir, d.path[IN_WEB])) < 0 ||
	    (d.fd[IN_APP] = open_dir(appdir ? appdir : webdir, d.path[IN_APP])) < 0 || !quotable(self))
		goto out;
	conf = ph_path_join(d.path[IN_APP], "phantom.yaml");
	fcgi = mcp_fcgi_text(self, conf);
	secret = secret_text();
	{
		const struct init_file fs[] = {
			{"phantom.yaml", ph_init_examples_hosting_phantom_yaml, 0644, IN_APP},
			{SECRET_NAME, secret, 0600, IN_APP},
			{"hello.sh", ph_init_examples_hosting_tools_hello_sh, 0755, IN_TOOLS},
			{"reverse.php", ph_init_examples_hosting_tools_reverse_php, 0644, IN_TOOLS},
			{"stats.py", ph_init_examples_hosting_tools_stats_py, 0644, IN_TOOLS},
			{"counter.py", ph_init_examples_hosting_tools_counter_py, 0644, IN_TOOLS},
			{".htaccess", ph_init_conf_htaccess, 0644, IN_WEB},
			{"mcp.fcgi", fcgi, 0755, IN_WEB},
			/* last: only where the application has a directory of its own */
			{".htaccess", deny_all, 0644, IN_APP},
		};
		size_t n = PH_ARRAY_LEN(fs) - (strcmp(d.path[IN_WEB], d.path[IN_APP]) == 0);
		if (open_tools(&d) == 0 && check_free(fs, n, &d) == 0 && write_all(fs, n, &d) == 0) {
			print_done(out, d.path[IN_WEB], d.path[IN_APP]);
			*conf_path = conf;
			conf = NULL;
			rc = 0;
		} else if (d.made_tools) {
			unlinkat(d.fd[IN_APP], "tools", AT_REMOVEDIR);
		}
	}
out:
	for (int i = 0; i < IN_N; i++)
		if (d.fd[i] >= 0)
			close(d.fd[i]);
	if (secret != NULL)
		sodium_memzero(secret, strlen(secret));
	free(secret);
	free(fcgi);
	free(conf);
	return rc;
}
