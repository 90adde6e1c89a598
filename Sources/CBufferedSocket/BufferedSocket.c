#include "BufferedSocket.h"

#include <assert.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <stdatomic.h>
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
    int lost;                /* a remaining length longer than four bytes, or ciphertext: no boundary is known */
    unsigned long packets;   /* packets handed out whole so far */
};

/* One buffered stream of MQTT bytes: the attached socket's (`attached`), or over TLS the
   plaintext its SSL connection decrypts (`decrypted`). */
struct buffered_socket {
    int descriptor;          /* the attached socket, -1 when none */
    SSL *ssl;                /* `decrypted`: the connection whose SSL_read fills it */
    unsigned char *input;    /* `capacity` bytes read from the kernel */
    size_t start;            /* first input byte not handed out */
    size_t end;              /* one past the last input byte */
    int drained;             /* the last read from the kernel found nothing at hand */
    unsigned char *output;   /* `capacity` bytes gathered for the kernel; `decrypted`: plaintext for one SSL_write */
    size_t unsent;           /* output bytes not written yet, from output[0] */
    unsigned long fills;     /* reads from the kernel into `input` */
    unsigned long flushes;   /* writes to the kernel from `output`; `decrypted`: SSL_write calls */
    size_t write_again;      /* `decrypted`: the length of the SSL_write of `output` OpenSSL wants
                                again (nothing is gathered until then), 0 when none */
    int deferred_error;      /* an error `geotify_buffered_socket_fill` met, for the next read */
    struct mqtt_framing framing; /* where the bytes handed out so far end, in MQTT packets */
    int one_packet;          /* reads stop at the first packet's end after `gate_from` */
    int gated;               /* `decrypted`: the last read stopped there (SSL_get_error) */
    unsigned long gate_from; /* `framing.packets` when `one_packet` was turned on */
    /* Cutting PUBLISH packets larger than `cut_limit` (`look_ahead`): */
    unsigned char gathered[8]; /* the start of a packet's header read from the kernel, not judged yet */
    size_t gathered_length;
    unsigned char prefix[8];   /* judged header bytes to hand out before the input's */
    size_t prefix_start, prefix_end;
    size_t pass_left;          /* input bytes of a cut packet to hand out: its topic and packet id */
    size_t drop_left;          /* input bytes of a cut packet's payload still to drop */
    size_t cut_payload;        /* the payload bytes the last cut packet lost, until taken */
    unsigned long cuts;        /* packets cut so far */
};

static __thread struct buffered_socket attached = { .descriptor = -1 };

/* Over TLS, the plaintext of the attached socket's SSL connection, served to
   libmosquitto's SSL_read calls as `attached` serves its reads of a plain connection,
   and where oversized packets are cut (`geotify_buffered_socket_attach_tls`). */
static __thread struct buffered_socket decrypted = { .descriptor = -1 };

/* What the calling thread's last close of its attached socket dropped unsent. */
static __thread size_t dropped_at_close;

/* PUBLISH packets larger than this are cut (`geotify_buffered_socket_cut_publishes`); 0:
   none. The thread's, kept across attachments. */
static __thread size_t cut_limit;

/* SSL_write calls refused while OpenSSL wanted the gathered plaintext's write again, by
   every thread (`geotify_buffered_socket_write_refusals`). */
static _Atomic unsigned long write_refusals;

static ssize_t kernel_read(int descriptor, void *buffer, size_t count) {
    return syscall(SYS_read, descriptor, buffer, count);
}

/* OpenSSL's own SSL_read, SSL_write, SSL_shutdown and SSL_get_error, which the
   executable's (below) stand in front of. */
struct openssl_functions {
    int (*read)(SSL *, void *, int);
    int (*write)(SSL *, const void *, int);
    int (*shutdown)(SSL *);
    int (*get_error)(const SSL *, int);
};
static struct openssl_functions openssl_found;
static pthread_once_t openssl_looked_up = PTHREAD_ONCE_INIT;

static void find_openssl(void) {
    openssl_found.read = (int (*)(SSL *, void *, int))dlsym(RTLD_NEXT, "SSL_read");
    openssl_found.write = (int (*)(SSL *, const void *, int))dlsym(RTLD_NEXT, "SSL_write");
    openssl_found.shutdown = (int (*)(SSL *))dlsym(RTLD_NEXT, "SSL_shutdown");
    openssl_found.get_error = (int (*)(const SSL *, int))dlsym(RTLD_NEXT, "SSL_get_error");
}

/* OpenSSL's own functions, looked up at the first call of any (only code linked to libssl
   calls them, so it is loaded by then). */
static const struct openssl_functions *openssl(void) {
    (void)pthread_once(&openssl_looked_up, find_openssl);
    assert(openssl_found.read != NULL && openssl_found.write != NULL && openssl_found.shutdown != NULL
           && openssl_found.get_error != NULL && "OpenSSL's functions are called only by code linked to libssl");
    return &openssl_found;
}

/* A read from where `s`'s bytes come: the kernel, or for `decrypted` OpenSSL, whose
   result (a count, or 0 or below with the reason SSL_get_error gives) is returned as it
   is, so that libmosquitto's SSL_get_error after a failed read sees what happened. */
static ssize_t source_read(struct buffered_socket *s, void *buffer, size_t count) {
    if (s->ssl != NULL) {
        return openssl()->read(s->ssl, buffer, count > INT_MAX ? INT_MAX : (int)count);
    }
    return kernel_read(s->descriptor, buffer, count);
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

static void detach_decrypted(void) {
    free(decrypted.input);
    free(decrypted.output);
    decrypted = (struct buffered_socket){ .descriptor = -1 };
}

void geotify_buffered_socket_detach(void) {
    detach_decrypted();
    free(attached.input);
    free(attached.output);
    attached = (struct buffered_socket){ .descriptor = -1 };
}

int geotify_buffered_socket_attach_tls(void *connection) {
    SSL *ssl = connection;
    if (attached.input == NULL) {
        return -1;
    }
    /* Ciphertext has no packets to follow: the framing is lost for good, so no packet is
       gated, cut or taken whole there. */
    attached.framing.lost = 1;
    if (ssl == NULL || decrypted.ssl == ssl) {
        return 0;
    }
    detach_decrypted();
    unsigned char *input = malloc(capacity);
    unsigned char *output = malloc(capacity);
    if (input == NULL || output == NULL) {
        free(input);
        free(output);
        return -1;
    }
    decrypted = (struct buffered_socket){ .descriptor = attached.descriptor, .ssl = ssl, .input = input, .output = output };
    return 0;
}

/* Hands the plaintext gathered for the attached socket's SSL connection to OpenSSL in one
   SSL_write, which writes its records into the socket's buffer: 0 when all of it went;
   -1 when OpenSSL wants the same write again (`write_again`: it holds what it encrypted
   so far, and must be passed the same bytes, as its manual says; `SSL_write` gathers
   nothing more meanwhile) or the connection failed. Then the bytes are dropped, as the
   kernel's are on a failed socket, and the socket is shut down, so that libmosquitto's
   next read ends the connection (and its session sends the QoS 1 messages again)
   instead of the connection living on without them. OpenSSL's writes land in `write`,
   which flushes the socket's buffer without coming back here. */
static int encrypt_gathered(void) {
    static __thread int encrypting;
    struct buffered_socket *s = &decrypted;
    if (s->ssl == NULL || s->unsent == 0) {
        return 0;
    }
    assert(s->unsent <= capacity);
    assert((s->write_again == 0 || s->unsent == s->write_again) && "OpenSSL is given the write it wants again, as it was");
    assert(!encrypting && "OpenSSL's write of the gathered plaintext does not come back to it");
    encrypting = 1;
    int result = openssl()->write(s->ssl, s->output, (int)s->unsent);
    encrypting = 0;
    s->flushes += 1;
    if (result > 0) {
        /* Without SSL_MODE_ENABLE_PARTIAL_WRITE (libmosquitto does not set it), all of it. */
        assert((size_t)result == s->unsent);
        s->unsent = 0;
        s->write_again = 0;
        return 0;
    }
    int error = openssl()->get_error(s->ssl, result);
    if (error == SSL_ERROR_WANT_WRITE || error == SSL_ERROR_WANT_READ) {
        s->write_again = s->unsent;
    } else {
        s->unsent = 0;
        s->write_again = 0;
        (void)shutdown(s->descriptor, SHUT_RDWR);
    }
    return -1;
}

int geotify_buffered_socket_socket(void) {
    return attached.descriptor;
}

/* The bytes `s` holds to hand out. A cut payload's bytes at hand are dropped here, and
   count for nothing; the rest of it is dropped by the next read, once the socket has it
   (nothing is read here: over TLS a read of OpenSSL's between libmosquitto's read and
   its SSL_get_error would change the reason it gets). */
static size_t held(struct buffered_socket *s) {
    if (s->input == NULL) {
        return 0;
    }
    size_t available = s->end - s->start;
    size_t dropped = available < s->drop_left ? available : s->drop_left;
    s->start += dropped;
    s->drop_left -= dropped;
    if (s->drop_left > 0) {
        return 0;
    }
    return available - dropped + (s->prefix_end - s->prefix_start);
}

size_t geotify_buffered_socket_pending(void) {
    return held(&attached) + held(&decrypted);
}

int geotify_buffered_socket_drained(void) {
    return attached.input != NULL && attached.start == attached.end && attached.drained;
}

size_t geotify_buffered_socket_unsent(void) {
    return attached.unsent + decrypted.unsent;
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

unsigned long geotify_buffered_socket_encryptions(void) {
    return decrypted.flushes;
}

unsigned long geotify_buffered_socket_write_refusals(void) {
    return atomic_load_explicit(&write_refusals, memory_order_relaxed);
}

/* Writes what was gathered for the attached socket, as much as the kernel takes without
   waiting: `geotify_buffered_socket_flush` but for the plaintext gathered for OpenSSL,
   which OpenSSL's own writes (in `encrypt_gathered`) must not re-enter. */
static int flush_output(void) {
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

int geotify_buffered_socket_flush(void) {
    (void)encrypt_gathered();
    return flush_output();
}

/* Fills `s`'s empty input buffer with what its source has at hand: the bytes read, 0 at
   the end of the stream, or what the source's read returned (`source_read`: -1 with
   errno from the kernel, EAGAIN when nothing is at hand). */
static ssize_t fill_input(struct buffered_socket *s) {
    assert(s->input != NULL && s->start == s->end);
    s->start = 0;
    s->end = 0;
    ssize_t filled = source_read(s, s->input, capacity);
    if (filled <= 0) {
        s->drained = filled < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
        return filled;
    }
    s->drained = 0;
    s->fills += 1;
    s->end = (size_t)filled;
    /* OpenSSL hands out one record a read, and a broker writes a record a packet: read on
       while it has more at hand, so that the buffer holds a burst's packets whole, as a
       plain connection's does. The read that finds nothing (or fails) ends it; the next
       read of libmosquitto's meets that again, and OpenSSL tells it so. */
    while (s->ssl != NULL && s->end < capacity) {
        ssize_t more = source_read(s, s->input + s->end, capacity - s->end);
        if (more <= 0) {
            break;
        }
        s->end += (size_t)more;
    }
    return (ssize_t)s->end;
}

static size_t variable_integer(const unsigned char *bytes, size_t count, size_t *value);

/* Writes `value` as an MQTT variable byte integer at `bytes`; returns how many bytes. */
static size_t put_variable_integer(unsigned char *bytes, size_t value) {
    size_t count = 0;
    do {
        unsigned char byte = (unsigned char)(value % 128);
        value /= 128;
        bytes[count++] = byte | (value > 0 ? 128 : 0);
    } while (value > 0);
    return count;
}

/* Drops what is left of a cut packet's payload: what the input holds of it, then what
   the source has. Returns 0 once it is all dropped, or what the read that stopped it
   returned: -1 with errno (EAGAIN: the rest has not come; over TLS OpenSSL's result),
   or 0 at the end of the stream (with `drop_left` still above 0). */
static int drop_pending(struct buffered_socket *s) {
    while (s->drop_left > 0) {
        size_t available = s->end - s->start;
        if (available == 0) {
            ssize_t filled = fill_input(s);
            if (filled <= 0) {
                return (int)filled;
            }
            continue;
        }
        size_t dropped = available < s->drop_left ? available : s->drop_left;
        s->start += dropped;
        s->drop_left -= dropped;
    }
    return 0;
}

/* Judges the packet whose header begins with `head[0..<count]`: 1 when that is enough to
   tell (`*cut` says whether to cut it, and then `*header` its fixed header's bytes,
   `*remaining` its remaining length and `*kept` the bytes of its variable header, topic
   and packet id), 0 when more bytes are needed. Cut: a PUBLISH of QoS 0 or 1 longer than
   `cut_limit`, with a topic inside the packet. Any other packet, a malformed one
   included, is left whole to libmosquitto. */
static int judge(const unsigned char *head, size_t count, int *cut, size_t *header, size_t *remaining, size_t *kept) {
    *cut = 0;
    if (count == 0) {
        return 0;
    }
    int qos = (head[0] >> 1) & 3;
    if ((head[0] >> 4) != 3 || qos > 1) {
        return 1;
    }
    size_t length_bytes = variable_integer(head + 1, count - 1, remaining);
    if (length_bytes == 0) {
        /* Not whole yet, or five length bytes (malformed: libmosquitto refuses it). */
        return count - 1 >= 4 ? 1 : 0;
    }
    *header = 1 + length_bytes;
    if (*header + *remaining <= cut_limit) {
        return 1;
    }
    if (count < *header + 2) {
        return 0;
    }
    size_t topic_length = ((size_t)head[*header] << 8) | head[*header + 1];
    *kept = 2 + topic_length + (qos > 0 ? 2 : 0);
    *cut = *kept <= *remaining;
    return 1;
}

/* At a packet's start, when `cut_limit` is set: reads ahead as far as the packet's header
   and its topic's length, and when it is a PUBLISH to cut, sets the cut up: `prefix`
   gets a fixed header whose remaining length ends after the topic and packet id, and the
   topic's length; `pass_left` the topic and packet id, handed out as they come; then
   `drop_left` the payload, dropped. A packet not cut is handed out unchanged (what was
   read ahead of it first, from `prefix`). A header that runs past the input buffer's end
   is gathered (`gathered`) while the buffer is filled again. Returns 0, or -1 with errno
   when the bytes to judge have not all come (EAGAIN) or the socket failed (over TLS,
   OpenSSL's -1: SSL_get_error says which). */
static int look_ahead(struct buffered_socket *s) {
    if (s->deferred_error != 0 && s->start == s->end && s->gathered_length == 0) {
        return 0; /* the read reports the socket's failure first */
    }
    for (;;) {
        unsigned char head[8];
        size_t count = 0;
        for (size_t at = 0; at < s->gathered_length; at++) {
            head[count++] = s->gathered[at];
        }
        for (size_t at = s->start; at < s->end && count < sizeof head; at++) {
            head[count++] = s->input[at];
        }
        int cut = 0;
        size_t header = 0, remaining = 0, kept = 0;
        if (judge(head, count, &cut, &header, &remaining, &kept)) {
            size_t from_input = 0;
            if (cut) {
                /* The header and the topic's length are replaced by the prefix. */
                from_input = header + 2 - s->gathered_length;
                s->prefix[0] = head[0];
                size_t at = 1 + put_variable_integer(s->prefix + 1, kept);
                s->prefix[at++] = head[header];
                s->prefix[at++] = head[header + 1];
                s->prefix_start = 0;
                s->prefix_end = at;
                s->pass_left = kept - 2;
                s->drop_left = remaining - kept;
                s->cut_payload = remaining - kept;
                s->cuts += 1;
            } else if (s->gathered_length > 0) {
                memcpy(s->prefix, s->gathered, s->gathered_length);
                s->prefix_start = 0;
                s->prefix_end = s->gathered_length;
            }
            s->start += from_input;
            s->gathered_length = 0;
            return 0;
        }
        /* More is needed: what the buffer holds of the header moves aside, and the
           buffer is filled again. */
        size_t available = s->end - s->start;
        assert(s->gathered_length + available < sizeof s->gathered);
        memcpy(s->gathered + s->gathered_length, s->input + s->start, available);
        s->gathered_length += available;
        s->start = s->end;
        ssize_t filled = fill_input(s);
        if (filled < 0) {
            return -1;
        }
        if (filled == 0) {
            /* The end of the stream: what was gathered goes out as it is, then the end. */
            memcpy(s->prefix, s->gathered, s->gathered_length);
            s->prefix_start = 0;
            s->prefix_end = s->gathered_length;
            s->gathered_length = 0;
            return 0;
        }
    }
}

void geotify_buffered_socket_cut_publishes(size_t limit) {
    cut_limit = limit;
}

size_t geotify_buffered_socket_take_cut(void) {
    size_t cut = attached.cut_payload + decrypted.cut_payload;
    attached.cut_payload = 0;
    decrypted.cut_payload = 0;
    return cut;
}

unsigned long geotify_buffered_socket_cuts(void) {
    return attached.cuts + decrypted.cuts;
}

/* Whether the input's start is a packet's start as libmosquitto will read it: no header
   read ahead, and no cut packet under way. */
static int at_packet_start_in_input(const struct buffered_socket *s) {
    return s->gathered_length == 0 && s->prefix_start == s->prefix_end && s->pass_left == 0
        && s->drop_left == 0 && s->framing.phase == at_command && !s->framing.lost;
}

/* Where the calling thread's MQTT packets are followed: over TLS the plaintext, else the
   socket's bytes. */
static struct buffered_socket *mqtt_stream(void) {
    return decrypted.input != NULL ? &decrypted : &attached;
}

ssize_t geotify_buffered_socket_fill(void) {
    struct buffered_socket *packets = mqtt_stream();
    if (packets->input == NULL) {
        errno = EBADF;
        return -1;
    }
    /* The socket failed: libmosquitto's next read must hear it, as it would have. (An
       SSL connection that failed fails libmosquitto's next SSL_read again itself.) */
    if (packets->drop_left > 0) {
        int dropped = drop_pending(packets);
        if (dropped != 0 || packets->drop_left > 0) {
            if (dropped < 0 && packets->ssl == NULL && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                packets->deferred_error = errno;
            }
            return dropped;
        }
    }
    if (packets->start != packets->end) {
        return (ssize_t)(packets->end - packets->start);
    }
    ssize_t filled = fill_input(packets);
    if (filled < 0 && packets->ssl == NULL && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        packets->deferred_error = errno;
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
    const struct buffered_socket *packets = mqtt_stream();
    if (packets->input == NULL || !at_packet_start_in_input(packets)) {
        return 0;
    }
    const unsigned char *packet = packets->input + packets->start;
    size_t available = packets->end - packets->start;
    /* PUBLISH (3), QoS 0, DUP clear; RETAIN either way. */
    if (available < 2 || (packet[0] & 0xFE) != 0x30) {
        return 0;
    }
    size_t remaining = 0;
    size_t length_bytes = variable_integer(packet + 1, available - 1, &remaining);
    if (length_bytes == 0 || remaining > available - 1 - length_bytes) {
        return 0; /* not whole in the buffer (or malformed): libmosquitto reads it */
    }
    if (cut_limit > 0 && 1 + length_bytes + remaining > cut_limit) {
        return 0; /* libmosquitto reads it, cut */
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
    struct buffered_socket *packets = mqtt_stream();
    assert(packets->input != NULL && packets->framing.phase == at_command);
    assert(view->packet_length <= packets->end - packets->start);
    packets->start += view->packet_length;
    packets->framing.packets += 1;
}

void geotify_buffered_socket_one_packet(int on) {
    struct buffered_socket *packets = mqtt_stream();
    packets->one_packet = on != 0;
    packets->gate_from = packets->framing.packets;
}

/* A read of `s`, as libmosquitto makes them: the bytes handed out, 0 at the end of the
   stream, or what the read of the source that stopped it returned (-1 with errno from
   the kernel; OpenSSL's result for `decrypted`). */
static ssize_t serve(struct buffered_socket *s, void *buffer, size_t count) {
    assert(s->start <= s->end && s->end <= capacity);
    if (count == 0) {
        return 0;
    }
    /* A lost framing never comes back to a packet's start, so it never stops here. */
    if (s->one_packet && s->framing.phase == at_command && s->framing.packets != s->gate_from) {
        errno = EAGAIN; /* a packet was read whole: the rest waits for the owner of the loop */
        s->gated = s->ssl != NULL; /* and SSL_get_error says "want read" */
        return -1;
    }
    s->gated = 0;
    if (cut_limit > 0 && s->prefix_start == s->prefix_end && s->pass_left == 0) {
        /* Between the packets libmosquitto reads: a cut payload's rest is dropped, and
           the next packet judged before any of it is handed out. */
        if (s->drop_left > 0) {
            int dropped = drop_pending(s);
            if (dropped != 0 || s->drop_left > 0) {
                return dropped;
            }
        }
        if (s->framing.phase == at_command && !s->framing.lost && look_ahead(s) != 0) {
            return -1;
        }
    }
    if (s->prefix_start < s->prefix_end) {
        size_t waiting = s->prefix_end - s->prefix_start;
        size_t given = count < waiting ? count : waiting;
        memcpy(buffer, s->prefix + s->prefix_start, given);
        follow(&s->framing, s->prefix + s->prefix_start, given);
        s->prefix_start += given;
        return (ssize_t)given;
    }
    /* A cut packet's topic and packet id are handed out, and nothing past them. */
    if (s->pass_left > 0 && count > s->pass_left) {
        count = s->pass_left;
    }
    if (s->start == s->end) {
        if (s->deferred_error != 0) {
            errno = s->deferred_error;
            s->deferred_error = 0;
            return -1;
        }
        s->start = 0;
        s->end = 0;
        if (count >= capacity) {
            /* Larger than the buffer: straight into the caller's memory, copied once. */
            ssize_t direct = source_read(s, buffer, count);
            if (direct > 0) {
                follow(&s->framing, buffer, (size_t)direct);
                s->pass_left -= s->pass_left > 0 ? (size_t)direct : 0;
            }
            return direct;
        }
        ssize_t filled = fill_input(s);
        if (filled <= 0) {
            return filled; /* end of stream, or the source's failure (EAGAIN: nothing at hand) */
        }
    }
    size_t available = s->end - s->start;
    size_t given = count < available ? count : available;
    memcpy(buffer, s->input + s->start, given);
    follow(&s->framing, s->input + s->start, given);
    s->start += given;
    s->pass_left -= s->pass_left > 0 ? given : 0;
    return (ssize_t)given;
}

/* The C library's `read`, for every caller in the process (libmosquitto among them). */
ssize_t read(int descriptor, void *buffer, size_t count) {
    if (!is_attached(descriptor)) {
        return kernel_read(descriptor, buffer, count);
    }
    return serve(&attached, buffer, count);
}

/* OpenSSL's `SSL_read`, for every caller in the process (libmosquitto over TLS, libcurl):
   the attached socket's SSL connection is served from `decrypted`, any other as OpenSSL
   serves it. */
int SSL_read(SSL *ssl, void *buffer, int count) {
    if (ssl == NULL || ssl != decrypted.ssl || decrypted.input == NULL || count <= 0) {
        return openssl()->read(ssl, buffer, count);
    }
    return (int)serve(&decrypted, buffer, (size_t)count);
}

/* OpenSSL's `SSL_write`, for every caller in the process: what libmosquitto writes on the
   attached socket's SSL connection is gathered as plaintext and encrypted in one SSL_write
   when the socket's buffer is flushed (`geotify_buffered_socket_flush`) or the plaintext's
   is full, so that a turn's packets make a few TLS records, not one each (an SSL_write a
   packet was about a tenth of the bridge's CPU over TLS); any other connection is
   OpenSSL's. A write that finds the plaintext's buffer full, or OpenSSL wanting its last
   write again (whose bytes must not change), while OpenSSL cannot take the gathered
   plaintext is refused with OpenSSL's reason, which its SSL_get_error gives ("want
   write": the kernel takes no more; libmosquitto keeps the packet queued, as on a plain
   socket); one larger than the buffer goes to OpenSSL directly once the buffer is empty. */
int SSL_write(SSL *ssl, const void *buffer, int count) {
    if (ssl == NULL || ssl != decrypted.ssl || decrypted.output == NULL || count <= 0) {
        return openssl()->write(ssl, buffer, count);
    }
    if (decrypted.write_again > 0 || (size_t)count > capacity - decrypted.unsent) {
        if (encrypt_gathered() != 0 && decrypted.write_again > 0) {
            atomic_fetch_add_explicit(&write_refusals, 1, memory_order_relaxed);
            return -1;
        }
        if ((size_t)count >= capacity) {
            return openssl()->write(ssl, buffer, count);
        }
    }
    memcpy(decrypted.output + decrypted.unsent, buffer, (size_t)count);
    decrypted.unsent += (size_t)count;
    return count;
}

/* OpenSSL's `SSL_shutdown`, for every caller in the process: the attached socket's SSL
   connection first encrypts what was gathered for it, so that its close_notify follows
   the packets written before it. */
int SSL_shutdown(SSL *ssl) {
    if (ssl != NULL && ssl == decrypted.ssl) {
        (void)encrypt_gathered();
    }
    return openssl()->shutdown(ssl);
}

/* OpenSSL's `SSL_get_error`, for every caller in the process: after a read of the attached
   socket's SSL connection that stopped at a packet's end (`geotify_buffered_socket_one_packet`),
   which no read of OpenSSL's explains, "want read" (once), as libmosquitto takes an
   EAGAIN; any other question is OpenSSL's (after a write `SSL_write` refused, too: OpenSSL's
   write of the gathered plaintext failed just before, and says why). */
int SSL_get_error(const SSL *ssl, int result) {
    if (ssl != NULL && ssl == decrypted.ssl && decrypted.gated && result == -1) {
        decrypted.gated = 0;
        return SSL_ERROR_WANT_READ;
    }
    return openssl()->get_error(ssl, result);
}

/* The C library's `write`, for every caller in the process. */
ssize_t write(int descriptor, const void *buffer, size_t count) {
    if (!is_attached(descriptor)) {
        return kernel_write(descriptor, buffer, count);
    }
    assert(attached.unsent <= capacity);
    if (count > capacity - attached.unsent) {
        /* No room: make some, in order. */
        if (flush_output() != 0) {
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
        while (attached.unsent > 0 && flush_output() == 0 && attached.unsent > 0 && waited < close_wait_ms) {
            struct pollfd writable = { .fd = descriptor, .events = POLLOUT };
            (void)poll(&writable, 1, 50);
            waited += 50;
        }
        dropped_at_close = attached.unsent + decrypted.unsent;
        geotify_buffered_socket_detach();
    }
    return (int)syscall(SYS_close, descriptor);
}
