/* ph_json.c: strict JSON parsing and member access (ph_json.h). */
#include "first.h"
#include "ph_json.h"
#include "ph_mime.h"
#include <string.h>

/* json-c's strict mode still accepts two things that are not JSON: raw
 * control characters inside strings (RFC 8259 §7) and the literals NaN,
 * Infinity and -Infinity (§6), which it would later print back as invalid
 * JSON. Outside strings valid JSON has no letters but those of true, false,
 * null and exponents. Returns false when s has either. */
static bool
text_clean(const char *s, size_t len)
{
	bool in_str = false, esc = false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (in_str) {
			if (esc)
				esc = false;
			else if (c == '\\')
				esc = true;
			else if (c == '"')
				in_str = false;
			else if (c < 0x20)
				return false;
		} else if (c == '"') {
			in_str = true;
		} else if (((c | 0x20) >= 'a' && (c | 0x20) <= 'z') && strchr("truefalsnE", c) == NULL) {
			return false;
		}
	}
	return true;
}

/* The tokener of the last parse, kept for the next one of the same depth
 * (a request's parse no longer allocates its stack and buffer); a process
 * parses one document at a time. */
static struct json_tokener *kept_tok;
static int kept_depth;

static struct json_tokener *
tokener(int depth)
{
	if (kept_tok != NULL && kept_depth == depth) {
		json_tokener_reset(kept_tok);
		return kept_tok;
	}
	if (kept_tok != NULL)
		json_tokener_free(kept_tok);
	kept_tok = json_tokener_new_ex(depth);
	kept_depth = depth;
	if (kept_tok != NULL)
		json_tokener_set_flags(kept_tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	return kept_tok;
}

bool
ph_json_parse(const char *s, size_t len, int depth, struct json_object **out)
{
	struct json_tokener *tok;
	struct json_object *o;
	enum json_tokener_error jerr;
	size_t end;
	*out = NULL;
	if (s == NULL || len > INT32_MAX || !text_clean(s, len))
		return false;
	tok = tokener(depth);
	if (tok == NULL)
		return false;
	o = json_tokener_parse_ex(tok, s, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	if (o == NULL && jerr == json_tokener_continue) {
		/* the tokener cannot tell "1" from the start of "12": a NUL marks
		 * the end of the input, so a bare number completes and a document
		 * cut short fails */
		o = json_tokener_parse_ex(tok, "", 1);
		jerr = json_tokener_get_error(tok);
		end = len;
	}
	json_tokener_reset(tok); /* kept: nothing of this document stays in it */
	if (jerr != json_tokener_success) {
		json_object_put(o);
		return false;
	}
	for (; end < len; end++) {
		char ch = s[end];
		if (ch != ' ' && ch != '\t' && ch != '\r' && ch != '\n') {
			json_object_put(o);
			return false;
		}
	}
	*out = o;
	return true;
}

const char *
ph_json_text(struct json_object *o, size_t *len)
{
	return json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
						 len);
}

struct json_object *
ph_jget(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;
	if (o && json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, &v))
		return v;
	return NULL;
}

const char *
ph_jstr(struct json_object *o, const char *key)
{
	struct json_object *v = ph_jget(o, key);
	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

bool
ph_jstr_nul(struct json_object *v)
{
	return json_object_is_type(v, json_type_string) &&
	       memchr(json_object_get_string(v), '\0', (size_t)json_object_get_string_len(v)) != NULL;
}

/* Skips the string whose body starts at s[*i] (after the opening quote),
 * leaving *i after the closing quote. Returns true when it holds \u0000. */
static bool
skip_string(const char *s, size_t len, size_t *i)
{
	bool nul = false;
	while (*i < len && s[*i] != '"') {
		if (s[*i] == '\\') {
			if (len - *i > 5 && memcmp(s + *i + 1, "u0000", 5) == 0)
				nul = true;
			(*i)++;
		}
		(*i)++;
	}
	(*i)++;
	return nul;
}

bool
ph_json_key_nul(const char *s, size_t len)
{
	size_t i = 0;
	while (i < len) {
		size_t j;
		if (s[i++] != '"' || !skip_string(s, len, &i))
			continue;
		for (j = i; j < len && (s[j] == ' ' || s[j] == '\t' || s[j] == '\r' || s[j] == '\n'); j++)
			;
		if (j < len && s[j] == ':')
			return true;
	}
	return false;
}

/* ph_utf8_valid over s, which may hold U+0000: each NUL-free stretch on
 * its own. */
static bool
utf8_with_nul(const char *s, size_t len)
{
	while (len > 0) {
		const char *nul = memchr(s, '\0', len);
		size_t n = nul ? (size_t)(nul - s) : len;
		if (!ph_utf8_valid(s, n))
			return false;
		if (nul == NULL)
			break;
		s += n + 1;
		len -= n + 1;
	}
	return true;
}

bool
ph_json_utf8_valid(struct json_object *o)
{
	switch (json_object_get_type(o)) {
	case json_type_string:
		return utf8_with_nul(json_object_get_string(o), (size_t)json_object_get_string_len(o));
	case json_type_array:
		for (size_t i = 0, n = json_object_array_length(o); i < n; i++)
			if (!ph_json_utf8_valid(json_object_array_get_idx(o, i)))
				return false;
		return true;
	case json_type_object: {
		json_object_object_foreach(o, k, v) {
			if (!ph_utf8_valid(k, strlen(k)) || !ph_json_utf8_valid(v))
				return false;
		}
		return true;
	}
	default:
		return true;
	}
}
