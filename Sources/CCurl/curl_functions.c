// The badge_curl* functions of shim.h, calling libcurl's through a table
// that badge_curl_load() fills.
#define CURL_DISABLE_TYPECHECK 1
#include "shim.h"

// BADGE_CURL_FUNCTIONS, then the two variadic functions, which Swift calls
// through the typed wrappers below: only their names and places in the table
// come from these two entries, their calls are typed by curl.h.
#define BADGE_CURL_ALL(RETURNING, VOID, OPTIONAL)                                                           \
    BADGE_CURL_FUNCTIONS(RETURNING, VOID, OPTIONAL)                                                         \
    RETURNING(CURLcode, curl_easy_setopt, (CURL * handle, CURLoption option, ...), ())                      \
    RETURNING(CURLcode, curl_easy_getinfo, (CURL * handle, CURLINFO info, ...), ())

enum { BADGE_CURL_ALL(BADGE_LAZY_INDEX, BADGE_LAZY_INDEX_VOID, BADGE_LAZY_INDEX) badge_curl_function_count };
static const char *const badge_curl_names[] = {BADGE_CURL_ALL(BADGE_LAZY_NAME, BADGE_LAZY_NAME_VOID, BADGE_LAZY_NAME)};
static const unsigned char badge_curl_required[] = {
    BADGE_CURL_ALL(BADGE_LAZY_REQUIRED, BADGE_LAZY_REQUIRED_VOID, BADGE_LAZY_NOT_REQUIRED)};
static void *badge_lazy_table[badge_curl_function_count];
static badge_lazy_library badge_curl_library = BADGE_LAZY_LIBRARY_INIT(
    BADGE_SONAME_CURL, badge_curl_names, badge_curl_required, badge_lazy_table, badge_curl_function_count);

int badge_curl_load(char *message, size_t capacity) {
    return badge_lazy_library_load(&badge_curl_library, message, capacity);
}

BADGE_CURL_FUNCTIONS(BADGE_LAZY_FORWARD, BADGE_LAZY_FORWARD_VOID, BADGE_LAZY_FORWARD_OPTIONAL)

// The variadic two, each with the one argument type its option takes, called
// as curl.h declares them.
#define SETOPT(name, type)                                                   \
    CURLcode name(CURL *handle, CURLoption option, type value) {             \
        return BADGE_LAZY_FUNCTION(curl_easy_setopt)(handle, option, value); \
    }
SETOPT(badge_curl_setopt_long, long)
SETOPT(badge_curl_setopt_string, const char *)
SETOPT(badge_curl_setopt_pointer, void *)
SETOPT(badge_curl_setopt_off_t, curl_off_t)
SETOPT(badge_curl_setopt_slist, struct curl_slist *)
SETOPT(badge_curl_setopt_write_callback, curl_write_callback)

CURLcode badge_curl_setopt_xferinfo_callback(CURL *handle, curl_xferinfo_callback value) {
    return BADGE_LAZY_FUNCTION(curl_easy_setopt)(handle, CURLOPT_XFERINFOFUNCTION, value);
}

CURLcode badge_curl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return BADGE_LAZY_FUNCTION(curl_easy_getinfo)(handle, info, value);
}

CURLcode badge_curl_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return BADGE_LAZY_FUNCTION(curl_easy_getinfo)(handle, info, value);
}
