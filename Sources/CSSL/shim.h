#ifndef GEOTIFY_CSSL_SHIM_H
#define GEOTIFY_CSSL_SHIM_H
/* OpenSSL's libssl, for the tests that hold both ends of a TLS connection themselves
   (CBufferedSocket's SSL_write over a socket pair). The same library libmosquitto
   already loads for TLS. */
#include <openssl/ssl.h>
#include <openssl/err.h>
#endif
