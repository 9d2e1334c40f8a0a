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

// For the loaders' X-macro lists (return type, name, parameters, arguments):
// a table of function pointers, and functions of the library's own names that
// call through it once `load()` (which fills the table, once) has returned.
#define BADGE_POINTER(type, name, parameters, arguments) type(*name) parameters;
#define BADGE_VOID_POINTER(name, parameters, arguments) void(*name) parameters;
#define BADGE_FORWARD(table, load, type, name, parameters, arguments) \
    type name parameters {                                           \
        load();                                                      \
        return table.name arguments;                                 \
    }
#define BADGE_FORWARD_VOID(table, load, name, parameters, arguments) \
    void name parameters {                                          \
        load();                                                     \
        table.name arguments;                                       \
    }

#endif
