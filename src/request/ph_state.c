/* ph_state.c: sealing and opening requestState with libsodium. */
#include "first.h"
#include "ph_state.h"
#include "ph_json.h"
#include "ph_mime.h"
#include "ph_sections.h"
#include "ph_util.h"
#include "ph_yread.h"
#include <errno.h>
#include <sodium.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FORMAT_VERSION 1
#define AD "phantom requestState v1"
#define NONCE_LEN crypto_aead_xchacha20poly1305_ietf_NPUBBYTES
#define MAC_LEN crypto_aead_xchacha20poly1305_ietf_ABYTES
#define MIN_SECRET 32
#define MAX_SECRET 4096

/* ---- canonical JSON for the arguments digest --------------------------- */

static int
cmp_keys(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
canon(struct ph_buf *b, struct json_object *v)
{
	switch (json_object_get_type(v)) {
	case json_type_object: {
		size_t n = (size_t)json_object_object_length(v), i = 0;
		char **keys = ph_xcalloc(n ? n : 1, sizeof *keys);
		json_object_object_foreach(v, k, val) {
			(void)val;
			keys[i++] = k;
		}
		qsort(keys, n, sizeof *keys, cmp_keys);
		ph_buf_addc(b, '{');
		for (i = 0; i < n; i++) {
			struct json_object *ks = json_object_new_string(keys[i]);
			if (i)
				ph_buf_addc(b, ',');
			ph_buf_adds(b, json_object_to_json_string_ext(ks, JSON_C_TO_STRING_PLAIN));
			json_object_put(ks);
			ph_buf_addc(b, ':');
			canon(b, json_object_object_get(v, keys[i]));
		}
		ph_buf_addc(b, '}');
		free(keys);
		break;
	}
	case json_type_array: {
		size_t n = json_object_array_length(v);
		ph_buf_addc(b, '[');
		for (size_t i = 0; i < n; i++) {
			if (i)
				ph_buf_addc(b, ',');
			canon(b, json_object_array_get_idx(v, i));
		}
		ph_buf_addc(b, ']');
		break;
	}
	case json_type_null:
		ph_buf_adds(b, "null");
		break;
	default:
		ph_buf_adds(b, json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN |
								 JSON_C_TO_STRING_NOSLASHESCAPE));
	}
}

char *
ph_json_canonical(struct json_object *v)
{
	struct ph_buf b;
	ph_buf_init(&b);
	canon(&b, v);
	return ph_buf_steal(&b);
}

static void
args_digest(struct json_object *args, char hex[65])
{
	unsigned char h[crypto_hash_sha256_BYTES];
	char *c = ph_json_canonical(args ? args : NULL);
	crypto_hash_sha256(h, (const unsigned char *)c, strlen(c));
	sodium_bin2hex(hex, 65, h, sizeof h);
	free(c);
}

/* ---- configuration ------------------------------------------------------ */

/* key = BLAKE2b(key = BLAKE2b-512(secret), "phantom requestState v1" || 0 || salt) */
static void
derive(unsigned char out[32], const unsigned char *secret, size_t slen, const char *salt)
{
	unsigned char k0[crypto_generichash_BYTES_MAX];
	crypto_generichash_state st;
	crypto_generichash(k0, sizeof k0, secret, slen, NULL, 0);
	crypto_generichash_init(&st, k0, sizeof k0, 32);
	crypto_generichash_update(&st, (const unsigned char *)AD, sizeof AD);
	crypto_generichash_update(&st, (const unsigned char *)salt, strlen(salt));
	crypto_generichash_final(&st, out, 32);
	sodium_memzero(k0, sizeof k0);
}

/* Reads a secret file (trailing newlines dropped). Returns 0 or -1 with a problem. */
static int
read_secret(struct ph_conf_ctx *x, int line, const char *path, unsigned char **out, size_t *len)
{
	char *full = ph_path_join(x->c->dir, path), *buf = NULL;
	size_t n = 0;
	if (ph_read_file(full, MAX_SECRET, &buf, &n) != 0) {
		ph_conf_problem(x->probs, x->file, line, "request_state: cannot read secret file %s: %s",
				full, ph_strerror(errno));
		free(full);
		return -1;
	}
	free(full);
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	*out = (unsigned char *)buf;
	*len = n;
	return 0;
}

static bool
strong_enough(struct ph_conf_ctx *x, int line, const char *what, size_t len)
{
	if (len >= MIN_SECRET)
		return true;
	ph_conf_problem(x->probs, x->file, line,
			"request_state: %s is %zu bytes; at least %d are required", what, len, MIN_SECRET);
	return false;
}

void
ph_state_conf_default(struct ph_config *c)
{
	struct ph_state_conf *sc;
	if (c->request_state != NULL)
		return;
	sc = ph_xcalloc(1, sizeof *sc);
	if (sodium_init() < 0)
		abort();
	randombytes_buf(sc->key, sizeof sc->key);
	sc->max_age = 300;
	sc->max_size = 65536;
	sc->ephemeral = true;
	c->request_state = sc;
}

/* The current key into sc->key: derived (with salt) from secret_file or
 * secret_env, or random and sc->ephemeral when neither is given. Returns
 * 0, or -1 after a problem (the key is then random). */
static int
current_key(struct ph_conf_ctx *x, const struct ph_state_opts *o, const struct ph_ynode *n,
	    struct ph_state_conf *sc)
{
	const char *file = o->secret_file, *env = o->secret_env;
	int line = n->line, rc = 0;
	unsigned char *secret = NULL;
	size_t slen = 0;
	if (file || env)
		line = ph_yaml_get(n, file ? "secret_file" : "secret_env")->line;
	if (file && env) {
		ph_conf_problem(x->probs, x->file, line,
				"request_state: give secret_file or secret_env, not both");
		rc = -1;
	} else if (file) {
		if (read_secret(x, line, file, &secret, &slen) != 0)
			rc = -1;
		else if (!strong_enough(x, line, "the secret in secret_file", slen))
			rc = -1;
	} else if (env) {
		const char *val = getenv(env);
		if (val == NULL) {
			ph_conf_problem(x->probs, x->file, line,
					"request_state: environment variable %s is not set", env);
			rc = -1;
		} else if (strong_enough(x, line, "the secret in secret_env", strlen(val))) {
			slen = strlen(val);
			secret = (unsigned char *)ph_xstrndup(val, slen);
		} else {
			rc = -1;
		}
	} else {
		sc->ephemeral = true;
	}
	if (secret != NULL) {
		derive(sc->key, secret, slen, o->salt);
		sodium_memzero(secret, slen);
		free(secret);
	} else {
		randombytes_buf(sc->key, sizeof sc->key);
	}
	return rc;
}

/* The keys of request_state.previous_secret_files (prev, a list) into
 * sc->prev, derived with salt, at most PH_STATE_MAX_KEYS of them. Returns
 * 0, or -1 after a problem (the keys that were fine are kept). */
static int
previous_keys(struct ph_conf_ctx *x, const struct ph_ynode *prev, const char *salt, struct ph_state_conf *sc)
{
	struct ph_ysink ys = {x->probs, x->file, NULL, false};
	unsigned char *secret = NULL;
	size_t slen = 0;
	int rc = 0;
	for (size_t i = 0; i < prev->n; i++) {
		const struct ph_ynode *p = prev->vals[i];
		char what[64];
		const char *path;
		snprintf(what, sizeof what, "request_state.previous_secret_files[%zu]", i);
		if ((path = ph_yread_str(&ys, p, what, 1, SIZE_MAX)) == NULL) {
			rc = -1;
			continue;
		}
		if (sc->nprev == PH_STATE_MAX_KEYS) {
			ph_conf_problem(x->probs, x->file, p->line,
					"request_state.previous_secret_files: at most %d", PH_STATE_MAX_KEYS);
			rc = -1;
			break;
		}
		if (read_secret(x, p->line, path, &secret, &slen) != 0) {
			rc = -1;
			continue;
		}
		if (strong_enough(x, p->line, "a previous secret", slen))
			derive(sc->prev[sc->nprev++], secret, slen, salt);
		else
			rc = -1;
		sodium_memzero(secret, slen);
		free(secret);
	}
	return rc;
}

int
ph_state_conf_parse(struct ph_conf_ctx *x, const char *key, const struct ph_ynode *n)
{
	const struct ph_state_opts *o = x->opts;
	const struct ph_ynode *prev;
	struct ph_state_conf *sc;
	int rc = 0;
	(void)key;
	if (sodium_init() < 0)
		abort();
	if (o == NULL) {
		ph_conf_problem(x->probs, x->file, n->line, "request_state: expected a mapping");
		return -1;
	}
	if (x->probs->n != x->before)
		return -1; /* a key did not fit its row */
	prev = o->previous_secret_files;
	sc = ph_xcalloc(1, sizeof *sc);
	sc->max_age = o->max_age;
	sc->max_size = o->max_size;
	if (prev != NULL && prev->kind != PH_Y_SEQ) {
		ph_conf_problem(x->probs, x->file, prev->line,
				"request_state.previous_secret_files: expected a list of paths");
		rc = -1;
		prev = NULL;
	}
	if (current_key(x, o, n, sc) != 0)
		rc = -1;
	if (prev != NULL && previous_keys(x, prev, o->salt, sc) != 0)
		rc = -1;
	ph_state_conf_free(x->c);
	x->c->request_state = sc;
	return rc;
}

void
ph_state_conf_free(struct ph_config *c)
{
	if (c->request_state == NULL)
		return;
	sodium_memzero(c->request_state, sizeof *c->request_state);
	free(c->request_state);
	c->request_state = NULL;
}

/* ---- seal and open ------------------------------------------------------ */

char *
ph_state_seal_bytes(const struct ph_state_conf *sc, const void *plain, size_t plen)
{
	size_t blen = 1 + NONCE_LEN + plen + MAC_LEN;
	unsigned char *box = ph_xmalloc(blen);
	char *out;
	box[0] = FORMAT_VERSION;
	randombytes_buf(box + 1, NONCE_LEN);
	crypto_aead_xchacha20poly1305_ietf_encrypt(box + 1 + NONCE_LEN, NULL, plain, plen,
						   (const unsigned char *)AD, sizeof AD - 1, NULL,
						   box + 1, sc->key);
	out = ph_base64url(box, blen);
	free(box);
	return out;
}

char *
ph_state_seal(const struct ph_state_conf *sc, const char *principal, const char *method,
	      const char *target, struct json_object *args, struct json_object *state, int64_t now_s)
{
	struct json_object *p = json_object_new_object();
	char hex[65], *out;
	const char *plain;
	size_t plen;
	args_digest(args, hex);
	json_object_object_add(p, "exp", json_object_new_int64(now_s + sc->max_age));
	json_object_object_add(p, "p", principal ? json_object_new_string(principal) : NULL);
	json_object_object_add(p, "m", json_object_new_string(method));
	json_object_object_add(p, "t", json_object_new_string(target ? target : ""));
	json_object_object_add(p, "a", json_object_new_string(hex));
	json_object_object_add(p, "s", state ? json_object_get(state) : NULL);
	plain = json_object_to_json_string_length(p, JSON_C_TO_STRING_PLAIN, &plen);
	out = ph_state_seal_bytes(sc, plain, plen);
	json_object_put(p);
	return out;
}

static int
try_open(const unsigned char *key, const unsigned char *box, size_t blen, unsigned char *plain,
	 unsigned long long *plen)
{
	return crypto_aead_xchacha20poly1305_ietf_decrypt(plain, plen, NULL, box + 1 + NONCE_LEN,
							  blen - 1 - NONCE_LEN,
							  (const unsigned char *)AD, sizeof AD - 1,
							  box + 1, key);
}

static bool
str_eq(struct json_object *o, const char *key, const char *want)
{
	struct json_object *v = NULL;
	json_object_object_get_ex(o, key, &v);
	if (want == NULL)
		return v == NULL || json_object_is_type(v, json_type_null);
	return v != NULL && json_object_is_type(v, json_type_string) &&
	       strcmp(json_object_get_string(v), want) == 0;
}

enum ph_state_err
ph_state_open(const struct ph_state_conf *sc, const char *token, const char *principal,
	      const char *method, const char *target, struct json_object *args,
	      struct json_object **state, int64_t now_s)
{
	size_t tlen = strlen(token), blen = 0;
	unsigned char *box, *plain;
	unsigned long long plen = 0;
	enum ph_state_err e = PH_STATE_INVALID;
	struct json_object *p = NULL, *v;
	char hex[65];
	int opened;
	*state = NULL;
	if ((long long)tlen > sc->max_size)
		return PH_STATE_TOO_LARGE;
	if (ph_base64url_decode(token, tlen, &box, &blen) != 0)
		return PH_STATE_INVALID;
	if (blen < 1 + NONCE_LEN + MAC_LEN || box[0] != FORMAT_VERSION) {
		free(box);
		return PH_STATE_INVALID;
	}
	plain = ph_xmalloc(blen);
	opened = try_open(sc->key, box, blen, plain, &plen) == 0;
	for (size_t i = 0; !opened && i < sc->nprev; i++)
		opened = try_open(sc->prev[i], box, blen, plain, &plen) == 0;
	free(box);
	if (!opened)
		goto out;
	if (!ph_json_parse((const char *)plain, plen, PH_JSON_DEPTH_DOCUMENT, &p))
		goto out;
	if (p == NULL || !json_object_is_type(p, json_type_object))
		goto out;
	if (!json_object_object_get_ex(p, "exp", &v) || !json_object_is_type(v, json_type_int))
		goto out;
	if (json_object_get_int64(v) < now_s) {
		e = PH_STATE_EXPIRED;
		goto out;
	}
	if (!str_eq(p, "p", principal)) {
		e = PH_STATE_PRINCIPAL;
		goto out;
	}
	if (!str_eq(p, "m", method)) {
		e = PH_STATE_METHOD;
		goto out;
	}
	if (!str_eq(p, "t", target ? target : "")) {
		e = PH_STATE_TARGET;
		goto out;
	}
	args_digest(args, hex);
	if (!str_eq(p, "a", hex)) {
		e = PH_STATE_ARGUMENTS;
		goto out;
	}
	if (json_object_object_get_ex(p, "s", &v))
		*state = json_object_get(v);
	e = PH_STATE_OK;
out:
	json_object_put(p);
	sodium_memzero(plain, blen);
	free(plain);
	return e;
}

/* ---- sealed documents for other purposes (legacy session ids) ------------ */

/* The associated data of a sealed document: "phantom <purpose> v1", so a
 * token sealed for one purpose never opens as another (a requestState is
 * not a session id, and the other way round). */
static void
purpose_ad(const char *purpose, char *ad, size_t n)
{
	snprintf(ad, n, "phantom %s v1", purpose);
}

char *
ph_state_seal_doc(const struct ph_state_conf *sc, const char *purpose, struct json_object *doc)
{
	char ad[96], *out;
	const char *plain;
	size_t plen, blen;
	unsigned char *box;
	purpose_ad(purpose, ad, sizeof ad);
	plain = json_object_to_json_string_length(doc, JSON_C_TO_STRING_PLAIN, &plen);
	blen = 1 + NONCE_LEN + plen + MAC_LEN;
	box = ph_xmalloc(blen);
	box[0] = FORMAT_VERSION;
	randombytes_buf(box + 1, NONCE_LEN);
	crypto_aead_xchacha20poly1305_ietf_encrypt(box + 1 + NONCE_LEN, NULL,
						   (const unsigned char *)plain, plen,
						   (const unsigned char *)ad, strlen(ad), NULL, box + 1,
						   sc->key);
	out = ph_base64url(box, blen);
	free(box);
	return out;
}

struct json_object *
ph_state_open_doc(const struct ph_state_conf *sc, const char *purpose, const char *token,
		  size_t max_len)
{
	size_t tlen = strlen(token), blen = 0;
	unsigned char *box, *plain;
	unsigned long long plen = 0;
	struct json_object *doc = NULL;
	char ad[96];
	bool opened = false;
	if (tlen > max_len || ph_base64url_decode(token, tlen, &box, &blen) != 0)
		return NULL;
	if (blen < 1 + NONCE_LEN + MAC_LEN || box[0] != FORMAT_VERSION) {
		free(box);
		return NULL;
	}
	purpose_ad(purpose, ad, sizeof ad);
	plain = ph_xmalloc(blen);
	for (size_t i = 0; !opened && i <= sc->nprev; i++) {
		const unsigned char *key = i == 0 ? sc->key : sc->prev[i - 1];
		opened = crypto_aead_xchacha20poly1305_ietf_decrypt(
				 plain, &plen, NULL, box + 1 + NONCE_LEN, blen - 1 - NONCE_LEN,
				 (const unsigned char *)ad, strlen(ad), box + 1, key) == 0;
	}
	free(box);
	if (opened && (!ph_json_parse((const char *)plain, plen, PH_JSON_DEPTH_DOCUMENT, &doc) ||
		       !json_object_is_type(doc, json_type_object))) {
		json_object_put(doc);
		doc = NULL;
	}
	sodium_memzero(plain, blen);
	free(plain);
	return doc;
}

const char *
ph_state_message(enum ph_state_err e)
{
	switch (e) {
	case PH_STATE_OK: return "ok";
	case PH_STATE_INVALID: return "Invalid requestState: it was not issued by this server or was altered";
	case PH_STATE_TOO_LARGE: return "Invalid requestState: too large";
	case PH_STATE_EXPIRED: return "Invalid requestState: it has expired; start the request again";
	case PH_STATE_PRINCIPAL: return "Invalid requestState: it was issued to another principal";
	case PH_STATE_METHOD: return "Invalid requestState: it was issued for another method";
	case PH_STATE_TARGET: return "Invalid requestState: it was issued for another tool, prompt or resource";
	case PH_STATE_ARGUMENTS: return "Invalid requestState: it was issued for other arguments";
	}
	return "Invalid requestState";
}
