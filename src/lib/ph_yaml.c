/* ph_yaml.c: libyaml event stream -> ph_ynode tree with line numbers. */
#include "first.h"
#include "ph_yaml.h"
#include "ph_util.h"
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

static struct ph_ynode *
node_new(enum ph_ynode_kind k, int line)
{
	struct ph_ynode *n = ph_xcalloc(1, sizeof *n);
	n->kind = k;
	n->line = line;
	return n;
}

void
ph_yaml_free(struct ph_ynode *n)
{
	if (n == NULL)
		return;
	free(n->str);
	for (size_t i = 0; i < n->n; i++) {
		if (n->keys)
			free(n->keys[i]);
		ph_yaml_free(n->vals[i]);
	}
	free(n->keys);
	free(n->key_lines);
	free(n->vals);
	free(n);
}

static void
push(struct ph_ynode *parent, char *key, int key_line, struct ph_ynode *v)
{
	parent->vals = ph_xrealloc(parent->vals, (parent->n + 1) * sizeof *parent->vals);
	if (parent->kind == PH_Y_MAP) {
		parent->keys = ph_xrealloc(parent->keys, (parent->n + 1) * sizeof *parent->keys);
		parent->key_lines = ph_xrealloc(parent->key_lines, (parent->n + 1) * sizeof(int));
		parent->keys[parent->n] = key;
		parent->key_lines[parent->n] = key_line;
	}
	parent->vals[parent->n++] = v;
}

struct pstate {
	yaml_parser_t p;
	int max_depth;
	char *err;
};

static void
set_err(struct pstate *s, int line, const char *msg)
{
	if (s->err == NULL)
		s->err = ph_xasprintf("%d: %s", line, msg);
}

/* Parses one node starting at event ev (already taken). Returns the node or NULL on error. */
static struct ph_ynode *parse_node(struct pstate *s, yaml_event_t *ev, int depth);

static bool
next(struct pstate *s, yaml_event_t *ev)
{
	if (!yaml_parser_parse(&s->p, ev)) {
		int line = (int)s->p.problem_mark.line + 1;
		set_err(s, line, s->p.problem ? s->p.problem : "YAML syntax error");
		return false;
	}
	return true;
}

/* A scalar node from the scalar event ev (consumed). Caller frees. */
static struct ph_ynode *
parse_scalar(yaml_event_t *ev, int line)
{
	struct ph_ynode *n = node_new(PH_Y_SCALAR, line);
	n->str = ph_xstrndup((const char *)ev->data.scalar.value, ev->data.scalar.length);
	n->len = ev->data.scalar.length;
	n->quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
	yaml_event_delete(ev);
	return n;
}

/* The items of a sequence whose start event was taken, up to its end
 * event. Returns the node (caller frees) or NULL on error. */
static struct ph_ynode *
parse_seq(struct pstate *s, int line, int depth)
{
	struct ph_ynode *n = node_new(PH_Y_SEQ, line);
	for (;;) {
		yaml_event_t e;
		struct ph_ynode *c;
		if (!next(s, &e))
			break;
		if (e.type == YAML_SEQUENCE_END_EVENT) {
			yaml_event_delete(&e);
			return n;
		}
		c = parse_node(s, &e, depth + 1);
		if (c == NULL)
			break;
		push(n, NULL, 0, c);
	}
	ph_yaml_free(n);
	return NULL;
}

/* The key of a mapping entry of map from its event e (consumed), at line
 * kline. Returns the key (caller frees) or NULL when it is not a scalar or
 * is already in map. */
static char *
parse_key(struct pstate *s, const struct ph_ynode *map, yaml_event_t *e, int kline)
{
	char *key;
	if (e->type != YAML_SCALAR_EVENT) {
		set_err(s, kline, "mapping keys must be plain strings");
		yaml_event_delete(e);
		return NULL;
	}
	key = ph_xstrndup((const char *)e->data.scalar.value, e->data.scalar.length);
	yaml_event_delete(e);
	if (ph_yaml_get(map, key) != NULL) {
		char *m = ph_xasprintf("duplicate key '%s'", key);
		set_err(s, kline, m);
		free(m);
		free(key);
		return NULL;
	}
	return key;
}

/* One entry of map, starting with its key event e (consumed): the key and
 * the value node after it are added to map. Returns false on error. */
static bool
parse_entry(struct pstate *s, struct ph_ynode *map, yaml_event_t *e, int depth)
{
	int kline = (int)e->start_mark.line + 1;
	char *key = parse_key(s, map, e, kline);
	yaml_event_t ve;
	struct ph_ynode *v;
	if (key == NULL)
		return false;
	if (!next(s, &ve)) {
		free(key);
		return false;
	}
	v = parse_node(s, &ve, depth + 1);
	if (v == NULL) {
		free(key);
		return false;
	}
	push(map, key, kline, v);
	return true;
}

/* The entries of a mapping whose start event was taken, up to its end
 * event. Returns the node (caller frees) or NULL on error. */
static struct ph_ynode *
parse_map(struct pstate *s, int line, int depth)
{
	struct ph_ynode *n = node_new(PH_Y_MAP, line);
	for (;;) {
		yaml_event_t e;
		if (!next(s, &e))
			break;
		if (e.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&e);
			return n;
		}
		if (!parse_entry(s, n, &e, depth))
			break;
	}
	ph_yaml_free(n);
	return NULL;
}

static struct ph_ynode *
parse_node(struct pstate *s, yaml_event_t *ev, int depth)
{
	int line = (int)ev->start_mark.line + 1;
	if (depth > s->max_depth) {
		set_err(s, line, "nesting too deep");
		yaml_event_delete(ev);
		return NULL;
	}
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		return parse_scalar(ev, line);
	case YAML_ALIAS_EVENT:
		set_err(s, line, "YAML aliases are not supported");
		yaml_event_delete(ev);
		return NULL;
	case YAML_SEQUENCE_START_EVENT:
		yaml_event_delete(ev);
		return parse_seq(s, line, depth);
	case YAML_MAPPING_START_EVENT:
		yaml_event_delete(ev);
		return parse_map(s, line, depth);
	default:
		set_err(s, line, "unexpected YAML event");
		yaml_event_delete(ev);
		return NULL;
	}
}

struct ph_ynode *
ph_yaml_parse(const char *buf, size_t len, int max_depth, char **err)
{
	struct pstate s;
	struct ph_ynode *root = NULL;
	yaml_event_t ev;
	memset(&s, 0, sizeof s);
	s.max_depth = max_depth;
	*err = NULL;
	if (!yaml_parser_initialize(&s.p)) {
		*err = ph_xstrdup("0: cannot initialise the YAML parser");
		return NULL;
	}
	yaml_parser_set_input_string(&s.p, (const unsigned char *)buf, len);
	for (;;) {
		if (!next(&s, &ev))
			goto fail;
		yaml_event_type_t t = ev.type;
		if (t == YAML_STREAM_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		if (t == YAML_STREAM_START_EVENT || t == YAML_DOCUMENT_END_EVENT) {
			yaml_event_delete(&ev);
			continue;
		}
		if (t == YAML_DOCUMENT_START_EVENT) {
			/* yaml_event_delete zeroes the event: take the line first */
			int dline = (int)ev.start_mark.line + 1;
			yaml_event_delete(&ev);
			if (root != NULL) {
				set_err(&s, dline, "only one YAML document is allowed");
				goto fail;
			}
			yaml_event_t e;
			if (!next(&s, &e))
				goto fail;
			if (e.type == YAML_DOCUMENT_END_EVENT) {
				yaml_event_delete(&e);
				root = node_new(PH_Y_MAP, 1);
				continue;
			}
			root = parse_node(&s, &e, 1);
			if (root == NULL)
				goto fail;
			if (ph_yaml_is_null(root)) {
				/* "---" alone (or "~") is an empty document, not a null root */
				int l = root->line;
				ph_yaml_free(root);
				root = node_new(PH_Y_MAP, l);
			}
			continue;
		}
		set_err(&s, (int)ev.start_mark.line + 1, "unexpected YAML event");
		yaml_event_delete(&ev);
		goto fail;
	}
	yaml_parser_delete(&s.p);
	if (root == NULL)
		root = node_new(PH_Y_MAP, 1);
	return root;
fail:
	yaml_parser_delete(&s.p);
	ph_yaml_free(root);
	*err = s.err ? s.err : ph_xstrdup("0: YAML error");
	return NULL;
}

struct ph_ynode *
ph_yaml_get(const struct ph_ynode *map, const char *key)
{
	if (map == NULL || map->kind != PH_Y_MAP)
		return NULL;
	for (size_t i = 0; i < map->n; i++)
		if (strcmp(map->keys[i], key) == 0)
			return map->vals[i];
	return NULL;
}

bool
ph_yaml_is_null(const struct ph_ynode *n)
{
	if (n == NULL)
		return true;
	if (n->kind != PH_Y_SCALAR || n->quoted)
		return false;
	return n->len == 0 || strcmp(n->str, "~") == 0 || strcmp(n->str, "null") == 0 ||
	       strcmp(n->str, "Null") == 0 || strcmp(n->str, "NULL") == 0;
}

int
ph_yaml_bool(const struct ph_ynode *n, bool *out)
{
	static const char *const t[] = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"};
	static const char *const f[] = {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"};
	if (n == NULL || n->kind != PH_Y_SCALAR || n->quoted)
		return -1;
	for (size_t i = 0; i < PH_ARRAY_LEN(t); i++) {
		if (strcmp(n->str, t[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcmp(n->str, f[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -1;
}

static struct json_object *
scalar_to_json(const struct ph_ynode *n)
{
	bool b;
	if (n->quoted)
		return json_object_new_string_len(n->str, (int)n->len);
	if (ph_yaml_is_null(n))
		return NULL;
	if (ph_yaml_bool(n, &b) == 0)
		return json_object_new_boolean(b);
	{
		long long v;
		const char *e;
		if (ph_strtonum(n->str, INT64_MIN, INT64_MAX, &v, &e) == 0)
			return json_object_new_int64(v);
	}
	{
		char *end;
		double d = strtod(n->str, &end);
		if (end != n->str && *end == '\0' && strspn(n->str, "0123456789+-.eE") == n->len)
			return json_object_new_double(d);
	}
	return json_object_new_string_len(n->str, (int)n->len);
}

struct json_object *
ph_yaml_to_json(const struct ph_ynode *n)
{
	struct json_object *o;
	if (n == NULL)
		return NULL;
	switch (n->kind) {
	case PH_Y_SCALAR:
		return scalar_to_json(n);
	case PH_Y_SEQ:
		o = json_object_new_array();
		for (size_t i = 0; i < n->n; i++)
			json_object_array_add(o, ph_yaml_to_json(n->vals[i]));
		return o;
	case PH_Y_MAP:
		o = json_object_new_object();
		for (size_t i = 0; i < n->n; i++)
			json_object_object_add(o, n->keys[i], ph_yaml_to_json(n->vals[i]));
		return o;
	}
	return NULL;
}
