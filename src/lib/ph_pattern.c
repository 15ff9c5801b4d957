/* ph_pattern.c: JSON Schema patterns (ECMA-262 regular expressions)
 * translated to POSIX extended ones and compiled (ph_pattern.h). */
#include "first.h"
#include "ph_pattern.h"
#include "ph_util.h"
#include <stdlib.h>
#include <string.h>

/* Writes the POSIX form of the escape "\e" met outside a bracket
 * expression. Returns 0, or -1 with a reason in *why. */
static int
pattern_escape(char e, struct ph_buf *out, const char **why)
{
	switch (e) {
	case 'd': ph_buf_adds(out, "[0-9]"); break;
	case 'D': ph_buf_adds(out, "[^0-9]"); break;
	case 'w': ph_buf_adds(out, "[A-Za-z0-9_]"); break;
	case 'W': ph_buf_adds(out, "[^A-Za-z0-9_]"); break;
	case 's': ph_buf_adds(out, "[[:space:]]"); break;
	case 'S': ph_buf_adds(out, "[^[:space:]]"); break;
	case 't': ph_buf_addc(out, '\t'); break;
	case 'n': ph_buf_addc(out, '\n'); break;
	case 'r': ph_buf_addc(out, '\r'); break;
	case '\0': *why = "ends with a backslash"; return -1;
	default:
		if (strchr(".\\/-[](){}*+?|^$", e) == NULL) {
			*why = "uses an escape POSIX regular expressions do not have";
			return -1;
		}
		if (e == '/' || e == '-')
			ph_buf_addc(out, e);
		else {
			ph_buf_addc(out, '\\');
			ph_buf_addc(out, e);
		}
	}
	return 0;
}

/* A bracket expression being collected: its members in set (owned), and
 * the characters POSIX wants in fixed places kept aside as flags. */
struct bracket {
	struct ph_buf set;
	bool neg, rbr, dash, caret;
};

/* Adds the escape "\e" met inside a bracket expression to b. Returns 0, or
 * -1 with a reason in *why. */
static int
bracket_escape(struct bracket *b, char e, const char **why)
{
	switch (e) {
	case 'd': ph_buf_adds(&b->set, "0-9"); break;
	case 'w': ph_buf_adds(&b->set, "A-Za-z0-9_"); break;
	case 's': ph_buf_adds(&b->set, "[:space:]"); break;
	case 't': ph_buf_addc(&b->set, '\t'); break;
	case 'n': ph_buf_addc(&b->set, '\n'); break;
	case 'r': ph_buf_addc(&b->set, '\r'); break;
	case ']': b->rbr = true; break;
	case '-': b->dash = true; break;
	case '^': b->caret = true; break;
	case '\\': ph_buf_addc(&b->set, '\\'); break;
	case '\0': *why = "ends with a backslash"; return -1;
	default:
		if (strchr("./[(){}*+?|$", e) == NULL) {
			*why = "uses an escape POSIX bracket expressions do not have";
			return -1;
		}
		ph_buf_addc(&b->set, e);
	}
	return 0;
}

/* Collects into b the bracket expression that opens at p[i]. Returns 0
 * with *end the index of its closing ']', or -1 with a reason in *why. */
static int
bracket_collect(const char *p, size_t i, struct bracket *b, size_t *end, const char **why)
{
	size_t j = i + 1, first;
	if (p[j] == '^') {
		b->neg = true;
		j++;
	}
	first = j; /* a '-' here is a member, as is one before the ']' */
	if (p[j] == ']') {
		b->rbr = true;
		j++;
	}
	for (; p[j] && p[j] != ']'; j++) {
		char c = p[j];
		if (c == '[' && p[j + 1] == ':') {
			const char *tail = strstr(p + j, ":]");
			if (tail == NULL) {
				*why = "has an unterminated character class";
				return -1;
			}
			ph_buf_add(&b->set, p + j, (size_t)(tail + 2 - (p + j)));
			j = (size_t)(tail + 1 - p);
		} else if (c == '\\') {
			if (bracket_escape(b, p[++j], why) != 0)
				return -1;
		} else if (c == '-' && (p[j + 1] == ']' || j == first)) {
			b->dash = true;
		} else if (c == '^') {
			b->caret = true;
		} else {
			ph_buf_addc(&b->set, c);
		}
	}
	if (p[j] != ']') {
		*why = "has an unterminated bracket expression";
		return -1;
	}
	*end = j;
	return 0;
}

/* Writes the collected b the way POSIX wants it: ']' first, '-' last, '^'
 * not first; a set of a lone '^' becomes an escaped '^'. */
static void
bracket_write(const struct bracket *b, struct ph_buf *out)
{
	if (!b->neg && !b->rbr && !b->dash && b->set.len == 0 && b->caret) {
		ph_buf_adds(out, "\\^");
		return;
	}
	ph_buf_addc(out, '[');
	if (b->neg)
		ph_buf_addc(out, '^');
	if (b->rbr)
		ph_buf_addc(out, ']');
	if (b->set.len)
		ph_buf_add(out, b->set.data, b->set.len);
	if (b->caret)
		ph_buf_addc(out, '^');
	if (b->dash)
		ph_buf_addc(out, '-');
	ph_buf_addc(out, ']');
}

/* Translates the bracket expression that opens at p[i]. Returns 0 with *end
 * the index of its closing ']', or -1 with a reason in *why. */
static int
pattern_bracket(const char *p, size_t i, struct ph_buf *out, size_t *end, const char **why)
{
	struct bracket b = {.neg = false};
	int rc;
	ph_buf_init(&b.set);
	rc = bracket_collect(p, i, &b, end, why);
	if (rc == 0)
		bracket_write(&b, out);
	ph_buf_free(&b.set);
	return rc;
}

/* ECMA-262 patterns (what JSON Schema uses) are turned into POSIX extended
 * regular expressions: \d \w \s and their negations, \t \n \r, escaped
 * punctuation and bracket expressions are translated; anything POSIX cannot
 * express (lookaround, backreferences, lazy quantifiers) is refused. Returns
 * 0 with the translation in out, or -1 with a reason in *why. */
static int
translate_pattern(const char *p, struct ph_buf *out, const char **why)
{
	for (size_t i = 0; p[i]; i++) {
		char ch = p[i];
		if (ch == '\\') {
			if (pattern_escape(p[++i], out, why) != 0)
				return -1;
		} else if (ch == '[') {
			if (pattern_bracket(p, i, out, &i, why) != 0)
				return -1;
		} else if (ch == '(' && p[i + 1] == '?') {
			*why = "uses a group construct POSIX regular expressions do not have";
			return -1;
		} else if ((ch == '*' || ch == '+' || ch == '?' || ch == '}') && p[i + 1] == '?') {
			*why = "uses a lazy quantifier POSIX regular expressions do not have";
			return -1;
		} else {
			ph_buf_addc(out, ch);
		}
	}
	return 0;
}

int
ph_pattern_compile(const char *src, regex_t *re, const char **why)
{
	struct ph_buf b;
	int rc = 0;
	ph_buf_init(&b);
	if (translate_pattern(src, &b, why) != 0 ||
	    regcomp(re, b.data ? b.data : "", REG_EXTENDED | REG_NOSUB) != 0)
		rc = -1;
	ph_buf_free(&b);
	return rc;
}
