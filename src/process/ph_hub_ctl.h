/* ph_hub_ctl.h: the client of the hub's control socket (ph_hub_ctl.c). */
#ifndef PH_HUB_CTL_H
#define PH_HUB_CTL_H
#include "first.h"

/* phantom-fcgi --notify: sends the one notification in argv (argc 1:
 * "tools/list_changed", "prompts/list_changed", "resources/list_changed";
 * or "resources/updated" followed by URIs) to the hub listening on path
 * and prints its answer. Returns the exit status. */
int ph_hub_notify(const char *path, int argc, char **argv);
#endif
