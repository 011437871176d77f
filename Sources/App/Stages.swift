import Dispatch
import HTTP

/// Counts every answer once, on whichever path it was given (`Metrics.record`: requests by
/// route and status, latency from here to the answer, auth failures). A request the inline path
/// declines is counted by the worker that answers it.
struct MetricsStage: Middleware {
    let metrics: Metrics

    func handle(_ request: HTTPRequest, next: Next, reply: @escaping Reply) -> Bool {
        let started = DispatchTime.now().uptimeNanoseconds
        // Only what the record reads is kept until the answer (not the whole request).
        let path = request.path
        let method = request.method
        return next(request) { [metrics] response in
            metrics.record(path: path, method: method, response, since: started)
            reply(response)
        }
    }
}

/// After an answered Auth request that may write (anything but `GET`), its bearer's user reads
/// from the primary for a while (`ReadReplicas.recordAuthWrite`): they read their own writes.
struct AuthWritesStage: Middleware {
    let readReplicas: ReadReplicas
    let config: ServerConfig

    func handle(_ request: HTTPRequest, next: Next, reply: @escaping Reply) -> Bool {
        next(request) { [readReplicas, config] response in
            readReplicas.recordAuthWrite(request, config: config)
            reply(response)
        }
    }
}
