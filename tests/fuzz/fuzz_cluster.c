/* fuzz_cluster.c: libFuzzer harness for the opener of the values Phantom
 * reads back from the cluster's Redis (task records and whatever else a
 * host seals there), the production entry points ph_cluster_open and
 * ph_cluster_open_json, with a fixed key. Whatever Redis hands back (a
 * value someone wrote there, a truncated one), it must not crash, leak or
 * open; and any bytes sealed open again as themselves. */
#include "first.h"
#include "ph_cluster.h"
#include "ph_config.h"
#include "ph_state.h"
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool init;
	static char key[PH_CLUSTER_KEY_MAX];
	unsigned char *box;
	size_t blen, plen;
	char *plain;
	if (!init) {
		static struct ph_state_conf sc;
		static struct ph_cluster_conf cc;
		static struct ph_config c;
		if (sodium_init() < 0)
			abort();
		memset(sc.key, 7, sizeof sc.key);
		cc.host = "fuzz";
		cc.prefix = "f:";
		cc.timeout_ms = 100;
		cc.lease_ms = 1000;
		c.request_state = &sc;
		c.cluster = &cc;
		ph_cluster_configure(&c);
		ph_cluster_key(PH_CK_TASK, "id", 2, key);
		init = true;
	}
	if (ph_cluster_open(key, data, size, &plen) != NULL)
		abort(); /* only a sealed value opens; random input never should */
	if (ph_cluster_open_json(key, data, size, 16) != NULL)
		abort();
	box = ph_cluster_seal(key, data, size, &blen);
	plain = ph_cluster_open(key, box, blen, &plen);
	if (plain == NULL || plen != size || memcmp(plain, data, size) != 0)
		abort();
	free(plain);
	/* the sealed bytes as a document: an object opens, anything else not */
	json_object_put(ph_cluster_open_json(key, box, blen, 16));
	free(box);
	return 0;
}
