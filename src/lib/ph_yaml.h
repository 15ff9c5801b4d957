/* ph_yaml.h: a YAML document loaded with libyaml's event API into a small tree
 * that remembers the line of every node. Used by the configuration, the skills
 * manifest and SKILL.md frontmatter. Aliases are refused (no billion laughs),
 * nesting is bounded. */
#ifndef PH_YAML_H
#define PH_YAML_H
#include "first.h"

enum ph_ynode_kind { PH_Y_SCALAR, PH_Y_MAP, PH_Y_SEQ };

struct ph_ynode {
	enum ph_ynode_kind kind;
	int line;             /* 1-based */
	bool quoted;          /* scalar written in quotes or as a block: always a string */
	char *str;            /* scalar text */
	size_t len;           /* scalar length (may contain NUL) */
	size_t n;             /* MAP: pairs; SEQ: items */
	char **keys;          /* MAP: keys (scalar keys only) */
	int *key_lines;       /* MAP: line of each key */
	struct ph_ynode **vals; /* MAP values / SEQ items */
};

/* Parses a YAML document from memory. Returns the root (caller frees with
 * ph_yaml_free) or NULL with *err (caller frees) as "LINE: message". An empty
 * document gives an empty map. */
struct ph_ynode *ph_yaml_parse(const char *buf, size_t len, int max_depth, char **err);
void ph_yaml_free(struct ph_ynode *n);
/* Looks up a key in a map node; borrowed, or NULL. */
struct ph_ynode *ph_yaml_get(const struct ph_ynode *map, const char *key);
/* True for a plain scalar that YAML 1.1/1.2 would read as null (~, null, empty). */
bool ph_yaml_is_null(const struct ph_ynode *n);
/* Reads a boolean scalar (true/false/yes/no/on/off). Returns 0 or -1. */
int ph_yaml_bool(const struct ph_ynode *n, bool *out) PH_WUR;
/* Converts a node to JSON (json_object *, caller puts). Plain scalars become
 * numbers, booleans or null when they look like one. */
struct json_object *ph_yaml_to_json(const struct ph_ynode *n);
#endif
