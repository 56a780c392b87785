/// The QR code a device shows to be paired (PROTOCOL.md 9.2).
///
/// Follows `examples/switch_demo/qrencode_print.c`, `example_qrcode_print`, which the demo calls on
/// `TUYA_EVENT_BIND_START` (`src/tuya_iot.c`, `STATE_TOKEN_PENDING`):
/// `https://smartapp.tuya.com/s/p?p=<productKey>&uuid=<uuid>&v=2.0`.
public enum PairingURL {
    public static func url(for licence: TuyaLicence) -> String {
        "https://smartapp.tuya.com/s/p?p=" + licence.productKey + "&uuid=" + licence.uuid + "&v=2.0"
    }
}
