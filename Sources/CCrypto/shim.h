#ifndef GEOTIFY_CCRYPTO_SHIM_H
#define GEOTIFY_CCRYPTO_SHIM_H
/* OpenSSL's libcrypto, for HMAC-SHA256 (webhook signatures). The same library libcurl
   and libmosquitto already load for TLS. */
#include <openssl/evp.h>
#include <openssl/hmac.h>
#endif
