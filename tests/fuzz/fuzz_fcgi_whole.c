/* fuzz_fcgi_whole.c: libFuzzer harness for ph_fcgi_request_whole
 * (lib/ph_fcgi_wire.c), which tells the FastCGI front whether the bytes
 * waiting on a connection hold a whole request.
 *
 * Invariants checked: it reads only the n bytes it is given (the input is
 * copied to a buffer of exactly that size); a whole request stays whole
 * whatever follows it; and its answer agrees with a second walk written
 * here record by record. ph_fcgi_request_split, on the same bytes, splits
 * only whole requests, takes no more bytes than the whole request, gives
 * each name right before its value, the pairs in order, NUL-ended values
 * and a NUL-ended body of the stated length, leaves every name, value and
 * body byte as the request had it (its NULs go elsewhere), and leaves the
 * bytes untouched when it does not split. The header's decoder and
 * encoder agree on the first 8 bytes, and ph_fcgi_aborted (the hub's test)
 * finds FCGI_ABORT_REQUEST exactly where a walk written here does.
 *
 *   make -C build fuzz && build/tests/fuzz/fuzz_fcgi_whole tests/fuzz/corpus/fcgi_whole
 */
#include "first.h"
#include "ph_fcgi_wire.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The same question, asked differently: the offset just past the record
 * that completes the request, or 0. */
static size_t
end_of_request(const uint8_t *d, size_t n)
{
	size_t at = 0;
	unsigned want = 0;
	int ends = 0;
	while (at + 8 <= n && d[at] == 1) {
		size_t next = at + 8 + ((size_t)d[at + 4] * 256 + d[at + 5]) + d[at + 6];
		unsigned id = (unsigned)d[at + 2] * 256 + d[at + 3];
		bool empty = d[at + 4] == 0 && d[at + 5] == 0;
		if (next > n)
			return 0;
		if (want == 0) {
			if (d[at + 1] == 1 && id != 0)
				want = id;
		} else if (id == want && empty && (d[at + 1] == 4 || d[at + 1] == 5)) {
			ends |= d[at + 1] == 4 ? 1 : 2;
			if (ends == 3)
				return next;
		}
		at = next;
	}
	return 0;
}

/* Whether a record walk from the start, version 1 records only, meets
 * FCGI_ABORT_REQUEST before a record runs past n. */
static bool
aborts(const uint8_t *d, size_t n)
{
	for (size_t at = 0; at + 8 <= n && d[at] == 1;) {
		if (d[at + 1] == 2)
			return true;
		at += 8 + ((size_t)d[at + 4] * 256 + d[at + 5]) + d[at + 6];
		if (at > n)
			break;
	}
	return false;
}

/* The header codec: what decodes encodes back to the same bytes (the
 * reserved byte aside), and the abort test agrees with aborts(). */
static void
header_codec(const uint8_t *d, size_t n)
{
	struct ph_fcgi_header h;
	unsigned char out[PH_FCGI_HEADER_LEN];
	enum ph_fcgi_hdr e = ph_fcgi_header_decode(d, n, &h);
	if ((e == PH_FCGI_HDR_SHORT) != (n < 8) || (e == PH_FCGI_HDR_VERSION) != (n >= 8 && d[0] != 1))
		abort();
	if (e == PH_FCGI_HDR_OK) {
		ph_fcgi_header_encode(&h, out);
		if (memcmp(out, d, 7) != 0 || out[7] != 0)
			abort();
	}
	if (ph_fcgi_aborted(d, n) != aborts(d, n))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);
	size_t end;
	bool whole;
	memcpy(copy, data, size);
	header_codec(copy, size);
	whole = ph_fcgi_request_whole(copy, size);
	end = end_of_request(copy, size);
	if (whole != (end != 0))
		abort();
	/* the prefix that ends with the completing record is whole, and one
	 * byte less is not */
	if (end != 0 && (!ph_fcgi_request_whole(copy, end) || ph_fcgi_request_whole(copy, end - 1)))
		abort();
	{
		/* split twice into one struct: the second reuses the first's
		 * memory; each splits a fresh copy, in place */
		static struct ph_fcgi_split sp;
		for (int round = 0; round < 2; round++) {
			memcpy(copy, data, size);
			if (ph_fcgi_request_split(copy, size, &sp)) {
				const char *lo = (const char *)copy, *hi = lo + size;
				const char *mlo = sp.mem, *mhi = sp.mem + sp.cap;
#define INSIDE(q, len) (((q) >= lo && (q) + (len) < hi) || ((q) >= mlo && (q) + (len) < mhi))
				if (!whole || sp.used != end || sp.body == NULL || !INSIDE(sp.body, sp.body_len) ||
				    sp.body[sp.body_len] != '\0')
					abort();
				/* each name right before its value, the pairs in
				 * order, each value NUL-ended; what lies in the
				 * request's bytes is still the request's (the NULs
				 * fell on bytes that were not a name or a value) */
				for (size_t i = 0; i < sp.n; i++) {
					const char *nm = sp.name[i], *v = sp.value[i];
					if (v != nm + sp.nlen[i] || !INSIDE(nm, sp.nlen[i] + sp.vlen[i]) ||
					    v[sp.vlen[i]] != '\0' || (i > 0 && nm <= sp.value[i - 1] + sp.vlen[i - 1]))
						abort();
					if (nm >= lo && nm < hi &&
					    memcmp(nm, data + (nm - lo), sp.nlen[i] + sp.vlen[i]) != 0)
						abort();
				}
				if (sp.body >= lo && sp.body < hi &&
				    memcmp(sp.body, data + (sp.body - lo), sp.body_len) != 0)
					abort();
#undef INSIDE
				/* each name without a NUL is found where a walk from
				 * the start finds its first */
				for (size_t i = 0; i < sp.n; i++) {
					char name[300];
					const char *want = NULL;
					if (sp.nlen[i] >= sizeof name || memchr(sp.name[i], '\0', sp.nlen[i]))
						continue;
					memcpy(name, sp.name[i], sp.nlen[i]);
					name[sp.nlen[i]] = '\0';
					for (size_t j = 0; j < sp.n && want == NULL; j++)
						if (sp.nlen[j] == sp.nlen[i] && memcmp(sp.name[j], name, sp.nlen[i]) == 0)
							want = sp.value[j];
					if (ph_fcgi_split_param(&sp, name) != want || want == NULL)
						abort();
				}
				if (ph_fcgi_split_param(&sp, "NO_SUCH_PARAMETER_IN_THE_FUZZ_INPUT_AT_ALL") != NULL &&
				    memmem(data, size, "NO_SUCH_PARAMETER_IN_THE_FUZZ_INPUT_AT_ALL", 42) == NULL)
					abort();
			} else if (sp.name != NULL || sp.body != NULL || memcmp(copy, data, size) != 0) {
				abort();
			}
		}
		if (size % 7 == 0)
			ph_fcgi_split_free(&sp); /* now and then from nothing again */
	}
	free(copy);
	return 0;
}
