/// The MQTT protocol version a client speaks: 3.1.1 for the widest broker support, or 5
/// for message properties such as Response Topic and Correlation Data.
package enum MQTTProtocolVersion: Sendable, Equatable {
    case v311
    case v5
}
