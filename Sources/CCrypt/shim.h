#ifndef GEOTIFY_CCRYPT_SHIM_H
#define GEOTIFY_CCRYPT_SHIM_H
/* libcrypt (libxcrypt): crypt_r, which checks a password against a crypt(3) hash
   such as the bcrypt ones `htpasswd -B` writes. */
#include <crypt.h>
#endif
