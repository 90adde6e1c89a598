#ifndef GEOTIFY_CSQLITE_SHIM_H
#define GEOTIFY_CSQLITE_SHIM_H
#include <sqlite3.h>
#endif
