import Foundation
import HTTP

/// An experiment's report: per variant, exposures, conversions, the conversion rate with a
/// 95 % Wilson score interval, and a two-sided two-proportion z-test against the control
/// (frequentist: one comparison per variant at a fixed horizon, which is how the report is read:
/// once, after the experiment's planned duration). A sample-ratio mismatch (a chi-square test of
/// the exposures against the flag's variant weights, p < 0.001) is flagged: it means the
/// assignment or the exposure logging is broken and the comparison cannot be trusted.
public struct ExperimentReport: Sendable, Equatable {
    public struct Variant: Sendable, Equatable {
        public var key: String
        public var exposures: Int
        public var conversions: Int
        public var rate: Double
        public var interval: (low: Double, high: Double)
        /// Against the control (nil for the control itself).
        public var difference: Double?
        public var pValue: Double?

        public static func == (a: Variant, b: Variant) -> Bool {
            a.key == b.key && a.exposures == b.exposures && a.conversions == b.conversions && a.interval == b.interval && a.pValue == b.pValue
        }
    }

    public var variants: [Variant]
    public var control: String?
    public var chiSquare: Double
    public var sampleRatioMismatch: Bool
    /// The variant with the highest rate that beats the control significantly (p < 0.05), if any.
    public var leader: String?

    static let z95 = 1.959_963_984_540_054

    /// `counts`: variant → (exposures, conversions); `weights`: variant → configured percentage.
    /// The control is the variant named `control`, else the first by key.
    public init(counts: [String: (exposures: Int, conversions: Int)], weights: [String: Double]) {
        let keys = Set(counts.keys).union(weights.keys).sorted()
        let control = keys.contains("control") ? "control" : keys.first
        self.control = control
        let base = control.flatMap { counts[$0] } ?? (0, 0)
        variants = keys.map { key in
            let (n, x) = counts[key] ?? (0, 0)
            let rate = n > 0 ? Double(x) / Double(n) : 0
            var variant = Variant(
                key: key, exposures: n, conversions: x, rate: rate, interval: Self.wilson(x, n), difference: nil, pValue: nil)
            if key != control, n > 0, base.exposures > 0 {
                variant.difference = rate - Double(base.conversions) / Double(base.exposures)
                variant.pValue = Self.twoProportionPValue(x1: base.conversions, n1: base.exposures, x2: x, n2: n)
            }
            return variant
        }
        let total = Double(variants.reduce(0) { $0 + $1.exposures })
        let weightSum = keys.reduce(0.0) { $0 + (weights[$1] ?? 0) }
        var chi = 0.0
        if total > 0, weightSum > 0 {
            for variant in variants {
                let expected = total * (weights[variant.key] ?? 0) / weightSum
                if expected > 0 { chi += pow(Double(variant.exposures) - expected, 2) / expected }
            }
        }
        chiSquare = chi
        sampleRatioMismatch = keys.count >= 2 && weightSum > 0 && chi > Self.chiSquareCritical(degrees: keys.count - 1)
        leader = variants.filter { ($0.pValue ?? 1) < 0.05 && ($0.difference ?? 0) > 0 }.max { $0.rate < $1.rate }?.key
    }

    /// The 95 % Wilson score interval of x successes in n trials.
    static func wilson(_ x: Int, _ n: Int) -> (low: Double, high: Double) {
        guard n > 0 else { return (0, 1) }
        let p = Double(x) / Double(n)
        let z2 = z95 * z95
        let denominator = 1 + z2 / Double(n)
        let center = (p + z2 / (2 * Double(n))) / denominator
        let half = z95 * sqrt(p * (1 - p) / Double(n) + z2 / (4 * Double(n) * Double(n))) / denominator
        return (max(0, center - half), min(1, center + half))
    }

    /// The two-sided p-value of the pooled two-proportion z-test.
    static func twoProportionPValue(x1: Int, n1: Int, x2: Int, n2: Int) -> Double {
        let pooled = Double(x1 + x2) / Double(n1 + n2)
        let standardError = sqrt(pooled * (1 - pooled) * (1 / Double(n1) + 1 / Double(n2)))
        guard standardError > 0 else { return 1 }
        let z = (Double(x2) / Double(n2) - Double(x1) / Double(n1)) / standardError
        return erfc(abs(z) / 2.0.squareRoot())
    }

    /// The chi-square value beyond which p < 0.001, for 1 to 9 degrees of freedom (more
    /// variants than 10 use 9's, which is stricter than their own).
    static func chiSquareCritical(degrees: Int) -> Double {
        let table = [10.828, 13.816, 16.266, 18.467, 20.515, 22.458, 24.322, 26.124, 27.877]
        return table[min(max(degrees, 1), table.count) - 1]
    }

    /// The report endpoint's body (`GET /analytics/v1/experiments/<flag>`), which the dashboard
    /// shows as it is.
    public func json(flag: String, goal: ExperimentGoal, days: Int) -> JSON {
        guard case .object(var members) = json else { return json }
        members["flag"] = .string(flag)
        members["goal"] = goal.json
        members["days"] = .number(Double(days))
        return .object(members)
    }

    var json: JSON {
        .object([
            "control": control.map(JSON.string) ?? .null,
            "leader": leader.map(JSON.string) ?? .null,
            "test": .string("two-sided pooled two-proportion z-test of each variant against the control; 95% Wilson score intervals"),
            "sample_ratio": .object(["chi_square": .number(chiSquare), "mismatch": .bool(sampleRatioMismatch), "threshold_p": .number(0.001)]),
            "variants": .array(
                variants.map { variant in
                    .object([
                        "variant": .string(variant.key), "exposures": .number(Double(variant.exposures)),
                        "conversions": .number(Double(variant.conversions)), "rate": .number(variant.rate),
                        "interval": .array([.number(variant.interval.low), .number(variant.interval.high)]),
                        "difference": variant.difference.map(JSON.number) ?? .null, "p_value": variant.pValue.map(JSON.number) ?? .null
                    ])
                })
        ])
    }
}

/// What counts as a conversion: an onboarding state reached, or an event.
public enum ExperimentGoal: Sendable, Equatable {
    case state(String)
    case event(String)

    var json: JSON {
        switch self {
        case .state(let name): return .object(["onboarding_state": .string(name)])
        case .event(let name): return .object(["event": .string(name)])
        }
    }
}

extension FeatureFlag {
    /// Whether the flag is an experiment: it has variants.
    public var isMultivariate: Bool { !(filters["multivariate"]?["variants"]?.array ?? []).isEmpty }

    /// Each variant's configured percentage (the weights the sample-ratio test expects).
    public var variantWeights: [String: Double] {
        var weights: [String: Double] = [:]
        for variant in filters["multivariate"]?["variants"]?.array ?? [] {
            if let name = variant["key"]?.string { weights[name] = variant["rollout_percentage"]?.number ?? 0 }
        }
        return weights
    }
}
