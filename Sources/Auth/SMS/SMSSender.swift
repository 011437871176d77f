import Foundation
import HTTP
import Logging
import Postgres

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Twilio's Messages API (GoTrue's `sms_provider/twilio.go`): a form POST to
/// `/2010-04-01/Accounts/{sid}/Messages.json` with HTTP basic authentication; the answer's
/// `sid` is the message id, and a `failed` or `undelivered` status is a failure.
struct TwilioClient {
    let config: TwilioConfig
    /// Seconds for the whole exchange (GoTrue's 10).
    var timeout: Double = 10

    /// Why a message was not sent, in the words GoTrue puts after `Error sending … OTP to provider: `.
    struct Failure: Error {
        let reason: String
    }

    func send(to phone: String, body message: String, channel: String) -> Result<String, Failure> {
        let base = config.apiURL.hasSuffix("/") ? String(config.apiURL.dropLast()) : config.apiURL
        let sid = config.accountSID.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        guard let url = URL(string: "\(base)/2010-04-01/Accounts/\(sid)/Messages.json") else { return .failure(Failure(reason: "invalid API URL")) }
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        let credentials = Data("\(config.accountSID):\(config.authToken)".utf8).base64EncodedString()
        request.setValue("Basic \(credentials)", forHTTPHeaderField: "Authorization")
        // WhatsApp messages name both ends `whatsapp:+…` (the sender only when it is a number).
        let whatsApp = channel == "whatsapp"
        let senderIsNumber = (try? PhoneNumber.normalize(config.messageServiceSID)) != nil
        let to = (whatsApp ? "whatsapp:" : "") + "+" + phone
        let from = (whatsApp && senderIsNumber ? "whatsapp:" : "") + config.messageServiceSID
        let fields = [("To", to), ("Channel", channel), ("From", from), ("Body", message)]
        request.httpBody = Data(AuthService.formEncode(fields).utf8)
        switch BlockingFetch.exchange(request) {
        case .failure(let error):
            return .failure(Failure(reason: error.localizedDescription))
        case .success(let answer):
            let json = JSON.parse(answer.body)
            guard answer.status == 200 || answer.status == 201 else {
                let message = json?["message"]?.string ?? "status \(answer.status)"
                let code = json?["code"]?.number.map { String(Int($0)) } ?? ""
                return .failure(Failure(reason: "\(message) More information: \(code)"))
            }
            guard let sid = json?["sid"]?.string else { return .failure(Failure(reason: "unreadable answer")) }
            if let status = json?["status"]?.string, status == "failed" || status == "undelivered" {
                let message = json?["error_message"]?.string ?? ""
                return .failure(Failure(reason: "twilio error: \(message) for message \(sid)"))
            }
            return .success(sid)
        }
    }
}

extension AuthService {
    /// Sends `code` to `phone` by the configured way: the send-SMS hook when on, else Twilio,
    /// else the test sender, which writes the message to the log. Returns the provider's message
    /// id (empty for the hook and the log). Called inside the transaction that stores the code,
    /// so a failed send leaves no code behind.
    func deliverSMS(_ connection: Connection, userID: String, phone: String, code: String, kind: PhoneTokenKind, channel: String) throws -> String {
        if let hook = config.hooks.sendSMS {
            guard let user = try Users.json(connection, id: userID).flatMap({ JSON.parse(Array($0.utf8)) }) else {
                throw AuthError.unexpected("user of SMS")
            }
            let sms: [String: JSON] = ["otp": .string(code), "phone": .string(phone), "sms_type": .string(kind.hookType)]
            _ = try invoke(hook, name: "send-sms", connection, ["user": user, "sms": .object(sms)])
            return ""
        }
        let message = config.sms.message(code: code)
        guard let twilio = config.sms.twilio else {
            logger.info("sms (no SMS_PROVIDER: written to the log)", metadata: ["to": "\(phone)", "channel": "\(channel)", "message": "\(message)"])
            return ""
        }
        switch TwilioClient(config: twilio).send(to: phone, body: message, channel: channel) {
        case .success(let id):
            return id
        case .failure(let failure):
            logger.warning("sms not sent", metadata: ["provider": "twilio", "error": "\(failure.reason)"])
            throw AuthError.smsSendFailed("Error sending \(kind.otpType) OTP to provider: \(failure.reason)")
        }
    }
}
