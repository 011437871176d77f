/// QR codes (ISO/IEC 18004, model 2) of a text in byte mode at error-correction level H (as
/// GoTrue draws its TOTP QR codes), drawn as SVG.
enum QRCode {
    /// Error-correction codewords per block and the number of blocks at level H, by version.
    private static let eccPerBlock = [
        -1, 17, 28, 22, 16, 22, 28, 26, 26, 24, 28, 24, 28, 22, 24, 24, 30, 28, 28, 26, 28,
        30, 24, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30
    ]
    private static let blockCount = [
        -1, 1, 1, 2, 4, 4, 4, 5, 6, 8, 8, 11, 11, 16, 16, 18, 16, 19, 21, 25, 25,
        25, 34, 30, 32, 35, 37, 40, 42, 45, 48, 51, 54, 57, 60, 63, 66, 70, 74, 77, 81
    ]
    /// The two format bits of level H.
    private static let levelBits = 2

    /// The symbol's modules, row by row (`true`: dark); nil when the text exceeds version 40.
    static func modules(_ text: String, mask forcedMask: Int? = nil) -> [[Bool]]? {
        let bytes = Array(text.utf8)
        guard let version = (1...40).first(where: { 4 + ($0 < 10 ? 8 : 16) + 8 * bytes.count <= dataCodewords($0) * 8 }) else { return nil }
        var bits = BitBuffer()
        bits.append(0b0100, 4)
        bits.append(bytes.count, version < 10 ? 8 : 16)
        for byte in bytes { bits.append(Int(byte), 8) }
        let capacity = dataCodewords(version) * 8
        bits.append(0, min(4, capacity - bits.count))
        bits.append(0, (8 - bits.count % 8) % 8)
        var pad = 0xEC
        while bits.count < capacity {
            bits.append(pad, 8)
            pad ^= 0xEC ^ 0x11
        }
        var symbol = Symbol(version: version)
        symbol.place(interleaved(bits.bytes, version: version))
        let mask = forcedMask ?? (0..<8).min { symbol.masked($0).penalty < symbol.masked($1).penalty }!
        return symbol.masked(mask).dark
    }

    /// The text's QR code as an SVG image: black modules on white with a four-module quiet zone,
    /// three pixels a module.
    static func svg(_ text: String) -> String {
        guard let modules = modules(text) else { return "" }
        let side = modules.count + 8
        var path = ""
        for (y, row) in modules.enumerated() {
            for (x, dark) in row.enumerated() where dark { path += "M\(x + 4) \(y + 4)h1v1h-1z" }
        }
        return
            #"<svg xmlns="http://www.w3.org/2000/svg" width="\#(side * 3)" height="\#(side * 3)" viewBox="0 0 \#(side) \#(side)" shape-rendering="crispEdges"><rect width="\#(side)" height="\#(side)" fill="white"/><path fill="black" d="\#(path)"/></svg>"#
    }

    private static func rawDataModules(_ version: Int) -> Int {
        var result = (16 * version + 128) * version + 64
        if version >= 2 {
            let alignments = version / 7 + 2
            result -= (25 * alignments - 10) * alignments - 55
            if version >= 7 { result -= 36 }
        }
        return result
    }

    private static func dataCodewords(_ version: Int) -> Int {
        rawDataModules(version) / 8 - eccPerBlock[version] * blockCount[version]
    }

    /// The data split into blocks, each with its Reed–Solomon remainder, interleaved.
    private static func interleaved(_ data: [UInt8], version: Int) -> [UInt8] {
        let blocks = blockCount[version]
        let ecc = eccPerBlock[version]
        let raw = rawDataModules(version) / 8
        let shortBlocks = blocks - raw % blocks
        let shortLength = raw / blocks - ecc
        let divisor = reedSolomonDivisor(ecc)
        var dataBlocks: [[UInt8]] = []
        var eccBlocks: [[UInt8]] = []
        var offset = 0
        for index in 0..<blocks {
            let length = shortLength + (index < shortBlocks ? 0 : 1)
            let block = Array(data[offset..<(offset + length)])
            offset += length
            dataBlocks.append(block)
            eccBlocks.append(reedSolomonRemainder(block, divisor))
        }
        var result: [UInt8] = []
        for column in 0...shortLength {
            for block in dataBlocks where column < block.count { result.append(block[column]) }
        }
        for column in 0..<ecc {
            for block in eccBlocks { result.append(block[column]) }
        }
        return result
    }

    private static func multiply(_ x: UInt8, _ y: UInt8) -> UInt8 {
        var z = 0
        for bit in stride(from: 7, through: 0, by: -1) {
            z = (z << 1) ^ ((z >> 7) * 0x11D)
            z ^= ((Int(y) >> bit) & 1) * Int(x)
        }
        return UInt8(z)
    }

    /// The generator polynomial (x - 2^0)(x - 2^1)…(x - 2^(degree-1)) without its leading 1.
    private static func reedSolomonDivisor(_ degree: Int) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: degree)
        result[degree - 1] = 1
        var root: UInt8 = 1
        for _ in 0..<degree {
            for index in 0..<degree {
                result[index] = multiply(result[index], root)
                if index + 1 < degree { result[index] ^= result[index + 1] }
            }
            root = multiply(root, 2)
        }
        return result
    }

    private static func reedSolomonRemainder(_ data: [UInt8], _ divisor: [UInt8]) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: divisor.count)
        for byte in data {
            let factor = byte ^ result[0]
            result.removeFirst()
            result.append(0)
            for index in 0..<divisor.count { result[index] ^= multiply(divisor[index], factor) }
        }
        return result
    }

    private struct BitBuffer {
        var bytes: [UInt8] = []
        var count = 0

        mutating func append(_ value: Int, _ length: Int) {
            guard length > 0 else { return }
            for bit in stride(from: length - 1, through: 0, by: -1) {
                if count % 8 == 0 { bytes.append(0) }
                if (value >> bit) & 1 == 1 { bytes[count / 8] |= 0x80 >> UInt8(count % 8) }
                count += 1
            }
        }
    }

    /// A symbol being drawn: its modules and which of them are function patterns.
    private struct Symbol {
        let version: Int
        let size: Int
        var dark: [[Bool]]
        var function: [[Bool]]

        init(version: Int) {
            self.version = version
            size = version * 4 + 17
            dark = Array(repeating: Array(repeating: false, count: size), count: size)
            function = dark
            for index in 0..<size {
                set(6, index, index % 2 == 0)
                set(index, 6, index % 2 == 0)
            }
            finder(3, 3)
            finder(size - 4, 3)
            finder(3, size - 4)
            let positions = alignmentPositions
            for (i, x) in positions.enumerated() {
                for (j, y) in positions.enumerated() {
                    let corner = (i == 0 && j == 0) || (i == 0 && j == positions.count - 1) || (i == positions.count - 1 && j == 0)
                    if corner { continue }
                    for dy in -2...2 {
                        for dx in -2...2 { set(x + dx, y + dy, max(abs(dx), abs(dy)) != 1) }
                    }
                }
            }
            format(mask: 0)
            if version >= 7 {
                var remainder = version
                for _ in 0..<12 { remainder = (remainder << 1) ^ ((remainder >> 11) * 0x1F25) }
                let bits = version << 12 | remainder
                for index in 0..<18 {
                    let bit = (bits >> index) & 1 == 1
                    set(size - 11 + index % 3, index / 3, bit)
                    set(index / 3, size - 11 + index % 3, bit)
                }
            }
        }

        var alignmentPositions: [Int] {
            guard version > 1 else { return [] }
            let count = version / 7 + 2
            let step = version == 32 ? 26 : (version * 4 + count * 2 + 1) / (count * 2 - 2) * 2
            var result = [6]
            for index in 0..<(count - 1) { result.insert(size - 7 - index * step, at: 1) }
            return result
        }

        mutating func set(_ x: Int, _ y: Int, _ isDark: Bool) {
            dark[y][x] = isDark
            function[y][x] = true
        }

        /// A finder pattern centred on (x, y) with its light separator.
        mutating func finder(_ x: Int, _ y: Int) {
            for dy in -4...4 {
                for dx in -4...4 where x + dx >= 0 && x + dx < size && y + dy >= 0 && y + dy < size {
                    let distance = max(abs(dx), abs(dy))
                    set(x + dx, y + dy, distance != 2 && distance != 4)
                }
            }
        }

        /// The format information (level H and `mask`), twice, and the dark module.
        mutating func format(mask: Int) {
            let data = QRCode.levelBits << 3 | mask
            var remainder = data
            for _ in 0..<10 { remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537) }
            let bits = (data << 10 | remainder) ^ 0x5412
            func bit(_ index: Int) -> Bool { (bits >> index) & 1 == 1 }
            for index in 0...5 { set(8, index, bit(index)) }
            set(8, 7, bit(6))
            set(8, 8, bit(7))
            set(7, 8, bit(8))
            for index in 9..<15 { set(14 - index, 8, bit(index)) }
            for index in 0..<8 { set(size - 1 - index, 8, bit(index)) }
            for index in 8..<15 { set(8, size - 15 + index, bit(index)) }
            set(8, size - 8, true)
        }

        /// The codewords in the zigzag order, right to left in column pairs, skipping function
        /// modules (remainder bits stay light).
        mutating func place(_ codewords: [UInt8]) {
            var index = 0
            var right = size - 1
            while right >= 1 {
                if right == 6 { right = 5 }
                for vertical in 0..<size {
                    for offset in 0..<2 {
                        let x = right - offset
                        let upward = (right + 1) & 2 == 0
                        let y = upward ? size - 1 - vertical : vertical
                        if !function[y][x] && index < codewords.count * 8 {
                            dark[y][x] = (codewords[index >> 3] >> (7 - UInt8(index & 7))) & 1 == 1
                            index += 1
                        }
                    }
                }
                right -= 2
            }
        }

        /// The symbol with `mask` applied to its data modules and named in its format bits.
        func masked(_ mask: Int) -> Symbol {
            var copy = self
            for y in 0..<size {
                for x in 0..<size where !function[y][x] {
                    let invert: Bool
                    switch mask {
                    case 0: invert = (x + y) % 2 == 0
                    case 1: invert = y % 2 == 0
                    case 2: invert = x % 3 == 0
                    case 3: invert = (x + y) % 3 == 0
                    case 4: invert = (x / 3 + y / 2) % 2 == 0
                    case 5: invert = x * y % 2 + x * y % 3 == 0
                    case 6: invert = (x * y % 2 + x * y % 3) % 2 == 0
                    default: invert = ((x + y) % 2 + x * y % 3) % 2 == 0
                    }
                    if invert { copy.dark[y][x].toggle() }
                }
            }
            copy.format(mask: mask)
            return copy
        }

        /// The standard's penalty: runs of five or more, 2×2 blocks, finder-like patterns, and
        /// the imbalance of dark and light.
        var penalty: Int {
            var score = 0
            let columns = (0..<size).map { x in (0..<size).map { dark[$0][x] } }
            for line in dark + columns {
                var run = 1
                for index in 1...size {
                    if index < size && line[index] == line[index - 1] {
                        run += 1
                    } else {
                        if run >= 5 { score += run - 2 }
                        run = 1
                    }
                }
                let pattern = [true, false, true, true, true, false, true]
                if size >= 11 {
                    for start in 0...(size - 7) where Array(line[start..<(start + 7)]) == pattern {
                        let before = start >= 4 && !line[(start - 4)..<start].contains(true)
                        let after = start + 11 <= size && !line[(start + 7)..<(start + 11)].contains(true)
                        if before || after { score += 40 }
                    }
                }
            }
            for y in 0..<(size - 1) {
                for x in 0..<(size - 1) where dark[y][x] == dark[y][x + 1] && dark[y][x] == dark[y + 1][x] && dark[y][x] == dark[y + 1][x + 1] {
                    score += 3
                }
            }
            let darkCount = dark.reduce(0) { $0 + $1.filter { $0 }.count }
            let total = size * size
            score += (abs(darkCount * 20 - total * 10) + total - 1) / total * 10
            return score
        }
    }
}
