/* fuzz_fcgi_whole.c: libFuzzer harness for ph_fcgi_request_whole
 * (request/ph_rawfcgi.c), which tells the FastCGI front whether the bytes
 * waiting on a connection hold a whole request.
 *
 * Invariants checked: it reads only the n bytes it is given (the input is
 * copied to a buffer of exactly that size); a whole request stays whole
 * whatever follows it; and its answer agrees with a second walk written
 * here record by record. ph_fcgi_request_split, on the same bytes, splits
 * only whole requests, takes no more bytes than the whole request, and
 * gives its strings in order and a NUL-ended body of the stated length.
 *
 *   make -C build fuzz && build/tests/fuzz/fuzz_fcgi_whole tests/fuzz/corpus/fcgi_whole
 */
#include "first.h"
#include "ph_rawfcgi.h"
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

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);
	size_t end;
	bool whole;
	memcpy(copy, data, size);
	whole = ph_fcgi_request_whole(copy, size);
	end = end_of_request(copy, size);
	if (whole != (end != 0))
		abort();
	/* the prefix that ends with the completing record is whole, and one
	 * byte less is not */
	if (end != 0 && (!ph_fcgi_request_whole(copy, end) || ph_fcgi_request_whole(copy, end - 1)))
		abort();
	{
		/* split twice into one struct: the second reuses the first's memory */
		static struct ph_fcgi_split sp;
		for (int round = 0; round < 2; round++) {
			if (ph_fcgi_request_split(copy, size, &sp)) {
				if (!whole || sp.used != end || sp.body == NULL || sp.body[sp.body_len] != '\0' ||
				    sp.body < sp.mem || sp.body + sp.body_len >= sp.mem + sp.cap)
					abort();
				/* the strings follow each other in the block (a name
				 * may hold a NUL, as it may in libfcgi's), each name
				 * as long as nlen says */
				for (size_t i = 0; sp.envp[i]; i++)
					if (sp.envp[i] < (char *)(sp.nlen + i) || sp.envp[i] >= sp.body ||
					    (i > 0 && sp.envp[i] <= sp.envp[i - 1]) || sp.envp[i][sp.nlen[i]] != '=')
						abort();
				/* each name without a NUL is found where a walk from
				 * the start finds its first */
				for (size_t i = 0; sp.envp[i]; i++) {
					char name[300];
					const char *want = NULL;
					if (sp.nlen[i] >= sizeof name || memchr(sp.envp[i], '\0', sp.nlen[i]))
						continue;
					memcpy(name, sp.envp[i], sp.nlen[i]);
					name[sp.nlen[i]] = '\0';
					for (size_t j = 0; sp.envp[j] && want == NULL; j++)
						if (sp.nlen[j] == sp.nlen[i] && memcmp(sp.envp[j], name, sp.nlen[i]) == 0)
							want = sp.envp[j] + sp.nlen[i] + 1;
					if (ph_fcgi_split_param(&sp, name) != want || want == NULL)
						abort();
				}
				if (ph_fcgi_split_param(&sp, "NO_SUCH_PARAMETER_IN_THE_FUZZ_INPUT_AT_ALL") != NULL &&
				    memmem(copy, size, "NO_SUCH_PARAMETER_IN_THE_FUZZ_INPUT_AT_ALL", 42) == NULL)
					abort();
			} else if (sp.envp != NULL || sp.body != NULL) {
				abort();
			}
		}
		if (size % 7 == 0)
			ph_fcgi_split_free(&sp); /* now and then from nothing again */
	}
	free(copy);
	return 0;
}
