/* tap.h: a tiny TAP emitter for the C unit tests. */
#ifndef PH_TAP_H
#define PH_TAP_H
#include <stdio.h>
#include <stdarg.h>
#include <string.h>

static int tap_n, tap_fail;
/* While set, checks are TODO: a failure is reported "# TODO why" and does not
 * fail the program; the TAP driver counts it as an expected failure and an
 * unexpected pass as XPASS, so a fixed problem shows up. */
static const char *tap_todo;

static inline void
tap_end(int cond, const char *file, int line)
{
	if (tap_todo)
		printf(" # TODO %s", tap_todo);
	printf("\n");
	if (!cond) {
		if (!tap_todo)
			tap_fail++;
		printf("#   at %s:%d", file, line);
	}
}

#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define is_int(got, want, ...) tap_is_int((long long)(got), (long long)(want), __FILE__, __LINE__, __VA_ARGS__)
#define is_str(got, want, ...) tap_is_str((got), (want), __FILE__, __LINE__, __VA_ARGS__)

static inline int __attribute__((format(printf, 4, 5)))
tap_ok(int cond, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	tap_n++;
	printf("%sok %d - ", cond ? "" : "not ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	tap_end(cond, file, line);
	if (!cond)
		printf("\n");
	return cond;
}

static inline int __attribute__((format(printf, 5, 6)))
tap_is_int(long long got, long long want, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	int cond = got == want;
	tap_n++;
	printf("%sok %d - ", cond ? "" : "not ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	tap_end(cond, file, line);
	if (!cond)
		printf(": got %lld, expected %lld\n", got, want);
	return cond;
}

static inline int __attribute__((format(printf, 5, 6)))
tap_is_str(const char *got, const char *want, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	int cond = (got == NULL && want == NULL) || (got && want && strcmp(got, want) == 0);
	tap_n++;
	printf("%sok %d - ", cond ? "" : "not ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	tap_end(cond, file, line);
	if (!cond)
		printf(": got '%s', expected '%s'\n", got ? got : "(null)", want ? want : "(null)");
	return cond;
}

static inline int
tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_fail ? 1 : 0;
}
#endif
