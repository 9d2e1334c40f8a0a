// Opening a shared library when it is first needed instead of at start-up
// (Linux: dlopen), for libgd and libcurl. They bring dozens of libraries with
// them (HEIF, AVIF, TIFF, Kerberos, LDAP...): loaded at start-up, they would
// cost every run ~14 ms (`badge --help` takes 7 ms without them, 21 ms with
// them), while most runs (`--help`, a procedural badge, the store commands)
// never call either. docs/PERFORMANCE.md has the measurement.
//
// Nothing here ends the process: a library or a symbol that cannot be found
// is reported to the caller, which turns it into an error that names the
// Debian package to install.
#ifndef BADGE_LAZY_LIBRARY_H
#define BADGE_LAZY_LIBRARY_H

#include <pthread.h>
#include <stddef.h>

// One library: its soname, the names of the functions wanted, and where
// their addresses go (`table[i]` for `names[i]`). Define it statically with
// BADGE_LAZY_LIBRARY_INIT and load it with badge_lazy_library_load.
typedef struct {
    const char *soname;
    const char *const *names;
    void **table;
    size_t count;
    pthread_mutex_t lock;
    int state;  // 0 not tried, 1 loaded, -1 failed
    char message[512];
} badge_lazy_library;

#define BADGE_LAZY_LIBRARY_INIT(soname, names, table, count) \
    { (soname), (names), (table), (count), PTHREAD_MUTEX_INITIALIZER, 0, {0} }

// Opens the library and resolves every name, once; later calls answer the
// first one's result. Returns 0, or -1 with the reason copied into `message`
// (at most `capacity` bytes, NUL-terminated). Thread-safe.
int badge_lazy_library_load(badge_lazy_library *library, char *message, size_t capacity);

// X-macro helpers for a library's function list. Each entry is
// RETURNING(type, name, parameters, arguments) or VOID(name, parameters, arguments);
// our functions are named badge_<name> and call the library's through the table.
#define BADGE_LAZY_DECLARE(type, name, parameters, arguments) type badge_##name parameters;
#define BADGE_LAZY_DECLARE_VOID(name, parameters, arguments) void badge_##name parameters;
#define BADGE_LAZY_NAME(type, name, parameters, arguments) #name,
#define BADGE_LAZY_NAME_VOID(name, parameters, arguments) #name,
#define BADGE_LAZY_INDEX(type, name, parameters, arguments) badge_lazy_index_##name,
#define BADGE_LAZY_INDEX_VOID(name, parameters, arguments) badge_lazy_index_##name,
#define BADGE_LAZY_FORWARD(type, name, parameters, arguments)                                \
    type badge_##name parameters {                                                           \
        return ((type(*) parameters)badge_lazy_table[badge_lazy_index_##name]) arguments;    \
    }
#define BADGE_LAZY_FORWARD_VOID(name, parameters, arguments)                                 \
    void badge_##name parameters {                                                           \
        ((void(*) parameters)badge_lazy_table[badge_lazy_index_##name]) arguments;           \
    }

// Everything a C file needs for one library whose functions are all in its
// X-macro list FUNCTIONS: the table, `int PREFIX_load(char *, size_t)`, and the
// badge_<name> forwarders. One library a file (the names are file-static).
#define BADGE_LAZY_LIBRARY_DEFINE(PREFIX, soname, FUNCTIONS)                                          \
    enum { FUNCTIONS(BADGE_LAZY_INDEX, BADGE_LAZY_INDEX_VOID) badge_lazy_function_count };             \
    static const char *const badge_lazy_names[] = {FUNCTIONS(BADGE_LAZY_NAME, BADGE_LAZY_NAME_VOID)};  \
    static void *badge_lazy_table[badge_lazy_function_count];                                         \
    static badge_lazy_library badge_lazy_this =                                                        \
        BADGE_LAZY_LIBRARY_INIT(soname, badge_lazy_names, badge_lazy_table, badge_lazy_function_count); \
    int PREFIX##_load(char *message, size_t capacity) {                                                \
        return badge_lazy_library_load(&badge_lazy_this, message, capacity);                          \
    }                                                                                                  \
    FUNCTIONS(BADGE_LAZY_FORWARD, BADGE_LAZY_FORWARD_VOID)

#endif
