/// One part of a `multipart/form-data` body (RFC 7578): its field name, file name, type, bytes.
struct FormPart: Sendable, Equatable {
    var name: String
    var filename: String?
    var contentType: String?
    var body: [UInt8]
}

enum Multipart {
    /// The boundary of a `multipart/form-data; boundary=…` content type, or nil for another type.
    static func boundary(contentType: String) -> String? {
        let parts = contentType.split(separator: ";").map { $0.trimmedOf(" \t") }
        guard let type = parts.first, type.lowercased() == "multipart/form-data" else { return nil }
        for parameter in parts.dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].lowercased() == "boundary" else { continue }
            var value = String(pair[1])
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
            return value.isEmpty ? nil : value
        }
        return nil
    }

    /// The parts of `body`, or nil when it is not a well-formed multipart body.
    static func parse(_ body: [UInt8], boundary: String) -> [FormPart]? {
        let delimiter = Array(("--" + boundary).utf8)
        let separator = Array(("\r\n--" + boundary).utf8)
        guard let first = find(delimiter, in: body, from: 0) else { return nil }
        var position = first + delimiter.count
        var parts: [FormPart] = []
        while true {
            // After a delimiter: `--` ends the body, CRLF starts a part.
            guard position + 2 <= body.count else { return nil }
            if body[position] == UInt8(ascii: "-") && body[position + 1] == UInt8(ascii: "-") { return parts }
            guard body[position] == 13, body[position + 1] == 10 else { return nil }
            position += 2
            guard let headerEnd = find(Array("\r\n\r\n".utf8), in: body, from: position) else { return nil }
            let headerText = String(decoding: body[position..<headerEnd], as: UTF8.self)
            let start = headerEnd + 4
            guard let end = find(separator, in: body, from: start) else { return nil }
            var part = FormPart(name: "", filename: nil, contentType: nil, body: Array(body[start..<end]))
            for line in headerText.split(separator: "\r\n") {
                let pair = line.split(separator: ":", maxSplits: 1)
                guard pair.count == 2 else { continue }
                let value = pair[1].trimmedOf(" \t")
                switch pair[0].lowercased() {
                case "content-disposition":
                    part.name = parameter("name", in: value) ?? ""
                    part.filename = parameter("filename", in: value)
                case "content-type":
                    part.contentType = value
                default:
                    continue
                }
            }
            parts.append(part)
            position = end + separator.count
        }
    }

    /// A `name="value"` parameter of a header value.
    private static func parameter(_ name: String, in value: String) -> String? {
        for item in value.split(separator: ";").dropFirst() {
            let pair = item.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmedOf(" \t").lowercased() == name else { continue }
            var text = pair[1].trimmedOf(" \t")
            if text.hasPrefix("\""), text.hasSuffix("\""), text.count >= 2 { text = String(text.dropFirst().dropLast()) }
            return text
        }
        return nil
    }

    /// The first index of `needle` in `haystack` at or after `from`.
    static func find(_ needle: [UInt8], in haystack: [UInt8], from: Int) -> Int? {
        guard !needle.isEmpty, haystack.count >= needle.count else { return nil }
        var index = from
        let last = haystack.count - needle.count
        let head = needle[0]
        while index <= last {
            if haystack[index] == head {
                var matches = true
                for offset in 1..<needle.count where haystack[index + offset] != needle[offset] {
                    matches = false
                    break
                }
                if matches { return index }
            }
            index += 1
        }
        return nil
    }
}

extension StringProtocol {
    func trimmedOf(_ set: String) -> String {
        var text = Substring(self)
        while let first = text.first, set.contains(first) { text.removeFirst() }
        while let last = text.last, set.contains(last) { text.removeLast() }
        return String(text)
    }
}
