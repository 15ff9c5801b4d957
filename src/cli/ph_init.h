/* ph_init.h: phantom-fcgi --init, a starter application for a web
 * directory (ph_init.c). */
#ifndef PH_INIT_H
#define PH_INIT_H
#include "first.h"
#include <stdio.h>

/* Writes a starter application: into appdir (NULL: webdir) phantom.yaml,
 * its tools and a fresh request_state secret (mode 0600); into webdir the
 * .htaccess and an mcp.fcgi that starts the program at self with that
 * configuration. Directories that do not exist are made (their parents must
 * exist). Nothing is written when one of the files exists already. Prints
 * what it did, the URL to try and a curl line on out, problems on stderr.
 * On success the configuration's path goes to *conf_path (caller frees).
 * Returns 0, or 1 after a problem. */
int ph_init_app(const char *webdir, const char *appdir, const char *self, FILE *out,
		char **conf_path);
#endif
