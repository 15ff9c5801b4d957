/* fuzz_conf.c: libFuzzer harness for the configuration loader through its
 * production entry point ph_conf_load_buf (ph_conf_load reads the file and
 * calls it), then ph_server_new and the reload comparison, as start-up, -t
 * and SIGHUP do. Input: a phantom.yaml. Problems are a normal outcome, as
 * for -t: it aborts only when a refused configuration has no problem, an
 * accepted one has problems, or a problem is not "FILE:LINE: message" with
 * FILE this configuration or an absolute path it names (a relative one
 * resolves under a directory that does not exist, so cannot be read). */
#include "first.h"
#include "ph_conf.h"
#include "ph_build.h"
#include "ph_core.h"
#include "ph_server.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static struct ph_config *defaults;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct ph_conf_problems p = {0};
	(void)argc;
	(void)argv;
	defaults = ph_conf_load(NULL, &p);
	if (defaults == NULL)
		abort();
	return 0;
}

/* Returns whether a problem reads "FILE:LINE: message", FILE being this
 * configuration or an absolute path (a file the input named, such as a
 * manifest given as /etc/hostname: its own lines are blamed on it). */
static bool
well_formed(const char *s)
{
	size_t digits;
	const char *colon;
	if (strncmp(s, "fuzz.yaml:", 10) == 0) {
		colon = s + 9;
	} else {
		if (s[0] != '/')
			return false;
		/* the last ":DIGITS: " before the message; paths may hold colons */
		for (colon = NULL; *s != '\0'; s++)
			if (*s == ':' && strspn(s + 1, "0123456789") > 0 &&
			    strncmp(s + 1 + strspn(s + 1, "0123456789"), ": ", 2) == 0) {
				colon = s;
				break;
			}
		if (colon == NULL)
			return false;
	}
	digits = strspn(colon + 1, "0123456789");
	return digits > 0 && strncmp(colon + 1 + digits, ": ", 2) == 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ph_conf_problems p = {0};
	/* a directory that does not exist: relative paths in the input resolve
	 * to nothing rather than to files next to the fuzzer */
	struct ph_config *c = ph_conf_load_buf("fuzz.yaml", "/nonexistent-phantom-fuzz",
					       (const char *)data, size, &p);
	if ((c == NULL) != (p.n > 0))
		abort();
	for (size_t i = 0; i < p.n; i++)
		if (!well_formed(p.v[i]))
			abort();
	if (c != NULL) {
		struct ph_server *s = ph_server_new(c, &p);
		if (s != NULL) {
			char **names = NULL;
			size_t n = ph_conf_unreloadable_changes(defaults, s->conf, &names);
			for (size_t i = 0; i < n; i++)
				free(names[i]);
			free(names);
			ph_server_free(s);
		}
	}
	ph_conf_problems_free(&p);
	return 0;
}
