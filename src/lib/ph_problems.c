/* ph_problems.c: the list of configuration problems every loader appends
 * to, one "FILE:LINE: message" each. */
#include "first.h"
#include "ph_problems.h"
#include "ph_util.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void
ph_conf_vproblem(struct ph_conf_problems *p, const char *file, int line, const char *prefix,
		 const char *fmt, va_list ap)
{
	struct ph_buf b;
	char tmp[1024];
	ph_buf_init(&b);
	ph_buf_printf(&b, "%s:%d: ", file ? file : "(defaults)", line);
	if (prefix)
		ph_buf_printf(&b, "%s: ", prefix);
	vsnprintf(tmp, sizeof tmp, fmt, ap);
	ph_buf_adds(&b, tmp);
	p->v = ph_xrealloc(p->v, (p->n + 1) * sizeof *p->v);
	p->v[p->n++] = ph_buf_steal(&b);
}

void
ph_conf_problem(struct ph_conf_problems *p, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ph_conf_vproblem(p, file, line, NULL, fmt, ap);
	va_end(ap);
}

void
ph_conf_problems_free(struct ph_conf_problems *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i]);
	free(p->v);
	p->v = NULL;
	p->n = 0;
}
