import Foundation
import HTTP
import Identity
import Testing

@testable import Auth

/// Auth's route table (no server): which line serves a request, what it asks of the caller, the
/// switch and the budgets it names, and what its reader makes of the query and body.
@Suite("Auth: route table")
struct AuthRouteTableTests {
    static let user = "5f0c2b1e-8a4d-4c3e-9b7a-1d2e3f405162"
    static let factor = "0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d"

    func line(_ method: HTTPMethod, _ route: String, grantType: String? = nil) -> AuthRoute? {
        AuthRoute.find(method: method, route: route, query: grantType.map { [("grant_type", $0)] } ?? [])?.route
    }

    func parse(
        _ method: HTTPMethod, _ route: String, query: [(name: String, value: String)] = [], _ body: String = "{}"
    ) throws(AuthError)
        -> AuthRequest
    {
        try AuthRequest.parse(method: method, route: route, query: query, body: Array(body.utf8))
    }

    @Test func everyLineServesTheRequestsItNamesAndNoEarlierLineTakesThem() {
        for (index, line) in AuthRoute.table.enumerated() {
            let segments = line.pattern.map { part -> String in
                switch part {
                case .literal(let text): return text
                case .parameter: return Self.user
                case .rest: return "anything"
                }
            }
            let method = line.methods.sorted { $0.rawValue < $1.rawValue }.first ?? .patch
            let found = AuthRoute.find(
                method: method, route: "/" + segments.joined(separator: "/"), query: line.grantType.map { [("grant_type", $0)] } ?? [])
            let foundIndex = found.flatMap { match in
                AuthRoute.table.firstIndex { $0.pattern == match.route.pattern && $0.methods == match.route.methods && $0.grantType == match.route.grantType }
            }
            #expect(foundIndex == index, "line \(index): \(method) /\(segments.joined(separator: "/"))")
        }
    }

    @Test func eachEndpointNamesItsCallerSwitchAndBudgets() {
        let cases: [(HTTPMethod, String, String?, AuthRoute.Caller, AuthRoute.Switch?, [AuthRoute.Budget])] = [
            (.get, "/health", nil, .key, nil, []),
            (.get, "/.well-known/jwks.json", nil, .open, nil, []),
            (.post, "/signup", nil, .key, .signUp, [.signInsPerAddress, .signInsPerEmail]),
            (.post, "/token", "password", .key, nil, [.signInsPerAddress, .signInsPerEmail]),
            (.post, "/token", "id_token", .key, nil, [.signInsPerAddress]),
            (.post, "/token", "refresh_token", .key, nil, [.refreshesPerAddress]),
            (.post, "/token", "pkce", .key, nil, [.refreshesPerAddress]),
            (.post, "/token", "client_credentials", .key, nil, []),
            (.post, "/recover", nil, .key, .emailLogins(.badRequest), [.mailRequestsPerAddress]),
            (.post, "/otp", nil, .key, .emailLogins(.unprocessableContent), [.mailRequestsPerAddress]),
            (.post, "/magiclink", nil, .key, .emailLogins(.unprocessableContent), [.mailRequestsPerAddress]),
            (.post, "/resend", nil, .key, .emailLogins(.badRequest), [.mailRequestsPerAddress]),
            (.post, "/verify", nil, .open, nil, [.verificationsPerAddress]),
            (.get, "/verify", nil, .open, nil, [.verificationsPerAddress]),
            (.get, "/user", nil, .session, nil, []),
            (.put, "/user", nil, .session, nil, []),
            (.post, "/logout", nil, .session, nil, []),
            (.get, "/reauthenticate", nil, .session, nil, []),
            (.post, "/factors/\(Self.factor)/verify", nil, .session, nil, []),
            (.delete, "/user/identities/\(Self.factor)", nil, .session, nil, []),
            (.get, "/user/identities/authorize", nil, .session, nil, []),
            (.post, "/invite", nil, .admin, nil, []),
            (.get, "/admin/users", nil, .admin, nil, []),
            (.delete, "/admin/users/\(Self.user)/factors/\(Self.factor)", nil, .admin, nil, []),
            (.post, "/admin/oauth/clients", nil, .admin, .oauthServer, []),
            (.post, "/oauth/token", nil, .open, .oauthServer, []),
            (.get, "/oauth/authorizations/abc", nil, .session, .oauthServer, []),
            (.get, "/authorize", nil, .open, nil, [])
        ]
        for (method, route, grantType, caller, needs, budgets) in cases {
            let found = line(method, route, grantType: grantType)
            #expect(found?.caller == caller, "\(method) \(route)")
            #expect(found?.needs == needs, "\(method) \(route)")
            #expect(found?.budgets == budgets, "\(method) \(route)")
        }
    }

    @Test func pathsNoLineServesAreNotFound() {
        for (method, route) in [(HTTPMethod.get, "/signup"), (.post, "/user"), (.get, "/admin/users/\(Self.user)/factors/\(Self.factor)"), (.get, "/nope")] {
            #expect(line(method, route) == nil, "\(method) \(route)")
            #expect(throws: AuthError.notFound) { try parse(method, route) }
        }
    }

    @Test func theGatewayLetsThroughTheLinksRedirectsAndDiscoveryOnly() {
        for route in ["/verify", "/verify/anything", "/callback", "/authorize", "/.well-known/jwks.json", "/.well-known/openid-configuration"] {
            #expect(AuthRequest.isOpenRoute(route), "\(route)")
        }
        for route in ["/", "/health", "/signup", "/token", "/user", "/admin/users", "/settings", "/factors", "/otp"] {
            #expect(!AuthRequest.isOpenRoute(route), "\(route)")
        }
    }

    @Test func readersTakeTheQueryBodyAndPathParameters() throws {
        #expect(
            try parse(.post, "/signup", query: [("redirect_to", "myapp://done")], #"{"email":" A@Example.org ","password":"pw-123456"}"#)
                == .signUp(
                    AuthRequest.SignUp(email: "a@example.org", phone: nil, password: "pw-123456", metadataJSON: "{}", redirectTo: "myapp://done")))
        #expect(
            try parse(.post, "/token", query: [("grant_type", "password")], #"{"email":"a@example.org","password":"x"}"#)
                == .token(.password(email: "a@example.org", phone: nil, password: "x")))
        #expect(try parse(.post, "/token", query: [("grant_type", "refresh_token")], #"{"refresh_token":"r"}"#) == .token(.refreshToken("r")))
        #expect(try parse(.post, "/token", query: [("grant_type", "client_credentials")]) == .token(.unsupported("client_credentials")))
        #expect(try parse(.post, "/token") == .token(.unsupported("")))
        #expect(try parse(.post, "/logout", query: [("scope", "others")]) == .logout(.others))
        #expect(try parse(.delete, "/factors/\(Self.factor.uppercased())") == .mfa(.unenroll(factorID: Self.factor)))
        #expect(try parse(.post, "/factors/not-a-uuid/challenge") == .mfa(.challenge(factorID: nil)))
        #expect(try parse(.delete, "/user/identities/\(Self.user)") == .deleteIdentity(Self.user))
        #expect(try parse(.get, "/admin/users", query: [("page", "2"), ("per_page", "5000")]) == .admin(.listUsers(page: 2, perPage: 1000)))
        #expect(try parse(.get, "/admin/users/\(Self.user)") == .admin(.getUser(Self.user)))
        #expect(try parse(.delete, "/admin/users/x/factors/\(Self.factor)") == .admin(.deleteFactor(nil, factorID: Self.factor)))
        #expect(
            try parse(.put, "/admin/users/\(Self.user)/factors/\(Self.factor)", #"{"friendly_name":"phone"}"#)
                == .admin(.updateFactor(Self.user, factorID: Self.factor, friendlyName: "phone")))
        #expect(try parse(.get, "/verify", query: [("token", "t"), ("type", "recovery")]) == .verifyLink(.init(token: "t", type: .recovery)))
    }

    @Test func readersRefuseInGoTruesWords() {
        #expect(throws: AuthError.validationFailed("Unsupported logout scope \"everywhere\"")) { try parse(.post, "/logout", query: [("scope", "everywhere")]) }
        #expect(throws: AuthError.validationFailed("client_id query parameter is required")) { try parse(.delete, "/user/oauth/grants") }
        #expect(throws: AuthError.validationFailed("invalid client_id format")) { try parse(.get, "/admin/oauth/clients/nope") }
        #expect(throws: AuthError.samlProviderDisabled) { try parse(.post, "/sso") }
        #expect(throws: AuthError.samlProviderDisabled) { try parse(.get, "/admin/sso/providers") }
        #expect(throws: AuthError.validationFailed("PKCE flow requires code_challenge_method and code_challenge")) {
            try parse(.get, "/authorize", query: [("provider", "github"), ("code_challenge", String(repeating: "c", count: 43))])
        }
        #expect(throws: AuthError.validationFailed("Password recovery requires an email")) { try parse(.post, "/recover") }
    }

    @Test func aSignInSpendsItsAddressAndEmailInOneBucket() {
        let config = AuthConfig(keys: KeyConfig(jwtSecret: "a-secret-of-at-least-thirty-two-characters", anonKey: "anon-key", serviceRoleKey: "service-key"))
        let signUp = AuthRequest.signUp(AuthRequest.SignUp(email: "a@example.org", phone: nil, password: "pw", metadataJSON: "{}"))
        let both: [AuthRoute.Budget] = [.signInsPerAddress, .signInsPerEmail]
        #expect(
            config.budgets(both, for: signUp, client: "10.0.0.1") == [
                Budget(limit: config.signInLimit, bucket: "signin", keys: ["ip:10.0.0.1", "email:a@example.org"])
            ])
        let anonymous = AuthRequest.signUp(AuthRequest.SignUp(email: nil, phone: nil, password: nil, metadataJSON: "{}"))
        #expect(config.budgets(both, for: anonymous, client: "10.0.0.1") == [Budget(limit: config.signInLimit, bucket: "signin", keys: ["ip:10.0.0.1"])])
        let byPhone = AuthRequest.token(.password(email: "", phone: "+15550100", password: "pw"))
        #expect(config.budgets(both, for: byPhone, client: "10.0.0.1").map(\.keys) == [["ip:10.0.0.1"]])
        #expect(
            config.budgets([.verificationsPerAddress, .mailRequestsPerAddress], for: .reauthenticate, client: "::1")
                == [
                    Budget(limit: config.mail.verifyLimit, bucket: "verify", keys: ["ip:::1"]),
                    Budget(limit: config.mail.otpRequestLimit, bucket: "otp", keys: ["ip:::1"])
                ])
    }
}
