/* fuzz_app_html.c: libFuzzer harness for the scan of an app's HTML file
 * for relative <script src> and <link href> references
 * (ph_app_relative_ref), which phantom-fcgi runs on every apps: file at
 * load and on reload.
 *
 * Invariants checked: the answer is 0 or a line of the input (1 to its
 * newlines + 1); with a line, what names the tag and attribute and ends
 * the quoted reference; it never reads past the input (the sanitizers). */
#include "first.h"
#include "ph_conf.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a copy of exactly size bytes, so a read past the end is caught */
	char *buf = malloc(size ? size : 1), what[300];
	int lines = 1, at;
	memcpy(buf, data, size);
	for (size_t i = 0; i < size; i++)
		lines += buf[i] == '\n';
	at = ph_app_relative_ref(buf, size, what, sizeof what);
	if (at < 0 || at > lines)
		abort();
	if (at > 0 && strncmp(what, "<script src=\"", 13) != 0 && strncmp(what, "<link href=\"", 12) != 0)
		abort();
	if (at > 0 && (strlen(what) < 2 || strcmp(what + strlen(what) - 2, "\">") != 0))
		abort();
	free(buf);
	return 0;
}
