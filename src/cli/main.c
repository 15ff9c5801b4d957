/* main.c: phantom-fcgi, a thin command line over libphantom. Picks the front
 * (FastCGI on fd 0 or on its own socket, CGI, stdio), the process model
 * (master with workers, or a single process) and runs it. */
#include "first.h"
#include "ph_hash_token.h"
#include "ph_auth.h"
#include "ph_front.h"
#include "ph_init.h"
#include "ph_listen_addr.h"
#include "ph_notify.h"
#include "ph_otel.h"
#include "ph_otel_export.h"
#include "ph_shared.h"
#include "ph_util.h"
#include "ph_http.h"
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_text[] =
	"usage: phantom-fcgi [-c FILE] [--listen HOST:PORT|unix:PATH] [--workers N]\n"
	"       phantom-fcgi [-c FILE] --stdio\n"
	"       phantom-fcgi [-c FILE] -t\n"
	"       phantom-fcgi --hash-token[=argon2|sha256] < token\n"
	"       phantom-fcgi [-c FILE] --notify tools/list_changed|prompts/list_changed|resources/list_changed\n"
	"       phantom-fcgi [-c FILE] --notify resources/updated URI...\n"
	"       phantom-fcgi --init WEBDIR [APPDIR]\n"
	"       phantom-fcgi -V | -h\n"
	"\n"
	"  -c, --config FILE   configuration (default: $PHANTOM_CONFIG, else built-in defaults)\n"
	"      --listen SPEC   bind HOST:PORT, [ADDR]:PORT or unix:PATH instead of using fd 0\n"
	"  -w, --workers N     a static pool of N workers under a master (1: a single process)\n"
	"      --pool          on a socket inherited on fd 0 (spawn-fcgi -n), the pool the\n"
	"                      configuration's workers key describes, not one process\n"
	"      --stdio         newline-delimited JSON-RPC on stdin/stdout\n"
	"  -t, --test          check the configuration, print every problem, exit 0 or 1\n"
	"      --hash-token[=KIND]  read a bearer token from stdin, print its hash for\n"
	"                      auth.tokens: argon2 (default) or sha256\n"
	"      --notify KIND   tell the running server's listening clients that a list changed,\n"
	"                      or with resources/updated URI... that those resources changed\n"
	"                      (through the hub's subscriptions.control_socket)\n"
	"      --init WEBDIR [APPDIR]  write a starter application: .htaccess and mcp.fcgi\n"
	"                      into WEBDIR, phantom.yaml, a new secret and example tools\n"
	"                      into APPDIR (default: WEBDIR); never overwrites a file\n"
	"  -V, --version       print the version\n"
	"  -h, --help          print this help\n"
	"\n"
	"Without --listen or --stdio, FastCGI is served on the socket passed by systemd\n"
	"(LISTEN_FDS, socket activation), else on the configured listen:, else on the\n"
	"socket inherited on fd 0 (spawn-fcgi, lighttpd bin-path, mod_fcgid); with\n"
	"GATEWAY_INTERFACE set and fd 0 not a listening socket, one CGI request is served.\n";

static void bad_usage(const char *what, const char *arg) __attribute__((noreturn));

/* One line on stderr, exit status 2: "phantom-fcgi: WHAT 'ARG' (see -h)". */
static void
bad_usage(const char *what, const char *arg)
{
	if (arg)
		fprintf(stderr, "phantom-fcgi: %s '%s' (see phantom-fcgi -h)\n", what, arg);
	else
		fprintf(stderr, "phantom-fcgi: %s (see phantom-fcgi -h)\n", what);
	exit(2);
}

/* What -V says about how this program was built: static (a static PIE,
 * whose addresses ASLR places, or a plain static executable) or not, and
 * whether auth.mode oauth is in, with its HTTP client. */
#ifdef PH_STATIC_BUILD
#ifdef PH_STATIC_PIE
#define BUILD_KIND ", static build (static PIE): no C modules, numeric addresses and user and group ids only"
#else
#define BUILD_KIND ", static build (static, not PIE): no C modules, numeric addresses and user and group ids only"
#endif
#else
#define BUILD_KIND ""
#endif
#if defined(PH_HAVE_OAUTH)
#define OAUTH_KIND "; OAuth: yes, HTTP client: "
#elif defined(PH_HAVE_HTTP)
#define OAUTH_KIND "; OAuth: no, HTTP client: "
#else
#define OAUTH_KIND "; OAuth: no"
#endif

/* Telemetry's settings for c (-t: problems to stderr; else logged, and
 * telemetry stays off when it cannot export). Returns 0, or -1 when there
 * is a problem. */
static int
telemetry_settings(const struct ph_config *c, bool check, struct ph_otel_settings *s)
{
	char err[512];
	const char *why = NULL;
	if (ph_otel_settings_load(c, s, err, sizeof err) != 0) {
		if (check)
			fprintf(stderr, "telemetry: %s\n", err);
		else
			ph_log("error", "telemetry: %s; telemetry is off", err);
		ph_otel_settings_free(s);
		return -1;
	}
	if (s->on && s->traces)
		why = ph_otel_url_missing(s->traces_url);
	if (s->on && why == NULL && s->metrics)
		why = ph_otel_url_missing(s->metrics_url);
	if (why != NULL) {
		if (check)
			fprintf(stderr, "telemetry: cannot export: %s\n", why);
		else
			ph_log("error", "telemetry: cannot export: %s; telemetry is off", why);
		ph_otel_settings_free(s);
		return -1;
	}
	return 0;
}

/* Turns telemetry on for this process and those it forks, as configured. */
static void
telemetry_start(const struct ph_config *c)
{
	struct ph_otel_settings s;
	if (telemetry_settings(c, false, &s) == 0)
		ph_otel_init(&s);
}

/* -t: loads the configuration at path and prints its problems, with what
 * the server would meet on this host as this user (probs.host), changing
 * nothing; with listen_spec (--listen, or NULL), also what a start would
 * refuse in it before binding. Returns the exit status. */
static int
check_config(const char *path, const char *listen_spec)
{
	struct ph_conf_problems probs = {.host = true};
	struct ph_server *s = ph_server_build(path, NULL, &probs);
	struct ph_listen_addr a;
	char err[512];
	int rc;
	for (size_t i = 0; i < probs.n; i++)
		fprintf(stderr, "%s\n", probs.v[i]);
	rc = (s != NULL && probs.n == 0) ? 0 : 1;
	if (s != NULL) {
		struct ph_otel_settings ts;
		if (telemetry_settings(s->conf, true, &ts) != 0)
			rc = 1;
		else
			ph_otel_settings_free(&ts);
	}
	if (listen_spec != NULL && ph_listen_addr_parse(listen_spec, &a, err, sizeof err) != 0) {
		fprintf(stderr, "phantom-fcgi: --listen: %s\n", err);
		rc = 1;
	}
	if (rc == 0)
		fprintf(stderr, "%s: configuration OK\n", path ? path : "(built-in defaults)");
	ph_conf_problems_free(&probs);
	ph_server_free(s);
	return rc;
}

/* --notify KIND: tells the running server's hub, found through the
 * configuration's subscriptions.control_socket. Returns the exit status. */
static int
notify(const char *path, int argc, char **argv)
{
	struct ph_conf_problems probs = {0};
	struct ph_config *c = ph_conf_load(path, &probs);
	int rc;
	for (size_t i = 0; i < probs.n; i++)
		fprintf(stderr, "%s\n", probs.v[i]);
	ph_conf_problems_free(&probs);
	if (c == NULL)
		return 1;
	rc = ph_hub_notify(c->subscriptions.control_socket, argc, argv);
	ph_conf_free(c);
	return rc;
}

/* --init WEBDIR [APPDIR]: the starter application, then its check on this
 * machine (an interpreter the tools need may be missing). Returns the exit
 * status. */
static int
init_app(const char *webdir, const char *appdir)
{
	char self[PATH_MAX], *conf = NULL;
	int rc;
	if (realpath("/proc/self/exe", self) == NULL) {
		fprintf(stderr, "phantom-fcgi --init: cannot find this program (/proc/self/exe)\n");
		return 1;
	}
	if (ph_init_app(webdir, appdir, self, stdout, &conf) != 0)
		return 1;
	fflush(stdout);
	rc = check_config(conf, NULL);
	if (rc != 0)
		fprintf(stderr, "phantom-fcgi --init: the files are written, but the configuration does "
			"not check on this machine: edit %s\n", conf);
	free(conf);
	return rc;
}

/* What the command line asks for. */
struct opts {
	const char *conf_path;   /* -c, else $PHANTOM_CONFIG when set and not empty */
	const char *listen_spec; /* --listen */
	long long workers;       /* -w; 0 when not given */
	bool pool;               /* --pool: workers from the configuration on fd 0 too */
	bool stdio_mode, test;
	bool notify;             /* --notify: the notification follows the options */
	const char *init_dir;    /* --init: the web directory (APPDIR may follow) */
};

static const struct option longopts[] = {
	{"config", required_argument, NULL, 'c'},
	{"listen", required_argument, NULL, 'l'},
	{"workers", required_argument, NULL, 'w'},
	{"pool", no_argument, NULL, 'P'},
	{"stdio", no_argument, NULL, 's'},
	{"test", no_argument, NULL, 't'},
	{"version", no_argument, NULL, 'V'},
	{"help", no_argument, NULL, 'h'},
	{"hash-token", optional_argument, NULL, 'H'},
	{"notify", no_argument, NULL, 'N'},
	{"init", required_argument, NULL, 'I'},
	{NULL, 0, NULL, 0},
};

/* Reads the options into *o (strings borrowed from argv and the
 * environment); a bad command line exits with status 2. Returns false when
 * an option was a whole job (-V, -h, --hash-token), with its exit status in
 * *rc; true to go on. */
static bool
parse_options(int argc, char **argv, struct opts *o, int *rc)
{
	int opt;
	memset(o, 0, sizeof *o);
	o->conf_path = getenv("PHANTOM_CONFIG");
	if (o->conf_path != NULL && *o->conf_path == '\0')
		o->conf_path = NULL;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":c:w:tVh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			o->conf_path = optarg;
			break;
		case 'l':
			o->listen_spec = optarg;
			break;
		case 'w': {
			const char *e;
			if (ph_strtonum(optarg, 1, 256, &o->workers, &e) != 0)
				bad_usage("--workers must be an integer from 1 to 256, not", optarg);
			break;
		}
		case 'P':
			o->pool = true;
			break;
		case 's':
			o->stdio_mode = true;
			break;
		case 't':
			o->test = true;
			break;
		case 'V':
			printf("phantom-fcgi %s (MCP %s, %s%s%s%s)\n", PACKAGE_VERSION, PH_MODERN_VERSION,
			       PH_LEGACY_LATEST, BUILD_KIND, OAUTH_KIND,
#ifdef PH_HAVE_HTTP
			       ph_http_engine()
#else
			       ""
#endif
			);
			*rc = 0;
			return false;
		case 'h':
			fputs(usage_text, stdout);
			*rc = 0;
			return false;
		case 'H':
			*rc = ph_hash_token(optarg, stdin, stdout);
			return false;
		case 'N':
			o->notify = true;
			break;
		case 'I':
			o->init_dir = optarg;
			break;
		case ':':
			bad_usage("missing value for option", argv[optind - 1]);
			break;
		default:
			bad_usage("unknown option", argv[optind - 1]);
		}
	}
	if (optind < argc && !o->notify && !(o->init_dir && optind == argc - 1))
		bad_usage("unexpected argument", argv[optind]);
	if (o->stdio_mode && o->listen_spec)
		bad_usage("--stdio and --listen exclude each other", NULL);
	if (o->pool && o->workers)
		bad_usage("--pool and --workers exclude each other", NULL);
	return true;
}

/* Logs that the configuration's listen_mode, listen_owner and listen_group
 * are not used on the socket served (which is where), when any is set:
 * they apply to a unix socket this program binds itself. */
static void
perm_unused(const struct ph_config *c, const char *where, const char *instead)
{
	if (!ph_listen_perm_any(&c->listen_perm))
		return;
	ph_log("warning", "listen_mode, listen_owner and listen_group are not used on %s: they apply to "
	       "a unix socket phantom-fcgi binds (listen: unix:PATH or --listen unix:PATH)%s", where,
	       instead);
}

/* Finds the FastCGI socket, first of: --listen (opened here), the socket
 * passed by systemd (act_fd, or -1), the configured listen (opened here),
 * one inherited on fd 0; and the worker count that goes with it, into
 * *run. Returns false when there is none to serve on, with *rc the exit
 * status: one CGI request served instead, or an error logged. srv is
 * borrowed. */
static bool
choose_socket(struct ph_server *srv, const struct opts *o, int act_fd, struct ph_run *run, int *rc)
{
	const char *listen_spec = o->listen_spec ? o->listen_spec : srv->conf->listen;
	if (act_fd >= 0 && o->listen_spec != NULL) {
		ph_log("warning", "--listen %s given: the socket passed by systemd is not used",
		       o->listen_spec);
		close(act_fd);
	} else if (act_fd >= 0) {
		if (srv->conf->listen != NULL)
			ph_log("notice", "listen: %s is not used: serving on the socket passed by systemd",
			       srv->conf->listen);
		/* our own socket, as with --listen: the configuration decides
		 * how many workers (systemd starts one process, Accept=no) */
		ph_log("notice", "serving FastCGI on the socket passed by systemd (fd %d)", act_fd);
		perm_unused(srv->conf, "the socket passed by systemd",
			    "; the .socket unit's SocketMode=, SocketUser= and SocketGroup= set those");
		run->listen_fd = act_fd;
		run->workers = o->workers ? o->workers : srv->conf->workers;
		return true;
	}
	if (listen_spec != NULL) {
		char err[512];
		run->listen_fd = ph_listen_open(listen_spec, &srv->conf->listen_perm, err, sizeof err);
		if (run->listen_fd < 0) {
			ph_log("error", "%s", err);
			*rc = 1;
			return false;
		}
		if (strncmp(listen_spec, "unix:", 5) != 0)
			perm_unused(srv->conf, listen_spec, "");
		/* our own socket: the configuration decides how many workers */
		run->workers = o->workers ? o->workers : srv->conf->workers;
	} else if (ph_fd_is_listener(0)) {
		/* inherited socket: lighttpd and mod_fcgid count processes
		 * themselves, so one process unless asked for more (--workers,
		 * or --pool under spawn-fcgi, which starts one) */
		run->listen_fd = 0;
		run->workers = o->workers ? o->workers : o->pool ? srv->conf->workers : 1;
		perm_unused(srv->conf, "the socket inherited on fd 0",
			    "; spawn-fcgi's -M, -U and -G set those");
	} else if (getenv("GATEWAY_INTERFACE") != NULL) {
		/* CGI: stdin is a pipe (mod_cgi, lighttpd) or a connected
		 * socket (Apache mod_cgid), never a listening one */
		ph_otel_spawn(false, -1); /* it sends the request's spans after we exit */
		*rc = ph_cgi_once(srv);
		return false;
	} else {
		ph_log("error", "no listening socket on fd 0: use --listen, --stdio, or start under "
			"spawn-fcgi or a web server");
		*rc = 2;
		return false;
	}
	return true;
}

/* Serves FastCGI (or the one CGI request) with srv, whose ownership is
 * transferred: a single process, or a master with workers. act_fd is the
 * socket passed by systemd, or -1. Returns the exit status. */
static int
serve_fastcgi(struct ph_server *srv, const struct opts *o, int act_fd)
{
	struct ph_run run;
	char err[128];
	int rc;
	if (!ph_fcgi_reader(true, err, sizeof err)) {
		ph_log("error", "%s", err);
		ph_server_free(srv);
		return 2;
	}
	memset(&run, 0, sizeof run);
	run.conf_path = o->conf_path;
	run.max_requests = srv->conf->max_requests;
	run.shutdown_timeout = srv->conf->shutdown_timeout;
	if (!choose_socket(srv, o, act_fd, &run, &rc)) {
		ph_server_free(srv);
		return rc;
	}
	if (run.workers <= 1) {
		/* a single process: no master, max_requests does not apply (nothing
		 * would start a replacement) */
		run.max_requests = 0;
		ph_otel_spawn(false, run.listen_fd);
		rc = ph_fcgi_serve(&srv, &run, true);
		ph_server_free(srv);
		return rc;
	}
	{
		long long w = run.workers;
		run.workers = o->workers; /* 0: follow the configuration on reload */
		if (o->workers == 0)
			srv->conf->workers = w;
	}
	return ph_master_run(srv, &run);
}

/* The configuration did not load and a web server started us: serves each
 * request (one CGI request, or FastCGI on fd 0 in a single process, which
 * a SIGHUP can still bring to a working configuration) with HTTP 500.
 * Returns the exit status. */
static int
serve_unconfigured(const struct opts *o)
{
	struct ph_server *srv = NULL;
	struct ph_run run;
	int rc;
	if (!ph_fd_is_listener(0)) {
		ph_cgi_once(NULL);
		return 1;
	}
	memset(&run, 0, sizeof run);
	run.conf_path = o->conf_path;
	run.listen_fd = 0;
	rc = ph_fcgi_serve(&srv, &run, true);
	ph_server_free(srv);
	return rc;
}

int
main(int argc, char **argv)
{
	struct opts o;
	struct ph_server *srv;
	char act_err[512];
	int rc, act_fd;

	if (!parse_options(argc, argv, &o, &rc))
		return rc;
	/* a SIGCHLD ignored by whoever started us would be inherited: the
	 * kernel would then reap handlers itself, and a handler that failed
	 * would look as if it had exited 0 */
	signal(SIGCHLD, SIG_DFL);
	if (o.init_dir)
		return init_app(o.init_dir, optind < argc ? argv[optind] : NULL);
	/* read and removed before anything can fork */
	act_fd = ph_listen_activated(act_err, sizeof act_err);
	if (o.test)
		return check_config(o.conf_path, o.listen_spec);
	if (o.notify)
		return notify(o.conf_path, argc - optind, argv + optind);
	if (act_fd == -2 && !o.stdio_mode) {
		ph_log("error", "%s", act_err);
		return 1;
	}
	if (act_fd >= 0 && o.stdio_mode) {
		close(act_fd);
		act_fd = -1;
	}
	if (!ph_fast_paths_read(act_err, sizeof act_err)) {
		ph_log("error", "%s", act_err);
		return 2;
	}
	if (!ph_fast_paths)
		ph_log("notice", "PHANTOM_FAST_PATHS=off: every fast path takes its plain path");

	ph_shared_init();
	if (o.stdio_mode)
		ph_server_single_process();
	srv = ph_server_load(o.conf_path);
	if (srv == NULL && !o.stdio_mode && !o.listen_spec &&
	    (ph_fd_is_listener(0) || getenv("GATEWAY_INTERFACE") != NULL)) {
		/* started by a web server (CGI, mod_fcgid, lighttpd, spawn-fcgi):
		 * exiting would leave its clients without any answer, so each
		 * request gets a 500 that points at this log */
		ph_log("error", "the configuration has problems (check with -t); answering 500");
		return serve_unconfigured(&o);
	}
	if (srv == NULL) {
		ph_log("error", "cannot start: the configuration has problems (check with -t)");
		return 1;
	}
	telemetry_start(srv->conf);
	if (o.stdio_mode) {
		ph_otel_spawn(false, -1);
		rc = ph_stdio_run(&srv, o.conf_path, true, true);
		ph_server_free(srv);
		return rc;
	}
	return serve_fastcgi(srv, &o, act_fd);
}
