import Foundation
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One HTTP exchange, waited for on the calling thread (Auth's handlers run on worker threads):
/// the JWKS of an id_token provider, an HTTP hook.
enum BlockingFetch {
    struct Answer {
        var status: Int
        var body: [UInt8]
        var response: HTTPURLResponse?
    }

    /// The answer, or the transport's error (refused, unreachable); `timedOut` when no answer
    /// has come within the request's `timeoutInterval` (then the exchange is cancelled).
    static func exchange(_ request: URLRequest) -> Result<Answer, URLError> {
        let result = Mutex<Result<Answer, URLError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let task = URLSession.shared.dataTask(with: request) { data, response, error in
            let http = response as? HTTPURLResponse
            result.withLock {
                if let error {
                    $0 = .failure(error as? URLError ?? URLError(.unknown))
                } else {
                    $0 = .success(Answer(status: http?.statusCode ?? 0, body: data.map(Array.init) ?? [], response: http))
                }
            }
            done.signal()
        }
        task.resume()
        // The whole exchange within the timeout (URLSession's own is the time between bytes).
        guard done.wait(timeout: .now() + request.timeoutInterval) == .success else {
            task.cancel()
            return .failure(URLError(.timedOut))
        }
        return result.withLock { $0 } ?? .failure(URLError(.unknown))
    }
}
