/* ph_problems.h: problems found while loading configuration, skills or
 * the files they name, collected so that -t can print them all. */
#ifndef PH_PROBLEMS_H
#define PH_PROBLEMS_H
#include "first.h"
#include <stdarg.h>

/* A problem found while loading: "FILE:LINE: message". */
struct ph_conf_problems {
	char **v;
	size_t n;
	/* set by -t: also check, changing nothing, what the server would meet
	 * only when it runs (a directory it would create on first use) */
	bool host;
};

void ph_conf_problems_free(struct ph_conf_problems *p);
void ph_conf_problem(struct ph_conf_problems *p, const char *file, int line, const char *fmt, ...)
	PH_PRINTF(4, 5);
/* The same with a va_list, and an optional "PREFIX: " before the message
 * (for callers that name the item a problem belongs to). */
void ph_conf_vproblem(struct ph_conf_problems *p, const char *file, int line, const char *prefix,
		      const char *fmt, va_list ap) PH_PRINTF(5, 0);
#endif
