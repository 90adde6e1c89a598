#include "BufferedReads.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

/* One buffer for each thread that attached a socket. */
enum { capacity = 64 * 1024 };

struct buffered_socket {
    int descriptor;          /* the attached socket, -1 when none */
    size_t start;            /* first byte not handed out */
    size_t end;              /* one past the last byte read from the kernel */
    unsigned long fills;     /* reads from the kernel into the buffer */
    int drained;             /* the last read from the kernel found nothing at hand */
    unsigned char *bytes;    /* `capacity` bytes, allocated at attach */
};

static __thread struct buffered_socket attached = { .descriptor = -1 };

static ssize_t kernel_read(int descriptor, void *buffer, size_t count) {
    return syscall(SYS_read, descriptor, buffer, count);
}

int geotify_buffered_reads_attach(int socket) {
    if (attached.descriptor == socket && attached.bytes != NULL) {
        return 0;
    }
    geotify_buffered_reads_detach();
    attached.bytes = malloc(capacity);
    if (attached.bytes == NULL) {
        return -1;
    }
    attached.descriptor = socket;
    attached.start = 0;
    attached.end = 0;
    attached.fills = 0;
    attached.drained = 0;
    return 0;
}

void geotify_buffered_reads_detach(void) {
    free(attached.bytes);
    attached.bytes = NULL;
    attached.descriptor = -1;
    attached.start = 0;
    attached.end = 0;
}

int geotify_buffered_reads_socket(void) {
    return attached.descriptor;
}

size_t geotify_buffered_reads_pending(void) {
    return attached.end - attached.start;
}

int geotify_buffered_reads_drained(void) {
    return attached.bytes != NULL && attached.start == attached.end && attached.drained;
}

unsigned long geotify_buffered_reads_fills(void) {
    return attached.fills;
}

/* The C library's `read`, for every caller in the process (libmosquitto among them). */
ssize_t read(int descriptor, void *buffer, size_t count) {
    if (descriptor < 0 || descriptor != attached.descriptor || attached.bytes == NULL) {
        return kernel_read(descriptor, buffer, count);
    }
    assert(attached.start <= attached.end && attached.end <= capacity);
    if (count == 0) {
        return 0;
    }
    if (attached.start == attached.end) {
        attached.start = 0;
        attached.end = 0;
        if (count >= capacity) {
            /* Larger than the buffer: straight into the caller's memory, copied once. */
            return kernel_read(descriptor, buffer, count);
        }
        ssize_t filled = kernel_read(descriptor, attached.bytes, capacity);
        if (filled <= 0) {
            attached.drained = filled < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
            return filled; /* end of stream, or -1 with errno (EAGAIN: nothing at hand) */
        }
        attached.drained = 0;
        attached.fills += 1;
        attached.end = (size_t)filled;
    }
    size_t available = attached.end - attached.start;
    size_t given = count < available ? count : available;
    memcpy(buffer, attached.bytes + attached.start, given);
    attached.start += given;
    return (ssize_t)given;
}

/* The C library's `close`: closing the attached socket detaches it first. */
int close(int descriptor) {
    if (descriptor >= 0 && descriptor == attached.descriptor) {
        geotify_buffered_reads_detach();
    }
    long result = syscall(SYS_close, descriptor);
    return (int)result;
}
