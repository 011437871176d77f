import HTTP
import Testing

@testable import REST

/// Prefer and Accept (Preferences.hs, Negotiate.hs).
@Suite struct HeaderTests {
    @Test func preferences() {
        let p = Preferences.parse([
            "return=representation, count=exact", "resolution=merge-duplicates,missing=default", "handling=strict", "tx=rollback, max-affected=5, bogus"
        ])
        #expect(p.returning == .representation)
        #expect(p.count == .exact)
        #expect(p.resolution == .mergeDuplicates)
        #expect(p.missing == .default)
        #expect(p.handling == .strict)
        #expect(p.transaction == .rollback)
        #expect(p.maxAffected == 5)
        #expect(p.invalid == ["bogus"])
        // The first value wins.
        #expect(Preferences.parse(["return=minimal", "return=representation"]).returning == .minimal)
        #expect(Preferences.parse(["return=headers-only"]).returning == .headersOnly)
    }

    @Test func strictHandlingRefusesUnknownPreferences() {
        #expect(throws: RESTError.invalidPreferences(["foo=bar"])) {
            try Fixture.request("GET", "/rest/v1/children", headers: [("Prefer", "handling=strict, foo=bar")])
        }
        // Lenient (the default) ignores them.
        #expect(throws: Never.self) { try Fixture.request("GET", "/rest/v1/children", headers: [("Prefer", "foo=bar")]) }
    }

    static let accepts: [(String?, ApiRequest.Media?)] = [
        (nil, .json), ("*/*", .json), ("application/json", .json), ("application/json; charset=utf-8", .json),
        ("application/vnd.pgrst.object+json", .singleObject(stripNulls: false)),
        ("application/vnd.pgrst.object+json;nulls=stripped", .singleObject(stripNulls: true)),
        ("text/csv", .csv), ("text/html, application/json", .json), ("text/html", nil), ("application/xml", nil),
        // By q, then by specificity (http-types' parseHttpAccept, as PostgREST orders them).
        ("*/*, text/csv", .csv), ("text/csv;q=0.5, application/json", .json), ("text/csv; q=0.9, application/json;q=0.8", .csv),
        ("application/json;q=nan, text/csv", .json)
    ]

    @Test(arguments: accepts)
    func accept(_ accept: String?, _ media: ApiRequest.Media?) throws {
        let headers = accept.map { [("Accept", $0)] } ?? []
        if let media {
            #expect(try Fixture.request("GET", "/rest/v1/children", headers: headers).media == media)
        } else {
            // Refused by the planner (no media handler takes it), as PostgREST negotiates in its plan.
            #expect(try Fixture.request("GET", "/rest/v1/children", headers: headers).acceptUnmatched)
            #expect(throws: RESTError.notAcceptable(accept!)) { try Fixture.plan("GET", "/rest/v1/children", headers: headers) }
        }
    }

    @Test func profiles() throws {
        _ = try Fixture.request("GET", "/rest/v1/children", headers: [("Accept-Profile", "public"), ("Content-Profile", "public")])
        #expect(throws: RESTError.invalidSchema("private")) {
            try Fixture.request("GET", "/rest/v1/children", headers: [("Accept-Profile", "private")])
        }
        #expect(throws: RESTError.invalidSchema("auth")) {
            try Fixture.request("POST", "/rest/v1/children", headers: [("Content-Profile", "auth")], body: "{}")
        }
        let error = RESTError.invalidSchema("auth")
        #expect(error.status.code == 406)
        #expect(error.body == #"{"code":"PGRST106","details":null,"hint":"Only the following schemas are exposed: public","message":"Invalid schema: auth"}"#)
        // Several exposed schemas (`db-schemas`): the first is the default, negotiated.
        let schemas = ["v1", "v2", "SPECIAL \"@/\\#~_-"]
        func parse(_ method: String, _ headers: [(String, String)]) throws -> ApiRequest {
            try ApiRequest.parse(
                method: HTTPMethod(rawValue: method), resource: "/parents", query: [], headers: HTTPHeaders(headers), body: Array("{}".utf8),
                schemas: schemas)
        }
        let plain = try parse("GET", [])
        #expect(plain.schema == "v1" && plain.negotiatedByProfile)
        #expect(try parse("GET", [("Accept-Profile", "v2")]).schema == "v2")
        #expect(try parse("HEAD", [("Accept-Profile", schemas[2])]).schema == schemas[2])
        // Writes read Content-Profile and ignore Accept-Profile; reads the other way round.
        #expect(try parse("POST", [("Content-Profile", "v2"), ("Accept-Profile", "unknown")]).schema == "v2")
        #expect(try parse("DELETE", [("Content-Profile", "v2")]).schema == "v2")
        #expect(try parse("PATCH", [("Accept-Profile", "v2")]).schema == "v1")
        #expect(try parse("GET", [("Content-Profile", "v2")]).schema == "v1")
        let refused = RESTError.invalidSchema("unknown", exposed: schemas)
        #expect(throws: refused) { try parse("PUT", [("Content-Profile", "unknown")]) }
        let hint = jsonString("Only the following schemas are exposed: v1, v2, " + schemas[2])
        #expect(refused.body == #"{"code":"PGRST106","details":null,"hint":"# + hint + #","message":"Invalid schema: unknown"}"#)
        // One exposed schema: not negotiated unless a profile names it.
        #expect(!(try Fixture.request("GET", "/rest/v1/children")).negotiatedByProfile)
        #expect(try Fixture.request("GET", "/rest/v1/children", headers: [("Accept-Profile", "public")]).negotiatedByProfile)
    }

    @Test func methods() {
        #expect(throws: RESTError.invalidRPCMethod("PATCH")) { try Fixture.request("PATCH", "/rest/v1/rpc/f", body: "{}") }
        #expect(throws: RESTError.unsupportedMethod("POST")) { try Fixture.request("POST", "/rest/v1/", body: "{}") }
        #expect(throws: RESTError.invalidResourcePath) { try Fixture.request("GET", "/rest/v1/a/b") }
        #expect(throws: RESTError.invalidRange(.lowerGreaterThanUpper)) { try Fixture.request("GET", "/rest/v1/children", headers: [("Range", "5-2")]) }
    }
}
