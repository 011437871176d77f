// The whole request path short of I/O, for libFuzzer: bytes → HTTP parser → credentials →
// PostgREST's parse → ownership → plan → SQL text → response rendered from made-up results; the
// Auth request parser; Realtime's frame decoding, bindings and filters. Nothing on it may trap,
// hang or leak, whatever the bytes.
//
// `fuzz/run.sh` builds it with libFuzzer's coverage (-DFUZZING) and runs it. Built plainly (as
// `swift build` does), it replays the files named on its command line through the same path:
// `swift run RequestFuzz fuzz/seeds/request/*` checks the seeds, or a crash artifact.
import App
import Auth
import Foundation
import HTTP
import Identity
import REST
import Realtime

let secret = "request-fuzz-secret-of-at-least-32-characters"
let keys = KeyConfig(jwtSecret: secret, anonKey: "anon-key", serviceRoleKey: "service-key")
let user = UUID(uuidString: "07e706d2-c4dc-46e3-b64e-2b12fd23cac5")!
let userCaller = Caller(
    role: "authenticated", claimsJSON: #"{"sub":"07e706d2-c4dc-46e3-b64e-2b12fd23cac5","role":"authenticated"}"#,
    userID: user, sessionID: nil, isAnonymousUser: false)

/// The product's tables as the schema cache reads them (an owned table, a family-shared one,
/// a family table) and functions of each shape.
let cache = SchemaCache(
    tables: [
        SchemaCache.Table(
            name: "children",
            columns: [
                .init(name: "id", type: "uuid", nullable: false, defaultExpression: "gen_random_uuid()"),
                .init(name: "user_id", type: "uuid", nullable: false),
                .init(name: "name", type: "text", nullable: false),
                .init(name: "age", type: "integer"),
                .init(name: "birthday", type: "date"),
                .init(name: "goals", type: "text[]", defaultExpression: "'{}'::text[]"),
                .init(name: "metadata", type: "jsonb"),
                .init(name: "created_at", type: "timestamp with time zone", nullable: false, defaultExpression: "now()")
            ], primaryKey: ["id"], computed: ["display_name": .init(name: "display_name", type: "text")]),
        SchemaCache.Table(
            name: "user_profiles",
            columns: [
                .init(name: "id", type: "uuid", nullable: false),
                .init(name: "onboarding_state", type: "text", nullable: false, defaultExpression: "'NOT_STARTED'::text"),
                .init(name: "current_child_id", type: "uuid")
            ], primaryKey: ["id"]),
        SchemaCache.Table(
            name: "families",
            columns: [
                .init(name: "id", type: "uuid", nullable: false),
                .init(name: "name", type: "text", nullable: false)
            ], primaryKey: ["id"]),
        SchemaCache.Table(
            name: "family_members",
            columns: [
                .init(name: "family_id", type: "uuid", nullable: false),
                .init(name: "user_id", type: "uuid", nullable: false),
                .init(name: "role", type: "text", nullable: false)
            ], primaryKey: ["family_id", "user_id"])
    ],
    functions: [
        .init(
            name: "get_user_with_profile", arguments: [.init(name: "p_user_id", type: "uuid")], returnType: "record",
            returnsSet: true, returnsComposite: true, volatility: .stable),
        .init(name: "complete_onboarding", arguments: [], returnType: "user_profiles", returnsSet: false, returnsComposite: true),
        .init(name: "delete_account", arguments: [], returnType: "void", returnsSet: false, returnsComposite: false, returnsVoid: true),
        .init(name: "join_family", arguments: [.init(name: "code", type: "text")], returnType: "json", returnsSet: false, returnsComposite: false),
        .init(
            name: "add_them", arguments: [.init(name: "a", type: "integer"), .init(name: "b", type: "integer", hasDefault: true)],
            returnType: "integer", returnsSet: false, returnsComposite: false, volatility: .immutable),
        // Overloads (one ambiguous with the first), a variadic parameter, unnamed ones a raw body fills.
        .init(
            name: "add_them", arguments: [.init(name: "a", type: "text")], returnType: "text", returnsSet: false, returnsComposite: false,
            volatility: .immutable),
        .init(name: "add_them", arguments: [.init(name: "", type: "json")], returnType: "json", returnsSet: false, returnsComposite: false),
        .init(
            name: "tagged", arguments: [.init(name: "name", type: "text"), .init(name: "v", type: "text[]", hasDefault: true, variadic: true)],
            returnType: "text[]", returnsSet: false, returnsComposite: false, volatility: .stable),
        .init(name: "echo", arguments: [.init(name: "", type: "text")], returnType: "text", returnsSet: false, returnsComposite: false),
        .init(name: "echo", arguments: [.init(name: "", type: "bytea")], returnType: "integer", returnsSet: false, returnsComposite: false)
    ],
    foreignKeys: [
        .init(
            name: "user_profiles_current_child_fkey", table: "user_profiles", columns: ["current_child_id", "id"],
            referencedTable: "children", referencedColumns: ["id", "user_id"]),
        .init(name: "family_members_family_id_fkey", table: "family_members", columns: ["family_id"], referencedTable: "families", referencedColumns: ["id"])
    ])

/// The product's ownership rule, in each configuration.
let ownership = Onboarding.ownership
let configs: [(RESTConfig, PostgRESTSettings)] = {
    var rlsOnly = RESTConfig(ownership: ownership)
    rlsOnly.enforceOwnership = false
    var overrides = RESTConfig(ownership: ownership)
    overrides.openAPIAccess = .all
    overrides.aggregatesEnabled = true
    var overridable = PostgRESTSettings()
    overridable.transactionEnd = .rollbackAllowOverride
    return [(RESTConfig(ownership: ownership), PostgRESTSettings()), (rlsOnly, PostgRESTSettings()), (overrides, overridable)]
}()
let parser = HTTPParser()
/// Made-up results the renderer must handle: empty, one row, a page of a larger count, and the
/// extremes of a count.
let results: [(pageTotal: Int, total: Int?)] = [(0, nil), (1, 1), (3, 100), (0, 0), (2, Int.max), (Int.max, nil)]

func runOne(_ bytes: [UInt8]) {
    // The bytes as one or more pipelined requests.
    var rest = bytes[...]
    while !rest.isEmpty {
        guard case .request(let request, let consumed) = parser.parse(Array(rest)) else { break }
        precondition(consumed > 0 && consumed <= rest.count)
        rest = rest.dropFirst(consumed)
        serve(request)
    }
    // The bytes as a WebSocket text frame's content (Realtime).
    _ = RealtimeService.dryRun(frame: String(decoding: bytes, as: UTF8.self), cache: cache)
}

/// Where mail links may lead: whatever the candidate, the answer has no control character and is
/// its own browser reading (parsing it again changes nothing), or it is SITE_URL.
let redirects = RedirectPolicy(siteURL: "http://localhost:3000", allowList: ["myapp://**", "https://*.example.org/**"])

func checkRedirect(_ candidate: String?) {
    let target = redirects.target(candidate)
    precondition(!target.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7f }, "a redirect with a control character")
    precondition(target == redirects.siteURL || BrowserURL(target)?.serialized == target, "a redirect that a browser reads otherwise")
}

func serve(_ request: HTTPRequest) {
    let path = request.path
    if path.hasPrefix("/auth/v1") {
        let route = String(path.dropFirst("/auth/v1".count))
        _ = AuthRequest.isOpenRoute(route)
        checkRedirect(request.queryValue("redirect_to"))
        checkRedirect(request.headers["redirect_to"])
        checkRedirect(request.bodyText)
        do {
            _ = try AuthRequest.parse(method: request.method, route: route, query: request.query, body: request.body)
        } catch {
            _ = error.response(for: request)
        }
        return
    }
    let resource = path.hasPrefix("/rest/v1") ? String(path.dropFirst("/rest/v1".count)) : path
    var callers: [Caller] = [.anon, .serviceRole, userCaller]
    if let resolved = try? Credentials.resolve(
        apikey: request.headers["apikey"] ?? request.queryValue("apikey"),
        bearer: Credentials.bearerToken(request.headers["Authorization"]), keys: keys)
    {
        callers.append(resolved)
    }
    for caller in callers {
        for (index, (config, settings)) in configs.enumerated() {
            let result = results[(index + Int(caller.role.utf8.count)) % results.count]
            let (statement, response) = RESTService.dryRun(
                request, resource: resource, caller: caller, cache: cache, config: config, settings: settings,
                pageTotal: result.pageTotal, total: result.total)
            precondition((100...599).contains(response.status.code), "status \(response.status)")
            if let statement { precondition(!statement.text.utf8.contains(0), "NUL in statement text") }
        }
    }
}

#if FUZZING
    @_silgen_name("LLVMFuzzerRunDriver")
    func LLVMFuzzerRunDriver(
        _ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
    ) -> Int32

    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(
        LLVMFuzzerRunDriver(&argc, &argv) { data, size in
            runOne(size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size)))
            return 0
        })
#else
    var replayed = 0
    for path in CommandLine.arguments.dropFirst() {
        guard let data = FileManager.default.contents(atPath: path) else {
            FileHandle.standardError.write(Data("cannot read \(path)\n".utf8))
            exit(1)
        }
        runOne(Array(data))
        replayed += 1
    }
    print("replayed \(replayed) inputs through the request path")
#endif
