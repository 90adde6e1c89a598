#ifndef GEOTIFY_CCURL_SHIM_H
#define GEOTIFY_CCURL_SHIM_H
/* libcurl's easy interface. curl_easy_setopt and curl_easy_getinfo are variadic, which
   Swift cannot call, so each kind of argument Geotify passes gets a typed wrapper. */
#include <curl/curl.h>

/* The signature of CURLOPT_WRITEFUNCTION and CURLOPT_READFUNCTION callbacks. */
typedef size_t (*geotify_curl_data_callback)(char *buffer, size_t size, size_t count, void *context);

static inline CURLcode geotify_curl_set_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode geotify_curl_set_size(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode geotify_curl_set_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode geotify_curl_set_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode geotify_curl_set_list(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode geotify_curl_set_callback(CURL *handle, CURLoption option, geotify_curl_data_callback value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode geotify_curl_get_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}
#endif
