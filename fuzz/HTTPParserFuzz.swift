// libFuzzer target for the HTTP/1.1 request parser (fuzz/run.sh builds and runs it).
// Every input must be answered or refused — never a crash, a hang or an out-of-range
// `consumed` — and the outcome must not depend on how the bytes were split across reads.

let tightLimits: ServerLimits = {
    var limits = ServerLimits()
    limits.maxRequestLine = 64
    limits.maxHeaderBytes = 256
    limits.maxHeaderCount = 8
    limits.maxBodyBytes = 128
    return limits
}()
let parsers = [HTTPParser(), HTTPParser(limits: tightLimits)]
let refusals: Set<Int> = [400, 405, 408, 413, 414, 417, 431, 501, 505]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    for parser in parsers {
        // Pipelined requests: keep parsing what is left after each whole request.
        var rest = bytes[...]
        var rounds = 0
        while !rest.isEmpty {
            rounds += 1
            precondition(rounds <= bytes.count + 1, "parser made no progress")
            switch parser.parse(Array(rest)) {
            case .request(let request, let consumed):
                precondition(consumed > 0 && consumed <= rest.count, "consumed \(consumed) of \(rest.count)")
                precondition(request.body.count <= parser.limits.maxBodyBytes, "body over the limit")
                rest = rest.dropFirst(consumed)
            case .failed(let error):
                precondition(refusals.contains(error.status.code), "unexpected status \(error.status)")
                rest = []
            case .needMore:
                rest = []
            }
        }
        // Split independence: any strict prefix of a whole request is "need more", never a
        // different request or a refusal.
        if case .request(_, let consumed) = parser.parse(bytes), consumed > 1 {
            for cut in [1, consumed / 2, consumed - 1] {
                guard case .needMore = parser.parse(Array(bytes[..<cut])) else {
                    preconditionFailure("prefix of \(cut) of \(consumed) bytes was not needMore")
                }
            }
        }
    }
    return 0
}
