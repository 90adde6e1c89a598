#ifndef GEOTIFY_BUFFERED_READS_H
#define GEOTIFY_BUFFERED_READS_H
/* Buffered reads of one socket per thread, underneath libmosquitto.

   libmosquitto reads each MQTT packet in three or more read(2) calls (the command byte,
   each byte of the remaining length, then the rest). For a subscriber that gets a
   stream of small packets those calls are most of its CPU: a profile of the bridge under
   position traffic put 29 % of its time in `read`. libmosquitto has no hook for its I/O,
   so this file defines `read` and `close` for the whole process (the executable's
   definitions take precedence over the C library's for every shared library). Calls for
   any descriptor but the one the calling thread attached go straight to the kernel; calls
   for the attached socket are served from a buffer that one read(2) of up to 64 KiB
   fills, so a burst of packets costs one system call instead of three a packet. The
   semantics libmosquitto relies on are kept: bytes in order, a short read when fewer are
   at hand, 0 at the end of the stream, -1 with the kernel's errno (EAGAIN when nothing
   is at hand).

   A thread attaches one socket (its network thread's connection); the buffer is the
   thread's own, so nothing is shared between threads. Closing the attached descriptor
   (libmosquitto does, on the same thread, when the connection ends) detaches it and
   drops what was unread, so a descriptor number used again later is never served stale
   bytes. The owner of the loop must treat buffered bytes as readable: the socket may
   have nothing left while the buffer still holds whole packets
   (`geotify_buffered_reads_pending`). */
#include <stddef.h>

/* Serves the calling thread's reads of `socket` from its buffer from now on. Attaching
   another socket drops what was buffered for the previous one. Returns 0, or -1 when the
   buffer could not be allocated (reads then go to the kernel as before). */
int geotify_buffered_reads_attach(int socket);

/* Stops serving the calling thread's reads from its buffer and frees it; unread bytes
   are dropped. Safe to call when nothing is attached. */
void geotify_buffered_reads_detach(void);

/* The socket the calling thread attached, or -1. */
int geotify_buffered_reads_socket(void);

/* Bytes read from the calling thread's attached socket and not handed out yet. */
size_t geotify_buffered_reads_pending(void);

/* Whether the calling thread's last read from its attached socket found nothing at hand
   (EAGAIN) and nothing was buffered since: the socket was drained then. */
int geotify_buffered_reads_drained(void);

/* How many times the calling thread's buffer was filled from the kernel since it was
   attached (for tests and benchmarks). */
unsigned long geotify_buffered_reads_fills(void);

#endif
