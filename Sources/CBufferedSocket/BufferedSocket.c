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

/* Where the bytes handed out of the input (to libmosquitto, or as whole PUBLISH packets)
   stand in the stream of MQTT packets: every packet is a command byte, a remaining length
   of one to four bytes (seven bits each, the high bit saying another follows), then that
   many bytes. Followed from the first byte of the connection, which starts a packet. */
struct mqtt_framing {
    enum { at_command, in_length, in_body } phase;
    int length_bytes;        /* remaining-length bytes seen of this packet */
    size_t length;           /* the remaining length, as far as read */
    size_t body_left;        /* body bytes of this packet not handed out yet */
    int lost;                /* a remaining length longer than four bytes: no boundary is known */
    unsigned long packets;   /* packets handed out whole so far */
};

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
    int deferred_error;      /* an error `geotify_buffered_socket_fill` met, for the next read */
    struct mqtt_framing framing; /* where the bytes handed out so far end, in MQTT packets */
    int one_packet;          /* reads stop at the first packet's end after `gate_from` */
    unsigned long gate_from; /* `framing.packets` when `one_packet` was turned on */
};

static __thread struct buffered_socket attached = { .descriptor = -1 };

/* What the calling thread's last close of its attached socket dropped unsent. */
static __thread size_t dropped_at_close;

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

/* Follows `count` bytes handed out, from `bytes`, through the packets' framing. */
static void follow(struct mqtt_framing *framing, const unsigned char *bytes, size_t count) {
    size_t at = 0;
    while (at < count && !framing->lost) {
        switch (framing->phase) {
        case at_command:
            at += 1;
            framing->phase = in_length;
            framing->length_bytes = 0;
            framing->length = 0;
            break;
        case in_length: {
            unsigned char byte = bytes[at++];
            framing->length |= (size_t)(byte & 127) << (7 * framing->length_bytes);
            framing->length_bytes += 1;
            if (byte & 128) {
                framing->lost = framing->length_bytes == 4; /* libmosquitto refuses it too */
            } else {
                framing->body_left = framing->length;
                framing->phase = framing->length == 0 ? at_command : in_body;
                framing->packets += framing->length == 0;
            }
            break;
        }
        case in_body: {
            size_t taken = count - at < framing->body_left ? count - at : framing->body_left;
            at += taken;
            framing->body_left -= taken;
            if (framing->body_left == 0) {
                framing->phase = at_command;
                framing->packets += 1;
            }
            break;
        }
        }
    }
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
    dropped_at_close = 0;
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

size_t geotify_buffered_socket_dropped(void) {
    return dropped_at_close;
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

/* Fills the empty input buffer with what the kernel has for the attached socket: the
   bytes read, 0 at the end of the stream, or -1 with errno (EAGAIN: nothing at hand). */
static ssize_t fill_input(void) {
    assert(attached.input != NULL && attached.start == attached.end);
    attached.start = 0;
    attached.end = 0;
    ssize_t filled = kernel_read(attached.descriptor, attached.input, capacity);
    if (filled <= 0) {
        attached.drained = filled < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
        return filled;
    }
    attached.drained = 0;
    attached.fills += 1;
    attached.end = (size_t)filled;
    return filled;
}

ssize_t geotify_buffered_socket_fill(void) {
    if (attached.input == NULL) {
        errno = EBADF;
        return -1;
    }
    if (attached.start != attached.end) {
        return (ssize_t)(attached.end - attached.start);
    }
    ssize_t filled = fill_input();
    if (filled < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        /* The socket failed: libmosquitto's next read must hear it, as it would have. */
        attached.deferred_error = errno;
    }
    return filled;
}

/* Reads an MQTT variable byte integer of at most four bytes from `bytes[0..<count]`:
   its value and length, or 0 when it is not whole there or longer than four bytes. */
static size_t variable_integer(const unsigned char *bytes, size_t count, size_t *value) {
    *value = 0;
    for (size_t at = 0; at < count && at < 4; at++) {
        *value |= (size_t)(bytes[at] & 127) << (7 * at);
        if ((bytes[at] & 128) == 0) {
            return at + 1;
        }
    }
    return 0;
}

int geotify_buffered_socket_peek_publish(int properties, struct geotify_publish_view *view) {
    if (attached.input == NULL || attached.framing.lost || attached.framing.phase != at_command) {
        return 0;
    }
    const unsigned char *packet = attached.input + attached.start;
    size_t available = attached.end - attached.start;
    /* PUBLISH (3), QoS 0, DUP clear; RETAIN either way. */
    if (available < 2 || (packet[0] & 0xFE) != 0x30) {
        return 0;
    }
    size_t remaining = 0;
    size_t length_bytes = variable_integer(packet + 1, available - 1, &remaining);
    if (length_bytes == 0 || remaining > available - 1 - length_bytes) {
        return 0; /* not whole in the buffer (or malformed): libmosquitto reads it */
    }
    const unsigned char *body = packet + 1 + length_bytes;
    if (remaining < 2) {
        return 0;
    }
    size_t topic_length = ((size_t)body[0] << 8) | body[1];
    if (topic_length == 0 || topic_length > remaining - 2) {
        return 0; /* no topic (MQTT 5: an alias) or one past the packet: libmosquitto's to judge */
    }
    size_t at = 2 + topic_length;
    if (properties) {
        /* MQTT 5: only a packet without properties; one with any goes to libmosquitto. */
        if (at >= remaining || body[at] != 0) {
            return 0;
        }
        at += 1;
    }
    view->topic = body + 2;
    view->topic_length = topic_length;
    view->payload = body + at;
    view->payload_length = remaining - at;
    view->retain = packet[0] & 1;
    view->packet_length = 1 + length_bytes + remaining;
    return 1;
}

void geotify_buffered_socket_take_publish(const struct geotify_publish_view *view) {
    assert(attached.input != NULL && attached.framing.phase == at_command);
    assert(view->packet_length <= attached.end - attached.start);
    attached.start += view->packet_length;
    attached.framing.packets += 1;
}

void geotify_buffered_socket_one_packet(int on) {
    attached.one_packet = on != 0;
    attached.gate_from = attached.framing.packets;
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
    /* A lost framing never comes back to a packet's start, so it never stops here. */
    if (attached.one_packet && attached.framing.phase == at_command && attached.framing.packets != attached.gate_from) {
        errno = EAGAIN; /* a packet was read whole: the rest waits for the owner of the loop */
        return -1;
    }
    if (attached.start == attached.end) {
        if (attached.deferred_error != 0) {
            errno = attached.deferred_error;
            attached.deferred_error = 0;
            return -1;
        }
        attached.start = 0;
        attached.end = 0;
        if (count >= capacity) {
            /* Larger than the buffer: straight into the caller's memory, copied once. */
            ssize_t direct = kernel_read(descriptor, buffer, count);
            if (direct > 0) {
                follow(&attached.framing, buffer, (size_t)direct);
            }
            return direct;
        }
        ssize_t filled = fill_input();
        if (filled <= 0) {
            return filled; /* end of stream, or -1 with errno (EAGAIN: nothing at hand) */
        }
    }
    size_t available = attached.end - attached.start;
    size_t given = count < available ? count : available;
    memcpy(buffer, attached.input + attached.start, given);
    follow(&attached.framing, attached.input + attached.start, given);
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
   up to `close_wait_ms` in all for the kernel to take it), keeps the count of what it
   could not send (`geotify_buffered_socket_dropped`), then detaches it. */
int close(int descriptor) {
    if (is_attached(descriptor)) {
        int waited = 0;
        while (attached.unsent > 0 && geotify_buffered_socket_flush() == 0 && attached.unsent > 0 && waited < close_wait_ms) {
            struct pollfd writable = { .fd = descriptor, .events = POLLOUT };
            (void)poll(&writable, 1, 50);
            waited += 50;
        }
        dropped_at_close = attached.unsent;
        geotify_buffered_socket_detach();
    }
    return (int)syscall(SYS_close, descriptor);
}
