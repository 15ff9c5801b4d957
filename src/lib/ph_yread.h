/* ph_yread.h: typed reads of YAML values (ph_yaml.h nodes) for every parser of
 * phantom.yaml, its sections and the files they name (skills manifest, tokens
 * file). Each reader checks the node's kind and bounds and, when it does not
 * fit, reports one problem "FILE:LINE: [PREFIX: ]NAME: why" to a sink, so a
 * message reads the same whichever section it comes from. */
#ifndef PH_YREAD_H
#define PH_YREAD_H
#include "first.h"
#include "ph_problems.h"
#include "ph_yaml.h"

/* Where problems go. prefix names the item they belong to ("tools[2]
 * (deploy)") or is NULL; bad is set by every report. All borrowed. */
struct ph_ysink {
	struct ph_conf_problems *probs;
	const char *file;
	const char *prefix;
	bool bad;
};

/* Reports "FILE:LINE: [PREFIX: ]message" and sets s->bad. */
void ph_yread_problem(struct ph_ysink *s, int line, const char *fmt, ...) PH_PRINTF(3, 4);

/* The text of a scalar of min..max bytes without a NUL byte (max SIZE_MAX:
 * no upper bound), borrowed from n; NULL after reporting why not. */
const char *ph_yread_str(struct ph_ysink *s, const struct ph_ynode *n, const char *name, size_t min,
			 size_t max);
/* The same, copied (caller frees); NULL after a report. */
char *ph_yread_strdup(struct ph_ysink *s, const struct ph_ynode *n, const char *name, size_t min,
		      size_t max);
/* An unquoted integer scalar within min..max into *out. Returns 0, or -1
 * after reporting ("expected an integer", "'V' is too large (allowed A..B)"). */
int ph_yread_int(struct ph_ysink *s, const struct ph_ynode *n, const char *name, long long min,
		 long long max, long long *out);
/* The same check without a report: 0, or -1 (for callers that word the
 * problem themselves). */
int ph_yread_num(const struct ph_ynode *n, long long min, long long max, long long *out) PH_WUR;
/* A boolean (true/false/yes/no/on/off) into *out. Returns 0, or -1 after a report. */
int ph_yread_bool(struct ph_ysink *s, const struct ph_ynode *n, const char *name, bool *out);
/* The index of n's text among the words of enums ("a|b|c"), or -1 after
 * reporting "expected one of a|b|c". */
int ph_yread_enum(struct ph_ysink *s, const struct ph_ynode *n, const char *name, const char *enums);
/* A list of min..max strings of 1..item_max bytes each (max SIZE_MAX: no
 * bound), copied NULL-terminated (caller frees with ph_yread_strv_free), the
 * count in *count when not NULL; NULL after a report. */
char **ph_yread_strlist(struct ph_ysink *s, const struct ph_ynode *n, const char *name, size_t min,
			size_t max, size_t item_max, size_t *count);
void ph_yread_strv_free(char **v);
/* Reports each key of map that is not in allowed (NULL-terminated) as
 * "unknown key 'NAME.KEY'" ('KEY' when name is NULL) at the key's line.
 * Returns true when every key is known. */
bool ph_yread_keys(struct ph_ysink *s, const struct ph_ynode *map, const char *name,
		   const char *const *allowed);
/* The line of key in map, or the map's own line when it is absent. */
int ph_yread_key_line(const struct ph_ynode *map, const char *key);
#endif
