import HTTP

/// PostgREST's schema negotiation by profile (`getSchema`): `Accept-Profile` names the schema of
/// a GET or HEAD (and any method but the writes), `Content-Profile` that of a POST, PATCH, PUT or
/// DELETE (an RPC POST included). A schema that is not exposed is PGRST106; none is the first of
/// `db-schemas`, negotiated when several are exposed.
enum Profile {
    static func negotiate(method: HTTPMethod, headers: HTTPHeaders, schemas: [String]) throws(RESTError) -> (schema: String, negotiated: Bool) {
        let name: String
        switch method {
        case .post, .patch, .put, .delete: name = "content-profile"
        default: name = "accept-profile"
        }
        let exposed = schemas.isEmpty ? ["public"] : schemas
        guard let profile = headers[name] else { return (exposed[0], exposed.count != 1) }
        guard exposed.contains(profile) else { throw .invalidSchema(profile, exposed: exposed) }
        return (profile, true)
    }
}
