/* ph_skill_fm.c: SKILL.md frontmatter. The YAML between the "---" lines
 * becomes the `frontmatter` object of a skill entry, which clients compare
 * field by field with what they parse from the served file, so it must be
 * read the way they read it: YAML 1.2 core-schema typing (yes/no/on/off
 * are strings, 0o17 and 0x1F are integers), quoted and block scalars are
 * strings, and anything JSON cannot hold (.inf, .nan, anchors, aliases,
 * tags) is refused rather than read differently. libyaml's event API does
 * the parsing, with a depth limit and line numbers. */
#include "first.h"
#include "ph_skills.h"
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

struct fmp {
	yaml_parser_t p;
	int max_depth;
	int line0;   /* file line of the first YAML line, minus one */
	char *err;
};

static void fm_err(struct fmp *s, int line, const char *fmt, ...) PH_PRINTF(3, 4);

/* Keeps the first error as "LINE: message". */
static void
fm_err(struct fmp *s, int line, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	if (s->err != NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	s->err = ph_xasprintf("%d: %s", line, msg);
}

static bool
fm_next(struct fmp *s, yaml_event_t *ev)
{
	if (!yaml_parser_parse(&s->p, ev)) {
		fm_err(s, s->line0 + (int)s->p.problem_mark.line + 1, "%s",
		       s->p.problem ? s->p.problem : "YAML syntax error");
		return false;
	}
	return true;
}

static bool
all_in(const char *s, size_t n, const char *set)
{
	for (size_t i = 0; i < n; i++)
		if (strchr(set, s[i]) == NULL)
			return false;
	return n > 0;
}

/* ^[+-]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][+-]?[0-9]+)?$ */
static bool
is_float(const char *s)
{
	size_t i = 0, d = 0;
	if (s[i] == '+' || s[i] == '-')
		i++;
	if (s[i] == '.') {
		i++;
		while (s[i] >= '0' && s[i] <= '9')
			i++, d++;
		if (d == 0)
			return false;
	} else {
		while (s[i] >= '0' && s[i] <= '9')
			i++, d++;
		if (d == 0)
			return false;
		if (s[i] == '.') {
			i++;
			while (s[i] >= '0' && s[i] <= '9')
				i++;
		}
	}
	if (s[i] == 'e' || s[i] == 'E') {
		size_t e = 0;
		i++;
		if (s[i] == '+' || s[i] == '-')
			i++;
		while (s[i] >= '0' && s[i] <= '9')
			i++, e++;
		if (e == 0)
			return false;
	}
	return s[i] == '\0';
}

/* Types a plain scalar by the YAML 1.2 core schema. Returns 0 with *out
 * (NULL for null), or -1 for a value JSON cannot represent. */
static int
plain_scalar(const char *s, size_t n, struct json_object **out)
{
	static const char *const nulls[] = {"", "~", "null", "Null", "NULL"};
	static const char *const trues[] = {"true", "True", "TRUE"};
	static const char *const falses[] = {"false", "False", "FALSE"};
	static const char *const specials[] = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF",
					       "-.inf", "-.Inf", "-.INF", ".nan", ".NaN", ".NAN"};
	*out = NULL;
	if (strlen(s) != n) { /* a NUL inside: only a string can hold it */
		*out = json_object_new_string_len(s, (int)n);
		return 0;
	}
	for (size_t i = 0; i < PH_ARRAY_LEN(nulls); i++)
		if (strcmp(s, nulls[i]) == 0)
			return 0;
	for (size_t i = 0; i < PH_ARRAY_LEN(trues); i++) {
		if (strcmp(s, trues[i]) == 0) {
			*out = json_object_new_boolean(1);
			return 0;
		}
		if (strcmp(s, falses[i]) == 0) {
			*out = json_object_new_boolean(0);
			return 0;
		}
	}
	for (size_t i = 0; i < PH_ARRAY_LEN(specials); i++)
		if (strcmp(s, specials[i]) == 0)
			return -1;
	{
		const char *d = (s[0] == '+' || s[0] == '-') ? s + 1 : s;
		if (all_in(d, strlen(d), "0123456789")) {
			char *end;
			long long v;
			errno = 0;
			v = strtoll(s, &end, 10);
			if (errno == 0 && *end == '\0') {
				*out = json_object_new_int64(v);
				return 0;
			}
			*out = json_object_new_double(strtod(s, NULL));
			return 0;
		}
	}
	if ((s[0] == '0' && s[1] == 'o' && all_in(s + 2, n - 2, "01234567")) ||
	    (s[0] == '0' && s[1] == 'x' && all_in(s + 2, n - 2, "0123456789abcdefABCDEF"))) {
		int base = s[1] == 'o' ? 8 : 16;
		char *end;
		unsigned long long v;
		errno = 0;
		v = strtoull(s + 2, &end, base);
		if (errno != 0 || *end != '\0')
			return -1;
		if (v <= (unsigned long long)INT64_MAX)
			*out = json_object_new_int64((int64_t)v);
		else
			*out = json_object_new_double((double)v);
		return 0;
	}
	if (is_float(s)) {
		double v = strtod(s, NULL);
		if (!isfinite(v))
			return -1;
		*out = json_object_new_double(v);
		return 0;
	}
	*out = json_object_new_string_len(s, (int)n);
	return 0;
}

static bool
has_tag_or_anchor(const yaml_event_t *ev)
{
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		return ev->data.scalar.anchor != NULL ||
		       (ev->data.scalar.tag != NULL && !ev->data.scalar.plain_implicit &&
			!ev->data.scalar.quoted_implicit);
	case YAML_SEQUENCE_START_EVENT:
		return ev->data.sequence_start.anchor != NULL ||
		       (ev->data.sequence_start.tag != NULL && !ev->data.sequence_start.implicit);
	case YAML_MAPPING_START_EVENT:
		return ev->data.mapping_start.anchor != NULL ||
		       (ev->data.mapping_start.tag != NULL && !ev->data.mapping_start.implicit);
	default:
		return false;
	}
}

static int node(struct fmp *s, yaml_event_t *ev, int depth, struct json_object **out);

/* The scalar event ev (consumed) at line: quoted and block scalars are
 * strings, plain ones typed by the core schema. Returns 0 with *out (may
 * be NULL for null) or -1 after setting s->err. */
static int
fm_scalar(struct fmp *s, yaml_event_t *ev, int line, struct json_object **out)
{
	const char *v = (const char *)ev->data.scalar.value;
	size_t n = ev->data.scalar.length;
	int rc = 0;
	if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		*out = json_object_new_string_len(v, (int)n);
	else if (plain_scalar(v, n, out) != 0) {
		fm_err(s, line, "'%s' cannot be represented in JSON; quote it", v);
		rc = -1;
	}
	yaml_event_delete(ev);
	return rc;
}

/* The items of a sequence whose start event was taken, up to its end
 * event. Returns 0 with the array in *out (caller owns it) or -1 after
 * setting s->err. */
static int
fm_seq(struct fmp *s, int depth, struct json_object **out)
{
	struct json_object *a = json_object_new_array();
	for (;;) {
		yaml_event_t e;
		struct json_object *item;
		if (!fm_next(s, &e))
			break;
		if (e.type == YAML_SEQUENCE_END_EVENT) {
			yaml_event_delete(&e);
			*out = a;
			return 0;
		}
		if (node(s, &e, depth + 1, &item) != 0)
			break;
		json_object_array_add(a, item);
	}
	json_object_put(a);
	return -1;
}

/* The key of an entry of m from its event e (consumed), at line kline.
 * Keys are strings in JSON: 1 and true become "1" and "true". Returns the
 * key (caller frees) or NULL after setting s->err. */
static char *
fm_key(struct fmp *s, struct json_object *m, yaml_event_t *e, int kline)
{
	char *key;
	if (e->type != YAML_SCALAR_EVENT || has_tag_or_anchor(e)) {
		fm_err(s, kline, "frontmatter keys must be plain strings");
		yaml_event_delete(e);
		return NULL;
	}
	if (strlen((const char *)e->data.scalar.value) != e->data.scalar.length) {
		fm_err(s, kline, "a frontmatter key holds a NUL byte");
		yaml_event_delete(e);
		return NULL;
	}
	key = ph_xstrdup((const char *)e->data.scalar.value);
	yaml_event_delete(e);
	if (json_object_object_get_ex(m, key, NULL)) {
		fm_err(s, kline, "duplicate frontmatter key '%s'", key);
		free(key);
		return NULL;
	}
	return key;
}

/* The entries of a mapping whose start event was taken, up to its end
 * event. Returns 0 with the object in *out (caller owns it) or -1 after
 * setting s->err. */
static int
fm_map(struct fmp *s, int depth, struct json_object **out)
{
	struct json_object *m = json_object_new_object();
	for (;;) {
		yaml_event_t e;
		struct json_object *val;
		char *key;
		if (!fm_next(s, &e))
			break;
		if (e.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&e);
			*out = m;
			return 0;
		}
		key = fm_key(s, m, &e, s->line0 + (int)e.start_mark.line + 1);
		if (key == NULL)
			break;
		if (!fm_next(s, &e) || node(s, &e, depth + 1, &val) != 0) {
			free(key);
			break;
		}
		json_object_object_add(m, key, val);
		free(key);
	}
	json_object_put(m);
	return -1;
}

/* Converts the node that starts with ev (consumed). Returns 0 with *out
 * (may be NULL for null) or -1 after setting s->err. */
static int
node(struct fmp *s, yaml_event_t *ev, int depth, struct json_object **out)
{
	int line = s->line0 + (int)ev->start_mark.line + 1;
	*out = NULL;
	if (depth > s->max_depth) {
		fm_err(s, line, "frontmatter nesting too deep");
		yaml_event_delete(ev);
		return -1;
	}
	if (ev->type == YAML_ALIAS_EVENT || has_tag_or_anchor(ev)) {
		fm_err(s, line, "anchors, aliases and tags are not supported in frontmatter");
		yaml_event_delete(ev);
		return -1;
	}
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		return fm_scalar(s, ev, line, out);
	case YAML_SEQUENCE_START_EVENT:
		yaml_event_delete(ev);
		return fm_seq(s, depth, out);
	case YAML_MAPPING_START_EVENT:
		yaml_event_delete(ev);
		return fm_map(s, depth, out);
	default:
		fm_err(s, line, "unexpected YAML event");
		yaml_event_delete(ev);
		return -1;
	}
}

/* Parses YAML text into a JSON object. */
static struct json_object *
parse_yaml(const char *yaml, size_t len, int line0, int max_depth, char **err)
{
	struct fmp s;
	struct json_object *root = NULL;
	bool seen = false;
	memset(&s, 0, sizeof s);
	s.max_depth = max_depth;
	s.line0 = line0;
	if (!yaml_parser_initialize(&s.p)) {
		*err = ph_xstrdup("0: cannot initialise the YAML parser");
		return NULL;
	}
	yaml_parser_set_input_string(&s.p, (const unsigned char *)yaml, len);
	for (;;) {
		yaml_event_t ev;
		if (!fm_next(&s, &ev))
			goto fail;
		if (ev.type == YAML_STREAM_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		if (ev.type == YAML_STREAM_START_EVENT || ev.type == YAML_DOCUMENT_END_EVENT) {
			yaml_event_delete(&ev);
			continue;
		}
		if (ev.type == YAML_DOCUMENT_START_EVENT) {
			int line = line0 + (int)ev.start_mark.line + 1;
			yaml_event_delete(&ev);
			if (seen) {
				fm_err(&s, line, "only one YAML document is allowed in frontmatter");
				goto fail;
			}
			seen = true;
			if (!fm_next(&s, &ev))
				goto fail;
			if (ev.type == YAML_DOCUMENT_END_EVENT) {
				yaml_event_delete(&ev);
				continue;
			}
			if (ev.type != YAML_MAPPING_START_EVENT) {
				fm_err(&s, line0 + (int)ev.start_mark.line + 1,
				       "frontmatter must be a YAML mapping");
				yaml_event_delete(&ev);
				goto fail;
			}
			if (node(&s, &ev, 1, &root) != 0)
				goto fail;
			continue;
		}
		fm_err(&s, line0 + (int)ev.start_mark.line + 1, "unexpected YAML event");
		yaml_event_delete(&ev);
		goto fail;
	}
	yaml_parser_delete(&s.p);
	if (root == NULL)
		root = json_object_new_object();
	return root;
fail:
	yaml_parser_delete(&s.p);
	json_object_put(root);
	*err = s.err ? s.err : ph_xstrdup("0: invalid YAML frontmatter");
	return NULL;
}

struct json_object *
ph_skill_frontmatter(const char *text, size_t len, int max_depth, char **err)
{
	struct ph_buf b;
	const char *t, *rest, *p, *end;
	size_t n;
	struct json_object *fm = NULL;
	*err = NULL;
	/* the text clients parse: CRLF as LF, no byte order mark */
	ph_buf_init(&b);
	if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
		text += 3;
		len -= 3;
	}
	for (size_t i = 0; i < len; i++) {
		if (text[i] == '\r' && i + 1 < len && text[i + 1] == '\n')
			continue;
		ph_buf_addc(&b, text[i]);
	}
	t = b.data ? b.data : "";
	n = b.len;
	if (n < 4 || memcmp(t, "---\n", 4) != 0) {
		*err = ph_xstrdup("1: SKILL.md must begin with a \"---\" line and YAML frontmatter");
		goto out;
	}
	rest = t + 4;
	end = t + n;
	/* the closing line: "---" and blanks only */
	for (p = rest; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end, *q = p + 3;
		if (le - p >= 3 && memcmp(p, "---", 3) == 0) {
			while (q < le && (*q == ' ' || *q == '\t'))
				q++;
			if (q == le)
				break;
		}
		p = nl ? nl + 1 : end;
	}
	if (p >= end) {
		*err = ph_xstrdup("1: SKILL.md frontmatter has no closing \"---\" line");
		goto out;
	}
	if (memchr(rest, '\0', (size_t)(p - rest)) != NULL) {
		*err = ph_xstrdup("1: SKILL.md frontmatter holds a NUL byte");
		goto out;
	}
	if (!ph_utf8_valid(rest, (size_t)(p - rest))) {
		*err = ph_xstrdup("1: SKILL.md frontmatter is not valid UTF-8");
		goto out;
	}
	fm = parse_yaml(rest, (size_t)(p - rest), 1, max_depth, err);
out:
	ph_buf_free(&b);
	return fm;
}

bool
ph_skill_name_valid(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n > 64 || name[0] == '-' || name[n - 1] == '-')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (c == '-') {
			if (name[i + 1] == '-')
				return false;
		} else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) {
			return false;
		}
	}
	return true;
}

static bool
str_len_between(struct json_object *v, size_t lo, size_t hi)
{
	size_t n;
	if (!json_object_is_type(v, json_type_string))
		return false;
	n = ph_utf8_chars(json_object_get_string(v), (size_t)json_object_get_string_len(v));
	return n >= lo && n <= hi;
}

const char *
ph_skill_fm_check(struct json_object *fm)
{
	struct json_object *v;
	if (!json_object_is_type(fm, json_type_object))
		return "frontmatter must be a mapping";
	if (!json_object_object_get_ex(fm, "name", &v) || !json_object_is_type(v, json_type_string))
		return "frontmatter needs a string 'name'";
	if (!ph_skill_name_valid(json_object_get_string(v)))
		return "frontmatter 'name' must be 1-64 lowercase letters, digits and single hyphens";
	if (!json_object_object_get_ex(fm, "description", &v) ||
	    !json_object_is_type(v, json_type_string))
		return "frontmatter needs a string 'description'";
	if (!str_len_between(v, 1, 1024))
		return "frontmatter 'description' must be 1-1024 characters";
	if (json_object_object_get_ex(fm, "compatibility", &v) && !str_len_between(v, 1, 500))
		return "frontmatter 'compatibility' must be a string of 1-500 characters";
	if (json_object_object_get_ex(fm, "metadata", &v)) {
		if (!json_object_is_type(v, json_type_object))
			return "frontmatter 'metadata' must map strings to strings";
		json_object_object_foreach(v, k, mv) {
			if (!json_object_is_type(mv, json_type_string))
				return "frontmatter 'metadata' values must be strings (quote them)";
			if (strncmp(k, "io.modelcontextprotocol/", 24) == 0)
				return "frontmatter 'metadata' keys starting io.modelcontextprotocol/ are reserved";
		}
	}
	if (json_object_object_get_ex(fm, "allowed-tools", &v) &&
	    !json_object_is_type(v, json_type_string)) {
		if (!json_object_is_type(v, json_type_array))
			return "frontmatter 'allowed-tools' must be a string or a list of strings";
		for (size_t i = 0; i < json_object_array_length(v); i++)
			if (!json_object_is_type(json_object_array_get_idx(v, i), json_type_string))
				return "frontmatter 'allowed-tools' must be a string or a list of strings";
	}
	return NULL;
}
