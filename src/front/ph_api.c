/* ph_api.c: the public entry points of libphantom declared in phantom.h
 * that are not about building a registry (ph_registry.c) or answering a
 * call (ph_call.c): version, and serving a registry from a program. */
#include "first.h"
#include "phantom.h"
#include "ph_front.h"
#include "ph_registry.h"
#include "ph_server.h"
#include "ph_util.h"
#include <stdio.h>
#include <string.h>

const char *
phantom_version(void)
{
	return PACKAGE_VERSION;
}

unsigned
phantom_abi(void)
{
	return PHANTOM_ABI;
}

phantom_server *
phantom_server_new(const char *config_path, phantom_registry *reg, char *err, size_t errsz)
{
	struct ph_conf_problems probs = {0};
	struct ph_server *s = ph_server_build(config_path, reg, &probs);
	char why[128];
	if (err && errsz) {
		err[0] = '\0';
		if (s == NULL)
			snprintf(err, errsz, "%s", probs.n ? probs.v[0] : "the server could not be built");
	}
	ph_conf_problems_free(&probs);
	/* a program's start, as main's for phantom-fcgi: PHANTOM_FAST_PATHS */
	if (s != NULL && !ph_fast_paths_read(why, sizeof why)) {
		if (err && errsz)
			snprintf(err, errsz, "%s", why);
		ph_server_free(s);
		return NULL;
	}
	return s;
}

void
phantom_server_free(phantom_server *srv)
{
	ph_server_free(srv);
}

int
phantom_serve_stdio(phantom_server *srv)
{
	/* the registry came from the program, not from a file: no reload; its
	 * handlers keep their data in this process: no children */
	return ph_stdio_run(&srv, NULL, false, false);
}

int
phantom_serve_fcgi(phantom_server *srv, const char *listen_spec)
{
	struct ph_run run;
	memset(&run, 0, sizeof run);
	run.listen_fd = 0;
	if (listen_spec != NULL) {
		char e[512];
		run.listen_fd = ph_listen_open(listen_spec, &srv->conf->listen_perm, e, sizeof e);
		if (run.listen_fd < 0) {
			ph_log("error", "%s", e);
			return 1;
		}
	}
	/* the registry came from the program, not from a file: no reload */
	return ph_fcgi_serve(&srv, &run, false);
}
