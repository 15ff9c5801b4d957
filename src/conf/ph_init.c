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

/* One file to write: its name below the application (or web) directory. */
struct init_file {
	const char *name;
	const char *text;
	mode_t mode;
	bool web; /* goes into the web directory */
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

/* Makes dir unless it is a directory already (its parent must exist); its
 * real path into real. Returns 0, or -1 after a message. */
static int
ensure_dir(const char *dir, char real[PATH_MAX])
{
	struct stat st;
	if (!quotable(dir))
		return -1;
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "phantom-fcgi --init: cannot make %s: %s\n", dir, strerror(errno));
		return -1;
	}
	if (realpath(dir, real) == NULL || stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "phantom-fcgi --init: %s is not a directory\n", dir);
		return -1;
	}
	/* again: a symbolic link on the way may have brought one */
	return quotable(real) ? 0 : -1;
}

/* Creates path with exactly mode (not the umask's) and text; never an
 * existing file or a symbolic link. Returns 0, or -1 after a message. */
static int
write_new(const char *path, const char *text, mode_t mode)
{
	size_t len = strlen(text), done = 0;
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 0600);
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

/* Where a file goes, below the real web or application directory. */
static char *
target(const struct init_file *f, const char *web, const char *app)
{
	return ph_path_join(f->web ? web : app, f->name);
}

/* None of the files may exist (nor a link in their place). Returns 0, or
 * -1 after naming each one that does. */
static int
check_free(const struct init_file *fs, size_t n, const char *web, const char *app)
{
	int rc = 0;
	struct stat st;
	for (size_t i = 0; i < n; i++) {
		char *p = target(&fs[i], web, app);
		if (lstat(p, &st) == 0) {
			fprintf(stderr, "phantom-fcgi --init: %s exists: not overwritten\n", p);
			rc = -1;
		}
		free(p);
	}
	if (rc != 0)
		fprintf(stderr, "phantom-fcgi --init: nothing written (move those files away first)\n");
	return rc;
}

/* Writes every file; on a failure removes the ones it wrote. Returns 0 or -1. */
static int
write_all(const struct init_file *fs, size_t n, const char *web, const char *app)
{
	size_t i;
	char *tools = ph_path_join(app, "tools");
	if (mkdir(tools, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "phantom-fcgi --init: cannot make %s: %s\n", tools, strerror(errno));
		free(tools);
		return -1;
	}
	free(tools);
	for (i = 0; i < n; i++) {
		char *p = target(&fs[i], web, app);
		int rc = write_new(p, fs[i].text, fs[i].mode);
		free(p);
		if (rc != 0)
			break;
	}
	if (i == n)
		return 0;
	while (i-- > 0) {
		char *p = target(&fs[i], web, app);
		unlink(p);
		free(p);
	}
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
	char web[PATH_MAX], app[PATH_MAX];
	char *fcgi, *conf, *secret;
	int rc = 1;
	if (sodium_init() < 0) {
		fprintf(stderr, "phantom-fcgi --init: libsodium cannot start\n");
		return 1;
	}
	if (ensure_dir(webdir, web) != 0 || ensure_dir(appdir ? appdir : webdir, app) != 0)
		return 1;
	if (!quotable(self))
		return 1;
	conf = ph_path_join(app, "phantom.yaml");
	fcgi = mcp_fcgi_text(self, conf);
	secret = secret_text();
	{
		const struct init_file fs[] = {
			{"phantom.yaml", ph_init_examples_hosting_phantom_yaml, 0644, false},
			{SECRET_NAME, secret, 0600, false},
			{"tools/hello.sh", ph_init_examples_hosting_tools_hello_sh, 0755, false},
			{"tools/reverse.php", ph_init_examples_hosting_tools_reverse_php, 0644, false},
			{"tools/stats.py", ph_init_examples_hosting_tools_stats_py, 0644, false},
			{"tools/counter.py", ph_init_examples_hosting_tools_counter_py, 0644, false},
			{".htaccess", ph_init_conf_htaccess, 0644, true},
			{"mcp.fcgi", fcgi, 0755, true},
			/* last: only where the application has a directory of its own */
			{".htaccess", deny_all, 0644, false},
		};
		size_t n = PH_ARRAY_LEN(fs) - (strcmp(web, app) == 0);
		if (check_free(fs, n, web, app) == 0 && write_all(fs, n, web, app) == 0) {
			print_done(out, web, app);
			*conf_path = conf;
			conf = NULL;
			rc = 0;
		}
	}
	sodium_memzero(secret, strlen(secret));
	free(secret);
	free(fcgi);
	free(conf);
	return rc;
}
