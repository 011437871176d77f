import HTTP

extension ApiRequest {
    /// Parses a request whose path has already lost its `/rest/v1` prefix (`resource` is the
    /// rest: `children`, `rpc/get_user_with_profile`, or empty for the root).
    public static func parse(method: String, resource: String, query: [(name: String, value: String)], headers: HTTPHeaders, body: [UInt8]) throws(RESTError) -> ApiRequest {
        // Only the public schema is exposed (Accept-Profile for reads, Content-Profile for writes).
        for header in ["Accept-Profile", "Content-Profile"] {
            if let profile = headers[header], profile != "public" { throw .invalidSchema(profile) }
        }
        let segments = resource.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        let target: Target
        switch segments.count {
        case 0: target = .root
        case 1: target = .table(segments[0])
        case 2 where segments[0] == "rpc": target = .function(segments[1])
        default: throw .unknownTable(resource)
        }
        let action: Action
        switch (target, method) {
        case (.root, "GET"), (.root, "HEAD"): action = .describe
        case (.table, "GET"), (.table, "HEAD"): action = .read(headOnly: method == "HEAD")
        case (.table, "POST"): action = .insert
        case (.table, "PATCH"): action = .update
        case (.table, "DELETE"): action = .delete
        case (.table, "PUT"): action = .put
        case (.function, "POST"): action = .call(readOnly: false)
        case (.function, "GET"), (.function, "HEAD"): action = .call(readOnly: true)
        default: throw .parse(message: "Unsupported HTTP method: \(method)", details: nil)
        }

        var request = ApiRequest(target: target, action: action, select: [SelectItem(column: "*")], condition: nil, order: [], limit: nil,
                                 offset: 0, onConflict: nil, columns: nil, preferences: Preferences.parse(headers.values("Prefer")),
                                 media: try media(headers["Accept"]), body: body, functionArguments: [])
        var conditions: [Condition] = []
        for (name, value) in query {
            switch name {
            case "select": request.select = try QueryGrammar.parseSelect(value)
            case "order": request.order = try QueryGrammar.parseOrder(value)
            case "limit":
                guard let limit = Int(value), limit >= 0 else { throw .parse(message: "failed to parse limit parameter (\(value))", details: nil) }
                request.limit = limit
            case "offset":
                guard let offset = Int(value), offset >= 0 else { throw .parse(message: "failed to parse offset parameter (\(value))", details: nil) }
                request.offset = offset
            case "on_conflict": request.onConflict = value.split(separator: ",").map { QueryGrammar.unquote(String($0).trimmedOWS) }
            case "columns": request.columns = try QueryGrammar.splitTopLevel(value).map { QueryGrammar.unquote($0.trimmedOWS) }
            case "or", "and", "not.or", "not.and": conditions.append(try QueryGrammar.parseLogic(name, value))
            case "apikey": continue
            default:
                if case .function = target, action == .call(readOnly: true) {
                    request.functionArguments.append((name, value))
                } else {
                    conditions.append(try QueryGrammar.parseFilter(column: name, value))
                }
            }
        }
        if !conditions.isEmpty { request.condition = conditions.count == 1 ? conditions[0] : .and(conditions) }

        // Range: 0-9 (items) as an alternative to limit/offset, for reads.
        if case .read = action, let range = headers["Range"] {
            let bounds = range.split(separator: "-", omittingEmptySubsequences: false)
            guard bounds.count == 2, let low = Int(bounds[0].trimmedOWS), low >= 0 else { throw .invalidRange("invalid Range header \(range)") }
            let high = bounds[1].isEmpty ? nil : Int(bounds[1].trimmedOWS)
            if let high, high < low { throw .invalidRange("the lower boundary must be lower than or equal to the upper boundary") }
            request.offset = max(request.offset, low)
            if let high { request.limit = min(request.limit ?? Int.max, high - low + 1) }
        }
        return request
    }

    /// `Accept`: JSON for `*/*`, `application/json` or nothing; the single-object type; CSV.
    static func media(_ accept: String?) throws(RESTError) -> Media {
        guard let accept, !accept.isEmpty else { return .json }
        var sawUnknown = false
        for part in accept.split(separator: ",") {
            let type = part.split(separator: ";")[0].trimmedOWS.lowercased()
            switch type {
            case "application/vnd.pgrst.object+json", "application/vnd.pgrst.object": return .singleObject
            case "application/json", "*/*", "application/*", "application/vnd.pgrst.array+json": return .json
            case "text/csv": return .csv
            default: sawUnknown = true
            }
        }
        if sawUnknown { throw .notAcceptable(accept) }
        return .json
    }
}
