/* ph_log.h: server messages on stderr ("TIME phantom[PID] LEVEL: message"). */
#ifndef PH_LOG_H
#define PH_LOG_H
#include "first.h"

/* A server log message: level is "error", "warning", "notice" or "info". */
void ph_log(const char *level, const char *fmt, ...) PH_PRINTF(2, 3);
/* Request log lines: ph_log_line writes the whole line (ending in '\n') on
 * stderr, or, after ph_log_buffer(bytes > 0, ms), gathers lines and writes
 * them together when bytes would be passed, when the first has waited ms,
 * at ph_log_flush and before any ph_log message (the order stays).
 * bytes 0: each line at once. A forked child starts with nothing held.
 * The first call with bytes > 0 also catches SIGSEGV, SIGABRT, SIGBUS,
 * SIGFPE and SIGILL: the lines held are written before the process dies. */
void ph_log_buffer(size_t bytes, long long flush_ms);
void ph_log_line(const char *line, size_t len);
void ph_log_flush(void);
/* The current UTC time as 2026-12-01T09:30:00.123Z into buf. */
void ph_log_timestamp(char *buf, size_t n);
#endif
