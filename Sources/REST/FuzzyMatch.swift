/// The closest of `candidates` to `query` as PostgREST's hints find it (the fuzzyset library:
/// candidates sharing a trigram, else a bigram, of their letters, digits, spaces and commas,
/// scored 1 − Levenshtein distance / the longer length, case-insensitively); nil below `minScore`
/// (a score of exactly `minScore` is close enough, as "at least 75%" in PostgREST).
func fuzzyClosest(_ query: String, among candidates: [String], minScore: Double) -> String? {
    func normalized(_ text: String) -> [Character] {
        Array("-" + text.lowercased().filter { $0.isLetter || $0.isNumber || $0 == " " || $0 == "," } + "-")
    }
    func grams(_ text: [Character], _ size: Int) -> Set<String> {
        guard text.count >= size else { return [] }
        return Set((0...(text.count - size)).map { String(text[$0..<($0 + size)]) })
    }
    let lowered = query.lowercased()
    if let exact = candidates.first(where: { $0.lowercased() == lowered }) { return exact }
    for size in [3, 2] {
        let wanted = grams(normalized(query), size)
        let scored = candidates.filter { !grams(normalized($0), size).isDisjoint(with: wanted) }.map { candidate -> (String, Double) in
            let other = candidate.lowercased()
            let longest = max(lowered.count, other.count)
            return (candidate, longest == 0 ? 1 : 1 - Double(editDistance(lowered, other)) / Double(longest))
        }.filter { $0.1 >= minScore }
        if let best = scored.max(by: { $0.1 < $1.1 }) { return best.0 }
    }
    return nil
}

/// Levenshtein distance (small strings: table and function names).
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a)
    let b = Array(b)
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
        current[0] = i
        for j in 1...b.count {
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        swap(&previous, &current)
    }
    return previous[b.count]
}
