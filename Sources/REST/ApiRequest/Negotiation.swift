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
            case "application/vnd.pgrst.array+json":
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
