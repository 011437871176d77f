import HTTP

/// PostgREST's content negotiation with media type handlers (Plan/Negotiate.hs): the first of
/// `Accept`'s media types something produces wins, a custom handler of the schema cache before
/// the built-in JSON and CSV. The vendored types (`vnd.pgrst.object`, stripped arrays) are never
/// overridden.
extension Planner {
    /// The media a request's result is answered in. `relation` is what handlers are looked up for
    /// (the table; for a call, the table whose rows the function returns, else the function);
    /// `defaultSelect`: the request selects `*` (a relation's own handlers need its whole rows).
    /// `scalar`: the rows are a function's values (`pgrst_scalar`), not records.
    func negotiateMedia(_ request: ApiRequest, relation: String, rowType: String?, defaultSelect: Bool, scalar: Bool) throws(RESTError) -> ApiRequest.Media {
        guard !cache.mediaHandlers.isEmpty else {
            if request.acceptUnmatched { throw .notAcceptable(request.accept ?? "") }
            return request.media
        }
        // A plan (`Accept: application/vnd.pgrst.plan…`) is of what its `for` media type answers.
        let accept = (request.explain?.target ?? request.accept)?.trimmedOWS ?? ""
        let parts = accept.isEmpty ? ["*/*"] : ApiRequest.acceptedTypes(accept)
        for part in parts {
            let pieces = part.split(separator: ";").map { $0.trimmedOWS.lowercased() }
            let type = pieces.first ?? ""
            switch type {
            case "application/vnd.pgrst.object+json", "application/vnd.pgrst.object":
                return .singleObject(stripNulls: pieces.dropFirst().contains("nulls=stripped"))
            case "application/vnd.pgrst.array+json" where pieces.dropFirst().contains("nulls=stripped"),
                "application/vnd.pgrst.array" where pieces.dropFirst().contains("nulls=stripped"):
                return .strippedArray
            default:
                break
            }
            let own = defaultSelect ? (cache.mediaHandler(relation, "*/*") ?? cache.mediaHandler(relation, type)) : nil
            if let handler = own ?? cache.mediaHandler(nil, type) {
                return .custom(Self.custom(handler, rowType: own == nil ? nil : rowType, scalar: scalar))
            }
            if let builtin = try? ApiRequest.negotiate(accept: part, action: request.action) { return builtin }
        }
        throw .notAcceptable(request.accept ?? "")
    }

    static func custom(_ handler: SchemaCache.MediaHandler, rowType: String?, scalar: Bool) -> ApiRequest.CustomMedia {
        // PostgREST's toContentType: a charset for the types it knows, none for bytes or others.
        let known = ["application/json", "application/geo+json", "text/csv", "text/plain", "text/xml", "application/openapi+json"]
        let contentType = known.contains(handler.resolvedType) ? handler.resolvedType + "; charset=utf-8" : handler.resolvedType
        return ApiRequest.CustomMedia(
            aggregate: handler.aggregate, rowType: handler.aggregate == nil ? nil : rowType,
            contentType: contentType, binary: handler.binary, scalar: scalar)
    }
}
