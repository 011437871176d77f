import Foundation

/// `Decodable` values read from JSON as `JSONSerialization` parsed it, so that typed bodies,
/// headers and messages keep the reading rules of the dictionaries they replace: a repeated key
/// counts with its last value, a number no Double holds makes the text invalid, and a JSON
/// number 0 or 1 reads as a boolean (Foundation's `NSNumber` bridging). A value of another type
/// throws `DecodingError.typeMismatch`; a `JSONValue` field keeps its JSON as parsed.
public enum JSONTree {
    /// `type` from a value `JSONSerialization.jsonObject` returned.
    public static func decode<T: Decodable>(_ type: T.Type, from value: Any) throws -> T {
        try T(from: TreeDecoder(value: value, codingPath: []))
    }

    /// `type` from JSON text; nil when the text is not JSON or does not decode as `type`.
    public static func decode<T: Decodable>(_ type: T.Type, json bytes: [UInt8]) -> T? {
        guard let value = try? JSONSerialization.jsonObject(with: Data(bytes)) else { return nil }
        return try? decode(type, from: value)
    }
}

/// Any JSON, as parsed (`[String: Any]`, `[Any]`, `String`, `NSNumber`, `NSNull`): for what is
/// arbitrary by design (metadata objects, a subscription's entry echoed back verbatim).
public struct JSONValue: Decodable, @unchecked Sendable {  // the parsed values are immutable
    public let value: Any

    public init(_ value: Any) { self.value = value }

    public init(from decoder: any Decoder) throws {
        guard let tree = decoder as? TreeDecoder else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "JSONValue decodes only with JSONTree"))
        }
        value = tree.value
    }

    /// The value when it is an object.
    public var object: [String: Any]? { value as? [String: Any] }
}

struct TreeDecoder: Decoder {
    let value: Any
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func mismatch<T>(_ type: T.Type) -> DecodingError {
        DecodingError.typeMismatch(type, .init(codingPath: codingPath, debugDescription: "Expected \(type), found \(Swift.type(of: value))"))
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard let object = value as? [String: Any] else { throw mismatch([String: Any].self) }
        return KeyedDecodingContainer(KeyedContainer<Key>(object: object, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard let array = value as? [Any] else { throw mismatch([Any].self) }
        return UnkeyedContainer(array: array, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleValueContainer(decoder: self) }
}

private struct IndexKey: CodingKey {
    var intValue: Int?
    var stringValue: String { "\(intValue ?? 0)" }
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

private struct SingleValueContainer: SingleValueDecodingContainer {
    let decoder: TreeDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool { decoder.value is NSNull }

    func cast<T>(_ type: T.Type) throws -> T {
        guard let value = decoder.value as? T else { throw decoder.mismatch(type) }
        return value
    }

    func decode(_ type: Bool.Type) throws -> Bool { try cast(type) }
    func decode(_ type: String.Type) throws -> String { try cast(type) }
    func decode(_ type: Double.Type) throws -> Double { try cast(type) }
    func decode(_ type: Float.Type) throws -> Float { try cast(type) }
    func decode(_ type: Int.Type) throws -> Int { try cast(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try cast(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try cast(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try cast(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try cast(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try cast(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try cast(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try cast(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try cast(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try cast(type) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try T(from: decoder) }
}

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let object: [String: Any]
    let codingPath: [any CodingKey]

    var allKeys: [Key] { object.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { object[key.stringValue] != nil }

    func child(_ key: Key) throws -> TreeDecoder {
        guard let value = object[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "No value for \(key.stringValue)"))
        }
        return TreeDecoder(value: value, codingPath: codingPath + [key])
    }

    func decodeNil(forKey key: Key) throws -> Bool { try child(key).value is NSNull }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try type.init(from: child(key)) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try type.init(from: child(key)) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try type.init(from: child(key)) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try type.init(from: child(key)) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try type.init(from: child(key)) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try type.init(from: child(key)) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try type.init(from: child(key)) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try type.init(from: child(key)) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try type.init(from: child(key)) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try type.init(from: child(key)) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try type.init(from: child(key)) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try type.init(from: child(key)) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try type.init(from: child(key)) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try type.init(from: child(key)) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try T(from: child(key)) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try child(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { try child(key).unkeyedContainer() }

    func superDecoder() throws -> any Decoder { TreeDecoder(value: object, codingPath: codingPath) }

    func superDecoder(forKey key: Key) throws -> any Decoder { try child(key) }
}

private struct UnkeyedContainer: UnkeyedDecodingContainer {
    let array: [Any]
    let codingPath: [any CodingKey]
    var currentIndex = 0

    init(array: [Any], codingPath: [any CodingKey]) {
        self.array = array
        self.codingPath = codingPath
    }

    var count: Int? { array.count }
    var isAtEnd: Bool { currentIndex >= array.count }

    mutating func next() throws -> TreeDecoder {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                Any.self, .init(codingPath: codingPath + [IndexKey(currentIndex)], debugDescription: "Unkeyed container is at end"))
        }
        defer { currentIndex += 1 }
        return TreeDecoder(value: array[currentIndex], codingPath: codingPath + [IndexKey(currentIndex)])
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, array[currentIndex] is NSNull else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try type.init(from: next()) }
    mutating func decode(_ type: String.Type) throws -> String { try type.init(from: next()) }
    mutating func decode(_ type: Double.Type) throws -> Double { try type.init(from: next()) }
    mutating func decode(_ type: Float.Type) throws -> Float { try type.init(from: next()) }
    mutating func decode(_ type: Int.Type) throws -> Int { try type.init(from: next()) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try type.init(from: next()) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try type.init(from: next()) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try type.init(from: next()) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try type.init(from: next()) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try type.init(from: next()) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try type.init(from: next()) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try type.init(from: next()) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try type.init(from: next()) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try type.init(from: next()) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try T(from: next()) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try next().unkeyedContainer() }

    mutating func superDecoder() throws -> any Decoder { try next() }
}

extension KeyedDecodingContainer {
    /// The member `key` as `type`, or nil when it is absent or of another type: typed bodies and
    /// messages read a member of the wrong type as absent, as the dictionaries they replace did.
    public func lenient<T: Decodable>(_ type: T.Type, forKey key: Key) -> T? {
        try? decodeIfPresent(type, forKey: key)
    }
}
