import CNATS
import Foundation
import Pipeline
import Reactive

/// How a message's data becomes an element.
enum NATSFormat: String, ParameterChoice {
    case json, text, bytes
}
/// A message's data as an element.
struct NATSDecoder {
    let format: NATSFormat
    let metadataField: String?

    func decode(_ message: OpaquePointer) throws -> Value {
        let length = Int(natsMsg_GetDataLength(message))
        let bytes = UnsafeBufferPointer(
            start: natsMsg_GetData(message).map { UnsafeRawPointer($0).assumingMemoryBound(to: UInt8.self) },
            count: length)
        var value: Value
        switch format {
        case .json: value = try JSONParser.parse(bytes)
        case .text: value = .string(String(decoding: bytes, as: UTF8.self))
        case .bytes: value = .string(Data(bytes).base64EncodedString())
        }
        guard let metadataField else { return value }
        if case .object = value {} else { value = ["value": value] }
        if case .object(var fields) = value {
            fields[metadataField] = Self.metadata(of: message)
            value = .object(fields)
        }
        return value
    }

    /// The message's text, for a report of one that could not be read.
    static func text(of message: OpaquePointer) -> String {
        let length = Int(natsMsg_GetDataLength(message))
        guard let data = natsMsg_GetData(message) else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
    }

    /// The message's stream sequence (0 for a message not from JetStream).
    static func streamSequence(of message: OpaquePointer) -> UInt64 {
        var meta: UnsafeMutablePointer<jsMsgMetaData>?
        guard natsMsg_GetMetaData(&meta, message) == NATS_OK, let meta else { return 0 }
        defer { jsMsgMetaData_Destroy(meta) }
        return meta.pointee.Sequence.Stream
    }

    /// The message's consumer sequence: which delivery of its consumer it is (0 for a message
    /// not from JetStream).
    static func consumerSequence(of message: OpaquePointer) -> UInt64 {
        var meta: UnsafeMutablePointer<jsMsgMetaData>?
        guard natsMsg_GetMetaData(&meta, message) == NATS_OK, let meta else { return 0 }
        defer { jsMsgMetaData_Destroy(meta) }
        return meta.pointee.Sequence.Consumer
    }

    /// `metadata: FIELD`'s object: the subject, stream, sequence, deliveries and headers.
    static func metadata(of message: OpaquePointer) -> Value {
        var fields = JSONObject()
        fields["subject"] = .string(String(cString: natsMsg_GetSubject(message)))
        var meta: UnsafeMutablePointer<jsMsgMetaData>?
        if natsMsg_GetMetaData(&meta, message) == NATS_OK, let meta {
            fields["stream"] = .string(String(cString: meta.pointee.Stream))
            fields["sequence"] = .int(Int(meta.pointee.Sequence.Stream))
            fields["delivered"] = .int(Int(meta.pointee.NumDelivered))
            jsMsgMetaData_Destroy(meta)
        }
        var headers = JSONObject()
        var keys: UnsafeMutablePointer<UnsafePointer<CChar>?>?
        var count: Int32 = 0
        if natsMsgHeader_Keys(message, &keys, &count) == NATS_OK, let keys {
            for index in 0..<Int(count) {
                guard let key = keys[index] else { continue }
                var value: UnsafePointer<CChar>?
                if natsMsgHeader_Get(message, key, &value) == NATS_OK, let value {
                    headers[String(cString: key)] = .string(String(cString: value))
                }
            }
            free(keys)
        }
        fields["headers"] = .object(headers)
        return .object(fields)
    }
}
