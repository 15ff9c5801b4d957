/* ph_problems.c: the list of configuration problems every loader appends
 * to, one "FILE:LINE: message" each, always on one line. */
#include "first.h"
#include "ph_problems.h"
#include "ph_util.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* Appends s to b with what would end a line or hide what follows written
 * out: the C0 controls and DEL as \xNN, the C1 controls and U+2028, U+2029
 * (in UTF-8) as \uNNNN. A problem quotes values from the configuration,
 * which may hold any of them, and is one line of -t's output or the log. */
static void
add_escaped(struct ph_buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p != '\0') {
		if (*p < 0x20 || *p == 0x7f) {
			ph_buf_printf(b, "\\x%02x", *p);
			p++;
		} else if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
			ph_buf_printf(b, "\\u%04x", p[1]);
			p += 2;
		} else if (p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9)) {
			ph_buf_printf(b, "\\u%04x", 0x2000 + p[2] - 0x80);
			p += 3;
		} else {
			ph_buf_addc(b, (char)*p++);
		}
	}
}

void
ph_conf_vproblem(struct ph_conf_problems *p, const char *file, int line, const char *prefix,
		 const char *fmt, va_list ap)
{
	struct ph_buf b;
	char tmp[1024];
	ph_buf_init(&b);
	add_escaped(&b, file ? file : "(defaults)");
	ph_buf_printf(&b, ":%d: ", line);
	if (prefix) {
		add_escaped(&b, prefix);
		ph_buf_adds(&b, ": ");
	}
	vsnprintf(tmp, sizeof tmp, fmt, ap);
	add_escaped(&b, tmp);
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
