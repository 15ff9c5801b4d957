/* ph_hash_token.h: phantom-fcgi --hash-token, which makes the entries of
 * auth.tokens and auth.tokens_file. */
#ifndef PH_HASH_TOKEN_H
#define PH_HASH_TOKEN_H
#include "first.h"
#include <stdio.h>

/* --hash-token[=KIND]: reads one token from in (a line; the newline is
 * dropped; echo is turned off on a terminal), writes its argon2id string
 * (KIND "argon2", the default) or hex SHA-256 (KIND "sha256") and a newline
 * to out. Returns the exit status; problems go to stderr. */
int ph_hash_token(const char *kind, FILE *in, FILE *out);
#endif
