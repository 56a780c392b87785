#ifndef IPCEMU_CMOSQUITTO_SHIM_H
#define IPCEMU_CMOSQUITTO_SHIM_H
#include <mosquitto.h>
#endif
