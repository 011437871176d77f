/// Embedded filters, orders and ranges (`projects.name=like.*`, `projects.order=id`) must name an
/// embed of the request's `select`, level by level, by its alias or its name; otherwise PostgREST
/// answers PGRST108 for the first name that is none.
enum EmbeddedPaths {
    static func check(_ request: ApiRequest) throws(RESTError) {
        for path in request.embedded.keys.sorted() {
            var items = request.select
            for name in path.split(separator: ".").map(String.init) {
                guard let item = items.first(where: { $0.embed != nil && ($0.alias == name || $0.column == name) }), let embed = item.embed else {
                    throw .notEmbedded(name)
                }
                items = embed.select
            }
        }
    }
}
