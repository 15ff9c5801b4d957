/* ph_otel_export.h: the exporter process. It reads the records the
 * serving processes hand over (ipc/ph_otel.h), batches spans as the
 * specification's batch span processor does, aggregates the metric points
 * into cumulative histograms, and posts both over OTLP/HTTP. */
#ifndef PH_OTEL_EXPORT_H
#define PH_OTEL_EXPORT_H
#include "first.h"
#include <sys/types.h>

/* Starts the exporter (telemetry on only; 0 otherwise). supervised: a
 * master's child that ends with it and on SIGTERM; else it outlives the
 * process that starts it (stdio, CGI, a single process) and ends once
 * every sender has closed the channel, after a last export. close_fd: a
 * descriptor the exporter must not keep (the listening socket), or -1.
 * Returns its pid, 0 when off, -1 when fork failed (logged). */
pid_t ph_otel_spawn(bool supervised, int close_fd);
/* The master: pid was the exporter (reaped); starts another unless
 * stopping. Returns whether it was. */
bool ph_otel_reaped(pid_t pid, bool stopping, int close_fd);
/* The master, stopping once the workers and the hub are gone: asks the
 * exporter to send what it holds and end. Returns true while it runs. */
bool ph_otel_stop_wait(void);
/* The exporter's loop on fd; returns the exit status. */
int ph_otel_export_run(int fd, bool supervised);
#endif
