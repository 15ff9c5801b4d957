/* first.h: included first by every source file of Phantom.
 * Sets the feature macros once and pulls in config.h, so no file depends on
 * the include order of system headers. */
#ifndef PH_FIRST_H
#define PH_FIRST_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#define PH_UNUSED __attribute__((unused))
#define PH_NONNULL_RET __attribute__((returns_nonnull, malloc))
#define PH_WUR __attribute__((warn_unused_result))
#define PH_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define PH_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#endif
