// libFuzzer target for the WebSocket frame decoder (fuzz/run.sh builds and runs it).
// Every input must decode to events or a close code — never a crash, a hang or a message over
// the limit — and the events must not depend on how the bytes were split across reads.

let maxBytes = 256

func decode(_ chunks: [ArraySlice<UInt8>]) -> [WebSocketEvent] {
    var decoder = WebSocketDecoder(maxFrameBytes: maxBytes, maxMessageBytes: maxBytes)
    var events: [WebSocketEvent] = []
    for chunk in chunks { events += decoder.feed(chunk) }
    precondition(decoder.bufferedBytes <= 14 + 2 * maxBytes, "decoder holds \(decoder.bufferedBytes) bytes")
    return events
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let whole = decode([bytes[...]])
    for event in whole {
        switch event {
        case .message(.text(let text)): precondition(text.utf8.count <= maxBytes, "text message over the limit")
        case .message(.binary(let payload)): precondition(payload.count <= maxBytes, "binary message over the limit")
        case .ping(let payload): precondition(payload.count <= 125, "ping payload over 125 bytes")
        case .close(let code, _): precondition(code.map(WebSocketDecoder.isValidReceivedCloseCode) ?? true, "invalid close code passed on")
        case .pong, .fail: break
        }
    }
    // Split independence: the same bytes in two reads, or one byte at a time, decode the same.
    if size > 1 {
        for cut in [1, size / 2, size - 1] {
            precondition(decode([bytes[..<cut], bytes[cut...]]) == whole, "split at \(cut) of \(size) changed the events")
        }
        if size <= 64 {
            precondition(decode(bytes.indices.map { bytes[$0...$0] }) == whole, "byte-by-byte reads changed the events")
        }
    }
    return 0
}
