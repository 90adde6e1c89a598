#ifndef GEOTIFY_UNREAD_WAKEUPS_H
#define GEOTIFY_UNREAD_WAKEUPS_H
/* Keeps libmosquitto from making the wake-up socket pair that Geotify's network loop
   never reads.

   libmosquitto makes a socket pair for each client (`mosquitto_new`) and writes one byte
   to it for every packet it queues, so that `mosquitto_loop`'s select wakes up. Geotify
   drives the connection with a poll loop of its own (ConnectionSupervisor), which wakes
   up through its own pipe (NetworkWakeup) and never reads that pair: once the pair was
   full, every one of those writes failed with EAGAIN. Under position traffic they were
   83 000 failed system calls for 200 000 messages, one for each message published and
   38 % of all the bridge's system calls. Without the pair (libmosquitto only logs that
   it could not make one) it queues its packets the same way and writes no byte.

   This file defines `socketpair` for the whole process (as BufferedSocket.c defines
   `read` and `write`); it behaves as the C library's everywhere except on a thread
   between `geotify_unread_wakeups_refuse(1)` and `geotify_unread_wakeups_refuse(0)`,
   where it fails with EMFILE. */

/* Makes the calling thread's `socketpair` calls fail (1) or work again (0). */
void geotify_unread_wakeups_refuse(int refuse);

/* How many socket pairs were refused on the calling thread. */
unsigned long geotify_unread_wakeups_refused(void);

#endif
