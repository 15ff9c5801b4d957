/* fuzz_otel_env.c: libFuzzer harness for ph_otel_settings_load, the parser
 * of the OTEL_* variables (headers in the W3C baggage form with
 * percent-encoding, numbers, ratios, the sampler, endpoints). Input: lines
 * "N=VALUE", N a digit choosing the variable. Aborts when settings load
 * breaks what ph_otel.h promises: a header name that is empty, a value
 * with a control character, a ratio outside 0..1, a batch over the queue,
 * or "on" without a URL to post to. */
#include "first.h"
#include "ph_otel.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const names[] = {
	"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_RESOURCE_ATTRIBUTES", "OTEL_EXPORTER_OTLP_ENDPOINT",
	"OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG", "OTEL_BSP_MAX_QUEUE_SIZE",
	"OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_SDK_DISABLED",
	"OTEL_EXPORTER_OTLP_PROTOCOL",
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), *save = NULL, err[256];
	struct ph_otel_settings st;
	memcpy(s, data, size);
	s[size] = '\0';
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		unsetenv(names[i]);
	for (char *l = strtok_r(s, "\n", &save); l != NULL; l = strtok_r(NULL, "\n", &save))
		if (l[0] >= '0' && l[0] <= '9' && l[1] == '=')
			setenv(names[l[0] - '0'], l + 2, 1);
	if (ph_otel_settings_load(NULL, &st, err, sizeof err) == 0) {
		for (size_t i = 0; i < st.nheaders; i++) {
			if (st.headers[i].name[0] == '\0')
				abort();
			for (const char *c = st.headers[i].value; *c; c++)
				if ((unsigned char)*c < 0x20 || *c == 0x7f)
					abort();
		}
		if (!(st.ratio >= 0.0 && st.ratio <= 1.0) || st.max_batch > st.max_queue)
			abort();
		if (st.on && st.traces && st.traces_url == NULL)
			abort();
	}
	ph_otel_settings_free(&st);
	free(s);
	return 0;
}
