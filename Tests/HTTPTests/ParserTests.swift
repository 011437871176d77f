import HTTP
import Testing

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

@Suite("HTTP parser")
struct ParserTests {
    let parser = HTTPParser()

    func request(_ text: String) throws -> (HTTPRequest, Int) {
        guard case .request(let request, let consumed) = parser.parse(bytes(text)) else {
            Issue.record("expected a request from \(text.debugDescription), got \(parser.parse(bytes(text)))")
            throw CancellationError()
        }
        return (request, consumed)
    }

    @Test func simpleGet() throws {
        let (request, consumed) = try request(
            "GET /rest/v1/children?select=%2A&name=eq.Mary+Ann%2B1 HTTP/1.1\r\nHost: x\r\napiKey: k\r\nX-Multi: a\r\nx-multi: b\r\n\r\n")
        #expect(request.method == .get)
        #expect(request.path == "/rest/v1/children")
        #expect(request.rawQuery == "select=%2A&name=eq.Mary+Ann%2B1")
        #expect(request.queryValue("select") == "*")
        #expect(request.queryValue("name") == "eq.Mary Ann+1")
        #expect(request.headers["APIKEY"] == "k")
        #expect(request.headers.values("X-Multi") == ["a", "b"])
        #expect(
            consumed
                == bytes("GET /rest/v1/children?select=%2A&name=eq.Mary+Ann%2B1 HTTP/1.1\r\nHost: x\r\napiKey: k\r\nX-Multi: a\r\nx-multi: b\r\n\r\n").count)
    }

    @Test func percentDecodedPathAndUTF8() throws {
        let (request, _) = try request("GET /caf%C3%A9/a%20b HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(request.path == "/café/a b")
    }

    @Test func contentLengthBody() throws {
        let (request, _) = try request("POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
        #expect(request.bodyText == "hello")
    }

    @Test func chunkedBodyWithExtensionsAndTrailers() throws {
        let (request, consumed) = try request(
            "POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nTrailer: yes\r\n\r\nGET")
        #expect(request.bodyText == "hello world")
        #expect(
            consumed
                == bytes("POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nTrailer: yes\r\n\r\n").count)
    }

    @Test func http10WithoutHost() throws {
        let (request, _) = try request("GET / HTTP/1.0\r\n\r\n")
        #expect(request.versionMinor == 0)
    }

    @Test(arguments: [
        ("GET / HTTP/1.1\r\n\r\n", 400),  // no Host
        ("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),  // two Host fields (RFC 9112 §3.2)
        ("GET / HTTP/1.1\r\nHost: a\r\nX: a\u{0}b\r\n\r\n", 400),  // NUL in a field value
        ("GET /\r\nHost: x\r\n\r\n", 400),  // no version
        ("GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505),
        ("GET / FOO/1.1\r\nHost: x\r\n\r\n", 400),
        ("G@T / HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("BREW / HTTP/1.1\r\nHost: x\r\n\r\n", 501),
        ("GET  / HTTP/1.1\r\nHost: x\r\n\r\n", 400),  // double space
        ("GET http://x/ HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: x\r\nBad Name: v\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: x\r\nA: b\r\n folded\r\n\r\n", 400),  // obs-fold
        ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400),
        ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1e3\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\n\r\n", 413),
        ("GET / HTTP/1.1\nHost: x\n\n", 400)  // bare LF
    ])
    func rejects(_ text: String, status: Int) {
        guard case .failed(let error) = parser.parse(bytes(text)) else {
            Issue.record("expected \(status) for \(text.debugDescription), got \(parser.parse(bytes(text)))")
            return
        }
        #expect(error.status.code == status)
    }

    @Test func limitsGive414And431() {
        let longLine = "GET /" + String(repeating: "a", count: 9000) + " HTTP/1.1\r\nHost: x\r\n\r\n"
        guard case .failed(let uri) = parser.parse(bytes(longLine)) else {
            Issue.record("no 414")
            return
        }
        #expect(uri.status.code == 414)
        let manyHeaders = "GET / HTTP/1.1\r\nHost: x\r\n" + (0..<101).map { "H\($0): v\r\n" }.joined() + "\r\n"
        guard case .failed(let count) = parser.parse(bytes(manyHeaders)) else {
            Issue.record("no 431")
            return
        }
        #expect(count.status.code == 431)
        let bigHeader = "GET / HTTP/1.1\r\nHost: x\r\nBig: " + String(repeating: "b", count: 17000) + "\r\n\r\n"
        guard case .failed(let size) = parser.parse(bytes(bigHeader)) else {
            Issue.record("no 431")
            return
        }
        #expect(size.status.code == 431)
        // Still incomplete but already over the limit: no need to wait for the rest.
        guard case .failed(let partial) = parser.parse(bytes("GET /" + String(repeating: "a", count: 9000))) else {
            Issue.record("no early 414")
            return
        }
        #expect(partial.status.code == 414)
    }

    /// Found by the fuzzer: the header limit counts the section with its CRLFs whether it
    /// arrives whole or in pieces, so a split never changes the answer at the boundary.
    @Test func headerLimitIsTheSameWholeOrSplit() {
        var limits = ServerLimits()
        limits.maxHeaderBytes = 32
        let tight = HTTPParser(limits: limits)
        for size in 24...40 {
            let head = "GET / HTTP/1.1\r\n" + "Host: " + String(repeating: "v", count: size - 10) + "\r\n\r\n"  // section = size bytes
            let whole = tight.parse(bytes(head))
            let prefix = tight.parse(bytes(String(head.dropLast())))
            if size <= 32 {
                guard case .request = whole, case .needMore = prefix else {
                    Issue.record("size \(size): \(whole) / \(prefix)")
                    continue
                }
            } else {
                guard case .failed(let error) = whole else {
                    Issue.record("size \(size): \(whole)")
                    continue
                }
                #expect(error.status.code == 431)
                if case .request = prefix { Issue.record("size \(size): prefix accepted") }
            }
        }
        limits.maxRequestLine = 20
        let line = HTTPParser(limits: limits)
        for size in 16...24 {  // request line with its CRLF = size bytes
            let head = "GET /" + String(repeating: "a", count: size - 16) + " HTTP/1.0\r\n\r\n"
            let whole = line.parse(bytes(head))
            let prefix = line.parse(bytes(String(head.prefix(size - 1))))
            if size <= 20 {
                guard case .request = whole, case .needMore = prefix else {
                    Issue.record("line \(size): \(whole) / \(prefix)")
                    continue
                }
            } else {
                guard case .failed(let error) = whole, error.status.code == 414 else {
                    Issue.record("line \(size): \(whole)")
                    continue
                }
            }
        }
    }

    /// Every split of the input gives the same request once all bytes are in.
    @Test(arguments: [
        "POST /a?b=c HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\nhello world",
        "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5;e=1\r\nhello\r\n6\r\n world\r\n0\r\nT: 1\r\n\r\n"
    ])
    func splitAtEveryByteBoundary(_ text: String) throws {
        let all = bytes(text)
        for cut in 0..<all.count {
            switch parser.parse(Array(all[..<cut])) {
            case .needMore: break
            default: Issue.record("prefix of \(cut) bytes did not ask for more")
            }
            guard case .request(let request, let consumed) = parser.parse(all) else {
                Issue.record("no request")
                return
            }
            #expect(request.bodyText == "hello world")
            #expect(consumed == all.count)
        }
    }

    @Test func expectContinueIsReportedOnceHeadersArrive() {
        let head = "POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n"
        guard case .needMore(let complete, let expects) = parser.parse(bytes(head)) else {
            Issue.record("no needMore")
            return
        }
        #expect(complete && expects)
    }
}
