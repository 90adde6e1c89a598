#ifndef GEOTIFY_CMICROHTTPD_SHIM_H
#define GEOTIFY_CMICROHTTPD_SHIM_H
/* libmicrohttpd, the GNU embedded HTTP server library, opened on first use (dlopen)
   rather than linked: only the web console needs it, and linking it maps GnuTLS and the
   libraries GnuTLS needs (p11-kit, nettle, GMP, libtasn1, libidn2, ...) into every
   geotify process, whether or not the console is on. The functions below call it
   through pointers looked up once; when it cannot be opened, geotify_mhd_start returns
   NULL (and geotify_mhd_available says why), and nothing else is called.
   MHD_start_daemon and the MHD_get_*_info functions are variadic, which Swift cannot
   call; the functions below call them with fixed arguments. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <microhttpd.h>

/* The libmicrohttpd functions Geotify calls. */
struct geotify_mhd_functions {
    struct MHD_Daemon *(*start_daemon)(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc, void *apc_cls,
                                       MHD_AccessHandlerCallback dh, void *dh_cls, ...);
    MHD_socket (*quiesce_daemon)(struct MHD_Daemon *daemon);
    void (*stop_daemon)(struct MHD_Daemon *daemon);
    const union MHD_DaemonInfo *(*get_daemon_info)(struct MHD_Daemon *daemon, enum MHD_DaemonInfoType info_type, ...);
    const union MHD_ConnectionInfo *(*get_connection_info)(struct MHD_Connection *connection,
                                                           enum MHD_ConnectionInfoType info_type, ...);
    int (*get_connection_values)(struct MHD_Connection *connection, enum MHD_ValueKind kind,
                                 MHD_KeyValueIterator iterator, void *iterator_cls);
    enum MHD_Result (*queue_response)(struct MHD_Connection *connection, unsigned int status_code,
                                      struct MHD_Response *response);
    void (*suspend_connection)(struct MHD_Connection *connection);
    void (*resume_connection)(struct MHD_Connection *connection);
    struct MHD_Response *(*create_response_from_callback)(uint64_t size, size_t block_size,
                                                          MHD_ContentReaderCallback crc, void *crc_cls,
                                                          MHD_ContentReaderFreeCallback crfc);
    struct MHD_Response *(*create_response_from_buffer)(size_t size, void *buffer, enum MHD_ResponseMemoryMode mode);
    /* Since 0.9.73 (Debian 12 has 0.9.75); NULL with an older library, which then copies. */
    struct MHD_Response *(*create_response_from_buffer_with_free_callback_cls)(size_t size, void *buffer,
                                                                               MHD_ContentReaderFreeCallback crfc,
                                                                               void *crfc_cls);
    void (*destroy_response)(struct MHD_Response *response);
    enum MHD_Result (*add_response_header)(struct MHD_Response *response, const char *header, const char *content);
};

/* What opening the library found. Kept in a function's static (Swift's importer does not
   emit a header's global variables). */
struct geotify_mhd_state {
    pthread_once_t once;
    int available;
    struct geotify_mhd_functions functions;
};

static inline struct geotify_mhd_state *geotify_mhd_state(void) {
    static struct geotify_mhd_state state = {PTHREAD_ONCE_INIT, 0};
    return &state;
}

static inline void geotify_mhd_open(void) {
    void *library = dlopen("libmicrohttpd.so.12", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) return;
    struct geotify_mhd_functions f;
    *(void **)&f.start_daemon = dlsym(library, "MHD_start_daemon");
    *(void **)&f.quiesce_daemon = dlsym(library, "MHD_quiesce_daemon");
    *(void **)&f.stop_daemon = dlsym(library, "MHD_stop_daemon");
    *(void **)&f.get_daemon_info = dlsym(library, "MHD_get_daemon_info");
    *(void **)&f.get_connection_info = dlsym(library, "MHD_get_connection_info");
    *(void **)&f.get_connection_values = dlsym(library, "MHD_get_connection_values");
    *(void **)&f.queue_response = dlsym(library, "MHD_queue_response");
    *(void **)&f.suspend_connection = dlsym(library, "MHD_suspend_connection");
    *(void **)&f.resume_connection = dlsym(library, "MHD_resume_connection");
    *(void **)&f.create_response_from_callback = dlsym(library, "MHD_create_response_from_callback");
    *(void **)&f.create_response_from_buffer = dlsym(library, "MHD_create_response_from_buffer");
    *(void **)&f.create_response_from_buffer_with_free_callback_cls =
        dlsym(library, "MHD_create_response_from_buffer_with_free_callback_cls");
    *(void **)&f.destroy_response = dlsym(library, "MHD_destroy_response");
    *(void **)&f.add_response_header = dlsym(library, "MHD_add_response_header");
    if (f.start_daemon == NULL || f.quiesce_daemon == NULL || f.stop_daemon == NULL || f.get_daemon_info == NULL
        || f.get_connection_info == NULL || f.get_connection_values == NULL || f.queue_response == NULL
        || f.suspend_connection == NULL || f.resume_connection == NULL || f.create_response_from_callback == NULL
        || f.create_response_from_buffer == NULL || f.destroy_response == NULL || f.add_response_header == NULL) {
        dlclose(library);
        return;
    }
    geotify_mhd_state()->functions = f;
    geotify_mhd_state()->available = 1;
}

/* libmicrohttpd's functions, or NULL when libmicrohttpd.so.12 cannot be opened. */
static inline const struct geotify_mhd_functions *geotify_mhd(void) {
    struct geotify_mhd_state *state = geotify_mhd_state();
    pthread_once(&state->once, geotify_mhd_open);
    return state->available ? &state->functions : NULL;
}

/* Whether libmicrohttpd could be opened. */
static inline int geotify_mhd_available(void) {
    return geotify_mhd() != NULL;
}

/* A daemon listening on `address`; NULL when it cannot start or libmicrohttpd cannot be
   opened. Every other function is called only with what a started daemon gave. */
static inline struct MHD_Daemon *geotify_mhd_start(
    unsigned int flags, const struct sockaddr *address,
    MHD_AccessHandlerCallback handler, void *handler_context,
    struct MHD_OptionItem *options) {
    const struct geotify_mhd_functions *mhd = geotify_mhd();
    if (mhd == NULL) return NULL;
    /* The array first: its first item is the logger, which libmicrohttpd wants before
       any other option so that it reports their problems through it. */
    return mhd->start_daemon(flags, 0, NULL, NULL, handler, handler_context,
                             MHD_OPTION_ARRAY, options,
                             MHD_OPTION_SOCK_ADDR, address,
                             MHD_OPTION_END);
}

/* The socket of a connection (to shut it when its header is overdue), or -1. */
static inline int geotify_mhd_connection_socket(struct MHD_Connection *connection) {
    const struct geotify_mhd_functions *mhd = geotify_mhd();
    if (mhd == NULL) return -1;
    const union MHD_ConnectionInfo *info = mhd->get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

/* The port the daemon listens on (the one chosen when it was asked for port 0), or 0. */
static inline unsigned short geotify_mhd_bound_port(struct MHD_Daemon *daemon) {
    const struct geotify_mhd_functions *mhd = geotify_mhd();
    if (mhd == NULL) return 0;
    const union MHD_DaemonInfo *info = mhd->get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

static inline MHD_socket geotify_mhd_quiesce_daemon(struct MHD_Daemon *daemon) {
    const struct geotify_mhd_functions *mhd = geotify_mhd();
    return mhd == NULL ? MHD_INVALID_SOCKET : mhd->quiesce_daemon(daemon);
}

static inline void geotify_mhd_stop_daemon(struct MHD_Daemon *daemon) {
    const struct geotify_mhd_functions *mhd = geotify_mhd();
    if (mhd != NULL) mhd->stop_daemon(daemon);
}

static inline int geotify_mhd_get_connection_values(struct MHD_Connection *connection, enum MHD_ValueKind kind,
                                                    MHD_KeyValueIterator iterator, void *iterator_cls) {
    const struct geotify_mhd_functions *mhd = geotify_mhd();
    return mhd == NULL ? 0 : mhd->get_connection_values(connection, kind, iterator, iterator_cls);
}

static inline enum MHD_Result geotify_mhd_queue_response(struct MHD_Connection *connection, unsigned int status_code,
                                                         struct MHD_Response *response) {
    const struct geotify_mhd_functions *mhd = geotify_mhd();
    return mhd == NULL ? MHD_NO : mhd->queue_response(connection, status_code, response);
}

static inline void geotify_mhd_suspend_connection(struct MHD_Connection *connection) {
    const struct geotify_mhd_functions *mhd = geotify_mhd();
    if (mhd != NULL) mhd->suspend_connection(connection);
}

static inline void geotify_mhd_resume_connection(struct MHD_Connection *connection) {
    const struct geotify_mhd_functions *mhd = geotify_mhd();
    if (mhd != NULL) mhd->resume_connection(connection);
}

static inline struct MHD_Response *geotify_mhd_create_response_from_callback(
    uint64_t size, size_t block_size, MHD_ContentReaderCallback crc, void *crc_cls,
    MHD_ContentReaderFreeCallback crfc) {
    const struct geotify_mhd_functions *mhd = geotify_mhd();
    return mhd == NULL ? NULL : mhd->create_response_from_callback(size, block_size, crc, crc_cls, crfc);
}

/* A response whose body is the `size` bytes at `buffer`, read where they are, not copied:
   they must stay put until libmicrohttpd calls `release(context)`, when it destroys the
   response. With a libmicrohttpd older than 0.9.73 (no such function) the bytes are
   copied and `release` is called at once. NULL (and `release` not called) on failure. */
static inline struct MHD_Response *geotify_mhd_create_response_from_held_buffer(
    size_t size, const void *buffer, MHD_ContentReaderFreeCallback release, void *context) {
    const struct geotify_mhd_functions *mhd = geotify_mhd();
    if (mhd == NULL) return NULL;
    if (mhd->create_response_from_buffer_with_free_callback_cls != NULL) {
        return mhd->create_response_from_buffer_with_free_callback_cls(size, (void *)buffer, release, context);
    }
    struct MHD_Response *response = mhd->create_response_from_buffer(size, (void *)buffer, MHD_RESPMEM_MUST_COPY);
    if (response != NULL) release(context);
    return response;
}

/* Whether answers are sent from their own bytes with their lease held until sent
   (libmicrohttpd 0.9.73 or later), rather than copied with the lease let go at once. */
static inline bool geotify_mhd_holds_buffers(void) {
    const struct geotify_mhd_functions *mhd = geotify_mhd();
    return mhd != NULL && mhd->create_response_from_buffer_with_free_callback_cls != NULL;
}

static inline void geotify_mhd_destroy_response(struct MHD_Response *response) {
    const struct geotify_mhd_functions *mhd = geotify_mhd();
    if (mhd != NULL) mhd->destroy_response(response);
}

static inline enum MHD_Result geotify_mhd_add_response_header(struct MHD_Response *response, const char *header,
                                                              const char *content) {
    const struct geotify_mhd_functions *mhd = geotify_mhd();
    return mhd == NULL ? MHD_NO : mhd->add_response_header(response, header, content);
}
#endif
