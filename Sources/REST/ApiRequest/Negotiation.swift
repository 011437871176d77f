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
        for part in accept.split(separator: ",") {
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
}
