#ifndef GEOTIFY_BUFFERED_SOCKET_H
#define GEOTIFY_BUFFERED_SOCKET_H
/* Buffered reads and writes of one socket per thread, underneath libmosquitto.

   libmosquitto reads each MQTT packet in three or more read(2) calls (the command byte,
   each byte of the remaining length, then the rest) and writes each packet with a
   write(2) of its own. For a bridge that gets a stream of small packets those calls
   were most of its CPU: a profile under position traffic put 29 % of its time in `read`
   and 23 % in `write`. libmosquitto has no hook for its I/O, so this file defines `read`,
   `write` and `close` for the whole process (the executable's definitions take
   precedence over the C library's for every shared library). Calls for any descriptor
   but the one the calling thread attached go straight to the kernel, unchanged.

   For the attached socket, reads are served from a buffer that one read(2) of up to
   64 KiB fills, and writes are gathered in a buffer of 64 KiB that the owner of the loop
   flushes with one write(2) (`geotify_buffered_socket_flush`) once libmosquitto has
   written what it had queued. The semantics libmosquitto relies on are kept: bytes in
   order both ways; a short read when fewer bytes are at hand; 0 at the end of the stream;
   -1 with the kernel's errno, EAGAIN when nothing can be read or when a write finds the
   buffer full and the kernel would not take it (libmosquitto then keeps the packet
   queued, as it does when the kernel refuses it); a write larger than the buffer goes to
   the kernel directly once the buffer is flushed.

   A thread attaches one socket (its network thread's connection); the buffers are the
   thread's own, so nothing is shared between threads (libmosquitto, in threaded mode,
   reads and writes the socket only on the thread that runs its loop). Closing the
   attached descriptor (libmosquitto does, on that thread, when the connection ends)
   first sends what was gathered (waiting up to a second for the kernel to take it: a
   DISCONNECT must leave before the socket closes; what is still not taken is dropped, and
   counted: `geotify_buffered_socket_dropped`) and then detaches it, so a descriptor
   number used again later is never served stale bytes. The owner of the loop must treat
   buffered input as readable (the socket may have nothing left while the buffer holds
   whole packets: `geotify_buffered_socket_pending`) and gathered output as wanting to be
   written (`geotify_buffered_socket_unsent`).

   The buffer also follows the MQTT packets' framing in what it hands out, so that the
   owner of the loop can take a QoS 0 PUBLISH packet it holds whole without libmosquitto
   (`geotify_buffered_socket_peek_publish`), at a packet's start and nowhere else, and so
   that a PUBLISH larger than the client takes reaches libmosquitto without its payload
   (`geotify_buffered_socket_cut_publishes`). Over TLS the socket's bytes are ciphertext:
   the packets are followed, taken whole and cut in the plaintext libmosquitto reads with
   OpenSSL's `SSL_read`, and what it writes with `SSL_write` is gathered as plaintext and
   encrypted in one call when the turn's writes are flushed, both of which this file also
   defines (`geotify_buffered_socket_attach_tls`). */
#include <stddef.h>
#include <sys/types.h>

/* Buffers the calling thread's reads and writes of `socket` from now on. Attaching
   another socket drops what was buffered for the previous one. Returns 0, or -1 when the
   buffers could not be allocated (reads and writes then go to the kernel as before). */
int geotify_buffered_socket_attach(int socket);

/* Says that the calling thread's attached socket carries TLS, and `ssl` (an OpenSSL
   `SSL *`, libmosquitto's `mosquitto_ssl_get`; may be NULL) its connection: the socket's
   buffer then holds ciphertext, whose bytes are never judged as MQTT packets (no packet
   is taken whole, gated or cut there), and the plaintext libmosquitto reads with
   `SSL_read` goes through a buffer of its own, where the packets are followed as on a
   plain connection: QoS 0 PUBLISH packets taken whole, reads held to one packet, PUBLISH
   packets over the limit cut; and what libmosquitto writes with `SSL_write` is gathered
   as plaintext in a buffer of its own, which `geotify_buffered_socket_flush` (or a full
   buffer, or `SSL_shutdown`) hands to OpenSSL in one `SSL_write`, so a turn's packets
   make a few TLS records instead of one each. This file defines `SSL_read`,
   `SSL_write`, `SSL_shutdown` and `SSL_get_error` for the whole process, as it defines
   `read`: any other SSL connection (libcurl's, another thread's) is OpenSSL's alone.
   Called again with the same `ssl`, it does nothing; the plaintext buffers go with the
   socket's (closing or detaching it). Returns 0, or -1 when nothing is attached or the
   buffers could not be allocated (libmosquitto then reads every packet itself, whole,
   and OpenSSL encrypts each packet it writes, as before). */
int geotify_buffered_socket_attach_tls(void *ssl);

/* Stops buffering the calling thread's socket and frees its buffers; bytes unread and
   unsent are dropped. Safe to call when nothing is attached. */
void geotify_buffered_socket_detach(void);

/* The socket the calling thread attached, or -1. */
int geotify_buffered_socket_socket(void);

/* Bytes read from the calling thread's attached socket and not handed out yet (over
   TLS, ciphertext and plaintext alike). */
size_t geotify_buffered_socket_pending(void);

/* Whether the calling thread's last read from its attached socket found nothing at hand
   (EAGAIN) and nothing was buffered since: the socket was drained then. */
int geotify_buffered_socket_drained(void);

/* Writes what was gathered for the calling thread's attached socket, as much as the
   kernel takes without waiting; over TLS, first encrypts the plaintext gathered for its
   SSL connection (what OpenSSL cannot take now stays gathered). Returns 0 (the rest, if
   any, stays gathered: see `geotify_buffered_socket_unsent`), or -1 with errno when the
   socket failed. */
int geotify_buffered_socket_flush(void);

/* Bytes gathered for the calling thread's attached socket and not yet written, over TLS
   the plaintext not yet encrypted among them. */
size_t geotify_buffered_socket_unsent(void);

/* Bytes the calling thread's last close of its attached socket dropped: what was gathered
   and not yet taken by the kernel when the close stopped waiting (after a second) or the
   socket failed (over TLS, with the plaintext never encrypted); 0 when all of it was
   sent. Attaching a socket sets it back to 0.
   libmosquitto closes the socket as soon as it has written a DISCONNECT, and reports a
   clean end: when this is not 0 then, the DISCONNECT was among the bytes dropped and the
   broker never reads it. */
size_t geotify_buffered_socket_dropped(void);

/* How many times the calling thread's read buffer was filled from the kernel, and how
   many write(2) calls its flushes made, since it attached (for tests and benchmarks). */
unsigned long geotify_buffered_socket_fills(void);
unsigned long geotify_buffered_socket_flushes(void);

/* How many SSL_write calls the calling thread's attached SSL connection made to OpenSSL
   for the plaintext gathered (`SSL_write`), since it was attached (for tests). */
unsigned long geotify_buffered_socket_encryptions(void);

/* How many SSL_write calls on an attached SSL connection, of any thread, were refused
   ("want write") because OpenSSL could not take the plaintext gathered before them (the
   kernel would not take the records), since the process started (for tests). */
unsigned long geotify_buffered_socket_write_refusals(void);

/* A whole MQTT PUBLISH packet in the calling thread's read buffer: its topic's bytes
   (not validated), its payload's, its RETAIN flag and its length in the stream. The
   pointers are into the buffer: valid until the thread next reads. */
struct geotify_publish_view {
    const unsigned char *topic;
    size_t topic_length;
    const unsigned char *payload;
    size_t payload_length;
    int retain;
    size_t packet_length;
};

/* Whether the next packet of the calling thread's attached socket is a QoS 0 PUBLISH
   that the read buffer holds whole, with a topic of its own and (`properties`: MQTT 5)
   no properties; if so fills `view` and returns 1, else returns 0 and the packet is
   libmosquitto's to read. The buffer follows the stream's packet framing from the
   connection's first byte (its reads and these packets alike), so the answer is 0 but
   at a packet's start. Over TLS, from the plaintext's buffer (never the ciphertext's,
   whose framing is lost: `geotify_buffered_socket_attach_tls`). This is
   the one packet libmosquitto handles without any state of its own (handle__publish of
   QoS 0: the message to the callback, nothing kept or answered), and the one that comes
   by the hundred thousand; reading it here spares its allocations, locks and copies. */
int geotify_buffered_socket_peek_publish(int properties, struct geotify_publish_view *view);

/* Fills the calling thread's read buffer from its attached socket (over TLS the
   plaintext's, from OpenSSL) if the buffer is empty, as the next read would: returns the bytes it holds then, 0 at the end of the
   stream, or -1 with errno (EAGAIN: nothing at hand; EBADF: nothing attached). Lets the
   first packet of a burst be taken whole too. A failure of the socket (ECONNRESET, say)
   is also kept for the next read, which returns it, so that libmosquitto hears of it as
   if it had read first. */
ssize_t geotify_buffered_socket_fill(void);

/* Consumes the packet `geotify_buffered_socket_peek_publish` just described. */
void geotify_buffered_socket_take_publish(const struct geotify_publish_view *view);

/* With `on` nonzero, reads of the calling thread's attached socket hand out at most one
   more whole packet: once one has ended since this call, a read at the next packet's
   start returns -1 with EAGAIN, whatever is buffered, until this is called again (with
   0 to turn it off). libmosquitto's `mosquitto_loop_read` reads as many packets as the
   client has QoS 1 and 2 messages queued, whatever its argument says; with a window of
   notifications waiting for their PUBACK that was dozens of positions a call, each read
   the slow way. At a packet's start an EAGAIN is what libmosquitto takes as "nothing at
   hand": it returns, and the owner of the loop takes the next packets whole. Once the
   framing is lost (a malformed length) no packet's start is known, so reads go on as
   before. Over TLS the plaintext's reads stop so (-1 from SSL_read), and this file's
   `SSL_get_error` answers SSL_ERROR_WANT_READ for that connection then, which
   libmosquitto takes as an EAGAIN; every other answer is OpenSSL's. */
void geotify_buffered_socket_one_packet(int on);

/* From now on, PUBLISH packets of QoS 0 or 1 larger than `limit` bytes (whole) that the
   calling thread reads from its attached socket reach libmosquitto cut: with their topic
   and packet id and no payload (their fixed header rewritten to say so), while the
   payload's bytes are read from the kernel as they come and dropped, never held more
   than the buffer's 64 KiB at a time. libmosquitto then delivers the message with an
   empty payload and, for QoS 1, acknowledges it as usual; `geotify_buffered_socket_take_cut`
   says, in its callback, how many payload bytes it lost. 0 turns it off (the default).
   The thread's setting, kept across attachments. Over MQTT 3.1.1 only: an MQTT 5
   packet's properties come between its packet id and payload (an MQTT 5 broker is told
   the largest packet instead). Over TLS the plaintext is cut, once the connection is
   known (`geotify_buffered_socket_attach_tls`). Without it, a client allowed to publish to a topic the bridge reads could
   make libmosquitto allocate up to 256 MiB for one message. */
void geotify_buffered_socket_cut_publishes(size_t limit);

/* The payload bytes the last packet cut on the calling thread lost (0 when none), and
   forgets them: asked in libmosquitto's message callback, which follows that packet's
   reading at once. */
size_t geotify_buffered_socket_take_cut(void);

/* How many packets were cut on the calling thread's socket since it attached (for tests
   and benchmarks). */
unsigned long geotify_buffered_socket_cuts(void);

#endif
