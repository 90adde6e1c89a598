#include "UnreadWakeups.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

static __thread int refusing;
static __thread unsigned long refused;

void geotify_unread_wakeups_refuse(int refuse) {
    refusing = refuse;
}

unsigned long geotify_unread_wakeups_refused(void) {
    return refused;
}

/* The C library's `socketpair`, for every caller in the process (libmosquitto among them). */
int socketpair(int domain, int type, int protocol, int pair[2]) {
    if (refusing) {
        refused += 1;
        errno = EMFILE;
        return -1;
    }
    return (int)syscall(SYS_socketpair, domain, type, protocol, pair);
}
