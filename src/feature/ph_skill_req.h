/* ph_skill_req.h: what the skills files share at request time. Private to
 * feature/: the rest of the server uses ph_skills.h and ph_features.h. */
#ifndef PH_SKILL_REQ_H
#define PH_SKILL_REQ_H
#include "first.h"
#include "ph_skills.h"

/* Brings f's cache up to date with the file on disk (ph_skill_read.c).
 * Returns 0, or -1 with errno (EINVAL: SKILL.md no longer has valid
 * frontmatter). */
int ph_skill_refresh(const struct ph_skills_conf *sc, const struct ph_skill *owner,
		     struct ph_skill_file *f) PH_WUR;
#endif
