import CZlib

/// Inflates gzip (or zlib) bytes, refusing output beyond `limit` bytes (a small body that
/// inflates to gigabytes is refused, not inflated).
enum Gzip {
    enum Failure: Error, Equatable {
        case corrupt
        case tooLarge
    }

    static func isGzip(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b
    }

    static func inflate(_ input: [UInt8], limit: Int) throws(Failure) -> [UInt8] {
        var stream = z_stream()
        // 15 window bits + 32: a gzip or zlib header, whichever comes.
        guard onboard_inflateInit2(&stream, 15 + 32) == Z_OK else { throw .corrupt }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var input = input
        let status: Int32 = input.withUnsafeMutableBufferPointer { source in
            stream.next_in = source.baseAddress
            stream.avail_in = UInt32(source.count)
            while true {
                let code: Int32 = chunk.withUnsafeMutableBufferPointer { buffer in
                    stream.next_out = buffer.baseAddress
                    stream.avail_out = UInt32(buffer.count)
                    return CZlib.inflate(&stream, Z_NO_FLUSH)
                }
                let produced = chunk.count - Int(stream.avail_out)
                if output.count + produced > limit { return Z_MEM_ERROR }
                output.append(contentsOf: chunk[0..<produced])
                switch code {
                case Z_STREAM_END: return Z_STREAM_END
                case Z_OK where stream.avail_in > 0 || produced > 0: continue
                default: return code == Z_OK ? Z_DATA_ERROR : code
                }
            }
        }
        switch status {
        case Z_STREAM_END: return output
        case Z_MEM_ERROR: throw .tooLarge
        default: throw .corrupt
        }
    }
}
