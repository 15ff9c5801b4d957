/* test_docs.c: every key of the configuration table (ph_conf_dump_keys) is
 * documented in the sample conf/phantom.yaml and in man/phantom.yaml.5, so a
 * feature that adds a key cannot forget its documentation.
 *
 * The conventions checked:
 *  - conf/phantom.yaml holds each key either set, to its default or to ~, or
 *    as a commented example "#key: value" (no blank after the '#') at the
 *    indentation the key would have; doc comments have a blank after '#'.
 *  - man/phantom.yaml.5 lists each key as ".It Ic dotted.name ..."; a section
 *    may instead be a ".Ss name" heading. A key of a feature section (a
 *    "custom" row such as auth, whose keys are rows of their own) may be
 *    listed by its last name, ".It Ic mode", in that section's part of the
 *    page: from its ".Ss" heading (which may name several sections, "a, b")
 *    or its ".It Ic auth" line to the next ".Ss" or ".Sh".
 *  - a key of a feature section set in the sample is an example of the
 *    feature, so it need not be set to its default.
 *  - the sample is a valid configuration (what phantom-fcgi -t checks). */
#include "first.h"
#include "ph_conf.h"
#include "ph_build.h"
#include "ph_core.h"
#include "ph_server.h"
#include "ph_util.h"
#include "ph_yaml.h"
#include "tap.h"
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef TOP_SRCDIR
#define TOP_SRCDIR "."
#endif

struct key {
	char *name, *type, *def;
};

/* The key table as ph_conf_dump_keys prints it: NAME TYPE BOUNDS DEFAULT ... */
static size_t
load_keys(struct key **out)
{
	char *text = NULL, *line, *save = NULL;
	size_t len = 0, n = 0;
	FILE *f = open_memstream(&text, &len);
	struct key *k = NULL;
	ph_conf_dump_keys(f);
	fclose(f);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *fields[4] = {NULL, NULL, NULL, NULL}, *fs = NULL, *p = line;
		for (int i = 0; i < 4; i++) {
			fields[i] = strtok_r(i == 0 ? p : NULL, "\t", &fs);
			if (fields[i] == NULL)
				break;
		}
		if (fields[3] == NULL)
			continue;
		k = ph_xrealloc(k, (n + 1) * sizeof *k);
		k[n].name = ph_xstrdup(fields[0]);
		k[n].type = ph_xstrdup(fields[1]);
		k[n].def = ph_xstrdup(fields[3]);
		n++;
	}
	free(text);
	*out = k;
	return n;
}

static char *
read_doc(const char *rel, char **path_out)
{
	const char *top = getenv("top_srcdir");
	char *path = ph_xasprintf("%s/%s", top && *top ? top : TOP_SRCDIR, rel), *buf = NULL;
	size_t len;
	if (ph_read_file(path, 1 << 22, &buf, &len) != 0)
		buf = NULL;
	*path_out = path;
	return buf;
}

/* The sample with "#key: value" lines turned into "key: value". Caller frees. */
static char *
uncomment(const char *text)
{
	struct ph_buf b;
	const char *p = text;
	ph_buf_init(&b);
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p), ind = strspn(p, " ");
		const char *after = p + ind + 1;
		if (ind < len && p[ind] == '#' &&
		    ((*after >= 'a' && *after <= 'z') || (*after >= 'A' && *after <= 'Z') || *after == '_') &&
		    memchr(after, ':', len - ind - 1) != NULL) {
			ph_buf_add(&b, p, ind);
			ph_buf_add(&b, after, len - ind - 1);
		} else {
			ph_buf_add(&b, p, len);
		}
		ph_buf_addc(&b, '\n');
		p += len + (eol ? 1 : 0);
	}
	return ph_buf_steal(&b);
}

/* The node at a dotted path in a map tree, or NULL; *found tells a key
 * written without a value from an absent one. */
static const struct ph_ynode *
lookup(const struct ph_ynode *root, const char *dotted, bool *found)
{
	char *copy = ph_xstrdup(dotted), *part, *save = NULL;
	const struct ph_ynode *n = root;
	bool all = true;
	for (part = strtok_r(copy, ".", &save); part; part = strtok_r(NULL, ".", &save)) {
		const struct ph_ynode *next = NULL;
		if (n->kind != PH_Y_MAP) {
			all = false;
			break;
		}
		for (size_t i = 0; i < n->n; i++)
			if (strcmp(n->keys[i], part) == 0)
				next = n->vals[i];
		if (next == NULL) {
			all = false;
			break;
		}
		n = next;
	}
	free(copy);
	*found = all;
	return all ? n : NULL;
}

static bool
plain_type(const char *t)
{
	return strcmp(t, "string") == 0 || strcmp(t, "integer") == 0 || strcmp(t, "boolean") == 0 ||
	       strcmp(t, "enum") == 0 || strcmp(t, "list") == 0;
}

/* True when node, set in the sample, says the key's default. */
static bool
is_default(const struct key *k, const struct ph_ynode *node, char *why, size_t wsz)
{
	char *err = NULL;
	struct ph_ynode *d;
	struct json_object *a, *b;
	bool same;
	if (ph_yaml_is_null(node))
		return true;
	if (strcmp(k->def, "-") == 0) {
		snprintf(why, wsz, "has no default: write it as ~ or as a commented '#%s:' example",
			 strrchr(k->name, '.') ? strrchr(k->name, '.') + 1 : k->name);
		return false;
	}
	d = ph_yaml_parse(k->def, strlen(k->def), 4, &err);
	if (d == NULL) {
		snprintf(why, wsz, "default '%s' does not parse: %s", k->def, err);
		free(err);
		return false;
	}
	a = ph_yaml_to_json(d);
	b = ph_yaml_to_json(node);
	same = json_object_equal(a, b);
	if (!same)
		snprintf(why, wsz, "is set to %s, its default is %s (set examples as '#key: value')",
			 json_object_to_json_string(b), json_object_to_json_string(a));
	json_object_put(a);
	json_object_put(b);
	ph_yaml_free(d);
	return same;
}

/* True when line p (up to its newline) is ".Ss" naming sec, alone or in a
 * list "a, b, c". */
static bool
heading_names(const char *p, const char *sec)
{
	size_t sl = strlen(sec);
	const char *eol;
	if (strncmp(p, ".Ss ", 4) != 0)
		return false;
	p += 4;
	eol = strchr(p, '\n');
	if (eol == NULL)
		eol = p + strlen(p);
	while (p < eol) {
		size_t l = strcspn(p, ",\n");
		if (l == sl && strncmp(p, sec, sl) == 0)
			return true;
		p += l;
		p += strspn(p, ", ");
	}
	return false;
}

/* True when the man page lists leaf as ".It Ic LEAF" inside the part about
 * section sec (see the top of this file). */
static bool
man_has_in_section(const char *man, const char *sec, const char *leaf)
{
	size_t sl = strlen(sec), ll = strlen(leaf);
	bool inside = false;
	for (const char *p = man; p; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (strncmp(p, ".Ss ", 4) == 0 || strncmp(p, ".Sh ", 4) == 0)
			inside = heading_names(p, sec);
		else if (strncmp(p, ".It Ic ", 7) == 0 && strncmp(p + 7, sec, sl) == 0 &&
			 (p[7 + sl] == ' ' || p[7 + sl] == '\n'))
			inside = true;
		else if (inside && strncmp(p, ".It Ic ", 7) == 0 && strncmp(p + 7, leaf, ll) == 0 &&
			 (p[7 + ll] == ' ' || p[7 + ll] == '\n' || p[7 + ll] == '\0'))
			return true;
	}
	return false;
}

/* True when the man page has a line ".It Ic NAME" (or ".Ss NAME" for a section). */
static bool
man_has(const char *man, const char *name, bool section)
{
	size_t nl = strlen(name);
	for (const char *p = man; p; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (strncmp(p, ".It Ic ", 7) == 0 && strncmp(p + 7, name, nl) == 0 &&
		    (p[7 + nl] == ' ' || p[7 + nl] == '\n' || p[7 + nl] == '\0'))
			return true;
		if (section && strncmp(p, ".Ss ", 4) == 0 && strncmp(p + 4, name, nl) == 0 &&
		    (p[4 + nl] == '\n' || p[4 + nl] == '\0'))
			return true;
	}
	return false;
}

int
main(void)
{
	struct key *keys = NULL;
	size_t nkeys = load_keys(&keys);
	char *sample_path, *man_path, *err = NULL;
	char *sample = read_doc("conf/phantom.yaml", &sample_path);
	char *man = read_doc("man/phantom.yaml.5", &man_path);
	char *open = NULL;
	struct ph_ynode *active = NULL, *all = NULL;

	ok(nkeys > 10, "the key table has %zu keys", nkeys);
	ok(sample != NULL, "%s is readable", sample_path);
	ok(man != NULL, "%s is readable", man_path);
	if (sample == NULL || man == NULL)
		goto out;

	active = ph_yaml_parse(sample, strlen(sample), 32, &err);
	ok(active != NULL, "the sample is YAML (%s)", err ? err : "ok");
	free(err);
	err = NULL;
	open = uncomment(sample);
	all = ph_yaml_parse(open, strlen(open), 32, &err);
	ok(all != NULL, "the sample with its '#key:' examples uncommented is YAML (%s)", err ? err : "ok");
	free(err);
	err = NULL;
	if (active == NULL || all == NULL)
		goto out;

	for (size_t i = 0; i < nkeys; i++) {
		const struct key *k = &keys[i];
		bool found = false, section = strcmp(k->type, "section") == 0, in_feature = false;
		const struct ph_ynode *n = lookup(active, k->name, &found);
		const char *dot = strrchr(k->name, '.');
		char *parent = dot ? ph_xstrndup(k->name, (size_t)(dot - k->name)) : NULL;
		/* a key of a feature section: its parent row, or the row of a
		 * section above it (auth.oauth.introspection.endpoint), is "custom" */
		while (parent != NULL && !in_feature) {
			char *up = strrchr(parent, '.');
			for (size_t j = 0; j < nkeys; j++)
				if (strcmp(keys[j].name, parent) == 0 && strcmp(keys[j].type, "custom") == 0)
					in_feature = true;
			if (!in_feature && up == NULL) {
				free(parent);
				parent = NULL;
			} else if (!in_feature) {
				*up = '\0';
			}
		}
		if (found) {
			char why[512] = "";
			bool good = in_feature || !plain_type(k->type) || is_default(k, n, why, sizeof why);
			ok(good, "conf/phantom.yaml: %s is set to its default%s%s", k->name, why[0] ? ": " : "",
			   why);
		} else {
			lookup(all, k->name, &found);
			ok(found, "conf/phantom.yaml documents %s (set, or as a '#%s:' example)", k->name,
			   strrchr(k->name, '.') ? strrchr(k->name, '.') + 1 : k->name);
		}
		if (in_feature)
			ok(man_has(man, k->name, false) || man_has_in_section(man, parent, dot + 1),
			   "man/phantom.yaml.5 documents %s (\".It Ic %s\" in the part about %s)", k->name,
			   dot + 1, parent);
		else
			ok(man_has(man, k->name, section), "man/phantom.yaml.5 documents %s (\".It Ic %s\"%s)",
			   k->name, k->name, section ? " or \".Ss\"" : "");
		free(parent);
	}

	/* the sample is a valid configuration: what phantom-fcgi -t checks */
	{
		struct ph_conf_problems probs = {0};
		struct ph_config *c = ph_conf_load(sample_path, &probs);
		struct ph_server *s = c ? ph_server_new(c, &probs) : NULL;
		ok(s != NULL && probs.n == 0, "the sample loads as a configuration");
		for (size_t i = 0; i < probs.n; i++)
			printf("#   %s\n", probs.v[i]);
		ph_conf_problems_free(&probs);
		ph_server_free(s);
	}
	{
		const char *ph = getenv("PHANTOM");
		if (ph && *ph && strchr(ph, '\'') == NULL && strchr(sample_path, '\'') == NULL) {
			char *cmd = ph_xasprintf("'%s' -t -c '%s' 1>&2", ph, sample_path);
			ok(system(cmd) == 0, "phantom-fcgi -t -c conf/phantom.yaml exits 0");
			free(cmd);
		} else {
			ok(1, "phantom-fcgi -t -c conf/phantom.yaml # SKIP PHANTOM is not set");
		}
	}
out:
	for (size_t i = 0; i < nkeys; i++) {
		free(keys[i].name);
		free(keys[i].type);
		free(keys[i].def);
	}
	free(keys);
	ph_yaml_free(active);
	ph_yaml_free(all);
	free(open);
	free(sample);
	free(man);
	free(sample_path);
	free(man_path);
	return tap_done();
}
