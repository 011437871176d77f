import Foundation
import HTTP
import Identity
import Postgres
import Testing

@testable import REST

/// RESTError → status + whole body; SQLSTATE → status (PostgREST's Error.hs); rendering of
/// statuses and Content-Range (Response.hs, RangeQuery.hs).
@Suite struct ErrorTests {
    static let sqlStates: [(String, Bool, Int)] = [
        ("23503", true, 409), ("23505", true, 409), ("23502", true, 400), ("23514", true, 400), ("22P02", true, 400),
        ("22007", true, 400), ("22001", true, 400), ("42501", true, 403), ("42501", false, 401), ("42883", true, 404),
        ("42P01", true, 404), ("P0001", true, 400), ("PT418", true, 418), ("PT999", true, 500), ("40001", true, 500),
        ("57014", true, 500), ("25006", true, 405), ("08006", true, 503), ("53300", true, 503), ("53400", true, 500),
        ("28P01", true, 403), ("0P000", true, 403), ("P0002", true, 500), ("XX000", true, 500), ("42703", true, 400),
        ("21000", true, 500), ("57P01", true, 503)
    ]

    @Test(arguments: sqlStates)
    func sqlStateMapsToStatus(_ state: String, _ authenticated: Bool, _ status: Int) {
        #expect(RESTError.status(for: PostgresError(kind: .server, message: "m", sqlState: state), authenticated: authenticated).code == status)
    }

    static let bodies: [(RESTError, Int, String)] = [
        (
            .singularity(rows: 0), 406,
            #"{"code":"PGRST116","details":"The result contains 0 rows","hint":null,"message":"Cannot coerce the result to a single JSON object"}"#
        ),
        (
            .singularity(rows: 2), 406,
            #"{"code":"PGRST116","details":"The result contains 2 rows","hint":null,"message":"Cannot coerce the result to a single JSON object"}"#
        ),
        (
            .unknownTable("chilren", hint: "children"), 404,
            #"{"code":"PGRST205","details":null,"hint":"Perhaps you meant the table 'public.children'","message":"Could not find the table 'public.chilren' in the schema cache"}"#
        ),
        (
            .unknownTable("x", hint: nil), 404,
            #"{"code":"PGRST205","details":null,"hint":null,"message":"Could not find the table 'public.x' in the schema cache"}"#
        ),
        (
            .unknownColumn(column: "nope", table: "children"), 400,
            #"{"code":"42703","details":null,"hint":null,"message":"column children.nope does not exist"}"#
        ),
        (
            .unknownFunction(name: "f", arguments: ["a", "b"], hint: nil), 404,
            #"{"code":"PGRST202","details":"Searched for the function public.f with parameters a, b or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache.","hint":null,"message":"Could not find the function public.f(a, b) in the schema cache"}"#
        ),
        (
            .unknownFunction(name: "f", arguments: [], hint: "g"), 404,
            #"{"code":"PGRST202","details":"Searched for the function public.f without parameters or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache.","hint":"Perhaps you meant to call the function public.g","message":"Could not find the function public.f without parameters in the schema cache"}"#
        ),
        (
            .unknownBodyColumn(column: "x", table: "children"), 400,
            #"{"code":"PGRST204","details":null,"hint":null,"message":"Could not find the 'x' column of 'children' in the schema cache"}"#
        ),
        (.invalidBody("Empty or invalid json"), 400, #"{"code":"PGRST102","details":null,"hint":null,"message":"Empty or invalid json"}"#),
        (.noAPIKey, 401, #"{"code":null,"details":null,"hint":"No `apikey` request header or url param was found.","message":"No API key found in request"}"#),
        (.jwt(.expired), 401, #"{"code":"PGRST303","details":null,"hint":null,"message":"JWT expired"}"#),
        // PostgREST's (jose's) words for each way a token fails.
        (
            .jwt(.badSignature), 401,
            #"{"code":"PGRST301","details":"None of the keys was able to decode the JWT","hint":null,"message":"No suitable key or wrong key type"}"#
        ),
        (
            .jwt(.unsupportedAlgorithm("none")), 401,
            #"{"code":"PGRST301","details":"JWT is unsecured but expected 'alg' was not 'none'","hint":null,"message":"Wrong or unsupported encoding algorithm"}"#
        ),
        (
            .jwt(.malformed("Expected 3 parts in JWT; got 2")), 401,
            #"{"code":"PGRST301","details":null,"hint":null,"message":"Expected 3 parts in JWT; got 2"}"#
        ),
        (.jwt(.malformed("JWT header has no alg")), 401, #"{"code":"PGRST301","details":null,"hint":null,"message":"JWT cryptographic operation failed"}"#),
        (.jwt(.notYetValid), 401, #"{"code":"PGRST303","details":null,"hint":null,"message":"JWT not yet valid"}"#),
        (
            .jwt(.claims("The JWT 'exp' claim must be a number")), 401,
            #"{"code":"PGRST303","details":null,"hint":null,"message":"The JWT 'exp' claim must be a number"}"#
        ),
        (
            .ownership(table: "children", authenticated: true), 403,
            #"{"code":"42501","details":null,"hint":null,"message":"new row violates row-level security policy for table \"children\""}"#
        ),
        (
            .ownership(table: "children", authenticated: false), 401,
            #"{"code":"42501","details":null,"hint":null,"message":"new row violates row-level security policy for table \"children\""}"#
        ),
        (
            .tooManyAffected(3), 400,
            #"{"code":"PGRST124","details":"The query affects 3 rows","hint":null,"message":"Query result exceeds max-affected preference constraint"}"#
        ),
        (
            .invalidRange(.outOfBounds(offset: 10, total: 3)), 416,
            #"{"code":"PGRST103","details":"An offset of 10 was requested, but there are only 3 rows.","hint":null,"message":"Requested range not satisfiable"}"#
        ),
        (.notAcceptable("text/html"), 406, #"{"code":"PGRST107","details":null,"hint":null,"message":"None of these media types are available: text/html"}"#),
        (
            .invalidPreferences(["a=b"]), 400,
            #"{"code":"PGRST122","details":"Invalid preferences: a=b","hint":null,"message":"Invalid preferences given with handling=strict"}"#
        )
    ]

    @Test(arguments: bodies)
    func rendersPostgRESTBodies(_ error: RESTError, _ status: Int, _ body: String) {
        let response = error.response(for: HTTPRequest(method: .get, target: "/rest/v1/children"))
        #expect(response.status.code == status)
        #expect(String(decoding: response.body, as: UTF8.self) == body)
        #expect(response.headers["Content-Type"] == "application/json; charset=utf-8")
        if let code = error.fields.code { #expect(response.headers["Proxy-Status"] == "PostgREST; error=\(code)") }
    }

    @Test func databaseErrorsCarryTheServerFields() {
        var error = PostgresError(kind: .server, message: #"new row for relation "children" violates check constraint "valid_birthday""#, sqlState: "23514")
        error.detail = "Failing row contains (…)."
        let rendered = RESTError.database(error, authenticated: true)
        #expect(rendered.status.code == 400)
        #expect(
            rendered.body
                == #"{"code":"23514","details":"Failing row contains (…).","hint":null,"message":"new row for relation \"children\" violates check constraint \"valid_birthday\""}"#
        )
        let lost = RESTError.database(PostgresError(kind: .connection, message: "server closed the connection"), authenticated: true)
        #expect(lost.status.code == 503 && lost.fields.code == "PGRST000")
    }

    @Test func authHeaders() {
        let expired = RESTError.jwt(.expired).response(for: HTTPRequest(method: .get, target: "/"))
        #expect(expired.headers["WWW-Authenticate"] == #"Bearer error="invalid_token", error_description="JWT expired""#)
        let anon = RESTError.database(PostgresError(kind: .server, message: "permission denied for table children", sqlState: "42501"), authenticated: false)
            .response(for: HTTPRequest(method: .get, target: "/"))
        #expect(anon.status.code == 401 && anon.headers["WWW-Authenticate"] == "Bearer")
        // HEAD: no body; the code is in Proxy-Status.
        let head = RESTError.singularity(rows: 0).response(for: HTTPRequest(method: .head, target: "/"))
        #expect(head.body.isEmpty && head.headers["Proxy-Status"] == "PostgREST; error=PGRST116")
    }
}
