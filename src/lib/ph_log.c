/* ph_log.c: server messages on stderr, one write per line. */
#include "first.h"
#include "ph_log.h"
#include "ph_util.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

void
ph_log_timestamp(char *buf, size_t n)
{
	/* the date and time to the second change once a second: kept */
	static time_t last = (time_t)-1;
	static char secs[64];
	struct timeval tv;
	int ms;
	gettimeofday(&tv, NULL);
	if (tv.tv_sec != last) {
		struct tm tm;
		gmtime_r(&tv.tv_sec, &tm);
		snprintf(secs, sizeof secs, "%04d-%02d-%02dT%02d:%02d:%02d", tm.tm_year + 1900, tm.tm_mon + 1,
			 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
		last = tv.tv_sec;
	}
	ms = (int)(tv.tv_usec / 1000);
	{
		size_t l = strlen(secs);
		if (n < l + 6) {
			snprintf(buf, n, "%s", secs);
			return;
		}
		memcpy(buf, secs, l);
		buf[l] = '.';
		buf[l + 1] = (char)('0' + ms / 100);
		buf[l + 2] = (char)('0' + ms / 10 % 10);
		buf[l + 3] = (char)('0' + ms % 10);
		buf[l + 4] = 'Z';
		buf[l + 5] = '\0';
	}
}

void
ph_log(const char *level, const char *fmt, ...)
{
	char ts[96], msg[2048];
	struct ph_buf b;
	va_list ap;
	ph_log_timestamp(ts, sizeof ts);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	ph_buf_init(&b);
	ph_buf_printf(&b, "%s phantom[%d] %s: %s\n", ts, ph_pid(), level, msg);
	if (write(2, b.data, b.len) < 0) {
		/* nothing to do */
	}
	ph_buf_free(&b);
}
