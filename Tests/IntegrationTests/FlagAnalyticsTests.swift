import Analytics
import HTTP
import Testing

/// PostHog's flag hashing against the vectors of posthog-python's own test suite
/// (test_simple_flag_consistency, test_multivariate_flag_consistency: distinct ids
/// `distinct_id_0` … `distinct_id_999`), so the server and the SDKs bucket everyone alike.
@Suite("Analytics: flag hashing and matching")
struct FlagAnalyticsTests {
    /// "simple-flag" at 45 percent: 1 where the flag is on.
    static let simple = [
        "0110100101011010001101001011000111100000011011000110000101010110101011001001010010001101101111101100",
        "1111001011100000100111001010010000000011001001100101011100010000110110101101011101001101011001111011",
        "0010100110101000000010110010100010100010010110000100000000000001101011010100011110000011100110000010",
        "1111011100101001110100011010101111100101011101011011111000001010011000101111000011001101111011100110",
        "0100100000000001100100101001000000100000000011100010100010000000100000000101011100011101011000100001",
        "0101101000100110100000011001001110001000010100010110101010010010101010011110100000100100110000111001",
        "0011110001000100111100110101001101111001001101010010000111010010010000101011001011100001101000100001",
        "1100011110110111010010111101010100110010100001010001110001011000001010011011110010010101100010110001",
        "0101101001000111000001001111100000000111001101101010001001001111001011001001101001110000010100000110",
        "1110000111101101010100001111001011000000101011001111001011001110100110001001000111101010101001001011"
    ].joined()

    /// "multivariate-flag" at 55 percent with variants of 50/20/20/5/5 percent: the variant's
    /// number, `-` when off.
    static let multivariate = [
        "221--21---13-121--41-3---1111113-321-3--12-112-1--11121-22321-124-111-12-3------15-212-33----3--11-3",
        "3-323--21--1----111---11-11---------111121112-2121-22-1---31--1----1-------11311--1--52-2-13153--4--",
        "--3--3-1222-1311-----1112---2--1-1--111131311233-21-21-1--151----112-233-13--1-31-311-1221---2--11-3",
        "-1-3-321--13125--1---3-21----3--3--13--1--4432135-15-111---252112--3-25-31--4--2--1412---133-111-1-1",
        "33--1--22111-51---231413-11-3113-4511---111-1121-121-12-11-1-1-1---331--2311---21-13-1---133----3441",
        "2-1-213-3-113---421--14-131--3-1-11324-1----212-1-11-1123111---3-111311215412-4---4--3---1332121-1--",
        "---11-2--1-211132--53--1---1233--1-31----41---3--21--2311-11--2323--1--1-2----1-3-1--2324111-1-2----",
        "-1-----1-2----2-1-3--13-3--2-121-----2--13-1-----12---115---1-3--2-----4212-2-2-1-11-2-1-5-11---1-13",
        "--11--5--3-31133-1-----1----2121-51--411--41-23311---111-333--11-2--2-312511-15---31124121---23--1--",
        "----11-3-1-3311-2-21---2-3-1511--1---141115---2---11--1121111131-2--323-13213--11---132111-323--31-1"
    ].joined()

    @Test func rolloutMatchesPostHogPython() {
        #expect(Self.simple.count == 1000)
        let flag = FeatureFlag(
            id: 1, key: "simple-flag", filters: .object(["groups": .array([.object(["properties": .array([]), "rollout_percentage": .number(45)])])]))
        for (index, expected) in Self.simple.enumerated() {
            let value = FlagEvaluation.evaluate(flag, distinctID: "distinct_id_\(index)", properties: [:]).value
            #expect((value == .enabled) == (expected == "1"), "distinct_id_\(index)")
        }
    }

    @Test func variantsMatchPostHogPython() {
        #expect(Self.multivariate.count == 1000)
        let variants: [JSON] = [("first", 50.0), ("second", 20), ("third", 20), ("fourth", 5), ("fifth", 5)].map {
            .object(["key": .string("\($0.0)-variant"), "rollout_percentage": .number($0.1)])
        }
        let flag = FeatureFlag(
            id: 2, key: "multivariate-flag",
            filters: .object([
                "groups": .array([.object(["properties": .array([]), "rollout_percentage": .number(55)])]),
                "multivariate": .object(["variants": .array(variants)])
            ]))
        let names: [Character: String] = ["1": "first-variant", "2": "second-variant", "3": "third-variant", "4": "fourth-variant", "5": "fifth-variant"]
        for (index, code) in Self.multivariate.enumerated() {
            let value = FlagEvaluation.evaluate(flag, distinctID: "distinct_id_\(index)", properties: [:]).value
            let expected: FlagValue = names[code].map { .variant($0) } ?? .disabled
            #expect(value == expected, "distinct_id_\(index)")
        }
    }

    @Test func hashIsSHA1OfKeyDotIDAndSalt() {
        // SHA-1("a.b") = 69f6642c9d71b463…: its first 15 hex digits over 0xFFFFFFFFFFFFFFF.
        #expect(FlagEvaluation.hash("a", "b") == Double(0x69f_6642_c9d7_1b46 as UInt64) / Double(0xFFF_FFFF_FFFF_FFFF as UInt64))
        #expect(FlagEvaluation.hash("a", "b", salt: "variant") != FlagEvaluation.hash("a", "b"))
    }

    @Test func propertyConditionsAndOverrides() {
        let platform: JSON = .object(["key": .string("platform"), "value": .array([.string("iOS"), .string("android")]), "operator": .string("exact")])
        let version: JSON = .object(["key": .string("app_version"), "value": .number(2), "operator": .string("gte")])
        let flag = FeatureFlag(
            id: 3, key: "onboarding-order",
            filters: .object([
                "groups": .array([
                    .object(["properties": .array([platform]), "rollout_percentage": .number(100), "variant": .string("short")]),
                    .object(["properties": .array([version])])
                ]),
                "multivariate": .object(["variants": .array([.object(["key": .string("short"), "rollout_percentage": .number(100)])])])
            ]))
        #expect(FlagEvaluation.evaluate(flag, distinctID: "x", properties: ["platform": .string("IOS")]).value == .variant("short"))
        #expect(FlagEvaluation.evaluate(flag, distinctID: "x", properties: ["platform": .string("web")]).value == .disabled)
        #expect(FlagEvaluation.evaluate(flag, distinctID: "x", properties: ["app_version": .string("2.5")]).value == .variant("short"))
        #expect(FlagEvaluation.evaluate(flag, distinctID: "x", properties: [:]).value == .disabled)
        var inactive = flag
        inactive.active = false
        #expect(FlagEvaluation.evaluate(inactive, distinctID: "x", properties: ["platform": .string("iOS")]).value == .disabled)
    }
}
