/* ph_log.h: server messages on stderr ("TIME phantom[PID] LEVEL: message"). */
#ifndef PH_LOG_H
#define PH_LOG_H
#include "first.h"

/* A server log message: level is "error", "warning", "notice" or "info". */
void ph_log(const char *level, const char *fmt, ...) PH_PRINTF(2, 3);
/* The current UTC time as 2026-12-01T09:30:00.123Z into buf. */
void ph_log_timestamp(char *buf, size_t n);
#endif
