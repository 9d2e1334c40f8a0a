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

// A whole loader for one library per source file: with BADGE_SONAME and
// BADGE_PACKAGE defined first, BADGE_LIBRARY(FUNCTIONS) makes the table,
// `badge_load()` (opens the library and fills the table, once; needs
// <pthread.h>) and a forwarding function for each entry of the list.
#define BADGE_RESOLVE(type, name, parameters, arguments) \
    *(void **)&badge_table.name = badge_library_symbol(library, BADGE_SONAME, BADGE_PACKAGE, #name);
#define BADGE_RESOLVE_VOID(name, parameters, arguments) BADGE_RESOLVE(void, name, parameters, arguments)
#define BADGE_TABLE_FORWARD(type, name, parameters, arguments) \
    BADGE_FORWARD(badge_table, badge_load, type, name, parameters, arguments)
#define BADGE_TABLE_FORWARD_VOID(name, parameters, arguments) \
    BADGE_FORWARD_VOID(badge_table, badge_load, name, parameters, arguments)
#define BADGE_LIBRARY(FUNCTIONS)                                                \
    static struct {                                                             \
        FUNCTIONS(BADGE_POINTER, BADGE_VOID_POINTER)                            \
    } badge_table;                                                              \
    static void badge_resolve(void) {                                           \
        void *library = badge_library_open(BADGE_SONAME, BADGE_PACKAGE);        \
        FUNCTIONS(BADGE_RESOLVE, BADGE_RESOLVE_VOID)                            \
    }                                                                           \
    static pthread_once_t badge_resolved = PTHREAD_ONCE_INIT;                   \
    static void badge_load(void) { pthread_once(&badge_resolved, badge_resolve); } \
    FUNCTIONS(BADGE_TABLE_FORWARD, BADGE_TABLE_FORWARD_VOID)

#endif
