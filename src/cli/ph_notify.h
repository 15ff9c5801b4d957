/* ph_notify.h: phantom-fcgi --notify (ph_notify.c). */
#ifndef PH_NOTIFY_H
#define PH_NOTIFY_H
#include "first.h"

/* phantom-fcgi --notify: sends the one notification in argv (argc 1:
 * "tools/list_changed", "prompts/list_changed", "resources/list_changed";
 * or "resources/updated" followed by URIs) to the hub listening on path
 * and prints its answer. Returns the exit status. */
int ph_hub_notify(const char *path, int argc, char **argv);
#endif
