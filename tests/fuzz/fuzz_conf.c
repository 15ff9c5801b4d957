/* fuzz_conf.c: libFuzzer harness for the configuration loader through its
 * production entry point ph_conf_load_buf (ph_conf_load reads the file and
 * calls it), then ph_server_new and the reload comparison, as start-up, -t
 * and SIGHUP do. Input: a phantom.yaml. Aborts when a refused configuration
 * has no problem, an accepted one has problems, or a problem does not start
 * with "FILE:LINE: ". */
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
	for (size_t i = 0; i < p.n; i++) {
		size_t digits;
		if (strncmp(p.v[i], "fuzz.yaml:", 10) != 0)
			abort();
		digits = strspn(p.v[i] + 10, "0123456789");
		if (digits == 0 || strncmp(p.v[i] + 10 + digits, ": ", 2) != 0)
			abort();
	}
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
