#ifndef GEOTIFY_CMOSQUITTO_SHIM_H
#define GEOTIFY_CMOSQUITTO_SHIM_H
/* libmosquitto's client API and the MQTT v5 constants (property identifiers,
   reason codes), which live in a header of their own. */
#include <mosquitto.h>
#include <mqtt_protocol.h>
#endif
