import HTTP

/// The main statement's one row: what PostgreSQL computed, the body already JSON (or CSV) text.
struct MainResult: Sendable, Equatable {
    var total: Int?
    var pageTotal: Int
    var body: String?
    var inserted: Int?
    /// `response.status` as a function set it (PostgREST's way for SQL to choose the status).
    var status: Int? = nil
    /// `response.headers` as a function set it.
    var headers: [(String, String)] = []
    /// What a function set as `response.status` or `response.headers` that PostgREST refuses
    /// (PGRST112, PGRST111): the answer is that error.
    var settingsError: RESTError? = nil

    static func == (lhs: MainResult, rhs: MainResult) -> Bool {
        lhs.total == rhs.total && lhs.pageTotal == rhs.pageTotal && lhs.body == rhs.body && lhs.inserted == rhs.inserted
            && lhs.status == rhs.status && lhs.headers.map { "\($0.0): \($0.1)" } == rhs.headers.map { "\($0.0): \($0.1)" }
    }
}

/// PostgREST's Response.hs: statuses, `Content-Range`, `Preference-Applied`, content types. Pure.
enum ResponseRenderer {
    static func render(_ plan: ActionPlan, _ result: MainResult) -> HTTPResponse {
        let request = plan.request
        if let explain = request.explain {
            var headers = HTTPHeaders()
            headers.add("Content-Type", explain.contentType)
            return HTTPResponse(status: .ok, headers: headers, body: request.isHeadOnly ? [] : Array((result.body ?? "").utf8))
        }
        if let refusal = refusal(plan, result) { return refusal }
        var response: HTTPResponse
        switch plan.action {
        case .describe: response = HTTPResponse(status: .ok, headers: HTTPHeaders(), body: [])
        case .read: response = renderRead(plan, result)
        case .insert, .singleUpsert: response = renderInsert(plan, result)
        case .update, .delete: response = renderChange(plan, result)
        case .call: response = renderCall(plan, result)
        }
        // A write's representation through a handler: its functions may set headers too.
        if case .custom = request.media, plan.action.isWrite {
            applyFunctionHeaders(result.headers, to: &response)
        }
        if let applied = preferenceApplied(plan) { response.headers.add("Preference-Applied", applied) }
        return response
    }

    /// The error a read or call answers instead of its rows: not one row for a single object,
    /// or an offset past the rows there are.
    static func refusal(_ plan: ActionPlan, _ result: MainResult) -> HTTPResponse? {
        let request = plan.request
        switch plan.action {
        case .read, .call:
            guard !plan.returnsVoid else { break }
            if request.singleObject && result.pageTotal != 1 {
                return errorResponse(.singularity(rows: result.pageTotal), head: request.isHeadOnly)
            }
            let (rangeStatus, _) = rangeStatusHeader(offset: request.offset, pageTotal: result.pageTotal, total: result.total)
            if rangeStatus == .rangeNotSatisfiable {
                return errorResponse(.invalidRange(.outOfBounds(offset: request.offset, total: result.total ?? 0)), head: request.isHeadOnly)
            }
        case .insert, .update, .delete, .singleUpsert, .describe:
            // A write's single object is checked in its transaction; a description has no rows.
            break
        }
        return nil
    }

    /// A read's rows, with their range.
    static func renderRead(_ plan: ActionPlan, _ result: MainResult) -> HTTPResponse {
        let request = plan.request
        var response = HTTPResponse()
        let (rangeStatus, contentRange) = rangeStatusHeader(offset: request.offset, pageTotal: result.pageTotal, total: result.total)
        response.status = rangeStatus
        response.headers.add("Content-Range", contentRange)
        let query = request.canonicalQuery
        response.headers.add("Content-Location", "/" + plan.resource + (query.isEmpty ? "" : "?" + query))
        response.headers.add("Content-Type", contentType(request.media))
        if !request.isHeadOnly { response.body = bodyBytes(result.body ?? "", request.media) }
        if case .custom = request.media {
            // A handler's functions may set the status and headers, as a called function does.
            if let chosen = result.status { response.status = HTTPStatus(code: chosen) }
            applyFunctionHeaders(result.headers, to: &response)
        }
        return response
    }

    /// An insert (POST) or single upsert (PUT): 201, or 200 for merged duplicates or a replaced row.
    static func renderInsert(_ plan: ActionPlan, _ result: MainResult) -> HTTPResponse {
        let request = plan.request
        let preferences = request.preferences
        let representation = preferences.returning == .representation
        var response = HTTPResponse()
        // PostgREST sends no Content-Range for PUT.
        if plan.action != .singleUpsert {
            response.headers.add("Content-Range", contentRange(lower: 1, upper: 0, total: preferences.wantsCount ? result.pageTotal : nil))
        }
        if plan.action == .singleUpsert {
            response.status = (result.inserted ?? 0) > 0 ? .created : .ok
            if !representation { response.status = .noContent }
        } else if plan.mergesDuplicates, preferences.resolution == .mergeDuplicates, (result.inserted ?? 0) <= 0 {
            response.status = .ok
        } else {
            response.status = .created
        }
        if representation {
            response.headers.add("Content-Type", contentType(request.media))
            response.body = bodyBytes(result.body ?? "", request.media)
        } else if !plan.locationKeys.isEmpty, result.pageTotal == 1, let location = location(plan, result.body) {
            response.headers.add("Location", location)
        }
        return response
    }

    /// An update (PATCH) or delete: 200 with the rows, or 204.
    static func renderChange(_ plan: ActionPlan, _ result: MainResult) -> HTTPResponse {
        let request = plan.request
        let representation = request.preferences.returning == .representation
        let total = request.preferences.wantsCount ? result.pageTotal : nil
        var response = HTTPResponse()
        if plan.action == .update {
            response.headers.add("Content-Range", contentRange(lower: 0, upper: result.pageTotal - 1, total: total))
        } else {
            response.headers.add("Content-Range", contentRange(lower: 1, upper: 0, total: total))
        }
        response.status = representation ? .ok : .noContent
        if representation {
            response.headers.add("Content-Type", contentType(request.media))
            response.body = bodyBytes(result.body ?? "", request.media)
        }
        return response
    }

    /// A function's value (204 for void), with the status and headers it set.
    static func renderCall(_ plan: ActionPlan, _ result: MainResult) -> HTTPResponse {
        let request = plan.request
        var response = HTTPResponse()
        let (rangeStatus, contentRange) = rangeStatusHeader(offset: request.offset, pageTotal: result.pageTotal, total: result.total)
        response.headers.add("Content-Range", contentRange)
        if plan.returnsVoid {
            response.status = .noContent
        } else {
            response.status = rangeStatus
            response.headers.add("Content-Type", contentType(request.media))
            if case .custom = request.media {
                if !request.isHeadOnly { response.body = bodyBytes(result.body ?? "", request.media) }
            } else if !request.isHeadOnly {
                response.body = Array((result.body ?? "null").utf8)
            }
        }
        if let chosen = result.status { response.status = HTTPStatus(code: chosen) }
        applyFunctionHeaders(result.headers, to: &response)
        return response
    }

    /// The headers a function set (`response.headers`): a name it sets replaces the server's
    /// field of that name, and a name it sets twice (two `Set-Cookie`) is sent twice.
    static func applyFunctionHeaders(_ headers: [(String, String)], to response: inout HTTPResponse) {
        for (name, _) in headers { response.headers.remove(name) }
        for (name, value) in headers { response.headers.add(name, value) }
    }

    /// PostgREST's `Location` for `return=headers-only`: `/table?k=eq.v` for each primary-key
    /// column of the one row inserted (`is.null` for a null), URL-encoded as http-types does.
    static func location(_ plan: ActionPlan, _ body: String?) -> String? {
        guard let body, case .array(let rows)? = JSONValue.parse(Array(body.utf8)), case .array(let values)? = rows.first,
            values.count == plan.locationKeys.count
        else { return nil }
        var pairs: [String] = []
        for (key, value) in zip(plan.locationKeys, values) {
            let operand: String
            switch value {
            case .null: operand = "is.null"
            case .string(let text): operand = "eq." + text
            case .number(let text): operand = "eq." + text
            case .bool(let flag): operand = flag ? "eq.true" : "eq.false"
            case .array, .object: operand = "eq." + value.serialized
            }
            pairs.append(queryEncoded(key) + "=" + queryEncoded(operand))
        }
        // The table's name as it is (PostgREST's), unless it holds what a header may not.
        let table = plan.resource.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) ? queryEncoded(plan.resource) : plan.resource
        return "/" + table + "?" + pairs.joined(separator: "&")
    }

    /// http-types' `urlEncode True`: letters, digits and `-_.~` stay, every other byte is `%XX`.
    static func queryEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let digits = Array("0123456789ABCDEF".unicodeScalars)
                out += "%"
                out.unicodeScalars.append(digits[Int(byte >> 4)])
                out.unicodeScalars.append(digits[Int(byte & 0xF)])
            }
        }
        return out
    }

    static func errorResponse(_ error: RESTError, head: Bool) -> HTTPResponse {
        HTTPResponse(status: error.status, headers: error.headers, body: head ? [] : Array(error.body.utf8))
    }

    static func contentType(_ media: ApiRequest.Media) -> String {
        switch media {
        case .json: return "application/json; charset=utf-8"
        case .strippedArray: return "application/vnd.pgrst.array+json;nulls=stripped; charset=utf-8"
        case .singleObject(let strip):
            return strip ? "application/vnd.pgrst.object+json;nulls=stripped; charset=utf-8" : "application/vnd.pgrst.object+json; charset=utf-8"
        case .csv: return "text/csv; charset=utf-8"
        case .openAPI: return "application/openapi+json; charset=utf-8"
        case .custom(let custom): return custom.contentType
        }
    }

    /// The body's bytes: its text, or the bytes a custom handler's hex stands for.
    static func bodyBytes(_ body: String, _ media: ApiRequest.Media) -> [UInt8] {
        guard case .custom(let custom) = media, custom.binary else { return Array(body.utf8) }
        func nibble(_ c: UInt8) -> UInt8 {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
            default: return 0
            }
        }
        let hex = Array(body.utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(hex.count / 2)
        var index = 0
        while index + 1 < hex.count {
            bytes.append(nibble(hex[index]) << 4 | nibble(hex[index + 1]))
            index += 2
        }
        return bytes
    }

    /// RangeQuery.hs `rangeStatusHeader`.
    static func rangeStatusHeader(offset: Int, pageTotal: Int, total: Int?) -> (HTTPStatus, String) {
        let lower = offset
        let upper = offset.addingSaturated(pageTotal - 1)
        let header = contentRange(lower: lower, upper: upper, total: total)
        guard let total else { return (.ok, header) }
        if lower > total { return (.rangeNotSatisfiable, header) }
        if pageTotal < total { return (.partialContent, header) }
        return (.ok, header)
    }

    /// RangeQuery.hs `contentRangeH`: `0-9/100`, `*/0`, `0-1/*`, `*/*`.
    static func contentRange(lower: Int, upper: Int, total: Int?) -> String {
        let range = total != 0 && lower <= upper ? "\(lower)-\(upper)" : "*"
        return "\(range)/\(total.map(String.init) ?? "*")"
    }

    /// Response.hs `responsePreferences` + Preferences.hs `prefAppliedHeader`, in its order.
    static func preferenceApplied(_ plan: ActionPlan) -> String? {
        let p = plan.request.preferences
        var values: [String] = []
        var isMutation = false
        var isCreate = false
        var isUpdateOrDelete = false
        var isCall = false
        switch plan.action {
        case .insert:
            isMutation = true
            isCreate = true
        case .singleUpsert: isMutation = true
        case .update:
            isMutation = true
            isUpdateOrDelete = true
        case .delete:
            isMutation = true
            isUpdateOrDelete = true
        case .call: isCall = true
        case .read, .describe: break
        }
        if isCreate, plan.hasConflictTarget, let resolution = p.resolution { values.append("resolution=\(resolution.rawValue)") }
        if isCreate || plan.action == .update, let missing = p.missing { values.append("missing=\(missing.rawValue)") }
        if isMutation, let returning = p.returning { values.append("return=\(returning.rawValue)") }
        if isCall, let parameters = p.parameters { values.append("params=\(parameters.rawValue)") }
        if let count = p.count { values.append("count=\(count.rawValue)") }
        if let tx = p.transaction { values.append("tx=\(tx.rawValue)") }
        if let handling = p.handling { values.append("handling=\(handling.rawValue)") }
        if let timezone = p.timezone { values.append("timezone=\(timezone)") }
        if isUpdateOrDelete || isCall, p.handling == .strict, let max = p.maxAffected { values.append("max-affected=\(max)") }
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }
}
