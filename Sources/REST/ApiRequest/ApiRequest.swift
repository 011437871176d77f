import HTTP

/// A REST request parsed into PostgREST's terms, before it is checked against the schema cache
/// (PostgREST's `ApiRequest`). Pure: built from the method, the resource path, the query pairs,
/// the headers and the body.
public struct ApiRequest: Sendable, Equatable {
    public enum Target: Sendable, Equatable {
        case table(String)
        case function(String)
        /// `GET /rest/v1/`: the OpenAPI description.
        case root
    }

    /// What the request does; the plan keeps it (`ActionPlan.action`) and adds what planning decides.
    public enum Action: Sendable, Equatable {
        case read(headOnly: Bool)
        case insert
        case update
        case delete
        /// `PUT`: upsert of the one row its primary-key filters name.
        case singleUpsert
        /// RPC; GET/HEAD calls run read-only and take their arguments from the query.
        case call(readOnly: Bool, headOnly: Bool)
        case describe(headOnly: Bool)

        public var isDescribe: Bool {
            if case .describe = self { return true }
            return false
        }

        public var isCall: Bool {
            if case .call = self { return true }
            return false
        }

        /// Insert, update, delete or single upsert: a write to a table.
        public var isWrite: Bool {
            switch self {
            case .insert, .update, .delete, .singleUpsert: return true
            case .read, .call, .describe: return false
            }
        }
    }

    public enum Media: Sendable, Equatable {
        case json
        /// `application/vnd.pgrst.object+json` (optionally `;nulls=stripped`).
        case singleObject(stripNulls: Bool)
        /// `application/vnd.pgrst.array+json;nulls=stripped`: the array, each object without its null members.
        case strippedArray
        case csv
        case openAPI
        /// A media type handler of the schema cache (a domain named for the media type).
        case custom(CustomMedia)
    }

    /// What a custom media handler makes the body of, as the planner chose it.
    public struct CustomMedia: Sendable, Equatable {
        /// The aggregate over the rows, qualified and quoted; nil when the function's value is
        /// the body (it returns the media type's domain).
        public var aggregate: String?
        /// The table type the rows are cast to for a table's own aggregate (nil: `anyelement`).
        public var rowType: String?
        /// `Content-Type`, as PostgREST writes it (with `; charset=utf-8` for the types it knows).
        public var contentType: String
        /// The body is bytes (a bytea domain), read as hex.
        public var binary: Bool
        /// The rows are a function's values (`pgrst_scalar`), not records.
        public var scalar: Bool
    }

    /// The body's media type (`Content-Type`; none is JSON), as PostgREST reads it: JSON, forms
    /// (and CSV for inserts) are rows or arguments by name; for a function, a text, XML or binary
    /// body is a single unnamed parameter's value. Anything else is only named, for the error.
    public enum ContentMedia: Sendable, Equatable {
        case json, form, csv
        case text, xml, octetStream
        /// A type no body is read as: the type as sent, without its parameters.
        case other(String)

        /// The parameter type a raw body of this media fills (PostgREST's single unnamed parameter).
        var unnamedParameterTypes: [String] {
            switch self {
            case .json: return ["json", "jsonb"]
            case .text: return ["text"]
            case .xml: return ["xml"]
            case .octetStream: return ["bytea"]
            case .form, .csv, .other: return []
            }
        }

        /// PostgREST's name for the type (`MediaType.toMime`), in its refusal.
        var mime: String {
            switch self {
            case .json: return "application/json"
            case .form: return "application/x-www-form-urlencoded"
            case .csv: return "text/csv"
            case .text: return "text/plain"
            case .xml: return "text/xml"
            case .octetStream: return "application/octet-stream"
            case .other(let type): return type
            }
        }

        var isRaw: Bool { self == .text || self == .xml || self == .octetStream }

        var isOther: Bool {
            if case .other = self { return true }
            return false
        }

        static func of(_ header: String?) -> ContentMedia {
            guard let header else { return .json }
            let type = header.split(separator: ";", maxSplits: 1).first.map { $0.trimmedOWS.lowercased() } ?? ""
            switch type {
            case "application/x-www-form-urlencoded": return .form
            case "text/csv": return .csv
            case "text/plain": return .text
            case "text/xml", "application/xml": return .xml
            case "application/octet-stream": return .octetStream
            case "application/json": return .json
            default: return .other(header.split(separator: ";", maxSplits: 1).first.map { String($0.trimmedOWS) } ?? "")
            }
        }
    }

    public var target: Target
    public var action: Action
    /// The schema the request is about: its `Accept-Profile` (GET/HEAD) or `Content-Profile`
    /// (POST/PATCH/PUT/DELETE), else `db-schemas`' first.
    public var schema = "public"
    /// Whether the schema was negotiated (a profile header named it, or several schemas are
    /// exposed): the response then says which in `Content-Profile`, as PostgREST.
    public var negotiatedByProfile = false
    /// The `select` list; `[.star]` when absent.
    public var select: [SelectItem] = [SelectItem(column: "*")]
    /// The filters and logic trees, ANDed (the query string's top level).
    public var conditions: [Condition] = []
    public var order: [OrderTerm] = []
    public var limit: Int?
    public var offset: Int = 0
    public var onConflict: [String]?
    public var columns: [String]?
    /// The query string as `Content-Location` gives it: every pair sorted by name (stably), names
    /// and values percent-encoded (PostgREST's `qsCanonical`).
    public var canonicalQuery = ""
    public var preferences = Preferences()
    public var media: Media = .json
    /// `Accept`, as sent (the planner looks it up among the schema cache's media handlers).
    public var accept: String?
    /// `Accept: application/vnd.pgrst.plan…`: answer the statement's plan instead of its rows.
    public var explain: Explain?
    /// Whether none of `Accept`'s media types is one this server produces by itself: the planner
    /// answers 406 unless a media handler takes it.
    public var acceptUnmatched = false
    /// The parsed body of a write or POST call.
    var payload: Payload?
    public var contentMedia: ContentMedia = .json
    /// A POST call's body as it came, when it is text, XML or binary (not parsed).
    public var rawBody: [UInt8]?
    /// The query arguments of a GET/HEAD RPC call, in order.
    public var functionArguments: [QueryPair] = []
    /// Filters, `order`, `limit` and `offset` for embedded resources (`children.age=gt.3`,
    /// `children.order=name`), by embed path (`name` or `outer.inner`, aliases as written).
    public var embedded: [String: EmbeddedQuery] = [:]

    public struct EmbeddedQuery: Sendable, Equatable {
        public var conditions: [Condition] = []
        public var order: [OrderTerm] = []
        public var limit: Int?
        public var offset = 0
    }

    public static func == (lhs: ApiRequest, rhs: ApiRequest) -> Bool {
        lhs.target == rhs.target && lhs.action == rhs.action && lhs.schema == rhs.schema
            && lhs.negotiatedByProfile == rhs.negotiatedByProfile && lhs.select == rhs.select && lhs.conditions == rhs.conditions
            && lhs.order == rhs.order && lhs.limit == rhs.limit && lhs.offset == rhs.offset && lhs.onConflict == rhs.onConflict
            && lhs.columns == rhs.columns && lhs.preferences == rhs.preferences && lhs.media == rhs.media
            && lhs.payload == rhs.payload && lhs.functionArguments == rhs.functionArguments && lhs.embedded == rhs.embedded
            && lhs.contentMedia == rhs.contentMedia && lhs.rawBody == rhs.rawBody && lhs.accept == rhs.accept
            && lhs.acceptUnmatched == rhs.acceptUnmatched && lhs.explain == rhs.explain && lhs.canonicalQuery == rhs.canonicalQuery
    }

    public var isRead: Bool {
        if case .read = action { return true }
        return false
    }

    public var isHeadOnly: Bool {
        switch action {
        case .read(let head), .call(_, let head), .describe(let head): return head
        case .insert, .update, .delete, .singleUpsert: return false
        }
    }

    /// No limit (`limit`, `Range` or `db-max-rows`) and no offset: the page is every row.
    public var isWholeRange: Bool { limit == nil && offset == 0 }

    /// A GET/HEAD call: arguments from the query, run read-only.
    public var isReadOnlyCall: Bool {
        if case .call(readOnly: true, _) = action { return true }
        return false
    }

    public var singleObject: Bool {
        if case .singleObject = media { return true }
        return false
    }
}

extension ApiRequest {
    /// A query parameter's integer as PostgREST's `readMaybe` reads one (optional sign, digits,
    /// spaces around), saturated where PostgREST's unbounded integers exceed this one's range.
    static func integer(_ text: String) -> Int? {
        let trimmed = text.trimmedOWS
        if let value = Int(trimmed) { return value }
        let digits = trimmed.hasPrefix("-") || trimmed.hasPrefix("+") ? trimmed.dropFirst() : Substring(trimmed)
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return trimmed.hasPrefix("-") ? Int.min : Int.max
    }
}

extension Int {
    /// `self + other`, clamped to `Int.min…Int.max` instead of trapping: for arithmetic on
    /// numbers that came from a request.
    func addingSaturated(_ other: Int) -> Int {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }
}
