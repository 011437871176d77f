import Foundation
import Identity
import Postgres
import TestSupport
import Testing

@Suite("REST over HTTP against the real database")
struct RESTIntegrationTests {
    let server: TestServer

    init() throws { server = try TestServer() }

    @Test func profileReadUpdateAndSingleObject() throws {
        let user = try server.signUp()
        let http = server.client()
        let single = try http.request(
            "GET", "/rest/v1/user_profiles?select=%2A&id=eq.\(user.id.uppercased())",
            headers: server.headers(user.token, [("Accept", "application/vnd.pgrst.object+json")]))
        #expect(single.status == 200)
        #expect(single.jsonObject?["onboarding_state"] as? String == "NOT_STARTED")
        #expect(single.jsonObject?["id"] as? String == user.id)
        let patched = try http.request(
            "PATCH", "/rest/v1/user_profiles?id=eq.\(user.id)", headers: server.headers(user.token, [("Prefer", "return=representation")]),
            body: #"{"onboarding_state":"CHILD_INFO"}"#)
        #expect(patched.status == 200)
        #expect(patched.jsonArray?.first?["onboarding_state"] as? String == "CHILD_INFO")
        let minimal = try http.request(
            "PATCH", "/rest/v1/user_profiles?id=eq.\(user.id)", headers: server.headers(user.token, [("Prefer", "return=minimal")]),
            body: #"{"onboarding_state":"GOALS"}"#)
        #expect(minimal.status == 204 && minimal.body.isEmpty)
        let none = try http.request(
            "GET", "/rest/v1/children?select=%2A&id=eq.00000000-0000-4000-8000-000000000000",
            headers: server.headers(user.token, [("Accept", "application/vnd.pgrst.object+json")]))
        #expect(none.status == 406)
        #expect(
            none.text == #"{"code":"PGRST116","details":"The result contains 0 rows","hint":null,"message":"Cannot coerce the result to a single JSON object"}"#
        )
    }

    @Test func insertFiltersOrderCountsAndTypes() throws {
        let user = try server.signUp()
        let http = server.client()
        let created = try http.request(
            "POST", "/rest/v1/children?select=%2A",
            headers: server.headers(user.token, [("Prefer", "return=representation"), ("Accept", "application/vnd.pgrst.object+json")]),
            body: #"{"user_id":"\#(user.id.uppercased())","name":"Maya","age":6,"birthday":"2019-05-14","goals":["patience","a b"],"topics":["x","y","z"]}"#)
        #expect(created.status == 201)
        let child = try #require(created.jsonObject)
        #expect(child["birthday"] as? String == "2019-05-14")
        #expect(child["goals"] as? [String] == ["patience", "a b"])
        #expect((child["created_at"] as? String)?.hasSuffix("+00:00") == true)
        #expect(child["temperament_talkative"] as? Int == 5)
        let bulk = try http.request(
            "POST", "/rest/v1/children?columns=%22name%22,%22user_id%22", headers: server.headers(user.token, [("Prefer", "return=minimal")]),
            body: #"[{"name":"Leo","user_id":"\#(user.id)"},{"name":"Mary Ann+1","user_id":"\#(user.id)"}]"#)
        #expect(bulk.status == 201 && bulk.body.isEmpty)
        let filtered = try http.request(
            "GET", "/rest/v1/children?select=name&name=in.(%22Mary+Ann%2B1%22,Leo)&order=name.desc.nullslast", headers: server.headers(user.token))
        #expect(filtered.jsonArray?.compactMap { $0["name"] as? String } == ["Mary Ann+1", "Leo"])
        let orFilter = try http.request(
            "GET", "/rest/v1/children?select=name&or=(name.eq.Leo,and(age.gte.6,goals.cs.%7Bpatience%7D))&order=name", headers: server.headers(user.token))
        #expect(orFilter.jsonArray?.compactMap { $0["name"] as? String } == ["Leo", "Maya"])
        let counted = try http.request(
            "GET", "/rest/v1/children?select=name&order=name&limit=2", headers: server.headers(user.token, [("Prefer", "count=exact")]))
        #expect(counted.status == 206)
        #expect(counted.header("Content-Range") == "0-1/3")
        let head = try http.request("HEAD", "/rest/v1/children", headers: server.headers(user.token, [("Prefer", "count=exact")]))
        #expect(head.status == 200 && head.body.isEmpty && head.header("Content-Range") == "0-2/3")
        let isNull = try http.request("GET", "/rest/v1/children?select=name&birthday=is.null&order=name.asc", headers: server.headers(user.token))
        #expect(isNull.jsonArray?.count == 2)
        let alias = try http.request("GET", "/rest/v1/children?select=kid:name,age::text&name=eq.Maya", headers: server.headers(user.token))
        #expect(alias.jsonArray?.first?["kid"] as? String == "Maya")
        #expect(alias.jsonArray?.first?["age"] as? String == "6")
    }

    @Test func upsertMergesAndReportsStatus() throws {
        let user = try server.signUp()
        let http = server.client()
        let merged = try http.request(
            "POST", "/rest/v1/user_profiles?on_conflict=id",
            headers: server.headers(user.token, [("Prefer", "return=representation,resolution=merge-duplicates")]),
            body: #"{"id":"\#(user.id)","onboarding_state":"TOPICS"}"#)
        #expect(merged.status == 200)
        #expect(merged.jsonArray?.first?["onboarding_state"] as? String == "TOPICS")
    }

    @Test func errorsMapToPostgRESTBodies() throws {
        let user = try server.signUp()
        let http = server.client()
        let check = try http.request(
            "POST", "/rest/v1/children", headers: server.headers(user.token), body: #"{"user_id":"\#(user.id)","name":"x","temperament_talkative":11}"#)
        #expect(check.status == 400)
        #expect(check.jsonObject?["code"] as? String == "23514")
        #expect((check.jsonObject?["message"] as? String)?.contains("valid_temperament_talkative") == true)
        // JSON sent as a form (curl -d without a Content-Type) says which header is missing.
        let form = try http.request(
            "POST", "/rest/v1/children", headers: server.headers(user.token, replacing: [("Content-Type", "application/x-www-form-urlencoded")]),
            body: #"{"user_id":"\#(user.id)","name":"x"}"#)
        #expect(form.status == 400)
        #expect(
            form.text
                == #"{"code":"PGRST102","details":null,"hint":"Send it with Content-Type: application/json (curl -d sends a form: add -H 'Content-Type: application/json').","message":"The body is JSON but its Content-Type is application/x-www-form-urlencoded"}"#
        )
        // A real form still writes.
        let formRow = try http.request(
            "POST", "/rest/v1/children", headers: server.headers(user.token, replacing: [("Content-Type", "application/x-www-form-urlencoded")]),
            body: "user_id=\(user.id)&name=Formed")
        #expect(formRow.status == 201, "\(formRow.text)")
        // An unknown onboarding state says which there are.
        let state = try http.request(
            "PATCH", "/rest/v1/user_profiles?id=eq.\(user.id)", headers: server.headers(user.token), body: #"{"onboarding_state":"GOAL"}"#)
        #expect(state.status == 400)
        #expect(
            state.text
                == #"{"code":"23514","details":"\"GOAL\" is not an onboarding state.","hint":"onboarding_state is one of NOT_STARTED, USER_INFO, CHILD_INFO, GOALS, TOPICS, DISPOSITIONS, REVIEW, COMPLETE.","message":"new row for relation \"user_profiles\" violates check constraint \"valid_onboarding_state\""}"#
        )
        let notNull = try http.request("POST", "/rest/v1/children", headers: server.headers(user.token), body: #"{"user_id":"\#(user.id)"}"#)
        #expect(notNull.status == 400 && notNull.jsonObject?["code"] as? String == "23502")
        let fk = try http.request(
            "PATCH", "/rest/v1/user_profiles?id=eq.\(user.id)", headers: server.headers(user.token),
            body: #"{"current_child_id":"00000000-0000-4000-8000-000000000001"}"#)
        #expect(fk.status == 409 && fk.jsonObject?["code"] as? String == "23503")
        let badJSON = try http.request("POST", "/rest/v1/children", headers: server.headers(user.token), body: "{nope")
        #expect(badJSON.status == 400 && badJSON.jsonObject?["code"] as? String == "PGRST102")
        let badFilter = try http.request("GET", "/rest/v1/children?name=zz.1", headers: server.headers(user.token))
        #expect(badFilter.status == 400 && badFilter.jsonObject?["code"] as? String == "PGRST100")
        let badColumn = try http.request("GET", "/rest/v1/children?nope=eq.1", headers: server.headers(user.token))
        #expect(badColumn.status == 400 && badColumn.jsonObject?["code"] as? String == "42703")
        let unknownTable = try http.request("GET", "/rest/v1/nothing", headers: server.headers(user.token))
        #expect(unknownTable.status == 404 && unknownTable.jsonObject?["code"] as? String == "PGRST205")
        let badToken = try http.request("GET", "/rest/v1/children", headers: server.headers("a.b"))
        #expect(badToken.status == 401 && badToken.jsonObject?["code"] as? String == "PGRST301")
        #expect(badToken.jsonObject?["message"] as? String == "Expected 3 parts in JWT; got 2")
        let schema = try http.request("GET", "/rest/v1/children", headers: server.headers(user.token, [("Accept-Profile", "private")]))
        #expect(schema.status == 406 && schema.jsonObject?["code"] as? String == "PGRST106")
        let noKey = try http.request("GET", "/rest/v1/children")
        #expect(noKey.status == 401 && noKey.jsonObject?["message"] as? String == "No API key found in request")
    }

    @Test func expiredTokenGetsPGRST303WithWWWAuthenticate() throws {
        let expired = JWT_sign(["sub": UUID().uuidString, "role": "authenticated", "exp": 1000])
        let response = try server.client().request("GET", "/rest/v1/children", headers: server.headers(expired))
        #expect(response.status == 401)
        #expect(response.jsonObject?["code"] as? String == "PGRST303")
        #expect(response.header("WWW-Authenticate") == #"Bearer error="invalid_token", error_description="JWT expired""#)
    }

    @Test func rpcCallsAsTheSeedDoes() throws {
        let user = try server.signUp(data: #"{"full_name":"Ada"}"#)
        let http = server.client()
        let rows = try http.request("POST", "/rest/v1/rpc/get_user_with_profile", headers: server.headers(user.token), body: #"{"p_user_id":"\#(user.id)"}"#)
        #expect(rows.status == 200)
        #expect(rows.jsonArray?.first?["display_name"] as? String == "Ada")
        let viaGet = try http.request("GET", "/rest/v1/rpc/get_user_with_profile?p_user_id=\(user.id)", headers: server.headers(user.token))
        #expect(viaGet.jsonArray?.count == 1)
        let failing = try http.request("POST", "/rest/v1/rpc/complete_onboarding", headers: server.headers(user.token), body: "{}")
        #expect(failing.status == 400 && failing.jsonObject?["code"] as? String == "P0001")
        #expect(failing.jsonObject?["details"] as? String == "no_children")
        let unknown = try http.request("POST", "/rest/v1/rpc/nope", headers: server.headers(user.token), body: "{}")
        #expect(unknown.status == 404 && unknown.jsonObject?["code"] as? String == "PGRST202")
        let anon = try http.request("POST", "/rest/v1/rpc/get_user_with_profile", headers: server.headers(), body: #"{"p_user_id":"\#(user.id)"}"#)
        #expect(anon.status == 401 && anon.jsonObject?["code"] as? String == "42501")
    }

    @Test func openAPIDescribesTheTablesAndFunctions() throws {
        let document = try server.client().request("GET", "/rest/v1/", headers: server.headers(server.serviceKey))
        #expect(document.status == 200)
        let paths = document.jsonObject?["paths"] as? [String: Any]
        #expect(paths?["/children"] != nil && paths?["/user_profiles"] != nil && paths?["/rpc/complete_onboarding"] != nil)
    }

    @Test func bareTablePathsWork() throws {
        let user = try server.signUp()
        let response = try server.client().request("GET", "/user_profiles?select=onboarding_state", headers: server.headers(user.token))
        #expect(response.jsonArray?.first?["onboarding_state"] as? String == "NOT_STARTED")
    }
}

func JWT_sign(_ claims: [String: Any]) -> String {
    JWT.signHS256(claims: claims, secret: Array(TestServer.secret.utf8))
}
