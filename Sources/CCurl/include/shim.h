// Typed wrappers for libcurl's variadic functions, which Swift cannot call.
// Defined in curl_loader.c, with the rest of libcurl's functions that badge
// calls, which are forwarded to libcurl.so.4 once it is loaded on first use.
#ifndef BADGE_CCURL_SHIM_H
#define BADGE_CCURL_SHIM_H

#include <curl/curl.h>

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
