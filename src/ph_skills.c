/* ph_skills.c: the skills extension (io.modelcontextprotocol/skills). */
#include "first.h"
#include "ph_features.h"

void
ph_skills_read(struct ph_req *r, const char *uri, struct ph_outcome *o)
{
	ph_outcome_not_found(r, o, uri);
}

void
ph_skills_capabilities(struct ph_req *r, struct json_object *caps)
{
	(void)r;
	(void)caps;
}
