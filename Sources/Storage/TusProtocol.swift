import Foundation
import HTTP

/// A refusal of `/upload/resumable`, as Supabase Storage's TUS server answers it: the TUS
/// protocol's own (plain text ending in a newline), Storage's errors as their message in plain
/// text with their status, and a refused credential in Storage's JSON shape (its JWT check runs
/// before the TUS server).
enum TusRefusal: Error, Equatable {
    case tus(status: Int, body: String)
    case storage(StorageError)
    case credentials(StorageError)

    static let resumableRequired = TusRefusal.tus(status: 412, body: "Tus-Resumable Required\n")
    static let missingOffset = TusRefusal.tus(status: 403, body: "Upload-Offset header required\n")
    static let missingContentType = TusRefusal.tus(status: 403, body: "Content-Type header required\n")
    static let fileNotFound = TusRefusal.tus(status: 404, body: "The file for this url was not found\n")
    static let offsetConflict = TusRefusal.tus(status: 409, body: "Upload-Offset conflict\n")
    static let expired = TusRefusal.tus(status: 410, body: "The file for this url no longer exists\n")
    static let sizeExceeded = TusRefusal.tus(status: 413, body: "upload's size exceeded\n")
    static let maxSizeExceeded = TusRefusal.tus(status: 413, body: "Maximum size exceeded\n")
    static let invalidLength = TusRefusal.tus(status: 400, body: "Upload-Length or Upload-Defer-Length header required\n")
    static let completedTermination = TusRefusal.tus(status: 400, body: "Cannot terminate an already completed upload")
    static let lockTimeout = TusRefusal.tus(status: 500, body: "failed to acquire lock before timeout")
    static let writeFailed = TusRefusal.tus(status: 500, body: "Something went wrong receiving the file\n")
    static let concatenation = TusRefusal.tus(
        status: 501, body: "Concatenation extension is not (yet) supported. Disable parallel uploads in the tus client.\n")
    static let deferredLength = TusRefusal.tus(status: 501, body: "creation-defer-length extension is not (yet) supported.\n")
    static let metadataRequired = TusRefusal.storage(.invalidRequest("Metadata header is required"))
    static let invalidUploadID = TusRefusal.storage(.invalidRequest("Invalid upload id"))
    static let invalidBucketName = TusRefusal.storage(.invalidRequest("Bucket name invalid"))

    static func disk(_ failure: ResumableStore.Failure) -> TusRefusal {
        switch failure {
        case .notFound: return .fileNotFound
        case .lockTimeout: return .lockTimeout
        case .offsetConflict: return .offsetConflict
        case .sizeExceeded: return .sizeExceeded
        case .disk: return .writeFailed
        }
    }

    func response(for request: HTTPRequest) -> HTTPResponse {
        var response: HTTPResponse
        switch self {
        case .credentials(let error):
            response = error.response(for: request)
        case .tus(let status, let body):
            response = Tus.text(status, body)
        case .storage(let error):
            response = Tus.text(error.statusCode, error.errorAndMessage.message)
        }
        response.headers.replace("Tus-Resumable", Tus.version)
        return response
    }
}

/// TUS 1.0.0's wire pieces: headers, `Upload-Metadata`, upload ids.
enum Tus {
    static let version = "1.0.0"
    static let extensions = "creation,creation-with-upload,termination,expiration"
    static let methods = "POST, HEAD, PATCH, OPTIONS, DELETE"
    static let chunkType = "application/offset+octet-stream"
    /// The protocol's headers and the ones Storage adds for its clients.
    static let headers = [
        "Authorization", "Content-Type", "Location", "Tus-Extension", "Tus-Max-Size", "Tus-Resumable", "Tus-Version", "Upload-Concat",
        "Upload-Defer-Length", "Upload-Length", "Upload-Metadata", "Upload-Offset", "X-HTTP-Method-Override", "X-Requested-With",
        "X-Forwarded-Host", "X-Forwarded-Proto", "Forwarded", "X-Upsert", "Upload-Expires", "ApiKey", "x-signature"
    ]

    static func text(_ status: Int, _ body: String) -> HTTPResponse {
        var headers = HTTPHeaders()
        if !body.isEmpty { headers.add("Content-Type", "text/plain; charset=utf-8") }
        return HTTPResponse(status: HTTPStatus(code: status), headers: headers, body: Array(body.utf8))
    }

    /// A whole non-negative decimal number, written as JavaScript's `String(Number(x))` would.
    static func count(_ text: String) -> Int? {
        guard let number = Int(text), number >= 0, String(number) == text else { return nil }
        return number
    }

    /// The names of the request's headers whose values TUS refuses (`content-type` only on PATCH).
    static func invalidHeaders(_ request: HTTPRequest) -> [String] {
        var invalid: [String] = []
        for (name, value) in request.headers {
            let key = name.lowercased()
            let valid: Bool
            switch key {
            case "upload-offset", "upload-length": valid = count(value) != nil
            case "upload-defer-length": valid = value == "1"
            case "upload-metadata": valid = metadata(value) != nil
            case "x-forwarded-proto": valid = value == "http" || value == "https"
            case "tus-version", "tus-resumable": valid = value == version
            case "content-type": valid = request.method != .patch || value == chunkType
            case "upload-concat": valid = value == "partial" || value.hasPrefix("final;")
            default: valid = true
            }
            if !valid { invalid.append(key) }
        }
        return invalid
    }

    /// `Upload-Metadata`: comma-separated `key base64value` (or a bare key), keys unique, ASCII,
    /// without spaces or commas; nil when malformed.
    static func metadata(_ header: String) -> [String: String?]? {
        guard !header.trimmingCharacters(in: .whitespaces).isEmpty else { return nil }
        var pairs: [String: String?] = [:]
        for pair in header.split(separator: ",", omittingEmptySubsequences: false) {
            let tokens = pair.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
            guard tokens.count <= 2, let key = tokens.first, !key.isEmpty, pairs[key] == nil,
                key.unicodeScalars.allSatisfy({ $0.value <= 127 && $0 != " " && $0 != "," })
            else { return nil }
            guard tokens.count == 2 else {
                pairs[key] = .some(nil)
                continue
            }
            let value = tokens[1]
            let isBase64 = value.utf8.allSatisfy { CharacterClass.base64($0) || $0 == UInt8(ascii: "=") }
            guard value.utf8.count % 4 == 0, isBase64, !value.dropLast(2).contains("="),
                let decoded = Data(base64Encoded: value)
            else { return nil }
            pairs[key] = .some(String(decoding: decoded, as: UTF8.self))
        }
        return pairs
    }

    /// `Upload-Metadata` of `pairs`, keys in order.
    static func metadataHeader(_ pairs: [String: String?]) -> String {
        pairs.keys.sorted().map { key in
            guard let value = pairs[key] ?? nil else { return key }
            return key + " " + Data(value.utf8).base64EncodedString()
        }.joined(separator: ",")
    }

    /// An upload's id in its URL: `bucket/name/version` in unpadded base64url, as Storage writes it.
    static func uploadID(bucket: String, name: String, version: String) -> String {
        Data((bucket + "/" + name + "/" + version).utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// The bucket, name and version an upload id names; nil when it names none.
    static func parseUploadID(_ id: String) -> (bucket: String, name: String, version: String)? {
        var base64 = id.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.utf8.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), let text = String(data: data, encoding: .utf8) else { return nil }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 3, let version = parts.last, !version.isEmpty else { return nil }
        return (parts[0], parts[1..<(parts.count - 1)].joined(separator: "/"), version)
    }

    /// An HTTP date of seconds since 1970 (`Upload-Expires`).
    static func date(_ seconds: Double) -> String { StorageService.httpDate(seconds) }
}

extension CharacterClass {
    /// Standard base64's alphabet, without `=`.
    static func base64(_ byte: UInt8) -> Bool {
        (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x2B || byte == 0x2F
    }
}
