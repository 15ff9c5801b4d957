/* ph_access.h: a principal's allow-lists, as authentication (ph_auth.c)
 * builds them and features check them (ph_access_allowed, ph_server.h). */
#ifndef PH_ACCESS_H
#define PH_ACCESS_H
#include "first.h"

/* One allow-list. set=false: the principal is not restricted for this kind. */
struct ph_allow_list {
	char **v;
	size_t n;
	bool set;
};

/* What one principal may see, one list per enum ph_kind (ph_server.h). */
#define PH_ACCESS_KINDS 4
struct ph_access {
	struct ph_allow_list kind[PH_ACCESS_KINDS];
};
#endif
