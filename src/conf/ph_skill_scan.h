/* ph_skill_scan.h: the scanning of skill directories (ph_skill_scan.c), as
 * the loading of a manifest (ph_skill_load.c) calls it, with the load
 * context both report problems through. Private to conf/. */
#ifndef PH_SKILL_SCAN_H
#define PH_SKILL_SCAN_H
#include "first.h"
#include "ph_conf.h"
#include "ph_skills.h"
#include "ph_yread.h"

/* One load of the skills section: where problems go and what is built. */
struct lctx {
	struct ph_conf_problems *probs;
	const char *mfile; /* manifest path, for messages */
	struct ph_skills_conf *sc;
	int yaml_depth;
	int before;        /* problems before the manifest was read */
	struct ph_ysink s; /* the same, for the typed readers */
	const char *cfile; /* the configuration file naming the manifest */
	int cline;         /* and the line of its 'manifest:' */
};

#define PROB(L, line, ...) ph_conf_problem((L)->probs, (L)->mfile, (line), __VA_ARGS__)

/* Finds the files of skill idx (not dynamic) below its directory, gives
 * each to the deepest skill holding it and checks templates and SKILL.md.
 * Problems go to L. */
void ph_skill_scan(struct lctx *L, size_t idx);
/* Builds the tree of skill idx, once every skill is scanned: its files and
 * those of every nested skill, and the limits over all of them. */
void ph_skill_build_tree(struct lctx *L, size_t idx);
#endif
