// libcurl's functions, as badge calls them, forwarded to libcurl.so.4 once it
// is loaded on first use (see library_loader.h for why it is not linked).
// Each entry: return type, name, parameters, arguments.
#define CURL_DISABLE_TYPECHECK 1
#include "shim.h"
#include "library_loader.h"

#include <pthread.h>

#define BADGE_CURL_FUNCTIONS(RETURNING, VOID)                                                                    \
    RETURNING(CURLcode, curl_global_init, (long flags), (flags))                                                 \
    RETURNING(CURL *, curl_easy_init, (void), ())                                                                \
    VOID(curl_easy_cleanup, (CURL * handle), (handle))                                                           \
    RETURNING(const char *, curl_easy_strerror, (CURLcode code), (code))                                         \
    RETURNING(CURLM *, curl_multi_init, (void), ())                                                              \
    RETURNING(CURLMcode, curl_multi_cleanup, (CURLM * multi), (multi))                                           \
    RETURNING(CURLMcode, curl_multi_add_handle, (CURLM * multi, CURL *handle), (multi, handle))                  \
    RETURNING(CURLMcode, curl_multi_remove_handle, (CURLM * multi, CURL *handle), (multi, handle))               \
    RETURNING(CURLMcode, curl_multi_perform, (CURLM * multi, int *running), (multi, running))                    \
    RETURNING(CURLMcode, curl_multi_poll,                                                                        \
              (CURLM * multi, struct curl_waitfd extra[], unsigned int count, int timeout, int *ready),          \
              (multi, extra, count, timeout, ready))                                                             \
    RETURNING(CURLMcode, curl_multi_wakeup, (CURLM * multi), (multi))                                            \
    RETURNING(CURLMsg *, curl_multi_info_read, (CURLM * multi, int *queued), (multi, queued))                    \
    RETURNING(struct curl_slist *, curl_slist_append, (struct curl_slist * list, const char *string), (list, string)) \
    VOID(curl_slist_free_all, (struct curl_slist * list), (list))

static struct {
    BADGE_CURL_FUNCTIONS(BADGE_POINTER, BADGE_VOID_POINTER)
    CURLcode (*easy_setopt)(CURL *handle, CURLoption option, ...);
    CURLcode (*easy_getinfo)(CURL *handle, CURLINFO info, ...);
} curl;

#define SONAME "libcurl.so.4"
#define PACKAGE "libcurl4"

static void resolve(void) {
    void *library = badge_library_open(SONAME, PACKAGE);
#define RESOLVE_AS(field, name) *(void **)&curl.field = badge_library_symbol(library, SONAME, PACKAGE, name);
#define RESOLVE(type, name, parameters, arguments) RESOLVE_AS(name, #name)
#define RESOLVE_VOID(name, parameters, arguments) RESOLVE_AS(name, #name)
    BADGE_CURL_FUNCTIONS(RESOLVE, RESOLVE_VOID)
    RESOLVE_AS(easy_setopt, "curl_easy_setopt")
    RESOLVE_AS(easy_getinfo, "curl_easy_getinfo")
}

static pthread_once_t resolved = PTHREAD_ONCE_INIT;

static void ensure_loaded(void) { pthread_once(&resolved, resolve); }

#define FORWARD(type, name, parameters, arguments) BADGE_FORWARD(curl, ensure_loaded, type, name, parameters, arguments)
#define FORWARD_VOID(name, parameters, arguments) BADGE_FORWARD_VOID(curl, ensure_loaded, name, parameters, arguments)
BADGE_CURL_FUNCTIONS(FORWARD, FORWARD_VOID)

// The variadic two, each with the one argument type its option takes.
#define SETOPT(name, type)                                       \
    CURLcode name(CURL *handle, CURLoption option, type value) { \
        ensure_loaded();                                                 \
        return curl.easy_setopt(handle, option, value);          \
    }
SETOPT(badge_curl_setopt_long, long)
SETOPT(badge_curl_setopt_string, const char *)
SETOPT(badge_curl_setopt_pointer, void *)
SETOPT(badge_curl_setopt_off_t, curl_off_t)
SETOPT(badge_curl_setopt_slist, struct curl_slist *)
SETOPT(badge_curl_setopt_write_callback, curl_write_callback)

CURLcode badge_curl_setopt_xferinfo_callback(CURL *handle, curl_xferinfo_callback value) {
    ensure_loaded();
    return curl.easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, value);
}

CURLcode badge_curl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    ensure_loaded();
    return curl.easy_getinfo(handle, info, value);
}

CURLcode badge_curl_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    ensure_loaded();
    return curl.easy_getinfo(handle, info, value);
}
