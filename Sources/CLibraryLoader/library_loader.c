#include "library_loader.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static _Noreturn void fail(const char *what, const char *soname, const char *package) {
    const char *reason = dlerror();
    fprintf(stderr, "error: badge cannot load %s from %s (%s)\n  hint: install it: apt-get install %s\n",
            what, soname, reason ? reason : "unknown reason", package);
    exit(1);
}

void *badge_library_open(const char *soname, const char *package) {
    void *library = dlopen(soname, RTLD_LAZY | RTLD_LOCAL);
    if (!library) fail("the library", soname, package);
    return library;
}

void *badge_library_symbol(void *library, const char *soname, const char *package, const char *name) {
    void *symbol = dlsym(library, name);
    if (!symbol) fail(name, soname, package);
    return symbol;
}
