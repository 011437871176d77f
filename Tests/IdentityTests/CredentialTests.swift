import Foundation
import Identity
import Testing

@Suite("Credentials: apikey and bearer")
struct CredentialTests {
    let keys = KeyConfig(jwtSecret: "test-secret-with-at-least-32-characters!!", anonKey: "anon-key", serviceRoleKey: "service-key")

    @Test func anonKeyAsApikeyAndBearer() throws {
        #expect(try Credentials.resolve(apikey: "anon-key", bearer: "anon-key", keys: keys) == .anon)
        #expect(try Credentials.resolve(apikey: "anon-key", bearer: nil, keys: keys) == .anon)
        #expect(try Credentials.resolve(apikey: "service-key", bearer: "service-key", keys: keys) == .serviceRole)
    }

    @Test func userTokenGivesItsRoleAndSubject() throws {
        let caller = try Credentials.resolve(apikey: "anon-key", bearer: pythonToken, keys: keys)
        #expect(caller.role == "authenticated")
        #expect(caller.userID == UUID(uuidString: "11111111-1111-4111-8111-111111111111"))
        #expect(caller.isAuthenticatedUser)
    }

    @Test func missingOrWrongKeysAndBadTokens() {
        #expect(throws: CredentialError.noAPIKey) { try Credentials.resolve(apikey: nil, bearer: "anon-key", keys: keys) }
        #expect(throws: CredentialError.invalidAPIKey) { try Credentials.resolve(apikey: "nope", bearer: nil, keys: keys) }
        #expect(throws: CredentialError.token(.malformed("Expected 3 parts in JWT; got 1"))) {
            try Credentials.resolve(apikey: "anon-key", bearer: "garbage", keys: keys)
        }
    }

    @Test func bearerHeaderParsing() {
        #expect(Credentials.bearerToken("Bearer abc") == "abc")
        #expect(Credentials.bearerToken("bearer  abc ") == "abc")
        #expect(Credentials.bearerToken("Basic abc") == nil)
        #expect(Credentials.bearerToken(nil) == nil)
        #expect(Credentials.bearerToken("\tBEARER\tabc.def \t") == nil)
        #expect(Credentials.bearerToken(" BEARER abc.def \t") == "abc.def")
        #expect(Credentials.bearerToken("Bearer ") == nil)
        #expect(Credentials.bearerToken("Bearer     ") == nil)
    }

    /// A verified token is remembered, but only for its own secret and its own lifetime: the
    /// answer with the cache is the answer without it.
    @Test func rememberedTokensAnswerOnlyForTheirSecretAndLifetime() throws {
        let now = Date()
        let exp = Int(now.timeIntervalSince1970) + 600
        let claims = #"{"role":"authenticated","sub":"22222222-2222-4222-8222-222222222222","exp":\#(exp),"n":"\#(UUID())"}"#
        let signed = JWT.signHS256(claimsJSON: claims, secret: keys.jwtSecret)
        let first = try Credentials.resolve(apikey: "anon-key", bearer: signed, keys: keys, now: now)
        #expect(first.userID == UUID(uuidString: "22222222-2222-4222-8222-222222222222"))
        #expect(try Credentials.resolve(apikey: "anon-key", bearer: signed, keys: keys, now: now) == first)
        let otherSecret = KeyConfig(jwtSecret: "another-secret-with-at-least-32-characters", anonKey: "anon-key", serviceRoleKey: "service-key")
        #expect(throws: CredentialError.token(.badSignature)) {
            try Credentials.resolve(apikey: "anon-key", bearer: signed, keys: otherSecret, now: now)
        }
        let later = now.addingTimeInterval(600 + JWT.leeway + 5)
        #expect(throws: CredentialError.token(.expired)) {
            try Credentials.resolve(apikey: "anon-key", bearer: signed, keys: keys, now: later)
        }
        // Not yet valid: refused now, and not remembered as valid for later either.
        let future = Int(now.timeIntervalSince1970) + 300
        let early = JWT.signHS256(claimsJSON: #"{"role":"authenticated","nbf":\#(future),"n":"\#(UUID())"}"#, secret: keys.jwtSecret)
        #expect(throws: CredentialError.token(.notYetValid)) {
            try Credentials.resolve(apikey: "anon-key", bearer: early, keys: keys, now: now)
        }
    }
}
