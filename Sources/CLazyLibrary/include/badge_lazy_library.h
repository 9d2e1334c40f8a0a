// Opening a shared library when it is first needed instead of at start-up
// (Linux: dlopen), for libgd, libcurl, libcrypto and libraqm. They bring
// dozens of libraries with them (HEIF, AVIF, TIFF, Kerberos, LDAP...) whose
// loading would cost every run, while most runs (`--help`, a procedural
// badge, the store commands) never call them. docs/PERFORMANCE.md has the
// measurement.
//
// Nothing here ends the process: a library or a symbol that cannot be found
// is reported to the caller, which turns it into an error that names the
// Debian package to install.
//
// The compiler checks every prototype: a forwarder's declaration is written
// out (so Swift sees its parameters), and the C file that defines it asserts
// that its type is the type of the library's own function in the library's
// header, and calls through a pointer of that type.
#ifndef BADGE_LAZY_LIBRARY_H
#define BADGE_LAZY_LIBRARY_H

#include <pthread.h>
#include <stddef.h>

#include "badge_sonames.h"

// One library: its soname, the names of the functions wanted, which of them
// it must have (`required[i]`), and where their addresses go (`table[i]` for
// `names[i]`; NULL for an optional function it lacks). Define it statically
// with BADGE_LAZY_LIBRARY_INIT and load it with badge_lazy_library_load.
typedef struct {
    const char *soname;
    const char *const *names;
    const unsigned char *required;
    void **table;
    size_t count;
    pthread_mutex_t lock;
    int state;  // 0 not tried, 1 loaded, -1 failed
    char message[512];
} badge_lazy_library;

#define BADGE_LAZY_LIBRARY_INIT(soname, names, required, table, count) \
    { (soname), (names), (required), (table), (count), PTHREAD_MUTEX_INITIALIZER, 0, {0} }

// Opens the library and resolves every name, once; later calls answer the
// first one's result. Returns 0, or -1 with the reason copied into `message`
// (at most `capacity` bytes, NUL-terminated): the library cannot be opened,
// or lacks a required function. An optional function it lacks is left NULL
// in the table, and only the calls of that function fail. Thread-safe.
int badge_lazy_library_load(badge_lazy_library *library, char *message, size_t capacity);

// Writes "<soname> has no function <name> (an older version?)" into `message`.
void badge_lazy_library_describe_missing(const badge_lazy_library *library, const char *name, char *message,
                                         size_t capacity);

// X-macro helpers for a library's function list. Each entry is one of
//   RETURNING(type, name, parameters, arguments)  a function the library must have
//   VOID(name, parameters, arguments)             the same, returning nothing
//   OPTIONAL(type, name, parameters, arguments)   one only some calls need; `type` is a
//                                                 pointer, and NULL is what a call answers
//                                                 when the library lacks the function
// Our functions are named badge_<name> and call the library's through the table.
#define BADGE_LAZY_DECLARE(type, name, parameters, arguments) type badge_##name parameters;
#define BADGE_LAZY_DECLARE_VOID(name, parameters, arguments) void badge_##name parameters;
#define BADGE_LAZY_NAME(type, name, parameters, arguments) #name,
#define BADGE_LAZY_NAME_VOID(name, parameters, arguments) #name,
#define BADGE_LAZY_INDEX(type, name, parameters, arguments) badge_lazy_index_##name,
#define BADGE_LAZY_INDEX_VOID(name, parameters, arguments) badge_lazy_index_##name,
#define BADGE_LAZY_REQUIRED(type, name, parameters, arguments) 1,
#define BADGE_LAZY_REQUIRED_VOID(name, parameters, arguments) 1,
#define BADGE_LAZY_NOT_REQUIRED(type, name, parameters, arguments) 0,

// The library's function, typed as its header declares it.
#define BADGE_LAZY_FUNCTION(name) ((__typeof__(&name))badge_lazy_table[badge_lazy_index_##name])

// A forwarder whose prototype is not the library function's does not compile.
#define BADGE_LAZY_CHECK(name)                                                                  \
    _Static_assert(__builtin_types_compatible_p(__typeof__(&badge_##name), __typeof__(&name)), \
                   "badge_" #name "'s prototype differs from " #name "'s in the library's header");

#define BADGE_LAZY_FORWARD(type, name, parameters, arguments) \
    BADGE_LAZY_CHECK(name)                                    \
    type badge_##name parameters { return BADGE_LAZY_FUNCTION(name) arguments; }
#define BADGE_LAZY_FORWARD_VOID(name, parameters, arguments) \
    BADGE_LAZY_CHECK(name)                                   \
    void badge_##name parameters { BADGE_LAZY_FUNCTION(name) arguments; }
// This thread's last call of an optional function that the library lacks (the
// name), cleared by every call of one: PREFIX_missing reads it.
#define BADGE_LAZY_FORWARD_OPTIONAL(type, name, parameters, arguments)       \
    BADGE_LAZY_CHECK(name)                                                   \
    type badge_##name parameters {                                           \
        __typeof__(&name) function = BADGE_LAZY_FUNCTION(name);              \
        badge_lazy_missing = function ? NULL : #name;                        \
        return function ? function arguments : NULL;                         \
    }

// Everything a C file needs for one library whose functions are all in its
// X-macro list FUNCTIONS: the table, `int PREFIX_load(char *, size_t)`,
// `int PREFIX_missing(char *, size_t)` and the badge_<name> forwarders. One
// library a file (the names are file-static).
//
// PREFIX_missing: after an optional function's call answered NULL on this
// thread, 1 when that was because the library lacks it (the reason is then in
// `message`), else 0. It reads and clears what that call left.
#define BADGE_LAZY_LIBRARY_DEFINE(PREFIX, soname, FUNCTIONS)                                                        \
    enum { FUNCTIONS(BADGE_LAZY_INDEX, BADGE_LAZY_INDEX_VOID, BADGE_LAZY_INDEX) badge_lazy_function_count };         \
    static const char *const badge_lazy_names[] = {FUNCTIONS(BADGE_LAZY_NAME, BADGE_LAZY_NAME_VOID, BADGE_LAZY_NAME)}; \
    static const unsigned char badge_lazy_required[] = {                                                            \
        FUNCTIONS(BADGE_LAZY_REQUIRED, BADGE_LAZY_REQUIRED_VOID, BADGE_LAZY_NOT_REQUIRED)};                         \
    static void *badge_lazy_table[badge_lazy_function_count];                                                       \
    static badge_lazy_library badge_lazy_this = BADGE_LAZY_LIBRARY_INIT(                                            \
        soname, badge_lazy_names, badge_lazy_required, badge_lazy_table, badge_lazy_function_count);                \
    static __thread const char *badge_lazy_missing = NULL;                                                          \
    int PREFIX##_load(char *message, size_t capacity) {                                                             \
        return badge_lazy_library_load(&badge_lazy_this, message, capacity);                                        \
    }                                                                                                               \
    int PREFIX##_missing(char *message, size_t capacity) {                                                          \
        const char *name = badge_lazy_missing;                                                                      \
        badge_lazy_missing = NULL;                                                                                  \
        if (!name) return 0;                                                                                        \
        badge_lazy_library_describe_missing(&badge_lazy_this, name, message, capacity);                             \
        return 1;                                                                                                   \
    }                                                                                                               \
    FUNCTIONS(BADGE_LAZY_FORWARD, BADGE_LAZY_FORWARD_VOID, BADGE_LAZY_FORWARD_OPTIONAL)

#endif
