// The badge_curl* functions of shim.h, calling libcurl's through a table
// that badge_curl_load() fills.
#define CURL_DISABLE_TYPECHECK 1
#include "shim.h"

enum {
    BADGE_CURL_FUNCTIONS(BADGE_LAZY_INDEX, BADGE_LAZY_INDEX_VOID)
    badge_lazy_index_curl_easy_setopt,
    badge_lazy_index_curl_easy_getinfo,
    badge_curl_function_count
};

static const char *const badge_curl_names[] = {
    BADGE_CURL_FUNCTIONS(BADGE_LAZY_NAME, BADGE_LAZY_NAME_VOID) "curl_easy_setopt", "curl_easy_getinfo",
};
static void *badge_lazy_table[badge_curl_function_count];
static badge_lazy_library badge_curl_library =
    BADGE_LAZY_LIBRARY_INIT("libcurl.so.4", badge_curl_names, badge_lazy_table, badge_curl_function_count);

int badge_curl_load(char *message, size_t capacity) {
    return badge_lazy_library_load(&badge_curl_library, message, capacity);
}

BADGE_CURL_FUNCTIONS(BADGE_LAZY_FORWARD, BADGE_LAZY_FORWARD_VOID)

typedef CURLcode (*badge_curl_variadic)(CURL *handle, int option, ...);
#define BADGE_CURL_SETOPT ((badge_curl_variadic)badge_lazy_table[badge_lazy_index_curl_easy_setopt])
#define BADGE_CURL_GETINFO ((badge_curl_variadic)badge_lazy_table[badge_lazy_index_curl_easy_getinfo])

// The variadic two, each with the one argument type its option takes.
#define SETOPT(name, type)                                       \
    CURLcode name(CURL *handle, CURLoption option, type value) { \
        return BADGE_CURL_SETOPT(handle, (int)option, value);    \
    }
SETOPT(badge_curl_setopt_long, long)
SETOPT(badge_curl_setopt_string, const char *)
SETOPT(badge_curl_setopt_pointer, void *)
SETOPT(badge_curl_setopt_off_t, curl_off_t)
SETOPT(badge_curl_setopt_slist, struct curl_slist *)
SETOPT(badge_curl_setopt_write_callback, curl_write_callback)

CURLcode badge_curl_setopt_xferinfo_callback(CURL *handle, curl_xferinfo_callback value) {
    return BADGE_CURL_SETOPT(handle, (int)CURLOPT_XFERINFOFUNCTION, value);
}

CURLcode badge_curl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return BADGE_CURL_GETINFO(handle, (int)info, value);
}

CURLcode badge_curl_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return BADGE_CURL_GETINFO(handle, (int)info, value);
}
