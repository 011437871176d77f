import Foundation

/// The kinds of mail the Auth flows send, with GoTrue's names.
public enum MailKind: String, Sendable, CaseIterable {
    case confirmation
    case recovery
    case magicLink = "magic_link"
    case emailChange = "email_change"
    case reauthentication
    case invite

    /// The `type` in the mailed link (`GET /verify?type=…`); none for reauthentication (code only).
    public var linkType: String? {
        switch self {
        case .confirmation: return "signup"
        case .recovery: return "recovery"
        case .magicLink: return "magiclink"
        case .emailChange: return "email_change"
        case .reauthentication: return nil
        case .invite: return "invite"
        }
    }

    /// The suffix of GoTrue's `MAILER_TEMPLATES_*` and `MAILER_SUBJECTS_*` settings.
    public var settingName: String {
        switch self {
        case .confirmation: return "CONFIRMATION"
        case .recovery: return "RECOVERY"
        case .magicLink: return "MAGIC_LINK"
        case .emailChange: return "EMAIL_CHANGE"
        case .reauthentication: return "REAUTHENTICATION"
        case .invite: return "INVITE"
        }
    }
}

/// One mail's subject and HTML body, with GoTrue's template variables: `{{ .ConfirmationURL }}`,
/// `{{ .Token }}`, `{{ .TokenHash }}`, `{{ .SiteURL }}`, `{{ .RedirectTo }}`, `{{ .Email }}`,
/// `{{ .NewEmail }}`, `{{ .SendingTo }}` and `{{ .Data.key }}` (user metadata). Only variable
/// substitution is done: other Go template actions (`if`, `range`, pipes) stay as written.
public struct MailTemplate: Sendable, Equatable {
    public var subject: String
    public var body: String

    public init(subject: String, body: String) {
        self.subject = subject
        self.body = body
    }

    /// The default of each kind: the link and the code in every mail that has a link.
    public static func standard(_ kind: MailKind) -> MailTemplate {
        func page(_ heading: String, _ text: String, _ action: String) -> String {
            """
            <h2>\(heading)</h2>
            <p>\(text)</p>
            <p><a href="{{ .ConfirmationURL }}">\(action)</a></p>
            <p>Alternatively, enter the code: <strong>{{ .Token }}</strong></p>
            <p>The link and the code can be used once and expire soon. If you did not ask for this, ignore this mail.</p>
            """
        }
        switch kind {
        case .confirmation:
            return MailTemplate(
                subject: "Confirm your email address",
                body: page("Confirm your email address", "Follow this link to confirm your email address:", "Confirm email address"))
        case .recovery:
            return MailTemplate(
                subject: "Reset your password",
                body: page("Reset your password", "Follow this link to reset the password of your account:", "Reset password"))
        case .magicLink:
            return MailTemplate(subject: "Your sign-in link", body: page("Your sign-in link", "Follow this link to sign in:", "Sign in"))
        case .emailChange:
            return MailTemplate(
                subject: "Confirm your new email address",
                body: page(
                    "Confirm the change of your email address",
                    "Follow this link to confirm the change of your email address from {{ .Email }} to {{ .NewEmail }}:",
                    "Confirm new email address"))
        case .invite:
            return MailTemplate(
                subject: "You have been invited",
                body: page("You have been invited", "You have been invited to create an account. Follow this link to accept the invite:", "Accept the invite"))
        case .reauthentication:
            return MailTemplate(
                subject: "{{ .Token }} is your verification code",
                body: "<h2>Confirm it is you</h2>\n<p>Enter this code: <strong>{{ .Token }}</strong></p>\n<p>It can be used once and expires soon.</p>")
        }
    }

    /// The variables of one mail.
    public struct Values: Sendable {
        public var confirmationURL = ""
        public var token = ""
        public var tokenHash = ""
        public var siteURL = ""
        public var redirectTo = ""
        public var email = ""
        public var newEmail = ""
        public var sendingTo = ""
        /// The user's metadata as JSON object text (`{{ .Data.key }}`).
        public var dataJSON = "{}"

        public init() {}
    }

    /// The subject (plain text, on one line) and the body (HTML: values are escaped).
    public func render(_ values: Values) -> (subject: String, html: String) {
        let data = (try? JSONSerialization.jsonObject(with: Data(values.dataJSON.utf8))) as? [String: Any] ?? [:]
        func lookup(_ name: String) -> String? {
            switch name {
            case "ConfirmationURL": return values.confirmationURL
            case "Token": return values.token
            case "TokenHash": return values.tokenHash
            case "SiteURL": return values.siteURL
            case "RedirectTo": return values.redirectTo
            case "Email": return values.email
            case "NewEmail": return values.newEmail
            case "SendingTo": return values.sendingTo
            default:
                guard name.hasPrefix("Data.") else { return nil }
                switch data[String(name.dropFirst(5))] {
                case let text as String: return text
                case let number as NSNumber: return number.stringValue
                default: return ""
                }
            }
        }
        let subject = Self.substitute(subject, escape: { $0 }, lookup)
            .replacingOccurrences(of: "\r", with: " ").replacingOccurrences(of: "\n", with: " ")
        return (subject, Self.substitute(body, escape: Self.escapeHTML, lookup))
    }

    /// Replaces each `{{ .Name }}` whose name `lookup` knows.
    static func substitute(_ template: String, escape: (String) -> String, _ lookup: (String) -> String?) -> String {
        var out = ""
        var rest = template[...]
        while let open = rest.range(of: "{{") {
            out += rest[..<open.lowerBound]
            guard let close = rest[open.upperBound...].range(of: "}}") else {
                rest = rest[open.lowerBound...]
                break
            }
            let inner = rest[open.upperBound..<close.lowerBound].trimmingCharacters(in: .whitespaces)
            if inner.hasPrefix("."), let value = lookup(String(inner.dropFirst())) {
                out += escape(value)
            } else {
                out += rest[open.lowerBound..<close.upperBound]
            }
            rest = rest[close.upperBound...]
        }
        return out + rest
    }

    static func escapeHTML(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&#34;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
