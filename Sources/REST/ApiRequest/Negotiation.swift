import Foundation

extension ApiRequest {
    /// `Accept` negotiation (PostgREST's Negotiate.hs, restricted to what this server produces).
    static func negotiate(accept: String?, action: Action) throws(RESTError) -> Media {
        if case .describe = action {
            guard let accept, !accept.isEmpty else { return .openAPI }
            for part in accept.split(separator: ",") {
                // `split` drops empty pieces: a part that is only `;` has none (no `[0]`).
                let type = (part.split(separator: ";").first ?? "").trimmedOWS.lowercased()
                if ["application/openapi+json", "application/json", "*/*", "application/*"].contains(type) { return .openAPI }
            }
            throw .notAcceptable(accept)
        }
        guard let accept, !accept.trimmedOWS.isEmpty else { return .json }
        // What the clients send on almost every request.
        if accept == "*/*" || accept == "application/json" { return .json }
        for part in acceptedTypes(accept) {
            let pieces = part.split(separator: ";").map { $0.trimmedOWS.lowercased() }
            switch pieces.first ?? "" {
            case "application/vnd.pgrst.object+json", "application/vnd.pgrst.object":
                return .singleObject(stripNulls: pieces.dropFirst().contains("nulls=stripped"))
            case "application/vnd.pgrst.array+json", "application/vnd.pgrst.array":
                return pieces.dropFirst().contains("nulls=stripped") ? .strippedArray : .json
            case "application/json", "*/*", "application/*":
                return .json
            case "text/csv", "text/*":
                return .csv
            default:
                continue
            }
        }
        throw .notAcceptable(accept)
    }

    /// `Accept`'s media types in the order PostgREST tries them (http-types' parseHttpAccept):
    /// by `q` (1 when absent), then the more specific first (parameters count for, `*` against),
    /// otherwise as sent. Each without its `;q=…` (and without spaces).
    static func acceptedTypes(_ accept: String) -> [String] {
        var entries: [(type: String, q: Double, specificity: Int, index: Int)] = []
        for (index, part) in accept.split(separator: ",").enumerated() {
            let compact = part.filter { $0 != " " }
            var type = compact
            var q = 1.0
            if let range = compact.range(of: ";q=") {
                type = String(compact[..<range.lowerBound])
                let value = compact[range.upperBound...].prefix { $0 != ";" }
                q = Double(value).flatMap { $0.isFinite ? $0 : nil } ?? 1.0
            }
            let specificity = type.filter { $0 == ";" }.count - type.filter { $0 == "*" }.count
            entries.append((type, q, specificity, index))
        }
        entries.sort { ($0.q, $0.specificity, -$0.index) > ($1.q, $1.specificity, -$1.index) }
        return entries.map(\.type)
    }
}

/// PostgREST's plan media type (`db-plan-enabled`): `application/vnd.pgrst.plan` (text),
/// `…plan+text` or `…plan+json`, with `for="<media type>"` (what the statement would answer;
/// `application/json` by default) and `options=analyze|verbose|settings|buffers|wal`.
public struct Explain: Sendable, Equatable {
    public var json: Bool
    /// The media type the planned statement answers.
    public var target: String
    /// EXPLAIN's options, in PostgREST's order, unknown ones left out.
    public var options: [String]

    static let knownOptions = ["analyze", "verbose", "settings", "buffers", "wal"]

    static let planTypes = ["application/vnd.pgrst.plan", "application/vnd.pgrst.plan+text", "application/vnd.pgrst.plan+json"]

    /// The plan media type `accept` asks for, if the one PostgREST would pick (the first in
    /// `acceptedTypes` order that this server produces) is a plan.
    init?(accept: String?) {
        guard let accept, accept.lowercased().contains("vnd.pgrst.plan") else { return nil }
        for part in ApiRequest.acceptedTypes(accept) {
            let pieces = part.split(separator: ";").map { $0.trimmedOWS }
            let type = (pieces.first ?? "").lowercased()
            guard Self.planTypes.contains(type) else {
                // A built-in media type before it wins; one nothing here produces is passed over.
                if (try? ApiRequest.negotiate(accept: part, action: .read(headOnly: false))) != nil { return nil }
                continue
            }
            json = type.hasSuffix("+json")
            target = "application/json"
            var options: [Substring] = []
            // Parameter names are case-insensitive, values are not (MediaType.hs).
            for parameter in pieces.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmedOWS }
                guard pair.count == 2 else { continue }
                switch pair[0].lowercased() {
                case "for": target = Self.mime(pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")))
                case "options": options = pair[1].split(separator: "|")
                default: continue
                }
            }
            self.options = Self.knownOptions.filter { options.contains(Substring($0)) }
            return
        }
        return nil
    }

    /// A media type as PostgREST names it after decoding it (MediaType.hs' `toMime`): the
    /// vendored object and array types in their `+json` form (a plain array is JSON), the types
    /// it knows in lower case, any other as sent.
    static func mime(_ text: String) -> String {
        let pieces = text.split(separator: ";").map { $0.trimmedOWS }
        let type = (pieces.first ?? "").lowercased()
        let stripped = pieces.dropFirst().contains { $0.lowercased().filter { $0 != " " } == "nulls=stripped" }
        switch type {
        case "application/vnd.pgrst.object", "application/vnd.pgrst.object+json":
            return "application/vnd.pgrst.object+json" + (stripped ? ";nulls=stripped" : "")
        case "application/vnd.pgrst.array", "application/vnd.pgrst.array+json":
            return stripped ? "application/vnd.pgrst.array+json;nulls=stripped" : "application/json"
        case "application/json", "application/geo+json", "text/csv", "text/plain", "text/xml", "application/openapi+json",
            "application/x-www-form-urlencoded", "application/octet-stream", "*/*":
            return type
        default:
            return text
        }
    }

    /// `Content-Type` as PostgREST writes it.
    var contentType: String {
        "application/vnd.pgrst.plan+\(json ? "json" : "text"); for=\"\(target)\""
            + (options.isEmpty ? "" : "; options=" + options.joined(separator: "|")) + "; charset=utf-8"
    }
}
