#ifndef GEOTIFY_CMICROHTTPD_SHIM_H
#define GEOTIFY_CMICROHTTPD_SHIM_H
/* libmicrohttpd, the GNU embedded HTTP server library. MHD_start_daemon and
   the MHD_get_*_info functions are variadic, which Swift cannot call; the functions below
   call them with fixed arguments. Everything else is called directly. */
#include <sys/socket.h>
#include <microhttpd.h>

static inline struct MHD_Daemon *geotify_mhd_start(
    unsigned int flags, const struct sockaddr *address,
    MHD_AccessHandlerCallback handler, void *handler_context,
    struct MHD_OptionItem *options) {
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, handler_context,
                            MHD_OPTION_SOCK_ADDR, address,
                            MHD_OPTION_ARRAY, options,
                            MHD_OPTION_END);
}

/* The socket of a connection (to shut it when its header is overdue), or -1. */
static inline int geotify_mhd_connection_socket(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

/* The port the daemon listens on (the one chosen when it was asked for port 0), or 0. */
static inline unsigned short geotify_mhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}
#endif
