import Foundation
import HTTP
import Postgres

/// GoTrue's send-email hook (`HOOK_SEND_EMAIL_*`) through the outbox: a flow writes the hook's
/// event (`user`, `email_data`, `metadata`) into the outbox row of its mail, in the transaction
/// that issues the token; the mail senders call the hook with it after the commit, as they
/// would hand a message to the mail server, and try it again after a failure.
extension AuthService {
    /// The tokens of one hook call, as GoTrue's `email_data` names them.
    struct HookTokens {
        var token: String
        var tokenHash: String
        var tokenNew = ""
        var tokenHashNew = ""
    }

    /// The event of the send-email hook for a mail of `kind` to `userID` (read now, in the
    /// issuing transaction, so the hook sees the user as the mail was issued).
    func sendEmailEvent(_ connection: Connection, kind: MailKind, userID: String, tokens: HookTokens, redirectTo: String) throws -> String {
        guard let user = try Users.json(connection, id: userID).flatMap({ JSON.parse(Array($0.utf8)) }) else {
            throw AuthError.unexpected("user of a mail")
        }
        let emailData: [String: JSON] = [
            "token": .string(tokens.token), "token_hash": .string(tokens.tokenHash), "redirect_to": .string(redirectTo),
            "email_action_type": .string(kind.hookActionType), "site_url": .string(apiExternalURL()),
            "token_new": .string(tokens.tokenNew), "token_hash_new": .string(tokens.tokenHashNew)
        ]
        let metadata: [String: JSON] = [
            "uuid": .string(UUID().uuidString.lowercased()), "name": .string("send-email"), "time": .string(Self.timestamp())
        ]
        return JSON.object(["user": user, "email_data": .object(emailData), "metadata": .object(metadata)]).text
    }

    /// An e-mail change's one hook call, with both addresses' tokens laid out as GoTrue lays
    /// them out: with a mail to the current address too, `token` and `token_hash_new` are the
    /// current address's, `token_new` and `token_hash` the new one's; without it `token` and
    /// `token_hash` are the new address's.
    func emailChangeHookMail(
        _ connection: Connection, userID: String, new: OutgoingMail, current: OutgoingMail?, redirectTo: String
    ) throws
        -> OutgoingMail
    {
        var tokens = HookTokens(token: new.code, tokenHash: new.tokenHash)
        if let current {
            tokens = HookTokens(token: current.code, tokenHash: new.tokenHash, tokenNew: new.code, tokenHashNew: current.tokenHash)
        }
        var mail = new
        mail.hookInput = try sendEmailEvent(connection, kind: .emailChange, userID: userID, tokens: tokens, redirectTo: redirectTo)
        return mail
    }

    /// `API_EXTERNAL_URL` (else this server's address), without a trailing `/`: the base of the
    /// links in mails, and the hook's `site_url`.
    func apiExternalURL() -> String {
        var base = config.mail.externalURL ?? String(config.issuer.dropLast(config.issuer.hasSuffix("/auth/v1") ? "/auth/v1".count : 0))
        while base.hasSuffix("/") { base.removeLast() }
        return base
    }
}

extension MailKind {
    /// GoTrue's `email_action_type` for this mail.
    var hookActionType: String {
        switch self {
        case .confirmation: return "signup"
        case .recovery: return "recovery"
        case .magicLink: return "magiclink"
        case .emailChange: return "email_change"
        case .reauthentication: return "reauthentication"
        case .invite: return "invite"
        }
    }
}

extension Mailer {
    /// Hands one outbox row's event to the hook; nil when the hook took it. Every failure is
    /// transient (the outbox tries again after its delays): an endpoint that is down or slow,
    /// a status GoTrue refuses, an `error` answer, a failing function. A function runs in the
    /// sender's transaction (under a savepoint, so a failure leaves the row to record it), so
    /// what it writes commits with the delivery.
    func callSendEmailHook(_ hook: AuthHook, _ settings: AuthHooks, input: String?, on connection: Connection) -> MailDeliveryError? {
        guard let input, let event = JSON.parse(Array(input.utf8)) else {
            return MailDeliveryError("the outbox row has no send-email hook event (written by a server without the hook)", transient: false)
        }
        do {
            switch hook.target {
            case .http(let url, let keys):
                let client = HTTPHookClient(url: url, keys: keys, timeout: settings.httpTimeout, attempts: settings.httpAttempts, backoff: settings.httpBackoff)
                _ = try client.post(event, messageID: event["metadata"]?["uuid"]?.string)
            case .function(let schema, let name):
                _ = try connection.query("SAVEPOINT send_email_hook")
                do {
                    _ = try AuthHook.callFunction(connection, schema: schema, name: name, event: event, timeoutMilliseconds: settings.timeoutMilliseconds)
                    _ = try connection.query("RELEASE SAVEPOINT send_email_hook")
                } catch {
                    _ = try connection.query("ROLLBACK TO SAVEPOINT send_email_hook")
                    throw error
                }
            }
            hookCalls.record("send-email", ok: true)
            return nil
        } catch {
            hookCalls.record("send-email", ok: false)
            return MailDeliveryError("send-email hook \(hook.uri): \(Self.hookFailure(error))", transient: true)
        }
    }

    static func hookFailure(_ error: any Error) -> String {
        switch error {
        case AuthError.hook(let status, let message, _): return "\(message) (\(status.code))"
        case let error as PostgresError: return "\(error.sqlState ?? "-"): \(error.message)"
        default: return "\(error)"
        }
    }
}
