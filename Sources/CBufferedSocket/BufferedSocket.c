#include "BufferedSocket.h"

#include <assert.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

/* The size of each of a thread's two buffers. */
enum { capacity = 64 * 1024 };

/* How long closing the attached socket waits for the kernel to take what was gathered. */
enum { close_wait_ms = 1000 };

struct buffered_socket {
    int descriptor;          /* the attached socket, -1 when none */
    unsigned char *input;    /* `capacity` bytes read from the kernel */
    size_t start;            /* first input byte not handed out */
    size_t end;              /* one past the last input byte */
    int drained;             /* the last read from the kernel found nothing at hand */
    unsigned char *output;   /* `capacity` bytes gathered for the kernel */
    size_t unsent;           /* output bytes not written yet, from output[0] */
    unsigned long fills;     /* reads from the kernel into `input` */
    unsigned long flushes;   /* writes to the kernel from `output` */
};

static __thread struct buffered_socket attached = { .descriptor = -1 };

static ssize_t kernel_read(int descriptor, void *buffer, size_t count) {
    return syscall(SYS_read, descriptor, buffer, count);
}

static ssize_t kernel_write(int descriptor, const void *buffer, size_t count) {
    return syscall(SYS_write, descriptor, buffer, count);
}

/* A write to the attached socket: a connection the broker or a test has shut down
   answers EPIPE, not a SIGPIPE that would end the process. */
static ssize_t socket_write(int descriptor, const void *buffer, size_t count) {
    return syscall(SYS_sendto, descriptor, buffer, count, MSG_NOSIGNAL, NULL, 0);
}

static int is_attached(int descriptor) {
    return descriptor >= 0 && descriptor == attached.descriptor && attached.input != NULL;
}

int geotify_buffered_socket_attach(int socket) {
    if (is_attached(socket)) {
        return 0;
    }
    geotify_buffered_socket_detach();
    unsigned char *input = malloc(capacity);
    unsigned char *output = malloc(capacity);
    if (input == NULL || output == NULL) {
        free(input);
        free(output);
        return -1;
    }
    attached = (struct buffered_socket){ .descriptor = socket, .input = input, .output = output };
    return 0;
}

void geotify_buffered_socket_detach(void) {
    free(attached.input);
    free(attached.output);
    attached = (struct buffered_socket){ .descriptor = -1 };
}

int geotify_buffered_socket_socket(void) {
    return attached.descriptor;
}

size_t geotify_buffered_socket_pending(void) {
    return attached.end - attached.start;
}

int geotify_buffered_socket_drained(void) {
    return attached.input != NULL && attached.start == attached.end && attached.drained;
}

size_t geotify_buffered_socket_unsent(void) {
    return attached.unsent;
}

unsigned long geotify_buffered_socket_fills(void) {
    return attached.fills;
}

unsigned long geotify_buffered_socket_flushes(void) {
    return attached.flushes;
}

int geotify_buffered_socket_flush(void) {
    size_t written = 0;
    int result = 0;
    while (written < attached.unsent) {
        ssize_t count = socket_write(attached.descriptor, attached.output + written, attached.unsent - written);
        if (count < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                result = -1;
            }
            if (errno != EINTR) {
                break;
            }
            continue;
        }
        if (count == 0) {
            break;
        }
        attached.flushes += 1;
        written += (size_t)count;
    }
    if (written > 0) {
        memmove(attached.output, attached.output + written, attached.unsent - written);
        attached.unsent -= written;
    }
    return result;
}

/* The C library's `read`, for every caller in the process (libmosquitto among them). */
ssize_t read(int descriptor, void *buffer, size_t count) {
    if (!is_attached(descriptor)) {
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
        ssize_t filled = kernel_read(descriptor, attached.input, capacity);
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
    memcpy(buffer, attached.input + attached.start, given);
    attached.start += given;
    return (ssize_t)given;
}

/* The C library's `write`, for every caller in the process. */
ssize_t write(int descriptor, const void *buffer, size_t count) {
    if (!is_attached(descriptor)) {
        return kernel_write(descriptor, buffer, count);
    }
    assert(attached.unsent <= capacity);
    if (count > capacity - attached.unsent) {
        /* No room: make some, in order. */
        if (geotify_buffered_socket_flush() != 0) {
            return -1;
        }
        if (attached.unsent > 0) {
            errno = EAGAIN; /* the kernel takes no more now: libmosquitto keeps the packet */
            return -1;
        }
        if (count >= capacity) {
            return socket_write(descriptor, buffer, count);
        }
    }
    memcpy(attached.output + attached.unsent, buffer, count);
    attached.unsent += count;
    return (ssize_t)count;
}

/* The C library's `close`: closing the attached socket sends what was gathered (waiting
   up to `close_wait_ms` in all for the kernel to take it), then detaches it. */
int close(int descriptor) {
    if (is_attached(descriptor)) {
        int waited = 0;
        while (attached.unsent > 0 && geotify_buffered_socket_flush() == 0 && attached.unsent > 0 && waited < close_wait_ms) {
            struct pollfd writable = { .fd = descriptor, .events = POLLOUT };
            (void)poll(&writable, 1, 50);
            waited += 50;
        }
        geotify_buffered_socket_detach();
    }
    return (int)syscall(SYS_close, descriptor);
}
