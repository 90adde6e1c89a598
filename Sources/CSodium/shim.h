#ifndef GEOTIFY_CSODIUM_SHIM_H
#define GEOTIFY_CSODIUM_SHIM_H
/* libsodium: crypto_secretbox (XSalsa20-Poly1305), the secret-key authenticated
   encryption the OwnTracks apps use for their optional payload encryption, and its
   base64 codec. */
#include <sodium.h>
#endif
