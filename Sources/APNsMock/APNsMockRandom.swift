/// SplitMix64: a small, fast, seedable generator so fault sequences are reproducible.
package struct APNsMockRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= Self.increment
        return Self.mix(state)
    }

    /// A double in 0..<1.
    mutating func unit() -> Double { Double(next() >> 11) * 0x1.0p-53 }

    static let increment: UInt64 = 0x9E37_79B9_7F4A_7C15

    /// SplitMix64's output function: the `n`-th output of a generator seeded with `s` is `mix(s + (n + 1) *
    /// increment)`, so outputs can also be drawn by index without shared mutable state.
    static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
