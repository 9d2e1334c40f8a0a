// Opens a shared library the first time it is needed instead of at start-up.
//
// libgd and libcurl bring some seventy libraries with them (HEIF, AVIF, TIFF,
// Kerberos, LDAP...): loading them costs ~20 ms of every run, and most runs
// (`--help`, a procedural badge, the store commands) never call either.
#ifndef BADGE_LIBRARY_LOADER_H
#define BADGE_LIBRARY_LOADER_H

// The library `soname`, loaded once. If it cannot be loaded the process ends
// with a message that names it and the Debian package that provides it: the
// badge being replaced is untouched, since nothing is written before a
// backend's image exists.
void *badge_library_open(const char *soname, const char *package);

// `name` in `library` (opened by badge_library_open), or the process ends as above.
void *badge_library_symbol(void *library, const char *soname, const char *package, const char *name);

#endif
