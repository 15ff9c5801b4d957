/* ph_auth.c: authentication and per-principal access. Until auth is
 * configured every principal sees everything. */
#include "first.h"
#include "ph_features.h"

bool
ph_access_allowed(const struct ph_req *r, enum ph_kind kind, const char *name)
{
	(void)r;
	(void)kind;
	(void)name;
	return true;
}

bool
ph_access_restricted(const struct ph_req *r)
{
	(void)r;
	return false;
}

enum ph_err
ph_auth_check(struct ph_req *r, char *msg, size_t msz, const struct ph_header **hdrs)
{
	(void)r;
	(void)msg;
	(void)msz;
	*hdrs = NULL;
	return PH_OK;
}
