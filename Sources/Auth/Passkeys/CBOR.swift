/// A CBOR data item (RFC 8949) of the kinds WebAuthn's attestation objects and COSE keys use:
/// integers, byte and text strings, arrays, maps, `true`, `false` and `null`.
public indirect enum CBOR: Sendable, Equatable {
    case unsigned(UInt64)
    /// The integer -1 - n.
    case negative(UInt64)
    case bytes([UInt8])
    case text(String)
    case array([CBOR])
    /// The entries in their encoded order (keys are distinct).
    case map([Entry])
    case bool(Bool)
    case null

    public struct Entry: Sendable, Equatable {
        public var key: CBOR
        public var value: CBOR
    }

    /// The integer value, when it is one that fits an `Int`.
    public var int: Int? {
        switch self {
        case .unsigned(let n): return n <= UInt64(Int.max) ? Int(n) : nil
        case .negative(let n): return n < UInt64(Int.max) ? -1 - Int(n) : nil
        case .bytes, .text, .array, .map, .bool, .null: return nil
        }
    }

    /// The value of a map's entry with this key; nil for a missing key or when not a map.
    public subscript(key: CBOR) -> CBOR? {
        guard case .map(let entries) = self else { return nil }
        return entries.first { $0.key == key }?.value
    }

    public subscript(key: Int) -> CBOR? { self[key >= 0 ? .unsigned(UInt64(key)) : .negative(UInt64(-1 - key))] }
    public subscript(key: String) -> CBOR? { self[.text(key)] }
}

/// Why CBOR bytes were refused.
public struct CBORError: Error, Equatable, Sendable {
    public var reason: String
}

/// A strict, bounded reader of CBOR: definite lengths only, no tags, no floating-point or other
/// simple values, UTF-8 text, distinct map keys, at most 16 levels of nesting, maps of at most 64
/// entries and arrays of at most 256 items, and no length past the end of the input.
public struct CBORReader {
    public static let maximumDepth = 16
    public static let maximumMapEntries: UInt64 = 64
    public static let maximumArrayItems: UInt64 = 256

    let bytes: [UInt8]
    /// The offset of the next item.
    public private(set) var offset: Int

    public init(_ bytes: [UInt8], offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    /// The one item `bytes` hold, with nothing after it.
    public static func decode(_ bytes: [UInt8]) throws(CBORError) -> CBOR {
        var reader = CBORReader(bytes)
        let item = try reader.read()
        guard reader.offset == bytes.count else { throw CBORError(reason: "bytes after the item") }
        return item
    }

    /// The next item; `offset` moves past it.
    public mutating func read() throws(CBORError) -> CBOR {
        try read(depth: 0)
    }

    mutating func byte() throws(CBORError) -> UInt8 {
        guard offset < bytes.count else { throw CBORError(reason: "truncated") }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func take(_ count: UInt64) throws(CBORError) -> [UInt8] {
        guard count <= UInt64(bytes.count - offset) else { throw CBORError(reason: "length past the end") }
        let end = offset + Int(count)
        defer { offset = end }
        return Array(bytes[offset..<end])
    }

    /// The argument of a head with additional information `info`.
    mutating func argument(_ info: UInt8) throws(CBORError) -> UInt64 {
        switch info {
        case 0..<24: return UInt64(info)
        case 24, 25, 26, 27:
            var value: UInt64 = 0
            for _ in 0..<(1 << (info - 24)) { value = value << 8 | UInt64(try byte()) }
            return value
        default: throw CBORError(reason: "indefinite or reserved length")
        }
    }

    mutating func read(depth: Int) throws(CBORError) -> CBOR {
        guard depth < Self.maximumDepth else { throw CBORError(reason: "nested too deeply") }
        let head = try byte()
        let major = head >> 5
        let info = head & 0x1f
        if major == 7 {
            switch info {
            case 20: return .bool(false)
            case 21: return .bool(true)
            case 22: return .null
            default: throw CBORError(reason: "unsupported simple or floating-point value")
            }
        }
        let argument = try argument(info)
        switch major {
        case 0: return .unsigned(argument)
        case 1: return .negative(argument)
        case 2: return .bytes(try take(argument))
        case 3:
            guard let text = String(validating: try take(argument), as: UTF8.self) else { throw CBORError(reason: "text is not UTF-8") }
            return .text(text)
        case 4:
            // Each item takes at least one byte: a count beyond the bytes left is refused before
            // anything is allocated.
            guard argument <= Self.maximumArrayItems else { throw CBORError(reason: "array too long") }
            guard argument <= UInt64(bytes.count - offset) else { throw CBORError(reason: "length past the end") }
            var items: [CBOR] = []
            for _ in 0..<argument { items.append(try read(depth: depth + 1)) }
            return .array(items)
        case 5:
            guard argument <= Self.maximumMapEntries else { throw CBORError(reason: "map too long") }
            guard argument <= UInt64(bytes.count - offset) / 2 else { throw CBORError(reason: "length past the end") }
            var entries: [CBOR.Entry] = []
            for _ in 0..<argument {
                let key = try read(depth: depth + 1)
                guard !entries.contains(where: { $0.key == key }) else { throw CBORError(reason: "duplicate map key") }
                entries.append(CBOR.Entry(key: key, value: try read(depth: depth + 1)))
            }
            return .map(entries)
        default:
            throw CBORError(reason: "tags are not accepted")
        }
    }
}
