/* fuzz_state.c: libFuzzer harness for the requestState opener, the
 * production entry point ph_state_open, with a fixed key, and the opener of
 * the other sealed documents (legacy session ids), ph_state_open_doc. Whatever the input,
 * it must not crash, leak or open. Build: see tests/fuzz/README or
 *   clang -g -fsanitize=fuzzer,address,undefined -Isrc -I. ... tests/fuzz/fuzz_state.c src/ph_state.c ...
 */
#include "first.h"
#include "ph_state.h"
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ph_state_conf sc;
	static bool init;
	struct json_object *state = NULL, *args;
	char *tok;
	if (!init) {
		if (sodium_init() < 0)
			abort();
		memset(sc.key, 7, sizeof sc.key);
		sc.max_age = 300;
		sc.max_size = 65536;
		init = true;
	}
	tok = malloc(size + 1);
	memcpy(tok, data, size);
	tok[size] = '\0';
	args = json_object_new_object();
	if (ph_state_open(&sc, tok, "ada", "tools/call", "t", args, &state, 1000) == PH_STATE_OK)
		abort(); /* only a sealed state opens; random input never should */
	if (ph_state_open_doc(&sc, "session", tok, 16384) != NULL)
		abort();
	json_object_put(state);
	json_object_put(args);
	free(tok);
	return 0;
}
