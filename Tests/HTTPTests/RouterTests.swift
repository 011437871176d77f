import HTTP
import Testing

@Suite("Router")
struct RouterTests {
    struct Teapot: HTTPResponseError {
        func response(for request: HTTPRequest) -> HTTPResponse { .error(HTTPStatus(code: 418), "teapot") }
    }
    struct Boom: Error {}

    @Test func routesParametersErrorsAnd404And405() {
        var router = Router()
        router.add(.get, "/rest/v1/:table", { request in .json(.ok, "\"\(request.pathParameters["table"]!)\"") })
        router.add(.post, "/rpc/:name", { _ in throw Teapot() })
        router.add(.get, "/boom", { _ in throw Boom() })
        router.add(.get, "/files/*", { _ in .json(.ok, "\"tail\"") })
        #expect(router.respond(to: HTTPRequest(method: .get, target: "/rest/v1/children")).body == bytes("\"children\""))
        #expect(router.respond(to: HTTPRequest(method: .head, target: "/rest/v1/children")).status.code == 200)
        #expect(router.respond(to: HTTPRequest(method: .post, target: "/rpc/x")).status.code == 418)
        #expect(router.respond(to: HTTPRequest(method: .get, target: "/boom")).status.code == 500)
        #expect(router.respond(to: HTTPRequest(method: .get, target: "/files/a/b")).status.code == 200)
        #expect(router.respond(to: HTTPRequest(method: .get, target: "/nope")).status.code == 404)
        let wrongMethod = router.respond(to: HTTPRequest(method: .delete, target: "/rpc/x"))
        #expect(wrongMethod.status.code == 405)
        #expect(wrongMethod.headers["Allow"] == "POST")
    }

    @Test func theRoutersOwnAnswersUseTheApplicationsErrorStyle() {
        var router = Router(errorStyle: ErrorStyle { #"{"error":\#(jsonString($0))}"# })
        router.add(.get, "/", { _ in .json(.ok, "{}") })
        #expect(String(decoding: router.respond(to: HTTPRequest(method: .get, target: "/nope")).body, as: UTF8.self) == #"{"error":"Not Found"}"#)
        #expect(String(decoding: Router().respond(to: HTTPRequest(method: .get, target: "/nope")).body, as: UTF8.self) == #"{"message":"Not Found"}"#)
    }
}
