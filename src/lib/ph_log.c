/* ph_log.c: server messages on stderr, one write per line; request log
 * lines, gathered by a FastCGI worker (ph_log_buffer). */
#include "first.h"
#include "ph_log.h"
#include "ph_util.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
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

/* The lines held: up to held_max bytes, the first since held_since_us. */
static char *held;
static size_t held_len, held_max;
static long long held_flush_us;
static int64_t held_since_us;

/* In a forked child: the lines are the parent's to write. */
static void
held_drop(void)
{
	held_len = 0;
}

/* The signals that end a process at once (a module that dereferences NULL,
 * an abort), and what was set for them before fatal_flush. */
static const int fatal_sig[] = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL};
static struct sigaction fatal_old[sizeof fatal_sig / sizeof fatal_sig[0]];

/* A fatal signal: writes the lines held with write(2) alone (async-signal
 * safe: the lines are whole up to held_len, which ph_log_line raises only
 * after the copy), puts back the action there was (the default, or a
 * sanitizer's report) and raises the signal again, which it then gets as
 * this handler returns. */
static void
fatal_flush(int sig)
{
	int saved = errno;
	size_t off = 0, n = held_len;
	held_len = 0;
	while (off < n) {
		ssize_t w = write(2, held + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	for (size_t i = 0; i < sizeof fatal_sig / sizeof fatal_sig[0]; i++)
		if (fatal_sig[i] == sig)
			(void)sigaction(sig, &fatal_old[i], NULL);
	(void)raise(sig);
	errno = saved;
}

/* Installs fatal_flush for each fatal signal, keeping the actions before. */
static void
fatal_catch(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = fatal_flush;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof fatal_sig / sizeof fatal_sig[0]; i++)
		(void)sigaction(fatal_sig[i], &sa, &fatal_old[i]);
}

void
ph_log_buffer(size_t bytes, long long flush_ms)
{
	static bool registered;
	if (bytes == held_max) {
		held_flush_us = flush_ms * 1000;
		return;
	}
	ph_log_flush();
	free(held);
	held = bytes ? ph_xmalloc(bytes) : NULL;
	held_max = bytes;
	held_flush_us = flush_ms * 1000;
	if (bytes && !registered) {
		pthread_atfork(NULL, NULL, held_drop);
		atexit(ph_log_flush); /* a worker that returns with lines held */
		fatal_catch();        /* ... or crashes with lines held */
		registered = true;
	}
}

void
ph_log_flush(void)
{
	if (held_len > 0) {
		size_t n = held_len;
		held_len = 0;
		(void)ph_write_all(2, held, n);
	}
}

void
ph_log_line(const char *line, size_t len)
{
	int64_t now;
	if (held_max == 0 || len > held_max) {
		ph_log_flush();
		(void)ph_write_all(2, line, len); /* stderr gone: nothing to report it on */
		return;
	}
	now = ph_now_us();
	if (held_len > 0 && (held_len + len > held_max || now - held_since_us >= held_flush_us))
		ph_log_flush();
	if (held_len == 0)
		held_since_us = now;
	memcpy(held + held_len, line, len);
	held_len += len;
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
	ph_buf_printf(&b, "%s phantom[%d] %s: ", ts, ph_pid(), level);
	/* one event, one line: a control character in what a client, a
	 * handler or an authorization server said (an id, an error message,
	 * a URI) is written out, so it cannot forge a line or a terminal's
	 * escape sequence */
	for (const char *m = msg; *m; m++) {
		unsigned char c = (unsigned char)*m;
		if (c < 0x20 || c == 0x7f)
			ph_buf_printf(&b, "\\x%02x", c);
		else
			ph_buf_addc(&b, (char)c);
	}
	ph_buf_addc(&b, '\n');
	ph_log_flush(); /* the request lines before it first */
	(void)ph_write_all(2, b.data, b.len);
	ph_buf_free(&b);
}
