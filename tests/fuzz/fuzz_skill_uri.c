/* fuzz_skill_uri.c: libFuzzer harness for the skill:// URI resolver: the
 * canonical split (ph_skill_uri_split), route matching (ph_skills_match)
 * and the file lookup (ph_skills_tree_find) against a small skill tree
 * loaded through the production loader at start.
 *
 * Invariants checked (abort on violation): a URI that splits re-encodes to
 * exactly itself (one spelling per file); no decoded segment is empty, ".",
 * ".." or holds '/' or NUL; a file found lies in the matched skill's tree.
 *
 * Build (from the source tree, after ./configure in build/):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -DHAVE_CONFIG_H -Ibuild -Isrc \
 *     $(pkg-config --cflags json-c yaml-0.1 libsodium fcgi) tests/fuzz/fuzz_skill_uri.c \
 *     src/ph_*.c $(pkg-config --libs json-c yaml-0.1 libsodium fcgi) \
 *     -o fuzz_skill_uri
 *   ./fuzz_skill_uri tests/fuzz/corpus/skill_uri
 */
#include "first.h"
#include "ph_conf.h"
#include "ph_skills.h"
#include "ph_util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct ph_config *conf;
static char dir[] = "/tmp/fuzz-skills-XXXXXX";

/* The tree is made at start and removed at exit. */
static void
cleanup(void)
{
	char *cmd = ph_xasprintf("rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	free(cmd);
}

static void
put(const char *dir, const char *rel, const char *text)
{
	char *p = ph_xasprintf("%s/%s", dir, rel), *d = ph_dirname(p);
	char *cmd = ph_xasprintf("mkdir -p '%s'", d);
	FILE *f;
	if (system(cmd) != 0 || (f = fopen(p, "w")) == NULL)
		abort();
	fputs(text, f);
	fclose(f);
	free(cmd);
	free(d);
	free(p);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char manifest[] =
		"skills:\n"
		"  - {path: git-workflow, dir: g}\n"
		"  - {path: acme/billing/refunds, dir: r}\n"
		"  - {path: acme/billing/refunds/partial-refunds, dir: r/partial-refunds}\n"
		"  - {path: studies/:id/study-review, dir: s, params: {id: {pattern: \"[^/]+\"}}}\n"
		"  - {path: studies/featured/study-review, dir: f}\n";
	struct ph_conf_problems probs = {0};
	const char *yaml = "skills: {manifest: manifest.yaml}\n";
	(void)argc;
	(void)argv;
	if (mkdtemp(dir) == NULL)
		abort();
	atexit(cleanup);
	put(dir, "manifest.yaml", manifest);
	put(dir, "g/SKILL.md", "---\nname: git-workflow\ndescription: d\n---\n");
	put(dir, "g/my file.md", "x\n");
	put(dir, "g/sub/caf\xC3\xA9.md", "x\n");
	put(dir, "r/SKILL.md", "---\nname: refunds\ndescription: d\n---\n");
	put(dir, "r/examples/email.md", "x\n");
	put(dir, "r/partial-refunds/SKILL.md", "---\nname: partial-refunds\ndescription: d\n---\n");
	put(dir, "s/SKILL.md.tmpl", "---\nname: study-review\ndescription: d\n---\n{{id}}\n");
	put(dir, "f/SKILL.md", "---\nname: study-review\ndescription: featured\n---\n");
	conf = ph_conf_load_buf("fuzz.yaml", dir, yaml, strlen(yaml), &probs);
	for (size_t i = 0; i < probs.n; i++)
		fprintf(stderr, "%s\n", probs.v[i]);
	if (conf == NULL || conf->skills == NULL)
		abort();
	ph_conf_problems_free(&probs);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char **segs = NULL;
	char *uri = ph_xstrndup((const char *)data, size);
	int n = ph_skill_uri_split(uri, size, &segs);
	if (n >= 0) {
		struct ph_buf b;
		size_t used = 0;
		long m;
		ph_buf_init(&b);
		ph_buf_adds(&b, "skill://");
		for (int i = 0; i < n; i++) {
			size_t l = strlen(segs[i]);
			if (l == 0 || strcmp(segs[i], ".") == 0 || strcmp(segs[i], "..") == 0 ||
			    strchr(segs[i], '/') != NULL)
				abort();
			if (i)
				ph_buf_addc(&b, '/');
			ph_skill_uri_encode(&b, segs[i], l);
		}
		if (b.len != size || memcmp(b.data, data, size) != 0)
			abort(); /* two spellings of one URI */
		ph_buf_free(&b);
		m = ph_skills_match(conf->skills, segs, (size_t)n, &used);
		if (m >= 0) {
			const struct ph_skill *k = &conf->skills->skills[m];
			struct ph_buf rel;
			const struct ph_tree_ent *t;
			if (used != k->nsegs || used > (size_t)n)
				abort();
			ph_buf_init(&rel);
			for (int i = (int)used; i < n; i++) {
				if (i > (int)used)
					ph_buf_addc(&rel, '/');
				ph_buf_adds(&rel, segs[i]);
			}
			t = ph_skills_tree_find(k, rel.data ? rel.data : "");
			if (t != NULL && (t < k->tree || t >= k->tree + k->ntree))
				abort();
			ph_buf_free(&rel);
		}
		ph_skill_segs_free(segs, (size_t)n);
	} else if (segs != NULL) {
		abort();
	}
	free(uri);
	return 0;
}
