#include "badge_lazy_library.h"

#include <stdio.h>

// `state` is read without the lock by badge_lazy_library_load's first line,
// so every write of it is atomic, a failure's too: only its writes are under
// the lock.
static void fail(badge_lazy_library *library) { __atomic_store_n(&library->state, -1, __ATOMIC_RELEASE); }

void badge_lazy_library_describe_missing(const badge_lazy_library *library, const char *name, char *message,
                                         size_t capacity) {
    if (message && capacity > 0) snprintf(message, capacity, "%s has no function %s (an older version?)", library->soname, name);
}

#if defined(__linux__)
#include <dlfcn.h>

static void resolve(badge_lazy_library *library) {
    dlerror();
    void *handle = dlopen(library->soname, RTLD_LAZY | RTLD_LOCAL);
    if (!handle) {
        const char *reason = dlerror();
        snprintf(library->message, sizeof(library->message), "cannot load %s (%s)", library->soname,
                 reason ? reason : "unknown reason");
        fail(library);
        return;
    }
    for (size_t i = 0; i < library->count; i++) {
        void *symbol = dlsym(handle, library->names[i]);
        if (!symbol && library->required[i]) {
            badge_lazy_library_describe_missing(library, library->names[i], library->message, sizeof(library->message));
            fail(library);
            return;
        }
        library->table[i] = symbol;
    }
    __atomic_store_n(&library->state, 1, __ATOMIC_RELEASE);
}
#else
static void resolve(badge_lazy_library *library) {
    snprintf(library->message, sizeof(library->message), "cannot load %s: badge loads it on Linux only", library->soname);
    fail(library);
}
#endif

int badge_lazy_library_load(badge_lazy_library *library, char *message, size_t capacity) {
    if (__atomic_load_n(&library->state, __ATOMIC_ACQUIRE) > 0) return 0;
    pthread_mutex_lock(&library->lock);
    if (library->state == 0) resolve(library);
    int state = library->state;
    if (state < 0 && message && capacity > 0) snprintf(message, capacity, "%s", library->message);
    pthread_mutex_unlock(&library->lock);
    return state > 0 ? 0 : -1;
}
