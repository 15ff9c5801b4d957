/* ph_resources.c: static resources and resource templates. */
#include "first.h"
#include "ph_features.h"

void
ph_resources_read(struct ph_req *r, const char *uri, struct ph_outcome *o)
{
	ph_outcome_not_found(r, o, uri);
}

void
ph_resources_capabilities(struct ph_req *r, struct json_object *caps)
{
	(void)r;
	(void)caps;
}
