import Foundation
import HTTP
import JWT
import Postgres

public struct RESTConfig: Sendable {
    /// Owner column of each table whose rows belong to one user (enforced before SQL, and by RLS).
    public var ownerColumns: [String: String] = ["user_profiles": "id", "children": "user_id"]
    /// The ownership middleware; off only in tests that show RLS alone holds.
    public var enforceOwnership = true
    /// Roles a token may ask for.
    public var allowedRoles: Set<String> = ["anon", "authenticated", "service_role"]
    public init() {}
}

/// PostgREST's dialect over the pool: parse → plan → SQL → one round trip → render.
public final class RESTService: Sendable {
    let pool: Pool
    let schema: SchemaCacheStore
    let config: RESTConfig

    public init(pool: Pool, schema: SchemaCacheStore, config: RESTConfig = RESTConfig()) {
        self.pool = pool
        self.schema = schema
        self.config = config
    }

    /// Serves `resource` (the path after `/rest/v1/`, or a bare table name) for `caller`.
    public func respond(to request: HTTPRequest, resource: String, caller: Caller) -> HTTPResponse {
        do {
            guard config.allowedRoles.contains(caller.role) else {
                throw RESTError.jwt(.malformed("role \"\(caller.role)\" is not allowed"))
            }
            let api = try ApiRequest.parse(method: request.method, resource: resource, query: request.query, headers: request.headers, body: request.body)
            return try execute(api, caller: caller)
        } catch let error as RESTError {
            return error.response(for: request)
        } catch let error as PostgresError {
            return RESTError.database(error, authenticated: caller.role != "anon").response(for: request)
        } catch {
            return HTTPResponse.error(500, "Internal Server Error")
        }
    }

    func execute(_ api: ApiRequest, caller: Caller) throws -> HTTPResponse {
        let cache = schema.cache
        switch api.target {
        case .root:
            return .json(200, OpenAPI.document(cache), headers: ["Content-Type": "application/openapi+json; charset=utf-8"])
        case .function(let name):
            guard let function = cache.functions[name] else { throw RESTError.unknownFunction(name) }
            return try call(function, api, caller: caller)
        case .table(let name):
            guard let table = cache.tables[name] else { throw RESTError.unknownTable(name) }
            return try tableRequest(table, api, caller: caller)
        }
    }

    // MARK: tables

    func tableRequest(_ table: SchemaCache.Table, _ incoming: ApiRequest, caller: Caller) throws -> HTTPResponse {
        var api = incoming
        let builder = QueryBuilder(table: table)
        let rows = try bodyRows(api)
        if api.media == .csv { throw RESTError.notAcceptable("text/csv") }
        try enforceOwnership(table: table.name, api: &api, rows: rows, caller: caller)
        let single = api.media == .singleObject
        let source: SQL
        var readOnly = false
        switch api.action {
        case .read:
            readOnly = true
            var select: SQL = "SELECT \(builder.qualified).* FROM \(builder.qualified)"
            select.append(try builder.whereClause(api.condition))
            select.append(try builder.orderClause(api.order))
            if let limit = api.limit { select.append(" LIMIT \(limit)") }
            if api.offset > 0 { select.append(" OFFSET \(api.offset)") }
            source = select
        case .insert, .put:
            guard let rows, !rows.isEmpty else {
                return render(api, table: table, result: nil, status: 201)
            }
            let keys = try api.columns ?? Self.keys(of: rows)
            for key in keys where table.column(key) == nil { throw RESTError.unknownBodyColumn(column: key, table: table.name) }
            let names = SQL.join(keys.map { "\(ident: $0)" }, separator: ", ")
            var insert: SQL = "INSERT INTO \(builder.qualified) (\(names)) SELECT \(names) FROM json_populate_recordset(NULL::\(builder.qualified), \(Self.json(rows))::json)"
            let upsert = api.action == .put || api.preferences.resolution != nil
            if upsert {
                let conflict = api.onConflict ?? table.primaryKey
                for key in conflict where table.column(key) == nil { throw RESTError.unknownColumn(column: key, table: table.name) }
                insert.append(" ON CONFLICT (\(SQL.join(conflict.map { "\(ident: $0)" }, separator: ", ")))")
                let updates = keys.filter { !conflict.contains($0) }
                if api.preferences.resolution == .ignoreDuplicates || updates.isEmpty {
                    insert.append(" DO NOTHING")
                } else {
                    insert.append(" DO UPDATE SET " + SQL.join(updates.map { "\(ident: $0) = EXCLUDED.\(ident: $0)" }, separator: ", "))
                }
            }
            insert.append(" RETURNING \(builder.qualified).*, (\(builder.qualified).xmax::text = '0') AS pgrst_inserted")
            source = insert
        case .update:
            guard let rows, rows.count == 1 else { throw RESTError.invalidBody("A PATCH body must be a single JSON object") }
            let keys = Array(rows[0].keys).sorted()
            for key in keys where table.column(key) == nil { throw RESTError.unknownBodyColumn(column: key, table: table.name) }
            guard !keys.isEmpty else { return render(api, table: table, result: nil, status: 200) }
            var update: SQL = "UPDATE \(builder.qualified) SET "
            update.append(SQL.join(keys.map { "\(ident: $0) = _body.\(ident: $0)" }, separator: ", "))
            update.append(" FROM json_populate_record(NULL::\(builder.qualified), \(Self.json(rows[0]))::json) AS _body")
            update.append(try builder.whereClause(api.condition))
            update.append(" RETURNING \(builder.qualified).*")
            source = update
        case .delete:
            var delete: SQL = "DELETE FROM \(builder.qualified)"
            delete.append(try builder.whereClause(api.condition))
            delete.append(" RETURNING \(builder.qualified).*")
            source = delete
        case .call, .describe:
            throw RESTError.parse(message: "Unsupported HTTP method", details: nil)
        }
        var total: SQL? = nil
        if api.preferences.count != nil, case .read = api.action {
            total = "(SELECT count(*) FROM \(builder.qualified)\(try builder.whereClause(api.condition)))"
        }
        let upsert = (api.action == .insert || api.action == .put)
        var statement: SQL = "WITH pgrst_source AS (\(source)) "
        statement.append(try builder.aggregate(select: api.select, single: single, total: total, upsert: upsert))
        let mutation = !readOnly
        let plan = QueryPlan(statement: statement,
                             needsDecision: mutation && (single || api.preferences.maxAffected != nil || api.preferences.rollback),
                             readOnly: readOnly)
        let result = try run(plan, api: api, caller: caller)
        var status = 200
        switch api.action {
        case .insert, .put: status = result["all_updated"] == "t" ? 200 : 201
        default: break
        }
        return render(api, table: table, result: result, status: status)
    }

    /// The owner checks of issue 6 §6, in Swift before any SQL (RLS checks the same below).
    func enforceOwnership(table: String, api: inout ApiRequest, rows: [[String: Any]]?, caller: Caller) throws {
        guard config.enforceOwnership, let ownerColumn = config.ownerColumns[table], !caller.isServiceRole else { return }
        let isWrite: Bool
        switch api.action {
        case .read: isWrite = false
        default: isWrite = true
        }
        guard let user = caller.userID, caller.role == "authenticated" else {
            if isWrite { throw RESTError.ownership(table: table, authenticated: false) }
            // anon reads: nothing is theirs.
            api.condition = .and([api.condition, .filter(Filter(column: ownerColumn, op: .is, value: "null", list: [], language: nil)),
                                  .not(.filter(Filter(column: ownerColumn, op: .is, value: "null", list: [], language: nil)))].compactMap { $0 })
            return
        }
        for row in rows ?? [] {
            if let value = row[ownerColumn] {
                guard let text = value as? String, UUID(uuidString: text) == user else {
                    throw RESTError.ownership(table: table, authenticated: true)
                }
            }
        }
        switch api.action {
        case .read, .update, .delete:
            let mine = Condition.filter(Filter(column: ownerColumn, op: .eq, value: user.uuidString.lowercased(), list: [], language: nil))
            api.condition = api.condition.map { .and([$0, mine]) } ?? mine
        default:
            break
        }
    }

    // MARK: functions

    func call(_ function: SchemaCache.Function, _ api: ApiRequest, caller: Caller) throws -> HTTPResponse {
        var arguments: [(name: String, value: String?)] = []
        if case .call(readOnly: true) = api.action {
            arguments = api.functionArguments.map { ($0.name, $0.value) }
        } else if !api.body.isEmpty {
            guard let object = (try? JSONSerialization.jsonObject(with: Data(api.body), options: [.fragmentsAllowed])) as? [String: Any] else {
                throw RESTError.invalidBody("Empty or invalid json")
            }
            arguments = object.keys.sorted().map { key in (key, Self.bindText(object[key]!, arrayType: function.arguments.first { $0.name == key }?.type.hasSuffix("[]") ?? false)) }
        }
        for argument in arguments where !function.arguments.contains(where: { $0.name == argument.name }) {
            throw RESTError.unknownFunction("\(function.name)(\(arguments.map(\.name).joined(separator: ", ")))")
        }
        for required in function.arguments where !required.hasDefault && !arguments.contains(where: { $0.name == required.name }) {
            throw RESTError.unknownFunction("\(function.name)(\(arguments.map(\.name).joined(separator: ", ")))")
        }
        let argumentList = SQL.join(arguments.map { argument in
            let type = function.arguments.first { $0.name == argument.name }!.type
            return "\(ident: argument.name) := \(argument.value)::\(unsafeRaw: type)"  // type: from the catalog
        }, separator: ", ")
        let invocation: SQL = "\(unsafeRaw: quoteIdentifier("public")).\(ident: function.name)(\(argumentList))"
        let single = api.media == .singleObject
        let statement: SQL
        if function.returnsVoid {
            statement = "SELECT NULL::bigint AS total, 1 AS page_total, '' AS body FROM (SELECT \(invocation)) _call"
        } else if function.returnsSet || function.returnsComposite {
            let asObject = single || (!function.returnsSet && function.returnsComposite)
            let body: SQL = asObject ? "coalesce((json_agg(_agg) -> 0)::text, 'null')" : "coalesce(json_agg(_agg), '[]')::text"
            statement = "SELECT NULL::bigint AS total, count(*) AS page_total, \(body) AS body FROM \(invocation) _agg"
        } else {
            statement = "SELECT NULL::bigint AS total, 1 AS page_total, to_json(\(invocation))::text AS body"
        }
        let readOnly = api.action == .call(readOnly: true)
        let result = try run(QueryPlan(statement: statement, needsDecision: single || api.preferences.rollback, readOnly: readOnly), api: api, caller: caller)
        if function.returnsVoid { return HTTPResponse(status: 204) }
        var headers: HTTPHeaders = ["Content-Type": single ? "application/vnd.pgrst.object+json; charset=utf-8" : "application/json; charset=utf-8"]
        if !api.preferences.applied.isEmpty { headers.add("Preference-Applied", api.preferences.applied.joined(separator: ", ")) }
        return HTTPResponse(status: 200, headers: headers, body: Array((result["body"] ?? "null").utf8))
    }

    // MARK: execution

    /// Runs a plan in one round trip: the claims and role, then the statement. When the outcome
    /// decides whether to commit, the statement runs in an explicit transaction finished after.
    func run(_ plan: QueryPlan, api: ApiRequest, caller: Caller) throws -> [String: String] {
        let setup: SQL = plan.readOnly
            ? "SELECT set_config('request.jwt.claims', \(caller.claimsJSON), true), set_config('role', \(caller.role), true), set_config('transaction_read_only', 'on', true)"
            : "SELECT set_config('request.jwt.claims', \(caller.claimsJSON), true), set_config('role', \(caller.role), true)"
        do {
            return try pool.withConnection { connection in
                if !plan.needsDecision {
                    let results = try connection.pipeline([setup, plan.statement])
                    return Self.row(results[1])
                }
                let results = try connection.pipeline(["BEGIN", setup, plan.statement])
                let row = Self.row(results[2])
                let count = Int(row["page_total"] ?? "0") ?? 0
                var failure: RESTError?
                if api.media == .singleObject && count != 1 { failure = .singularity(rows: count) }
                if let max = api.preferences.maxAffected, count > max, api.preferences.strict { failure = .tooManyAffected(count, max: max) }
                try connection.execute(failure == nil && !api.preferences.rollback ? "COMMIT" : "ROLLBACK")
                if let failure { throw failure }
                return row
            }
        } catch let error as PostgresError {
            throw RESTError.database(error, authenticated: caller.role != "anon")
        }
    }

    static func row(_ result: QueryResult) -> [String: String] {
        var row: [String: String] = [:]
        guard result.count > 0 else { return row }
        for (index, column) in result.columns.enumerated() { row[column] = result[0, index] }
        return row
    }

    // MARK: rendering

    func render(_ api: ApiRequest, table: SchemaCache.Table, result: [String: String]?, status: Int) -> HTTPResponse {
        let pageTotal = Int(result?["page_total"] ?? "0") ?? 0
        let total = result?["total"].flatMap { Int($0) }
        var headers = HTTPHeaders()
        let single = api.media == .singleObject
        headers.add("Content-Type", single ? "application/vnd.pgrst.object+json; charset=utf-8" : "application/json; charset=utf-8")
        if !api.preferences.applied.isEmpty { headers.add("Preference-Applied", api.preferences.applied.joined(separator: ", ")) }
        let body = Array((result?["body"] ?? (single ? "" : "[]")).utf8)
        switch api.action {
        case .read(let headOnly):
            if single && pageTotal != 1 {
                return RESTError.singularity(rows: pageTotal).response(for: HTTPRequest(method: "GET", target: "/"))
            }
            let range = pageTotal == 0 ? "*" : "\(api.offset)-\(api.offset + pageTotal - 1)"
            headers.add("Content-Range", "\(range)/\(total.map(String.init) ?? "*")")
            var code = 200
            if let total, pageTotal < total, pageTotal > 0 || api.offset > 0 { code = 206 }
            if let total, total > 0, api.offset >= total { return RESTError.invalidRange("An offset of \(api.offset) was requested, but there are only \(total) rows.").response(for: HTTPRequest(method: "GET", target: "/")) }
            return HTTPResponse(status: code, headers: headers, body: headOnly ? [] : body)
        default:
            headers.add("Content-Range", pageTotal == 0 ? "*/*" : "0-\(pageTotal - 1)/*")
            let returning = api.preferences.returning ?? .minimal
            if returning == .representation {
                return HTTPResponse(status: status, headers: headers, body: body)
            }
            headers.remove("Content-Type")
            let isInsert = api.action == .insert || api.action == .put
            return HTTPResponse(status: isInsert ? status : 204, headers: headers)
        }
    }

    // MARK: bodies

    /// The body as rows: an object is one row, an array its elements. Nil without a body.
    func bodyRows(_ api: ApiRequest) throws -> [[String: Any]]? {
        switch api.action {
        case .insert, .update, .put: break
        default: return nil
        }
        guard !api.body.isEmpty else { return nil }
        guard let value = try? JSONSerialization.jsonObject(with: Data(api.body), options: [.fragmentsAllowed]) else {
            throw RESTError.invalidBody("Empty or invalid json")
        }
        if let object = value as? [String: Any] { return [object] }
        if let array = value as? [Any] {
            let objects = array.compactMap { $0 as? [String: Any] }
            guard objects.count == array.count else { throw RESTError.invalidBody("All object keys must match") }
            return objects
        }
        throw RESTError.invalidBody("Empty or invalid json")
    }

    /// The union of the rows' keys, in first-seen order.
    static func keys(of rows: [[String: Any]]) -> [String] {
        var seen: [String] = []
        for row in rows { for key in row.keys.sorted() where !seen.contains(key) { seen.append(key) } }
        return seen
    }

    static func json(_ value: Any) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed])) ?? Data("null".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// A JSON argument as the text PostgreSQL parses for the parameter's type.
    static func bindText(_ value: Any, arrayType: Bool) -> String? {
        switch value {
        case is NSNull: return nil
        case let string as String: return string
        case let number as NSNumber:
            if String(cString: number.objCType) == "c" { return number.boolValue ? "true" : "false" }
            return number.stringValue
        case let array as [Any] where arrayType:
            return SQL.arrayLiteral(array.map { bindText($0, arrayType: false) })
        default: return json(value)
        }
    }
}
