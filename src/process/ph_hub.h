/* ph_hub.h: the hub, the one process per master that holds every
 * long-lived stream (ph_hub.c). */
#ifndef PH_HUB_H
#define PH_HUB_H
#include "first.h"
#include "ph_front.h"

/* The hub's main loop: takes the FastCGI connections workers hand over on
 * chan (one datagram each: the JSON of the stream, the connection's fd
 * attached), carries their events, keep-alives and final results, reloads
 * on SIGHUP announcing what changed, ends every stream gracefully on
 * SIGTERM. srv is the master's (the hub replaces its own copy on reload).
 * Returns the process exit status. */
int ph_hub_run(struct ph_server *srv, const struct ph_run *run, int chan);
#endif
