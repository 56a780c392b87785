// IPCEmuTesting re-exports the vocabulary its API speaks, so a test needs one import:
// profiles (DeviceProfile), call phases, records and answer policies (CallEngine), wire values
// such as call types and the SDK's error codes (IPCWire), the device's events and status
// (Emulator), the log devices and apps write (CallRuntime's EventLog), the app's events and video statistics (AppSimulator), and the media types
// (WebRTCLink). The MQTT transport and the broker process stay behind `TestBroker`.
@_exported import AppSimulator
@_exported import CallEngine
@_exported import CallRuntime
@_exported import DeviceProfile
@_exported import Emulator
@_exported import IPCWire
@_exported import WebRTCLink
