/* ph_fs.h: opening files and directories below a root directory without
 * ever leaving it: the one way a request reads a file under a configured
 * root (resource template directories, skill files, skill directories). */
#ifndef PH_FS_H
#define PH_FS_H
#include "first.h"
#include <dirent.h>

/* What "below root" means, the same with openat2(2) and without it:
 * - rel is relative; an absolute rel, or a ".." segment in it, is refused;
 * - a symbolic link on the way is followed only when it is relative and
 *   what it names is still below root (a link that is absolute, or leaves
 *   root through "..", is refused), at most PH_FS_MAX_LINKS of them;
 * - every step is taken from a directory already open, so a link swapped
 *   in while the lookup runs can refuse the open but never redirect it.
 * The root itself is opened by its path (configuration names it).
 * Refusals set errno to EXDEV (leaves root) or ELOOP (too many links). */
#define PH_FS_MAX_LINKS 40 /* links followed in one lookup, as the kernel allows */
#define PH_FS_MAX_DEPTH 64 /* directories held open while walking one path */

/* Opens rel below root read-only, for a file: O_NONBLOCK, so a FIFO never
 * blocks (the caller's fstat decides what it accepts). Returns the fd
 * (caller closes) or -1 with errno. */
int ph_fs_open_beneath(const char *root, const char *rel) PH_WUR;
/* Opens directory rel below root ("" for root itself). Returns the fd
 * (caller closes) or -1 with errno. */
int ph_fs_opendir_fd_beneath(const char *root, const char *rel) PH_WUR;
/* The same as a directory stream, through fdopendir(3). Returns the stream
 * (caller closedir()s) or NULL with errno. */
DIR *ph_fs_opendir_beneath(const char *root, const char *rel) PH_WUR;
/* What a failed open below a root means, for logs: EXDEV (which strerror
 * calls a cross-device link) says the path leaves the root. Static string. */
const char *ph_fs_strerror(int err);
#endif
