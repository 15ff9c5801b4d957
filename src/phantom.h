/* phantom.h: the public API of libphantom, for C modules and for programs
 * that embed the server. Everything here is stable within PHANTOM_ABI. */
#ifndef PHANTOM_H
#define PHANTOM_H
#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on every incompatible change; modules export it and are refused at
 * load when it differs. */
#define PHANTOM_ABI 1

/* Returns the library version string ("0.1.0"). */
const char *phantom_version(void);

#ifdef __cplusplus
}
#endif
#endif
