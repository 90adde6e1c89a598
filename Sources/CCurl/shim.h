#ifndef GEOTIFY_CCURL_SHIM_H
#define GEOTIFY_CCURL_SHIM_H
/* libcurl's easy interface, opened on first use (dlopen) rather than linked: only
   delivery targets need it, and linking it maps about thirty libraries (GnuTLS,
   Kerberos, LDAP, SSH, ...) into every geotify process, some 4 MB resident, whether or
   not a target is configured. The functions below call libcurl through pointers looked
   up once; when the library cannot be opened, geotify_curl_global_init fails and
   nothing else is called. curl_easy_setopt and curl_easy_getinfo are variadic, which
   Swift cannot call, so each kind of argument Geotify passes gets a typed wrapper. */
#include <curl/curl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

/* The signature of CURLOPT_WRITEFUNCTION and CURLOPT_READFUNCTION callbacks. */
typedef size_t (*geotify_curl_data_callback)(char *buffer, size_t size, size_t count, void *context);

/* The libcurl functions Geotify calls. */
struct geotify_curl_functions {
    CURLcode (*global_init)(long flags);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *handle);
    CURLcode (*easy_perform)(CURL *handle);
    CURLcode (*easy_setopt)(CURL *handle, CURLoption option, ...);
    CURLcode (*easy_getinfo)(CURL *handle, CURLINFO info, ...);
    CURLHcode (*easy_header)(CURL *handle, const char *name, size_t index, unsigned int origin, int request,
                             struct curl_header **header);
    const char *(*easy_strerror)(CURLcode code);
    struct curl_slist *(*slist_append)(struct curl_slist *list, const char *item);
    void (*slist_free_all)(struct curl_slist *list);
};

/* What opening the library found. Kept in a function's static (Swift's importer does not
   emit a header's global variables). */
struct geotify_curl_state {
    pthread_once_t once;
    int available;
    struct geotify_curl_functions functions;
};

static inline struct geotify_curl_state *geotify_curl_state(void) {
    static struct geotify_curl_state state = {PTHREAD_ONCE_INIT, 0};
    return &state;
}

static inline void geotify_curl_open(void) {
    void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) return;
    struct geotify_curl_functions f;
    *(void **)&f.global_init = dlsym(library, "curl_global_init");
    *(void **)&f.easy_init = dlsym(library, "curl_easy_init");
    *(void **)&f.easy_cleanup = dlsym(library, "curl_easy_cleanup");
    *(void **)&f.easy_perform = dlsym(library, "curl_easy_perform");
    *(void **)&f.easy_setopt = dlsym(library, "curl_easy_setopt");
    *(void **)&f.easy_getinfo = dlsym(library, "curl_easy_getinfo");
    *(void **)&f.easy_header = dlsym(library, "curl_easy_header");
    *(void **)&f.easy_strerror = dlsym(library, "curl_easy_strerror");
    *(void **)&f.slist_append = dlsym(library, "curl_slist_append");
    *(void **)&f.slist_free_all = dlsym(library, "curl_slist_free_all");
    if (f.global_init == NULL || f.easy_init == NULL || f.easy_cleanup == NULL || f.easy_perform == NULL
        || f.easy_setopt == NULL || f.easy_getinfo == NULL || f.easy_header == NULL || f.easy_strerror == NULL
        || f.slist_append == NULL || f.slist_free_all == NULL) {
        dlclose(library);
        return;
    }
    geotify_curl_state()->functions = f;
    geotify_curl_state()->available = 1;
}

/* libcurl's functions, or NULL when libcurl.so.4 cannot be opened. */
static inline const struct geotify_curl_functions *geotify_curl(void) {
    struct geotify_curl_state *state = geotify_curl_state();
    pthread_once(&state->once, geotify_curl_open);
    return state->available ? &state->functions : NULL;
}

/* curl_global_init; CURLE_FAILED_INIT when libcurl cannot be opened. */
static inline CURLcode geotify_curl_global_init(long flags) {
    const struct geotify_curl_functions *curl = geotify_curl();
    return curl == NULL ? CURLE_FAILED_INIT : curl->global_init(flags);
}

/* The functions below are called only with a handle, after geotify_curl_global_init
   succeeded; each still checks, so none can be reached with libcurl missing. */
static inline CURL *geotify_curl_easy_init(void) {
    const struct geotify_curl_functions *curl = geotify_curl();
    return curl == NULL ? NULL : curl->easy_init();
}

static inline void geotify_curl_easy_cleanup(CURL *handle) {
    const struct geotify_curl_functions *curl = geotify_curl();
    if (curl != NULL) curl->easy_cleanup(handle);
}

static inline CURLcode geotify_curl_easy_perform(CURL *handle) {
    const struct geotify_curl_functions *curl = geotify_curl();
    return curl == NULL ? CURLE_FAILED_INIT : curl->easy_perform(handle);
}

static inline CURLHcode geotify_curl_easy_header(CURL *handle, const char *name, size_t index, unsigned int origin,
                                                 int request, struct curl_header **header) {
    const struct geotify_curl_functions *curl = geotify_curl();
    return curl == NULL ? CURLHE_NOT_BUILT_IN : curl->easy_header(handle, name, index, origin, request, header);
}

static inline const char *geotify_curl_easy_strerror(CURLcode code) {
    const struct geotify_curl_functions *curl = geotify_curl();
    return curl == NULL ? "libcurl (libcurl.so.4) cannot be opened" : curl->easy_strerror(code);
}

static inline struct curl_slist *geotify_curl_slist_append(struct curl_slist *list, const char *item) {
    const struct geotify_curl_functions *curl = geotify_curl();
    return curl == NULL ? NULL : curl->slist_append(list, item);
}

static inline void geotify_curl_slist_free_all(struct curl_slist *list) {
    const struct geotify_curl_functions *curl = geotify_curl();
    if (curl != NULL) curl->slist_free_all(list);
}

static inline CURLcode geotify_curl_set_long(CURL *handle, CURLoption option, long value) {
    const struct geotify_curl_functions *curl = geotify_curl();
    return curl == NULL ? CURLE_FAILED_INIT : curl->easy_setopt(handle, option, value);
}

static inline CURLcode geotify_curl_set_size(CURL *handle, CURLoption option, curl_off_t value) {
    const struct geotify_curl_functions *curl = geotify_curl();
    return curl == NULL ? CURLE_FAILED_INIT : curl->easy_setopt(handle, option, value);
}

static inline CURLcode geotify_curl_set_string(CURL *handle, CURLoption option, const char *value) {
    const struct geotify_curl_functions *curl = geotify_curl();
    return curl == NULL ? CURLE_FAILED_INIT : curl->easy_setopt(handle, option, value);
}

static inline CURLcode geotify_curl_set_pointer(CURL *handle, CURLoption option, void *value) {
    const struct geotify_curl_functions *curl = geotify_curl();
    return curl == NULL ? CURLE_FAILED_INIT : curl->easy_setopt(handle, option, value);
}

static inline CURLcode geotify_curl_set_list(CURL *handle, CURLoption option, struct curl_slist *value) {
    const struct geotify_curl_functions *curl = geotify_curl();
    return curl == NULL ? CURLE_FAILED_INIT : curl->easy_setopt(handle, option, value);
}

static inline CURLcode geotify_curl_set_callback(CURL *handle, CURLoption option, geotify_curl_data_callback value) {
    const struct geotify_curl_functions *curl = geotify_curl();
    return curl == NULL ? CURLE_FAILED_INIT : curl->easy_setopt(handle, option, value);
}

static inline CURLcode geotify_curl_get_long(CURL *handle, CURLINFO info, long *value) {
    const struct geotify_curl_functions *curl = geotify_curl();
    return curl == NULL ? CURLE_FAILED_INIT : curl->easy_getinfo(handle, info, value);
}
#endif
