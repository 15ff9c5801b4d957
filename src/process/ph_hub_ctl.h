/* ph_hub_ctl.h: what the hub's control socket (ph_hub_ctl.c) and its
 * client, phantom-fcgi --notify (ph_notify.c), agree on. The hub's side
 * is declared in ph_hub_int.h. */
#ifndef PH_HUB_CTL_H
#define PH_HUB_CTL_H
#include "first.h"
#include <stdbool.h>
#include <sys/un.h>

/* The longest command line the control socket reads, its newline
 * included. */
#define PH_HUB_CTL_LINE_MAX 4096

/* Fills a unix socket address for path. Returns false when it is too long. */
bool ph_hub_ctl_addr(const char *path, struct sockaddr_un *sa);
#endif
