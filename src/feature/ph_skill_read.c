/* ph_skill_read.c: the files of a skill as requests read them: opened
 * below the skill's directory only (ph_fs_open_beneath), bounded by
 * skills.max_bytes, templates rendered, and digested. What a file served
 * last (its identity, digest, template source or frontmatter) is kept per
 * worker and reused until a stat() shows the file changed. */
#include "first.h"
#include "ph_fs.h"
#include "ph_log.h"
#include "ph_skills.h"
#include <errno.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

unsigned long ph_skills_hash_count;

/* Reads a regular file opened as fd (closed here) up to max bytes. */
static int
read_fd(int fd, size_t max, struct ph_buf *out, struct stat *st)
{
	char chunk[16384];
	if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof chunk);
		if (n < 0) {
			int e = errno;
			if (e == EINTR)
				continue;
			close(fd);
			errno = e;
			return -1;
		}
		if (n == 0)
			break;
		if (out->len + (size_t)n > max) {
			close(fd);
			errno = EFBIG;
			return -1;
		}
		ph_buf_add(out, chunk, (size_t)n);
	}
	close(fd);
	return 0;
}

static int
read_file(const struct ph_skills_conf *sc, const struct ph_skill *owner,
	  const struct ph_skill_file *f, struct ph_buf *out, struct stat *st)
{
	int fd = ph_fs_open_beneath(owner->dir, f->disk_rel);
	if (fd < 0)
		return -1;
	return read_fd(fd, (size_t)sc->max_bytes, out, st);
}

static bool
same_file(const struct ph_fcache *c, const struct stat *st)
{
	return c->valid && c->dev == st->st_dev && c->ino == st->st_ino && c->size == st->st_size &&
	       c->mtim.tv_sec == st->st_mtim.tv_sec && c->mtim.tv_nsec == st->st_mtim.tv_nsec &&
	       c->ctim.tv_sec == st->st_ctim.tv_sec && c->ctim.tv_nsec == st->st_ctim.tv_nsec;
}

/* Brings f's cache up to date with the file on disk: the digest of a static
 * file, the source of a template, the frontmatter of SKILL.md. A stat()
 * decides whether anything must be read. Returns 0, or -1 with errno
 * (EINVAL: SKILL.md no longer has valid frontmatter). */
int
ph_skill_refresh(const struct ph_skills_conf *sc, const struct ph_skill *owner,
		 struct ph_skill_file *f)
{
	struct ph_fcache *c = &f->c;
	struct stat st;
	struct ph_buf b;
	if (sc->digest_cache && stat(f->disk, &st) == 0 && same_file(c, &st))
		return 0;
	free(c->src);
	c->src = NULL;
	json_object_put(c->fm);
	c->fm = NULL;
	c->valid = false;
	ph_buf_init(&b);
	if (read_file(sc, owner, f, &b, &st) != 0) {
		int e = errno;
		ph_buf_free(&b);
		errno = e;
		return -1;
	}
	if ((off_t)b.len != st.st_size) {
		/* it changed while we read: serve nothing stale */
		ph_buf_free(&b);
		errno = EAGAIN;
		return -1;
	}
	if (f->skill_md) {
		char *err = NULL;
		const char *why = NULL;
		struct json_object *fm = ph_skill_frontmatter(b.data ? b.data : "", b.len, sc->yaml_depth, &err);
		if (fm == NULL || (why = ph_skill_fm_check(fm)) != NULL ||
		    strcmp(json_object_get_string(json_object_object_get(fm, "name")),
			   owner->segs[owner->nsegs - 1]) != 0) {
			ph_log("error", "skill '%s': %s: %s", owner->path, f->disk,
			       err ? err : why ? why : "frontmatter name differs from the path");
			free(err);
			json_object_put(fm);
			ph_buf_free(&b);
			errno = EINVAL;
			return -1;
		}
		c->fm = fm;
	}
	if (f->tmpl) {
		c->srclen = b.len;
		c->src = ph_buf_steal(&b);
	} else {
		crypto_hash_sha256(c->digest, (const unsigned char *)(b.data ? b.data : ""), b.len);
		ph_skills_hash_count++;
	}
	ph_buf_free(&b);
	c->dev = st.st_dev;
	c->ino = st.st_ino;
	c->size = st.st_size;
	c->mtim = st.st_mtim;
	c->ctim = st.st_ctim;
	c->valid = true;
	return 0;
}

static char **
param_names(const struct ph_skill *k, char **buf, size_t cap)
{
	for (size_t i = 0; i < k->nparams && i < cap; i++)
		buf[i] = k->params[i].name;
	return buf;
}

int
ph_skills_file_bytes(const struct ph_skills_conf *sc, const struct ph_skill *owner,
		     struct ph_skill_file *f, char *const *vals, const char *principal,
		     struct json_object *assigns, struct ph_buf *out)
{
	struct stat st;
	if (f->tmpl) {
		char *pn[PH_SKILL_MAX_SEGS];
		if (ph_skill_refresh(sc, owner, f) != 0)
			return -1;
		ph_skill_tmpl_render(out, f->c.src, f->c.srclen, param_names(owner, pn, PH_SKILL_MAX_SEGS),
				     vals, owner->nparams, principal, assigns);
		return 0;
	}
	return read_file(sc, owner, f, out, &st);
}

int
ph_skills_file_digest(const struct ph_skills_conf *sc, const struct ph_skill *owner,
		      struct ph_skill_file *f, char *const *vals, const char *principal,
		      struct json_object *assigns, unsigned char digest[32], size_t *size)
{
	if (ph_skill_refresh(sc, owner, f) != 0)
		return -1;
	if (f->tmpl) {
		struct ph_buf b;
		char *pn[PH_SKILL_MAX_SEGS];
		ph_buf_init(&b);
		ph_skill_tmpl_render(&b, f->c.src, f->c.srclen, param_names(owner, pn, PH_SKILL_MAX_SEGS),
				     vals, owner->nparams, principal, assigns);
		crypto_hash_sha256(digest, (const unsigned char *)(b.data ? b.data : ""), b.len);
		ph_skills_hash_count++;
		*size = b.len;
		ph_buf_free(&b);
		return 0;
	}
	memcpy(digest, f->c.digest, 32);
	*size = (size_t)f->c.size;
	return 0;
}
