import Auth
import Foundation
import HTTP
import Identity
import Postgres
import TestSupport
import Testing

/// `DISABLE_SIGNUP`, `EXTERNAL_ANONYMOUS_USERS_ENABLED`, `EXTERNAL_EMAIL_ENABLED`.
@Suite("Auth provider settings", .serialized)
struct AuthProviderSettingsTests {
    @Test func disabledSignUpsAndProvidersAnswerGoTruesErrors() throws {
        let server = try TestServer { config in
            config.auth.disableSignup = true
            config.auth.anonymousUsersEnabled = false
            config.auth.emailEnabled = false
        }
        let http = server.client()
        let settings = try #require(try http.request("GET", "/auth/v1/settings", headers: server.headers()).jsonObject)
        #expect(settings["disable_signup"] as? Bool == true)
        let external = try #require(settings["external"] as? [String: Any])
        #expect(external["anonymous_users"] as? Bool == false && external["email"] as? Bool == false)
        let anonymous = try http.request("POST", "/auth/v1/signup", headers: server.headers(), body: "{}")
        #expect(anonymous.status == 422 && anonymous.header("x-sb-error-code") == "anonymous_provider_disabled")
        let signUp = try http.request("POST", "/auth/v1/signup", headers: server.headers(), body: #"{"email":"x@example.com","password":"Secret-pass-1"}"#)
        #expect(signUp.status == 422 && signUp.header("x-sb-error-code") == "signup_disabled")
        let otp = try http.request("POST", "/auth/v1/otp", headers: server.headers(), body: #"{"email":"x@example.com"}"#)
        #expect(otp.status == 422 && otp.header("x-sb-error-code") == "email_provider_disabled")
        let password = try http.request(
            "POST", "/auth/v1/token?grant_type=password", headers: server.headers(), body: #"{"email":"x@example.com","password":"p"}"#)
        #expect(password.status == 422 && password.jsonObject?["message"] as? String == "Email logins are disabled")
        let recover = try http.request("POST", "/auth/v1/recover", headers: server.headers(), body: #"{"email":"x@example.com"}"#)
        #expect(recover.status == 400 && recover.header("x-sb-error-code") == "email_provider_disabled")
        // The admin API still creates users.
        let created = try http.request("POST", "/auth/v1/admin/users", headers: server.headers(server.serviceKey), body: #"{"email":"ops@example.com"}"#)
        #expect(created.status == 200)
    }

    @Test func disabledSignUpsKeepEmailUsersSigningIn() throws {
        let server = try TestServer { config in config.auth.disableSignup = true }
        let http = server.client()
        let email = "existing-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        _ = try http.request(
            "POST", "/auth/v1/admin/users", headers: server.headers(server.serviceKey),
            body: #"{"email":"\#(email)","password":"Secret-pass-1","email_confirm":true}"#)
        let signIn = try http.request(
            "POST", "/auth/v1/token?grant_type=password", headers: server.headers(), body: #"{"email":"\#(email)","password":"Secret-pass-1"}"#)
        #expect(signIn.status == 200)
        let otp = try http.request("POST", "/auth/v1/otp", headers: server.headers(), body: #"{"email":"new@example.com"}"#)
        #expect(otp.status == 422 && otp.header("x-sb-error-code") == "otp_disabled")
        let anonymous = try http.request("POST", "/auth/v1/signup", headers: server.headers(), body: "{}")
        #expect(anonymous.status == 422 && anonymous.header("x-sb-error-code") == "signup_disabled")
    }
}
