import Auth
import Testing

/// `redirect_to` values an attacker would try, against SITE_URL `http://localhost:3000` and an
/// allow list. Each answer is the URL the server would send the browser to, with the session in
/// its fragment: SITE_URL, or the candidate as a browser reads it when that origin is allowed.
@Suite("Redirects: a session only goes where a browser would really go on an allowed origin")
struct RedirectPolicyTests {
    static let site = "http://localhost:3000"
    static let policy = RedirectPolicy(siteURL: site, allowList: ["myapp://**", "https://allowed.example/**", "https://*.allowed.example/**"])

    struct Case: Sendable, CustomTestStringConvertible {
        let input: String
        let expected: String
        init(_ input: String, _ expected: String = RedirectPolicyTests.site) {
            self.input = input
            self.expected = expected
        }
        var testDescription: String { input.debugDescription }
    }

    static let hostile: [Case] = [
        // A backslash is a path separator for http(s): the host is the part before it.
        Case(#"http://evil.example\@localhost:3000/"#),
        Case(#"http://evil.example\@localhost:3000/path?x=1"#),
        Case(#"http:\\evil.example\@localhost:3000"#),
        Case(#"http:/\/\evil.example"#),
        Case(#"https:\\\\evil.example"#),
        Case(#"http://evil.example/\@localhost:3000"#),
        Case(#"https://evil.com\.allowed.example/"#),
        Case(#"https://allowed.example\evil.com/"#, "https://allowed.example/evil.com/"),
        // Scheme-relative, relative and slash-less forms.
        Case("//evil.example"),
        Case(#"/\evil.example"#),
        Case(#"\\evil.example"#),
        Case("https:evil.example"),
        Case("https:/evil.example/x"),
        // User info: the host is after the last @, and the user info is dropped.
        Case("http://evil.example@localhost:3000/", "http://localhost:3000/"),
        Case("http://evil.example:80@localhost:3000/", "http://localhost:3000/"),
        Case("http://localhost:3000@evil.example/"),
        Case("http://localhost:3000:@evil.example"),
        Case("http://localhost%3A3000@evil.example/"),
        Case("http://evil.example%5C@localhost:3000/", "http://localhost:3000/"),
        Case("https://allowed.example@evil.com/"),
        // Percent-encoded hosts: decoded, and forbidden code points refused.
        Case("http://localhost%40evil.example/"),
        Case("https://evil.com%2F.allowed.example/"),
        Case("http://%6c%6f%63%61%6c%68%6f%73%74:3000/", "http://localhost:3000/"),
        // Query and fragment tricks.
        Case("http://evil.example#@localhost:3000/"),
        Case("http://evil.example?@localhost:3000/"),
        Case("http://localhost:3000#@evil.example/", "http://localhost:3000#@evil.example/"),
        Case("http://localhost:3000?@evil.example/", "http://localhost:3000?@evil.example/"),
        // Tabs, newlines and controls are removed before parsing, as browsers do.
        Case("http://evil.exa\nmple\\@localhost:3000/"),
        Case("http://ev\til.example@localhost:3000/", "http://localhost:3000/"),
        Case("http://local\thost:3000/", "http://localhost:3000/"),
        Case("http://localhost:3000\r\nSet-Cookie: a=1"),
        Case(" \u{1}http://evil.example"),
        // Look-alike hosts.
        Case("https://allowed.example.evil.com/"),
        Case("https://evil.com/.allowed.example/"),
        Case("https://a.b.allowed.example/x"),
        Case("https://\u{430}llowed.example/"),
        Case("https://allowed.exampl\u{435}/"),
        Case(
            "https://\u{FF41}\u{FF4C}\u{FF4C}\u{FF4F}\u{FF57}\u{FF45}\u{FF44}\u{FF0E}\u{FF45}\u{FF58}\u{FF41}\u{FF4D}\u{FF50}\u{FF4C}\u{FF45}/x",
            "https://allowed.example/x"),
        Case("http\u{FF1A}//evil.example"),
        Case("http://localhost.evil.example:3000/"),
        Case("http://evil.example/localhost:3000"),
        // Numeric and other loopback spellings are other hosts than SITE_URL's `localhost`.
        Case("http://127.0.0.1:3000/"),
        Case("http://0x7f.1:3000/"),
        Case("http://2130706433/"),
        Case("http://[::1]:3000/"),
        // Ports.
        Case("http://localhost:3000:80/"),
        Case("http://localhost:99999/"),
        Case("https://allowed.example:8443/x"),
        Case("ftp://localhost:3000/"),
        // Schemes that run code, and unknown apps.
        Case("javascript:alert(1)"),
        Case("JaVaScRiPt:alert(document.cookie)//"),
        Case("data:text/html,<script>alert(1)</script>"),
        Case("vbscript:msgbox(1)"),
        Case("file:///etc/passwd"),
        Case("myapp2://evil"),
        Case("myapp:\u{7f}//x"),
        Case("")
    ]

    static let allowed: [Case] = [
        Case("http://localhost:3000/welcome?x=1#y", "http://localhost:3000/welcome?x=1#y"),
        Case("http://localhost:3000", "http://localhost:3000"),
        Case("http://localhost:4000/", "http://localhost:4000/"),
        Case("HTTP://LOCALHOST:3000/Path", "http://localhost:3000/Path"),
        Case("http://localhost:3000/a b", "http://localhost:3000/a%20b"),
        Case("https://allowed.example/done", "https://allowed.example/done"),
        Case("https://allowed.example:443/done", "https://allowed.example/done"),
        Case("https://app.allowed.example/done", "https://app.allowed.example/done"),
        Case("myapp://login-callback", "myapp://login-callback"),
        Case("myapp://login-callback?next=/home", "myapp://login-callback?next=/home")
    ]

    @Test(arguments: hostile)
    func hostileRedirectsFallBackOrStayOnTheAllowedOrigin(_ testCase: Case) {
        #expect(Self.policy.target(testCase.input) == testCase.expected)
    }

    @Test(arguments: allowed)
    func allowedRedirectsAreKept(_ testCase: Case) {
        #expect(Self.policy.target(testCase.input) == testCase.expected)
    }

    @Test func thereAreAtLeastFortyHostileCases() {
        #expect(Self.hostile.count >= 40)
    }

    @Test func browserReading() throws {
        let url = try #require(BrowserURL(##"HTTPS://User:Pass@Ex%41mple.COM:0443\a\b?q=\#x"##))
        #expect(url.scheme == "https" && url.host == "example.com" && url.port == nil && url.rest == ##"/a/b?q=\#x"##)
        #expect(BrowserURL("http://0x7f.0.0.1/")?.host == "127.0.0.1")
        #expect(BrowserURL("http://0300.0250.1/")?.host == "192.168.0.1")
        #expect(BrowserURL("http://1.2.3.4.5/") == nil)
        #expect(BrowserURL("http://256.1.1.1/") == nil)
        #expect(BrowserURL("http://b\u{fc}cher.example/")?.host == "xn--bcher-kva.example")
        #expect(BrowserURL("http://\u{4F8B}\u{3048}.\u{30C6}\u{30B9}\u{30C8}/")?.host == "xn--r8jz45g.xn--zckzah")
        #expect(BrowserURL("http://@/") == nil && BrowserURL("http:///") == nil && BrowserURL("noscheme") == nil)
    }
}
