/// The control API's OpenAPI 3.0 document, written by hand and served at /openapi.json. The
/// ControlAPITests check it against the live server both ways (every documented operation answers
/// with a documented status and shape; every route the server has is documented).
enum OpenAPIDocument {
    static let json = #"""
{
  "openapi": "3.0.3",
  "info": {
    "title": "ipcemu control API",
    "version": "1.0.0",
    "description": "Drive emulated doorbells (Tuya-style IPC with screen): state, doorbell presses, answers, faults, the call journal, live events. Listens on 127.0.0.1 unless `--control` says otherwise; any other address needs `--control-token`, and then every request needs `Authorization: Bearer TOKEN` (or `?token=TOKEN`), else 401. Errors are JSON: {\"error\": \"...\", \"field\": \"...\"|null}; unknown device 404; an action that makes no sense in the current state 409."
  },
  "servers": [
    {
      "url": "http://127.0.0.1:8080"
    }
  ],
  "security": [
    {},
    {
      "bearerAuth": []
    }
  ],
  "paths": {
    "/": {
      "get": {
        "summary": "The web console (HTML, everything served by the binary)",
        "tags": [
          "console"
        ],
        "responses": {
          "200": {
            "description": "HTML page",
            "content": {
              "text/html": {
                "schema": {
                  "type": "string"
                }
              }
            }
          }
        }
      }
    },
    "/openapi.json": {
      "get": {
        "summary": "This document",
        "tags": [
          "meta"
        ],
        "responses": {
          "200": {
            "description": "OpenAPI 3.0 document",
            "content": {
              "application/json": {
                "schema": {
                  "type": "object"
                }
              }
            }
          }
        }
      }
    },
    "/metrics": {
      "get": {
        "summary": "Prometheus metrics (text format 0.0.4)",
        "tags": [
          "meta"
        ],
        "responses": {
          "200": {
            "description": "Prometheus text",
            "content": {
              "text/plain": {
                "schema": {
                  "type": "string"
                }
              }
            }
          }
        }
      }
    },
    "/api/devices": {
      "get": {
        "summary": "The devices in the process with their state, a page at a time (a fleet holds thousands)",
        "tags": [
          "devices"
        ],
        "responses": {
          "200": {
            "description": "The devices",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/DeviceList"
                }
              }
            }
          },
          "400": {
            "description": "Bad query parameter; `field` names it",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          }
        },
        "parameters": [
          {
            "name": "offset",
            "in": "query",
            "required": false,
            "description": "Skip this many matching devices (default 0).",
            "schema": {
              "type": "integer",
              "minimum": 0
            }
          },
          {
            "name": "limit",
            "in": "query",
            "required": false,
            "description": "At most this many devices (1-10000, default 1000).",
            "schema": {
              "type": "integer",
              "minimum": 1,
              "maximum": 10000
            }
          },
          {
            "name": "prefix",
            "in": "query",
            "required": false,
            "description": "Only devices whose devId starts with this.",
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "phase",
            "in": "query",
            "required": false,
            "description": "Only devices in this call phase.",
            "schema": {
              "type": "string",
              "enum": [
                "idle",
                "ringingIncoming",
                "ringingOutgoing",
                "answered",
                "shutDown"
              ]
            }
          }
        ]
      }
    },
    "/api/devices/{devId}": {
      "get": {
        "summary": "One device's state",
        "tags": [
          "devices"
        ],
        "responses": {
          "200": {
            "description": "State",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/DeviceState"
                }
              }
            }
          },
          "404": {
            "description": "No device with that devId",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          }
        },
        "parameters": [
          {
            "name": "devId",
            "in": "path",
            "required": true,
            "schema": {
              "type": "string"
            }
          }
        ]
      }
    },
    "/api/devices/{devId}/press": {
      "post": {
        "summary": "Press the doorbell: call targets (default: the household)",
        "tags": [
          "devices"
        ],
        "responses": {
          "200": {
            "description": "Calling",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/PressReply"
                }
              }
            }
          },
          "400": {
            "description": "Bad request; `field` names the field",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          },
          "404": {
            "description": "No device with that devId",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          },
          "409": {
            "description": "Makes no sense in the current state (the engine's error)",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          }
        },
        "parameters": [
          {
            "name": "devId",
            "in": "path",
            "required": true,
            "schema": {
              "type": "string"
            }
          }
        ],
        "requestBody": {
          "required": false,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/PressRequest"
              }
            }
          }
        }
      }
    },
    "/api/devices/{devId}/answer": {
      "post": {
        "summary": "Answer the ringing incoming call",
        "tags": [
          "devices"
        ],
        "responses": {
          "200": {
            "description": "Done; the new state",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/DeviceState"
                }
              }
            }
          },
          "404": {
            "description": "No device with that devId",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          },
          "409": {
            "description": "Makes no sense in the current state (the engine's error)",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          }
        },
        "parameters": [
          {
            "name": "devId",
            "in": "path",
            "required": true,
            "schema": {
              "type": "string"
            }
          }
        ]
      }
    },
    "/api/devices/{devId}/reject": {
      "post": {
        "summary": "Reject the ringing incoming call",
        "tags": [
          "devices"
        ],
        "responses": {
          "200": {
            "description": "Done; the new state",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/DeviceState"
                }
              }
            }
          },
          "404": {
            "description": "No device with that devId",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          },
          "409": {
            "description": "Makes no sense in the current state (the engine's error)",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          }
        },
        "parameters": [
          {
            "name": "devId",
            "in": "path",
            "required": true,
            "schema": {
              "type": "string"
            }
          }
        ]
      }
    },
    "/api/devices/{devId}/cancel": {
      "post": {
        "summary": "Cancel the outgoing call before an answer",
        "tags": [
          "devices"
        ],
        "responses": {
          "200": {
            "description": "Done; the new state",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/DeviceState"
                }
              }
            }
          },
          "404": {
            "description": "No device with that devId",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          },
          "409": {
            "description": "Makes no sense in the current state (the engine's error)",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          }
        },
        "parameters": [
          {
            "name": "devId",
            "in": "path",
            "required": true,
            "schema": {
              "type": "string"
            }
          }
        ]
      }
    },
    "/api/devices/{devId}/hangup": {
      "post": {
        "summary": "Hang up the answered call",
        "tags": [
          "devices"
        ],
        "responses": {
          "200": {
            "description": "Done; the new state",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/DeviceState"
                }
              }
            }
          },
          "404": {
            "description": "No device with that devId",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          },
          "409": {
            "description": "Makes no sense in the current state (the engine's error)",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          }
        },
        "parameters": [
          {
            "name": "devId",
            "in": "path",
            "required": true,
            "schema": {
              "type": "string"
            }
          }
        ]
      }
    },
    "/api/devices/{devId}/answer-policy": {
      "put": {
        "summary": "Set the answer policy",
        "tags": [
          "devices"
        ],
        "responses": {
          "200": {
            "description": "Set",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/DeviceState"
                }
              }
            }
          },
          "400": {
            "description": "Bad request; `field` names the field",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          },
          "404": {
            "description": "No device with that devId",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          },
          "409": {
            "description": "Makes no sense in the current state (the engine's error)",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          }
        },
        "parameters": [
          {
            "name": "devId",
            "in": "path",
            "required": true,
            "schema": {
              "type": "string"
            }
          }
        ],
        "requestBody": {
          "required": false,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/AnswerPolicyRequest"
              }
            }
          }
        }
      }
    },
    "/api/devices/{devId}/faults": {
      "get": {
        "summary": "Faults in force",
        "tags": [
          "faults"
        ],
        "responses": {
          "200": {
            "description": "Faults",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Faults"
                }
              }
            }
          },
          "404": {
            "description": "No device with that devId",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          }
        },
        "parameters": [
          {
            "name": "devId",
            "in": "path",
            "required": true,
            "schema": {
              "type": "string"
            }
          }
        ]
      },
      "put": {
        "summary": "Set faults (fields left out stay as they are): stop answering heartbeats, delay every reply, act busy",
        "tags": [
          "faults"
        ],
        "responses": {
          "200": {
            "description": "Faults now in force",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Faults"
                }
              }
            }
          },
          "400": {
            "description": "Bad request; `field` names the field",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          },
          "404": {
            "description": "No device with that devId",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          },
          "409": {
            "description": "Makes no sense in the current state (the engine's error)",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          }
        },
        "parameters": [
          {
            "name": "devId",
            "in": "path",
            "required": true,
            "schema": {
              "type": "string"
            }
          }
        ],
        "requestBody": {
          "required": false,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/FaultsRequest"
              }
            }
          }
        }
      }
    },
    "/api/devices/{devId}/faults/drop-connection": {
      "post": {
        "summary": "Drop the MQTT connection without DISCONNECT (the broker publishes the will) and reconnect after `seconds`",
        "tags": [
          "faults"
        ],
        "responses": {
          "202": {
            "description": "Dropped",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/DropConnectionReply"
                }
              }
            }
          },
          "400": {
            "description": "Bad request; `field` names the field",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          },
          "404": {
            "description": "No device with that devId",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          }
        },
        "parameters": [
          {
            "name": "devId",
            "in": "path",
            "required": true,
            "schema": {
              "type": "string"
            }
          }
        ],
        "requestBody": {
          "required": false,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/DropConnectionRequest"
              }
            }
          }
        }
      }
    },
    "/api/devices/{devId}/faults/drop-p2p": {
      "post": {
        "summary": "Drop every P2P media link of the device as if the network failed; unless the app reconnects within 5 s the device sends stop disconnected (PROTOCOL.md 3.3)",
        "tags": [
          "faults"
        ],
        "responses": {
          "202": {
            "description": "Dropped",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/DropP2PReply"
                }
              }
            }
          },
          "404": {
            "description": "No device with that devId",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          }
        },
        "parameters": [
          {
            "name": "devId",
            "in": "path",
            "required": true,
            "schema": {
              "type": "string"
            }
          }
        ]
      }
    },
    "/api/devices/{devId}/journal": {
      "get": {
        "summary": "The call journal: recent entries, oldest first",
        "tags": [
          "devices"
        ],
        "responses": {
          "200": {
            "description": "Entries",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Journal"
                }
              }
            }
          },
          "400": {
            "description": "Bad request; `field` names the field",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          },
          "404": {
            "description": "No device with that devId",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          }
        },
        "parameters": [
          {
            "name": "devId",
            "in": "path",
            "required": true,
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "limit",
            "in": "query",
            "required": false,
            "schema": {
              "type": "integer",
              "minimum": 1,
              "maximum": 10000,
              "default": 100
            }
          }
        ]
      }
    },
    "/api/events": {
      "get": {
        "summary": "Server-sent events: every call event of every device (or of `device`), and the console phone's (type phone). Each `data:` line is one JSON object with `type`, `device`, `t`.",
        "tags": [
          "events"
        ],
        "responses": {
          "200": {
            "description": "text/event-stream",
            "content": {
              "text/event-stream": {
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "404": {
            "description": "No such device",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          }
        },
        "parameters": [
          {
            "name": "device",
            "in": "query",
            "required": false,
            "schema": {
              "type": "string"
            }
          }
        ]
      }
    },
    "/api/phone": {
      "get": {
        "summary": "The console phone (an app user run by the server, in the household)",
        "tags": [
          "console"
        ],
        "responses": {
          "200": {
            "description": "State",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/PhoneState"
                }
              }
            }
          },
          "404": {
            "description": "No console phone in this process",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          }
        }
      }
    },
    "/api/phone/answer": {
      "post": {
        "summary": "Accept the call ringing the console phone",
        "tags": [
          "console"
        ],
        "responses": {
          "200": {
            "description": "Done",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/PhoneState"
                }
              }
            }
          },
          "404": {
            "description": "No console phone",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          },
          "409": {
            "description": "Makes no sense in the current state (the engine's error)",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          }
        }
      }
    },
    "/api/phone/reject": {
      "post": {
        "summary": "Reject the call ringing the console phone",
        "tags": [
          "console"
        ],
        "responses": {
          "200": {
            "description": "Done",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/PhoneState"
                }
              }
            }
          },
          "404": {
            "description": "No console phone",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          },
          "409": {
            "description": "Makes no sense in the current state (the engine's error)",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          }
        }
      }
    },
    "/api/phone/hangup": {
      "post": {
        "summary": "Hang up the console phone's call",
        "tags": [
          "console"
        ],
        "responses": {
          "200": {
            "description": "Done",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/PhoneState"
                }
              }
            }
          },
          "404": {
            "description": "No console phone",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          },
          "409": {
            "description": "Makes no sense in the current state (the engine's error)",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          }
        }
      }
    },
    "/api/phone/video": {
      "post": {
        "summary": "Live video of the console phone's answered call: relays the browser's offer to the device as the console user (302 offer over MQTT, auth from the device's secrets) and returns the device's answer with its candidates (collected until end-of-candidates or 1.5 s)",
        "tags": [
          "console"
        ],
        "responses": {
          "200": {
            "description": "The device's answer",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/VideoAnswer"
                }
              }
            }
          },
          "400": {
            "description": "Bad request; `field` names the field",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          },
          "404": {
            "description": "No console phone",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          },
          "409": {
            "description": "Makes no sense in the current state (the engine's error)",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          },
          "502": {
            "description": "The device refused the offer (disconnect) or could not be reached",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          },
          "504": {
            "description": "No answer from the device in time",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          }
        },
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/VideoOffer"
              }
            }
          }
        }
      }
    },
    "/api/phone/video/resolution": {
      "post": {
        "summary": "The HD/SD button: switch the console phone's live video link between the device's main and sub stream (302 resolution to the device, PROTOCOL.md 4; no new offer)",
        "tags": [
          "console"
        ],
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/ResolutionRequest"
              }
            }
          }
        },
        "responses": {
          "200": {
            "description": "Sent; the phone's state with the stream asked for",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/PhoneState"
                }
              }
            }
          },
          "400": {
            "description": "Bad request; `field` names the field",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          },
          "404": {
            "description": "No console phone",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          },
          "409": {
            "description": "The console phone has no video link",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          },
          "502": {
            "description": "The message could not be sent to the device",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          }
        }
      }
    },
    "/api/phone/video/close": {
      "post": {
        "summary": "Close the console phone's video link (302 disconnect to the device); nothing to close is not an error",
        "tags": [
          "console"
        ],
        "responses": {
          "200": {
            "description": "Closed",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/PhoneState"
                }
              }
            }
          },
          "404": {
            "description": "No console phone",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          }
        }
      }
    },
    "/api/fleet": {
      "get": {
        "summary": "The fleet of this process (`ipcemu fleet`): devices, online, in a call",
        "tags": [
          "fleet"
        ],
        "responses": {
          "200": {
            "description": "Fleet state",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/FleetState"
                }
              }
            }
          },
          "404": {
            "description": "This process runs no fleet (`ipcemu run`)",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          }
        }
      }
    },
    "/api/fleet/faults/drop-connection": {
      "post": {
        "summary": "Reconnect storm: every device drops its MQTT connection without DISCONNECT (the broker publishes every will) and reconnects after `seconds` plus up to `jitterSeconds`",
        "tags": [
          "fleet",
          "faults"
        ],
        "responses": {
          "202": {
            "description": "Dropped",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/FleetDropConnectionReply"
                }
              }
            }
          },
          "400": {
            "description": "Bad request; `field` names the field",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          },
          "404": {
            "description": "This process runs no fleet (`ipcemu run`)",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          }
        },
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/FleetDropConnectionRequest"
              }
            }
          }
        }
      }
    },
    "/api/fleet/faults/heartbeats": {
      "put": {
        "summary": "Stop heartbeat replies on a fraction of the devices (the apps end those calls with -2532)",
        "tags": [
          "fleet",
          "faults"
        ],
        "responses": {
          "200": {
            "description": "Devices now suppressing",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/FleetHeartbeatsReply"
                }
              }
            }
          },
          "400": {
            "description": "Bad request; `field` names the field",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          },
          "404": {
            "description": "This process runs no fleet (`ipcemu run`)",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          }
        },
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/FleetHeartbeatsRequest"
              }
            }
          }
        }
      }
    }
  },
  "components": {
    "schemas": {
      "Error": {
        "type": "object",
        "properties": {
          "error": {
            "type": "string",
            "description": "What was wrong."
          },
          "field": {
            "type": "string",
            "description": "The request field it is about, or null.",
            "nullable": true
          }
        },
        "required": [
          "error",
          "field"
        ],
        "additionalProperties": false
      },
      "Session": {
        "type": "object",
        "properties": {
          "sessionId": {
            "type": "string"
          },
          "direction": {
            "type": "string",
            "enum": [
              "incoming",
              "outgoing"
            ]
          },
          "phase": {
            "type": "string",
            "enum": [
              "ringingIncoming",
              "ringingOutgoing",
              "answered"
            ]
          },
          "callType": {
            "type": "integer",
            "enum": [
              1,
              2,
              3
            ]
          },
          "peers": {
            "type": "array",
            "items": {
              "type": "string"
            }
          },
          "activePeers": {
            "type": "array",
            "items": {
              "type": "string"
            }
          },
          "peersRinging": {
            "type": "array",
            "items": {
              "type": "string"
            }
          },
          "answeredBy": {
            "type": "string",
            "nullable": true
          },
          "deadline": {
            "type": "integer",
            "description": "unix ms"
          },
          "startedAt": {
            "type": "integer"
          },
          "answeredAt": {
            "type": "integer",
            "nullable": true
          },
          "mediaLink": {
            "type": "string",
            "enum": [
              "none",
              "connecting",
              "up",
              "lost"
            ]
          }
        },
        "required": [
          "activePeers",
          "answeredAt",
          "answeredBy",
          "callType",
          "deadline",
          "direction",
          "mediaLink",
          "peers",
          "peersRinging",
          "phase",
          "sessionId",
          "startedAt"
        ],
        "additionalProperties": false
      },
      "CallRecord": {
        "type": "object",
        "properties": {
          "sessionId": {
            "type": "string"
          },
          "direction": {
            "type": "string",
            "enum": [
              "incoming",
              "outgoing"
            ]
          },
          "peers": {
            "type": "array",
            "items": {
              "type": "string"
            }
          },
          "answeredBy": {
            "type": "string",
            "nullable": true
          },
          "callType": {
            "type": "integer",
            "enum": [
              1,
              2,
              3
            ]
          },
          "startedAt": {
            "type": "integer"
          },
          "answeredAt": {
            "type": "integer",
            "nullable": true
          },
          "endedAt": {
            "type": "integer"
          },
          "outcome": {
            "type": "string",
            "enum": [
              "hungUp",
              "cancelled",
              "rejected",
              "busy",
              "notAnswered",
              "answeredElsewhere",
              "rejectedElsewhere",
              "stopped"
            ]
          },
          "endedBy": {
            "type": "string",
            "enum": [
              "local",
              "remote"
            ]
          },
          "reason": {
            "type": "string",
            "nullable": true
          },
          "sdkError": {
            "type": "integer",
            "nullable": true
          }
        },
        "required": [
          "answeredAt",
          "answeredBy",
          "callType",
          "direction",
          "endedAt",
          "endedBy",
          "outcome",
          "peers",
          "reason",
          "sdkError",
          "sessionId",
          "startedAt"
        ],
        "additionalProperties": false
      },
      "Faults": {
        "type": "object",
        "properties": {
          "heartbeatRepliesSuppressed": {
            "type": "boolean"
          },
          "replyDelayMs": {
            "type": "integer",
            "minimum": 0
          },
          "actingBusy": {
            "type": "boolean"
          }
        },
        "required": [
          "actingBusy",
          "heartbeatRepliesSuppressed",
          "replyDelayMs"
        ],
        "additionalProperties": false
      },
      "DeviceState": {
        "type": "object",
        "properties": {
          "devId": {
            "type": "string"
          },
          "name": {
            "type": "string"
          },
          "category": {
            "type": "string"
          },
          "connected": {
            "type": "boolean",
            "description": "MQTT connection up"
          },
          "phase": {
            "type": "string",
            "enum": [
              "idle",
              "ringingIncoming",
              "ringingOutgoing",
              "answered",
              "shutDown"
            ]
          },
          "session": {
            "nullable": true,
            "allOf": [
              {
                "$ref": "#/components/schemas/Session"
              }
            ]
          },
          "peers": {
            "type": "array",
            "items": {
              "type": "string"
            }
          },
          "answerPolicy": {
            "type": "string",
            "description": "answer, answer:SECONDS, reject, ignore, busy or manual"
          },
          "actingBusy": {
            "type": "boolean"
          },
          "callsEnded": {
            "type": "integer"
          },
          "lastCall": {
            "nullable": true,
            "allOf": [
              {
                "$ref": "#/components/schemas/CallRecord"
              }
            ]
          },
          "household": {
            "type": "array",
            "items": {
              "type": "string"
            }
          },
          "faults": {
            "$ref": "#/components/schemas/Faults"
          },
          "media": {
            "type": "object",
            "properties": {
              "p2pLink": {
                "type": "string",
                "enum": [
                  "none",
                  "connecting",
                  "up",
                  "lost"
                ]
              },
              "framesSent": {
                "type": "integer"
              },
              "framesReceived": {
                "type": "integer"
              },
              "fps": {
                "type": "number"
              },
              "available": {
                "type": "boolean",
                "description": "true: this build has the WebRTC media link"
              }
            },
            "required": [
              "available",
              "fps",
              "framesReceived",
              "framesSent",
              "p2pLink"
            ],
            "additionalProperties": false
          },
          "mqtt": {
            "type": "object",
            "properties": {
              "reconnects": {
                "type": "integer"
              },
              "messagesIn": {
                "type": "integer"
              },
              "messagesOut": {
                "type": "integer"
              }
            },
            "required": [
              "messagesIn",
              "messagesOut",
              "reconnects"
            ],
            "additionalProperties": false
          }
        },
        "required": [
          "actingBusy",
          "answerPolicy",
          "callsEnded",
          "category",
          "connected",
          "devId",
          "faults",
          "household",
          "lastCall",
          "media",
          "mqtt",
          "name",
          "peers",
          "phase",
          "session"
        ],
        "additionalProperties": false
      },
      "DeviceList": {
        "type": "object",
        "properties": {
          "devices": {
            "type": "array",
            "items": {
              "$ref": "#/components/schemas/DeviceState"
            }
          },
          "total": {
            "type": "integer",
            "description": "Devices that match the filters (every page together)."
          },
          "offset": {
            "type": "integer"
          },
          "limit": {
            "type": "integer"
          }
        },
        "required": [
          "devices",
          "total",
          "offset",
          "limit"
        ],
        "additionalProperties": false
      },
      "PressRequest": {
        "type": "object",
        "properties": {
          "targets": {
            "type": "array",
            "items": {
              "type": "string",
              "minLength": 1
            },
            "description": "App users to call (default: the household)"
          },
          "callType": {
            "type": "integer",
            "enum": [
              1,
              2,
              3
            ]
          },
          "timeout": {
            "type": "number",
            "description": "Seconds the call rings (default: the profile's callTimeout)",
            "exclusiveMinimum": true,
            "minimum": 0,
            "maximum": 3600
          }
        },
        "required": [],
        "additionalProperties": false
      },
      "PressReply": {
        "type": "object",
        "properties": {
          "sessionId": {
            "type": "string"
          },
          "device": {
            "$ref": "#/components/schemas/DeviceState"
          }
        },
        "required": [
          "device",
          "sessionId"
        ],
        "additionalProperties": false
      },
      "AnswerPolicyRequest": {
        "type": "object",
        "properties": {
          "policy": {
            "type": "string",
            "enum": [
              "answer",
              "reject",
              "ignore",
              "busy",
              "manual"
            ]
          },
          "afterSeconds": {
            "type": "number",
            "minimum": 0,
            "maximum": 3600,
            "description": "answer and reject only: the delay before the device answers or rejects"
          }
        },
        "required": [
          "policy"
        ],
        "additionalProperties": false
      },
      "FaultsRequest": {
        "type": "object",
        "properties": {
          "heartbeatRepliesSuppressed": {
            "type": "boolean"
          },
          "replyDelayMs": {
            "type": "integer",
            "minimum": 0,
            "maximum": 600000
          },
          "actingBusy": {
            "type": "boolean"
          }
        },
        "required": [],
        "additionalProperties": false
      },
      "DropConnectionRequest": {
        "type": "object",
        "properties": {
          "seconds": {
            "type": "number",
            "minimum": 0,
            "maximum": 3600
          }
        },
        "required": [
          "seconds"
        ],
        "additionalProperties": false
      },
      "DropConnectionReply": {
        "type": "object",
        "properties": {
          "dropped": {
            "type": "boolean"
          },
          "seconds": {
            "type": "number"
          }
        },
        "required": [
          "dropped",
          "seconds"
        ],
        "additionalProperties": false
      },
      "DropP2PReply": {
        "type": "object",
        "properties": {
          "dropped": {
            "type": "integer",
            "description": "How many P2P links were closed."
          }
        },
        "required": [
          "dropped"
        ],
        "additionalProperties": false
      },
      "JournalEntry": {
        "type": "object",
        "properties": {
          "t": {
            "type": "integer",
            "description": "unix ms"
          },
          "time": {
            "type": "string",
            "format": "date-time"
          },
          "device": {
            "type": "string"
          },
          "kind": {
            "type": "string",
            "enum": [
              "event",
              "call"
            ]
          },
          "session": {
            "type": "string"
          },
          "direction": {
            "type": "string",
            "description": "event: in or out; call: incoming or outgoing"
          },
          "event": {
            "type": "string"
          },
          "peer": {
            "type": "string"
          },
          "reason": {
            "type": "string",
            "nullable": true
          },
          "callType": {
            "type": "integer"
          },
          "outcome": {
            "type": "string"
          },
          "endedBy": {
            "type": "string"
          },
          "peers": {
            "type": "array",
            "items": {
              "type": "string"
            }
          },
          "answeredBy": {
            "type": "string",
            "nullable": true
          },
          "startedAt": {
            "type": "integer"
          },
          "answeredAt": {
            "type": "integer",
            "nullable": true
          },
          "endedAt": {
            "type": "integer"
          }
        },
        "required": [
          "device",
          "direction",
          "kind",
          "session",
          "t",
          "time"
        ],
        "additionalProperties": false
      },
      "Journal": {
        "type": "object",
        "properties": {
          "devId": {
            "type": "string"
          },
          "file": {
            "type": "string",
            "nullable": true
          },
          "entries": {
            "type": "array",
            "items": {
              "$ref": "#/components/schemas/JournalEntry"
            }
          }
        },
        "required": [
          "devId",
          "entries",
          "file"
        ],
        "additionalProperties": false
      },
      "PhoneState": {
        "type": "object",
        "properties": {
          "userId": {
            "type": "string"
          },
          "phase": {
            "type": "string",
            "enum": [
              "idle",
              "ringingIncoming",
              "ringingOutgoing",
              "answered",
              "shutDown"
            ]
          },
          "session": {
            "nullable": true,
            "allOf": [
              {
                "$ref": "#/components/schemas/Session"
              }
            ]
          },
          "ringingFrom": {
            "type": "string",
            "nullable": true
          },
          "lastCall": {
            "nullable": true,
            "allOf": [
              {
                "$ref": "#/components/schemas/CallRecord"
              }
            ]
          },
          "video": {
            "type": "string",
            "enum": [
              "none",
              "negotiating",
              "connecting",
              "up",
              "lost",
              "closed",
              "refused"
            ],
            "description": "The browser's live video link of the answered call: none, negotiating (offer sent), connecting (answer returned), up/lost (the device's view of the P2P link), closed (by either side), refused (the device sent disconnect)"
          },
          "stream": {
            "type": "string",
            "enum": [
              "main",
              "sub"
            ],
            "description": "The stream the browser's link shows: main after the offer, then what the HD/SD button asked for (302 resolution)"
          }
        },
        "required": [
          "lastCall",
          "phase",
          "ringingFrom",
          "session",
          "stream",
          "userId",
          "video"
        ],
        "additionalProperties": false
      },
      "ResolutionRequest": {
        "type": "object",
        "properties": {
          "stream": {
            "type": "string",
            "enum": [
              "main",
              "sub"
            ],
            "description": "main (stream_type 0, HD) or sub (1, SD)"
          }
        },
        "required": [
          "stream"
        ],
        "additionalProperties": false
      },
      "VideoOffer": {
        "type": "object",
        "properties": {
          "sdp": {
            "type": "string",
            "description": "The browser's WebRTC offer (receive-only video and audio, bundle, ICE gathering complete so its candidates are in it)"
          }
        },
        "required": [
          "sdp"
        ],
        "additionalProperties": false
      },
      "VideoAnswer": {
        "type": "object",
        "properties": {
          "sdp": {
            "type": "string",
            "description": "The device's answer, with the candidates it sent merged in as a=candidate lines"
          },
          "phone": {
            "$ref": "#/components/schemas/PhoneState"
          }
        },
        "required": [
          "phone",
          "sdp"
        ],
        "additionalProperties": false
      },
      "FleetState": {
        "type": "object",
        "properties": {
          "devices": {
            "type": "integer",
            "description": "Devices made in this process."
          },
          "online": {
            "type": "integer",
            "description": "Devices connected to the broker now."
          },
          "inCall": {
            "type": "integer",
            "description": "Devices ringing or in an answered call."
          },
          "planned": {
            "type": "integer",
            "description": "Devices this process was given (its shard or block)."
          },
          "firstPosition": {
            "type": "integer",
            "description": "Position of its first device in the whole fleet."
          }
        },
        "required": [
          "devices",
          "online",
          "inCall",
          "planned",
          "firstPosition"
        ],
        "additionalProperties": false
      },
      "FleetDropConnectionRequest": {
        "type": "object",
        "properties": {
          "seconds": {
            "type": "number",
            "minimum": 0,
            "maximum": 3600,
            "description": "Stay disconnected this long."
          },
          "jitterSeconds": {
            "type": "number",
            "minimum": 0,
            "maximum": 3600,
            "description": "Each device waits up to this much longer, at random (default 0)."
          }
        },
        "required": [
          "seconds"
        ],
        "additionalProperties": false
      },
      "FleetDropConnectionReply": {
        "type": "object",
        "properties": {
          "dropped": {
            "type": "integer"
          },
          "seconds": {
            "type": "number"
          },
          "jitterSeconds": {
            "type": "number"
          }
        },
        "required": [
          "dropped",
          "seconds",
          "jitterSeconds"
        ],
        "additionalProperties": false
      },
      "FleetHeartbeatsRequest": {
        "type": "object",
        "properties": {
          "suppressFraction": {
            "type": "number",
            "minimum": 0,
            "maximum": 1,
            "description": "Share of the devices, chosen at random, that stop answering heartbeats; the rest answer again."
          }
        },
        "required": [
          "suppressFraction"
        ],
        "additionalProperties": false
      },
      "FleetHeartbeatsReply": {
        "type": "object",
        "properties": {
          "suppressing": {
            "type": "integer"
          },
          "devices": {
            "type": "integer"
          }
        },
        "required": [
          "suppressing",
          "devices"
        ],
        "additionalProperties": false
      }
    },
    "securitySchemes": {
      "bearerAuth": {
        "type": "http",
        "scheme": "bearer"
      }
    },
    "responses": {
      "Unauthorized": {
        "description": "Missing or wrong bearer token (only when the server has a token)",
        "content": {
          "application/json": {
            "schema": {
              "$ref": "#/components/schemas/Error"
            }
          }
        }
      }
    }
  }
}
"""#
}
