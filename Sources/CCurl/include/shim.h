// libcurl, opened on first use (CLazyLibrary says why): badge_curl_load()
// opens it, and each function badge calls is badge_<curl's name> here,
// forwarding to libcurl's. Call badge_curl_load() (0 = loaded) before any of
// them; CurlTransport does, before its first request.
//
// Multipart bodies (CURLOPT_MIMEPOST) are built with curl's MIME API, which
// writes the boundaries and copies each part's data.
//
// libcurl's variadic functions, which Swift cannot call, have typed wrappers
// here, one per argument type.
#ifndef BADGE_CCURL_SHIM_H
#define BADGE_CCURL_SHIM_H

#include <curl/curl.h>
#include <stddef.h>

#include "badge_lazy_library.h"

// Each entry: return type, name, parameters, arguments.
#define BADGE_CURL_FUNCTIONS(RETURNING, VOID, OPTIONAL)                                                          \
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
    VOID(curl_slist_free_all, (struct curl_slist * list), (list))                                               \
    RETURNING(curl_mime *, curl_mime_init, (CURL * handle), (handle))                                            \
    VOID(curl_mime_free, (curl_mime * mime), (mime))                                                             \
    RETURNING(curl_mimepart *, curl_mime_addpart, (curl_mime * mime), (mime))                                    \
    RETURNING(CURLcode, curl_mime_name, (curl_mimepart * part, const char *name), (part, name))                  \
    RETURNING(CURLcode, curl_mime_data, (curl_mimepart * part, const char *data, size_t size), (part, data, size)) \
    RETURNING(CURLcode, curl_mime_filename, (curl_mimepart * part, const char *name), (part, name))              \
    RETURNING(CURLcode, curl_mime_type, (curl_mimepart * part, const char *type), (part, type))

// Opens libcurl (BADGE_SONAME_CURL), once. 0 when loaded; otherwise -1 and the reason in
// `message` (up to `capacity` bytes).
int badge_curl_load(char *message, size_t capacity);

BADGE_CURL_FUNCTIONS(BADGE_LAZY_DECLARE, BADGE_LAZY_DECLARE_VOID, BADGE_LAZY_DECLARE)

CURLcode badge_curl_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode badge_curl_setopt_string(CURL *handle, CURLoption option, const char *value);
CURLcode badge_curl_setopt_pointer(CURL *handle, CURLoption option, void *value);
CURLcode badge_curl_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value);
CURLcode badge_curl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value);
CURLcode badge_curl_setopt_write_callback(CURL *handle, CURLoption option, curl_write_callback value);
CURLcode badge_curl_setopt_xferinfo_callback(CURL *handle, curl_xferinfo_callback value);
CURLcode badge_curl_getinfo_long(CURL *handle, CURLINFO info, long *value);
CURLcode badge_curl_getinfo_pointer(CURL *handle, CURLINFO info, void **value);

#endif
